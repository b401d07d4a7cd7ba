/*
 * A lane itself: how full it is, whether it may be used, and how a dead
 * peer's side of it is taken over.  Not installed; not for worker
 * programs.  Included by <shmr/domain.h>, which says where each lane lies
 * in a domain (shmr_lane_at()); the functions declared here are in
 * shm/domain.c.
 *
 * Lanes are DPDK rte_rings initialised in place in the domain with
 * rte_ring_init() and the single-producer/single-consumer sync type, used
 * through the _elem burst API with the domain's slot size as element size.
 * Consumers use the peek API (dequeue start/finish) so that a burst stays in
 * the ring until its consumer asks for the next one: a consumer that dies
 * mid-burst leaves [cons.tail, cons.head) behind, which
 * shmr_lane_repair_consumer() hands back.
 */
#ifndef SHMR_LANE_H
#define SHMR_LANE_H

#include <stdint.h>

#include <rte_ring_core.h>

/**
 * Slots the consumer of @p r has not released yet (read or not).
 * Context:     the lane's consumer (its own cons.tail is stable).
 * Concurrency: wait-free; acquire on prod.tail pairs with the producer's
 *              release store of it, so the slots counted are readable.
 */
static inline uint32_t shmr_lane_pending_sc(const struct rte_ring *r)
{
	uint32_t pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);

	return pt - __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED);
}

/*
 * Lane checks (valid) and lane repair (repair), side by side as Concurrency
 * Kit pairs them: valid tells a lane that may be used from one that must
 * not be touched, repair takes over a dead peer's side of a valid one.
 */

/**
 * Is @p r's geometry the one a lane of @p lane_size entries was created
 * with?  Only what no legitimate peer ever writes after creation: size,
 * mask, capacity and the single-thread sync types.  Index arithmetic in
 * the ring code only uses size and mask, so a lane that passes cannot make
 * its user read or write outside it.
 *
 * Context:     anyone; reads no index.
 * Concurrency: wait-free.
 * Returns:     1 valid, 0 not.
 */
static inline int shmr_lane_geometry_valid(const struct rte_ring *r,
					   uint32_t lane_size)
{
	return r->size == lane_size && r->mask == lane_size - 1 &&
	       r->capacity == lane_size - 1 &&
	       r->prod.sync_type == RTE_RING_SYNC_ST &&
	       r->cons.sync_type == RTE_RING_SYNC_ST;
}

/**
 * Slots of @p r that its consumer has not released yet: prod.tail -
 * cons.tail, or -1 when the lane cannot be judged (its geometry is not
 * that of @p lane_size, or the producer is more than a capacity ahead:
 * indices a peer wrote).  Nothing read is trusted beyond that check.
 *
 * Context:     anyone mapping the domain (the producer waiting for its
 *              lanes to drain, the control plane watching a gone
 *              client's, a consumer that found nothing); reads only the
 *              two tails.
 * Concurrency: wait-free.  Acquire on cons.tail pairs with the
 *              consumer's release store of it (dequeue finish): once 0 is
 *              seen, the consumer is done with every slot.  Acquire on
 *              prod.tail pairs with the producer's release store.
 * _at:         also gives the consumer tail the count starts from (the
 *              slots [*from, *from + count) are published).
 */
static inline int64_t shmr_lane_unconsumed_at(const struct rte_ring *r,
					      uint32_t lane_size,
					      uint32_t *from)
{
	uint32_t ct, pt;

	if (!shmr_lane_geometry_valid(r, lane_size))
		return -1;
	ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	if (pt - ct > lane_size - 1)
		return -1;
	*from = ct;
	return (int64_t)(pt - ct);
}

static inline int64_t shmr_lane_unconsumed(const struct rte_ring *r,
					   uint32_t lane_size)
{
	uint32_t ct;

	return shmr_lane_unconsumed_at(r, lane_size, &ct);
}

