/*
 * Fan-out batching (forward.c, "Batches per destination"): a hash router
 * over 16 routes, fed keys 0, 1, 2, ... so that no two consecutive slots
 * go to the same route.  One round of the lcore gathers bursts across
 * passes and hands every route its slots together; every slot arrives
 * once, in key order per route, also when one route's inbox is full
 * (the source lane keeps what is not out yet, so nothing is duplicated
 * and nothing is lost).  A round holds at most an eighth of a lane of
 * the sender's slots (lcore.h, SHMR_DP_POOL_LANE_DIV): the lanes here
 * are 4096 entries, so one round may hold all 496 slots fed; with
 * 512-entry lanes it holds 64 and gives the sender its room back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dp_test.h"

#define NROUTES 16u
#define LANE 4096u /* entries of every lane here (capacity LANE - 1) */
#define SMALL 512u /* test_round_holds_an_eighth's lanes */
#define PER 31u   /* slots per route fed in one go: 16 x 31 fit a lane */
#define EPS 64u   /* endpoint slots: the client, the router, 16 routes */

/* The lanes' entries for the next setup(). */
static unsigned lane_entries = LANE;

struct fixture {
	struct dp_dom d;
	struct shmr_dp_lcore lc;
	struct shmr_dp_table *t;
	struct shmr_pid a, router, pair, turns, route[NROUTES];
};

/* Router @p name at endpoint slot @p slot over the first @p n routes,
 * called <name's first letter><index> (a hash over them in that order). */
static struct shmr_pid router_over(struct fixture *f, uint32_t slot,
				   const char *name, uint32_t beh, unsigned n)
{
	struct shmr_pid pid = dp_ep(&f->d, slot, 1, SHMR_EPK_ROUTER);
	unsigned ri = dp_router(&f->d, name, pid, beh);

	for (unsigned i = 0; i < n; i++) {
		char rname[16];

		snprintf(rname, sizeof(rname), "%c%u", name[0], i);
		dp_route(&f->d, ri, rname, f->route[i], SHMR_ROUTE_RUNNING);
		if (beh == SHMR_BEH_HASH)
			dp_hash(&f->d, ri, rname);
	}
	return pid;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || dp_dom_init_lane_eps(&f->d, 1, lane_entries, EPS) < 0)
		return -1;
	dp_spec_begin(&f->d);
	f->a = dp_ep(&f->d, 3, 1, SHMR_EPK_CLIENT);
	for (unsigned i = 0; i < NROUTES; i++)
		f->route[i] = dp_ep(&f->d, 10 + i, 1, SHMR_EPK_ROUTE);
	f->router = router_over(f, 2, "spread", SHMR_BEH_HASH, NROUTES);
	/* Over routes 0 and 1 (test_plain_case_stops), and a round-robin
	 * over routes 0 to 2 (test_plain_round_robin). */
	f->pair = router_over(f, 4, "pair", SHMR_BEH_HASH, 2);
	f->turns = router_over(f, 5, "turns", SHMR_BEH_ROUND_ROBIN, 3);
	dp_spec_end(&f->d);
	if (shmr_dp_table_build(&f->d.env, &f->t) < 0 ||
	    shmr_dp_lcore_init(&f->lc, &f->d.env, 0) < 0)
		return -1;
	/* A round's bound in time is not what is checked here: a loaded
	 * machine (or the first touch of the lanes) must not end one early. */
	f->lc.stage_ticks = 1ull << 50;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dp_all_fini(&f->d, &f->lc, f->t);
	free(f);
	return 0;
}

static struct rte_ring *inbox(struct fixture *f, unsigned i)
{
	return dp_lane(&f->d, f->route[i], 0);
}

/* Keys [from, to) from client a to the router. */
static void feed(struct fixture *f, uint64_t from, uint64_t to)
{
	unsigned char slot[DP_SS];

	for (uint64_t k = from; k < to; k++)
		dp_put(dp_out_lane(&f->d, f->a),
		       dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, k,
			      1000 + k));
}

/* Take everything in route @p i's inbox and check it continues that
 * route's keys from *next (key % 16 == i, each once, ascending). */
