/*
 * Processes by pidfd (procs.c): opening one, signalling through it, a
 * process's start time (the guard against pid reuse), and taking a
 * descriptor out of another process.  Internal to shmr-control: not for
 * direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_PROCS_H
#define SHMR_CONTROL_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include <hwloc.h>

/* The step of a start that failed (shmr_ctl_proc_spawn()'s *stage). */
enum { SHMR_CTL_STAGE_EXEC = 1, SHMR_CTL_STAGE_PIN = 2,
       SHMR_CTL_STAGE_SETUP = 3 };

/** pidfd_open(2), CLOEXEC.  The descriptor, or -errno. */
int shmr_ctl_pidfd_open(pid_t pid);

/** Signal the process of @p pidfd (pidfd_send_signal(2): never a reused
 *  pid); kill(2) on @p pid when @p pidfd < 0.  0 or -errno. */
int shmr_ctl_pidfd_signal(int pidfd, pid_t pid, int sig);

/** Has the process of @p pidfd exited?  1 yes, 0 no (a poll of 0 ms). */
int shmr_ctl_pidfd_exited(int pidfd);

/**
 * The start time of process @p pid (field 22 of /proc/PID/stat, clock
 * ticks since boot): with the pid, it names one process for good.
 * Returns: > 0, or 0 when there is no such process (or it is a zombie).
 */
uint64_t shmr_ctl_proc_start(pid_t pid);

/**
 * Descriptor @p fd of the process of @p pidfd (@p pid), as a new
 * descriptor of ours (CLOEXEC): pidfd_getfd(2), else a re-open of
 * /proc/PID/fd/FD (which needs only read access to the process).
 * Returns: the descriptor, or -errno.
 */
int shmr_ctl_pidfd_getfd(int pidfd, pid_t pid, int fd);

/**
 * Fork and exec @p file with @p argv: @p set_env(@p env_ctx) (may be NULL)
 * runs in the child, @p cpus (NULL or empty: no pinning) is applied with
 * @p topo before exec, the @p nkeep descriptors @p keep stay open across
 * exec (every other descriptor of ours is close-on-exec).  On success
 * *pid and *pidfd (CLOEXEC) are set.
 * Context: a single-threaded parent (the child may call anything).
 * Returns 0, or -errno with *stage (SHMR_CTL_STAGE_*).
 */
int shmr_ctl_proc_spawn(const char *file, char *const argv[],
			void (*set_env)(void *), void *env_ctx,
			hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
			const int *keep, unsigned nkeep, pid_t *pid,
			int *pidfd, int *stage);

#endif
