/*
 * The balancing queue (dataplane/balance.h): FIFO of slot copies in caller
 * memory, the least-loaded choice under a per-worker credit, hand-out, and
 * adopting a queue a dead owner left behind.
 *
 * The workers here are a model: queued[i] is what the lcore would read
 * from worker i's inbound lane (prod.tail - cons.tail), and a worker
 * "finishing" a message is that count going down.
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

#include "balance.h"

#define SLOT 128u
#define NO_ROOM SHMR_DP_BALANCE_NO_ROOM

static void *mem_new(uint32_t cap, size_t *size)
{
	void *mem;

	*size = shmr_dp_balance_mem_size(cap, SLOT);
	assert_true(*size > 0);
	mem = aligned_alloc(64, (*size + 63) & ~(size_t)63);
	assert_non_null(mem);
	memset(mem, 0xa5, *size); /* not zero: init must not rely on it */
	return mem;
}

static struct shmr_dp_balance *q_new(uint32_t cap, void **mem)
{
	struct shmr_dp_balance *q = calloc(1, sizeof(*q));
	size_t size;

	assert_non_null(q);
	*mem = mem_new(cap, &size);
	assert_int_equal(shmr_dp_balance_init(q, *mem, size, cap, SLOT), 0);
	return q;
}

/* Message number @p seq: type = seq, payload "m<seq>". */
static struct shmr_msg *msg_fill(unsigned char *buf, uint32_t seq)
{
	struct shmr_msg *m = (struct shmr_msg *)buf;

	memset(buf, 0, SLOT);
	m->kind = SHMR_KIND_SEND;
	m->type = seq;
	m->from = (struct shmr_pid){ 3, 1 };
	m->to = (struct shmr_pid){ 9, 1 };
	m->len = (uint32_t)snprintf((char *)m->data, SLOT - SHMR_HDR_SIZE,
				    "m%u", seq);
	return m;
}

static void push_seq(struct shmr_dp_balance *q, uint32_t seq)
{
	unsigned char buf[SLOT];

	assert_int_equal(shmr_dp_balance_push(q, msg_fill(buf, seq)), 0);
}

static void assert_is_seq(const struct shmr_msg *m, uint32_t seq)
{
	char want[32];
	int n = snprintf(want, sizeof(want), "m%u", seq);

	assert_non_null(m);
	assert_int_equal(m->type, seq);
	assert_int_equal(m->len, (uint32_t)n);
	assert_memory_equal(m->data, want, (size_t)n);
}

static void pop_seq(struct shmr_dp_balance *q, uint32_t seq)
{
	unsigned char buf[SLOT];

	assert_is_seq(shmr_dp_balance_front(q), seq);
	assert_int_equal(shmr_dp_balance_pop(q, (struct shmr_msg *)buf), 0);
	assert_is_seq((struct shmr_msg *)buf, seq);
}

/* ---- the queue ------------------------------------------------------ */

static void test_init_errors(void **state)
{
	struct shmr_dp_balance q;
	size_t size;
	void *mem = mem_new(4, &size);

	(void)state;
	assert_int_equal(shmr_dp_balance_mem_size(0, SLOT), 0);
	assert_int_equal(shmr_dp_balance_mem_size(6, SLOT), 0);
	assert_int_equal(shmr_dp_balance_mem_size(SHMR_DP_BALANCE_CAP_MAX * 2u,
						  SLOT),
			 0);
	assert_int_equal(shmr_dp_balance_mem_size(4, SHMR_HDR_SIZE - 1), 0);
	assert_int_equal(shmr_dp_balance_mem_size(4, SHMR_SLOT_MAX + 1), 0);
	assert_int_equal(shmr_dp_balance_mem_size(4, SLOT),
			 sizeof(struct shmr_dp_balance_mem) + 4 * SLOT);
	assert_int_equal(shmr_dp_balance_init(&q, mem, size, 3, SLOT), -EINVAL);
	assert_int_equal(shmr_dp_balance_init(&q, NULL, size, 4, SLOT),
			 -EINVAL);
	assert_int_equal(shmr_dp_balance_init(&q, (char *)mem + 8, size, 4,
					      SLOT),
			 -EINVAL);
	assert_int_equal(shmr_dp_balance_init(&q, mem, size - 1, 4, SLOT),
			 -ENOSPC);
	assert_int_equal(shmr_dp_balance_init(&q, mem, size, 4, SLOT), 0);
	assert_int_equal(shmr_dp_balance_count(&q), 0);
	assert_int_equal(shmr_dp_balance_room(&q), 4);
	assert_null(shmr_dp_balance_front(&q));
	assert_int_equal(shmr_dp_balance_pop(&q, NULL), -ENOENT);
	free(mem);
}

