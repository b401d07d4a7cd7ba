/*
 * Processes by pidfd.  A control plane that adopted a domain did not fork
 * its dataplane and workers: waitpid(2) cannot reap them and their exit
 * status is lost, but a pidfd still becomes readable when the process
 * exits, and pidfd_send_signal(2) reaches exactly that process even if its
 * pid has been reused.  So every process the control plane manages is held
 * by a pidfd, child or not, and signalled through it.
 *
 * Starting one (shmr_ctl_proc_spawn()): the control plane has threads
 * (the admin path's: admin.c), and fork(2) copies only the calling one:
 * a lock another thread held at that moment (malloc's, the environment's,
 * stdio's, hwloc's) stays held in the child for good.  So the child of a
 * threaded process may only make async-signal-safe calls until it execs
 * (signal-safety(7)), and everything it needs is made by the parent
 * first: the environment as a complete envp (environ with the child's
 * SHMR_* values replacing the inherited ones of the same name), the list
 * of paths execvp(3) would try (PATH is searched in the parent, the
 * child runs execve(2) down the list with execvp's rules), and the cpu
 * set as sched_setaffinity(2)'s mask, hwloc's bitmap converted and
 * checked against the topology (a cpu the machine lacks is refused, as
 * hwloc_set_cpubind() refused it).  The child then only calls setpgid,
 * sigaction, sigprocmask, fcntl (the descriptors it keeps), sched_
 * setaffinity, execve, write and _exit.  The parent frees the plan as
 * soon as fork returns: the child has its own copy.
 *
 * Why fork and not posix_spawn(3): glibc's posix_spawn has no attribute
 * for a cpu set, and pinning the calling thread around it would move the
 * control plane's main loop onto a worker's cpus for a moment; with fork
 * the child binds itself (one thread, so the process is bound) before it
 * runs a single instruction of the worker's.
 *
 * A CLOEXEC pipe tells the parent synchronously whether exec happened: it
 * reads EOF on success, or the step and errno that failed, so a missing
 * program is "No such file or directory" at once.  The child gets a
 * process group of its own and no parent-death signal (see spawn.c).
 *
 * Stopping one signals its whole group (shmr_ctl_proc_signal_group()):
 * a worker that is a shell script, or that runs helpers, would otherwise
 * leave them running, reparented to init, after remove or stop.  The
 * group's id is the leader's pid, and kill(-pid) is safe only while that
 * pid is still the leader's: while it lives, or (our child) while it is
 * a zombie we have not reaped.  So the group is signalled only after
 * getpgid(pid) == pid, and what is left of it when the leader exits is
 * killed before the leader is reaped (spawn.c, reap_child()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

int shmr_ctl_proc_signal_group(int pidfd, pid_t pid, int sig)
{
	int rc = shmr_ctl_pidfd_signal(pidfd, pid, sig);

	/* The group is the worker's only if it leads it: getpgid == pid
	 * (child_run's setpgid(0, 0); an adopted one was started the
	 * same way).  A process that moved itself into another group, or
	 * a pid no longer ours, is signalled alone: never a group we did
	 * not make.  The leader is signalled first, through the pidfd, so
	 * a failure there (it is gone) stops before the group's. */
	if (rc == 0 && pid > 1 && pid != getpgrp() && getpgid(pid) == pid)
		(void)kill(-pid, sig);
	return rc;
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

/*
 * What the child of one start needs, made by the parent: after the fork
 * the child only reads it.  One allocation each, freed by the parent.
 */
struct plan {
	char **envp;      /* the inherited environment, x->env over it */
	char **paths;     /* where execvp(3) would look, in its order */
	unsigned npaths;
	char **sh_argv;   /* "/bin/sh" PATH ARGS...: execvp's ENOEXEC retry */
	cpu_set_t *mask;  /* NULL: not pinned */
	size_t mask_size;
};

static void plan_free(struct plan *pl)
{
	free(pl->envp);
	free(pl->paths);
	free(pl->sh_argv);
	if (pl->mask)
		CPU_FREE(pl->mask);
	*pl = (struct plan){ 0 };
}

/* Does "NAME=..." @p e set the name of "NAME=value" @p v? */
static int same_name(const char *e, const char *v)
{
	size_t n = strcspn(v, "=");

	return strncmp(e, v, n) == 0 && e[n] == '=';
}

