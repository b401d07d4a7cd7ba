/*
 * Pool resizers: the arithmetic of Pekko's DefaultResizer and
 * OptimalSizeExploringResizer, as pure functions over a caller-owned state.
 * Internal to the control plane: not for direct inclusion outside control/
 * and tests/unit/control/.
 *
 * Both resizers answer one question, "by how many routees should this pool
 * grow (> 0) or shrink (< 0) now?", from what the daemon can see of each
 * routee: the busy flag its worker's library sets while it handles a message
 * and the depth of its inbox ring (struct shmr_ctl_routee_load).  Acting on
 * the answer (spawning, or retiring the newest routees once their queue is
 * drained) is the daemon's business, not this file's.
 *
 * Numbers.  The configuration holds the rates as the operator wrote them
 * (doubles, as Pekko's does), but every rate that multiplies a pool size is
 * taken to six decimal places and the products are computed in integers.
 * Pekko computes them in binary floating point, which turns the operator's
 * intent into off-by-one answers at exact multiples: ceil(0.07 * 100) is 8
 * in doubles (0.07 * 100 = 7.000000000000001), ceil(0.28 * 25) is 8 and
 * (int)(0.29 * 100) is 28; here they are 7, 7 and 29.  Where Pekko's doubles give the exact answer (all of its
 * published examples), the results are the same.  Rates finer than 1e-6 are
 * rounded to the nearest millionth.
 *
 * No clock and no random source are read here: the caller passes the time
 * (milliseconds, any monotonic origin) and a random source (struct
 * shmr_ctl_rng), so every decision is reproducible in a unit test.
 *
 * Concurrency: none of these functions is thread-safe on a shared state;
 * shmr-control is single-threaded.  All are wait-free and allocate nothing.
 */
#ifndef SHMR_CONTROL_RESIZER_H
#define SHMR_CONTROL_RESIZER_H

#include <stdint.h>

#include <shmr/layout.h>

#include "resizer_conf.h"

/** The largest pool size a resizer accepts as an upper bound: a pool cannot
 *  have more routees than the domain has endpoint slots.  The parameters
 *  (struct shmr_conf_resizer_cfg, struct shmr_conf_optimal_cfg), their
 *  defaults and their ranges are config/'s (resizer_conf.h). */
#define SHMR_CTL_POOL_MAX SHMR_CONF_POOL_MAX

/** One routee's load at the moment the resizer looks. */
struct shmr_ctl_routee_load {
	uint32_t busy;  /**< nonzero: its worker is handling a message */
	uint32_t depth; /**< messages waiting in its inbox (not the one in
			 *   hand) */
};

/** A random source: next() returns a double in [0, 1). */
struct shmr_ctl_rng {
	double (*next)(void *ctx);
	void *ctx;
};

/**
 * A ready-made source for shmr_ctl_rng: splitmix64 over the uint64_t that
 * @p ctx points to (seed it with any value), returning its top 53 bits as a
 * double in [0, 1).
 *
 * Ownership: the caller owns the state word.
 */
double shmr_ctl_rng_splitmix(void *ctx);

/* ------------------------------------------------------------------ */
/* Default resizer                                                     */
/* ------------------------------------------------------------------ */

/*
 * Pekko's DefaultResizer: every messages-per-resize messages, count the
 * routees under pressure; when all of them are, grow by
 * ceil(rampup-rate * size); when fewer than backoff-threshold of them are,
 * shrink by ceil(backoff-rate * size) (Pekko's floor(-rate * size)); keep
 * the result within [lower-bound, upper-bound].
 */

/**
 * Whether the message numbered @p message_counter should trigger a resize:
 * counter % messages-per-resize == 0.  The counter starts at 0 for the
 * initial resize (before the first message) and counts messages from 1.
 * Context: @p c passed shmr_config_resizer_check().
 */
int shmr_ctl_resizer_is_time(const struct shmr_conf_resizer_cfg *c,
			     uint64_t message_counter);

/**
 * How many of the @p n routees of @p r are under pressure, by
 * pressure-threshold T as Pekko defines it:
 *   T < 1: the routee is busy (handling a message);
 *   T = 1: it is busy and has at least one message waiting;
 *   T > 1: it has at least T messages waiting, busy or not.
 */
unsigned shmr_ctl_resizer_pressure(const struct shmr_conf_resizer_cfg *c,
				   const struct shmr_ctl_routee_load *r,
				   unsigned n);

/**
 * Proposed growth: 0 when @p pressure < @p capacity, else
 * ceil(rampup-rate * capacity).  Rampup 0.2: 9 of 10 is 0, 5 of 5 is 1,
 * 6 of 6 is 2.
 * Context: @p c passed shmr_config_resizer_check(); @p capacity <=
 *          SHMR_CTL_POOL_MAX.
 */
int shmr_ctl_resizer_rampup(const struct shmr_conf_resizer_cfg *c,
			    unsigned pressure, unsigned capacity);

/**
 * Proposed shrink (<= 0): -ceil(backoff-rate * capacity) when
 * backoff-threshold > 0, backoff-rate > 0, @p capacity > 0 and
 * @p pressure / @p capacity < backoff-threshold (compared exactly), else 0.
 * Threshold 0.3 and rate 0.1: 3 of 10 is 0, 2 of 10 is -1.
 * Context: as shmr_ctl_resizer_rampup().
 */
int shmr_ctl_resizer_backoff(const struct shmr_conf_resizer_cfg *c,
			     unsigned pressure, unsigned capacity);

/**
 * The change for a pool of @p size routees of which @p pressure are under
 * pressure: rampup + backoff, then clamped so that size + change is within
 * [lower-bound, upper-bound] (so a pool outside its bounds is brought back
 * to the nearest one, and an empty pool grows to lower-bound).
 * Context: as shmr_ctl_resizer_rampup().
 */
