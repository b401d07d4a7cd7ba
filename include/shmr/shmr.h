/*
 * libshmr: the client library of the shmrouter appliance.
 *
 * A process attaches to a shared-memory domain run by shmr-control, opens an
 * endpoint (or, when spawned as a route worker, claims the endpoint named in
 * its environment) and exchanges fixed-size messages with other endpoints
 * through SPSC lanes that the dataplane forwards between.  Nothing here needs
 * DPDK's EAL, and nothing on the send/receive path makes a syscall while there
 * is work to do.
 *
 * Error convention: a fallible function returns >= 0 on success (0 or a
 * count) and -SHMR_E_* or -errno on failure; shmr_strerror() names each.
 * The library never prints and never exits.
 *
 * Threads: one thread per endpoint (struct shmr_endpoint); the calls that
 * talk to the control plane are serialised per domain (struct
 * shmr_domain).  Signals: shmr_attach_env() installs a process-wide
 * SIGTERM handler; nothing else touches signals.
 */
#ifndef SHMR_SHMR_H
#define SHMR_SHMR_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/version.h> /* SHMR_VERSION_MAJOR, _MINOR, _PATCH, _TEXT */

#ifdef __cplusplus
extern "C" {
#endif


/** Longest name (router, route, registry entry), including the NUL. */
#define SHMR_NAME_MAX 32

/**
 * A process identifier inside a domain: an endpoint slot and the generation
 * of its current owner, so a stale PID never reaches a slot's next owner.
 * The zero PID ({0, 0}) is "nobody": generations start at 1.
 */
struct shmr_pid {
	uint32_t slot;
	uint32_t gen;
};

/** Message kinds (struct shmr_msg.kind). */
enum shmr_kind {
	SHMR_KIND_SEND = 1,  /**< asynchronous message */
	SHMR_KIND_CALL = 2,  /**< synchronous request: answer with shmr_reply() */
	SHMR_KIND_REPLY = 3, /**< answer to a call; status < 0 is an error */
};

/** Message priorities (struct shmr_msg.priority). */
enum shmr_priority {
	SHMR_PRIO_NORMAL = 0,
	SHMR_PRIO_HIGH = 1,
	SHMR_PRIO_MAX = 2,
};

/** Flags (struct shmr_msg.flags). */
#define SHMR_F_REDELIVERED 0x01u /**< may have been received before a crash */
/** Set by the dataplane on a send it could not route, handed to the
 *  control plane's admin endpoint (MessageRouteFailed): type, key, from,
 *  ref and payload are the original's, to is the router it was sent to and
 *  status the reason (-SHMR_E_*).  Never seen by workers. */
#define SHMR_F_ROUTE_FAILED 0x02u
/** With SHMR_F_ROUTE_FAILED: the name the router chose follows the
 *  payload (data[len], NUL-terminated) because there was room for it. */
#define SHMR_F_ROUTE_NAME 0x04u
/** Pekko's Broadcast envelope: a send to a router with this flag goes to
 *  every one of its routees, whatever its logic (the flag stays set on
 *  each copy). */
#define SHMR_F_BROADCAST 0x08u
/** The payload is in the domain's payload arena, not in the slot: read it
 *  with shmr_msg_payload() (set by shmr_send_buf(), shmr_call_buf() and
 *  shmr_reply_buf(); the slot's own payload is then the reference). */
#define SHMR_F_ARENA 0x10u
/** Set by libshmr's send: the message carries the sender's clock (a
 *  send in its ref, a call or a reply in the 8 bytes after the payload,
 *  data[len]), from which the receiver's libshmr records the message's
 *  sojourn (`shmrctl route` shows it).  Workers need not look at it. */
#define SHMR_F_STAMPED 0x20u

/**
 * Management and special messages (Pekko's), by type, sent to a router at
 * any priority: the router itself handles them (on the admin path, in the
 * control plane), they are never routed.  Types from SHMR_TYPE_RESERVED
 * up are the appliance's own; another reserved type fails with
 * -SHMR_E_NOT_ALLOWED.
 *
 *   GET_ROUTEES       call: the reply is the routees' names, one per line
 *                     ("name\n"), in creation order
 *   ADD_ROUTEE        payload: a route or registry name; call or send
 *   REMOVE_ROUTEE     payload: the name; a pool's own routee finishes its
 *                     queue and goes
 *   ADJUST_POOL_SIZE  key: the change, a two's-complement int64 (+2, -1);
 *                     a call's reply is the new size as text; clamped to
 *                     at least 1, or to the resizer's bounds
 *   POISON_PILL       stops the router and its pool; with SHMR_F_BROADCAST
 *                     each routee gets it after what is queued for it, and
 *                     its worker exits there (shmr_recv_burst() returns
 *                     what came before, then shmr_stopping() is true), and
 *                     the router stops when the last is gone
 *   KILL              the router fails: its pool is restarted at the same
 *                     size (or stopped: on_kill = "stop"); sent to a
 *                     routee's inbox, or to a router in a Broadcast
 *                     envelope (every routee once), the control plane
 *                     kills the routee's process instead (the program
 *                     never sees it) and restarts it into its slot, inbox
 *                     kept
 * A call gets status 0 (or the error); a send's error is only logged.
 */
#define SHMR_TYPE_RESERVED 0xffffff00u
#define SHMR_TYPE_GET_ROUTEES 0xffffff01u
#define SHMR_TYPE_ADD_ROUTEE 0xffffff02u
#define SHMR_TYPE_REMOVE_ROUTEE 0xffffff03u
#define SHMR_TYPE_ADJUST_POOL_SIZE 0xffffff04u
#define SHMR_TYPE_POISON_PILL 0xffffff05u
#define SHMR_TYPE_KILL 0xffffff06u

/**
 * A received message, exactly as it sits in its ring slot: a 48-byte header
 * then up to shmr_payload_max() bytes of payload.  Read-only for receivers.
 */
struct shmr_msg {
	uint8_t kind;         /**< enum shmr_kind */
	uint8_t flags;        /**< SHMR_F_* */
	uint8_t priority;     /**< enum shmr_priority */
	uint8_t hops;         /**< routing hops taken (router of routers) */
	uint32_t type;        /**< application message type */
	struct shmr_pid from; /**< original sender, preserved by forwarding */
	struct shmr_pid to;   /**< the address the sender used */
	uint64_t ref;         /**< call reference, preserved by forwarding;
				   a send flagged SHMR_F_STAMPED: its
				   sender's clock (the sojourn stamp) */
	uint64_t key;         /**< application key (hash routing uses it) */
	uint32_t len;         /**< payload bytes */
	int32_t status;       /**< replies: 0 or -SHMR_E_* */
	unsigned char data[]; /**< payload */
};

/** Error codes, returned negated.  Values below 1000 are errno values. */
enum shmr_error {
	SHMR_E_BASE = 1000,
	SHMR_E_NO_DOMAIN,       /**< no domain of that name (socket missing) */
	SHMR_E_PERM,            /**< the control plane refused our credentials
				     (or a name that is another endpoint's) */
	SHMR_E_VERSION,         /**< domain layout version differs from ours */
	SHMR_E_PROTO,           /**< malformed answer from the control plane */
	SHMR_E_TIMEOUT,         /**< no answer within the timeout */
	SHMR_E_TOO_BIG,         /**< payload larger than shmr_payload_max();
				     shmr_buf_alloc(): than every arena
				     class (or the domain has no arena) */
	SHMR_E_NAME,            /**< empty or overlong name */
	SHMR_E_NO_ENDPOINT,     /**< no free endpoint slot, or a bad PID */
	SHMR_E_PROCESS_UNKNOWN, /**< name resolves to no process */
	SHMR_E_NO_ROUTE,        /**< no such router or route (or pending remove) */
	SHMR_E_DISCARDED,       /**< the routing decision discarded the call */
	SHMR_E_DISABLED,        /**< route disabled */
	SHMR_E_BUSY,            /**< route has a pending operation */
	SHMR_E_MAILBOX_FULL,    /**< target inbox full */
	SHMR_E_ROUTE_DUPLICATE, /**< route name already present */
	SHMR_E_ROUTE_RUNNING,   /**< respawn of a live worker */
	SHMR_E_NOT_ALLOWED,     /**< router not running */
	SHMR_E_NO_ENV,          /**< not started by shmr-control */
	SHMR_E_NO_ROUTEES,      /**< pool or group has no routees */
	/** The control plane went away while the request was in flight: its
	 *  outcome is unknown (it may or may not have been done).  Only a
	 *  request that changes something returns it; one that only reads is
	 *  sent again once the control plane is back. */
	SHMR_E_CONTROL_LOST,
	SHMR_E_NO_BUFFER,       /**< the arena's class for that size is empty */
	SHMR_E_LAST
};

/**
 * Name of an error code (either sign).
 *
 * Context:     any thread, any time (no attach needed).
 * Concurrency: thread-safe; never NULL, static storage.
 */
const char *shmr_strerror(int err);

/**
 * The version of the libshmr this process runs with, "MAJOR.MINOR.PATCH"
 * (the library's, not the header's: SHMR_VERSION_TEXT is the version
 * the program was compiled against, which may be older).
 *
 * Context:     any thread, any time (no attach needed).
 * Concurrency: thread-safe; never NULL, static storage.
 */
const char *shmr_version(void);

/**
 * An attached domain (opaque).
 *
 * Concurrency: the calls that talk to the control plane share the
 * domain's one control socket, request then answer: shmr_endpoint_open(),
 * shmr_endpoint_close() (of an endpoint it opened), shmr_register(),
 * shmr_unregister(), the shmr_route_*() calls and, on a route worker's
 * endpoint, the shmr_recv_burst() that meets a PoisonPill.  Never run two
 * of them at once on one domain: serialise them (one thread, or a mutex).
 * Everything else reads the shared memory only and may run from any
 * thread at any time (shmr_lookup(), shmr_payload_max()), or is bound to
 * an endpoint (see struct shmr_endpoint).
 *
 * Restarts: the control plane may die and be started again (it adopts
 * the domain).  Nothing but the calls above needs it: sends, calls,
 * receives and replies go on meanwhile.  When one of those calls finds
 * its connection gone, it reconnects to the same socket path, retrying
 * for up to SHMR_RECONNECT_MS milliseconds (from the environment at
 * attach; default 10000; 0: never reconnect), attaches again (checking
 * the control plane serves this very domain) and sends its request again
 * if that cannot do it twice: when nothing had gone out.  A request that
 * went out and got no answer returns -SHMR_E_CONTROL_LOST: it may or may
 * not have been done.  A control plane that cannot be reached in time
 * (or one that serves a new domain, not this one) gives -SHMR_E_NO_DOMAIN:
 * nothing was done.  The wait is for a socket that refuses (a killed
 * control plane leaves it behind); a clean stop removes the socket, and a
 * call made after it gives up within a quarter of a second.
 */
struct shmr_domain;

/**
 * An open endpoint (opaque): a PID, its inbound lanes and its outbound
 * lanes.
 *
 * Concurrency: ONE THREAD PER ENDPOINT.  The calls on an endpoint share
 * its staging buffer, its backlog of messages that arrived during a call,
 * and its lanes, which are single-producer single-consumer rings:
 * shmr_send(), shmr_send_broadcast(), shmr_send_prio(), shmr_send_name(),
 * shmr_send_burst(), shmr_call(), shmr_call_prio(), shmr_recv_burst(),
 * shmr_reply() and shmr_endpoint_close() must never run at once on one
 * endpoint.  Make them from one thread for the endpoint's life (it may
 * move to another thread only across a happens-before edge: a mutex, a
 * thread join); for more threads, open more endpoints, which share
 * nothing but the domain.  shmr_register() and shmr_unregister() use only
 * the endpoint's PID and the domain's socket (see struct shmr_domain), and
 * shmr_endpoint_pid() may be called from any thread, while it is open.
 */
struct shmr_endpoint;

/**
 * Attach to the domain called @p name.  The control socket is
 * "$SHMR_RUN_DIR/<name>.sock", or "/run/shmr/<name>.sock" without it.
 *
 * Context:     any thread; blocking (connect and one unix-socket round
 *              trip; the domain is mapped).
 * Concurrency: thread-safe: each attach is a domain of its own.
 * Ownership:   *out is the caller's (NULL on failure); release it with
 *              shmr_detach().
 * Errors:      -SHMR_E_NO_DOMAIN, -SHMR_E_PERM, -SHMR_E_VERSION,
 *              -SHMR_E_PROTO, -SHMR_E_NAME (an empty name, one of 32 bytes
 *              or more, or one with a '/'), -ENAMETOOLONG, -ENOMEM, -errno.
 */
int shmr_attach(const char *name, struct shmr_domain **out);

/**
 * As shmr_attach(), with the control socket's path given directly.
 * Errors: as shmr_attach(), but for -SHMR_E_NAME.
 */
int shmr_attach_path(const char *sock_path, struct shmr_domain **out);

/**
 * For a route worker started by shmr-control: attach to the domain and
 * claim the endpoint named by SHMR_SOCKET and SHMR_ENDPOINT in the
 * environment.
 *
 * SIGNALS: on success this INSTALLS A PROCESS-WIDE SIGTERM HANDLER
 * (sigaction(), replacing any handler the program had; without
 * SA_RESTART).  It only makes shmr_stopping() true, so the worker can
 * finish its message and exit; but from then on a SIGTERM also interrupts
 * the blocking system call of whichever thread it is delivered to (the
 * call fails with EINTR), and every endpoint's wait in the process
 * (shmr_recv_burst(), shmr_call()) returns -EINTR instead of sleeping on
 * (one asleep at that moment within about a second).  A program that
 * wants its own SIGTERM handling installs it after this call (then
 * shmr_stopping() is never set).
 *
 * Context:     once per process, at start, before other threads exist
 *              (signal dispositions are process-wide); blocking (attach,
 *              then one more round trip).
 * Ownership:   *d and *ep are the caller's (both NULL on failure); close
 *              *ep before shmr_detach(*d).  The endpoint is the route's
 *              inbox: closing it does not remove it.
 * Errors:      -SHMR_E_NO_ENV when the variables are absent or malformed,
 *              else as shmr_attach_path(), or the control plane's refusal
 *              of the claim (-SHMR_E_PERM: this process is not the
 *              route's worker; -SHMR_E_NO_ENDPOINT: no such route
 *              endpoint), -SHMR_E_CONTROL_LOST (the control plane died
 *              with the claim in flight; exit, and the route's restart
 *              starts a new worker), -ENOMEM.
 */
int shmr_attach_env(struct shmr_domain **d, struct shmr_endpoint **ep);

/**
 * Non-zero once SIGTERM arrived (after shmr_attach_env()).
 *
 * Context:     any thread, and signal handlers (async-signal-safe).
 * Concurrency: a relaxed atomic load; wait-free.
 */
int shmr_stopping(void);

/**
 * Detach and free @p d (NULL: nothing).
 *
 * Context:     after every endpoint of @p d is closed (not checked), when
 *              no other thread uses @p d any more.
 * Ownership:   @p d is gone; every pointer from it too.
 */
void shmr_detach(struct shmr_domain *d);

/**
 * Largest payload a message of this domain carries.
 *
 * Context: any thread; reads a value fixed at attach.
 */
size_t shmr_payload_max(const struct shmr_domain *d);

/**
 * Open a new endpoint (a client or an unmanaged worker).  It lives until
 * shmr_endpoint_close() or this process's exit.  Returns once the
 * dataplane routes to it (bounded to about a second while the dataplane
 * restarts), so its PID can be handed out at once.
 *
 * Context:     any thread; blocking (one round trip, then short sleeps
 *              until the dataplane routes to it; while the control plane
 *              restarts, up to SHMR_RECONNECT_MS more: see struct
 *              shmr_domain).
 * Concurrency: uses the domain's socket (see struct shmr_domain); the new
 *              endpoint belongs to one thread (see struct shmr_endpoint).
 * Ownership:   *out is the caller's (NULL on failure); close it with
 *              shmr_endpoint_close() before shmr_detach().
 * Errors:      -SHMR_E_NO_ENDPOINT (domain full), -SHMR_E_NOT_ALLOWED
 *              (this user holds its max_endpoints_per_user already),
 *              -SHMR_E_CONTROL_LOST
 *              (the control plane died with the request: an endpoint may
 *              have been opened for this process, which it frees when the
 *              process exits), -SHMR_E_NO_DOMAIN (the control plane is
 *              away: nothing was opened), -SHMR_E_PROTO, -ENOMEM, -errno.
 */
int shmr_endpoint_open(struct shmr_domain *d, struct shmr_endpoint **out);

/**
 * Close an endpoint (NULL: nothing); its registered names are dropped.
 * What the application was given is released from the lanes, unless
 * messages that arrived during a call still wait to be returned: then
 * nothing is, and it all stays unreleased for whoever comes next.
 *
 * Nothing a send accepted is lost: for an endpoint from
 * shmr_endpoint_open(), the close first waits until the dataplane has
 * taken every message the endpoint sent (forwarded, queued or failed it,
 * each counted), or has taken none of them for SHMR_CLOSE_WAIT_MS
 * milliseconds (from the environment at the close; default 2000; 0: do
 * not wait).  The bound is on a stall: a dataplane that keeps taking is
 * waited for, so the whole wait is at most one bound per message left.
 * A close that gives up (the dataplane is stopped, or a full inbox holds
 * the messages back) still closes; the control plane keeps the
 * endpoint's outbound lanes polled until they are empty or stall for 2 s,
 * as it does when a process exits or is killed without closing, and
 * counts what the dataplane never took as close_dropped (`shmrctl
 * status`).  A route's inbox (shmr_attach_env()) does not wait: it stays
 * polled after its worker.
 *
 * Context:     the endpoint's thread; blocking for an endpoint from
 *              shmr_endpoint_open() (the wait above, then one round trip,
 *              or up to SHMR_RECONNECT_MS while the control plane
 *              restarts; a failure of the request, -SHMR_E_CONTROL_LOST
 *              included, is not reported: an endpoint left open is freed
 *              when the process exits).
 * Concurrency: one thread per endpoint; uses the domain's socket (see
 *              struct shmr_domain) unless the endpoint is a route's inbox
 *              from shmr_attach_env().
 * Ownership:   @p ep and every message it returned are gone, whatever
 *              the result.
 * Returns:     0 when the dataplane took everything the endpoint sent;
 *              > 0: that many messages were still in its outbound lanes
 *              when the dataplane had taken none for SHMR_CLOSE_WAIT_MS
 *              (the control plane goes on polling them, see above).
 * Errors:      -EIO: an outbound lane was found corrupted (overwritten in
 *              this process); the dataplane quarantines such a lane, and
 *              how many it held cannot be told.
 */
int shmr_endpoint_close(struct shmr_endpoint *ep);

/**
 * This endpoint's PID, to give to others.
 *
 * Context: any thread (the PID never changes); wait-free.
 */
struct shmr_pid shmr_endpoint_pid(const struct shmr_endpoint *ep);

/**
 * Resolve a registered name (a router, or a registered process), or a
 * routee path "ROUTER/ROUTE": route ROUTE of router ROUTER, as its inbox
 * PID (the route's worker gets its own endpoint with
 * "$SHMR_ROUTER/$SHMR_ROUTE"), without anyone registering it.  The PID
 * stays the route's across restarts and replaces of its worker.  Registered
 * names never hold a '/', so a path cannot shadow one.
 *
 * Context:     any thread; no syscall (it never asks the control plane,
 *              so it answers while the control plane is away too).
 * Concurrency: lock-free read of the domain's registry and routers
 *              (retried while the control plane writes them, for at most
 *              about a second).
 * Errors:      -SHMR_E_PROCESS_UNKNOWN (no such name, router or route),
 *              -SHMR_E_NAME (empty or too long, or a name with '/' that
 *              is not exactly two non-empty names around one '/'),
 *              -SHMR_E_TIMEOUT (the registry stayed mid-write for that
 *              second).
 */
int shmr_lookup(struct shmr_domain *d, const char *name, struct shmr_pid *out);

/**
 * Send one message to @p to (a router or any endpoint).
 *
 * Context:     the endpoint's thread; never blocks (a futex wake, one
 *              syscall, only when the dataplane's lcore sleeps).
 * Concurrency: one thread per endpoint: its lanes are SPSC and the message
 *              is staged in its buffer.
 * Ownership:   @p data is copied before the call returns.
 * Errors:      -EAGAIN when the outbound lane is full (nothing was sent),
 *              -SHMR_E_TOO_BIG, -SHMR_E_PROCESS_UNKNOWN for a PID whose
 *              slot the domain does not have.  Whether that slot is in use
 *              is checked by the dataplane, not here (a call to a free
 *              slot gets -SHMR_E_PROCESS_UNKNOWN as its reply at once).
 */
int shmr_send(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
	      uint64_t key, const void *data, size_t len);

/**
 * Pekko's Broadcast envelope: send one message to @p router flagged
 * SHMR_F_BROADCAST, which the router delivers to every one of its routees
 * (exactly once each), whatever its logic.  Broadcast of
 * SHMR_TYPE_POISON_PILL retires every routee after its queue.
 *
 * Context, Concurrency, Ownership: as shmr_send().
 * Errors: as shmr_send().
 */
int shmr_send_broadcast(struct shmr_endpoint *ep, struct shmr_pid router,
			uint32_t type, uint64_t key, const void *data,
			size_t len);

/**
 * As shmr_send() with a priority: high and max reach a router's admin path
 * (on the endpoint's second outbound lane).
 *
 * Context, Concurrency, Ownership: as shmr_send().
 * Errors: as shmr_send(); -EINVAL for a priority over SHMR_PRIO_MAX.
 */
int shmr_send_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		   enum shmr_priority prio, uint32_t type, uint64_t key,
		   const void *data, size_t len);

