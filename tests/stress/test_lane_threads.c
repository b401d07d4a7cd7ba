/*
 * The fast path with real threads on each side of every lane: a producer
 * sends numbered messages to a router on its outbound lane, the forwarder
 * (a QSBR reader running shmr_dp_poll_once_rcu) routes them, a consumer
 * peeks and releases bursts from the route's inbound lane as libshmr does,
 * and the main thread keeps swapping the table meanwhile.  Every message
 * must arrive once, in order, with From and Ref intact.  Meant for the
 * threads-only ThreadSanitizer build as much as for the normal one.
 *
 * The work bits (shmr/notify.h, dataplane/lcore.c): many producers, each
 * sending short bursts with pauses, so that their bits are retired and
 * set again all the time, one forwarder that never sweeps (a lost bit
 * would leave a message behind: the test's liveness bound fails it), and
 * no table swap (a new table sweeps); once with the adaptive mode's
 * sender (a fence between its enqueue and its bit, D2) and once with busy
 * mode's, which has none and relies on the lcore's second look (D5).
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>
#include <urcu-qsbr.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include "dp_test.h"

#define N 200000u
#define SS 128u

struct shared {
	struct dp_dom d;
	struct shmr_dp_current cur;
	struct shmr_pid client, router, worker;
	atomic_int done;
	uint64_t received, bad;
};

static void *producer(void *arg)
{
	struct shared *s = arg;
	struct rte_ring *out =
		shmr_lane_at(s->d.base, s->client.slot, SHMR_LANE_OUT(1));
	unsigned char burst[8 * SS];

	for (uint64_t i = 0; i < N;) {
		unsigned n = N - i < 8 ? (unsigned)(N - i) : 8, k;

		for (unsigned j = 0; j < n; j++)
			dp_msg(burst + j * SS, SHMR_KIND_SEND, s->client,
			       s->router, 1, i + j, ~(i + j));
		k = rte_ring_enqueue_burst_elem(out, burst, SS, n, NULL);
		if (k == 0)
			sched_yield();
		else
			shmr_work_note(s->d.base, shmr_hdr(s->d.base),
				       s->client.slot);
		i += k;
	}
	return NULL;
}

/* Routing lcore 0 of @p d as a QSBR reader of @p cur until @p stop,
 * sweeping every @p sweep_every rounds. */
static void forward_until(struct dp_dom *d, struct shmr_dp_current *cur,
			  atomic_int *stop, uint32_t sweep_every)
{
	struct shmr_dp_lcore lc;

	if (shmr_dp_lcore_init(&lc, &d->env, 0) < 0)
		return;
	lc.sweep_every = sweep_every;
	rcu_register_thread();
	while (!atomic_load(stop)) {
		struct shmr_dp_table *t = shmr_dp_table_get_rcu(cur);

		if (shmr_dp_poll_once_rcu(&lc, t) == 0)
			sched_yield();
		shmr_dp_quiescent();
	}
	rcu_unregister_thread();
	shmr_dp_lcore_fini(&lc);
}

static void *forwarder(void *arg)
{
	struct shared *s = arg;

	forward_until(&s->d, &s->cur, &s->done, SHMR_DP_SWEEP_ROUNDS);
	return NULL;
}

static void *consumer(void *arg)
{
	struct shared *s = arg;
	struct rte_ring *in = shmr_lane_at(s->d.base, s->worker.slot, 0);
	unsigned char burst[32 * SS];
	uint64_t next = 0;

	while (next < N) {
		unsigned n = rte_ring_dequeue_burst_elem_start(in, burst, SS,
							       32, NULL);

		for (unsigned j = 0; j < n; j++) {
			const struct shmr_msg *m =
				(const void *)(burst + j * SS);

			if (m->key != next || m->ref != ~next ||
			    m->from.slot != s->client.slot ||
			    m->from.gen != s->client.gen || m->hops != 1)
				s->bad++;
			next++;
		}
		rte_ring_dequeue_elem_finish(in, n);
		if (n == 0)
			sched_yield();
	}
	s->received = next;
	atomic_store(&s->done, 1);
	return NULL;
}

