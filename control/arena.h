/*
 * The payload arena as the control plane keeps it (control/arena.c):
 * taking back what a dead or closed endpoint held.
 */
#ifndef SHMR_CTL_ARENA_H
#define SHMR_CTL_ARENA_H

#include <stdint.h>

struct rte_ring;

#include "domain.h"

/**
 * Endpoint slot @p slot's holder is gone (its worker died, or its client
 * endpoint was closed or its process died, and its outbound lanes are
 * drained or given up): every buffer it holds unsent (WRITING) is freed,
 * and every buffer it sent (SENT) that no slot in any lane refers to any
 * more.  A buffer a slot still refers to stays, for its receiver (or the
 * receiver's replacement, redelivered) to free.
 *
 * Context:     the control plane's loop; before @p slot has a new holder
 *              (a restarted worker, a reused slot).
 * Concurrency: the dataplane and live peers run meanwhile: the lanes are
 *              read with acquire loads (outbound lanes first: a slot moves
 *              only from there to an inbound lane), every free is one CAS.
 * Returns:     the number of buffers freed (also logged, and counted in
 *              d->arena_reclaimed).
 */
unsigned shmr_ctl_arena_reclaim(struct shmr_ctl_domain *d, uint32_t slot);

/**
 * The lanes of endpoint slot @p slot are about to be initialised again
 * (the slot is reused): the buffers their slots refer to are freed, since
 * nobody will receive those slots any more.
 *
 * Context: the control plane's loop, when nobody produces into or
 *          consumes from @p slot's lanes (before shmr_ctl_slot_reinit()).
 * Returns: the number of buffers freed.
 */
unsigned shmr_ctl_arena_drop_lanes(struct shmr_ctl_domain *d, uint32_t slot);

/** As shmr_ctl_arena_drop_lanes(), for one lane @p r (its slots from the
 *  consumer tail to the producer tail); under the same condition. */
unsigned shmr_ctl_arena_drop_lane(struct shmr_ctl_domain *d,
				  const struct rte_ring *r);

struct shmr_ctl_kv;
struct shmr_ctl_arena_counters;

/**
 * The arena's figures per class (the ARENA lines of counters.def) into
 * @p out, one per class; returns the classes (0 without an arena).  free
 * and in_use are a snapshot of the owner words (relaxed loads),
 * reclaimed what this control plane took back, alloc_failures what
 * allocators (peers) counted.  Writes nothing in the domain.
 * Context: the control plane's loop.
 */
uint32_t shmr_ctl_arena_counters_read(
	const struct shmr_ctl_domain *d,
	struct shmr_ctl_arena_counters out[SHMR_ARENA_MAX_CLASSES]);

/**
 * The arena's figures for STATUS, per class (keys arena:SIZE:count, free,
 * in_use, reclaimed, alloc_failures; nothing without an arena).  in_use
 * is a snapshot of the owner words; alloc_failures is what allocators
 * (peers) counted.
 * Context: the control plane's loop.
 */
void shmr_ctl_arena_status(struct shmr_ctl_domain *d, struct shmr_ctl_kv *kv);

#endif
