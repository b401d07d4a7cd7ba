/*
 * The route lifecycle against the real appliance: libshmr's shmr_route_*
 * and shmrctl's add/remove/disable/enable/replace/respawn/route, with real
 * workers and the dataplane routing calls by type to the route they name.
 *
 * Router "events" (type behaviour): type 1 -> "w" (not configured: added
 * by the test), type 2 -> "base" (configured).  A routed call is retried
 * until the dataplane has applied the spec the change published (bounded),
 * never after a fixed sleep.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define WAIT_MS 20000
#define SLOW_STOP_MS "3000" /* the slow worker's --ignore-term-ms */

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	/* for the predicates */
	int want_rc;
	const char *want_state;
	long long not_pid;
	struct shmr_test_stats st;
};

static struct ctx *start_with(const char *tag, unsigned grace_ms,
			      const char *extra)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[1024];

	assert_non_null(c);
	snprintf(conf, sizeof(conf),
		 "%s\nstop_grace_ms = %u;\n"
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"w\"; },\n"
		 "            { type = 2; route = \"base\"; } );\n"
		 "  routes = ( { name = \"base\";\n"
		 "               program = \"shmr-test-worker\"; } );\n"
		 "} );\n", extra, grace_ms);
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	return c;
}

static struct ctx *start_grace(const char *tag, unsigned grace_ms)
{
	return start_with(tag, grace_ms, "");
}

static struct ctx *start(const char *tag)
{
	return start_grace(tag, 30000);
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	free(c);
}

/* One call of @p type through the router: the reply's size or the error. */
static int call(struct ctx *c, uint32_t type)
{
	memset(&c->st, 0, sizeof(c->st));
	return shmr_call(c->cl.ep, c->router, type, 0, "x", 1, &c->st,
			 sizeof(c->st), 10000);
}

static int call_gives(void *arg)
{
	struct ctx *c = arg;

	return call(c, 1) == c->want_rc;
}

/* Route w's line from ROUTE: its os_pid and state; -1 when it has none. */
static long long route_info(struct ctx *c, char *state, size_t cap)
{
	char ans[SHMR_PROTO_MAX];
	const char *p;
	int rc = shmr_test_ctl(&c->cl.app, "ROUTE events w", ans, sizeof(ans));

	if (state)
		snprintf(state, cap, "%s", rc < 0 ? "none" : "?");
	if (rc < 0)
		return -1;
	assert_int_equal(strncmp(ans, "OK\nw pid=", 9), 0); /* name stays */
	p = strstr(ans, " state=");
	if (state && p)
		sscanf(p + 7, "%31s", state);
	p = strstr(ans, " os_pid=");
	return p ? atoll(p + 8) : -1;
}

static int route_in_state(void *arg)
{
	struct ctx *c = arg;
	char state[32];
	long long pid = route_info(c, state, sizeof(state));

	return strcmp(state, c->want_state) == 0 && pid != c->not_pid;
}

static void wait_state(struct ctx *c, const char *state, long long not_pid)
{
	c->want_state = state;
	c->not_pid = not_pid;
	assert_true(shmr_test_wait(route_in_state, c, WAIT_MS));
}

static void wait_call(struct ctx *c, int rc)
{
	c->want_rc = rc;
	assert_true(shmr_test_wait(call_gives, c, WAIT_MS));
}

/* add, route to it, disable, enable, replace, remove: each observable as
 * a routed call's outcome and in ROUTE. */
