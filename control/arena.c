/*
 * Taking back a gone holder's arena buffers (the owner-word protocol is in
 * shm/include/shmr/arena.h).
 *
 * Why nothing is freed while a slot still refers to it.  A buffer SENT by
 * endpoint slot S is referred to only by slots S put into its outbound
 * lanes (the dataplane checks that the sender holds it), and the dataplane
 * moves such a slot only from there into an inbound lane: it copies the
 * slot in and publishes it (prod.tail, release) before it releases it
 * from the outbound lane (cons.tail).  S is gone and puts nothing new.
 * So we read S's outbound lanes first, then every inbound lane: a slot
 * that has left the outbound lanes when we read them was already in its
 * inbound lane, where we read it next; from there it leaves only when its
 * receiver releases it, and the receiver then frees the buffer itself (our
 * CAS and its CAS expect the same word: one of them wins, the other finds
 * it changed).  Slots are read from each lane's consumer tail, so a slot
 * received and not yet released (a worker's burst, redelivered if that
 * worker dies) still counts.  A lane whose indices are not sound is not
 * walked: then every SENT buffer is kept (a leak is the safe side).
 *
 * Shared buffers (SHARED, arena.h's essay).  Each reclaim also recomputes
 * them from the lanes: a SHARED word, of any sender, that no slot in any
 * lane refers to (outbound lanes first, then inbound: the same walk) is
 * freed by one CAS from the word read before the walk.  Only the
 * dataplane adds references, for an original it reads from an outbound
 * lane, before it publishes the copies, and it publishes them before it
 * releases the original; so a reference that exists at our read is in a
 * lane we read after it, or was given back, which changed the word and
 * makes our CAS fail (the buffer is kept: the next reclaim looks again).
 * A receiver between its slots' release and its give-back has no slot
 * left: our free wins, and its CAS then finds the word changed.  So a
 * count a death left too high (a receiver between those two steps, the
 * dataplane between an add and its publish) is given back here, and a
 * live reference never is.
 *
 * SENT buffers of a live holder (arena.h's essay: a receiver killed
 * between its release and its give-back leaves one, a worker's reply in
 * a buffer whose caller died).  The same walk decides them, with one
 * test first: the holder's line must not name the buffer as the one it
 * is sending (in_flight(), read after the word and before the walk), or
 * its slot could be entering a lane behind the walk.  Not named, it was
 * enqueued before the walk began, so the walk sees its slot unless a
 * receiver released it; and the word cannot have left and come back
 * meanwhile (every way into WRITING takes a new generation), so a CAS
 * from the word read first frees only that same send, unreferenced.
 *
 * Kept buffers of a dead receiver.  shmr_buf_keep() moves a buffer to its
 * receiver (WRITING, the next generation) while the receiver's slot for
 * it is still unreleased in its inbound lane: a receiver killed then
 * would have its slot redelivered with the buffer freed under it.  So a
 * WRITING word of the slot being reclaimed that a slot in that slot's own
 * inbound lanes names, under the generation before, goes back to the
 * slot's sender (give_to_slots()) instead of being freed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>

#include <shmr/arena.h>
#include <shmr/arena_ops.h>
#include <shmr/domain.h>

#include "arena.h"
#include "control_internal.h"
#include "format.h"

static void view_of(const struct shmr_ctl_domain *d, struct shmr_arena_view *v)
{
	memset(v, 0, sizeof(*v));
	v->base = d->base;
	v->nclasses = d->geo.arena_nclasses <= SHMR_ARENA_MAX_CLASSES
			      ? d->geo.arena_nclasses
			      : 0;
	v->stats_off = d->geo.arena_off;
	memcpy(v->cls, d->geo.arena, sizeof(v->cls));
}

uint32_t shmr_ctl_arena_counters_read(
	const struct shmr_ctl_domain *d,
	struct shmr_ctl_arena_counters out[SHMR_ARENA_MAX_CLASSES])
{
	struct shmr_arena_view v;

	view_of(d, &v);
	for (uint32_t c = 0; c < v.nclasses; c++) {
		struct shmr_ctl_arena_counters *a = &out[c];
		uint32_t sz = v.cls[c].size, used = shmr_arena_in_use(&v, c);

		if (sz >= (1u << 20) && sz % (1u << 20) == 0)
			snprintf(a->cls, sizeof(a->cls), "%uM", sz >> 20);
		else if (sz >= 1024 && sz % 1024 == 0)
			snprintf(a->cls, sizeof(a->cls), "%uK", sz >> 10);
		else
			snprintf(a->cls, sizeof(a->cls), "%u", sz);
		a->buffers = v.cls[c].count;
		a->in_use = used;
		a->free = v.cls[c].count - used;
		a->reclaimed = d->arena_reclaimed_cls[c];
		/* Relaxed: a figure peers add to, shown as it is. */
		a->alloc_failures = atomic_load_explicit(
			&shmr_arena_stats_of(&v, c)->alloc_failures,
			memory_order_relaxed);
	}
	return v.nclasses;
}

