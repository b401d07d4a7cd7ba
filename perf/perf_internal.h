/*
 * shmr-perf internals: options, timing, pinning, the wait policy shared by
 * every measured loop; the runs' declarations are in perf_modes.h and
 * perf_app.h, included below.  Not installed; not for direct inclusion
 * outside perf/.
 */
#ifndef SHMR_PERF_INTERNAL_H
#define SHMR_PERF_INTERNAL_H

#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <shmr/shmr.h>

#include <rte_cycles.h>
#include <rte_pause.h>

/* Exit codes. */
#define PERF_EXIT_OK 0
#define PERF_EXIT_FAIL 1  /* lost or reordered messages, or a run failed */
#define PERF_EXIT_USAGE 2 /* bad arguments */
#define PERF_EXIT_SKIP 77 /* meson's "skipped": the appliance is not built */

/* What a run is asked to do; filled from the command line. */
struct perf_opts {
	unsigned slot;        /* bytes per ring element (header included) */
	unsigned burst;       /* messages per ring operation */
	uint64_t count;       /* messages pushed through the chain */
	unsigned rtt;         /* measured round trips */
	unsigned lane;        /* ring entries (power of two) */
	int cpu_client;       /* producer / client / pinger */
	int cpu_hub;          /* forwarder / dataplane / ponger */
	int cpu_sink;         /* consumer / sink workers */
	unsigned routes;      /* sink routes behind the router */
	int poll_busy;        /* router: poll_mode busy (else adaptive) */
	int sojourn_off;      /* router: `sojourn = false` (no stamps) */
	unsigned sojourns;    /* router, compare: PERF_SOJ_* bits to run */
	unsigned polls;       /* router, compare: PERF_POLL_* bits to run */
	int by_type;          /* router: behaviour "type" (else "hash") */
	const char *logic;    /* router: this routing logic over the routes
			       * instead (round-robin, ..., broadcast) */
	const char *logics;   /* logics: comma-separated list to run */
	unsigned vnodes;      /* consistent-hash: virtual_nodes (0: default) */
	unsigned lcores;      /* router: routing lcores */
	unsigned reps;        /* compare: repetitions of each */
	int keep;             /* router: keep the temporary run directory */
	int json;             /* --json: JSON Lines on stdout (json.c) */
	int wait_idle;        /* compare: wait for a quiet machine each run */
	int churn;            /* churn mode: the appliance has group "churn" */
	unsigned rate;        /* churn: route changes asked per second */
	unsigned phase_ms;    /* churn: length of each quiet, churn or bare phase */
	int verbose;
	size_t size;          /* large: payload bytes (--size) */
	const char *arena;    /* router: the domain's arena classes line */
	unsigned idle;        /* router: endpoints opened and left idle
			       * beside the stream (shmr-perf idle) */
	unsigned max_endpoints; /* router: the domain's max_endpoints (0:
				 * its default) */
};

/* --poll: which of the domain's poll modes the router runs use. */
#define PERF_POLL_BUSY 1u
#define PERF_POLL_ADAPTIVE 2u

/* --sojourn: router runs with the sojourn stamps on, off, or both (bits
 * 1 and 2, as PERF_POLL_*'s). */
#define PERF_SOJ_ON 1u
#define PERF_SOJ_OFF 2u

/* What one run measured. */
struct perf_result {
	uint64_t sent;
	uint64_t received;
	uint64_t gaps;     /* a key/sequence skipped forward */
	uint64_t reorders; /* a key/sequence at or below the last one seen */
	double mps;        /* messages per second */
	double dps;        /* logic runs: deliveries per second (broadcast:
			    * mps times the routes) */
	double p50_us, p99_us, p999_us, max_us; /* round trip */
	unsigned rtt;      /* round trips measured */
	/* bare only: the three-process round trip (the call's shape). */
	double rtt3_p50_us, rtt3_p99_us, rtt3_p999_us, rtt3_max_us;
	unsigned rtt3;
	/* Bare same-core handoff (two processes, one core, yield at once):
	 * the two context switches a call on two cores cannot avoid. */
	double handoff_p50_us, handoff_p99_us, handoff_p999_us, handoff_max_us;
	unsigned handoff;
};