/**
 * As shmr_send(), to a name resolved with shmr_lookup().
 *
 * Context, Concurrency, Ownership: as shmr_send().
 * Errors: as shmr_lookup() and shmr_send().
 */
int shmr_send_name(struct shmr_endpoint *ep, const char *name, uint32_t type,
		   uint64_t key, const void *data, size_t len);

/** One message of a burst for shmr_send_burst(). */
struct shmr_out {
	struct shmr_pid to;
	uint32_t type;
	uint64_t key;
	const void *data;
	uint32_t len;
};

/**
 * Send up to @p n messages (at most 256 a call) in one ring operation.
 *
 * Context, Concurrency, Ownership: as shmr_send().
 * Returns: how many were sent (a prefix of @p msgs); 0 when the lane is
 *          full, -SHMR_E_TOO_BIG when one payload is too large, or
 *          -SHMR_E_PROCESS_UNKNOWN when one PID names a slot the domain
 *          does not have (as shmr_send(); none sent in either case).
 */
int shmr_send_burst(struct shmr_endpoint *ep, const struct shmr_out *msgs,
		    unsigned n);

/**
 * Call @p to and wait up to @p timeout_ms (< 0: forever) for the reply.
 * Messages that arrive meanwhile are kept for the next shmr_recv_burst().
 *
 * Context:     the endpoint's thread; blocking (spins briefly, then sleeps
 *              on the endpoint's bell).
 * Concurrency: one thread per endpoint: the call sends on its lanes and
 *              receives on them, and keeps what else arrives in its
 *              backlog.
 * Ownership:   the messages the last shmr_recv_burst() returned stay
 *              valid, and stay in the ring (a replacement receives them
 *              again, flagged SHMR_F_REDELIVERED, if this process dies
 *              before its next receive): a handler may call, then go on
 *              with the rest of its burst.  What arrives meanwhile, the
 *              reply's slot included, stays in the ring behind them until
 *              that receive too, so calls made between two receives fill
 *              the inbound lanes (-ENOBUFS below when one is full: finish
 *              the burst and receive).  @p req is copied before it waits;
 *              at most @p cap bytes are written to @p reply.
 * Returns:     the reply's payload length (the first @p cap bytes are
 *              copied to @p reply).
 * Errors:      the error the router or worker answered with
 *              (-SHMR_E_DISCARDED, -SHMR_E_PROCESS_UNKNOWN, ...), or
 *              -SHMR_E_PROCESS_UNKNOWN at once for a slot that cannot
 *              exist (as shmr_send()), -SHMR_E_TIMEOUT, -SHMR_E_TOO_BIG,
 *              -EAGAIN (outbound lane full), -ENOBUFS (an inbound lane
 *              is full of messages not received yet, so the reply may not
 *              get in: nothing was lost, the next shmr_recv_burst()
 *              returns them in order; call again after.  Returned before
 *              the request is sent when a lane was full already, else as
 *              soon as one fills: any lane may carry the reply, since a
 *              router's routee can be polled by any routing lcore; a
 *              reply that comes later is dropped, as after a timeout),
 *              -EINTR (a signal interrupted the wait, or shmr_stopping()
 *              is true and it would wait).
 */
