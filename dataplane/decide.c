/*
 * Routing decisions: the built-in `type` and `hash` behaviours, the
 * routing logics (round-robin, random, smallest-mailbox, broadcast,
 * consistent-hash, scatter-gather, tail-chopping, balancing), custom
 * behaviours loaded from a shared object (dso.c loads them), and routers
 * of routers.  A built-in router with a call map (`call_types`) routes
 * calls by type through it and sends by its behaviour, so commands and
 * queries can be routed apart (CQRS) without a DSO.
 *
 * The built-ins never compare a string per message: the table resolved
 * every name they can return when it was built, so a decision is a binary
 * search over at most SHMR_MAX_TYPES integers (type), one modulo (hash,
 * round-robin), one multiplication (random), a binary search of the ring
 * (consistent-hash) or a scan of the routees' lane indices (smallest-
 * mailbox), and it yields a target directly.  Broadcast yields the router
 * itself: forward_bcast.c delivers to each routee; so do a scatter-gather
 * or tail-chopping call (forward_collect.c hands it to the lcore's reply
 * collector) and a message to a balancing router (forward_balance.c
 * queues it).  A DSO returns a name, which is looked up by hash in the
 * router's routes, then the registry.
 *
 * What the logics keep between messages (round-robin's counters) is the
 * calling lcore's own struct shmr_dp_pick: no shared write per message.
 * Random draws from rte_rand(), whose state is per lcore under EAL.
 *
 * A consistent-hash router that names a dso hashes the object's
 * message_key (ABI 2) instead of msg->key; the object is loaded for it as
 * for a "dso" router.  One with hash_key "payload" hashes bytes of the
 * payload instead: a bounded read (at most the slot's payload), no copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_random.h>
#include <rte_ring.h>

#include "decide.h"
#include "lcore.h"

static const struct shmr_dp_target discard_target = {
	.verdict = SHMR_DP_DISCARD,
	.router = -1,
};

static const struct shmr_dp_target no_routees_target = {
	.verdict = SHMR_DP_FAIL,
	.router = -1,
	.err = -SHMR_E_NO_ROUTEES,
};

/*
 * Messages queued for routee @p e and not yet taken by its worker: over
 * every lcore's lane, what the lcore published (prod.tail) past what the
 * worker peeked (cons.head); plus what this lcore decided for it in the
 * open run of its burst and has not enqueued yet.
 */
static uint32_t routee_depth(const struct shmr_dp_table *t,
			     const struct shmr_dp_pick *pk,
			     const struct shmr_dp_routee *e)
{
	uint32_t depth = 0;

	for (uint32_t l = 0; l < t->nlcores; l++) {
		/* cons.head first, then prod.tail: the consumer never passes
		 * the producer and both only grow, so the difference is never
		 * negative.  The acquire only keeps the second load after the
		 * first; it has no partner: the depth is a load estimate that
		 * nothing is read on the strength of.  A value past capacity
		 * (indices moved on between the loads, or scribbled) is
		 * clamped. */
		uint32_t ch = __atomic_load_n(&e->in[l]->cons.head,
					      __ATOMIC_ACQUIRE);
		uint32_t pt = __atomic_load_n(&e->in[l]->prod.tail,
					      __ATOMIC_RELAXED);
		uint32_t d = pt - ch;

		depth += d <= t->lane_cap ? d : t->lane_cap;
	}
	if (pk->pend_n && *pk->pend_slot == e->tgt.slot)
		depth += *pk->pend_n;
	if (pk->stage_of && pk->stage_of[e->tgt.slot])
		depth += pk->stages[pk->stage_of[e->tgt.slot] - 1].n;
	return depth;
}

/* Smallest-mailbox over router @p r's routees (logic.h for the order). */
static int smallest_mailbox(const struct shmr_dp_table *t,
			    const struct shmr_dp_pick *pk,
			    const struct shmr_dp_router *r)
{
	struct shmr_logic_load load[SHMR_MAX_ROUTES];

	for (uint32_t i = 0; i < r->nroutees; i++) {
		const struct shmr_dp_routee *e = &r->routees[i];

		load[i].busy = 0;
		if (!e->peer) { /* a router: its inbox is not one ring */
			load[i].depth = SHMR_LOGIC_DEPTH_UNKNOWN;
			continue;
		}
		load[i].depth = routee_depth(t, pk, e);
		if (load[i].depth != 0)
			continue; /* busy only tells empty inboxes apart */
		/* No partner: the worker's hint (layout.h). */
		load[i].busy = atomic_load_explicit(&e->peer->busy,
						    memory_order_relaxed) != 0;
		/* Idle and empty wins at once, as the pick itself would:
		 * no routee after it needs reading. */
		if (!load[i].busy)
			return (int)i;
	}
	return shmr_logic_smallest_mailbox_pick(load, r->nroutees);
}

