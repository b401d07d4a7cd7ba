/*
 * The forwarding function on a heap domain with two routing lcores: which
 * inbound lanes get which slots (From and Ref unchanged), what is counted,
 * error replies to callers, backpressure (nothing lost, nothing counted
 * twice), and corrupted rings quarantined instead of crashing.
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
#define LC 1u   /* the lcore under test: polls odd slots */

struct fixture {
	struct dp_dom d;
	struct shmr_dp_lcore lc;
	struct shmr_dp_table *t;
	struct shmr_pid a, c, router, work, b, admin;
	unsigned ri;
};

static int setup_lanes(void **state, uint32_t lane)
{
	struct fixture *f = calloc(1, sizeof(*f));
	unsigned ri;

	if (!f || dp_dom_init_lane(&f->d, 2, lane) < 0)
		return -1;
	dp_spec_begin(&f->d);
	f->a = dp_ep(&f->d, 3, 1, SHMR_EPK_CLIENT);     /* lcore 1 */
	f->c = dp_ep(&f->d, 9, 1, SHMR_EPK_CLIENT);     /* lcore 1 */
	f->router = dp_ep(&f->d, 2, 1, SHMR_EPK_ROUTER);
	f->work = dp_ep(&f->d, 5, 2, SHMR_EPK_ROUTE);
	f->b = dp_ep(&f->d, 7, 1, SHMR_EPK_CLIENT);
	/* The control plane's admin endpoint; published only by the admin
	 * tests (set_admin()). */
	f->admin = dp_ep(&f->d, 11, 1, SHMR_EPK_CLIENT);
	ri = dp_router(&f->d, "events", f->router, SHMR_BEH_TYPE);
	dp_route(&f->d, ri, "work", f->work, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "off", f->b, SHMR_ROUTE_DISABLED);
	dp_type(&f->d, ri, 1, "work");
	dp_type(&f->d, ri, 2, "off");
	dp_type(&f->d, ri, 3, "nosuch");
	dp_spec_end(&f->d);
	f->ri = ri;
	if (shmr_dp_table_build(&f->d.env, &f->t) < 0 ||
	    shmr_dp_lcore_init(&f->lc, &f->d.env, LC) < 0)
		return -1;
	*state = f;
	return 0;
}

/* Lanes of 64 entries (dp_dom_init()). */
static int setup(void **state)
{
	return setup_lanes(state, 64);
}

/* Lanes that hold more than a burst of the lcore (SHMR_DP_BURST). */
static int setup_wide(void **state)
{
	return setup_lanes(state, 4 * SHMR_DP_BURST);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	shmr_dp_lcore_fini(&f->lc);
	shmr_dp_table_free(f->t);
	dp_dom_fini(&f->d);
	free(f);
	return 0;
}

/* The shared lane helpers (dp_test.h), by the names used here. */
#define lane(f, p, i) dp_lane(&(f)->d, (p), (i))
#define out_lane(f, p) dp_out_lane(&(f)->d, (p))
#define poll_of(f, p) dp_poll_of((f)->t, (p))
#define put(r, m) dp_put_noted(&f->d, (r), (m))
#define take(r, out, max) dp_take((r), (out), (max))
#define at(buf, i) dp_at((buf), (i))

static uint64_t stat(struct fixture *f, uint32_t lcore, size_t off)
{
	return atomic_load((_Atomic uint64_t *)((char *)shmr_stats_of(
							f->d.base, lcore) +
						off));
}

#define STAT(f, field) stat(f, LC, offsetof(struct shmr_lcore_stats, field))

static void assert_pid(struct shmr_pid p, struct shmr_pid q)
{
	assert_int_equal(p.slot, q.slot);
	assert_int_equal(p.gen, q.gen);
}

