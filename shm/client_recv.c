/*
 * libshmr: receive and call.
 *
 * Receiving and the at-least-once promise.  An endpoint's inbound lanes are
 * read with DPDK's peek API: dequeue start copies slots out and moves
 * cons.head; only dequeue finish moves cons.tail and lets the producer reuse
 * them.  We finish a lane's slots only when the application asks for more
 * (the next shmr_recv_burst(), or a shmr_call() made with nothing in hand:
 * no message of the last receive, nothing undelivered; release_handled()),
 * so if the process dies while handling a burst, the control plane finds
 * [cons.tail, cons.head) unreleased and hands it to the replacement flagged
 * SHMR_F_REDELIVERED (see shmr_lane_repair_consumer()).
 *
 * A call waits for its reply on the same lanes.  Whatever else arrives
 * meanwhile is copied to the endpoint's backlog, but its slots stay
 * unreleased in the ring until the application has been given the backlog
 * and asks for more: a crash during a call loses nothing either, nor one
 * after a call made while handling a burst (the burst stays unreleased,
 * its messages where they were: a call writes only after the backlog's
 * end, never into rx).  Since the backlog holds at most what the lanes
 * hold unreleased, it can never overflow: a lane full of unreleased slots
 * stops its producer instead, and ends the call with -ENOBUFS
 * (inbox_full(): the reply may need that lane).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include <shmr/arena_ops.h>
#include <shmr/domain.h>
#include <shmr/hist.h>
#include <shmr/lane_copy.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "client_internal.h"

void shmr_client_release_all(struct shmr_endpoint *ep)
{
	for (uint32_t i = 0; i < ep->d->nlcores; i++) {
		if (ep->unreleased[i]) {
			rte_ring_dequeue_elem_finish(ep->in[i],
						     ep->unreleased[i]);
			ep->unreleased[i] = 0;
		}
	}
	/* After the slots: a death between the two leaves buffers no slot
	 * refers to (reclaimable), never a slot whose buffer is gone. */
	for (unsigned i = 0; i < ep->nheld; i++)
		(void)shmr_arena_free_sent(&ep->d->arena, &ep->held[i].r,
					   ep->held[i].from);
	ep->nheld = 0;
	ep->backlog_len = ep->backlog_pos = 0;
	ep->handling = 0;
}

/* ---- receive --------------------------------------------------------- */

/*
 * Nothing new to read?  A lane whose geometry is not ours, or that claims
 * more than a capacity, counts as empty: its words were written by a peer
 * (the dataplane quarantines the endpoint when it next produces there),
 * and a bounded peek would refuse it anyway, so waiting for it to fill
 * would spin.  Called when a receive found nothing, or right after
 * shmr_client_release_all() (every unreleased count 0): a zero-timeout
 * receive that would find nothing returns without a peek.
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
 * A received burst's sojourns.  The dataplane keeps each sender's slots
 * in order, so a sender's burst (one stamp) mostly arrives as a run of
 * consecutive slots: per message we do only what tells a run from the
 * next (load its stamp's word, compare it with the last one's, no store),
 * inside the loop that checks the slots anyway (keep_sound()), on the
 * loop's own locals (the run's stamp and where it began, written back to
 * the accumulator once per lane; the compiler keeps some of them on the
 * stack, the loop having calls in it).  Per run (sojourn_run()):
 * the clock (read once per receive), the sojourn and its bucket, added up
 * in the accumulator; a run in the same bucket as the one before (the
 * usual case: a receive's runs are a few hundred nanoseconds apart) only
 * adds to its count.  Per receive (sojourn_flush()), the stores: each
 * bucket's weighted add, then the totals (shmr_hist_record_burst()), so
 * the counts stay exact.  A stamp is a peer's word: one from the future
 * (another core's clock a little ahead) counts as 0, any other lands in
 * some bucket; a stamp of 0, or none (a sender with stamps off, a payload
 * that left no room, a message the dataplane made), counts as unstamped.
 * It cannot make us read outside the slot: the slot is our own copy, its
 * length checked first.
 */
struct sojourn_acc {
	uint64_t now;  /* the receive's clock; 0: not read yet */
	uint64_t last; /* the current run's stamp */
	uint64_t run;  /* its length before the lane being checked */
	uint64_t unstamped;
	/* The stamped runs closed so far: their messages, sojourns summed,
	 * the longest; and the bucket of the last one with the messages
	 * it still owes that bucket. */
	uint64_t n, sum_ns, max_ns, bucket_n;
	unsigned bucket;
};

/* Close a run of @p n messages that carried stamp @p t (0: none): a few
 * times a receive, on the accumulator's words. */
