/*
 * The payload arena: buffers in the domain for payloads larger than a
 * slot.  Not installed; libshmr, the daemons and the tests include it.
 *
 * Where it lives, and who may write what.  The arena is the end of the
 * lanes part (layout.h), so it is in the memfd every peer maps read-write
 * (it is handed out with ATTACH like the lanes, and an adopted domain
 * keeps it with them: the dataplane holds that memfd).  A buffer must be
 * writable by the process that fills it, and the daemons' part is
 * read-only for peers, so the buffers cannot live there; nor can a free
 * list that allocation would have to update.  The classes (size, count,
 * offsets) are in the header, in the daemons' part: every process takes
 * its own copy at attach and never reads them again.
 *
 * The owner word.  Every buffer has one 64-bit word, and every change of a
 * buffer's owner is one compare-and-swap of that word (never a list
 * update in several steps that a death could leave half done), so at any
 * instruction where a process dies each buffer is free, or names the one
 * endpoint slot that holds it and in what state:
 *
 *   bits  0..31  generation: counts the buffer's allocations (never 0 once
 *                allocated), so a reference to an earlier use never
 *                matches again
 *   bits 32..47  holder: endpoint slot + 1 (0: free)
 *   bits 48..55  state (enum shmr_buf_state)
 *   bits 56..63  0 (reserved)
 *
 *   FREE  -alloc (its holder, CAS)->            WRITING(holder, gen + 1)
 *   WRITING -send (holder, CAS, before enqueue)-> SENT(holder, gen)
 *   SENT  -the receiver's next burst, or the dataplane's refusal (CAS)->
 *                                               FREE(gen)
 *   SENT  -keep (the receiver, CAS)->            WRITING(receiver, gen)
 *   WRITING -release (holder, CAS)->             FREE(gen)
 *
 * A send whose enqueue fails (lane full) goes back SENT -> WRITING.  A
 * stale reference cannot free a buffer twice: every CAS expects the
 * generation the reference names.
 *
 * Nothing from a peer is trusted: the owner words and the buffers are in
 * memory any peer can write.  The dataplane checks every slot flagged
 * SHMR_F_ARENA (shmr_arena_ref_check()): the class and index within its
 * own copy of the classes, the generation and the holder (the slot's
 * sender, in state SENT) against the owner word; a slot that fails is
 * dropped and counted as bad.  A receiver checks class and index against
 * its own copy again before it computes an address, so no slot can make
 * it touch memory outside the arena.  What a hostile peer can do is what
 * it can do to lanes: change a buffer's bytes or owner word under its
 * users (a wrong payload, a buffer freed early or leaked), never make a
 * daemon or another client read or write outside the arena.
 */
#ifndef SHMR_ARENA_H
#define SHMR_ARENA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/layout.h>

enum shmr_buf_state {
	SHMR_BUF_FREE = 0,
	SHMR_BUF_WRITING = 1, /* allocated (or kept) by its holder */
	SHMR_BUF_SENT = 2,    /* referenced by a slot its holder sent */
};

/*
 * What a slot flagged SHMR_F_ARENA carries as its payload (its len is
 * sizeof(struct shmr_buf_ref)): which buffer, and how many of its bytes
 * are the message's.  The 48-byte header does not grow.
 */
struct shmr_buf_ref {
	uint32_t cls;   /* class index */
	uint32_t index; /* buffer within the class */
	uint32_t gen;   /* the owner word's generation when it was sent */
	uint32_t len;   /* payload bytes, at most the class's size */
};

/* A process's own copy of the classes, taken at attach or creation. */
struct shmr_arena_view {
	void *base;
	uint32_t nclasses;
	uint64_t stats_off; /* struct shmr_arena_stats[SHMR_ARENA_MAX_CLASSES] */
	struct shmr_arena_class cls[SHMR_ARENA_MAX_CLASSES];
};

/** Class @p cls's counters (in range). */
static inline struct shmr_arena_stats *
shmr_arena_stats_of(const struct shmr_arena_view *v, uint32_t cls)
{
	return (struct shmr_arena_stats *)((char *)v->base + v->stats_off) +
	       cls;
}

static inline uint64_t shmr_buf_word(uint32_t state, uint32_t holder_slot,
				     uint32_t gen)
{
	return ((uint64_t)state << 48) | ((uint64_t)(holder_slot + 1) << 32) |
	       gen;
}

static inline uint32_t shmr_buf_word_gen(uint64_t w)
{
	return (uint32_t)w;
}

static inline uint32_t shmr_buf_word_state(uint64_t w)
{
	return (uint32_t)(w >> 48) & 0xffu;
}

/* The free word of generation @p gen (no holder). */
static inline uint64_t shmr_buf_word_free(uint32_t gen)
{
	return gen;
}

/**
 * Take the view of a checked header (shmr_layout_check() accepted it).
 * Context: any; reads the header once.
 */
void shmr_arena_view_init(struct shmr_arena_view *v, void *base);

/** The owner word of buffer @p index of class @p cls (both in range). */
static inline _Atomic(uint64_t) *
shmr_arena_word(const struct shmr_arena_view *v, uint32_t cls, uint32_t index)
{
	return (_Atomic(uint64_t) *)((char *)v->base + v->cls[cls].words_off) +
	       index;
}

/** The bytes of buffer @p index of class @p cls (both in range). */
static inline void *shmr_arena_data(const struct shmr_arena_view *v,
				    uint32_t cls, uint32_t index)
{
	return (char *)v->base + v->cls[cls].data_off +
	       (uint64_t)index * v->cls[cls].size;
}

/**
 * Is @p r, read from a slot sent by endpoint slot @p sender, a buffer
 * that sender holds as SENT, of that generation, with a length that fits?
 * Context: any; one relaxed load of the owner word (the dataplane takes
 * nothing else from the buffer).
 * Returns: 1 or 0.
 */
static inline int shmr_arena_ref_check(const struct shmr_arena_view *v,
				       const struct shmr_buf_ref *r,
				       uint32_t sender)
{
	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count ||
	    r->len > v->cls[r->cls].size || r->gen == 0)
		return 0;
	/* No partner: the word is only compared; whoever acts on it does
	 * so by a CAS. */
	return atomic_load_explicit(shmr_arena_word(v, r->cls, r->index),
				    memory_order_relaxed) ==
	       shmr_buf_word(SHMR_BUF_SENT, sender, r->gen);
}

/**
 * Free the buffer @p r names if it is still SENT by @p sender with that
 * generation (the receiver's release, or the dataplane's on a refusal).
 * Context: any.  Concurrency: one CAS, release (what this process read
 * from the buffer is done before another can allocate it).
 * Returns: 1 when freed, 0 when the word was not that (freed already,
 * kept, or a peer wrote it).
 */
static inline int shmr_arena_free_sent(const struct shmr_arena_view *v,
				       const struct shmr_buf_ref *r,
				       uint32_t sender)
{
	uint64_t want = shmr_buf_word(SHMR_BUF_SENT, sender, r->gen);

	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count)
		return 0;
	return atomic_compare_exchange_strong_explicit(
		shmr_arena_word(v, r->cls, r->index), &want,
		shmr_buf_word_free(r->gen), memory_order_release,
		memory_order_relaxed);
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

/**
 * Occupancy of class @p cls: buffers not free (tests, shmrctl).
 * Context: any; relaxed loads, a snapshot.
 */
uint32_t shmr_arena_in_use(const struct shmr_arena_view *v, uint32_t cls);

/** As shmr_arena_in_use(), over every class. */
uint32_t shmr_arena_in_use_all(const struct shmr_arena_view *v);

#endif
