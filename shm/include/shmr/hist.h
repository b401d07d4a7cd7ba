/*
 * Sojourn histograms: how long messages waited, from the sender's stamp to
 * the receiver's receive.  Not installed; the appliance's parts include it.
 *
 * A histogram is a fixed block of counters in the lanes part of the domain
 * (struct shmr_hist, one per endpoint slot), written by one process only:
 * the endpoint's receiver (libshmr's receive), with relaxed loads and
 * stores of its own counts (no read-modify-write is needed with one
 * writer, and none is a partner of anything: statistics).  No allocation,
 * no lock, no syscall.  Readers (shmr-control, shmrctl) copy the block and
 * trust nothing in it: any peer can write the lanes part, so a bucket may
 * hold any 64-bit value; every reader's sum saturates and every loop is
 * bounded by the block's fixed size, so a garbage block gives wrong
 * figures, never a crash or a hang.
 *
 * Buckets are log-linear, as HdrHistogram's: values (nanoseconds) below
 * 2^SHMR_HIST_SUB_BITS each have a bucket of their own; above, every power
 * of two [2^e, 2^(e+1)) is cut into SHMR_HIST_SUB equal buckets, so a
 * bucket is at most 1/16 (6.25 %) of its values wide.  Powers up to 2^35
 * have buckets; the last bucket holds everything from its lower edge
 * (31 * 2^31 ns, about 66.6 s) up.  528 buckets, 4288 bytes a histogram.
 *
 * A percentile is reported as the highest value of the bucket that holds
 * it (HdrHistogram's "highest equivalent value"): the true percentile is
 * at most that, and at least the bucket's lower edge.
 */
#ifndef SHMR_HIST_H
#define SHMR_HIST_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#define SHMR_HIST_SUB_BITS 4u
#define SHMR_HIST_SUB (1u << SHMR_HIST_SUB_BITS)
/* Powers of two with buckets: 2^4 .. 2^35, plus the linear first 16. */
#define SHMR_HIST_TOP_BIT 35u
#define SHMR_HIST_BUCKETS                                                  \
	((SHMR_HIST_TOP_BIT - SHMR_HIST_SUB_BITS + 2u) * SHMR_HIST_SUB)

/*
 * One histogram (layout.h places one per endpoint slot in the lanes part).
 * count, sum_ns and max_ns are the receiver's own running figures;
 * libshmr's receive stores them once per receive (shmr_hist_record_burst())
 * and each bucket its runs of one stamp fell in once (shmr_hist_add_n()),
 * never once per message.
 */
struct shmr_hist {
	alignas(64) _Atomic(uint64_t) count; /* messages recorded */
	_Atomic(uint64_t) sum_ns;             /* their sojourns, summed */
	_Atomic(uint64_t) max_ns;             /* the longest */
	/* Received without a stamp (a sender with stamps off, a payload
	 * that left no room, a message the dataplane made). */
	_Atomic(uint64_t) unstamped;
	uint64_t pad[4];
	_Atomic(uint64_t) buckets[SHMR_HIST_BUCKETS];
};

/** The bucket of a value.  Context: any; pure, constant time. */
static inline unsigned shmr_hist_index(uint64_t ns)
{
	unsigned e;

	if (ns < SHMR_HIST_SUB)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns);
	if (e > SHMR_HIST_TOP_BIT)
		return SHMR_HIST_BUCKETS - 1u;
	return (e - SHMR_HIST_SUB_BITS + 1u) * SHMR_HIST_SUB +
	       (unsigned)((ns >> (e - SHMR_HIST_SUB_BITS)) &
			  (SHMR_HIST_SUB - 1u));
}

/** The lowest value of bucket @p i (i < SHMR_HIST_BUCKETS).
 *  Context: any; pure. */