void shmr_ctl_arena_status(struct shmr_ctl_domain *d, struct shmr_ctl_kv *kv)
{
	struct shmr_ctl_arena_counters cls[SHMR_ARENA_MAX_CLASSES];
	uint32_t n = shmr_ctl_arena_counters_read(d, cls);
	char key[64];

	for (uint32_t i = 0; i < n; i++) {
		const struct shmr_ctl_arena_counters *a = &cls[i];
		const struct {
			const char *what;
			uint64_t v;
		} f[] = { { "count", a->buffers },
			  { "free", a->free },
			  { "in_use", a->in_use },
			  { "reclaimed", a->reclaimed },
			  { "alloc_failures", a->alloc_failures } };

		for (unsigned k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
			snprintf(key, sizeof(key), "arena:%.15s:%s", a->cls,
				 f[k].what);
			shmr_ctl_kv_add_u64(kv, key, f[k].v);
		}
	}
}

/* Call @p fn on every arena reference of a slot in lane @p r, from its
 * consumer tail to its producer tail (its index after the last one read
 * in *@p end, when not NULL).  -1: the lane cannot be walked. */
static int lane_refs_to(const struct shmr_ctl_domain *d,
			const struct rte_ring *r,
			void (*fn)(void *arg, const struct shmr_msg *m,
				   const struct shmr_buf_ref *ref),
			void *arg, uint32_t *end)
{
	uint32_t ls = d->geo.lane_size, ss = d->geo.slot_size, mask = ls - 1;
	const unsigned char *slots = (const unsigned char *)(r + 1);
	uint32_t ct = 0;
	/* Acquire inside: the slots below prod.tail are written. */
	int64_t n = shmr_lane_unconsumed_at(r, ls, &ct);

	if (n < 0)
		return -1;
	for (uint32_t i = ct; i != ct + (uint32_t)n; i++) {
		const struct shmr_msg *m =
			(const struct shmr_msg *)(slots +
						  (uint64_t)(i & mask) * ss);
		struct shmr_buf_ref ref;

		if (!(m->flags & SHMR_F_ARENA) || m->len != sizeof(ref))
			continue;
		memcpy(&ref, m->data, sizeof(ref));
		fn(arg, m, &ref);
	}
	if (end)
		*end = ct + (uint32_t)n;
	return 0;
}

static int lane_refs(const struct shmr_ctl_domain *d, const struct rte_ring *r,
		     void (*fn)(void *arg, const struct shmr_msg *m,
				const struct shmr_buf_ref *ref),
		     void *arg)
{
	return lane_refs_to(d, r, fn, arg, NULL);
}

struct sent {
	/* SENT (any holder), or SHARED (any sender): cls, index, gen */
	struct shmr_buf_ref *refs;
	uint64_t *words; /* each one's word as read before the walk */
	uint32_t *seen;  /* slots found referring to each */
	uint32_t *from;  /* the sender of the last slot found */
	/* Per buffer (base[cls] + index): its candidate + 1, 0 for none, so
	 * a lane's slot finds its candidate in one look. */
	uint32_t *at;
	uint32_t base[SHMR_ARENA_MAX_CLASSES];
	const struct shmr_arena_view *v;
	uint32_t lane_of; /* the endpoint whose inbound lane is walked, or
			   * UINT32_MAX (an outbound one) */
	unsigned n;
};