/**
 * Is a lane we consume still sound?  Checks the geometry
 * (shmr_lane_geometry_valid()), that our own side is at rest (no burst
 * held: head == tail), and that the producer's tail is at most a capacity
 * ahead of our tail.  It reads no head/tail pair that the peer moves while
 * we read it, so a live producer never makes a sound ring look corrupted.
 * Out of line on purpose: the dataplane calls it once per burst, and
 * inlined into the burst it cost 4 to 5% of the router's throughput
 * (docs/benchmarks.md); a call keeps the burst's own code tight.
 *
 * Context:     the lane's consumer, between bursts.
 * Concurrency: wait-free.
 * Returns:     1 sound, 0 not.
 */
int shmr_lane_valid_sc(const struct rte_ring *r, uint32_t lane_size);

/**
 * As shmr_lane_valid_sc(), for a lane we produce (out of line for the same
 * reason).
 *
 * Context:     the lane's producer, between enqueues.
 * Concurrency: wait-free.
 * Returns:     1 sound, 0 not.
 */
int shmr_lane_valid_sp(const struct rte_ring *r, uint32_t lane_size);

/**
 * Hand an unfinished burst back: flag slots [cons.tail, cons.head) as
 * SHMR_F_REDELIVERED and move cons.head back to cons.tail.  Trusts
 * nothing in the ring but its indices: a lane whose geometry is not that
 * of @p lane_size is left alone (0), the slots are found with our mask
 * (@p lane_size - 1), and a burst longer than a capacity (indices a peer
 * wrote) hands nothing back but still moves cons.head to cons.tail.
 *
 * Context:     only once the consumer's death is confirmed (waitpid), and
 *              before its replacement attaches: nobody else consumes.
 * Concurrency: the producer may keep enqueueing; it never writes those slots.
 * Returns:     how many slots were handed back.
 */
unsigned shmr_lane_repair_consumer(struct rte_ring *r, uint32_t slot_size,
				   uint32_t lane_size);

/**
 * Drop a half-done enqueue of a dead producer (prod.head back to prod.tail:
 * the slots were never published).  A lane whose geometry is not that of
 * @p lane_size is left alone.
 * Context: only once the producer's death is confirmed.
 * Returns: 1 when something was repaired.
 */
int shmr_lane_repair_producer(struct rte_ring *r, uint32_t lane_size);

/**
 * Can a lane whose one side belonged to a dead process be taken over by
 * the repairs above, or must it be initialised again?  Unsound: its
 * geometry is not that of @p lane_size, or the live peer's side or the
 * producer's lead over the consumer is more than a capacity (so the live
 * peer's own lane check refuses the lane: it is not using it, and
 * shmr_lane_init() on it races with nobody).  @p dead_consumer: the dead
 * process consumed the lane (its cons.head is repaired, not judged).
 *
 * Context:     once the dead side's process is gone.
 * Concurrency: wait-free; reads the live side's indices.
 * Returns:     1 sound, 0 initialise it again.
 */
int shmr_lane_sound_for_repair(const struct rte_ring *r, uint32_t lane_size,
			       int dead_consumer);

/** Initialise one ring in place (SP/SC, @p lane_size entries). */
int shmr_lane_init(struct rte_ring *r, const char *name, uint32_t lane_size);

/**
 * Add an inbound lane's depths, from its indices, to @p waiting and
 * @p in_hand (the dataplane produces, the slot's worker consumes; libshmr
 * finishes a received burst only at its next receive): waiting =
 * prod.tail - cons.head, not yet received; in hand = cons.head -
 * cons.tail, received and not yet finished.  What shmrctl and the
 * dataplane's telemetry show as queued and in_hand.
 *
 * Context:     any reader of the domain (off the fast path).
 * Concurrency: relaxed loads of another process's words (no partner: a
 *              snapshot); each figure is clamped to @p size, so a
 *              scribbled index makes a wrong figure, never a wrong read.
 * Errors:      none.
 */
static inline void shmr_lane_depths(const struct rte_ring *r, uint32_t size,
				    uint64_t *waiting, uint64_t *in_hand)
{
	uint32_t pt = __atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED);
	uint32_t ch = __atomic_load_n(&r->cons.head, __ATOMIC_RELAXED);
	uint32_t ct = __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED);
	uint32_t w = pt - ch, h = ch - ct;

	*waiting += w <= size ? w : 0;
	*in_hand += h <= size ? h : 0;
}

#endif