int shmr_ctl_resizer_delta(const struct shmr_conf_resizer_cfg *c,
			   unsigned pressure, unsigned size);

/**
 * Pekko's resize(): shmr_ctl_resizer_delta() of the pressure of the @p n
 * routees of @p r, the pool being those @p n.
 * Context: as shmr_ctl_resizer_rampup().
 */
int shmr_ctl_resizer_capacity(const struct shmr_conf_resizer_cfg *c,
			      const struct shmr_ctl_routee_load *r,
			      unsigned n);

/* ------------------------------------------------------------------ */
/* Optimal-size exploring resizer                                      */
/* ------------------------------------------------------------------ */

/*
 * Pekko's OptimalSizeExploringResizer.  Every action-interval the daemon
 * reports the pool's load (shmr_ctl_optimal_report()) and then asks for a
 * change (shmr_ctl_optimal_resize()), in that order, as Pekko does.
 *
 * A routee is utilized when it is busy or has messages waiting; the pool is
 * fully utilized when all its routees are.  A report of a fully utilized
 * pool that follows another fully utilized report records the mean time per
 * message processed at that pool size (the interval's milliseconds over the
 * messages processed in it) in the performance log, as an exponentially
 * weighted mean: old * (1 - w) + latest * w.  A report of a pool that is not
 * fully utilized starts (or continues) an underutilization streak, which
 * remembers when it started and the highest utilization seen during it.
 *
 * The decision, one of:
 *   - downsize: the streak started more than downsize-after-underutilized-for
 *     ago: shrink to floor(highest utilization * downsize-ratio), never grow;
 *   - hold: the log is empty, or a (younger) streak is on: no change;
 *   - explore (draw < chance-of-exploration): a step of
 *     max(1, floor(draw * ceil(size * explore-step-size))), down with
 *     chance-of-ramping-down-when-full, else up;
 *   - optimize: among the logged sizes around the current one
 *     (optimization-range / 2 nearest below, the same number at or above,
 *     and everything logged between them), take the fastest (ties: the
 *     smaller size) and move half-way to it, rounded away from the current
 *     size.
 * and the result is clamped into [lower-bound, upper-bound].
 *
 * Random draws, in order: one for explore-or-optimize, then (explore only)
 * one for the step and one for the direction.  Downsize and hold draw none.
 *
 * Memory: the log is a fixed array indexed by pool size, so the state is
 * bounded (Pekko's O(upper - lower) map); sizes above SHMR_CTL_POOL_MAX are
 * not logged.
 */

/** What shmr_ctl_optimal_resize() decided. */
enum shmr_ctl_optimal_action {
	SHMR_CTL_OPTIMAL_HOLD = 0,
	SHMR_CTL_OPTIMAL_DOWNSIZE,
	SHMR_CTL_OPTIMAL_EXPLORE,
	SHMR_CTL_OPTIMAL_OPTIMIZE,
};

/** One performance log entry. */
struct shmr_ctl_optimal_perf {
	uint32_t logged;   /**< nonzero once a mean has been recorded */
	double ms_per_msg; /**< weighted mean time per message processed */
};

/** The resizer's state; the caller owns it (no allocation). */
struct shmr_ctl_optimal {
	struct shmr_conf_optimal_cfg cfg; /**< a validated copy */
	uint32_t checked;         /**< a report has been made */
	uint64_t check_ms;        /**< time of the last report */
	uint32_t streak;          /**< an underutilization streak is on */
	uint64_t streak_start_ms; /**< when it started */
	unsigned streak_highest;  /**< highest utilization seen during it */
	unsigned nlogged;         /**< sizes in the log */
	struct shmr_ctl_optimal_perf log[SHMR_CTL_POOL_MAX + 1];
};

/**
 * Validate @p c and start @p o from it: empty log, no report yet.
 * Errors: -EINVAL as shmr_config_optimal_check(); @p o is then untouched.
 */
int shmr_ctl_optimal_init(struct shmr_ctl_optimal *o,
			  const struct shmr_conf_optimal_cfg *c,
			  const char **field);

/**
 * Whether it is time to report and resize: no report yet, or more than
 * action-interval since the last one (strictly).
 */
int shmr_ctl_optimal_is_time(const struct shmr_ctl_optimal *o,
			     uint64_t now_ms);

/**
 * Report the pool at @p now_ms: its @p n routees' loads @p r (the pool size
 * is @p n) and the messages its routees finished since the last report,
 * @p processed.  Updates the performance log and the underutilization
 * streak as described above, and makes @p now_ms the last report time.
 */
void shmr_ctl_optimal_report(struct shmr_ctl_optimal *o, uint64_t now_ms,
			     const struct shmr_ctl_routee_load *r, unsigned n,
			     uint64_t processed);

/**
 * The change for a pool of @p size routees at @p now_ms, drawing from
 * @p rng as described above; the decision goes to *@p action when
 * @p action is not NULL.  Call it right after shmr_ctl_optimal_report().
 */
int shmr_ctl_optimal_resize(struct shmr_ctl_optimal *o, uint64_t now_ms,
			    unsigned size, const struct shmr_ctl_rng *rng,
			    enum shmr_ctl_optimal_action *action);

/**
 * The logged mean time per message at pool size @p size.
 * Returns: 0 with *@p ms_per_msg, or -ENOENT when @p size has none.
 */
int shmr_ctl_optimal_logged(const struct shmr_ctl_optimal *o, unsigned size,
			    double *ms_per_msg);

#endif /* SHMR_CONTROL_RESIZER_H */