/* Every kind of slot in one burst. */
static void test_forward_mixed(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_pid stale = { f->b.slot, 5 };
	struct shmr_msg *m;
	unsigned n;

	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 7, 100);
	m->len = 5;
	memcpy(m->data, "hello", 5);
	put(src, m); /* 0: routed to work */
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 101);
	m->len = SS - SHMR_HDR_SIZE + 1;
	put(src, m); /* 1: bad length */
	m = dp_msg(slot, 9, f->a, f->router, 1, 0, 102);
	put(src, m); /* 2: bad kind */
	m = dp_msg(slot, SHMR_KIND_SEND, (struct shmr_pid){ 3, 2 }, f->b, 1,
		   0, 103);
	put(src, m); /* 3: spoofed sender */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 4, 0, 104));
	/* 4: direct */
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 42, 0, 105));
	/* 5: call discarded (unmapped type) */
	put(src, dp_msg(slot, SHMR_KIND_REPLY, f->a, f->b, 4, 0, 106));
	/* 6: a reply, direct */
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 2, 0, 107));
	/* 7: call to a disabled route */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 3, 0, 108));
	/* 8: send to an unknown name */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, stale, 1, 0, 109));
	/* 9: stale target */
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, stale, 1, 0, 110));
	/* 10: call to a stale target */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a,
			(struct shmr_pid){ shmr_hdr(f->d.base)->max_endpoints, 1 }, 1, 0, 111));
	/* 11: target out of range */
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 1, 0, 112);
	m->priority = 7;
	put(src, m); /* 12: bad priority */

	n = shmr_dp_forward_burst_rcu(&f->lc, f->t, poll_of(f, f->a), src);
	assert_int_equal(n, 13);
	assert_int_equal(rte_ring_count(src), 0);
	assert_int_equal(src->cons.head, src->cons.tail);

	/* work got the routed send on lane LC only, untouched but hops. */
	assert_int_equal(rte_ring_count(lane(f, f->work, 0)), 0);
	assert_int_equal(take(lane(f, f->work, LC), got, 64), 1);
	m = at(got, 0);
	assert_int_equal(m->kind, SHMR_KIND_SEND);
	assert_pid(m->from, f->a);
	assert_pid(m->to, f->router);
	assert_int_equal(m->ref, 100);
	assert_int_equal(m->key, 7);
	assert_int_equal(m->type, 1);
	assert_int_equal(m->hops, 1);
	assert_int_equal(m->len, 5);
	assert_memory_equal(m->data, "hello", 5);

	/* b got the direct send and the reply, in order. */
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 2);
	assert_int_equal(at(got, 0)->ref, 104);
	assert_int_equal(at(got, 0)->hops, 0);
	assert_pid(at(got, 0)->from, f->a);
	assert_int_equal(at(got, 1)->ref, 106);
	assert_int_equal(at(got, 1)->kind, SHMR_KIND_REPLY);

	/* a got one error reply per refused call, with its ref. */
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(at(got, i)->kind, SHMR_KIND_REPLY);
		assert_pid(at(got, i)->to, f->a);
		assert_int_equal(at(got, i)->len, 0);
	}
	assert_int_equal(at(got, 0)->ref, 105);
	assert_int_equal(at(got, 0)->status, -SHMR_E_DISCARDED);
	assert_pid(at(got, 0)->from, f->router);
	assert_int_equal(at(got, 1)->ref, 107);
	assert_int_equal(at(got, 1)->status, -SHMR_E_DISABLED);
	assert_int_equal(at(got, 2)->ref, 110);
	assert_int_equal(at(got, 2)->status, -SHMR_E_PROCESS_UNKNOWN);
	assert_pid(at(got, 2)->from, stale);

	assert_int_equal(STAT(f, rx), 13);
	assert_int_equal(STAT(f, bad), 5);
	assert_int_equal(STAT(f, forwarded), 3);
	assert_int_equal(STAT(f, discarded), 1);
	assert_int_equal(STAT(f, failed), 4);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->router.slot)->router_forwarded),
			 1);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->router.slot)->router_discarded),
			 1);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->router.slot)->router_failed), 2);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->work.slot)->ep_delivered), 1);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->b.slot)->ep_delivered), 2);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->a.slot)->ep_delivered), 3);
	assert_int_equal(
		atomic_load(&shmr_ep_at(f->d.base, f->a.slot)->bad_slots), 5);
	/* The other lcore's counters are its own. */
	assert_int_equal(stat(f, 0, offsetof(struct shmr_lcore_stats, rx)),
			 0);
}

/* A full target lane stops the burst; the rest waits in the source. */
static void test_backpressure(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	struct rte_ring *dst = lane(f, f->work, LC);
	struct shmr_dp_poll *p = poll_of(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	for (unsigned i = 0; i < 60; i++)
		put(dst, dp_msg(slot, SHMR_KIND_SEND, f->b, f->work, 0, 1000 + i,
				0));
	for (uint64_t k = 0; k < 10; k++)
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, k,
				k));

	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 3);
	assert_true(p->blocked);
	assert_int_equal(rte_ring_count(dst), 63);
	assert_int_equal(rte_ring_count(src), 7);
	assert_int_equal(STAT(f, forwarded), 3);
	assert_int_equal(STAT(f, rx), 3);
	/* Nothing fits: nothing moves, nothing is counted. */
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 0);
	assert_int_equal(rte_ring_count(src), 7);
	assert_int_equal(STAT(f, rx), 3);

	assert_int_equal(take(dst, got, 64), 63);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(at(got, 60 + i)->key, i);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 7);
	assert_int_equal(take(dst, got, 64), 7);
	for (unsigned i = 0; i < 7; i++) {
		m = at(got, i);
		assert_int_equal(m->key, 3 + i);
		assert_int_equal(m->ref, 3 + i);
		assert_pid(m->from, f->a);
	}
	assert_int_equal(rte_ring_count(src), 0);
	assert_int_equal(STAT(f, forwarded), 10);
	assert_int_equal(STAT(f, rx), 10);
}

