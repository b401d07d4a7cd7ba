/*
 * The reply collector's glue: what the forwarding loop does with calls
 * to, and replies for, scatter-gather and tail-chopping routers (the
 * collector itself is collect.c).
 *
 * Arena buffers (arena.h): scatter-gather's copies share the call's
 * buffer (their references added before they are published, the
 * original's given back at its commit); tail-chopping's kept call holds a
 * reference (counted as held) from before the collector takes it until
 * its entry ends (a reply, the deadline: ops.release, a cancel), and each
 * try gets its own before it is published.  A reply in a buffer goes to
 * the caller as any; one that goes nowhere (late, a duplicate, past the
 * deadline) gives its buffer back.
 *
 * A reply in a buffer polled by another lcore than its collector's
 * crosses over xout held (arena.h): the polling lcore adds one reference,
 * counted as held, before the copy goes into xout (one CAS), and leaves
 * the routee's own reference in the word when its source lane is
 * released (it gives nothing back).  The owner lcore publishes the copy
 * into the caller's lane and then lets the held one go (one CAS): the
 * routee's reference has become the caller's slot's.  A reply that goes
 * nowhere gives back both (the routee's, then the held one).  At every
 * instruction the count is at least the slots in lanes plus the held
 * references:
 *   poller: held added (2 refs: the lane's slot, the held copy) -> copy
 *           in xout -> source lane released (2 refs: the held copy; one
 *           too many, reclaimable);
 *   owner:  published (2: the caller's slot, the held copy) -> held let
 *           go (1: the caller's slot).
 * A dataplane that dies in between takes the xout/xin copy with it; the
 * control plane gives back the held reference (shmr_ctl_arena_dataplane_
 * gone()), and what that leaves with no slot (the poller's lane already
 * released) is freed by the reclaim it runs next.  Never is a buffer
 * freed while a slot in a lane refers to it: the one reference a death
 * can take away is the held one, and it never stands for a lane's slot.
 *
 * Scatter-gather and tail-chopping calls are the one case where the router
 * stands in the reply path (collect.h).  The lcore's collector takes the
 * call in and rewrites its private copy (from = the router, ref = a
 * collector ref); scatter-gather first reserves one slot in every
 * routee's lane (enqueue start), so the call goes to all of them or, when
 * one is full, stays whole in its source lane.  Replies addressed to the
 * router come back through the collector: the caller's lane is reserved
 * before the entry is freed, so a full caller holds the reply back rather
 * than losing the answer.  A reply polled by another lcore than the one
 * whose collector the ref names (its owner byte) crosses over an
 * in-process SPSC ring (shmr_dp_lcores_link()) and is delivered by the
 * owner.  The collector's timers (timeouts, later tries) run once per
 * poll loop while calls are in flight, and bound the lcore's sleep.
 */
#include <errno.h>
#include <string.h>

#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include <shmr/lane_copy.h>

#include "forward_slot.h"

/*
 * Enqueue the first @p bytes of @p m as one slot into @p lane (reserve,
 * copy, publish): for messages kept in buffers shorter than a slot.
 * Returns 1, or 0 when the lane is full.
 */
static inline unsigned put_one(struct rte_ring *lane, uint32_t lane_size,
			       const struct shmr_msg *m, uint32_t ss,
			       size_t bytes)
{
	struct rte_ring_zc_data zcd;

	if (shmr_lane_reserve_bounded(lane, lane_size, ss, 1, &zcd) != 1)
		return 0;
	memcpy(zcd.ptr1, m, bytes);
	rte_ring_enqueue_zc_elem_finish(lane, 1);
	return 1;
}

/* A reply for a collected call that reaches no caller (late, a duplicate,
 * or its caller is gone): counted as discarded by router endpoint @p rs. */
static void reply_dropped(struct shmr_dp_lcore *lc, uint32_t rs)
{
	shmr_dp_count(&lc->stats->discarded, 1);
	shmr_dp_count(&shmr_dp_epc(lc, rs)->router_discarded,
		      1);
}