int shmr_call(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
	      uint64_t key, const void *req, size_t len, void *reply,
	      size_t cap, int timeout_ms);

/**
 * As shmr_call() with a priority: a high or max priority call to a router
 * is answered by the router's admin handler in the control plane (the
 * built-in one answers "stats"; see shmr-control), never by a worker.
 *
 * Context, Concurrency, Ownership: as shmr_call().
 * Errors: as shmr_call(); -EINVAL for a priority over SHMR_PRIO_MAX
 *         (nothing was sent).
 */
int shmr_call_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		   enum shmr_priority prio, uint32_t type, uint64_t key,
		   const void *req, size_t len, void *reply, size_t cap,
		   int timeout_ms);

/**
 * Receive up to @p n messages (at most 256 a call), waiting up to
 * @p timeout_ms (0: do not wait, < 0: forever) for the first.  Messages
 * from the previous call are released from the ring only now: a process
 * that dies while handling a burst gets that burst again (flagged
 * SHMR_F_REDELIVERED) in its replacement.
 *
 * Context:     the endpoint's thread; blocking when @p timeout_ms is not 0
 *              (spins briefly, then sleeps on the endpoint's bell).  On a
 *              route worker's endpoint a PoisonPill is not returned: the
 *              control plane is asked (the first time; one round trip, up
 *              to SHMR_RECONNECT_MS more while the control plane
 *              restarts) to retire the route; that request's failure
 *              (-SHMR_E_CONTROL_LOST included) is not reported.
 * Concurrency: one thread per endpoint (the consumer of its SPSC inbound
 *              lanes); the PoisonPill's request uses the domain's socket.
 * Ownership:   msgs[i] point into the endpoint and stay valid until the
 *              next shmr_recv_burst() or shmr_endpoint_close() on it (a
 *              call between two receives leaves them valid, and in the
 *              ring).
 * Returns:     the number of messages (0 on timeout).
 * Errors:      -EINTR when a signal interrupted the wait, or when
 *              shmr_stopping() is true and it would wait.
 */
