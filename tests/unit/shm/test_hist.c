/*
 * Sojourn histograms (shmr/hist.h): known sojourns injected through the
 * unit API land in the buckets the log-linear rule names, and p50, p99
 * and p99.9 computed from them are those buckets' edges; a block full of
 * garbage (any peer can write it) gives figures, not a crash or a hang.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shmr/hist.h>

static struct shmr_hist *hist_new(void)
{
	struct shmr_hist *h = aligned_alloc(64, sizeof(*h));

	assert_non_null(h);
	shmr_hist_reset(h);
	return h;
}

/* Every bucket's edges map back to it, the next value to the next bucket,
 * and no bucket is wider than 1/16 of its lower edge. */
static void edges_are_consistent(void **state)
{
	(void)state;
	assert_int_equal(SHMR_HIST_BUCKETS, 528);
	for (unsigned i = 0; i + 1 < SHMR_HIST_BUCKETS; i++) {
		uint64_t lo = shmr_hist_lower(i), hi = shmr_hist_upper(i);

		assert_true(lo <= hi);
		assert_int_equal(shmr_hist_index(lo), i);
		assert_int_equal(shmr_hist_index(hi), i);
		assert_int_equal(shmr_hist_index(hi + 1), i + 1);
		if (lo >= 16)
			assert_true((hi - lo + 1) * 16 <= lo);
	}
	/* The last bucket holds everything from 31 * 2^31 ns up. */
	assert_int_equal(shmr_hist_lower(SHMR_HIST_BUCKETS - 1),
			 31ull << 31);
	assert_int_equal(shmr_hist_index(UINT64_MAX), SHMR_HIST_BUCKETS - 1);
	assert_int_equal(shmr_hist_index(100ull * 1000000000ull),
			 SHMR_HIST_BUCKETS - 1);
}

/* Known sojourns, the buckets worked out by hand from the rule. */
static void known_values_land_in_their_buckets(void **state)
{
	struct shmr_hist *h = hist_new();
	static const struct {
		uint64_t ns;
		unsigned bucket;
		uint64_t lo, hi;
	} cases[] = {
		{ 0, 0, 0, 0 },
		{ 15, 15, 15, 15 },
		{ 16, 16, 16, 16 },
		{ 33, 32, 32, 33 },  /* 2^5: buckets 2 ns wide */
		{ 1000, 111, 992, 1023 },  /* 2^9: 32 ns wide */
		{ 100000, 216, 98304, 102399 }, /* 2^16: 4096 ns wide */
		{ 1000000000, 429, 973078528, 1006632959 }, /* 2^29 */
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		unsigned i = shmr_hist_index(cases[k].ns);

		assert_int_equal(i, cases[k].bucket);
		assert_int_equal(shmr_hist_lower(i), cases[k].lo);
		assert_int_equal(shmr_hist_upper(i), cases[k].hi);
		shmr_hist_record(h, cases[k].ns);
		assert_int_equal(atomic_load(&h->buckets[i]), 1);
	}
	assert_int_equal(atomic_load(&h->count), 7);
	assert_int_equal(atomic_load(&h->max_ns), 1000000000);
	assert_int_equal(atomic_load(&h->sum_ns),
			 0 + 15 + 16 + 33 + 1000 + 100000 + 1000000000ull);
	free(h);
}

/* 990 sojourns of 1 us and 10 of 100 us: p50 and p99 are the top of the
 * 1 us bucket, p99.9 the top of the 100 us one, max the longest. */
static void percentiles_are_bucket_edges(void **state)
{
	struct shmr_hist *h = hist_new();
	uint64_t counts[SHMR_HIST_BUCKETS];
	struct shmr_hist_summary s;

	(void)state;
	for (int i = 0; i < 990; i++)
		shmr_hist_record(h, 1000);
	for (int i = 0; i < 10; i++)
		shmr_hist_record(h, 100000);
	shmr_hist_read(h, counts, &s);
	assert_int_equal(s.count, 1000);
	assert_int_equal(s.p50_ns, 1023);
	assert_int_equal(s.p99_ns, 1023);
	assert_int_equal(s.p999_ns, 102399);
	assert_int_equal(s.max_ns, 100000);
	assert_int_equal(s.sum_ns, 990 * 1000 + 10 * 100000);
	/* One more slow one moves p99 past the 1 us bucket's top: rank
	 * ceil(0.99 * 1001) = 991 is a 100 us sojourn. */
	shmr_hist_record(h, 100000);
	shmr_hist_read(h, counts, &s);
	assert_int_equal(s.p99_ns, 102399);
	assert_int_equal(s.p50_ns, 1023);
	/* Everything in the last bucket: its lower edge, as it has no top. */
	shmr_hist_reset(h);
	shmr_hist_record(h, 100ull * 1000000000ull);
	shmr_hist_read(h, counts, &s);
	assert_int_equal(s.p50_ns, 31ull << 31);
	assert_int_equal(s.max_ns, 100ull * 1000000000ull);
	free(h);
}

/* The burst form: buckets per message, the totals once. */
static void burst_totals(void **state)
{
	struct shmr_hist *h = hist_new();

	(void)state;
	shmr_hist_add(h, 500);
	shmr_hist_add(h, 700);
	shmr_hist_record_burst(h, 2, 1200, 700, 3);
	shmr_hist_record_burst(h, 1, 10, 10, 0);
	assert_int_equal(atomic_load(&h->count), 3);
	assert_int_equal(atomic_load(&h->sum_ns), 1210);
	assert_int_equal(atomic_load(&h->max_ns), 700);
	assert_int_equal(atomic_load(&h->unstamped), 3);
	free(h);
}