static void test_fifo_order(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(8, &mem);

	(void)state;
	for (uint32_t i = 0; i < 5; i++)
		push_seq(q, i);
	assert_int_equal(shmr_dp_balance_count(q), 5);
	for (uint32_t i = 0; i < 5; i++)
		pop_seq(q, i);
	assert_null(shmr_dp_balance_front(q));
	assert_int_equal(shmr_dp_balance_pop(q, NULL), -ENOENT);
	assert_int_equal(q->st.pushed, 5);
	assert_int_equal(q->st.handed, 5);
	free(mem);
	free(q);
}

static void test_full_queue(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(4, &mem);
	unsigned char buf[SLOT];

	(void)state;
	for (uint32_t i = 0; i < 4; i++)
		push_seq(q, i);
	assert_int_equal(shmr_dp_balance_room(q), 0);
	/* Full: refused (the caller leaves it in its source lane). */
	assert_int_equal(shmr_dp_balance_push(q, msg_fill(buf, 4)), -ENOSPC);
	assert_int_equal(q->st.full, 1);
	assert_int_equal(shmr_dp_balance_count(q), 4);
	/* One out, the refused one fits, behind the others. */
	pop_seq(q, 0);
	push_seq(q, 4);
	for (uint32_t i = 1; i <= 4; i++)
		pop_seq(q, i);
	free(mem);
	free(q);
}

static void test_payload_limits(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(4, &mem);
	unsigned char buf[SLOT], out[SLOT];
	struct shmr_msg *m = (struct shmr_msg *)buf;

	(void)state;
	memset(buf, 0, SLOT);
	m->kind = SHMR_KIND_CALL;
	m->len = SLOT - SHMR_HDR_SIZE + 1;
	assert_int_equal(shmr_dp_balance_push(q, m), -EINVAL);
	/* The largest payload goes through whole. */
	m->len = SLOT - SHMR_HDR_SIZE;
	for (uint32_t i = 0; i < m->len; i++)
		m->data[i] = (unsigned char)(i * 7);
	assert_int_equal(shmr_dp_balance_push(q, m), 0);
	assert_int_equal(shmr_dp_balance_pop(q, (struct shmr_msg *)out), 0);
	assert_memory_equal(out, buf, SLOT);
	free(mem);
	free(q);
}

static void test_wrap_around(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(4, &mem);
	uint32_t in = 0, out = 0;

	(void)state;
	/* Push 3, pop 2, many times: the slots wrap every few messages. */
	for (unsigned round = 0; round < 1000; round++) {
		while (shmr_dp_balance_room(q) > 0 && in < out + 3)
			push_seq(q, in++);
		for (unsigned k = 0; k < 2 && out < in; k++)
			pop_seq(q, out++);
	}
	while (out < in)
		pop_seq(q, out++);
	assert_true(in > 1000);
	assert_int_equal(shmr_dp_balance_count(q), 0);
	free(mem);
	free(q);
}

static void test_positions_wrap_at_2_32(void **state)
{
	struct shmr_dp_balance q;
	size_t size;
	void *mem = mem_new(4, &size);
	struct shmr_dp_balance_mem *h = mem;

	(void)state;
	assert_int_equal(shmr_dp_balance_init(&q, mem, size, 4, SLOT), 0);
	/* A queue whose free-running positions are about to wrap. */
	atomic_store(&h->head, UINT32_MAX - 1);
	atomic_store(&h->tail, UINT32_MAX - 1);
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size, 4, SLOT), 0);
	for (uint32_t i = 0; i < 4; i++)
		push_seq(&q, i);
	assert_int_equal(shmr_dp_balance_count(&q), 4);
	assert_int_equal(shmr_dp_balance_room(&q), 0);
	assert_int_equal(atomic_load(&h->tail), 2); /* wrapped */
	for (uint32_t i = 0; i < 4; i++)
		pop_seq(&q, i);
	assert_int_equal(atomic_load(&h->head), 2);
	free(mem);
}

/* ---- choosing a worker ---------------------------------------------- */

