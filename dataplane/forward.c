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
 * Broadcast (a router whose routees all get every message, and any
 * router's Broadcast envelope: a send flagged SHMR_F_BROADCAST) is the one
 * case where a slot has many targets, so "stop at the slot that did not
 * fit" alone would deliver it twice to the routees that had room.  So:
 *   - A run of consecutive slots broadcast by one router goes, as far as
 *     every routee's lane has room for all of them, in one enqueue per
 *     routee.  We are the only producer of those lanes, so room seen is
 *     room kept.
 *   - The first slot that does not fit everywhere goes to the routees
 *     with room, one by one, and the burst stops there.  The lcore keeps,
 *     for that source endpoint, the held slot's ring position and the
 *     set of routee inbox slots it reached (struct shmr_dp_bcast_progress,
 *     private, no shared write).  Next round, that slot is decided afresh
 *     (from the ring's original) and, if the same router broadcasts it
 *     again, goes only to routees not in the set, whatever the table
 *     looks like by then: a routee added meanwhile gets it, one removed
 *     does not, none gets it twice.  A copy is counted (forwarded,
 *     router_forwarded, delivered) when it is enqueued, so never twice.
 *   - With SHMR_RF_FAIL_WHEN_FULL a full routee fails its copy (counted,
 *     and a send's copy becomes a MessageRouteFailed naming that routee)
 *     and the slot goes on to the others; a call that reached no routee
 *     at all gets the error as its reply.
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
 *
 * Balancing: a message to a balancing router is copied into the lcore's
 * queue for that router (balance.h) and released from its source lane;
 * once per poll loop the queue hands messages to routees that hold none
 * from this lcore.  A full queue is backpressure like a full inbox.
 *
 * The admin path: a high/max-priority send or call to a router, one of
 * the router's own messages (a type from SHMR_TYPE_RESERVED up) at any
 * priority unless it is a send in a Broadcast envelope, and a send
 * that failed routing (flagged SHMR_F_ROUTE_FAILED, status = the reason,
 * the chosen name after the payload when it fits), go unchanged otherwise
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
 *     each enqueue the target lane is checked the same way.  Index
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
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>
#include <rte_ring_peek_zc.h>

#include <shmr/lane_copy.h>

#include "dataplane_internal.h"

enum meta_what {
	META_FORWARD,    /* enqueued to meta.target as it came (hops added) */
	META_REPLY,      /* enqueued to the caller as an error reply */
	META_DROP,       /* a failed or discarded send: nothing enqueued */
	META_BAD,        /* a malformed slot: counted, dropped */
	META_ADMIN,      /* high/max priority to a router: admin endpoint */
	META_ADMIN_FAILED, /* a send that failed routing: to the admin
			    * endpoint, marked SHMR_F_ROUTE_FAILED */
	META_BCAST,      /* to every routee of router meta.bcast */
	META_COLLECT,    /* a call for router meta.bcast's reply collector */
	META_COLLECTED,  /* a reply to router meta.bcast: its collector's */
	META_BALANCE,    /* into router meta.bcast's balancing queue */
	META_QUIET,      /* handled and counted where it was handled */
};

enum bad_why { BAD_KIND = 1, BAD_LEN, BAD_PRIO, BAD_FROM, BAD_TO };

static const char *const bad_names[] = {
	[BAD_KIND] = "kind", [BAD_LEN] = "length", [BAD_PRIO] = "priority",
	[BAD_FROM] = "sender", [BAD_TO] = "target",
};

#define NO_TARGET UINT32_MAX
#define BCAST_TARGET (UINT32_MAX - 1) /* classify(): see meta.bcast */
#define ALONE_TARGET (UINT32_MAX - 2) /* classify(): handled on its own,
				       * by meta.what (special()) */

static void admin_put(struct shmr_dp_lcore *lc, const struct shmr_msg *m,
		      const struct shmr_dp_meta *meta);

/* ---- lcore state and logging -------------------------------------- */

/* The collector's clock (lc->clock_ns): read from the vDSO, no syscall. */
static uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	/* vDSO: no syscall. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


int shmr_dp_lcore_init(struct shmr_dp_lcore *lc, const struct shmr_dp_env *env,
		       uint32_t index)
{
	size_t size;

	memset(lc, 0, sizeof(*lc));
	if (index >= env->nlcores)
		return -EINVAL;
	lc->env = env;
	lc->index = index;
	lc->stats = shmr_dp_stats(env, index);
	lc->clock_ns = clock_mono_ns;
	lc->buf = aligned_alloc(SHMR_CACHE_LINE,
				(size_t)SHMR_DP_BURST * env->slot_size);
	size = (shmr_dp_collect_mem_size(SHMR_DP_COLLECT_CAP_DEFAULT,
					 env->slot_size) +
		SHMR_CACHE_LINE - 1) &
	       ~(size_t)(SHMR_CACHE_LINE - 1);
	lc->coll_mem = aligned_alloc(SHMR_CACHE_LINE, size);
	if (!lc->buf || !lc->coll_mem ||
	    shmr_dp_collect_init(&lc->coll, lc->coll_mem, size,
				 SHMR_DP_COLLECT_CAP_DEFAULT, env->slot_size,
				 index) < 0) {
		shmr_dp_lcore_fini(lc);
		return -ENOMEM;
	}
	return 0;
}

void shmr_dp_lcore_fini(struct shmr_dp_lcore *lc)
{
	free(lc->buf);
	lc->buf = NULL;
	free(lc->coll_mem);
	lc->coll_mem = NULL;
	for (uint32_t j = 0; j < SHMR_MAX_LCORES; j++) {
		free(lc->xin[j]); /* ours: we are its consumer */
		lc->xin[j] = NULL;
		lc->xout[j] = NULL;
	}
	lc->xin_any = 0;
	for (uint32_t i = 0; i < SHMR_MAX_ROUTERS; i++) {
		free(lc->bal[i].mem);
		lc->bal[i].mem = NULL;
	}
	lc->bal_active = 0;
}

int shmr_dp_lcores_link(struct shmr_dp_lcore *const *lcs, unsigned n)
{
	uint32_t ss;
	size_t size;

	if (n > SHMR_MAX_LCORES)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (lcs[i]->index != i)
			return -EINVAL;
	if (n < 2)
		return 0;
	ss = lcs[0]->env->slot_size;
	size = (size_t)rte_ring_get_memsize_elem(ss, SHMR_DP_XRING_SIZE);
	size = (size + SHMR_CACHE_LINE - 1) & ~(size_t)(SHMR_CACHE_LINE - 1);
	for (unsigned to = 0; to < n; to++) {
		for (unsigned from = 0; from < n; from++) {
			char name[32];
			struct rte_ring *r;

			if (from == to)
				continue;
			r = aligned_alloc(SHMR_CACHE_LINE, size);
			if (!r)
				return -ENOMEM; /* fini frees what was made */
			snprintf(name, sizeof(name), "shmr-x%u-%u", from, to);
			/* In place, as the domain's lanes are: no EAL
			 * memzone, no registry.  Single producer (lcore
			 * from), single consumer (lcore to), both threads of
			 * this process. */
			if (rte_ring_init(r, name, SHMR_DP_XRING_SIZE,
					  RING_F_SP_ENQ | RING_F_SC_DEQ) < 0) {
				free(r);
				return -EINVAL;
			}
			lcs[to]->xin[from] = r;
			lcs[to]->xin_any = 1;
			lcs[from]->xout[to] = r;
		}
	}
	return 0;
}

static const int event_level[SHMR_DP_EV_MAX] = {
	[SHMR_DP_EV_BAD] = SHMR_DP_LOG_WARNING,
	[SHMR_DP_EV_QUARANTINE] = SHMR_DP_LOG_ERROR,
	[SHMR_DP_EV_FAILED] = SHMR_DP_LOG_WARNING,
	[SHMR_DP_EV_DISCARDED] = SHMR_DP_LOG_INFO,
};

void shmr_dp_event(struct shmr_dp_lcore *lc, enum shmr_dp_event ev,
		   const char *fmt, ...)
{
	struct shmr_dp_ratelimit *rl = &lc->rl[ev];
	char line[400];
	struct timespec ts;
	uint64_t now;
	va_list ap;
	int n;

	if (!lc->env->log)
		return;
	/* The coarse clock is read from the vDSO: no syscall. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now < rl->next_ns) {
		rl->suppressed++;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (rl->suppressed && n >= 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n,
			 " (and %" PRIu64 " more like it in the last second)",
			 rl->suppressed);
	rl->suppressed = 0;
	rl->next_ns = now + 1000000000u;
	lc->env->log(lc->env->log_ctx, event_level[ev], line);
}

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

static inline void note_bell(struct shmr_dp_lcore *lc, uint32_t slot)
{
	lc->bells[slot / 64] |= 1ull << (slot % 64);
}

/*
 * Is the inbound lane of @p slot numbered after this lcore sound?  Checked
 * once per burst and target: the check reads the consumer's tail, a line
 * the consumer keeps writing, so doing it per slot would cost a miss each.
 */
static inline int target_sound(struct shmr_dp_lcore *lc, uint32_t slot)
{
	uint64_t bit = 1ull << (slot % 64);

	if (lc->checked[slot / 64] & bit)
		return 1;
	if (!shmr_lane_valid_sp(shmr_dp_lane(lc->env, slot, lc->index),
				   lc->env->lane_size))
		return 0;
	lc->checked[slot / 64] |= bit;
	return 1;
}

/* Turn the call in @p m (our private copy) into its error reply. */
static void make_reply(struct shmr_msg *m, int32_t status)
{
	struct shmr_pid caller = m->from, callee = m->to;

	m->kind = SHMR_KIND_REPLY;
	m->flags = 0;
	m->priority = SHMR_PRIO_NORMAL;
	m->hops = 0;
	m->from = callee;
	m->to = caller;
	m->len = 0;
	m->status = status;
}

/*
 * A send or call that will not be delivered: an error reply to a caller,
 * nothing for a send.  Returns where the reply goes, or NO_TARGET.
 */
static uint32_t refuse(struct shmr_dp_lcore *lc, struct shmr_msg *m,
		       struct shmr_dp_meta *meta, uint8_t verdict, int32_t err)
{
	meta->verdict = verdict;
	meta->err = verdict == SHMR_DP_DISCARD ? -SHMR_E_DISCARDED : err;
	meta->what = META_DROP;
	if (m->kind != SHMR_KIND_CALL)
		return NO_TARGET;
	make_reply(m, meta->err);
	/* The caller is the lane's owner (checked): a live endpoint. */
	if (!target_sound(lc, m->to.slot))
		return NO_TARGET;
	meta->what = META_REPLY;
	meta->target = m->to.slot;
	return m->to.slot;
}

/*
 * The control plane's admin endpoint, when it has one that the table knows
 * as live and whose inbound lane of this lcore is sound; else NO_TARGET.
 */
static uint32_t admin_slot(struct shmr_dp_lcore *lc,
			   const struct shmr_dp_table *t)
{
	/* Acquire: pairs with shmr-control's release store of admin_pid. */
	uint64_t v = atomic_load_explicit(
		&((struct shmr_domain_hdr *)lc->env->base)->admin_pid,
		memory_order_acquire);
	uint32_t slot = (uint32_t)v, gen = (uint32_t)(v >> 32);

	if (gen == 0 || slot >= t->max_endpoints ||
	    t->ep[slot].state != SHMR_EP_ACTIVE || t->ep[slot].gen != gen ||
	    t->ep[slot].router >= 0 || !target_sound(lc, slot))
		return NO_TARGET;
	return slot;
}

/*
 * A send that failed routing becomes a MessageRouteFailed for the admin
 * endpoint: the slot stays the sender's (type, key, from, ref, payload),
 * `to` stays the router it was sent to; flags and status say why, and the
 * chosen name follows the payload when it fits.  Returns NO_TARGET: the
 * slot is put by admin_put() once everything before it is enqueued.
 */
static uint32_t route_failed(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t, struct shmr_msg *m,
			     struct shmr_dp_meta *meta, int32_t err)
{
	uint32_t slot = admin_slot(lc, t);
	size_t room = lc->env->slot_size - SHMR_HDR_SIZE - m->len;

	meta->verdict = SHMR_DP_FAIL;
	meta->err = err;
	meta->what = META_DROP;
	if (slot == NO_TARGET)
		return NO_TARGET;
	m->flags = (uint8_t)(m->flags | SHMR_F_ROUTE_FAILED);
	m->status = err;
	if (meta->name) {
		size_t n = strnlen(meta->name, SHMR_NAME_MAX - 1);

		if (n + 1 <= room) {
			memcpy(m->data + m->len, meta->name, n);
			m->data[m->len + n] = 0;
			m->flags = (uint8_t)(m->flags | SHMR_F_ROUTE_NAME);
		}
	}
	meta->what = META_ADMIN_FAILED;
	meta->target = slot;
	return NO_TARGET;
}

#define ASK_EVERY_NS 50000000u /* 50 ms: per slot and lcore */

/*
 * A message was routed to a route with no worker: tell the control plane
 * (lazy restart), at most once per ASK_EVERY_NS per route and lcore.  The
 * note is a header-only slot flagged SHMR_F_WANT_WORKER, `to` the route's
 * inbox, put straight into the admin endpoint (dropped and counted when
 * its lane is full, like every admin slot); it does not wait for the
 * message's own fate, since an extra ask costs nothing.
 */
static void ask_worker(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		       uint32_t slot)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *note = (struct shmr_msg *)buf;
	struct shmr_dp_meta meta = { .what = META_ADMIN };
	struct timespec ts;
	uint64_t now;

	/* The coarse clock is read from the vDSO: no syscall. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now < lc->ask_next_ns[slot])
		return;
	meta.target = admin_slot(lc, t);
	if (meta.target == NO_TARGET)
		return;
	lc->ask_next_ns[slot] = now + ASK_EVERY_NS;
	memset(note, 0, SHMR_HDR_SIZE);
	note->kind = SHMR_KIND_SEND;
	note->flags = SHMR_F_WANT_WORKER;
	note->to = (struct shmr_pid){ slot, t->ep[slot].gen };
	admin_put(lc, note, &meta);
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
			return refuse(lc, m, meta, SHMR_DP_FAIL,
				      -SHMR_E_PROCESS_UNKNOWN);
		/* A reply comes to a router only from a routee answering a
		 * call that router collects (scatter-gather, tail-chopping):
		 * its collector decides.  Other replies never go to a
		 * router. */
		if (m->kind == SHMR_KIND_REPLY) {
			if (r->behaviour != SHMR_BEH_SCATTER_GATHER &&
			    r->behaviour != SHMR_BEH_TAIL_CHOPPING)
				return refuse(lc, m, meta, SHMR_DP_FAIL,
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
		 * Broadcast envelope.  The control plane serves them,
		 * unchanged, from its admin endpoint. */
		if (m->priority != SHMR_PRIO_NORMAL ||
		    (m->type >= SHMR_TYPE_RESERVED && !envelope)) {
			uint32_t a = admin_slot(lc, t);

			if (a == NO_TARGET)
				return refuse(lc, m, meta, SHMR_DP_FAIL,
					      -SHMR_E_NOT_ALLOWED);
			meta->what = META_ADMIN;
			meta->target = a;
			return NO_TARGET;
		}
		if (envelope) {
			/* Every routee gets the message, whatever the
			 * router's logic, flag and all (one hop). */
			if (r->flags & SHMR_RF_STOPPED)
				return route_failed(lc, t, m, meta,
						    -SHMR_E_NOT_ALLOWED);
			if (r->nbc == 0)
				return route_failed(lc, t, m, meta,
						    -SHMR_E_NO_ROUTEES);
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
			ask_worker(lc, t, d.ask_slot);
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
			return route_failed(lc, t, m, meta, d.err);
		if (d.verdict != SHMR_DP_DELIVER)
			return refuse(lc, m, meta, (uint8_t)d.verdict, d.err);
		target = d.slot;
		add_hops = d.nrouters;
	} else {
		if (dst->state != SHMR_EP_ACTIVE || dst->gen != m->to.gen ||
		    m->to.gen == 0)
			return refuse(lc, m, meta, SHMR_DP_FAIL,
				      -SHMR_E_PROCESS_UNKNOWN);
		target = m->to.slot;
	}

deliver:
	if (!target_sound(lc, target)) {
		/* No partner: a flag for display (see quarantine()). */
		atomic_store_explicit(&shmr_dp_ep(env, target)->quarantined, 1,
				      memory_order_relaxed);
		shmr_dp_event(lc, SHMR_DP_EV_QUARANTINE,
			      "lcore %u: endpoint %u quarantined: inbound "
			      "lane %u corrupted",
			      lc->index, target, lc->index);
		if (meta->nrouters && m->kind == SHMR_KIND_SEND)
			return route_failed(lc, t, m, meta,
					    -SHMR_E_PROCESS_UNKNOWN);
		return refuse(lc, m, meta, SHMR_DP_FAIL,
			      -SHMR_E_PROCESS_UNKNOWN);
	}
	m->hops = (uint8_t)(m->hops + add_hops);
	meta->what = META_FORWARD;
	meta->target = target;
	return target;
}

/* Count a handled slot (and log what was dropped). */
static inline void commit(struct shmr_dp_lcore *lc,
			  const struct shmr_dp_poll *p,
			  const struct shmr_msg *m,
			  const struct shmr_dp_meta *meta)
{
	struct shmr_lcore_stats *st = lc->stats;
	uint32_t last;

	switch (meta->what) {
	case META_BAD:
		shmr_dp_count(&st->bad, 1);
		/* Single writer: only this lcore polls this endpoint. */
		shmr_dp_count(&p->ep->bad_slots, 1);
		shmr_dp_event(lc, SHMR_DP_EV_BAD,
			      "lcore %u: endpoint %u: slot dropped: bad %s "
			      "(kind %u, len %u, from %u.%u, to %u.%u)",
			      lc->index, p->slot, bad_names[meta->why],
			      m->kind, m->len, m->from.slot, m->from.gen,
			      m->to.slot, m->to.gen);
		return;
	case META_ADMIN: /* counted by admin_put() */
		return;
	case META_FORWARD: /* forwarded: counted per run by flush() */
		for (uint32_t i = 0; i < meta->nrouters; i++)
			shmr_dp_count(&st->router_forwarded[meta->routers[i]],
				      1);
		return;
	case META_QUIET:
		return;
	case META_BCAST:
	case META_COLLECT:
	case META_BALANCE:
		/* Its copies were counted as they were enqueued
		 * (bcast_put_count()), or will be as it is handed out of a
		 * balancing queue; the routers before the broadcasting,
		 * collecting or balancing one forwarded it once. */
		for (uint32_t i = 0; i + 1 < meta->nrouters; i++)
			shmr_dp_count(&st->router_forwarded[meta->routers[i]],
				      1);
		return;
	default:
		break;
	}
	/* Refused: every router before the last one did forward. */
	for (uint32_t i = 0; i + 1 < meta->nrouters; i++)
		shmr_dp_count(&st->router_forwarded[meta->routers[i]], 1);
	last = meta->nrouters ? meta->routers[meta->nrouters - 1] : NO_TARGET;
	if (meta->verdict == SHMR_DP_DISCARD) {
		shmr_dp_count(&st->discarded, 1);
		if (last != NO_TARGET)
			shmr_dp_count(&st->router_discarded[last], 1);
		shmr_dp_event(lc, SHMR_DP_EV_DISCARDED,
			      "lcore %u: %s from %u.%u (type %u) discarded by "
			      "router endpoint %u",
			      lc->index,
			      meta->what == META_REPLY ? "call" : "message",
			      p->slot, p->gen, m->type, last);
		return;
	}
	shmr_dp_count(&st->failed, 1);
	if (last != NO_TARGET)
		shmr_dp_count(&st->router_failed[last], 1);
	shmr_dp_event(lc, SHMR_DP_EV_FAILED,
		      "lcore %u: %s from %u.%u (type %u) failed%s%.*s: %s",
		      lc->index, meta->what == META_REPLY ? "call" : "message",
		      p->slot, p->gen, m->type, meta->name ? " at route " : "",
		      SHMR_NAME_MAX - 1, meta->name ? meta->name : "",
		      shmr_strerror(meta->err));
}

/* ---- a burst -------------------------------------------------------- */

/*
 * Put a slot meant for the admin endpoint into its inbound lane of this
 * lcore.  Never holds the burst back: when that lane is full the slot is
 * dropped and counted (admin_dropped), so a slow control plane cannot
 * stall routing.
 */
static void admin_put(struct shmr_dp_lcore *lc, const struct shmr_msg *m,
		      const struct shmr_dp_meta *meta)
{
	const struct shmr_dp_env *env = lc->env;

	if (shmr_lane_put(shmr_dp_lane(env, meta->target, lc->index),
			  (const unsigned char *)m, env->slot_size, 1) == 1) {
		shmr_dp_count(&lc->stats->admin, 1);
		shmr_dp_count(&lc->stats->ep_delivered[meta->target], 1);
		note_bell(lc, meta->target);
		return;
	}
	shmr_dp_count(&lc->stats->admin_dropped, 1);
	shmr_dp_event(lc, SHMR_DP_EV_FAILED,
		      "lcore %u: admin endpoint %u full: %s from %u.%u "
		      "(type %u) dropped",
		      lc->index, meta->target,
		      meta->what == META_ADMIN ? "admin message"
					       : "MessageRouteFailed",
		      m->from.slot, m->from.gen, m->type);
}

struct run {
	unsigned start, len;
	uint32_t target; /* BCAST_TARGET: broadcast by router `router` */
	unsigned router;
};

/* ---- broadcast (see the essay at the top) ---------------------------- */

/*
 * @p k copies went into routee @p to's inbound lane: count them.  forwarded
 * counts a broadcast message once per routee it was delivered to, and so
 * does the broadcasting router's forwarded; delivered counts per inbox.
 */
static void bcast_put_count(struct shmr_dp_lcore *lc,
			    const struct shmr_dp_table *t,
			    const struct shmr_dp_router *r,
			    const struct shmr_dp_target *to, unsigned k)
{
	struct shmr_lcore_stats *st = lc->stats;

	shmr_dp_count(&st->forwarded, k);
	shmr_dp_count(&st->router_forwarded[r->pid.slot % SHMR_MAX_ENDPOINTS],
		      k);
	shmr_dp_count(&st->ep_delivered[to->slot], k);
	note_bell(lc, to->slot);
	if (to->ask)
		ask_worker(lc, t, to->slot);
}

/*
 * The copy of @p m for routee @p to failed with @p err: counted failed for
 * the broadcasting router; a send's copy goes to the admin endpoint as a
 * MessageRouteFailed naming the routee.  @p m itself is left as it is: the
 * other routees get it.
 */
static void bcast_copy_failed(struct shmr_dp_lcore *lc,
			      const struct shmr_dp_table *t,
			      const struct shmr_dp_router *r,
			      const struct shmr_msg *m,
			      const struct shmr_dp_target *to, int32_t err)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *copy = (struct shmr_msg *)buf;
	struct shmr_dp_meta meta = { .name = to->name };

	shmr_dp_count(&lc->stats->failed, 1);
	shmr_dp_count(&lc->stats->router_failed[r->pid.slot %
						SHMR_MAX_ENDPOINTS],
		      1);
	shmr_dp_event(lc, SHMR_DP_EV_FAILED,
		      "lcore %u: broadcast copy of a %s from %u.%u (type %u) "
		      "for %.*s failed: %s",
		      lc->index, m->kind == SHMR_KIND_CALL ? "call" : "message",
		      m->from.slot, m->from.gen, m->type, SHMR_NAME_MAX - 1,
		      to->name ? to->name : "?", shmr_strerror(err));
	if (m->kind != SHMR_KIND_SEND)
		return;
	memcpy(copy, m, lc->env->slot_size);
	(void)route_failed(lc, t, copy, &meta, err);
	if (meta.what == META_ADMIN_FAILED)
		admin_put(lc, copy, &meta);
}

/* The progress kept for the head slot of @p src, when it applies to slot
 * @p i of this burst broadcast by @p r; else NULL. */
static struct shmr_dp_bcast_progress *
bcast_progress(struct shmr_dp_lcore *lc, const struct shmr_dp_poll *p,
	       const struct rte_ring *src, const struct shmr_dp_router *r,
	       unsigned i)
{
	struct shmr_dp_bcast_progress *bp = &lc->bcast[p->slot];
	/* Our own index (we are the consumer): no partner. */
	uint32_t tail = __atomic_load_n(&src->cons.tail, __ATOMIC_RELAXED);

	if (i != 0 || !bp->active || bp->gen != p->gen ||
	    bp->high != (src == p->out_high) || bp->pos != tail ||
	    bp->router != r->pid.slot)
		return NULL;
	return bp;
}

/*
 * Slot @p i, broadcast by @p r, one routee at a time: to each routee not
 * served yet (by the progress kept for it).  Returns 1 when the slot is
 * handled, 0 when a full lane held it back (progress kept: the burst
 * stops here) or a call's error reply found the caller's lane full.
 */
static int bcast_slot(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		      const struct shmr_dp_poll *p, const struct rte_ring *src,
		      const struct shmr_dp_router *r, unsigned i)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	struct shmr_msg *m = (struct shmr_msg *)(lc->buf + (size_t)i * ss);
	struct shmr_dp_meta *meta = &lc->meta[i];
	struct shmr_dp_bcast_progress *bp = bcast_progress(lc, p, src, r, i);
	uint64_t served[SHMR_MAX_ENDPOINTS / 64] = { 0 };
	int held = 0, reached = 0;
	int32_t err = -SHMR_E_NO_ROUTEES;
	uint32_t to;

	if (bp) {
		memcpy(served, bp->served, sizeof(served));
		for (unsigned w = 0; w < SHMR_MAX_ENDPOINTS / 64; w++)
			reached |= served[w] != 0;
	}
	for (uint32_t j = 0; j < r->nbc; j++) {
		const struct shmr_dp_target *tgt = &r->bc[j];
		uint32_t slot = tgt->slot;
		uint64_t bit = 1ull << (slot % 64);

		if (served[slot / 64] & bit)
			continue; /* reached in an earlier round */
		if (!target_sound(lc, slot)) {
			/* No partner: a flag for display (quarantine()). */
			atomic_store_explicit(
				&shmr_dp_ep(env, slot)->quarantined, 1,
				memory_order_relaxed);
			err = -SHMR_E_PROCESS_UNKNOWN;
			bcast_copy_failed(lc, t, r, m, tgt, err);
			continue;
		}
		if (shmr_lane_put(shmr_dp_lane(env, slot, lc->index),
				  (const unsigned char *)m, ss, 1) == 1) {
			served[slot / 64] |= bit;
			reached = 1;
			bcast_put_count(lc, t, r, tgt, 1);
			continue;
		}
		if (meta->fail_full) {
			err = -SHMR_E_MAILBOX_FULL;
			bcast_copy_failed(lc, t, r, m, tgt, err);
			continue;
		}
		held = 1;
	}
	if (held) {
		/* Our own index: no partner. */
		uint32_t tail = __atomic_load_n(&src->cons.tail,
						__ATOMIC_RELAXED);

		lc->bcast[p->slot] = (struct shmr_dp_bcast_progress){
			.active = 1,
			.high = src == p->out_high,
			.gen = p->gen,
			.pos = tail + i,
			.router = r->pid.slot,
		};
		memcpy(lc->bcast[p->slot].served, served, sizeof(served));
		return 0;
	}
	if (bp)
		bp->active = 0;
	if (reached || m->kind != SHMR_KIND_CALL) {
		commit(lc, p, m, meta);
		return 1;
	}
	/* A call that reached nobody: the caller hears why. */
	to = refuse(lc, m, meta, SHMR_DP_FAIL, err);
	if (to != NO_TARGET) {
		if (shmr_lane_put(shmr_dp_lane(env, to, lc->index),
				  (const unsigned char *)m, ss, 1) != 1)
			return 0;
		shmr_dp_count(&lc->stats->ep_delivered[to], 1);
		note_bell(lc, to);
	}
	commit(lc, p, m, meta);
	return 1;
}

/*
 * Slots [@p i, @p i + @p n) broadcast by @p r, to every routee at once:
 * reserve room for them in each routee's lane (enqueue start), then copy
 * and publish as many as every lane had room for, giving the rest of each
 * reservation back (finish with fewer, as DPDK's peek API allows).  A
 * reservation holds whatever the consumer does meanwhile.  Returns how
 * many slots went to every routee: 0 when some lane had no room, a lane
 * is corrupted or the router fails copies to full routees (then the
 * caller goes slot by slot).
 */
static unsigned bcast_batch(struct shmr_dp_lcore *lc,
			    const struct shmr_dp_table *t,
			    const struct shmr_dp_router *r, int fail_full,
			    unsigned i, unsigned n)
{
	const struct shmr_dp_env *env = lc->env;
	struct rte_ring_zc_data zcd[SHMR_MAX_ROUTES];
	uint32_t ss = env->slot_size, j, k = n;
	const unsigned char *src = lc->buf + (size_t)i * ss;

	if (fail_full)
		return 0;
	for (j = 0; j < r->nbc; j++)
		if (!target_sound(lc, r->bc[j].slot))
			return 0;
	for (j = 0; j < r->nbc && k; j++) {
		unsigned got = rte_ring_enqueue_zc_burst_elem_start(
			shmr_dp_lane(env, r->bc[j].slot, lc->index),
			ss, k, &zcd[j], NULL);

		if (got < k)
			k = got;
	}
	/* Routees [0, j) hold reservations of at least k. */
	for (uint32_t x = 0; x < j; x++) {
		const struct shmr_dp_target *tgt = &r->bc[x];
		struct rte_ring *lane = shmr_dp_lane(env, tgt->slot, lc->index);

		if (k) {
			unsigned n1 = k < zcd[x].n1 ? k : zcd[x].n1;

			memcpy(zcd[x].ptr1, src, (size_t)n1 * ss);
			if (k > n1)
				memcpy(zcd[x].ptr2, src + (size_t)n1 * ss,
				       (size_t)(k - n1) * ss);
		}
		rte_ring_enqueue_zc_elem_finish(lane, k);
		if (k)
			bcast_put_count(lc, t, r, tgt, k);
	}
	return k;
}

/*
 * Deliver a run of slots broadcast by one router.  Returns 1 when all of
 * it is handled, 0 when a full lane stopped it (*handled says where).
 */
static int flush_bcast(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		       const struct shmr_dp_poll *p, const struct rte_ring *src,
		       struct run *run, unsigned *handled)
{
	const struct shmr_dp_router *r = &t->routers[run->router];
	uint32_t ss = lc->env->slot_size;
	unsigned i = run->start, end = run->start + run->len;
	int fail_full = lc->meta[i].fail_full;

	while (i < end) {
		unsigned k = 0;

		/* A slot held back last round goes on alone. */
		if (!bcast_progress(lc, p, src, r, i))
			k = bcast_batch(lc, t, r, fail_full, i, end - i);
		if (k == 0) {
			if (!bcast_slot(lc, t, p, src, r, i)) {
				*handled = i;
				return 0;
			}
			*handled = ++i;
			continue;
		}
		for (unsigned j = i; j < i + k; j++)
			commit(lc, p,
			       (const struct shmr_msg *)(lc->buf +
							 (size_t)j * ss),
			       &lc->meta[j]);
		i += k;
		*handled = i;
	}
	run->len = 0;
	return 1;
}

/*
 * Fail slot @p m (of the burst, with @p meta) with @p err now: a call gets
 * the error as its reply, a send becomes a MessageRouteFailed.  Returns 1
 * when handled, 0 when the caller's own lane is full (the burst stops
 * there, and the slot is decided afresh next round).
 */
static int refuse_now(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		      const struct shmr_dp_poll *p, struct shmr_msg *m,
		      struct shmr_dp_meta *meta, int32_t err)
{
	uint32_t to;

	if (m->kind == SHMR_KIND_SEND) {
		(void)route_failed(lc, t, m, meta, err);
		if (meta->what == META_ADMIN_FAILED)
			admin_put(lc, m, meta);
		commit(lc, p, m, meta);
		return 1;
	}
	to = refuse(lc, m, meta, SHMR_DP_FAIL, err);
	if (to != NO_TARGET) {
		if (shmr_lane_put(shmr_dp_lane(lc->env, to, lc->index),
				  (const unsigned char *)m, lc->env->slot_size,
				  1) != 1)
			return 0;
		shmr_dp_count(&lc->stats->ep_delivered[to], 1);
		note_bell(lc, to);
	}
	commit(lc, p, m, meta);
	return 1;
}

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
	struct shmr_msg *m = (struct shmr_msg *)(lc->buf +
						 (size_t)i * lc->env->slot_size);

	return refuse_now(lc, t, p, m, &lc->meta[i], -SHMR_E_MAILBOX_FULL);
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
		return flush_bcast(lc, t, p, src, run, handled);
	k = shmr_lane_put(shmr_dp_lane(env, run->target, lc->index),
			  lc->buf + (size_t)run->start * ss, ss, run->len);
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

/* ---- the reply collector (scatter-gather, tail-chopping) ------------- */

/*
 * Enqueue the first @p bytes of @p m as one slot into @p lane (reserve,
 * copy, publish): for messages kept in buffers shorter than a slot.
 * Returns 1, or 0 when the lane is full.
 */
static inline unsigned put_one(struct rte_ring *lane, const struct shmr_msg *m,
			       uint32_t ss, size_t bytes)
{
	struct rte_ring_zc_data zcd;

	if (rte_ring_enqueue_zc_burst_elem_start(lane, ss, 1, &zcd, NULL) != 1)
		return 0;
	memcpy(zcd.ptr1, m, bytes);
	rte_ring_enqueue_zc_elem_finish(lane, 1);
	return 1;
}

/* A live client endpoint of the table, whose inbound lane of this lcore
 * is sound: somewhere an answer can go. */
static int answerable(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
		      struct shmr_pid pid)
{
	return pid.slot < t->max_endpoints && pid.gen != 0 &&
	       t->ep[pid.slot].router < 0 &&
	       t->ep[pid.slot].state == SHMR_EP_ACTIVE &&
	       t->ep[pid.slot].gen == pid.gen && target_sound(lc, pid.slot);
}

/* A reply for a collected call that reaches no caller (late, a duplicate,
 * or its caller is gone): counted as discarded by router endpoint @p rs. */
static void reply_dropped(struct shmr_dp_lcore *lc, uint32_t rs)
{
	shmr_dp_count(&lc->stats->discarded, 1);
	shmr_dp_count(&lc->stats->router_discarded[rs % SHMR_MAX_ENDPOINTS],
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
static int collect_call(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
			const struct shmr_dp_poll *p, unsigned i)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size;
	struct shmr_msg *m = (struct shmr_msg *)(lc->buf + (size_t)i * ss);
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

		a.rnd = rte_rand();
		rc = shmr_dp_collect_start(&lc->coll, m, &a, lc->clock_ns(),
					   &first);
		if (rc < 0) {
			err = start_error(rc);
			goto refused;
		}
		tgt = &r->bc[first];
		if (!target_sound(lc, tgt->slot)) {
			err = -SHMR_E_PROCESS_UNKNOWN;
		} else if (shmr_lane_put(
				   shmr_dp_lane(env, tgt->slot, lc->index),
				   (const unsigned char *)m, ss, 1) == 1) {
			bcast_put_count(lc, t, r, tgt, 1);
			commit(lc, p, m, meta);
			return 1;
		} else if (!meta->fail_full) {
			held = 1;
		} else {
			err = -SHMR_E_MAILBOX_FULL;
		}
		(void)shmr_dp_collect_cancel(&lc->coll, m->ref);
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
			bcast_copy_failed(lc, t, r, m, tgt, err);
			continue;
		}
		if (rte_ring_enqueue_zc_burst_elem_start(
			    shmr_dp_lane(env, tgt->slot, lc->index), ss, 1,
			    &zcd[j], NULL) == 1) {
			got[j] = 1;
			reserved++;
		} else if (meta->fail_full) {
			err = -SHMR_E_MAILBOX_FULL;
			bcast_copy_failed(lc, t, r, m, tgt, err);
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
	return refuse_now(lc, t, p, m, meta, err);
}

/*
 * Reply @p m (a private copy, addressed to the collecting router) for a
 * call of this lcore's collector: to its caller, with the caller's ref
 * (first reply before the deadline), or as the caller's SHMR_E_TIMEOUT
 * (at or after it), or dropped (late, a duplicate, or the caller gone).
 * The caller's lane is reserved before the collector frees the entry, so
 * a full one holds the reply back instead of losing the answer.
 * Returns 1 when handled, 0 when held back.
 */
static int deliver_collected(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t, struct shmr_msg *m)
{
	const struct shmr_dp_env *env = lc->env;
	uint32_t ss = env->slot_size, rs = m->to.slot;
	struct rte_ring_zc_data zcd;
	struct rte_ring *lane;
	struct shmr_pid caller;
	int v;

	if (shmr_dp_collect_caller(&lc->coll, m->ref, &caller) < 0) {
		(void)shmr_dp_collect_on_reply(&lc->coll, m, lc->clock_ns());
		reply_dropped(lc, rs);
		return 1;
	}
	if (!answerable(lc, t, caller)) {
		/* Nobody left to answer: the call ends here. */
		(void)shmr_dp_collect_on_reply(&lc->coll, m, lc->clock_ns());
		reply_dropped(lc, rs);
		return 1;
	}
	lane = shmr_dp_lane(env, caller.slot, lc->index);
	if (rte_ring_enqueue_zc_burst_elem_start(lane, ss, 1, &zcd, NULL) != 1)
		return 0;
	v = shmr_dp_collect_on_reply(&lc->coll, m, lc->clock_ns());
	memcpy(zcd.ptr1, m, SHMR_HDR_SIZE + (size_t)m->len);
	rte_ring_enqueue_zc_elem_finish(lane, 1);
	shmr_dp_count(&lc->stats->ep_delivered[caller.slot], 1);
	note_bell(lc, caller.slot);
	if (v == SHMR_DP_COLLECT_DELIVER) {
		shmr_dp_count(&lc->stats->forwarded, 1);
		return 1;
	}
	/* Past the deadline: the caller got its timeout, the routee's
	 * reply is dropped. */
	shmr_dp_count(&lc->stats->failed, 1);
	shmr_dp_count(&lc->stats->router_failed[rs % SHMR_MAX_ENDPOINTS], 1);
	reply_dropped(lc, rs);
	return 1;
}

/*
 * Slot @p i, a reply to a collecting router: to this lcore's collector,
 * or to the lcore whose collector the ref names (over xout).  Returns 1
 * when handled, 0 when held back (the caller's lane or the ring to the
 * other lcore is full).
 */
static int collected_reply(struct shmr_dp_lcore *lc,
			   const struct shmr_dp_table *t,
			   const struct shmr_dp_poll *p, unsigned i)
{
	uint32_t ss = lc->env->slot_size;
	struct shmr_msg *m = (struct shmr_msg *)(lc->buf + (size_t)i * ss);
	struct shmr_dp_meta *meta = &lc->meta[i];
	uint32_t owner = shmr_dp_collect_ref_owner(m->ref);

	meta->what = META_QUIET;
	if (owner == lc->index) {
		if (!deliver_collected(lc, t, m))
			return 0;
	} else if (owner < t->nlcores && lc->xout[owner]) {
		if (shmr_lane_put(lc->xout[owner], (const unsigned char *)m, ss,
				  1) != 1)
			return 0;
		lc->xbells |= 1u << owner;
	} else {
		reply_dropped(lc, m->to.slot); /* no such collector */
	}
	commit(lc, p, m, meta);
	return 1;
}

/* Replies other lcores polled for our collector.  Returns slots handled. */
static __attribute__((noinline)) unsigned
drain_xin(struct shmr_dp_lcore *lc,
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
							(size_t)k * ss)))
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
	int ri;

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
	/* The kept call is a slot's size (collect.c's stride). */
	if (shmr_lane_put(shmr_dp_lane(lc->env, tgt->slot, lc->index),
			  (const unsigned char *)call, lc->env->slot_size,
			  1) != 1)
		return -1;
	bcast_put_count(lc, t, r, tgt, 1);
	return 0;
}

