/*
 * The Prometheus listener: GET /metrics (and HEAD) over HTTP, served by
 * libmicrohttpd, never by a parser of ours.
 *
 * Which thread: MHD runs in its "external" epoll mode, inside the control
 * plane's own event loop, not on a thread of its own.  The text comes
 * from shmr_ctl_metrics_render(), which reads the model that only the
 * loop's thread changes; rendering on MHD's thread would race every
 * request the loop handles (or need a lock around the whole model, or a
 * copy of it per scrape).  On the loop's thread the render sees the model
 * between two events, as every answer on the control socket does.  What
 * keeps the loop from blocking: MHD's epoll set is one descriptor in
 * ours (tag SHMR_CTL_TAG_HTTP), MHD_run() only handles what is ready, with
 * non-blocking sockets, and a render is one pass over the counters (no
 * I/O but the dead-letter files' sizes); MHD's own timeouts are a
 * timerfd of ours in the same set, so an idle connection is closed
 * without any other event.
 *
 * The surface: bound to the configured address only; GET and HEAD of
 * /metrics, 404 for another path, 405 (with Allow) for another method;
 * MHD's own answers for what is not HTTP (400), headers that do not fit a
 * connection's memory (431) and the like.  At most SHMR_CTL_HTTP_CONNS
 * connections (SHMR_CTL_HTTP_CONNS_PER_IP from one address), each with
 * SHMR_CTL_HTTP_MEM of memory and closed after SHMR_CTL_HTTP_TIMEOUT_S
 * idle; a connection over the limit is closed at once.  Nothing a client
 * sends is logged above debug, so a scanner cannot fill the log.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <microhttpd.h>

#include <shmr/logline.h>

#include "control_internal.h"
#include "http.h"
#include "metrics.h"
#include "shmr_config.h"


static enum MHD_Result answer_text(struct MHD_Connection *conn,
				   unsigned status, const char *text,
				   const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ok = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct shmr_ctl_http *h = cls;
	struct MHD_Response *r;
	enum MHD_Result ok;
	int n;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "only GET and HEAD\n", "GET, HEAD");
	if (strcmp(url, "/metrics") != 0)
		return answer_text(conn, MHD_HTTP_NOT_FOUND,
				   "not found: the metrics are at /metrics\n",
				   NULL);
	n = shmr_ctl_metrics_render_grow(h->dep.d, h->dep.m, h->dep.dlq,
					 &h->buf, &h->cap);
	if (n < 0)
		return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "metrics too large\n", NULL);
	/* Copied: h->buf is the next scrape's. */
	r = MHD_create_response_from_buffer((size_t)n, h->buf,
					    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				SHMR_CTL_METRICS_CONTENT_TYPE);
	ok = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

/* MHD's own complaints (a client's malformed request, mostly): debug. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	if (shmr_ctl_log_threshold() < SHMR_LOG_DEBUG)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	shmr_ctl_logl(SHMR_LOG_DEBUG, "metrics_listen: %s", line);
}

/* Arm our timerfd for MHD's next timeout (none: disarmed). */
static void arm(struct shmr_ctl_http *h)
{
	struct itimerspec its = { 0 };
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_get_timeout(h->mhd, &ms) == MHD_YES) {
		/* 0 is "now": the smallest wait that still arms it. */
		its.it_value.tv_sec = (time_t)(ms / 1000);
		its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L + (ms == 0);
	}
	timerfd_settime(h->timerfd, 0, &its, NULL);
}

static int add_fd(struct shmr_ctl_http *h, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_HTTP << 32;
	return epoll_ctl(h->dep.loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno
									 : 0;
}

int shmr_ctl_http_start(struct shmr_ctl_http *h, const char *listen,
			struct shmr_ctl_loop *loop,
			const struct shmr_ctl_domain *d,
			const struct shmr_ctl_model *m,
			struct shmr_ctl_dlq_files *dlq)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	const union MHD_DaemonInfo *info;
	unsigned port, flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	char host[64];
	int rc;

	h->dep = (struct shmr_ctl_http_deps){ loop, d, m, dlq };
	h->mhd = NULL;
	h->timerfd = -1;
	if (!listen[0])
		return 0;
	/* --check refused any other form (config/parse_serve.c). */
	if (shmr_conf_listen_parse(listen, host, &port) < 0)
		return -EINVAL;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
	} else {
		inet_pton(AF_INET6, host, &in6->sin6_addr);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		flags |= MHD_USE_IPv6;
	}
	h->cap = SHMR_CTL_METRICS_FIRST; /* grown as the domain needs */
	h->buf = malloc(h->cap);
	h->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!h->buf || h->timerfd < 0) {
		rc = -errno;
		shmr_ctl_err("metrics_listen %s: %s", listen, strerror(-rc));
		shmr_ctl_http_stop(h);
		return rc;
	}
	errno = 0;
	h->mhd = MHD_start_daemon(
		flags, (uint16_t)port, NULL, NULL, on_request, h,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)SHMR_CTL_HTTP_CONNS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)SHMR_CTL_HTTP_CONNS_PER_IP,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SHMR_CTL_HTTP_MEM,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SHMR_CTL_HTTP_TIMEOUT_S,
		MHD_OPTION_STRICT_FOR_CLIENT, 1,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!h->mhd) {
		rc = errno ? -errno : -EADDRNOTAVAIL;
		shmr_ctl_err("metrics_listen %s: cannot listen: %s", listen,
			      strerror(-rc));
		shmr_ctl_http_stop(h);
		return rc;
	}
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	rc = info ? add_fd(h, info->epoll_fd) : -EINVAL;
	if (rc == 0)
		rc = add_fd(h, h->timerfd);
	if (rc < 0) {
		shmr_ctl_err("metrics_listen %s: %s", listen, strerror(-rc));
		shmr_ctl_http_stop(h);
		return rc;
	}
	arm(h);
	shmr_ctl_log("metrics at http://%s/metrics", listen);
	return 0;
}

void shmr_ctl_http_run(struct shmr_ctl_http *h)
{
	uint64_t exp;

	if (!h->mhd)
		return;
	while (read(h->timerfd, &exp, sizeof(exp)) > 0)
		;
	MHD_run(h->mhd);
	arm(h);
}

void shmr_ctl_http_stop(struct shmr_ctl_http *h)
{
	/* MHD closes its epoll set, which leaves ours by itself. */
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	h->mhd = NULL;
	if (h->timerfd >= 0)
		close(h->timerfd);
	h->timerfd = -1;
	free(h->buf);
	h->buf = NULL;
}
