/*
 * How much of a lane its consumer has not finished with, as a third party
 * sees it: the producer waiting for its lanes to drain before it goes
 * (shmr_endpoint_close()), the control plane keeping a gone client's
 * lanes polled until they are empty (control/drain.c).  Not installed;
 * part of the appliance's own headers (see layout.h).
 */
#ifndef SHMR_LANE_DRAIN_H
#define SHMR_LANE_DRAIN_H

#include <stdint.h>

#include <rte_ring.h>

#include <shmr/domain.h>

/**
 * Slots of @p r that its consumer has not released yet: prod.tail -
 * cons.tail, or -1 when the lane cannot be judged (its geometry is not
 * that of @p lane_size, or the producer is more than a capacity ahead:
 * indices a peer wrote).  Nothing read is trusted beyond that check.
 *
 * Context:     anyone mapping the domain; reads only the two tails.
 * Concurrency: wait-free.  Acquire on cons.tail pairs with the
 *              consumer's release store of it (dequeue finish): once 0 is
 *              seen, the consumer is done with every slot.  Acquire on
 *              prod.tail pairs with the producer's release store.
 */
static inline int64_t shmr_lane_unconsumed(const struct rte_ring *r,
					   uint32_t lane_size)
{
	uint32_t ct, pt;

	if (!shmr_lane_geometry_valid(r, lane_size))
		return -1;
	ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	if (pt - ct > lane_size - 1)
		return -1;
	return (int64_t)(pt - ct);
}

#endif
