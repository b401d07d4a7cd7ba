/*
 * The payload arena as the control plane keeps it (control/arena.c):
 * taking back what a dead or closed endpoint held.
 */
#ifndef SHMR_CTL_ARENA_H
#define SHMR_CTL_ARENA_H

#include <stdint.h>

#include <shmr/arena.h>

struct rte_ring;
struct shmr_msg;

#include "domain.h"

/**
 * Endpoint slot @p slot's holder is gone (its worker died, or its client
 * endpoint was closed or its process died, and its outbound lanes are
 * drained or given up): every buffer it holds unsent (WRITING) is freed,
 * but one it kept from a slot it had not released (that slot, still in
 * its inbound lane, is redelivered with it: it goes back to the slot's
 * sender); and every buffer SENT, by it or by anyone, that no slot in any
 * lane refers to any more (a receiver, this one or another, died between
 * its slot's release and its give-back), but one its live holder names
 * as the buffer it is sending (arena.h), left for
 * shmr_ctl_arena_recheck().  A buffer a slot still refers to stays, for
 * its receiver (or the receiver's replacement, redelivered) to free.
 *
 * Context:     the control plane's loop; before @p slot has a new holder
 *              (a restarted worker, a reused slot).
 * Concurrency: the dataplane and live peers run meanwhile: the lanes are
 *              read with acquire loads (outbound lanes first: a slot moves
 *              only from there to an inbound lane), every free is one CAS.
 * Returns:     the number of buffers freed (also logged, and counted in
 *              d->arena_reclaimed).
 */
unsigned shmr_ctl_arena_reclaim(struct shmr_ctl_domain *d, uint32_t slot);

/**
 * The dataplane died: every reference it held in its private memory (a
 * balancing queue's, counted as held in the owner words: arena.h) is
 * given back, freeing the buffers nothing else refers to; then every
 * SHARED buffer no slot in any lane refers to is freed (as
 * shmr_ctl_arena_reclaim() does, for no holder: a reply that crossed
 * between lcores held, its source lane released, forward_collect.c),
 * and one whose count is below the slots that refer to it is raised to
 * them (arena.h: a death between an original's commit and its source
 * lane's release).
 * Context: the control plane's loop, after the dataplane's exit and
 *          before the next one starts.
 * Concurrency: live receivers give back meanwhile: one CAS loop a word.
 * Returns: the number of words changed (logged).
 */
unsigned shmr_ctl_arena_dataplane_gone(struct shmr_ctl_domain *d);

/* How often, and how many times after a reclaim that left shared
 * buffers referred to, or SENT ones named as being sent,
 * shmr_ctl_arena_recheck() looks again. */
#define SHMR_CTL_ARENA_RECHECK_MS 250u
#define SHMR_CTL_ARENA_RECHECKS 20u

/**
 * A death (a holder's, a receiver's or the dataplane's) can leave a shared
 * buffer counting one reference more than will ever be given back (a
 * process killed between its slot's release and its give-back, or the
 * dataplane between an add and its publish); a reclaim frees such a
 * buffer only once no slot in any lane refers to it, which is later when
 * other copies are still queued.  So after a reclaim that kept shared
 * buffers, the shared ones no slot refers to are freed again every
 * SHMR_CTL_ARENA_RECHECK_MS, SHMR_CTL_ARENA_RECHECKS times (each reclaim
 * that keeps some starts the count again); an idle appliance has none
 * due.
 * Context: the control plane's loop, after each event.
 * Returns: the next time (ms, shmr_ctl_now_ms()) it is due, 0 when none.
 */
uint64_t shmr_ctl_arena_recheck(struct shmr_ctl_domain *d, uint64_t now);

/**
 * The lanes of endpoint slot @p slot are about to be initialised again
 * (the slot is reused): the buffers their slots refer to are freed, since
 * nobody will receive those slots any more.
 *
 * Context: the control plane's loop, when nobody produces into or
 *          consumes from @p slot's lanes (before shmr_ctl_slot_reinit()).
 * Returns: the number of buffers freed.
 */
