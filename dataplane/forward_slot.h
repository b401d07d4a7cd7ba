/*
 * One slot of a burst: what forward.c and its glue for broadcast
 * (forward_bcast.c), the reply collector (forward_collect.c) and the
 * balancing queues (forward_balance.c) share, and the burst and round's
 * end that the poll loop (forward_poll.c) calls.  Internal, not for direct
 * inclusion outside dataplane/: only the forward*.c files include it.
 *
 * The per-slot helpers are static inline here, as they were inside
 * forward.c, so every file that handles a slot inlines them; the larger
 * helpers that more than one file calls are defined once (in
 * forward_slot.c or the glue file named at each) and declared first.
 */
#ifndef SHMR_DP_FORWARD_SLOT_H
#define SHMR_DP_FORWARD_SLOT_H

#include <stdatomic.h>
#include <stdint.h>

#include <rte_ring.h>

#include "dataplane_internal.h"
#include "lcore.h"
#include "table.h"

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

enum bad_why { BAD_KIND = 1, BAD_LEN, BAD_PRIO, BAD_FROM, BAD_TO, BAD_BUF };

static const char *const bad_names[] = {
	[BAD_KIND] = "kind", [BAD_LEN] = "length", [BAD_PRIO] = "priority",
	[BAD_FROM] = "sender", [BAD_TO] = "target",
	[BAD_BUF] = "arena buffer reference",
};

#define NO_TARGET UINT32_MAX
#define BCAST_TARGET (UINT32_MAX - 1) /* classify(): see meta.bcast */
#define ALONE_TARGET (UINT32_MAX - 2) /* classify(): handled on its own,
				       * by meta.what (special()) */

struct run {
	unsigned start, len;
	uint32_t target; /* BCAST_TARGET: broadcast by router `router` */
	unsigned router;
};

/* ---- defined once, called across forward*.c ------------------------ */

/* forward_slot.c: the control plane's admin endpoint when the table knows
 * it as live and its inbound lane of this lcore is sound; else NO_TARGET. */
uint32_t shmr_dp_fwd_admin_slot_rcu(struct shmr_dp_lcore *lc,
				    const struct shmr_dp_table *t);

/* forward_slot.c: a send that failed routing, as a MessageRouteFailed for the
 * admin endpoint (put by shmr_dp_fwd_admin_put()).  Returns NO_TARGET. */
uint32_t shmr_dp_fwd_route_failed_rcu(struct shmr_dp_lcore *lc,
				      const struct shmr_dp_table *t,
				      struct shmr_msg *m,
				      struct shmr_dp_meta *meta, int32_t err);

/* forward_slot.c: ask the control plane for a worker for route inbox @p slot
 * (lazy restart), rate-limited per slot and lcore. */
void shmr_dp_fwd_ask_worker_rcu(struct shmr_dp_lcore *lc,
				const struct shmr_dp_table *t, uint32_t slot);

/* forward.c: every stage of the round out now (before a direct enqueue
 * into any lane: see its essay, "Batches per destination"). */
void shmr_dp_fwd_stages_out(struct shmr_dp_lcore *lc);

/* forward.c: one burst from @p src, an outbound lane of @p p, into the
 * round's stages (shmr_dp_forward_burst_rcu() without the round's end);
 * returns the slots taken.  Called by forward_poll.c's round. */
unsigned shmr_dp_fwd_burst_rcu(struct shmr_dp_lcore *lc,
			       const struct shmr_dp_table *t,
			       struct shmr_dp_poll *p, struct rte_ring *src);

/* forward.c: end of a round (or of a burst that stopped): every stage
 * out, then every source lane's reserved slots released, then the pool
 * is free. */
void shmr_dp_fwd_round_out(struct shmr_dp_lcore *lc);

/* forward_slot.c: put a slot into the admin endpoint's inbound lane; dropped
 * and counted when that lane is full. */
void shmr_dp_fwd_admin_put(struct shmr_dp_lcore *lc, const struct shmr_msg *m,
			   const struct shmr_dp_meta *meta);

/* forward_slot.c: fail slot @p m now.  Returns 1 handled, 0 held back. */
int shmr_dp_fwd_refuse_now_rcu(struct shmr_dp_lcore *lc,
			       const struct shmr_dp_table *t,
			       const struct shmr_dp_poll *p, struct shmr_msg *m,
			       struct shmr_dp_meta *meta, int32_t err);

