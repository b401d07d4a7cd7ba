/*
 * The fast path: one routing lcore takes bursts from its endpoints'
 * outbound lanes and forwards every slot into the target's inbound lane
 * numbered after the lcore.
 *
 * Why nothing is lost or duplicated by the dataplane itself:
 *   - A burst is peeked (dequeue start), never dequeued outright.  Slots
 *     are handled in ring order, and consecutive slots for one target are
 *     enqueued together.  When a target lane is full the burst stops at the
 *     first slot that did not fit; exactly the slots before it are released
 *     (dequeue finish).  The rest stay in the source lane, unchanged, for
 *     the next round.
 *   - A slot is rewritten (hops, or turned into an error reply) only in
 *     the lcore's private copy of the burst, so a slot left in the ring is
 *     the sender's original and is decided afresh next time.
 *   - Counters and log lines for a slot are committed only once the slot
 *     is handled (enqueued, or dropped after everything before it was
 *     enqueued), so a slot held back by backpressure is never counted
 *     twice.
 *
 * Three cases leave the one-slot-one-target path, each in its own file
 * with the essay that explains it: broadcast (forward_bcast.c), the
 * reply collector of scatter-gather and tail-chopping (forward_collect.c)
 * and the balancing queues (forward_balance.c).  What they share with
 * this file is in forward_slot.h, and the admin and failure paths they
 * all call in forward_slot.c.
 *
 * The admin path: a high/max-priority send or call to a router, one of
 * the router's own messages (a type from SHMR_TYPE_RESERVED up) at any
 * priority unless it is a send in a Broadcast envelope (but Kill), Kill
 * sent straight to an endpoint (the control plane kills the route's
 * worker: one type compare on that path), and a send that failed
 * routing (flagged SHMR_F_ROUTE_FAILED, status = the reason, the chosen
 * name after the payload when it fits), go unchanged otherwise
 * into the inbound lane of the control plane's admin endpoint
 * (hdr.admin_pid).  That lane never holds a burst back: when it is full
 * the slot is dropped and counted in admin_dropped.  Failed calls still
 * get their error reply and nothing else.  Without an admin endpoint,
 * high priority to a router fails with -SHMR_E_NOT_ALLOWED and failed
 * sends are only counted.
 *
 * Why a buggy peer cannot take the dataplane down:
 *   - Before each burst the source lane's geometry is compared with the
 *     dataplane's private copy and its head/tail words are checked; before
 *     each enqueue the target lane is checked the same way (lane checks:
 *     shmr_lane_valid_sc() and _sp() in shm/domain.h, beside lane repair).  Index
 *     arithmetic in the ring code only uses size and mask, so a lane that
 *     passes cannot make the lcore read or write outside it.  A corrupted
 *     outbound lane quarantines its endpoint; a corrupted inbound lane
 *     fails what was meant for it.
 *   - Every field of every slot is validated before use (kind, length,
 *     priority, the sender's PID against the lane's owner, the target
 *     slot); a bad slot is counted and dropped.
 *
 * Hot path rules: no syscall, lock or allocation while there is work.  The
 * only syscalls are the futex wakes of bells whose owner sleeps, and a
 * rate-limited log line when something is dropped.  (The clock is read
 * from the vDSO; a balancing queue is allocated once, at its router's
 * first message on the lcore.)
 */
#include <string.h>
#include <time.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>
#include <rte_ring_peek_zc.h>

#include <shmr/lane_copy.h>

#include "forward.h"
#include "forward_slot.h"

static void quarantine(struct shmr_dp_lcore *lc, struct shmr_dp_poll *p,
		       const char *what)
{
	p->quarantined = 1;
	/* No partner: a flag for the control plane and shmrctl to show. */
	atomic_store_explicit(&p->ep->quarantined, 1, memory_order_relaxed);
	shmr_dp_event(lc, SHMR_DP_EV_QUARANTINE,
		      "lcore %u: endpoint %u quarantined: %s lane corrupted",
		      lc->index, p->slot, what);
}

/* ---- one slot ------------------------------------------------------ */

/* A slot flagged SHMR_F_ARENA: its reference must name a buffer its
 * sender (the lane's owner, checked before) holds as SENT (arena.h).
 * Kept in @p meta, to give the buffer back if the slot is refused. */