static inline __attribute__((always_inline)) void
sojourn_run(struct shmr_endpoint *ep, struct sojourn_acc *a, uint64_t t,
	    uint64_t n)
{
	uint64_t ns;
	unsigned b;

	if (t == 0) {
		a->unstamped += n;
		return;
	}
	if (n == 0)
		return;
	if (a->now == 0)
		a->now = rte_rdtsc();
	ns = a->now > t ? shmr_tsc_to_ns(a->now - t, ep->d->tsc_mult) : 0;
	b = shmr_hist_index(ns);
	if (b != a->bucket) {
		if (a->bucket_n)
			shmr_hist_add_n(ep->hist, a->bucket, a->bucket_n);
		a->bucket = b;
		a->bucket_n = 0;
	}
	a->bucket_n += n;
	a->n += n;
	a->sum_ns += n * ns;
	if (ns > a->max_ns)
		a->max_ns = ns;
}

/* The receive's last run, and what it recorded: into the histogram. */
static inline __attribute__((always_inline)) void
sojourn_flush(struct shmr_endpoint *ep, struct sojourn_acc *a)
{
	sojourn_run(ep, a, a->last, a->run);
	if (a->bucket_n)
		shmr_hist_add_n(ep->hist, a->bucket, a->bucket_n);
	if (a->n || a->unstamped)
		shmr_hist_record_burst(ep->hist, a->n, a->sum_ns, a->max_ns,
				       a->unstamped);
}

/* The stamp slot @p s carries (@p flags and @p len its own, already
 * read), 0 for none: a send's is its ref, a call's or a reply's the 8
 * bytes after its payload when they fit in @p room (layout.h). */
static inline __attribute__((always_inline)) uint64_t
slot_stamp(const struct shmr_msg *s, uint8_t kind, uint8_t flags,
	   uint32_t len, size_t room)
{
	uint64_t t = 0;

	if (__builtin_expect(!(flags & SHMR_F_STAMPED), 0))
		return 0;
	if (__builtin_expect(kind == SHMR_KIND_SEND, 1))
		return s->ref;
	if (len <= room)
		memcpy(&t, s->data + len, sizeof(t));
	return t;
}

/*
 * Are the @p m slots at @p dst all plain sends: sound (as keep_sound()
 * checks), no arena buffer, no PoisonPill?  Then keep_sound() would keep
 * them all, in place, hold nothing and find nothing special: the usual
 * lane, checked here without a branch per slot, so that keep_sound() can
 * skip its checks for it (@p plain).
 */
static inline __attribute__((always_inline)) int
all_plain(const unsigned char *dst, unsigned m, size_t ss)
{
	uint32_t odd = 0;

	for (unsigned j = 0; j < m; j++) {
		const struct shmr_msg *s =
			(const struct shmr_msg *)(dst + j * ss);

		odd |= (uint32_t)(s->kind ^ SHMR_KIND_SEND) |
		       (uint32_t)(s->flags & SHMR_F_ARENA) |
		       (uint32_t)(s->len > ss - SHMR_HDR_SIZE) |
		       (uint32_t)(s->type == SHMR_TYPE_POISON_PILL);
	}
	return odd == 0;
}

/*
 * Keep the sound ones of @p m slots just copied to @p dst, in order; a
 * slot of no kind we know, or longer than a slot can hold, is dropped and
 * counted (the first one said once on stderr): only the dataplane should
 * write our inbound lanes, and it sends nothing of the sort, so a peer
 * that can write the lanes part did.  It stays reserved in the ring with
 * the others (released with them).  With @p stamps (the domain's senders
 * stamp), the kept ones' sojourns go into @p a.  A kept reply or
 * PoisonPill sets *@p special (shmr_recv_burst() looks at each message
 * only then).  With @p plain (all_plain() said so), every slot is kept
 * as it is and only the sojourns are looked at.  Returns how many were
 * kept.
 */
