/*
 * The routing logics as built-in behaviours (round-robin, random,
 * smallest-mailbox, broadcast, consistent-hash), on hand-made specs in a
 * heap domain with two routing lcores: which routees take part, the exact
 * picks of the table's decisions, what the forwarding function delivers
 * (and counts), broadcast exactly once per routee under backpressure with
 * a table swap between rounds, smallest-mailbox from real ring indices and
 * busy flags, and SHMR_E_NO_ROUTEES when nobody is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include "dp_test.h"

#define SS 128u /* slot size of the test domain */
#define LC 1u   /* the lcore under test: polls odd slots */
#define NR 4u   /* routees r0..r3 */

struct fixture {
	struct dp_dom d;
	struct shmr_dp_lcore lc;
	struct shmr_dp_table *t;
	struct shmr_pid a, c, router, r[NR], extra, admin, reg, other;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || dp_dom_init(&f->d, 2) < 0)
		return -1;
	f->a = dp_ep(&f->d, 3, 1, SHMR_EPK_CLIENT); /* lcore 1 */
	f->c = dp_ep(&f->d, 9, 1, SHMR_EPK_CLIENT); /* lcore 1 */
	f->router = dp_ep(&f->d, 2, 1, SHMR_EPK_ROUTER);
	f->other = dp_ep(&f->d, 30, 1, SHMR_EPK_ROUTER);
	for (uint32_t i = 0; i < NR; i++)
		f->r[i] = dp_ep(&f->d, 4 + 2 * i, 1, SHMR_EPK_ROUTE);
	f->extra = dp_ep(&f->d, 20, 1, SHMR_EPK_ROUTE);
	f->admin = dp_ep(&f->d, 11, 1, SHMR_EPK_CLIENT);
	f->reg = dp_ep(&f->d, 13, 1, SHMR_EPK_CLIENT);
	if (shmr_dp_lcore_init(&f->lc, &f->d.env, LC) < 0)
		return -1;
	*state = f;
	return 0;
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

static const char *const rname[NR] = { "r0", "r1", "r2", "r3" };

/* A router "logic" of @p behaviour over running routes r0..r(n-1). */
static unsigned spec_logic(struct fixture *f, uint32_t behaviour, unsigned n)
{
	unsigned ri;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "logic", f->router, behaviour);
	for (unsigned i = 0; i < n; i++)
		dp_route(&f->d, ri, rname[i], f->r[i], SHMR_ROUTE_RUNNING);
	dp_spec_end(&f->d);
	return ri;
}

static void rebuild(struct fixture *f)
{
	shmr_dp_table_free(f->t);
	f->t = NULL;
	assert_int_equal(shmr_dp_table_build(&f->d.env, &f->t), 0);
}

/* The shared lane helpers (dp_test.h), by the names used here. */
#define lane(f, p, i) dp_lane(&(f)->d, (p), (i))
#define out_lane(f, p) dp_out_lane(&(f)->d, (p))
#define poll_of(f, p) dp_poll_of((f)->t, (p))
#define put(r, m) dp_put((r), (m))
#define take(r, out, max) dp_take((r), (out), (max))
#define at(buf, i) dp_at((buf), (i))

static uint64_t stat(struct fixture *f, size_t off)
{
	return atomic_load((_Atomic uint64_t *)((char *)shmr_stats_of(
							f->d.base, LC) +
						off));
}

#define STAT(f, field) stat(f, offsetof(struct shmr_lcore_stats, field))

static uint64_t ep_stat(struct fixture *f, size_t off, uint32_t slot)
{
	return atomic_load((_Atomic uint64_t *)((char *)shmr_ep_ctr_of(
							f->d.base, LC, slot) +
						off));
}

#define DELIVERED(f, pid)                                                   \
	ep_stat(f, offsetof(struct shmr_ep_ctr, ep_delivered), (pid).slot)
#define ROUTER_FWD(f)                                                       \
	ep_stat(f, offsetof(struct shmr_ep_ctr, router_forwarded),     \
		(f)->router.slot)
#define ROUTER_FAILED(f)                                                    \
	ep_stat(f, offsetof(struct shmr_ep_ctr, router_failed),        \
		(f)->router.slot)

