/*
 * Broadcast: one slot, many targets (see forward.c for the one-target
 * path this file leaves).
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
 *   - A slot with an arena buffer (SHMR_F_ARENA) shares it among its
 *     copies (arena.h): a reference is added for every copy before the
 *     copy is published (one CAS for a batch's routees), given back when
 *     its enqueue did not happen, and the original's own is given back
 *     when it is committed.  A copy whose reference cannot be added (a
 *     peer wrote the word, or SHMR_BUF_REFS_MAX) fails as a copy to a
 *     full routee does, with SHMR_E_NOT_ALLOWED.
 */
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include <shmr/lane_copy.h>

#include "forward_slot.h"

/*
 * The copy of @p m for routee @p to failed with @p err: counted failed for
 * the broadcasting router; a send's copy goes to the admin endpoint as a
 * MessageRouteFailed naming the routee.  @p m itself is left as it is: the
 * other routees get it.
 */
void shmr_dp_fwd_bcast_copy_failed_rcu(struct shmr_dp_lcore *lc,
				       const struct shmr_dp_table *t,
				       const struct shmr_dp_router *r,
				       const struct shmr_msg *m,
				       const struct shmr_dp_target *to,
				       int32_t err)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *copy = (struct shmr_msg *)buf;
	struct shmr_dp_meta meta = { .name = to->name };

	shmr_dp_count(&lc->stats->failed, 1);
	shmr_dp_count(&shmr_dp_epc(lc, r->pid.slot)->router_failed,
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
	(void)shmr_dp_fwd_route_failed_rcu(lc, t, copy, &meta, err);
	if (meta.what != META_ADMIN_FAILED)
		return;
	/* The dead letter is one more copy of a buffer: its reference is
	 * added before the copy is put (given back if the admin lane is
	 * full); when it cannot be, the letter goes without its payload. */
	if ((copy->flags & SHMR_F_ARENA) && copy->len == sizeof(meta.buf)) {
		memcpy(&meta.buf, copy->data, sizeof(meta.buf));
		meta.has_buf = shmr_arena_share(&lc->env->arena, &meta.buf,
						m->from.slot, 1);
		if (!meta.has_buf) {
			copy->flags = (uint8_t)(copy->flags &
						~(SHMR_F_ARENA | SHMR_F_ROUTE_NAME));
			copy->len = 0;
		}
	}
	shmr_dp_fwd_admin_put(lc, copy, &meta);
}

/* A reference for @p n more copies of the slot @p meta describes, sent by
 * endpoint slot @p sender (none needed without a buffer).  1 or 0. */
static int copies_ref(const struct shmr_dp_lcore *lc,
		      const struct shmr_dp_meta *meta, uint32_t sender,
		      uint32_t n)
{
	return !meta->has_buf ||
	       shmr_arena_share(&lc->env->arena, &meta->buf, sender, n);
}

/* Give back the reference of a copy that was not published. */
static void copy_unref(const struct shmr_dp_lcore *lc,
		       const struct shmr_dp_meta *meta, uint32_t sender)
{
	if (meta->has_buf)
		(void)shmr_arena_free_sent(&lc->env->arena, &meta->buf, sender);
}

/* The progress kept for the head slot of @p src, when it applies to slot
 * @p i of this burst broadcast by @p r; else NULL. */
