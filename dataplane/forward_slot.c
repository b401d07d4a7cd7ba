/*
 * What the forward*.c files call across each other for one slot: the
 * admin endpoint's paths (a MessageRouteFailed, a lazy-restart ask, the
 * put into its lane) and failing a slot at once.  None of it runs for a
 * slot that is simply forwarded; forward.c and its glue (forward_bcast.c,
 * forward_collect.c, forward_balance.c) call in here and nothing here calls
 * back, so the files form no circle.  The per-slot helpers they all
 * inline stay static inline in forward_slot.h.
 */
#include <string.h>
#include <time.h>

#include <rte_ring.h>

#include <shmr/lane_copy.h>

#include "forward_slot.h"

/*
 * A send or call that will not be delivered: an error reply to a caller,
 * nothing for a send.  Returns where the reply goes, or NO_TARGET.
 */
uint32_t shmr_dp_fwd_refuse(struct shmr_dp_lcore *lc, struct shmr_msg *m,
			    struct shmr_dp_meta *meta, uint8_t verdict,
			    int32_t err)
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
uint32_t shmr_dp_fwd_admin_slot_rcu(struct shmr_dp_lcore *lc,
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
 * slot is put by shmr_dp_fwd_admin_put() once everything before it is
 * enqueued.
 */
uint32_t shmr_dp_fwd_route_failed_rcu(struct shmr_dp_lcore *lc,
				      const struct shmr_dp_table *t,
				      struct shmr_msg *m,
				      struct shmr_dp_meta *meta, int32_t err)
{
	uint32_t slot = shmr_dp_fwd_admin_slot_rcu(lc, t);
	size_t room = lc->env->slot_size - SHMR_HDR_SIZE - m->len;

	meta->verdict = SHMR_DP_FAIL;
	meta->err = err;
	meta->what = META_DROP;
	if (slot == NO_TARGET)
		return NO_TARGET;
	/* The name, if any, goes where a stamp would be: the admin
	 * endpoint measures no sojourn of failed sends. */
	m->flags = (uint8_t)((m->flags | SHMR_F_ROUTE_FAILED) &
			     ~SHMR_F_STAMPED);
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
void shmr_dp_fwd_ask_worker_rcu(struct shmr_dp_lcore *lc,
				const struct shmr_dp_table *t, uint32_t slot)
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
	meta.target = shmr_dp_fwd_admin_slot_rcu(lc, t);
	if (meta.target == NO_TARGET)
		return;
	lc->ask_next_ns[slot] = now + ASK_EVERY_NS;
	memset(note, 0, SHMR_HDR_SIZE);
	note->kind = SHMR_KIND_SEND;
	note->flags = SHMR_F_WANT_WORKER;
	note->to = (struct shmr_pid){ slot, t->ep[slot].gen };
	shmr_dp_fwd_admin_put(lc, note, &meta);
}


/*
 * Put a slot meant for the admin endpoint into its inbound lane of this
 * lcore.  Never holds the burst back: when that lane is full the slot is
 * dropped and counted (admin_dropped), so a slow control plane cannot
 * stall routing.
 */
void shmr_dp_fwd_admin_put(struct shmr_dp_lcore *lc, const struct shmr_msg *m,
			   const struct shmr_dp_meta *meta)
{
	const struct shmr_dp_env *env = lc->env;

	/* A lazy-restart ask comes from inside a burst: what is staged for
	 * the admin endpoint (sent to it directly) goes first. */
	if (lc->nstages)
		shmr_dp_fwd_stages_out(lc);
	if (shmr_lane_put_bounded(shmr_dp_lane(env, meta->target, lc->index),
				  env->lane_size, (const unsigned char *)m,
				  env->slot_size, 1) == 1) {
		shmr_dp_count(&lc->stats->admin, 1);
		shmr_dp_count(&shmr_dp_epc(lc, meta->target)->ep_delivered, 1);
		note_bell(lc, meta->target);
		return;
	}
	shmr_dp_count(&lc->stats->admin_dropped, 1);
	/* A dead letter's or an admin message's buffer (it would have
	 * travelled with it). */
	if (meta->has_buf)
		(void)shmr_arena_free_sent(&env->arena, &meta->buf,
					   m->from.slot);
	shmr_dp_event(lc, SHMR_DP_EV_FAILED,
		      "lcore %u: admin endpoint %u full: %s from %u.%u "
		      "(type %u) dropped",
		      lc->index, meta->target,
		      meta->what == META_ADMIN ? "admin message"
					       : "MessageRouteFailed",
		      m->from.slot, m->from.gen, m->type);
}


/*
 * Fail slot @p m (of the burst, with @p meta) with @p err now: a call gets
 * the error as its reply, a send becomes a MessageRouteFailed.  Returns 1
 * when handled, 0 when the caller's own lane is full (the burst stops
 * there, and the slot is decided afresh next round).
 */
int shmr_dp_fwd_refuse_now_rcu(struct shmr_dp_lcore *lc,
			       const struct shmr_dp_table *t,
			       const struct shmr_dp_poll *p, struct shmr_msg *m,
			       struct shmr_dp_meta *meta, int32_t err)
{
	uint32_t to;

	if (m->kind == SHMR_KIND_SEND) {
		(void)shmr_dp_fwd_route_failed_rcu(lc, t, m, meta, err);
		if (meta->what == META_ADMIN_FAILED)
			shmr_dp_fwd_admin_put(lc, m, meta);
		commit(lc, p, m, meta);
		return 1;
	}
	to = shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL, err);
	if (to != NO_TARGET) {
		if (shmr_lane_put_bounded(shmr_dp_lane(lc->env, to, lc->index),
					  lc->env->lane_size,
					  (const unsigned char *)m,
					  lc->env->slot_size, 1) != 1)
			return 0;
		shmr_dp_count(&shmr_dp_epc(lc, to)->ep_delivered, 1);
		note_bell(lc, to);
	}
	commit(lc, p, m, meta);
	return 1;
}

