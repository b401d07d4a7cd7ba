/*
 * The fast path: one routing lcore takes bursts from its endpoints'
 * outbound lanes and forwards every slot into the target's inbound lane
 * numbered after the lcore.
 *
 * Why nothing is lost or duplicated by the dataplane itself:
 *   - A burst is peeked (dequeue start), never dequeued outright.  Slots
 *     are handled in ring order, and consecutive slots for one target are
 *     staged together (see "Batches per destination" below).  When a target lane is full the burst stops at the
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
 * Batches per destination (fan-out).  A hash over 16 routes fed keys 0,
 * 1, 2, ... makes runs of one: enqueued as they come, every slot was its
 * own enqueue and every worker woke for one slot.  So a round of the
 * lcore (shmr_dp_poll_once_rcu()) gathers: it makes passes over its
 * lanes, one burst per lane per pass, and a run for an endpoint is not
 * enqueued but staged, its pool indices appended to that destination's
 * stage.  A stage goes out as one enqueue when it holds SHMR_DP_STAGE_CAP
 * slots, before anything is enqueued to any lane directly (admin path,
 * broadcast, collector, balancing queues, a failed-when-full slot: so
 * nothing overtakes what was staged), and at the end of the round.  A
 * run that is a full burst for a lane with nothing staged goes out at
 * once, from the burst (the single-route case: no staging at all).  The
 * round ends when a pass finds no input, when nothing is held, after
 * SHMR_DP_STAGE_NS (read from the TSC, no syscall, and only once
 * something is held), or when the pool (lc->pool_cap: an eighth of a
 * lane, lcore.h) has no room for another burst: everything goes out and
 * every source lane is released there, and the round goes on only as far
 * as later lanes of the same pass bring more.  It is DPDK's
 * rte_eth_tx_buffer per destination lane, bounded by the round.
 *   - Where the staged slots are: in the lcore's pool, private memory,
 *     AND still in their source lane.  Each burst is peeked (a zero-copy
 *     dequeue start) and not finished: the round keeps every source
 *     lane's reservation (srcs) and finishes it only once every stage is
 *     out, and whenever a burst ends with nothing staged (then all it
 *     took is in its inboxes).  The lanes are single-consumer (head/tail
 *     sync "ST"), where starts accumulate and one finish of the total
 *     releases them.  So at every instant each slot is in a lane: a kill
 *     -9 of the dataplane mid-round leaves the slots in their source lane
 *     below cons.head, where lane repair hands them to the next dataplane
 *     (shmr_lane_repair_consumer(): flagged redelivered, as any burst in
 *     flight).  What was already out is then delivered twice: at most a
 *     round's held slots (lc->pool_cap, lcore.h), against a burst before; with
 *     one route, a burst as before.  Staging in shared memory instead would have needed a
 *     replay protocol of its own for no gain: the pool copy is the copy
 *     the burst made anyway (into lc->buf), and the second copy, into the
 *     destination, is the one a run made; so batching costs no extra
 *     copy, only per-slot memcpy()s at the flush instead of one per run.
 *   - Nothing goes out twice or is lost by backpressure: a stage is
 *     opened with the room its lane had (we are that lane's only
 *     producer, so room only grows), and a slot is staged only into
 *     room; one that finds none stops its burst as a full lane did, the
 *     round ends there (everything staged out, every source finished:
 *     exactly the slots handled), and the rest is decided afresh later.
 *     A consumer that scribbles its own lane's indices in between can
 *     only lose what was staged for itself (counted failed, quarantined).
 *   - A round is one read-side section: a staged slot never outlives the
 *     table it was decided with, so an endpoint slot reused after a table
 *     swap cannot receive what was meant for its previous owner.
 *   - Per-key order holds: a key's slots come from one source lane, are
 *     staged in ring order and go out in that order, and every direct
 *     enqueue is preceded by the stages' flush.
 *   - Smallest-mailbox counts the staged slots as queued (each stage's n,
 *     read through lc->stage_of: nothing is written for it per slot).
 *   - The cost: a round holds up to lc->pool_cap slots of a source
 *     lane until it ends (the sender sees that much less room for at most
 *     SHMR_DP_STAGE_NS), and a slot waits at most that long.
 *
 * The plain case (plain_prefix()).  Most bursts are sends and calls at
 * normal priority, of an ordinary type, through a router whose decision
 * names one worker (hash, type, a call by type, and the routing logics
 * that pick one routee: round-robin, random, smallest-mailbox,
 * consistent-hash).  For those, about 40 % of what the general loop
 * spent on a slot over 16 routes was its own bookkeeping (shmr-perf
 * decide: 19 ns a slot, 11.5 without it): a struct of what was decided
 * written per slot and read back, and a run of one slot and a call to
 * flush() for each.  So a burst starts
 * with a loop that checks each slot as classify() does, decides it, and
 * appends it to its destination's stage at once, reusing the router of
 * the slot before while slots name the same one, and summing the
 * counters for the burst.  The first slot it does not take (any other
 * kind, priority, type or target, a refusal, or a stage with no room)
 * is left unchanged, and the general loop goes on from it: classify()
 * then says why, or flush() finds the lane full.  A round-robin pick for
 * a slot that is not staged is taken back, so the general loop picks the
 * same routee for it.  So the outcome of every slot is the general
 * loop's; only the cost differs (shmr-perf decide's forwarding round:
 * docs/benchmarks.md, "The plain case").
 *
 * Three cases leave the one-slot-one-target path, each in its own file
 * with the essay that explains it: broadcast (forward_bcast.c), the
 * reply collector of scatter-gather and tail-chopping (forward_collect.c)
 * and the balancing queues (forward_balance.c).  What they share with
 * this file is in forward_slot.h, and the admin and failure paths they
 * all call in forward_slot.c.  The round itself (which endpoints it
 * polls, its passes, the logics' own work after it) is forward_poll.c.
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
 *     dataplane's private copy and its head/tail words are checked; the
 *     first time in a round that a target lane is used it is checked the
 *     same way (lane checks:
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

#include <rte_cycles.h>
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

/* @p m goes, unchanged, to the control plane's admin endpoint; without
 * one it fails with SHMR_E_NOT_ALLOWED.  A buffer goes with it, its
 * reference held by the admin endpoint's lane as any receiver's (the
 * handlers see its bytes: control/handlers.c); the router's own messages
 * and Kill, read by the control plane from the slot, refuse one. */
