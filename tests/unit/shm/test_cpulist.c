/*
 * The one cpu-list parser (<shmr/cpulist.h>): its grammar, its limit, the
 * order in which a range is checked, and its callback.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <shmr/cpulist.h>

/* The ranges seen, written out as "lo-hi;" each. */
struct seen {
	char s[256];
	size_t n;
};

static int record(unsigned lo, unsigned hi, void *arg)
{
	struct seen *t = arg;

	t->n += (size_t)snprintf(t->s + t->n, sizeof(t->s) - t->n, "%u-%u;",
				 lo, hi);
	return 0;
}

static void good_lists(void **state)
{
	static const struct {
		const char *list, *ranges;
	} t[] = {
		{ "", "" },
		{ "0", "0-0;" },
		{ "0-3", "0-3;" },
		{ "0,2-3,7", "0-0;2-3;7-7;" },
		{ "3,1", "3-3;1-1;" },   /* written order, not sorted */
		{ "1,1", "1-1;1-1;" },   /* repeats are the caller's */
		{ "007", "7-7;" },
		{ "4095", "4095-4095;" },
		{ "0-4095", "0-4095;" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct seen s = { "", 0 };

		assert_int_equal(shmr_cpulist_parse(t[i].list, record, &s,
						    NULL),
				 0);
		assert_string_equal(s.s, t[i].ranges);
		assert_int_equal(shmr_cpulist_parse(t[i].list, NULL, NULL,
						    NULL),
				 0);
	}
}

static void bad_lists(void **state)
{
	static const struct {
		const char *list;
		int rc;
	} t[] = {
		{ "a", -EINVAL },      { "0-", -EINVAL },    { "-1", -EINVAL },
		{ ",", -EINVAL },      { "0,", -EINVAL },    { ",0", -EINVAL },
		{ "0,,1", -EINVAL },   { " 0", -EINVAL },    { "0 ", -EINVAL },
		{ "1 2", -EINVAL },    { "0x1", -EINVAL },   { "1.5", -EINVAL },
		{ "0--1", -EINVAL },   { "1-2-3", -EINVAL }, { "+1", -EINVAL },
		{ "1-+2", -EINVAL },   { "1- 2", -EINVAL },  { "99999-x", -EINVAL },
		{ "4096", -ERANGE },   { "0-4096", -ERANGE },
		{ "99999999999999999999", -ERANGE },
		{ "5000-1", -ERANGE }, /* the limit is checked before the order */
		{ "3-1", -EDOM },      { "0,4095-4094", -EDOM },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc = shmr_cpulist_parse(t[i].list, NULL, NULL, NULL);

		if (rc != t[i].rc)
			fail_msg("\"%s\": %d, want %d", t[i].list, rc, t[i].rc);
	}
	assert_int_equal(shmr_cpulist_parse(NULL, NULL, NULL, NULL), -EINVAL);
}

static void bad_range(void **state)
{
	struct shmr_cpulist_range bad = { 0, 0 };

	(void)state;
	assert_int_equal(shmr_cpulist_parse("0,20-10", NULL, NULL, &bad),
			 -EDOM);
	assert_int_equal(bad.lo, 20);
	assert_int_equal(bad.hi, 10);
	assert_int_equal(shmr_cpulist_parse("1-99999", NULL, NULL, &bad),
			 -ERANGE);
	assert_int_equal(bad.lo, 1);
	assert_int_equal(bad.hi, SHMR_CPULIST_LIMIT);
}

static int stop_at_two(unsigned lo, unsigned hi, void *arg)
{
	(void)lo;
	(void)arg;
	return hi >= 2 ? 7 : 0;
}

/* The callback runs once a range is good, before what follows it is
 * read; its non-zero return is the parse's. */
static void callback_stops(void **state)
{
	(void)state;
	assert_int_equal(shmr_cpulist_parse("0,1,2x", stop_at_two, NULL, NULL),
			 7);
	assert_int_equal(shmr_cpulist_parse("0,1x", stop_at_two, NULL, NULL),
			 -EINVAL);
	assert_int_equal(shmr_cpulist_parse("0-1,3", stop_at_two, NULL, NULL),
			 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_lists),
		cmocka_unit_test(bad_lists),
		cmocka_unit_test(bad_range),
		cmocka_unit_test(callback_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