/* The routee index router @p ri decides for a message with @p key. */
static int pick(struct fixture *f, struct shmr_dp_pick *pk, unsigned ri,
		uint8_t kind, uint64_t key)
{
	struct shmr_msg m;
	struct shmr_dp_decision d;
	const struct shmr_dp_router *r = &f->t->routers[ri];

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.key = key;
	shmr_dp_decide_rcu(f->t, pk, ri, &m, &d);
	if (d.verdict == SHMR_DP_FAIL)
		return d.err;
	assert_int_equal(d.verdict, SHMR_DP_DELIVER);
	for (uint32_t i = 0; i < r->nroutees; i++)
		if (r->routees[i].tgt.slot == d.slot) {
			assert_int_equal(r->routees[i].tgt.gen, d.gen);
			assert_string_equal(d.name, r->routees[i].tgt.name);
			return (int)i;
		}
	fail_msg("decided slot %u, not a routee", d.slot);
	return -1;
}

static void set_admin(struct fixture *f)
{
	atomic_store(&shmr_hdr(f->d.base)->admin_pid,
		     (uint64_t)f->admin.slot | (uint64_t)f->admin.gen << 32);
}

static void set_busy(struct fixture *f, struct shmr_pid p, uint32_t busy)
{
	atomic_store(&shmr_ep_peer_at(f->d.base, p.slot)->busy, busy);
}

/* ---- who takes part -------------------------------------------------- */

/* Running and dead routes and live registry names take part, in list
 * order; disabled, pending-disable/remove and replace-wait routes, dead
 * ones whose last start failed, unknown and stale names do not; a name
 * listed twice counts once.
 * Without a list, the router's own routes in order. */
static void test_routees_taking_part(void **state)
{
	struct fixture *f = *state;
	const struct shmr_dp_router *r;
	unsigned ri, own;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "logic", f->router, SHMR_BEH_ROUND_ROBIN);
	dp_route(&f->d, ri, "run", f->r[0], SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "dead", f->r[1], SHMR_ROUTE_DEAD);
	dp_route(&f->d, ri, "off", f->r[2], SHMR_ROUTE_DISABLED);
	dp_route(&f->d, ri, "pdis", f->r[2], SHMR_ROUTE_PENDING_DISABLE);
	dp_route(&f->d, ri, "prem", f->r[2], SHMR_ROUTE_PENDING_REMOVE);
	dp_route(&f->d, ri, "wait", f->r[2], SHMR_ROUTE_REPLACE_WAIT);
	dp_route(&f->d, ri, "repl", f->r[3], SHMR_ROUTE_PENDING_REPLACE);
	dp_route(&f->d, ri, "nostart", f->r[2], SHMR_ROUTE_DEAD);
	shmr_routes_of(f->d.base, ri)[dp_spec(&f->d)->routers[ri].nroutes - 1]
		.start_err = -EACCES;
	dp_reg(&f->d, "reg", f->reg);
	dp_reg(&f->d, "stale", (struct shmr_pid){ f->reg.slot, 9 });
	dp_reg(&f->d, "other", f->other);
	dp_hash(&f->d, ri, "reg");
	dp_hash(&f->d, ri, "off");
	dp_hash(&f->d, ri, "dead");
	dp_hash(&f->d, ri, "nosuch");
	dp_hash(&f->d, ri, "stale");
	dp_hash(&f->d, ri, "wait");
	dp_hash(&f->d, ri, "nostart");
	dp_hash(&f->d, ri, "pdis");
	dp_hash(&f->d, ri, "prem");
	dp_hash(&f->d, ri, "run");
	dp_hash(&f->d, ri, "reg");
	dp_hash(&f->d, ri, "other");
	own = dp_router(&f->d, "own", f->other, SHMR_BEH_BROADCAST);
	dp_route(&f->d, own, "b", f->r[1], SHMR_ROUTE_RUNNING);
	dp_route(&f->d, own, "x", f->r[2], SHMR_ROUTE_DISABLED);
	dp_route(&f->d, own, "a", f->r[0], SHMR_ROUTE_DEAD);
	dp_spec_end(&f->d);
	rebuild(f);

	r = &f->t->routers[ri];
	assert_int_equal(r->nroutees, 4);
	assert_string_equal(r->routees[0].tgt.name, "reg");
	assert_int_equal(r->routees[0].tgt.slot, f->reg.slot);
	assert_string_equal(r->routees[1].tgt.name, "dead");
	assert_int_equal(r->routees[1].tgt.slot, f->r[1].slot);
	assert_int_equal(r->routees[1].tgt.ask, 1); /* asks for a worker */
	assert_string_equal(r->routees[2].tgt.name, "run");
	assert_int_equal(r->routees[2].tgt.ask, 0);
	/* A router may be a routee of a single-pick logic. */
	assert_string_equal(r->routees[3].tgt.name, "other");
	assert_int_equal(r->routees[3].tgt.router, own);
	assert_null(r->routees[3].peer);
	assert_non_null(r->routees[0].peer);
	assert_ptr_equal(r->routees[0].in[LC], lane(f, f->reg, LC));

	/* No list: the own routes, in order, deliverable ones only. */
	r = &f->t->routers[own];
	assert_int_equal(r->nroutees, 2);
	assert_string_equal(r->routees[0].tgt.name, "b");
	assert_string_equal(r->routees[1].tgt.name, "a");
	assert_int_equal(r->routees[1].tgt.ask, 1);

	/* A broadcast cannot deliver into a router: it is left out. */
	dp_spec_begin(&f->d);
	dp_spec(&f->d)->routers[ri].behaviour = SHMR_BEH_BROADCAST;
	dp_spec_end(&f->d);
	rebuild(f);
	assert_int_equal(f->t->routers[ri].nroutees, 3);
	assert_string_equal(f->t->routers[ri].routees[2].tgt.name, "run");
}

