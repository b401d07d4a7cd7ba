/*
 * The reply collector of scatter-gather and tail-chopping
 * (dataplane/collect.h).
 *
 * Time and random values are inputs, so every expectation is exact: the
 * deadline boundary (timed out at now >= start + within), the tail-chopping
 * grid (t0, t0 + interval, ...), and which routee a fixed random value
 * picks: floor(r * untried / 2^64), counted among the untried routees in
 * list order (r = 0: the first untried, r = 2^63: the middle one,
 * r = UINT64_MAX: the last one).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"

#define SLOT 128u
#define OWNER 2u
#define HALF (1ull << 63)

static const struct shmr_pid CALLER = { 5, 1 };
static const struct shmr_pid ROUTER = { 9, 3 };

/* ---- fixture: a collector and what its callbacks saw ---------------- */

#define MAX_EV 512

struct ev {
	char what; /* 's' send, 'x' expire */
	uint32_t routee;
	uint64_t now; /* the tick that produced it */
	unsigned char msg[SLOT];
};

struct fx {
	struct shmr_dp_collector c;
	void *mem;
	uint64_t now; /* of the tick in progress */
	/* random values handed out by ops.random, in order */
	const uint64_t *rnd;
	unsigned nrnd, rnd_used;
	/* sends that fail (return -1): the first `fail_sends` attempts */
	unsigned fail_sends;
	struct ev ev[MAX_EV];
	unsigned nev;
};

static uint64_t fx_random(void *ctx)
{
	struct fx *f = ctx;

	assert_true(f->rnd_used < f->nrnd); /* the test supplied enough */
	return f->rnd[f->rnd_used++];
}

static int fx_send(void *ctx, uint32_t routee, const struct shmr_msg *call)
{
	struct fx *f = ctx;
	struct ev *e;

	if (f->fail_sends) {
		f->fail_sends--;
		return -1;
	}
	assert_true(f->nev < MAX_EV);
	e = &f->ev[f->nev++];
	e->what = 's';
	e->routee = routee;
	e->now = f->now;
	memcpy(e->msg, call, SHMR_HDR_SIZE + call->len);
	return 0;
}

static void fx_expire(void *ctx, const struct shmr_msg *reply)
{
	struct fx *f = ctx;
	struct ev *e;

	assert_true(f->nev < MAX_EV);
	e = &f->ev[f->nev++];
	e->what = 'x';
	e->routee = 0;
	e->now = f->now;
	memcpy(e->msg, reply, SHMR_HDR_SIZE);
}

static struct fx *fx_new(uint32_t cap)
{
	struct fx *f = calloc(1, sizeof(*f));
	size_t size = shmr_dp_collect_mem_size(cap, SLOT);

	assert_non_null(f);
	assert_true(size > 0);
	f->mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	assert_non_null(f->mem);
	assert_int_equal(shmr_dp_collect_init(&f->c, f->mem, size, cap, SLOT,
					      OWNER),
			 0);
	return f;
}

static void fx_free(struct fx *f)
{
	free(f->mem);
	free(f);
}

static void fx_random_seq(struct fx *f, const uint64_t *r, unsigned n)
{
	f->rnd = r;
	f->nrnd = n;
	f->rnd_used = 0;
}

static unsigned fx_tick(struct fx *f, uint64_t now)
{
	struct shmr_dp_collect_ops ops = { fx_random, fx_send, fx_expire, f,
					    NULL };

	f->now = now;
	return shmr_dp_collect_tick(&f->c, now, &ops);
}

static const struct shmr_msg *ev_msg(const struct fx *f, unsigned i)
{
	return (const struct shmr_msg *)f->ev[i].msg;
}

/* A call from CALLER to ROUTER with ref @p ref and a small payload. */
static struct shmr_msg *call_new(uint64_t ref)
{
	struct shmr_msg *m = calloc(1, SLOT);

	assert_non_null(m);
	m->kind = SHMR_KIND_CALL;
	m->type = 42;
	m->from = CALLER;
	m->to = ROUTER;
	m->ref = ref;
	m->key = 0xfeed;
	m->hops = 1;
	m->len = 5;
	memcpy(m->data, "hello", 5);
	return m;
}

/* The reply routee @p routee (endpoint slot 20 + routee) sends to a call
 * it received as @p call. */
static struct shmr_msg *reply_new(const struct shmr_msg *call, uint32_t routee,
				  int32_t status)
{
	struct shmr_msg *m = calloc(1, SLOT);

	assert_non_null(m);
	m->kind = SHMR_KIND_REPLY;
	m->type = call->type;
	m->from = (struct shmr_pid){ 20 + routee, 1 };
	m->to = call->from; /* the router, since start() */
	m->ref = call->ref;
	m->status = status;
	m->len = 3;
	memcpy(m->data, "ans", 3);
	return m;
}

static uint64_t start_ok(struct fx *f, struct shmr_msg *call, uint32_t kind,
			 uint32_t n, uint64_t now, uint64_t within,
			 uint64_t interval, uint64_t rnd, uint32_t *first)
{
	struct shmr_dp_collect_args a = { kind, n, within, interval, rnd };
	uint32_t dummy;

	assert_int_equal(shmr_dp_collect_start(&f->c, call, &a, now,
					       first ? first : &dummy),
			 0);
	return call->ref;
}

/* ---- init and arguments ------------------------------------------- */

