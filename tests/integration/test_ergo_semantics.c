/*
 * The route lifecycle's corner cases as Ergo's router has them (issue 12),
 * against the real appliance: what a stopped router answers, what a
 * failed enable and a failed replace leave, and a restart on message that
 * fails.
 *
 * Router "events" (type behaviour, on_kill = "stop"): type 1 -> "w"
 * (added by the tests), type 2 -> "base" (configured).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define WAIT_MS 20000

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char prog[500];  /* a wrapper for the test worker (see wrapper()) */
	char prog2[600]; /* another one */
	int want_rc;
	const char *want_state;
	struct shmr_test_stats st;
	char ans[SHMR_PROTO_MAX];
};

/* A wrapper for the test worker at @p path, executable or not (a program
 * whose start fails, then works again, without a new configuration); it
 * creates @p path.ran each time it runs. */
static void wrapper_at(const char *path, int executable)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n: > '%s.ran'\nexec shmr-test-worker \"$@\"\n",
		path);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, executable ? 0755 : 0644), 0);
}

static void wrapper(struct ctx *c, int executable)
{
	wrapper_at(c->prog, executable);
}

/* Has the wrapper at @p path run? */
static int ran(const char *path)
{
	char p[700];

	snprintf(p, sizeof(p), "%s.ran", path);
	return access(p, F_OK) == 0;
}

static struct ctx *start(const char *tag)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[2048];

	assert_non_null(c);
	/* Outside the run directory, so that the configuration's programs
	 * can name it before the appliance starts. */
	snprintf(c->prog, sizeof(c->prog), "/tmp/shmr-test-ergo-%s-%d.sh", tag,
		 (int)getpid());
	snprintf(c->prog2, sizeof(c->prog2), "%s.2.sh", c->prog);
	wrapper(c, 1);
	wrapper_at(c->prog2, 1);
	snprintf(conf, sizeof(conf),
		 "programs = ( \"%s\", \"%s\" );\n"
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  on_kill = \"stop\";\n"
		 "  types = ( { type = 1; route = \"w\"; },\n"
		 "            { type = 2; route = \"base\"; } );\n"
		 "  routes = ( { name = \"base\";\n"
		 "               program = \"shmr-test-worker\"; } );\n"
		 "} );\n",
		 c->prog, c->prog2);
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	return c;
}

static void stop(struct ctx *c)
{
	char p[700];

	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	unlink(c->prog);
	unlink(c->prog2);
	snprintf(p, sizeof(p), "%s.ran", c->prog);
	unlink(p);
	snprintf(p, sizeof(p), "%s.ran", c->prog2);
	unlink(p);
	free(c);
}

/* One request on the control socket; its code, the answer in c->ans. */
static int ctl(struct ctx *c, const char *req)
{
	return shmr_test_ctl(&c->cl.app, req, c->ans, sizeof(c->ans));
}

/* Does a call to route w (type 1) through the router give c->want_rc
 * (the reply's size, or the error)?  The reply lands in c->st. */
static int call_w_gives(void *arg)
{
	struct ctx *c = arg;
	int rc;

	memset(&c->st, 0, sizeof(c->st));
	rc = shmr_call(c->cl.ep, c->router, 1, 0, "w", 1, &c->st,
		       sizeof(c->st), 10000);
	return rc == c->want_rc;
}

static void wait_call(struct ctx *c, int rc)
{
	c->want_rc = rc;
	assert_true(shmr_test_wait(call_w_gives, c, WAIT_MS));
}

/* Route w's state and os_pid from ROUTE; -1 when there is no route w. */
static long long route_info(struct ctx *c, char *state, size_t cap)
{
	const char *p;
	int rc = ctl(c, "ROUTE events w");

	snprintf(state, cap, "%s", "none");
	if (rc < 0)
		return -1;
	p = strstr(c->ans, " state=");
	if (p)
		sscanf(p + 7, "%31s", state);
	p = strstr(c->ans, " os_pid=");
	return p ? atoll(p + 8) : -1;
}

static int route_in_state(void *arg)
{
	struct ctx *c = arg;
	char state[32];

	(void)route_info(c, state, sizeof(state));
	return strcmp(state, c->want_state) == 0;
}

static void wait_state(struct ctx *c, const char *state)
{
	c->want_state = state;
	assert_true(shmr_test_wait(route_in_state, c, WAIT_MS));
}

static int router_stopped(void *arg)
{
	struct ctx *c = arg;

	return ctl(c, "INSPECT events") == 0 &&
	       strstr(c->ans, "\nshmr:state stopped\n") != NULL;
}

/* @p req on the stopped router: refused as stopped, not for its
 * arguments. */