/* ---- round-robin ----------------------------------------------------- */

/* Index i, i + 1, ... modulo the routee count, one counter per router
 * (by its index) and lcore, kept across a table swap. */
static void test_round_robin_picks(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_pick pk, other;
	unsigned ri = spec_logic(f, SHMR_BEH_ROUND_ROBIN, 3);

	/* By router, not by endpoint slot: an lcore's counters do not grow
	 * with max_endpoints (main: 128 KiB of them, one per slot); as
	 * many as the domain's max_routers (shmr_dp_pick_init()). */
	assert_int_equal(shmr_dp_pick_init(&pk, SHMR_MAX_ROUTERS), 0);
	assert_int_equal(shmr_dp_pick_init(&other, SHMR_MAX_ROUTERS), 0);
	rebuild(f);
	for (int i = 0; i < 7; i++)
		assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 99), i % 3);
	/* Another lcore's counter is its own. */
	assert_int_equal(pick(f, &other, ri, SHMR_KIND_CALL, 0), 0);
	/* A new table (a route added): the sequence goes on, over 4. */
	dp_spec_begin(&f->d);
	dp_route(&f->d, ri, "r3", f->r[3], SHMR_ROUTE_RUNNING);
	dp_spec_end(&f->d);
	rebuild(f);
	assert_int_equal(pk.rr[ri], 7);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 3);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 0);
	shmr_dp_pick_fini(&pk);
	shmr_dp_pick_fini(&other);
}

/* N routees and k * N sequential messages from one sender: each routee
 * gets exactly k, in order, across bursts. */
static void test_round_robin_exact(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	const unsigned k = 15;
	unsigned done = 0;

	spec_logic(f, SHMR_BEH_ROUND_ROBIN, NR);
	rebuild(f);
	for (uint64_t i = 0; i < k * NR; i++)
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, i,
				i));
	while (done < k * NR)
		done += shmr_dp_forward_burst_rcu(&f->lc, f->t,
						  poll_of(f, f->a), src);
	for (unsigned j = 0; j < NR; j++) {
		assert_int_equal(take(lane(f, f->r[j], LC), got, 64), k);
		for (unsigned i = 0; i < k; i++) {
			assert_int_equal(at(got, i)->key, i * NR + j);
			assert_int_equal(at(got, i)->hops, 1);
		}
		assert_int_equal(rte_ring_count(lane(f, f->r[j], 0)), 0);
	}
	assert_int_equal(STAT(f, forwarded), k * NR);
	assert_int_equal(ROUTER_FWD(f), k * NR);
}

/* ---- random ---------------------------------------------------------- */

/* rte_rand() mapped by shmr_logic_random_pick(): replayed with the same
 * seed, the picks are exactly those; over many, every routee is hit. */
