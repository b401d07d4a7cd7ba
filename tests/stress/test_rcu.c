/*
 * The table swap under liburcu QSBR: reader threads look names up through
 * the current table without pause while the updater rebuilds and swaps it
 * 10,000 times.  Each table carries its magic and the spec version it was
 * built from, and the name it resolves depends on that version, so a
 * reader checks that what it reads is one consistent, live table.  A freed
 * table is poisoned before free(): a reader that could still see one fails
 * here, and under AddressSanitizer it is a use-after-free report.
 *
 * Run it also as: meson setup build-asan -Db_sanitize=address,undefined
 * and in the threads-only build: meson setup build-tsan -Dtsan=true
 * -Db_sanitize=thread.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <urcu-qsbr.h>

#include "dp_test.h"

/* Under ThreadSanitizer every access is checked, and 10,000 swaps ran
 * past the test's 300 s on 2026-12-05's 2-core host: a fifth of them
 * (each still a rebuild under two readers) keeps it inside. */
#if defined(__SANITIZE_THREAD__)
#define SWAPS 2000
#else
#define SWAPS 10000
#endif
#define READERS 2

struct shared {
	struct dp_dom d;
	struct shmr_dp_current cur;
	struct shmr_pid even, odd;
	atomic_int done;
	atomic_int started;
};

struct reader {
	pthread_t thread;
	struct shared *s;
	uint64_t loops, versions, bad;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct shared *s = r->s;
	uint64_t last = 0;

	rcu_register_thread();
	atomic_fetch_add(&s->started, 1);
	while (!atomic_load_explicit(&s->done, memory_order_relaxed)) {
		struct shmr_dp_table *t = shmr_dp_table_get_rcu(&s->cur);
		const struct shmr_dp_target *tgt;
		uint64_t v = t->version;
		struct shmr_pid want = v % 2 ? s->odd : s->even;

		tgt = shmr_dp_resolve_rcu(t, 0, "worker");
		if (t->magic != SHMR_DP_TABLE_MAGIC ||
		    tgt->verdict != SHMR_DP_DELIVER || tgt->slot != want.slot ||
		    tgt->gen != want.gen || t->version != v ||
		    strcmp(t->routers[0].name, "router") != 0)
			r->bad++;
		if (v != last) {
			r->versions++;
			last = v;
		}
		r->loops++;
		shmr_dp_quiescent();
		/* Now and then, sleep as an idle lcore does. */
		if (r->loops % 4096 == 0) {
			shmr_dp_offline();
			sched_yield();
			shmr_dp_online();
		}
	}
	rcu_unregister_thread();
	return NULL;
}

/* The control plane's edit: the route moves, the version moves. */
static void move_route(struct shared *s)
{
	struct shmr_spec *sp = dp_spec(&s->d);

	dp_spec_begin(&s->d);
	shmr_routes_of(s->d.base, 0)[0].pid = sp->version % 2 ? s->even
							       : s->odd;
	dp_spec_end(&s->d); /* version + 1: odd versions point at odd */
}

static void test_swap_under_readers(void **state)
{
	struct shared *s = calloc(1, sizeof(*s));
	struct reader readers[READERS];
	struct shmr_dp_table *t;
	unsigned ri;

	(void)state;
	assert_non_null(s);
	assert_int_equal(dp_dom_init(&s->d, 1), 0);
	dp_spec_begin(&s->d);
	s->even = dp_ep(&s->d, 10, 1, SHMR_EPK_ROUTE);
	s->odd = dp_ep(&s->d, 11, 7, SHMR_EPK_ROUTE);
	ri = dp_router(&s->d, "router", dp_ep(&s->d, 2, 1, SHMR_EPK_ROUTER),
		       SHMR_BEH_TYPE);
	dp_route(&s->d, ri, "worker", s->odd, SHMR_ROUTE_RUNNING);
	dp_type(&s->d, ri, 1, "worker");
	dp_spec_end(&s->d); /* version 1 */
	assert_int_equal(shmr_dp_table_build(&s->d.env, &t), 0);
	assert_null(shmr_dp_table_publish(&s->cur, t));

	for (int i = 0; i < READERS; i++) {
		readers[i] = (struct reader){ .s = s };
		assert_int_equal(pthread_create(&readers[i].thread, NULL,
						reader_main, &readers[i]),
				 0);
	}
	/* The readers are in their loops before the first swap. */
	while (atomic_load(&s->started) < READERS)
		sched_yield();

	for (int i = 0; i < SWAPS; i++) {
		struct shmr_dp_table *old;

		move_route(s);
		assert_int_equal(shmr_dp_table_build(&s->d.env, &t), 0);
		assert_int_equal(t->version, (uint64_t)i + 2);
		old = shmr_dp_table_publish(&s->cur, t);
		assert_non_null(old);
		shmr_dp_table_free(old); /* poisons it */
	}
	atomic_store(&s->done, 1);

	uint64_t loops = 0;

	for (int i = 0; i < READERS; i++) {
		assert_int_equal(pthread_join(readers[i].thread, NULL), 0);
		assert_int_equal(readers[i].bad, 0);
		assert_true(readers[i].loops > 0);
		loops += readers[i].loops;
	}
	print_message("%d swaps, %" PRIu64 " reader lookups\n", SWAPS, loops);
	shmr_dp_table_free(shmr_dp_table_current(&s->cur));
	dp_dom_fini(&s->d);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap_under_readers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