unsigned shmr_ctl_arena_drop_lanes(struct shmr_ctl_domain *d, uint32_t slot);

/**
 * A closed client endpoint @p slot (freed, and every lcore has applied
 * the spec without it: nothing is put into its inbound lanes any more,
 * and nobody will take from them): the arena references of what is left
 * there (a reply to a caller killed before it read it) are given back,
 * and those slots taken (cons.tail moved to prod.tail), so that the
 * drop at the slot's reuse does not give them back again.
 *
 * Context: the control plane's loop, under that condition (drain.c).
 * Returns: the number of buffers freed (logged).
 */
unsigned shmr_ctl_arena_drop_inbound(struct shmr_ctl_domain *d, uint32_t slot);

/** As shmr_ctl_arena_drop_lanes(), for one lane @p r (its slots from the
 *  consumer tail to the producer tail); under the same condition. */
unsigned shmr_ctl_arena_drop_lane(struct shmr_ctl_domain *d,
				  const struct rte_ring *r);

/**
 * The payload of dead letter or admin slot @p m flagged SHMR_F_ARENA: its
 * reference checked against our copy of the classes and the owner word's
 * generation (the slot came from a peer).
 * Context: the control plane's loop, while the slot still holds its
 *          reference (before shmr_ctl_arena_give_back()).
 * Returns: the bytes and their count in @p *len; NULL (and 0) when @p m
 *          has no sound reference.
 */
const void *shmr_ctl_arena_payload(const struct shmr_ctl_domain *d,
				   const struct shmr_msg *m, uint32_t *len);

/**
 * The admin endpoint is done with slot @p m: its buffer's reference, if
 * it has one, is given back (as a receiver's next burst does).
 * Context: the control plane's loop.  Concurrency: one CAS loop.
 */
void shmr_ctl_arena_give_back(struct shmr_ctl_domain *d,
			      const struct shmr_msg *m);

/**
 * A new buffer for endpoint slot @p holder (the admin endpoint, to replay
 * a dead letter), with @p len bytes from @p p, marked SENT: @p r is the
 * reference to send (its len set).
 * Context: the control plane's loop.  Never blocks.
 * Errors:  -SHMR_E_TOO_BIG (no class holds @p len), -SHMR_E_NO_BUFFER
 *          (the class is empty now).
 */
int shmr_ctl_arena_send_copy(struct shmr_ctl_domain *d, uint32_t holder,
			     const void *p, uint32_t len,
			     struct shmr_buf_ref *r);

/** Free a buffer shmr_ctl_arena_send_copy() made whose slot was not sent. */
void shmr_ctl_arena_unsend(struct shmr_ctl_domain *d, uint32_t holder,
			   const struct shmr_buf_ref *r);

struct shmr_ctl_kv;
struct shmr_ctl_arena_counters;

/**
 * The arena's figures per class (the ARENA lines of counters.def) into
 * @p out, one per class; returns the classes (0 without an arena).  free
 * and in_use are a snapshot of the owner words (relaxed loads),
 * reclaimed what this control plane took back, alloc_failures what
 * allocators (peers) counted.  Writes nothing in the domain.
 * Context: the control plane's loop.
 */
uint32_t shmr_ctl_arena_counters_read(
	const struct shmr_ctl_domain *d,
	struct shmr_ctl_arena_counters out[SHMR_ARENA_MAX_CLASSES]);

/**
 * The arena's figures for STATUS, per class (keys arena:SIZE:count, free,
 * in_use, reclaimed, alloc_failures; nothing without an arena).  in_use
 * is a snapshot of the owner words; alloc_failures is what allocators
 * (peers) counted.
 * Context: the control plane's loop.
 */
void shmr_ctl_arena_status(struct shmr_ctl_domain *d, struct shmr_ctl_kv *kv);

#endif
