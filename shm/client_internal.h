/*
 * What libshmr's files share: the attached domain, an endpoint, and the
 * few steps of sending and receiving that more than one of them takes.
 * Not installed; not for direct inclusion by anything outside libshmr
 * (shm/client*.c).  The small helpers are static inline here, so that
 * the send path compiles as it did in one file (fill_slot() inlined into
 * every send).
 */
#ifndef SHMR_CLIENT_INTERNAL_H
#define SHMR_CLIENT_INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <shmr/arena.h>
#include <shmr/domain.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

struct shmr_domain {
	void *base; /* both parts (shmr_domain_map()), the first read-only */
	size_t size;
	struct shmr_domain_hdr *hdr;
	uint32_t slot_size;
	uint32_t lane_size; /* our copy: every copy in or out is bounded by it */
	uint32_t nlcores;
	uint32_t max_endpoints; /* slots a PID may name (our copy, bounded) */
	/* TSC ticks to ns (shmr_tsc_mult() of the header's tsc_hz, read
	 * once); 0: the domain's senders do not stamp, so neither do we. */
	uint64_t tsc_mult;
	unsigned nendpoints;
	/* Our copy of the payload arena's classes (arena.h), from attach. */
	struct shmr_arena_view arena;
	/* Only the control-socket calls use what follows: after the fields
	 * the fast path reads, so those keep their place. */
	/* The domain's identity (its two files), to tell a new control
	 * plane's domain from ours after a reconnect. */
	dev_t domain_dev, lanes_dev;
	ino_t domain_ino, lanes_ino;
	struct shmr_proto_conn conn; /* the control socket */
	struct shmr_endpoint *eps; /* the endpoints open on it, newest first */
	/* The registry (lookups): our copy of its place and size, from the
	 * header that attach checked, never above SHMR_MAX_NAMES. */
	const struct shmr_spec_reg *names;
	uint32_t max_names;
	/* The spec's routers: our copy of the header's max_routers, never
	 * above SHMR_MAX_ROUTERS; every nrouters read is held below it. */
	uint32_t max_routers;
	/* The routers' routes: our copy of the header's max_routes (never
	 * above SHMR_MAX_ROUTES) and of their region's place. */
	uint32_t max_routes;
	void *routes;
};

#define RX_BURST_MAX 256u

struct shmr_endpoint {
	struct shmr_domain *d;
	struct shmr_pid pid;
	int claimed; /* a route's inbox: never CLOSEd by us */
	int retiring; /* a PoisonPill came: RETIRE was asked */
	struct shmr_ep_shared *sh;  /* read-only: the daemons write it */
	struct shmr_ep_peer *peer;  /* our bell and busy line */
	struct shmr_hist *hist;     /* our receives' sojourns (we write it) */
	struct rte_ring *in[SHMR_MAX_LCORES];
	struct rte_ring *out, *out_high;
	struct shmr_bell *dp_bell; /* the lcore that polls our out lanes */
	int bell_needed;           /* adaptive mode: someone may sleep */
	/* That lcore's work bits (layout.h): its summary words, and ours. */
	_Atomic(uint64_t) *work;
	uint32_t work_nsum, work_idx;
	unsigned unreleased[SHMR_MAX_LCORES];
	unsigned rr;
	uint64_t next_ref;
	uint64_t stale_replies;
	uint64_t bad_slots; /* malformed slots found in our inbound lanes */
	uint32_t busy; /* what we last stored in peer->busy; UINT32_MAX: none */
	uint64_t lane_full; /* what we last stored in peer->lane_full */
	/* Messages returned by the last receive (peeked, not yet released). */
	unsigned char *rx;
	/* Messages that arrived during calls: [0, backlog_pos) given to the
	 * app, [backlog_pos, backlog_len) not yet.  A call only appends. */
	unsigned char *backlog;
	unsigned backlog_cap, backlog_len, backlog_pos;
	/* The last receive returned messages (in rx or the backlog) that the
	 * app may still be handling: a call keeps them unreleased and valid
	 * until the next receive. */
	int handling;
	unsigned char *tx;
	uint32_t lane_size; /* read once: what close checks the lanes by */
	/* The domain's list of its endpoints (d->eps), and where our outbound
	 * lanes' producers stood when a control request began: both only
	 * for the calls that talk to the control plane (serialised). */
	struct shmr_endpoint *next;
	uint32_t mark_out, mark_high;
	/* The arena (arena.h): where each class's next allocation starts
	 * looking, and the buffers of the slots peeked and not released
	 * yet, freed once their slots are (shmr_client_release_all()). */
	uint32_t buf_cursor[SHMR_ARENA_MAX_CLASSES];
	struct held_buf *held;
	unsigned nheld;
};

