/*
 * Large messages through the payload arena (issue 15, step 1), against
 * the real appliance: shmr-control, the dataplane and shmr-large-worker
 * routes (tests/workers/large_worker.c), which give every payload back
 * byte for byte.  Checked from outside, as a user would:
 *
 *   sizes        a call with a buffer of every size from 1 to 300 bytes
 *                and around every power of two up to the largest class
 *                (1 MiB: every class's edges, +/- 1), through each logic
 *                that routes a call (round-robin, smallest-mailbox,
 *                consistent-hash, type, balancing, tail-chopping, and
 *                scatter-gather, whose copies share the buffer): the
 *                reply (inline when it fits a slot, else
 *                in the worker's own buffer) is the request, byte for
 *                byte; sends come back without a copy (the worker keeps
 *                the buffer and sends it on); afterwards every buffer is
 *                free again
 *   shared       broadcast (a pool, and the Broadcast envelope) at the
 *                same sizes: both routees' copies share one buffer, and
 *                each copy, sent back, is the payload byte for byte;
 *                every buffer free afterwards
 *   dead letters sends in buffers that fail routing: the dead-letter file
 *                keeps their payload (DLQ_LIST shows its length), the
 *                buffers are free, and `shmrctl dlq replay` delivers each
 *                byte for byte (inline or in a new buffer)
 *   forged       slots with a bad class, index, generation or owner put
 *                straight into our outbound lane: each dropped and
 *                counted by the dataplane, both daemons the same
 *                processes, a real call still answered
 *   exhaustion   an empty class gives SHMR_E_NO_BUFFER at once; it
 *                recovers as the receiver (here: us) releases; shmrctl
 *                status shows each class's count, free, in use, reclaimed
 *                and allocation failures as they are
 *   adoption     the control plane killed and started again: the adopted
 *                domain keeps its arena (classes, a buffer we hold), large
 *                calls go on meanwhile and after
 *   config       a class that is not a power of two is refused by --check
 *                with a one-line error naming the field
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
#include <time.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/arena.h>
#include <shmr/domain.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "arena_checks.h"
#include "large_buf.h"

#define CALL_MS 10000
#define BIG (1u << 20) /* the largest class */

#define ARENA_CONF "arena = { classes = [ \"4K:16\", \"64K:16\", \"1M:4\" ]; };\n"
#define POOL(name, logic)                                                    \
	"  { name = \"" name "\"; behaviour = \"" logic "\";\n"              \
	"    pool = { size = 2; program = \"shmr-large-worker\"; }; },\n"

/* The logics a call goes through with a buffer: one copy (dl: by type;
 * bal: through the dataplane's balancing queue, and tc: tail-chopping's
 * collector, both of which hold a reference while they keep the call), or
 * one to every routee sharing it (scatter-gather).  A domain has at most
 * 8 routers: random takes round-robin's path (one stateless decision, one
 * target) and is left out. */
static const char *const call_logics[] = { "rr", "sm", "ch", "sg", "tc",
					     "dl", "bal" };

static const char conf[] =
	ARENA_CONF
	"routers = (\n"
	POOL("rr", "round-robin")
	"  { name = \"tc\"; behaviour = \"tail-chopping\"; within_ms = 2000;\n"
	"    interval_ms = 500;\n"
	"    pool = { size = 2; program = \"shmr-large-worker\"; }; },\n"
	POOL("sm", "smallest-mailbox")
	POOL("ch", "consistent-hash")
	POOL("bal", "balancing")

	POOL("bc", "broadcast")
	"  { name = \"sg\"; behaviour = \"scatter-gather\"; within_ms = 2000;\n"
	"    pool = { size = 2; program = \"shmr-large-worker\"; }; },\n"
	"  { name = \"dl\"; behaviour = \"type\";\n"
	"    types = ( { type = 1; route = \"work\"; },\n"
	"              { type = 2; route = \"later\"; } );\n"
	"    routes = ( { name = \"work\"; program = \"shmr-large-worker\"; } ); }\n"
	");\n";

struct ctx {
	struct shmr_test_client c;
	struct shmr_arena_view v;
	unsigned char *want, *got;
};

static int group_setup(void **state)
{
	struct ctx *x = client_ctx_start(sizeof(*x), "large", conf, 0);

	shmr_arena_view_init(&x->v, x->c.base);
	x->want = malloc(BIG);
	x->got = malloc(BIG);
	assert_non_null(x->want);
	assert_non_null(x->got);
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *x = *state;

	free(x->want);
	free(x->got);
	client_ctx_stop(x);
	return 0;
}

static uint32_t in_use(const struct ctx *x)
{
	return shmr_arena_in_use_all(&x->v);
}

