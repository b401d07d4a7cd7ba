/*
 * Adoption by a restarted control plane, against the real daemons: a
 * worker killed while no control plane runs is restarted at adoption with
 * its queue intact; a disable, a replace, a drain and a remove in flight
 * when the control plane is killed complete after adoption; a shmrctl
 * request caught by the kill gets an error (never a hang) and a retry
 * after the restart succeeds; client endpoints of a live process are
 * kept; an adopted dataplane that dies is restarted; when both daemons
 * died the next start is a new domain; and nothing is left running
 * afterwards.  (The ten
 * kills under load are tests/stress/test_adopt_loop.c.)
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "adopt_app.h"
#include "shmr_test_app.h"

#define N 500u /* fits a lane (1024) */

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	unsigned char *rec;
	char recpath[300];
};

static struct ctx *start_types(const char *tag, const char *types,
			       const char *routes)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[2048];

	assert_non_null(c);
	c->rec = adopt_rec_file(c->recpath, sizeof(c->recpath), tag, 0, N);
	snprintf(conf, sizeof(conf),
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"w\"; }%s );\n"
		 "  routes = (\n"
		 "    { name = \"w\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\"]; }%s );\n"
		 "} );\n",
		 types, c->recpath, routes);
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	return c;
}

static struct ctx *start(const char *tag, const char *routes)
{
	return start_types(tag, "", routes);
}

static void stop(struct ctx *c)
{
	long long dp = adopt_status(&c->cl.app, "dataplane_pid");

	/* Nothing left running (the harness counts what it had to kill). */
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	assert_false(dp > 0 && shmr_test_pid_alive((pid_t)dp));
	munmap(c->rec, 2 * N);
	unlink(c->recpath);
	free(c);
}

static int got(struct ctx *c, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++)
		if (!c->rec[k])
			return 0;
	return 1;
}

static int first_got(void *arg)
{
	return got(arg, 0, 1);
}

static int all_got(void *arg)
{
	return got(arg, 0, N);
}

static void send_keys(struct ctx *c, uint64_t from, uint64_t to)
{
	for (uint64_t k = from; k < to; k++) {
		int rc;

		while ((rc = shmr_send(c->cl.ep, c->router, 1, k, &k,
				       sizeof(k))) == -EAGAIN)
			;
		assert_int_equal(rc, 0);
	}
}

static long long os_pid_of(struct ctx *c, const char *route, char *state,
			   size_t cap)
{
	long long pid = -1, restarts;

	if (adopt_route(&c->cl.app, "events", route, &pid, &restarts, state,
			cap) < 0)
		return -1;
	return pid;
}

/* A worker killed while no control plane runs: its inbox keeps queueing
 * (the dataplane forwards alone), and at adoption the death is found, the
 * lanes repaired and the worker restarted into its slot, which finds the
 * queue. */
/* Route @p route's sojourn count, as ROUTES shows it; -1 if not found. */
static long long sojourn_count(struct ctx *c, const char *route)
{
	char ans[SHMR_PROTO_MAX], *line, *save = NULL;
	size_t n = strlen(route);

	if (shmr_test_ctl(&c->cl.app, "ROUTES events", ans, sizeof(ans)) < 0)
		return -1;
	for (line = strtok_r(ans, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, "sojourn_count=");

		if (strncmp(line, route, n) == 0 && line[n] == ' ' && p)
			return strtoll(p + 14, NULL, 10);
	}
	return -1;
}

