/*
 * shmr-perf's ratios by the host's speed (perf_ratio_by_speed()): pairs
 * whose speeds spread less than PERF_SPEEDS_APART stay one group; those
 * further apart are split at the cut, each side its own median; a run
 * that measured nothing is in neither.  The speed is a figure of its own
 * (compare's: the inverse of the pair's ping-pong probe); the first three
 * cases pass the bare runs as their speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perf_internal.h"

/* Bare runs within the noise: no split. */
static void test_one_speed(void **state)
{
	const double den[] = { 150e6, 170e6, 120e6, 160e6 };
	const double num[] = { 90e6, 95e6, 70e6, 88e6 };
	struct perf_ratio fast, slow;

	(void)state;
	assert_true(perf_ratio_by_speed(num, den, den, 4, &fast, &slow) == 0);
	assert_int_equal(fast.pairs, 0);
	assert_int_equal(slow.pairs, 0);
}

/* Two speeds: each pair on its side of the cut, halfway between the
 * slowest and the fastest bare run. */
static void test_two_speeds(void **state)
{
	const double den[] = { 50e6, 160e6, 45e6, 170e6, 155e6 };
	const double num[] = { 37e6, 96e6, 36e6, 85e6, 93e6 };
	struct perf_ratio fast, slow;
	double cut;

	(void)state;
	cut = perf_ratio_by_speed(num, den, den, 5, &fast, &slow);
	assert_true(cut > 107.4e6 && cut < 107.6e6);
	assert_int_equal(fast.pairs, 3);
	assert_int_equal(slow.pairs, 2);
	/* 0.6, 0.5, 0.6: the median of the fast side. */
	assert_true(fast.median > 0.5999 && fast.median < 0.6001);
	assert_true(fast.min > 0.4999 && fast.min < 0.5001);
	/* 0.74 and 0.8: the two middle ones' mean. */
	assert_true(slow.median > 0.7699 && slow.median < 0.7701);
}

/* A bare run that measured nothing sets neither end, and its pair is
 * counted on neither side. */
static void test_failed_run_left_out(void **state)
{
	const double den[] = { 0, 160e6, 50e6, 165e6 };
	const double num[] = { 10e6, 80e6, 40e6, 0 };
	struct perf_ratio fast, slow;

	(void)state;
	assert_true(perf_ratio_by_speed(num, den, den, 4, &fast, &slow) > 0);
	assert_int_equal(fast.pairs, 1); /* 165e6 has no router figure */
	assert_int_equal(slow.pairs, 1);
	assert_true(fast.median > 0.4999 && fast.median < 0.5001);
	assert_true(slow.median > 0.7999 && slow.median < 0.8001);
}

/* The split follows the speed, not the bare runs: a bare run that was
 * slow for another reason (a busy machine) stays on its speed's side,
 * and a pair of no known speed is in neither. */
static void test_split_by_probe(void **state)
{
	/* Probe p50s of 0.13, 0.7, 0.12, 0.7 and none (us), as speeds. */
	const double speed[] = { 1 / 0.13, 1 / 0.7, 1 / 0.12, 1 / 0.7, 0 };
	const double den[] = { 90e6, 48e6, 170e6, 46e6, 160e6 };
	const double num[] = { 54e6, 43e6, 95e6, 42e6, 10e6 };
	struct perf_ratio fast, slow;
	double cut;

	(void)state;
	cut = perf_ratio_by_speed(num, den, speed, 5, &fast, &slow);
	/* Halfway between 1/0.7 and 1/0.12. */
	assert_true(cut > 4.88 && cut < 4.89);
	assert_int_equal(fast.pairs, 2);
	assert_int_equal(slow.pairs, 2);
	/* 0.6 and 95/170: their mean; the 90e6 bare run is on the fast
	 * side, where the bare runs alone would put it with the slow. */
	assert_true(fast.median > 0.5793 && fast.median < 0.5795);
	assert_true(slow.min > 0.8958 && slow.min < 0.8959);
	assert_true(slow.max > 0.9130 && slow.max < 0.9131);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_speed),
		cmocka_unit_test(test_two_speeds),
		cmocka_unit_test(test_failed_run_left_out),
		cmocka_unit_test(test_split_by_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