/* At most this many --reps (and median inputs). */
#define PERF_REPS_MAX 101

/** Non-zero when @p r received every message sent, in order. */
int perf_result_ok(const struct perf_result *r);
/** As perf_result_ok(), and when not, one line on stderr: "@p who:
 *  LOSS/ORDER: sent ..., received ...". */
int perf_result_checked(const char *who, const struct perf_result *r);

/** The median of @p n figures (n <= PERF_REPS_MAX); 0 when n is 0. */
double perf_median(const double *v, unsigned n);

/** Every figure of @p v[0..n) medianed field by field; counts of v[0]. */
void perf_result_median(const struct perf_result *v, unsigned n,
			struct perf_result *out);

struct json_object;

/* ---- ratios from interleaved pairs (perf_util.c) --------------------- */

/*
 * A ratio on a shared machine: the baseline itself swings from run to run
 * (the bare chain read 50 to 76 M msg/s in one day), so a ratio of two
 * medians taken minutes apart is noise.  Each measured run is divided by
 * the baseline run interleaved next to it (the same repetition), and the
 * figure is the median of those per-pair ratios; their spread,
 * (max - min) / median, says how far one pair can be trusted, and a
 * spread over PERF_RATIO_SPREAD_WARN gets a warning line.
 */
#define PERF_RATIO_SPREAD_WARN 0.10

struct perf_ratio {
	double median; /* of the per-pair ratios; 0 when no pair counted */
	double min, max;
	double spread; /* (max - min) / median; 0 when median is 0 */
	unsigned pairs; /* pairs counted: those with both figures > 0 */
};

/**
 * The ratio of @p num[i] to @p den[i], i < @p n (n <= PERF_REPS_MAX),
 * pair by pair: median, range and spread into @p out.  A pair where
 * either figure is not above 0 (a run that measured nothing) is left out.
 *
 * Context:     any; no allocation.
 */
void perf_ratio_pairs(const double *num, const double *den, unsigned n,
		      struct perf_ratio *out);

/* Runs whose fastest is over this many times their slowest ran in two
 * modes of the host, not through ordinary noise (docs/benchmarks.md,
 * "The worker's receive and the client's send", "The host's speed, pair
 * by pair"). */
#define PERF_SPEEDS_APART 2.0

/**
 * perf_ratio_pairs() of the pairs whose @p speed (higher: faster; compare
 * gives the inverse of the pair's ping-pong probe) is at or above a cut
 * into @p fast, and of those below into @p slow, when the @p speed above
 * 0 spread over PERF_SPEEDS_APART (the fastest over that many times the
 * slowest).  The cut is halfway between the slowest and the fastest.  A
 * pair whose speed is not above 0 is in neither.
 * Context:     any; no allocation.
 * Returns:     the cut, or 0 (and both left empty) when they do not
 *              spread that far.
 */
double perf_ratio_by_speed(const double *num, const double *den,
			   const double *speed, unsigned n,
			   struct perf_ratio *fast, struct perf_ratio *slow);

/*
 * The host's speed, pair by pair: compare runs this many round trips of
 * the bare two-process ping-pong (perf_bare_probe(), under 40 ms here)
 * before and after every run.  Its p50 is about 0.13 us in one mode of
 * the two-speed host and 0.7 in the other; a pair whose probes spread
 * over PERF_SPEEDS_APART was measured across a change of speed, and is
 * left out of the ratios.
 */
#define PERF_PROBE_RTTS 2000u

/* Did a pair's probes, p50s from @p lo to @p hi (us), keep one speed? */
static inline int perf_probes_one_speed(double lo, double hi)
{
	return hi <= PERF_SPEEDS_APART * lo;
}

/** Non-zero when @p r's spread is over PERF_RATIO_SPREAD_WARN. */
static inline int perf_ratio_warn(const struct perf_ratio *r)
{
	return r->pairs > 1 && r->spread > PERF_RATIO_SPREAD_WARN;
}

/**
 * Print "@p what: median M of N pairs (range A..B, spread S %)" and,
 * when perf_ratio_warn(), a second line "warning: ...".  The caller
 * prints the bar and its verdict after it on the same line: no newline
 * at the end of the first line.
 */