/*
 * The ring hash of @p m's key for consistent-hash router @p r: bytes of
 * the payload, or the key field (the dso's message_key when it has one).
 * A payload shorter than the key's bytes gives those it has (none: the
 * empty key).  len is read once and clamped to the slot's capacity, so
 * a sender rewriting it meanwhile cannot move the read out of its slot.
 */
static uint32_t chash_key(const struct shmr_dp_router *r,
			  const struct shmr_msg *m)
{
	uint32_t len, off, n;

	if (r->key_from != SHMR_HASH_KEY_PAYLOAD)
		return shmr_logic_chash_key_hash_ring(
			r->ring, shmr_logic_msg_key(&r->key, m));
	/* No partner: one read of a field the sender may rewrite. */
	len = __atomic_load_n(&m->len, __ATOMIC_RELAXED);
	if (len > r->key_cap)
		len = r->key_cap;
	off = r->key_off < len ? r->key_off : len;
	n = len - off;
	if (r->key_len && r->key_len < n)
		n = r->key_len;
	return shmr_logic_chash_bytes_hash(r->ring, m->data + off, n);
}

/* The routee index a routing logic picks, or -SHMR_E_NO_ROUTEES. */
static int logic_pick(const struct shmr_dp_table *t, struct shmr_dp_pick *pk,
		      unsigned ri, const struct shmr_msg *m)
{
	const struct shmr_dp_router *r = &t->routers[ri];

	switch (r->behaviour) {
	case SHMR_BEH_ROUND_ROBIN:
		/* ri < t->nrouters <= t->max_routers: the env's, as rr[]'s
		 * (shmr_dp_pick_init()). */
		return shmr_logic_rr_pick(&pk->rr[ri], r->nroutees);
	case SHMR_BEH_RANDOM:
		if (r->nroutees == 0)
			return -SHMR_E_NO_ROUTEES;
		return shmr_logic_random_pick(rte_rand(), r->nroutees);
	case SHMR_BEH_SMALLEST_MAILBOX:
		return smallest_mailbox(t, pk, r);
	case SHMR_BEH_CONSISTENT_HASH:
		if (!r->ring)
			return -SHMR_E_NO_ROUTEES;
		/* The index answers as shmr_logic_chash_lookup() would. */
		return shmr_logic_chash_lookup_indexed(r->ring, r->ring_ix,
						       chash_key(r, m));
	default:
		return -SHMR_E_NO_ROUTEES;
	}
}

