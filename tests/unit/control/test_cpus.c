/*
 * CPU lists of the configuration into hwloc bitmaps: what the worker is
 * pinned to is exactly the list, and anything outside the grammar is an
 * error rather than a surprising set (hwloc alone reads "2-" as 2..inf).
 * Then the default pinning: the lcores' PUs as the dataplane maps them,
 * and one PU per worker whose cpus are "".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cpus.h"

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

/* A set of PUs from a list, for the tables below. */
static hwloc_bitmap_t set_of(const char *list)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();

	assert_non_null(s);
	assert_int_equal(shmr_ctl_cpus_parse(list, s), 0);
	return s;
}

/*
 * Default pinning: which PUs the dataplane's lcores take, and the PU each
 * route with cpus = "" gets, in configuration order.
 */
static void default_pinning(void **state)
{
	static const struct {
		const char *allowed;  /* the PUs the appliance may use */
		const char *dp_list;  /* dataplane_cpus ("" = choose) */
		unsigned nlcores;
		const char *lcores;   /* what the lcores end up on */
		int workers[7];       /* PUs of the first workers, -1 ends */
	} t[] = {
		/* 2 PUs, 1 lcore on PU 0: every worker on PU 1. */
		{ "0-1", "", 1, "0", { 1, 1, 1, 1, -1 } },
		/* 4 PUs, 1 lcore: the three others, round-robin. */
		{ "0-3", "", 1, "0", { 1, 2, 3, 1, 2, 3, 1 } },
		/* 2 PUs, 2 lcores: none left over, so all of them. */
		{ "0-1", "", 2, "0-1", { 0, 1, 0, -1 } },
		/* 4 PUs, 2 lcores. */
		{ "0-3", "", 2, "0-1", { 2, 3, 2, -1 } },
		/* More lcores than PUs: they share, workers use them all. */
		{ "0-1", "", 4, "0-1", { 0, 1, -1 } },
		/* Allowed PUs with holes (a cpuset): the first ones route. */
		{ "2,5,7", "", 1, "2", { 5, 7, 5, -1 } },
		/* A configured list, in its written order: lcore 0 on 3. */
		{ "0-3", "3,1", 1, "3", { 0, 1, 2, 0, -1 } },
		{ "0-3", "3,1", 2, "1,3", { 0, 2, 0, -1 } },
		/* A range longer than the lcores: only the first used. */
		{ "0-3", "1-3", 1, "1", { 0, 2, 3, 0, -1 } },
		/* A shorter list is reused: nothing new. */
		{ "0-3", "2", 3, "2", { 0, 1, 3, -1 } },
		/* Lcores outside what we may use leave all of it. */
		{ "0-1", "6", 1, "6", { 0, 1, 0, -1 } },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		hwloc_bitmap_t allowed = set_of(t[i].allowed);
		hwloc_bitmap_t want = set_of(t[i].lcores);
		hwloc_bitmap_t lcores = hwloc_bitmap_alloc();

		assert_int_equal(shmr_ctl_cpus_lcores(t[i].dp_list, allowed,
						      t[i].nlcores, lcores),
				 0);
		if (!hwloc_bitmap_isequal(lcores, want))
			fail_msg("case %zu: lcores on the wrong cpus", i);
		for (unsigned w = 0; w < 7 && t[i].workers[w] >= 0; w++) {
			int pu = shmr_ctl_cpus_pick(allowed, lcores, w);

			if (pu != t[i].workers[w])
				fail_msg("case %zu: worker %u on %d, want %d",
					 i, w, pu, t[i].workers[w]);
		}
		hwloc_bitmap_free(allowed);
		hwloc_bitmap_free(want);
		hwloc_bitmap_free(lcores);
	}
}

static void default_pinning_errors(void **state)
{
	hwloc_bitmap_t none = hwloc_bitmap_alloc();
	hwloc_bitmap_t two = set_of("0-1");
	hwloc_bitmap_t out = hwloc_bitmap_alloc();

	/* Nothing allowed: nothing to choose from. */
	assert_int_equal(shmr_ctl_cpus_lcores("", none, 1, out), -EINVAL);
	assert_int_equal(shmr_ctl_cpus_pick(none, none, 0), -EINVAL);
	assert_int_equal(shmr_ctl_cpus_lcores("x", two, 1, out), -EINVAL);
	assert_int_equal(shmr_ctl_cpus_lcores("0", two, 0, out), -EINVAL);
	assert_int_equal(shmr_ctl_cpus_lcores(NULL, two, 1, out), -EINVAL);
	hwloc_bitmap_free(none);
	hwloc_bitmap_free(two);
	hwloc_bitmap_free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_lists),
		cmocka_unit_test(bad_lists),
		cmocka_unit_test(replaces_previous),
		cmocka_unit_test(default_pinning),
		cmocka_unit_test(default_pinning_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
