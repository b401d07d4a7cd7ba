/*
 * The balancing queue: Pekko's BalancingPool (one mailbox shared by every
 * routee of the pool) without a multi-consumer ring.  Internal, not for
 * direct inclusion outside dataplane/ (its unit tests excepted).
 *
 * Pekko's workers all take from one queue.  Across processes that would be
 * a multi-consumer ring, which a consumer killed between its head and tail
 * updates stalls for everyone (ARCHITECTURE.md), so the shared mailbox is
 * held by its only possible single owner, the routing lcore:
 *   - Messages for a balancing router are copied into a bounded FIFO of
 *     slots (this queue), one per balancing router and routing lcore.  A
 *     full queue is backpressure: push() refuses, the caller leaves the
 *     slot in its source lane and stops that lane for the round, as for a
 *     full inbox.
 *   - The queue hands its head to a worker only when that worker has
 *     credit: fewer than K messages outstanding in its inbound lane of
 *     this lcore, least outstanding first, ties to the lower index.
 *
 * The credit needs no shared write: "outstanding" is the worker's inbound
 * lane's own count, prod.tail - cons.tail, which the lcore reads as the
 * lane's producer (rte_ring_count(); cons.tail is read with acquire and
 * pairs with the worker's release in dequeue finish).  libshmr finishes a
 * received burst only when the worker asks for the next one, so a message
 * counts until the worker is done with it: K = 1 hands a worker its next
 * message only once it is free (Pekko's semantics exactly), K = 2 keeps
 * one waiting to hide the hand-off.  The caller reads the counts and passes
 * them in; this module reads no shared memory and no clock.
 *
 * Nothing queued is lost when a worker dies:
 *   - The queue is not the worker's: its death does not touch it, and the
 *     rest of the queue goes to the other workers.
 *   - What it had been handed sits in its inbound lane, at most K per
 *     lcore.  The route's inbox outlives the worker: after its death is
 *     confirmed, lane repair moves cons.head back to cons.tail, so its
 *     replacement receives all of it.  The only messages that can be
 *     delivered twice are those the dead worker had peeked and not
 *     finished ([cons.tail, cons.head): at most one burst, at most K);
 *     repair flags them SHMR_F_REDELIVERED.  The ones behind them were
 *     never received and come once.
 *   - While a worker is dead, its lane holds what it had; the caller should
 *     give it no more (pass a count >= K for it, or leave it out), so the
 *     rest of the queue goes to live workers.
 *
 * When the dataplane itself dies: the queue's memory is self-describing
 * (a header with the geometry and the head and tail positions, then the
 * slots; no pointers), and every change is ordered so that a replacement
 * can adopt it (attach()) and lose nothing: a slot is written before the
 * tail that publishes it, and it is handed to a worker before the head
 * moves past it.  So only the head slot can have been handed out already;
 * attach() flags it redelivered.  (A slot pushed but not yet released from
 * its source lane is pushed again after the source's repair, flagged by
 * that repair.)  This holds when the memory is in the domain; in the
 * dataplane's private heap the queued messages die with it.
 *
 * Order: FIFO per lcore and router, as handed out; workers run in
 * parallel, so completions are in no particular order (as in Pekko).
 */
#ifndef SHMR_DATAPLANE_BALANCE_H
#define SHMR_DATAPLANE_BALANCE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/layout.h>
#include <shmr/shmr.h>

#define SHMR_DP_BALANCE_MAGIC 0x314c414244504853ull /* "SHPDBAL1" */
/* Largest capacity of one queue. */
#define SHMR_DP_BALANCE_CAP_MAX (1u << 24)
/* A worker count that never has room (a dead or leaving worker). */
#define SHMR_DP_BALANCE_NO_ROOM UINT32_MAX

/*
 * The head of a queue's memory.  Written by the owning lcore only;
 * read by attach() in a later process.
 */
struct shmr_dp_balance_mem {
	/* SHMR_DP_BALANCE_MAGIC, stored last at init with release; the
	 * partner is the acquire load in shmr_dp_balance_attach(). */
	_Atomic uint64_t magic;
	uint32_t capacity;  /* slots (a power of two) */
	uint32_t slot_size; /* bytes of the largest message it keeps */
	/* Free-running positions: slots [head, tail) are queued.  Stored
	 * with release after the slot work they publish; the partner is the
	 * acquire load in shmr_dp_balance_attach(). */
	_Atomic uint32_t head, tail;
	uint32_t reserved[10];
};
static_assert(sizeof(struct shmr_dp_balance_mem) == SHMR_CACHE_LINE,
	      "the queue's header is one line");

/* Counters of one queue.  Private to the owning lcore: plain words. */
struct shmr_dp_balance_stats {
	uint64_t pushed;  /* messages taken in */
	uint64_t handed;  /* messages handed to a worker (popped) */
	uint64_t full;    /* pushes refused: queue full */
};