/* The error the caller of a call that start() refused gets. */
static int32_t start_error(int rc)
{
	if (rc == -ENOSPC)
		return SHMR_DP_COLLECT_FULL_STATUS;
	return rc == -SHMR_E_NO_ROUTEES ? rc : -SHMR_E_NOT_ALLOWED;
}

/*
 * Slot @p i, a call to scatter-gather or tail-chopping router meta.bcast:
 * the collector takes it in (from = the router, ref = a collector ref) and
 * it goes to every routee (scatter-gather) or to one picked at random
 * (tail-chopping; tick() sends the later tries).  Scatter-gather reserves
 * room in every routee's lane before it starts, so the call goes to all of
 * them or, when one is full, is held back whole (backpressure: the ring's
 * original is decided afresh next round).  With mailbox_full = "fail" a
 * full routee is left out, and a call that reaches nobody fails.
 * Returns 1 when handled, 0 when held back.
 */
int shmr_dp_fwd_collect_call_rcu(struct shmr_dp_lcore *lc,
				 const struct shmr_dp_table *t,
				 const struct shmr_dp_poll *p, unsigned i)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	struct shmr_msg *m = (struct shmr_msg *)(lc->burst + (size_t)i * ss);
	struct shmr_dp_meta *meta = &lc->meta[i];
	const struct shmr_dp_router *r = &t->routers[meta->bcast];
	struct shmr_dp_collect_args a = {
		.kind = r->behaviour == SHMR_BEH_TAIL_CHOPPING
				? SHMR_DP_COLLECT_TAIL
				: SHMR_DP_COLLECT_SCATTER,
		.nroutees = r->nbc,
		.within_ns = r->within_ns,
		.interval_ns = r->interval_ns,
	};
	struct rte_ring_zc_data zcd[SHMR_MAX_ROUTES];
	uint8_t got[SHMR_MAX_ROUTES];
	const struct shmr_pid caller = m->from, to = m->to;
	const uint64_t ref = m->ref;
	int32_t err = -SHMR_E_NO_ROUTEES;
	unsigned reserved = 0;
	uint32_t first, j;
	int rc, held = 0;

	/* The routees answer the collecting router (also when the call
	 * came through another router first). */
	m->to = r->pid;
	if (a.kind == SHMR_DP_COLLECT_TAIL) {
		const struct shmr_dp_target *tgt;
		const struct shmr_arena_view *v = &env->arena;

		/* A buffer: the kept call holds a reference until its entry
		 * ends, the first try gets its own (arena.h). */
		if (meta->has_buf && !shmr_arena_hold(v, &meta->buf, p->slot)) {
			err = -SHMR_E_NOT_ALLOWED;
			goto refused;
		}
		a.rnd = rte_rand();
		rc = shmr_dp_collect_start(&lc->coll, m, &a, lc->clock_ns(),
					   &first);
		if (rc < 0) {
			if (meta->has_buf)
				(void)shmr_arena_drop_held(v, &meta->buf);
			err = start_error(rc);
			goto refused;
		}
		tgt = &r->bc[first];
		if (!target_sound(lc, tgt->slot)) {
			err = -SHMR_E_PROCESS_UNKNOWN;
		} else if (meta->has_buf && !shmr_arena_share_held(v, &meta->buf)) {
			err = -SHMR_E_NOT_ALLOWED;
		} else if (shmr_lane_put_bounded(
				   shmr_dp_lane(env, tgt->slot, lc->index),
				   env->lane_size, (const unsigned char *)m,
				   ss, 1) == 1) {
			bcast_put_count(lc, t, r, tgt, 1);
			commit(lc, p, m, meta);
			return 1;
		} else {
			if (meta->has_buf)
				(void)shmr_arena_free_sent(v, &meta->buf,
							   p->slot);
			if (!meta->fail_full)
				held = 1;
			else
				err = -SHMR_E_MAILBOX_FULL;
		}
		(void)shmr_dp_collect_cancel(&lc->coll, m->ref);
		if (meta->has_buf)
			(void)shmr_arena_drop_held(v, &meta->buf);
		if (held)
			return 0;
		goto refused;
	}

	for (j = 0; j < r->nbc && !held; j++) {
		const struct shmr_dp_target *tgt = &r->bc[j];

		got[j] = 0;
		if (!target_sound(lc, tgt->slot)) {
			/* No partner: a flag for display (quarantine()). */
			atomic_store_explicit(
				&shmr_dp_ep(env, tgt->slot)->quarantined, 1,
				memory_order_relaxed);
			err = -SHMR_E_PROCESS_UNKNOWN;
			shmr_dp_fwd_bcast_copy_failed_rcu(lc, t, r, m, tgt,
							  err);
			continue;
		}
		if (shmr_lane_reserve_bounded(
			    shmr_dp_lane(env, tgt->slot, lc->index),
			    env->lane_size, ss, 1, &zcd[j]) == 1) {
			got[j] = 1;
			reserved++;
		} else if (meta->fail_full) {
			err = -SHMR_E_MAILBOX_FULL;
			shmr_dp_fwd_bcast_copy_failed_rcu(lc, t, r, m, tgt,
							  err);
		} else {
			held = 1;
		}
	}
	rc = 0;
	if (!held && reserved) {
		rc = shmr_dp_collect_start(&lc->coll, m, &a, lc->clock_ns(),
					   &first);
		if (rc < 0)
			err = start_error(rc);
	}
	/* A buffer is shared by the copies: their references are added
	 * before any is published (arena.h; the original's goes at its
	 * commit). */
	if (!held && reserved && rc == 0 && meta->has_buf &&
	    !shmr_arena_share(&env->arena, &meta->buf, p->slot, reserved)) {
		(void)shmr_dp_collect_cancel(&lc->coll, m->ref);
		err = -SHMR_E_NOT_ALLOWED;
		rc = -1;
	}
	/* Routees [0, j) were looked at: publish or give back. */
	for (uint32_t x = 0; x < j; x++) {
		struct rte_ring *lane;
		int go;

		if (!got[x])
			continue;
		go = !held && rc == 0;
		lane = shmr_dp_lane(env, r->bc[x].slot, lc->index);
		if (go)
			memcpy(zcd[x].ptr1, m, ss);
		rte_ring_enqueue_zc_elem_finish(lane, go ? 1 : 0);
		if (go)
			bcast_put_count(lc, t, r, &r->bc[x], 1);
	}
	if (held)
		return 0;
	if (reserved && rc == 0) {
		commit(lc, p, m, meta);
		return 1;
	}