static void refused_as_stopped(struct ctx *c, const char *req)
{
	int rc = ctl(c, req);

	if (rc != -SHMR_E_NOT_ALLOWED || !strstr(c->ans, "stopped"))
		fail_msg("%s: %d, '%s' (want NOT_ALLOWED, stopped)", req, rc,
			 c->ans);
}

/* Error order on a stopped router: every mutator answers
 * SHMR_E_NOT_ALLOWED ("router events is stopped") before any argument
 * check: a bad cpu list, a bad route name, a program the configuration
 * does not list, an unknown route. */
static void test_stopped_router_refuses_before_argument_checks(void **state)
{
	struct ctx *c = start("stopped");
	char req[300];
	(void)state;

	assert_int_equal(ctl(c, "KILL events"), 0);
	assert_true(shmr_test_wait(router_stopped, c, WAIT_MS));
	/* Once the dataplane has the change, routed calls are refused. */
	wait_call(c, -SHMR_E_NOT_ALLOWED);

	refused_as_stopped(c, "ADD events w nosuchcpu shmr-test-worker");
	refused_as_stopped(c, "ADD events w - /not/listed");
	snprintf(req, sizeof(req), "ADD events %0100d - shmr-test-worker", 0);
	refused_as_stopped(c, req);
	refused_as_stopped(c, "REPLACE events base /not/listed");
	refused_as_stopped(c, "REPLACE events nosuch shmr-test-worker");
	refused_as_stopped(c, "ENABLE events nosuch");
	refused_as_stopped(c, "RESPAWN events base");
	refused_as_stopped(c, "REMOVE events base");
	/* An unknown router is still named as unknown; reads still work. */
	assert_int_equal(ctl(c, "ENABLE nosuch w"), -SHMR_E_NO_ROUTE);
	assert_int_equal(ctl(c, "ROUTES events"), 0);
	stop(c);
}

/* Route w added from c->prog, running, routed to. */
static void add_w(struct ctx *c)
{
	assert_int_equal(shmr_route_add(c->cl.d, "events", "w", c->prog, NULL,
					0, NULL),
			 0);
	wait_call(c, (int)sizeof(c->st));
	assert_string_equal(c->st.tag, "w");
}

/* A failed enable (its program cannot start) leaves the route enabled
 * but dead, as Ergo's code does: the next message routed there starts
 * it, and is delivered. */
static void test_failed_enable_leaves_the_route_enabled_dead(void **state)
{
	struct ctx *c = start("enable");
	char st[32];
	(void)state;

	add_w(c);
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "w"), 0);
	wait_state(c, "disabled");
	wrapper(c, 0); /* the start will fail: not executable */
	assert_true(shmr_route_enable(c->cl.d, "events", "w") < 0);
	assert_int_equal(route_info(c, st, sizeof(st)), 0);
	assert_string_equal(st, "dead");

	wrapper(c, 1); /* fixed: nothing retried it; the next message does */
	assert_int_equal(route_info(c, st, sizeof(st)), 0);
	assert_string_equal(st, "dead");
	wait_call(c, (int)sizeof(c->st));
	assert_string_equal(c->st.tag, "w");
	assert_true(route_info(c, st, sizeof(st)) > 0);
	assert_string_equal(st, "running");
	stop(c);
}

/* A failed synchronous replace (the route has no worker, the new program
 * cannot start) keeps the NEW spec installed, as Ergo does: the route is
 * dead until a start succeeds, and that start runs the new program, not
 * the old one. */
static void test_failed_replace_keeps_the_new_spec(void **state)
{
	struct ctx *c = start("replace");
	long long pid;
	char st[32];
	(void)state;

	add_w(c);
	pid = route_info(c, st, sizeof(st));
	assert_true(pid > 0);
	/* Dead, and left so: its restart fails, then the old program is
	 * fixed (nothing retries without a message). */
	wrapper(c, 0);
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	wait_state(c, "dead");
	wrapper(c, 1);

	wrapper_at(c->prog2, 0);
	assert_true(shmr_route_replace(c->cl.d, "events", "w", c->prog2, NULL,
				       0) < 0);
	assert_int_equal(route_info(c, st, sizeof(st)), 0);
	assert_string_equal(st, "dead");
	assert_false(ran(c->prog2));

	/* The new program fixed: the next message starts it (not the old
	 * one, which works too) and is delivered to it. */
	wrapper_at(c->prog2, 1);
	wait_call(c, (int)sizeof(c->st));
	assert_string_equal(c->st.tag, "w");
	assert_true(ran(c->prog2));
	stop(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_stopped_router_refuses_before_argument_checks),
		cmocka_unit_test(
			test_failed_enable_leaves_the_route_enabled_dead),
		cmocka_unit_test(test_failed_replace_keeps_the_new_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
