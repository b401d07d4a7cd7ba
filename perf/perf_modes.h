/*
 * shmr-perf's modes: the entry point of each (shmr-perf.c's commands) and
 * the runs one mode borrows from another (logics runs the bare baselines
 * and the router run, idle the router run).  Not installed;
 * perf_internal.h includes it.
 */
#ifndef SHMR_PERF_MODES_H
#define SHMR_PERF_MODES_H

#include "perf_internal.h"

/**
 * The bare baseline: producer -> forwarder -> consumer over two SPSC
 * rte_rings in a memfd, then a ping-pong over two more, then a round trip
 * pinger -> forwarder -> echoer -> forwarder -> pinger (the router call's
 * three processes, pinning and waits).  Forks its processes and blocks in
 * waitpid while they run.
 * Returns 0, or -1 when a child failed (message printed).
 */
int perf_bare_run(const struct perf_opts *o, struct perf_result *r);

/*
 * The host's speed now: PERF_PROBE_RTTS round trips of the bare
 * two-process ping-pong (client's cpu <-> hub's), their p50 in *@p p50_us.
 * Returns 0, or -1 (said on stderr).
 */
int perf_bare_probe(const struct perf_opts *o, double *p50_us);

/*
 * perf_bare_probe(), folded into the range [*@p lo, *@p hi] of a pair's
 * probes (@p first: start it).  A pair whose range spreads over
 * PERF_SPEEDS_APART was measured across a change of the host's speed.
 * Returns 0, or -1 when the probe failed.
 */
int perf_probe_fold(const struct perf_opts *o, double *lo, double *hi,
		    int first);

/**
 * The bare fan-out: producer -> forwarder -> o->routes consumers over
 * SPSC rte_rings, slot seq s to consumer s % routes, the forwarder
 * batching per consumer (a burst per enqueue, partial buffers out when
 * its input is empty); each consumer checks its order.  The baseline of
 * `shmr-perf logics` (hash over the same number of sinks).
 * Returns 0, or -1 when a child failed (message printed).
 */
int perf_bare_fanout_run(const struct perf_opts *o, struct perf_result *r);

/**
 * The same chain through the appliance: starts shmr-control on a private
 * domain with @p o->routes shmr-perf-sink routes, pushes o->count messages
 * through router "perf", collects the sinks' counts, then times calls.
 * Returns 0, -1 on failure (message printed), or -PERF_EXIT_SKIP when the
 * appliance binaries cannot be found.
 */
int perf_router_run(const struct perf_opts *o, struct perf_result *r);

/**
 * `shmr-perf churn`: a steady stream through router "perf" while the
 * control plane applies o->rate route changes a second, against the same
 * stream without changes, in alternating phases (churn.c).
 * Returns an exit code.
 */
int perf_churn_main(const struct perf_opts *o);

/**
 * shmr-perf large (large.c): o->count payloads of o->size bytes in arena
 * buffers through a round-robin router to one sink (the producer stamps a
 * sequence number into each, never rewrites the whole), against memcpy of
 * the same buffers on the client's core and against the payload carried
 * in inline slots (slot_size 4096, chunks of 4048 bytes); then the call
 * round trip with a buffer of o->size bytes against one of 64 bytes.
 * Prints "large: SIZE ... M msg/s ... GB/s, vs memcpy X.XX" and the rest;
 * with --json, a record per run and a summary on perf_json.
 * Returns 0, -1, or -PERF_EXIT_SKIP as perf_router_run().
 */
int perf_large_run(const struct perf_opts *o);

/* large.c: the bytes its memcpy baseline read back (keeps the copies). */
extern uint64_t perf_large_kept;

/* What one of large.c's streams measured (perf_large_stream()). */
struct perf_large {
	struct perf_result stream; /* the slots the sink checked: sent,
				    * received, gaps, reorders; mps: the
				    * payloads a second */
	struct perf_result call;   /* with o->rtt, arena stream: the call
				    * with a buffer of o->size bytes (rtt,
				    * p50_us ... max_us) */
	struct perf_result call64; /* and the 64-byte inline call */
};

/**
 * large.c's parts, for shmr-perf iceoryx: o->count messages of o->size
 * bytes through the router, in arena buffers (@p chunk 0) or each as
 * size / chunk inline slots of @p chunk bytes (the messages a second, or
 * -1; with o->rtt and @p chunk 0, the call round trips after), what it
 * measured in @p out; memcpy of o->size bytes on the client's core
 * (copies a second); the size as "64K", "1M" or bytes.
 */
double perf_large_stream(const struct perf_opts *o, size_t chunk,
			 struct perf_large *out);
double perf_large_memcpy(const struct perf_opts *o);
void perf_large_size_name(size_t size, char *buf, size_t cap);

/**
 * shmr-perf iceoryx (iceoryx_large.c, built with libiceoryx-binding-c):
 * o->count chunks of o->size bytes from an iceoryx publisher to a
 * subscriber (loan, stamp a sequence number, publish; take, check,
 * release) under a RouDi of its own, o->reps runs interleaved with
 * shmr-perf large's arena stream.  Prints "large: SIZE ...", "iceoryx:
 * SIZE ... M msg/s ... GB/s, vs memcpy X.XX" (medians) and the median
 * ratio shmr / iceoryx; with --json, a record per run and a summary.
 * Returns 0 or -1.
 */
int perf_iceoryx_run(const struct perf_opts *o);
/** One iceoryx run: the chunks a second, or -1 (said on stderr); the
 *  subscriber's check in @p r (sent, received; gaps: chunks out of
 *  sequence). */
double perf_iceoryx_stream(const struct perf_opts *o, struct perf_result *r);

/**
 * --json, large and iceoryx (large.c): a record of @p mode with the
 * payloads' setup (size_bytes, count, round_trips, cpus) and, with
 * @p run, "run": @p run; perf_large_json_rate() adds msgs_per_s and
 * gb_per_s for @p mps messages of o->size bytes a second.
 */
struct json_object *perf_large_json(const char *mode, const char *record,
				    const struct perf_opts *o,
				    const char *run);
void perf_large_json_rate(struct json_object *j, const struct perf_opts *o,
			  double mps);

/* large: the largest --size (an arena buffer's, SHMR_ARENA_BUF_MAX), and
 * the inline baseline's chunk (a 4096-byte slot less its 48-byte header). */
#define PERF_LARGE_MAX (64u << 20)
#define PERF_LARGE_CHUNK 4048u

/**
 * `shmr-perf idle`: the router run with o->idle idle endpoints attached
 * against the same run with none, in pairs (idle.c).  Returns an exit
 * code.
 */
int perf_idle_main(const struct perf_opts *o);

/**
 * `shmr-perf logics`: each routing logic in turn over o->routes sinks,
 * interleaved with the bare two-hop baseline, o->reps times; prints each
 * run and the medians with their ratio to the baseline.
 * Returns an exit code.
 */
int perf_logics_main(const struct perf_opts *o);

/**
 * `shmr-perf decide`: the dataplane's routing decision alone, per logic,
 * timed in this process over o->routes routees.  Returns an exit code.
 */
int perf_decide_main(const struct perf_opts *o);

/** `shmr-perf load ...`: the demo load generator.  Returns an exit code. */
int perf_load_main(int argc, char **argv);

#endif