static void test_random_picks(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_pick pk;
	unsigned ri = spec_logic(f, SHMR_BEH_RANDOM, NR), hits[NR] = { 0 };
	int want[64];

	assert_int_equal(shmr_dp_pick_init(&pk, SHMR_MAX_ROUTERS), 0);
	rebuild(f);
	rte_srand(20261129);
	for (unsigned i = 0; i < 64; i++)
		want[i] = shmr_logic_random_pick(rte_rand(), NR);
	rte_srand(20261129);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 5), want[i]);
	/* 4000 picks: each routee's share within 1000 +- 200 (more than
	 * 14 standard deviations; the seed makes it exact anyway). */
	rte_srand(7);
	for (unsigned i = 0; i < 4000; i++)
		hits[pick(f, &pk, ri, SHMR_KIND_SEND, 5)]++;
	for (unsigned j = 0; j < NR; j++)
		assert_true(hits[j] >= 800 && hits[j] <= 1200);
	shmr_dp_pick_fini(&pk);
}

/* ---- smallest-mailbox ------------------------------------------------ */

/* @p n entries in routee @p j's inbound lane of lcore @p l. */
static void fill(struct fixture *f, unsigned j, uint32_t l, unsigned n)
{
	unsigned char slot[SS];

	for (unsigned i = 0; i < n; i++)
		put(lane(f, f->r[j], l),
		    dp_msg(slot, SHMR_KIND_SEND, f->c, f->r[j], 0, i, 0));
}

/* Empty every lane of routee @p j, as its worker would. */
static void drain(struct fixture *f, unsigned j)
{
	unsigned char got[64 * SS];

	for (uint32_t l = 0; l < 2; l++)
		while (take(lane(f, f->r[j], l), got, 64))
			;
}

/* Pekko's order, from the real rings: idle and empty first, then busy and
 * empty, then the least queued over both lcores' lanes, ties to the lower
 * index; a burst the worker peeked (and holds) is no longer queued. */
static void test_smallest_mailbox_rings(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_pick pk;
	unsigned ri = spec_logic(f, SHMR_BEH_SMALLEST_MAILBOX, NR);
	unsigned char got[64 * SS];
	uint32_t pend_slot;
	unsigned pend_n;

	assert_int_equal(shmr_dp_pick_init(&pk, SHMR_MAX_ROUTERS), 0);
	rebuild(f);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 0);
	set_busy(f, f->r[0], 1);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 1);
	set_busy(f, f->r[1], 1);
	fill(f, 2, 0, 1);
	/* r3 idle and empty wins over r0, r1 busy, r2 queued. */
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_CALL, 0), 3);
	set_busy(f, f->r[3], 1);
	/* All busy: the first empty one. */
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 0);
	/* Nobody empty: the least queued, counted over both lcores' lanes
	 * (r1: 1 + 1, r2: 1 + 1, r3: 3, r0: 2 + 2); ties to the lower. */
	fill(f, 0, 0, 2);
	fill(f, 0, 1, 2);
	fill(f, 1, 0, 1);
	fill(f, 1, 1, 1);
	fill(f, 2, 1, 1);
	fill(f, 3, 1, 3);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 1);
	fill(f, 1, 1, 1);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 2);
	/* Not busy does not matter once queued. */
	set_busy(f, f->r[3], 0);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 2);
	/* r3's worker peeks its 3 (holds them, busy): empty again. */
	assert_int_equal(rte_ring_dequeue_burst_elem_start(
				 lane(f, f->r[3], 1), got, SS, 64, NULL),
			 3);
	set_busy(f, f->r[3], 1);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 3);
	/* ...and when it comes back for more and finds nothing, idle. */
	rte_ring_dequeue_elem_finish(lane(f, f->r[3], 1), 3);
	set_busy(f, f->r[3], 0);
	drain(f, 0);
	set_busy(f, f->r[0], 1);
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 3);
	/* What this lcore decided and has not enqueued counts as queued. */
	pend_slot = f->r[3].slot;
	pend_n = 1;
	pk.pend_slot = &pend_slot;
	pk.pend_n = &pend_n;
	assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 0), 0);
	shmr_dp_pick_fini(&pk);
}

/* Through the forwarding function: a burst does not pile onto the routee
 * that was idle when it started; its open run counts as queued. */
static void test_smallest_mailbox_burst(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];

	spec_logic(f, SHMR_BEH_SMALLEST_MAILBOX, 2);
	rebuild(f);
	for (uint64_t i = 0; i < 4; i++)
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, i,
				i));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 4);
	/* 0 -> r0 (idle, empty); 1 -> r1 (r0 has 1 pending); 2 -> r0 (1 and
	 * 1: the lower); 3 -> r1 (r0 has 1 queued + 1 pending). */
	assert_int_equal(take(lane(f, f->r[0], LC), got, 64), 2);
	assert_int_equal(at(got, 0)->key, 0);
	assert_int_equal(at(got, 1)->key, 2);
	assert_int_equal(take(lane(f, f->r[1], LC), got, 64), 2);
	assert_int_equal(at(got, 0)->key, 1);
	assert_int_equal(at(got, 1)->key, 3);
	assert_null(f->lc.pick.pend_n);
}

