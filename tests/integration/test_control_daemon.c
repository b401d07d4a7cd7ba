/*
 * shmr-control as a process, with the real shmr-dataplane and real route
 * workers (shmr-test-worker for route a, shmr-echo-worker for route b):
 * exit statuses and the --ready-fd handshake, atomic init, the socket
 * protocol over the wire (bad requests of every kind answered, never
 * fatal), peer credentials, one control plane per socket, each worker
 * pinned where ROUTES says, lane repair and restart into the same slot
 * after kill -9 of a worker or of the dataplane mid-burst, and a clean stop
 * that leaves nothing behind.
 *
 * "Nothing behind" is checked, not assumed: this process is a child
 * subreaper, so anything the control plane started and left running comes
 * back to it as a child of its own (orphans()).
 *
 * Every wait is on a condition (the ready pipe, a file, a counter, a
 * process state), checked every few milliseconds up to a generous bound
 * that only a broken appliance reaches.
 *
 * argv[1..5]: shmr-control, shmr-dataplane, shmr-test-worker,
 * shmr-echo-worker, shmrctl.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#define WAIT_MS 30000 /* liveness bound of every wait */
#define NREC 128u     /* keys the recording worker counts */

static const char *control_bin, *dataplane_bin, *test_worker_bin,
	*echo_worker_bin, *shmrctl_bin;

struct app {
	char dir[64];
	char conf[128];
	char sock[128];
	char log[128];
	char rec[128];  /* route a's --record file */
	char hold[128]; /* route a's --hold-once file */
	char domain[32];
	pid_t pid;
	int fd;     /* our control connection */
	void *base; /* the domain, mapped from ATTACH */
	size_t size;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Check @p pred every 2 ms until it holds; 1 when it did within WAIT_MS. */
static int wait_for(int (*pred)(void *), void *arg)
{
	for (int i = 0; i < WAIT_MS / 2; i++) {
		if (pred(arg))
			return 1;
		sleep_ms(2);
	}
	return pred(arg);
}

/*
 * Control planes started and not yet reaped, and run dirs not yet removed,
 * by pid and path (a failed test's own struct app is gone with its stack
 * frame): cleanup() stops and removes them after every test, so one
 * failure does not leave an appliance that fails the next test too.
 */
#define MAX_LIVE 8
static pid_t live_pids[MAX_LIVE];
static char live_dirs[MAX_LIVE][64];

static void live_add(pid_t pid, const char *dir)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (pid && live_pids[i] == 0) {
			live_pids[i] = pid;
			return;
		}
		if (dir && live_dirs[i][0] == '\0') {
			snprintf(live_dirs[i], sizeof(live_dirs[i]), "%s", dir);
			return;
		}
	}
	fail_msg("more than %d appliances or dirs at once", MAX_LIVE);
}

static void live_forget(pid_t pid, const char *dir)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (pid && live_pids[i] == pid)
			live_pids[i] = 0;
		if (dir && strcmp(live_dirs[i], dir) == 0)
			live_dirs[i][0] = '\0';
	}
}

static void app_dir(struct app *a)
{
	static int seq;
	int fd;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	strcpy(a->dir, "/tmp/shmr-ctltest.XXXXXX");
	assert_non_null(mkdtemp(a->dir));
	chmod(a->dir, 0755);
	snprintf(a->domain, sizeof(a->domain), "ct%d-%d", (int)getpid(),
		 seq++);
	snprintf(a->conf, sizeof(a->conf), "%s/app.conf", a->dir);
	snprintf(a->sock, sizeof(a->sock), "%s/%s.sock", a->dir, a->domain);
	snprintf(a->log, sizeof(a->log), "%s/control.log", a->dir);
	snprintf(a->rec, sizeof(a->rec), "%s/a.rec", a->dir);
	snprintf(a->hold, sizeof(a->hold), "%s/a.hold", a->dir);
	live_add(0, a->dir);
	fd = open(a->rec, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * NREC), 0);
	close(fd);
}

/*
 * Two routes under router "events": a (shmr-test-worker, registers
 * "worker-a", records what it receives, pinned to @p cpus_a; with @p hold
 * it keeps its first burst unreleased, see test_worker.c) and b (runs
 * @p prog_b, default shmr-echo-worker; cpus ""), on a real dataplane with
 * two routing lcores.
 */
static void app_config(struct app *a, const char *cpus_a, const char *prog_b,
		       int hold)
{
	FILE *f = fopen(a->conf, "w");
	char hold_args[200] = "";

	assert_non_null(f);
	if (hold)
		snprintf(hold_args, sizeof(hold_args),
			 ", \"--hold-once\", \"%s\"", a->hold);
	fprintf(f,
		"domain = \"%s\";\n"
		"run_dir = \"%s\";\n"
		"lane_size = 64;\n"
		"lcores = 2;\n"
		"stop_grace_ms = 1000;\n"
		"routers = (\n"
		"  { name = \"events\"; behaviour = \"type\";\n"
		"    types = ( { type = 1; route = \"a\"; },\n"
		"              { type = 2; route = \"b\"; } );\n"
		"    routes = (\n"
		"      { name = \"a\"; program = \"%s\";\n"
		"        args = [ \"--register\", \"worker-a\", \"--record\", "
		"\"%s\"%s ];\n"
		"        cpus = \"%s\"; },\n"
		"      { name = \"b\"; program = \"%s\";%s cpus = \"\"; }\n"
		"    );\n"
		"  }\n"
		");\n",
		a->domain, a->dir, test_worker_bin, a->rec, hold_args, cpus_a,
		prog_b ? prog_b : echo_worker_bin,
		prog_b ? "" : " args = [ \"--tag\", \"b\" ];");
	fclose(f);
}

