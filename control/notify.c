/*
 * sd_notify(3) for shmr-control (see notify.h).  Each notification is one
 * datagram, built here and sent by libsystemd; nothing is queued or
 * retried: a supervisor that missed READY=1 times the start-up out, which
 * is what it is for.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SHMR_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "control_internal.h"
#include "notify.h"

void shmr_ctl_notify_init(struct shmr_ctl_notify *n)
{
	const char *sock = getenv("NOTIFY_SOCKET");

	memset(n, 0, sizeof(*n));
#ifdef SHMR_HAVE_LIBSYSTEMD
	uint64_t usec = 0;

	n->on = sock && *sock;
	/* > 0: enabled for this pid; 0: not asked; < 0: a malformed
	 * variable, which is the supervisor's to fix: no watchdog. */
	if (n->on && sd_watchdog_enabled(0, &usec) > 0 && usec >= 2000)
		n->watchdog_ms = usec / 2000;
#else
	if (sock && *sock)
		shmr_ctl_warn("NOTIFY_SOCKET is set, but this shmr-control "
			      "was built without libsystemd: no notifications");
#endif
}

/* One datagram: @p head (may be "") then "STATUS=<fmt...>". */
static void send_v(struct shmr_ctl_notify *n, const char *head,
		   const char *fmt, va_list ap)
{
	char msg[512];
	int k;

	if (!n->on)
		return;
	k = snprintf(msg, sizeof(msg), "%sSTATUS=", head);
	if (k < 0 || (size_t)k >= sizeof(msg))
		return;
	vsnprintf(msg + k, sizeof(msg) - (size_t)k, fmt, ap);
#ifdef SHMR_HAVE_LIBSYSTEMD
	int rc = sd_notify(0, msg);

	if (rc < 0 && !n->failed) {
		n->failed = 1;
		shmr_ctl_warn("sd_notify to %s: %s (no further notification "
			      "is logged)",
			      getenv("NOTIFY_SOCKET"), strerror(-rc));
	}
#endif
}

void shmr_ctl_notify_status(struct shmr_ctl_notify *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	send_v(n, "", fmt, ap);
	va_end(ap);
}

void shmr_ctl_notify_ready(struct shmr_ctl_notify *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	send_v(n, "READY=1\n", fmt, ap);
	va_end(ap);
	if (n->watchdog_ms)
		n->next_ms = shmr_ctl_now_ms() + n->watchdog_ms;
}

void shmr_ctl_notify_stopping(struct shmr_ctl_notify *n, const char *fmt,
			      ...)
{
	va_list ap;

	va_start(ap, fmt);
	send_v(n, "STOPPING=1\n", fmt, ap);
	va_end(ap);
	n->next_ms = 0;
}

uint64_t shmr_ctl_notify_next_ms(const struct shmr_ctl_notify *n)
{
	return n->next_ms;
}

void shmr_ctl_notify_due(struct shmr_ctl_notify *n, uint64_t now_ms)
{
	if (!n->next_ms || now_ms < n->next_ms)
		return;
#ifdef SHMR_HAVE_LIBSYSTEMD
	if (sd_notify(0, "WATCHDOG=1") < 0 && !n->failed) {
		n->failed = 1;
		shmr_ctl_warn("sd_notify WATCHDOG=1: failed (no further "
			      "notification is logged)");
	}
#endif
	n->next_ms = now_ms + n->watchdog_ms;
}