static void mark_seen(void *arg, const struct shmr_msg *m,
		      const struct shmr_buf_ref *ref)
{
	struct sent *s = arg;
	uint32_t k;

	/* A peer wrote the slot: bounded by our copy of the classes. */
	if (ref->cls >= s->v->nclasses ||
	    ref->index >= s->v->cls[ref->cls].count)
		return;
	k = s->at[s->base[ref->cls] + ref->index];
	if (!k--)
		return;
	/* A kept one (WRITING) counts only in its holder's own inbound
	 * lanes: the slot it received and has not released. */
	if (shmr_buf_word_state(s->words[k]) == SHMR_BUF_WRITING &&
	    s->lane_of != shmr_buf_word_holder(s->words[k]))
		return;
	if (s->refs[k].gen == ref->gen &&
	    (m->from.slot == shmr_buf_word_holder(s->words[k]) ||
	     shmr_buf_word_state(s->words[k]) != SHMR_BUF_SENT)) {
		s->seen[k]++;
		s->from[k] = m->from.slot;
	}
}

/* Add candidate @p r (word @p w); -1 when out of memory. */
static int sent_add(struct sent *s, unsigned *cap, const struct shmr_buf_ref *r,
		    uint64_t w)
{
	if (s->n == *cap) {
		unsigned c = *cap ? *cap * 2 : 64;
		void *a = realloc(s->refs, c * sizeof(*s->refs));

		if (!a)
			return -1;
		s->refs = a;
		a = realloc(s->words, c * sizeof(*s->words));
		if (!a)
			return -1;
		s->words = a;
		*cap = c;
	}
	s->at[s->base[r->cls] + r->index] = s->n + 1;
	s->refs[s->n] = *r;
	s->words[s->n++] = w;
	return 0;
}

/* Walk every lane (every outbound one first: the holder's, and the
 * senders' of shared buffers); -1 if one cannot be walked. */
static int walk_all(const struct shmr_ctl_domain *d, struct sent *s)
{
	uint32_t nl = d->geo.nlcores;
	int rc = 0;

	s->lane_of = UINT32_MAX;
	for (uint32_t e = 0; e < d->geo.max_endpoints; e++)
		for (uint32_t l = SHMR_LANE_OUT(nl); l <= SHMR_LANE_OUT_HIGH(nl);
		     l++)
			rc |= lane_refs(d, shmr_ctl_dom_lane(d, e, l),
					mark_seen, s);
	for (uint32_t e = 0; e < d->geo.max_endpoints; e++) {
		s->lane_of = e;
		for (uint32_t l = 0; l < nl; l++)
			rc |= lane_refs(d, shmr_ctl_dom_lane(d, e, l),
					mark_seen, s);
	}
	return rc;
}

/* No holder: a reclaim of the SHARED words only (after the dataplane's
 * death, shmr_ctl_arena_dataplane_gone()). */
#define NO_HOLDER UINT32_MAX

/* 1 when the holder a SENT word @p w names has no endpoint any more (its
 * slot free): nobody will ever take such a buffer back but a reclaim. */
static int holder_gone(const struct shmr_ctl_domain *d, uint64_t w)
{
	uint32_t h = shmr_buf_word_holder(w);

	if (h >= d->geo.max_endpoints)
		return 1;
	/* Relaxed: ours to write (the control plane's line). */
	return atomic_load_explicit(&shmr_ctl_dom_ep(d, h)->state,
				    memory_order_relaxed) == SHMR_EP_FREE;
}

/* A buffer dead endpoint slot's word @p w says it had kept (WRITING), that
 * @p n slots still in lanes name under generation @p r->gen (the one
 * before the keep's), the last from endpoint slot @p from: given back to
 * those slots, as their sender's again (SENT, or SHARED for more than
 * one), so their redelivery carries the payload.  Only the dead holder
 * would have changed its word: one CAS, release.  Returns 1 if done. */