/* A call timed out: its caller gets SHMR_E_TIMEOUT from the router. */
static void tick_expire(void *ctx, const struct shmr_msg *reply)
{
	struct tick_ctx *k = ctx;
	struct shmr_dp_lcore *lc = k->lc;
	uint32_t rs = reply->from.slot % SHMR_MAX_ENDPOINTS;

	shmr_dp_count(&lc->stats->failed, 1);
	shmr_dp_count(&lc->stats->router_failed[rs], 1);
	if (!answerable(lc, k->t, reply->to))
		return;
	/* The reply is a header only (collect.h). */
	if (!put_one(shmr_dp_lane(lc->env, reply->to.slot, lc->index), reply,
		     lc->env->slot_size, SHMR_HDR_SIZE)) {
		shmr_dp_event(lc, SHMR_DP_EV_FAILED,
			      "lcore %u: the timeout of a call from %u.%u "
			      "(type %u) found its lane full: dropped",
			      lc->index, reply->to.slot, reply->to.gen,
			      reply->type);
		return;
	}
	shmr_dp_count(&lc->stats->ep_delivered[reply->to.slot], 1);
	note_bell(lc, reply->to.slot);
}

/* Run the collector's timers that fell due. */
static __attribute__((noinline)) void
collect_tick(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t)
{
	struct tick_ctx k = { lc, t };
	const struct shmr_dp_collect_ops ops = {
		.random = tick_random,
		.send = tick_send,
		.expire = tick_expire,
		.ctx = &k,
	};
	uint64_t now = lc->clock_ns();

	if (shmr_dp_collect_next_due(&lc->coll) > now)
		return;
	memset(lc->checked, 0, sizeof(lc->checked));
	(void)shmr_dp_collect_tick(&lc->coll, now, &ops);
}

