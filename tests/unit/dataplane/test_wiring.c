/*
 * The routing features the forwarding function hands to its own machinery,
 * on a heap domain with two routing lcores and a clock the test sets: the
 * Broadcast envelope (every routee once, whatever the logic, also under
 * backpressure), scatter-gather and tail-chopping through the lane's reply
 * collector (first reply wins, late ones dropped and counted, the deadline,
 * the later tries, a reply that another lcore polled), and balancing (a
 * routee is handed a message only when it has none outstanding; a full
 * queue is backpressure; nothing is lost).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dp_test.h"

#define SS 128u /* slot size of the test domain */
#define LC 1u   /* the lcore that polls odd slots */
#define MS 1000000ull

static uint64_t g_now = 1000 * MS;

static uint64_t test_clock(void)
{
	return g_now;
}

struct fixture {
	struct dp_dom d;
	struct shmr_dp_lcore lc[2];
	struct shmr_dp_table *t;
	struct shmr_pid a, admin, w[3], b[2], e0;
	struct shmr_pid sg, tc, bal, rr, empty, x;
	unsigned ri_sg, ri_tc, ri_bal, ri_rr, ri_empty, ri_x;
};

static const char *const wname[3] = { "w0", "w1", "w2" };

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct shmr_dp_lcore *lcs[2];

	if (!f || dp_dom_init(&f->d, 2) < 0)
		return -1;
	g_now = 1000 * MS;
	dp_spec_begin(&f->d);
	/* Odd slots are polled by lcore 1, even ones by lcore 0. */
	f->a = dp_ep(&f->d, 3, 1, SHMR_EPK_CLIENT);
	f->admin = dp_ep(&f->d, 41, 1, SHMR_EPK_CLIENT);
	for (uint32_t i = 0; i < 3; i++)
		f->w[i] = dp_ep(&f->d, 5 + 2 * i, 1, SHMR_EPK_ROUTE);
	f->b[0] = dp_ep(&f->d, 21, 1, SHMR_EPK_ROUTE);
	f->b[1] = dp_ep(&f->d, 23, 1, SHMR_EPK_ROUTE);
	f->e0 = dp_ep(&f->d, 30, 1, SHMR_EPK_ROUTE);
	f->sg = dp_ep(&f->d, 50, 1, SHMR_EPK_ROUTER);
	f->tc = dp_ep(&f->d, 52, 1, SHMR_EPK_ROUTER);
	f->bal = dp_ep(&f->d, 54, 1, SHMR_EPK_ROUTER);
	f->rr = dp_ep(&f->d, 56, 1, SHMR_EPK_ROUTER);
	f->empty = dp_ep(&f->d, 58, 1, SHMR_EPK_ROUTER);
	f->x = dp_ep(&f->d, 60, 1, SHMR_EPK_ROUTER);

	/* sg: scatter-gather over its own routes w0..w2, within 100 ms. */
	f->ri_sg = dp_router(&f->d, "sg", f->sg, SHMR_BEH_SCATTER_GATHER);
	for (uint32_t i = 0; i < 3; i++)
		dp_route(&f->d, f->ri_sg, wname[i], f->w[i],
			 SHMR_ROUTE_RUNNING);
	dp_spec(&f->d)->routers[f->ri_sg].within_ms = 100;
	/* tc: tail-chopping over the same three by name (the registry),
	 * within 100 ms, one more every 10 ms. */
	f->ri_tc = dp_router(&f->d, "tc", f->tc, SHMR_BEH_TAIL_CHOPPING);
	for (uint32_t i = 0; i < 3; i++) {
		dp_hash(&f->d, f->ri_tc, wname[i]);
		dp_reg(&f->d, wname[i], f->w[i]);
	}
	dp_spec(&f->d)->routers[f->ri_tc].within_ms = 100;
	dp_spec(&f->d)->routers[f->ri_tc].interval_ms = 10;
	/* bal: a balancing pool of two. */
	f->ri_bal = dp_router(&f->d, "bal", f->bal, SHMR_BEH_BALANCING);
	dp_route(&f->d, f->ri_bal, "bal:0", f->b[0], SHMR_ROUTE_RUNNING);
	dp_route(&f->d, f->ri_bal, "bal:1", f->b[1], SHMR_ROUTE_RUNNING);
	/* rr: round-robin over w0, w1 and a router (sg, registered): the
	 * router takes part in the picks, never in a broadcast. */
	f->ri_rr = dp_router(&f->d, "rr", f->rr, SHMR_BEH_ROUND_ROBIN);
	dp_hash(&f->d, f->ri_rr, "w0");
	dp_hash(&f->d, f->ri_rr, "w1");
	dp_hash(&f->d, f->ri_rr, "sg");
	dp_reg(&f->d, "sg", f->sg);
	/* empty: scatter-gather with nobody taking part. */
	f->ri_empty = dp_router(&f->d, "empty", f->empty,
				SHMR_BEH_SCATTER_GATHER);
	dp_route(&f->d, f->ri_empty, "off", f->w[2], SHMR_ROUTE_DISABLED);
	dp_spec(&f->d)->routers[f->ri_empty].within_ms = 100;
	/* x: scatter-gather whose routee lcore 0 polls. */
	f->ri_x = dp_router(&f->d, "x", f->x, SHMR_BEH_SCATTER_GATHER);
	dp_route(&f->d, f->ri_x, "e0", f->e0, SHMR_ROUTE_RUNNING);
	dp_spec(&f->d)->routers[f->ri_x].within_ms = 100;
	dp_spec_end(&f->d);

	if (shmr_dp_table_build(&f->d.env, &f->t) < 0)
		return -1;
	for (uint32_t i = 0; i < 2; i++) {
		if (shmr_dp_lcore_init(&f->lc[i], &f->d.env, i) < 0)
			return -1;
		f->lc[i].clock_ns = test_clock;
		lcs[i] = &f->lc[i];
	}
	if (shmr_dp_lcores_link(lcs, 2) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	for (uint32_t i = 0; i < 2; i++)
		shmr_dp_lcore_fini(&f->lc[i]);
	shmr_dp_table_free(f->t);
	dp_dom_fini(&f->d);
	free(f);
	return 0;
}

