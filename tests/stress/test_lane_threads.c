/*
 * The fast path with real threads on each side of every lane: a producer
 * sends numbered messages to a router on its outbound lane, the forwarder
 * (a QSBR reader running shmr_dp_poll_once_rcu) routes them, a consumer
 * peeks and releases bursts from the route's inbound lane as libshmr does,
 * and the main thread keeps swapping the table meanwhile.  Every message
 * must arrive once, in order, with From and Ref intact.  Meant for the
 * threads-only ThreadSanitizer build as much as for the normal one.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
		i += k;
	}
	return NULL;
}

static void *forwarder(void *arg)
{
	struct shared *s = arg;
	struct shmr_dp_lcore lc;

	if (shmr_dp_lcore_init(&lc, &s->d.env, 0) < 0)
		return NULL;
	rcu_register_thread();
	while (!atomic_load(&s->done)) {
		struct shmr_dp_table *t = shmr_dp_table_get_rcu(&s->cur);

		if (shmr_dp_poll_once_rcu(&lc, t) == 0)
			sched_yield();
		shmr_dp_quiescent();
	}
	rcu_unregister_thread();
	shmr_dp_lcore_fini(&lc);
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
		atomic_load(&shmr_stats_of(s->d.base, 0)->router_forwarded[2]),
		N);
	print_message("%u messages, %u table swaps meanwhile\n", N, swaps);
	shmr_dp_table_free(shmr_dp_table_current(&s->cur));
	dp_dom_fini(&s->d);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