static unsigned drain_check(struct fixture *f, unsigned i, uint64_t *next)
{
	static unsigned char got[LANE * DP_SS];
	unsigned n = dp_take(inbox(f, i), got, LANE);

	for (unsigned j = 0; j < n; j++) {
		const struct shmr_msg *m = dp_at(got, j);

		assert_int_equal(m->key, *next);
		assert_int_equal(m->ref, 1000 + *next);
		assert_int_equal(m->from.slot, f->a.slot);
		*next += NROUTES;
	}
	return n;
}

/* One round hands each of the 16 routes all its slots at once: the lcore
 * gathers the sender's bursts across passes instead of ending the round
 * after one burst of runs of one. */
static void test_fanout_batches(void **state)
{
	struct fixture *f = *state;
	uint64_t next[NROUTES];

	feed(f, 0, NROUTES * PER);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), NROUTES * PER);
	for (unsigned i = 0; i < NROUTES; i++) {
		assert_int_equal(rte_ring_count(inbox(f, i)), PER);
		next[i] = i;
		assert_int_equal(drain_check(f, i, &next[i]), PER);
	}
	/* Released from the sender's lane, exactly. */
	assert_int_equal(rte_ring_count(dp_out_lane(&f->d, f->a)), 0);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
}

/* A full inbox stops the sender's lane at its first slot for that route;
 * what was staged before it goes out, the rest stays in the sender's
 * lane: once the inbox is drained every slot arrives, once, in order. */
static void test_fanout_full_route(void **state)
{
	struct fixture *f = *state;
	static unsigned char junk[LANE * DP_SS];
	unsigned char slot[DP_SS];
	uint64_t next[NROUTES];
	unsigned total = 0, rounds = 0;

	/* Route 5's inbox full with someone else's slots. */
	for (unsigned j = 0; j < LANE - 1; j++)
		dp_put(inbox(f, 5), dp_msg(slot, SHMR_KIND_SEND, f->a,
					   f->route[5], 9, 0, 0));
	feed(f, 0, NROUTES * PER);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 5);
	assert_int_equal(f->lc.nblocked, 1);
	for (unsigned i = 0; i < NROUTES; i++)
		next[i] = i;
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(drain_check(f, i, &next[i]), 1);
	for (unsigned i = 6; i < NROUTES; i++)
		assert_int_equal(rte_ring_count(inbox(f, i)), 0);
	/* Still blocked: nothing moves, nothing is delivered twice. */
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
	assert_int_equal(rte_ring_count(dp_out_lane(&f->d, f->a)),
			 NROUTES * PER - 5);
	assert_int_equal(dp_take(inbox(f, 5), junk, LANE), LANE - 1);
	while (rte_ring_count(dp_out_lane(&f->d, f->a)) && rounds++ < 100)
		total += shmr_dp_poll_once_rcu(&f->lc, f->t);
	assert_int_equal(total, NROUTES * PER - 5);
	for (unsigned i = 0; i < NROUTES; i++) {
		drain_check(f, i, &next[i]);
		assert_int_equal(next[i], i + NROUTES * PER);
	}
}

/* Across rounds and with the sender refilling in between: still each
 * slot once, in order per route. */
static void test_fanout_stream(void **state)
{
	struct fixture *f = *state;
	uint64_t next[NROUTES], sent = 0;

	for (unsigned i = 0; i < NROUTES; i++)
		next[i] = i;
	for (unsigned r = 0; r < 200; r++) {
		uint64_t n = 1 + (r * 37u) % 200u;
		unsigned room = rte_ring_free_count(dp_out_lane(&f->d, f->a));

		if (n > room)
			n = room;
		feed(f, sent, sent + n);
		sent += n;
		(void)shmr_dp_poll_once_rcu(&f->lc, f->t);
		/* A slow route: route 3 is drained only every 7th round. */
		for (unsigned i = 0; i < NROUTES; i++)
			if (i != 3 || r % 7 == 0)
				drain_check(f, i, &next[i]);
	}
	for (unsigned r = 0; r < 100 && rte_ring_count(dp_out_lane(&f->d, f->a));
	     r++) {
		(void)shmr_dp_poll_once_rcu(&f->lc, f->t);
		drain_check(f, 3, &next[3]);
	}
	for (unsigned i = 0; i < NROUTES; i++) {
		drain_check(f, i, &next[i]);
		/* The first key of route i not sent yet. */
		assert_int_equal(next[i], i + ((sent - i + NROUTES - 1) /
					       NROUTES) * NROUTES);
	}
}