static void rebuild(struct fixture *f)
{
	shmr_dp_table_free(f->t);
	assert_int_equal(shmr_dp_table_build(&f->d.env, &f->t), 0);
}

static void set_admin(struct fixture *f)
{
	atomic_store(&shmr_hdr(f->d.base)->admin_pid,
		     (uint64_t)f->admin.slot | (uint64_t)f->admin.gen << 32);
}

/* The shared lane helpers (dp_test.h), by the names used here. */
#define lane(f, p, i) dp_lane(&(f)->d, (p), (i))
#define out_lane(f, p) dp_out_lane(&(f)->d, (p))
#define put(r, m) dp_put_noted(&f->d, (r), (m))
#define take(r, out, max) dp_take((r), (out), (max))
#define at(buf, i) dp_at((buf), (i))

static uint64_t stat_of(struct fixture *f, uint32_t lcore, size_t off)
{
	return atomic_load((_Atomic uint64_t *)((char *)shmr_stats_of(
							f->d.base, lcore) +
						off));
}

/* A counter summed over both lcores. */
#define STAT(f, field)                                                     \
	(stat_of(f, 0, offsetof(struct shmr_lcore_stats, field)) +        \
	 stat_of(f, 1, offsetof(struct shmr_lcore_stats, field)))
#define RSTAT(f, arr, slot)                                                \
	(atomic_load(&shmr_ep_ctr_of((f)->d.base, 0, (slot))->arr) +        \
	 atomic_load(&shmr_ep_ctr_of((f)->d.base, 1, (slot))->arr))

static void assert_pid(struct shmr_pid p, struct shmr_pid q)
{
	assert_int_equal(p.slot, q.slot);
	assert_int_equal(p.gen, q.gen);
}

static unsigned poll1(struct fixture *f)
{
	return shmr_dp_poll_once_rcu(&f->lc[LC], f->t);
}

/* Routee @p w answers call @p call (as its worker would: to from, with
 * ref) with @p tag as the payload. */
