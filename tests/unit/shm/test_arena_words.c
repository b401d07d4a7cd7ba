/*
 * The arena's owner words (shm/include/shmr/arena.h): shared and held
 * references counted through every transition the dataplane, receivers
 * and the control plane make, on a view built in plain memory.
 *
 *   shared       SENT, k copies added, each given back: freed with the
 *                last, never before; a stale reference finds nothing
 *   held         a queue's held reference (balancing, tail-chopping): a
 *                copy's own added before it is published and the held one
 *                let go after, the count never below the slots plus held
 *   limits       a count that would pass its field is refused, the word
 *                unchanged; a word by another sender takes no add
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <shmr/arena_ops.h>

static _Alignas(64) unsigned char mem[4096];

static struct shmr_arena_view view(void)
{
	struct shmr_arena_view v;

	memset(&v, 0, sizeof(v));
	memset(mem, 0, sizeof(mem));
	v.base = mem;
	v.nclasses = 1;
	v.cls[0].size = 64;
	v.cls[0].count = 4;
	v.cls[0].words_off = 0;
	v.cls[0].data_off = 64;
	return v;
}

static uint64_t word(const struct shmr_arena_view *v, uint32_t i)
{
	return atomic_load(shmr_arena_word(v, 0, i));
}

/* A buffer of endpoint slot 5, allocated and marked SENT. */
static struct shmr_buf_ref sent(const struct shmr_arena_view *v)
{
	struct shmr_buf_ref r;
	uint32_t cur = 0;

	assert_int_equal(shmr_arena_take(v, 0, 5, &cur, &r), 0);
	assert_true(shmr_arena_move(v, &r, shmr_buf_word(SHMR_BUF_WRITING, 5, r.gen),
				    shmr_buf_word(SHMR_BUF_SENT, 5, r.gen)));
	return r;
}

static void shared(void **state)
{
	struct shmr_arena_view v = view();
	struct shmr_buf_ref r = sent(&v), stale;
	(void)state;

	/* Three copies of the original: four references until its commit. */
	assert_true(shmr_arena_share(&v, &r, 5, 3));
	assert_int_equal(shmr_buf_word_state(word(&v, r.index)), SHMR_BUF_SHARED);
	assert_int_equal(shmr_buf_word_refs(word(&v, r.index)), 4);
	assert_true(shmr_arena_ref_check(&v, &r, 5)); /* decided again */
	assert_false(shmr_arena_ref_check(&v, &r, 6));
	for (int i = 0; i < 3; i++) {
		assert_true(shmr_arena_free_sent(&v, &r, 9)); /* any "from" */
		assert_int_equal(shmr_buf_word_state(word(&v, r.index)),
				 SHMR_BUF_SHARED);
	}
	assert_true(shmr_arena_free_sent(&v, &r, 5));
	assert_int_equal(word(&v, r.index), shmr_buf_word_free(r.gen));
	/* Nothing left to give back, and an old generation never matches. */
	assert_false(shmr_arena_free_sent(&v, &r, 5));
	stale = r;
	r = sent(&v);
	stale.index = r.index;
	stale.gen = r.gen - 1;
	assert_false(shmr_arena_free_sent(&v, &stale, 5));
	assert_false(shmr_arena_share(&v, &stale, 5, 1));
	assert_true(shmr_arena_free_sent(&v, &r, 5));
	assert_int_equal(shmr_arena_in_use_all(&v), 0);
}

static void held(void **state)
{
	struct shmr_arena_view v = view();
	struct shmr_buf_ref r = sent(&v);
	(void)state;

	/* Into the queue (held), the original committed. */
	assert_true(shmr_arena_hold(&v, &r, 5));
	assert_true(shmr_arena_free_sent(&v, &r, 5));
	assert_int_equal(shmr_buf_word_refs(word(&v, r.index)), 1);
	assert_int_equal(shmr_buf_word_held(word(&v, r.index)), 1);
	/* A try of the kept call: its own reference, whoever "sent" it. */
	assert_true(shmr_arena_share_held(&v, &r));
	assert_int_equal(shmr_buf_word_refs(word(&v, r.index)), 2);
	/* Its receiver is done, then the entry ends: freed. */
	assert_true(shmr_arena_free_sent(&v, &r, 7));
	assert_int_equal(shmr_buf_word_held(word(&v, r.index)), 1);
	assert_true(shmr_arena_drop_held(&v, &r));
	assert_int_equal(word(&v, r.index), shmr_buf_word_free(r.gen));
	assert_false(shmr_arena_drop_held(&v, &r));
	assert_false(shmr_arena_share_held(&v, &r));
	/* Held but no lane copy: letting go frees it; a word holding none
	 * takes no held add. */
	r = sent(&v);
	assert_false(shmr_arena_share_held(&v, &r));
	assert_true(shmr_arena_hold(&v, &r, 5));
	assert_true(shmr_arena_free_sent(&v, &r, 5));
	assert_true(shmr_arena_drop_held(&v, &r));
	assert_int_equal(shmr_arena_in_use_all(&v), 0);
}

static void limits(void **state)
{
	struct shmr_arena_view v = view();
	struct shmr_buf_ref r = sent(&v);
	uint64_t w;
	(void)state;

	assert_true(shmr_arena_share(&v, &r, 5, SHMR_BUF_REFS_MAX - 1));
	w = word(&v, r.index);
	assert_false(shmr_arena_share(&v, &r, 5, 1));
	assert_false(shmr_arena_hold(&v, &r, 5));
	assert_int_equal(word(&v, r.index), w);
	for (uint32_t i = 0; i < SHMR_BUF_REFS_MAX; i++)
		assert_true(shmr_arena_free_sent(&v, &r, 5));
	assert_int_equal(word(&v, r.index), shmr_buf_word_free(r.gen));
	r = sent(&v);
	for (uint32_t i = 0; i < SHMR_BUF_HELD_MAX; i++)
		assert_true(shmr_arena_hold(&v, &r, 5));
	w = word(&v, r.index);
	assert_false(shmr_arena_hold(&v, &r, 5));
	assert_int_equal(word(&v, r.index), w);
	assert_int_equal(shmr_buf_word_held(w), SHMR_BUF_HELD_MAX);
	/* Another sender's word: no add, no hold. */
	assert_false(shmr_arena_share(&v, &r, 6, 1));
	for (uint32_t i = 0; i < SHMR_BUF_HELD_MAX; i++)
		assert_true(shmr_arena_drop_held(&v, &r));
	assert_true(shmr_arena_free_sent(&v, &r, 5));
	assert_int_equal(shmr_arena_in_use_all(&v), 0);
}

static const struct CMUnitTest word_tests[] = {
	cmocka_unit_test(shared),
	cmocka_unit_test(held),
	cmocka_unit_test(limits),
};

int main(void)
{
	return cmocka_run_group_tests_name("arena_words", word_tests, NULL, NULL);
}