static void test_mem_size_and_init_errors(void **state)
{
	struct shmr_dp_collector c;
	size_t size = shmr_dp_collect_mem_size(4, SLOT);
	void *mem;

	(void)state;
	assert_int_equal(shmr_dp_collect_mem_size(0, SLOT), 0);
	assert_int_equal(shmr_dp_collect_mem_size(3, SLOT), 0);
	assert_int_equal(shmr_dp_collect_mem_size(SHMR_DP_COLLECT_CAP_MAX * 2u,
						  SLOT),
			 0);
	assert_int_equal(shmr_dp_collect_mem_size(4, SHMR_HDR_SIZE - 1), 0);
	assert_int_equal(shmr_dp_collect_mem_size(4, SHMR_SLOT_MAX + 1), 0);
	assert_true(shmr_dp_collect_mem_size(1, SHMR_HDR_SIZE) > 0);
	assert_true(size > 0);

	mem = aligned_alloc(64, (size + 64) & ~(size_t)63);
	assert_non_null(mem);
	assert_int_equal(shmr_dp_collect_init(&c, mem, size, 3, SLOT, 0),
			 -EINVAL);
	assert_int_equal(shmr_dp_collect_init(&c, mem, size, 4, 8, 0),
			 -EINVAL);
	assert_int_equal(shmr_dp_collect_init(&c, mem, size, 4, SLOT, 256),
			 -EINVAL);
	assert_int_equal(shmr_dp_collect_init(&c, NULL, size, 4, SLOT, 0),
			 -EINVAL);
	assert_int_equal(shmr_dp_collect_init(&c, (char *)mem + 4, size, 4,
					      SLOT, 0),
			 -EINVAL);
	assert_int_equal(shmr_dp_collect_init(&c, mem, size - 1, 4, SLOT, 0),
			 -ENOSPC);
	assert_int_equal(shmr_dp_collect_init(&c, mem, size, 4, SLOT, 255), 0);
	assert_int_equal(c.nlive, 0);
	assert_int_equal(shmr_dp_collect_next_due(&c), UINT64_MAX);
	free(mem);
}

static void test_start_rewrites_the_call(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	uint32_t first = 99;
	uint64_t ref;

	(void)state;
	ref = start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 3, 1000, 500, 0, 0,
		       &first);
	assert_int_equal(first, 0);
	/* The routees answer the router, with the collector's ref. */
	assert_int_equal(m->from.slot, ROUTER.slot);
	assert_int_equal(m->from.gen, ROUTER.gen);
	assert_int_equal(m->to.slot, ROUTER.slot);
	assert_int_equal(shmr_dp_collect_ref_owner(ref), OWNER);
	assert_int_equal(shmr_dp_collect_ref_index(ref), 0);
	assert_int_equal(shmr_dp_collect_ref_gen(ref), 1);
	/* Everything else is the caller's. */
	assert_int_equal(m->type, 42);
	assert_int_equal(m->hops, 1);
	assert_int_equal(m->len, 5);
	assert_memory_equal(m->data, "hello", 5);
	assert_int_equal(f->c.nlive, 1);
	assert_int_equal(f->c.st.started, 1);
	/* A scatter-gather entry has nothing to do before its deadline. */
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 1500);
	free(m);
	fx_free(f);
}

static void test_no_routees(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77), *orig = call_new(77);
	struct shmr_dp_collect_args sg = { SHMR_DP_COLLECT_SCATTER, 0, 100, 0,
					   0 };
	struct shmr_dp_collect_args tc = { SHMR_DP_COLLECT_TAIL, 0, 100, 10,
					   0 };
	uint32_t first;

	(void)state;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &sg, 0, &first),
			 -SHMR_E_NO_ROUTEES);
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &tc, 0, &first),
			 -SHMR_E_NO_ROUTEES);
	/* Answered at once: no entry, call untouched. */
	assert_memory_equal(m, orig, SLOT);
	assert_int_equal(f->c.nlive, 0);
	assert_int_equal(f->c.st.started, 0);
	free(m);
	free(orig);
	fx_free(f);
}

static void test_bad_arguments(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77), *orig = call_new(77);
	struct shmr_dp_collect_args ok = { SHMR_DP_COLLECT_TAIL, 3, 100, 10,
					   0 };
	struct shmr_dp_collect_args a;
	uint32_t first;

	(void)state;
	a = ok;
	a.kind = 0;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &a, 0, &first),
			 -EINVAL);
	a = ok;
	a.kind = 3;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &a, 0, &first),
			 -EINVAL);
	a = ok;
	a.within_ns = 0;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &a, 0, &first),
			 -EINVAL);
	a = ok;
	a.interval_ns = 0;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &a, 0, &first),
			 -EINVAL);
	a = ok;
	a.nroutees = SHMR_DP_COLLECT_MAX_ROUTEES + 1;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &a, 0, &first),
			 -EINVAL);
	m->kind = SHMR_KIND_SEND;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &ok, 0, &first),
			 -EINVAL);
	m->kind = SHMR_KIND_CALL;
	m->len = SLOT - SHMR_HDR_SIZE + 1;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &ok, 0, &first),
			 -EINVAL);
	m->len = orig->len;
	assert_memory_equal(m, orig, SLOT);
	/* A scatter-gather interval is ignored. */
	a = ok;
	a.kind = SHMR_DP_COLLECT_SCATTER;
	a.interval_ns = 0;
	assert_int_equal(shmr_dp_collect_start(&f->c, m, &a, 0, &first), 0);
	assert_int_equal(f->c.nlive, 1);
	free(m);
	free(orig);
	fx_free(f);
}

