/*
 * The routers' admin path, served by shmr-control from an endpoint of its
 * own (the "admin endpoint", a client slot allocated at start-up and
 * published as hdr.admin_pid).  The dataplane puts there, unchanged, every
 * high/max-priority send or call addressed to a router, and every send
 * that failed routing (SHMR_F_ROUTE_FAILED: a MessageRouteFailed).
 *
 * Waking without polling: a helper thread sleeps on the endpoint's bell;
 * when a lane has slots it writes the "kick" eventfd, which the epoll loop
 * watches, and waits on the "done" eventfd.  The main thread drains the
 * lanes (it is their only consumer and the only producer of the admin
 * endpoint's outbound lane) and writes "done"; the thread then re-arms its
 * bell and re-checks.  So the thread never reads a lane while the main
 * thread dequeues from it, and the loop stays single-threaded.
 *
 * A peer can write the endpoint's lanes (they lie in the shared domain):
 * the thread counts only slots in lanes that pass the consumer's check
 * (shmr_lane_valid_sc(), against our own copy of the geometry), so a lane
 * whose indices a peer moved does not wake the loop for slots it will
 * never take (that was a core at 100%).  An unsound lane is still noticed:
 * at most once a second (UNSOUND_RETRY_MS, the thread's sleep is bounded
 * by it too) the thread kicks the loop for it, and the loop resets it:
 * its geometry words written back from our copy (each a single store of
 * the value the dataplane checks for, so the producer never sees a third
 * value) and every index moved to the producer's tail, dropping what it
 * held (it cannot be told from garbage); counted in the domain's
 * lanes_reinit (STATUS) and logged, rate-limited.
 *
 * A slot in an arena buffer (SHMR_F_ARENA: a dead letter, or a high/max
 * priority send or call whose handler reads the payload in place through
 * ops->payload) holds its reference in the store as it did in the lane:
 * _next() gives it back when the loop asks for the next slot (or at
 * _end()), once the handler has returned (a dead letter's payload copied
 * into the dead-letter file); the store is empty between loop turns, so
 * no reclaim runs while a staged slot refers to a buffer.  Exactly once:
 * out_held is cleared as it is given back, and the CAS expects the
 * slot's generation.  A control plane killed in between leaves the buffer
 * SENT by its sender with no slot referring to it: the reclaim of that
 * sender frees it when it goes (never while a slot refers to it, and
 * never twice: its word changed).
 *
 * The loop takes the slots (shmr_ctl_admin_begin(), _next(), _end()) and
 * hands each to the router it is for (control.c, on_admin()): management
 * messages to manage.c, the others to the router's handlers (handlers.c:
 * a shared object's hooks, or the defaults when it has none).
 *
 * Max before high (Ergo's urgent queue before its system queue).  The
 * dataplane puts high and max priority into the same lanes, in arrival
 * order (one lane per lcore, and libshmr's one high-priority outbound lane
 * per endpoint before that), so the order has to be made here.  Before it
 * hands out a slot, _next() moves what the inbound lanes hold into a
 * staging store, as far as it has room: a fixed array of stage_cap slots
 * (every inbound lane's capacity, at most SHMR_CTL_ADMIN_STAGE_MAX),
 * allocated once at start-up, and two FIFOs of store indices, one for max
 * priority and one for the rest.  It hands out the oldest max slot while
 * there is one, then the oldest of the rest.  Since it stages again before
 * each slot, a max slot that arrives while a handler runs goes before the
 * high ones already waiting: a max slot overtakes every slot staged before
 * it (all of them, unless more than stage_cap were waiting, when it is
 * staged as soon as the store has room for it).
 *
 * "The rest" is everything that is not max priority, in the order each
 * lane gave it: high-priority sends and calls, MessageRouteFailed (a
 * failed routed send carries its normal priority), the routers' own
 * messages and Kill sent at normal or high priority, and the dataplane's
 * worker requests (SHMR_F_WANT_WORKER).  A management message or a Kill
 * sent at max priority is max like any other.  The priority byte comes
 * from a peer: anything but SHMR_PRIO_MAX is the rest (the dataplane
 * refuses a priority over max before it gets here).
 *
 * What the store holds is the loop's alone (the bell thread only reads
 * the lanes) and is empty whenever _next() has returned 0, so the bell
 * thread's re-check after "done" misses nothing.  A control plane that
 * dies loses what it had staged, as it always lost the slot it was
 * handling: the admin path was never lossless (a full lane drops and
 * counts, admin_dropped).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

#include "admin.h"
#include "arena.h"
#include "control_internal.h"

/* How often an unsound inbound lane may wake the loop to be reset, and
 * the longest the bell thread sleeps without a ring. */
