/*
 * The payload arena's owner words (the protocol is in <shmr/arena.h>):
 * the view every process takes once, and the transitions libshmr makes,
 * each one compare-and-swap.
 */
#include <string.h>

#include <shmr/arena.h>
#include <shmr/domain.h>

#include <shmr/arena_ops.h>

void shmr_arena_view_init(struct shmr_arena_view *v, void *base)
{
	const struct shmr_domain_hdr *h = shmr_hdr(base);

	memset(v, 0, sizeof(*v));
	v->base = base;
	v->nclasses = h->arena_nclasses <= SHMR_ARENA_MAX_CLASSES
			      ? h->arena_nclasses
			      : 0;
	v->stats_off = h->arena_off;
	memcpy(v->cls, h->arena, sizeof(v->cls));
}

uint32_t shmr_arena_in_use(const struct shmr_arena_view *v, uint32_t cls)
{
	uint32_t n = 0;

	if (cls >= v->nclasses)
		return 0;
	for (uint32_t i = 0; i < v->cls[cls].count; i++)
		n += shmr_buf_word_state(atomic_load_explicit(
			     shmr_arena_word(v, cls, i),
			     memory_order_relaxed)) != SHMR_BUF_FREE;
	return n;
}

uint32_t shmr_arena_in_use_all(const struct shmr_arena_view *v)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < v->nclasses; c++)
		n += shmr_arena_in_use(v, c);
	return n;
}

int shmr_arena_class_for(const struct shmr_arena_view *v, size_t size)
{
	for (uint32_t c = 0; c < v->nclasses; c++)
		if (size <= v->cls[c].size)
			return (int)c;
	return -1;
}

int shmr_arena_take(const struct shmr_arena_view *v, uint32_t cls,
		    uint32_t holder, uint32_t *cursor, struct shmr_buf_ref *r)
{
	uint32_t count = v->cls[cls].count;

	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = (*cursor + k) % count;
		_Atomic(uint64_t) *w = shmr_arena_word(v, cls, i);
		uint64_t old = atomic_load_explicit(w, memory_order_relaxed);
		uint32_t gen = shmr_buf_gen_next(shmr_buf_word_gen(old));

		if (old != shmr_buf_word_free(shmr_buf_word_gen(old)))
			continue;
		/* Acquire: the previous holder's reads of the buffer (its
		 * release store) are done before we write it. */
		if (!atomic_compare_exchange_strong_explicit(
			    w, &old, shmr_buf_word(SHMR_BUF_WRITING, holder, gen),
			    memory_order_acquire, memory_order_relaxed))
			continue;
		*cursor = i + 1;
		r->cls = cls;
		r->index = i;
		r->gen = gen;
		r->len = 0;
		return 0;
	}
	return -1;
}

int shmr_arena_move(const struct shmr_arena_view *v,
		    const struct shmr_buf_ref *r, uint64_t from, uint64_t to)
{
	if (r->cls >= v->nclasses || r->index >= v->cls[r->cls].count)
		return 0;
	/* Release: what the holder wrote into the buffer is visible before
	 * the word says another may use it (pairs with the acquire of the
	 * next holder's take or keep, and the receiver's check). */
	return atomic_compare_exchange_strong_explicit(
		shmr_arena_word(v, r->cls, r->index), &from, to,
		memory_order_acq_rel, memory_order_relaxed);
}