static unsigned give_to_slots(const struct shmr_arena_view *v,
			      const struct shmr_buf_ref *r, uint64_t w,
			      uint32_t n, uint32_t from)
{
	uint64_t to = n == 1 ? shmr_buf_word(SHMR_BUF_SENT, from, r->gen)
			     : shmr_buf_word_shared(from, n, r->gen);

	return atomic_compare_exchange_strong_explicit(
		       shmr_arena_word(v, r->cls, r->index), &w, to,
		       memory_order_release, memory_order_relaxed)
		       ? 1
		       : 0;
}

/* 1 when the live holder of SENT word @p w (buffer @p r) names it in its
 * line as the one it is sending (arena.h): its slot may be on its way
 * into a lane our walk has passed, so it is left for a later look.  The
 * holder being reclaimed (@p slot), or one that is gone, sends nothing. */
static int in_flight(const struct shmr_ctl_domain *d, uint32_t slot,
		     uint64_t w, const struct shmr_buf_ref *r)
{
	uint32_t h = shmr_buf_word_holder(w);

	if (h == slot || holder_gone(d, w))
		return 0;
	/* Acquire, after the word's acquire and before the walk: pairs
	 * with the holder's release as it cleared the name after its
	 * enqueue, so a slot enqueued before this read is in its lane for
	 * the walk to find. */
	return atomic_load_explicit(&shmr_ctl_dom_ep_peer(d, h)->sending,
				    memory_order_acquire) ==
	       shmr_buf_ref_word(r);
}

/* shmr_ctl_arena_reclaim() for @p slot in range, or NO_HOLDER: then
 * (no dataplane runs, nothing adds a reference) a SHARED word that counts
 * fewer references than the slots found referring to it is raised to
 * them, by one CAS from the word read before the walk.  Only raised: a
 * receiver between its slot's release and its give-back holds a
 * reference no lane shows, so a count above the slots may be right;
 * one below them never is (a dataplane that gave back an original's
 * reference at its commit and died before releasing its lane, the
 * original decided again).  *@p raced counts the words a receiver's
 * give-back changed meanwhile (left as they are: walk again). */
