/*
 * libshmr: attach, endpoints, send, call, receive.
 *
 * Receiving and the at-least-once promise.  An endpoint's inbound lanes are
 * read with DPDK's peek API: dequeue start copies slots out and moves
 * cons.head; only dequeue finish moves cons.tail and lets the producer reuse
 * them.  We finish a lane's slots only when the application asks for more
 * (the next shmr_recv_burst(), or a shmr_call() with nothing undelivered),
 * so if the process dies while handling a burst, the control plane finds
 * [cons.tail, cons.head) unreleased and hands it to the replacement flagged
 * SHMR_F_REDELIVERED (see shmr_lane_repair_consumer()).
 *
 * A call waits for its reply on the same lanes.  Whatever else arrives
 * meanwhile is copied to the endpoint's backlog, but its slots stay
 * unreleased in the ring until the application has been given the backlog
 * and asks for more: a crash during a call loses nothing either.  Since the
 * backlog holds at most what the lanes hold unreleased, it can never
 * overflow: a lane full of unreleased slots stops its producer instead.
 *
 * The control plane may die and be started again (it adopts the domain).
 * Nothing above needs it: the lanes live in the domain.  Only the calls
 * that talk to it do, through a connection that reconnects to the same
 * path (shmr_proto_conn_request(), proto.c's essay) and greets the new
 * control plane as at attach (shmr_client_reattach() in client_ctl.c:
 * ATTACH again, which also binds this process's endpoints to the new
 * connection, and a check that it serves the very domain we mapped).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include <shmr/domain.h>
#include <shmr/lane_copy.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "client_internal.h"

#define RX_BURST_MAX 256u

/* shmr_endpoint_close()'s bound (shmr.h), from the environment. */
#define CLOSE_WAIT_ENV "SHMR_CLOSE_WAIT_MS"
#define CLOSE_WAIT_MS_DEFAULT 2000
#define CLOSE_WAIT_MS_MAX 600000

struct shmr_endpoint {
	struct shmr_domain *d;
	struct shmr_pid pid;
	int claimed; /* a route's inbox: never CLOSEd by us */
	int retiring; /* a PoisonPill came: RETIRE was asked */
	struct shmr_ep_shared *sh;  /* read-only: the daemons write it */
	struct shmr_ep_peer *peer;  /* our bell and busy line */
	struct rte_ring *in[SHMR_MAX_LCORES];
	struct rte_ring *out, *out_high;
	struct shmr_bell *dp_bell; /* the lcore that polls our out lanes */
	int bell_needed;           /* adaptive mode: someone may sleep */
	unsigned unreleased[SHMR_MAX_LCORES];
	unsigned rr;
	uint64_t next_ref;
	uint64_t stale_replies;
	uint64_t bad_slots; /* malformed slots found in our inbound lanes */
	uint32_t busy; /* what we last stored in peer->busy; UINT32_MAX: none */
	uint64_t lane_full; /* what we last stored in peer->lane_full */
	/* Messages returned by the last receive (peeked, not yet released). */
	unsigned char *rx;
	/* Messages that arrived during calls, not yet given to the app. */
	unsigned char *backlog;
	unsigned backlog_cap, backlog_len, backlog_pos;
	int backlog_given; /* all of it was returned: release on next recv */
	unsigned char *tx;
	uint32_t lane_size; /* read once: what close checks the lanes by */
	/* The domain's list of its endpoints (d->eps), and where our outbound
	 * lanes' producers stood when a control request began: both only
	 * for the calls that talk to the control plane (serialised). */
	struct shmr_endpoint *next;
	uint32_t mark_out, mark_high;
};

/* ---- endpoints ------------------------------------------------------- */

