/*
 * Endpoint allocator: generations start at 1 and move on every reuse, a
 * stale PID is refused, and a freed slot waits until every lcore has seen
 * the spec version that removed it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "alloc.h"

static void first_use_gen_1(void **state)
{
	struct shmr_ctl_alloc a;
	struct shmr_pid pid;
	int reused = -1;

	shmr_ctl_alloc_init(&a, 8);
	for (uint32_t i = 0; i < 8; i++) {
		assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0,
						    &pid, &reused),
				 (int)i);
		assert_int_equal(pid.slot, i);
		assert_int_equal(pid.gen, 1);
		assert_int_equal(reused, 0);
	}
	assert_int_equal(a.nused, 8);
	assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0, &pid,
					    &reused),
			 -SHMR_E_NO_ENDPOINT);
}

static void reuse_moves_gen(void **state)
{
	struct shmr_ctl_alloc a;
	struct shmr_pid p0, p1, again;
	int reused;

	shmr_ctl_alloc_init(&a, 4);
	shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0, &p0, &reused);
	shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0, &p1, &reused);
	assert_int_equal(shmr_ctl_alloc_put(&a, p0, 1), 0);
	assert_int_equal(a.nused, 1);
	assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_ROUTE, 1, &again,
					    &reused),
			 0);
	assert_int_equal(again.slot, 0);
	assert_int_equal(again.gen, 2);
	assert_int_equal(reused, 1);
	assert_int_equal(a.slots[0].kind, SHMR_EPK_ROUTE);

	/* The old PID is stale: not found, cannot be freed. */
	assert_null(shmr_ctl_alloc_lookup(&a, p0));
	assert_int_equal(shmr_ctl_alloc_put(&a, p0, 2), -SHMR_E_NO_ENDPOINT);
	assert_non_null(shmr_ctl_alloc_lookup(&a, again));
	/* Double free is refused. */
	assert_int_equal(shmr_ctl_alloc_put(&a, p1, 2), 0);
	assert_int_equal(shmr_ctl_alloc_put(&a, p1, 2), -SHMR_E_NO_ENDPOINT);
	/* Out of range and gen 0 are never found. */
	assert_null(shmr_ctl_alloc_lookup(&a, (struct shmr_pid){ 99, 1 }));
	assert_null(shmr_ctl_alloc_lookup(&a, (struct shmr_pid){ 0, 0 }));
}

static void deferred_reuse_waits_for_table_version(void **state)
{
	struct shmr_ctl_alloc a;
	struct shmr_pid p[3], q;
	int reused;

	shmr_ctl_alloc_init(&a, 3);
	for (int i = 0; i < 3; i++)
		shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0, &p[i], &reused);
	/* Slot 1 removed by spec version 7. */
	shmr_ctl_alloc_put(&a, p[1], 7);
	/* The slowest lcore has seen 6: nothing is reusable yet. */
	assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 6, &q,
					    &reused),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(a.slots[1].state, SHMR_CTL_SLOT_DEFERRED);
	/* Once every lcore has seen 7, it is. */
	assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 7, &q,
					    &reused),
			 1);
	assert_int_equal(q.gen, 2);
	assert_int_equal(reused, 1);
}

static void deferred_slot_skipped_for_free_one(void **state)
{
	struct shmr_ctl_alloc a;
	struct shmr_pid p0, q;
	int reused;

	shmr_ctl_alloc_init(&a, 4);
	shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0, &p0, &reused);
	shmr_ctl_alloc_put(&a, p0, 3);
	/* Slot 0 is not yet reusable: the next free slot is taken. */
	assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 2, &q,
					    &reused),
			 1);
	assert_int_equal(q.gen, 1);
	assert_int_equal(reused, 0);
	assert_int_equal(shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 3, &q,
					    &reused),
			 0);
	assert_int_equal(q.gen, 2);
}

static void gen_never_zero(void **state)
{
	struct shmr_ctl_alloc a;
	struct shmr_pid p, q;
	int reused;

	shmr_ctl_alloc_init(&a, 1);
	shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 0, &p, &reused);
	a.slots[0].gen = UINT32_MAX;
	p.gen = UINT32_MAX;
	shmr_ctl_alloc_put(&a, p, 1);
	shmr_ctl_alloc_get(&a, SHMR_EPK_CLIENT, 1, &q, &reused);
	assert_int_equal(q.gen, 1);
}

static void init_clamps(void **state)
{
	struct shmr_ctl_alloc a;

	shmr_ctl_alloc_init(&a, 100000);
	assert_int_equal(a.nslots, SHMR_MAX_ENDPOINTS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_use_gen_1),
		cmocka_unit_test(reuse_moves_gen),
		cmocka_unit_test(deferred_reuse_waits_for_table_version),
		cmocka_unit_test(deferred_slot_skipped_for_free_one),
		cmocka_unit_test(gen_never_zero),
		cmocka_unit_test(init_clamps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