static void read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static void show_log(const struct app *a)
{
	char line[512];
	FILE *f = fopen(a->log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	fclose(f);
}

/*
 * Run shmr-control with @p extra arguments; wait for "R" or EOF on the
 * ready pipe.  With @p find_dataplane it is left to find shmr-dataplane on
 * its own (next to it, then ../dataplane/), else it is given --dataplane.
 * Returns 1 when it is up, else 0 with *status its exit.
 */
static int app_start_how(struct app *a, const char *const *extra,
			 int find_dataplane, int *status)
{
	const char *argv[16];
	int p[2], n = 0, up;
	char fdarg[16], byte = 0;
	ssize_t r;

	assert_int_equal(pipe(p), 0);
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	argv[n++] = control_bin;
	argv[n++] = "-c";
	argv[n++] = a->conf;
	if (!find_dataplane) {
		argv[n++] = "--dataplane";
		argv[n++] = dataplane_bin;
	}
	argv[n++] = "--ready-fd";
	argv[n++] = fdarg;
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	a->pid = fork();
	assert_true(a->pid >= 0);
	if (a->pid == 0) {
		int lf = open(a->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		close(p[0]);
		dup2(lf, 2);
		/* Should this test process die, the control plane stops
		 * (cleanly: SIGTERM) rather than outlive it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execv(control_bin, (char *const *)argv);
		_exit(127);
	}
	live_add(a->pid, NULL);
	close(p[1]);
	do
		r = read(p[0], &byte, 1);
	while (r < 0 && errno == EINTR);
	close(p[0]);
	up = r == 1 && byte == 'R';
	if (!up) {
		assert_int_equal(waitpid(a->pid, status, 0), a->pid);
		live_forget(a->pid, NULL);
		a->pid = 0;
	}
	return up;
}

static int app_start(struct app *a, const char *const *extra, int *status)
{
	return app_start_how(a, extra, 0, status);
}

static int app_wait(struct app *a)
{
	int st;

	assert_int_equal(waitpid(a->pid, &st, 0), a->pid);
	live_forget(a->pid, NULL);
	a->pid = 0;
	return st;
}

static void app_connect(struct app *a)
{
	char ans[256];
	int fds[2];
	struct shmr_proto_attached at;

	a->fd = shmr_proto_connect(a->sock);
	assert_true(a->fd >= 0);
	/* ATTACH: "OK SIZE", the daemons' part and the lanes part. */
	assert_int_equal(shmr_proto_request_fds(a->fd,
						"ATTACH " SHMR_LAYOUT_VERSION_TEXT,
						ans, sizeof(ans), fds, 2),
			 0);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	at.domain_fd = fds[0];
	at.lanes_fd = fds[1];
	assert_int_equal(fstat(at.domain_fd, &at.domain_st), 0);
	assert_int_equal(fstat(at.lanes_fd, &at.lanes_st), 0);
	assert_int_equal(shmr_proto_attached_map(&at, 0, &a->base, &a->size),
			 0);
	shmr_proto_attached_close(&at);
	assert_int_equal(strtoull(ans + 3, NULL, 10), (unsigned long long)a->size);
}

/*
 * Processes that are our children now, other than @p except: anything the
 * control plane started and did not stop comes back to us (we are a
 * subreaper), running or already killed by its PR_SET_PDEATHSIG.  Each
 * one is killed and reaped, and counted.  Not counted: a dead process
 * that leads no process group.  The control plane starts every child as
 * the leader of its own group and kills what is left of a stopped
 * worker's group; a process the worker itself made (under ASan, the
 * leak checker's tracer while the worker exits) is in that group, dies
 * by that kill and comes back to us dead: the control plane, which is not
 * its parent, cannot reap it.  Call it once the control plane is reaped.
 */
static int orphans_how(pid_t except, int quiet)
{
	pid_t self = getpid(), found[64];
	struct dirent *e;
	DIR *d = opendir("/proc");
	int n = 0, left = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[512], *rp, st;
		long pid = strtol(e->d_name, NULL, 10), ppid, pgrp;
		FILE *f;

		if (pid <= 0 || pid == except)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 2, "%c %ld %ld", &st, &ppid, &pgrp) == 3 &&
		    ppid == self && n < 64) {
			int killed_in_group = st == 'Z' && pgrp != pid;

			if (!quiet)
				fprintf(stderr, "%s: %s",
					killed_in_group
						? "a worker's own process, "
						  "killed with its group"
						: "left behind",
					buf);
			found[n++] = (pid_t)pid;
			left += !killed_in_group;
		}
		fclose(f);
	}
	closedir(d);
	for (int i = 0; i < n; i++) {
		kill(found[i], SIGKILL);
		waitpid(found[i], NULL, 0);
	}
	return left;
}

static int orphans(pid_t except)
{
	return orphans_how(except, 0);
}

static void rm_dir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	live_forget(0, dir);
}

/* After every test, passed or failed: stop what it left (SIGTERM, then
 * SIGKILL after a liveness bound), reap everything, remove its dirs. */
static int cleanup(void **state)
{
	(void)state;
	for (int i = 0; i < MAX_LIVE; i++) {
		pid_t pid = live_pids[i];
		int st;

		if (!pid)
			continue;
		kill(pid, SIGTERM);
		for (int t = 0; t < WAIT_MS / 2; t++) {
			if (waitpid(pid, &st, WNOHANG) != 0)
				break;
			sleep_ms(2);
		}
		if (waitpid(pid, &st, WNOHANG) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		live_pids[i] = 0;
	}
	(void)orphans_how(0, 1);
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_dirs[i][0])
			rm_dir(live_dirs[i]);
	return 0;
}

static void app_stop(struct app *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	shmr_domain_unmap(a->base, a->size);
	a->base = NULL;
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		app_wait(a);
	}
	assert_int_equal(orphans(0), 0);
	rm_dir(a->dir);
}

static int req(struct app *a, const char *r, char *ans, size_t cap)
{
	return shmr_proto_request(a->fd, r, ans, cap, NULL);
}

/* Is @p name in the domain's registry (read under the seqcount)? */
static int registered(struct app *a, const char *name)
{
	const struct shmr_spec *s = shmr_spec_of(a->base);
	uint64_t seq, deadline = shmr_spec_deadline();
	int found;

	do {
		assert_int_equal(shmr_spec_read_begin(s, deadline, &seq), 0);
		found = 0;
		for (uint32_t i = 0;
		     i < s->nreg && i < shmr_hdr(a->base)->max_names; i++)
			if (strncmp(shmr_names_of(a->base)[i].name, name,
				    SHMR_NAME_MAX) == 0)
				found = 1;
	} while (shmr_spec_read_retry(s, seq));
	return found;
}

struct reg_wait {
	struct app *a;
	const char *name;
	int want;
};

static int reg_is(void *arg)
{
	struct reg_wait *w = arg;

	return registered(w->a, w->name) == w->want;
}

static void wait_registered(struct app *a, const char *name)
{
	struct reg_wait w = { a, name, 1 };

	if (!wait_for(reg_is, &w)) {
		show_log(a);
		fail_msg("%s never registered", name);
	}
}

struct route_line {
	unsigned slot, gen, restarts;
	int os_pid;
	char state[16];
	char cpus[64];
};