/* One call of @p len bytes through @p router, byte for byte back. */
static void call_size(struct ctx *x, const char *router, struct shmr_pid to,
		      size_t len)
{
	struct shmr_buf b;
	int rc;

	assert_int_equal(large_alloc_wait(x->c.ep, len, &b), 0);
	assert_true(b.size >= len);
	arena_fill(x->want, len, (unsigned)len);
	memcpy(b.data, x->want, len);
	rc = shmr_call_buf(x->c.ep, to, 1, len * 7919u, &b, len, x->got, BIG,
			   CALL_MS);
	if (rc != (int)len)
		fail_msg("%s: %zu bytes: call returned %d (%s)", router, len,
			 rc, rc < 0 ? shmr_strerror(rc) : "short");
	if (memcmp(x->got, x->want, len) != 0)
		fail_msg("%s: %zu bytes: the reply differs", router, len);
}

/* Every size the test sweeps, for @p fn: 1 to 300 bytes (inline and
 * around the slot's payload), then each power of two from 512 to the
 * largest class and one byte either side (the classes' edges). */
static void each_size(struct ctx *x, const char *router, struct shmr_pid to,
		      void (*fn)(struct ctx *, const char *, struct shmr_pid,
				 size_t))
{
	for (size_t len = 1; len <= 300; len++)
		fn(x, router, to, len);
	for (size_t p = 512; p <= BIG; p <<= 1) {
		fn(x, router, to, p - 1);
		fn(x, router, to, p);
		if (p < BIG)
			fn(x, router, to, p + 1);
	}
}

static void test_sizes(void **state)
{
	struct ctx *x = *state;

	for (size_t r = 0; r < sizeof(call_logics) / sizeof(call_logics[0]);
	     r++)
		each_size(x, call_logics[r], client_lookup(&x->c, call_logics[r]),
			  call_size);
	arena_assert_free(&x->v);
}

static void test_sends_come_back(void **state)
{
	struct ctx *x = *state;
	static const size_t sizes[] = { 1, 100, 4096, 4097, 65536, 300000, BIG };
	struct shmr_pid to = client_lookup(&x->c, "rr");

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const struct shmr_msg *m;
		struct shmr_buf b;
		const void *p;
		size_t len;
		int n;

		assert_int_equal(large_alloc_wait(x->c.ep, sizes[i], &b), 0);
		arena_fill(b.data, sizes[i], 1000 + (unsigned)i);
		assert_int_equal(shmr_send_buf(x->c.ep, to, 2, i, &b, sizes[i]),
				 0);
		assert_null(b.data); /* the buffer is no longer ours */
		n = shmr_recv_burst(x->c.ep, &m, 1, CALL_MS);
		assert_int_equal(n, 1);
		assert_true(m->flags & SHMR_F_ARENA);
		assert_int_equal(m->key, i);
		p = shmr_msg_payload(x->c.ep, m, &len);
		assert_non_null(p);
		assert_int_equal(len, sizes[i]);
		arena_fill(x->want, sizes[i], 1000 + (unsigned)i);
		if (memcmp(p, x->want, len) != 0)
			fail_msg("send of %zu bytes came back different", len);
	}
	/* The last one is released by the next receive. */
	assert_true(in_use(x) >= 1);
	{
		const struct shmr_msg *m;

		assert_int_equal(shmr_recv_burst(x->c.ep, &m, 1, 0), 0);
	}
	arena_assert_free(&x->v);
}

static void recv_copy(struct ctx *x, size_t len, uint64_t key)
{
	const struct shmr_msg *m;
	const void *p;
	size_t got;

	assert_int_equal(shmr_recv_burst(x->c.ep, &m, 1, CALL_MS), 1);
	assert_int_equal(m->key, key);
	p = shmr_msg_payload(x->c.ep, m, &got);
	if (!p || got != len || memcmp(p, x->want, len) != 0)
		fail_msg("broadcast of %zu bytes: a copy came back %s", len,
			 !p ? "unsound" : "different");
}

/* One send of @p len bytes in a buffer broadcast by @p router (a
 * broadcast pool; "rr" in a Broadcast envelope): both routees share the
 * buffer, each keeps what it got and sends it back (the first to keep
 * gets its own copy of the bytes, the last takes the shared buffer over),
 * so two copies come back byte for byte; every buffer is free again once
 * we release them. */