static void test_worker_killed_while_away(void **state)
{
	struct ctx *c = start("adoptaway", "");
	long long w, dp = adopt_status(&c->cl.app, "dataplane_pid"), pid,
		     restarts;
	(void)state;

	send_keys(c, 0, 1);
	assert_true(shmr_test_wait(first_got, c, 10000));
	w = os_pid_of(c, "w", NULL, 0);
	assert_true(w > 0);
	adopt_kill_control(&c->cl.app);
	assert_int_equal(kill((pid_t)w, SIGKILL), 0);
	/* Queued while nobody consumes and nobody manages: no error. */
	send_keys(c, 1, N);
	assert_false(got(c, 1, N));
	(void)adopt_restart(&c->cl.app);
	assert_true(shmr_test_wait(all_got, c, 30000));
	assert_int_equal(adopt_route(&c->cl.app, "events", "w", &pid,
				     &restarts, NULL, 0),
			 0);
	assert_true(pid > 0 && pid != w);
	assert_int_equal(restarts, 1);
	assert_int_equal(adopt_status(&c->cl.app, "dataplane_pid"), dp);
	/* The replacement attached after the adoption and still measures
	 * how long each message waited: all N are counted (the first by
	 * the worker before): the adoption kept the TSC's rate every
	 * process stamps by. */
	assert_int_equal(sojourn_count(c, "w"), N);
	stop(c);
}

struct settled {
	struct ctx *c;
	long long old_r;
};

static int pending_done(void *arg)
{
	struct settled *s = arg;
	char st_d[32] = "", st_r[32] = "";
	long long r;

	(void)os_pid_of(s->c, "d", st_d, sizeof(st_d));
	r = os_pid_of(s->c, "r", st_r, sizeof(st_r));
	return strcmp(st_d, "disabled") == 0 &&
	       strcmp(st_r, "running") == 0 && r > 0 && r != s->old_r;
}

static int registered(void *arg)
{
	struct ctx *c = arg;
	struct shmr_pid p;

	return shmr_lookup(c->cl.d, "dname", &p) == 0 &&
	       shmr_lookup(c->cl.d, "rname", &p) == 0;
}

/* A disable and a replace in flight when the control plane is killed
 * (their workers slow to stop: still pending) complete after adoption. */
static void test_pending_operations_complete(void **state)
{
	struct ctx *c = start(
		"adoptpend",
		",\n    { name = \"d\"; program = \"shmr-test-worker\";\n"
		"      args = [\"--ignore-term-ms\", \"800\", \"--register\",\n"
		"              \"dname\"]; },\n"
		"    { name = \"r\"; program = \"shmr-test-worker\";\n"
		"      args = [\"--ignore-term-ms\", \"800\", \"--register\",\n"
		"              \"rname\"]; }");
	char ans[SHMR_PROTO_MAX], st_d[32] = "", st_r[32] = "", cmd[64];
	struct settled s = { c, 0 };
	long long newr;
	FILE *f;
	(void)state;

	s.old_r = os_pid_of(c, "r", NULL, 0);
	assert_true(s.old_r > 0);
	/* Both workers are attached (their SIGTERM handling is set up):
	 * each has registered its name. */
	assert_true(shmr_test_wait(registered, c, 10000));
	assert_int_equal(shmr_test_ctl(&c->cl.app, "DISABLE events d", ans,
				       sizeof(ans)),
			 0);
	assert_int_equal(shmr_test_ctl(&c->cl.app,
				       "REPLACE events r shmr-test-worker "
				       "--expect-type 7",
				       ans, sizeof(ans)),
			 0);
	(void)os_pid_of(c, "d", st_d, sizeof(st_d));
	(void)os_pid_of(c, "r", st_r, sizeof(st_r));
	assert_string_equal(st_d, "pending_disable");
	assert_string_equal(st_r, "pending_replace");
	adopt_kill_control(&c->cl.app);
	(void)adopt_restart(&c->cl.app);
	assert_true(shmr_test_wait(pending_done, &s, 30000));
	/* The replacement runs the new spec. */
	newr = os_pid_of(c, "r", NULL, 0);
	snprintf(cmd, sizeof(cmd), "/proc/%lld/cmdline", newr);
	f = fopen(cmd, "r");
	assert_non_null(f);
	{
		char buf[256] = "";
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);

		for (size_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		assert_non_null(strstr(buf, "--expect-type 7"));
	}
	fclose(f);
	stop(c);
}