/* A bad slot behind a held-back one is counted once, when handled. */
static void test_backpressure_counts_once(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	struct rte_ring *dst = lane(f, f->b, LC);
	struct shmr_dp_poll *p = poll_of(f, f->a);
	unsigned char slot[SS], got[64 * SS];

	for (unsigned i = 0; i < 63; i++)
		put(dst, dp_msg(slot, SHMR_KIND_SEND, f->c, f->b, 0, i, 0));
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 1, 1));
	put(src, dp_msg(slot, 0, f->a, f->b, 0, 2, 2)); /* bad kind */
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 42, 3, 3));

	for (int i = 0; i < 3; i++)
		assert_int_equal(
			shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 0);
	assert_int_equal(STAT(f, bad), 0);
	assert_int_equal(STAT(f, discarded), 0);
	assert_int_equal(take(dst, got, 64), 63);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 3);
	assert_int_equal(STAT(f, bad), 1);
	assert_int_equal(STAT(f, discarded), 1);
	assert_int_equal(STAT(f, forwarded), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 3);
}

/* An error reply waits for room in the caller's own lane. */
static void test_reply_backpressure(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	struct rte_ring *mine = lane(f, f->a, LC);
	struct shmr_dp_poll *p = poll_of(f, f->a);
	unsigned char slot[SS], got[64 * SS];

	for (unsigned i = 0; i < 63; i++)
		put(mine, dp_msg(slot, SHMR_KIND_SEND, f->c, f->a, 0, i, 0));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 42, 0, 77));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 0);
	assert_int_equal(rte_ring_count(src), 1);
	assert_int_equal(take(mine, got, 64), 63);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 1);
	assert_int_equal(take(mine, got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 77);
	assert_int_equal(at(got, 0)->status, -SHMR_E_DISCARDED);
}

/* A corrupted outbound ring quarantines its endpoint; others go on. */
static void test_corrupt_source(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	struct rte_ring *csrc = out_lane(f, f->c);
	unsigned char slot[SS], got[64 * SS];
	uint32_t mask = src->mask;

	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 1, 1));
	put(csrc, dp_msg(slot, SHMR_KIND_SEND, f->c, f->b, 0, 2, 2));
	src->mask = 0x12345; /* a peer scribbled on the geometry */

	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_true(poll_of(f, f->a)->quarantined);
	assert_int_equal(
		atomic_load(&shmr_ep_at(f->d.base, f->a.slot)->quarantined), 1);
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 2);
	/* Skipped from now on, even once it looks fine again... */
	src->mask = mask;
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
	assert_false(shmr_dp_has_work_rcu(&f->lc, f->t));

	/* A producer tail scribbled far ahead is caught too. */
	struct shmr_dp_poll *pc = poll_of(f, f->c);

	csrc->prod.tail += 1000;
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
	assert_true(pc->quarantined);
	csrc->prod.tail -= 1000;

	/* ...until a rebuild finds its lanes sound. */
	shmr_dp_table_free(f->t);
	assert_int_equal(shmr_dp_table_build(&f->d.env, &f->t), 0);
	assert_false(poll_of(f, f->a)->quarantined);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 1);
}

/* A corrupted inbound ring fails what was meant for it. */
static void test_corrupt_target(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	struct rte_ring *dst = lane(f, f->b, LC);
	unsigned char slot[SS], got[64 * SS];

	dst->capacity = 1000000;
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 1, 1));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->b, 0, 2, 2));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 2);
	assert_int_equal(STAT(f, failed), 2);
	assert_int_equal(
		atomic_load(&shmr_ep_at(f->d.base, f->b.slot)->quarantined), 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 2);
	assert_int_equal(at(got, 0)->status, -SHMR_E_PROCESS_UNKNOWN);
	dst->capacity = 63;
}

/* High and max priority to a router are the admin path: not routed
 * (without an admin endpoint they fail as not allowed).  The high lane is
 * served before the normal one. */
static void test_priority(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *hi = lane(f, f->a, SHMR_LANE_OUT_HIGH(2));
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 1));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 2);
	m->priority = SHMR_PRIO_HIGH;
	put(hi, m);
	m = dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 0, 3);
	m->priority = SHMR_PRIO_MAX;
	put(hi, m);
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 4);
	m->priority = SHMR_PRIO_HIGH;
	put(hi, m);

	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 4);
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 2);
	assert_int_equal(at(got, 0)->ref, 4);
	assert_int_equal(at(got, 0)->priority, SHMR_PRIO_HIGH);
	assert_int_equal(at(got, 1)->ref, 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 3);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NOT_ALLOWED);
	assert_int_equal(STAT(f, failed), 2);
	assert_int_equal(STAT(f, forwarded), 2);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 0);
}

static void set_admin(struct fixture *f)
{
	atomic_store(&shmr_hdr(f->d.base)->admin_pid,
		     (uint64_t)f->admin.slot | (uint64_t)f->admin.gen << 32);
}