static void answer(struct fixture *f, struct shmr_pid w,
		   const struct shmr_msg *call, const char *tag, int status)
{
	unsigned char slot[SS];
	struct shmr_msg *m = dp_msg(slot, SHMR_KIND_REPLY, w, call->from,
				    call->type, call->key, call->ref);

	m->status = status;
	m->len = (uint32_t)strlen(tag);
	memcpy(m->data, tag, m->len);
	put(out_lane(f, w), m);
}

/* ---- the Broadcast envelope ----------------------------------------- */

/* A send flagged SHMR_F_BROADCAST to a round-robin router reaches every
 * routee once, flag kept; the routee that is a router is left out.  Without
 * the flag the same router picks one. */
static void test_envelope_reaches_every_routee(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->rr, 7, 1, 1);
	m->flags = SHMR_F_BROADCAST;
	m->len = 2;
	memcpy(m->data, "hi", 2);
	put(out_lane(f, f->a), m);
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->rr, 7, 2, 2));
	assert_int_equal(poll1(f), 2);
	assert_int_equal(take(lane(f, f->w[0], LC), got, 64), 2);
	assert_int_equal(at(got, 0)->ref, 1);
	assert_int_equal(at(got, 0)->flags, SHMR_F_BROADCAST);
	assert_int_equal(at(got, 0)->hops, 1);
	assert_memory_equal(at(got, 0)->data, "hi", 2);
	assert_pid(at(got, 0)->from, f->a);
	assert_int_equal(at(got, 1)->ref, 2); /* round-robin's first pick */
	assert_int_equal(at(got, 1)->flags, 0);
	assert_int_equal(take(lane(f, f->w[1], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 1);
	assert_int_equal(rte_ring_count(lane(f, f->w[2], LC)), 0);
	assert_int_equal(RSTAT(f, router_forwarded, f->rr.slot), 3);
	assert_int_equal(STAT(f, failed), 0);
}

/* A full routee holds the envelope back; next round only the routees not
 * reached yet get it: exactly once each. */
static void test_envelope_exactly_once_under_backpressure(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	for (unsigned i = 0; i < 63; i++)
		put(lane(f, f->w[1], LC),
		    dp_msg(slot, SHMR_KIND_SEND, f->a, f->w[1], 0, 0, 100 + i));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->rr, 7, 0, 1);
	m->flags = SHMR_F_BROADCAST;
	put(out_lane(f, f->a), m);
	assert_int_equal(poll1(f), 0); /* held back */
	assert_int_equal(f->lc[LC].nblocked, 1);
	assert_int_equal(rte_ring_count(out_lane(f, f->a)), 1);
	assert_int_equal(take(lane(f, f->w[0], LC), got, 64), 1);
	assert_int_equal(take(lane(f, f->w[1], LC), got, 64), 63);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(rte_ring_count(lane(f, f->w[0], LC)), 0);
	assert_int_equal(take(lane(f, f->w[1], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 1);
	assert_int_equal(RSTAT(f, router_forwarded, f->rr.slot), 2);
}

/* ---- scatter-gather --------------------------------------------------- */

/* The call reaches every routee from the router, with a collector ref;
 * the first reply reaches the caller with its own ref and the routee's
 * payload; the later ones are dropped and counted as discarded. */
static void test_scatter_gather_first_reply_wins(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], calls[3][SS], got[64 * SS];
	struct shmr_msg *m;

	m = dp_msg(slot, SHMR_KIND_CALL, f->a, f->sg, 4, 9, 77);
	m->len = 3;
	memcpy(m->data, "ask", 3);
	put(out_lane(f, f->a), m);
	assert_int_equal(poll1(f), 1);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(take(lane(f, f->w[i], LC), calls[i], 1), 1);
		m = (struct shmr_msg *)calls[i];
		assert_int_equal(m->kind, SHMR_KIND_CALL);
		assert_pid(m->from, f->sg);
		assert_pid(m->to, f->sg);
		assert_int_equal(m->type, 4);
		assert_int_equal(m->key, 9);
		assert_int_equal(m->hops, 1);
		assert_memory_equal(m->data, "ask", 3);
		assert_int_equal(shmr_dp_collect_ref_owner(m->ref), LC);
		assert_int_equal(m->ref, ((struct shmr_msg *)calls[0])->ref);
	}
	assert_int_equal(f->lc[LC].coll.nlive, 1);
	assert_int_equal(RSTAT(f, router_forwarded, f->sg.slot), 3);

	answer(f, f->w[1], (struct shmr_msg *)calls[1], "w1", 0);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	m = at(got, 0);
	assert_int_equal(m->kind, SHMR_KIND_REPLY);
	assert_int_equal(m->ref, 77);
	assert_pid(m->to, f->a);
	assert_pid(m->from, f->w[1]);
	assert_int_equal(m->status, 0);
	assert_int_equal(m->len, 2);
	assert_memory_equal(m->data, "w1", 2);
	assert_int_equal(f->lc[LC].coll.nlive, 0);

	/* Later replies (an error reply too) reach nobody. */
	answer(f, f->w[0], (struct shmr_msg *)calls[0], "w0", 0);
	answer(f, f->w[2], (struct shmr_msg *)calls[2], "w2",
	       -SHMR_E_DISCARDED);
	assert_int_equal(poll1(f), 2);
	assert_int_equal(rte_ring_count(lane(f, f->a, LC)), 0);
	assert_int_equal(RSTAT(f, router_discarded, f->sg.slot), 2);
	assert_int_equal(STAT(f, discarded), 2);
	assert_int_equal(STAT(f, failed), 0);
}