int shmr_recv_burst(struct shmr_endpoint *ep, const struct shmr_msg **msgs,
		    unsigned n, int timeout_ms);

/**
 * Answer the call @p req (sent to its from, with its ref).
 * @p status is 0, or a -SHMR_E_* the caller's shmr_call() returns (a
 * positive one is negated).
 *
 * Context, Concurrency, Ownership: as shmr_send(); @p req may be a
 *              message this endpoint received, or a copy of its header.
 * Errors:      -EAGAIN (lane full), -SHMR_E_TOO_BIG, -EINVAL (not a call).
 */
int shmr_reply(struct shmr_endpoint *ep, const struct shmr_msg *req,
	       int status, const void *data, size_t len);

/**
 * A buffer of the domain's payload arena (configuration: arena), for a
 * payload larger than a slot: allocate it, write into data, send it.  The
 * message then carries a reference; the buffer never moves, and the
 * receiver reads it where it is.
 */
struct shmr_buf {
	void *data;   /**< the buffer's bytes (NULL: none) */
	size_t size;  /**< how many it holds (its class's size) */
	uint64_t ref; /**< which buffer: libshmr's, not for the caller */
};

/**
 * Allocate a buffer of at least @p size bytes from the smallest arena
 * class that holds it.  Never blocks.
 *
 * Context:     the endpoint's thread (any call of its own: the buffer is
 *              held by @p ep's endpoint slot).
 * Concurrency: lock-free (one compare-and-swap of the buffer's owner word
 *              in the domain); one thread per endpoint.
 * Ownership:   @p buf is the caller's until it is sent (shmr_send_buf(),
 *              shmr_call_buf(), shmr_reply_buf() return 0) or released
 *              (shmr_buf_release()).
 * Errors:      -SHMR_E_TOO_BIG (no class holds @p size: also when the
 *              domain has no arena), -SHMR_E_NO_BUFFER (that class has no
 *              free buffer now: retry when receivers have released some).
 */