static void test_next_target_table(void **state)
{
	static const struct {
		uint32_t q[4];
		uint32_t n, credit;
		int want;
	} rows[] = {
		{ { 0, 0, 0, 0 }, 4, 1, 0 },      /* all free: the first */
		{ { 1, 0, 0, 0 }, 4, 1, 1 },      /* K = 1: only the free */
		{ { 1, 1, 1, 0 }, 4, 1, 3 },
		{ { 1, 1, 1, 1 }, 4, 1, -EAGAIN }, /* nobody free */
		{ { 2, 1, 3, 0 }, 3, 4, 1 },      /* least queued */
		{ { 2, 2, 2, 2 }, 4, 4, 0 },      /* ties: the lower index */
		{ { 3, 2, 2, 9 }, 4, 4, 1 },
		{ { 4, 4, 3, 4 }, 4, 4, 2 },      /* the only one under K */
		{ { 4, 4, 4, 4 }, 4, 4, -EAGAIN },
		{ { 5, 9, 0, 0 }, 2, 8, 0 },      /* n bounds the scan */
		{ { 0, 0, 0, 0 }, 4, 0, -EAGAIN }, /* no credit at all */
		{ { 0, 0, 0, 0 }, 0, 4, -SHMR_E_NO_ROUTEES },
		{ { NO_ROOM, 5, 7, 6 }, 4, 8, 1 }, /* a worker not to use */
		{ { 1, NO_ROOM, 0, 0 }, 4, 2, 2 },
		{ { NO_ROOM, NO_ROOM, NO_ROOM, NO_ROOM }, 4, UINT32_MAX,
		  -EAGAIN },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int got = shmr_dp_balance_next_target(rows[i].q, rows[i].n,
						      rows[i].credit);

		if (got != rows[i].want)
			fail_msg("row %zu: got %d, want %d", i, got,
				 rows[i].want);
	}
}

/* A worker model: each worker's inbox, what it received, in order. */
#define NW 4
#define MAXM 256

struct pool {
	uint32_t queued[NW];          /* as the lcore reads the lanes */
	uint32_t got[NW][MAXM];       /* message numbers, per worker */
	uint32_t ngot[NW];
	uint32_t order[MAXM];         /* message numbers, in hand-out order */
	uint32_t norder;
	int refuse;                   /* a worker whose lane is "full", or -1 */
	uint32_t credit;              /* for the check in pool_send */
};

static int pool_send(void *ctx, uint32_t w, const struct shmr_msg *m)
{
	struct pool *p = ctx;

	assert_true(w < NW);
	if ((int)w == p->refuse)
		return -1;
	/* Never past the credit. */
	assert_true(p->queued[w] < p->credit);
	p->got[w][p->ngot[w]++] = m->type;
	p->order[p->norder++] = m->type;
	p->queued[w]++;
	return 0;
}

/* Hand out with the lcore's scratch copy of the counts, as forward_balance.c
 * would (it re-reads the lanes each round). */
static unsigned pool_dispatch(struct shmr_dp_balance *q, struct pool *p,
			      uint32_t n, uint32_t credit)
{
	uint32_t scratch[NW];

	memcpy(scratch, p->queued, sizeof(scratch));
	p->credit = credit;
	return shmr_dp_balance_dispatch(q, scratch, n, credit, pool_send, p);
}

static void test_credit_respected(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(16, &mem);
	struct pool p = { .refuse = -1 };

	(void)state;
	for (uint32_t i = 0; i < 10; i++)
		push_seq(q, i);
	/* 3 idle workers with credit 2: 6 handed out, round the workers. */
	assert_int_equal(pool_dispatch(q, &p, 3, 2), 6);
	assert_int_equal(shmr_dp_balance_count(q), 4);
	for (uint32_t w = 0; w < 3; w++) {
		assert_int_equal(p.queued[w], 2);
		assert_int_equal(p.got[w][0], w);
		assert_int_equal(p.got[w][1], w + 3);
	}
	/* Nobody has room: nothing moves. */
	assert_int_equal(pool_dispatch(q, &p, 3, 2), 0);
	/* Worker 1 finishes one: it gets exactly one, the next in line. */
	p.queued[1]--;
	assert_int_equal(pool_dispatch(q, &p, 3, 2), 1);
	assert_int_equal(p.got[1][2], 6);
	assert_int_equal(p.queued[1], 2);
	/* Workers 0 and 2 finish both: the least loaded first. */
	p.queued[0] = 0;
	p.queued[2] = 1;
	assert_int_equal(pool_dispatch(q, &p, 3, 2), 3);
	assert_int_equal(p.got[0][2], 7);
	assert_int_equal(p.got[0][3], 8); /* 0 had 1 then, 2 had 1: tie */
	assert_int_equal(p.got[2][2], 9);
	assert_int_equal(shmr_dp_balance_count(q), 0);
	/* Hand-out order is the queue's order. */
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(p.order[i], i);
	free(mem);
	free(q);
}