static uint32_t to_admin(struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t, struct shmr_msg *m,
			 struct shmr_dp_meta *meta)
{
	uint32_t a = shmr_dp_fwd_admin_slot_rcu(lc, t);

	if (a == NO_TARGET ||
	    (meta->has_buf && m->type >= SHMR_TYPE_RESERVED))
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
	/* plain_prefix() makes these checks too, in its own words (one
	 * function for both cost its loop 1 to 3 ns a slot): a check added
	 * here goes there as well. */
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
			if (r->behaviour != SHMR_BEH_SCATTER_GATHER &&
			    r->behaviour != SHMR_BEH_TAIL_CHOPPING)
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

/* ---- fan-out staging (the essay's "Batches per destination") -------- */

/* Free entries of inbound lane @p r, a lane we alone produce. */
static uint32_t lane_room(const struct rte_ring *r, uint32_t lane_size)
{
	/* Our own head: no partner.  cons.tail: acquire, pairs with the
	 * consumer's release store in its dequeue finish (the entries it
	 * gave back are no longer read, so they may be written). */
	uint32_t ph = __atomic_load_n(&r->prod.head, __ATOMIC_RELAXED);
	uint32_t ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t used = ph - ct;

	/* A consumer's scribbled tail reads as a full lane. */
	return used < lane_size - 1 ? lane_size - 1 - used : 0;
}

/*
 * @p n slots staged for @p target did not go in, though the room was there
 * when its stage opened and only we produce: its consumer wrote its own
 * lane's indices.  What was meant for it is lost, and only that.
 */
static void lost(struct shmr_dp_lcore *lc, uint32_t target, unsigned n)
{
	shmr_dp_count(&lc->stats->failed, n);
	/* No partner: a flag for display, logged once (as classify()'s). */
	if (!atomic_exchange_explicit(&shmr_dp_ep(lc->env, target)->quarantined,
				      1, memory_order_relaxed))
		shmr_dp_event(lc, SHMR_DP_EV_QUARANTINE,
			      "lcore %u: endpoint %u quarantined: inbound "
			      "lane %u corrupted (%u slots lost)",
			      lc->index, target, lc->index, n);
}

/* Enqueue what stage @p st holds, as one burst. */
static void stage_out(struct shmr_dp_lcore *lc, struct shmr_dp_stage *st)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	struct rte_ring *lane = shmr_dp_lane(env, st->target, lc->index);
	struct rte_ring_zc_data z;
	unsigned k;