/* ---- balancing ------------------------------------------------------- */

/*
 * Router @p ri's queue on this lcore, made at its first message: NULL
 * when that fails, or when the slot still holds another router's
 * messages (a router at that index replaced: they are failed first).
 */
static struct shmr_dp_balance *bal_queue(struct shmr_dp_lcore *lc,
					 const struct shmr_dp_router *r,
					 unsigned ri)
{
	struct shmr_dp_bal *b = &lc->bal[ri];
	uint32_t cap = lc->env->lane_size, ss = lc->env->slot_size;
	size_t size;

	if (b->mem) {
		if (b->router.slot == r->pid.slot &&
		    b->router.gen == r->pid.gen)
			return &b->q;
		if (shmr_dp_balance_count(&b->q) != 0)
			return NULL;
		b->router = r->pid;
		return &b->q;
	}
	size = (shmr_dp_balance_mem_size(cap, ss) + SHMR_CACHE_LINE - 1) &
	       ~(size_t)(SHMR_CACHE_LINE - 1);
	/* Once per router and lcore, never per message. */
	b->mem = aligned_alloc(SHMR_CACHE_LINE, size);
	if (!b->mem)
		return NULL;
	if (shmr_dp_balance_init(&b->q, b->mem, size, cap, ss) < 0) {
		free(b->mem);
		b->mem = NULL;
		return NULL;
	}
	b->router = r->pid;
	return &b->q;
}

