/*
 * One routing lcore's private state: its burst buffer and per-slot
 * records, the bells it owes, its log rate limiter, the routing logics'
 * state, the reply collector and the balancing queues; and how it is set
 * up, linked to the other lcores, woken and put to sleep (lcore.c).
 *
 * Internal, not for direct inclusion outside dataplane/ (the dataplane's
 * unit tests excepted).
 */
#ifndef SHMR_DP_LCORE_H
#define SHMR_DP_LCORE_H

#include <stdint.h>

#include <shmr/lane.h>
#include <shmr/layout.h>

#include "balance.h"
#include "collect.h"
#include "dataplane_internal.h"
#include "decide.h"
#include "table.h"

struct rte_ring;

enum shmr_dp_event {
	SHMR_DP_EV_BAD,
	SHMR_DP_EV_QUARANTINE,
	SHMR_DP_EV_FAILED,
	SHMR_DP_EV_DISCARDED,
	SHMR_DP_EV_MAX
};

struct shmr_dp_ratelimit {
	uint64_t next_ns;   /* no line before this time */
	uint64_t suppressed;
};

/* Per slot of the burst: what to count once the slot is handled. */
struct shmr_dp_meta {
	uint8_t what;     /* forward, error reply, drop, bad
			   * (enum meta_what, forward_slot.h) */
	uint8_t verdict;  /* refused: SHMR_DP_DISCARD or SHMR_DP_FAIL */
	uint8_t nrouters;
	uint8_t why;      /* bad: which check failed */
	uint8_t fail_full; /* routed by a router with SHMR_RF_FAIL_WHEN_FULL:
			    * a full target fails it, never holds it back */
	uint8_t bcast;    /* META_BCAST: index of the broadcasting router;
			   * META_COLLECT, META_BALANCE, META_COLLECTED: of
			   * the collecting or balancing router */
	uint8_t quiet;    /* refused: counted, not logged (a target already
			   * logged as quarantined) */
	uint8_t pad;
	int32_t err;      /* refused: -SHMR_E_* */
	uint32_t target;  /* slot it is enqueued to */
	uint32_t routers[SHMR_DP_MAX_HOPS]; /* router endpoint slots */
	const char *name; /* the name the last router chose */
	/* SHMR_F_ARENA: the checked reference (released when the slot is
	 * refused: commit()); has_buf 0 otherwise. */
	struct shmr_buf_ref buf;
	uint32_t has_buf;
};

/* A balancing router's queue on one lcore (balance.h), in private memory
 * allocated at the router's first message on this lcore. */
struct shmr_dp_bal {
	struct shmr_pid router; /* whose queue it is */
	uint32_t listed;        /* in the lcore's bal_act[] */
	void *mem;              /* NULL: not allocated yet */
	struct shmr_dp_balance q;
};

/* Messages a balancing routee may hold from one lcore (K): 1, so a worker
 * is handed its next message only once it is done with the last. */
#define SHMR_DP_BALANCE_CREDIT 1u

/* Entries of a ring between two lcores (replies for a collector of the
 * other lcore). */
#define SHMR_DP_XRING_SIZE 256u

/* The safety net under the work bits (lcore.c): every
 * SHMR_DP_SWEEP_ROUNDS rounds, the next SHMR_DP_SWEEP_CHUNK endpoints of
 * the lcore's list, whatever their bits say (a round's cost stays bounded
 * however many endpoints are attached: about 1/8 of an endpoint's poll per
 * round). */
#define SHMR_DP_SWEEP_ROUNDS 128u
#define SHMR_DP_SWEEP_CHUNK 16u
/* Rounds in a row an endpoint's lanes are found empty before its work bit
 * is cleared (a sender that pauses briefly keeps its bit, so neither side
 * writes the bit's line while a stream runs). */
#define SHMR_DP_RETIRE_ROUNDS 64u
/* The second look at a retired endpoint's lanes [D5] (shmr/notify.h), a
 * sender's enqueue that was still in its store buffer at the first look
 * (busy mode's sender has no fence) being visible by then.  Room for
 * twice the endpoints the lcore polls, at least SHMR_DP_RECHECK_MIN (an
 * endpoint that finds no place is not retired yet). */