/*
 * One queue: the owner's private copy of the geometry and positions (the
 * memory's copy is written through, never read back on the fast path).
 */
struct shmr_dp_balance {
	struct shmr_dp_balance_mem *mem;
	unsigned char *slots;
	uint32_t cap, mask, slot_size, stride;
	uint32_t head, tail;
	struct shmr_dp_balance_stats st;
};

/**
 * Bytes a queue of @p capacity slots of @p slot_size bytes needs.
 *
 * Context: any thread.
 * Returns: the size, or 0 when capacity is not a power of two in
 *          [1, SHMR_DP_BALANCE_CAP_MAX] or slot_size is not in
 *          [SHMR_HDR_SIZE, SHMR_SLOT_MAX].
 */
size_t shmr_dp_balance_mem_size(uint32_t capacity, uint32_t slot_size);

/**
 * Make an empty queue in @p mem (any previous content is forgotten).
 *
 * Context:   the owning lcore, or any thread before it starts.
 * Ownership: mem is the caller's, 64-byte aligned, and outlives @p q.
 * Errors:    -EINVAL (geometry out of range, NULL or misaligned mem),
 *            -ENOSPC (size below shmr_dp_balance_mem_size()).
 */
int shmr_dp_balance_init(struct shmr_dp_balance *q, void *mem, size_t size,
			 uint32_t capacity, uint32_t slot_size);

/**
 * Adopt the queue a previous owner left in @p mem (a dataplane restarted
 * over the domain): check it against the geometry we expect, take its
 * positions, and flag the head slot SHMR_F_REDELIVERED, the one slot its
 * previous owner may have handed out already.
 *
 * Context:     the new owner, before using it; the previous owner is dead.
 * Errors:      -EINVAL, -ENOSPC as init(); -EPROTO (no queue there, another
 *              geometry, or positions further apart than the capacity):
 *              the caller init()s it afresh.
 * Returns:     the number of messages queued.
 */
int shmr_dp_balance_attach(struct shmr_dp_balance *q, void *mem, size_t size,
			   uint32_t capacity, uint32_t slot_size);

/** Messages queued.  Context: the owning lcore.  Wait-free. */
static inline uint32_t shmr_dp_balance_count(const struct shmr_dp_balance *q)
{
	return q->tail - q->head;
}

/** Room left.  Context: the owning lcore.  Wait-free. */
static inline uint32_t shmr_dp_balance_room(const struct shmr_dp_balance *q)
{
	return q->cap - (q->tail - q->head);
}

/**
 * Copy @p m (its header and m->len bytes of payload) to the tail.
 *
 * Context: the owning lcore.  Wait-free: one copy, one release store.
 * Errors:  -ENOSPC (full, counted: leave the slot in its source lane),
 *          -EINVAL (m->len beyond the slot size).
 */
int shmr_dp_balance_push(struct shmr_dp_balance *q, const struct shmr_msg *m);

/**
 * The head message, in place, or NULL when empty.  Valid until the next
 * pop().
 *
 * Context: the owning lcore.  Wait-free.
 */
const struct shmr_msg *shmr_dp_balance_front(const struct shmr_dp_balance *q);

/**
 * Remove the head message, copying it to @p out first unless @p out is
 * NULL (it was already sent from front()).  Call it only once the head
 * was handed out (see the essay: the head moves last).  @p out needs the
 * queue's slot_size bytes; the copy never exceeds them.
 *
 * Context: the owning lcore.  Wait-free.
 * Errors:  -ENOENT (empty).
 */
int shmr_dp_balance_pop(struct shmr_dp_balance *q, struct shmr_msg *out);

/**
 * The worker to hand the next message to: among the @p n workers whose
 * outstanding count queued[i] is below @p credit, the least queued, ties
 * to the lower index.
 *
 * Context: any thread.  Wait-free; pure.
 * Errors:  -SHMR_E_NO_ROUTEES (n == 0), -EAGAIN (no worker has room).
 */
int shmr_dp_balance_next_target(const uint32_t *queued, uint32_t n,
				uint32_t credit);

/**
 * Hand queued messages out, in FIFO order, while a worker has room: for
 * each, next_target(), then @p send (which enqueues it into that worker's
 * inbound lane), then pop, then queued[i]++ so the next choice sees it.
 * A send that fails (< 0: the lane is full or unsound) marks that worker
 * SHMR_DP_BALANCE_NO_ROOM in @p queued for the rest of the call and the
 * message stays at the head.
 *
 * Context:     the owning lcore.  Wait-free apart from @p send.
 * Ownership:   @p queued is the caller's scratch copy of the counts.
 * Returns:     messages handed out.
 */
unsigned shmr_dp_balance_dispatch(struct shmr_dp_balance *q, uint32_t *queued,
				  uint32_t n, uint32_t credit,
				  int (*send)(void *ctx, uint32_t worker,
					      const struct shmr_msg *m),
				  void *ctx);

#endif /* SHMR_DATAPLANE_BALANCE_H */
