/*
 * The fast path: a burst from one lane (forward.c), and one poll loop over
 * an lcore's endpoints (forward_poll.c).
 *
 * Internal, not for direct inclusion outside dataplane/ (the dataplane's
 * unit tests excepted).
 */
#ifndef SHMR_DP_FORWARD_H
#define SHMR_DP_FORWARD_H

#include "lcore.h"
#include "table.h"

struct rte_ring;

/**
 * Forward one burst from @p src, an outbound lane of polled endpoint @p p:
 * peek up to SHMR_DP_BURST slots, validate, route or deliver each into the
 * target's inbound lane of this lcore (From, Ref unchanged; hops counts
 * routers passed), answer failed and discarded calls, and release exactly
 * the slots handled.  A full target lane stops the burst there: the rest
 * stays in @p src for the next round.  A corrupted @p src quarantines @p p.
 *
 * Context:     the routing lcore of @p p, inside its read-side section
 *              holding @p t.
 * Concurrency: single consumer of @p src, single producer of every inbound
 *              lane numbered lc->index; wait-free.  Bells are only noted
 *              (rung by shmr_dp_ring_bells()).
 * Returns:     slots consumed (forwarded, discarded, failed or bad).
 */
unsigned shmr_dp_forward_burst_rcu(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t,
				   struct shmr_dp_poll *p, struct rte_ring *src);

/**
 * One poll loop (a round): passes over every endpoint of this lcore's
 * list (high lane, then normal lane), one burst per lane per pass, the
 * slots staged per destination lane (forward.c, "Batches per
 * destination"), while a pass brings work and something is held, for at
 * most SHMR_DP_STAGE_NS, lc->pool_cap slots held at a time; then every stage out and every source lane
 * released, then the logics' own work and the bells owed.  Nothing is
 * left staged or reserved when it returns.
 * Context: as shmr_dp_forward_burst_rcu().  Returns: slots consumed.
 */
unsigned shmr_dp_poll_once_rcu(struct shmr_dp_lcore *lc,
			       struct shmr_dp_table *t);

#endif