static int route_info(struct app *a, const char *route, struct route_line *out)
{
	char ans[4096], pre[40], *p;

	if (req(a, "ROUTES events", ans, sizeof(ans)) != 0)
		return -1;
	snprintf(pre, sizeof(pre), "\n%s pid=", route);
	p = strstr(ans, pre);
	if (!p)
		return -1;
	if (sscanf(p + strlen(pre), "%u:%u os_pid=%d state=%15s restarts=%u",
		   &out->slot, &out->gen, &out->os_pid, out->state,
		   &out->restarts) != 5)
		return -1;
	p = strstr(p, " cpus=");
	if (!p || sscanf(p, " cpus=%63s", out->cpus) != 1)
		return -1;
	return 0;
}

static long status_value(struct app *a, const char *key)
{
	char ans[4096], pre[64], *p;

	assert_int_equal(req(a, "STATUS", ans, sizeof(ans)), 0);
	snprintf(pre, sizeof(pre), "\n%s ", key);
	p = strstr(ans, pre);
	assert_non_null(p);
	return strtol(p + strlen(pre), NULL, 10);
}

static int run_capture(const char *const *argv, char *out, size_t cap)
{
	int p[2], st;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int pid_alive(pid_t pid)
{
	return pid > 0 && kill(pid, 0) == 0;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'T', ...), or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *rp, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		st = rp[2];
	fclose(f);
	return st;
}

/* Where the kernel lets @p pid run: its Cpus_allowed_list. */
static void cpus_allowed(pid_t pid, char out[64])
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Cpus_allowed_list: %63s", out) == 1)
			break;
	fclose(f);
	assert_true(out[0] != '\0');
}

/* Route @p route's worker runs exactly where ROUTES and INSPECT say, and
 * with @p one_pu that is a single PU.  The list goes to @p cpus. */
static void check_pinned(struct app *a, const char *route, int one_pu,
			 char *cpus, size_t cap)
{
	struct route_line r;
	char allowed[64], ans[8192], key[80];
	long long pu;
	char *p;

	assert_int_equal(route_info(a, route, &r), 0);
	assert_true(r.os_pid > 0);
	cpus_allowed(r.os_pid, allowed);
	if (strcmp(allowed, r.cpus) != 0)
		fail_msg("route %s: ROUTES says cpus=%s, the kernel %s", route,
			 r.cpus, allowed);
	if (one_pu) {
		assert_int_equal(strspn(r.cpus, "0123456789"), strlen(r.cpus));
		pu = strtoll(r.cpus, NULL, 10);
		assert_true(pu >= 0);
	}
	assert_int_equal(req(a, "INSPECT events", ans, sizeof(ans)), 0);
	snprintf(key, sizeof(key), "\nshmr:route:%s:cpus ", route);
	p = strstr(ans, key);
	assert_non_null(p);
	p += strlen(key);
	assert_int_equal(strncmp(p, r.cpus, strlen(r.cpus)), 0);
	assert_int_equal(p[strlen(r.cpus)], '\n');
	snprintf(cpus, cap, "%s", r.cpus);
}

/* Messages queued in route inbox @p slot's inbound lanes, and how many of
 * them a consumer has peeked without releasing. */
static unsigned inbox_count(struct app *a, uint32_t slot, unsigned *peeked)
{
	uint32_t nlc = shmr_hdr(a->base)->nlcores;
	unsigned n = 0, p = 0;

	for (uint32_t l = 0; l < nlc; l++) {
		struct rte_ring *r = shmr_lane_at(a->base, slot, l);

		n += rte_ring_count(r);
		p += r->cons.head - r->cons.tail;
	}
	if (peeked)
		*peeked = p;
	return n;
}

/* ------------------------------------------------------------------ */

/* --check of a configuration of @p lines (after a domain line) and one
 * router: exit status @p rc and one line of output holding @p want. */
static void limits_case(struct app *a, const char *lines, int rc,
			const char *want)
{
	const char *argv[] = { control_bin, "--check", "-c", a->conf, NULL };
	char out[1024];
	FILE *f = fopen(a->conf, "w");

	assert_non_null(f);
	fprintf(f, "domain = \"x\";\n%s"
		   "routers = ( { name = \"r\"; behaviour = \"hash\"; "
		   "hash = [ \"q\" ]; routes = ( { name = \"q\"; "
		   "program = \"w\"; } ); } );\n", lines);
	fclose(f);
	assert_int_equal(run_capture(argv, out, sizeof(out)), rc);
	if (!strstr(out, want))
		fail_msg("--check said \"%s\", wanted \"...%s...\"", out,
			 want);
	assert_non_null(strchr(out, '\n'));
	assert_int_equal(strchr(out, '\n')[1], '\0');
}