/* An error reply counts as the first reply. */
static void test_scatter_gather_error_reply_counts(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], call[SS], got[64 * SS];

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->sg, 4, 0, 5));
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->w[2], LC), call, 1), 1);
	answer(f, f->w[2], (struct shmr_msg *)call, "", -SHMR_E_BUSY);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 5);
	assert_int_equal(at(got, 0)->status, -SHMR_E_BUSY);
}

/* No reply within `within`: the caller gets SHMR_E_TIMEOUT from the
 * router, at the deadline and not before; an idle lcore's sleep ends by
 * then; a reply after it is dropped. */
static void test_scatter_gather_timeout(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_lcore *lc = &f->lc[LC];
	unsigned char slot[SS], call[SS], got[64 * SS];
	struct shmr_msg *m;

	m = dp_msg(slot, SHMR_KIND_CALL, f->a, f->sg, 4, 3, 78);
	put(out_lane(f, f->a), m);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->w[0], LC), call, 1), 1);
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 100);
	g_now += 40 * MS + 1;
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 60);
	assert_int_equal(shmr_dp_sleep_ms(lc, 20), 20);
	g_now += 60 * MS - 2;
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 1);
	poll1(f);
	assert_int_equal(rte_ring_count(lane(f, f->a, LC)), 0);
	g_now += 1;
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 0); /* due: no sleep */
	poll1(f);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	m = at(got, 0);
	assert_int_equal(m->kind, SHMR_KIND_REPLY);
	assert_int_equal(m->status, -SHMR_E_TIMEOUT);
	assert_int_equal(m->ref, 78);
	assert_int_equal(m->type, 4);
	assert_int_equal(m->len, 0);
	assert_pid(m->from, f->sg);
	assert_pid(m->to, f->a);
	assert_int_equal(RSTAT(f, router_failed, f->sg.slot), 1);
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 100);

	answer(f, f->w[0], (struct shmr_msg *)call, "late", 0);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(rte_ring_count(lane(f, f->a, LC)), 0);
	assert_int_equal(RSTAT(f, router_discarded, f->sg.slot), 1);
}

/* No routee taking part: SHMR_E_NO_ROUTEES at once, for a call and (as a
 * dead letter) for a send. */
static void test_scatter_gather_no_routees(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];

	set_admin(f);
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->empty, 4, 0, 1));
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->empty, 4, 0, 2));
	assert_int_equal(poll1(f), 2);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NO_ROUTEES);
	assert_int_equal(at(got, 0)->ref, 1);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NO_ROUTEES);
	assert_int_equal(f->lc[LC].coll.nlive, 0);
}

/* One full routee holds the whole call back (nobody gets it, nothing is
 * started); once it has room, all three get it once. */