static void test_route_lifecycle_through_libshmr(void **state)
{
	struct ctx *c = start("life");
	const char *v2[] = { "--expect-type", "1" };
	long long pid1, pid2, pid3;
	(void)state;

	/* Not added yet: no owned route, no registry name. */
	assert_int_equal(call(c, 1), -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(route_info(c, NULL, 0), -1);

	assert_int_equal(shmr_route_add(c->cl.d, "events", "w",
					"shmr-test-worker", NULL, 0, NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	assert_string_equal(c->st.tag, "w");
	pid1 = route_info(c, NULL, 0);
	assert_true(pid1 > 0);
	assert_int_equal(shmr_route_add(c->cl.d, "events", "w",
					"shmr-test-worker", NULL, 0, NULL),
			 -SHMR_E_ROUTE_DUPLICATE);
	assert_int_equal(shmr_route_respawn(c->cl.d, "events", "w"),
			 -SHMR_E_ROUTE_RUNNING);

	/* Disable: the worker stops; routed calls fail with DISABLED. */
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "w"), 0);
	wait_state(c, "disabled", -2);
	assert_int_equal(route_info(c, NULL, 0), 0);
	wait_call(c, -SHMR_E_DISABLED);
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "w"), 0);
	assert_int_equal(shmr_route_respawn(c->cl.d, "events", "w"),
			 -SHMR_E_DISABLED);

	/* Enable: a fresh worker, and the route works again. */
	assert_int_equal(shmr_route_enable(c->cl.d, "events", "w"), 0);
	wait_call(c, (int)sizeof(c->st));
	pid2 = route_info(c, NULL, 0);
	assert_true(pid2 > 0);
	assert_true(pid2 != pid1);

	/* Replace with other args: a new process, the same route. */
	assert_int_equal(shmr_route_replace(c->cl.d, "events", "w",
					    "shmr-test-worker", v2, 2),
			 0);
	wait_state(c, "running", pid2);
	pid3 = route_info(c, NULL, 0);
	assert_true(pid3 > 0);
	wait_call(c, (int)sizeof(c->st));
	assert_string_equal(c->st.tag, "w");

	/* Remove: the name no longer resolves to an owned route. */
	assert_int_equal(shmr_route_remove(c->cl.d, "events", "w"), 0);
	wait_state(c, "none", -2);
	wait_call(c, -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(shmr_route_remove(c->cl.d, "events", "w"), 0);
	assert_int_equal(shmr_route_enable(c->cl.d, "events", "w"),
			 -SHMR_E_NO_ROUTE);

	/* The configured route was never touched. */
	assert_int_equal(call(c, 2), (int)sizeof(c->st));
	assert_string_equal(c->st.tag, "base");
	stop(c);
}

/* A worker slow to stop keeps its route pending: the old pid shows, every
 * mutator is BUSY, routed calls fail as the pending state says. */
static void test_pending_route_is_busy(void **state)
{
	struct ctx *c = start("busy");
	const char *slow[] = { "--ignore-term-ms", SLOW_STOP_MS };
	char st[32];
	long long pid;
	(void)state;

	assert_int_equal(shmr_route_add(c->cl.d, "events", "w",
					"shmr-test-worker", slow, 2, NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	pid = route_info(c, NULL, 0);
	assert_true(pid > 0);

	assert_int_equal(shmr_route_disable(c->cl.d, "events", "w"), 0);
	assert_int_equal(route_info(c, st, sizeof(st)), pid);
	assert_string_equal(st, "pending_disable");
	{
		/* inspect: pending while it waits, not yet disabled */
		char ans[SHMR_PROTO_MAX];

		assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT events",
					       ans, sizeof(ans)),
				 0);
		assert_non_null(strstr(ans, "shmr:route:w:pending disable\n"));
		assert_non_null(strstr(ans, "shmr:route:w:disabled false\n"));
		assert_non_null(strstr(ans, "shmr:routes_pending 1\n"));
	}
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "w"),
			 -SHMR_E_BUSY);
	assert_int_equal(shmr_route_enable(c->cl.d, "events", "w"),
			 -SHMR_E_BUSY);
	assert_int_equal(shmr_route_respawn(c->cl.d, "events", "w"),
			 -SHMR_E_BUSY);
	assert_int_equal(shmr_route_remove(c->cl.d, "events", "w"),
			 -SHMR_E_BUSY);
	assert_int_equal(shmr_route_replace(c->cl.d, "events", "w",
					    "shmr-test-worker", NULL, 0),
			 -SHMR_E_BUSY);
	wait_call(c, -SHMR_E_DISABLED);
	wait_state(c, "disabled", -2);

	/* Enable starts the slow worker again; remove is pending too. */
	assert_int_equal(shmr_route_enable(c->cl.d, "events", "w"), 0);
	wait_call(c, (int)sizeof(c->st));
	pid = route_info(c, NULL, 0);
	assert_int_equal(shmr_route_remove(c->cl.d, "events", "w"), 0);
	assert_int_equal(route_info(c, st, sizeof(st)), pid);
	assert_string_equal(st, "pending_remove");
	assert_int_equal(shmr_route_respawn(c->cl.d, "events", "w"),
			 -SHMR_E_BUSY);
	wait_state(c, "none", -2);
	wait_call(c, -SHMR_E_PROCESS_UNKNOWN);
	stop(c);
}