void perf_ratio_print(const char *what, const struct perf_ratio *r);

/**
 * --json: @p key (the median), @p key_min, @p key_max, @p key_spread,
 * @p key_pairs, @p key_spread_warning (a boolean) in @p j (json.c).
 */
void perf_json_ratio(struct json_object *j, const char *key,
		     const struct perf_ratio *r);

/* ---- --json (json.c; the schema is in docs/benchmarks.md) ------------ */

/* Bumped when a key changes meaning or goes away (not when one is added). */
#define PERF_JSON_SCHEMA 1

struct json_object;

/* Where the JSON Lines go: NULL without --json. */
extern FILE *perf_json;

/**
 * --json: keep stdout for JSON Lines only and send everything printf()
 * writes (the text report, the progress of a long run) to stderr.
 *
 * Context:     main(), once, before any output and before any fork.
 * Errors:      -1 with errno set (dup, fdopen or dup2 failed).
 */
int perf_json_open(void);

/**
 * A new record {"schema", "mode", "record"}.
 *
 * Ownership:   the caller's, until perf_json_emit() writes and frees it.
 */
struct json_object *perf_json_record(const char *mode, const char *record);

/** The setup of a run: slot_bytes, burst, ...; @p router adds routes. */
void perf_json_setup(struct json_object *j, const struct perf_opts *o,
		     int router);

/** "cpus": [client, hub, sink] of @p o. */
void perf_json_cpus(struct json_object *j, const struct perf_opts *o);

/** @p r's round trips: rtt_count, rtt_p50_ns ... rtt_max_ns (none when
 *  r->rtt is 0). */
void perf_json_rtt(struct json_object *j, const struct perf_result *r);

/** What the consumer or sinks checked: sent, received, lost, gaps,
 *  reordered and ok. */
void perf_json_counts(struct json_object *j, const struct perf_result *r);

/** A run's figures; @p median: figures only, no counts of messages. */
void perf_json_result(struct json_object *j, const struct perf_result *r,
		      int median);

/**
 * A run's record, {"record": "run", "rep": @p rep} with its figures, or
 * with @p rep 0 a median's, {"record": "median", "reps": o->reps}: the
 * setup of @p o (@p router: with the router's), "run": @p run, and @p r.
 * Add keys, then perf_json_emit() it.
 */
struct json_object *perf_json_run(const char *mode, const struct perf_opts *o,
				  int router, unsigned rep, const char *run,
				  const struct perf_result *r);

void perf_json_str(struct json_object *j, const char *key, const char *v);
void perf_json_u64(struct json_object *j, const char *key, uint64_t v);
void perf_json_num(struct json_object *j, const char *key, double v);
void perf_json_bool(struct json_object *j, const char *key, int v);

/**
 * Write @p j as one line when --json is on, and free it either way.
 *
 * Ownership:   takes @p j.
 */
void perf_json_emit(struct json_object *j);

/**
 * `shmr-perf report [--out DIR] FILE...`: plots from JSON results with
 * gnuplot (report.c).  Returns an exit code.
 */
int perf_report_main(int argc, char **argv);

/* ---- timing ---------------------------------------------------------- */