static unsigned reclaim(struct shmr_ctl_domain *d, uint32_t slot,
			int raise, unsigned *raced)
{
	struct shmr_arena_view v;
	struct sent s = { .v = &v };
	unsigned freed = 0, cap = 0, kept = 0, recounted = 0, kept_shared = 0;
	unsigned sending = 0, restored = 0;
	uint32_t total = 0;
	const int holder = slot != NO_HOLDER;

	view_of(d, &v);
	if (!v.nclasses)
		return 0;
	for (uint32_t c = 0; c < v.nclasses; c++) {
		s.base[c] = total;
		total += v.cls[c].count;
	}
	s.at = calloc(total, sizeof(*s.at));
	if (!s.at)
		return 0; /* nothing freed: a leak is the safe side */
	for (uint32_t c = 0; c < v.nclasses; c++) {
		for (uint32_t i = 0; i < v.cls[c].count; i++) {
			/* Acquire: read before any lane of the walk below
			 * (a SHARED word is freed only from this value). */
			uint64_t w = atomic_load_explicit(
				shmr_arena_word(&v, c, i),
				memory_order_acquire);
			struct shmr_buf_ref r = { c, i, shmr_buf_word_gen(w), 0 };

			if (holder &&
			    w == shmr_buf_word(SHMR_BUF_WRITING, slot, r.gen)) {
				/* Allocated, or kept (arena.h: under the
				 * generation after the one its slot names):
				 * a slot still in a lane naming the one
				 * before is a kept message's, to be
				 * redelivered with its buffer. */
				r.gen = shmr_buf_gen_prev(r.gen);
				if (sent_add(&s, &cap, &r, w) < 0)
					break; /* the rest stays: a leak */
				continue;
			}
			/* Every SENT one, whoever holds it: a receiver
			 * killed between its slot's release and its
			 * give-back leaves one no slot refers to (arena.h),
			 * but one its holder is sending (in_flight()). */
			if (shmr_buf_word_state(w) == SHMR_BUF_SENT) {
				if (in_flight(d, slot, w, &r)) {
					sending++;
					continue;
				}
			} else if (shmr_buf_word_state(w) != SHMR_BUF_SHARED ||
				   shmr_buf_word_held(w) != 0) {
				/* Free, WRITING, or a word the dataplane
				 * holds references of: left to it (or to
				 * shmr_ctl_arena_dataplane_gone()). */
				continue;
			}
			if (sent_add(&s, &cap, &r, w) < 0)
				break; /* the rest stays: a leak */
		}
	}
	if (s.n) {
		s.seen = calloc(s.n, sizeof(*s.seen));
		s.from = calloc(s.n, sizeof(*s.from));
		if (s.seen && s.from && walk_all(d, &s) == 0) {
			for (unsigned i = 0; i < s.n; i++) {
				uint64_t w = s.words[i];
				struct shmr_buf_ref r = s.refs[i];
				/* A SENT word is one reference. */
				uint32_t refs = shmr_buf_word_state(w) ==
							SHMR_BUF_SENT
							? 1
							: shmr_buf_word_refs(w);

				if (s.seen[i] && raise && refs < s.seen[i] &&
				    s.seen[i] <= SHMR_BUF_REFS_MAX) {
					/* Release: as a give-back's. */
					if (atomic_compare_exchange_strong_explicit(
						    shmr_arena_word(&v, s.refs[i].cls,
								    s.refs[i].index),
						    &w, shmr_buf_word_shared(
							    shmr_buf_word_holder(w),
							    s.seen[i],
							    shmr_buf_word_gen(w)),
						    memory_order_release,
						    memory_order_relaxed))
						recounted++;
					else
						(*raced)++;
				}
				if (shmr_buf_word_state(w) == SHMR_BUF_WRITING) {
					if (s.seen[i] &&
					    s.seen[i] <= SHMR_BUF_REFS_MAX) {
						kept++;
						restored += give_to_slots(
							&v, &r, w, s.seen[i],
							s.from[i]);
						continue;
					}
					r.gen = shmr_buf_word_gen(w);
				} else if (s.seen[i]) {
					kept++;
					if (shmr_buf_word_state(w) ==
					    SHMR_BUF_SHARED)
						kept_shared++;
					continue;
				}
				if (shmr_arena_move_word(&v, &r, w)) {
					freed++;
					d->arena_reclaimed_cls[r.cls]++;
				}
			}
		}
	}
	/* Shared buffers still referred to: one whose count a death left
	 * too high (its last receiver gave back, one reference is left) is
	 * freed by a later look (shmr_ctl_arena_recheck()); so is a SENT one
	 * that its holder was sending as we looked. */
	if (kept_shared || sending) {
		if (!d->arena_recheck_left)
			d->arena_recheck_at = 0;
		d->arena_recheck_left = SHMR_CTL_ARENA_RECHECKS;
	} else if (!holder && !raise) {
		d->arena_recheck_left = 0;
	}
	free(s.refs);
	free(s.words);
	free(s.seen);
	free(s.from);
	free(s.at);
	if ((freed || restored) && holder) {
		shmr_ctl_log("endpoint %u: %u arena buffer(s) reclaimed (%u "
			     "still in lanes, kept for their receivers; %u it "
			     "had kept given back to their redelivered slots)",
			     slot, freed, kept, restored);
	} else if (raise && (freed || recounted)) {
		shmr_ctl_log("dataplane gone: %u arena buffer(s) no slot refers "
			     "to reclaimed, %u recounted from the lanes",
			     freed, recounted);
	} else if (freed) {
		shmr_ctl_log("a later look: %u arena buffer(s) no slot refers "
			     "to reclaimed (a receiver died before giving it "
			     "back)",
			     freed);
	}
	return freed;
}

unsigned shmr_ctl_arena_reclaim(struct shmr_ctl_domain *d, uint32_t slot)
{
	if (slot >= d->geo.max_endpoints)
		return 0;
	unsigned raced = 0;

	return reclaim(d, slot, 0, &raced);
}