/* The weighted add (a run of messages with one stamp, as libshmr's
 * receive records them): n sojourns of one value leave the block exactly
 * as n single records would, bucket by bucket, count, sum and max; runs of
 * different values and sizes mix as their messages would; n = 0 records
 * nothing. */
static void weighted_add_is_exact(void **state)
{
	struct shmr_hist *w = hist_new(), *one = hist_new();
	static const struct {
		uint64_t ns, n;
	} runs[] = {
		{ 1000, 32 },   /* a full send burst in the 1 us bucket */
		{ 0, 5 },       /* a stamp from the future counts as 0 */
		{ 15, 1 },      /* the last linear bucket, a run of one */
		{ 1023, 7 },    /* the top of the 1 us bucket: same bucket */
		{ 1024, 300 },  /* the next bucket's first value */
		{ 100000, 256 }, /* the largest receive burst */
		{ 100ull * 1000000000ull, 3 }, /* the open last bucket */
		{ 500, 0 },     /* nothing */
	};
	uint64_t counts[SHMR_HIST_BUCKETS];
	struct shmr_hist_summary s;
	uint64_t total = 0, sum = 0;

	(void)state;
	for (unsigned k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		unsigned i = shmr_hist_index(runs[k].ns);
		uint64_t before = atomic_load(&w->buckets[i]);

		shmr_hist_record_n(w, runs[k].ns, runs[k].n);
		for (uint64_t j = 0; j < runs[k].n; j++)
			shmr_hist_record(one, runs[k].ns);
		/* The run's bucket grew by exactly n, and it is the bucket
		 * the rule names. */
		assert_int_equal(atomic_load(&w->buckets[i]) - before,
				 runs[k].n);
		total += runs[k].n;
		sum += runs[k].n * runs[k].ns;
		assert_int_equal(atomic_load(&w->count), total);
		assert_int_equal(atomic_load(&w->sum_ns), sum);
	}
	/* Bucket for bucket the same block as one record per message. */
	assert_memory_equal(w, one, sizeof(*w));
	assert_int_equal(atomic_load(&w->buckets[shmr_hist_index(1000)]), 39);
	assert_int_equal(atomic_load(&w->buckets[shmr_hist_index(500)]), 0);
	assert_int_equal(atomic_load(&w->max_ns), 100ull * 1000000000ull);
	assert_int_equal(atomic_load(&w->unstamped), 0);
	/* 604 values: p50 (rank 302) is in the 1024 ns run, whose bucket
	 * is 64 ns wide; p99 (rank 598) in the 100 us one, p99.9 (rank 604)
	 * in the last bucket. */
	shmr_hist_read(w, counts, &s);
	assert_int_equal(s.count, 604);
	assert_int_equal(s.p50_ns, 1087);
	assert_int_equal(s.p99_ns, 102399);
	assert_int_equal(s.p999_ns, 31ull << 31);
	free(w);
	free(one);
}

/* A peer scribbled the block: sums saturate, the walk ends. */
static void garbage_is_figures(void **state)
{
	static struct shmr_hist scribbled;
	static uint64_t counts[SHMR_HIST_BUCKETS];
	struct shmr_hist_summary s;

	(void)state;
	memset(&scribbled, 0xff, sizeof(scribbled));
	shmr_hist_read(&scribbled, counts, &s);
	assert_int_equal(s.count, UINT64_MAX);
	/* The first bucket alone already holds every rank. */
	assert_int_equal(s.p50_ns, 0);
	assert_int_equal(s.p999_ns, 0);
	/* Garbage only in the last bucket: its lower edge. */
	memset(counts, 0, sizeof(counts));
	counts[SHMR_HIST_BUCKETS - 1] = UINT64_MAX;
	assert_int_equal(shmr_hist_quantile(counts, 99, 100), 31ull << 31);
	/* Quantiles of an all-zero array and of a bad quantile are 0. */
	memset(counts, 0, sizeof(counts));
	assert_int_equal(shmr_hist_quantile(counts, 50, 100), 0);
	counts[3] = 1;
	assert_int_equal(shmr_hist_quantile(counts, 50, 0), 0);
	assert_int_equal(shmr_hist_quantile(counts, 200, 100), 3);
}

static void tsc_to_ns(void **state)
{
	(void)state;
	assert_int_equal(shmr_tsc_to_ns(12345, shmr_tsc_mult(1000000000ull)),
			 12345);
	assert_int_equal(shmr_tsc_to_ns(3000, shmr_tsc_mult(3000000000ull)),
			 999); /* the multiplier rounds down */
	assert_int_equal(shmr_tsc_mult(0), 0);
	/* A minute at 4 GHz does not overflow. */
	assert_true(shmr_tsc_to_ns(240000000000ull,
				   shmr_tsc_mult(4000000000ull)) >=
		    59999999000ull);
	/* The calibration finds a rate (any TSC of this century: above
	 * 100 MHz). */
	assert_true(shmr_tsc_calibrate(5) > 100000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(edges_are_consistent),
		cmocka_unit_test(known_values_land_in_their_buckets),
		cmocka_unit_test(percentiles_are_bucket_edges),
		cmocka_unit_test(burst_totals),
		cmocka_unit_test(weighted_add_is_exact),
		cmocka_unit_test(garbage_is_figures),
		cmocka_unit_test(tsc_to_ns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