/* ---- consistent-hash ------------------------------------------------- */

/* The owner of @p key in a ring of @p names built apart from the table. */
static const char *ring_owner(const char *const *names, uint32_t n,
			      uint32_t vnodes, uint64_t key)
{
	size_t size = shmr_logic_chash_size(n, vnodes);
	struct shmr_logic_chash *ring = malloc(size);
	int i;

	assert_non_null(ring);
	assert_int_equal(shmr_logic_chash_build(ring, size, names, n, vnodes),
			 (int)(n * vnodes));
	i = shmr_logic_chash_lookup(ring, key);
	free(ring);
	assert_true(i >= 0);
	return names[i];
}

/* The message's key on a ring of the routees' names with virtual_nodes
 * points each (default 10); adding a routee moves keys only to it. */
static void test_consistent_hash_picks(void **state)
{
	struct fixture *f = *state;
	static const char *const three[] = { "r0", "r1", "r2" };
	static const char *const four[] = { "r0", "r1", "r2", "r3" };
	struct shmr_dp_pick pk;
	unsigned ri = spec_logic(f, SHMR_BEH_CONSISTENT_HASH, 3), moved = 0;
	const struct shmr_dp_router *r;
	int before[200];

	assert_int_equal(shmr_dp_pick_init(&pk, SHMR_MAX_ROUTERS), 0);
	rebuild(f);
	r = &f->t->routers[ri];
	assert_non_null(r->ring);
	assert_int_equal(r->ring->vnodes, SHMR_CHASH_VNODES_DEFAULT);
	assert_int_equal(r->ring->npoints, 3 * SHMR_CHASH_VNODES_DEFAULT);
	for (uint64_t key = 0; key < 200; key++) {
		before[key] = pick(f, &pk, ri, SHMR_KIND_SEND, key);
		assert_string_equal(r->routees[before[key]].tgt.name,
				    ring_owner(three, 3, 10, key));
		/* Calls alike; the same key, the same routee. */
		assert_int_equal(pick(f, &pk, ri, SHMR_KIND_CALL, key),
				 before[key]);
	}

	/* virtual_nodes honoured; a route added moves keys to it only. */
	dp_spec_begin(&f->d);
	dp_spec(&f->d)->routers[ri].vnodes = 50;
	dp_route(&f->d, ri, "r3", f->r[3], SHMR_ROUTE_RUNNING);
	dp_spec_end(&f->d);
	rebuild(f);
	r = &f->t->routers[ri];
	assert_int_equal(r->ring->vnodes, 50);
	assert_int_equal(r->ring->npoints, 200);
	for (uint64_t key = 0; key < 200; key++)
		assert_string_equal(
			r->routees[pick(f, &pk, ri, SHMR_KIND_SEND, key)]
				.tgt.name,
			ring_owner(four, 4, 50, key));

	dp_spec_begin(&f->d);
	dp_spec(&f->d)->routers[ri].vnodes = 0; /* the default */
	dp_spec_end(&f->d);
	rebuild(f);
	r = &f->t->routers[ri];
	for (uint64_t key = 0; key < 200; key++) {
		int now = pick(f, &pk, ri, SHMR_KIND_SEND, key);

		if (now == 3)
			moved++;
		else
			assert_int_equal(now, before[key]);
	}
	assert_true(moved > 0 && moved < 200);

	/* Out of range (a scribbled spec): the default. */
	dp_spec_begin(&f->d);
	dp_spec(&f->d)->routers[ri].vnodes = SHMR_CHASH_VNODES_MAX + 1;
	dp_spec_end(&f->d);
	rebuild(f);
	assert_int_equal(f->t->routers[ri].ring->vnodes,
			 SHMR_CHASH_VNODES_DEFAULT);
	shmr_dp_pick_fini(&pk);
}

/* ---- no routees ------------------------------------------------------ */

/* Every logic with nobody to route to fails with SHMR_E_NO_ROUTEES: a
 * call gets it as its reply, a send becomes a MessageRouteFailed. */