/*
 * Slot @p i, for balancing router meta.bcast: into its queue (handed out
 * by balance_dispatch()).  A full queue holds the slot back in its source
 * lane, as a full inbox does (or fails it with mailbox_full = "fail").
 * Returns 1 when handled, 0 when held back.
 */
static int balance_push(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
			const struct shmr_dp_poll *p, unsigned i)
{
	uint32_t ss = lc->env->slot_size;
	struct shmr_msg *m = (struct shmr_msg *)(lc->buf + (size_t)i * ss);
	struct shmr_dp_meta *meta = &lc->meta[i];
	unsigned ri = meta->bcast;
	struct shmr_dp_balance *q = bal_queue(lc, &t->routers[ri], ri);

	if (q && shmr_dp_balance_push(q, m) == 0) {
		lc->bal_active |= 1u << ri;
		commit(lc, p, m, meta);
		return 1;
	}
	if (q && !meta->fail_full)
		return 0;
	return refuse_now(lc, t, p, m, meta, -SHMR_E_MAILBOX_FULL);
}

struct bal_ctx {
	struct shmr_dp_lcore *lc;
	const struct shmr_dp_table *t;
	const struct shmr_dp_router *r;
};

static int bal_send(void *ctx, uint32_t w, const struct shmr_msg *m)
{
	struct bal_ctx *k = ctx;
	const struct shmr_dp_target *tgt = &k->r->bc[w];

	if (shmr_lane_put(shmr_dp_lane(k->lc->env, tgt->slot, k->lc->index),
			  (const unsigned char *)m, k->lc->env->slot_size,
			  1) != 1)
		return -1;
	bcast_put_count(k->lc, k->t, k->r, tgt, 1);
	return 0;
}