/* 512-entry lanes: a round holds 64 of the sender's slots (an eighth),
 * hands each route its 4 and releases exactly those 64 from the sender's
 * lane (the pass polls no other lane with work, so the round ends there:
 * forward.c's essay); the following rounds bring the rest, each slot
 * once, in order. */
static int setup_small(void **state)
{
	int rc;

	lane_entries = SMALL;
	rc = setup(state);
	lane_entries = LANE;
	return rc;
}

static void test_round_holds_an_eighth(void **state)
{
	struct fixture *f = *state;
	uint64_t next[NROUTES];
	unsigned total, rounds = 0;

	assert_int_equal(f->lc.pool_cap, SMALL / 8);
	feed(f, 0, NROUTES * PER);
	total = shmr_dp_poll_once_rcu(&f->lc, f->t);
	assert_int_equal(total, SMALL / 8);
	assert_int_equal(rte_ring_count(dp_out_lane(&f->d, f->a)),
			 NROUTES * PER - SMALL / 8);
	for (unsigned i = 0; i < NROUTES; i++) {
		assert_int_equal(rte_ring_count(inbox(f, i)),
				 SMALL / 8 / NROUTES);
		next[i] = i;
		drain_check(f, i, &next[i]);
	}
	while (rte_ring_count(dp_out_lane(&f->d, f->a)) && rounds++ < 100)
		total += shmr_dp_poll_once_rcu(&f->lc, f->t);
	assert_int_equal(total, NROUTES * PER);
	for (unsigned i = 0; i < NROUTES; i++) {
		drain_check(f, i, &next[i]);
		assert_int_equal(next[i], i + NROUTES * PER);
	}
}

static uint64_t stat(struct fixture *f, size_t off)
{
	return atomic_load((_Atomic uint64_t *)((char *)shmr_stats_of(
							f->d.base, 0) +
						off));
}

#define STAT(f, field) stat(f, offsetof(struct shmr_lcore_stats, field))
#define ROUTER_FORWARDED(f, pid)                                          \
	atomic_load(&shmr_ep_ctr_of((f)->d.base, 0, (pid).slot)              \
			     ->router_forwarded)

/* Route @p i's inbox holds exactly keys @p keys (@p n of them), in that
 * order, each forwarded once (one hop) with no flag a client may not set. */
static void inbox_is(struct fixture *f, unsigned i, const uint64_t *keys,
		     unsigned n)
{
	static unsigned char got[LANE * DP_SS];

	assert_int_equal(dp_take(inbox(f, i), got, LANE), n);
	for (unsigned j = 0; j < n; j++) {
		assert_int_equal(dp_at(got, j)->key, keys[j]);
		assert_int_equal(dp_at(got, j)->hops, 1);
		assert_int_equal(dp_at(got, j)->flags, 0);
	}
}

/*
 * The plain case (forward.c: plain sends through a stateless router,
 * staged as decided) gives way to the general path at the first slot it
 * does not take, and the burst reads the same as if every slot had taken
 * the general path: one burst that switches routers, carries a slot for
 * a router's old generation, a high-priority one (the admin path, with no
 * admin endpoint here: refused) and a send with flags only the dataplane
 * sets, then plain slots again.  Each route gets its keys once, in
 * order, and the counters count each slot once.
 */
