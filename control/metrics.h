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
 *              with a larger @p buf, or use
 *              shmr_ctl_metrics_render_grow(): the text grows with the
 *              client endpoints).
 */
int shmr_ctl_metrics_render(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_dlq_files *dlq, char *buf,
			    size_t cap);

/* The first buffer and the most text shmr_ctl_metrics_render_grow()
 * makes. */
#define SHMR_CTL_METRICS_FIRST (1u << 20)
#define SHMR_CTL_METRICS_MAX (64u << 20)

/**
 * As shmr_ctl_metrics_render(), into *@p buf of *@p cap bytes (malloc'd;
 * NULL and 0 the first time), grown by doubling up to
 * SHMR_CTL_METRICS_MAX as the text needs; the counters are read once.
 *
 * Context:     as shmr_ctl_metrics_render().
 * Returns:     the length written, -ENOSPC past SHMR_CTL_METRICS_MAX,
 *              -ENOMEM (*@p buf and *@p cap stay valid either way).
 */
int shmr_ctl_metrics_render_grow(const struct shmr_ctl_domain *d,
				 const struct shmr_ctl_model *m,
				 struct shmr_ctl_dlq_files *dlq, char **buf,
				 size_t *cap);

/**
 * A memfd holding the @p n bytes of @p text, sealed against every change
 * (shrink, grow, write, more seals): how METRICS answers an asker that
 * said "fd" when the text is more than one answer holds ("OK FD N", the
 * descriptor passed with it).
 *
 * Context:     any thread; syscalls (memfd_create, write, fcntl).
 * Returns:     the descriptor (close-on-exec; the caller closes it), or
 *              -errno.
 */
int shmr_ctl_metrics_memfd(const char *text, size_t n);

#endif