/*
 * The queue of a router that can no longer take its messages (stopped, no
 * routees, gone): each fails with @p err as routing failures do.  Stops
 * at a call whose caller's lane is full (retried next round).
 */
static unsigned balance_fail(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t,
			     struct shmr_dp_bal *b, int32_t err)
{
	uint32_t ss = lc->env->slot_size, rs = b->router.slot;
	struct shmr_msg *m = (struct shmr_msg *)lc->buf;
	const struct shmr_msg *front;
	unsigned n = 0;

	while ((front = shmr_dp_balance_front(&b->q)) != NULL) {
		struct shmr_dp_meta meta = { .name = NULL };

		memcpy(m, front, ss);
		if (m->kind == SHMR_KIND_CALL) {
			struct shmr_pid caller = m->from;

			make_reply(m, err);
			if (answerable(lc, t, caller)) {
				if (shmr_lane_put(
					    shmr_dp_lane(lc->env, caller.slot,
							 lc->index),
					    (const unsigned char *)m, ss,
					    1) != 1)
					break; /* its lane is full: later */
				shmr_dp_count(&lc->stats->ep_delivered
						       [caller.slot],
					      1);
				note_bell(lc, caller.slot);
			}
		} else {
			(void)route_failed(lc, t, m, &meta, err);
			if (meta.what == META_ADMIN_FAILED)
				admin_put(lc, m, &meta);
		}
		(void)shmr_dp_balance_pop(&b->q, NULL);
		shmr_dp_count(&lc->stats->failed, 1);
		shmr_dp_count(&lc->stats->router_failed[rs % SHMR_MAX_ENDPOINTS],
			      1);
		n++;
	}
	if (n)
		shmr_dp_event(lc, SHMR_DP_EV_FAILED,
			      "lcore %u: %u queued message(s) of balancing "
			      "router endpoint %u failed: %s",
			      lc->index, n, rs, shmr_strerror(err));
	return n;
}

