/*
 * The Prometheus listener (http.c): GET /metrics over HTTP with
 * libmicrohttpd, when the configuration sets metrics_listen.  Internal to
 * shmr-control: not for direct inclusion elsewhere.
 */
#ifndef SHMR_CONTROL_HTTP_H
#define SHMR_CONTROL_HTTP_H

#include <stddef.h>

struct MHD_Daemon;
struct shmr_ctl_loop;
struct shmr_ctl_domain;
struct shmr_ctl_model;
struct shmr_ctl_dlq_files;

/* What the listener reads: the loop's epoll set, and what the render
 * reads (metrics.h). */
struct shmr_ctl_http_deps {
	struct shmr_ctl_loop *loop;
	const struct shmr_ctl_domain *d;
	const struct shmr_ctl_model *m;
	struct shmr_ctl_dlq_files *dlq;
};

struct shmr_ctl_http {
	struct shmr_ctl_http_deps dep; /* given to shmr_ctl_http_start() */
	struct MHD_Daemon *mhd;        /* NULL: no listener */
	int timerfd;                   /* MHD's next timeout, or -1 */
	char *buf;                     /* the render's buffer */
	size_t cap;
};

/* Limits of the listener (docs/observability.md says them too). */
#define SHMR_CTL_HTTP_CONNS 16        /* connections at once */
#define SHMR_CTL_HTTP_CONNS_PER_IP 8  /* from one address */
#define SHMR_CTL_HTTP_MEM (16u << 10) /* per connection: request line and
					 headers must fit */
#define SHMR_CTL_HTTP_TIMEOUT_S 10    /* an idle connection is closed */

/**
 * Listen on @p listen ("ADDRESS:PORT", metrics_listen; "" starts nothing)
 * and add the listener to the loop's epoll set (tag SHMR_CTL_TAG_HTTP) of
 * @p loop; a scrape renders @p d, @p m and @p dlq (metrics.h), which must
 * outlive the listener.
 *
 * Context:     the loop's thread, after the loop's set exists.
 * Errors:      -errno (the address cannot be bound, no memory), after
 *              logging one line naming metrics_listen and why.
 */
int shmr_ctl_http_start(struct shmr_ctl_http *h, const char *listen,
			struct shmr_ctl_loop *loop,
			const struct shmr_ctl_domain *d,
			const struct shmr_ctl_model *m,
			struct shmr_ctl_dlq_files *dlq);

/**
 * Serve what is ready (MHD's epoll set or its timer fired): read
 * requests, render /metrics, write answers; never blocks.
 * Context:     the loop's thread (the render reads the model).
 */
void shmr_ctl_http_run(struct shmr_ctl_http *h);

/** Close the listener and every connection; a no-op when none runs. */
void shmr_ctl_http_stop(struct shmr_ctl_http *h);

#endif