refused:
	/* The caller hears why, as the ring's original asked. */
	m->from = caller;
	m->to = to;
	m->ref = ref;
	return shmr_dp_fwd_refuse_now_rcu(lc, t, p, m, meta, err);
}

/* Is @p m a reply in an arena buffer (checked by classify())?  Its
 * reference in @p ref. */
static int reply_buf(const struct shmr_msg *m, struct shmr_buf_ref *ref)
{
	if (!(m->flags & SHMR_F_ARENA) || m->len != sizeof(*ref))
		return 0;
	memcpy(ref, m->data, sizeof(*ref));
	return 1;
}

/* A reply with an arena buffer (SENT by its routee, or SHARED when it
 * came over xin) that goes nowhere gives its buffer back: @p m, or the
 * header and reference kept before on_reply() rewrote @p m.  One that
 * came over xin (@p crossed) also lets the held reference go, after
 * (the essay's order: the count never drops below the held ones). */
static void reply_unref(const struct shmr_dp_lcore *lc,
			const struct shmr_msg *m, int crossed)
{
	struct shmr_buf_ref ref;

	if (!reply_buf(m, &ref))
		return;
	(void)shmr_arena_free_sent(&lc->env->arena, &ref, m->from.slot);
	if (crossed)
		(void)shmr_arena_drop_held(&lc->env->arena, &ref);
}

