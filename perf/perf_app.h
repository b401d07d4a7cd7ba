/*
 * The private appliance of a router run (router.c's essay): started,
 * attached to, asked and stopped by the modes that measure through
 * shmr-control and the dataplane (router.c, large.c, churn.c).  Not
 * installed; perf_internal.h includes it.
 */
#ifndef SHMR_PERF_APP_H
#define SHMR_PERF_APP_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include <shmr/shmr.h>

#include "perf_internal.h"

/* How long a call waits for its answer; calls made before a round trip
 * is timed. */
#define PERF_CALL_TIMEOUT_MS 10000
#define PERF_CALL_WARMUP 1000u

/* A private appliance of a router run (router.c's essay). */
struct perf_app {
	char dir[64];
	char conf[PATH_MAX];
	char sock[PATH_MAX];
	char log[PATH_MAX];
	char domain[SHMR_NAME_MAX];
	pid_t control;
	int log_shown;
};

/**
 * Attach to @p a's domain, open an endpoint, look up the router (@p d,
 * @p ep, @p router): perf_app_client() without its pinning and message.
 * 0, or a negative code.
 */
int perf_app_attach(const struct perf_app *a, struct shmr_domain **d,
		    struct shmr_endpoint **ep, struct shmr_pid *router);

/**
 * Start the appliance of @p o (router "perf" over o->routes sinks; with
 * o->churn, churn's group "churn" as well) in a fresh temporary directory.
 * Returns 0, -1 (message printed), or -PERF_EXIT_SKIP (not built).
 */
int perf_app_start(struct perf_app *a, const struct perf_opts *o);

/**
 * Attach to @p a's domain as a client of router "perf" (@p d, @p ep,
 * @p router), then pin to o->cpu_client (after the forks: shmr-control
 * must not inherit it).  0, or -1 (message printed, naming @p who).
 */
int perf_app_client(const struct perf_app *a, const struct perf_opts *o,
		    const char *who, struct shmr_domain **d,
		    struct shmr_endpoint **ep, struct shmr_pid *router);

/** The client's end: close @p ep and detach @p d (either may be NULL),
 *  unpin, then perf_app_stop(). */
void perf_app_end(struct perf_app *a, const struct perf_opts *o,
		  struct shmr_domain *d, struct shmr_endpoint *ep);

/** Stop what perf_app_start() started and remove its directory. */
void perf_app_stop(struct perf_app *a, const struct perf_opts *o);

/**
 * A question @p op (perf_proto.h) to sink s<@p j> through @p router (key
 * and type j); the answer in @p ans.  0, or a negative code (printed).
 */
struct perf_ans;
int perf_sink_call(struct shmr_endpoint *ep, struct shmr_pid router,
		   unsigned j, uint32_t op, uint64_t arg,
		   struct perf_ans *ans);

/**
 * Send all @p n of @p out, retrying while the lane is full (counted in
 * @p full, waiting with perf_backoff()) until @p st says nothing moved
 * for PERF_STALL_NS.  0, or -1 (message printed; @p seq: the first key
 * of the burst, for it).
 */
struct shmr_out;
struct perf_stall;
int perf_send_all(struct shmr_endpoint *ep, struct shmr_out *out,
		  unsigned n, struct perf_stall *st, unsigned *idle,
		  uint64_t *full, uint64_t seq);

/**
 * Ask each of sinks s0..s<@p routes - 1> through @p router what it got
 * from us, against @p total sent round-robin over them (key i to sink
 * i mod routes), until it has them all or its count stops moving; add
 * received, gaps and reorders to @p r.  With @p t_end, also the latest
 * time a sink reached the count it was told to expect.  0 or -1.
 */
int perf_sink_collect(struct shmr_endpoint *ep, struct shmr_pid router,
		      unsigned routes, uint64_t total, struct perf_result *r,
		      uint64_t *t_end);

#endif