static void test_scatter_gather_backpressure(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];

	for (unsigned i = 0; i < 63; i++)
		put(lane(f, f->w[2], LC),
		    dp_msg(slot, SHMR_KIND_SEND, f->a, f->w[2], 0, 0, 100 + i));
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->sg, 4, 0, 1));
	assert_int_equal(poll1(f), 0);
	assert_int_equal(f->lc[LC].coll.nlive, 0);
	assert_int_equal(rte_ring_count(lane(f, f->w[0], LC)), 0);
	assert_int_equal(rte_ring_count(lane(f, f->w[1], LC)), 0);
	assert_int_equal(take(lane(f, f->w[2], LC), got, 64), 63);
	assert_int_equal(poll1(f), 1);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(take(lane(f, f->w[i], LC), got, 64), 1);
	assert_int_equal(f->lc[LC].coll.nlive, 1);
	assert_int_equal(RSTAT(f, router_forwarded, f->sg.slot), 3);
}

/* A send to a scatter-gather router goes to every routee. */
static void test_scatter_gather_send_broadcasts(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->sg, 4, 0, 1));
	assert_int_equal(poll1(f), 1);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(take(lane(f, f->w[i], LC), got, 64), 1);
		assert_pid(at(got, 0)->from, f->a);
		assert_int_equal(at(got, 0)->ref, 1);
	}
	assert_int_equal(f->lc[LC].coll.nlive, 0);
}

/* A reply polled by the other lcore crosses to the lcore that collects
 * it, and reaches the caller from there. */
static void test_reply_polled_by_another_lcore(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], call[SS], got[64 * SS];

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->x, 4, 0, 31));
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->e0, LC), call, 1), 1);
	answer(f, f->e0, (struct shmr_msg *)call, "e0", 0);
	assert_int_equal(shmr_dp_has_work_rcu(&f->lc[LC], f->t), 0);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc[0], f->t), 1);
	assert_int_equal(rte_ring_count(lane(f, f->a, 0)), 0);
	assert_int_equal(shmr_dp_has_work_rcu(&f->lc[LC], f->t), 1);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 31);
	assert_memory_equal(at(got, 0)->data, "e0", 2);
	assert_int_equal(shmr_dp_has_work_rcu(&f->lc[LC], f->t), 0);
}

/* ---- tail-chopping ---------------------------------------------------- */

/* Which routee's lane holds a call; -1 when none, fails when several. */
static int who_got(struct fixture *f, unsigned char *call)
{
	int who = -1;

	for (int i = 0; i < 3; i++) {
		unsigned n = take(lane(f, f->w[i], LC), call, 1);

		if (n == 0)
			continue;
		assert_int_equal(who, -1);
		who = i;
	}
	return who;
}

/* One routee first, then one more not tried yet every interval, until
 * every routee has it; the first reply then wins. */
static void test_tail_chopping_tries_one_more_per_interval(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], call[SS], got[64 * SS];
	int first, second, third;

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->tc, 4, 0, 41));
	assert_int_equal(poll1(f), 1);
	first = who_got(f, call);
	assert_true(first >= 0);
	assert_pid(((struct shmr_msg *)call)->from, f->tc);
	assert_int_equal(shmr_dp_sleep_ms(&f->lc[LC], 100), 10);
	g_now += 10 * MS - 1;
	poll1(f);
	assert_int_equal(who_got(f, call), -1);
	g_now += 1;
	poll1(f);
	second = who_got(f, call);
	assert_true(second >= 0 && second != first);
	g_now += 10 * MS;
	poll1(f);
	third = who_got(f, call);
	assert_true(third >= 0 && third != first && third != second);
	g_now += 10 * MS;
	poll1(f);
	assert_int_equal(who_got(f, call), -1); /* nobody left to try */
	assert_int_equal(RSTAT(f, router_forwarded, f->tc.slot), 3);

	answer(f, f->w[second], (struct shmr_msg *)call, "2nd", 0);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 41);
	assert_pid(at(got, 0)->from, f->w[second]);
	assert_int_equal(f->lc[LC].coll.nlive, 0);
}

/* A reply before the next interval cancels the later tries. */
static void test_tail_chopping_reply_cancels(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], call[SS], got[64 * SS];
	int first;

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->tc, 4, 0, 42));
	assert_int_equal(poll1(f), 1);
	first = who_got(f, call);
	assert_true(first >= 0);
	answer(f, f->w[first], (struct shmr_msg *)call, "1st", 0);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	g_now += 50 * MS;
	poll1(f);
	assert_int_equal(who_got(f, call), -1);
	assert_int_equal(shmr_dp_sleep_ms(&f->lc[LC], 100), 100);
}