/* ---- first reply wins -------------------------------------------- */

static void test_first_reply_wins(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	struct shmr_msg *r1, *r0, *r2;
	unsigned char before[SLOT];

	(void)state;
	start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 3, 1000, 500, 0, 0, NULL);
	r1 = reply_new(m, 1, 0);
	r0 = reply_new(m, 0, 0);
	r2 = reply_new(m, 2, 0);

	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r1, 1200),
			 SHMR_DP_COLLECT_DELIVER);
	/* To the caller, with its own ref; the routee's answer as sent. */
	assert_int_equal(r1->to.slot, CALLER.slot);
	assert_int_equal(r1->to.gen, CALLER.gen);
	assert_int_equal(r1->ref, 77);
	assert_int_equal(r1->from.slot, 21);
	assert_int_equal(r1->status, 0);
	assert_int_equal(r1->type, 42);
	assert_int_equal(r1->len, 3);
	assert_memory_equal(r1->data, "ans", 3);
	assert_int_equal(f->c.nlive, 0);

	/* The later ones are dropped, counted, and left as they were. */
	memcpy(before, r0, SLOT);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r0, 1201),
			 SHMR_DP_COLLECT_DROP);
	assert_memory_equal(r0, before, SLOT);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r2, 1300),
			 SHMR_DP_COLLECT_DROP);
	assert_int_equal(f->c.st.delivered, 1);
	assert_int_equal(f->c.st.dropped, 2);
	/* Nothing left to time out. */
	assert_int_equal(fx_tick(f, 5000), 0);
	assert_int_equal(f->nev, 0);
	assert_int_equal(f->c.st.timeouts, 0);
	free(m);
	free(r0);
	free(r1);
	free(r2);
	fx_free(f);
}

static void test_error_reply_counts(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	struct shmr_msg *bad, *good;

	(void)state;
	start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 2, 0, 500, 0, 0, NULL);
	bad = reply_new(m, 0, -SHMR_E_DISABLED);
	good = reply_new(m, 1, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, bad, 10),
			 SHMR_DP_COLLECT_DELIVER);
	assert_int_equal(bad->status, -SHMR_E_DISABLED);
	assert_int_equal(bad->ref, 77);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, good, 11),
			 SHMR_DP_COLLECT_DROP);
	assert_int_equal(f->c.st.delivered, 1);
	assert_int_equal(f->c.st.dropped, 1);
	free(m);
	free(bad);
	free(good);
	fx_free(f);
}

static void test_unknown_refs_dropped(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	struct shmr_msg *r;
	uint64_t ref;

	(void)state;
	ref = start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 2, 0, 500, 0, 0, NULL);
	r = reply_new(m, 0, 0);
	/* Another lcore's ref, an index past the table, another gen, a
	 * free entry, and a slot that is not a reply. */
	r->ref = ref ^ (1ull << 24);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DROP);
	r->ref = (ref & ~0xffffffull) | 8;
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DROP);
	r->ref = ref + (1ull << 32);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DROP);
	r->ref = ref + 1;
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DROP);
	r->ref = 0;
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DROP);
	r->ref = ref;
	r->kind = SHMR_KIND_CALL;
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DROP);
	assert_int_equal(f->c.st.dropped, 6);
	/* The real entry was never touched. */
	assert_int_equal(f->c.nlive, 1);
	r->kind = SHMR_KIND_REPLY;
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DELIVER);
	free(m);
	free(r);
	fx_free(f);
}

/* ---- the deadline ------------------------------------------------- */

/* Check that event @p i is the timeout of the call made by call_new(ref). */
static void assert_timeout_ev(const struct fx *f, unsigned i, uint64_t ref)
{
	const struct shmr_msg *x = ev_msg(f, i);

	assert_int_equal(f->ev[i].what, 'x');
	assert_int_equal(x->kind, SHMR_KIND_REPLY);
	assert_int_equal(x->status, -SHMR_E_TIMEOUT);
	assert_int_equal(x->to.slot, CALLER.slot);
	assert_int_equal(x->to.gen, CALLER.gen);
	assert_int_equal(x->from.slot, ROUTER.slot);
	assert_int_equal(x->from.gen, ROUTER.gen);
	assert_int_equal(x->ref, ref);
	assert_int_equal(x->type, 42);
	assert_int_equal(x->key, 0xfeed);
	assert_int_equal(x->len, 0);
	assert_int_equal(x->flags, 0);
	assert_int_equal(x->hops, 0);
}

static void test_timeout_at_the_deadline(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	struct shmr_msg *r;

	(void)state;
	start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 3, 1000, 500, 0, 0, NULL);
	/* One nanosecond before the deadline: still waiting. */
	assert_int_equal(fx_tick(f, 1499), 0);
	assert_int_equal(f->nev, 0);
	/* At the deadline (start + within) exactly: timed out. */
	assert_int_equal(fx_tick(f, 1500), 1);
	assert_int_equal(f->nev, 1);
	assert_timeout_ev(f, 0, 77);
	assert_int_equal(f->c.st.timeouts, 1);
	assert_int_equal(f->c.nlive, 0);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), UINT64_MAX);
	/* Once only. */
	assert_int_equal(fx_tick(f, 9999), 0);
	/* A reply after the timeout is late. */
	r = reply_new(m, 0, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1501),
			 SHMR_DP_COLLECT_DROP);
	assert_int_equal(f->c.st.dropped, 1);
	assert_int_equal(f->c.st.delivered, 0);
	free(m);
	free(r);
	fx_free(f);
}

