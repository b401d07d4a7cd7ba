/*
 * libshmr: the payload arena's buffers (<shmr/arena.h> holds the owner-word
 * protocol): allocate and release one, send, call or reply with one, read
 * a received slot's payload wherever it lies, and keep a received buffer.
 * Every reference a peer wrote is checked against our own copy of the
 * classes (d->arena, read at attach) before it is used.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <shmr/arena_ops.h>
#include <shmr/shmr.h>

#include "client_internal.h"

/* ---- the payload arena (arena.h) -------------------------------------- */

/* @p buf as a reference to a buffer @p ep holds (WRITING); -EINVAL if not. */
static int buf_held(struct shmr_endpoint *ep, const struct shmr_buf *buf,
		    struct shmr_buf_ref *r)
{
	const struct shmr_arena_view *v = &ep->d->arena;

	r->cls = (uint32_t)(buf->ref >> 56);
	r->index = (uint32_t)(buf->ref >> 32) & 0xffffffu;
	r->gen = (uint32_t)buf->ref;
	r->len = 0;
	if (!buf->data || r->cls >= v->nclasses ||
	    r->index >= v->cls[r->cls].count ||
	    atomic_load_explicit(shmr_arena_word(v, r->cls, r->index),
				 memory_order_relaxed) !=
		    shmr_buf_word(SHMR_BUF_WRITING, ep->pid.slot, r->gen))
		return -EINVAL;
	return 0;
}

static void buf_fill(struct shmr_endpoint *ep, const struct shmr_buf_ref *r,
		     struct shmr_buf *buf)
{
	buf->data = shmr_arena_data(&ep->d->arena, r->cls, r->index);
	buf->size = ep->d->arena.cls[r->cls].size;
	buf->ref = shmr_buf_ref_word(r);
}

int shmr_buf_alloc(struct shmr_endpoint *ep, size_t size, struct shmr_buf *buf)
{
	const struct shmr_arena_view *v = &ep->d->arena;
	int c = shmr_arena_class_for(v, size);
	struct shmr_buf_ref r;

	*buf = (struct shmr_buf){ NULL, 0, 0 };
	if (c < 0)
		return -SHMR_E_TOO_BIG;
	if (shmr_arena_take(v, (uint32_t)c, ep->pid.slot,
			    &ep->buf_cursor[c], &r) < 0) {
		/* Relaxed: a figure for shmrctl status, on the failure path
		 * only. */
		atomic_fetch_add_explicit(
			&shmr_arena_stats_of(v, (uint32_t)c)->alloc_failures, 1,
			memory_order_relaxed);
		return -SHMR_E_NO_BUFFER;
	}
	buf_fill(ep, &r, buf);
	return 0;
}

int shmr_buf_release(struct shmr_endpoint *ep, struct shmr_buf *buf)
{
	struct shmr_buf_ref r;

	if (buf_held(ep, buf, &r) < 0 ||
	    !shmr_arena_move(&ep->d->arena, &r,
			     shmr_buf_word(SHMR_BUF_WRITING, ep->pid.slot, r.gen),
			     shmr_buf_word_free(r.gen)))
		return -EINVAL;
	*buf = (struct shmr_buf){ NULL, 0, 0 };
	return 0;
}

/* Send @p buf's first @p len bytes as a slot of @p kind at @p prio
 * (@p flags besides SHMR_F_ARENA): SENT before the enqueue, back to
 * WRITING if it fails. */
static int send_buf(struct shmr_endpoint *ep, uint8_t kind, uint8_t prio,
		    uint8_t flags, struct shmr_pid to, uint32_t type,
		    uint64_t key, uint64_t ref, int32_t status,
		    struct shmr_buf *buf, size_t len)
{
	const struct shmr_arena_view *v = &ep->d->arena;
	uint32_t me = ep->pid.slot;
	struct shmr_buf_ref r;
	struct shmr_msg *m = (struct shmr_msg *)ep->tx;

