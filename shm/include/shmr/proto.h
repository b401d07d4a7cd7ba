/*
 * The control socket protocol between shmr-control and its peers (libshmr,
 * shmrctl).  Not installed.
 *
 * Transport: a unix SOCK_SEQPACKET socket at <run_dir>/<domain>.sock, mode
 * 0600 (0660 with a configured group); the server checks SO_PEERCRED.  One
 * request per packet, one answer per request, both ASCII text of at most
 * SHMR_PROTO_MAX bytes.  Words are separated by single spaces; names never
 * contain spaces (validated by the reader).
 *
 * Answers: "OK[ words...]" optionally followed by "\n" and a body, or
 * "ERR <code> <message>" where code is a positive SHMR_E_* or errno value.
 *
 * Requests:
 *   ATTACH <layout_version>       -> OK <domain_size>, memfd in SCM_RIGHTS
 *   OPEN                          -> OK <slot> <gen>  (client endpoint, owned
 *                                    by this connection: closed with it)
 *   CLAIM <slot> <gen>            -> OK  (a spawned worker takes its route's
 *                                    inbox; the peer's pid must be the one
 *                                    the control plane spawned for it)
 *   CLOSE <slot> <gen>            -> OK
 *   REGISTER <name> <slot> <gen>  -> OK | ERR (duplicate: SHMR_E_ROUTE_DUPLICATE)
 *   UNREGISTER <name> <slot> <gen>-> OK
 *   ROUTES <router>               -> OK\n<one line per route>
 *   INSPECT <router> [json]       -> OK\n<key value lines, or JSON>
 *                                    (ERR SHMR_E_TOO_BIG when the whole
 *                                    does not fit one answer)
 *   INSPECT <router> [json] from=N-> OK NEXT TOTAL\n<the keys of items
 *                                    N.. NEXT-1, as many whole ones as fit
 *                                    (item 0: the router, then its routes,
 *                                    lcores, client endpoints)>: ask
 *                                    from=NEXT until NEXT is TOTAL
 *   METRICS [fd]                  -> OK\n<the Prometheus text>, or with
 *                                    "fd", past one answer: OK FD N with
 *                                    a sealed memfd of its N bytes
 *   STATUS                        -> OK\n<key value lines>
 *   STOP                          -> OK  (the control plane shuts down)
 *
 * Route lifecycle (semantics: control/lifecycle.c; the reference's
 * "Management Methods").  Words are names ([A-Za-z0-9_.:-]{1,31}), a cpu
 * list ("-" = one PU picked by the control plane), a program (< 256 bytes)
 * and at most 16 args (< 128 bytes each); none contains a space.
 *   ROUTE <router> <route>        -> OK\n<that route's ROUTES line>
 *                                    | ERR NO_ROUTE
 *   ADD <router> <route> <cpus|-> <program> [arg...]
 *                                 -> OK once the worker started | ERR
 *                                    (ROUTE_DUPLICATE, NO_ROUTE: no router,
 *                                    the start's errno: route not added)
 *   REMOVE <router> <route>       -> OK (unknown route too) | ERR BUSY
 *   DISABLE <router> <route>      -> OK | ERR (NO_ROUTE, BUSY)
 *   ENABLE <router> <route>       -> OK | ERR (NO_ROUTE, BUSY, errno)
 *   REPLACE <router> <route> <program> [arg...]
 *                                 -> OK | ERR (NO_ROUTE, BUSY, errno)
 *   RESPAWN <router> <route>      -> OK | ERR (NO_ROUTE, BUSY, DISABLED,
 *                                    ROUTE_RUNNING, errno)
 *   REMOVE, DISABLE and REPLACE of a live worker answer OK at once: the
 *   route is pending (ROUTE shows state=pending_*) until the worker exits.
 *   DRAIN <router> <route>        -> as DISABLE, but a live worker first
 *                                    handles what its inbox holds
 *   RETIRE <slot> <gen>           -> OK: a route's worker met a PoisonPill
 *                                    (libshmr sends it); the route goes
 *                                    once its inbox is empty
 *
 * A router's management messages (SHMR_TYPE_* in shmr.h), handled by
 * the control plane for the caller; each answers "OK\n" then the reply's
 * payload (ROUTEES: one routee name per line; POOL_ADJUST: the new size),
 * or ERR:
 *   ROUTEES <router>, ROUTEE_ADD <router> <name>,
 *   ROUTEE_REMOVE <router> <name>, POOL_ADJUST <router> <+N|-N>,
 *   KILL <router>, POISON <router>
 *
 * Every request is encoded by one encoder, shared by libshmr and shmrctl
 * (shmr_proto_encode() and its kin, proto_client.h).
 *
 * A control plane that dies (kill -9) and is started again listens on the
 * same path.  A peer that finds its connection gone reconnects
 * (shmr_proto_conn_request(), proto_client.h) and sends a request again
 * only when that cannot do it twice: when the send itself found the
 * connection gone (nothing went out), or when the request only reads
 * (ATTACH, STATUS, ROUTES, ROUTE, INSPECT, ROUTEES, DLQ_LIST:
 * shmr_proto_repeatable()).  Any other request that went out and got no
 * answer has an unknown outcome: SHMR_E_CONTROL_LOST.
 *
 * Dead letters (MessageRouteFailed records of <run_dir>/<domain>.<router>.dlq,
 * format in control/dlq.c):
 *   DLQ_LIST <router> [from=N]    -> OK <next> ok|corrupt|more\n<one line
 *                                    per record, from index N (0): "<index>
 *                                    reason=<SHMR_E_*> name=<name|?> type=N
 *                                    key=N from=<slot>:<gen> len=N">; <next>:
 *                                    the index after the last line;
 *                                    "corrupt": the record after the last
 *                                    line is truncated or fails its check;
 *                                    "more": the packet was full, the list
 *                                    goes on at from=<next>
 *   DLQ_REPLAY <router>           -> OK <resent> <left>: each record's
 *                                    message is sent again to the router
 *                                    (original type, key, payload; from =
 *                                    the control plane's admin endpoint);
 *                                    re-sent records leave the file
 */