/* environ, each name of @p env replaced by its entry there (appended). */
static int plan_env(struct plan *pl, const char *const *env)
{
	size_t n = 0, m = 0, k = 0;

	for (char **e = environ; e && *e; e++)
		n++;
	for (; env && env[m]; m++)
		;
	pl->envp = calloc(n + m + 1, sizeof(*pl->envp));
	if (!pl->envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int replaced = 0;

		for (size_t j = 0; j < m && !replaced; j++)
			replaced = same_name(environ[i], env[j]);
		if (!replaced)
			pl->envp[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		pl->envp[k++] = (char *)env[j];
	pl->envp[k] = NULL;
	return 0;
}

/* execvp(3)'s search: @p file itself when it holds a '/', else "DIR/file"
 * for each DIR of PATH (an empty one is the working directory; no PATH:
 * confstr's default, /bin:/usr/bin).  Pointers and strings in one block. */
static int plan_paths(struct plan *pl, const char *file, char *const argv[])
{
	const char *path = getenv("PATH");
	size_t flen = strlen(file), ndirs = 1, argc = 0, bytes;
	char *str;

	if (flen == 0)
		return -ENOENT;
	if (!path)
		path = "/bin:/usr/bin";
	if (strchr(file, '/'))
		path = NULL;
	for (const char *c = path; c && *c; c++)
		ndirs += *c == ':';
	bytes = ndirs * sizeof(char *) + (path ? strlen(path) : 0) +
		ndirs * (flen + 2);
	pl->paths = malloc(bytes);
	if (!pl->paths)
		return -ENOMEM;
	str = (char *)(pl->paths + ndirs);
	if (!path) {
		memcpy(str, file, flen + 1);
		pl->paths[pl->npaths++] = str;
	} else {
		for (const char *d = path;; d++) {
			size_t dlen = strcspn(d, ":");

			pl->paths[pl->npaths++] = str;
			if (dlen) {
				memcpy(str, d, dlen);
				str += dlen;
				*str++ = '/';
			}
			memcpy(str, file, flen + 1);
			str += flen + 1;
			d += dlen;
			if (*d == '\0')
				break;
		}
	}
	while (argv[argc])
		argc++;
	pl->sh_argv = calloc(argc + 3, sizeof(char *));
	if (!pl->sh_argv)
		return -ENOMEM;
	pl->sh_argv[0] = "/bin/sh";
	for (size_t i = 1; i < argc; i++)
		pl->sh_argv[i + 1] = argv[i];
	return 0;
}

/* hwloc's bitmap as sched_setaffinity(2)'s mask.  A cpu the machine does
 * not have is refused here, as hwloc_set_cpubind() refused it. */
static int plan_mask(struct plan *pl, hwloc_topology_t topo,
		     hwloc_const_bitmap_t cpus)
{
	int last, i;

	if (!cpus || hwloc_bitmap_iszero(cpus))
		return 0;
	last = hwloc_bitmap_last(cpus);
	if (last < 0 ||
	    !hwloc_bitmap_isincluded(cpus,
				     hwloc_topology_get_complete_cpuset(topo)))
		return -EINVAL;
	pl->mask = CPU_ALLOC(last + 1);
	if (!pl->mask)
		return -ENOMEM;
	pl->mask_size = CPU_ALLOC_SIZE(last + 1);
	CPU_ZERO_S(pl->mask_size, pl->mask);
	hwloc_bitmap_foreach_begin(i, cpus)
		CPU_SET_S((unsigned)i, pl->mask_size, pl->mask);
	hwloc_bitmap_foreach_end();
	return 0;
}

/* The child from here on: async-signal-safe calls only (see the essay). */
static void child_report(int wfd, int stage, int err)
{
	struct report rep = { stage, err };
	ssize_t n;

	do
		n = write(wfd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

/* execvp(3)'s loop over the prepared paths: a name not found in one
 * directory is looked for in the next, a file that is not an executable
 * format is run by /bin/sh, and EACCES (seen anywhere) wins over ENOENT.
 * Returns the errno execvp would have left. */
static int child_exec(const struct shmr_ctl_exec *x, const struct plan *pl)
{
	int err = ENOENT, eacces = 0;

	for (unsigned i = 0; i < pl->npaths; i++) {
		execve(pl->paths[i], x->argv, pl->envp);
		err = errno;
		if (err == ENOEXEC) {
			pl->sh_argv[1] = pl->paths[i];
			execve(pl->sh_argv[0], pl->sh_argv, pl->envp);
			err = errno;
		}
		switch (err) {
		case EACCES:
			eacces = 1;
			/* fall through */
		case ENOENT:
		case ENOTDIR:
		case ESTALE:
		case ENODEV:
		case ETIMEDOUT:
			continue;
		default:
			return err;
		}
	}
	return eacces ? EACCES : err;
}

static void child_run(const struct shmr_ctl_exec *x, const struct plan *pl,
		      int wfd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	(void)setpgid(0, 0);
	/* Ignored dispositions survive exec; a worker wants EPIPE's
	 * default as any program does.  Caught ones are reset by exec. */
	sigemptyset(&dfl.sa_mask);
	(void)sigaction(SIGPIPE, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	for (unsigned i = 0; i < x->nkeep; i++)
		if (fcntl(x->keep_fds[i], F_SETFD, 0) < 0)
			child_report(wfd, SHMR_CTL_STAGE_SETUP, errno);
	/* One thread: the process's binding, before exec. */
	if (pl->mask && sched_setaffinity(0, pl->mask_size, pl->mask) < 0)
		child_report(wfd, SHMR_CTL_STAGE_PIN, errno);
	child_report(wfd, SHMR_CTL_STAGE_EXEC, child_exec(x, pl));
}

int shmr_ctl_proc_spawn(const struct shmr_ctl_exec *x, hwloc_topology_t topo,
			pid_t *pid_out, int *pidfd_out, int *stage)
{
	struct plan pl = { 0 };
	struct report rep;
	pid_t pid;
	int p[2], pidfd, rc;
	ssize_t n;

	*stage = SHMR_CTL_STAGE_PIN;
	rc = plan_mask(&pl, topo, x->cpus);
	if (rc == 0) {
		*stage = SHMR_CTL_STAGE_EXEC;
		rc = plan_paths(&pl, x->file, x->argv);
	}
	if (rc == 0) {
		*stage = SHMR_CTL_STAGE_SETUP;
		rc = plan_env(&pl, x->env);
	}
	if (rc == 0 && pipe2(p, O_CLOEXEC) < 0)
		rc = -errno;
	if (rc < 0) {
		plan_free(&pl);
		return rc;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child_run(x, &pl, p[1]);
	}
	/* The child has its own copy: ours goes. */
	rc = pid < 0 ? -errno : 0;
	plan_free(&pl);
	close(p[1]);
	if (rc < 0) {
		close(p[0]);
		return rc;
	}
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
