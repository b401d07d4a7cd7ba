/*
 * A router's admin-path handlers from a shared object, against the real
 * daemons: examples/handlers_example.c, a circuit breaker.
 *
 *   - MessageRouteFailed reaches handle_message, which can act on the
 *     router's own routes (disable) and still keep the dead letter;
 *   - handle_call can answer now or defer, and handle_inspect adds keys
 *     and overrides a built-in one by its prefixed name;
 *   - a handler that fails stops the router: its workers stop and are not
 *     restarted, what is sent to it fails with SHMR_E_NOT_ALLOWED, every
 *     mutator too, and reads keep working.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char ans[SHMR_PROTO_MAX];
	const char *want; /* for the predicates */
};

static void start(struct ctx *c, const char *tag)
{
	char conf[2048];

	memset(c, 0, sizeof(*c));
	snprintf(conf, sizeof(conf),
		 "lane_size = 64; stop_grace_ms = 200;\n"
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  handlers = \"%s\"; handlers_arg = \"trip=3\";\n"
		 "  mailbox_full = \"fail\";\n"
		 "  types = ( { type = 1; route = \"work\"; },\n"
		 "            { type = 2; route = \"flaky\"; } );\n"
		 "  routes = ( { name = \"work\"; program = \"shmr-test-worker\"; },\n"
		 "             { name = \"flaky\"; program = \"shmr-test-worker\"; }"
		 " ); } );\n",
		 getenv("SHMR_EXAMPLE_HANDLERS"));
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
}

static int call(struct ctx *c, uint32_t type)
{
	struct shmr_test_stats st;

	return shmr_call(c->cl.ep, c->router, type, 0, "?", 1, &st, sizeof(st),
			 30000);
}

/* An admin call (high priority) with a text payload; the reply text in
 * c->ans. */
static int admin_call(struct ctx *c, const char *text)
{
	int rc;

	memset(c->ans, 0, sizeof(c->ans));
	rc = shmr_call_prio(c->cl.ep, c->router, SHMR_PRIO_HIGH, 0, 0, text,
			    strlen(text), c->ans, 200, 30000);
	return rc;
}

static void inspect(struct ctx *c)
{
	assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT events", c->ans,
				       sizeof(c->ans)),
			 0);
}

static int inspect_has(void *arg)
{
	struct ctx *c = arg;

	inspect(c);
	return strstr(c->ans, c->want) != NULL;
}

static void wait_inspect(struct ctx *c, const char *line)
{
	c->want = line;
	assert_true(shmr_test_wait(inspect_has, c, 30000));
}

static pid_t os_pid_of(struct ctx *c, const char *route)
{
	char req[64];
	const char *p;

	snprintf(req, sizeof(req), "ROUTE events %s", route);
	assert_int_equal(shmr_test_ctl(&c->cl.app, req, c->ans, sizeof(c->ans)),
			 0);
	p = strstr(c->ans, " os_pid=");
	assert_non_null(p);
	return (pid_t)atoi(p + 8);
}

static int send_retry(struct ctx *c, uint32_t type, uint64_t key)
{
	int rc;

	while ((rc = shmr_send(c->cl.ep, c->router, type, key, "m", 1)) ==
	       -EAGAIN)
		usleep(100);
	return rc;
}

static int flaky_answers(void *arg)
{
	return call(arg, 2) == (int)sizeof(struct shmr_test_stats);
}

/* The circuit breaker trips: a route that stops consuming fills up, the
 * overflow fails (SHMR_E_MAILBOX_FULL), handle_message counts three
 * failures and disables the route; later messages fail at once with
 * SHMR_E_DISABLED.  The dead letters are kept.  "reset flaky" closes it. */
static void test_handle_message_trips_a_circuit_breaker(void **state)
{
	struct ctx c;
	pid_t flaky;
	(void)state;

	start(&c, "breaker");
	assert_int_equal(call(&c, 2), (int)sizeof(struct shmr_test_stats));
	flaky = os_pid_of(&c, "flaky");
	assert_true(flaky > 0);
	assert_int_equal(kill(flaky, SIGSTOP), 0);
	/* 63 fit into its inbox (one lane of 64); at least three of the
	 * rest fail, even if the worker took a few before it stopped. */
	for (unsigned i = 0; i < 73; i++)
		assert_int_equal(send_retry(&c, 2, i), 0);
	/* Three failures: the breaker opens (the stopped worker is killed
	 * after stop_grace_ms). */
	wait_inspect(&c, "\nshmr:route:flaky:disabled true\n");
	assert_non_null(strstr(c.ans, "\nbreaker:tripped 1\n"));
	assert_non_null(strstr(c.ans, "OK\nshmr:type circuit-breaker\n"));
	assert_true(shmr_test_value(c.ans, "shmr:dlq_size") >= 3);
	assert_int_equal(call(&c, 2), -SHMR_E_DISABLED);
	assert_int_equal(call(&c, 1), (int)sizeof(struct shmr_test_stats));
	assert_true(admin_call(&c, "tripped") > 0);
	assert_string_equal(c.ans, "1");

	/* Closed again by an admin call that enables the route (routed to
	 * once the dataplane has the change: retried, bounded). */
	assert_int_equal(admin_call(&c, "reset flaky"), 0);
	assert_true(shmr_test_wait(flaky_answers, &c, 30000));
	/* The built-in call still answers through default_call. */
	assert_true(admin_call(&c, "stats") > 0);
	assert_non_null(strstr(c.ans, "forwarded="));
	stop(&c);
}

