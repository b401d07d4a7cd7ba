/*
 * Sojourn histograms (shmr/hist.h): the writer's burst totals, the
 * readers' untrusting summary, and the TSC's rate.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include <shmr/hist.h>

static void bump(_Atomic(uint64_t) *w, uint64_t by)
{
	atomic_store_explicit(w, atomic_load_explicit(w, memory_order_relaxed) +
				      by,
			      memory_order_relaxed);
}

void shmr_hist_record_burst(struct shmr_hist *h, uint64_t n, uint64_t sum_ns,
			    uint64_t max_ns, uint64_t unstamped)
{
	if (n) {
		bump(&h->count, n);
		bump(&h->sum_ns, sum_ns);
		if (max_ns > atomic_load_explicit(&h->max_ns,
						  memory_order_relaxed))
			atomic_store_explicit(&h->max_ns, max_ns,
					      memory_order_relaxed);
	}
	if (unstamped)
		bump(&h->unstamped, unstamped);
}

void shmr_hist_record(struct shmr_hist *h, uint64_t ns)
{
	shmr_hist_record_n(h, ns, 1);
}

void shmr_hist_reset(struct shmr_hist *h)
{
	atomic_store_explicit(&h->count, 0, memory_order_relaxed);
	atomic_store_explicit(&h->sum_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&h->max_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&h->unstamped, 0, memory_order_relaxed);
	for (unsigned i = 0; i < SHMR_HIST_BUCKETS; i++)
		atomic_store_explicit(&h->buckets[i], 0, memory_order_relaxed);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t shmr_hist_quantile(const uint64_t counts[SHMR_HIST_BUCKETS],
			    uint64_t num, uint64_t per)
{
	uint64_t total = 0, rank, cum = 0;
	unsigned __int128 r;

	for (unsigned i = 0; i < SHMR_HIST_BUCKETS; i++)
		total = sat_add(total, counts[i]);
	if (total == 0 || per == 0)
		return 0;
	if (num > per)
		num = per;
	/* ceil(total * num / per), at least the first value. */
	r = ((unsigned __int128)total * num + per - 1) / per;
	rank = r ? (uint64_t)r : 1;
	for (unsigned i = 0; i < SHMR_HIST_BUCKETS; i++) {
		cum = sat_add(cum, counts[i]);
		if (cum >= rank)
			return i + 1u < SHMR_HIST_BUCKETS ? shmr_hist_upper(i)
							  : shmr_hist_lower(i);
	}
	return shmr_hist_lower(SHMR_HIST_BUCKETS - 1u);
}

void shmr_hist_read(const struct shmr_hist *h,
		    uint64_t counts[SHMR_HIST_BUCKETS],
		    struct shmr_hist_summary *s)
{
	/* The loads below are hints (any peer can write the block): relaxed,
	 * no partner. */
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < SHMR_HIST_BUCKETS; i++) {
		counts[i] = atomic_load_explicit(&h->buckets[i],
						 memory_order_relaxed);
		s->count = sat_add(s->count, counts[i]);
	}
	s->sum_ns = atomic_load_explicit(&h->sum_ns, memory_order_relaxed);
	s->max_ns = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
	s->unstamped = atomic_load_explicit(&h->unstamped,
					    memory_order_relaxed);
	for (unsigned j = 0, i = 0; j < SHMR_HIST_EDGES; j++) {
		unsigned end = shmr_hist_index(1ull << SHMR_HIST_EDGE_BIT(j));
		uint64_t cum = j ? s->below[j - 1] : 0;

		for (; i < end; i++)
			cum = sat_add(cum, counts[i]);
		s->below[j] = cum;
	}
	s->p50_ns = shmr_hist_quantile(counts, 50, 100);
	s->p99_ns = shmr_hist_quantile(counts, 99, 100);
	s->p999_ns = shmr_hist_quantile(counts, 999, 1000);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t shmr_tsc_calibrate(unsigned ms)
{
	struct timespec nap = { ms / 1000, (long)(ms % 1000) * 1000000L };
	uint64_t t0 = mono_ns(), c0 = rte_rdtsc(), t1, c1;

	if (t0 == 0)
		return 0;
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
	c1 = rte_rdtsc();
	t1 = mono_ns();
	if (t1 <= t0 || c1 <= c0)
		return 0;
	return (uint64_t)(((unsigned __int128)(c1 - c0) * 1000000000ull) /
			  (t1 - t0));
}