static struct shmr_dp_bcast_progress *
bcast_progress(struct shmr_dp_lcore *lc, const struct shmr_dp_poll *p,
	       const struct rte_ring *src, const struct shmr_dp_router *r,
	       unsigned i)
{
	struct shmr_dp_bcast_progress *bp = &lc->bcast[p->slot];
	/* Where this burst began in @p src (the round may hold slots before
	 * it reserved: forward.c). */
	uint32_t tail = lc->burst_pos;

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
	struct shmr_msg *m = (struct shmr_msg *)(lc->burst + (size_t)i * ss);
	struct shmr_dp_meta *meta = &lc->meta[i];
	struct shmr_dp_bcast_progress *bp = bcast_progress(lc, p, src, r, i);
	uint64_t *served = lc->bcast_scratch;
	size_t served_size = lc->ep_words * sizeof(*served);
	int held = 0, reached = 0;
	int32_t err = -SHMR_E_NO_ROUTEES;
	uint32_t to;

	memset(served, 0, served_size);
	if (bp) {
		memcpy(served, bp->served, served_size);
		for (unsigned w = 0; w < lc->ep_words; w++)
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
			shmr_dp_fwd_bcast_copy_failed_rcu(lc, t, r, m, tgt,
							  err);
			continue;
		}
		if (!copies_ref(lc, meta, p->slot, 1)) {
			err = -SHMR_E_NOT_ALLOWED;
			shmr_dp_fwd_bcast_copy_failed_rcu(lc, t, r, m, tgt,
							  err);
			continue;
		}
		if (shmr_lane_put_bounded(shmr_dp_lane(env, slot, lc->index),
					  env->lane_size,
					  (const unsigned char *)m, ss,
					  1) == 1) {
			served[slot / 64] |= bit;
			reached = 1;
			bcast_put_count(lc, t, r, tgt, 1);
			continue;
		}
		copy_unref(lc, meta, p->slot);
		if (meta->fail_full) {
			err = -SHMR_E_MAILBOX_FULL;
			shmr_dp_fwd_bcast_copy_failed_rcu(lc, t, r, m, tgt,
							  err);
			continue;
		}
		held = 1;
	}
	if (held) {
		uint32_t tail = lc->burst_pos;

		lc->bcast[p->slot] = (struct shmr_dp_bcast_progress){
			.active = 1,
			.high = src == p->out_high,
			.gen = p->gen,
			.pos = tail + i,
			.router = r->pid.slot,
			.served = lc->bcast[p->slot].served,
		};
		memcpy(lc->bcast[p->slot].served, served, served_size);
		return 0;
	}
	if (bp)
		bp->active = 0;
	if (reached || m->kind != SHMR_KIND_CALL) {
		commit(lc, p, m, meta);
		return 1;
	}
	/* A call that reached nobody: the caller hears why. */
	to = shmr_dp_fwd_refuse(lc, m, meta, SHMR_DP_FAIL, err);
	if (to != NO_TARGET) {
		if (shmr_lane_put_bounded(shmr_dp_lane(env, to, lc->index),
					  env->lane_size,
					  (const unsigned char *)m, ss,
					  1) != 1)
			return 0;
		shmr_dp_count(&shmr_dp_epc(lc, to)->ep_delivered, 1);
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
	const unsigned char *src = lc->burst + (size_t)i * ss;

	if (fail_full)
		return 0;
	for (j = 0; j < r->nbc; j++)
		if (!target_sound(lc, r->bc[j].slot))
			return 0;
	for (j = 0; j < r->nbc && k; j++) {
		unsigned got = shmr_lane_reserve_bounded(
			shmr_dp_lane(env, r->bc[j].slot, lc->index),
			env->lane_size, ss, k, &zcd[j]);

		if (got < k)
			k = got;
	}
	/* Every routee has room for k: each buffer the k slots carry gets
	 * its copies' references before any copy is published; the first
	 * slot whose reference cannot be added ends the batch there. */
	for (unsigned s = 0; k && j == r->nbc && s < k; s++) {
		const struct shmr_msg *m =
			(const struct shmr_msg *)(src + (size_t)s * ss);

		if (!copies_ref(lc, &lc->meta[i + s], m->from.slot, r->nbc))
			k = s;
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
int shmr_dp_fwd_bcast_flush_rcu(struct shmr_dp_lcore *lc,
				const struct shmr_dp_table *t,
				const struct shmr_dp_poll *p,
				const struct rte_ring *src, struct run *run,
				unsigned *handled)
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
			       (const struct shmr_msg *)(lc->burst +
							 (size_t)j * ss),
			       &lc->meta[j]);
		i += k;
		*handled = i;
	}
	run->len = 0;
	return 1;
}

