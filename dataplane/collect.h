/*
 * The reply collector of scatter-gather and tail-chopping routers (issue
 * 4).  Internal, not for direct inclusion outside dataplane/ (its unit
 * tests excepted).
 *
 * Every other routing logic forwards a call with its `from` and `ref`
 * unchanged, so the routee answers the caller directly.  These two cannot:
 * several routees may answer one call and only the first answer may reach
 * the caller, and someone has to answer SHMR_E_TIMEOUT when nobody does.
 * So the router stands in the reply path: the call goes out with `from` =
 * the router's PID and `ref` = a collector ref, the routees' replies come
 * back addressed to the router, and the collector maps the first one back
 * to the caller's PID and original ref.
 *
 * One collector per routing lcore, owned by that lcore alone (no atomics,
 * no shared writes), in memory the caller provides, with a fixed capacity
 * (a power of two) of outstanding calls.  Time is an input (nanoseconds of
 * one monotonic clock, e.g. CLOCK_MONOTONIC_COARSE), never read here, and
 * so is every random value: the module is a pure state machine.
 *
 * Invariants and why they hold:
 *   - An entry is live from start() until the first of: a reply (handed to
 *     the caller), its deadline (SHMR_E_TIMEOUT to the caller), cancel().
 *     Each of these frees it, so the caller gets exactly one answer from
 *     the collector per started call.
 *   - A collector ref is {generation:32 | owner:8 | index:24}.  The
 *     entry's generation is bumped every time it is started, and never 0,
 *     so a late reply for a call that finished (even if its entry was
 *     reused since) does not match and is dropped and counted.  `owner` is
 *     the lcore tag given at init: a reply polled by another lcore can be
 *     handed to the collector that owns it.
 *   - The deadline boundary: a call whose deadline is `start + within` has
 *     timed out at every now >= deadline.  on_reply() applies the same
 *     rule as tick(), so the outcome depends on the times alone, never on
 *     how often tick() runs: a reply seen at now >= deadline answers the
 *     caller with SHMR_E_TIMEOUT, not with the late reply.
 *   - Tail-chopping sends at t0, t0 + interval, t0 + 2*interval ... (a
 *     fixed grid: a tick that comes late catches up, sending every send
 *     that fell due before now, as Pekko's fixed-rate schedule does), each
 *     to a routee not yet tried, picked uniformly among the untried with
 *     one random value each; a send is due only while t < deadline.
 *   - Timers are a binary min-heap of live entries keyed by (next event
 *     time, start order), so tick() costs O(1) when nothing is due and
 *     O(log n) per event otherwise, and events of equal time come in
 *     start order: every output is a function of the inputs.
 *
 * Not kept across a dataplane restart: the table is private memory.  The
 * calls in flight then get no answer from the router (their routees'
 * replies find no entry and are dropped); the callers' own shmr_call()
 * timeouts end them.
 */
#ifndef SHMR_DATAPLANE_COLLECT_H
#define SHMR_DATAPLANE_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/layout.h>
#include <shmr/shmr.h>

/* Routees one collected call may be sent to (the tried set is a 64-bit
 * mask). */
#define SHMR_DP_COLLECT_MAX_ROUTEES 64u
/* Largest capacity (the index field of a ref is 24 bits). */
#define SHMR_DP_COLLECT_CAP_MAX (1u << 24)
/* A capacity that suits one routing lcore: 1024 calls in flight. */
#define SHMR_DP_COLLECT_CAP_DEFAULT 1024u

/*
 * What the caller answers a call with when start() finds the table full
 * (-ENOSPC): the router has as many calls in flight as it can track, which
 * is the router's inbox being full, and the caller's remedy is the same
 * (retry later).
 */
#define SHMR_DP_COLLECT_FULL_STATUS (-SHMR_E_MAILBOX_FULL)

enum shmr_dp_collect_kind {
	SHMR_DP_COLLECT_SCATTER = 1, /* every routee at start */
	SHMR_DP_COLLECT_TAIL = 2,    /* one at start, one more per interval */
};

/* What to do with a reply that came back to the router. */
enum shmr_dp_collect_verdict {
	SHMR_DP_COLLECT_DROP = 0,    /* late, duplicate or unknown: counted */
	SHMR_DP_COLLECT_DELIVER = 1, /* rewritten for the caller: forward it */
	SHMR_DP_COLLECT_TIMEOUT = 2, /* rewritten into the caller's
				      * SHMR_E_TIMEOUT: forward it */
};

