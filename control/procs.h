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

/** Signal the process of @p pidfd as shmr_ctl_pidfd_signal() does, then
 *  the rest of its process group when it leads one of its own (a worker:
 *  what it started goes with it).  Only while @p pid still names it (alive,
 *  or a zombie not yet reaped): its pgid is then its own, never a reused
 *  one's.  0 or -errno (the leader's signal). */
int shmr_ctl_proc_signal_group(int pidfd, pid_t pid, int sig);

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

/*
 * What a child is started with.  Everything is the caller's, read by
 * shmr_ctl_proc_spawn() before it forks (so the caller may free it once
 * that returns).
 */
struct shmr_ctl_exec {
	const char *file;         /* looked up in PATH unless it holds a '/' */
	char *const *argv;        /* NULL-terminated */
	const char *const *env;   /* "NAME=value", NULL-terminated: each
				   * replaces the inherited NAME; NULL: none */
	hwloc_const_bitmap_t cpus; /* NULL or empty: not pinned */
	const int *keep_fds;      /* stay open across exec */
	unsigned nkeep;
};

/**
 * Fork and exec @p x->file with @p x->argv, the control plane's
 * environment with @p x->env set over it, pinned to @p x->cpus (checked
 * against @p topo) before it runs an instruction of its own.  Everything
 * the child needs is made here, before the fork; between fork and exec
 * the child makes only async-signal-safe calls (procs.c).  On success
 * *pid and *pidfd (CLOEXEC) are set.
 * Context: any thread of a threaded process; nobody calls setenv()
 *          meanwhile (the inherited environment is read, not copied).
 * Returns 0, or -errno with *stage (SHMR_CTL_STAGE_*): SETUP (no memory,
 * a descriptor to keep), PIN (a cpu outside the topology, or one we may
 * not run on), EXEC (as execvp(3) would have failed).
 */
int shmr_ctl_proc_spawn(const struct shmr_ctl_exec *x, hwloc_topology_t topo,
			pid_t *pid, int *pidfd, int *stage);

#endif
