/*
 * Processes by pidfd.  A control plane that adopted a domain did not fork
 * its dataplane and workers: waitpid(2) cannot reap them and their exit
 * status is lost, but a pidfd still becomes readable when the process
 * exits, and pidfd_send_signal(2) reaches exactly that process even if its
 * pid has been reused.  So every process the control plane manages is held
 * by a pidfd, child or not, and signalled through it.
 *
 * Starting one (shmr_ctl_proc_spawn()): fork; the child pins itself with
 * hwloc (the topology was loaded once by the parent), sets its environment
 * and execs.  A CLOEXEC pipe tells the parent synchronously whether exec
 * happened: it reads EOF on success, or the step and errno that failed.
 * The child gets a process group of its own and no parent-death signal
 * (see spawn.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procs.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int shmr_ctl_pidfd_open(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return -errno;
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int shmr_ctl_pidfd_signal(int pidfd, pid_t pid, int sig)
{
	int rc;

	if (pidfd >= 0)
		rc = (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	else
		rc = kill(pid, sig);
	return rc < 0 ? -errno : 0;
}

int shmr_ctl_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP));
}

uint64_t shmr_ctl_proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;
	char st;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name may hold spaces and parentheses: fields follow the
	 * last ')'.  Field 3 is the state, 22 the start time. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %*s %*s %*s %*s %llu",
			 &st, &start) != 2)
		return 0;
	if (st == 'Z' || st == 'X')
		return 0;
	return (uint64_t)start;
}

int shmr_ctl_pidfd_getfd(int pidfd, pid_t pid, int fd)
{
	char path[64];
	int nfd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);

	if (nfd >= 0) {
		(void)fcntl(nfd, F_SETFD, FD_CLOEXEC);
		return nfd;
	}
	/* pidfd_getfd needs ptrace-attach rights (Yama may refuse them to
	 * a non-ancestor); a memfd re-opened through /proc is the same
	 * file, and needs only read access. */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	nfd = open(path, O_RDWR | O_CLOEXEC);
	return nfd < 0 ? -errno : nfd;
}

struct report {
	int stage;
	int err;
};

static void child_report(int wfd, int stage, int err)
{
	struct report rep = { stage, err };
	ssize_t n;

	do
		n = write(wfd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

/* In the child: everything between fork and exec.  The parent is single
 * threaded, so the child may call anything. */
static void child_setup(void)
{
	sigset_t none;

	(void)setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
}

int shmr_ctl_proc_spawn(const char *file, char *const argv[],
			void (*set_env)(void *), void *env_ctx,
			hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
			const int *keep, unsigned nkeep, pid_t *pid_out,
			int *pidfd_out, int *stage)
{
	struct report rep;
	pid_t pid;
	int p[2], pidfd;
	ssize_t n;

	*stage = SHMR_CTL_STAGE_SETUP;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		return -err;
	}
	if (pid == 0) {
		close(p[0]);
		child_setup();
		for (unsigned i = 0; i < nkeep; i++)
			if (fcntl(keep[i], F_SETFD, 0) < 0)
				child_report(p[1], SHMR_CTL_STAGE_SETUP, errno);
		if (cpus && !hwloc_bitmap_iszero(cpus) &&
		    hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) < 0)
			child_report(p[1], SHMR_CTL_STAGE_PIN,
				     errno ? errno : EINVAL);
		if (set_env)
			set_env(env_ctx);
		execvp(file, argv);
		child_report(p[1], SHMR_CTL_STAGE_EXEC, errno);
	}
	close(p[1]);
	do
		n = read(p[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == (ssize_t)sizeof(rep)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		*stage = rep.stage;
		return -(rep.err ? rep.err : EIO);
	}
	pidfd = shmr_ctl_pidfd_open(pid);
	if (pidfd < 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return pidfd;
	}
	*pid_out = pid;
	*pidfd_out = pidfd;
	return 0;
}