#ifndef SHMR_PROTO_H
#define SHMR_PROTO_H

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <shmr/shmr.h>

#define SHMR_PROTO_MAX 65536
#define SHMR_RUN_DIR_DEFAULT "/run/shmr"

/* A route lifecycle request's limits, as its senders check them
 * (shmr_proto_route_encode()); each word's limit counts its NUL. */
#define SHMR_PROTO_ROUTE_REQ_MAX 512 /* bytes of the whole request */
#define SHMR_PROTO_CPUS_MAX 64
#define SHMR_PROTO_PROGRAM_MAX 256
#define SHMR_PROTO_ARG_MAX 128
#define SHMR_PROTO_ARGS_MAX 16

/*
 * Non-zero when @p s is a name the control plane takes for a router,
 * route or registry entry: [A-Za-z0-9_.:-]{1,SHMR_NAME_MAX - 1}.  The
 * request parser's rule (control/request.c), which a client checks before
 * asking, so that every bad name is -SHMR_E_NAME: the parser turns a
 * control or non-ASCII byte away as a bad request (-SHMR_E_PROTO) before
 * it reads any name.  Inline: control_core links no libshmr.
 */
static inline int shmr_proto_name_ok(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++) {
		char c = s[n];

		if (n >= SHMR_NAME_MAX - 1)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == ':' || c == '-'))
			return 0;
	}
	return n > 0;
}

/*
 * Where EAL puts a dataplane's runtime directory (<base>/dpdk/<prefix>)
 * for a process with the caller's environment, which the dataplane the
 * control plane starts inherits: $RUNTIME_DIRECTORY, else /var/run for
 * root, else $XDG_RUNTIME_DIR, else /tmp.  The control plane's host-wide
 * lock lies beside it (control/control.c), and the tests clean both up.
 */
static inline const char *shmr_proto_eal_base(void)
{
	const char *base = getenv("RUNTIME_DIRECTORY");

	if (!base || !base[0])
		base = geteuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	return base && base[0] ? base : "/tmp";
}

/*
 * "shmr-<domain>", every byte outside [A-Za-z0-9._-] written as '_', cut
 * to @p cap: the dataplane's EAL file prefix, host-wide, and the name of
 * the control plane's host lock (<base>/<prefix>.lock).  Returns @p buf.
 */
static inline char *shmr_proto_eal_prefix(char *buf, size_t cap,
					   const char *domain)
{
	size_t n = (size_t)snprintf(buf, cap, "shmr-");

	for (const char *c = domain; *c && n + 1 < cap; c++)
		buf[n++] = (isalnum((unsigned char)*c) || *c == '-' ||
			    *c == '_' || *c == '.')
				   ? *c
				   : '_';
	if (cap)
		buf[n < cap ? n : cap - 1] = '\0';
	return buf;
}

/* Environment of a spawned worker. */
#define SHMR_ENV_SOCKET "SHMR_SOCKET"     /* control socket path */
#define SHMR_ENV_ENDPOINT "SHMR_ENDPOINT" /* "<slot>:<gen>" of its inbox */
#define SHMR_ENV_ROUTE "SHMR_ROUTE"       /* route name */
#define SHMR_ENV_ROUTER "SHMR_ROUTER"     /* router name */
#define SHMR_ENV_RUN_DIR "SHMR_RUN_DIR"   /* where <domain>.sock lives */

/* How long libshmr retries connecting when its control-socket connection
 * is found gone (milliseconds; 0: never reconnect); read at attach. */
#define SHMR_ENV_RECONNECT_MS "SHMR_RECONNECT_MS"
#define SHMR_PROTO_RECONNECT_MS_DEFAULT 10000
#define SHMR_PROTO_RECONNECT_MS_MAX 3600000

/* The most descriptors one answer carries: ATTACH's two, the domain's
 * daemons' part (read-only for peers) and its lanes part (layout.h). */
#define SHMR_PROTO_FDS_MAX 2u

#endif
