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
 *   bits 32..47  holder: endpoint slot + 1 (0: free); SHARED: the sender
 *   bits 48..51  state (enum shmr_buf_state)
 *   bits 52..59  SHARED: the references (1..SHMR_BUF_REFS_MAX); else 0
 *   bits 60..63  SHARED: how many of them the dataplane holds in its
 *                private memory (a balancing queue), at most
 *                SHMR_BUF_HELD_MAX; else 0
 *
 *   FREE  -alloc (its holder, CAS)->            WRITING(holder, gen + 1)
 *   WRITING -send (holder, CAS, before enqueue)-> SENT(holder, gen)
 *   SENT  -the receiver's next burst, or the dataplane's refusal (CAS)->
 *                                               FREE(gen)
 *   SENT  -keep (the receiver, CAS)->            WRITING(receiver, gen + 1)
 *   WRITING -release (holder, CAS)->             FREE(gen)
 *   SENT(n = 1) or SHARED(n) -the dataplane, before it publishes k more
 *         copies (CAS)->                         SHARED(sender, n + k, gen)
 *   SHARED(n) -one copy done (its receiver's next burst, a refusal, the
 *         original's commit; CAS)->              SHARED(n - 1), or FREE(gen)
 *                                                when n was 1
 *   SHARED(1, none held) -keep (the receiver, CAS)-> WRITING(receiver,
 *                                               gen + 1)
 *   SENT or SHARED(n, h) -the dataplane keeps it privately (CAS)->
 *                                               SHARED(n + 1, h + 1)
 *   SHARED(n, h > 0) -the dataplane lets a private one go (CAS)->
 *                                               SHARED(n - 1, h - 1), or FREE
 *
 * A send whose enqueue fails (lane full) goes back SENT -> WRITING(gen +
 * 1).  A stale reference cannot free a buffer twice: every CAS expects
 * the generation the reference names.  Every way into WRITING (allocate,
 * keep, a failed send taken back) takes a new generation, so a word's
 * value SENT(holder, gen) holds over one stretch of time only, never
 * again after it ends: a look that reads it, and later finds it
 * unchanged, knows it is the same send (the reclaim below needs that).
 *
 * A SENT buffer of a live holder that no slot refers to.  A receiver
 * killed between its slot's release and its give-back leaves one (a
 * worker's reply in a buffer, whose caller died: the worker lives on,
 * and nothing would ever free it).  The holder's own send has a moment
 * like it: between its CAS to SENT and its slot's enqueue.  So the
 * holder names the buffer in its own line (struct shmr_ep_peer.sending)
 * before that CAS and clears it after the enqueue (or the failure), and
 * the control plane's reclaim reads that line after the word and before
 * its walk of the lanes: a buffer not named there was enqueued before
 * the walk began, so the walk finds its slot unless a receiver released
 * it; one that nothing refers to is freed by one CAS from the word read
 * first (a receiver's give-back meanwhile makes it fail, and the value
 * cannot come back: above).  A buffer named there is looked at again
 * later (control/arena.c).
 *
 * Shared buffers (broadcast, scatter-gather).  One slot the dataplane
 * copies to several receivers shares its buffer: the owner word counts
 * references, and a SENT word is a count of one (the original in the
 * sender's outbound lane).  The dataplane adds a reference for each copy
 * BEFORE it publishes the copy (so the copy's receiver can never take
 * away one that was not added), gives back the ones whose enqueue failed,
 * and gives back the original's when the original is committed.  Each
 * receiver gives back one at its next burst, after its slots are released
 * (as for SENT); the one that gives back the last frees the buffer.  Each
 * of these is one CAS of the word, so at every instruction but in one
 * window (below) the count is at least the number of slots, in any lane,
 * that refer to the buffer (the invariant), and it equals it but where a
 * process died between two of its steps:
 *   - the dataplane between an add and its publish or give-back;
 *   - a receiver between its slots' release and its give-back.
 * Each leaves the count too high (a leak, never a free too early).  One
 * more leaves it one too LOW: the dataplane between an original's commit
 * (which gave back its reference) and its source lane's release; the
 * original, still in its lane, would be decided again and add only for
 * its new copies.  So before the next dataplane starts, the control plane
 * raises every SHARED count that is below the slots found referring to
 * it (shmr_ctl_arena_dataplane_gone(): no dataplane runs then, so nothing
 * adds a reference, and a receiver's give-back during the walk makes its
 * CAS fail and the walk run again).  The leaks are reclaimable: the
 * control plane's reclaim (control/arena.c)
 * recomputes from the lanes, and frees a SHARED buffer that no slot in any
 * lane refers to by one CAS from the word it read before it walked them,
 * so a give-back meanwhile makes its CAS fail.  Nobody but the dataplane,
 * reading an original from an outbound lane, adds a reference, and the
 * reclaim reads the outbound lanes first, so a copy cannot appear behind
 * its walk.  No per-holder record is needed because no reference lives
 * outside a lane but the ones the word itself counts as held: a receiver
 * that keeps a shared buffer takes it over only when it is the last
 * reference, and otherwise gets a copy in a buffer of its own
 * (shmr_buf_keep()).
 *
 * The dataplane's private references (a balancing queue or a
 * tail-chopping collector keeps a slot past its round).  Each is counted twice in the word: as a reference and as
 * held (bits 60..63), in one CAS as the slot goes into the queue.  When
 * the queue hands the slot to a routee, the copy gets a reference of its
 * own before it is published, and the held one is let go after; so a held
 * reference is never also a slot's, and at every instruction the count is
 * at least the slots in lanes plus the held ones.  The reclaim leaves a
 * word with held references alone (a live dataplane will let them go);
 * when the dataplane dies, the control plane gives back every held
 * reference of every word, one CAS each (control/arena.c), before the next
 * dataplane starts: what the queue held is gone with it, its copies
 * already published keep theirs.  Tail-chopping keeps its call the same
 * way for its later tries: held from before the collector takes it until
 * its entry ends (a reply, the deadline, a cancel), each try with its own
 * reference added before it is published.  A reply in a buffer that one
 * lcore polls for another lcore's collector crosses between them in
 * private memory (xout) the same way: the poller adds a held reference
 * before the copy goes in, and gives nothing back at its lane's release
 * (the routee's reference stays, one too many while the copy is in
 * flight); the owner publishes the copy to the caller and then lets the
 * held one go, so the routee's reference is the caller's slot's.  A
 * death in flight leaves the count one above its slots (reclaimable:
 * the control plane, after giving back the held references, reclaims
 * SHARED words no lane refers to), never below.
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
	SHMR_BUF_SHARED = 3,  /* referenced by copies of one slot: counted */
};