/*
 * Reply @p m (a private copy, addressed to the collecting router) for a
 * call of this lcore's collector: to its caller, with the caller's ref
 * (first reply before the deadline), or as the caller's SHMR_E_TIMEOUT
 * (at or after it), or dropped (late, a duplicate, or the caller gone).
 * The caller's lane is reserved before the collector frees the entry, so
 * a full one holds the reply back instead of losing the answer.
 * @p crossed: it came over xin, its buffer (if any) held (the essay).
 * Returns 1 when handled, 0 when held back.
 */
static int deliver_collected(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t, struct shmr_msg *m,
			     int crossed)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size, rs = m->to.slot;
	uint64_t saved[(SHMR_HDR_SIZE + sizeof(struct shmr_buf_ref)) / 8];
	const struct shmr_msg *kept = shmr_dp_collect_kept(&lc->coll, m->ref);
	struct rte_ring_zc_data zcd;
	struct shmr_buf_ref kref, xref;
	struct rte_ring *lane;
	struct shmr_pid caller;
	/* A tail-chopping call kept in a buffer: its held reference goes
	 * when the entry ends (on_reply() below, whatever it says). */
	int kheld = kept && (kept->flags & SHMR_F_ARENA) &&
		    kept->len == sizeof(kref);
	int v;

	if (kheld)
		memcpy(&kref, kept->data, sizeof(kref));
	if (shmr_dp_collect_caller(&lc->coll, m->ref, &caller) < 0 ||
	    !answerable(lc, t, caller)) {
		/* Late, a duplicate, or nobody left to answer (the call
		 * ends here). */
		reply_unref(lc, m, crossed);
		(void)shmr_dp_collect_on_reply(&lc->coll, m, lc->clock_ns());
		if (kheld)
			(void)shmr_arena_drop_held(&env->arena, &kref);
		reply_dropped(lc, rs);
		return 1;
	}
	lane = shmr_dp_lane(env, caller.slot, lc->index);
	if (shmr_lane_reserve_bounded(lane, env->lane_size, ss, 1, &zcd) != 1)
		return 0;
	/* Past the deadline on_reply() makes it the caller's timeout (a
	 * header): the routee's buffer then goes back. */
	memcpy(saved, m, SHMR_HDR_SIZE + sizeof(struct shmr_buf_ref));
	v = shmr_dp_collect_on_reply(&lc->coll, m, lc->clock_ns());
	if (kheld)
		(void)shmr_arena_drop_held(&env->arena, &kref);
	if (v != SHMR_DP_COLLECT_DELIVER)
		reply_unref(lc, (const struct shmr_msg *)saved, crossed);
	memcpy(zcd.ptr1, m, shmr_msg_bytes(m, ss));
	rte_ring_enqueue_zc_elem_finish(lane, 1);
	/* Came over xin held: published, the routee's reference is now
	 * the caller's slot's, and the held one goes (after the publish). */
	if (crossed && v == SHMR_DP_COLLECT_DELIVER &&
	    reply_buf((const struct shmr_msg *)saved, &xref))
		(void)shmr_arena_drop_held(&env->arena, &xref);
	shmr_dp_count(&shmr_dp_epc(lc, caller.slot)->ep_delivered, 1);
	note_bell(lc, caller.slot);
	if (v == SHMR_DP_COLLECT_DELIVER) {
		shmr_dp_count(&lc->stats->forwarded, 1);
		return 1;
	}
	/* Past the deadline: the caller got its timeout, the routee's
	 * reply is dropped. */
	shmr_dp_count(&lc->stats->failed, 1);
	shmr_dp_count(&shmr_dp_epc(lc, rs)->router_failed, 1);
	reply_dropped(lc, rs);
	return 1;
}