static void test_forward_threads(void **state)
{
	struct shared *s = calloc(1, sizeof(*s));
	pthread_t th[3];
	struct shmr_dp_table *t;
	uint64_t fwd;
	unsigned ri, swaps = 0;

	(void)state;
	assert_non_null(s);
	assert_int_equal(dp_dom_init(&s->d, 1), 0);
	dp_spec_begin(&s->d);
	s->client = dp_ep(&s->d, 1, 1, SHMR_EPK_CLIENT);
	s->router = dp_ep(&s->d, 2, 1, SHMR_EPK_ROUTER);
	s->worker = dp_ep(&s->d, 3, 4, SHMR_EPK_ROUTE);
	ri = dp_router(&s->d, "router", s->router, SHMR_BEH_TYPE);
	dp_route(&s->d, ri, "worker", s->worker, SHMR_ROUTE_RUNNING);
	dp_type(&s->d, ri, 1, "worker");
	dp_spec_end(&s->d);
	assert_int_equal(shmr_dp_table_build(&s->d.env, &t), 0);
	shmr_dp_table_publish(&s->cur, t);

	assert_int_equal(pthread_create(&th[0], NULL, consumer, s), 0);
	assert_int_equal(pthread_create(&th[1], NULL, forwarder, s), 0);
	assert_int_equal(pthread_create(&th[2], NULL, producer, s), 0);
	while (!atomic_load(&s->done)) {
		dp_spec_begin(&s->d);
		dp_spec_end(&s->d);
		assert_int_equal(shmr_dp_table_build(&s->d.env, &t), 0);
		shmr_dp_table_free(shmr_dp_table_publish(&s->cur, t));
		swaps++;
		sched_yield();
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);

	assert_int_equal(s->received, N);
	assert_int_equal(s->bad, 0);
	fwd = atomic_load(&shmr_stats_of(s->d.base, 0)->forwarded);
	assert_int_equal(fwd, N);
	assert_int_equal(
		atomic_load(&shmr_ep_ctr_of(s->d.base, 0, 2)->router_forwarded),
		N);
	print_message("%u messages, %u table swaps meanwhile\n", N, swaps);
	shmr_dp_table_free(shmr_dp_table_current(&s->cur));
	dp_dom_fini(&s->d);
	free(s);
}

/* ---- the work bits ---------------------------------------------------- */

#define WB_SENDERS 12u /* client endpoints, slots 10.. (one lcore) */
#define WB_EACH 20000u /* messages each */
#define WB_IDLE 40u    /* idle endpoints attached, slots 40.. */

struct wb {
	struct dp_dom d;
	struct shmr_dp_current cur;
	struct shmr_pid sender[WB_SENDERS], worker;
	int busy; /* senders as busy mode's: no fence D2 */
	atomic_int stop;
	atomic_uint_fast64_t received;
	uint64_t bad;
	uint64_t next[WB_SENDERS];
};

struct wb_arg {
	struct wb *w;
	unsigned i;
};

static void *wb_producer(void *arg)
{
	struct wb_arg *a = arg;
	struct wb *w = a->w;
	struct shmr_pid me = w->sender[a->i];
	struct rte_ring *out = shmr_lane_at(w->d.base, me.slot,
					    SHMR_LANE_OUT(1));
	unsigned char burst[4 * SS];
	uint32_t seed = 7u + a->i;

	for (uint64_t i = 0; i < WB_EACH && !atomic_load(&w->stop);) {
		unsigned n = 1 + (seed >> 16) % 4, k;

		seed = seed * 1103515245u + 12345u;
		if (n > WB_EACH - i)
			n = (unsigned)(WB_EACH - i);
		for (unsigned j = 0; j < n; j++)
			dp_msg(burst + j * SS, SHMR_KIND_SEND, me, w->worker,
			       1, i + j, a->i);
		k = rte_ring_enqueue_burst_elem(out, burst, SS, n, NULL);
		if (k && w->busy)
			/* As libshmr's busy-mode sender: no fence. */
			shmr_work_note_fenced(
				shmr_work_at(w->d.base,
					     me.slot % w->d.env.nlcores),
				w->d.env.work_nsum, me.slot / w->d.env.nlcores);
		else if (k)
			shmr_work_note(w->d.base, shmr_hdr(w->d.base),
				       me.slot);
		i += k;
		/* Pauses long enough, now and then, for the forwarder to
		 * retire our bit (SHMR_DP_RETIRE_ROUNDS empty rounds). */
		if (k == 0 || (seed >> 20) % 8 == 0)
			for (unsigned y = 0; y < 1 + (seed >> 8) % 64; y++)
				sched_yield();
	}
	return NULL;
}

