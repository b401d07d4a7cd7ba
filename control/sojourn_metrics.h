/*
 * The routes' sojourn histograms in the Prometheus text exposition format
 * (metrics.c, beside the registry's families), for the metrics render (`shmrctl metrics`, GET
 * /metrics).  Internal to the control plane: not for direct inclusion
 * outside control/ and tests/unit/control/.
 *
 *   # HELP shmr_route_sojourn_seconds ...
 *   # TYPE shmr_route_sojourn_seconds histogram
 *   shmr_route_sojourn_seconds_bucket{router="R",route="Q",le="1.28e-07"} N
 *   ... one per power of four from 128 ns to 34.4 s, then le="+Inf"
 *   shmr_route_sojourn_seconds_sum{router="R",route="Q"} S
 *   shmr_route_sojourn_seconds_count{router="R",route="Q"} N
 *
 * The `le` edges are powers of two nanoseconds, each a bucket edge of the
 * histogram (shmr/hist.h), so every cumulative count is exact; a bucket
 * counts the sojourns below its edge (one of exactly 2^k ns is counted
 * from the next edge up).  _count is the +Inf bucket (the buckets' sum),
 * _sum the receiver's own running sum: both hints, as every word of the
 * lanes part.
 */
#ifndef SHMR_CONTROL_SOJOURN_METRICS_H
#define SHMR_CONTROL_SOJOURN_METRICS_H

#include <stddef.h>

#include <shmr/hist.h>

#define SHMR_CTL_SOJOURN_METRIC "shmr_route_sojourn_seconds"

/**
 * Append the family's HELP and TYPE lines to @p buf (@p cap bytes, @p *len
 * used so far).
 * Context: any; pure.  Returns: 0, or -ENOSPC (nothing appended).
 */
int shmr_ctl_sojourn_metrics_head(char *buf, size_t cap, size_t *len);

/**
 * Append route @p route of router @p router: its buckets, sum and count
 * from @p s.
 * Context: any; pure.  Returns: 0, or -ENOSPC (nothing appended).
 */
int shmr_ctl_sojourn_metrics_route(char *buf, size_t cap, size_t *len,
				   const char *router, const char *route,
				   const struct shmr_hist_summary *s);

#endif
