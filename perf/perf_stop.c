/*
 * What an interrupted shmr-perf leaves behind: nothing.
 *
 * A run starts processes (the control plane and through it the appliance,
 * the bare chain's forked roles, RouDi, gnuplot) and makes a temporary
 * directory.  Its normal end stops and removes them; SIGINT (a terminal's
 * Ctrl-C), SIGTERM (timeout(1), systemd) or SIGHUP would kill it at any
 * point instead, leaving the directory, and, with no parent-death signal,
 * busy-polling children on their pinned cores.  So every run registers
 * what it starts here as it starts it and forgets it once it has undone
 * it itself; the handler undoes whatever is still registered, says so on
 * stderr in one line, and dies of the signal it got, so a shell or a
 * supervisor sees why it ended.
 *
 * The handler can interrupt anything (malloc, stdio), so it uses only
 * async-signal-safe calls: kill, waitpid, nanosleep, openat, getdents64,
 * unlinkat, write.  Forked children inherit it until they exec: it does
 * nothing in any process but the one that installed it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf_bare.h"
#include "perf_internal.h"

#define TRACK_PIDS (4 + PERF_FAN_MAX) /* a bare fan-out's roles, the most */
#define TRACK_DIRS 4
#define TRACK_DIR_LEN 256
#define RM_DEPTH 4 /* the run directories nest at most this deep */

/* A slot is in use when its pid is above 0 (its dir's used flag is set);
 * it is filled before it is published, so the handler sees whole
 * entries. */
static struct {
	_Atomic pid_t pid;
	int sig;
} pids[TRACK_PIDS];
static struct {
	char path[TRACK_DIR_LEN];
	_Atomic int used;
} dirs[TRACK_DIRS];
static pid_t owner;
/* The dispositions found at start: an ignored signal (SIGINT in a
 * background job, SIGHUP under nohup) stays ignored, here and in the
 * children. */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction start_sa[3];

void perf_track_pid(pid_t pid, int sig)
{
	for (unsigned i = 0; i < TRACK_PIDS; i++) {
		pid_t none = 0;

		/* Claimed (-1), filled, then published. */
		if (atomic_compare_exchange_strong(&pids[i].pid, &none, -1)) {
			pids[i].sig = sig;
			atomic_store(&pids[i].pid, pid);
			return;
		}
	}
}

void perf_untrack_pid(pid_t pid)
{
	if (pid <= 0) /* a fork that failed; -1 also marks a claimed slot */
		return;
	for (unsigned i = 0; i < TRACK_PIDS; i++) {
		pid_t p = pid;

		if (atomic_compare_exchange_strong(&pids[i].pid, &p, 0))
			return;
	}
}

void perf_track_dir(const char *path)
{
	size_t n = strlen(path);

	if (n >= TRACK_DIR_LEN)
		return;
	for (int i = 0; i < TRACK_DIRS; i++) {
		if (atomic_load(&dirs[i].used))
			continue;
		memcpy(dirs[i].path, path, n + 1);
		atomic_store(&dirs[i].used, 1);
		return;
	}
}

void perf_untrack_dir(const char *path)
{
	for (int i = 0; i < TRACK_DIRS; i++)
		if (atomic_load(&dirs[i].used) &&
		    strcmp(dirs[i].path, path) == 0)
			atomic_store(&dirs[i].used, 0);
}

/* Stop @p pid with @p sig and reap it: bounded, then SIGKILL. */
static void stop_pid(pid_t pid, int sig)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int status;

	kill(pid, sig);
	for (int waited = 0; waited < PERF_STOP_TIMEOUT_MS; waited += 10) {
		pid_t p = waitpid(pid, &status, WNOHANG);

		if (p == pid || (p < 0 && errno != EINTR))
			return;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Remove @p name under @p at, whatever it holds, @p depth levels down at
 * most.  Entries go as they are read, so each directory is read again
 * from its start until a pass removes nothing more.  0 once it is gone. */
static int rm_tree(int at, const char *name, int depth)
{
	char buf[2048] __attribute__((aligned(8)));
	int fd = openat(at, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	long n;

	if (fd < 0) /* not a directory (or gone already) */
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	for (int removed = 1; removed;) {
		removed = 0;
		lseek(fd, 0, SEEK_SET);
		while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64 *e =
					(struct dirent64 *)(buf + off);
				const char *d = e->d_name;

				off += e->d_reclen;
				if (d[0] == '.' &&
				    (d[1] == '\0' ||
				     (d[1] == '.' && d[2] == '\0')))
					continue;
				/* Whatever its type (some file systems
				 * give none): rm_tree() unlinks what it
				 * cannot open as a directory. */
				if ((depth > 0 ? rm_tree(fd, d, depth - 1)
					       : unlinkat(fd, d, 0)) < 0)
					continue;
				removed = 1;
			}
		}
	}
	close(fd);
	return unlinkat(at, name, AT_REMOVEDIR);
}

static void say(const char *s)
{
	ssize_t rc = write(STDERR_FILENO, s, strlen(s));

	(void)rc;
}

static void on_stop_signal(int sig)
{
	int stopped = 0;

	if (getpid() != owner) {
		/* A forked child before its exec: as if there were no
		 * handler (it has no run of its own to undo). */
		int saved = errno;

		signal(sig, SIG_DFL);
		raise(sig);
		errno = saved;
		return;
	}
	for (unsigned i = 0; i < TRACK_PIDS; i++) {
		pid_t p = atomic_exchange(&pids[i].pid, 0);

		if (p > 0) {
			stop_pid(p, pids[i].sig);
			stopped++;
		}
	}
	say("shmr-perf: ");
	say(sig == SIGINT ? "interrupted (SIGINT)"
	    : sig == SIGTERM ? "terminated (SIGTERM)"
			     : "hung up (SIGHUP)");
	say(stopped ? ": stopped what it started" : ": nothing was running");
	for (int i = 0; i < TRACK_DIRS; i++) {
		if (!atomic_exchange(&dirs[i].used, 0))
			continue;
		say(rm_tree(AT_FDCWD, dirs[i].path, RM_DEPTH) == 0
			    ? ", removed "
			    : ", could not remove ");
		say(dirs[i].path);
	}
	say("\n");
	signal(sig, SIG_DFL);
	raise(sig); /* blocked until the handler returns: then it kills */
}

void perf_stop_init(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	owner = getpid();
	/* One signal at a time: a second Ctrl-C waits for the first's
	 * cleanup, then ends the process as the first would have. */
	sigfillset(&sa.sa_mask);
	for (int i = 0; i < 3; i++) {
		sigaction(stop_sigs[i], NULL, &start_sa[i]);
		if (start_sa[i].sa_handler != SIG_IGN)
			sigaction(stop_sigs[i], &sa, NULL);
	}
}

void perf_child_init(pid_t parent, int sig)
{
	for (int i = 0; i < 3; i++)
		if (owner)
			sigaction(stop_sigs[i], &start_sa[i], NULL);
	prctl(PR_SET_PDEATHSIG, sig);
	/* The parent may have died before the prctl: nobody would tell. */
	if (getppid() != parent)
		_exit(PERF_EXIT_FAIL);
}