static int arena_ref(const struct shmr_dp_env *env, const struct shmr_msg *m,
		     struct shmr_dp_meta *meta)
{
	if (m->len != sizeof(meta->buf))
		return 0;
	memcpy(&meta->buf, m->data, sizeof(meta->buf));
	if (!shmr_arena_ref_check(&env->arena, &meta->buf, m->from.slot))
		return 0;
	meta->has_buf = 1;
	return 1;
}

/* A logic that would copy an arena slot (broadcast, the collectors, the
 * admin path) refuses it: the copies would share one buffer, which only
 * one receiver frees.  So does balancing: its queue is the lcore's private
 * memory, where the control plane cannot see that a slot still refers to
 * a buffer whose sender died (control/arena.c). */
static uint32_t arena_refuse(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t, struct shmr_msg *m,
			     struct shmr_dp_meta *meta)
{
	if (m->kind == SHMR_KIND_SEND)
		return shmr_dp_fwd_route_failed_rcu(lc, t, m, meta,
						    -SHMR_E_NOT_ALLOWED);
	return shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL,
				  -SHMR_E_NOT_ALLOWED);
}

/* @p m goes, unchanged, to the control plane's admin endpoint; without
 * one it fails with SHMR_E_NOT_ALLOWED. */
static uint32_t to_admin(struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t, struct shmr_msg *m,
			 struct shmr_dp_meta *meta)
{
	uint32_t a = shmr_dp_fwd_admin_slot_rcu(lc, t);

	if (a == NO_TARGET || meta->has_buf)
		return shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL,
					  -SHMR_E_NOT_ALLOWED);
	meta->what = META_ADMIN;
	meta->target = a;
	return NO_TARGET;
}

/*
 * Decide one slot.  Returns the endpoint slot whose inbound lane it goes
 * to (rewritten in place when needed), or NO_TARGET when it is only
 * counted.  Has no effect outside @p m and @p meta but the quarantine mark
 * of a target whose lane is corrupted and a lazy-restart ask.
 */
static uint32_t classify(struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t,
			 const struct shmr_dp_poll *p, struct shmr_msg *m,
			 struct shmr_dp_meta *meta)
{
	const struct shmr_dp_env *env = lc->env;
	const struct shmr_dp_ep *dst;
	const struct shmr_dp_target *tgt;
	struct shmr_dp_decision d;
	uint32_t target;
	unsigned add_hops = 0;
	int envelope;

	meta->nrouters = 0;
	meta->name = NULL;
	meta->err = 0;
	meta->why = 0;
	meta->quiet = 0;
	meta->has_buf = 0;
	if (m->kind < SHMR_KIND_SEND || m->kind > SHMR_KIND_REPLY)
		meta->why = BAD_KIND;
	else if (m->len > env->slot_size - SHMR_HDR_SIZE)
		meta->why = BAD_LEN;
	else if (m->priority > SHMR_PRIO_MAX)
		meta->why = BAD_PRIO;
	else if (m->from.slot != p->slot || m->from.gen != p->gen)
		meta->why = BAD_FROM;
	else if (m->to.slot >= t->max_endpoints)
		meta->why = BAD_TO;
	else if (__builtin_expect(m->flags & SHMR_F_ARENA, 0) &&
		 !arena_ref(env, m, meta))
		meta->why = BAD_BUF;
	if (meta->why) {
		meta->what = META_BAD;
		return NO_TARGET;
	}
	meta->fail_full = 0;
	/* Only the dataplane sets these, on what it puts into the admin
	 * endpoint: a client cannot forge a dead letter or an ask. */
	m->flags = (uint8_t)(m->flags & ~SHMR_F_INTERNAL_MASK);

