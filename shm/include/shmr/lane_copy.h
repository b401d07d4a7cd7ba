/*
 * Moving slots in and out of a lane, with the copy done by memcpy().
 *
 * DPDK's burst calls for rings of elements (rte_ring_enqueue_burst_elem()
 * and the dequeue ones) copy an element of any size other than 8 or 16
 * bytes one 32-bit word at a time.  For slots of 64 bytes and up that loop
 * costs more than the ring itself: the bare two-hop chain of shmr-perf
 * moved about 38 M msg/s with it and 50 M msg/s with these helpers on the
 * same machine (docs/benchmarks.md).  The helpers use DPDK's zero-copy calls
 * (rte_ring_peek_zc.h), which reserve the slots and hand out pointers into
 * the ring, and copy with memcpy().  Index handling, ordering and the
 * publishing release store are DPDK's own; only the copy is ours.
 *
 * Everything that moves slots (libshmr, the dataplane, the bare baseline
 * of shmr-perf) uses these, so a benchmark ratio compares like with like.
 */
#ifndef SHMR_LANE_COPY_H
#define SHMR_LANE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_prefetch.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

/* The most a consumer asks for ahead of its next peek
 * (shmr_lane_prefetch_next()): a burst of 32 slots of 128 bytes. */
#define SHMR_LANE_PREFETCH_BYTES 4096u

/* The copies of a zero-copy burst of @p n slots described by @p z: out of
 * the lane into @p buf, and from @p buf into the lane. */
static inline __attribute__((always_inline)) void
shmr_lane_zc_copy_out(const struct rte_ring_zc_data *z, void *buf, uint32_t ss,
		      unsigned n)
{
	memcpy(buf, z->ptr1, (size_t)z->n1 * ss);
	if (n > z->n1)
		memcpy((unsigned char *)buf + (size_t)z->n1 * ss, z->ptr2,
		       (size_t)(n - z->n1) * ss);
}

static inline __attribute__((always_inline)) void
shmr_lane_zc_copy_in(const struct rte_ring_zc_data *z, const void *buf,
		     uint32_t ss, unsigned n)
{
	memcpy(z->ptr1, buf, (size_t)z->n1 * ss);
	if (n > z->n1)
		memcpy(z->ptr2, (const unsigned char *)buf + (size_t)z->n1 * ss,
		       (size_t)(n - z->n1) * ss);
}

/**
 * Copy up to @p n slots of @p ss bytes from the head of @p r into @p buf
 * and keep them reserved, as rte_ring_dequeue_burst_elem_start() does: they
 * stay in the ring until rte_ring_dequeue_elem_finish() (or the zc finish)
 * releases them.
 * Context: the ring's single consumer, with no other start outstanding
 *          that a finish would not cover.
 * Returns: the number of slots copied (0 when the ring is empty).
 */
static inline __attribute__((always_inline)) unsigned
shmr_lane_peek(struct rte_ring *r, void *buf, uint32_t ss, unsigned n)
{
	struct rte_ring_zc_data z;

	n = rte_ring_dequeue_zc_burst_elem_start(r, ss, n, &z, NULL);
	if (n)
		shmr_lane_zc_copy_out(&z, buf, ss, n);
	return n;
}

/**
 * Ask for the lines of up to @p n slots that @p r's producer has published
 * past what its consumer has peeked (at most SHMR_LANE_PREFETCH_BYTES), so
 * that the next peek's copy finds them in cache: they come from the
 * producer's core while the consumer handles what it took.  Only published
 * slots, which the producer does not write again until they are released.
 * The ring's words are a peer's: they only choose which of the lane's
 * slots, the addresses bounded by our @p lane_size (a power of two), and a
 * prefetch never faults.
 * Context: the ring's single consumer, after a peek.
 */
static inline __attribute__((always_inline)) void
shmr_lane_prefetch_next(const struct rte_ring *r, uint32_t lane_size,
			uint32_t ss, unsigned n)
{
	uint32_t head = __atomic_load_n(&r->cons.head, __ATOMIC_RELAXED);
	uint32_t avail =
		__atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED) - head;
	const unsigned char *base = (const unsigned char *)(r + 1);
	uint32_t left = SHMR_LANE_PREFETCH_BYTES;

	if (avail > n)
		avail = n;
	for (uint32_t q = 0; q < avail && left; q++) {
		const unsigned char *s =
			base + (size_t)((head + q) & (lane_size - 1)) * ss;

		for (uint32_t o = 0; o < ss && left; o += 64, left -= 64)
			rte_prefetch0(s + o);
	}
}

/**
 * Copy up to @p n slots of @p ss bytes from @p buf into @p r and publish
 * them, as rte_ring_enqueue_burst_elem() does.
 * Context: the ring's single producer.
 * Returns: the number of slots enqueued (fewer than @p n when full).
 */
