/*
 * libshmr: endpoints (open, claim with shmr_attach_env(), close) and the
 * registry.  The send path is in client_send.c, the receive path and
 * calls (and the at-least-once promise) in client_recv.c, the payload
 * arena's buffers in client_buf.c; attach in client_attach.c.
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
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ring.h>

#include <shmr/domain.h>
#include <shmr/proto.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "client_internal.h"

/* shmr_endpoint_close()'s bound (shmr.h), from the environment. */
#define CLOSE_WAIT_ENV "SHMR_CLOSE_WAIT_MS"
#define CLOSE_WAIT_MS_DEFAULT 2000
#define CLOSE_WAIT_MS_MAX 600000

/* ---- endpoints ------------------------------------------------------- */

static int endpoint_make(struct shmr_domain *d, struct shmr_pid pid,
			 int claimed, struct shmr_endpoint **out)
{
	struct shmr_endpoint *ep;
	size_t ss = d->slot_size;

	if (pid.slot >= d->max_endpoints)
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
	ep->hist = shmr_ep_hist_at(d->base, pid.slot);
	ep->dp_bell = shmr_lcore_bell(d->base, pid.slot % d->nlcores);
	ep->bell_needed = d->hdr->poll_mode != SHMR_POLL_BUSY;
	ep->work = shmr_work_at(d->base, pid.slot % d->nlcores);
	ep->work_nsum = shmr_work_nsum(
		shmr_work_nwords(d->hdr->max_endpoints, d->nlcores));
	ep->work_idx = pid.slot / d->nlcores;
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
	/* Every peeked slot is unreleased until shmr_client_release_all(),
	 * and there are never more of those than the backlog can hold. */
	ep->held = d->arena.nclasses
			   ? malloc(ep->backlog_cap * sizeof(*ep->held))
			   : NULL;
	if (!ep->rx || !ep->backlog || !ep->tx ||
	    (d->arena.nclasses && !ep->held)) {
		free(ep->rx);
		free(ep->backlog);
		free(ep->tx);
		free(ep->held);
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
 * The spec's version read here is at least the one our request's answer
 * followed: the control plane publishes a change before it answers.
 * Acquire on table_version pairs with the lcore's release store of it.
 */
void shmr_client_wait_adopted(struct shmr_domain *d)
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
	shmr_client_wait_adopted(d);
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
		 * it went back to sleep with our lane held back, and set our
		 * work bit again in case a peer cleared it (D2 and B2, as in
		 * shmr_client_push()). */
		atomic_thread_fence(memory_order_seq_cst);
		shmr_work_note_fenced(ep->work, ep->work_nsum, ep->work_idx);
		if (ep->bell_needed)
			shmr_bell_ring_fenced(ep->dp_bell);
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
	if (ep->backlog_pos == ep->backlog_len)
		shmr_client_release_all(ep);
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
	free(ep->held);
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

	/* Every bad name is ours to refuse (shmr_proto_name_ok()). */
	if (!shmr_proto_name_ok(name) || shmr_name_copy(key, name) < 0)
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
		shmr_client_wait_adopted(ep->d);
	return rc;
}

int shmr_unregister(struct shmr_endpoint *ep, const char *name)
{
	return name_request(ep, "UNREGISTER", name);
}