	if (st->n == 0)
		return;
	k = shmr_lane_reserve_bounded(lane, env->lane_size, ss, st->n, &z);
	/* Slots that lie one after the other in the pool, and in the lane
	 * (no wrap between them), go in one copy: a run from one source. */
	for (unsigned j = 0, c; j < k; j += c) {
		unsigned end = j < z.n1 ? z.n1 : k;
		unsigned char *to = j < z.n1 ? (unsigned char *)z.ptr1 +
						       (size_t)j * ss
					     : (unsigned char *)z.ptr2 +
						       (size_t)(j - z.n1) * ss;

		for (c = 1; j + c < end && st->idx[j + c] == st->idx[j] + c;
		     c++)
			;
		memcpy(to, lc->buf + (size_t)st->idx[j] * ss, (size_t)c * ss);
	}
	if (k) {
		rte_ring_enqueue_zc_elem_finish(lane, k);
		shmr_dp_count(&shmr_dp_epc(lc, st->target)->ep_delivered, k);
		note_bell(lc, st->target);
	}
	if (k < st->n)
		lost(lc, st->target, st->n - k);
	lc->npending -= st->n;
	st->n = 0;
}

/* Every stage out, so that what comes next for any lane (a direct
 * enqueue) follows what was staged for it, and finds the room a stage
 * counted on already used. */
void shmr_dp_fwd_stages_out(struct shmr_dp_lcore *lc)
{
	for (uint32_t s = 0; s < lc->nstages; s++) {
		stage_out(lc, &lc->stages[s]);
		lc->stage_of[lc->stages[s].target] = 0;
	}
	lc->nstages = 0;
}

/* End of a round (or of a burst that stopped): every stage out, then
 * every source lane's reserved slots released, then the pool is free. */
/* Every source lane's reserved slots released (nothing is staged). */
static void sources_out(struct shmr_dp_lcore *lc)
{
	for (uint32_t s = 0; s < lc->nsrcs; s++) {
		struct shmr_dp_held *h = &lc->srcs[s];

		rte_ring_dequeue_zc_elem_finish(h->r, h->n);
		lc->src_of[h->key] = 0;
	}
	lc->nsrcs = 0;
	lc->pool_n = 0;
	lc->burst_idx = 0;
	lc->burst = lc->buf;
}

void shmr_dp_fwd_round_out(struct shmr_dp_lcore *lc)
{
	shmr_dp_fwd_stages_out(lc);
	sources_out(lc);
	/* Inbound lanes are checked again in the next round. */
	shmr_dp_checked_clear(lc);
}

/* The stage of target @p x, opened with the room its lane has now when
 * this round has none for it yet. */
static inline struct shmr_dp_stage *stage_for(struct shmr_dp_lcore *lc,
					      uint32_t x)
{
	struct shmr_dp_stage *st;

	if (lc->stage_of[x])
		return &lc->stages[lc->stage_of[x] - 1];
	st = &lc->stages[lc->nstages++];
	st->target = x;
	st->n = 0;
	st->room = lane_room(shmr_dp_lane(lc->env, x, lc->index),
			     lc->env->lane_size);
	lc->stage_of[x] = (uint16_t)lc->nstages;
	return st;
}

/* Stage what fits of @p run for its target; returns how many did. */
static unsigned stage_run(struct shmr_dp_lcore *lc, const struct run *run)
{
	uint32_t x = run->target;
	struct shmr_dp_stage *st;
	unsigned k;

	if (lc->stage_of[x] == 0 && run->len >= SHMR_DP_STAGE_CAP) {
		/* A full burst for a lane with nothing staged: out at once,
		 * from the burst, as one copy, as much as fits (as before
		 * staging). */
		k = shmr_lane_put_bounded(shmr_dp_lane(lc->env, x, lc->index),
					  lc->env->lane_size,
					  lc->burst + (size_t)run->start *
							      lc->env->slot_size,
					  lc->env->slot_size, run->len);
		if (k) {
			shmr_dp_count(&shmr_dp_epc(lc, x)->ep_delivered, k);
			note_bell(lc, x);
		}
		return k;
	}
	st = stage_for(lc, x);
	k = run->len < st->room ? run->len : st->room;
	st->room -= k;
	lc->npending += k;
	for (unsigned j = 0; j < k; j++) {
		st->idx[st->n++] = (uint16_t)(lc->burst_idx + run->start + j);
		if (st->n == SHMR_DP_STAGE_CAP)
			stage_out(lc, st);
	}
	return k;
}