/* shmrctl with a request in flight when the control plane is killed: it
 * ends with an error (no hang), and the same request made again once the
 * control plane is back succeeds. */
static void test_shmrctl_racing_the_kill(void **state)
{
	struct ctx *c = start("adoptctl", "");
	char out[1024];
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock, "disable",
			 "events", "w", NULL };
	int pfd[2], st;
	pid_t ctl;
	ssize_t n;
	(void)state;

	/* The worker is past its attach. */
	send_keys(c, 0, 1);
	assert_true(shmr_test_wait(first_got, c, 10000));
	/* Stopped, the control plane accepts (the backlog) and never
	 * answers: the request is surely in flight when it dies. */
	assert_int_equal(kill(c->cl.app.control, SIGSTOP), 0);
	assert_int_equal(pipe(pfd), 0);
	ctl = fork();
	assert_true(ctl >= 0);
	if (ctl == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		/* Fail fast: no reconnect window for this request. */
		setenv("SHMR_RECONNECT_MS", "0", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	usleep(300000);
	adopt_kill_control(&c->cl.app);
	/* Liveness bound only: it must end on its own. */
	for (int i = 0; i < 300 && waitpid(ctl, &st, WNOHANG) == 0; i++)
		usleep(50000);
	if (waitpid(ctl, &st, WNOHANG) == 0) {
		kill(ctl, SIGKILL);
		fail_msg("shmrctl hung on a dead control plane");
	}
	n = read(pfd[0], out, sizeof(out) - 1);
	close(pfd[0]);
	out[n > 0 ? n : 0] = '\0';
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	assert_true(n > 0); /* one line says why */
	(void)adopt_restart(&c->cl.app);
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	stop(c);
}

/* The client's endpoint survives the adoption (its owner lives), and is
 * freed when the owner detaches after binding to the new connection. */
static void test_client_endpoint_kept(void **state)
{
	struct ctx *c = start("adoptcli", "");
	long long before = adopt_status(&c->cl.app, "endpoints");
	(void)state;

	adopt_kill_control(&c->cl.app);
	(void)adopt_restart(&c->cl.app);
	assert_int_equal(adopt_status(&c->cl.app, "endpoints"), before);
	/* One control socket, the same one. */
	assert_int_equal(access(c->cl.app.sock, F_OK), 0);
	/* The endpoint still works both ways through the dataplane. */
	send_keys(c, 0, 1);
	assert_true(shmr_test_wait(first_got, c, 10000));
	stop(c);
}

static int drained_and_removed(void *arg)
{
	struct ctx *c = arg;
	char st[32] = "";

	(void)os_pid_of(c, "g", st, sizeof(st));
	return strcmp(st, "disabled") == 0 && os_pid_of(c, "x", NULL, 0) < 0;
}

static int names_up(void *arg)
{
	struct ctx *c = arg;
	struct shmr_pid p;

	return shmr_lookup(c->cl.d, "gname", &p) == 0 &&
	       shmr_lookup(c->cl.d, "xname", &p) == 0;
}

/* A drain waiting for its inbox and a remove waiting for a slow worker,
 * both in flight when the control plane is killed: the adopted one
 * watches the inbox again and completes both. */
static void test_drain_and_remove_resumed(void **state)
{
	char gate[300], st[32] = "", ans[SHMR_PROTO_MAX], routes[1024];
	struct ctx *c;
	int fd;
	(void)state;

	snprintf(gate, sizeof(gate), "/tmp/shmr-gate-adopt-%d", (int)getpid());
	unlink(gate);
	assert_int_equal(mkfifo(gate, 0600), 0);
	snprintf(routes, sizeof(routes),
		 ",\n    { name = \"g\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--gate\", \"%s\", \"--gate-count\", \"1\",\n"
		 "              \"--register\", \"gname\"]; },\n"
		 "    { name = \"x\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--ignore-term-ms\", \"800\",\n"
		 "              \"--register\", \"xname\"]; }",
		 gate);
	c = start_types("adoptdrain", ", { type = 2; route = \"g\"; }",
			routes);
	assert_true(shmr_test_wait(names_up, c, 10000));
	/* Five messages for g: its worker holds the first burst at the
	 * gate, so its inbox is not empty. */
	for (uint64_t k = 0; k < 5; k++)
		assert_int_equal(shmr_send(c->cl.ep, c->router, 2, k, &k,
					   sizeof(k)),
				 0);
	/* At once: libshmr sends the DRAIN only once the dataplane took the
	 * five from our outbound lane (shmr.h, "Order"). */
	assert_int_equal(shmr_route_drain(c->cl.d, "events", "g"), 0);
	assert_int_equal(shmr_test_ctl(&c->cl.app, "REMOVE events x", ans,
				       sizeof(ans)),
			 0);
	adopt_kill_control(&c->cl.app);
	(void)adopt_restart(&c->cl.app);
	(void)os_pid_of(c, "g", st, sizeof(st));
	assert_string_equal(st, "pending_disable"); /* still draining */
	/* Open the gate: g finishes its inbox, then the drain completes. */
	fd = open(gate, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	assert_true(shmr_test_wait(drained_and_removed, c, 30000));
	unlink(gate);
	stop(c);
}

static int dataplane_back(void *arg)
{
	long long *old = arg;
	struct shmr_test_app *app = (struct shmr_test_app *)(intptr_t)old[1];

	return adopt_status(app, "dataplane_starts") == 2 &&
	       adopt_status(app, "dataplane_pid") > 0 &&
	       adopt_status(app, "dataplane_pid") != old[0];
}

/* The adopted dataplane dies: the adopted control plane sees it through
 * its pidfd (not its child) and starts a new one, which finds what was
 * queued. */
static void test_adopted_dataplane_restarted(void **state)
{
	struct ctx *c = start("adoptdp", "");
	long long old[2] = { adopt_status(&c->cl.app, "dataplane_pid"),
			     (long long)(intptr_t)&c->cl.app };
	(void)state;

	assert_true(old[0] > 0);
	adopt_kill_control(&c->cl.app);
	(void)adopt_restart(&c->cl.app);
	assert_int_equal(adopt_status(&c->cl.app, "dataplane_pid"), old[0]);
	assert_int_equal(kill((pid_t)old[0], SIGKILL), 0);
	assert_true(shmr_test_wait(dataplane_back, old, 30000));
	send_keys(c, 0, N);
	assert_true(shmr_test_wait(all_got, c, 30000));
	stop(c);
}

/* Both daemons die: the state file names a dead dataplane, the next start
 * says so and makes a new domain, stopping the old domain's worker (it
 * would run unmanaged); one socket, one dataplane. */
/* Router events' forwarded count, as INSPECT gives it (-1: no answer). */
static long long forwarded(struct ctx *c)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&c->cl.app, "INSPECT events", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, "shmr:forwarded");
}