	if (buf_held(ep, buf, &r) < 0 || len > buf->size)
		return -EINVAL;
	if (to.slot >= ep->d->max_endpoints)
		return -SHMR_E_PROCESS_UNKNOWN;
	r.len = (uint32_t)len;
	/* Named in our line before the word says SENT (the CAS below is a
	 * release, so a reclaim that reads SENT reads this too), cleared
	 * once the slot is in the lane.  Every store of it is a release
	 * (free on x86): a reclaim whose acquire reads the clear, or the
	 * next send's name, also sees our enqueue before it. */
	atomic_store_explicit(&ep->peer->sending, buf->ref,
			      memory_order_release);
	if (!shmr_arena_move(v, &r, shmr_buf_word(SHMR_BUF_WRITING, me, r.gen),
			     shmr_buf_word(SHMR_BUF_SENT, me, r.gen))) {
		atomic_store_explicit(&ep->peer->sending, 0,
				      memory_order_release);
		return -EINVAL;
	}
	fill_slot(ep, m, kind, prio, to, type, key, ref, status, &r,
		  sizeof(r));
	m->flags = (uint8_t)(SHMR_F_ARENA | flags);
	if (shmr_client_push(ep, prio != SHMR_PRIO_NORMAL, 1) != 1) {
		/* Ours again, under a new generation (arena.h: a SENT word
		 * never comes back once it ended). */
		uint32_t gen = shmr_buf_gen_next(r.gen);

		if (shmr_arena_move(v, &r,
				    shmr_buf_word(SHMR_BUF_SENT, me, r.gen),
				    shmr_buf_word(SHMR_BUF_WRITING, me, gen))) {
			r.gen = gen;
			buf->ref = shmr_buf_ref_word(&r);
		}
		atomic_store_explicit(&ep->peer->sending, 0,
				      memory_order_release);
		return -EAGAIN;
	}
	atomic_store_explicit(&ep->peer->sending, 0, memory_order_release);
	*buf = (struct shmr_buf){ NULL, 0, 0 };
	return 0;
}

int shmr_send_buf(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
		  uint64_t key, struct shmr_buf *buf, size_t len)
{
	return send_buf(ep, SHMR_KIND_SEND, SHMR_PRIO_NORMAL, 0, to, type, key,
			0, 0, buf, len);
}

int shmr_send_buf_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		       enum shmr_priority prio, uint32_t type, uint64_t key,
		       struct shmr_buf *buf, size_t len)
{
	if (prio > SHMR_PRIO_MAX)
		return -EINVAL;
	return send_buf(ep, SHMR_KIND_SEND, (uint8_t)prio, 0, to, type, key, 0,
			0, buf, len);
}

int shmr_send_buf_broadcast(struct shmr_endpoint *ep, struct shmr_pid router,
			    uint32_t type, uint64_t key, struct shmr_buf *buf,
			    size_t len)
{
	return send_buf(ep, SHMR_KIND_SEND, SHMR_PRIO_NORMAL, SHMR_F_BROADCAST,
			router, type, key, 0, 0, buf, len);
}

int shmr_call_buf_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		       enum shmr_priority prio, uint32_t type, uint64_t key,
		       struct shmr_buf *buf, size_t len, void *reply,
		       size_t cap, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint64_t ref;
	int rc;

	if (prio > SHMR_PRIO_MAX)
		return -EINVAL;
	rc = shmr_client_call_begin(ep);
	if (rc < 0)
		return rc;
	ref = ++ep->next_ref;
	rc = send_buf(ep, SHMR_KIND_CALL, (uint8_t)prio, 0, to, type, key, ref,
		      0, buf, len);
	if (rc < 0)
		return rc;
	return shmr_client_call_wait(ep, ref, reply, cap, deadline);
}

int shmr_call_buf(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
		  uint64_t key, struct shmr_buf *buf, size_t len, void *reply,
		  size_t cap, int timeout_ms)
{
	return shmr_call_buf_prio(ep, to, SHMR_PRIO_NORMAL, type, key, buf, len,
				  reply, cap, timeout_ms);
}

int shmr_reply_buf(struct shmr_endpoint *ep, const struct shmr_msg *req,
		   int status, struct shmr_buf *buf, size_t len)
{
	if (reply_ok(req, &status) < 0)
		return -EINVAL;
	return send_buf(ep, SHMR_KIND_REPLY, SHMR_PRIO_NORMAL, 0, req->from,
			req->type, req->key, req->ref, status, buf, len);
}

/* @p m's reference, checked against our own copy of the classes. */
static int msg_ref(struct shmr_endpoint *ep, const struct shmr_msg *m,
		   struct shmr_buf_ref *r)
{
	const struct shmr_arena_view *v = &ep->d->arena;

	if (m->len != sizeof(*r))
		return -EINVAL;
	memcpy(r, m->data, sizeof(*r));
	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count ||
	    r->len > v->cls[r->cls].size || r->gen == 0)
		return -EINVAL;
	return 0;
}