/* Counters of one collector.  Private to the owning lcore: plain words. */
struct shmr_dp_collect_stats {
	uint64_t started;   /* calls taken in (start() returned 0) */
	uint64_t delivered; /* first replies handed to their callers */
	uint64_t dropped;   /* replies that reached no caller: late,
			     * duplicate, unknown ref, or at the deadline */
	uint64_t timeouts;  /* callers answered SHMR_E_TIMEOUT */
	uint64_t full;      /* start() refused: table full */
	uint64_t cancelled; /* cancel() */
	uint64_t sends;     /* tail-chopping sends after the first */
	uint64_t retries;   /* tail-chopping sends the caller could not make
			     * (retried on the next tick) */
};

struct shmr_dp_collect_entry; /* private to collect.c */

/*
 * One collector.  The fields are the owner's to read (stats, nlive); only
 * the functions below write them.
 */
struct shmr_dp_collector {
	struct shmr_dp_collect_entry *ent; /* cap entries */
	uint32_t *heap;     /* live entry indices, a min-heap by event time */
	uint32_t *free_idx; /* a stack of free entry indices */
	unsigned char *slots; /* tail-chopping: the call to resend, by entry */
	uint32_t cap, slot_size;
	uint32_t stride;    /* bytes per kept call: slot_size rounded to 8 */
	uint32_t owner;     /* goes into every ref (the lcore index) */
	uint32_t nlive, nfree;
	uint64_t seq;       /* start order: ties in the heap */
	struct shmr_dp_collect_stats st;
};

/* Parameters of one collected call. */
struct shmr_dp_collect_args {
	uint32_t kind;      /* enum shmr_dp_collect_kind */
	uint32_t nroutees;  /* routees of the router now; 0: see start() */
	uint64_t within_ns; /* > 0: the reply must come before now + within */
	uint64_t interval_ns; /* TAIL: > 0, between two sends */
	uint64_t rnd;       /* TAIL: uniform random value for the first pick */
};

/*
 * How tick() reports what falls due.  Both callbacks run on the calling
 * lcore, inside tick(), and must not call back into the collector.
 */
struct shmr_dp_collect_ops {
	/** A uniform 64-bit random value (rte_rand() on an lcore). */
	uint64_t (*random)(void *ctx);
	/**
	 * Tail-chopping: send @p call (from = the router, ref = the collector
	 * ref, the rest as the caller sent it) to routee @p routee, an index
	 * in the router's routee list.  Return 0 when it was enqueued, < 0
	 * when it could not be (a full or unsound lane): the routee stays
	 * untried and the send is retried on the next tick after now.
	 */
	int (*send)(void *ctx, uint32_t routee, const struct shmr_msg *call);
	/**
	 * A call timed out: enqueue @p reply (a ready header-only reply,
	 * from the router to the caller, the caller's ref and the call's
	 * type, status -SHMR_E_TIMEOUT) to reply->to.  The entry is already
	 * free.
	 */
	void (*expire)(void *ctx, const struct shmr_msg *reply);
	void *ctx;
	/**
	 * Optional (NULL): a tail-chopping call's entry ends at its deadline;
	 * @p call is what it kept (for a reference it holds), valid until
	 * the next start.
	 */
	void (*release)(void *ctx, const struct shmr_msg *call);
};

/** The entry index in a collector ref. */
static inline uint32_t shmr_dp_collect_ref_index(uint64_t ref)
{
	return (uint32_t)(ref & 0xffffffu);
}

/** The owner tag (lcore) in a collector ref. */
static inline uint32_t shmr_dp_collect_ref_owner(uint64_t ref)
{
	return (uint32_t)((ref >> 24) & 0xffu);
}

/** The entry generation in a collector ref (never 0 in a valid ref). */
static inline uint32_t shmr_dp_collect_ref_gen(uint64_t ref)
{
	return (uint32_t)(ref >> 32);
}

/**
 * Bytes of memory a collector of @p capacity entries needs, each able to
 * keep a call of up to @p slot_size bytes.
 *
 * Context: any thread.
 * Returns: the size, or 0 when capacity is not a power of two in
 *          [1, SHMR_DP_COLLECT_CAP_MAX] or slot_size is not in
 *          [SHMR_HDR_SIZE, SHMR_SLOT_MAX].
 */
size_t shmr_dp_collect_mem_size(uint32_t capacity, uint32_t slot_size);

/**
 * Set up an empty collector in @p mem.
 *
 * Context:   any thread, before the owning lcore uses it.  May not be on
 *            the fast path (it writes all of mem).
 * Ownership: mem is the caller's, 8-byte aligned, and must outlive the
 *            collector; nothing is allocated.
 * Errors:    -EINVAL (capacity, slot_size or owner > 255 out of range, a
 *            NULL or misaligned mem), -ENOSPC (size below
 *            shmr_dp_collect_mem_size()).
 */
int shmr_dp_collect_init(struct shmr_dp_collector *c, void *mem, size_t size,
			 uint32_t capacity, uint32_t slot_size,
			 uint32_t owner);

