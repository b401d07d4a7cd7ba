/*
 * The arena's owner-word transitions (shm/arena.c; the protocol is in
 * <shmr/arena.h>).  Not installed; for libshmr and the tests.
 */
#ifndef SHMR_ARENA_OPS_H
#define SHMR_ARENA_OPS_H

#include <shmr/arena.h>

/**
 * The smallest class whose buffers hold @p size bytes.
 * Context: any; pure.  Returns: its index, or -1 when none does.
 */
int shmr_arena_class_for(const struct shmr_arena_view *v, size_t size);

/**
 * Allocate a buffer of class @p cls (in range) for endpoint slot
 * @p holder: the first free word from @p *cursor on, taken by one CAS
 * (FREE -> WRITING).  Never blocks; a scan of at most the class's count.
 * Context: the holder's thread.  Concurrency: lock-free; @p cursor is the
 *          caller's own.
 * Returns: 0 and @p r (len 0), or -1 when the class has no free buffer.
 */
int shmr_arena_take(const struct shmr_arena_view *v, uint32_t cls,
		    uint32_t holder, uint32_t *cursor, struct shmr_buf_ref *r);

/**
 * One transition of @p r's owner word, from exactly @p from to @p to.
 * Context: any.  Concurrency: one CAS, acquire-release.
 * Returns: 1 when done, 0 when the word was not @p from (or @p r is out
 * of range).
 */
int shmr_arena_move(const struct shmr_arena_view *v,
		    const struct shmr_buf_ref *r, uint64_t from, uint64_t to);

#endif
