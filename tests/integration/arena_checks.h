/*
 * What the arena's integration tests share (test_large.c,
 * test_arena_paths.c): payloads a reply must match byte for byte, and the
 * check that every buffer is free again.  Test code only.
 */
#ifndef SHMR_TEST_ARENA_CHECKS_H
#define SHMR_TEST_ARENA_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/arena.h>

#include "shmr_test_app.h"

/* @p len bytes of a sequence that differs with @p seed. */
static inline void arena_fill(unsigned char *p, size_t len, unsigned seed)
{
	uint32_t s = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		s = s * 1103515245u + 12345u;
		p[i] = (unsigned char)(s >> 16);
	}
}

static inline int arena_view_empty(void *v)
{
	return shmr_arena_in_use_all(v) == 0;
}

/* Every buffer of view @p v is free again (receivers release theirs at
 * their next receive: a liveness bound, not a figure).  Needs cmocka. */
static inline void arena_assert_free(const struct shmr_arena_view *v)
{
	if (!shmr_test_wait(arena_view_empty, (void *)v, 10000))
		fail_msg("%u arena buffers still in use",
			 shmr_arena_in_use_all(v));
}

#endif