static void test_reply_at_the_deadline(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *a = call_new(1), *b = call_new(2);
	struct shmr_msg *ra, *rb;

	(void)state;
	start_ok(f, a, SHMR_DP_COLLECT_SCATTER, 2, 1000, 500, 0, 0, NULL);
	start_ok(f, b, SHMR_DP_COLLECT_TAIL, 2, 1000, 500, 100, 0, NULL);
	ra = reply_new(a, 0, 0);
	rb = reply_new(b, 0, 0);
	/* Before the deadline, even with no tick since start: delivered. */
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, ra, 1499),
			 SHMR_DP_COLLECT_DELIVER);
	/* At the deadline, before any tick saw it: the caller gets the
	 * timeout tick() would have given, in the reply's place. */
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, rb, 1500),
			 SHMR_DP_COLLECT_TIMEOUT);
	assert_int_equal(rb->status, -SHMR_E_TIMEOUT);
	assert_int_equal(rb->to.slot, CALLER.slot);
	assert_int_equal(rb->from.slot, ROUTER.slot);
	assert_int_equal(rb->ref, 2);
	assert_int_equal(rb->len, 0);
	assert_int_equal(f->c.st.delivered, 1);
	assert_int_equal(f->c.st.timeouts, 1);
	assert_int_equal(f->c.st.dropped, 1);
	/* Answered once: tick() has nothing left. */
	assert_int_equal(f->c.nlive, 0);
	assert_int_equal(fx_tick(f, 2000), 0);
	free(a);
	free(b);
	free(ra);
	free(rb);
	fx_free(f);
}

static void test_deadline_saturates(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(7);

	(void)state;
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 2, UINT64_MAX - 10, 100, 50, 0,
		 NULL);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), UINT64_MAX);
	assert_int_equal(fx_tick(f, UINT64_MAX - 1), 0);
	/* The clock's last value is at the (saturated) deadline. */
	assert_int_equal(fx_tick(f, UINT64_MAX), 1);
	assert_timeout_ev(f, 0, 7);
	free(m);
	fx_free(f);
}

/* ---- tail-chopping -------------------------------------------------- */

static void test_tail_grid_and_exact_picks(void **state)
{
	/* 4 routees.  First pick with 2^63: the middle of {0,1,2,3} -> 2.
	 * Then UINT64_MAX: the last of {0,1,3} -> 3; 0: the first of {0,1}
	 * -> 0; 2^63: of {1} -> 1. */
	static const uint64_t rnd[] = { UINT64_MAX, 0, HALF };
	static const uint32_t want[] = { 3, 0, 1 };
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	uint32_t first = 99;
	uint64_t ref, t0 = 1000;

	(void)state;
	fx_random_seq(f, rnd, 3);
	ref = start_ok(f, m, SHMR_DP_COLLECT_TAIL, 4, t0, 1000, 100, HALF,
		       &first);
	assert_int_equal(first, 2);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), t0 + 100);
	for (unsigned k = 1; k <= 3; k++) {
		uint64_t t = t0 + k * 100;

		assert_int_equal(fx_tick(f, t - 1), 0);
		assert_int_equal(f->nev, k - 1);
		assert_int_equal(fx_tick(f, t), 1);
		assert_int_equal(f->nev, k);
		assert_int_equal(f->ev[k - 1].what, 's');
		assert_int_equal(f->ev[k - 1].routee, want[k - 1]);
	}
	/* The resent call is the one the first routee got. */
	for (unsigned k = 0; k < 3; k++) {
		const struct shmr_msg *s = ev_msg(f, k);

		assert_int_equal(s->kind, SHMR_KIND_CALL);
		assert_int_equal(s->ref, ref);
		assert_int_equal(s->from.slot, ROUTER.slot);
		assert_int_equal(s->from.gen, ROUTER.gen);
		assert_int_equal(s->type, 42);
		assert_int_equal(s->hops, 1);
		assert_int_equal(s->len, 5);
		assert_memory_equal(s->data, "hello", 5);
	}
	assert_int_equal(f->rnd_used, 3);
	assert_int_equal(f->c.st.sends, 3);
	/* All four tried: nothing more until the deadline. */
	assert_int_equal(shmr_dp_collect_next_due(&f->c), t0 + 1000);
	assert_int_equal(fx_tick(f, t0 + 999), 0);
	assert_int_equal(fx_tick(f, t0 + 1000), 1);
	assert_int_equal(f->nev, 4);
	assert_timeout_ev(f, 3, 77);
	free(m);
	fx_free(f);
}