#define UNSOUND_RETRY_MS 1000

enum { WORK_NONE, WORK_SLOTS, WORK_UNSOUND };

/* Context: the bell thread, while the loop does not touch the lanes (it
 * waits for "done" in between). */
static int admin_work(struct shmr_ctl_admin *a)
{
	int unsound = 0;

	for (uint32_t i = 0; i < a->d->geo.nlcores; i++) {
		struct rte_ring *l = shmr_ctl_dom_lane(a->d, a->pid.slot, i);

		if (!shmr_lane_valid_sc(l, a->d->geo.lane_size))
			unsound = 1;
		else if (shmr_lane_pending_sc(l))
			return WORK_SLOTS;
	}
	return unsound ? WORK_UNSOUND : WORK_NONE;
}

static void *admin_thread(void *arg)
{
	struct shmr_ctl_admin *a = arg;
	struct shmr_bell *bell = &shmr_ctl_dom_ep_peer(a->d, a->pid.slot)->bell;
	uint64_t one = 1, v, retry_at = 0;

	for (;;) {
		uint32_t seen = shmr_bell_prepare(bell);
		int w = admin_work(a);

		if (w == WORK_UNSOUND && shmr_ctl_now_ms() < retry_at)
			w = WORK_NONE;
		if (w == WORK_NONE) {
			/* Bounded: a peer can also zero the bell's sleepers,
			 * so that nobody rings it. */
			(void)shmr_bell_sleep(bell, seen, UNSOUND_RETRY_MS);
			continue;
		}
		shmr_bell_cancel(bell);
		if (w == WORK_UNSOUND)
			retry_at = shmr_ctl_now_ms() + UNSOUND_RETRY_MS;
		if (write(a->kick, &one, sizeof(one)) < 0 &&
		    errno != EINTR)
			return NULL;
		while (read(a->done, &v, sizeof(v)) < 0)
			if (errno != EINTR)
				return NULL;
	}
	return NULL;
}

void shmr_ctl_admin_init(struct shmr_ctl_admin *a, struct shmr_ctl_loop *loop,
			 struct shmr_ctl_domain *d, struct shmr_ctl_model *m)
{
	*a = (struct shmr_ctl_admin){ .loop = loop, .d = d, .m = m,
				      .kick = -1, .done = -1 };
}

int shmr_ctl_admin_open(struct shmr_ctl_admin *ad)
{
	struct shmr_ctl_alloc *a = &ad->m->alloc;
	struct shmr_ctl_slot *s;
	struct shmr_pid pid;

	/* The highest slot, taken once and never freed: clients and routes
	 * keep the slots they had without it (the allocator hands out the
	 * lowest free one). */
	if (a->nslots == 0 ||
	    a->slots[a->nslots - 1].state != SHMR_CTL_SLOT_FREE)
		return -SHMR_E_NO_ENDPOINT;
	s = &a->slots[a->nslots - 1];
	memset(s, 0, sizeof(*s));
	s->state = SHMR_CTL_SLOT_USED;
	s->gen = 1;
	s->kind = SHMR_EPK_CLIENT;
	a->nused++;
	pid = (struct shmr_pid){ a->nslots - 1, 1 };
	ad->m->alloc.slots[pid.slot].os_pid = getpid();
	snprintf(ad->m->alloc.slots[pid.slot].name, SHMR_NAME_MAX,
		 "shmr:admin");
	ad->m->dirty = 1;
	ad->pid = pid;
	/* Release: the endpoint's lanes (initialised with the layout) before
	 * its PID; pairs with the lcores' acquire load. */
	atomic_store_explicit(&shmr_hdr(ad->d->base)->admin_pid,
			      (uint64_t)pid.slot | (uint64_t)pid.gen << 32,
			      memory_order_release);
	return 0;
}

