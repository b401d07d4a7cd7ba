/*
 * Prometheus text exposition (metrics.c): every counter and gauge of the
 * registry (counters.def) with its HELP and TYPE lines, labels router,
 * route, lcore, and endpoint and name for clients' endpoints.  One render function serves both `shmrctl metrics`
 * (the METRICS request on the control socket) and the HTTP listener
 * (GET /metrics).  Internal to the control plane: not for direct inclusion
 * outside control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_METRICS_H
#define SHMR_CONTROL_METRICS_H

#include <stddef.h>

#include "format.h"
#include "model.h"

struct shmr_ctl_domain;
struct shmr_ctl_dlq_files;

/* The content type of what shmr_ctl_metrics_render() writes. */
#define SHMR_CTL_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/**
 * Format the metrics of @p m with the counters @p c (read with
 * shmr_ctl_counters_read()) into @p buf: text exposition format 0.0.4,
 * NUL-terminated.  Pure: touches no shared memory.
 *
 * Context:     any thread; @p m and @p c are not changed.
 * Returns:     the length written (without the NUL), or -ENOSPC when
 *              @p cap is too small (then @p buf holds a truncated prefix:
 *              retry with a larger buffer).
 */
int shmr_ctl_metrics_format(const struct shmr_ctl_model *m,
			    const struct shmr_ctl_counters *c, char *buf,
			    size_t cap);

/**
 * Read the counters of the domain @p d (relaxed loads; never writes a line
 * the dataplane writes) and the dead-letter counts of @p dlq (NULL: none),
 * then format them as shmr_ctl_metrics_format() does.
 *
 * Context:     the control plane's thread (the one that owns @p m); does
 *              not block beyond reading the dead-letter files.
 * Concurrency: the dataplane and libshmr keep writing their counters
 *              meanwhile; each value is a consistent word, the set a
 *              snapshot taken within one pass.
 * Returns:     the length written (without the NUL), or -ENOSPC (retry
 *              with a larger @p buf; 1 MiB holds the largest domain the
 *              limits allow, about 100 KiB: test_format.c checks it).
 */
int shmr_ctl_metrics_render(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_dlq_files *dlq, char *buf,
			    size_t cap);

#endif