/*
 * Hand queued messages to the routees with credit: fewer than
 * SHMR_DP_BALANCE_CREDIT outstanding in their inbound lane of this lcore
 * (prod.tail, ours, minus cons.tail, which the worker stores with release
 * when it is done with a burst: the acquire below pairs with it).  A
 * routee without a worker gets nothing (its replacement finds what it had)
 * and is asked for one.  Returns messages handed out or failed.
 */
static __attribute__((noinline)) unsigned
balance_dispatch(struct shmr_dp_lcore *lc,
				 const struct shmr_dp_table *t)
{
	uint32_t act = lc->bal_active;
	unsigned total = 0;

	memset(lc->checked, 0, sizeof(lc->checked));
	while (act) {
		unsigned ri = (unsigned)__builtin_ctz(act);
		struct shmr_dp_bal *b = &lc->bal[ri];
		const struct shmr_dp_router *r = &t->routers[ri];
		uint32_t queued[SHMR_MAX_ROUTES];

		act &= act - 1;
		if (ri >= t->nrouters || r->pid.slot != b->router.slot ||
		    r->pid.gen != b->router.gen ||
		    r->behaviour != SHMR_BEH_BALANCING) {
			total += balance_fail(lc, t, b, -SHMR_E_NO_ROUTE);
		} else if (r->flags & SHMR_RF_STOPPED) {
			total += balance_fail(lc, t, b, -SHMR_E_NOT_ALLOWED);
		} else if (r->nbc == 0) {
			total += balance_fail(lc, t, b, -SHMR_E_NO_ROUTEES);
		} else {
			struct bal_ctx k = { lc, t, r };

			for (uint32_t j = 0; j < r->nbc; j++) {
				const struct shmr_dp_target *tgt = &r->bc[j];
				const struct rte_ring *lane;

				queued[j] = SHMR_DP_BALANCE_NO_ROOM;
				if (tgt->ask) {
					ask_worker(lc, t, tgt->slot);
					continue;
				}
				if (!target_sound(lc, tgt->slot))
					continue;
				lane = shmr_dp_lane(lc->env, tgt->slot,
						    lc->index);
				/* Our own tail: no partner.  cons.tail:
				 * acquire, pairs with the worker's release
				 * in dequeue finish. */
				queued[j] = __atomic_load_n(&lane->prod.tail,
							    __ATOMIC_RELAXED) -
					    __atomic_load_n(&lane->cons.tail,
							    __ATOMIC_ACQUIRE);
			}
			total += shmr_dp_balance_dispatch(
				&b->q, queued, r->nbc, SHMR_DP_BALANCE_CREDIT,
				bal_send, &k);
		}
		if (shmr_dp_balance_count(&b->q) == 0)
			lc->bal_active &= ~(1u << ri);
	}
	return total;
}