static int endpoint_make(struct shmr_domain *d, struct shmr_pid pid,
			 int claimed, struct shmr_endpoint **out)
{
	struct shmr_endpoint *ep;
	size_t ss = d->slot_size;

	if (pid.slot >= SHMR_MAX_ENDPOINTS)
		return -SHMR_E_PROTO;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->d = d;
	ep->pid = pid;
	ep->claimed = claimed;
	ep->sh = shmr_ep_at(d->base, pid.slot);
	for (uint32_t i = 0; i < d->nlcores; i++)
		ep->in[i] = shmr_lane_at(d->base, pid.slot, i);
	ep->out = shmr_lane_at(d->base, pid.slot, SHMR_LANE_OUT(d->nlcores));
	ep->out_high =
		shmr_lane_at(d->base, pid.slot, SHMR_LANE_OUT_HIGH(d->nlcores));
	ep->peer = shmr_ep_peer_at(d->base, pid.slot);
	ep->dp_bell = shmr_lcore_bell(d->base, pid.slot % d->nlcores);
	ep->bell_needed = d->hdr->poll_mode != SHMR_POLL_BUSY;
	ep->next_ref = ((uint64_t)pid.gen << 40) | ((uint64_t)pid.slot << 32);
	ep->busy = UINT32_MAX; /* whatever a predecessor left: rewrite it */
	/* A route's next worker goes on counting where the last one left
	 * off (the control plane shows the slot's count since it handed the
	 * slot out).  Relaxed: a statistic, no partner. */
	ep->lane_full = atomic_load_explicit(&ep->peer->lane_full,
					     memory_order_relaxed);
	ep->lane_size = d->hdr->lane_size;
	ep->backlog_cap = d->nlcores * ep->lane_size;
	ep->rx = malloc(RX_BURST_MAX * ss);
	ep->backlog = malloc((size_t)ep->backlog_cap * ss);
	ep->tx = malloc(RX_BURST_MAX * ss);
	if (!ep->rx || !ep->backlog || !ep->tx) {
		free(ep->rx);
		free(ep->backlog);
		free(ep->tx);
		free(ep);
		return -ENOMEM;
	}
	ep->next = d->eps;
	d->eps = ep;
	*out = ep;
	return 0;
}

static int parse_pid(const char *s, struct shmr_pid *pid)
{
	unsigned long slot, gen;
	char *end;

	errno = 0;
	slot = strtoul(s, &end, 10);
	if (end == s || (*end != ' ' && *end != ':') || errno)
		return -SHMR_E_PROTO;
	s = end + 1;
	gen = strtoul(s, &end, 10);
	if (end == s || (*end != '\0' && *end != ' ' && *end != '\n') ||
	    errno || slot >= SHMR_MAX_ENDPOINTS || gen == 0 ||
	    gen > UINT32_MAX)
		return -SHMR_E_PROTO;
	pid->slot = (uint32_t)slot;
	pid->gen = (uint32_t)gen;
	return 0;
}

/*
 * Wait until every routing lcore has adopted the routing spec as it is now
 * (the one our OPEN or REGISTER just changed), so that what the caller
 * does next (give its PID to a peer, expect a router to reach the name)
 * is already routable.  Bounded: a dataplane being restarted takes the
 * change up when it starts, so after the bound we return anyway.
 * Acquire on table_version pairs with the lcore's release store of it.
 */
static void wait_adopted(struct shmr_domain *d)
{
	const struct shmr_spec *s = shmr_spec_of(d->base);
	uint64_t want, seq, deadline = shmr_spec_deadline();
	struct timespec pause = { 0, 200000 }; /* 0.2 ms */

	do {
		/* An unreadable spec (a peer's doing): nothing to wait for. */
		if (shmr_spec_read_begin(s, deadline, &seq) < 0)
			return;
		want = s->version;
	} while (shmr_spec_read_retry(s, seq));
	for (int tries = 0; tries < 5000; tries++) { /* about 1 s */
		uint32_t ok = 0;

		for (uint32_t l = 0; l < d->nlcores; l++)
			ok += atomic_load_explicit(
				      &shmr_stats_of(d->base, l)->table_version,
				      memory_order_acquire) >= want;
		if (ok == d->nlcores)
			return;
		nanosleep(&pause, NULL);
	}
}

int shmr_endpoint_open(struct shmr_domain *d, struct shmr_endpoint **out)
{
	char ans[128], req[64];
	struct shmr_pid pid;
	int rc;

	*out = NULL;
	rc = shmr_proto_conn_request(&d->conn, "OPEN", ans, sizeof(ans),
				     NULL);
	if (rc < 0)
		return rc;
	if (strncmp(ans, "OK ", 3) != 0 || parse_pid(ans + 3, &pid) < 0)
		return -SHMR_E_PROTO;
	rc = endpoint_make(d, pid, 0, out);
	if (rc < 0) {
		if (shmr_proto_pid_encode(req, sizeof(req), "CLOSE", NULL,
					  pid) >= 0)
			shmr_proto_conn_request(&d->conn, req, ans,
						sizeof(ans), NULL);
		return rc;
	}
	d->nendpoints++;
	wait_adopted(d);
	return 0;
}