const void *shmr_msg_payload(struct shmr_endpoint *ep,
			     const struct shmr_msg *m, size_t *len)
{
	struct shmr_buf_ref r;
	uint64_t w;

	if (!(m->flags & SHMR_F_ARENA)) {
		*len = m->len;
		return m->data;
	}
	*len = 0;
	if (msg_ref(ep, m, &r) < 0)
		return NULL;
	/* Acquire: pairs with the sender's release as it marked it SENT
	 * (its writes into the buffer are visible). */
	w = atomic_load_explicit(shmr_arena_word(&ep->d->arena, r.cls, r.index),
				 memory_order_acquire);
	/* Or this endpoint kept it (shmr_buf_keep(): the next generation,
	 * ours). */
	if ((shmr_buf_word_gen(w) != r.gen ||
	     shmr_buf_word_state(w) == SHMR_BUF_FREE) &&
	    w != shmr_buf_word(SHMR_BUF_WRITING, ep->pid.slot,
			       shmr_buf_gen_next(r.gen)))
		return NULL;
	*len = r.len;
	return shmr_arena_data(&ep->d->arena, r.cls, r.index);
}

/* The entry of our held buffers (the last receive's) for @p m's
 * reference @p r that no keep took yet; NULL when there is none (every
 * copy of it in this burst was kept, or the receive could not track
 * it). */
static struct held_buf *held_unkept(struct shmr_endpoint *ep,
				    const struct shmr_msg *m,
				    const struct shmr_buf_ref *r)
{
	for (unsigned i = 0; i < ep->nheld; i++) {
		struct held_buf *h = &ep->held[i];

		if (h->r.cls == r->cls && h->r.index == r->index &&
		    h->r.gen == r->gen && h->from == m->from.slot &&
		    h->r.len != HELD_KEPT)
			return h;
	}
	return NULL;
}

/* Keep a buffer other copies share (arena.h): the last reference is
 * taken over; with others left, its bytes go into a buffer of our own
 * (our reference is given back at the next receive, as for any slot).
 * The word says nothing of who copied, and our reference stays counted
 * until that receive: only @p h, our held entry marked kept, tells a
 * second keep of the message from the first (which would copy again, or
 * take over the buffer once the others are done, so that one message
 * became two buffers of ours and could empty the class). */
static int keep_shared(struct shmr_endpoint *ep, struct held_buf *h,
		       const struct shmr_buf_ref *r, uint64_t w,
		       struct shmr_buf *buf)
{
	const struct shmr_arena_view *v = &ep->d->arena;
	uint32_t me = ep->pid.slot;
	struct shmr_buf_ref mine = *r;
	int rc;

	if (!h)
		return -EINVAL;
	/* Ours under a new generation (arena.h). */
	mine.gen = shmr_buf_gen_next(r->gen);
	if (shmr_buf_word_refs(w) == 1 && shmr_buf_word_held(w) == 0 &&
	    shmr_arena_move(v, r, w,
			    shmr_buf_word(SHMR_BUF_WRITING, me, mine.gen))) {
		buf_fill(ep, &mine, buf);
		h->r.len = HELD_KEPT;
		return 0;
	}
	rc = shmr_buf_alloc(ep, r->len, buf);
	if (rc < 0)
		return rc;
	memcpy(buf->data, shmr_arena_data(v, r->cls, r->index), r->len);
	h->r.len = HELD_KEPT;
	return 0;
}

int shmr_buf_keep(struct shmr_endpoint *ep, const struct shmr_msg *m,
		  struct shmr_buf *buf)
{
	struct shmr_buf_ref r;
	uint64_t w;

	*buf = (struct shmr_buf){ NULL, 0, 0 };
	if (!(m->flags & SHMR_F_ARENA) || msg_ref(ep, m, &r) < 0)
		return -EINVAL;
	/* Acquire: pairs with the sender's release as it marked it SENT
	 * (its bytes are visible to a copy). */
	w = atomic_load_explicit(shmr_arena_word(&ep->d->arena, r.cls, r.index),
				 memory_order_acquire);
	if (shmr_buf_word_state(w) == SHMR_BUF_SHARED &&
	    shmr_buf_word_gen(w) == r.gen)
		return keep_shared(ep, held_unkept(ep, m, &r), &r, w, buf);
	/* The release at the next receive then finds it not SENT and
	 * leaves it: every move expects the exact word.  Ours under a new
	 * generation (arena.h: a SENT word never comes back). */
	if (!shmr_arena_move(&ep->d->arena, &r,
			     shmr_buf_word(SHMR_BUF_SENT, m->from.slot, r.gen),
			     shmr_buf_word(SHMR_BUF_WRITING, ep->pid.slot,
					   shmr_buf_gen_next(r.gen))))
		return -EINVAL;
	r.gen = shmr_buf_gen_next(r.gen);
	buf_fill(ep, &r, buf);
	return 0;
}