static void *wb_forwarder(void *arg)
{
	struct wb *w = arg;

	/* The first round sweeps (sweep_due); none after it. */
	forward_until(&w->d, &w->cur, &w->stop, UINT32_MAX);
	return NULL;
}

static void *wb_consumer(void *arg)
{
	struct wb *w = arg;
	struct rte_ring *in = shmr_lane_at(w->d.base, w->worker.slot, 0);
	unsigned char burst[32 * SS];

	while (!atomic_load(&w->stop)) {
		unsigned n = rte_ring_dequeue_burst_elem(in, burst, SS, 32,
							 NULL);

		for (unsigned j = 0; j < n; j++) {
			const struct shmr_msg *m =
				(const void *)(burst + j * SS);
			uint64_t who = m->ref;

			/* From each sender, its own numbers in order. */
			if (who >= WB_SENDERS ||
			    m->from.slot != w->sender[who].slot ||
			    m->key != w->next[who]) {
				w->bad++;
				continue;
			}
			w->next[who]++;
		}
		if (n)
			atomic_fetch_add(&w->received, n);
		else
			sched_yield();
	}
	return NULL;
}

static void work_bits_threads(int busy)
{
	struct wb *w = calloc(1, sizeof(*w));
	struct wb_arg args[WB_SENDERS];
	pthread_t th[WB_SENDERS + 2];
	struct shmr_dp_table *t;
	uint64_t total = (uint64_t)WB_SENDERS * WB_EACH, last = 0;
	unsigned stalled_ms = 0;

	assert_non_null(w);
	w->busy = busy;
	assert_int_equal(dp_dom_init(&w->d, 1), 0);
	dp_spec_begin(&w->d);
	for (unsigned i = 0; i < WB_SENDERS; i++)
		w->sender[i] = dp_ep(&w->d, 10 + i, 1, SHMR_EPK_CLIENT);
	for (unsigned i = 0; i < WB_IDLE; i++)
		(void)dp_ep(&w->d, 40 + i, 1, SHMR_EPK_CLIENT);
	w->worker = dp_ep(&w->d, 3, 1, SHMR_EPK_CLIENT);
	dp_spec_end(&w->d);
	assert_int_equal(shmr_dp_table_build(&w->d.env, &t), 0);
	shmr_dp_table_publish(&w->cur, t);

	assert_int_equal(pthread_create(&th[0], NULL, wb_consumer, w), 0);
	assert_int_equal(pthread_create(&th[1], NULL, wb_forwarder, w), 0);
	for (unsigned i = 0; i < WB_SENDERS; i++) {
		args[i] = (struct wb_arg){ w, i };
		assert_int_equal(pthread_create(&th[2 + i], NULL, wb_producer,
						&args[i]),
				 0);
	}
	/* Liveness only: no progress for 30 s is a slot left behind (a lost
	 * bit: this forwarder never sweeps). */
	while (atomic_load(&w->received) < total && stalled_ms < 30000) {
		uint64_t r = atomic_load(&w->received);

		usleep(10000);
		stalled_ms = r == last ? stalled_ms + 10 : 0;
		last = r;
	}
	/* Every message in, or the bound passed: stop everyone. */
	atomic_store(&w->stop, 1);
	for (unsigned i = 0; i < WB_SENDERS + 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);

	if (atomic_load(&w->received) != total)
		fail_msg("%" PRIu64 " of %" PRIu64 " messages forwarded, then "
			 "none for 30 s: a slot left with no work bit",
			 (uint64_t)atomic_load(&w->received), total);
	assert_int_equal(w->bad, 0);
	for (unsigned i = 0; i < WB_SENDERS; i++)
		assert_int_equal(w->next[i], WB_EACH);
	print_message("%" PRIu64 " messages from %u senders beside %u idle "
		      "endpoints, no sweep, %s senders\n",
		      total, WB_SENDERS, WB_IDLE, busy ? "busy-mode" : "fenced");
	shmr_dp_table_free(shmr_dp_table_current(&w->cur));
	dp_dom_fini(&w->d);
	free(w);
}

static void test_work_bits_threads(void **state)
{
	(void)state;
	work_bits_threads(0);
}

static void test_work_bits_threads_busy(void **state)
{
	(void)state;
	work_bits_threads(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_threads),
		cmocka_unit_test(test_work_bits_threads),
		cmocka_unit_test(test_work_bits_threads_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