int shmr_buf_alloc(struct shmr_endpoint *ep, size_t size, struct shmr_buf *buf);

/**
 * Give back a buffer this endpoint holds (allocated or kept, not sent).
 *
 * Context, Concurrency: as shmr_buf_alloc().
 * Ownership:   @p buf is no longer the caller's (its data pointer must not
 *              be used); it is cleared.
 * Errors:      -EINVAL (not a buffer this endpoint holds).
 */
int shmr_buf_release(struct shmr_endpoint *ep, struct shmr_buf *buf);

/**
 * Send the first @p len bytes of @p buf, as shmr_send() does a payload.
 * Nothing is copied: the message refers to the buffer.  Routed by every
 * logic (and, at high or max priority, shmr_send_buf_prio(), to a
 * router's admin-path handlers, which read it in place; a router's own
 * messages refuse a buffer with -SHMR_E_NOT_ALLOWED); broadcast and
 * scatter-gather share the one buffer among their copies (a reference
 * count: it is freed when the last receiver is done).  A reply in a
 * buffer to a scatter-gather or tail-chopping call reaches its caller
 * whichever routing lcores poll the replier and the caller.
 * Consistent hashing by payload bytes hashes the reference, not the
 * payload: route large messages by key.
 *
 * Context, Concurrency: as shmr_send().
 * Ownership:   on 0 the buffer is the receiver's (@p buf is cleared); on
 *              an error it stays the caller's, to send again or release.
 * Errors:      -EAGAIN (lane full), -EINVAL (not a buffer this endpoint
 *              holds, or @p len over its size), -SHMR_E_PROCESS_UNKNOWN
 *              (as shmr_send()).
 */