static void test_fairness(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(64, &mem);
	struct pool p = { .refuse = -1 };
	uint64_t seed = 7;
	uint32_t next = 0, done = 0;

	(void)state;
	/* All idle, K = 1, N*K messages: exactly K each. */
	for (uint32_t i = 0; i < NW; i++)
		push_seq(q, next++);
	assert_int_equal(pool_dispatch(q, &p, NW, 1), NW);
	for (uint32_t w = 0; w < NW; w++)
		assert_int_equal(p.ngot[w], 1);
	/* Then workers finish at random; a free one always gets the head,
	 * and nothing is handed out of order or twice. */
	while (next < 200 || shmr_dp_balance_count(q) > 0) {
		uint32_t w;

		seed = seed * 6364136223846793005ull + 1;
		w = (uint32_t)(seed >> 33) % NW;
		if (p.queued[w] > 0) {
			p.queued[w]--;
			done++;
		}
		while (next < 200 && shmr_dp_balance_room(q) > 0 &&
		       (seed >> 20) % 3)
			push_seq(q, next++);
		pool_dispatch(q, &p, NW, 1);
		for (uint32_t k = 0; k < NW; k++)
			assert_true(p.queued[k] <= 1);
	}
	assert_int_equal(p.norder, 200);
	for (uint32_t i = 0; i < 200; i++)
		assert_int_equal(p.order[i], i);
	/* Nobody was starved: with random finishing, each got some. */
	for (uint32_t w = 0; w < NW; w++)
		assert_true(p.ngot[w] > 0);
	free(mem);
	free(q);
}

static void test_worker_removed(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(16, &mem);
	struct pool p = { .refuse = -1 };
	uint32_t two[2];

	(void)state;
	for (uint32_t i = 0; i < 6; i++)
		push_seq(q, i);
	/* Worker 1 is leaving (or dead): the caller marks it full. */
	p.queued[1] = NO_ROOM;
	assert_int_equal(pool_dispatch(q, &p, 3, 2), 4);
	assert_int_equal(p.ngot[1], 0);
	assert_int_equal(p.ngot[0], 2);
	assert_int_equal(p.ngot[2], 2);
	/* Or left out of the set: a list of two, indices into it. */
	two[0] = 0;
	two[1] = 1;
	assert_int_equal(shmr_dp_balance_next_target(two, 2, 2), 0);
	two[0] = 2;
	assert_int_equal(shmr_dp_balance_next_target(two, 2, 2), 1);
	/* What the removed worker never got is still queued, in order. */
	assert_int_equal(shmr_dp_balance_count(q), 2);
	pop_seq(q, 4);
	pop_seq(q, 5);
	free(mem);
	free(q);
}

static void test_failed_send_keeps_the_message(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(16, &mem);
	struct pool p = { .refuse = 0 };

	(void)state;
	for (uint32_t i = 0; i < 3; i++)
		push_seq(q, i);
	/* Worker 0's lane turns out full: it is skipped, nothing lost. */
	assert_int_equal(pool_dispatch(q, &p, 2, 1), 1);
	assert_int_equal(p.ngot[0], 0);
	assert_int_equal(p.got[1][0], 0);
	assert_int_equal(shmr_dp_balance_count(q), 2);
	assert_is_seq(shmr_dp_balance_front(q), 1);
	/* Everyone refuses: nothing moves. */
	p.queued[1] = 0;
	p.refuse = 1;
	p.queued[0] = NO_ROOM;
	assert_int_equal(pool_dispatch(q, &p, 2, 1), 0);
	assert_int_equal(shmr_dp_balance_count(q), 2);
	free(mem);
	free(q);
}