#define SHMR_DP_RECHECK_NS 20000u
#define SHMR_DP_RECHECK_MIN 64u
/* Full rounds in a row whose bells may wait for the next round
 * (forward_poll.c): the fence before the bells [B2] drains the round's
 * stores into the consumers' lanes, as costly as the burst itself. */
#define SHMR_DP_BELL_ROUNDS 8u

/* Fan-out staging (forward.c): a destination's slots go out together
 * once this many are staged; a round gathers at most SHMR_DP_POOL_MAX
 * slots, SHMR_DP_POOL_BYTES of them and an eighth of a lane
 * (SHMR_DP_POOL_LANE_DIV), never fewer than a burst, and lasts at most
 * SHMR_DP_STAGE_NS before everything staged goes out.  The eighth: the
 * slots a round holds stay in their source lane until it ends, so a
 * sender has that much less room meanwhile.  Half a 1024-slot lane held
 * made a client that shares its core with the workers find its lane
 * full while the lcore was still busy, give its core away, and come
 * back after every worker had run: hash over 16 routes went from about
 * 5.9 to 9.2 M msg/s with an eighth (docs/benchmarks.md, "A round holds
 * an eighth of a lane"). */
#define SHMR_DP_STAGE_CAP SHMR_DP_BURST
#define SHMR_DP_POOL_MAX 512u
#define SHMR_DP_POOL_BYTES (256u * 1024u)
#define SHMR_DP_POOL_LANE_DIV 8u
#define SHMR_DP_STAGE_NS 20000u

/* Slots staged for one destination lane this round: indices into the
 * lcore's pool (lc->buf), in the order they are to be enqueued.  room:
 * free entries the lane had when the stage was opened, less what was
 * staged since; the lcore is the lane's only producer, so that much is
 * sure to fit when the stage goes out. */
struct shmr_dp_stage {
	uint32_t target;
	uint32_t room;
	uint32_t n;
	uint16_t idx[SHMR_DP_STAGE_CAP];
};

/* A source lane with slots reserved (dequeue started, not finished) this
 * round: released together once everything staged from it is out. */
struct shmr_dp_held {
	struct rte_ring *r;
	uint32_t n;
	uint32_t key; /* its index in src_of */
};