static void test_tail_reply_cancels_the_rest(void **state)
{
	static const uint64_t rnd[] = { 0, 0, 0, 0 };
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	struct shmr_msg *r;
	uint32_t first;

	(void)state;
	fx_random_seq(f, rnd, 4);
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 5, 0, 1000, 100, 0, &first);
	assert_int_equal(first, 0);
	assert_int_equal(fx_tick(f, 100), 1);
	assert_int_equal(f->ev[0].routee, 1);
	/* The first routee answers before the third send. */
	r = reply_new(m, 0, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 150),
			 SHMR_DP_COLLECT_DELIVER);
	assert_int_equal(r->ref, 77);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), UINT64_MAX);
	/* No more sends, no timeout. */
	assert_int_equal(fx_tick(f, 200), 0);
	assert_int_equal(fx_tick(f, 5000), 0);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->c.st.sends, 1);
	assert_int_equal(f->c.st.timeouts, 0);
	/* The second routee's reply is late. */
	free(r);
	r = reply_new(m, 1, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 160),
			 SHMR_DP_COLLECT_DROP);
	free(m);
	free(r);
	fx_free(f);
}

static void test_tail_late_tick_catches_up(void **state)
{
	static const uint64_t rnd[] = { 0, 0, 0, 0 };
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);

	(void)state;
	fx_random_seq(f, rnd, 4);
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 6, 0, 1000, 100, UINT64_MAX,
		 NULL); /* first: routee 5 */
	/* Sends due at 100, 200, 300: a tick at 350 makes all three. */
	assert_int_equal(fx_tick(f, 350), 3);
	assert_int_equal(f->nev, 3);
	assert_int_equal(f->ev[0].routee, 0);
	assert_int_equal(f->ev[1].routee, 1);
	assert_int_equal(f->ev[2].routee, 2);
	/* The grid is kept: the next one at 400, not 450. */
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 400);
	assert_int_equal(fx_tick(f, 400), 1);
	assert_int_equal(f->ev[3].routee, 3);
	free(m);
	fx_free(f);
}

static void test_tail_no_send_at_the_deadline(void **state)
{
	static const uint64_t rnd[] = { 0, 0, 0, 0, 0 };
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);

	(void)state;
	fx_random_seq(f, rnd, 5);
	/* Sends at 0 (start), 100, 200; 300 is the deadline itself. */
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 8, 0, 300, 100, 0, NULL);
	assert_int_equal(fx_tick(f, 300), 3);
	assert_int_equal(f->nev, 3);
	assert_int_equal(f->ev[0].what, 's');
	assert_int_equal(f->ev[1].what, 's');
	assert_int_equal(f->ev[2].what, 'x');
	assert_int_equal(f->c.st.sends, 2);
	assert_int_equal(f->rnd_used, 2);
	/* An interval longer than within: the first send is the only one. */
	m->from = CALLER;
	m->ref = 78;
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 8, 1000, 300, 300, 0, NULL);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 1300);
	assert_int_equal(fx_tick(f, 1300), 1);
	assert_int_equal(f->ev[3].what, 'x');
	assert_int_equal(f->c.st.sends, 2);
	free(m);
	fx_free(f);
}

static void test_tail_single_routee(void **state)
{
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);
	uint32_t first = 9;

	(void)state;
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 1, 0, 1000, 10, UINT64_MAX,
		 &first);
	assert_int_equal(first, 0);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 1000);
	assert_int_equal(fx_tick(f, 999), 0);
	free(m);
	fx_free(f);
}

static void test_tail_failed_send_retried(void **state)
{
	static const uint64_t rnd[] = { 0, 0, 0 };
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(77);

	(void)state;
	fx_random_seq(f, rnd, 3);
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 3, 0, 1000, 100, 0, NULL);
	f->fail_sends = 1;
	/* The send at 100 finds routee 1's lane full. */
	assert_int_equal(fx_tick(f, 100), 1);
	assert_int_equal(f->nev, 0);
	assert_int_equal(f->c.st.retries, 1);
	assert_int_equal(f->c.st.sends, 0);
	/* Not again in the same tick time; the next tick after it. */
	assert_int_equal(fx_tick(f, 100), 0);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 101);
	assert_int_equal(fx_tick(f, 130), 1);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0].routee, 1); /* still untried: picked */
	assert_int_equal(f->c.st.sends, 1);
	/* The grid did not move: next at 200. */
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 200);
	assert_int_equal(fx_tick(f, 200), 1);
	assert_int_equal(f->ev[1].routee, 2);
	free(m);
	fx_free(f);
}

static void test_tail_64_routees(void **state)
{
	uint64_t lo[63], hi[63];
	struct fx *f = fx_new(8);
	struct shmr_msg *m = call_new(1);
	uint32_t first;

	(void)state;
	for (unsigned i = 0; i < 63; i++) {
		lo[i] = 0;
		hi[i] = UINT64_MAX;
	}
	/* r = 0 every time: routees in list order. */
	fx_random_seq(f, lo, 63);
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 64, 0, 100000, 10, 0, &first);
	assert_int_equal(first, 0);
	assert_int_equal(fx_tick(f, 630), 63);
	for (unsigned i = 0; i < 63; i++)
		assert_int_equal(f->ev[i].routee, i + 1);
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 100000);
	/* r = UINT64_MAX every time: from the last down. */
	f->nev = 0;
	m->from = CALLER;
	m->ref = 2;
	fx_random_seq(f, hi, 63);
	start_ok(f, m, SHMR_DP_COLLECT_TAIL, 64, 0, 100000, 10, UINT64_MAX,
		 &first);
	assert_int_equal(first, 63);
	assert_int_equal(fx_tick(f, 630), 63);
	for (unsigned i = 0; i < 63; i++)
		assert_int_equal(f->ev[i].routee, 62 - i);
	free(m);
	fx_free(f);
}