static void test_plain_case_stops(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *out = dp_out_lane(&f->d, f->a);
	struct shmr_pid old_pair = { f->pair.slot, f->pair.gen + 1 };
	unsigned char slot[DP_SS];
	struct shmr_msg *m;
	const uint64_t r0[] = { 0, 4, 16 }, r1[] = { 1, 5, 17 };
	const uint64_t r2[] = { 2 }, r3[] = { 3, 19 }, r7[] = { 7 };

	/* Plain from the first slot: spread to routes 0 to 3 (one with a
	 * dead letter's flags, which no client may set), pair to 0 and 1. */
	for (uint64_t k = 0; k < 4; k++) {
		m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, k, 0);
		if (k == 2)
			m->flags = SHMR_F_ROUTE_FAILED | SHMR_F_WANT_WORKER;
		dp_put(out, m);
	}
	for (uint64_t k = 4; k < 6; k++)
		dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, f->pair, 1, k,
				   0));
	/* Not plain: a router's old generation (failed), high priority
	 * (no admin endpoint: failed). */
	dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, old_pair, 1, 6, 0));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 8, 0);
	m->priority = SHMR_PRIO_HIGH;
	dp_put(out, m);
	/* After those: plain again, taken by the general path. */
	dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 7, 0));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 16, 0);
	m->flags = SHMR_F_ROUTE_FAILED | SHMR_F_WANT_WORKER;
	dp_put(out, m);
	dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, f->pair, 1, 17, 0));
	dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 19, 0));

	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 12);
	assert_int_equal(rte_ring_count(out), 0);
	inbox_is(f, 0, r0, 3);
	inbox_is(f, 1, r1, 3);
	inbox_is(f, 2, r2, 1);
	inbox_is(f, 3, r3, 2);
	inbox_is(f, 7, r7, 1);
	for (unsigned i = 4; i < NROUTES; i++)
		if (i != 7)
			assert_int_equal(rte_ring_count(inbox(f, i)), 0);
	assert_int_equal(STAT(f, rx), 12);
	assert_int_equal(STAT(f, forwarded), 10);
	assert_int_equal(STAT(f, failed), 2);
	assert_int_equal(ROUTER_FORWARDED(f, f->router), 7);
	assert_int_equal(ROUTER_FORWARDED(f, f->pair), 3);
}

/* A burst whose first slot names no endpoint that can exist (the last
 * slot number, generation 0): counted bad, and the plain slot after it
 * is forwarded, by the general loop. */
static void test_plain_case_hostile_first(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *out = dp_out_lane(&f->d, f->a);
	struct shmr_pid nowhere = { UINT32_MAX, 0 };
	unsigned char slot[DP_SS];
	const uint64_t r3[] = { 3 };

	dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, nowhere, 1, 0, 0));
	dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 3, 0));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 2);
	inbox_is(f, 3, r3, 1);
	assert_int_equal(STAT(f, bad), 1);
	assert_int_equal(STAT(f, forwarded), 1);
}

/*
 * Round-robin in the plain case: each slot takes the next routee, across
 * a slot the general loop takes (high priority, refused here); and a pick
 * for a full inbox is taken back, so the sender is held there as for any
 * full inbox (the general loop picks that routee again), never sent on
 * to the next routee.
 */
static void test_plain_round_robin(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *out = dp_out_lane(&f->d, f->a);
	static unsigned char junk[LANE * DP_SS];
	unsigned char slot[DP_SS];
	struct shmr_msg *m;
	const uint64_t r0[] = { 0, 4 }, r1[] = { 1, 5 }, r2[] = { 2 };
	uint64_t seen = 0;
	unsigned got = 0;

	for (uint64_t k = 0; k < 6; k++) {
		m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->turns, 1, k, 0);
		if (k == 3)
			m->priority = SHMR_PRIO_HIGH;
		dp_put(out, m);
	}
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 6);
	inbox_is(f, 0, r0, 2);
	inbox_is(f, 1, r1, 2);
	inbox_is(f, 2, r2, 1);
	assert_int_equal(STAT(f, failed), 1);

	/* The next pick is route 2's: fill its inbox. */
	for (unsigned j = 0; j < LANE - 1; j++)
		dp_put(inbox(f, 2), dp_msg(slot, SHMR_KIND_SEND, f->a,
					   f->route[2], 9, 0, 0));
	for (uint64_t k = 12; k < 14; k++)
		dp_put(out, dp_msg(slot, SHMR_KIND_SEND, f->a, f->turns, 1, k,
				   0));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
	assert_int_equal(f->lc.nblocked, 1);
	assert_int_equal(rte_ring_count(inbox(f, 0)), 0);
	assert_int_equal(rte_ring_count(inbox(f, 1)), 0);
	assert_int_equal(rte_ring_count(out), 2);
	/* Room again: both go, once each. */
	assert_int_equal(dp_take(inbox(f, 2), junk, LANE), LANE - 1);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 2);
	for (unsigned i = 0; i < 3; i++) {
		unsigned n = dp_take(inbox(f, i), junk, LANE);

		for (unsigned j = 0; j < n; j++)
			seen |= 1ull << (dp_at(junk, j)->key - 12);
		got += n;
	}
	assert_int_equal(got, 2);
	assert_int_equal(seen, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fanout_batches, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fanout_full_route, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fanout_stream, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_round_holds_an_eighth,
						setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_plain_case_stops, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plain_case_hostile_first,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_round_robin, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