/* With an admin endpoint, high and max priority to a router reach it
 * unchanged (From, Ref, payload); direct high-priority sends are not
 * affected; no error reply, nothing counted failed. */
static void test_admin_priority(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *hi = lane(f, f->a, SHMR_LANE_OUT_HIGH(2));
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	set_admin(f);
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 5, 2);
	m->priority = SHMR_PRIO_HIGH;
	m->len = 3;
	memcpy(m->data, "cmd", 3);
	put(hi, m);
	m = dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 0, 3);
	m->priority = SHMR_PRIO_MAX;
	put(hi, m);
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 4);
	m->priority = SHMR_PRIO_HIGH;
	put(hi, m);

	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 3);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 2);
	m = at(got, 0);
	assert_int_equal(m->kind, SHMR_KIND_SEND);
	assert_int_equal(m->priority, SHMR_PRIO_HIGH);
	assert_int_equal(m->flags, 0);
	assert_int_equal(m->status, 0);
	assert_int_equal(m->hops, 0);
	assert_pid(m->from, f->a);
	assert_pid(m->to, f->router);
	assert_int_equal(m->ref, 2);
	assert_int_equal(m->key, 5);
	assert_int_equal(m->len, 3);
	assert_memory_equal(m->data, "cmd", 3);
	m = at(got, 1);
	assert_int_equal(m->kind, SHMR_KIND_CALL);
	assert_int_equal(m->ref, 3);
	assert_pid(m->from, f->a);
	assert_pid(m->to, f->router);
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 4);
	assert_int_equal(rte_ring_count(lane(f, f->a, LC)), 0);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 0);
	assert_int_equal(STAT(f, admin), 2);
	assert_int_equal(STAT(f, failed), 0);
	assert_int_equal(STAT(f, admin_dropped), 0);
}

/* A send that fails routing becomes a MessageRouteFailed on the admin
 * endpoint: the original slot, flagged, status the reason, the chosen name
 * after the payload when it fits.  A failed call gets its error reply
 * only. */
static void test_admin_route_failed(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	set_admin(f);
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 3, 9, 20);
	m->len = 3;
	memcpy(m->data, "abc", 3);
	put(src, m); /* unknown name */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 2, 0, 21));
	/* disabled route */
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 3, 0, 22);
	m->len = SS - SHMR_HDR_SIZE;
	memset(m->data, 'z', m->len);
	put(src, m); /* no room for the name */
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 3, 0, 23));
	/* a call: error reply */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 24));
	/* routed */

	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 5);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 3);
	m = at(got, 0);
	assert_int_equal(m->kind, SHMR_KIND_SEND);
	assert_int_equal(m->flags, SHMR_F_ROUTE_FAILED | SHMR_F_ROUTE_NAME);
	assert_int_equal(m->status, -SHMR_E_PROCESS_UNKNOWN);
	assert_pid(m->from, f->a);
	assert_pid(m->to, f->router);
	assert_int_equal(m->type, 3);
	assert_int_equal(m->key, 9);
	assert_int_equal(m->ref, 20);
	assert_int_equal(m->len, 3);
	assert_memory_equal(m->data, "abc", 3);
	assert_string_equal((const char *)m->data + 3, "nosuch");
	m = at(got, 1);
	assert_int_equal(m->status, -SHMR_E_DISABLED);
	assert_string_equal((const char *)m->data + m->len, "off");
	m = at(got, 2);
	assert_int_equal(m->flags, SHMR_F_ROUTE_FAILED);
	assert_int_equal(m->len, SS - SHMR_HDR_SIZE);
	assert_int_equal(m->data[0], 'z');

	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->kind, SHMR_KIND_REPLY);
	assert_int_equal(at(got, 0)->ref, 23);
	assert_int_equal(at(got, 0)->status, -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 1);

	assert_int_equal(STAT(f, failed), 4);
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->router.slot)->router_failed), 4);
	assert_int_equal(STAT(f, forwarded), 1);
	assert_int_equal(STAT(f, admin), 3);
}

/* A full admin lane never holds routing back: the slot is dropped and
 * counted; what follows it is forwarded in the same round. */
static void test_admin_full(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *hi = lane(f, f->a, SHMR_LANE_OUT_HIGH(2));
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	set_admin(f);
	for (unsigned i = 0; i < 63; i++)
		put(lane(f, f->admin, LC),
		    dp_msg(slot, SHMR_KIND_SEND, f->c, f->admin, 0, 0, 0));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 1);
	m->priority = SHMR_PRIO_HIGH;
	put(hi, m);
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 3, 0, 2));
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 3));

	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 3);
	assert_int_equal(f->lc.nblocked, 0);
	assert_int_equal(rte_ring_count(hi), 0);
	assert_int_equal(rte_ring_count(out_lane(f, f->a)), 0);
	assert_int_equal(STAT(f, admin_dropped), 2);
	assert_int_equal(STAT(f, admin), 0);
	assert_int_equal(STAT(f, failed), 1);
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 3);
	assert_int_equal(rte_ring_count(lane(f, f->admin, LC)), 63);
}