unsigned shmr_ctl_arena_dataplane_gone(struct shmr_ctl_domain *d)
{
	struct shmr_arena_view v;
	unsigned n = 0;

	view_of(d, &v);
	for (uint32_t c = 0; c < v.nclasses; c++) {
		for (uint32_t i = 0; i < v.cls[c].count; i++) {
			_Atomic(uint64_t) *wp = shmr_arena_word(&v, c, i);
			uint64_t w = atomic_load_explicit(wp,
							  memory_order_relaxed);
			uint64_t to;
			uint32_t h;

			/* A receiver may give back meanwhile: CAS again. */
			do {
				h = shmr_buf_word_held(w);
				if (shmr_buf_word_state(w) != SHMR_BUF_SHARED ||
				    h == 0)
					break;
				to = shmr_buf_word_refs(w) <= h
					     ? shmr_buf_word_free(
						       shmr_buf_word_gen(w))
					     : w - h * SHMR_BUF_REF_ONE -
						       h * SHMR_BUF_HELD_ONE;
			} while (!atomic_compare_exchange_weak_explicit(
				wp, &w, to, memory_order_release,
				memory_order_relaxed));
			if (h && shmr_buf_word_state(w) == SHMR_BUF_SHARED) {
				n++;
				if (shmr_buf_word_refs(w) <= h)
					d->arena_reclaimed_cls[c]++;
			}
		}
	}
	if (n)
		shmr_ctl_log("dataplane gone: the references it held to %u "
			     "arena buffer(s) given back", n);
	/* What a held reference stood for may have had its lane's slot
	 * released already (a reply that crossed between lcores, held, whose
	 * source lane was released: forward_collect.c), leaving a count no
	 * slot backs: recomputed from the lanes, with no dataplane to add
	 * references meanwhile. */
	{
		unsigned raced = 0;

		/* A word a receiver gave back to during a walk: once more
		 * (each pass is cheap next to a dataplane's start). */
		for (int pass = 0; pass < 4; pass++) {
			raced = 0;
			(void)reclaim(d, NO_HOLDER, 1, &raced);
			if (!raced)
				break;
		}
	}
	return n;
}

struct drop {
	const struct shmr_arena_view *v;
	struct shmr_ctl_domain *d;
	unsigned freed;
};

static void free_ref(void *arg, const struct shmr_msg *m,
		     const struct shmr_buf_ref *ref)
{
	struct drop *x = arg;

	if (shmr_arena_free_sent(x->v, ref, m->from.slot)) {
		x->freed++;
		x->d->arena_reclaimed_cls[ref->cls]++;
	}
}

unsigned shmr_ctl_arena_drop_lane(struct shmr_ctl_domain *d,
				  const struct rte_ring *r)
{
	struct shmr_arena_view v;
	struct drop x = { &v, d, 0 };

	view_of(d, &v);
	if (v.nclasses)
		(void)lane_refs(d, r, free_ref, &x);
	return x.freed;
}

unsigned shmr_ctl_arena_drop_inbound(struct shmr_ctl_domain *d, uint32_t slot)
{
	struct shmr_arena_view v;
	struct drop x = { &v, d, 0 };

	view_of(d, &v);
	if (!v.nclasses || slot >= d->geo.max_endpoints)
		return 0;
	for (uint32_t l = 0; l < d->geo.nlcores; l++) {
		struct rte_ring *r = shmr_ctl_dom_lane(d, slot, l);
		uint32_t end;

		if (lane_refs_to(d, r, free_ref, &x, &end) < 0)
			continue;
		/* Taken, as their receiver would have: so the drop at the
		 * slot's reuse cannot give the same references back again.
		 * Release: pairs with the producer's acquire of cons.tail
		 * (nobody produces here now: the caller's condition). */
		r->cons.head = end;
		__atomic_store_n(&r->cons.tail, end, __ATOMIC_RELEASE);
	}
	if (x.freed)
		shmr_ctl_log("endpoint %u (closed): %u arena buffer(s) of "
			     "messages it never received freed",
			     slot, x.freed);
	return x.freed;
}

unsigned shmr_ctl_arena_drop_lanes(struct shmr_ctl_domain *d, uint32_t slot)
{
	struct drop x = { NULL, d, 0 };

	if (slot >= d->geo.max_endpoints)
		return 0;
	for (uint32_t l = 0; l < SHMR_LANES_PER_EP(d->geo.nlcores); l++)
		x.freed += shmr_ctl_arena_drop_lane(
			d, shmr_ctl_dom_lane(d, slot, l));
	if (x.freed) {
		shmr_ctl_log("endpoint %u: %u arena buffer(s) of slots left in "
			     "its lanes freed", slot, x.freed);
	}
	return x.freed;
}