static inline uint64_t perf_now_ns(void)
{
	struct timespec ts;

	/* vDSO on this kernel's tsc clocksource: no syscall. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** TSC ticks per microsecond, measured once against CLOCK_MONOTONIC. */
double perf_tsc_per_us(void);
/* What one read of the clock the stamps use (rte_rdtsc()) takes here, in
 * ns: the median cost is not the point, the order of magnitude is (a
 * send reads it once per call that places slots, a receive once). */
double perf_tsc_read_ns(void);

/** Sort @p n TSC deltas in place and fill the round-trip fields of @p r. */
void perf_latency_summary(uint64_t *ticks, unsigned n, struct perf_result *r);

/**
 * Wait (sleeping) until the machine has been nearly idle for a second, at
 * most @p max_s seconds.  Called between runs only, never while our
 * processes run.  Returns 0 when idle, -1 when it gave up.
 */
int perf_wait_idle(unsigned max_s);

/* ---- interruption (perf_stop.c) -------------------------------------- */

/* How long a stop waits for a process it asked to end, before SIGKILL. */
#define PERF_STOP_TIMEOUT_MS 20000

/**
 * Handle SIGINT, SIGTERM and SIGHUP (those not ignored at start): stop
 * every registered process (its signal, then SIGKILL after
 * PERF_STOP_TIMEOUT_MS), remove every registered directory, say so in one
 * line, and die of the signal.  Call first thing in main().
 */
void perf_stop_init(void);

/** Register a process the run started, to be stopped with @p sig
 *  (at most 4 + PERF_FAN_MAX at once). */
void perf_track_pid(pid_t pid, int sig);

/** The run has reaped @p pid itself. */
void perf_untrack_pid(pid_t pid);

/** Register a directory the run made, removed whole (at most 4). */
void perf_track_dir(const char *path);

/** The run has removed @p path itself (or keeps it: --keep). */
void perf_untrack_dir(const char *path);

/**
 * In a child forked by the harness: the signal dispositions the harness
 * started with, and @p sig when the harness dies (PR_SET_PDEATHSIG), so a
 * pinned, busy-polling child never outlives it.  Exits when @p parent (the
 * harness's pid before the fork) is already gone.
 */
void perf_child_init(pid_t parent, int sig);

/* ---- pinning --------------------------------------------------------- */

/** Pin the calling process to @p cpu.  Returns 0 or -errno. */
int perf_pin(int cpu);

/** Non-zero when @p cpu is one this process may run on. */
int perf_cpu_usable(int cpu);

/*
 * The default --cpus, from the topology: the first PU of each of the
 * first cores this process may use.  With three cores or more, client,
 * hub and sinks get one each (no sharing, no context switch on a call's
 * path); with two, the sinks share the client's.  Returns 0, or -1 (fewer
 * than two cores found, or hwloc failed) leaving @p o as it was.
 */
int perf_default_cpus(struct perf_opts *o);

/** Undo perf_pin(): allow every CPU the process started with. */
void perf_unpin(void);

/** Remember the start-up affinity for perf_unpin(); call first thing. */
void perf_affinity_save(void);

/*
 * The wait policy of every process that shares a core in the measured
 * chains (producer, consumer, client, sinks): spin a little with pause,
 * then give the core away with sched_yield().  On 2 cores with 3 or more
 * processes this is what keeps two pollers on one core from holding the
 * core for a whole scheduler slice each (ARCHITECTURE.md: ~128 k msg/s).
 * The yield is a syscall, but only on the path that found no work.
 * PERF_SPIN_SHARED may be overridden with -D for experiments.
 */
#ifndef PERF_SPIN_SHARED
#define PERF_SPIN_SHARED 8u
#endif
#define PERF_SPIN_ALONE 4096u

static inline void perf_backoff(unsigned *idle, unsigned spin)
{
	if (++*idle < spin) {
		rte_pause();
	} else {
		*idle = 0;
		sched_yield();
	}
}

/*
 * Liveness bound for the measured loops: a process that sees no progress
 * for this long gives up (a lost message must not hang the benchmark).
 * The clock is read once per 65536 empty polls, never on the work path.
 */
#ifndef PERF_STALL_NS /* -D for the fault-injection tests */
#define PERF_STALL_NS (10ull * 1000 * 1000 * 1000)
#endif

struct perf_stall {
	uint64_t polls;
	uint64_t since;
	uint64_t moved; /* calls that moved something (a send: placed some,
			 * and read the clock once for its stamps) */
};

static inline void perf_progress(struct perf_stall *s)
{
	s->polls = 0;
	s->since = 0;
	s->moved++;
}

/* Returns non-zero once nothing moved for PERF_STALL_NS. */
static inline int perf_stalled(struct perf_stall *s)
{
	uint64_t now;

	if ((++s->polls & 0xffff) != 0)
		return 0;
	now = perf_now_ns();
	if (!s->since) {
		s->since = now;
		return 0;
	}
	return now - s->since > PERF_STALL_NS;
}

/* ---- runs ------------------------------------------------------------ */

/* Each mode's entry point, and the appliance of the router runs. */
#include "perf_modes.h"
#include "perf_app.h"

/** Directory holding the running executable (for finding siblings). */
const char *perf_exe_dir(void);

#endif
