/*
 * The balancing queue (see balance.h for the model and the crash story).
 *
 * The owner keeps head and tail in its handle and writes them through to
 * the memory's header with release stores after the work they publish:
 * push copies the slot, then [T1] stores tail; pop happens after the slot
 * was handed out (the caller's send, or the copy to out), then [H1] stores
 * head.  A process that adopts the memory after the owner died reads both
 * with acquire ([A1], pairs with T1 and H1) and so sees every slot below
 * tail complete and every slot below head already handed out.  The owner
 * never reads them back: a scribble on the header cannot steer it.
 */
#include <errno.h>
#include <string.h>

#include "balance.h"

static inline uint32_t stride_of(uint32_t slot_size)
{
	return (slot_size + 7) & ~7u;
}

size_t shmr_dp_balance_mem_size(uint32_t capacity, uint32_t slot_size)
{
	if (capacity == 0 || capacity > SHMR_DP_BALANCE_CAP_MAX ||
	    (capacity & (capacity - 1)) != 0 || slot_size < SHMR_HDR_SIZE ||
	    slot_size > SHMR_SLOT_MAX)
		return 0;
	return sizeof(struct shmr_dp_balance_mem) +
	       (size_t)capacity * stride_of(slot_size);
}

static int check_args(void *mem, size_t size, uint32_t capacity,
		      uint32_t slot_size)
{
	size_t need = shmr_dp_balance_mem_size(capacity, slot_size);

	if (!mem || need == 0 || ((uintptr_t)mem % SHMR_CACHE_LINE) != 0)
		return -EINVAL;
	return size < need ? -ENOSPC : 0;
}

static void handle_set(struct shmr_dp_balance *q, void *mem,
		       uint32_t capacity, uint32_t slot_size)
{
	memset(q, 0, sizeof(*q));
	q->mem = mem;
	q->slots = (unsigned char *)mem + sizeof(struct shmr_dp_balance_mem);
	q->cap = capacity;
	q->mask = capacity - 1;
	q->slot_size = slot_size;
	q->stride = stride_of(slot_size);
}

static inline struct shmr_msg *slot_at(const struct shmr_dp_balance *q,
				       uint32_t pos)
{
	return (struct shmr_msg *)(q->slots + (size_t)(pos & q->mask) *
						      q->stride);
}

int shmr_dp_balance_init(struct shmr_dp_balance *q, void *mem, size_t size,
			 uint32_t capacity, uint32_t slot_size)
{
	struct shmr_dp_balance_mem *h = mem;
	int rc = check_args(mem, size, capacity, slot_size);

	if (rc < 0)
		return rc;
	handle_set(q, mem, capacity, slot_size);
	/* Unmark first, so a crash mid-init leaves no queue to adopt. */
	atomic_store_explicit(&h->magic, 0, memory_order_relaxed);
	h->capacity = capacity;
	h->slot_size = slot_size;
	memset(h->reserved, 0, sizeof(h->reserved));
	atomic_store_explicit(&h->head, 0, memory_order_relaxed);
	atomic_store_explicit(&h->tail, 0, memory_order_relaxed);
	/* Release: pairs with the acquire load of magic in attach ([A0]). */
	atomic_store_explicit(&h->magic, SHMR_DP_BALANCE_MAGIC,
			      memory_order_release);
	return 0;
}

int shmr_dp_balance_attach(struct shmr_dp_balance *q, void *mem, size_t size,
			   uint32_t capacity, uint32_t slot_size)
{
	struct shmr_dp_balance_mem *h = mem;
	uint32_t head, tail;
	int rc = check_args(mem, size, capacity, slot_size);

	if (rc < 0)
		return rc;
	/* [A0] acquire: pairs with init's release store of magic. */
	if (atomic_load_explicit(&h->magic, memory_order_acquire) !=
		    SHMR_DP_BALANCE_MAGIC ||
	    h->capacity != capacity || h->slot_size != slot_size)
		return -EPROTO;
	/* [A1] acquire: pairs with T1 (tail) and H1 (head). */
	head = atomic_load_explicit(&h->head, memory_order_acquire);
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	if (tail - head > capacity)
		return -EPROTO;
	handle_set(q, mem, capacity, slot_size);
	q->head = head;
	q->tail = tail;
	if (tail != head) {
		struct shmr_msg *m = slot_at(q, head);

		m->flags = (uint8_t)(m->flags | SHMR_F_REDELIVERED);
	}
	return (int)(tail - head);
}

int shmr_dp_balance_push(struct shmr_dp_balance *q, const struct shmr_msg *m)
{
	if (m->len > q->slot_size - SHMR_HDR_SIZE)
		return -EINVAL;
	if (q->tail - q->head == q->cap) {
		q->st.full++;
		return -ENOSPC;
	}
	memcpy(slot_at(q, q->tail), m, shmr_msg_bytes(m, q->slot_size));
	q->tail++;
	/* [T1] release: the slot is complete before the tail covers it. */
	atomic_store_explicit(&q->mem->tail, q->tail, memory_order_release);
	q->st.pushed++;
	return 0;
}

const struct shmr_msg *shmr_dp_balance_front(const struct shmr_dp_balance *q)
{
	return q->tail == q->head ? NULL : slot_at(q, q->head);
}

int shmr_dp_balance_pop(struct shmr_dp_balance *q, struct shmr_msg *out)
{
	if (q->tail == q->head)
		return -ENOENT;
	if (out) {
		const struct shmr_msg *m = slot_at(q, q->head);

		/* The slot may sit in memory peers can write (the domain):
		 * a length we did not write must not overrun @p out
		 * (shmr_msg_bytes() reads it once, bounded). */
		memcpy(out, m, shmr_msg_bytes(m, q->slot_size));
	}
	q->head++;
	/* [H1] release: the slot was handed out before the head passes it. */
	atomic_store_explicit(&q->mem->head, q->head, memory_order_release);
	q->st.handed++;
	return 0;
}

int shmr_dp_balance_next_target(const uint32_t *queued, uint32_t n,
				uint32_t credit)
{
	int best = -1;

	if (n == 0)
		return -SHMR_E_NO_ROUTEES;
	for (uint32_t i = 0; i < n && i <= INT32_MAX; i++) {
		if (queued[i] >= credit)
			continue;
		if (best < 0 || queued[i] < queued[best]) {
			best = (int)i;
			if (queued[i] == 0)
				break; /* nothing beats an empty inbox */
		}
	}
	return best >= 0 ? best : -EAGAIN;
}

unsigned shmr_dp_balance_dispatch(struct shmr_dp_balance *q, uint32_t *queued,
				  uint32_t n, uint32_t credit,
				  int (*send)(void *ctx, uint32_t worker,
					      const struct shmr_msg *m),
				  void *ctx)
{
	unsigned handed = 0;

	while (q->tail != q->head) {
		int w = shmr_dp_balance_next_target(queued, n, credit);

		if (w < 0)
			break;
		if (send(ctx, (uint32_t)w, slot_at(q, q->head)) < 0) {
			queued[w] = SHMR_DP_BALANCE_NO_ROOM;
			continue;
		}
		shmr_dp_balance_pop(q, NULL);
		queued[w]++;
		handed++;
	}
	return handed;
}