/* A send to a tail-chopping router goes to one routee. */
static void test_tail_chopping_send_goes_to_one(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[SS];

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->tc, 4, 0, 1));
	assert_int_equal(poll1(f), 1);
	assert_true(who_got(f, got) >= 0);
	assert_pid(((struct shmr_msg *)got)->from, f->a);
	assert_int_equal(f->lc[LC].coll.nlive, 0);
}

/* ---- balancing -------------------------------------------------------- */

/* Messages wait in the queue and go to a routee only when it holds none
 * from this lcore (From and Ref unchanged); a routee that finishes gets
 * the next one. */
static void test_balancing_hands_to_free_routees(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_lcore *lc = &f->lc[LC];
	unsigned char slot[SS], got[64 * SS];

	for (unsigned i = 0; i < 5; i++)
		put(out_lane(f, f->a),
		    dp_msg(slot, i == 4 ? SHMR_KIND_CALL : SHMR_KIND_SEND,
			   f->a, f->bal, 1, i, 10 + i));
	assert_int_equal(poll1(f), 5 + 2); /* taken in, two handed out */
	assert_int_equal(rte_ring_count(lane(f, f->b[0], LC)), 1);
	assert_int_equal(rte_ring_count(lane(f, f->b[1], LC)), 1);
	assert_int_equal(shmr_dp_balance_count(&lc->bal[f->ri_bal].q), 3);
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 1);
	assert_int_equal(poll1(f), 0); /* both busy */
	assert_int_equal(rte_ring_count(lane(f, f->b[0], LC)), 1);

	/* b1 is done with its message: it gets the next one. */
	assert_int_equal(take(lane(f, f->b[1], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->key, 1);
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->b[1], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->key, 2);
	assert_int_equal(take(lane(f, f->b[0], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->key, 0);
	assert_int_equal(poll1(f), 2);
	assert_int_equal(take(lane(f, f->b[0], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->key, 3);
	assert_int_equal(take(lane(f, f->b[1], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->kind, SHMR_KIND_CALL);
	assert_int_equal(at(got, 0)->ref, 14);
	assert_pid(at(got, 0)->from, f->a);
	assert_int_equal(at(got, 0)->hops, 1);
	assert_int_equal(lc->bal_active, 0);
	assert_int_equal(shmr_dp_sleep_ms(lc, 100), 100);
	assert_int_equal(RSTAT(f, router_forwarded, f->bal.slot), 5);
	assert_int_equal(STAT(f, forwarded), 5);
}

/* A full queue leaves the rest in the sender's lane (backpressure); as
 * routees free up, everything goes out, each message exactly once. */
static void test_balancing_queue_full_loses_nothing(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_lcore *lc = &f->lc[LC];
	unsigned char slot[SS], got[64 * SS];
	unsigned seen[80] = { 0 }, sent = 0, rounds = 0;

	/* 63 fill the sender's lane; two go out, 61 wait. */
	for (; sent < 63; sent++)
		put(out_lane(f, f->a),
		    dp_msg(slot, SHMR_KIND_SEND, f->a, f->bal, 1, sent, 0));
	poll1(f);
	poll1(f);
	assert_int_equal(shmr_dp_balance_count(&lc->bal[f->ri_bal].q), 61);
	/* 10 more: 3 fit the queue (64), 7 stay in the lane. */
	for (; sent < 73; sent++)
		put(out_lane(f, f->a),
		    dp_msg(slot, SHMR_KIND_SEND, f->a, f->bal, 1, sent, 0));
	poll1(f);
	assert_int_equal(shmr_dp_balance_count(&lc->bal[f->ri_bal].q), 64);
	assert_int_equal(rte_ring_count(out_lane(f, f->a)), 7);
	assert_int_equal(lc->nblocked, 1);
	/* Workers take one message at a time. */
	while (rounds++ < 1000) {
		unsigned took = 0;

		for (unsigned w = 0; w < 2; w++) {
			unsigned n = take(lane(f, f->b[w], LC), got, 64);

			assert_true(n <= 1);
			for (unsigned i = 0; i < n; i++)
				seen[at(got, i)->key]++;
			took += n;
		}
		poll1(f);
		if (!took && lc->bal_active == 0 &&
		    rte_ring_count(out_lane(f, f->a)) == 0)
			break;
	}
	for (unsigned k = 0; k < 73; k++)
		assert_int_equal(seen[k], 1);
	assert_int_equal(RSTAT(f, router_forwarded, f->bal.slot), 73);
}

/* A routee without a worker gets nothing (what it had waits for its
 * replacement) and a worker is asked for; with no routee left the queue
 * fails: a send as a dead letter, a call with its error reply. */
static void test_balancing_dead_routee_and_none_left(void **state)
{
	struct fixture *f = *state;
	struct shmr_spec_route *sq = shmr_routes_of(f->d.base, f->ri_bal);
	unsigned char slot[SS], got[64 * SS];

	set_admin(f);
	dp_spec_begin(&f->d);
	sq[1].state = SHMR_ROUTE_DEAD;
	dp_spec_end(&f->d);
	rebuild(f);
	for (unsigned i = 0; i < 3; i++)
		put(out_lane(f, f->a),
		    dp_msg(slot, i == 2 ? SHMR_KIND_CALL : SHMR_KIND_SEND,
			   f->a, f->bal, 1, i, 20 + i));
	poll1(f);
	assert_int_equal(rte_ring_count(lane(f, f->b[0], LC)), 1);
	assert_int_equal(rte_ring_count(lane(f, f->b[1], LC)), 0);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->flags, SHMR_F_WANT_WORKER);
	assert_pid(at(got, 0)->to, f->b[1]);

	dp_spec_begin(&f->d);
	sq[0].state = SHMR_ROUTE_DISABLED;
	sq[1].state = SHMR_ROUTE_DISABLED;
	dp_spec_end(&f->d);
	rebuild(f);
	poll1(f);
	assert_int_equal(f->lc[LC].bal_active, 0);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->key, 1);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NO_ROUTEES);
	assert_true(at(got, 0)->flags & SHMR_F_ROUTE_FAILED);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 22);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NO_ROUTEES);
	assert_int_equal(RSTAT(f, router_failed, f->bal.slot), 2);
	/* New messages fail at once. */
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_CALL, f->a, f->bal, 1, 0, 23));
	assert_int_equal(poll1(f), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NO_ROUTEES);
}