struct deferred {
	struct ctx *c;
	struct shmr_endpoint *ep;
	int rc;
	char text[32];
};

static void *defer_thread(void *arg)
{
	struct deferred *x = arg;

	x->rc = shmr_call_prio(x->ep, x->c->router, SHMR_PRIO_HIGH, 0, 0,
			       "defer", 5, x->text, sizeof(x->text) - 1, 30000);
	return NULL;
}

/* handle_call may keep a call and answer it from a later hook. */
static void test_handle_call_defers_a_reply(void **state)
{
	struct ctx c;
	struct deferred x = { 0 };
	pthread_t t;
	(void)state;

	start(&c, "defer");
	x.c = &c;
	assert_int_equal(shmr_endpoint_open(c.cl.d, &x.ep), 0);
	assert_int_equal(pthread_create(&t, NULL, defer_thread, &x), 0);
	wait_inspect(&c, "\nbreaker:deferred 1\n");
	assert_int_equal(shmr_send_prio(c.cl.ep, c.router, SHMR_PRIO_HIGH, 0, 0,
					"release", 7),
			 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(x.rc, 8);
	assert_string_equal(x.text, "released");
	shmr_endpoint_close(x.ep);
	stop(&c);
}

static int route_gone(void *arg)
{
	struct ctx *c = arg;

	return os_pid_of(c, "work") == 0 && os_pid_of(c, "flaky") == 0;
}

static int refused(void *arg)
{
	return call(arg, 1) == -SHMR_E_NOT_ALLOWED;
}

/* What a stopped router still does and refuses. */
static void assert_stopped(struct ctx *c)
{
	wait_inspect(c, "\nshmr:state stopped\n");
	assert_true(shmr_test_wait(route_gone, c, 30000));
	/* Once the dataplane has the change (bounded). */
	assert_true(shmr_test_wait(refused, c, 30000));
	assert_int_equal(admin_call(c, "stats"), -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "work"),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_route_respawn(c->cl.d, "events", "work"),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_route_add(c->cl.d, "events", "more",
					"shmr-test-worker", NULL, 0, NULL),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_route_remove(c->cl.d, "events", "work"),
			 -SHMR_E_NOT_ALLOWED);
	/* Reads work. */
	assert_int_equal(shmr_test_ctl(&c->cl.app, "ROUTES events", c->ans,
				       sizeof(c->ans)),
			 0);
	assert_non_null(strstr(c->ans, "work pid="));
	assert_non_null(strstr(c->ans, " restarts=0 "));
	/* Nothing sent to it is lost without a trace: a send is a dead
	 * letter with its reason. */
	assert_int_equal(send_retry(c, 1, 99), 0);
	wait_inspect(c, "\nshmr:dlq_size 1\n");
}

/* handle_message returning an error stops the router. */
static void test_failing_handle_message_stops_the_router(void **state)
{
	struct ctx c;
	(void)state;

	start(&c, "hfail");
	assert_int_equal(call(&c, 1), (int)sizeof(struct shmr_test_stats));
	assert_int_equal(shmr_send_prio(c.cl.ep, c.router, SHMR_PRIO_HIGH, 0, 0,
					"fail", 4),
			 0);
	assert_stopped(&c);
	stop(&c);
}

/* handle_call returning an error stops the router; its caller gets
 * SHMR_E_NOT_ALLOWED. */
static void test_failing_handle_call_stops_the_router(void **state)
{
	struct ctx c;
	(void)state;

	start(&c, "cfail");
	assert_int_equal(call(&c, 1), (int)sizeof(struct shmr_test_stats));
	assert_int_equal(admin_call(&c, "stop"), -SHMR_E_NOT_ALLOWED);
	assert_stopped(&c);
	stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handle_message_trips_a_circuit_breaker),
		cmocka_unit_test(test_handle_call_defers_a_reply),
		cmocka_unit_test(test_failing_handle_message_stops_the_router),
		cmocka_unit_test(test_failing_handle_call_stops_the_router),
	};
	return cmocka_run_group_tests_name("handlers", tests, NULL, NULL);
}