/* A worker that ignores SIGTERM is killed after stop_grace_ms, and the
 * pending operation completes. */
static void test_pending_completes_after_kill_at_grace(void **state)
{
	struct ctx *c = start_grace("kill", 200);
	const char *deaf[] = { "--ignore-term-ms", "600000" };
	long long pid;
	(void)state;

	assert_int_equal(shmr_route_add(c->cl.d, "events", "w",
					"shmr-test-worker", deaf, 2, NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	pid = route_info(c, NULL, 0);
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "w"), 0);
	wait_state(c, "disabled", -2);
	assert_true(kill((pid_t)pid, 0) < 0); /* gone, and reaped */
	stop(c);
}

/* A wrapper for the test worker at @p path, executable or not. */
static void wrapper(const char *path, int executable)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("#!/bin/sh\nexec shmr-test-worker \"$@\"\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, executable ? 0755 : 0644), 0);
}

static long long route_restarts(struct ctx *c)
{
	char ans[SHMR_PROTO_MAX];
	const char *p;

	assert_int_equal(shmr_test_ctl(&c->cl.app, "ROUTE events w", ans,
				       sizeof(ans)),
			 0);
	p = strstr(ans, " restarts=");
	assert_non_null(p);
	return atoll(p + 10);
}

/* A worker dies and its restart fails (the program cannot be run): the
 * slot stays empty and nothing retries it (no backoff configured); the
 * router keeps running.  The next message routed there retries the start
 * (lazy restart, counted); it is answered at once with the error of the
 * start that failed before it (test_restart_fail.c), and the messages
 * after it are delivered to the new worker. */
