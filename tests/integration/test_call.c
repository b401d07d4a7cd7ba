/*
 * shmr_call()'s contract through the real appliance (lanes of 64 slots,
 * one routing lcore):
 *
 *   bad priority      shmr_call_prio() over SHMR_PRIO_MAX: -EINVAL at
 *                     once, nothing enqueued
 *
 * The call bounds are liveness only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>

#include <shmr/domain.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

struct ctx {
	struct shmr_test_client cl; /* domain mapped here */
	struct shmr_pid e; /* the route's inbox */
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

static int group_setup(void **state)
{
	struct ctx *c;

	c = client_ctx_start(sizeof(*c), "call",
			     "lcores = 1;\nlane_size = 64;\n"
			     "poll_mode = \"adaptive\";\n"
			     "routers = ( { name = \"r\"; behaviour = \"type\";\n"
			     "  types = ( { type = 1; route = \"e\"; } );\n"
			     "  routes = ( { name = \"e\";\n"
			     "    program = \"shmr-test-worker\"; } ); } );\n",
			     0);
	c->e = client_route_pid(&c->cl, "r", "e");
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	client_ctx_stop(*state);
	return 0;
}

/* A priority the dataplane would drop: refused before anything is
 * enqueued, so the call does not wait for an answer that never comes. */
static void test_bad_priority(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid me = shmr_endpoint_pid(c->cl.ep);
	uint32_t nl = shmr_hdr(c->cl.base)->nlcores;
	struct rte_ring *out = shmr_lane_at(c->cl.base, me.slot,
					    SHMR_LANE_OUT(nl));
	struct rte_ring *high = shmr_lane_at(c->cl.base, me.slot,
					     SHMR_LANE_OUT_HIGH(nl));
	/* This thread is both lanes' producer: it reads its own writes. */
	uint32_t out_tail = out->prod.tail, high_tail = high->prod.tail;
	struct shmr_test_stats st;

	assert_int_equal(shmr_call_prio(c->cl.ep, client_lookup(&c->cl, "r"),
					(enum shmr_priority)(SHMR_PRIO_MAX + 1),
					1, 0, "s", 1, &st, sizeof(st),
					CLIENT_CALL_MS),
			 -EINVAL);
	assert_int_equal(out->prod.tail, out_tail);
	assert_int_equal(high->prod.tail, high_tail);
	/* The endpoint still calls. */
	assert_int_equal(shmr_call(c->cl.ep, c->e, 0, 0, "s", 1, &st,
				   sizeof(st), CLIENT_CALL_MS),
			 (int)sizeof(st));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_priority),
	};
	return cmocka_run_group_tests_name("call", tests, group_setup,
					   group_teardown);
}
