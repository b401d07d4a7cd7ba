/*
 * The payload arena's reference steps (the owner-word protocol and the
 * reasons for each step are in <shmr/arena.h>, which includes this):
 * what a word becomes in a give-back, a share, a hold or a held one let
 * go, the CAS loop that applies one, and the calls libshmr, the
 * dataplane and the control plane make of them.  Not for direct
 * inclusion; not installed.
 */
#ifndef SHMR_ARENA_REFS_H
#define SHMR_ARENA_REFS_H

#include <stdatomic.h>
#include <stdint.h>

#ifndef SHMR_ARENA_H
#error "include <shmr/arena.h>, which defines what is used here"
#endif

/* What word @p w becomes in a give-back (free_sent) or an add of @p k
 * (share), for @p r sent by @p sender; UINT64_MAX: not such a word. */
static inline uint64_t shmr_arena_next_put(uint64_t w,
					   const struct shmr_buf_ref *r,
					   uint32_t sender, uint32_t k)
{
	(void)k;
	if (w == shmr_buf_word(SHMR_BUF_SENT, sender, r->gen))
		return shmr_buf_word_free(r->gen);
	if (shmr_buf_word_state(w) != SHMR_BUF_SHARED ||
	    shmr_buf_word_gen(w) != r->gen || shmr_buf_word_refs(w) == 0)
		return UINT64_MAX;
	return shmr_buf_word_refs(w) == 1 ? shmr_buf_word_free(r->gen)
					  : w - SHMR_BUF_REF_ONE;
}

static inline uint64_t shmr_arena_next_add(uint64_t w,
					   const struct shmr_buf_ref *r,
					   uint32_t sender, uint32_t k)
{
	uint32_t n;

	if (w == shmr_buf_word(SHMR_BUF_SENT, sender, r->gen))
		n = 1;
	else if (shmr_buf_word_is_shared(w, sender, r->gen))
		n = shmr_buf_word_refs(w);
	else
		return UINT64_MAX;
	if (k > SHMR_BUF_REFS_MAX - n)
		return UINT64_MAX;
	return n == 1 && shmr_buf_word_state(w) == SHMR_BUF_SENT
		       ? shmr_buf_word_shared(sender, 1 + k, r->gen)
		       : w + k * SHMR_BUF_REF_ONE;
}

/* @p k references more to a word the dataplane holds some of, whoever
 * sent it (a tail-chopping try: the kept call names the router). */
static inline uint64_t shmr_arena_next_add_held(uint64_t w,
						const struct shmr_buf_ref *r,
						uint32_t sender, uint32_t k)
{
	(void)sender;
	if (shmr_buf_word_state(w) != SHMR_BUF_SHARED ||
	    shmr_buf_word_gen(w) != r->gen || shmr_buf_word_held(w) == 0 ||
	    k > SHMR_BUF_REFS_MAX - shmr_buf_word_refs(w))
		return UINT64_MAX;
	return w + k * SHMR_BUF_REF_ONE;
}

/* A held reference more (hold), or one let go (drop_held). */
static inline uint64_t shmr_arena_next_hold(uint64_t w,
					    const struct shmr_buf_ref *r,
					    uint32_t sender, uint32_t k)
{
	uint64_t to = shmr_arena_next_add(w, r, sender, 1);

	(void)k;
	if (to == UINT64_MAX || shmr_buf_word_held(to) == SHMR_BUF_HELD_MAX)
		return UINT64_MAX;
	return to + SHMR_BUF_HELD_ONE;
}

static inline uint64_t shmr_arena_next_drop_held(uint64_t w,
						 const struct shmr_buf_ref *r,
						 uint32_t sender, uint32_t k)
{
	(void)sender;
	(void)k;
	if (shmr_buf_word_state(w) != SHMR_BUF_SHARED ||
	    shmr_buf_word_gen(w) != r->gen || shmr_buf_word_held(w) == 0 ||
	    shmr_buf_word_refs(w) == 0)
		return UINT64_MAX;
	return shmr_buf_word_refs(w) == 1
		       ? shmr_buf_word_free(r->gen)
		       : w - SHMR_BUF_REF_ONE - SHMR_BUF_HELD_ONE;
}

/* A CAS loop of @p r's word through @p next (in range checked here),
 * with ordering @p mo on success.  1 when done, 0 when @p next said no. */