/* forward_bcast.c: deliver a run broadcast by one router.  Returns 1 when
 * all of it is handled, 0 when a full lane stopped it (*handled says
 * where). */
int shmr_dp_fwd_bcast_flush_rcu(struct shmr_dp_lcore *lc,
				const struct shmr_dp_table *t,
				const struct shmr_dp_poll *p,
				const struct rte_ring *src, struct run *run,
				unsigned *handled);

/* forward_bcast.c: the copy of @p m for routee @p to failed with @p err. */
void shmr_dp_fwd_bcast_copy_failed_rcu(struct shmr_dp_lcore *lc,
				       const struct shmr_dp_table *t,
				       const struct shmr_dp_router *r,
				       const struct shmr_msg *m,
				       const struct shmr_dp_target *to,
				       int32_t err);

/* forward_collect.c: slot @p i, a call for a collecting router, and a
 * reply to one.  Return 1 handled, 0 held back. */
int shmr_dp_fwd_collect_call_rcu(struct shmr_dp_lcore *lc,
				 const struct shmr_dp_table *t,
				 const struct shmr_dp_poll *p, unsigned i);
int shmr_dp_fwd_collect_reply_rcu(struct shmr_dp_lcore *lc,
				  const struct shmr_dp_table *t,
				  const struct shmr_dp_poll *p, unsigned i);

/* forward_collect.c, once per poll loop: replies other lcores polled for
 * our collector (returns slots handled), and the collector's timers. */
unsigned shmr_dp_fwd_xin_drain_rcu(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t);
void shmr_dp_fwd_collect_tick_rcu(struct shmr_dp_lcore *lc,
				  const struct shmr_dp_table *t);

/* forward_balance.c: slot @p i into its balancing router's queue (1
 * handled, 0 held back), and, once per poll loop, the queues' hand-outs
 * (returns messages handed out or failed). */
int shmr_dp_fwd_balance_push_rcu(struct shmr_dp_lcore *lc,
				 const struct shmr_dp_table *t,
				 const struct shmr_dp_poll *p, unsigned i);
unsigned shmr_dp_fwd_balance_dispatch_rcu(struct shmr_dp_lcore *lc,
					  const struct shmr_dp_table *t);

/* ---- per-slot helpers, static inline ---------------------------------- */

/* Slot @p i of the burst: the lcore's private copy of it. */
static inline struct shmr_msg *burst_slot(const struct shmr_dp_lcore *lc,
					  unsigned i)
{
	return (struct shmr_msg *)(lc->burst + (size_t)i * lc->env->slot_size);
}

static inline void note_bell(struct shmr_dp_lcore *lc, uint32_t slot)
{
	uint64_t *w = &lc->bells[slot / 64];

	if (!*w)
		lc->bell_w[lc->nbell_w++] = slot / 64;
	*w |= 1ull << (slot % 64);
}

/*
 * Is the inbound lane of @p slot numbered after this lcore sound?  Checked
 * once per round and target: the check reads the consumer's tail, a line
 * the consumer keeps writing, so doing it per slot (or per burst, with 16
 * targets in each) would cost a miss each.  A lane its consumer breaks
 * later in the round cannot make a copy leave it (the bounded copies,
 * shm/include/shmr/lane_copy.h); the next round's check quarantines it.
 */
static inline int target_sound(struct shmr_dp_lcore *lc, uint32_t slot)
{
	uint64_t bit = 1ull << (slot % 64);

	if (lc->checked[slot / 64] & bit)
		return 1;
	if (!shmr_lane_valid_sp(shmr_dp_lane(lc->env, slot, lc->index),
				lc->env->lane_size))
		return 0;
	if (!lc->checked[slot / 64])
		lc->checked_w[lc->nchecked_w++] = slot / 64;
	lc->checked[slot / 64] |= bit;
	return 1;
}

/* Turn the call in @p m (our private copy) into its error reply. */
static inline void make_reply(struct shmr_msg *m, int32_t status)
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
 * nothing for a send.  Returns where the reply goes, or NO_TARGET.  Out
 * of line (forward_slot.c), as it was a call in the burst before the
 * split: inlined at each of its callers it made the burst slower.
 */