/* ---- capacity and reuse ---------------------------------------------- */

static void test_table_full(void **state)
{
	struct fx *f = fx_new(4);
	struct shmr_msg *m[5], *orig, *r;
	struct shmr_dp_collect_args a = { SHMR_DP_COLLECT_SCATTER, 2, 100, 0,
					   0 };
	uint32_t first;

	(void)state;
	for (unsigned i = 0; i < 5; i++)
		m[i] = call_new(100 + i);
	orig = call_new(104);
	for (unsigned i = 0; i < 4; i++)
		start_ok(f, m[i], SHMR_DP_COLLECT_SCATTER, 2, 0, 100, 0, 0,
			 NULL);
	assert_int_equal(shmr_dp_collect_start(&f->c, m[4], &a, 0, &first),
			 -ENOSPC);
	assert_int_equal(f->c.st.full, 1);
	assert_memory_equal(m[4], orig, SLOT); /* untouched */
	assert_int_equal(SHMR_DP_COLLECT_FULL_STATUS, -SHMR_E_MAILBOX_FULL);
	/* One answered: room for one more, in the entry it freed. */
	r = reply_new(m[2], 0, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DELIVER);
	start_ok(f, m[4], SHMR_DP_COLLECT_SCATTER, 2, 0, 100, 0, 0, NULL);
	assert_int_equal(shmr_dp_collect_ref_index(m[4]->ref),
			 shmr_dp_collect_ref_index(m[2]->ref));
	assert_int_equal(shmr_dp_collect_ref_gen(m[4]->ref), 2);
	assert_int_equal(f->c.nlive, 4);
	assert_int_equal(f->c.st.started, 5);
	for (unsigned i = 0; i < 5; i++)
		free(m[i]);
	free(orig);
	free(r);
	fx_free(f);
}

static void test_stale_ref_after_reuse(void **state)
{
	struct fx *f = fx_new(1);
	struct shmr_msg *a = call_new(1), *b = call_new(2);
	struct shmr_msg *ra1, *ra2, *rb;

	(void)state;
	start_ok(f, a, SHMR_DP_COLLECT_SCATTER, 2, 0, 100, 0, 0, NULL);
	ra1 = reply_new(a, 0, 0);
	ra2 = reply_new(a, 1, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, ra1, 1),
			 SHMR_DP_COLLECT_DELIVER);
	/* The only entry is taken again by another call. */
	start_ok(f, b, SHMR_DP_COLLECT_SCATTER, 2, 2, 100, 0, 0, NULL);
	assert_int_equal(shmr_dp_collect_ref_index(a->ref),
			 shmr_dp_collect_ref_index(b->ref));
	assert_true(a->ref != b->ref);
	/* a's second routee answers late: it must not answer b's caller. */
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, ra2, 3),
			 SHMR_DP_COLLECT_DROP);
	assert_int_equal(ra2->ref, a->ref);
	assert_int_equal(f->c.nlive, 1);
	rb = reply_new(b, 0, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, rb, 4),
			 SHMR_DP_COLLECT_DELIVER);
	assert_int_equal(rb->ref, 2);
	free(a);
	free(b);
	free(ra1);
	free(ra2);
	free(rb);
	fx_free(f);
}

static void test_cancel(void **state)
{
	struct fx *f = fx_new(4);
	struct shmr_msg *m = call_new(1);
	uint64_t ref;

	(void)state;
	ref = start_ok(f, m, SHMR_DP_COLLECT_TAIL, 3, 0, 100, 10, 0, NULL);
	assert_int_equal(shmr_dp_collect_cancel(&f->c, ref), 0);
	assert_int_equal(shmr_dp_collect_cancel(&f->c, ref), -ENOENT);
	assert_int_equal(shmr_dp_collect_cancel(&f->c, 12345), -ENOENT);
	assert_int_equal(f->c.st.cancelled, 1);
	assert_int_equal(f->c.nlive, 0);
	/* Nothing sent, nothing timed out: the caller is answered by the
	 * call's second decision, not by the collector. */
	assert_int_equal(fx_tick(f, 1000), 0);
	assert_int_equal(f->c.st.timeouts, 0);
	free(m);
	fx_free(f);
}

/* caller() names the caller of a live entry and changes nothing; a freed
 * or unknown ref has none. */
static void test_caller_peek(void **state)
{
	struct fx *f = fx_new(4);
	struct shmr_msg *m = call_new(7), *r;
	struct shmr_pid who = { 0, 0 };
	uint64_t ref;

	(void)state;
	ref = start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 2, 0, 100, 0, 0, NULL);
	assert_int_equal(shmr_dp_collect_caller(&f->c, ref, &who), 0);
	assert_int_equal(who.slot, CALLER.slot);
	assert_int_equal(who.gen, CALLER.gen);
	assert_int_equal(f->c.nlive, 1);
	assert_int_equal(f->c.st.dropped, 0);
	assert_int_equal(shmr_dp_collect_caller(&f->c, ref + (1ull << 32),
						&who),
			 -ENOENT);
	r = reply_new(m, 0, 0);
	assert_int_equal(shmr_dp_collect_on_reply(&f->c, r, 1),
			 SHMR_DP_COLLECT_DELIVER);
	assert_int_equal(shmr_dp_collect_caller(&f->c, ref, &who), -ENOENT);
	free(r);
	free(m);
	fx_free(f);
}