static void test_lazy_restart_on_next_message(void **state)
{
	char prog[600], st[32], extra[700];
	struct ctx *c;
	long long pid;
	int rc;
	(void)state;

	/* Outside the run directory, so that the configuration's programs
	 * can name it before the appliance starts. */
	snprintf(prog, sizeof(prog), "/tmp/shmr-test-lazy-%d.sh", (int)getpid());
	wrapper(prog, 1);
	snprintf(extra, sizeof(extra), "programs = ( \"%s\" );", prog);
	c = start_with("lazy", 30000, extra);
	assert_int_equal(shmr_route_add(c->cl.d, "events", "w", prog, NULL, 0,
					NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	pid = route_info(c, NULL, 0);
	assert_true(pid > 0);

	wrapper(prog, 0); /* the restart will fail: not executable */
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	wait_state(c, "dead", -2);
	assert_int_equal(route_info(c, NULL, 0), 0);
	assert_int_equal(route_restarts(c), 0);
	/* The router still routes elsewhere. */
	assert_int_equal(call(c, 2), (int)sizeof(c->st));

	/* Fixed; nothing has retried it, and the next message does. */
	wrapper(prog, 1);
	assert_int_equal(route_info(c, st, sizeof(st)), 0);
	assert_string_equal(st, "dead");
	/* -EACCES once the dataplane has the failed start (it has, but for
	 * the gap between the exit and the spec it publishes: then the call
	 * queues, its ask starts the worker, and it is delivered). */
	rc = call(c, 1);
	assert_true(rc == -EACCES || rc == (int)sizeof(c->st));
	c->want_rc = (int)sizeof(c->st);
	assert_true(shmr_test_wait(call_gives, c, WAIT_MS));
	assert_string_equal(c->st.tag, "w");
	assert_true(route_info(c, NULL, 0) > 0);
	assert_int_equal(route_restarts(c), 1);
	stop(c);
	unlink(prog);
}

static int restarted_twice(void *arg)
{
	return route_restarts(arg) >= 2;
}

/* restart_backoff_ms: a program that exits at once is restarted (the
 * liveness bound: twice within the wait), but spaced out: with 300 ms
 * doubling, far fewer than the hundreds a second it would get without a
 * backoff (the bound is generous: a slow machine only restarts less). */
static void test_restart_backoff_spaces_a_failing_program(void **state)
{
	struct ctx *c = start_with("backoff", 30000,
				   "restart_backoff_ms = 300;\n"
				   "programs = ( \"/bin/false\" );");
	long long before;
	(void)state;

	assert_int_equal(shmr_route_add(c->cl.d, "events", "w", "/bin/false",
					NULL, 0, NULL),
			 0);
	assert_true(shmr_test_wait(restarted_twice, c, WAIT_MS));
	before = route_restarts(c);
	usleep(1500 * 1000);
	assert_true(route_restarts(c) - before <= 10);
	/* Still managed: remove completes. */
	assert_int_equal(shmr_route_remove(c->cl.d, "events", "w"), 0);
	wait_state(c, "none", -2);
	stop(c);
}

#define RECN 128 /* keys a --record file counts */

/* A --record file of RECN keys in the app's dir, mapped. */
static unsigned char *record_file(struct ctx *c, const char *name,
				  char *path, size_t cap)
{
	unsigned char *m;
	int fd;

	snprintf(path, cap, "%s/%s", c->cl.app.dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * RECN), 0);
	m = mmap(NULL, 2 * RECN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);
	return m;
}

static unsigned char *new_rec;

static int new_program_got_them(void *arg)
{
	(void)arg;
	for (unsigned k = 110; k < 120; k++)
		if (__atomic_load_n(&new_rec[k], __ATOMIC_ACQUIRE) != 1)
			return 0;
	return 1;
}

/* replace --drain, the reference's strict draining: the old program
 * handles everything queued for it, the new one only what comes after,
 * never one message twice and never both at once. */
static void test_replace_drain_hands_over_cleanly(void **state)
{
	struct ctx *c = start("drain");
	char oldp[600], newp[600], out[4096];
	unsigned char *old_rec;
	const char *slow[4] = { "--record", oldp, "--spin-ns", "2000000" };
	(void)state;

	old_rec = record_file(c, "old.rec", oldp, sizeof(oldp));
	new_rec = record_file(c, "new.rec", newp, sizeof(newp));
	assert_int_equal(shmr_route_add(c->cl.d, "events", "w",
					"shmr-test-worker", slow, 4, NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	/* 100 messages at 2 ms each: a queue the old program works off. */
	for (uint64_t k = 1; k <= 100; k++)
		assert_int_equal(
			shmr_send(c->cl.ep, c->router, 1, k, "m", 1), 0);
	{
		char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock,
				 "replace", "--drain", "events", "w",
				 "shmr-test-worker", "--record", newp, NULL };

		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
		assert_string_equal(out, "drained, replaced and enabled w\n");
	}
	for (unsigned k = 1; k <= 100; k++) {
		assert_int_equal(old_rec[k], 1);
		assert_int_equal(new_rec[k], 0);
	}
	wait_state(c, "running", 0);
	/* The control plane's "running" can come before the dataplane has
	 * applied the spec that says so: wait until a routed call reaches
	 * the new program (key 0, which the checks below do not count). */
	wait_call(c, (int)sizeof(c->st));
	for (uint64_t k = 110; k < 120; k++)
		assert_int_equal(
			shmr_send(c->cl.ep, c->router, 1, k, "m", 1), 0);
	assert_true(shmr_test_wait(new_program_got_them, NULL, WAIT_MS));
	for (unsigned k = 110; k < 120; k++)
		assert_int_equal(old_rec[k], 0);
	munmap(old_rec, 2 * RECN);
	munmap(new_rec, 2 * RECN);
	stop(c);
}

/* Replace whose new program cannot start: the old worker exits, the route
 * waits with no worker (replace_wait, still pending "replace" in inspect)
 * and routed calls fail with SHMR_E_BUSY.  Another replace, with a program
 * that starts, completes it. */
static void test_replace_with_no_worker_is_busy(void **state)
{
	struct ctx *c = start_with("rwait", 30000,
				   "programs = ( \"/nonexistent/shmr-worker\" );");
	char ans[SHMR_PROTO_MAX];
	(void)state;

	assert_int_equal(shmr_route_add(c->cl.d, "events", "w",
					"shmr-test-worker", NULL, 0, NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	assert_int_equal(shmr_route_replace(c->cl.d, "events", "w",
					    "/nonexistent/shmr-worker", NULL,
					    0),
			 0);
	wait_state(c, "replace_wait", -2);
	assert_int_equal(route_info(c, NULL, 0), 0);
	wait_call(c, -SHMR_E_BUSY);
	assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT events", ans,
				       sizeof(ans)),
			 0);
	assert_non_null(strstr(ans, "shmr:route:w:pending replace\n"));
	assert_non_null(strstr(ans, "shmr:routes_pending 1\n"));

	assert_int_equal(shmr_route_replace(c->cl.d, "events", "w",
					    "shmr-test-worker", NULL, 0),
			 0);
	wait_call(c, (int)sizeof(c->st));
	wait_state(c, "running", 0);
	assert_int_equal(route_restarts(c), 0);
	stop(c);
}

/* shmrctl: the lifecycle commands, their errors and usage. */
static void test_shmrctl_lifecycle_commands(void **state)
{
	struct ctx *c = start("ctl");
	char *ctl = getenv("SHMRCTL");
	char out[8192], want[256];
	(void)state;

	{
		/* An empty socket path is a usage error, not "no domain". */
		char *argv[] = { ctl, "-s", "", "status", NULL };

		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 2);
		assert_non_null(strstr(out, "shmrctl: -s: an empty socket "
					    "path\n"));
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "add", "events",
				 "w", "shmr-test-worker", "--expect-type", "1",
				 "--cpus", "0", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	}
	wait_call(c, (int)sizeof(c->st));
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "route", "events",
				 "w", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
		/* A header row, then the route's (CPUS the eighth column,
		 * before the sojourn figures). */
		char cpus[16] = "";
		const char *row = strstr(out, "\nw ");

		assert_non_null(row);
		assert_non_null(strstr(out, " running "));
		assert_int_equal(sscanf(row + 1, "%*s %*s %*s %*s %*s %*s %*s "
					"%15s", cpus),
				 1);
		assert_string_equal(cpus, "0");
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "respawn", "events",
				 "w", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 1);
		snprintf(want, sizeof(want), "shmrctl: %s: route events/w\n",
			 shmr_strerror(-SHMR_E_ROUTE_RUNNING));
		assert_string_equal(out, want);
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "disable", "events",
				 "nope", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 1);
		snprintf(want, sizeof(want), "shmrctl: %s: route events/nope\n",
			 shmr_strerror(-SHMR_E_NO_ROUTE));
		assert_string_equal(out, want);
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "disable", "events",
				 "w", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	}
	wait_call(c, -SHMR_E_DISABLED);
	/* Calls fail from the moment the disable is pending; enable is
	 * accepted once the worker's exit completed it. */
	wait_state(c, "disabled", -2);
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "enable", "events",
				 "w", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	}
	wait_call(c, (int)sizeof(c->st));
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "replace", "events",
				 "w", "shmr-test-worker", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "remove", "events",
				 "w", NULL };

		/* Once the replacement runs, remove it. */
		c->want_state = "running";
		c->not_pid = -2;
		assert_true(shmr_test_wait(route_in_state, c, WAIT_MS));
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	}
	wait_state(c, "none", -2);
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "route", "events",
				 "w", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 1);
	}
	/* Usage errors: exit 2 with the usage line. */
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "add", "events",
				 "w", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 2);
		assert_non_null(strstr(out, "usage"));
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "disable", "events",
				 NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 2);
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "enable", "events",
				 "w", "extra", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 2);
	}
	{
		char *argv[] = { ctl, "-s", c->cl.app.sock, "add", "events",
				 "bad name", "x", NULL };
		assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 2);
	}
	stop(c);
}