/* The most references a SHARED word counts (8 bits), and held by the
 * dataplane among them (4 bits). */
#define SHMR_BUF_REFS_MAX 255u
#define SHMR_BUF_REF_ONE (1ull << 52)
#define SHMR_BUF_HELD_MAX 15u
#define SHMR_BUF_HELD_ONE (1ull << 60)

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
	return (uint32_t)(w >> 48) & 0xfu;
}

/* The endpoint slot shmr_buf_word() named as @p w's holder, UINT32_MAX
 * for none (a free word's). */
static inline uint32_t shmr_buf_word_holder(uint64_t w)
{
	return (uint32_t)(w >> 32 & 0xffffu) - 1u;
}

/* A SHARED word's references, and those of them the dataplane holds. */
static inline uint32_t shmr_buf_word_refs(uint64_t w)
{
	return (uint32_t)(w >> 52) & SHMR_BUF_REFS_MAX;
}

static inline uint32_t shmr_buf_word_held(uint64_t w)
{
	return (uint32_t)(w >> 60);
}

/* The SHARED word of sender @p holder_slot with @p refs references. */
static inline uint64_t shmr_buf_word_shared(uint32_t holder_slot,
					    uint32_t refs, uint32_t gen)
{
	return ((uint64_t)refs << 52) |
	       shmr_buf_word(SHMR_BUF_SHARED, holder_slot, gen);
}

/* Is @p w SHARED, sent by endpoint slot @p sender, of generation @p gen? */
static inline int shmr_buf_word_is_shared(uint64_t w, uint32_t sender,
					  uint32_t gen)
{
	return (w & ((1ull << 52) - 1)) ==
	       shmr_buf_word(SHMR_BUF_SHARED, sender, gen);
}

/* The generation after @p gen (0 never names an allocation). */
static inline uint32_t shmr_buf_gen_next(uint32_t gen)
{
	return gen + 1 ? gen + 1 : 1;
}

/* The generation before @p gen (the inverse of shmr_buf_gen_next()). */
static inline uint32_t shmr_buf_gen_prev(uint32_t gen)
{
	return gen > 1 ? gen - 1 : UINT32_MAX;
}

/* @p r as one word, as libshmr's struct shmr_buf.ref and the sender's
 * line (struct shmr_ep_peer.sending) hold it; never 0 (gen is not). */
static inline uint64_t shmr_buf_ref_word(const struct shmr_buf_ref *r)
{
	return ((uint64_t)r->cls << 56) | ((uint64_t)r->index << 32) | r->gen;
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
 * that sender holds as SENT (or sent and the dataplane shares: SHARED by
 * that sender, an original decided again), of that generation, with a
 * length that fits?
 * Context: any; one relaxed load of the owner word (the dataplane takes
 * nothing else from the buffer).
 * Returns: 1 or 0.
 */
static inline int shmr_arena_ref_check(const struct shmr_arena_view *v,
				       const struct shmr_buf_ref *r,
				       uint32_t sender)
{
	uint64_t w;

	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count ||
	    r->len > v->cls[r->cls].size || r->gen == 0)
		return 0;
	/* No partner: the word is only compared; whoever acts on it does
	 * so by a CAS. */
	w = atomic_load_explicit(shmr_arena_word(v, r->cls, r->index),
				 memory_order_relaxed);
	return w == shmr_buf_word(SHMR_BUF_SENT, sender, r->gen) ||
	       shmr_buf_word_is_shared(w, sender, r->gen);
}

/* The reference steps: give-back, share, hold and their CAS loops. */
#include <shmr/arena_refs.h>

/**
 * Occupancy of class @p cls: buffers not free (tests, shmrctl).
 * Context: any; relaxed loads, a snapshot.
 */
uint32_t shmr_arena_in_use(const struct shmr_arena_view *v, uint32_t cls);

/** As shmr_arena_in_use(), over every class. */
uint32_t shmr_arena_in_use_all(const struct shmr_arena_view *v);

#endif