uint32_t shmr_dp_fwd_refuse(struct shmr_dp_lcore *lc, struct shmr_msg *m,
			    struct shmr_dp_meta *meta, uint8_t verdict,
			    int32_t err);

/* Count a handled slot (and log what was dropped). */
static inline void commit(struct shmr_dp_lcore *lc,
			  const struct shmr_dp_poll *p,
			  const struct shmr_msg *m,
			  const struct shmr_dp_meta *meta)
{
	struct shmr_lcore_stats *st = lc->stats;
	uint32_t last;

	/* A refused slot's arena buffer goes back (an error reply carries
	 * none; a dead letter or an admin message takes it to the admin
	 * endpoint, whose lane holds it as any receiver's, or
	 * shmr_dp_fwd_admin_put() gives it back), and so does a copied or queued original's reference (its
	 * copies added their own before they were published, a balancing
	 * queue holds one: arena.h). */
	if (__builtin_expect(meta->has_buf, 0) &&
	    (meta->what == META_DROP || meta->what == META_REPLY ||
	     meta->what == META_BCAST || meta->what == META_COLLECT ||
	     meta->what == META_BALANCE))
		(void)shmr_arena_free_sent(&lc->env->arena, &meta->buf,
					   p->slot);
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
	case META_ADMIN: /* counted by shmr_dp_fwd_admin_put() */
		return;
	case META_FORWARD: /* forwarded: counted per run by flush() */
		for (uint32_t i = 0; i < meta->nrouters; i++)
			shmr_dp_count(&shmr_dp_epc(lc, meta->routers[i])->router_forwarded,
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
			shmr_dp_count(&shmr_dp_epc(lc, meta->routers[i])->router_forwarded,
				      1);
		return;
	default:
		break;
	}
	/* Refused: every router before the last one did forward. */
	for (uint32_t i = 0; i + 1 < meta->nrouters; i++)
		shmr_dp_count(&shmr_dp_epc(lc, meta->routers[i])->router_forwarded, 1);
	last = meta->nrouters ? meta->routers[meta->nrouters - 1] : NO_TARGET;
	if (meta->verdict == SHMR_DP_DISCARD) {
		shmr_dp_count(&st->discarded, 1);
		if (last != NO_TARGET)
			shmr_dp_count(&shmr_dp_epc(lc, last)->router_discarded, 1);
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
		shmr_dp_count(&shmr_dp_epc(lc, last)->router_failed, 1);
	if (meta->quiet)
		return;
	shmr_dp_event(lc, SHMR_DP_EV_FAILED,
		      "lcore %u: %s from %u.%u (type %u) failed%s%.*s: %s",
		      lc->index, meta->what == META_REPLY ? "call" : "message",
		      p->slot, p->gen, m->type, meta->name ? " at route " : "",
		      SHMR_NAME_MAX - 1, meta->name ? meta->name : "",
		      shmr_strerror(meta->err));
}

/* A live client endpoint of the table, whose inbound lane of this lcore
 * is sound: somewhere an answer can go. */
static inline int answerable(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_table *t, struct shmr_pid pid)
{
	return pid.slot < t->max_endpoints && pid.gen != 0 &&
	       t->ep[pid.slot].router < 0 &&
	       t->ep[pid.slot].state == SHMR_EP_ACTIVE &&
	       t->ep[pid.slot].gen == pid.gen && target_sound(lc, pid.slot);
}

/*
 * @p k copies went into routee @p to's inbound lane: count them.  forwarded
 * counts a broadcast message once per routee it was delivered to, and so
 * does the broadcasting router's forwarded; delivered counts per inbox.
 */
static inline void bcast_put_count(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t,
				   const struct shmr_dp_router *r,
				   const struct shmr_dp_target *to, unsigned k)
{
	struct shmr_lcore_stats *st = lc->stats;

	shmr_dp_count(&st->forwarded, k);
	shmr_dp_count(&shmr_dp_epc(lc, r->pid.slot)->router_forwarded,
		      k);
	shmr_dp_count(&shmr_dp_epc(lc, to->slot)->ep_delivered, k);
	note_bell(lc, to->slot);
	if (to->ask)
		shmr_dp_fwd_ask_worker_rcu(lc, t, to->slot);
}

#endif