int shmr_ctl_admin_adopt(struct shmr_ctl_admin *ad)
{
	struct shmr_domain_hdr *h = shmr_hdr(ad->d->base);
	/* Acquire: pairs with the release store in shmr_ctl_admin_open(). */
	uint64_t v = atomic_load_explicit(&h->admin_pid, memory_order_acquire);
	struct shmr_pid pid = { (uint32_t)v, (uint32_t)(v >> 32) };
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(&ad->m->alloc, pid);

	if (!s || s->kind != SHMR_EPK_CLIENT)
		return -SHMR_E_NO_ENDPOINT;
	/* The predecessor is dead (we hold the domain's lock): its side of
	 * every lane of the endpoint is ours to repair. */
	(void)shmr_ctl_slot_take_over(ad->d, pid.slot);
	/* A replay's buffer the predecessor had not sent yet (arena.h). */
	(void)shmr_ctl_arena_reclaim(ad->d, pid.slot);
	s->os_pid = getpid();
	s->owner = 0;
	snprintf(s->name, SHMR_NAME_MAX, "shmr:admin");
	ad->m->dirty = 1;
	ad->pid = pid;
	return 0;
}

int shmr_ctl_admin_stage_alloc(struct shmr_ctl_admin *a)
{
	uint32_t cap = a->d->geo.nlcores * a->d->geo.lane_size;

	/* The only allocation of the admin path. */
	a->stage_cap = cap < SHMR_CTL_ADMIN_STAGE_MAX ? cap
						      : SHMR_CTL_ADMIN_STAGE_MAX;
	a->stage = aligned_alloc(8, (size_t)a->stage_cap *
					    a->d->geo.slot_size);
	a->free_idx = calloc(a->stage_cap, sizeof(uint32_t));
	a->fifo[SHMR_CTL_ADMIN_Q_MAX] = calloc(a->stage_cap, sizeof(uint32_t));
	a->fifo[SHMR_CTL_ADMIN_Q_REST] = calloc(a->stage_cap, sizeof(uint32_t));
	a->held = aligned_alloc(8, (size_t)SHMR_CTL_ADMIN_HELD_MAX *
					   a->d->geo.slot_size);
	if (!a->stage || !a->free_idx || !a->fifo[SHMR_CTL_ADMIN_Q_MAX] ||
	    !a->fifo[SHMR_CTL_ADMIN_Q_REST] || !a->held)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->stage_cap; i++)
		a->free_idx[i] = a->stage_cap - 1 - i;
	a->nfree = a->stage_cap;
	return 0;
}

void shmr_ctl_admin_stage_free(struct shmr_ctl_admin *a)
{
	free(a->stage);
	free(a->free_idx);
	free(a->fifo[SHMR_CTL_ADMIN_Q_MAX]);
	free(a->fifo[SHMR_CTL_ADMIN_Q_REST]);
	free(a->held);
	a->held = NULL;
	a->held_n = 0;
	a->stage = NULL;
	a->free_idx = a->fifo[0] = a->fifo[1] = NULL;
	a->stage_cap = a->nfree = 0;
}