/* @p m's reference, checked against our copy of the classes; -1 if none. */
static int msg_ref(const struct shmr_arena_view *v, const struct shmr_msg *m,
		   struct shmr_buf_ref *r)
{
	if (!(m->flags & SHMR_F_ARENA) || m->len != sizeof(*r))
		return -1;
	memcpy(r, m->data, sizeof(*r));
	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count ||
	    r->len > v->cls[r->cls].size || r->gen == 0)
		return -1;
	return 0;
}

const void *shmr_ctl_arena_payload(const struct shmr_ctl_domain *d,
				   const struct shmr_msg *m, uint32_t *len)
{
	struct shmr_arena_view v;
	struct shmr_buf_ref r;
	uint64_t w;

	view_of(d, &v);
	*len = 0;
	if (msg_ref(&v, m, &r) < 0)
		return NULL;
	/* Acquire: pairs with the sender's release as it marked it SENT. */
	w = atomic_load_explicit(shmr_arena_word(&v, r.cls, r.index),
				 memory_order_acquire);
	if (shmr_buf_word_gen(w) != r.gen ||
	    shmr_buf_word_state(w) == SHMR_BUF_FREE)
		return NULL;
	*len = r.len;
	return shmr_arena_data(&v, r.cls, r.index);
}

void shmr_ctl_arena_give_back(struct shmr_ctl_domain *d,
			      const struct shmr_msg *m)
{
	struct shmr_arena_view v;
	struct shmr_buf_ref r;

	view_of(d, &v);
	if (msg_ref(&v, m, &r) == 0)
		(void)shmr_arena_free_sent(&v, &r, m->from.slot);
}

int shmr_ctl_arena_send_copy(struct shmr_ctl_domain *d, uint32_t holder,
			     const void *p, uint32_t len,
			     struct shmr_buf_ref *r)
{
	/* Where the next allocation looks first: the control plane's own,
	 * one domain per process. */
	static uint32_t cursor[SHMR_ARENA_MAX_CLASSES];
	struct shmr_arena_view v;
	int c;

	view_of(d, &v);
	c = shmr_arena_class_for(&v, len);
	if (c < 0)
		return -SHMR_E_TOO_BIG;
	if (shmr_arena_take(&v, (uint32_t)c, holder, &cursor[c], r) <
	    0)
		return -SHMR_E_NO_BUFFER;
	memcpy(shmr_arena_data(&v, r->cls, r->index), p, len);
	r->len = len;
	/* Release inside: the bytes before the word says SENT. */
	(void)shmr_arena_move(&v, r,
			      shmr_buf_word(SHMR_BUF_WRITING, holder, r->gen),
			      shmr_buf_word(SHMR_BUF_SENT, holder, r->gen));
	return 0;
}

void shmr_ctl_arena_unsend(struct shmr_ctl_domain *d, uint32_t holder,
			   const struct shmr_buf_ref *r)
{
	struct shmr_arena_view v;

	view_of(d, &v);
	(void)shmr_arena_free_sent(&v, r, holder);
}

uint64_t shmr_ctl_arena_recheck(struct shmr_ctl_domain *d, uint64_t now)
{
	unsigned raced = 0;

	if (!d->arena_recheck_left || !d->base)
		return 0;
	if (!d->arena_recheck_at) {
		d->arena_recheck_at = now + SHMR_CTL_ARENA_RECHECK_MS;
		return d->arena_recheck_at;
	}
	if (now < d->arena_recheck_at)
		return d->arena_recheck_at;
	d->arena_recheck_left--;
	/* No raise: a dataplane runs (a count below the slots is its window
	 * between an original's commit and its lane's release). */
	(void)reclaim(d, NO_HOLDER, 0, &raced);
	if (!d->arena_recheck_left)
		return 0;
	d->arena_recheck_at = now + SHMR_CTL_ARENA_RECHECK_MS;
	return d->arena_recheck_at;
}