static void test_worker_killed_mid_message(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(16, &mem);
	struct pool p = { .refuse = -1 };
	uint32_t seen[12] = { 0 };

	(void)state;
	for (uint32_t i = 0; i < 12; i++)
		push_seq(q, i);
	assert_int_equal(pool_dispatch(q, &p, 3, 1), 3);
	/* Worker 0 is killed holding message 0 (its lane still counts it:
	 * cons.tail did not move).  Until its replacement runs, the caller
	 * passes it as full; the others go on. */
	p.queued[0] = NO_ROOM;
	for (int round = 0; round < 3; round++) {
		p.queued[1] = 0;
		p.queued[2] = 0;
		pool_dispatch(q, &p, 3, 1);
	}
	/* The replacement gets message 0 again from the repaired lane
	 * (redelivered) and then takes work like the others. */
	p.got[0][p.ngot[0]++] = 0;
	p.queued[0] = 0;
	while (shmr_dp_balance_count(q) > 0) {
		for (uint32_t w = 0; w < 3; w++)
			p.queued[w] = 0;
		pool_dispatch(q, &p, 3, 1);
	}
	/* Every message reached a worker; only message 0 twice, both times
	 * to worker 0's inbox. */
	for (uint32_t w = 0; w < 3; w++)
		for (uint32_t i = 0; i < p.ngot[w]; i++)
			seen[p.got[w][i]]++;
	assert_int_equal(seen[0], 2);
	for (uint32_t i = 1; i < 12; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(p.got[0][0], 0);
	assert_int_equal(p.got[0][1], 0);
	free(mem);
	free(q);
}

/* ---- adopting a queue ------------------------------------------------ */

static void test_attach_after_owner_died(void **state)
{
	struct shmr_dp_balance a, b;
	size_t size;
	void *mem = mem_new(8, &size);
	const struct shmr_msg *m;

	(void)state;
	assert_int_equal(shmr_dp_balance_init(&a, mem, size, 8, SLOT), 0);
	for (uint32_t i = 0; i < 5; i++)
		push_seq(&a, i);
	pop_seq(&a, 0);
	/* The owner "dies" here, having maybe handed message 1 out. */
	assert_int_equal(shmr_dp_balance_attach(&b, mem, size, 8, SLOT), 4);
	assert_int_equal(shmr_dp_balance_count(&b), 4);
	m = shmr_dp_balance_front(&b);
	assert_is_seq(m, 1);
	assert_true(m->flags & SHMR_F_REDELIVERED);
	pop_seq(&b, 1);
	m = shmr_dp_balance_front(&b);
	assert_false(m->flags & SHMR_F_REDELIVERED);
	for (uint32_t i = 2; i < 5; i++)
		pop_seq(&b, i);
	/* The new owner goes on where the old one stopped. */
	push_seq(&b, 5);
	pop_seq(&b, 5);
	/* An empty queue adopts as empty, nothing flagged. */
	assert_int_equal(shmr_dp_balance_attach(&a, mem, size, 8, SLOT), 0);
	free(mem);
}

static void test_attach_refuses(void **state)
{
	struct shmr_dp_balance q;
	size_t size;
	void *mem = mem_new(8, &size);
	struct shmr_dp_balance_mem *h = mem;

	(void)state;
	/* Nothing there. */
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size, 8, SLOT),
			 -EPROTO);
	assert_int_equal(shmr_dp_balance_init(&q, mem, size, 8, SLOT), 0);
	/* Another geometry than ours. */
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size, 4, SLOT),
			 -EPROTO);
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size, 8, 64),
			 -EPROTO);
	/* Positions that cannot be (tail more than a capacity ahead). */
	atomic_store(&h->tail, 9);
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size, 8, SLOT),
			 -EPROTO);
	atomic_store(&h->tail, 0);
	atomic_store(&h->head, 1);
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size, 8, SLOT),
			 -EPROTO);
	/* Arguments as init. */
	assert_int_equal(shmr_dp_balance_attach(&q, mem, size - 1, 8, SLOT),
			 -ENOSPC);
	assert_int_equal(shmr_dp_balance_attach(&q, NULL, size, 8, SLOT),
			 -EINVAL);
	free(mem);
}

static void test_pop_clamps_a_scribbled_length(void **state)
{
	void *mem;
	struct shmr_dp_balance *q = q_new(4, &mem);
	unsigned char out[SLOT + 16];
	struct shmr_msg *m;

	(void)state;
	push_seq(q, 1);
	/* A peer scribbles on the slot (the memory may be the domain). */
	m = (struct shmr_msg *)shmr_dp_balance_front(q);
	m->len = 100000;
	memset(out, 0x5a, sizeof(out));
	assert_int_equal(shmr_dp_balance_pop(q, (struct shmr_msg *)out), 0);
	for (size_t i = SLOT; i < sizeof(out); i++)
		assert_int_equal(out[i], 0x5a); /* nothing past the slot */
	free(mem);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_fifo_order),
		cmocka_unit_test(test_full_queue),
		cmocka_unit_test(test_payload_limits),
		cmocka_unit_test(test_wrap_around),
		cmocka_unit_test(test_positions_wrap_at_2_32),
		cmocka_unit_test(test_next_target_table),
		cmocka_unit_test(test_credit_respected),
		cmocka_unit_test(test_fairness),
		cmocka_unit_test(test_worker_removed),
		cmocka_unit_test(test_failed_send_keeps_the_message),
		cmocka_unit_test(test_worker_killed_mid_message),
		cmocka_unit_test(test_attach_after_owner_died),
		cmocka_unit_test(test_attach_refuses),
		cmocka_unit_test(test_pop_clamps_a_scribbled_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
