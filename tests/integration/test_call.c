/*
 * shmr_call()'s contract through the real appliance (lanes of 64 slots,
 * one routing lcore, so a few dozen messages fill an inbox):
 *
 *   bad priority      shmr_call_prio() over SHMR_PRIO_MAX: -EINVAL at
 *                     once, nothing enqueued
 *   full inbox        a caller whose inbox another endpoint filled gets
 *                     -ENOBUFS, not its timeout; its next receives return
 *                     every queued message in order, and a call after
 *                     them is answered
 *
 * Waits are bounded retries on real conditions (lane counts read from
 * the domain as mapped here), never fixed sleeps; the call bounds are
 * liveness only.
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

#define WAIT_MS 30000

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

/* Slots of @p pid's inbound lane (one lcore) its consumer has not
 * released: queued, and peeked but not released. */
static int64_t inbox_count(struct ctx *c, struct shmr_pid pid)
{
	return shmr_lane_unconsumed(shmr_lane_at(c->cl.base, pid.slot, 0),
				    shmr_hdr(c->cl.base)->lane_size);
}

struct inbox_wait {
	struct ctx *c;
	struct shmr_pid pid;
	int64_t want;
};

static int inbox_holds(void *arg)
{
	struct inbox_wait *w = arg;

	return inbox_count(w->c, w->pid) == w->want;
}

static void wait_inbox(struct ctx *c, struct shmr_pid pid, int64_t want)
{
	struct inbox_wait w = { c, pid, want };

	if (!shmr_test_wait(inbox_holds, &w, WAIT_MS))
		fail_msg("inbox of slot %u holds %lld, wanted %lld", pid.slot,
			 (long long)inbox_count(c, pid), (long long)want);
}

/* A send from @p ep, retried while the lanes are full (bounded). */
static void send_key(struct shmr_endpoint *ep, struct shmr_pid to,
		     uint32_t type, uint64_t k)
{
	int rc, tries = 0;

	while ((rc = shmr_send(ep, to, type, k, &k, sizeof(k))) == -EAGAIN) {
		assert_true(++tries < 1000000);
		usleep(100);
	}
	assert_int_equal(rc, 0);
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

/* Another endpoint fills our inbox; our call to e cannot be answered
 * through it: -ENOBUFS, and nothing queued is lost. */
static void test_full_inbox(void **state)
{
	struct ctx *c = *state;
	struct shmr_endpoint *b;
	struct shmr_pid me = shmr_endpoint_pid(c->cl.ep), bp;
	const struct shmr_msg *m[256];
	struct shmr_test_stats st;
	uint32_t cap = shmr_hdr(c->cl.base)->lane_size - 1;
	const uint64_t total = 100; /* our inbox's 63, the rest held back */
	uint64_t got = 0;
	int n;

	assert_int_equal(shmr_endpoint_open(c->cl.d, &b), 0);
	bp = shmr_endpoint_pid(b);
	for (uint64_t k = 0; k < total; k++)
		send_key(b, me, 7, k);
	wait_inbox(c, me, cap);
	assert_int_equal(shmr_call(c->cl.ep, c->e, 0, 0, "s", 1, &st,
				   sizeof(st), CLIENT_CALL_MS),
			 -ENOBUFS);
	while (got < total) {
		n = shmr_recv_burst(c->cl.ep, m, 256, CLIENT_CALL_MS);
		assert_true(n > 0);
		for (int i = 0; i < n; i++, got++) {
			assert_int_equal(m[i]->kind, SHMR_KIND_SEND);
			assert_int_equal(m[i]->type, 7);
			assert_int_equal(m[i]->key, got);
			assert_int_equal(m[i]->from.slot, bp.slot);
			assert_int_equal(m[i]->flags & SHMR_F_REDELIVERED, 0);
		}
	}
	/* Drained: the call is answered (the first one's late answer, if
	 * it comes now, is dropped as stale). */
	assert_int_equal(shmr_call(c->cl.ep, c->e, 0, 0, "s", 1, &st,
				   sizeof(st), CLIENT_CALL_MS),
			 (int)sizeof(st));
	assert_string_equal(st.tag, "e");
	assert_int_equal(shmr_recv_burst(c->cl.ep, m, 256, 0), 0);
	shmr_endpoint_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_priority),
		cmocka_unit_test(test_full_inbox),
	};
	return cmocka_run_group_tests_name("call", tests, group_setup,
					   group_teardown);
}