/* The forwarded counters flush() gathered over a burst's runs. */
static void counts_out(struct shmr_dp_lcore *lc)
{
	if (lc->acc_rn)
		shmr_dp_count(&shmr_dp_epc(lc, lc->acc_rslot)->router_forwarded,
			      lc->acc_rn);
	if (lc->acc_fwd)
		shmr_dp_count(&lc->stats->forwarded, lc->acc_fwd);
	lc->acc_rn = 0;
	lc->acc_fwd = 0;
}

/* Stage a run; returns 1 when all of it was staged (or what did not fit
 * was failed as its router asks). */
static int flush(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		 const struct shmr_dp_poll *p, const struct rte_ring *src,
		 struct run *run, unsigned *handled)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	unsigned k;

	if (run->len == 0)
		return 1;
	if (run->target == BCAST_TARGET) {
		shmr_dp_fwd_stages_out(lc);
		return shmr_dp_fwd_bcast_flush_rcu(lc, t, p, src, run, handled);
	}
	k = stage_run(lc, run);
	unsigned fwd = 0;
	uint32_t rslot = lc->acc_rslot;
	uint64_t rn = lc->acc_rn;

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
					&shmr_dp_epc(lc, rslot)->router_forwarded,
					rn);
				rn = 0;
			}
			rslot = meta->routers[0];
			rn++;
			continue;
		}
		fwd += meta->what == META_FORWARD;
		commit(lc, p,
		       (const struct shmr_msg *)(lc->burst +
						 (size_t)(run->start + j) * ss),
		       meta);
	}
	/* Written at the burst's end (counts_out()); delivered and the
	 * bell as the stage goes out. */
	lc->acc_rslot = rslot;
	lc->acc_rn = rn;
	lc->acc_fwd += fwd;
	/* The inbox was full (no room for the rest of the run): once per
	 * run that found it so (the rest waits, or is failed as its router
	 * asks). */
	if (k < run->len) {
		shmr_dp_count(&shmr_dp_epc(lc, run->target)->ep_full, 1);
		shmr_dp_fwd_stages_out(lc); /* fail_full() enqueues directly */
	}
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

/*
 * The decision of router @p r (index @p ri) for a plain slot: the
 * stateless ones (hash, type, a call by type) here, the routing logics
 * that pick one routee (round-robin, random, smallest-mailbox,
 * consistent-hash) by decide.c; NULL for any other (broadcast, the
 * collectors, balancing, a shared object: the general loop's).
 */
static inline const struct shmr_dp_target *
plain_decide(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
	     unsigned ri, const struct shmr_dp_router *r,
	     const struct shmr_msg *m)
{
	const struct shmr_dp_target *tgt = shmr_dp_decide_stateless(r, m);

	if (tgt || !shmr_dp_picks_one(r->behaviour))
		return tgt;
	/* decide.c's whole decision: a call map still comes first. */
	return shmr_dp_behaviour_decide_rcu(t, &lc->pick, ri, m);
}

/*
 * The plain case of a burst, from its first slot (the essay's "The plain
 * case"): sends and calls at normal priority, of an ordinary type, to a
 * router whose one decision (hash, type, a call by type, or a routing
 * logic that picks one routee) names a worker whose inbound lane is
 * sound, each staged for that worker as it is decided.  A round-robin
 * pick that is not staged is taken back, so that the general loop's pick
 * of the same slot is the one it would have been.  The checks are classify()'s, in the same order of
 * outcome: a slot that fails any of them, or whose stage has no room,
 * stops the plain case unchanged, and the burst's general loop takes it
 * from there (classify() then says why, or flush() finds the lane full).
 * What classify() would write for a plain slot that nobody reads once it
 * is staged (its meta) is not written; its counters are summed for the
 * burst as flush() sums them.  Returns how many slots it staged.
 */