/* Change the router's flags and route "work"'s state; rebuild. */
static void respec(struct fixture *f, uint32_t flags, uint32_t work_state)
{
	struct shmr_spec_router *r = &dp_spec(&f->d)->routers[f->ri];

	dp_spec_begin(&f->d);
	r->flags = flags;
	shmr_routes_of(f->d.base, f->ri)[0].state = work_state;
	dp_spec_end(&f->d);
	shmr_dp_table_free(f->t);
	assert_int_equal(shmr_dp_table_build(&f->d.env, &f->t), 0);
}

/* Messages routed to a route with no worker still reach its inbox, and
 * ask the control plane for a worker (lazy restart): a header-only note
 * on the admin endpoint, flagged SHMR_F_WANT_WORKER, `to` the inbox.  The
 * asks are rate-limited, not one per message. */
static void test_dead_route_asks_for_a_worker(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned notes;

	set_admin(f);
	respec(f, 0, SHMR_ROUTE_DEAD);
	for (uint64_t k = 0; k < 30; k++)
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, k,
				k));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 30);
	assert_int_equal(take(lane(f, f->work, LC), got, 64), 30);
	notes = take(lane(f, f->admin, LC), got, 64);
	assert_true(notes >= 1 && notes < 30);
	for (unsigned i = 0; i < notes; i++) {
		assert_int_equal(at(got, i)->flags, SHMR_F_WANT_WORKER);
		assert_pid(at(got, i)->to, f->work);
		assert_int_equal(at(got, i)->len, 0);
	}
	assert_int_equal(STAT(f, forwarded), 30);
	assert_int_equal(STAT(f, failed), 0);

	/* A live route never asks. */
	respec(f, 0, SHMR_ROUTE_RUNNING);
	f->lc.ask_next_ns[f->work.slot] = 0;
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 0));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_int_equal(rte_ring_count(lane(f, f->admin, LC)), 0);
}

/*
 * A send (ref 1) and a call (ref 2) to route "work", which has no worker
 * and fails them with @p err: nothing goes into its inbox, the send is a
 * MessageRouteFailed with that reason on the admin endpoint, beside at
 * least one ask for a worker; the call's reply carries it; both count in
 * failed.
 */
static void refused_and_asked(struct fixture *f, int32_t err)
{
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned n, dead = 0, asks = 0;

	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 1));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 0, 2));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 2);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 0);
	n = take(lane(f, f->admin, LC), got, 64);
	for (unsigned i = 0; i < n; i++) {
		if (at(got, i)->flags & SHMR_F_WANT_WORKER) {
			asks++;
			assert_pid(at(got, i)->to, f->work);
		} else {
			dead++;
			assert_true(at(got, i)->flags & SHMR_F_ROUTE_FAILED);
			assert_int_equal(at(got, i)->status, err);
			assert_int_equal(at(got, i)->ref, 1);
		}
	}
	assert_int_equal(dead, 1);
	assert_true(asks >= 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->status, err);
	assert_int_equal(at(got, 0)->ref, 2);
	assert_int_equal(STAT(f, failed), 2);
}

/* A replace whose new worker is not up: sends fail with SHMR_E_BUSY (a
 * MessageRouteFailed), calls get it as their reply, and both ask. */
static void test_replace_wait_is_busy(void **state)
{
	struct fixture *f = *state;

	set_admin(f);
	respec(f, 0, SHMR_ROUTE_REPLACE_WAIT);
	refused_and_asked(f, -SHMR_E_BUSY);
}

/* Route "work" in @p state with start_err @p err in the spec, the table
 * built again. */
static void respec_start_err(struct fixture *f, uint32_t state, int32_t err)
{
	dp_spec_begin(&f->d);
	shmr_routes_of(f->d.base, f->ri)[0].start_err = err;
	dp_spec_end(&f->d);
	respec(f, 0, state);
}

/* A dead route whose last start failed (start_err in the spec): a send
 * fails with that error (a MessageRouteFailed), a call gets it as its
 * reply, both count in failed and both still ask (each retries the
 * start); nothing goes into the inbox.  A start_err that is no error code
 * (the spec is shared memory) is ignored: the route only queues. */