/* A control plane started with another configuration (a wrong -c) finds
 * the running domain and leaves it alone: it exits 2 with one line, the
 * dataplane and the worker go on (messages sent meanwhile are forwarded),
 * and a control plane with the right configuration then adopts it. */
static void test_other_configuration_left_running(void **state)
{
	struct ctx *c = start("adoptother", "");
	long long dp = adopt_status(&c->cl.app, "dataplane_pid"), w, fwd;
	char text[1024], out[4096];
	const char *other;
	(void)state;

	send_keys(c, 0, 1);
	assert_true(shmr_test_wait(first_got, c, 10000));
	w = os_pid_of(c, "w", NULL, 0);
	assert_true(dp > 0 && w > 0);
	fwd = forwarded(c);
	assert_true(fwd >= 1);
	adopt_kill_control(&c->cl.app);
	snprintf(text, sizeof(text),
		 "domain = \"%s\";\n"
		 "routers = ( { name = \"other\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"a\"; } );\n"
		 "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; } );\n"
		 "} );\n",
		 c->cl.app.domain);
	other = shmr_test_write_conf(c->cl.app.dir, "other.conf", text);
	assert_int_equal(shmr_test_run_control(other, c->cl.app.dir, NULL, out,
					       sizeof(out)),
			 2);
	assert_non_null(strstr(out, "is running with another configuration: "
				    "left running"));
	assert_true(shmr_test_pid_alive((pid_t)dp));
	assert_true(shmr_test_pid_alive((pid_t)w));
	/* Still forwarding, with no control plane at all. */
	send_keys(c, 1, N);
	assert_true(shmr_test_wait(all_got, c, 10000));
	(void)adopt_restart(&c->cl.app);
	assert_int_equal(adopt_status(&c->cl.app, "dataplane_pid"), dp);
	assert_int_equal(os_pid_of(c, "w", NULL, 0), w);
	/* The counters are the domain's: kept, and they counted what was
	 * forwarded while no control plane ran. */
	assert_true(forwarded(c) >= fwd + (long long)(N - 1));
	stop(c);
}