/* A slot classify() left to be handled on its own (ALONE_TARGET).  Kept
 * out of line: the forwarding loop stays as small as it was without it. */
static __attribute__((noinline)) int
special(struct shmr_dp_lcore *lc, const struct shmr_dp_table *t,
	const struct shmr_dp_poll *p, unsigned i)
{
	switch (lc->meta[i].what) {
	case META_COLLECT:
		return collect_call(lc, t, p, i);
	case META_COLLECTED:
		return collected_reply(lc, t, p, i);
	default: /* META_BALANCE */
		return balance_push(lc, t, p, i);
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
	n = shmr_lane_peek(src, lc->buf, ss, SHMR_DP_BURST);
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
				admin_put(lc, m, &lc->meta[i]);
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

void shmr_dp_ring_bells(struct shmr_dp_lcore *lc)
{
	int any = lc->xbells != 0;

	for (unsigned w = 0; w < SHMR_MAX_ENDPOINTS / 64; w++)
		any |= lc->bells[w] != 0;
	if (!any)
		return;
	/* B2: our enqueues (prod.tail release stores) before the sleepers'
	 * counts we read next; pairs with B1 in shmr_bell_prepare() (an
	 * endpoint's, or another lcore's for what we put in its xin). */
	atomic_thread_fence(memory_order_seq_cst);
	while (lc->xbells) {
		unsigned j = (unsigned)__builtin_ctz(lc->xbells);

		lc->xbells &= lc->xbells - 1;
		shmr_bell_ring_fenced(
			&((struct shmr_domain_hdr *)lc->env->base)
				 ->lcore_bell[j]);
	}
	for (unsigned w = 0; w < SHMR_MAX_ENDPOINTS / 64; w++) {
		uint64_t bits = lc->bells[w];

		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);

			bits &= bits - 1;
			shmr_bell_ring_fenced(
				&shmr_dp_ep(lc->env, w * 64 + b)->bell);
		}
		lc->bells[w] = 0;
	}
}

