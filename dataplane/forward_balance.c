/*
 * The balancing queues' glue: what the forwarding loop does with messages
 * for a balancing router (the queue itself is balance.c).
 *
 * Balancing: a message to a balancing router is copied into the lcore's
 * queue for that router (balance.h) and released from its source lane;
 * once per poll loop the queue hands messages to routees that hold none
 * from this lcore.  A full queue is backpressure like a full inbox.
 *
 * A message in an arena buffer: the queue's copy holds a reference,
 * counted as held in the owner word (arena.h), taken before the slot goes
 * into the queue (the original's own is given back as it is committed).
 * Handed to a routee, the copy gets a reference of its own before it is
 * published, and the held one is let go after; failed out of the queue,
 * its dead letter gets one before it is put, and the held one goes too.
 * So the control plane can tell a queued buffer from a leaked one, and
 * gives back what a killed dataplane held.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/lane_copy.h>

#include "forward_slot.h"

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
 * by shmr_dp_fwd_balance_dispatch_rcu()).  A full queue holds the slot
 * back in its source lane, as a full inbox does (or fails it with
 * mailbox_full = "fail").
 * Returns 1 when handled, 0 when held back.
 */
int shmr_dp_fwd_balance_push_rcu(struct shmr_dp_lcore *lc,
				 const struct shmr_dp_table *t,
				 const struct shmr_dp_poll *p, unsigned i)
{
	struct shmr_msg *m = burst_slot(lc, i);
	struct shmr_dp_meta *meta = &lc->meta[i];
	unsigned ri = meta->bcast;
	struct shmr_dp_balance *q = bal_queue(lc, &t->routers[ri], ri);

	if (q && meta->has_buf &&
	    !shmr_arena_hold(&lc->env->arena, &meta->buf, p->slot))
		return shmr_dp_fwd_refuse_now_rcu(lc, t, p, m, meta,
						  -SHMR_E_NOT_ALLOWED);
	if (q && shmr_dp_balance_push(q, m) == 0) {
		struct shmr_dp_bal *b = &lc->bal[ri];

		if (!b->listed) {
			/* At most max_routers listed: one entry each. */
			b->listed = 1;
			lc->bal_act[lc->bal_active++] = (uint16_t)ri;
		}
		commit(lc, p, m, meta);
		return 1;
	}
	if (q && meta->has_buf)
		(void)shmr_arena_drop_held(&lc->env->arena, &meta->buf);
	if (q && !meta->fail_full)
		return 0;
	return shmr_dp_fwd_refuse_now_rcu(lc, t, p, m, meta,
					  -SHMR_E_MAILBOX_FULL);
}

struct bal_ctx {
	struct shmr_dp_lcore *lc;
	const struct shmr_dp_table *t;
	const struct shmr_dp_router *r;
};

/* The arena reference of a queued slot @p m, if it has one. */
static int queued_ref(const struct shmr_msg *m, struct shmr_buf_ref *r)
{
	if (!(m->flags & SHMR_F_ARENA) || m->len != sizeof(*r))
		return 0;
	memcpy(r, m->data, sizeof(*r));
	return 1;
}

static int bal_send(void *ctx, uint32_t w, const struct shmr_msg *m)
{
	struct bal_ctx *k = ctx;
	const struct shmr_dp_target *tgt = &k->r->bc[w];
	const struct shmr_arena_view *v = &k->lc->env->arena;
	struct shmr_buf_ref ref;
	int buf = queued_ref(m, &ref);

	/* The copy's own reference before it is published (a word a peer
	 * wrote meanwhile: the held one goes with the copy, a leak). */
	if (buf && !shmr_arena_share(v, &ref, m->from.slot, 1))
		buf = 0;
	if (shmr_lane_put_bounded(
		    shmr_dp_lane(k->lc->env, tgt->slot, k->lc->index),
		    k->lc->env->lane_size, (const unsigned char *)m,
		    k->lc->env->slot_size, 1) != 1) {
		if (buf)
			(void)shmr_arena_free_sent(v, &ref, m->from.slot);
		return -1;
	}
	if (buf)
		(void)shmr_arena_drop_held(v, &ref);
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
		struct shmr_buf_ref ref;
		int buf;

		memcpy(m, front, ss);
		buf = queued_ref(m, &ref);
		if (m->kind == SHMR_KIND_CALL) {
			struct shmr_pid caller = m->from;

			make_reply(m, err);
			if (answerable(lc, t, caller)) {
				if (shmr_lane_put_bounded(
					    shmr_dp_lane(lc->env, caller.slot,
							 lc->index),
					    lc->env->lane_size,
					    (const unsigned char *)m, ss,
					    1) != 1)
					break; /* its lane is full: later */
				shmr_dp_count(&shmr_dp_epc(lc, caller.slot)->ep_delivered,
					      1);
				note_bell(lc, caller.slot);
			}
		} else {
			(void)shmr_dp_fwd_route_failed_rcu(lc, t, m, &meta,
							   err);
			/* Its dead letter takes a reference of its own
			 * (given back if the admin lane is full). */
			if (meta.what == META_ADMIN_FAILED && buf) {
				meta.buf = ref;
				meta.has_buf = shmr_arena_share(
					&lc->env->arena, &ref, m->from.slot, 1);
				if (!meta.has_buf) {
					m->flags = (uint8_t)(m->flags &
							     ~(SHMR_F_ARENA |
							       SHMR_F_ROUTE_NAME));
					m->len = 0;
				}
			}
			if (meta.what == META_ADMIN_FAILED)
				shmr_dp_fwd_admin_put(lc, m, &meta);
		}
		if (buf)
			(void)shmr_arena_drop_held(&lc->env->arena, &ref);
		(void)shmr_dp_balance_pop(&b->q, NULL);
		shmr_dp_count(&lc->stats->failed, 1);
		shmr_dp_count(&shmr_dp_epc(lc, rs)->router_failed,
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
unsigned shmr_dp_fwd_balance_dispatch_rcu(struct shmr_dp_lcore *lc,
					  const struct shmr_dp_table *t)
{
	unsigned total = 0;

	shmr_dp_checked_clear(lc);
	/* The queues that hold something, in the order they were listed;
	 * an emptied one leaves (the last takes its place, looked at
	 * next). */
	for (uint32_t a = 0; a < lc->bal_active;) {
		unsigned ri = lc->bal_act[a];
		struct shmr_dp_bal *b = &lc->bal[ri];
		const struct shmr_dp_router *r = &t->routers[ri];
		uint32_t queued[SHMR_MAX_ROUTES];

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
					shmr_dp_fwd_ask_worker_rcu(lc, t,
								   tgt->slot);
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
		if (shmr_dp_balance_count(&b->q) == 0) {
			b->listed = 0;
			lc->bal_act[a] = lc->bal_act[--lc->bal_active];
		} else {
			a++;
		}
	}
	return total;
}