static void test_no_routees(void **state)
{
	struct fixture *f = *state;
	static const uint32_t logics[] = {
		SHMR_BEH_ROUND_ROBIN, SHMR_BEH_RANDOM,
		SHMR_BEH_SMALLEST_MAILBOX, SHMR_BEH_BROADCAST,
		SHMR_BEH_CONSISTENT_HASH,
	};
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_dp_pick pk;
	struct shmr_msg *m;

	assert_int_equal(shmr_dp_pick_init(&pk, SHMR_MAX_ROUTERS), 0);
	set_admin(f);
	for (unsigned i = 0; i < 5; i++) {
		unsigned ri;

		dp_spec_begin(&f->d);
		dp_spec(&f->d)->nrouters = 0;
		ri = dp_router(&f->d, "logic", f->router, logics[i]);
		dp_route(&f->d, ri, "off", f->r[0], SHMR_ROUTE_DISABLED);
		dp_hash(&f->d, ri, "off");
		dp_hash(&f->d, ri, "nosuch");
		dp_spec_end(&f->d);
		rebuild(f);
		assert_int_equal(f->t->routers[ri].nroutees, 0);
		if (logics[i] != SHMR_BEH_BROADCAST)
			assert_int_equal(pick(f, &pk, ri, SHMR_KIND_SEND, 1),
					 -SHMR_E_NO_ROUTEES);
		put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 1,
				100 + i));
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 1,
				200 + i));
		assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
							   poll_of(f, f->a),
							   src),
				 2);
		assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
		m = at(got, 0);
		assert_int_equal(m->kind, SHMR_KIND_REPLY);
		assert_int_equal(m->ref, 100 + i);
		assert_int_equal(m->status, -SHMR_E_NO_ROUTEES);
		assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
		m = at(got, 0);
		assert_int_equal(m->ref, 200 + i);
		assert_true(m->flags & SHMR_F_ROUTE_FAILED);
		assert_int_equal(m->status, -SHMR_E_NO_ROUTEES);
	}
	assert_int_equal(STAT(f, failed), 10);
	assert_int_equal(ROUTER_FAILED(f), 10);
	assert_int_equal(STAT(f, forwarded), 0);
	shmr_dp_pick_fini(&pk);
}

/* ---- broadcast ------------------------------------------------------- */

/* Every message to every routee, once, unchanged but hops (From and Ref
 * kept, so each routee answers a call to the caller directly).  forwarded
 * counts a message once per routee it was delivered to. */
static void test_broadcast_every_routee(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	struct shmr_msg *m;

	spec_logic(f, SHMR_BEH_BROADCAST, 3);
	rebuild(f);
	for (uint64_t i = 0; i < 5; i++)
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, i,
				i));
	m = dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 2, 5, 77);
	m->len = 2;
	memcpy(m->data, "hi", 2);
	put(src, m);
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->extra, 1, 6, 6));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 7);
	for (unsigned j = 0; j < 3; j++) {
		assert_int_equal(take(lane(f, f->r[j], LC), got, 64), 6);
		for (unsigned i = 0; i < 6; i++) {
			m = at(got, i);
			assert_int_equal(m->key, i);
			assert_int_equal(m->hops, 1);
			assert_int_equal(m->from.slot, f->a.slot);
			assert_int_equal(m->to.slot, f->router.slot);
		}
		assert_int_equal(at(got, 5)->kind, SHMR_KIND_CALL);
		assert_int_equal(at(got, 5)->ref, 77);
		assert_memory_equal(at(got, 5)->data, "hi", 2);
		assert_int_equal(DELIVERED(f, f->r[j]), 6);
	}
	assert_int_equal(rte_ring_count(lane(f, f->r[3], LC)), 0);
	assert_int_equal(take(lane(f, f->extra, LC), got, 64), 1);
	assert_int_equal(STAT(f, rx), 7);
	assert_int_equal(STAT(f, forwarded), 3 * 6 + 1);
	assert_int_equal(ROUTER_FWD(f), 3 * 6);
	assert_int_equal(STAT(f, failed), 0);
}

/* A full routee holds the broadcast back; the routees already served do
 * not get the held slot again, neither in a round where nothing moves nor
 * after a table swap that removed one routee and added another.  Every
 * copy is counted once. */