static void test_dead_route_whose_start_failed_fails_at_once(void **state)
{
	struct fixture *f = *state;
	static const struct { uint32_t state; int32_t err; } queued[] = {
		{ SHMR_ROUTE_DEAD, 7 },           /* not an error code */
		{ SHMR_ROUTE_DEAD, INT32_MIN },   /* nor this */
		{ SHMR_ROUTE_RUNNING, -ENOENT },  /* the word means nothing */
	};
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];

	set_admin(f);
	respec_start_err(f, SHMR_ROUTE_DEAD, -ENOENT);
	refused_and_asked(f, -ENOENT);

	/* Otherwise it is queued, as without the word. */
	for (unsigned i = 0; i < sizeof(queued) / sizeof(queued[0]); i++) {
		struct shmr_msg *m = dp_msg(slot, SHMR_KIND_SEND, f->a,
					    f->router, 1, 0, 3 + i);
		unsigned n;

		respec_start_err(f, queued[i].state, queued[i].err);
		put(src, m);
		n = shmr_dp_forward_burst_rcu(&f->lc, f->t, poll_of(f, f->a),
					      src);
		assert_int_equal(n, 1);
		assert_int_equal(take(lane(f, f->work, LC), got, 64), 1);
		assert_int_equal(STAT(f, failed), 2);
	}
}

/* A client cannot forge what only the dataplane marks: flags of a dead
 * letter or an ask are cleared on every slot it sends. */
static void test_internal_flags_cleared(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 1);
	m->flags = SHMR_F_ROUTE_FAILED | SHMR_F_ROUTE_NAME |
		   SHMR_F_WANT_WORKER | SHMR_F_REDELIVERED;
	put(out_lane(f, f->a), m);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->flags, SHMR_F_REDELIVERED);
}

/* mailbox_full = "fail": a full route inbox fails what its router routes
 * there (SHMR_E_MAILBOX_FULL: a MessageRouteFailed for a send, the reply
 * of a call) instead of holding the sender back; a direct send to the
 * same inbox still waits for room. */
static void test_mailbox_full_fails(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	struct rte_ring *dst = lane(f, f->work, LC);
	struct shmr_dp_poll *p;
	unsigned char slot[SS], got[64 * SS];

	set_admin(f);
	respec(f, SHMR_RF_FAIL_WHEN_FULL, SHMR_ROUTE_RUNNING);
	p = poll_of(f, f->a); /* the new table's */
	for (unsigned i = 0; i < 62; i++)
		put(dst, dp_msg(slot, SHMR_KIND_SEND, f->b, f->work, 0, i, 0));
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 1));
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 2));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 0, 3));
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->work, 0, 0, 4));

	/* ref 1 fits; 2 and 3 fail; the direct 4 is held back. */
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 3);
	assert_true(p->blocked);
	assert_int_equal(rte_ring_count(src), 1);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 2);
	assert_int_equal(at(got, 0)->flags,
			 SHMR_F_ROUTE_FAILED | SHMR_F_ROUTE_NAME);
	assert_int_equal(at(got, 0)->status, -SHMR_E_MAILBOX_FULL);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 3);
	assert_int_equal(at(got, 0)->status, -SHMR_E_MAILBOX_FULL);
	assert_int_equal(STAT(f, failed), 2);
	assert_int_equal(STAT(f, forwarded), 1);

	assert_int_equal(take(dst, got, 64), 63);
	assert_int_equal(at(got, 62)->ref, 1);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t, p, src), 1);
	assert_int_equal(take(dst, got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 4);
}

/* A stopped router refuses everything with SHMR_E_NOT_ALLOWED. */
static void test_stopped_router_refuses(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];

	set_admin(f);
	respec(f, SHMR_RF_STOPPED, SHMR_ROUTE_RUNNING);
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 1));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 0, 2));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 2);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 0);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NOT_ALLOWED);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NOT_ALLOWED);
	assert_int_equal(STAT(f, failed), 2);
}

/* One burst per lane per round. */
static void test_burst_size(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS];

	for (unsigned i = 0; i < SHMR_DP_BURST + 8; i++)
		put(out_lane(f, f->a),
		    dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, i, i));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), SHMR_DP_BURST);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 8);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
	assert_int_equal(STAT(f, polls), 3);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)),
			 SHMR_DP_BURST + 8);
}

/* A receiver asleep on its bell is woken; an awake one costs nothing. */
static void test_bells(void **state)
{
	struct fixture *f = *state;
	struct shmr_bell *bell = &shmr_ep_peer_at(f->d.base, f->b.slot)->bell;
	unsigned char slot[SS];
	uint32_t seq = atomic_load(&bell->seq);

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 1));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_int_equal(atomic_load(&bell->seq), seq);

	uint32_t seen = shmr_bell_prepare(bell);

	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 2));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_int_not_equal(atomic_load(&bell->seq), seen);
	/* Returns at once: the seq moved. */
	assert_int_equal(shmr_bell_sleep(bell, seen, -1), 0);
	assert_int_equal(atomic_load(&bell->sleepers), 0);
}

/* A stream of full rounds (bursts of SHMR_DP_BURST) rings a sleeping
 * receiver's bell within SHMR_DP_BELL_ROUNDS of them (forward_poll.c
 * rings it once per that many, not each round), and every slot is there
 * when it wakes. */
