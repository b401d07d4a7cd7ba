/*
 * shmr-perf's in-process runs of the dataplane's own code (dp_core): a
 * domain in heap memory (decide.c), used by `decide` and by `idle`'s round
 * cost (idle_rounds.c).  Not for direct inclusion outside perf/.
 */
#ifndef SHMR_PERF_DP_H
#define SHMR_PERF_DP_H

#include <stdint.h>

#include "dataplane_internal.h"

struct perf_opts;

struct perf_dom {
	void *base; /* free() it */
	struct shmr_dp_env env;
};

/* The largest domain perf_heap_domain() copies to the heap. */
#define PERF_HEAP_DOMAIN_MAX (2ull << 30)

/* What perf_idle_round_ns() returns when the domain is too large. */
#define PERF_IDLE_TOO_BIG (-2.0)

/**
 * A domain of @p o's slot and lane sizes and @p nlcores routing lcores
 * (busy poll) in heap memory, laid out and checked as shmr-control and
 * the dataplane do, of @p o's max_endpoints.
 * Errors: -EINVAL, -ENOMEM, -E2BIG (over PERF_HEAP_DOMAIN_MAX).
 */
int perf_heap_domain(struct perf_dom *d, const struct perf_opts *o,
		     uint32_t nlcores, const char *name);

/**
 * One lcore's cost per message in this process (CPU time of this thread):
 * one sender's bursts of o->burst forwarded to one sink beside @p idle
 * idle endpoints, the lcore sweeping every @p sweep_every rounds (1: every
 * endpoint every round, as the loop did before work bits).  Returns ns per
 * message, or -1 (a message on stderr).
 */
double perf_idle_round_ns(const struct perf_opts *o, unsigned idle,
			  uint32_t sweep_every);

#endif