/*
 * Slot @p i, a reply to a collecting router: to this lcore's collector,
 * or to the lcore whose collector the ref names (over xout).  Returns 1
 * when handled, 0 when held back (the caller's lane or the ring to the
 * other lcore is full).
 */
int shmr_dp_fwd_collect_reply_rcu(struct shmr_dp_lcore *lc,
				  const struct shmr_dp_table *t,
				  const struct shmr_dp_poll *p, unsigned i)
{
	uint32_t ss = lc->env->slot_size;
	struct shmr_msg *m = (struct shmr_msg *)(lc->burst + (size_t)i * ss);
	struct shmr_dp_meta *meta = &lc->meta[i];
	uint32_t owner = shmr_dp_collect_ref_owner(m->ref);

	meta->what = META_QUIET;
	if (owner == lc->index) {
		if (!deliver_collected(lc, t, m, 0))
			return 0;
	} else if (owner < t->nlcores && lc->xout[owner] && meta->has_buf &&
		   !shmr_arena_hold(&lc->env->arena, &meta->buf, p->slot)) {
		/* A word a peer wrote, or a count at its bound: dropped,
		 * the lane's reference back; the caller gets its timeout. */
		(void)shmr_arena_free_sent(&lc->env->arena, &meta->buf,
					   p->slot);
		shmr_dp_event(lc, SHMR_DP_EV_FAILED,
			      "lcore %u: a reply in an arena buffer from %u.%u "
			      "could not be held for lcore %u: dropped",
			      lc->index, m->from.slot, m->from.gen, owner);
		reply_dropped(lc, m->to.slot);
	} else if (owner < t->nlcores && lc->xout[owner]) {
		/* A buffer crosses held (the essay): added above, before
		 * the copy is in xout; the routee's stays in the word. */
		if (shmr_lane_put(lc->xout[owner], (const unsigned char *)m, ss,
				  1) != 1) {
			if (meta->has_buf)
				(void)shmr_arena_drop_held(&lc->env->arena,
							   &meta->buf);
			return 0;
		}
		lc->xbells |= 1u << owner;
	} else {
		reply_unref(lc, m, 0);
		reply_dropped(lc, m->to.slot); /* no such collector */
	}
	commit(lc, p, m, meta);
	return 1;
}

/* Replies other lcores polled for our collector.  Returns slots handled. */
unsigned shmr_dp_fwd_xin_drain_rcu(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t)
{
	uint32_t ss = lc->env->slot_size;
	unsigned total = 0;

	lc->xheld = 0;
	for (uint32_t j = 0; j < lc->env->nlcores; j++) {
		struct rte_ring *r = lc->xin[j];
		unsigned n, k;

		if (!r || shmr_lane_pending_sc(r) == 0)
			continue;
		n = shmr_lane_peek(r, lc->buf, ss, SHMR_DP_BURST);
		for (k = 0; k < n; k++)
			if (!deliver_collected(
				    lc, t,
				    (struct shmr_msg *)(lc->buf +
							(size_t)k * ss),
				    1))
				break;
		rte_ring_dequeue_zc_elem_finish(r, k);
		total += k;
		if (k < n) {
			/* A caller's lane is full: as a blocked lane, look
			 * again after a short sleep, not in a spin. */
			lc->xheld |= 1u << j;
			lc->nblocked++;
		}
	}
	return total;
}

struct tick_ctx {
	struct shmr_dp_lcore *lc;
	const struct shmr_dp_table *t;
};

static uint64_t tick_random(void *ctx)
{
	(void)ctx;
	return rte_rand();
}

/*
 * A later try of tail-chopping: @p call (from = the router) to its
 * routee @p routee of the current table.  A router or routee that is gone
 * counts as tried (0); a full lane is retried on the next tick (-1).
 */