static void test_bells_stream(void **state)
{
	struct fixture *f = *state;
	struct shmr_bell *bell = &shmr_ep_peer_at(f->d.base, f->b.slot)->bell;
	unsigned char slot[SS], got[SHMR_DP_BURST * SS];
	uint32_t seen = shmr_bell_prepare(bell);
	unsigned r, woke = 0;

	for (r = 1; r <= SHMR_DP_BELL_ROUNDS + 1 && !woke; r++) {
		for (unsigned i = 0; i < SHMR_DP_BURST; i++)
			put(out_lane(f, f->a),
			    dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0,
				   r * SHMR_DP_BURST + i));
		assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t),
				 SHMR_DP_BURST);
		assert_int_equal(take(lane(f, f->b, LC), got, SHMR_DP_BURST),
				 SHMR_DP_BURST);
		for (unsigned i = 0; i < SHMR_DP_BURST; i++)
			assert_int_equal(at(got, i)->ref,
					 r * SHMR_DP_BURST + i);
		woke = atomic_load(&bell->seq) != seen;
	}
	assert_true(woke);
	assert_true(r - 1 <= SHMR_DP_BELL_ROUNDS);
	/* Returns at once: the seq moved. */
	assert_int_equal(shmr_bell_sleep(bell, seen, -1), 0);
	assert_int_equal(atomic_load(&bell->sleepers), 0);
}

/* The idle re-check sees pending slots, but not a blocked lane's. */
static void test_has_work(void **state)
{
	struct fixture *f = *state;
	unsigned char slot[SS], got[64 * SS];

	assert_false(shmr_dp_has_work_rcu(&f->lc, f->t));
	put(lane(f, f->c, SHMR_LANE_OUT_HIGH(2)),
	    dp_msg(slot, SHMR_KIND_SEND, f->c, f->b, 0, 0, 1));
	assert_true(shmr_dp_has_work_rcu(&f->lc, f->t));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_false(shmr_dp_has_work_rcu(&f->lc, f->t));

	for (unsigned i = 0; i < 62; i++)
		put(lane(f, f->b, LC),
		    dp_msg(slot, SHMR_KIND_SEND, f->c, f->b, 0, 0, 0));
	put(out_lane(f, f->a),
	    dp_msg(slot, SHMR_KIND_SEND, f->a, f->b, 0, 0, 2));
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 0);
	assert_int_equal(f->lc.nblocked, 1);
	assert_false(shmr_dp_has_work_rcu(&f->lc, f->t));
	assert_int_equal(take(lane(f, f->b, LC), got, 64), 63);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 1);
	assert_int_equal(f->lc.nblocked, 0);
}

/* The router's own messages (types from SHMR_TYPE_RESERVED up) go to the
 * admin path at any priority, unchanged and never routed; a Broadcast
 * envelope's send of one goes to every routee instead (here the type
 * router's own deliverable route "work"; "off" is disabled), flag kept,
 * one hop; a call's Broadcast flag is dropped (the envelope is a send's). */
static void test_reserved_types_any_priority(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	set_admin(f);
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router,
			SHMR_TYPE_POISON_PILL, 0, 1));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router,
			SHMR_TYPE_GET_ROUTEES, 0, 2));
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, SHMR_TYPE_KILL,
			0, 3));
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router,
			SHMR_TYPE_RESERVED + 0x77, 0, 4));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router,
		   SHMR_TYPE_POISON_PILL, 9, 5);
	m->flags = SHMR_F_BROADCAST;
	put(src, m);
	m = dp_msg(slot, SHMR_KIND_CALL, f->a, f->router,
		   SHMR_TYPE_GET_ROUTEES, 0, 6);
	m->flags = SHMR_F_BROADCAST;
	put(src, m);
	/* An ordinary type at normal priority is still routed. */
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 7));

	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 7);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 5);
	for (unsigned i = 0; i < 5; i++) {
		static const uint64_t refs[] = { 1, 2, 3, 4, 6 };

		m = at(got, i);
		assert_int_equal(m->ref, refs[i]);
		assert_int_equal(m->priority, SHMR_PRIO_NORMAL);
		assert_int_equal(m->flags, 0);
		assert_int_equal(m->hops, 0);
		assert_pid(m->from, f->a);
		assert_pid(m->to, f->router);
	}
	assert_int_equal(at(got, 1)->kind, SHMR_KIND_CALL);
	assert_int_equal(at(got, 1)->type, SHMR_TYPE_GET_ROUTEES);
	/* work: the envelope's pill, then the routed send. */
	assert_int_equal(take(lane(f, f->work, LC), got, 64), 2);
	m = at(got, 0);
	assert_int_equal(m->type, SHMR_TYPE_POISON_PILL);
	assert_int_equal(m->flags, SHMR_F_BROADCAST);
	assert_int_equal(m->hops, 1);
	assert_int_equal(m->key, 9);
	assert_pid(m->from, f->a);
	assert_int_equal(at(got, 1)->ref, 7);
	assert_int_equal(rte_ring_count(lane(f, f->b, LC)), 0);
	assert_int_equal(rte_ring_count(lane(f, f->a, LC)), 0);
	assert_int_equal(STAT(f, admin), 5);
	assert_int_equal(STAT(f, failed), 0);
	assert_int_equal(STAT(f, forwarded), 2);

	/* Without an admin endpoint a reserved call is refused, as high
	 * priority is. */
	atomic_store(&shmr_hdr(f->d.base)->admin_pid, 0);
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router,
			SHMR_TYPE_GET_ROUTEES, 0, 8));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 8);
	assert_int_equal(at(got, 0)->status, -SHMR_E_NOT_ALLOWED);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 0);
}

