/*
 * How a producer tells a consumer it has work: the doorbell, for a
 * consumer that sleeps, and the work bits, for a routing lcore that polls
 * only the endpoints with work.  Part of the layout (<shmr/layout.h>
 * includes it here, and pins struct shmr_bell with the rest); not for
 * direct inclusion.
 *
 * Both are peers' words in the lanes part (the control lane's bell in the
 * header excepted), so every reader takes them as a hint: a wrong word
 * costs a wake-up, a look or a bounded sleep, never a loss or a hang.
 * Their fences pair with each other's: the work bits' D2 is the bell's B2.
 */
#ifndef SHMR_NOTIFY_H
#define SHMR_NOTIFY_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#ifndef SHMR_LAYOUT_H
#error "include <shmr/layout.h>, which defines the cache line used here"
#endif

/*
 * A doorbell: how a consumer that found nothing sleeps, and how a producer
 * wakes it without a syscall while the consumer is awake.
 *
 * Consumer: sleepers += 1 (seq_cst)  [B1]; s = seq; re-check its lanes;
 *           if still empty, futex_wait(&seq, s); sleepers -= 1.
 * Producer: enqueue (ring tail store, release); atomic_thread_fence(seq_cst)
 *           [B2]; if sleepers != 0: seq += 1, futex_wake(&seq).
 * B1 pairs with B2: either the producer sees the sleeper, or the consumer's
 * re-check sees the enqueued slot.  Futexes are shared (not PRIVATE): the
 * processes map the memfd at different addresses.
 */
struct shmr_bell {
	alignas(SHMR_CACHE_LINE) _Atomic(uint32_t) seq;
	_Atomic(uint32_t) sleepers;
};

/*
 * Work bits: how a routing lcore polls only the endpoints that have work,
 * so that what sits attached and idle costs it nothing (issue 16).  Each
 * lcore has a block of 64-bit words in the lanes part, work_stride() bytes
 * at work_off + lcore * stride: first shmr_work_nsum() summary words, then
 * shmr_work_nwords() bit words.  Endpoint slot s is polled by lcore
 * s % nlcores and is bit i = s / nlcores of that lcore's bit words; bit
 * w of the summary is set while bit word w may be non-zero.  Sized from
 * the domain's max_endpoints and nlcores, never from the constants.
 *
 * A set bit means "poll this endpoint": the lcore polls it every round
 * until its lanes stay empty for a while, then clears it (retires it).
 * Peers can write these words, so the lcore takes them as a hint only: a
 * bit set for nothing costs a look, a bit cleared under it is found by
 * the lcore's slow sweep of every endpoint (dataplane/lcore.c).
 *
 * Producer (after enqueue: ring tail store, release):
 *           in adaptive mode, atomic_thread_fence(seq_cst) [D2] (the
 *           bell's B2, shared); in busy mode, where no lcore sleeps,
 *           none (see D5);
 *           if bit clear: fetch_or bit, then if the summary bit is
 *           clear, fetch_or it [D4].
 * Lcore, retiring an endpoint: fetch_and ~bit; fence(seq_cst) [D1]; if
 *           a lane is pending, set the bit again (keep polling); else
 *           look at the lanes once more SHMR_DP_RECHECK_NS later [D5]
 *           and set the bit again if one is pending then.  If the word
 *           is now 0: fetch_and ~summary bit; fence [D3]; if the word
 *           became non-zero meanwhile, set the summary bit again.
 * D1 pairs with D2: either the producer sees its bit clear and sets it,
 * or the lcore's check sees the enqueued slot.  Without D2 (busy mode)
 * the producer's load of its bit may read a 1 the lcore is clearing
 * while its enqueue is still in its core's store buffer, not yet
 * visible to the lcore's check: D5 is the look that sees it once the
 * store has left that buffer, and the slow sweep bounds the wait should
 * it take longer.  So busy mode's sender pays no fence per
 * burst, and the lcore a clock read per round while a look is due.  D3
 * pairs with D4 the same way for the summary.  All the read-modify-writes
 * are seq_cst; they happen only when an endpoint goes from idle to busy
 * or back, never per message, so a steady stream only reads its (shared,
 * unchanging) word.
 */
static inline uint32_t shmr_work_nwords(uint32_t max_endpoints,
					uint32_t nlcores)
{
	uint32_t per = (max_endpoints + nlcores - 1) / nlcores;

	return (per + 63) / 64;
}

static inline uint32_t shmr_work_nsum(uint32_t nwords)
{
	return (nwords + 63) / 64;
}

/* Bytes of one lcore's block: whole cache lines, so no two lcores share
 * one. */
static inline uint64_t shmr_work_stride(uint32_t max_endpoints,
					uint32_t nlcores)
{
	uint32_t nw = shmr_work_nwords(max_endpoints, nlcores);
	uint64_t bytes = (uint64_t)(shmr_work_nsum(nw) + nw) * 8u;

	return (bytes + 63u) & ~(uint64_t)63u;
}

#endif