/* The one decision of router @p ri; @p name gets the name it chose. */
static const struct shmr_dp_target *
decide_one(const struct shmr_dp_table *t, struct shmr_dp_pick *pk,
	   unsigned ri, const struct shmr_msg *m, const char **name)
{
	const struct shmr_dp_router *r = &t->routers[ri];
	const struct shmr_dp_target *tgt;
	const char *(*fn)(void *, const struct shmr_msg *);
	const char *s;
	int idx;

	/* A router with a call map routes calls (queries) by type and sends
	 * (commands) by its behaviour: the CQRS split of route_call and
	 * route_message. */
	if ((r->ncall_types > 0 && m->kind == SHMR_KIND_CALL &&
	     r->behaviour != SHMR_BEH_DSO) ||
	    r->behaviour == SHMR_BEH_TYPE || r->behaviour == SHMR_BEH_HASH) {
		/* An unmapped type, or a hash router without names, is
		 * discarded. */
		tgt = shmr_dp_decide_stateless(r, m);
		if (!tgt)
			return &discard_target;
		*name = tgt->name;
		return tgt;
	}
	if (shmr_dp_picks_one(r->behaviour)) {
		idx = logic_pick(t, pk, ri, m);
		if (idx < 0)
			return &no_routees_target;
		tgt = &r->routees[idx].tgt;
		*name = tgt->name;
		return tgt;
	}
	switch (r->behaviour) {
	case SHMR_BEH_BROADCAST:
		return r->nbc ? &r->bcast_tgt : &no_routees_target;
	case SHMR_BEH_SCATTER_GATHER:
		/* A call is collected; a send goes to every routee. */
		if (r->nbc == 0)
			return &no_routees_target;
		return m->kind == SHMR_KIND_CALL ? &r->collect_tgt
						 : &r->bcast_tgt;
	case SHMR_BEH_TAIL_CHOPPING:
		/* A call is collected; a send goes to one routee picked at
		 * random (the first try of a call, and no more). */
		if (r->nbc == 0)
			return &no_routees_target;
		if (m->kind == SHMR_KIND_CALL)
			return &r->collect_tgt;
		tgt = &r->bc[shmr_logic_random_pick(rte_rand(), r->nbc)];
		*name = tgt->name;
		return tgt;
	case SHMR_BEH_BALANCING:
		return r->nbc ? &r->balance_tgt : &no_routees_target;
	case SHMR_BEH_DSO:
		if (!r->ops)
			return &discard_target;
		fn = m->kind == SHMR_KIND_CALL ? r->ops->route_call
					       : r->ops->route_message;
		if (!fn)
			return &discard_target;
		s = fn(r->state, m);
		if (!s || s[0] == '\0')
			return &discard_target;
		*name = s;
		return shmr_dp_resolve_rcu(t, ri, s);
	default:
		return &discard_target;
	}
}

const struct shmr_dp_target *
shmr_dp_behaviour_decide_rcu(const struct shmr_dp_table *t,
			     struct shmr_dp_pick *pk, unsigned router,
			     const struct shmr_msg *m)
{
	const char *name = NULL;

	return decide_one(t, pk, router, m, &name);
}

void shmr_dp_decide_rcu(const struct shmr_dp_table *t, struct shmr_dp_pick *pk,
			unsigned router, const struct shmr_msg *m,
			struct shmr_dp_decision *d)
{
	unsigned hops = m->hops;

	d->nrouters = 0;
	d->err = 0;
	d->name = NULL;
	d->ask_slot = UINT32_MAX;
	d->flags = 0;
	for (;;) {
		const struct shmr_dp_target *tgt;
		const char *name = NULL;

		if (hops >= SHMR_DP_MAX_HOPS || router >= t->nrouters) {
			/* A loop of routers, or a chain too long: the last
			 * router that decided owns the failure. */
			d->verdict = SHMR_DP_FAIL;
			d->err = -SHMR_E_NO_ROUTE;
			if (d->nrouters == 0)
				d->routers[d->nrouters++] = router;
			return;
		}
		hops++;
		d->routers[d->nrouters++] = router;
		d->flags = t->routers[router].flags;
		if (d->flags & SHMR_RF_STOPPED) {
			d->verdict = SHMR_DP_FAIL;
			d->err = -SHMR_E_NOT_ALLOWED;
			return;
		}
		tgt = decide_one(t, pk, router, m, &name);
		d->name = name;
		if (tgt->ask)
			d->ask_slot = tgt->slot;
		switch (tgt->verdict) {
		case SHMR_DP_DISCARD:
			d->verdict = SHMR_DP_DISCARD;
			d->name = NULL;
			return;
		case SHMR_DP_FAIL:
			d->verdict = SHMR_DP_FAIL;
			d->err = tgt->err;
			return;
		case SHMR_DP_BROADCAST:
		case SHMR_DP_COLLECT:
		case SHMR_DP_BALANCE:
			d->verdict = tgt->verdict;
			d->bcast = (uint32_t)tgt->router;
			return;
		default:
			break;
		}
		if (tgt->router >= 0) {
			router = (unsigned)tgt->router;
			continue;
		}
		d->verdict = SHMR_DP_DELIVER;
		d->slot = tgt->slot;
		d->gen = tgt->gen;
		return;
	}
}

int shmr_dp_pick_init(struct shmr_dp_pick *pk, uint32_t max_routers)
{
	memset(pk, 0, sizeof(*pk));
	pk->rr = calloc(max_routers ? max_routers : 1, sizeof(*pk->rr));
	return pk->rr ? 0 : -ENOMEM;
}

void shmr_dp_pick_fini(struct shmr_dp_pick *pk)
{
	free(pk->rr);
	memset(pk, 0, sizeof(*pk));
}