	dst = &t->ep[m->to.slot];
	if (dst->router >= 0) {
		const struct shmr_dp_router *r = &t->routers[dst->router];

		meta->nrouters = 1;
		meta->routers[0] = m->to.slot;
		if (m->to.gen != r->pid.gen)
			return shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL,
						  -SHMR_E_PROCESS_UNKNOWN);
		/* A reply comes to a router only from a routee answering a
		 * call that router collects (scatter-gather, tail-chopping):
		 * its collector decides.  Other replies never go to a
		 * router. */
		if (m->kind == SHMR_KIND_REPLY) {
			if ((r->behaviour != SHMR_BEH_SCATTER_GATHER &&
			     r->behaviour != SHMR_BEH_TAIL_CHOPPING) ||
			    meta->has_buf)
				return shmr_dp_fwd_refuse(lc, m, meta,
							  SHMR_DP_FAIL,
							  -SHMR_E_NOT_ALLOWED);
			meta->what = META_COLLECTED;
			meta->bcast = (uint8_t)dst->router;
			return ALONE_TARGET;
		}
		/* The Broadcast envelope is a send's; a call's flag means
		 * nothing and does not travel on. */
		envelope = (m->flags & SHMR_F_BROADCAST) != 0;
		if (m->kind == SHMR_KIND_CALL && envelope) {
			m->flags = (uint8_t)(m->flags & ~SHMR_F_BROADCAST);
			envelope = 0;
		}
		/* The admin path: high and max priority, and the router's
		 * own messages (reserved types) at any priority but in a
		 * Broadcast envelope, where only Kill goes there (the
		 * control plane kills every routee's process).  The control
		 * plane serves them, unchanged, from its admin endpoint. */
		if (m->priority != SHMR_PRIO_NORMAL ||
		    (m->type >= SHMR_TYPE_RESERVED &&
		     (!envelope || m->type == SHMR_TYPE_KILL))) {
			return to_admin(lc, t, m, meta);
		}
		if (envelope) {
			/* Every routee gets the message, whatever the
			 * router's logic, flag and all (one hop). */
			if (meta->has_buf)
				return arena_refuse(lc, t, m, meta);
			if (r->flags & SHMR_RF_STOPPED)
				return shmr_dp_fwd_route_failed_rcu(
					lc, t, m, meta, -SHMR_E_NOT_ALLOWED);
			if (r->nbc == 0)
				return shmr_dp_fwd_route_failed_rcu(
					lc, t, m, meta, -SHMR_E_NO_ROUTEES);
			meta->fail_full = (r->flags & SHMR_RF_FAIL_WHEN_FULL) != 0;
			m->hops = (uint8_t)(m->hops + 1);
			meta->what = META_BCAST;
			meta->bcast = (uint8_t)dst->router;
			return BCAST_TARGET;
		}
		/* The fast path: one stateless decision (hash, type, a call
		 * by type) straight to a worker.  Everything else, and every
		 * refusal, takes the general one below. */
		tgt = shmr_dp_decide_stateless(r, m);
		if (tgt && tgt->verdict == SHMR_DP_DELIVER && tgt->router < 0 &&
		    !tgt->ask && !(r->flags & SHMR_RF_STOPPED) &&
		    m->hops < SHMR_DP_MAX_HOPS) {
			meta->fail_full =
				(r->flags & SHMR_RF_FAIL_WHEN_FULL) != 0;
			meta->name = tgt->name;
			target = tgt->slot;
			add_hops = 1;
			goto deliver;
		}
		shmr_dp_decide_rcu(t, &lc->pick, (unsigned)dst->router, m, &d);
		if (d.ask_slot != UINT32_MAX)
			shmr_dp_fwd_ask_worker_rcu(lc, t, d.ask_slot);
		meta->fail_full = (d.flags & SHMR_RF_FAIL_WHEN_FULL) != 0;
		meta->nrouters = (uint8_t)d.nrouters;
		for (uint32_t i = 0; i < d.nrouters; i++)
			meta->routers[i] = t->routers[d.routers[i]].pid.slot;
		meta->name = d.name;
		if (meta->has_buf && (d.verdict == SHMR_DP_BROADCAST ||
				      d.verdict == SHMR_DP_COLLECT ||
				      d.verdict == SHMR_DP_BALANCE))
			return arena_refuse(lc, t, m, meta);
		if (d.verdict == SHMR_DP_BROADCAST) {
			/* Each copy carries the routers it passed. */
			m->hops = (uint8_t)(m->hops + d.nrouters);
			meta->what = META_BCAST;
			meta->bcast = (uint8_t)d.bcast;
			return BCAST_TARGET;
		}
		if (d.verdict == SHMR_DP_COLLECT ||
		    d.verdict == SHMR_DP_BALANCE) {
			m->hops = (uint8_t)(m->hops + d.nrouters);
			meta->what = d.verdict == SHMR_DP_COLLECT ? META_COLLECT
								  : META_BALANCE;
			meta->bcast = (uint8_t)d.bcast;
			return ALONE_TARGET;
		}
		if (d.verdict == SHMR_DP_FAIL && m->kind == SHMR_KIND_SEND)
			return shmr_dp_fwd_route_failed_rcu(lc, t, m, meta,
							    d.err);
		if (d.verdict != SHMR_DP_DELIVER)
			return shmr_dp_fwd_refuse(lc, m, meta,
						  (uint8_t)d.verdict, d.err);
		target = d.slot;
		add_hops = d.nrouters;
	} else {
		if (dst->state != SHMR_EP_ACTIVE || dst->gen != m->to.gen ||
		    m->to.gen == 0)
			return shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL,
						  -SHMR_E_PROCESS_UNKNOWN);
		/* Kill addressed to an endpoint is the control plane's: it
		 * kills the route's worker, which never sees it (Pekko's
		 * Kill is handled by the actor's cell, not its receive). */
		if (__builtin_expect(m->type == SHMR_TYPE_KILL, 0) &&
		    m->kind != SHMR_KIND_REPLY) {
			return to_admin(lc, t, m, meta);
		}
		target = m->to.slot;
	}

