/*
 * The routing decision: the stateless fast path (inline, shared with the
 * forwarding loop), the behaviour call (built-ins, routing logics, a DSO's
 * callback) and routers of routers (decide.c).
 *
 * Internal, not for direct inclusion outside dataplane/ (the dataplane's
 * unit tests and shmr-perf's decide mode excepted).
 */
#ifndef SHMR_DP_DECIDE_H
#define SHMR_DP_DECIDE_H

#include <stdint.h>

#include <shmr/layout.h>

#include "table.h"

/*
 * What one routing lcore keeps for the routing logics between messages.
 * Private to that lcore: no shared write per message.
 */
struct shmr_dp_pick {
	/* round-robin: one counter per router, by the router's index (the
	 * configuration's order, the same in every table), so a table swap
	 * keeps the sequence going; never by endpoint slot, so the lcore's
	 * state does not grow with max_endpoints; [max_routers] of the
	 * domain (shmr_dp_pick_init()) */
	uint64_t *rr;
	/* smallest-mailbox: *pend_n slots this lcore has decided for
	 * endpoint *pend_slot and not enqueued yet (the open run of the burst
	 * being forwarded), counted as queued there.  Set once per burst to
	 * the run's own fields, so the forwarding loop stores nothing per
	 * slot; NULL outside a burst. */
	const uint32_t *pend_slot;
	const unsigned *pend_n;
	/* and the n of stages[stage_of[slot] - 1] more staged for it this
	 * round and not enqueued yet (forward.c's fan-out staging; 0 in
	 * stage_of: no stage); stage_of NULL: none */
	const uint16_t *stage_of;
	const struct shmr_dp_stage *stages;
};

/**
 * Room in @p pk (zeroed first) for the routing logics of a domain of
 * @p max_routers routers (the dataplane's copy of the header's).
 * Ownership: shmr_dp_pick_fini() frees it.  Errors: -ENOMEM.
 */
int shmr_dp_pick_init(struct shmr_dp_pick *pk, uint32_t max_routers);
/** Free what shmr_dp_pick_init() gave @p pk (zeroed after). */
void shmr_dp_pick_fini(struct shmr_dp_pick *pk);

/** What a routing decision (with its router-of-routers hops) came to. */
struct shmr_dp_decision {
	uint32_t verdict; /* enum shmr_dp_verdict */
	int32_t err;      /* FAIL: -SHMR_E_* */
	uint32_t slot, gen; /* DELIVER: the endpoint it goes to */
	uint32_t bcast;     /* BROADCAST, COLLECT, BALANCE: index of the
			     * router whose routees all get it, that
			     * collects its reply, that queues it */
	uint32_t ask_slot;  /* a route inbox with no worker that the message
			     * was routed to (lazy restart), or UINT32_MAX */
	uint32_t flags;     /* SHMR_RF_* of the last router that decided */
	uint32_t nrouters;  /* routers that decided, first to last */
	uint32_t routers[SHMR_DP_MAX_HOPS];
	const char *name; /* the last name chosen (NULL on discard) */
};

/*
 * The type map's target for @p type (a binary search of the sorted map),
 * or NULL when the type is not mapped.
 */
static inline const struct shmr_dp_target *
shmr_dp_type_find(const struct shmr_dp_type_ent *map, uint32_t n,
		  uint32_t type)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (map[mid].type == type)
			return &map[mid].target;
		if (map[mid].type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The routing logics whose decision picks one routee of the router
 * (round-robin, random, smallest-mailbox, consistent-hash): decide_one()
 * picks by them, and forward.c's plain case takes their slots.
 */
static inline int shmr_dp_picks_one(uint32_t behaviour)
{
	return behaviour == SHMR_BEH_ROUND_ROBIN ||
	       behaviour == SHMR_BEH_RANDOM ||
	       behaviour == SHMR_BEH_SMALLEST_MAILBOX ||
	       behaviour == SHMR_BEH_CONSISTENT_HASH;
}

/*
 * The decisions that need nothing but the message and router @p r's
 * table: a call by its type when the router has a call map, else the
 * hash and type behaviours.  Inline, so that the forwarding loop's fast
 * path (forward.c, classify()) and decide_one() decide the same way.
 * Returns NULL when the router decides otherwise (a routing logic, a
 * DSO) or when the type is not mapped (decide_one() discards it).
 */
static inline const struct shmr_dp_target *
shmr_dp_decide_stateless(const struct shmr_dp_router *r,
			 const struct shmr_msg *m)
{
	if (r->ncall_types > 0 && m->kind == SHMR_KIND_CALL &&
	    r->behaviour != SHMR_BEH_DSO)
		return shmr_dp_type_find(r->call_types, r->ncall_types,
					 m->type);
	/* A 64-bit division is the burst's costliest instruction (its
	 * latency stalls the slot): a power of two of routes (one, 16)
	 * takes the key's low bits, the same index. */
	if (r->behaviour == SHMR_BEH_HASH) {
		if ((r->nhash & (r->nhash - 1)) == 0)
			return r->nhash ? &r->hash_tgt[m->key & (r->nhash - 1)]
					: NULL;
		return &r->hash_tgt[m->key % r->nhash];
	}
	if (r->behaviour == SHMR_BEH_TYPE)
		return shmr_dp_type_find(r->types, r->ntypes, m->type);
	return NULL;
}

/**
 * Run router @p router's decision for @p m (route_message for a send,
 * route_call for a call), following routers of routers in the same pass.
 * A message may pass at most SHMR_DP_MAX_HOPS routers in all (m->hops
 * counts those it passed before); one more fails with -SHMR_E_NO_ROUTE.
 * A broadcast router ends the pass with SHMR_DP_BROADCAST: the caller
 * delivers to each of its routees.
 *
 * Context:     inside the read-side section that holds @p t.  Wait-free
 *              for the built-in behaviours; a DSO behaviour runs its
 *              callback.
 * Concurrency: @p pk is the calling lcore's own (round-robin counters);
 *              smallest-mailbox reads routees' lane indices and busy
 *              flags, relaxed.  random draws from rte_rand(), per lcore.
 */
void shmr_dp_decide_rcu(const struct shmr_dp_table *t, struct shmr_dp_pick *pk,
			unsigned router, const struct shmr_msg *m,
			struct shmr_dp_decision *d);

/**
 * One decision of router @p router alone (no router-of-routers hop).
 * Context: as shmr_dp_decide_rcu().
 * Returns: its target (DELIVER may name another router, BROADCAST names
 *          the router itself); never NULL.
 */
const struct shmr_dp_target *
shmr_dp_behaviour_decide_rcu(const struct shmr_dp_table *t,
			     struct shmr_dp_pick *pk, unsigned router,
			     const struct shmr_msg *m);

#endif