static inline uint64_t shmr_hist_lower(unsigned i)
{
	unsigned e, sub;

	if (i < SHMR_HIST_SUB)
		return i;
	e = i / SHMR_HIST_SUB + SHMR_HIST_SUB_BITS - 1u;
	sub = i % SHMR_HIST_SUB;
	return (uint64_t)(SHMR_HIST_SUB + sub) << (e - SHMR_HIST_SUB_BITS);
}

/** The highest value of bucket @p i; UINT64_MAX for the last bucket.
 *  Context: any; pure. */
static inline uint64_t shmr_hist_upper(unsigned i)
{
	if (i + 1u >= SHMR_HIST_BUCKETS)
		return UINT64_MAX;
	return shmr_hist_lower(i + 1u) - 1u;
}

/**
 * Add @p n to bucket @p i (shmr_hist_index(); taken modulo the bucket
 * count, so no @p i writes outside the block): a burst's run of
 * sojourns in one bucket, one store.
 * Context:     the histogram's one writer.
 * Concurrency: wait-free; relaxed, no partner (a statistic).
 */
static inline void shmr_hist_add_n(struct shmr_hist *h, unsigned i,
				   uint64_t n)
{
	_Atomic(uint64_t) *b = &h->buckets[i % SHMR_HIST_BUCKETS];

	atomic_store_explicit(
		b, atomic_load_explicit(b, memory_order_relaxed) + n,
		memory_order_relaxed);
}

/**
 * Record one sojourn's bucket only (the count, sum and max go in with
 * shmr_hist_record_burst()).
 * Context:     the histogram's one writer.
 * Concurrency: wait-free; relaxed, no partner (a statistic).
 */
static inline void shmr_hist_add(struct shmr_hist *h, uint64_t ns)
{
	shmr_hist_add_n(h, shmr_hist_index(ns), 1);
}

/**
 * Record @p n sojourns of @p ns each (a run of messages that carried one
 * stamp: one sender's burst) in full, with one store to each of the
 * bucket, count, sum and max: afterwards the block holds what @p n calls
 * of shmr_hist_record(h, @p ns) would have left (the sum, as theirs,
 * modulo 2^64).  @p n == 0 records nothing.
 * Context:     the histogram's one writer (the endpoint's receiver).
 * Concurrency: wait-free; relaxed, no partner (a statistic).
 */
static inline void shmr_hist_record_n(struct shmr_hist *h, uint64_t ns,
				      uint64_t n)
{
	if (n == 0)
		return;
	shmr_hist_add_n(h, shmr_hist_index(ns), n);
	atomic_store_explicit(
		&h->count,
		atomic_load_explicit(&h->count, memory_order_relaxed) + n,
		memory_order_relaxed);
	atomic_store_explicit(
		&h->sum_ns,
		atomic_load_explicit(&h->sum_ns, memory_order_relaxed) +
			n * ns,
		memory_order_relaxed);
	if (ns > atomic_load_explicit(&h->max_ns, memory_order_relaxed))
		atomic_store_explicit(&h->max_ns, ns, memory_order_relaxed);
}

/**
 * A burst's totals: @p n messages recorded with shmr_hist_add(), their
 * sojourns summing to @p sum_ns, the longest @p max_ns, and @p unstamped
 * messages that carried no stamp.
 * Context:     the histogram's one writer.
 * Concurrency: wait-free; relaxed, no partner (a statistic).
 */
void shmr_hist_record_burst(struct shmr_hist *h, uint64_t n, uint64_t sum_ns,
			    uint64_t max_ns, uint64_t unstamped);

/**
 * Record one sojourn in full (bucket, count, sum, max): the unit API
 * the tests inject known values with.
 * Context: the histogram's one writer.  Concurrency: wait-free.
 */
void shmr_hist_record(struct shmr_hist *h, uint64_t ns);

/** Zero @p h.  Context: no writer records into it meanwhile (the
 *  control plane, before it hands the endpoint slot out). */
void shmr_hist_reset(struct shmr_hist *h);