static inline __attribute__((always_inline)) unsigned
keep_sound(struct shmr_endpoint *ep, unsigned char *dst, unsigned m,
	   uint32_t lane, int stamps, int plain, struct sojourn_acc *a,
	   unsigned *special)
{
	size_t ss = ep->d->slot_size, room = stamp_room(ep->d->slot_size);
	/* The current run: its stamp, and where its messages in this lane
	 * began (a run's length is counted when it ends, so the loop stores
	 * nothing per message). */
	uint64_t last = a->last, run = a->run;
	unsigned kept = 0, from = 0;

	for (unsigned j = 0; j < m; j++) {
		const struct shmr_msg *s =
			(const struct shmr_msg *)(dst + j * ss);
		uint32_t len = s->len;
		uint8_t flags = s->flags;
		uint8_t kind = plain ? (uint8_t)SHMR_KIND_SEND : s->kind;

		if (plain ||
		    ((kind == SHMR_KIND_SEND || kind == SHMR_KIND_CALL ||
		      kind == SHMR_KIND_REPLY) &&
		     len <= ss - SHMR_HDR_SIZE)) {
			if (stamps) {
				uint64_t t = slot_stamp(s, kind, flags, len,
							room);

				if (__builtin_expect(t != last, 0)) {
					sojourn_run(ep, a, last,
						    run + kept - from);
					last = t;
					run = 0;
					from = kept;
				}
			}
			if (plain) {
				kept++;
				continue;
			}
			if ((flags & SHMR_F_ARENA) &&
			    len == sizeof(struct shmr_buf_ref) &&
			    ep->nheld < ep->backlog_cap && ep->held) {
				memcpy(&ep->held[ep->nheld].r, s->data,
				       sizeof(struct shmr_buf_ref));
				ep->held[ep->nheld++].from = s->from.slot;
			}
			*special |= kind == SHMR_KIND_REPLY ||
				    s->type == SHMR_TYPE_POISON_PILL;
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
				ep->pid.slot, kind, len, lane);
	}
	if (stamps) {
		a->last = last;
		a->run = run + kept - from;
	}
	return kept;
}

/* Peek up to @n new slots from the lanes into @dst (round robin).  Every
 * copy is bounded by our own geometry (lane_copy.h): the lanes are memory
 * any peer can write.  *@p special: keep_sound()'s. */