int shmr_ctl_admin_start(struct shmr_ctl_admin *a)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_attr_t attr;
	pthread_t thr;
	int rc;

	if ((rc = shmr_ctl_admin_stage_alloc(a)) < 0)
		return rc;
	a->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	a->done = eventfd(0, EFD_CLOEXEC);
	if (a->kick < 0 || a->done < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_ADMIN << 32;
	if (epoll_ctl(a->loop->epfd, EPOLL_CTL_ADD, a->kick, &ev) < 0)
		return -errno;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thr, &attr, admin_thread, a);
	pthread_attr_destroy(&attr);
	return -rc;
}

void shmr_ctl_admin_log(struct shmr_ctl_admin *a, unsigned kind,
			const char *fmt, ...)
{
	uint64_t now = shmr_ctl_now_ms();
	char line[300];
	va_list ap;

	if (now < a->log_next[kind]) {
		a->log_suppressed[kind]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (a->log_suppressed[kind])
		shmr_ctl_log("%s (and %" PRIu64 " more like it)", line,
			     a->log_suppressed[kind]);
	else
		shmr_ctl_log("%s", line);
	a->log_suppressed[kind] = 0;
	a->log_next[kind] = now + 1000;
}

int shmr_ctl_admin_put(struct shmr_ctl_admin *a, const struct shmr_msg *m)
{
	uint32_t nl = a->d->geo.nlcores;
	struct rte_ring *out =
		shmr_ctl_dom_lane(a->d, a->pid.slot, SHMR_LANE_OUT(nl));

	/* Our own lane, in memory a peer could write: checked first. */
	if (!shmr_lane_valid_sp(out, a->d->geo.lane_size) ||
	    rte_ring_enqueue_burst_elem(out, m, a->d->geo.slot_size, 1,
					NULL) != 1)
		return -EAGAIN;
	/* D2 inside: pairs with the lcore's D1 (its work bits). */
	shmr_work_note(a->d->base, &a->d->geo, a->pid.slot);
	/* B2 inside: pairs with the lcore's B1. */
	shmr_bell_ring(shmr_ctl_dom_lcore_bell(a->d, a->pid.slot % nl));
	return 0;
}

/* The reply to @p req in @p m (room for a slot). */
static void reply_build(const struct shmr_ctl_admin *a, struct shmr_msg *m,
			const struct shmr_msg *req, int32_t status,
			const void *data, size_t n)
{
	memset(m, 0, SHMR_HDR_SIZE);
	m->kind = SHMR_KIND_REPLY;
	m->from = a->pid;
	m->to = req->from;
	m->ref = req->ref;
	m->type = req->type;
	m->status = status;
	m->len = (uint32_t)n;
	if (n)
		memcpy(m->data, data, n);
}

static int reply_put(struct shmr_ctl_admin *a, const struct shmr_msg *m)
{
	if (shmr_ctl_admin_put(a, m) < 0) {
		shmr_ctl_admin_log(a, SHMR_CTL_ALOG_REPLY,
				   "admin: reply to %u:%u lost: lane full",
				   m->to.slot, m->to.gen);
		return -EAGAIN;
	}
	return 0;
}

int shmr_ctl_admin_reply(struct shmr_ctl_admin *a, const struct shmr_msg *req,
			 int32_t status, const void *data, size_t n)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *m = (struct shmr_msg *)buf;

	if (n > a->d->geo.slot_size - SHMR_HDR_SIZE)
		return -SHMR_E_TOO_BIG;
	reply_build(a, m, req, status, data, n);
	return reply_put(a, m);
}

static struct shmr_msg *held_slot(struct shmr_ctl_admin *a, uint32_t i)
{
	return (struct shmr_msg *)(void *)(a->held + (size_t)i *
							     a->d->geo.slot_size);
}

/* Send the oldest held reply; the lcores have applied spec version
 * @p seen.  One sent before they applied its own is counted and logged,
 * unless @p stopping (the loop ends: everything goes). */