deliver:
	if (!target_sound(lc, target)) {
		/* No partner: a flag for display (see quarantine()).  The
		 * lcore that raises it logs the quarantine, once; what is
		 * refused after that is only counted, so a peer that keeps
		 * sending to it cannot fill the log.  An RMW, on this
		 * error path only. */
		if (!atomic_exchange_explicit(
			    &shmr_dp_ep(env, target)->quarantined, 1,
			    memory_order_relaxed))
			shmr_dp_event(lc, SHMR_DP_EV_QUARANTINE,
				      "lcore %u: endpoint %u quarantined: "
				      "inbound lane %u corrupted (messages "
				      "to it refused and counted from now "
				      "on)",
				      lc->index, target, lc->index);
		meta->quiet = 1;
		if (meta->nrouters && m->kind == SHMR_KIND_SEND)
			return shmr_dp_fwd_route_failed_rcu(
				lc, t, m, meta, -SHMR_E_PROCESS_UNKNOWN);
		return shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL,
					  -SHMR_E_PROCESS_UNKNOWN);
	}
	m->hops = (uint8_t)(m->hops + add_hops);
	meta->what = META_FORWARD;
	meta->target = target;
	return target;
}

/* ---- a burst -------------------------------------------------------- */

/*
 * Slot @p i of the burst did not fit into its route's full inbox, and its
 * router fails such messages (SHMR_RF_FAIL_WHEN_FULL): a call gets
 * SHMR_E_MAILBOX_FULL as its reply, a send becomes a MessageRouteFailed.
 * Returns 1 when handled, 0 when the caller's own lane is full too (the
 * burst stops there, and the slot is decided afresh next round).
 */
static int fail_full(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		     const struct shmr_dp_poll *p, unsigned i)
{
	return shmr_dp_fwd_refuse_now_rcu(lc, t, p, burst_slot(lc, i),
					  &lc->meta[i], -SHMR_E_MAILBOX_FULL);
}

/* Enqueue a run; returns 1 when all of it went in (or what did not was
 * failed as its router asks). */
static int flush(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		 const struct shmr_dp_poll *p, const struct rte_ring *src,
		 struct run *run, unsigned *handled)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	unsigned k;

	if (run->len == 0)
		return 1;
	if (run->target == BCAST_TARGET)
		return shmr_dp_fwd_bcast_flush_rcu(lc, t, p, src, run, handled);
	k = shmr_lane_put_bounded(shmr_dp_lane(env, run->target, lc->index),
				  env->lane_size,
				  lc->buf + (size_t)run->start * ss, ss,
				  run->len);
	unsigned fwd = 0;
	uint32_t rslot = 0;
	uint64_t rn = 0;

	for (unsigned j = 0; j < k; j++) {
		const struct shmr_dp_meta *meta = &lc->meta[run->start + j];

		/* The common case, counted here: forwarded by at most one
		 * router, whose counter is written once per run of it. */
		if (__builtin_expect(meta->what == META_FORWARD &&
					     meta->nrouters <= 1,
				     1)) {
			fwd++;
			if (meta->nrouters == 0)
				continue;
			if (rn && meta->routers[0] != rslot) {
				shmr_dp_count(
					&lc->stats->router_forwarded[rslot],
					rn);
				rn = 0;
			}
			rslot = meta->routers[0];
			rn++;
			continue;
		}
		fwd += meta->what == META_FORWARD;
		commit(lc, p,
		       (const struct shmr_msg *)(lc->buf +
						 (size_t)(run->start + j) * ss),
		       meta);
	}
	if (rn)
		shmr_dp_count(&lc->stats->router_forwarded[rslot], rn);
	if (k) {
		if (fwd)
			shmr_dp_count(&lc->stats->forwarded, fwd);
		shmr_dp_count(&lc->stats->ep_delivered[run->target], k);
		note_bell(lc, run->target);
	}
	/* The inbox was full: once per run that found it so (the rest of
	 * the run waits, or is failed as its router asks). */
	if (k < run->len)
		shmr_dp_count(&lc->stats->ep_full[run->target], 1);
	for (; k < run->len; k++)
		if (!lc->meta[run->start + k].fail_full ||
		    !fail_full(lc, t, p, run->start + k))
			break;
	*handled = run->start + k;
	if (k < run->len)
		return 0;
	run->len = 0;
	return 1;
}