static unsigned plain_prefix(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t,
			     const struct shmr_dp_poll *p, unsigned n)
{
	uint32_t ss = lc->env->slot_size;
	uint32_t rslot = lc->acc_rslot;
	uint64_t rn = lc->acc_rn;
	/* The router of the slot before, while slots name the same one
	 * (none yet: rpid is only read once r is set). */
	const struct shmr_dp_router *r = NULL;
	struct shmr_pid rpid = { 0, 0 };
	uint64_t *rr = NULL; /* its round-robin counter, if it has one */
	unsigned ri = 0, i;

	for (i = 0; i < n; i++) {
		struct shmr_msg *m =
			(struct shmr_msg *)(lc->burst + (size_t)i * ss);
		const struct shmr_dp_target *tgt;
		struct shmr_dp_stage *st;
		uint64_t rr_before = 0;
		uint32_t x;

		/* classify()'s checks, written into one condition with what
		 * makes a slot plain (keep the two in step: see there). */
		if ((m->kind != SHMR_KIND_SEND && m->kind != SHMR_KIND_CALL) ||
		    m->len > ss - SHMR_HDR_SIZE ||
		    m->priority != SHMR_PRIO_NORMAL ||
		    m->from.slot != p->slot || m->from.gen != p->gen ||
		    (m->flags & (SHMR_F_ARENA | SHMR_F_BROADCAST)) ||
		    m->type >= SHMR_TYPE_RESERVED ||
		    m->hops >= SHMR_DP_MAX_HOPS)
			break;
		if (!r || m->to.slot != rpid.slot || m->to.gen != rpid.gen) {
			int32_t k;

			if (m->to.slot >= t->max_endpoints)
				break;
			k = t->ep[m->to.slot].router;
			if (k < 0)
				break;
			ri = (unsigned)k;
			r = &t->routers[ri];
			if (m->to.gen != r->pid.gen ||
			    (r->flags & SHMR_RF_STOPPED))
				break;
			rpid = m->to;
			rr = r->behaviour == SHMR_BEH_ROUND_ROBIN ? &lc->pick.rr[ri]
								  : NULL;
		}
		if (rr)
			rr_before = *rr;
		tgt = plain_decide(lc, t, ri, r, m);
		if (!tgt || tgt->verdict != SHMR_DP_DELIVER ||
		    tgt->router >= 0 || tgt->ask)
			goto unpick;
		x = tgt->slot;
		/* A stage is opened only for a lane found sound this round. */
		if (lc->stage_of[x]) {
			st = &lc->stages[lc->stage_of[x] - 1];
		} else {
			if (!target_sound(lc, x))
				goto unpick;
			st = stage_for(lc, x);
		}
		if (st->room == 0)
			goto unpick;
		/* Decided: as classify() and flush() would leave it. */
		m->flags = (uint8_t)(m->flags & ~SHMR_F_INTERNAL_MASK);
		m->hops = (uint8_t)(m->hops + 1);
		st->room--;
		st->idx[st->n++] = (uint16_t)(lc->burst_idx + i);
		if (st->n == SHMR_DP_STAGE_CAP)
			stage_out(lc, st);
		if (rn && m->to.slot != rslot) {
			shmr_dp_count(&shmr_dp_epc(lc, rslot)->router_forwarded,
				      rn);
			rn = 0;
		}
		rslot = m->to.slot;
		rn++;
		continue;
unpick:
		if (rr)
			*rr = rr_before;
		break;
	}
	/* Once for the loop: a stage that went out in it took its slots off
	 * already (unsigned, so the sum comes out right). */
	lc->npending += i;
	lc->acc_rslot = rslot;
	lc->acc_rn = rn;
	lc->acc_fwd += i;
	return i;
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

/*
 * Is @p src, a lane we consume with @p held slots reserved this round,
 * sound?  As shmr_lane_valid_sc() (which wants none reserved), our own
 * head @p held past our tail.
 */
static int src_sound(const struct rte_ring *src, uint32_t lane_size,
		     uint32_t held)
{
	uint32_t ch, ct, pt;

	if (held == 0)
		return shmr_lane_valid_sc(src, lane_size);
	if (!shmr_lane_geometry_valid(src, lane_size))
		return 0;
	/* Our own side: no partner.  prod.tail: acquire, pairs with the
	 * producer's release store (as in shmr_lane_valid_sc()). */
	ch = __atomic_load_n(&src->cons.head, __ATOMIC_RELAXED);
	ct = __atomic_load_n(&src->cons.tail, __ATOMIC_RELAXED);
	pt = __atomic_load_n(&src->prod.tail, __ATOMIC_ACQUIRE);
	return ch - ct == held && pt - ct <= lane_size - 1 &&
	       pt - ch <= lane_size - 1;
}

/* One burst from @p src into the round's stages; see the essay. */
unsigned shmr_dp_fwd_burst_rcu(struct shmr_dp_lcore *lc,
			       const struct shmr_dp_table *t,
			       struct shmr_dp_poll *p, struct rte_ring *src)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	struct run run = { 0, 0, NO_TARGET, 0 };
	struct shmr_dp_bcast_progress *bp = &lc->bcast[p->slot];
	unsigned key = 2 * p->slot + (src == p->out_high);
	struct shmr_dp_held *h;
	unsigned n, handled = 0;
	int stopped = 0;

	if (lc->pool_n + SHMR_DP_BURST > lc->pool_cap)
		shmr_dp_fwd_round_out(lc);
	h = lc->src_of[key] ? &lc->srcs[lc->src_of[key] - 1] : NULL;
	if (!src_sound(src, env->lane_size, h ? h->n : 0)) {
		if (h) /* what it holds is handled */
			shmr_dp_fwd_round_out(lc);
		quarantine(lc, p, src == p->out_high ? "high-priority outbound"
						     : "outbound");
		return 0;
	}
	/* Our own index (we are the consumer): no partner. */
	lc->burst_pos = __atomic_load_n(&src->cons.head, __ATOMIC_RELAXED);
	lc->burst_idx = lc->pool_n;
	lc->burst = lc->buf + (size_t)lc->pool_n * ss;
	n = shmr_lane_peek_bounded(src, env->lane_size, lc->burst, ss,
				   SHMR_DP_BURST);
	if (n == 0)
		return 0;
	/* Smallest-mailbox counts the open run as queued (a broadcast run's
	 * target is no routee's slot), and what is staged (the stages). */
	handled = plain_prefix(lc, t, p, n);
	lc->pick.pend_slot = &run.target;
	lc->pick.pend_n = &run.len;
	for (unsigned i = handled; i < n; i++) {
		struct shmr_msg *m = (struct shmr_msg *)(lc->burst +
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
			    lc->meta[i].what == META_ADMIN_FAILED) {
				shmr_dp_fwd_stages_out(lc);
				shmr_dp_fwd_admin_put(lc, m, &lc->meta[i]);
			}
			commit(lc, p, m, &lc->meta[i]);
			handled = i + 1;
		} else if (target == ALONE_TARGET) {
			shmr_dp_fwd_stages_out(lc);
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
	stopped = 1;
done:
	counts_out(lc);
	lc->pick.pend_slot = NULL;
	lc->pick.pend_n = NULL;
	/* The head slot moved on: progress kept for it is obsolete. */
	if (handled && bp->active && bp->pos == lc->burst_pos)
		bp->active = 0;
	/* Held until the round's end, when what was staged from it is out;
	 * a burst that stopped ends the round now, as the finish also gives
	 * back the slots after the last one handled. */
	if (!h) {
		h = &lc->srcs[lc->nsrcs++];
		h->r = src;
		h->n = 0;
		h->key = key;
		lc->src_of[key] = (uint16_t)lc->nsrcs;
	}
	h->n += handled;
	/* Held slots never outnumber the pool (a round ends when it is
	 * full), which bounds what a crash redelivers. */
	lc->pool_n += n;
	if (stopped || handled < n)
		shmr_dp_fwd_round_out(lc);
	else if (lc->npending == 0)
		/* Everything taken so far is in its inbox already (a full
		 * burst for one lane goes out at once): release it now, so
		 * that a crash redelivers no more than a burst, the sender
		 * has its room back, and the next burst reuses the pool's
		 * first slots, still in the cache. */
		sources_out(lc);
	shmr_dp_count(&lc->stats->rx, handled);
	return handled;
}

unsigned shmr_dp_forward_burst_rcu(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t,
				   struct shmr_dp_poll *p, struct rte_ring *src)
{
	unsigned n = shmr_dp_fwd_burst_rcu(lc, t, p, src);

	shmr_dp_fwd_round_out(lc);
	return n;
}
