/*
 * CPU lists of the configuration into hwloc bitmaps: what the worker is
 * pinned to is exactly the list, and anything outside the grammar is an
 * error rather than a surprising set (hwloc alone reads "2-" as 2..inf).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "control_internal.h"

static void good_lists(void **state)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	assert_int_equal(shmr_ctl_cpus_parse("", set), 0);
	assert_true(hwloc_bitmap_iszero(set));

	assert_int_equal(shmr_ctl_cpus_parse("0", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 1);
	assert_true(hwloc_bitmap_isset(set, 0));

	assert_int_equal(shmr_ctl_cpus_parse("1", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 1);
	assert_true(hwloc_bitmap_isset(set, 1));

	assert_int_equal(shmr_ctl_cpus_parse("0-3", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 4);
	assert_int_equal(hwloc_bitmap_first(set), 0);
	assert_int_equal(hwloc_bitmap_last(set), 3);

	assert_int_equal(shmr_ctl_cpus_parse("0,2-3,7", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 4);
	assert_true(hwloc_bitmap_isset(set, 0));
	assert_false(hwloc_bitmap_isset(set, 1));
	assert_true(hwloc_bitmap_isset(set, 2));
	assert_true(hwloc_bitmap_isset(set, 3));
	assert_true(hwloc_bitmap_isset(set, 7));

	assert_int_equal(shmr_ctl_cpus_parse("5-5", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 1);
	assert_int_equal(shmr_ctl_cpus_parse("4095", set), 0);
	assert_true(hwloc_bitmap_isset(set, 4095));
	hwloc_bitmap_free(set);
}

static void bad_lists(void **state)
{
	static const char *bad[] = {
		"a", "1-0", "0-", "-1", ",", "0,", ",0", "0,,1", " 0", "0 ",
		"1 2", "4096", "0-4096", "0x1", "1.5", "0--1", "1-2-3", "+1",
		"99999999999999999999",
	};
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (shmr_ctl_cpus_parse(bad[i], set) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
	assert_int_equal(shmr_ctl_cpus_parse(NULL, set), -EINVAL);
	hwloc_bitmap_free(set);
}

static void replaces_previous(void **state)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	shmr_ctl_cpus_parse("0-3", set);
	assert_int_equal(shmr_ctl_cpus_parse("2", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 1);
	shmr_ctl_cpus_parse("0-3", set);
	assert_int_equal(shmr_ctl_cpus_parse("x", set), -EINVAL);
	assert_true(hwloc_bitmap_iszero(set));
	hwloc_bitmap_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_lists),
		cmocka_unit_test(bad_lists),
		cmocka_unit_test(replaces_previous),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