int shmr_send_buf(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
		  uint64_t key, struct shmr_buf *buf, size_t len);

/**
 * As shmr_send_buf() with a priority (as shmr_send_prio()): high and max
 * to a router reach its admin-path handlers, which see the payload in
 * place (ops->payload in <shmr/handler.h>); the control plane gives the
 * buffer back when the handler returns.
 *
 * Context, Concurrency: as shmr_send().
 * Ownership:   as shmr_send_buf().
 * Errors:      as shmr_send_buf(); -EINVAL for a priority over
 *              SHMR_PRIO_MAX.
 */
int shmr_send_buf_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		       enum shmr_priority prio, uint32_t type, uint64_t key,
		       struct shmr_buf *buf, size_t len);

/**
 * As shmr_send_buf(), in a Broadcast envelope (as shmr_send_broadcast()):
 * every routee of router @p router gets the message, whatever its logic,
 * and the copies share the one buffer (freed when the last receiver is
 * done with it).
 *
 * Context, Concurrency: as shmr_send().
 * Ownership:   as shmr_send_buf().
 * Errors:      as shmr_send_buf().
 */
int shmr_send_buf_broadcast(struct shmr_endpoint *ep, struct shmr_pid router,
			    uint32_t type, uint64_t key, struct shmr_buf *buf,
			    size_t len);

/**
 * A call whose request is the first @p len bytes of @p buf (as
 * shmr_send_buf()); the reply is as shmr_call()'s, copied into @p reply
 * whether it came inline or in a buffer (which is then released).
 *
 * Context, Concurrency: as shmr_call().
 * Ownership:   as shmr_send_buf() for @p buf.
 * Errors:      as shmr_call(), and -EINVAL as shmr_send_buf().
 */