static void test_both_dead_new_domain(void **state)
{
	struct ctx *c = start("adoptboth", "");
	long long dp = adopt_status(&c->cl.app, "dataplane_pid"), w, now;
	(void)state;

	send_keys(c, 0, 1);
	assert_true(shmr_test_wait(first_got, c, 10000));
	w = os_pid_of(c, "w", NULL, 0);
	assert_true(dp > 0 && w > 0);
	adopt_kill_control(&c->cl.app);
	assert_int_equal(kill((pid_t)dp, SIGKILL), 0);
	/* Reaped by us (the subreaper): gone, not a zombie. */
	while (shmr_test_pid_alive((pid_t)dp))
		usleep(1000);
	(void)adopt_restart(&c->cl.app);
	now = adopt_status(&c->cl.app, "dataplane_pid");
	assert_true(now > 0 && now != dp);
	assert_int_equal(adopt_status(&c->cl.app, "dataplane_starts"), 1);
	/* The old domain's worker was stopped; the route has a new one. */
	for (int i = 0; i < 1000 && shmr_test_pid_alive((pid_t)w); i++)
		usleep(1000);
	assert_false(shmr_test_pid_alive((pid_t)w));
	assert_true(os_pid_of(c, "w", NULL, 0) != w);
	stop(c);
}

/* A worker that never attached (a program that never calls
 * shmr_attach_env()) is `starting` before the control plane's death and
 * still `starting` after the adoption, not `running`; an attached one
 * stays `running`. */
static void test_unattached_worker_still_starting(void **state)
{
	struct ctx *c = start("adoptstart",
			      ",\n    { name = \"s\"; program = \"sleep\";\n"
			      "      args = [\"1000\"]; }");
	char st[32];
	long long s0;
	(void)state;

	send_keys(c, 0, 1);
	assert_true(shmr_test_wait(first_got, c, 10000));
	s0 = os_pid_of(c, "s", st, sizeof(st));
	assert_true(s0 > 0);
	assert_string_equal(st, "starting");
	adopt_kill_control(&c->cl.app);
	(void)adopt_restart(&c->cl.app);
	assert_int_equal(os_pid_of(c, "s", st, sizeof(st)), s0);
	assert_string_equal(st, "starting");
	assert_true(os_pid_of(c, "w", st, sizeof(st)) > 0);
	assert_string_equal(st, "running");
	stop(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_killed_while_away),
		cmocka_unit_test(test_pending_operations_complete),
		cmocka_unit_test(test_drain_and_remove_resumed),
		cmocka_unit_test(test_shmrctl_racing_the_kill),
		cmocka_unit_test(test_client_endpoint_kept),
		cmocka_unit_test(test_adopted_dataplane_restarted),
		cmocka_unit_test(test_other_configuration_left_running),
		cmocka_unit_test(test_both_dead_new_domain),
		cmocka_unit_test(test_unattached_worker_still_starting),
	};
	return cmocka_run_group_tests_name("adopt", tests, NULL, NULL);
}