/**
 * Take in call @p call (the lcore's private copy, kind SHMR_KIND_CALL,
 * `to` the router) at time @p now: remember its caller, ref and type, and
 * rewrite it in place for the routees: from = the router (call->to), ref =
 * a fresh collector ref.  Make every other change to the copy (hops)
 * before: a tail-chopping entry keeps a copy of it as it is now for its
 * later sends.  The caller then sends @p call to every routee (SCATTER) or
 * to routee *@p first (TAIL, picked uniformly with a->rnd).
 *
 * If the first send cannot be made after all (the routee's lane is full
 * and the slot is held back in its source lane), cancel() the entry: the
 * ring's original is decided afresh next time.
 *
 * Context:     the owning lcore.  Wait-free: no allocation, no syscall.
 * Errors:      -SHMR_E_NO_ROUTEES (a->nroutees == 0: answer the caller
 *              with it at once), -ENOSPC (table full, counted in `full`:
 *              answer SHMR_DP_COLLECT_FULL_STATUS), -EINVAL (not a call,
 *              a bad kind, within 0, a TAIL interval 0, more than
 *              SHMR_DP_COLLECT_MAX_ROUTEES routees, a length beyond the
 *              slot size).  On error @p call is unchanged.
 */
int shmr_dp_collect_start(struct shmr_dp_collector *c, struct shmr_msg *call,
			  const struct shmr_dp_collect_args *a, uint64_t now,
			  uint32_t *first);

/**
 * Forget a started call without answering it (its first send was held
 * back).  Counted in `cancelled`.
 *
 * Context: the owning lcore.  Wait-free.
 * Errors:  -ENOENT (no live entry has that ref).
 */
int shmr_dp_collect_cancel(struct shmr_dp_collector *c, uint64_t ref);

/**
 * The caller that live entry @p ref will answer, without changing
 * anything: so a reply can be held back (its caller's inbox full) before
 * on_reply() frees the entry.
 *
 * Context: the owning lcore.  Wait-free; no side effect.
 * Errors:  -ENOENT (no live entry has that ref: on_reply() would DROP).
 */
/**
 * The call live tail-chopping entry @p ref keeps for its later tries, or
 * NULL (no such entry, or scatter-gather, which keeps none): what a
 * caller must know before on_reply() or cancel() ends the entry.
 * Context: the owning lcore.  Wait-free; no side effect.
 */
const struct shmr_msg *shmr_dp_collect_kept(const struct shmr_dp_collector *c,
					    uint64_t ref);

int shmr_dp_collect_caller(const struct shmr_dp_collector *c, uint64_t ref,
			   struct shmr_pid *caller);

/**
 * A reply addressed to the router came back (the caller has checked that
 * reply->to is the router and that its ref's owner is this collector).
 *   - DELIVER: the first reply, before the deadline (whatever its status):
 *     reply->to and reply->ref are now the caller's (from, status, type
 *     and payload are the routee's); the entry is free.
 *   - TIMEOUT: the entry's deadline is <= now: the reply is rewritten into
 *     the caller's SHMR_E_TIMEOUT (from = the router, no payload), the
 *     entry is free, counted in `timeouts` and the routee's reply in
 *     `dropped`.
 *   - DROP: no live entry has reply->ref (a later reply of a call already
 *     answered, or of an entry reused since, or a made-up ref): @p reply is
 *     unchanged; counted in `dropped`.
 *
 * Context: the owning lcore.  Wait-free.
 * Returns: an enum shmr_dp_collect_verdict.
 */
int shmr_dp_collect_on_reply(struct shmr_dp_collector *c,
			     struct shmr_msg *reply, uint64_t now);

/**
 * Run what fell due at or before @p now, earliest first (ties in start
 * order): every call whose deadline is <= now is freed and its timeout
 * handed to ops->expire; every tail-chopping send due before its deadline
 * and at or before now goes to ops->send (several for one entry when the
 * tick comes late), each to a routee not tried yet, picked with one
 * ops->random() value.  When every routee was tried, nothing more is sent
 * and the entry waits for a reply or its deadline.
 *
 * Context: the owning lcore, once per poll loop.  Wait-free apart from the
 *          callbacks: O(1) when nothing is due, O(log n) per event.
 * Returns: events handed out (sends, successful or not, plus timeouts).
 */
unsigned shmr_dp_collect_tick(struct shmr_dp_collector *c, uint64_t now,
			      const struct shmr_dp_collect_ops *ops);

/**
 * When tick() next has something to do: the earliest deadline or send
 * time of a live entry, UINT64_MAX when none is live.  An lcore going to
 * sleep must wake by then.
 *
 * Context: the owning lcore.  Wait-free.
 */
uint64_t shmr_dp_collect_next_due(const struct shmr_dp_collector *c);

#endif /* SHMR_DATAPLANE_COLLECT_H */