static inline int shmr_arena_step(const struct shmr_arena_view *v,
				  const struct shmr_buf_ref *r, uint32_t sender,
				  uint32_t k,
				  uint64_t (*next)(uint64_t,
						   const struct shmr_buf_ref *,
						   uint32_t, uint32_t),
				  memory_order mo)
{
	_Atomic(uint64_t) *wp;
	uint64_t w, to;

	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count)
		return 0;
	wp = shmr_arena_word(v, r->cls, r->index);
	w = atomic_load_explicit(wp, memory_order_relaxed);
	for (;;) {
		to = next(w, r, sender, k);
		if (to == UINT64_MAX)
			return 0;
		if (atomic_compare_exchange_weak_explicit(wp, &w, to, mo,
							  memory_order_relaxed))
			return 1;
	}
}

/**
 * Give back one reference to the buffer @p r names: free it if it is
 * still SENT by @p sender with that generation, or take one from its
 * count if it is SHARED with that generation (by any sender: a collected
 * call's copies name the router), freeing it with the last (the
 * receiver's release, the dataplane's on a refusal or a committed
 * original, the control plane's for a dropped slot).
 * Context: any.  Concurrency: a CAS loop (retried only when another
 * reference moved meanwhile), release (what this process read from the
 * buffer is done before another can allocate it; a give-back that is not
 * the last is an RMW, so the last one's release sequence carries it).
 * Returns: 1 when a reference was given back, 0 when the word was neither
 * (freed already, kept, or a peer wrote it).
 */
static inline int shmr_arena_free_sent(const struct shmr_arena_view *v,
				       const struct shmr_buf_ref *r,
				       uint32_t sender)
{
	return shmr_arena_step(v, r, sender, 0, shmr_arena_next_put,
			       memory_order_release);
}

/**
 * Add @p k references to the buffer @p r names, sent by @p sender: its
 * word goes from SENT (one reference) or SHARED(n) by that sender, with
 * that generation, to SHARED(n + k).  The dataplane, before it publishes
 * @p k copies of the slot (arena.h's essay on shared buffers).
 * Context: any.  Concurrency: a CAS loop, relaxed: the copies are
 * published after it (the lane's release), and an RMW keeps the
 * receivers' acquire of the word in the release sequence of the sender's
 * SENT store, so they see what it wrote.
 * Returns: 1 when added, 0 when the word is not that (a peer wrote it) or
 * the count would pass SHMR_BUF_REFS_MAX.
 */
static inline int shmr_arena_share(const struct shmr_arena_view *v,
				   const struct shmr_buf_ref *r,
				   uint32_t sender, uint32_t k)
{
	return shmr_arena_step(v, r, sender, k, shmr_arena_next_add,
			       memory_order_relaxed);
}

/**
 * The dataplane keeps the slot referring to @p r (sent by @p sender) in
 * its private memory: one reference more, counted as held.
 * Context: the dataplane.  Concurrency: a CAS loop, relaxed (as
 * shmr_arena_share()).
 * Returns: 1, or 0 when the word is not SENT or SHARED by @p sender with
 * that generation, or a count would overflow.
 */
static inline int shmr_arena_hold(const struct shmr_arena_view *v,
				  const struct shmr_buf_ref *r, uint32_t sender)
{
	return shmr_arena_step(v, r, sender, 1, shmr_arena_next_hold,
			       memory_order_relaxed);
}

/**
 * One reference more for a copy of a slot the dataplane holds (a
 * tail-chopping call's later try), before the copy is published.
 * Context: the dataplane.  Concurrency: a CAS loop, relaxed (as
 * shmr_arena_share()).
 * Returns: 1, or 0 when the word holds none of that generation.
 */
static inline int shmr_arena_share_held(const struct shmr_arena_view *v,
					const struct shmr_buf_ref *r)
{
	return shmr_arena_step(v, r, 0, 1, shmr_arena_next_add_held,
			       memory_order_relaxed);
}

/**
 * The dataplane lets a held reference to @p r go (its slot left the
 * private memory: a copy with its own reference was published, or it was
 * dropped); the last reference frees the buffer.
 * Context: the dataplane.  Concurrency: a CAS loop, release.
 * Returns: 1, or 0 when the word holds none of that generation.
 */
static inline int shmr_arena_drop_held(const struct shmr_arena_view *v,
				       const struct shmr_buf_ref *r)
{
	return shmr_arena_step(v, r, 0, 0, shmr_arena_next_drop_held,
			       memory_order_release);
}

/**
 * Free the buffer @p r names (in range) if its owner word is still
 * exactly @p w (the control plane's reclaim).
 * Context: any.  Concurrency: one CAS, release.
 * Returns: 1 when freed, 0 when the word changed.
 */
static inline int shmr_arena_move_word(const struct shmr_arena_view *v,
				       const struct shmr_buf_ref *r,
				       uint64_t w)
{
	return atomic_compare_exchange_strong_explicit(
		shmr_arena_word(v, r->cls, r->index), &w,
		shmr_buf_word_free(r->gen), memory_order_release,
		memory_order_relaxed);
}

#endif