static void test_many_expire_in_one_tick(void **state)
{
	enum { N = 50 };
	struct fx *f = fx_new(64);
	struct shmr_msg *m = call_new(0);
	uint64_t deadline[N];

	(void)state;
	/* Deadlines in a scrambled order with repeats: (i * 7) % 10. */
	for (unsigned i = 0; i < N; i++) {
		uint64_t within = 100 + ((i * 7) % 10) * 10;

		m->from = CALLER;
		m->to = ROUTER;
		m->ref = 1000 + i;
		start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 2, i, within, 0, 0,
			 NULL);
		deadline[i] = i + within;
	}
	/* One more that outlives the tick. */
	m->from = CALLER;
	m->ref = 5000;
	start_ok(f, m, SHMR_DP_COLLECT_SCATTER, 2, 0, 100000, 0, 0, NULL);
	assert_int_equal(fx_tick(f, 10000), N);
	assert_int_equal(f->nev, N);
	assert_int_equal(f->c.st.timeouts, N);
	assert_int_equal(f->c.nlive, 1);
	/* Each call timed out once, in deadline order, ties in start order. */
	for (unsigned k = 0; k < N; k++) {
		const struct shmr_msg *x = ev_msg(f, k);
		unsigned i = (unsigned)(x->ref - 1000);

		assert_true(i < N);
		assert_int_equal(x->status, -SHMR_E_TIMEOUT);
		if (k > 0) {
			unsigned p = (unsigned)(ev_msg(f, k - 1)->ref - 1000);

			assert_true(deadline[p] < deadline[i] ||
				    (deadline[p] == deadline[i] && p < i));
		}
	}
	assert_int_equal(shmr_dp_collect_next_due(&f->c), 100000);
	free(m);
	fx_free(f);
}

/*
 * The heap against a model: random starts, replies, cancels and ticks
 * (fixed seed), each checked against a linear scan that applies the
 * documented rules directly.
 */
struct model_ent {
	int live;
	uint64_t ref, caller_ref, deadline, next_send, retry_at, interval;
	uint64_t seq, tried;
	uint32_t n, kind;
};

struct model {
	struct fx *f;
	struct model_ent *e;
	unsigned n, live;
	uint64_t seq;
	const uint64_t *rnd; /* the same values the fixture hands out */
	unsigned used;
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 17;
}

static uint64_t model_all(const struct model_ent *e)
{
	return e->n >= 64 ? UINT64_MAX : (1ull << e->n) - 1;
}

static uint64_t model_due(const struct model_ent *e)
{
	uint64_t s;

	if (e->kind != SHMR_DP_COLLECT_TAIL || e->tried == model_all(e))
		return e->deadline;
	s = e->next_send > e->retry_at ? e->next_send : e->retry_at;
	return s < e->deadline ? s : e->deadline;
}

/* The documented pick, written out: the k-th untried routee in list
 * order, k = floor(r * untried / 2^64) (the 128-bit product). */
static uint32_t model_pick(const struct model_ent *e, uint64_t r)
{
	uint64_t left = model_all(e) & ~e->tried;
	unsigned __int128 p = (unsigned __int128)r *
			      (unsigned)__builtin_popcountll(left);
	uint64_t k = (uint64_t)(p >> 64);

	while (k--)
		left &= left - 1;
	return (uint32_t)__builtin_ctzll(left);
}

/* The live entry with the earliest (due, start order), or NULL. */
static struct model_ent *model_next(struct model *md)
{
	struct model_ent *best = NULL;
	uint64_t bd = 0;

	for (unsigned i = 0; i < md->n; i++) {
		struct model_ent *e = &md->e[i];
		uint64_t d;

		if (!e->live)
			continue;
		d = model_due(e);
		if (!best || d < bd || (d == bd && e->seq < best->seq)) {
			best = e;
			bd = d;
		}
	}
	return best;
}

static void model_start(struct model *md, struct shmr_msg *m, uint64_t now,
			uint64_t *seed, unsigned cap)
{
	struct model_ent *e = &md->e[md->n];
	struct shmr_dp_collect_args a;
	uint32_t first;
	int rc;

	a.kind = lcg(seed) % 2 ? SHMR_DP_COLLECT_TAIL : SHMR_DP_COLLECT_SCATTER;
	a.nroutees = 1 + (uint32_t)(lcg(seed) % 6);
	a.within_ns = 1 + lcg(seed) % 120;
	a.interval_ns = 1 + lcg(seed) % 15;
	a.rnd = lcg(seed);
	m->from = CALLER;
	m->to = ROUTER;
	m->ref = 100000 + md->n;
	rc = shmr_dp_collect_start(&md->f->c, m, &a, now, &first);
	if (md->live == cap) {
		assert_int_equal(rc, -ENOSPC);
		return;
	}
	assert_int_equal(rc, 0);
	memset(e, 0, sizeof(*e));
	e->live = 1;
	e->ref = m->ref;
	e->caller_ref = 100000 + md->n;
	e->deadline = now + a.within_ns;
	e->kind = a.kind;
	e->n = a.nroutees;
	e->interval = a.interval_ns;
	e->next_send = now + a.interval_ns;
	e->seq = md->seq++;
	e->tried = a.kind == SHMR_DP_COLLECT_TAIL ? 1ull << first
						  : model_all(e);
	md->n++;
	md->live++;
}

