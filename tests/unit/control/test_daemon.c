/*
 * shmr-control as a process, with a stand-in dataplane and stand-in
 * workers (stub_dataplane.c, stub_worker.c): exit statuses and the
 * --ready-fd handshake, atomic init, the socket protocol over the wire
 * (bad requests of every kind answered, never fatal), peer credentials,
 * lane repair and restart into the same slot after kill -9 of a worker
 * or of the dataplane, and a clean stop that leaves nothing behind.
 *
 * argv[1..3]: shmr-control, the stub dataplane, the stub worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static const char *control_bin, *stub_dp_bin, *stub_worker_bin;

struct app {
	char dir[64];
	char conf[128];
	char sock[128];
	char log[128];
	char pidfile[128];
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

static void app_dir(struct app *a)
{
	static int seq;

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
	snprintf(a->pidfile, sizeof(a->pidfile), "%s/dp.pid", a->dir);
}

/* Two routes under router "events": a (registers "worker-a", pinned to
 * cpu @p cpus_a) and b (runs @p prog_b). */
static void app_config(struct app *a, const char *cpus_a, const char *prog_b)
{
	FILE *f = fopen(a->conf, "w");

	assert_non_null(f);
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
		"      { name = \"a\"; program = \"%s\"; args = [ \"worker-a\" ];"
		" cpus = \"%s\"; },\n"
		"      { name = \"b\"; program = \"%s\"; cpus = \"\"; }\n"
		"    );\n"
		"  }\n"
		");\n",
		a->domain, a->dir, stub_worker_bin, cpus_a,
		prog_b ? prog_b : stub_worker_bin);
	fclose(f);
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

/* Run shmr-control with @p extra arguments; wait for "R" or EOF on the
 * ready pipe.  Returns 1 when it is up, else 0 with *status its exit. */
static int app_start(struct app *a, const char *const *extra, int *status)
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
	argv[n++] = "--dataplane";
	argv[n++] = stub_dp_bin;
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
		setenv("STUB_DP_PIDFILE", a->pidfile, 1);
		execv(control_bin, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	do
		r = read(p[0], &byte, 1);
	while (r < 0 && errno == EINTR);
	close(p[0]);
	up = r == 1 && byte == 'R';
	if (!up) {
		assert_int_equal(waitpid(a->pid, status, 0), a->pid);
		a->pid = 0;
	}
	return up;
}

static int app_wait(struct app *a)
{
	int st;

	assert_int_equal(waitpid(a->pid, &st, 0), a->pid);
	a->pid = 0;
	return st;
}

static void app_connect(struct app *a)
{
	char ans[256];
	int mfd = -1;
	struct stat st;

	a->fd = shmr_proto_connect(a->sock);
	assert_true(a->fd >= 0);
	assert_int_equal(
		shmr_proto_request(a->fd, "ATTACH 1", ans, sizeof(ans), &mfd),
		0);
	assert_true(mfd >= 0);
	assert_int_equal(fstat(mfd, &st), 0);
	a->size = (size_t)st.st_size;
	assert_int_equal(strtoull(ans + 3, NULL, 10), (unsigned long long)a->size);
	a->base = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd,
		       0);
	assert_true(a->base != MAP_FAILED);
	close(mfd);
	assert_int_equal(shmr_layout_check(a->base, a->size), 0);
}

static void app_stop(struct app *a)
{
	char cmd[256];

	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->base)
		munmap(a->base, a->size);
	a->base = NULL;
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		app_wait(a);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", a->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", a->dir);
}

static int req(struct app *a, const char *r, char *ans, size_t cap)
{
	return shmr_proto_request(a->fd, r, ans, cap, NULL);
}

/* Is @p name in the domain's registry (read under the seqcount)? */
static int registered(struct app *a, const char *name)
{
	const struct shmr_spec *s = shmr_spec_of(a->base);
	uint64_t seq;
	int found;

	do {
		seq = shmr_spec_read_begin(s);
		found = 0;
		for (uint32_t i = 0; i < s->nreg && i < SHMR_MAX_REGISTRY; i++)
			if (strncmp(s->registry[i].name, name,
				    SHMR_NAME_MAX) == 0)
				found = 1;
	} while (shmr_spec_read_retry(s, seq));
	return found;
}

static void wait_registered(struct app *a, const char *name)
{
	for (int i = 0; i < 2000 && !registered(a, name); i++)
		sleep_ms(5);
	if (!registered(a, name)) {
		show_log(a);
		fail_msg("%s never registered", name);
	}
}