static void exit_status_2_on_bad_input(void **state)
{
	struct app a;
	char out[4096];
	FILE *f;

	app_dir(&a);
	app_config(&a, "", NULL, 0);
	{
		const char *argv[] = { control_bin, "--bogus", NULL };
		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
		assert_non_null(strstr(out, "usage: shmr-control"));
	}
	{
		const char *argv[] = { control_bin, "-c", a.conf, "extra", NULL };
		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
	}
	{
		const char *argv[] = { control_bin, "--ready-fd", "77", NULL };
		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
		assert_non_null(strstr(out, "usage: shmr-control"));
	}
	{
		const char *argv[] = { control_bin, "--ready-fd", "x1", NULL };
		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
	}
	{
		const char *argv[] = { control_bin, "-c", NULL };
		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
	}
	{
		const char *argv[] = { control_bin, "-c", "/nonexistent.conf",
				       NULL };
		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
		assert_non_null(strstr(out, "shmr-control: "));
	}
	{
		const char *argv[] = { control_bin, "--check", "-c", a.conf,
				       NULL };
		char want[256];

		assert_int_equal(run_capture(argv, out, sizeof(out)), 0);
		snprintf(want, sizeof(want), "%s: ok\n", a.conf);
		assert_string_equal(out, want);
	}
	{
		const char *argv[] = { control_bin, "--check", NULL };

		assert_int_equal(run_capture(argv, out, sizeof(out)), 0);
		assert_string_equal(out, "<default>: ok\n");
	}
	/* A bad setting: one line naming file:line: field. */
	f = fopen(a.conf, "w");
	fprintf(f, "domain = \"x\";\nlcores = 99;\n"
		   "routers = ( { name = \"r\"; behaviour = \"hash\"; "
		   "hash = [ \"q\" ]; routes = ( { name = \"q\"; "
		   "program = \"w\"; } ); } );\n");
	fclose(f);
	{
		const char *argv[] = { control_bin, "-c", a.conf, NULL };
		char want[256];

		assert_int_equal(run_capture(argv, out, sizeof(out)), 2);
		snprintf(want, sizeof(want), "shmr-control: %s:", a.conf);
		assert_int_equal(strncmp(out, want, strlen(want)), 0);
		assert_non_null(strstr(out, "lcores"));
		assert_non_null(strchr(out, '\n'));
		assert_int_equal(strchr(out, '\n')[1], '\0');
	}
	/* The limits (issue 16): a value out of range, a domain that fits
	 * (16384 endpoints of small lanes, about 200 MiB), and one that no
	 * host holds (16384 endpoints of 65536 slots of 4 KiB: 12 TiB),
	 * refused by --check naming the setting's line. */
	limits_case(&a, "max_endpoints = 20000;\n", 2,
		    ":2: max_endpoints: max_endpoints must be from 16 to "
		    "16384");
	limits_case(&a, "max_names = 20000;\n", 2,
		    ":2: max_names: max_names must be from 16 to 16384");
	limits_case(&a, "max_types = 2000;\n", 2,
		    ":2: max_types: max_types must be from 1 to 1024");
	limits_case(&a, "max_names = 16384;\nmax_types = 1024;\n", 0, ": ok");
	limits_case(&a, "max_routes = 129;\n", 2,
		    ":2: max_routes: 129 is out of range (1 to 128)");
	limits_case(&a, "max_routes = 128;\n", 0, ": ok");
	limits_case(&a, "max_routers = 257;\n", 2,
		    ":2: max_routers: 257 is out of range (1 to 256)");
	limits_case(&a, "max_routers = 0;\n", 2,
		    ":2: max_routers: 0 is out of range (1 to 256)");
	/* The most routers, each with the most type-map entries: the
	 * domain's plan holds them (about 22 MiB more than the default). */
	limits_case(&a, "max_routers = 256;\nmax_types = 1024;\n", 0,
		    ": ok");
	limits_case(&a, "lcores = 32;\nmax_endpoints = 16384;\n"
			"lane_size = 64;\nslot_size = 64;\n",
		    0, ": ok");
	limits_case(&a, "slot_size = 4096;\nlane_size = 65536;\n"
			"max_endpoints = 16384;\n",
		    2, ":4: max_endpoints: the domain needs 12288.");
	/* Without max_endpoints, what sizes the domain most is named (main
	 * checked no memory: 1,024 of these lanes, 768 GiB, passed). */
	limits_case(&a, "slot_size = 4096;\nlane_size = 65536;\n", 2,
		    ":3: lane_size: the domain needs 768.");
	/* A cpu past those this host lets us run on (read now): refused by
	 * --check at its line, not by the dataplane's EAL at start (its
	 * usage text, exit 1). */
	{
		cpu_set_t host;
		unsigned hi = 0;
		char lines[64], want[128];

		assert_int_equal(sched_getaffinity(0, sizeof(host), &host), 0);
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &host))
				hi = c;
		if (hi + 1 < CPU_SETSIZE) {
			snprintf(lines, sizeof(lines),
				 "\ndataplane_cpus = \"%u\";\n", hi + 1);
			snprintf(want, sizeof(want),
				 ":3: dataplane_cpus: cpu %u is not one this "
				 "host lets shmr-control run on",
				 hi + 1);
			limits_case(&a, lines, 2, want);
		}
	}
	app_stop(&a);
}

