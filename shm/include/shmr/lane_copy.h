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

#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

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
	if (n) {
		memcpy(buf, z.ptr1, (size_t)z.n1 * ss);
		if (n > z.n1)
			memcpy((unsigned char *)buf + (size_t)z.n1 * ss, z.ptr2,
			       (size_t)(n - z.n1) * ss);
	}
	return n;
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
		memcpy(z.ptr1, buf, (size_t)z.n1 * ss);
		if (n > z.n1)
			memcpy(z.ptr2,
			       (const unsigned char *)buf + (size_t)z.n1 * ss,
			       (size_t)(n - z.n1) * ss);
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

#endif