/* Set from a signal handler: a lock-free atomic is async-signal-safe. */
static _Atomic int stop_requested;

static void on_sigterm(int sig)
{
	(void)sig;
	atomic_store_explicit(&stop_requested, 1, memory_order_relaxed);
}

int shmr_stopping(void)
{
	return atomic_load_explicit(&stop_requested, memory_order_relaxed);
}

int shmr_attach_env(struct shmr_domain **dp, struct shmr_endpoint **epp)
{
	const char *sock = getenv(SHMR_ENV_SOCKET);
	const char *eps = getenv(SHMR_ENV_ENDPOINT);
	struct sigaction sa = { .sa_handler = on_sigterm };
	struct shmr_domain *d;
	struct shmr_pid pid;
	char req[64], ans[128];
	int rc;

	*dp = NULL;
	*epp = NULL;
	if (!sock || !*sock || !eps || !*eps)
		return -SHMR_E_NO_ENV;
	if (parse_pid(eps, &pid) < 0)
		return -SHMR_E_NO_ENV;
	rc = shmr_attach_path(sock, &d);
	if (rc < 0)
		return rc;
	rc = shmr_proto_pid_encode(req, sizeof(req), "CLAIM", NULL, pid);
	if (rc >= 0)
		rc = shmr_proto_conn_request(&d->conn, req, ans, sizeof(ans),
					     NULL);
	if (rc == 0)
		rc = endpoint_make(d, pid, 1, epp);
	if (rc < 0) {
		shmr_detach(d);
		return rc;
	}
	d->nendpoints++;
	/* No SA_RESTART: a sleeping receive returns -EINTR on SIGTERM. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	*dp = d;
	return 0;
}

static void release_all(struct shmr_endpoint *ep)
{
	for (uint32_t i = 0; i < ep->d->nlcores; i++) {
		if (ep->unreleased[i]) {
			rte_ring_dequeue_elem_finish(ep->in[i],
						     ep->unreleased[i]);
			ep->unreleased[i] = 0;
		}
	}
	ep->backlog_len = ep->backlog_pos = 0;
	ep->backlog_given = 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Closing loses nothing that a send accepted.  Accepted means enqueued
 * in one of our outbound lanes; the dataplane polls them only while the
 * spec lists our slot, and CLOSE drops it from the spec.  So before CLOSE
 * we wait until the dataplane has finished with every slot we enqueued
 * (it releases a slot, cons.tail, only once it has forwarded, queued or
 * failed it), or has taken none for SHMR_CLOSE_WAIT_MS.  A close that
 * gives up says how many it left, and the control plane keeps polling
 * the slot after CLOSE (control/drain.c), as it does for a process
 * that exits or is killed without closing: those are not dropped either
 * unless the dataplane stalls on them past its bound (counted as
 * close_dropped in `shmrctl status`).
 */
/* Mark where the producers of @p ep's outbound lanes stand: what was
 * sent until now.  Acquire: pairs with the release of prod.tail by the
 * send (rte_ring's enqueue), which may have been another thread's. */
static void out_mark(struct shmr_endpoint *ep)
{
	ep->mark_out = __atomic_load_n(&ep->out->prod.tail, __ATOMIC_ACQUIRE);
	ep->mark_high =
		__atomic_load_n(&ep->out_high->prod.tail, __ATOMIC_ACQUIRE);
}

/* Of the slots lane @p r held up to its producer's tail @p upto, those
 * the consumer has not finished with; -1 when the lane cannot be judged
 * (shmr_lane_unconsumed(): the dataplane quarantines such a lane, nobody
 * takes what it holds), or @p upto is more than a lane ahead. */
static int64_t lane_left(const struct rte_ring *r, uint32_t ls, uint32_t upto)
{
	uint32_t ct, d;

	if (shmr_lane_unconsumed(r, ls) < 0)
		return -1;
	/* Acquire: pairs with the consumer's release of cons.tail once it
	 * has finished with the slots, as in shmr_lane_unconsumed(). */
	ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	d = upto - ct;
	if ((int32_t)d <= 0)
		return 0;
	return d > ls ? -1 : (int64_t)d;
}

/* Slots of our outbound lanes up to the mark (out_mark()) that the
 * dataplane has not finished with; -1 when a lane cannot be judged. */
static int64_t out_left(const struct shmr_endpoint *ep)
{
	uint32_t ls = ep->lane_size;
	int64_t a = lane_left(ep->out, ls, ep->mark_out);
	int64_t b = lane_left(ep->out_high, ls, ep->mark_high);

	return a < 0 || b < 0 ? -1 : a + b;
}

/* Wait until the dataplane took everything we sent up to the mark
 * (out_mark()), or took none for the bound; what is left then (0:
 * nothing), or -EIO for a lane it cannot take.  The bound is on a stall,
 * so a slow but working dataplane (a loaded machine) is waited for: at
 * most a lane's worth of bounds.  Sends after the mark (another thread's)
 * are not waited for. */
static int wait_out_taken(struct shmr_endpoint *ep)
{
	struct timespec pause = { 0, 200000 }; /* 0.2 ms */
	int64_t left = out_left(ep), last = left, deadline;
	int bound;

	if (left <= 0)
		return left < 0 ? -EIO : 0;
	bound = shmr_proto_env_ms(CLOSE_WAIT_ENV, CLOSE_WAIT_MS_DEFAULT,
				  CLOSE_WAIT_MS_MAX);
	deadline = now_ms() + bound;
	while (now_ms() < deadline) {
		/* A sleeping lcore was woken by the send; ring again in case
		 * it went back to sleep with our lane held back (B2 inside,
		 * as in push()). */
		if (ep->bell_needed)
			shmr_bell_ring(ep->dp_bell);
		nanosleep(&pause, NULL);
		left = out_left(ep);
		if (left <= 0)
			return left < 0 ? -EIO : 0;
		if (left < last) {
			last = left;
			deadline = now_ms() + bound;
		}
	}
	return (int)left;
}

int shmr_endpoint_close(struct shmr_endpoint *ep)
{
	char req[64], ans[128];
	int left = 0;

	if (!ep)
		return 0;
	/* What the application was given has been handled; what sits in the
	 * backlog has not, and stays unreleased for whoever comes next. */
	if (ep->backlog_len == 0 || ep->backlog_given)
		release_all(ep);
	/* A route's inbox stays (and stays polled) after its worker. */
	if (!ep->claimed) {
		out_mark(ep);
		left = wait_out_taken(ep);
	}
	if (!ep->claimed && shmr_proto_pid_encode(req, sizeof(req), "CLOSE",
						  NULL, ep->pid) >= 0)
		shmr_proto_conn_request(&ep->d->conn, req, ans, sizeof(ans),
					NULL);
	for (struct shmr_endpoint **pp = &ep->d->eps; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	ep->d->nendpoints--;
	free(ep->rx);
	free(ep->backlog);
	free(ep->tx);
	free(ep);
	return left;
}

int shmr_client_sends_taken(struct shmr_domain *d)
{
	int64_t left = 0;
	int rc;

	/* Every mark first: what was sent before the request, on each. */
	for (struct shmr_endpoint *ep = d->eps; ep; ep = ep->next)
		out_mark(ep);
	/* One stall is the dataplane's, not an endpoint's: after the first
	 * wait that gives up, the others are only counted. */
	for (struct shmr_endpoint *ep = d->eps; ep; ep = ep->next) {
		if (left > 0) {
			int64_t n = out_left(ep);

			left += n > 0 ? n : 0;
			continue;
		}
		rc = wait_out_taken(ep);
		if (rc > 0)
			left += rc;
	}
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

struct shmr_pid shmr_endpoint_pid(const struct shmr_endpoint *ep)
{
	return ep->pid;
}

/* ---- registry -------------------------------------------------------- */

static int name_request(struct shmr_endpoint *ep, const char *verb,
			const char *name)
{
	char key[SHMR_NAME_MAX], req[128], ans[128];
	int rc;

	if (shmr_name_copy(key, name) < 0 || strpbrk(name, " \n\t"))
		return -SHMR_E_NAME;
	rc = shmr_proto_pid_encode(req, sizeof(req), verb, key, ep->pid);
	if (rc < 0)
		return rc;
	return shmr_proto_conn_request(&ep->d->conn, req, ans, sizeof(ans),
				       NULL);
}

int shmr_register(struct shmr_endpoint *ep, const char *name)
{
	int rc = name_request(ep, "REGISTER", name);

	if (rc == 0)
		wait_adopted(ep->d);
	return rc;
}

int shmr_unregister(struct shmr_endpoint *ep, const char *name)
{
	return name_request(ep, "UNREGISTER", name);
}

/* ---- send ------------------------------------------------------------ */

static void fill_slot(struct shmr_endpoint *ep, struct shmr_msg *m,
		      uint8_t kind, uint8_t prio, struct shmr_pid to,
		      uint32_t type, uint64_t key, uint64_t ref,
		      int32_t status, const void *data, uint32_t len)
{
	m->kind = kind;
	m->flags = 0;
	m->priority = prio;
	m->hops = 0;
	m->type = type;
	m->from = ep->pid;
	m->to = to;
	m->ref = ref;
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
}

/* Enqueue @n prepared slots from ep->tx; ring the lcore's bell. */
static unsigned push(struct shmr_endpoint *ep, int high, unsigned n)
{
	struct rte_ring *r = high ? ep->out_high : ep->out;
	unsigned done = shmr_lane_put_bounded(r, ep->d->lane_size, ep->tx,
					      ep->d->slot_size, n);

	/* B2 inside shmr_bell_ring(): pairs with the lcore's B1. */
	if (done && ep->bell_needed)
		shmr_bell_ring(ep->dp_bell);
	/* Backpressure, counted on our own line (we are its one writer;
	 * relaxed: a statistic, no partner), from our own count so that a
	 * peer's scribble does not last. */
	if (done < n)
		atomic_store_explicit(&ep->peer->lane_full, ++ep->lane_full,
				      memory_order_relaxed);
	return done;
}

static int send_one(struct shmr_endpoint *ep, uint8_t kind, uint8_t prio,
		    struct shmr_pid to, uint32_t type, uint64_t key,
		    uint64_t ref, int32_t status, const void *data, size_t len)
{
	if (len > ep->d->slot_size - SHMR_HDR_SIZE)
		return -SHMR_E_TOO_BIG;
	/* A slot that cannot exist: no need to ask the dataplane (it would
	 * drop the slot as a bad target, and a call would wait it out). */
	if (to.slot >= ep->d->max_endpoints)
		return -SHMR_E_PROCESS_UNKNOWN;
	fill_slot(ep, (struct shmr_msg *)ep->tx, kind, prio, to, type, key,
		  ref, status, data, (uint32_t)len);
	return push(ep, prio != SHMR_PRIO_NORMAL, 1) == 1 ? 0 : -EAGAIN;
}

int shmr_send(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
	      uint64_t key, const void *data, size_t len)
{
	return send_one(ep, SHMR_KIND_SEND, SHMR_PRIO_NORMAL, to, type, key, 0,
			0, data, len);
}

int shmr_send_broadcast(struct shmr_endpoint *ep, struct shmr_pid router,
			uint32_t type, uint64_t key, const void *data,
			size_t len)
{
	struct shmr_msg *m = (struct shmr_msg *)ep->tx;

	if (len > ep->d->slot_size - SHMR_HDR_SIZE)
		return -SHMR_E_TOO_BIG;
	if (router.slot >= ep->d->max_endpoints)
		return -SHMR_E_PROCESS_UNKNOWN;
	fill_slot(ep, m, SHMR_KIND_SEND, SHMR_PRIO_NORMAL, router, type, key,
		  0, 0, data, (uint32_t)len);
	m->flags = SHMR_F_BROADCAST;
	return push(ep, 0, 1) == 1 ? 0 : -EAGAIN;
}

int shmr_send_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		   enum shmr_priority prio, uint32_t type, uint64_t key,
		   const void *data, size_t len)
{
	if (prio > SHMR_PRIO_MAX)
		return -EINVAL;
	return send_one(ep, SHMR_KIND_SEND, (uint8_t)prio, to, type, key, 0, 0,
			data, len);
}

int shmr_send_name(struct shmr_endpoint *ep, const char *name, uint32_t type,
		   uint64_t key, const void *data, size_t len)
{
	struct shmr_pid to;
	int rc = shmr_lookup(ep->d, name, &to);

	if (rc < 0)
		return rc;
	return shmr_send(ep, to, type, key, data, len);
}

int shmr_send_burst(struct shmr_endpoint *ep, const struct shmr_out *msgs,
		    unsigned n)
{
	size_t ss = ep->d->slot_size;

	if (n > RX_BURST_MAX)
		n = RX_BURST_MAX;
	for (unsigned i = 0; i < n; i++) {
		if (msgs[i].len > ss - SHMR_HDR_SIZE)
			return -SHMR_E_TOO_BIG;
		/* As send_one(): a slot that cannot exist is refused here,
		 * not dropped by the dataplane as a bad target. */
		if (msgs[i].to.slot >= ep->d->max_endpoints)
			return -SHMR_E_PROCESS_UNKNOWN;
	}
	for (unsigned i = 0; i < n; i++)
		fill_slot(ep, (struct shmr_msg *)(ep->tx + i * ss),
			  SHMR_KIND_SEND, SHMR_PRIO_NORMAL, msgs[i].to,
			  msgs[i].type, msgs[i].key, 0, 0, msgs[i].data,
			  msgs[i].len);
	return (int)push(ep, 0, n);
}

int shmr_reply(struct shmr_endpoint *ep, const struct shmr_msg *req,
	       int status, const void *data, size_t len)
{
	if (req->kind != SHMR_KIND_CALL)
		return -EINVAL;
	if (status > 0)
		status = -status;
	return send_one(ep, SHMR_KIND_REPLY, SHMR_PRIO_NORMAL, req->from,
			req->type, req->key, req->ref, status, data, len);
}

/* ---- receive --------------------------------------------------------- */

/*
 * Nothing new to read?  A lane whose geometry is not ours, or that claims
 * more than a capacity, counts as empty: its words were written by a peer
 * (the dataplane quarantines the endpoint when it next produces there),
 * and a bounded peek would refuse it anyway, so waiting for it to fill
 * would spin.  Called only when a receive found nothing.
 */
static int lanes_empty(struct shmr_endpoint *ep)
{
	uint32_t ls = ep->d->lane_size;

	for (uint32_t i = 0; i < ep->d->nlcores; i++)
		if (shmr_lane_unconsumed(ep->in[i], ls) >
		    (int64_t)ep->unreleased[i])
			return 0;
	return 1;
}

/*
 * Wait until a lane has unread slots, the deadline passes (-SHMR_E_TIMEOUT)
 * or a signal arrives (-EINTR).  Spins first, then sleeps on our bell.
 */
static int wait_input(struct shmr_endpoint *ep, int64_t deadline)
{
	struct shmr_bell *bell = &ep->peer->bell;
	uint32_t spins = ep->d->hdr->spin_polls;
	int rc;

	/* Spin briefly, yielding now and then: with more processes than
	 * cores, the one we wait for may need this core to answer. */
	for (uint32_t i = 0; i < spins; i++) {
		if (!lanes_empty(ep))
			return 0;
		if ((i & 7) == 7)
			sched_yield();
		else
			rte_pause();
	}
	for (;;) {
		int64_t left = deadline < 0 ? -1 : deadline - now_ms();
		uint32_t seen;

		if (!lanes_empty(ep))
			return 0;
		if (deadline >= 0 && left <= 0)
			return -SHMR_E_TIMEOUT;
		if (shmr_stopping())
			return -EINTR;
		seen = shmr_bell_prepare(bell);
		if (!lanes_empty(ep)) {
			shmr_bell_cancel(bell);
			return 0;
		}
		/* Bounded sleeps: a dataplane restarted between our check and
		 * its enqueue still gets us within a second. */
		rc = shmr_bell_sleep(bell, seen,
				     left < 0 || left > 1000 ? 1000 : (int)left);
		if (rc == -EINTR)
			return -EINTR;
	}
}

/*
 * Keep the sound ones of @p m slots just copied to @p dst, in order; a
 * slot of no kind we know, or longer than a slot can hold, is dropped and
 * counted (the first one said once on stderr): only the dataplane should
 * write our inbound lanes, and it sends nothing of the sort, so a peer
 * that can write the lanes part did.  It stays reserved in the ring with
 * the others (released with them).  Returns how many were kept.
 */
static unsigned keep_sound(struct shmr_endpoint *ep, unsigned char *dst,
			   unsigned m, uint32_t lane)
{
	size_t ss = ep->d->slot_size;
	unsigned kept = 0;

	for (unsigned j = 0; j < m; j++) {
		const struct shmr_msg *s =
			(const struct shmr_msg *)(dst + j * ss);

		if ((s->kind == SHMR_KIND_SEND || s->kind == SHMR_KIND_CALL ||
		     s->kind == SHMR_KIND_REPLY) &&
		    s->len <= ss - SHMR_HDR_SIZE) {
			if (kept != j)
				memcpy(dst + kept * ss, s, ss);
			kept++;
			continue;
		}
		if (ep->bad_slots++ == 0)
			fprintf(stderr,
				"libshmr: endpoint %u: dropped a malformed slot "
				"(kind %u, length %u) from inbound lane %u: "
				"something other than the dataplane wrote it\n",
				ep->pid.slot, s->kind, s->len, lane);
	}
	return kept;
}

/* Peek up to @n new slots from the lanes into @dst (round robin).  Every
 * copy is bounded by our own geometry (lane_copy.h): the lanes are memory
 * any peer can write. */
static unsigned peek(struct shmr_endpoint *ep, unsigned char *dst, unsigned n)
{
	size_t ss = ep->d->slot_size;
	uint32_t nl = ep->d->nlcores;
	unsigned got = 0;

	for (uint32_t k = 0; k < nl && got < n; k++) {
		uint32_t i = (ep->rr + k) % nl;
		unsigned m = shmr_lane_peek_bounded(ep->in[i], ep->d->lane_size,
						    dst + got * ss,
						    (uint32_t)ss, n - got);
		ep->unreleased[i] += m;
		got += keep_sound(ep, dst + got * ss, m, i);
	}
	ep->rr++;
	return got;
}

/*
 * The endpoint's busy flag (layout.h), which the dataplane's
 * smallest-mailbox reads: 1 from the receive that returns messages until
 * the one that finds none.  Stored only when it changes, so a worker under
 * load writes its line once, not per burst.  Relaxed, no partner: a hint.
 */
static void set_busy(struct shmr_endpoint *ep, uint32_t busy)
{
	if (ep->busy == busy)
		return;
	ep->busy = busy;
	atomic_store_explicit(&ep->peer->busy, busy, memory_order_relaxed);
}

/*
 * A PoisonPill reached a route's worker (Pekko's Broadcast(PoisonPill) to
 * a pool): it is not handed to the program.  The control plane is asked
 * to retire the route (RETIRE): it takes no new messages, and once its
 * inbox is empty the worker is stopped as for any remove, so everything
 * queued before (and after) the pill is still handled.  Returns 1 when
 * @p m is such a pill.
 */
static int poison_pill(struct shmr_endpoint *ep, const struct shmr_msg *m)
{
	char req[64], ans[64];
	int rc;

	if (!ep->claimed || m->kind != SHMR_KIND_SEND ||
	    m->type != SHMR_TYPE_POISON_PILL)
		return 0;
	if (!ep->retiring) {
		ep->retiring = 1;
		/* Through the reconnecting request, as every control-socket
		 * call.  On failure the worker just goes on; when the control
		 * plane could not be reached at all (nothing was asked), a
		 * later pill asks again.  SHMR_E_CONTROL_LOST: it may have
		 * been asked, and RETIRE is not repeated. */
		rc = shmr_proto_pid_encode(req, sizeof(req), "RETIRE", NULL,
					   ep->pid);
		if (rc >= 0)
			rc = shmr_proto_conn_request(&ep->d->conn, req, ans,
						     sizeof(ans), NULL);
		if (rc == -SHMR_E_NO_DOMAIN)
			ep->retiring = 0;
	}
	return 1;
}

int shmr_recv_burst(struct shmr_endpoint *ep, const struct shmr_msg **msgs,
		    unsigned n, int timeout_ms)
{
	size_t ss = ep->d->slot_size;
	int64_t deadline = -1;
	unsigned got, out;
	int rc;

	if (n > RX_BURST_MAX)
		n = RX_BURST_MAX;
	if (n == 0)
		return 0;
	if (ep->backlog_len && !ep->backlog_given) {
		/* Messages that arrived during calls come first, in order. */
		out = 0;
		while (out < n && ep->backlog_pos < ep->backlog_len) {
			const struct shmr_msg *m =
				(const struct shmr_msg *)(ep->backlog +
							  ep->backlog_pos++ *
								  ss);

			if (!poison_pill(ep, m))
				msgs[out++] = m;
		}
		if (ep->backlog_pos == ep->backlog_len)
			ep->backlog_given = 1;
		if (out) {
			set_busy(ep, 1);
			return (int)out;
		}
	}
	/* The previous burst (or the whole backlog) has been handled. */
	release_all(ep);
	for (;;) {
		got = peek(ep, ep->rx, n);
		out = 0;
		for (unsigned i = 0; i < got; i++) {
			const struct shmr_msg *m =
				(const struct shmr_msg *)(ep->rx + i * ss);
			if (m->kind == SHMR_KIND_REPLY) {
				/* A reply to a call that gave up. */
				ep->stale_replies++;
				continue;
			}
			if (poison_pill(ep, m))
				continue;
			msgs[out++] = m;
		}
		if (out) {
			set_busy(ep, 1);
			return (int)out;
		}
		if (got) {
			release_all(ep);
			continue;
		}
		/* Came back for more and found nothing: idle, also while it
		 * waits. */
		set_busy(ep, 0);
		if (timeout_ms == 0)
			return 0;
		/* The clock is read only when we have to wait. */
		if (timeout_ms > 0 && deadline < 0)
			deadline = now_ms() + timeout_ms;
		rc = wait_input(ep, deadline);
		if (rc == -SHMR_E_TIMEOUT)
			return 0;
		if (rc < 0)
			return rc;
	}
}

int shmr_call(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
	      uint64_t key, const void *req, size_t len, void *reply,
	      size_t cap, int timeout_ms)
{
	return shmr_call_prio(ep, to, SHMR_PRIO_NORMAL, type, key, req, len,
			      reply, cap, timeout_ms);
}

int shmr_call_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		   enum shmr_priority prio, uint32_t type, uint64_t key,
		   const void *req, size_t len, void *reply, size_t cap,
		   int timeout_ms)
{
	size_t ss = ep->d->slot_size;
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint64_t ref = ++ep->next_ref;
	int rc;

	/* Nothing undelivered: the last burst was handled, release it. */
	if (ep->backlog_len == 0 || ep->backlog_given)
		release_all(ep);
	rc = send_one(ep, SHMR_KIND_CALL, prio, to, type, key, ref, 0, req,
		      len);
	if (rc < 0)
		return rc;
	for (;;) {
		unsigned room = ep->backlog_cap - ep->backlog_len;
		unsigned char *dst = ep->backlog + (size_t)ep->backlog_len * ss;
		unsigned got = peek(ep, dst, room < RX_BURST_MAX ? room
								 : RX_BURST_MAX);

		int found = -1;
		size_t n = 0;
		int status = 0;
		uint32_t mlen = 0;

		/* Take our reply out; drop every other reply (to calls that
		 * gave up, or the later answers of a broadcast call); keep the
		 * rest of the burst queued for shmr_recv_burst(). */
		for (unsigned i = 0; i < got; i++) {
			struct shmr_msg *m = (struct shmr_msg *)(dst + i * ss);

			if (m->kind != SHMR_KIND_REPLY)
				continue;
			if (m->ref == ref && found < 0) {
				found = 1;
				n = m->len < cap ? m->len : cap;
				status = m->status;
				mlen = m->len;
				if (status == 0 && n)
					memcpy(reply, m->data, n);
			} else {
				ep->stale_replies++;
			}
			memmove(dst + i * ss, dst + (i + 1) * ss,
				(got - i - 1) * ss);
			got--;
			i--;
		}
		ep->backlog_len += got;
		if (found > 0) {
			if (ep->backlog_len == 0)
				release_all(ep);
			return status < 0 ? status : (int)mlen;
		}
		if (ep->backlog_len == ep->backlog_cap)
			return -ENOBUFS;
		if (got)
			continue;
		rc = wait_input(ep, deadline);
		if (rc < 0)
			return rc;
	}
}