static void init_is_atomic(void **state)
{
	struct app a;
	char log[8192], want[128];
	int st;

	/* Route b's program does not exist: it fails after the dataplane
	 * took the table and route a's worker started. */
	app_dir(&a);
	app_config(&a, "", "/nonexistent/worker", 0);
	assert_false(app_start(&a, NULL, &st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	read_file(a.log, log, sizeof(log));
	assert_non_null(strstr(log, "shmr-control: route b: cannot start "
				    "/nonexistent/worker: No such file or "
				    "directory\n"));
	/* The dataplane did start (it says so once it routes)... */
	snprintf(want, sizeof(want), "shmr-dataplane: domain %s, 2 lcores",
		 a.domain);
	assert_non_null(strstr(log, want));
	/* ...and nothing is left: not the dataplane, not route a's worker
	 * (app_stop() counts what came back to us), not the socket. */
	assert_int_equal(orphans(0), 0);
	assert_int_equal(access(a.sock, F_OK), -1);
	app_stop(&a);

	/* A cpu that does not exist is a configuration error, refused
	 * before anything starts (it was found by the pinning, exit 1):
	 * one line naming the route's cpus, exit 2, nothing left. */
	app_dir(&a);
	app_config(&a, "1000", NULL, 0);
	assert_false(app_start(&a, NULL, &st));
	assert_int_equal(WEXITSTATUS(st), 2);
	read_file(a.log, log, sizeof(log));
	assert_non_null(strstr(log, ":11: routers.[0].routes.[0].cpus: cpu "
				    "1000 is not one this host lets "
				    "shmr-control run on"));
	assert_int_equal(orphans(0), 0);
	assert_int_equal(access(a.sock, F_OK), -1);
	app_stop(&a);
}

struct inbox_wait {
	struct app *a;
	uint32_t slot;
	unsigned want;
};

static int inbox_is(void *arg)
{
	struct inbox_wait *w = arg;

	return inbox_count(w->a, w->slot, NULL) == w->want;
}

struct seen_wait {
	struct app *a;
	uint64_t version;
};

static int all_lcores_saw(void *arg)
{
	struct seen_wait *w = arg;
	uint32_t nlc = shmr_hdr(w->a->base)->nlcores;

	for (uint32_t l = 0; l < nlc; l++)
		if (atomic_load(&shmr_stats_of(w->a->base, l)->table_version) <
		    w->version)
			return 0;
	return 1;
}

static void bad_requests_over_the_wire(void **state)
{
	struct app a;
	char ans[8192], big[2048], cpus_a[64], cpus_b[64];
	struct shmr_pid pid;
	int st, fd2;

	app_dir(&a);
	app_config(&a, "0", NULL, 0);
	if (!app_start(&a, (const char *[]){ "--quiet", NULL }, &st)) {
		show_log(&a);
		fail_msg("control did not start (status %d)", st);
	}
	app_connect(&a);
	wait_registered(&a, "worker-a");

	assert_int_equal(req(&a, "BOGUS", ans, sizeof(ans)), -SHMR_E_PROTO);
	assert_int_equal(req(&a, "STATUS extra", ans, sizeof(ans)),
			 -SHMR_E_PROTO);
	assert_int_equal(req(&a, "CLAIM -1 1", ans, sizeof(ans)),
			 -SHMR_E_PROTO);
	memset(big, 'X', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(req(&a, big, ans, sizeof(ans)), -SHMR_E_TOO_BIG);
	assert_int_equal(req(&a, "ROUTES nope", ans, sizeof(ans)),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(strcmp(ans + strlen(ans) - strlen("route: router nope"),
				"route: router nope"),
			 0);
	assert_int_equal(req(&a, "INSPECT nope json", ans, sizeof(ans)),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(req(&a, "ROUTES bad/name", ans, sizeof(ans)),
			 -SHMR_E_NAME);
	/* The layout before ours. */
	snprintf(big, sizeof(big), "ATTACH %u", SHMR_LAYOUT_VERSION - 1);
	assert_int_equal(req(&a, big, ans, sizeof(ans)), -SHMR_E_VERSION);
	/* Route a's inbox is slot 1: only its worker may claim it. */
	assert_int_equal(req(&a, "CLAIM 1 1", ans, sizeof(ans)),
			 -SHMR_E_PERM);
	assert_int_equal(req(&a, "CLAIM 1 9", ans, sizeof(ans)),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(req(&a, "CLAIM 0 1", ans, sizeof(ans)),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(req(&a, "CLOSE 0 1", ans, sizeof(ans)),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(req(&a, "REGISTER x 1 1", ans, sizeof(ans)),
			 -SHMR_E_NO_ENDPOINT);

	/* Still served after all that (endpoints count the control plane's
	 * admin endpoint). */
	assert_int_equal(status_value(&a, "endpoints"), 4);
	assert_int_equal(status_value(&a, "nlcores"), 2);

	/* OPEN, REGISTER, duplicates, CLOSE. */
	assert_int_equal(req(&a, "OPEN", ans, sizeof(ans)), 0);
	assert_int_equal(sscanf(ans, "OK %u %u", &pid.slot, &pid.gen), 2);
	assert_int_equal(pid.slot, 3);
	assert_int_equal(pid.gen, 1);
	assert_int_equal(req(&a, "REGISTER client-1 3 1", ans, sizeof(ans)),
			 0);
	assert_true(registered(&a, "client-1"));
	assert_int_equal(req(&a, "REGISTER client-1 3 1", ans, sizeof(ans)),
			 -SHMR_E_ROUTE_DUPLICATE);
	assert_int_equal(req(&a, "REGISTER events 3 1", ans, sizeof(ans)),
			 -SHMR_E_ROUTE_DUPLICATE);
	assert_int_equal(req(&a, "REGISTER worker-a 3 1", ans, sizeof(ans)),
			 -SHMR_E_ROUTE_DUPLICATE);
	assert_int_equal(req(&a, "UNREGISTER worker-a 3 1", ans, sizeof(ans)),
			 -SHMR_E_PERM);
	assert_int_equal(status_value(&a, "endpoints"), 5);
	assert_int_equal(
		atomic_load(&shmr_ep_at(a.base, 3)->state), SHMR_EP_ACTIVE);
	assert_int_equal(shmr_ep_at(a.base, 3)->kind, SHMR_EPK_CLIENT);
	assert_int_equal(shmr_ep_at(a.base, 3)->os_pid, (int)getpid());

	/* A second connection's endpoint goes with it. */
	fd2 = shmr_proto_connect(a.sock);
	assert_true(fd2 >= 0);
	assert_int_equal(shmr_proto_request(fd2, "OPEN", ans, sizeof(ans),
					    NULL),
			 0);
	assert_int_equal(shmr_proto_request(fd2, "REGISTER other 4 1", ans,
					    sizeof(ans), NULL),
			 0);
	assert_int_equal(status_value(&a, "endpoints"), 6);
	close(fd2);
	{
		struct reg_wait w = { &a, "other", 0 };

		assert_true(wait_for(reg_is, &w));
	}
	assert_int_equal(status_value(&a, "endpoints"), 5);

	/* A message waits in slot 3's inbound lane: sent by a libshmr client
	 * to client-1, delivered by the dataplane.  Then slot 3 closes. */
	{
		struct shmr_domain *d;
		struct shmr_endpoint *ep;
		struct inbox_wait w = { &a, 3, 1 };

		assert_int_equal(shmr_attach_path(a.sock, &d), 0);
		assert_int_equal(shmr_endpoint_open(d, &ep), 0);
		assert_int_equal(shmr_send_name(ep, "client-1", 9, 42, "x", 1),
				 0);
		assert_true(wait_for(inbox_is, &w));
		shmr_endpoint_close(ep);
		shmr_detach(d);
	}
	assert_int_equal(status_value(&a, "endpoints"), 5);
	assert_int_equal(req(&a, "CLOSE 3 1", ans, sizeof(ans)), 0);
	assert_false(registered(&a, "client-1"));
	assert_int_equal(status_value(&a, "endpoints"), 4);
	assert_int_equal(atomic_load(&shmr_ep_at(a.base, 3)->state),
			 SHMR_EP_FREE);

	/* Once the dataplane has applied the version that dropped it, slot 3
	 * comes back with the next generation and clean lanes. */
	{
		struct seen_wait w = {
			&a, (uint64_t)status_value(&a, "spec_version")
		};

		assert_true(wait_for(all_lcores_saw, &w));
	}
	assert_int_equal(req(&a, "OPEN", ans, sizeof(ans)), 0);
	assert_string_equal(ans, "OK 3 2");
	assert_int_equal(shmr_ep_at(a.base, 3)->gen, 2);
	assert_int_equal(inbox_count(&a, 3, NULL), 0);
	assert_int_equal(req(&a, "CLOSE 3 1", ans, sizeof(ans)),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(req(&a, "CLOSE 3 2", ans, sizeof(ans)), 0);

	/* ROUTES and INSPECT. */
	assert_int_equal(req(&a, "ROUTES events", ans, sizeof(ans)), 0);
	assert_int_equal(strncmp(ans, "OK\na pid=1:1 os_pid=", 20), 0);
	assert_non_null(strstr(ans, "\nb pid=2:1 os_pid="));
	assert_non_null(strstr(ans, " state=running restarts=0 delivered=0 "
				    "queued=0 cpus=0 sojourn_count=0 "));
	assert_int_equal(req(&a, "INSPECT events", ans, sizeof(ans)), 0);
	assert_non_null(strstr(ans, "\nshmr:type type\n"));
	assert_non_null(strstr(ans, "\nshmr:routes_active 2\n"));
	assert_non_null(strstr(ans, "\nshmr:route:b:pid 2:1\n"));
	assert_non_null(strstr(ans, "\nshmr:route:a:cpus 0\n"));
	assert_int_equal(req(&a, "INSPECT events json", ans, sizeof(ans)), 0);
	assert_int_equal(strncmp(ans, "OK\n{", 4), 0);
	assert_non_null(strstr(ans, "\"shmr:routes_total\": 2,"));

	/* Each worker runs where ROUTES says: a on its configured cpu 0, b
	 * (cpus "") on the one PU the control plane chose for it. */
	check_pinned(&a, "a", 1, cpus_a, sizeof(cpus_a));
	assert_string_equal(cpus_a, "0");
	check_pinned(&a, "b", 1, cpus_b, sizeof(cpus_b));

	/* shmrctl watch names its columns once, then the figures. */
	{
		const char *argv[] = { shmrctl_bin, "-s", a.sock, "watch",
				       "events", "--interval", "0.05",
				       "--duration", "0.05", NULL };

		assert_int_equal(run_capture(argv, ans, sizeof(ans)), 0);
		assert_string_equal(ans, "route msgs/s total\n"
					 "a 0 0\n"
					 "b 0 0\n"
					 "total 0 0\n");
	}

	/* --duration ends watch and top on time, not an interval late:
	 * one sample, taken when it has passed (bounds generous: a loaded
	 * machine).  0 is refused (left out is "until SIGINT"). */
	{
		const char *w[] = { shmrctl_bin, "-s", a.sock, "watch",
				    "events", "--interval", "5",
				    "--duration", "1", NULL };
		const char *t[] = { shmrctl_bin, "-s", a.sock, "top",
				    "--interval", "20", "--duration", "1",
				    NULL };
		const char *z[] = { shmrctl_bin, "-s", a.sock, "watch",
				    "events", "--duration", "0", NULL };
		const char *zt[] = { shmrctl_bin, "-s", a.sock, "top",
				     "--duration", "0", NULL };
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(run_capture(w, ans, sizeof(ans)), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		assert_true(t1.tv_sec - t0.tv_sec < 4);
		assert_string_equal(ans, "route msgs/s total\n"
					 "a 0 0\n"
					 "b 0 0\n"
					 "total 0 0\n");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(run_capture(t, ans, sizeof(ans)), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		assert_true(t1.tv_sec - t0.tv_sec < 4);
		assert_non_null(strstr(ans, "ROUTER/ROUTE "));
		assert_int_equal(run_capture(z, ans, sizeof(ans)), 2);
		assert_non_null(strstr(ans, "--duration"));
		assert_int_equal(run_capture(zt, ans, sizeof(ans)), 2);
	}

	/* STOP: answered, then everything goes, status 0. */
	{
		pid_t dp = (pid_t)status_value(&a, "dataplane_pid");
		struct route_line ra, rb;

		assert_true(pid_alive(dp));
		assert_int_equal(route_info(&a, "a", &ra), 0);
		assert_int_equal(route_info(&a, "b", &rb), 0);
		assert_int_equal(req(&a, "STOP", ans, sizeof(ans)), 0);
		st = app_wait(&a);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		assert_false(pid_alive(dp));
		assert_false(pid_alive(ra.os_pid));
		assert_false(pid_alive(rb.os_pid));
		assert_int_equal(orphans(0), 0);
		assert_int_equal(access(a.sock, F_OK), -1);
	}
	app_stop(&a);
}

/* shmrctl stop returns once the control plane has exited, so a start
 * right after it finds the domain's locks free. */
static void shmrctl_stop_waits(void **state)
{
	const char *argv[] = { shmrctl_bin, "-s", NULL, "stop", NULL };
	struct app a;
	char ans[256];
	int st;

	app_dir(&a);
	app_config(&a, "", NULL, 0);
	for (int round = 0; round < 3; round++) {
		pid_t pid;

		assert_true(app_start(&a, (const char *[]){ "--quiet", NULL },
				      &st));
		pid = a.pid;
		argv[2] = a.sock;
		assert_int_equal(run_capture(argv, ans, sizeof(ans)), 0);
		/* Exited already: reaped without waiting. */
		assert_int_equal(waitpid(pid, &st, WNOHANG), pid);
		live_forget(pid, NULL);
		a.pid = 0;
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	app_stop(&a);
}

static void peer_credentials_checked(void **state)
{
	struct app a;
	int st;
	pid_t pid;

	app_dir(&a);
	app_config(&a, "", NULL, 0);
	/* No --dataplane: shmr-control finds the one built next to it. */
	if (!app_start_how(&a, (const char *[]){ "--quiet", NULL }, 1, &st)) {
		show_log(&a);
		fail_msg("control did not start (status %d)", st);
	}
	{
		struct stat sb;

		assert_int_equal(stat(a.sock, &sb), 0);
		assert_int_equal(sb.st_mode & 0777, 0600);
	}
	/* Open the file up: the credentials check must still refuse. */
	chmod(a.sock, 0666);
	pid = fork();
	if (pid == 0) {
		char ans[256];
		int fd, rc;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(77);
		fd = shmr_proto_connect(a.sock);
		if (fd < 0)
			_exit(10);
		rc = shmr_proto_request(fd, "STATUS", ans, sizeof(ans), NULL);
		_exit(rc == -SHMR_E_PERM &&
				      strstr(ans, "permission denied")
			      ? 0
			      : 11);
	}
	waitpid(pid, &st, 0);
	if (WEXITSTATUS(st) != 77)
		assert_int_equal(WEXITSTATUS(st), 0);
	/* Still serving its own user. */
	app_connect(&a);
	assert_int_equal(status_value(&a, "routers"), 1);
	assert_true(pid_alive((pid_t)status_value(&a, "dataplane_pid")));
	app_stop(&a);
}

static int log_says_sighup(void *arg)
{
	char log[4096];

	read_file(((struct app *)arg)->log, log, sizeof(log));
	return strstr(log, "SIGHUP ignored: shmr-control does not reload") !=
	       NULL;
}

static void one_control_per_socket(void **state)
{
	struct app a, b;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int st, fd;
	char log[4096];

	/* A stale socket file (nobody listening) is replaced. */
	app_dir(&a);
	app_config(&a, "", NULL, 0);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	strcpy(sa.sun_path, a.sock);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_true(app_start(&a, (const char *[]){ "--quiet", NULL }, &st));

	/* A live one is not. */
	b = a;
	snprintf(b.log, sizeof(b.log), "%s/second.log", a.dir);
	assert_false(app_start(&b, NULL, &st));
	assert_int_equal(WEXITSTATUS(st), 1);
	read_file(b.log, log, sizeof(log));
	assert_non_null(strstr(log, "already served"));
	/* It spawned nothing: no dataplane or worker of its own came back
	 * to us, and it did not say it started one. */
	assert_int_equal(orphans(a.pid), 0);
	assert_null(strstr(log, "shmr-dataplane"));

	/* Nor one of the same domain name in another run dir: the name is
	 * host-wide (EAL's file prefix).  Refused before it starts anything,
	 * the first one's EAL runtime directory (its telemetry socket)
	 * left alone. */
	{
		const char *base = getenv("RUNTIME_DIRECTORY");
		char other[] = "/tmp/shmr-ctltest2.XXXXXX", eal[256];
		char cmd[300];

		if (!base || !base[0])
			base = geteuid() == 0 ? "/var/run"
					      : getenv("XDG_RUNTIME_DIR");
		if (!base || !base[0])
			base = "/tmp";
		snprintf(eal, sizeof(eal), "%s/dpdk/shmr-%s", base, a.domain);
		assert_int_equal(access(eal, F_OK), 0);
		assert_non_null(mkdtemp(other));
		b = a;
		snprintf(b.log, sizeof(b.log), "%s/third.log", a.dir);
		assert_false(app_start(&b, (const char *[]){ "--run-dir", other,
							     NULL },
				       &st));
		assert_int_equal(WEXITSTATUS(st), 1);
		read_file(b.log, log, sizeof(log));
		assert_non_null(strstr(log, "already served on this host"));
		assert_int_equal(orphans(a.pid), 0);
		assert_null(strstr(log, "shmr-dataplane"));
		assert_int_equal(access(eal, F_OK), 0);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", other);
		assert_int_equal(system(cmd), 0);
	}

	/* The first one is untouched. */
	app_connect(&a);
	assert_int_equal(status_value(&a, "routers"), 1);
	assert_int_equal(status_value(&a, "dataplane_starts"), 1);
	/* SIGHUP reloads nothing: it is said in the log (a warning, so
	 * even --quiet shows it) and the domain serves on. */
	assert_int_equal(kill(a.pid, SIGHUP), 0);
	assert_true(wait_for(log_says_sighup, &a));
	assert_int_equal(status_value(&a, "routers"), 1);
	assert_int_equal(status_value(&a, "dataplane_starts"), 1);
	/* SIGTERM is a clean stop too. */
	kill(a.pid, SIGTERM);
	st = app_wait(&a);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	app_stop(&a);
}

/* ------------------------------------------------------------------ */
/* kill -9 mid-burst: a worker, then the dataplane                     */
/* ------------------------------------------------------------------ */

static int hold_file_there(void *arg)
{
	return access(((struct app *)arg)->hold, F_OK) == 0;
}

struct restart_wait {
	struct app *a;
	struct route_line *r;
};

static int route_a_restarted(void *arg)
{
	struct restart_wait *w = arg;

	return route_info(w->a, "a", w->r) == 0 && w->r->restarts == 1 &&
	       strcmp(w->r->state, "running") == 0;
}

/* The record file is the worker's (test_worker.c): per key a receive
 * count, then per key a "seen redelivered" mark.  Byte loads of a file
 * another process writes; each check ends in a syscall (sleep_ms). */
struct rec_wait {
	const unsigned char *rec;
	unsigned from, to; /* keys [from, to) */
};

static int keys_received(void *arg)
{
	struct rec_wait *w = arg;

	for (unsigned k = w->from; k < w->to; k++)
		if (w->rec[k] == 0)
			return 0;
	return 1;
}

/* Keys [0, held) twice (the dead worker's receipt and the replacement's),
 * keys [held, n) once. */
struct redo_wait {
	const unsigned char *rec;
	unsigned held, n;
};

static int replacement_has_all(void *arg)
{
	struct redo_wait *w = arg;

	for (unsigned k = 0; k < w->n; k++)
		if (w->rec[k] < (k < w->held ? 2 : 1))
			return 0;
	return 1;
}

struct dp_wait {
	struct app *a;
	pid_t pid;
	long starts;
};

static int dp_stopped(void *arg)
{
	return proc_state(((struct dp_wait *)arg)->pid) == 'T';
}

static int dp_restarted(void *arg)
{
	struct dp_wait *w = arg;

	return status_value(w->a, "dataplane_starts") >= w->starts &&
	       status_value(w->a, "dataplane_pid") > 0;
}

static void restart_repairs_and_keeps_the_inbox(void **state)
{
	struct app a;
	struct route_line before, after;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid router, self;
	struct shmr_out out_msgs[5];
	unsigned char *rec;
	char cpus_a[64], cpus_b[64], again[64];
	uint8_t peek[2 * SHMR_SLOT_MAX] __attribute__((aligned(8)));
	char held_text[32];
	struct rte_ring *out;
	unsigned held, peeked, avail;
	uint32_t nlc;
	int st, fd;
	pid_t dp, dp2;

	app_dir(&a);
	app_config(&a, "", NULL, 1);
	if (!app_start(&a, (const char *[]){ "--quiet", NULL }, &st)) {
		show_log(&a);
		fail_msg("control did not start (status %d)", st);
	}
	app_connect(&a);
	wait_registered(&a, "worker-a");
	assert_int_equal(route_info(&a, "a", &before), 0);
	assert_string_equal(before.state, "running");
	nlc = shmr_hdr(a.base)->nlcores;
	fd = open(a.rec, O_RDWR);
	assert_true(fd >= 0);
	rec = mmap(NULL, 2 * NREC, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(rec != MAP_FAILED);
	close(fd);

	/* Both routes have cpus "": each worker is on one PU, the one ROUTES
	 * names. */
	check_pinned(&a, "a", 1, cpus_a, sizeof(cpus_a));
	check_pinned(&a, "b", 1, cpus_b, sizeof(cpus_b));

	/* Five messages for route a, through the real dataplane.  Route a's
	 * worker handles its first burst and keeps it unreleased
	 * (--hold-once): a kill -9 now lands mid-burst. */
	assert_int_equal(shmr_attach_path(a.sock, &d), 0);
	assert_int_equal(shmr_endpoint_open(d, &ep), 0);
	self = shmr_endpoint_pid(ep);
	assert_int_equal(shmr_lookup(d, "events", &router), 0);
	for (unsigned i = 0; i < 5; i++)
		out_msgs[i] = (struct shmr_out){ .to = router, .type = 1,
						 .key = i };
	assert_int_equal(shmr_send_burst(ep, out_msgs, 5), 5);
	if (!wait_for(hold_file_there, &a)) {
		show_log(&a);
		fail_msg("route a's worker never held a burst");
	}
	read_file(a.hold, held_text, sizeof(held_text));
	held = (unsigned)strtoul(held_text, NULL, 10);
	assert_true(held >= 1 && held <= 5);
	{
		struct inbox_wait w = { &a, before.slot, 5 };

		assert_true(wait_for(inbox_is, &w)); /* all five delivered */
	}
	assert_int_equal(inbox_count(&a, before.slot, &peeked), 5);
	assert_int_equal(peeked, held);
	kill(before.os_pid, SIGKILL);

	{
		struct restart_wait w = { &a, &after };

		if (!wait_for(route_a_restarted, &w)) {
			show_log(&a);
			fail_msg("route a was not restarted");
		}
	}
	assert_int_equal(after.restarts, 1);
	assert_int_not_equal(after.os_pid, before.os_pid);
	assert_true(pid_alive(after.os_pid));
	/* Same slot, same PID: the inbox belongs to the route. */
	assert_int_equal(after.slot, before.slot);
	assert_int_equal(after.gen, before.gen);
	/* The unreleased burst was handed to the replacement, flagged;
	 * nothing lost: the held keys twice (once flagged), the rest once. */
	{
		struct redo_wait w = { rec, held, 5 };
		struct inbox_wait iw = { &a, before.slot, 0 };

		if (!wait_for(replacement_has_all, &w)) {
			show_log(&a);
			fail_msg("the replacement did not get all five");
		}
		for (unsigned k = 0; k < 5; k++) {
			assert_int_equal(rec[k], k < held ? 2 : 1);
			assert_int_equal(rec[NREC + k], k < held);
		}
		assert_true(wait_for(inbox_is, &iw)); /* all released */
		assert_int_equal(inbox_count(&a, before.slot, &peeked), 0);
		assert_int_equal(peeked, 0);
	}
	/* The replacement could register the dead worker's name again, and
	 * runs where its route is pinned. */
	wait_registered(&a, "worker-a");
	check_pinned(&a, "a", 1, again, sizeof(again));
	assert_string_equal(again, cpus_a);

	/* The dataplane dies mid-burst: it is stopped, our two messages wait
	 * in our outbound lane, and we play its receive up to the point it
	 * had peeked them (it is their only consumer, and it is stopped);
	 * then kill -9. */
	dp = (pid_t)status_value(&a, "dataplane_pid");
	assert_true(dp > 0);
	assert_int_equal(status_value(&a, "dataplane_starts"), 1);
	{
		struct dp_wait w = { &a, dp, 0 };

		assert_int_equal(kill(dp, SIGSTOP), 0);
		assert_true(wait_for(dp_stopped, &w));
	}
	out = shmr_lane_at(a.base, self.slot, SHMR_LANE_OUT(nlc));
	for (unsigned i = 0; i < 2; i++)
		out_msgs[i] = (struct shmr_out){ .to = router, .type = 1,
						 .key = 100 + i };
	assert_int_equal(shmr_send_burst(ep, out_msgs, 2), 2);
	assert_int_equal(rte_ring_count(out), 2);
	assert_int_equal(rte_ring_dequeue_burst_elem_start(
				 out, peek, shmr_hdr(a.base)->slot_size, 2,
				 &avail),
			 2);
	assert_int_equal(out->cons.head - out->cons.tail, 2);
	assert_int_equal(kill(dp, SIGKILL), 0);
	{
		struct dp_wait w = { &a, dp, 2 };

		if (!wait_for(dp_restarted, &w)) {
			show_log(&a);
			fail_msg("the dataplane was not restarted");
		}
	}
	assert_int_equal(status_value(&a, "dataplane_starts"), 2);
	dp2 = (pid_t)status_value(&a, "dataplane_pid");
	assert_true(dp2 > 0 && dp2 != dp);
	assert_true(pid_alive(dp2));
	/* The peeked burst was handed back, flagged, and the new dataplane
	 * forwarded it: route a's worker has both, once each, redelivered. */
	{
		struct rec_wait w = { rec, 100, 102 };

		if (!wait_for(keys_received, &w)) {
			show_log(&a);
			fail_msg("the burst the dataplane died in was lost");
		}
		for (unsigned k = 100; k < 102; k++) {
			assert_int_equal(rec[k], 1);
			assert_int_equal(rec[NREC + k], 1);
		}
	}
	assert_int_equal(out->cons.head, out->cons.tail);
	assert_int_equal(rte_ring_count(out), 0);
	shmr_endpoint_close(ep);
	shmr_detach(d);

	/* Restarted routes are still counted, and the stop is clean. */
	{
		char ans[4096];

		assert_int_equal(req(&a, "INSPECT events", ans, sizeof(ans)),
				 0);
		assert_non_null(strstr(ans, "\nshmr:restarts 1\n"));
	}
	kill(a.pid, SIGTERM);
	st = app_wait(&a);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_false(pid_alive(dp2));
	assert_false(pid_alive(after.os_pid));
	munmap(rec, 2 * NREC);
	app_stop(&a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(exit_status_2_on_bad_input, cleanup),
		cmocka_unit_test_teardown(init_is_atomic, cleanup),
		cmocka_unit_test_teardown(bad_requests_over_the_wire, cleanup),
		cmocka_unit_test_teardown(peer_credentials_checked, cleanup),
		cmocka_unit_test_teardown(one_control_per_socket, cleanup),
		cmocka_unit_test_teardown(shmrctl_stop_waits, cleanup),
		cmocka_unit_test_teardown(restart_repairs_and_keeps_the_inbox,
					  cleanup),
	};

	if (argc < 6) {
		fprintf(stderr,
			"usage: %s SHMR-CONTROL SHMR-DATAPLANE SHMR-TEST-WORKER "
			"SHMR-ECHO-WORKER SHMRCTL\n",
			argv[0]);
		return 2;
	}
	control_bin = argv[1];
	dataplane_bin = argv[2];
	test_worker_bin = argv[3];
	echo_worker_bin = argv[4];
	shmrctl_bin = argv[5];
	/* The tests talk to their own sockets only. */
	unsetenv("SHMR_RUN_DIR");
	/* What the control plane leaves running comes back to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
