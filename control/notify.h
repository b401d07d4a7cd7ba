/*
 * shmr-control's service notifications (sd_notify(3), libsystemd): what a
 * supervisor with Type=notify waits for and shows.  Not for direct
 * inclusion outside control/.
 *
 * The protocol is libsystemd's own: a datagram to the socket named by
 * $NOTIFY_SOCKET.  With that variable unset (a shell, a test, any
 * supervisor but systemd) every call here does nothing; so it does in a
 * build without libsystemd.  A failed send is not an error of the
 * appliance: it is logged once and never retried.
 *
 * What is sent, in order:
 *   STATUS=starting domain NAME           before a new domain's processes
 *                                         start, or
 *   STATUS=adopting domain NAME           before an adoption
 *   READY=1, STATUS=domain NAME up: ...   once the domain is up (where
 *                                         --ready-fd is written)
 *   WATCHDOG=1                            every half of $WATCHDOG_USEC,
 *                                         from the event loop's timer,
 *                                         when systemd asks for it
 *                                         (WatchdogSec=)
 *   STOPPING=1, STATUS=stopping: WHY      when a clean stop begins
 *
 * Context:     the loop's thread only.  Nothing here is on the
 *              dataplane's path: shmr-control sends a few datagrams in
 *              its life, and one per watchdog period.
 */
#ifndef SHMR_CONTROL_NOTIFY_H
#define SHMR_CONTROL_NOTIFY_H

#include <stdint.h>

struct shmr_ctl_notify {
	int on;               /* $NOTIFY_SOCKET was set */
	int failed;           /* a send failed (logged once) */
	uint64_t watchdog_ms; /* ping period (half of WATCHDOG_USEC); 0: none */
	uint64_t next_ms;     /* the next ping, shmr_ctl_now_ms() clock */
};

/**
 * Look at the environment: $NOTIFY_SOCKET, and $WATCHDOG_USEC (for this
 * process: $WATCHDOG_PID, when set, must be ours).
 * Context: start-up, before the first notification.
 */
void shmr_ctl_notify_init(struct shmr_ctl_notify *n);

/** STATUS=<text>. */
void shmr_ctl_notify_status(struct shmr_ctl_notify *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** READY=1 with STATUS=<text>, in one datagram; the watchdog starts. */
void shmr_ctl_notify_ready(struct shmr_ctl_notify *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** STOPPING=1 with STATUS=<text>, in one datagram; the watchdog stops. */
void shmr_ctl_notify_stopping(struct shmr_ctl_notify *n, const char *fmt,
			      ...) __attribute__((format(printf, 2, 3)));

/** When the next WATCHDOG=1 is due (shmr_ctl_now_ms() clock), or 0: the
 *  loop's timer is armed for it. */
uint64_t shmr_ctl_notify_next_ms(const struct shmr_ctl_notify *n);

/** WATCHDOG=1 if it is due at @p now_ms; the next one half a period on. */
void shmr_ctl_notify_due(struct shmr_ctl_notify *n, uint64_t now_ms);

#endif