/** One routing lcore's private state. */
struct shmr_dp_lcore {
	const struct shmr_dp_env *env;
	uint32_t index;
	/* The work bits (shmr/notify.h): the table last swept, and when the next
	 * sweep is due.  sweep_every: SHMR_DP_SWEEP_ROUNDS, or 1 for a test
	 * whose producers set no bits. */
	uint64_t swept_build; /* the build number (table.h) of that table */
	uint32_t rounds, sweep_every;
	uint32_t bell_rounds; /* full rounds since the bells were rung */
	uint32_t sweep_at; /* the slow sweep's place in the list */
	/* The second looks due [D5], oldest first: bit indices and when
	 * (TSC), a ring of recheck_cap from recheck_at (ep_mem). */
	uint32_t nrecheck, recheck_at, recheck_cap;
	uint64_t recheck_ticks;
	uint32_t *recheck_idx;
	uint64_t *recheck_due;
	uint8_t sweep_due; /* before the next round (set before a sleep) */
	struct shmr_lcore_stats *stats;
	unsigned char *buf; /* the pool: pool_cap slots of slot_size */
	/* The round's staging (forward.c's essay): the burst being handled
	 * is at pool slot burst_idx (burst points at it) and began at ring
	 * position burst_pos of its lane; pool_n pool slots are in use.
	 * stage_of[x]: 1 + index into stages of destination x's stage, 0
	 * none (its n: the slots not enqueued yet, which smallest-mailbox
	 * counts as queued).  src_of[2 * slot + high]: 1 + index into
	 * srcs.  stage_ticks: TSC ticks a round may gather. */
	unsigned char *burst;
	uint32_t burst_idx, burst_pos;
	uint32_t pool_cap, pool_n;
	uint32_t nstages, nsrcs;
	uint32_t npending;    /* slots in the stages, not enqueued yet */
	/* forwarded, and router acc_rslot's forwarded, gathered over a
	 * burst's runs (forward.c, counts_out()) */
	uint32_t acc_rslot;
	uint64_t acc_rn, acc_fwd;
	uint64_t stage_ticks;
	/* Arrays by endpoint slot, sized from the geometry (env's
	 * max_endpoints, N) at set-up, in one allocation (ep_mem): bitmaps
	 * of ep_words words.  Indices are the table's, which it bounded. */
	uint32_t ep_words; /* (N + 63) / 64 */
	void *ep_mem;
	uint16_t *stage_of; /* [N] */
	uint16_t *src_of;   /* [2 * N] */
	struct shmr_dp_stage *stages; /* [N] */
	struct shmr_dp_held *srcs;    /* [2 * N] */
	struct shmr_dp_meta meta[SHMR_DP_BURST];
	uint64_t *bells;   /* [ep_words]: owed this round */
	uint64_t *checked; /* [ep_words]: inbound lanes found sound this
			    * round */
	/* The words of bells and checked that are not zero, nbell_w and
	 * nchecked_w of them: what a round clears and rings, so that its
	 * cost follows the endpoints it served, not max_endpoints. */
	uint32_t *bell_w, *checked_w; /* [ep_words] each */
	uint32_t nbell_w, nchecked_w;
	unsigned nblocked; /* lanes left blocked by backpressure this round */
	uint64_t *ask_next_ns; /* [N]: lazy-restart asks: the next one for a
				* slot not before then */
	/* This lcore's counters by endpoint slot (shmr_dp_epc()). */
	struct shmr_ep_ctr *epc;
	struct shmr_dp_ratelimit rl[SHMR_DP_EV_MAX];
	struct shmr_dp_pick pick; /* the routing logics' own state */
	/* Broadcast progress, by source endpoint slot: the head slot of its
	 * lane (ring position pos) was held back by a full routee after
	 * reaching the routees whose inbox slots are marked in `served`.
	 * Applies only while that same slot is broadcast by the same
	 * router again, so a table swap in between cannot make a routee
	 * get it twice (see forward_bcast.c). */
	struct shmr_dp_bcast_progress {
		uint8_t active;
		uint8_t high;        /* on the high-priority lane */
		uint32_t gen;        /* the source endpoint's gen */
		uint32_t pos;        /* ring position of the held slot */
		uint32_t router;     /* broadcasting router's endpoint slot */
		uint64_t *served;    /* [ep_words], in ep_mem */
	} *bcast; /* [N] */
	uint64_t *bcast_scratch; /* [ep_words]: a slot's broadcast, as it goes */
	/* Scatter-gather and tail-chopping: the calls in flight whose
	 * replies this lcore collects (collect.h); its memory. */
	struct shmr_dp_collector coll;
	void *coll_mem;
	/* Time for the collector: CLOCK_MONOTONIC in ns (vDSO, no syscall);
	 * a test may put its own clock here. */
	uint64_t (*clock_ns)(void);
	/* Replies that reached this lcore for another lcore's collector go
	 * to that lcore over xout[owner]; xin[j] brings lcore j's to us.
	 * In-process SPSC rings (shmr_dp_lcores_link()); NULL with one
	 * lcore.  xbells: lcores owed a bell for what we put in xout. */
	struct rte_ring *xin[SHMR_MAX_LCORES];
	struct rte_ring *xout[SHMR_MAX_LCORES];
	uint32_t xin_any; /* some xin[] exists */
	uint32_t xheld;   /* xin[j] stopped last round on a full caller lane */
	uint32_t xbells;
	/* Balancing queues, by router index: [max_routers] of the domain,
	 * allocated at init.  bal_act: the indexes of those holding
	 * messages (each listed once: its listed flag), bal_active of them:
	 * a dispatch costs the queues that hold something, never
	 * max_routers. */
	struct shmr_dp_bal *bal;
	uint16_t *bal_act;
	uint32_t bal_active;
};

/* This lcore's counters of endpoint @p slot (the spare entry for a slot
 * beyond the geometry: a compare, never a division). */
static inline struct shmr_ep_ctr *shmr_dp_epc(const struct shmr_dp_lcore *lc,
					      uint32_t slot)
{
	uint32_t n = lc->env->max_endpoints;

	return lc->epc + (slot < n ? slot : n);
}

/* The round's lane checks forgotten (the next round checks again). */
static inline void shmr_dp_checked_clear(struct shmr_dp_lcore *lc)
{
	for (uint32_t i = 0; i < lc->nchecked_w; i++)
		lc->checked[lc->checked_w[i]] = 0;
	lc->nchecked_w = 0;
}