/* A received slot's arena buffer, freed when the slot is released.  The
 * receive copies r from the slot; the give-back reads only its class,
 * index and generation, so r.len is free to say HELD_KEPT once
 * shmr_buf_keep() took the buffer (client_buf.c): a second keep of that
 * message is refused.  The next receive writes the entry afresh. */
struct held_buf {
	struct shmr_buf_ref r;
	uint32_t from; /* the sender's endpoint slot, which holds it SENT */
};

/* held_buf.r.len of a kept message: no payload is that long (a
 * reference's len is at most its class's size, msg_ref()). */
#define HELD_KEPT UINT32_MAX

static inline int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A reply to @p req may be sent: it is a call; @p status made negative. */
static inline int reply_ok(const struct shmr_msg *req, int *status)
{
	if (req->kind != SHMR_KIND_CALL)
		return -EINVAL;
	if (*status > 0)
		*status = -*status;
	return 0;
}

/*
 * Fill slot @p m, sent by @p from: the header in one pass (the flags
 * stored once), the payload, and @p stamp (the burst's clock; 0: none) in
 * the 8 bytes after the payload when they fit in @p room (stamp_room();
 * layout.h, SHMR_STAMP_SIZE).  It takes values, not the endpoint: the
 * payload's copy may alias anything, so whatever it read through a
 * pointer would be read again for every slot of a burst.
 */
static inline __attribute__((always_inline)) void
fill_slot_stamped(struct shmr_msg *m, struct shmr_pid from, uint8_t kind,
		  uint8_t prio, struct shmr_pid to, uint32_t type, uint64_t key,
		  uint64_t ref, int32_t status, const void *data, uint32_t len,
		  uint64_t stamp, size_t room)
{
	/* A send's stamp is its ref (a send has no call reference); a call's
	 * or a reply's goes after the payload, where it fits (layout.h). */
	const int in_ref = kind == SHMR_KIND_SEND;
	uint8_t flags = stamp && (in_ref || len <= room) ? SHMR_F_STAMPED : 0;

	m->kind = kind;
	m->flags = flags;
	m->priority = prio;
	m->hops = 0;
	m->type = type;
	m->from = from;
	m->to = to;
	m->ref = in_ref ? stamp : ref;
	m->key = key;
	m->len = len;
	m->status = status;
	if (len >= 8 && len <= 16) {
		/* A key or two: two overlapping 8-byte moves, not a call. */
		uint64_t a, b;

		memcpy(&a, data, 8);
		memcpy(&b, (const unsigned char *)data + len - 8, 8);
		memcpy(m->data, &a, 8);
		memcpy(m->data + len - 8, &b, 8);
	} else if (len) {
		memcpy(m->data, data, len);
	}
	if (flags && !in_ref)
		memcpy(m->data + len, &stamp, sizeof(stamp));
}

/* The payload room a stamp still fits after, in a slot of @p ss bytes. */
static inline size_t stamp_room(uint32_t ss)
{
	return ss - SHMR_HDR_SIZE - SHMR_STAMP_SIZE;
}

/* fill_slot_stamped() with no stamp: a slot that carries no sojourn. */
static inline void fill_slot(struct shmr_endpoint *ep, struct shmr_msg *m,
			     uint8_t kind, uint8_t prio, struct shmr_pid to,
			     uint32_t type, uint64_t key, uint64_t ref,
			     int32_t status, const void *data, uint32_t len)
{
	fill_slot_stamped(m, ep->pid, kind, prio, to, type, key, ref, status,
			  data, len, 0, 0);
}

/**
 * Release every slot @p ep's receives peeked (dequeue finish on each
 * inbound lane), then the arena buffers those slots held, and empty the
 * backlog: what the application was given has been handled.
 *
 * Context:     @p ep's receiving thread, when the application asks for
 *              more (a receive; a call made with no message of the last
 *              receive in hand and nothing undelivered; close).
 */