static inline __attribute__((always_inline)) unsigned
shmr_lane_put(struct rte_ring *r, const void *buf, uint32_t ss, unsigned n)
{
	struct rte_ring_zc_data z;

	n = rte_ring_enqueue_zc_burst_elem_start(r, ss, n, &z, NULL);
	if (n) {
		shmr_lane_zc_copy_in(&z, buf, ss, n);
		rte_ring_enqueue_zc_elem_finish(r, n);
	}
	return n;
}

/**
 * Copy up to @p n slots out of @p r into @p buf and release them at once,
 * as rte_ring_dequeue_burst_elem() does.
 * Context: the ring's single consumer, with no start outstanding.
 * Returns: the number of slots taken.
 */
static inline __attribute__((always_inline)) unsigned
shmr_lane_take(struct rte_ring *r, void *buf, uint32_t ss, unsigned n)
{
	n = shmr_lane_peek(r, buf, ss, n);
	if (n)
		rte_ring_dequeue_zc_elem_finish(r, n);
	return n;
}

/*
 * The bounded variants, for a reader that does not trust the ring's own
 * words: DPDK computes the slots' addresses from the ring's size and mask,
 * and a peer that can write the ring can change them between the reader's
 * lane check (shmr_lane_valid_sc(), _sp()) and the start.  After the start,
 * shmr_lane_zc_inside() checks the addresses against the reader's own
 * geometry; slots that are not inside are given back (finish of 0), as a
 * lane with nothing to take or no room, and the next lane check finds the
 * geometry the peer wrote.  So no value a peer writes moves a copy out of
 * the lane.
 */

/**
 * Do the @p n slots a zero-copy start handed out in @p z lie inside the
 * slots of @p r, a lane of @p lane_size entries of @p ss bytes?
 * Context: anyone; reads only @p z.  Returns: 1 inside, 0 not.
 */
static inline __attribute__((always_inline)) int
shmr_lane_zc_inside(const struct rte_ring *r, uint32_t lane_size, uint32_t ss,
		    unsigned n, const struct rte_ring_zc_data *z)
{
	uintptr_t lo = (uintptr_t)(r + 1), p1 = (uintptr_t)z->ptr1;
	uint64_t bytes = (uint64_t)lane_size * ss;

	if (n == 0)
		return 1;
	if (z->n1 > n || p1 < lo ||
	    (uint64_t)(p1 - lo) + (uint64_t)z->n1 * ss > bytes)
		return 0;
	/* ptr2 is set only when the slots wrap (n > n1). */
	return n == z->n1 || ((uintptr_t)z->ptr2 == lo &&
			      (uint64_t)(n - z->n1) * ss <= bytes);
}

/**
 * Reserve up to @p n slots of @p r for a zero-copy enqueue, as
 * rte_ring_enqueue_zc_burst_elem_start() does, their addresses checked
 * against @p lane_size (shmr_lane_zc_inside()); the caller copies into
 * @p z and calls rte_ring_enqueue_zc_elem_finish().
 * Context: the ring's single producer.
 * Returns: the number of slots reserved (0: full, or not inside: nothing
 *          is left reserved).
 */
static inline __attribute__((always_inline)) unsigned
shmr_lane_reserve_bounded(struct rte_ring *r, uint32_t lane_size, uint32_t ss,
			  unsigned n, struct rte_ring_zc_data *z)
{
	n = rte_ring_enqueue_zc_burst_elem_start(r, ss, n, z, NULL);
	if (n && !shmr_lane_zc_inside(r, lane_size, ss, n, z)) {
		rte_ring_enqueue_zc_elem_finish(r, 0);
		return 0;
	}
	return n;
}

/**
 * As shmr_lane_peek(), the slots' addresses checked against @p lane_size
 * (shmr_lane_zc_inside()).
 * Returns: the number of slots copied (0: empty, or not inside).
 */
static inline __attribute__((always_inline)) unsigned
shmr_lane_peek_bounded(struct rte_ring *r, uint32_t lane_size, void *buf,
		       uint32_t ss, unsigned n)
{
	struct rte_ring_zc_data z;

	n = rte_ring_dequeue_zc_burst_elem_start(r, ss, n, &z, NULL);
	if (n && !shmr_lane_zc_inside(r, lane_size, ss, n, &z)) {
		rte_ring_dequeue_zc_elem_finish(r, 0);
		return 0;
	}
	if (n)
		shmr_lane_zc_copy_out(&z, buf, ss, n);
	return n;
}

/**
 * As shmr_lane_put(), the slots' addresses checked against @p lane_size
 * (shmr_lane_zc_inside()).
 * Returns: the number of slots enqueued (0: full, or not inside).
 */
static inline __attribute__((always_inline)) unsigned
shmr_lane_put_bounded(struct rte_ring *r, uint32_t lane_size, const void *buf,
		      uint32_t ss, unsigned n)
{
	struct rte_ring_zc_data z;

	n = shmr_lane_reserve_bounded(r, lane_size, ss, n, &z);
	if (n) {
		shmr_lane_zc_copy_in(&z, buf, ss, n);
		rte_ring_enqueue_zc_elem_finish(r, n);
	}
	return n;
}

#endif