unsigned shmr_dp_poll_once_rcu(struct shmr_dp_lcore *lc,
			       struct shmr_dp_table *t)
{
	struct shmr_dp_poll_list *l = &t->lists[lc->index];
	unsigned total = 0;

	lc->nblocked = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		struct shmr_dp_poll *p = &l->e[i];

		if (p->quarantined)
			continue;
		p->blocked = 0;
		total += shmr_dp_forward_burst_rcu(lc, t, p, p->out_high);
		if (!p->quarantined)
			total += shmr_dp_forward_burst_rcu(lc, t, p, p->out);
	}
	/* The routing logics' own work, each only when it has any: replies
	 * other lcores polled for our collector, its timers, and the
	 * balancing queues' hand-outs. */
	if (lc->xin_any)
		total += drain_xin(lc, t);
	if (lc->coll.nlive)
		collect_tick(lc, t);
	if (lc->bal_active)
		total += balance_dispatch(lc, t);
	shmr_dp_count(&lc->stats->polls, 1);
	shmr_dp_ring_bells(lc);
	return total;
}

int shmr_dp_has_work_rcu(const struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t)
{
	const struct shmr_dp_poll_list *l = &t->lists[lc->index];

	for (uint32_t i = 0; i < l->n; i++) {
		const struct shmr_dp_poll *p = &l->e[i];

		if (p->quarantined || p->blocked)
			continue;
		if (shmr_lane_pending_sc(p->out_high) ||
		    shmr_lane_pending_sc(p->out))
			return 1;
	}
	for (uint32_t j = 0; lc->xin_any && j < lc->env->nlcores; j++)
		if (lc->xin[j] && !(lc->xheld & (1u << j)) &&
		    shmr_lane_pending_sc(lc->xin[j]))
			return 1;
	return 0;
}

int shmr_dp_sleep_ms(struct shmr_dp_lcore *lc, int ms)
{
	uint64_t due, now, left;

	/* A routee that frees up rings no bell: look again soon. */
	if (lc->bal_active && ms > 1)
		ms = 1;
	if (lc->coll.nlive == 0)
		return ms;
	due = shmr_dp_collect_next_due(&lc->coll);
	now = lc->clock_ns();
	if (due <= now)
		return 0;
	left = (due - now + 999999u) / 1000000u;
	return left < (uint64_t)ms ? (int)left : ms;
}