static void bcast_size(struct ctx *x, const char *router, struct shmr_pid to,
		       size_t len)
{
	const struct shmr_msg *m;
	struct shmr_buf b;

	assert_int_equal(large_alloc_wait(x->c.ep, len, &b), 0);
	arena_fill(x->want, len, 500 + (unsigned)len);
	memcpy(b.data, x->want, len);
	if (strcmp(router, "bc") == 0)
		assert_int_equal(shmr_send_buf(x->c.ep, to, 2, len, &b, len), 0);
	else
		assert_int_equal(shmr_send_buf_broadcast(x->c.ep, to, 2, len, &b,
							 len),
				 0);
	recv_copy(x, len, len);
	recv_copy(x, len, len);
	assert_int_equal(shmr_recv_burst(x->c.ep, &m, 1, 0), 0);
	if (len > 300)
		arena_assert_free(&x->v);
}

static void test_broadcast_shares(void **state)
{
	struct ctx *x = *state;

	each_size(x, "bc", client_lookup(&x->c, "bc"), bcast_size);
	each_size(x, "rr", client_lookup(&x->c, "rr"), bcast_size);
	arena_assert_free(&x->v);
}

struct dlq_wait {
	struct ctx *x;
	char list[65537];
};

/* DLQ_LIST dl as the control plane answers it has three records. */
static int three_letters(void *arg)
{
	struct dlq_wait *w = arg;
	const char *p;
	int n = 0;

	if (shmr_test_ctl(&w->x->c.app, "DLQ_LIST dl", w->list,
			  sizeof(w->list)) < 0)
		return 0;
	for (p = strchr(w->list, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
		n++;
	return n >= 3;
}

/* Sends in buffers that fail routing (the name they go to is not
 * registered) are dead letters: the file keeps their payload, every
 * buffer is free again, and once the name is there `shmrctl dlq replay`
 * delivers each byte for byte (inline when it fits a slot, else in a new
 * buffer), which frees again as the receiver goes on. */
static void test_dead_letters_replayed(void **state)
{
	struct ctx *x = *state;
	static const size_t sizes[] = { 100, 70000, BIG };
	static struct dlq_wait w;
	struct shmr_pid dl = client_lookup(&x->c, "dl");
	struct shmr_endpoint *later;
	const struct shmr_msg *m[4];
	char line[128], out[256];
	char *argv[] = { getenv("SHMRCTL"), "-s", x->c.app.sock, "dlq",
			 "replay", "dl", NULL };

	for (size_t i = 0; i < 3; i++) {
		struct shmr_buf b;

		assert_int_equal(large_alloc_wait(x->c.ep, sizes[i], &b), 0);
		arena_fill(b.data, sizes[i], 900 + (unsigned)i);
		assert_int_equal(shmr_send_buf(x->c.ep, dl, 2, i, &b, sizes[i]),
				 0);
	}
	w.x = x;
	assert_true(shmr_test_wait(three_letters, &w, CALL_MS));
	for (size_t i = 0; i < 3; i++) {
		snprintf(line, sizeof(line), "type=2 key=%zu from=%u:%u len=%zu\n",
			 i, shmr_endpoint_pid(x->c.ep).slot,
			 shmr_endpoint_pid(x->c.ep).gen, sizes[i]);
		if (!strstr(w.list, line))
			fail_msg("no \"%s\" in DLQ_LIST: %s", line, w.list);
	}
	arena_assert_free(&x->v);

	assert_int_equal(shmr_endpoint_open(x->c.d, &later), 0);
	assert_int_equal(shmr_register(later, "later"), 0);
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	assert_string_equal(out, "resent 3 left 0\n");
	for (size_t i = 0; i < 3; i++) {
		const void *p;
		size_t len;

		assert_int_equal(shmr_recv_burst(later, m, 1, CALL_MS), 1);
		assert_int_equal(m[0]->type, 2);
		assert_int_equal(m[0]->key, i);
		assert_int_equal(m[0]->flags & SHMR_F_ROUTE_FAILED, 0);
		p = shmr_msg_payload(later, m[0], &len);
		arena_fill(x->want, sizes[i], 900 + (unsigned)i);
		if (!p || len != sizes[i] || memcmp(p, x->want, len) != 0)
			fail_msg("replayed letter of %zu bytes: %s (%zu bytes)",
				 sizes[i], p ? "different" : "unsound", len);
	}
	assert_int_equal(shmr_recv_burst(later, m, 1, 0), 0);
	arena_assert_free(&x->v);
	shmr_endpoint_close(later);
}

static uint64_t bad_count(struct ctx *x)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < shmr_hdr(x->c.base)->nlcores; i++)
		n += atomic_load_explicit(&shmr_stats_of(x->c.base, i)->bad,
					  memory_order_relaxed);
	return n;
}

struct bad_wait {
	struct ctx *x;
	uint64_t want;
};