/* Pid in file @p path (a script wrote it), or 0 while it has none. */
static pid_t pid_in(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

static int file_has_pid(void *arg)
{
	return pid_in(arg) > 0;
}

static int pid_gone(void *arg)
{
	return !shmr_test_pid_alive(*(pid_t *)arg);
}

/* A worker's children go with it: a shell-script worker starts a child
 * that ignores SIGTERM (so the group's SIGTERM alone would not do) and
 * writes its pid; remove, then the appliance's stop, leave neither
 * child running (the harness, a subreaper, would count a survivor). */
static void test_stop_and_remove_take_the_workers_group(void **state)
{
	char prog[128], f1[160], f2[160], conf[1024];
	struct shmr_test_app app;
	char ans[SHMR_PROTO_MAX];
	pid_t c1, c2;
	FILE *f;
	(void)state;

	snprintf(prog, sizeof(prog), "/tmp/shmr-test-pgrp-%d.sh", (int)getpid());
	snprintf(f1, sizeof(f1), "%s.s1", prog);
	snprintf(f2, sizeof(f2), "%s.s2", prog);
	unlink(f1);
	unlink(f2);
	f = fopen(prog, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n"
	      "(trap '' TERM; exec sleep 1000) &\n"
	      "echo $! > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n"
	      "wait\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(prog, 0755), 0);
	snprintf(conf, sizeof(conf),
		 "stop_grace_ms = 30000;\n"
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"s1\"; },\n"
		 "            { type = 2; route = \"s2\"; } );\n"
		 "  routes = ( { name = \"s1\"; program = \"%s\";\n"
		 "               args = [ \"%s\" ]; },\n"
		 "             { name = \"s2\"; program = \"%s\";\n"
		 "               args = [ \"%s\" ]; } );\n"
		 "} );\n", prog, f1, prog, f2);
	assert_int_equal(shmr_test_app_start(&app, "pgrp", conf), 0);
	assert_true(shmr_test_wait(file_has_pid, f1, WAIT_MS));
	assert_true(shmr_test_wait(file_has_pid, f2, WAIT_MS));
	c1 = pid_in(f1);
	c2 = pid_in(f2);
	assert_true(shmr_test_pid_alive(c1));
	assert_true(shmr_test_pid_alive(c2));

	assert_int_equal(shmr_test_ctl(&app, "REMOVE events s1", ans,
				       sizeof(ans)),
			 0);
	/* Well within the 30 s grace: killed when its leader exits. */
	assert_true(shmr_test_wait(pid_gone, &c1, 10000));
	assert_true(shmr_test_pid_alive(c2));

	assert_int_equal(shmr_test_app_stop(&app), 0);
	assert_false(shmr_test_pid_alive(c2));
	unlink(prog);
	unlink(f1);
	unlink(f2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_lifecycle_through_libshmr),
		cmocka_unit_test(test_pending_route_is_busy),
		cmocka_unit_test(test_pending_completes_after_kill_at_grace),
		cmocka_unit_test(test_shmrctl_lifecycle_commands),
		cmocka_unit_test(test_lazy_restart_on_next_message),
		cmocka_unit_test(test_replace_with_no_worker_is_busy),
		cmocka_unit_test(test_replace_drain_hands_over_cleanly),
		cmocka_unit_test(test_restart_backoff_spaces_a_failing_program),
		cmocka_unit_test(test_stop_and_remove_take_the_workers_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