static void test_broadcast_backpressure_swap(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned ri = spec_logic(f, SHMR_BEH_BROADCAST, 3);
	struct shmr_dp_table *old;

	rebuild(f);
	fill(f, 1, LC, 62); /* r1: room for one */
	for (uint64_t i = 0; i < 3; i++)
		put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, i,
				i));
	/* m0 everywhere; m1 to r0 and r2, held back by r1. */
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_true(poll_of(f, f->a)->blocked);
	assert_int_equal(rte_ring_count(src), 2);
	assert_int_equal(rte_ring_count(lane(f, f->r[0], LC)), 2);
	assert_int_equal(rte_ring_count(lane(f, f->r[1], LC)), 63);
	assert_int_equal(rte_ring_count(lane(f, f->r[2], LC)), 2);
	assert_int_equal(STAT(f, forwarded), 5);
	assert_int_equal(STAT(f, rx), 1);
	/* Still full: nothing moves, nothing is counted again. */
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 0);
	assert_int_equal(rte_ring_count(lane(f, f->r[0], LC)), 2);
	assert_int_equal(rte_ring_count(lane(f, f->r[2], LC)), 2);
	assert_int_equal(STAT(f, forwarded), 5);

	/* The table swaps: r2 goes (disabled), r3 comes. */
	dp_spec_begin(&f->d);
	shmr_routes_of(f->d.base, ri)[2].state = SHMR_ROUTE_DISABLED;
	dp_route(&f->d, ri, "r3", f->r[3], SHMR_ROUTE_RUNNING);
	dp_spec_end(&f->d);
	old = f->t;
	f->t = NULL;
	assert_int_equal(shmr_dp_table_build(&f->d.env, &f->t), 0);
	shmr_dp_table_free(old);
	assert_int_equal(f->t->routers[ri].nroutees, 3);

	drain(f, 1);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 2);
	assert_false(poll_of(f, f->a)->blocked);
	/* r0: m0 m1 m2; r1: m1 m2 (m0 was drained with the filler);
	 * r2: m0 m1 (removed before m2); r3: m1 m2. */
	assert_int_equal(take(lane(f, f->r[0], LC), got, 64), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(at(got, i)->key, i);
	assert_int_equal(take(lane(f, f->r[1], LC), got, 64), 2);
	assert_int_equal(at(got, 0)->key, 1);
	assert_int_equal(at(got, 1)->key, 2);
	assert_int_equal(take(lane(f, f->r[2], LC), got, 64), 2);
	assert_int_equal(at(got, 0)->key, 0);
	assert_int_equal(at(got, 1)->key, 1);
	assert_int_equal(take(lane(f, f->r[3], LC), got, 64), 2);
	assert_int_equal(at(got, 0)->key, 1);
	assert_int_equal(at(got, 1)->key, 2);
	assert_int_equal(STAT(f, forwarded), 5 + 2 + 3);
	assert_int_equal(ROUTER_FWD(f), 10);
	assert_int_equal(STAT(f, rx), 3);
	assert_int_equal(rte_ring_count(src), 0);
	assert_false(f->lc.bcast[f->a.slot].active);
}

/* A held slot that the new table no longer broadcasts is decided afresh:
 * the progress kept for it does not apply (nor linger). */
static void test_broadcast_progress_not_reused(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned ri = spec_logic(f, SHMR_BEH_BROADCAST, 2);

	rebuild(f);
	fill(f, 1, LC, 63);
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 0));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 0);
	assert_true(f->lc.bcast[f->a.slot].active);
	dp_spec_begin(&f->d);
	dp_spec(&f->d)->routers[ri].behaviour = SHMR_BEH_ROUND_ROBIN;
	dp_spec_end(&f->d);
	rebuild(f);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_false(f->lc.bcast[f->a.slot].active);
	/* round-robin's first pick: r0, which also had the broadcast copy. */
	assert_int_equal(take(lane(f, f->r[0], LC), got, 64), 2);
}

/* mailbox_full = "fail": a full routee fails its copy (counted, and a
 * send's copy goes to the admin endpoint naming the routee); the others
 * get it.  A call that reached nobody gets the error as its reply. */