static int tick_send(void *ctx, uint32_t routee, const struct shmr_msg *call)
{
	struct tick_ctx *k = ctx;
	struct shmr_dp_lcore *lc = k->lc;
	const struct shmr_dp_table *t = k->t;
	const struct shmr_dp_router *r;
	const struct shmr_dp_target *tgt;
	struct shmr_buf_ref ref;
	int buf = (call->flags & SHMR_F_ARENA) && call->len == sizeof(ref);
	int ri;

	if (buf)
		memcpy(&ref, call->data, sizeof(ref));
	if (call->from.slot >= t->max_endpoints)
		return 0;
	ri = t->ep[call->from.slot].router;
	if (ri < 0 || t->routers[ri].pid.gen != call->from.gen)
		return 0;
	r = &t->routers[ri];
	if (routee >= r->nbc)
		return 0;
	tgt = &r->bc[routee];
	if (!target_sound(lc, tgt->slot))
		return 0;
	/* A buffer: the try's own reference before it is published. */
	if (buf && !shmr_arena_share_held(&lc->env->arena, &ref))
		return 0; /* a word a peer wrote: counted as tried */
	/* The kept call is a slot's size (collect.c's stride). */
	if (shmr_lane_put_bounded(shmr_dp_lane(lc->env, tgt->slot, lc->index),
				  lc->env->lane_size,
				  (const unsigned char *)call,
				  lc->env->slot_size, 1) != 1) {
		if (buf)
			(void)shmr_arena_free_sent(&lc->env->arena, &ref,
						   call->from.slot);
		return -1;
	}
	bcast_put_count(lc, t, r, tgt, 1);
	return 0;
}

/* A tail-chopping call's entry ended at its deadline: the reference its
 * kept call held goes. */
static void tick_release(void *ctx, const struct shmr_msg *call)
{
	struct tick_ctx *k = ctx;
	struct shmr_buf_ref ref;

	if ((call->flags & SHMR_F_ARENA) && call->len == sizeof(ref)) {
		memcpy(&ref, call->data, sizeof(ref));
		(void)shmr_arena_drop_held(&k->lc->env->arena, &ref);
	}
}

/* A call timed out: its caller gets SHMR_E_TIMEOUT from the router. */
static void tick_expire(void *ctx, const struct shmr_msg *reply)
{
	struct tick_ctx *k = ctx;
	struct shmr_dp_lcore *lc = k->lc;
	uint32_t rs = reply->from.slot; /* shmr_dp_epc() bounds it */

	shmr_dp_count(&lc->stats->failed, 1);
	shmr_dp_count(&shmr_dp_epc(lc, rs)->router_failed, 1);
	if (!answerable(lc, k->t, reply->to))
		return;
	/* The reply is a header only (collect.h). */
	if (!put_one(shmr_dp_lane(lc->env, reply->to.slot, lc->index),
		     lc->env->lane_size, reply, lc->env->slot_size,
		     SHMR_HDR_SIZE)) {
		shmr_dp_event(lc, SHMR_DP_EV_FAILED,
			      "lcore %u: the timeout of a call from %u.%u "
			      "(type %u) found its lane full: dropped",
			      lc->index, reply->to.slot, reply->to.gen,
			      reply->type);
		return;
	}
	shmr_dp_count(&shmr_dp_epc(lc, reply->to.slot)->ep_delivered, 1);
	note_bell(lc, reply->to.slot);
}

/* Run the collector's timers that fell due. */
void shmr_dp_fwd_collect_tick_rcu(struct shmr_dp_lcore *lc,
				  const struct shmr_dp_table *t)
{
	struct tick_ctx k = { lc, t };
	const struct shmr_dp_collect_ops ops = {
		.random = tick_random,
		.send = tick_send,
		.expire = tick_expire,
		.release = tick_release,
		.ctx = &k,
	};
	uint64_t now = lc->clock_ns();

	if (shmr_dp_collect_next_due(&lc->coll) > now)
		return;
	shmr_dp_checked_clear(lc);
	(void)shmr_dp_collect_tick(&lc->coll, now, &ops);
}