static void held_pop(struct shmr_ctl_admin *a, uint64_t seen, int stopping)
{
	uint32_t i = a->held_head;
	const struct shmr_msg *m = held_slot(a, i);

	if (a->held_version[i] > seen && !stopping) {
		a->held_late++;
		shmr_ctl_admin_log(a, SHMR_CTL_ALOG_REPLY,
				   "admin: reply to %u:%u sent before the lcores "
				   "applied spec version %" PRIu64
				   " (they have %" PRIu64 ")",
				   m->to.slot, m->to.gen, a->held_version[i],
				   seen);
	}
	(void)reply_put(a, m);
	a->held_head = (i + 1) % SHMR_CTL_ADMIN_HELD_MAX;
	a->held_n--;
}

int shmr_ctl_admin_reply_applied(struct shmr_ctl_admin *a,
				 const struct shmr_msg *req, int32_t status,
				 const void *data, size_t n, uint64_t version)
{
	uint64_t seen;
	uint32_t at;

	if (n > a->d->geo.slot_size - SHMR_HDR_SIZE)
		return -SHMR_E_TOO_BIG;
	/* Behind the ones held before it, so each caller's answers keep
	 * their order; without the store (a unit test's admin), now. */
	seen = shmr_ctl_seen_version(a->d);
	if (!a->held || (a->held_n == 0 && seen >= version))
		return shmr_ctl_admin_reply(a, req, status, data, n);
	/* Full: the oldest goes now, to make room. */
	if (a->held_n == SHMR_CTL_ADMIN_HELD_MAX)
		held_pop(a, seen, 0);
	at = (a->held_head + a->held_n) % SHMR_CTL_ADMIN_HELD_MAX;
	reply_build(a, held_slot(a, at), req, status, data, n);
	a->held_version[at] = version;
	a->held_due[at] = shmr_ctl_now_ms() + SHMR_CTL_ADMIN_HELD_MS;
	a->held_n++;
	return 0;
}

unsigned shmr_ctl_admin_flush(struct shmr_ctl_admin *a, uint64_t now,
			      int all)
{
	uint64_t seen;

	if (a->held_n == 0)
		return 0;
	seen = shmr_ctl_seen_version(a->d);
	while (a->held_n && (all || a->held_version[a->held_head] <= seen ||
			     a->held_due[a->held_head] <= now))
		held_pop(a, seen, all);
	return a->held_n;
}

void shmr_ctl_admin_reply_text(struct shmr_ctl_admin *a,
			       const struct shmr_msg *req, int32_t status,
			       const char *text)
{
	size_t max = a->d->geo.slot_size - SHMR_HDR_SIZE;
	size_t n = text ? strlen(text) : 0;

	(void)shmr_ctl_admin_reply(a, req, status, text, n > max ? max : n);
}

int shmr_ctl_admin_begin(struct shmr_ctl_admin *a)
{
	uint64_t v;

	if (read(a->kick, &v, sizeof(v)) < 0)
		return -1;
	return 0;
}

/*
 * An inbound lane that fails the consumer's check, made usable again (see
 * the top of the file).  The producer (an lcore) only ever sees the right
 * geometry or the one a peer wrote, and refuses a lane whose indices are
 * off (shmr_lane_valid_sp()); our side is at rest (the loop dequeues whole
 * slots).
 * Context: the loop, the lane's only consumer.
 */