static unsigned peek(struct shmr_endpoint *ep, unsigned char *dst, unsigned n,
		     unsigned *special)
{
	size_t ss = ep->d->slot_size;
	uint32_t nl = ep->d->nlcores;
	unsigned got = 0;
	/* A flag, not a pointer that may be NULL: so the compiler keeps the
	 * accumulator's words as plain locals (its address never escapes). */
	int stamps = ep->d->tsc_mult != 0;
	struct sojourn_acc acc = { 0 };

	for (uint32_t k = 0; k < nl && got < n; k++) {
		uint32_t i = (ep->rr + k) % nl;
		unsigned char *at = dst + got * ss;
		unsigned m = shmr_lane_peek_bounded(ep->in[i], ep->d->lane_size,
						    at, (uint32_t)ss, n - got);

		ep->unreleased[i] += m;
		/* The lane's next slots come while we check these. */
		if (m)
			shmr_lane_prefetch_next(ep->in[i], ep->d->lane_size,
						(uint32_t)ss, n);
		/* A copy of the loop for each case, so that none tests a
		 * flag per message; plain without stamps has nothing to do. */
		if (__builtin_expect(all_plain(at, m, ss), 1))
			got += stamps ? keep_sound(ep, at, m, i, 1, 1, &acc,
						   special)
				      : m;
		else if (stamps)
			got += keep_sound(ep, at, m, i, 1, 0, &acc, special);
		else
			got += keep_sound(ep, at, m, i, 0, 0, &acc, special);
	}
	ep->rr++;
	if (stamps)
		sojourn_flush(ep, &acc);
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
	if (ep->backlog_pos < ep->backlog_len) {
		/* Messages that arrived during calls come first, in order;
		 * all the backlog's slots, and those of the bursts given
		 * before, stay unreleased until the app has had every one. */
		out = 0;
		while (out < n && ep->backlog_pos < ep->backlog_len) {
			const struct shmr_msg *m =
				(const struct shmr_msg *)(ep->backlog +
							  ep->backlog_pos++ *
								  ss);

			if (!poison_pill(ep, m))
				msgs[out++] = m;
		}
		if (out) {
			ep->handling = 1;
			set_busy(ep, 1);
			return (int)out;
		}
	}
	/* The previous burst (or the whole backlog) has been handled. */
	shmr_client_release_all(ep);
	/* The empty poll of a worker waiting for work (spinning before it
	 * yields its core, which the process it waits for may need): the
	 * lanes' tails, not a peek. */
	if (timeout_ms == 0 && lanes_empty(ep)) {
		set_busy(ep, 0);
		return 0;
	}
	for (;;) {
		unsigned special = 0;

		got = peek(ep, ep->rx, n, &special);
		out = 0;
		if (!special) {
			/* Plain sends and calls: every one is the app's. */
			for (; out < got; out++)
				msgs[out] = (const struct shmr_msg *)(ep->rx +
								      out * ss);
		}
		for (unsigned i = 0; special && i < got; i++) {
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
			ep->handling = 1;
			set_busy(ep, 1);
			return (int)out;
		}
		if (got) {
			shmr_client_release_all(ep);
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

/* Copy a reply's payload (inline or in the arena) into @p reply. */
static size_t reply_copy(struct shmr_endpoint *ep, const struct shmr_msg *m,
			 void *reply, size_t cap, uint32_t *mlen)
{
	size_t len;
	const void *p = shmr_msg_payload(ep, m, &len);
	size_t n = len < cap ? len : cap;

	*mlen = (uint32_t)len;
	if (m->status == 0 && n)
		memcpy(reply, p, n);
	if (m->flags & SHMR_F_ARENA) {
		struct shmr_buf_ref r;

		memcpy(&r, m->data, sizeof(r));
		(void)shmr_arena_free_sent(&ep->d->arena, &r, m->from.slot);
	}
	return n;
}

/*
 * Can a call's reply still reach us?  It comes through the inbound lane
 * of the routing lcore that polls whoever answers, and the caller cannot
 * tell which: a router picks a routee (on any lcore), its admin path is
 * answered by the control plane, an error by the lcore that polls the
 * caller, and a worker may hand the call on for another endpoint to
 * answer.  So any lane may be the reply's.  A lane whose every slot we
 * hold unreleased takes nothing more until we release, which a call does
 * not do (the essay above); and its lcore stops the burst of the sender
 * whose slot does not fit (forward.c), so that sender's other receivers
 * wait on us too.  Hence the rule: one full lane ends the call with
 * -ENOBUFS, rather than a wait to the deadline (forever, with none) that
 * holds the others up as long.  The backlog never fills first: it holds
 * only slots counted here, and is emptied only when they are released.
 */
static int inbox_full(const struct shmr_endpoint *ep)
{
	/* A lane holds lane_size - 1 slots (domain.c: no RING_F_EXACT_SZ). */
	uint32_t cap = ep->d->lane_size - 1;

	for (uint32_t i = 0; i < ep->d->nlcores; i++)
		if (ep->unreleased[i] >= cap)
			return 1;
	return 0;
}

/*
 * Release what a call may: everything peeked, but only when the app holds
 * no message of the last receive and none waits in the backlog, so that
 * what is left is the replies of calls before.  A call made while a burst
 * is being handled (between two receives) releases nothing: the burst
 * stays in the ring for a replacement should this process die before its
 * next receive, and its messages stay where they are (rx, or the
 * backlog's given part, which the call only appends after).  The cost:
 * what arrives until that receive, the call's own reply included, stays
 * unreleased behind the burst, so a handler's calls fill the lanes, and a
 * full one ends the next with -ENOBUFS (inbox_full()).
 */
static void release_handled(struct shmr_endpoint *ep)
{
	if (!ep->handling && ep->backlog_len == 0)
		shmr_client_release_all(ep);
}

int shmr_client_call_begin(struct shmr_endpoint *ep)
{
	release_handled(ep);
	/* A reply that cannot get in would also hold up the callee's lane:
	 * better not to send the request at all. */
	return inbox_full(ep) ? -ENOBUFS : 0;
}

/* A call's wait for the reply to @p ref (sent). */
int shmr_client_call_wait(struct shmr_endpoint *ep, uint64_t ref, void *reply,
			  size_t cap, int64_t deadline)
{
	size_t ss = ep->d->slot_size;
	int rc;

	for (;;) {
		unsigned room = ep->backlog_cap - ep->backlog_len;
		unsigned char *dst = ep->backlog + (size_t)ep->backlog_len * ss;
		unsigned special = 0; /* replies are looked for anyway */
		unsigned got = peek(ep, dst,
				    room < RX_BURST_MAX ? room : RX_BURST_MAX,
				    &special);

		int found = -1;
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
				status = m->status;
				(void)reply_copy(ep, m, reply, cap, &mlen);
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
			release_handled(ep);
			return status < 0 ? status : (int)mlen;
		}
		if (inbox_full(ep))
			return -ENOBUFS;
		if (got)
			continue;
		rc = wait_input(ep, deadline);
		if (rc < 0)
			return rc;
	}
}

int shmr_call_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		   enum shmr_priority prio, uint32_t type, uint64_t key,
		   const void *req, size_t len, void *reply, size_t cap,
		   int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint64_t ref;
	int rc;

	/* As shmr_send_prio(): the dataplane would drop the slot as bad, and
	 * the call would wait for a reply that never comes. */
	if (prio > SHMR_PRIO_MAX)
		return -EINVAL;
	rc = shmr_client_call_begin(ep);
	if (rc < 0)
		return rc;
	ref = ++ep->next_ref;
	rc = shmr_client_send_one(ep, SHMR_KIND_CALL, prio, to, type, key, ref,
				  0, req, len);
	if (rc < 0)
		return rc;
	return shmr_client_call_wait(ep, ref, reply, cap, deadline);
}