/* A stopped router still hears its own messages at normal priority
 * (GetRoutees answers), and fails a Broadcast envelope as it fails
 * everything routed (a dead letter). */
static void test_reserved_types_stopped_router(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	set_admin(f);
	respec(f, SHMR_RF_STOPPED, SHMR_ROUTE_RUNNING);
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router,
			SHMR_TYPE_GET_ROUTEES, 0, 1));
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 5, 0, 2);
	m->flags = SHMR_F_BROADCAST;
	put(src, m);
	assert_int_equal(shmr_dp_poll_once_rcu(&f->lc, f->t), 2);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 2);
	assert_int_equal(at(got, 0)->kind, SHMR_KIND_CALL);
	assert_int_equal(at(got, 0)->flags, 0);
	assert_int_equal(at(got, 1)->ref, 2);
	assert_int_equal(at(got, 1)->flags,
			 SHMR_F_BROADCAST | SHMR_F_ROUTE_FAILED);
	assert_int_equal(at(got, 1)->status, -SHMR_E_NOT_ALLOWED);
	assert_int_equal(rte_ring_count(lane(f, f->work, LC)), 0);
	assert_int_equal(STAT(f, failed), 1);
}

/* @p m is the Kill numbered @p ref from f->a to @p to, flags @p flags. */
static void kill_is(const struct fixture *f, const struct shmr_msg *m,
		    uint64_t ref, struct shmr_pid to, uint8_t flags)
{
	assert_int_equal(m->ref, ref);
	assert_int_equal(m->type, SHMR_TYPE_KILL);
	assert_int_equal(m->flags, flags);
	assert_pid(m->from, f->a);
	assert_pid(m->to, to);
}

/* Kill for a routee is the control plane's: sent straight to a route's
 * inbox (or any endpoint), or in a Broadcast envelope to a router, it goes
 * unchanged (flag kept) to the admin endpoint and never into an inbox; an
 * ordinary direct send still goes to the inbox. */
static void test_kill_for_routees_goes_to_admin(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	const struct {
		uint8_t kind, flags;
		struct shmr_pid to;
		uint32_t type;
	} sent[] = {
		{ SHMR_KIND_SEND, 0, f->work, SHMR_TYPE_KILL },
		{ SHMR_KIND_CALL, 0, f->b, SHMR_TYPE_KILL },
		{ SHMR_KIND_SEND, SHMR_F_BROADCAST, f->router, SHMR_TYPE_KILL },
		{ SHMR_KIND_SEND, 0, f->work, 1 },
	};

	set_admin(f);
	for (unsigned i = 0; i < 4; i++) {
		m = dp_msg(slot, sent[i].kind, f->a, sent[i].to, sent[i].type,
			   0, i + 1);
		m->flags = sent[i].flags;
		put(src, m);
	}

	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 4);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 3);
	kill_is(f, at(got, 0), 1, f->work, 0);
	kill_is(f, at(got, 1), 2, f->b, 0);
	kill_is(f, at(got, 2), 3, f->router, SHMR_F_BROADCAST);
	/* Only the ordinary send reached an inbox; nothing failed. */
	assert_int_equal(take(lane(f, f->work, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->ref, 4);
	assert_int_equal(rte_ring_count(lane(f, f->b, LC)) +
				 rte_ring_count(lane(f, f->a, LC)) +
				 STAT(f, failed),
			 0);
	assert_int_equal(STAT(f, admin), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define TW(f) cmocka_unit_test_setup_teardown(f, setup_wide, teardown)
		T(test_forward_mixed),
		T(test_backpressure),
		T(test_backpressure_counts_once),
		T(test_reply_backpressure),
		T(test_corrupt_source),
		T(test_corrupt_target),
		T(test_priority),
		T(test_dead_route_asks_for_a_worker),
		T(test_replace_wait_is_busy),
		T(test_dead_route_whose_start_failed_fails_at_once),
		T(test_internal_flags_cleared),
		T(test_mailbox_full_fails),
		T(test_stopped_router_refuses),
		TW(test_burst_size),
		T(test_bells),
		TW(test_bells_stream),
		T(test_has_work),
		T(test_admin_priority),
		T(test_admin_route_failed),
		T(test_admin_full),
		T(test_reserved_types_any_priority),
		T(test_reserved_types_stopped_router),
		T(test_kill_for_routees_goes_to_admin),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