/* A Broadcast envelope to a balancing pool bypasses the queue: each
 * routee gets it once, whatever it holds (and it counts as outstanding). */
static void test_balancing_envelope(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->bal, 1, 0, 1));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->bal, SHMR_TYPE_POISON_PILL,
		   0, 2);
	m->flags = SHMR_F_BROADCAST;
	put(out_lane(f, f->a), m);
	poll1(f);
	for (unsigned w = 0; w < 2; w++) {
		assert_int_equal(take(lane(f, f->b[w], LC), got, 64), 1);
		assert_int_equal(at(got, 0)->ref, 2);
		assert_int_equal(at(got, 0)->type, SHMR_TYPE_POISON_PILL);
	}
	poll1(f);
	assert_int_equal(take(lane(f, f->b[0], LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 1);
	assert_int_equal(rte_ring_count(lane(f, f->b[1], LC)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_envelope_reaches_every_routee),
		T(test_envelope_exactly_once_under_backpressure),
		T(test_scatter_gather_first_reply_wins),
		T(test_scatter_gather_error_reply_counts),
		T(test_scatter_gather_timeout),
		T(test_scatter_gather_no_routees),
		T(test_scatter_gather_backpressure),
		T(test_scatter_gather_send_broadcasts),
		T(test_reply_polled_by_another_lcore),
		T(test_tail_chopping_tries_one_more_per_interval),
		T(test_tail_chopping_reply_cancels),
		T(test_tail_chopping_send_goes_to_one),
		T(test_balancing_hands_to_free_routees),
		T(test_balancing_queue_full_loses_nothing),
		T(test_balancing_dead_routee_and_none_left),
		T(test_balancing_envelope),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