struct route_line {
	unsigned slot, gen, restarts;
	int os_pid;
	char state[16];
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

static pid_t read_pidfile(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* ------------------------------------------------------------------ */

static void exit_status_2_on_bad_input(void **state)
{
	struct app a;
	char out[4096];
	FILE *f;

	app_dir(&a);
	app_config(&a, "", NULL);
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
	app_stop(&a);
}

static void init_is_atomic(void **state)
{
	struct app a;
	char log[4096];
	int st;
	FILE *f;
	size_t n;
	pid_t dp;

	app_dir(&a);
	app_config(&a, "", "/nonexistent/worker");
	assert_false(app_start(&a, NULL, &st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	f = fopen(a.log, "r");
	n = fread(log, 1, sizeof(log) - 1, f);
	log[n] = '\0';
	fclose(f);
	assert_non_null(strstr(log, "shmr-control: route b: cannot start "
				    "/nonexistent/worker: No such file or "
				    "directory\n"));
	/* Nothing left: the dataplane it had started is gone, and so is
	 * the socket. */
	dp = read_pidfile(a.pidfile);
	assert_true(dp > 0);
	assert_false(pid_alive(dp));
	assert_int_equal(access(a.sock, F_OK), -1);
	app_stop(&a);

	/* A cpu that does not exist: the pinning fails, same outcome. */
	app_dir(&a);
	app_config(&a, "1000", NULL);
	assert_false(app_start(&a, NULL, &st));
	assert_int_equal(WEXITSTATUS(st), 1);
	f = fopen(a.log, "r");
	n = fread(log, 1, sizeof(log) - 1, f);
	log[n] = '\0';
	fclose(f);
	assert_non_null(strstr(log, "route a: cannot pin to cpus 1000"));
	app_stop(&a);
}

static void bad_requests_over_the_wire(void **state)
{
	struct app a;
	char ans[8192], big[2048];
	struct shmr_pid pid;
	int st, fd2;

	app_dir(&a);
	app_config(&a, "0", NULL);
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
	assert_int_equal(strcmp(ans + strlen(ans) - strlen("no router nope"),
				"no router nope"),
			 0);
	assert_int_equal(req(&a, "INSPECT nope json", ans, sizeof(ans)),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(req(&a, "ROUTES bad/name", ans, sizeof(ans)),
			 -SHMR_E_NAME);
	assert_int_equal(req(&a, "ATTACH 7", ans, sizeof(ans)),
			 -SHMR_E_VERSION);
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

	/* Still served after all that. */
	assert_int_equal(status_value(&a, "endpoints"), 3);
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
	assert_int_equal(status_value(&a, "endpoints"), 4);
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
	assert_int_equal(status_value(&a, "endpoints"), 5);
	close(fd2);
	for (int i = 0; i < 1000 && registered(&a, "other"); i++)
		sleep_ms(5);
	assert_false(registered(&a, "other"));
	assert_int_equal(status_value(&a, "endpoints"), 4);

	/* Leave a message in the endpoint's inbound lane, then close it. */
	{
		uint64_t junk[16] = { 0 };

		assert_int_equal(rte_ring_enqueue_burst_elem(
					 shmr_lane_at(a.base, 3, 0), junk, 128,
					 1, NULL),
				 1);
	}
	assert_int_equal(req(&a, "CLOSE 3 1", ans, sizeof(ans)), 0);
	assert_false(registered(&a, "client-1"));
	assert_int_equal(status_value(&a, "endpoints"), 3);
	assert_int_equal(atomic_load(&shmr_ep_at(a.base, 3)->state),
			 SHMR_EP_FREE);

	/* Once the (stand-in) dataplane has applied the version that
	 * dropped it, slot 3 comes back with the next generation and clean
	 * lanes. */
	{
		uint64_t v = (uint64_t)status_value(&a, "spec_version");

		for (int i = 0; i < 2000; i++) {
			if (atomic_load(&shmr_stats_of(a.base, 0)
						 ->table_version) >= v &&
			    atomic_load(&shmr_stats_of(a.base, 1)
						 ->table_version) >= v)
				break;
			sleep_ms(5);
		}
	}
	assert_int_equal(req(&a, "OPEN", ans, sizeof(ans)), 0);
	assert_string_equal(ans, "OK 3 2");
	assert_int_equal(shmr_ep_at(a.base, 3)->gen, 2);
	assert_int_equal(rte_ring_count(shmr_lane_at(a.base, 3, 0)), 0);
	assert_int_equal(req(&a, "CLOSE 3 1", ans, sizeof(ans)),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(req(&a, "CLOSE 3 2", ans, sizeof(ans)), 0);

	/* ROUTES and INSPECT. */
	assert_int_equal(req(&a, "ROUTES events", ans, sizeof(ans)), 0);
	assert_int_equal(strncmp(ans, "OK\na pid=1:1 os_pid=", 20), 0);
	assert_non_null(strstr(ans, "\nb pid=2:1 os_pid="));
	assert_non_null(strstr(ans, " state=running restarts=0 delivered=0 "
				    "queued=0\n"));
	assert_int_equal(req(&a, "INSPECT events", ans, sizeof(ans)), 0);
	assert_non_null(strstr(ans, "\nshmr:type type\n"));
	assert_non_null(strstr(ans, "\nshmr:routes_active 2\n"));
	assert_non_null(strstr(ans, "\nshmr:route:b:pid 2:1\n"));
	assert_int_equal(req(&a, "INSPECT events json", ans, sizeof(ans)), 0);
	assert_int_equal(strncmp(ans, "OK\n{", 4), 0);
	assert_non_null(strstr(ans, "\"shmr:routes_total\": \"2\""));

	/* STOP: answered, then everything goes, status 0. */
	{
		pid_t dp = read_pidfile(a.pidfile);

		assert_true(pid_alive(dp));
		assert_int_equal(req(&a, "STOP", ans, sizeof(ans)), 0);
		st = app_wait(&a);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		assert_false(pid_alive(dp));
		assert_int_equal(access(a.sock, F_OK), -1);
	}
	app_stop(&a);
}

static void peer_credentials_checked(void **state)
{
	struct app a;
	int st;
	pid_t pid;

	app_dir(&a);
	app_config(&a, "", NULL);
	assert_true(app_start(&a, (const char *[]){ "--quiet", NULL }, &st));
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
	app_stop(&a);
}

static void one_control_per_socket(void **state)
{
	struct app a, b;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int st, fd;
	char log[4096];
	FILE *f;
	size_t n;

	/* A stale socket file (nobody listening) is replaced. */
	app_dir(&a);
	app_config(&a, "", NULL);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	strcpy(sa.sun_path, a.sock);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_true(app_start(&a, (const char *[]){ "--quiet", NULL }, &st));

	/* A live one is not. */
	b = a;
	snprintf(b.log, sizeof(b.log), "%s/second.log", a.dir);
	snprintf(b.pidfile, sizeof(b.pidfile), "%s/dp2.pid", a.dir);
	assert_false(app_start(&b, NULL, &st));
	assert_int_equal(WEXITSTATUS(st), 1);
	f = fopen(b.log, "r");
	n = fread(log, 1, sizeof(log) - 1, f);
	log[n] = '\0';
	fclose(f);
	assert_non_null(strstr(log, "already served"));
	assert_int_equal(access(b.pidfile, F_OK), -1); /* spawned nothing */

	/* The first one is untouched. */
	app_connect(&a);
	assert_int_equal(status_value(&a, "routers"), 1);
	/* SIGTERM is a clean stop too. */
	kill(a.pid, SIGTERM);
	st = app_wait(&a);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	app_stop(&a);
}

static void restart_repairs_and_keeps_the_inbox(void **state)
{
	struct app a;
	struct route_line before, after;
	uint8_t slot[8 * 128] __attribute__((aligned(8)));
	struct shmr_msg *m = (struct shmr_msg *)slot;
	struct rte_ring *in, *out;
	uint32_t nlc;
	unsigned avail;
	int st;
	pid_t dp, dp2;

	app_dir(&a);
	app_config(&a, "", NULL);
	assert_true(app_start(&a, (const char *[]){ "--quiet", NULL }, &st));
	app_connect(&a);
	wait_registered(&a, "worker-a");
	assert_int_equal(route_info(&a, "a", &before), 0);
	assert_string_equal(before.state, "running");
	nlc = shmr_hdr(a.base)->nlcores;

	/* Five messages for route a on lcore 1's lane (we play the
	 * dataplane); its worker "peeks" three and dies before releasing
	 * them (we play its receive). */
	in = shmr_lane_at(a.base, before.slot, 1);
	for (uint32_t i = 0; i < 5; i++) {
		memset(slot, 0, 128);
		m->kind = SHMR_KIND_SEND;
		m->key = i;
		assert_int_equal(rte_ring_enqueue_burst_elem(in, slot, 128, 1,
							     NULL),
				 1);
	}
	assert_int_equal(rte_ring_dequeue_burst_elem_start(in, slot, 128, 3,
							   &avail),
			 3);
	assert_int_equal(in->cons.head - in->cons.tail, 3);
	kill(before.os_pid, SIGKILL);

	for (int i = 0; i < 2000; i++) {
		if (route_info(&a, "a", &after) == 0 && after.restarts == 1 &&
		    strcmp(after.state, "running") == 0)
			break;
		sleep_ms(5);
	}
	assert_int_equal(after.restarts, 1);
	assert_int_not_equal(after.os_pid, before.os_pid);
	assert_true(pid_alive(after.os_pid));
	/* Same slot, same PID: the inbox belongs to the route. */
	assert_int_equal(after.slot, before.slot);
	assert_int_equal(after.gen, before.gen);
	/* The unreleased burst was handed back, flagged; nothing lost. */
	assert_int_equal(in->cons.head, in->cons.tail);
	assert_int_equal(rte_ring_count(in), 5);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(rte_ring_dequeue_burst_elem(in, slot, 128, 1,
							     NULL),
				 1);
		assert_int_equal(m->key, i);
		assert_int_equal(!!(m->flags & SHMR_F_REDELIVERED), i < 3);
	}
	/* The replacement could register the dead worker's name again. */
	wait_registered(&a, "worker-a");

	/* The dataplane dies while it has peeked two slots of route b's
	 * outbound lane (we play route b's worker sending, and the
	 * dataplane's receive). */
	assert_int_equal(route_info(&a, "b", &before), 0);
	out = shmr_lane_at(a.base, before.slot, SHMR_LANE_OUT(nlc));
	for (uint32_t i = 0; i < 2; i++) {
		memset(slot, 0, 128);
		m->key = 100 + i;
		assert_int_equal(rte_ring_enqueue_burst_elem(out, slot, 128, 1,
							     NULL),
				 1);
	}
	assert_int_equal(rte_ring_dequeue_burst_elem_start(out, slot, 128, 2,
							   &avail),
			 2);
	dp = read_pidfile(a.pidfile);
	assert_int_equal(status_value(&a, "dataplane_pid"), dp);
	assert_int_equal(status_value(&a, "dataplane_starts"), 1);
	unlink(a.pidfile);
	kill(dp, SIGKILL);
	for (int i = 0; i < 2000 && status_value(&a, "dataplane_starts") < 2;
	     i++)
		sleep_ms(5);
	assert_int_equal(status_value(&a, "dataplane_starts"), 2);
	dp2 = (pid_t)status_value(&a, "dataplane_pid");
	assert_true(dp2 > 0 && dp2 != dp);
	assert_true(pid_alive(dp2));
	assert_int_equal(out->cons.head, out->cons.tail);
	assert_int_equal(rte_ring_count(out), 2);
	assert_int_equal(rte_ring_dequeue_burst_elem(out, slot, 128, 1, NULL),
			 1);
	assert_true(m->flags & SHMR_F_REDELIVERED);

	/* Restarted routes are still counted, and the stop is clean. */
	{
		char ans[4096];

		assert_int_equal(req(&a, "INSPECT events", ans, sizeof(ans)),
				 0);
		assert_non_null(strstr(ans, "\nshmr:restarts 1\n"));
	}
	kill(a.pid, SIGTERM);
	st = app_wait(&a);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_false(pid_alive(dp2));
	assert_false(pid_alive(after.os_pid));
	app_stop(&a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exit_status_2_on_bad_input),
		cmocka_unit_test(init_is_atomic),
		cmocka_unit_test(bad_requests_over_the_wire),
		cmocka_unit_test(peer_credentials_checked),
		cmocka_unit_test(one_control_per_socket),
		cmocka_unit_test(restart_repairs_and_keeps_the_inbox),
	};

	if (argc < 4) {
		fprintf(stderr, "usage: %s SHMR-CONTROL STUB-DP STUB-WORKER\n",
			argv[0]);
		return 2;
	}
	control_bin = argv[1];
	stub_dp_bin = argv[2];
	stub_worker_bin = argv[3];
	/* The tests talk to their own sockets only. */
	unsetenv("SHMR_RUN_DIR");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