/* A slot classify() left to be handled on its own (ALONE_TARGET).  Kept
 * out of line: the forwarding loop stays as small as it was without it. */
static __attribute__((noinline)) int
special(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
	const struct shmr_dp_poll *p, unsigned i)
{
	switch (lc->meta[i].what) {
	case META_COLLECT:
		return shmr_dp_fwd_collect_call_rcu(lc, t, p, i);
	case META_COLLECTED:
		return shmr_dp_fwd_collect_reply_rcu(lc, t, p, i);
	default: /* META_BALANCE */
		return shmr_dp_fwd_balance_push_rcu(lc, t, p, i);
	}
}

unsigned shmr_dp_forward_burst_rcu(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t,
				   struct shmr_dp_poll *p, struct rte_ring *src)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	struct run run = { 0, 0, NO_TARGET, 0 };
	struct shmr_dp_bcast_progress *bp = &lc->bcast[p->slot];
	/* Our own index (we are the consumer): no partner. */
	uint32_t tail = __atomic_load_n(&src->cons.tail, __ATOMIC_RELAXED);
	unsigned n, handled = 0;

	if (!shmr_lane_valid_sc(src, env->lane_size)) {
		quarantine(lc, p, src == p->out_high ? "high-priority outbound"
						     : "outbound");
		return 0;
	}
	n = shmr_lane_peek_bounded(src, env->lane_size, lc->buf, ss,
				   SHMR_DP_BURST);
	if (n == 0)
		return 0;
	memset(lc->checked, 0, sizeof(lc->checked));
	/* Smallest-mailbox counts the open run as queued (a broadcast run's
	 * target is no routee's slot). */
	lc->pick.pend_slot = &run.target;
	lc->pick.pend_n = &run.len;
	for (unsigned i = 0; i < n; i++) {
		struct shmr_msg *m = (struct shmr_msg *)(lc->buf +
							 (size_t)i * ss);
		uint32_t target = classify(lc, t, p, m, &lc->meta[i]);

		if (target != NO_TARGET && target != ALONE_TARGET &&
		    run.len != 0 && run.target == target &&
		    (target != BCAST_TARGET ||
		     run.router == lc->meta[i].bcast)) {
			run.len++;
			continue;
		}
		if (!flush(lc, t, p, src, &run, &handled))
			goto full;
		if (target == NO_TARGET) {
			if (lc->meta[i].what == META_ADMIN ||
			    lc->meta[i].what == META_ADMIN_FAILED)
				shmr_dp_fwd_admin_put(lc, m, &lc->meta[i]);
			commit(lc, p, m, &lc->meta[i]);
			handled = i + 1;
		} else if (target == ALONE_TARGET) {
			if (!special(lc, t, p, i))
				goto full;
			handled = i + 1;
		} else {
			run = (struct run){ i, 1, target, lc->meta[i].bcast };
		}
	}
	if (!flush(lc, t, p, src, &run, &handled))
		goto full;
	goto done;
full:
	p->blocked = 1;
	lc->nblocked++;
done:
	lc->pick.pend_slot = NULL;
	lc->pick.pend_n = NULL;
	/* The head slot moved on: progress kept for it is obsolete. */
	if (handled && bp->active && bp->pos == tail)
		bp->active = 0;
	rte_ring_dequeue_zc_elem_finish(src, handled);
	shmr_dp_count(&lc->stats->rx, handled);
	return handled;
}

/* One endpoint's lanes, high priority first; slots taken. */
static unsigned poll_ep(struct shmr_dp_lcore *lc, struct shmr_dp_table *t,
			struct shmr_dp_poll *p)
{
	unsigned n;

	p->blocked = 0;
	n = shmr_dp_forward_burst_rcu(lc, t, p, p->out_high);
	if (!p->quarantined)
		n += shmr_dp_forward_burst_rcu(lc, t, p, p->out);
	return n;
}