static void lane_reset(struct shmr_ctl_admin *a, struct rte_ring *r,
		       uint32_t lane)
{
	const struct shmr_ctl_domain *d = a->d;
	uint32_t ls = d->geo.lane_size, pt;

	r->size = ls;
	r->mask = ls - 1;
	r->capacity = ls - 1;
	r->prod.sync_type = RTE_RING_SYNC_ST;
	r->cons.sync_type = RTE_RING_SYNC_ST;
	/* Every index to the producer's tail: ours, and the producer's head
	 * too (a peer may have moved its tail alone, and the lcore refuses a
	 * lane whose head and tail differ at rest, so it is not enqueueing;
	 * one enqueue that passed its check just before the peer wrote ends
	 * by storing its own tail, and the lane is reset again at the next
	 * retry).  Acquire: pairs with the producer's release store of
	 * prod.tail; nothing before it is taken, only skipped. */
	pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	r->cons.head = pt;
	/* Release: pairs with the producer's acquire load of cons.tail (its
	 * free count starts from here). */
	__atomic_store_n(&r->cons.tail, pt, __ATOMIC_RELEASE);
	r->prod.head = pt;
	a->d->lanes_reinit++;
	shmr_ctl_admin_log(a, SHMR_CTL_ALOG_LANE,
			   "admin endpoint: inbound lane %u was corrupted by "
			   "a peer: reset (what it held is lost)",
			   lane);
}

static struct shmr_msg *stage_slot(struct shmr_ctl_admin *a, uint32_t i)
{
	return (struct shmr_msg *)(void *)(a->stage +
					   (size_t)i * a->d->geo.slot_size);
}

/* What the inbound lanes hold, into the store, lane after lane, while it
 * has room (see the top of the file).
 * Context: the loop, the lanes' only consumer. */
static void stage_fill(struct shmr_ctl_admin *a)
{
	for (uint32_t l = 0; l < a->d->geo.nlcores && a->nfree; l++) {
		struct rte_ring *lane = shmr_ctl_dom_lane(a->d, a->pid.slot, l);

		while (a->nfree) {
			uint32_t i = a->free_idx[a->nfree - 1], q, at;
			struct shmr_msg *m = stage_slot(a, i);

			/* Our own lane, in memory a peer could write: checked
			 * before each dequeue, and reset when unsound. */
			if (!shmr_lane_valid_sc(lane, a->d->geo.lane_size))
				lane_reset(a, lane, l);
			if (rte_ring_dequeue_burst_elem(lane, m,
							a->d->geo.slot_size,
							1, NULL) != 1)
				break;
			a->nfree--;
			q = m->priority == SHMR_PRIO_MAX ? SHMR_CTL_ADMIN_Q_MAX
							 : SHMR_CTL_ADMIN_Q_REST;
			at = (a->fifo_head[q] + a->fifo_n[q]) % a->stage_cap;
			a->fifo[q][at] = i;
			a->fifo_n[q]++;
		}
	}
}

/* The slot handed out last is done: its arena buffer's reference, if it
 * has one, goes back (as a receiver's next burst gives back its own). */
static void give_back(struct shmr_ctl_admin *a)
{
	if (a->out_held)
		shmr_ctl_arena_give_back(a->d,
					 (const struct shmr_msg *)a->out_ref);
	a->out_held = 0;
}

int shmr_ctl_admin_next(struct shmr_ctl_admin *a, struct shmr_msg *m)
{
	give_back(a);
	stage_fill(a);
	for (uint32_t q = 0; q < 2; q++) {
		uint32_t i;

		if (a->fifo_n[q] == 0)
			continue;
		i = a->fifo[q][a->fifo_head[q]];
		a->fifo_head[q] = (a->fifo_head[q] + 1) % a->stage_cap;
		a->fifo_n[q]--;
		memcpy(m, stage_slot(a, i), a->d->geo.slot_size);
		a->free_idx[a->nfree++] = i;
		if (m->flags & SHMR_F_ARENA) {
			memcpy(a->out_ref, m, sizeof(a->out_ref));
			a->out_held = 1;
		}
		return 1;
	}
	return 0;
}

void shmr_ctl_admin_end(struct shmr_ctl_admin *a)
{
	uint64_t one = 1;

	give_back(a);
	if (write(a->done, &one, sizeof(one)) < 0)
		shmr_ctl_err("admin: eventfd: %s", strerror(errno));
}