static int bad_reached(void *arg)
{
	struct bad_wait *w = arg;

	return bad_count(w->x) >= w->want;
}

static void test_forged_references(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid me = shmr_endpoint_pid(x->c.ep);
	struct shmr_pid to = client_lookup(&x->c, "rr");
	struct shmr_domain_hdr *h = shmr_hdr(x->c.base);
	struct rte_ring *out = shmr_lane_at(x->c.base, me.slot,
					    SHMR_LANE_OUT(h->nlcores));
	uint64_t slot[SHMR_SLOT_MAX / 8];
	struct shmr_msg *m = (struct shmr_msg *)slot;
	struct shmr_buf_ref forged[4];
	struct shmr_buf mine;
	struct bad_wait w = { x, 0 };
	uint64_t bad0 = bad_count(x), slots0;
	char ans[4096];
	long long dp0;

	assert_int_equal(shmr_test_ctl(&x->c.app, "STATUS", ans, sizeof(ans)),
			 0);
	dp0 = shmr_test_value(ans, "dataplane_pid");
	slots0 = atomic_load_explicit(&shmr_ep_at(x->c.base, me.slot)->bad_slots,
				      memory_order_relaxed);
	/* A buffer we hold (WRITING, not sent): its reference is sound in
	 * range and generation, but not SENT by us. */
	assert_int_equal(shmr_buf_alloc(x->c.ep, 100, &mine), 0);
	forged[0] = (struct shmr_buf_ref){ 7, 0, 1, 10 };         /* class */
	forged[1] = (struct shmr_buf_ref){ 0, 1000000, 1, 10 };   /* index */
	forged[2] = (struct shmr_buf_ref){ 0, (uint32_t)(mine.ref >> 32) & 0xffffffu,
					   (uint32_t)mine.ref + 5, 10 }; /* gen */
	forged[3] = (struct shmr_buf_ref){ 0, (uint32_t)(mine.ref >> 32) & 0xffffffu,
					   (uint32_t)mine.ref, 10 };  /* owner */
	for (int i = 0; i < 4; i++) {
		memset(slot, 0, sizeof(slot));
		m->kind = SHMR_KIND_SEND;
		m->flags = SHMR_F_ARENA;
		m->type = 1;
		m->from = me;
		m->to = to;
		m->len = sizeof(forged[i]);
		memcpy(m->data, &forged[i], sizeof(forged[i]));
		assert_int_equal(rte_ring_enqueue_burst_elem(out, slot,
							     h->slot_size, 1,
							     NULL),
				 1);
	}
	shmr_bell_ring(shmr_lcore_bell(x->c.base, me.slot % h->nlcores));
	w.want = bad0 + 4;
	assert_true(shmr_test_wait(bad_reached, &w, 10000));
	assert_int_equal(bad_count(x), bad0 + 4);
	assert_int_equal(atomic_load_explicit(
				 &shmr_ep_at(x->c.base, me.slot)->bad_slots,
				 memory_order_relaxed),
			 slots0 + 4);
	/* Nothing was freed on the strength of a forged slot. */
	assert_int_equal(shmr_buf_release(x->c.ep, &mine), 0);
	/* Both daemons are the same processes, and a call is answered. */
	assert_int_equal(shmr_test_ctl(&x->c.app, "STATUS", ans, sizeof(ans)),
			 0);
	assert_int_equal(shmr_test_value(ans, "dataplane_pid"), dp0);
	assert_true(shmr_test_pid_alive(x->c.app.control));
	call_size(x, "rr", to, 70000);
	arena_assert_free(&x->v);
}

static long long status(struct ctx *x, const char *key)
{
	char ans[8192];

	assert_int_equal(shmr_test_ctl(&x->c.app, "STATUS", ans, sizeof(ans)),
			 0);
	return shmr_test_value(ans, key);
}

static int inbox_has_four(void *arg)
{
	struct ctx *x = arg;
	struct shmr_domain_hdr *h = shmr_hdr(x->c.base);
	struct shmr_pid me = shmr_endpoint_pid(x->c.ep);
	int64_t n = 0;

	for (uint32_t i = 0; i < h->nlcores; i++)
		n += shmr_lane_unconsumed(shmr_lane_at(x->c.base, me.slot, i),
					  h->lane_size);
	return n >= 4;
}