int shmr_call_buf(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
		  uint64_t key, struct shmr_buf *buf, size_t len, void *reply,
		  size_t cap, int timeout_ms);

/**
 * As shmr_call_buf() with a priority (as shmr_call_prio()): a high or max
 * priority call to a router is answered by its admin-path handlers.
 *
 * Context, Concurrency: as shmr_call().
 * Ownership:   as shmr_send_buf() for @p buf.
 * Errors:      as shmr_call_buf(); -EINVAL for a priority over
 *              SHMR_PRIO_MAX.
 */
int shmr_call_buf_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		       enum shmr_priority prio, uint32_t type, uint64_t key,
		       struct shmr_buf *buf, size_t len, void *reply,
		       size_t cap, int timeout_ms);

/**
 * Answer the call @p req with the first @p len bytes of @p buf (as
 * shmr_reply() with a payload; the caller's shmr_call() copies it out).
 *
 * Context, Concurrency: as shmr_reply().
 * Ownership:   as shmr_send_buf() for @p buf.
 * Errors:      as shmr_reply(), and -EINVAL as shmr_send_buf().
 */
int shmr_reply_buf(struct shmr_endpoint *ep, const struct shmr_msg *req,
		   int status, struct shmr_buf *buf, size_t len);

/**
 * The payload of a received message @p m, inline or in the arena: one
 * accessor for both.
 *
 * Context:     the receiving endpoint's thread.
 * Concurrency: reads only; the reference is checked against this
 *              process's own copy of the arena's classes and the owner
 *              word's generation before any address is computed.
 * Ownership:   the bytes stay valid as long as the message does (until the
 *              next receive), or until shmr_buf_release() after
 *              shmr_buf_keep().
 * Returns:     a pointer to the bytes and their count in @p *len; NULL (and
 *              0) when @p m refers to a buffer that is not sound (a slot a
 *              peer forged or a reference to a buffer already freed).
 */
const void *shmr_msg_payload(struct shmr_endpoint *ep,
			     const struct shmr_msg *m, size_t *len);

/**
 * Keep the arena buffer of a received message @p m past the next receive:
 * the buffer becomes this endpoint's, as if allocated (it may be
 * released, or sent on without a copy).  A buffer that copies of one
 * message share (broadcast, scatter-gather) is taken over only by the last
 * receiver still holding it; the others get its bytes copied into a buffer
 * of their own, of the same class.
 *
 * Context, Concurrency: as shmr_buf_alloc(); @p m is a message the last
 *              receive returned.
 * Ownership:   on 0 @p buf is the caller's (data, size; the payload's
 *              length is shmr_msg_payload()'s).
 * Errors:      -EINVAL (@p m has no arena payload, or it is kept already);
 *              for a shared buffer, shmr_buf_alloc()'s errors
 *              (-SHMR_E_NO_BUFFER: nothing was kept, the message is still
 *              readable until the next receive).
 */
int shmr_buf_keep(struct shmr_endpoint *ep, const struct shmr_msg *m,
		  struct shmr_buf *buf);

/**
 * Register @p name for this endpoint in the domain's registry, so routers
 * and clients can resolve it (returns once the dataplane routes to it).
 * Dropped when the endpoint closes or its process dies.
 *
 * Context:     any thread, while @p ep is open; blocking (one round trip,
 *              then short sleeps until the dataplane routes to the name;
 *              up to SHMR_RECONNECT_MS more while the control plane
 *              restarts: see struct shmr_domain).
 * Concurrency: uses the domain's socket (see struct shmr_domain).
 * Ownership:   @p name is copied.
 * Errors:      -SHMR_E_ROUTE_DUPLICATE (taken), -SHMR_E_NAME,
 *              -SHMR_E_NOT_ALLOWED (this user holds its
 *              max_endpoints_per_user names already),
 *              -SHMR_E_CONTROL_LOST (the control plane died with the
 *              request: look the name up to see whether it is yours, or
 *              register again and take -SHMR_E_ROUTE_DUPLICATE as
 *              "perhaps mine"), -SHMR_E_NO_DOMAIN (the control plane is
 *              away: nothing was done), -SHMR_E_PROTO, -errno.
 */
int shmr_register(struct shmr_endpoint *ep, const char *name);

/**
 * Remove a name this endpoint registered.  Unknown names are success.
 *
 * Context, Concurrency: as shmr_register() (without the wait).
 * Errors: -SHMR_E_NAME, -SHMR_E_PERM (the name is another endpoint's:
 *         it stays registered), -SHMR_E_CONTROL_LOST (outcome unknown: unknown
 *         names are success, so asking again is safe), -SHMR_E_NO_DOMAIN
 *         (nothing was done), -SHMR_E_PROTO, -errno.
 */
int shmr_unregister(struct shmr_endpoint *ep, const char *name);


/* ---- route lifecycle ------------------------------------------------- */