static void model_reply(struct model *md, struct shmr_msg *r,
			struct model_ent *e, uint64_t now)
{
	int v;

	r->kind = SHMR_KIND_REPLY;
	r->ref = e->ref;
	r->to = ROUTER;
	v = shmr_dp_collect_on_reply(&md->f->c, r, now);
	if (!e->live) {
		assert_int_equal(v, SHMR_DP_COLLECT_DROP);
		return;
	}
	assert_int_equal(v, now >= e->deadline ? SHMR_DP_COLLECT_TIMEOUT
					       : SHMR_DP_COLLECT_DELIVER);
	assert_int_equal(r->ref, e->caller_ref);
	e->live = 0;
	md->live--;
}

/* A tick, with the first @p fail sends failing, against the model. */
static void model_tick(struct model *md, uint64_t now, unsigned fail)
{
	struct fx *f = md->f;
	unsigned got, want = 0, ei = 0;
	struct model_ent *e;

	f->nev = 0;
	f->fail_sends = fail;
	got = fx_tick(f, now);
	while ((e = model_next(md)) && model_due(e) <= now) {
		uint32_t pick;

		want++;
		if (model_due(e) == e->deadline) {
			assert_true(ei < f->nev);
			assert_int_equal(f->ev[ei].what, 'x');
			assert_int_equal(ev_msg(f, ei)->ref, e->caller_ref);
			ei++;
			e->live = 0;
			md->live--;
			continue;
		}
		pick = model_pick(e, md->rnd[md->used++]);
		if (fail) {
			fail--;
			e->retry_at = now + 1;
			continue;
		}
		assert_true(ei < f->nev);
		assert_int_equal(f->ev[ei].what, 's');
		assert_int_equal(f->ev[ei].routee, pick);
		assert_int_equal(ev_msg(f, ei)->ref, e->ref);
		ei++;
		e->tried |= 1ull << pick;
		e->next_send += e->interval;
		e->retry_at = 0;
	}
	assert_int_equal(got, want);
	assert_int_equal(f->nev, ei);
	assert_int_equal(f->rnd_used, md->used);
}

static void test_against_a_model(void **state)
{
	enum { CAP = 8, MODEL = 10000, STEPS = 20000, NRND = STEPS * 8 };
	struct model md = { 0 };
	uint64_t *rnd = calloc(NRND, sizeof(uint64_t));
	struct shmr_msg *m = call_new(0), *r = calloc(1, SLOT);
	uint64_t seed = 12345, now = 0;

	(void)state;
	md.f = fx_new(CAP);
	md.e = calloc(MODEL, sizeof(*md.e));
	assert_non_null(md.e);
	assert_non_null(rnd);
	assert_non_null(r);
	for (unsigned i = 0; i < NRND; i++)
		rnd[i] = lcg(&seed) * 0x9e3779b97f4a7c15ull;
	md.rnd = rnd;
	fx_random_seq(md.f, rnd, NRND);
	for (unsigned step = 0; step < STEPS; step++) {
		unsigned op = (unsigned)(lcg(&seed) % 10);

		now += lcg(&seed) % 7;
		if (op < 4 && md.n < MODEL)
			model_start(&md, m, now, &seed, CAP);
		else if (op < 6 && md.n > 0)
			model_reply(&md, r, &md.e[lcg(&seed) % md.n], now);
		else if (op < 7 && md.n > 0) {
			struct model_ent *e = &md.e[lcg(&seed) % md.n];

			assert_int_equal(shmr_dp_collect_cancel(&md.f->c,
								e->ref),
					 e->live ? 0 : -ENOENT);
			if (e->live) {
				e->live = 0;
				md.live--;
			}
		} else {
			model_tick(&md, now, (unsigned)(lcg(&seed) % 2));
		}
		assert_int_equal(md.f->c.nlive, md.live);
	}
	/* Every path was taken. */
	assert_true(md.f->c.st.full > 0);
	assert_true(md.f->c.st.timeouts > 0);
	assert_true(md.f->c.st.delivered > 0);
	assert_true(md.f->c.st.cancelled > 0);
	assert_true(md.f->c.st.sends > 0);
	assert_true(md.f->c.st.retries > 0);
	free(md.e);
	free(rnd);
	free(m);
	free(r);
	fx_free(md.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mem_size_and_init_errors),
		cmocka_unit_test(test_start_rewrites_the_call),
		cmocka_unit_test(test_no_routees),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_first_reply_wins),
		cmocka_unit_test(test_error_reply_counts),
		cmocka_unit_test(test_unknown_refs_dropped),
		cmocka_unit_test(test_timeout_at_the_deadline),
		cmocka_unit_test(test_reply_at_the_deadline),
		cmocka_unit_test(test_deadline_saturates),
		cmocka_unit_test(test_tail_grid_and_exact_picks),
		cmocka_unit_test(test_tail_reply_cancels_the_rest),
		cmocka_unit_test(test_tail_late_tick_catches_up),
		cmocka_unit_test(test_tail_no_send_at_the_deadline),
		cmocka_unit_test(test_tail_single_routee),
		cmocka_unit_test(test_tail_failed_send_retried),
		cmocka_unit_test(test_tail_64_routees),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_stale_ref_after_reuse),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_caller_peek),
		cmocka_unit_test(test_many_expire_in_one_tick),
		cmocka_unit_test(test_against_a_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