static void test_exhaustion(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid to = client_lookup(&x->c, "rr");
	struct shmr_buf b[4], extra;
	const struct shmr_msg *msgs[4];
	int got = 0;

	for (int i = 0; i < 4; i++)
		assert_int_equal(shmr_buf_alloc(x->c.ep, BIG, &b[i]), 0);
	/* Empty: an error at once, never a wait. */
	assert_int_equal(shmr_buf_alloc(x->c.ep, BIG, &extra),
			 -SHMR_E_NO_BUFFER);
	assert_int_equal(shmr_buf_alloc(x->c.ep, BIG + 1, &extra),
			 -SHMR_E_TOO_BIG);
	for (int i = 0; i < 4; i++)
		assert_int_equal(shmr_send_buf(x->c.ep, to, 3, i, &b[i], 64), 0);
	/* They come back to us (all four in our inbox, then one receive);
	 * while we hold them the class stays empty. */
	assert_true(shmr_test_wait(inbox_has_four, x, CALL_MS));
	got = shmr_recv_burst(x->c.ep, msgs, 4, CALL_MS);
	assert_int_equal(got, 4);
	for (int i = 0; i < 4; i++) {
		size_t len;

		assert_non_null(shmr_msg_payload(x->c.ep, msgs[i], &len));
		assert_int_equal(len, 64);
	}
	assert_int_equal(shmr_buf_alloc(x->c.ep, BIG, &extra),
			 -SHMR_E_NO_BUFFER);
	/* shmrctl status shows it: all four in use, two failures. */
	assert_int_equal(status(x, "arena:1M:count"), 4);
	assert_int_equal(status(x, "arena:1M:in_use"), 4);
	assert_int_equal(status(x, "arena:1M:free"), 0);
	assert_int_equal(status(x, "arena:1M:alloc_failures"), 2);
	/* Our next receive releases them: the class recovers. */
	assert_int_equal(shmr_recv_burst(x->c.ep, msgs, 1, 0), 0);
	assert_int_equal(shmr_buf_alloc(x->c.ep, BIG, &extra), 0);
	assert_int_equal(shmr_buf_release(x->c.ep, &extra), 0);
	arena_assert_free(&x->v);
	assert_int_equal(status(x, "arena:1M:free"), 4);
	assert_int_equal(status(x, "arena:64K:in_use"), 0);
	assert_int_equal(status(x, "arena:4K:reclaimed"), 0);
}

/* kill -9 the control plane and start it again: the adopted domain keeps
 * its arena (the same classes, the buffers where they were, a buffer we
 * hold still ours), and large calls go on. */
static void test_adopted_keeps_arena(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid to = client_lookup(&x->c, "rr");
	long long dp = status(x, "dataplane_pid");
	struct shmr_buf held;

	assert_int_equal(shmr_buf_alloc(x->c.ep, 3000, &held), 0);
	arena_fill(held.data, 3000, 77);
	assert_int_equal(shmr_test_app_kill_control(&x->c.app), 0);
	/* Nobody manages the domain now: large calls still go through. */
	call_size(x, "rr", to, 200000);
	assert_int_equal(shmr_test_app_restart_control(&x->c.app, 0), 0);
	assert_int_equal(status(x, "dataplane_pid"), dp);
	assert_int_equal(status(x, "arena:4K:count"), 16);
	assert_int_equal(status(x, "arena:1M:count"), 4);
	assert_int_equal(status(x, "arena:4K:in_use"), 1); /* ours */
	/* The buffer we held across the restart is still ours to send. */
	arena_fill(x->want, 3000, 77);
	{
		int rc = shmr_call_buf(x->c.ep, to, 1, 0, &held, 3000, x->got,
				       BIG, CALL_MS);

		assert_int_equal(rc, 3000);
		assert_memory_equal(x->got, x->want, 3000);
	}
	call_size(x, "rr", to, BIG);
	arena_assert_free(&x->v);
}

static void test_config_refused(void **state)
{
	char dir[] = "/tmp/shmr-large-XXXXXX", out[2048];
	const char *path;
	int rc;
	(void)state;

	assert_non_null(mkdtemp(dir));
	path = shmr_test_write_conf(dir, "bad.conf",
				    "arena = { classes = [ \"3K:4\" ]; };\n"
				    "routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
				    "  pool = { size = 1; program = \"shmr-large-worker\"; }; } );\n");
	rc = shmr_test_run_control(path, dir, "--check", out, sizeof(out));
	assert_int_not_equal(rc, 0);
	if (!strstr(out, "arena.classes.[0]") || !strstr(out, "power of two"))
		fail_msg("--check said: %s", out);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_sends_come_back),
		cmocka_unit_test(test_broadcast_shares),
		cmocka_unit_test(test_dead_letters_replayed),
		cmocka_unit_test(test_forged_references),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_adopted_keeps_arena),
		cmocka_unit_test(test_config_refused),
	};

	return cmocka_run_group_tests_name("large", tests, group_setup,
					   group_teardown);
}