/*
 * Manage a router's owned routes through the control plane, as shmrctl
 * does.  Semantics are the reference router's: disable, replace and remove
 * of a live worker ask it to stop (SIGTERM: shmr_stopping() becomes true;
 * SIGKILL after the configured stop_grace_ms) and complete when it has
 * exited; until then the route is pending and every mutator on it fails
 * with -SHMR_E_BUSY.  On a dead worker they complete at once.
 *
 * Order: a shmr_route_*() call comes after the sends that this process
 * made before it, on any of its endpoints on @p d: the request goes out
 * only once the dataplane has taken every message that was in their
 * outbound lanes when the call began (routed it into an inbox, or failed
 * it).  So send then shmr_route_drain() drains what was sent, and send
 * then shmr_route_disable() lets those messages reach the route first.
 * Sends that another thread makes during the call are not waited for.
 * The wait is bounded as shmr_endpoint_close()'s (SHMR_CLOSE_WAIT_MS
 * without progress); past it the request goes out anyway.
 *
 * The contract of every shmr_route_*() call:
 * Context:     any thread of an attached process; blocking (the wait
 *              for the dataplane to take what was sent, above; one
 *              control-socket round trip; the control plane may fork a
 *              worker meanwhile; up to SHMR_RECONNECT_MS more while the
 *              control plane restarts: see struct shmr_domain; then, on
 *              success, short sleeps until every routing lcore routes by
 *              the changed table, bounded as shmr_register()'s wait, so
 *              that the change holds for every message sent after the
 *              return: a drained route's refusal included).
 * Concurrency: uses the domain's socket: serialise them with the other
 *              calls that do (see struct shmr_domain).
 * Ownership:   strings are copied; @p args holds @p nargs strings.
 * Errors (all): -SHMR_E_NAME (a name not [A-Za-z0-9_.:-]{1,31}, an empty
 *              program or argument, a string with a space, more than 16
 *              args or a request over 512 bytes), -SHMR_E_NO_ROUTE (no
 *              such router, or, except for remove, no such route),
 *              -SHMR_E_BUSY (the route has a pending operation),
 *              -SHMR_E_NOT_ALLOWED (the router is stopped; or the
 *              caller is neither the owner, root nor in admin_group;
 *              or add and replace name a program the configuration
 *              does not list),
 *              -SHMR_E_CONTROL_LOST (the control plane died with the
 *              request in flight: it may or may not have been done; read
 *              the route's state with shmrctl, then decide),
 *              -SHMR_E_NO_DOMAIN (the control plane is away: nothing was
 *              done), -SHMR_E_PROTO, -errno.
 */

/**
 * Add route @p name running @p program with @p args to @p router and start
 * its worker, pinned to @p cpus (a cpu list like "0-1"; NULL or "": the
 * control plane picks one PU).  The route exists only if its worker
 * started.
 *
 * Context, Concurrency, Ownership: as every shmr_route_*() call (above).
 * Errors: those of every call, -SHMR_E_ROUTE_DUPLICATE (the router has
 *         that route), the start's -errno (e.g. -ENOENT: no such
 *         program; -EINVAL: @p cpus names a cpu this machine does not
 *         have, "0-99" on a smaller one, so the worker cannot be pinned),
 *         -SHMR_E_PROTO (@p cpus is not a cpu list: not N or N-M, N <= M
 *         < 4096, comma-separated), -SHMR_E_NO_ENDPOINT (router or
 *         domain full).
 */
int shmr_route_add(struct shmr_domain *d, const char *router,
		   const char *name, const char *program,
		   const char *const *args, unsigned nargs, const char *cpus);

/**
 * Remove route @p name (its inbox is freed).  An unknown route is success.
 *
 * Context, Concurrency: as every shmr_route_*() call (above).
 * Errors: those of every call.
 */
int shmr_route_remove(struct shmr_domain *d, const char *router,
		      const char *name);

/**
 * Disable route @p name: messages routed to it fail with
 * -SHMR_E_DISABLED.  Idempotent.
 *
 * Context, Concurrency: as every shmr_route_*() call (above).
 * Errors: those of every call.
 */
int shmr_route_disable(struct shmr_domain *d, const char *router,
		       const char *name);

/**
 * Disable route @p name gently (shmrctl disable --drain): messages routed
 * to it fail with -SHMR_E_DISABLED from now on, but its live worker is
 * asked to stop only once it has handled everything queued in its inbox
 * (what this process sent before the call included: see "Order" above);
 * the route is pending (disable) until the worker has exited.  A dead
 * route is disabled at once, a disabled one left as it is.
 *
 * Context, Concurrency: as every shmr_route_*() call (above).
 * Errors: those of every call.
 */
int shmr_route_drain(struct shmr_domain *d, const char *router,
		     const char *name);

/**
 * Enable a disabled route and start its worker.  A route that is enabled
 * (even with no live worker) is left as is: see shmr_route_respawn().
 *
 * Context, Concurrency: as every shmr_route_*() call (above).
 * Errors: those of every call, the start's -errno (the route stays
 *         disabled).
 */
int shmr_route_enable(struct shmr_domain *d, const char *router,
		      const char *name);

/**
 * Give route @p name a new program and args (its name, inbox and cpus
 * stay).  A disabled route only has its spec swapped: the next enable
 * starts the new program.
 *
 * Context, Concurrency, Ownership: as every shmr_route_*() call (above).
 * Errors: those of every call, the start's -errno for a dead route (the
 *         old spec is kept).
 */
int shmr_route_replace(struct shmr_domain *d, const char *router,
		       const char *name, const char *program,
		       const char *const *args, unsigned nargs);

/**
 * Start the worker of an enabled route that has none.
 *
 * Context, Concurrency: as every shmr_route_*() call (above).
 * Errors: those of every call, -SHMR_E_ROUTE_RUNNING (it has one),
 *         -SHMR_E_DISABLED, the start's -errno.
 */
int shmr_route_respawn(struct shmr_domain *d, const char *router,
		       const char *name);

#ifdef __cplusplus
}
#endif
#endif