/* The sweep: every endpoint of the list, as the loop was before work
 * bits; each one left with work gets its bit (lcore.c says when). */
static unsigned poll_all(struct shmr_dp_lcore *lc, struct shmr_dp_table *t)
{
	struct shmr_dp_poll_list *l = &t->lists[lc->index];
	unsigned total = 0;

	for (uint32_t i = 0; i < l->n; i++) {
		struct shmr_dp_poll *p = &l->e[i];
		unsigned n;

		if (p->quarantined)
			continue;
		n = poll_ep(lc, t, p);
		total += n;
		if (!p->quarantined &&
		    (n || p->blocked || shmr_lane_pending_sc(p->out_high) ||
		     shmr_lane_pending_sc(p->out)))
			shmr_dp_work_set(lc, p->slot / lc->env->nlcores);
	}
	lc->swept = t;
	lc->swept_version = t->version;
	lc->rounds = 0;
	lc->sweep_due = 0;
	return total;
}

/* The endpoints whose work bit is set; bounds from our own geometry,
 * whatever a peer wrote into the words. */
static unsigned poll_bits(struct shmr_dp_lcore *lc, struct shmr_dp_table *t)
{
	const struct shmr_dp_env *env = lc->env;
	struct shmr_dp_poll_list *l = &t->lists[lc->index];
	_Atomic(uint64_t) *work = shmr_dp_work(env, lc->index);
	unsigned total = 0;

	for (uint32_t s = 0; s < env->work_nsum; s++) {
		/* No partner: a hint.  What is read on its strength, a
		 * lane's tail, has its own acquire (the ring's). */
		uint64_t sv = atomic_load_explicit(&work[s], memory_order_relaxed);

		while (sv) {
			uint32_t w = s * 64 + (uint32_t)__builtin_ctzll(sv);
			uint64_t bits;

			sv &= sv - 1;
			if (w >= env->work_nwords) {
				/* A peer's: no such word.  No partner. */
				atomic_fetch_and_explicit(
					&work[s], ~(1ull << (w % 64)),
					memory_order_relaxed);
				continue;
			}
			bits = atomic_load_explicit(&work[env->work_nsum + w],
						    memory_order_relaxed);
			if (!bits) {
				shmr_dp_work_word_idle(lc, w);
				continue;
			}
			while (bits) {
				uint32_t idx = w * 64 +
					       (uint32_t)__builtin_ctzll(bits);
				uint32_t slot = idx * env->nlcores + lc->index;
				uint32_t at = slot < t->max_endpoints
						      ? l->at[slot]
						      : 0;
				struct shmr_dp_poll *p;
				unsigned n;

				bits &= bits - 1;
				if (at == 0 || l->e[at - 1].quarantined) {
					shmr_dp_work_drop(lc, idx);
					continue;
				}
				p = &l->e[at - 1];
				n = poll_ep(lc, t, p);
				total += n;
				if (n || p->blocked) {
					p->idle = 0;
				} else if (++p->idle >= SHMR_DP_RETIRE_ROUNDS) {
					p->idle = 0;
					shmr_dp_work_retire_rcu(lc, p, idx);
				}
			}
		}
	}
	return total;
}

unsigned shmr_dp_poll_once_rcu(struct shmr_dp_lcore *lc,
			       struct shmr_dp_table *t)
{
	unsigned total;

	lc->nblocked = 0;
	/* Which endpoints this round polls: lcore.c's essay. */
	if (lc->sweep_due || t != lc->swept ||
	    t->version != lc->swept_version ||
	    ++lc->rounds >= lc->sweep_every)
		total = poll_all(lc, t);
	else
		total = poll_bits(lc, t);
	/* The routing logics' own work, each only when it has any: replies
	 * other lcores polled for our collector, its timers, and the
	 * balancing queues' hand-outs. */
	if (lc->xin_any)
		total += shmr_dp_fwd_xin_drain_rcu(lc, t);
	if (lc->coll.nlive)
		shmr_dp_fwd_collect_tick_rcu(lc, t);
	if (lc->bal_active)
		total += shmr_dp_fwd_balance_dispatch_rcu(lc, t);
	shmr_dp_count(&lc->stats->polls, 1);
	if (total)
		shmr_dp_count(&lc->stats->busy_polls, 1);
	shmr_dp_ring_bells(lc);
	return total;
}
