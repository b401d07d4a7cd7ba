/*
 * A control request comes after the sends its process made before it
 * (issue 12: "send x5; DRAIN" drained before the five arrived).  A send
 * returns once its message is in the sender's outbound lane, and a
 * request on the control socket could overtake it there; libshmr's
 * shmr_route_*() calls now wait until the dataplane has taken what was
 * sent (shmr.h, "Order").
 *
 * Made certain rather than likely: the dataplane is stopped (SIGSTOP)
 * while the test sends five messages for route g and at once asks to
 * drain g.  A helper process lets the dataplane go on (SIGCONT) as soon
 * as g is disabled (the drain overtook the sends: its worker stopped with
 * an empty inbox), or after half a second, whichever comes first.  What a
 * user checks: g's worker handled each of the five before it stopped.
 * The half second only decides how long a correct run waits; it cannot
 * make one fail (the drain waits for the dataplane without a fixed bound
 * while it makes progress, and SHMR_CLOSE_WAIT_MS is raised here).
 *
 * And the wait is bounded: a stopped dataplane holds a route call back
 * for SHMR_CLOSE_WAIT_MS only, then the request goes out.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"

#define WAIT_MS 20000
#define NREC 8u /* keys the recording worker counts */
#define NSENT 5u

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char rec_path[128];
	unsigned char *rec; /* g's --record file: per key, receives */
	pid_t dp;           /* the dataplane */
};

/* Router events: type 2 goes to route g, whose worker records what it
 * handles in @p rec_path. */
static const char conf_fmt[] =
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"
	"  types = ( { type = 2; route = \"g\"; } );\n"
	"  routes = ( { name = \"g\"; program = \"shmr-test-worker\";\n"
	"               args = [ \"--record\", \"%s\" ]; } );\n"
	"} );\n";

/* Route g of events is in @p state (ROUTE's state=). */
static int g_is(const struct ctx *c, const char *state)
{
	char ans[SHMR_PROTO_MAX], want[48];

	snprintf(want, sizeof(want), " state=%s ", state);
	return shmr_test_ctl(&c->cl.app, "ROUTE events g", ans, sizeof(ans)) ==
		       0 &&
	       strstr(ans, want) != NULL;
}

static int g_running(void *arg)
{
	return g_is(arg, "running");
}

static int g_disabled(void *arg)
{
	return g_is(arg, "disabled");
}

/* A helper process: SIGCONT to @p dataplane once g is disabled, or after
 * half a second.  Nothing of cmocka's in it. */
static pid_t let_go_later(const struct ctx *c, pid_t dataplane)
{
	pid_t child = fork();

	assert_true(child >= 0);
	if (child == 0) {
		for (int i = 0; i < 500 && !g_is(c, "disabled"); i++)
			usleep(1000);
		kill(dataplane, SIGCONT);
		_exit(0);
	}
	return child;
}

/* The appliance, with g running; its dataplane's pid in c->dp. */
static int setup(void **state)
{
	static struct ctx ctx;
	struct ctx *c = &ctx;
	char ans[SHMR_PROTO_MAX], conf[1024];

	memset(c, 0, sizeof(*c));
	c->rec = shmr_test_record_new("order", NREC, c->rec_path,
				      sizeof(c->rec_path));
	assert_non_null(c->rec);
	snprintf(conf, sizeof(conf), conf_fmt, c->rec_path);
	assert_int_equal(shmr_test_client_start(&c->cl, "order", conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	assert_true(shmr_test_wait(g_running, c, WAIT_MS));
	assert_int_equal(shmr_test_ctl(&c->cl.app, "STATUS", ans, sizeof(ans)),
			 0);
	c->dp = (pid_t)shmr_test_value(ans, "dataplane_pid");
	assert_true(c->dp > 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	kill(c->dp, SIGCONT); /* whatever the test left */
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	munmap(c->rec, 2 * NREC);
	unlink(c->rec_path);
	return 0;
}

/* send x5 then drain, at once: the draining worker handles all five. */
static void test_drain_after_sends(void **state)
{
	struct ctx *c = *state;
	char ans[SHMR_PROTO_MAX];
	pid_t helper;
	int status;

	assert_int_equal(setenv("SHMR_CLOSE_WAIT_MS", "30000", 1), 0);
	assert_int_equal(kill(c->dp, SIGSTOP), 0);
	helper = let_go_later(c, c->dp);
	for (uint64_t k = 0; k < NSENT; k++)
		assert_int_equal(shmr_send(c->cl.ep, c->router, 2, k, &k,
					   sizeof(k)),
				 0);
	assert_int_equal(shmr_route_drain(c->cl.d, "events", "g"), 0);
	assert_int_equal(waitpid(helper, &status, 0), helper);
	kill(c->dp, SIGCONT); /* in any case */

	assert_true(shmr_test_wait(g_disabled, c, WAIT_MS));
	for (unsigned k = 0; k < NSENT; k++)
		if (c->rec[k] != 1)
			fail_msg("key %u: handled %u times by the draining "
				 "worker (want 1)",
				 k, c->rec[k]);
	assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT events", ans,
				       sizeof(ans)),
			 0);
	assert_int_equal(shmr_test_value(ans, "shmr:failed"), 0);
	assert_int_equal(shmr_test_value(ans, "shmr:route:g:queued"), 0);
}

/* A dataplane that takes nothing (stopped) holds a route call back only
 * for the bound (SHMR_CLOSE_WAIT_MS without progress): the request then
 * goes out, and the control plane acts on it while the dataplane is still
 * stopped. */
static void test_stalled_dataplane_delays_by_the_bound(void **state)
{
	struct ctx *c = *state;
	uint64_t k = 0;

	assert_int_equal(setenv("SHMR_CLOSE_WAIT_MS", "200", 1), 0);
	assert_int_equal(kill(c->dp, SIGSTOP), 0);
	assert_int_equal(shmr_send(c->cl.ep, c->router, 2, k, &k, sizeof(k)),
			 0);
	assert_int_equal(shmr_route_disable(c->cl.d, "events", "g"), 0);
	assert_true(g_is(c, "pending_disable") || g_is(c, "disabled"));
	assert_int_equal(kill(c->dp, SIGCONT), 0);
	assert_true(shmr_test_wait(g_disabled, c, WAIT_MS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_drain_after_sends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_stalled_dataplane_delays_by_the_bound, setup,
			teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