static void test_broadcast_fail_when_full(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned ri = spec_logic(f, SHMR_BEH_BROADCAST, 3);
	struct shmr_msg *m;

	set_admin(f);
	dp_spec_begin(&f->d);
	dp_spec(&f->d)->routers[ri].flags = SHMR_RF_FAIL_WHEN_FULL;
	dp_spec_end(&f->d);
	rebuild(f);
	fill(f, 1, LC, 63);
	m = dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 7, 1);
	m->len = 1;
	m->data[0] = 'x';
	put(src, m);
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_false(poll_of(f, f->a)->blocked);
	assert_int_equal(rte_ring_count(lane(f, f->r[0], LC)), 1);
	assert_int_equal(rte_ring_count(lane(f, f->r[2], LC)), 1);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	m = at(got, 0);
	assert_int_equal(m->flags, SHMR_F_ROUTE_FAILED | SHMR_F_ROUTE_NAME);
	assert_int_equal(m->status, -SHMR_E_MAILBOX_FULL);
	assert_int_equal(m->key, 7);
	assert_int_equal(m->len, 1);
	assert_string_equal((const char *)m->data + 1, "r1");
	assert_int_equal(STAT(f, forwarded), 2);
	assert_int_equal(STAT(f, failed), 1);
	assert_int_equal(ROUTER_FAILED(f), 1);

	/* Everybody full: a call reaches nobody. */
	fill(f, 0, LC, 62);
	fill(f, 2, LC, 62);
	put(src, dp_msg(slot, SHMR_KIND_CALL, f->a, f->router, 1, 0, 42));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_int_equal(take(lane(f, f->a, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->kind, SHMR_KIND_REPLY);
	assert_int_equal(at(got, 0)->ref, 42);
	assert_int_equal(at(got, 0)->status, -SHMR_E_MAILBOX_FULL);
	assert_int_equal(STAT(f, failed), 1 + 3 + 1);
	assert_int_equal(rte_ring_count(lane(f, f->admin, LC)), 0);
}

/* A router of routers that ends in a broadcast: each copy carries both
 * hops; the front router forwarded the message once. */
static void test_broadcast_behind_a_router(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned ri, front;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "logic", f->router, SHMR_BEH_BROADCAST);
	dp_route(&f->d, ri, "r0", f->r[0], SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "r1", f->r[1], SHMR_ROUTE_RUNNING);
	dp_reg(&f->d, "logic", f->router);
	front = dp_router(&f->d, "front", f->other, SHMR_BEH_TYPE);
	dp_type(&f->d, front, 1, "logic");
	dp_spec_end(&f->d);
	rebuild(f);
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->other, 1, 0, 9));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	for (unsigned j = 0; j < 2; j++) {
		assert_int_equal(take(lane(f, f->r[j], LC), got, 64), 1);
		assert_int_equal(at(got, 0)->hops, 2);
		assert_int_equal(at(got, 0)->ref, 9);
	}
	assert_int_equal(atomic_load(&shmr_ep_ctr_of(f->d.base, LC, f->other.slot)->router_forwarded), 1);
	assert_int_equal(ROUTER_FWD(f), 2);
	assert_int_equal(STAT(f, forwarded), 2);
}

/* A dead routee still gets its copy (its inbox queues) and the control
 * plane is asked for a worker. */
static void test_broadcast_dead_routee_asks(void **state)
{
	struct fixture *f = *state;
	struct rte_ring *src = out_lane(f, f->a);
	unsigned char slot[SS], got[64 * SS];
	unsigned ri = spec_logic(f, SHMR_BEH_BROADCAST, 2);

	set_admin(f);
	dp_spec_begin(&f->d);
	shmr_routes_of(f->d.base, ri)[1].state = SHMR_ROUTE_DEAD;
	dp_spec_end(&f->d);
	rebuild(f);
	put(src, dp_msg(slot, SHMR_KIND_SEND, f->a, f->router, 1, 0, 1));
	assert_int_equal(shmr_dp_forward_burst_rcu(&f->lc, f->t,
						   poll_of(f, f->a), src),
			 1);
	assert_int_equal(rte_ring_count(lane(f, f->r[0], LC)), 1);
	assert_int_equal(rte_ring_count(lane(f, f->r[1], LC)), 1);
	assert_int_equal(take(lane(f, f->admin, LC), got, 64), 1);
	assert_int_equal(at(got, 0)->flags, SHMR_F_WANT_WORKER);
	assert_int_equal(at(got, 0)->to.slot, f->r[1].slot);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_routees_taking_part),
		T(test_round_robin_picks),
		T(test_round_robin_exact),
		T(test_random_picks),
		T(test_smallest_mailbox_rings),
		T(test_smallest_mailbox_burst),
		T(test_consistent_hash_picks),
		T(test_no_routees),
		T(test_broadcast_every_routee),
		T(test_broadcast_backpressure_swap),
		T(test_broadcast_progress_not_reused),
		T(test_broadcast_fail_when_full),
		T(test_broadcast_behind_a_router),
		T(test_broadcast_dead_routee_asks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