void shmr_client_release_all(struct shmr_endpoint *ep);

/**
 * Enqueue @p n slots prepared in ep->tx into @p ep's outbound lane
 * (@p high: the high-priority one), then tell the routing lcore that
 * polls it (its work bit, its bell).
 *
 * Context:     @p ep's sending thread, the slots filled (fill_slot()).
 * Returns:     how many were enqueued (fewer: the lane is full, or its
 *              slots are not inside it: shmr_lane_put_bounded()).
 */
unsigned shmr_client_push(struct shmr_endpoint *ep, int high, unsigned n);

/**
 * Build and enqueue one slot of @p kind and @p prio to @p to.
 *
 * Context:     @p ep's sending thread.
 * Returns:     0; -SHMR_E_TOO_BIG, -SHMR_E_PROCESS_UNKNOWN, or -EAGAIN
 *              when the lane is full.
 */
int shmr_client_send_one(struct shmr_endpoint *ep, uint8_t kind, uint8_t prio,
			 struct shmr_pid to, uint32_t type, uint64_t key,
			 uint64_t ref, int32_t status, const void *data,
			 size_t len);

/**
 * A call's first step, before its send: release what the application has
 * handled, and refuse the call when a reply could not get in (an inbound
 * lane full of slots we hold unreleased).
 *
 * Context:     @p ep's thread, at the start of a call.
 * Returns:     0, or -ENOBUFS (nothing to be sent).
 */
int shmr_client_call_begin(struct shmr_endpoint *ep);

/**
 * A call's wait for the reply to @p ref (sent), until @p deadline
 * (now_ms(); -1: none): its payload copied into @p reply (at most @p cap
 * bytes), everything else that arrives kept in the backlog for
 * shmr_recv_burst().
 *
 * Context:     @p ep's thread, right after the call's send.
 * Returns:     the reply's length, its negative status, -ENOBUFS (an
 *              inbound lane is full of slots we hold unreleased: the reply
 *              may not get in), or wait_input()'s -SHMR_E_TIMEOUT/-EINTR.
 */
int shmr_client_call_wait(struct shmr_endpoint *ep, uint64_t ref, void *reply,
			  size_t cap, int64_t deadline);

/**
 * Order a control request after this process's sends: wait until the
 * dataplane has taken (forwarded, queued or failed) every slot that was
 * in the outbound lanes of @p d's endpoints when the call began.  Sends
 * made meanwhile (another thread's) are not waited for.  Bounded as
 * shmr_endpoint_close()'s wait: SHMR_CLOSE_WAIT_MS without progress on
 * an endpoint (default 2000), once: after a wait that gave up, the other
 * endpoints are not waited for; nor is a lane the dataplane cannot take.
 *
 * Context:     a call that talks to the control plane, before its request.
 * Concurrency: serialised with the other such calls on @p d (the endpoint
 *              list); reads other threads' lanes with acquire loads only.
 * Returns:     0, or how many slots were still not taken at the bound.
 */
int shmr_client_sends_taken(struct shmr_domain *d);

/**
 * Wait until every routing lcore has adopted the routing spec as it is
 * now (the one the caller's control request just changed: OPEN,
 * REGISTER, a route's lifecycle), so that what the caller does next
 * (give its PID to a peer, expect a router to reach the name, count on a
 * drained route's refusal) meets the new table.  Bounded (about 1 s): a
 * dataplane being restarted takes the change up when it starts, so after
 * the bound it returns anyway.
 *
 * Context:     after a control request that succeeded; blocking (short
 *              sleeps).
 * Concurrency: reads the spec (seqlock) and the lcores' table_version.
 */
void shmr_client_wait_adopted(struct shmr_domain *d);

/**
 * The hello of @p arg's (a struct shmr_domain) control connection on a
 * new socket @p sock: ATTACH again and check it is the same domain.
 *
 * Context: inside shmr_proto_conn_request() on the domain's connection.
 * Returns: 0; -SHMR_E_NO_DOMAIN when the control plane serves another
 *          domain; shmr_proto_attach()'s errors.
 */
int shmr_client_reattach(void *arg, int sock);

#endif