/*
 * The edges a reader reports cumulative counts at (a Prometheus
 * histogram's `le`): every other power of two, 2^7 ns (128 ns), 2^9 ns,
 * ... 2^35 ns (34.4 s), so a largest domain's metrics stay small.  Each is
 * a bucket's lower edge, so the count below it is exact.
 */
#define SHMR_HIST_EDGE_FIRST 7u
#define SHMR_HIST_EDGE_LAST 35u
#define SHMR_HIST_EDGE_STEP 2u
#define SHMR_HIST_EDGES                                                    \
	((SHMR_HIST_EDGE_LAST - SHMR_HIST_EDGE_FIRST) / SHMR_HIST_EDGE_STEP + 1u)
/* The bit of edge @p j. */
#define SHMR_HIST_EDGE_BIT(j) (SHMR_HIST_EDGE_FIRST + SHMR_HIST_EDGE_STEP * (j))

/** A reader's summary of a histogram: each figure in nanoseconds. */
struct shmr_hist_summary {
	uint64_t count;   /* the buckets' sum (saturating): what percentiles use */
	uint64_t sum_ns;  /* as the writer stored it */
	uint64_t max_ns;  /* as the writer stored it */
	uint64_t unstamped;
	uint64_t p50_ns, p99_ns, p999_ns; /* 0 when count is 0 */
	/* below[j]: sojourns under 2^SHMR_HIST_EDGE_BIT(j) ns
	 * (saturating). */
	uint64_t below[SHMR_HIST_EDGES];
};

/**
 * The value at quantile @p num / @p per (p50: 50/100, p99.9: 999/1000) of
 * @p counts: the highest value of the bucket in which the
 * ceil(q * total)-th smallest value lies (the last bucket's: its lower
 * edge, since it has no top).  @p counts may hold anything (saturating
 * sums, one fixed loop).
 * Context: any; pure.  Returns: 0 when the counts sum to 0.
 */
uint64_t shmr_hist_quantile(const uint64_t counts[SHMR_HIST_BUCKETS],
			    uint64_t num, uint64_t per);

/**
 * Copy @p h (racy relaxed loads: a snapshot of hints) into @p counts and
 * summarise it into @p s.
 * Context: any reader.  Concurrency: wait-free; never writes @p h.
 */
void shmr_hist_read(const struct shmr_hist *h,
		    uint64_t counts[SHMR_HIST_BUCKETS],
		    struct shmr_hist_summary *s);

/*
 * TSC to nanoseconds, with a multiplier the domain's header holds
 * (shmr_domain_hdr.tsc_hz, measured by shmr-control when it creates the
 * domain): ns = ticks * mult >> 32.
 */
/* The rates a TSC can have, for a reader of the header's word (which a
 * peer could have written): anything outside was not measured. */
#define SHMR_TSC_HZ_MIN 10000000ull     /* 10 MHz */
#define SHMR_TSC_HZ_MAX 100000000000ull /* 100 GHz */

/** The multiplier for @p hz ticks a second (0 when @p hz is 0). */
static inline uint64_t shmr_tsc_mult(uint64_t hz)
{
	return hz ? (uint64_t)((1000000000ull << 32) / hz) : 0;
}

static inline uint64_t shmr_tsc_to_ns(uint64_t ticks, uint64_t mult)
{
	/* One 64x64 multiply: a minute of ticks times a multiplier of 2^32
	 * overflows 64 bits. */
	__extension__ typedef unsigned __int128 u128;

	return (uint64_t)(((u128)ticks * mult) >> 32);
}

/**
 * Measure the TSC's rate against CLOCK_MONOTONIC_RAW over about
 * @p ms milliseconds (it sleeps).
 * Context: a daemon at start-up (blocking).
 * Returns: ticks a second, or 0 when the clock cannot be read.
 */
uint64_t shmr_tsc_calibrate(unsigned ms);

#endif