/**
 * Set up routing lcore @p index of @p env.
 * Errors: -ENOMEM, -EINVAL (index out of range).
 */
int shmr_dp_lcore_init(struct shmr_dp_lcore *lc, const struct shmr_dp_env *env,
		       uint32_t index);
void shmr_dp_lcore_fini(struct shmr_dp_lcore *lc);

/**
 * Give every pair of the @p n routing lcores @p lcs (index i at lcs[i]) a
 * ring each way, so a reply polled by one lcore reaches the lcore whose
 * collector waits for it.  The rings are private memory of this process
 * between two of its threads, initialised in place with rte_ring_init()
 * (single producer, single consumer): nothing crosses a process, and no
 * EAL memzone is needed.  Freed by shmr_dp_lcore_fini() of the receiver
 * (so the lcores are finished together).
 *
 * Context: before the lcores run.  Blocking (allocation).
 * Errors:  -ENOMEM, -EINVAL (n beyond SHMR_MAX_LCORES or an index that
 *          does not match its place).
 */
int shmr_dp_lcores_link(struct shmr_dp_lcore *const *lcs, unsigned n);

/**
 * How long an idle lcore may sleep: @p ms, shortened to wake for the
 * collector's next timer (rounded up to a whole ms) and to
 * BLOCKED-style 1 ms polling while a balancing queue holds messages
 * (a worker that frees up rings no bell).  0: do not sleep, a timer is
 * due.
 * Context: the lcore itself.  Reads the clock only with calls in flight.
 */
int shmr_dp_sleep_ms(struct shmr_dp_lcore *lc, int ms);

/**
 * Ring the bells of the endpoints delivered to since the last call: one
 * seq_cst fence [B2] then shmr_bell_ring_fenced() each.
 */
void shmr_dp_ring_bells(struct shmr_dp_lcore *lc);

/* Is anything in either outbound lane of @p p (we are their consumer)? */
static inline int shmr_dp_poll_pending(const struct shmr_dp_poll *p)
{
	return shmr_lane_pending_sc(p->out_high) ||
	       shmr_lane_pending_sc(p->out);
}

/**
 * Is there work on any lane this lcore polls (ignoring lanes blocked by
 * backpressure)?  The re-check between shmr_bell_prepare() and sleeping:
 * every lane, whatever the work bits say, and the bit of each endpoint
 * found with work is set, so the next round polls it.
 * Context: as shmr_dp_forward_burst_rcu().
 */
int shmr_dp_has_work_rcu(const struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t);

/**
 * The work bits, the lcore's side (the protocol is in shmr/notify.h).
 * shmr_dp_work_set(): set bit @p idx (a sweep found work the bit did not
 * show).  shmr_dp_work_drop(): clear it for an endpoint this lcore does
 * not poll (the bit names no entry of its table).
 * shmr_dp_work_retire_rcu(): endpoint @p p (bit @p idx) was found empty
 * SHMR_DP_RETIRE_ROUNDS rounds in a row: clear its bit [D1] unless a
 * lane turns out pending after the fence, and have a second look [D5]
 * due (or keep the bit when recheck_cap looks are due already).
 * shmr_dp_work_recheck_rcu(): the second looks whose time has come, with
 * table @p t; call only while lc->nrecheck.  shmr_dp_work_word_idle():
 * bit word @p w reads 0: clear its summary bit [D3] unless a producer set
 * a bit in it meanwhile.
 * Context: the lcore itself.  Lock-free (seq_cst read-modify-writes, only
 * when an endpoint goes idle or busy).
 */
void shmr_dp_work_set(struct shmr_dp_lcore *lc, uint32_t idx);
void shmr_dp_work_drop(struct shmr_dp_lcore *lc, uint32_t idx);
void shmr_dp_work_retire_rcu(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_poll *p, uint32_t idx);
void shmr_dp_work_recheck_rcu(struct shmr_dp_lcore *lc,
			      const struct shmr_dp_table *t);
void shmr_dp_work_word_idle(struct shmr_dp_lcore *lc, uint32_t w);

/** Report an event through env->log, at most one line a second per kind. */
void shmr_dp_event(struct shmr_dp_lcore *lc, enum shmr_dp_event ev,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
