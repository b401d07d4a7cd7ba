/*
 * The control plane's reclaim of arena buffers (control/arena.c), on a
 * real domain made here.
 *
 * After a dataplane's death (shmr_ctl_arena_dataplane_gone()): a SHARED
 * owner word that counts fewer references than the slots in the lanes
 * that refer to it (a dataplane that gave back an original's reference
 * at its commit and died before releasing its source lane) is raised to
 * them before the next dataplane starts; one that counts more is left (a
 * receiver between its slot's release and its give-back holds a
 * reference no lane shows); one that no slot refers to is freed.
 *
 * After a receiver's death (shmr_ctl_arena_reclaim()): a buffer SENT by
 * a live holder that no slot refers to (the receiver was killed between
 * its slot's release and its give-back) is freed; one its holder names
 * as the buffer it is sending (struct shmr_ep_peer.sending: its slot not
 * yet in a lane) is not, and a later look (shmr_ctl_arena_recheck())
 * frees it once the name is gone and still no slot refers to it; one a
 * slot refers to, and one its holder is still writing, stay.  A buffer
 * the dead receiver had kept from a slot it had not released yet goes
 * back to that slot's sender, so the slot's redelivery carries it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/arena.h>
#include <shmr/domain.h>

#include "arena.h"
#include "control_internal.h"
#include "domain.h"

struct fix {
	struct shmr_config cfg;
	struct shmr_ctl_domain d;
	struct shmr_arena_view v;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->cfg.domain, "unit-recount");
	f->cfg.slot_size = 128;
	f->cfg.lane_size = 64;
	f->cfg.lcores = 1;
	f->cfg.max_endpoints = 16;
	f->cfg.arena.nclasses = 1;
	f->cfg.arena.cls[0] = (struct shmr_arena_conf){ 4096, 8 };
	f->d = (struct shmr_ctl_domain){ .memfd = -1, .lanes_fd = -1,
					 .peer_ro_fd = -1 };
	if (shmr_ctl_domain_create(&f->d, &f->cfg) < 0)
		return -1;
	f->v.base = f->d.base;
	f->v.nclasses = f->d.geo.arena_nclasses;
	f->v.stats_off = f->d.geo.arena_off;
	memcpy(f->v.cls, f->d.geo.arena, sizeof(f->v.cls));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	shmr_ctl_domain_close(&f->d);
	free(f);
	return 0;
}

/* A slot from endpoint @p from referring to buffer @p index (gen @p gen)
 * into lane @p lane of endpoint @p ep, as a sender or the dataplane put
 * it there. */
static void put_ref(struct fix *f, uint32_t ep, uint32_t lane, uint32_t from,
		    uint32_t index, uint32_t gen)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)] = { 0 };
	struct shmr_msg *m = (struct shmr_msg *)buf;
	struct shmr_buf_ref r = { 0, index, gen, 100 };
	struct rte_ring *ring = shmr_ctl_dom_lane(&f->d, ep, lane);

	m->kind = SHMR_KIND_SEND;
	m->flags = SHMR_F_ARENA;
	m->from = (struct shmr_pid){ from, 1 };
	m->len = sizeof(r);
	memcpy(m->data, &r, sizeof(r));
	assert_int_equal(rte_ring_enqueue_burst_elem(ring, m,
						     f->d.geo.slot_size, 1,
						     NULL),
			 1);
}

static _Atomic(uint64_t) *word(struct fix *f, uint32_t index)
{
	return shmr_arena_word(&f->v, 0, index);
}

static void set_shared(struct fix *f, uint32_t index, uint32_t gen,
		       uint32_t holder, uint32_t refs)
{
	atomic_store(word(f, index), shmr_buf_word_shared(holder, refs, gen));
}

static void test_recount(void **state)
{
	struct fix *f = *state;
	uint32_t nl = f->d.geo.nlcores;
	uint64_t w;

	/* Buffer 0: the original still in sender 3's outbound lane and two
	 * copies in inbound lanes of 4 and 5, but the word counts 2 (the
	 * original's reference given back at its commit). */
	set_shared(f, 0, 7, 3, 2);
	put_ref(f, 3, SHMR_LANE_OUT(nl), 3, 0, 7);
	put_ref(f, 4, 0, 3, 0, 7);
	put_ref(f, 5, 0, 3, 0, 7);
	/* Buffer 1: counts 3, one copy in a lane (two receivers between
	 * their release and their give-back). */
	set_shared(f, 1, 9, 3, 3);
	put_ref(f, 6, 0, 3, 1, 9);
	/* Buffer 2: counts 1, no slot refers to it. */
	set_shared(f, 2, 11, 3, 1);

	shmr_ctl_arena_dataplane_gone(&f->d);

	w = atomic_load(word(f, 0));
	assert_int_equal(shmr_buf_word_state(w), SHMR_BUF_SHARED);
	assert_int_equal(shmr_buf_word_gen(w), 7);
	assert_int_equal(shmr_buf_word_refs(w), 3);
	w = atomic_load(word(f, 1));
	assert_int_equal(shmr_buf_word_state(w), SHMR_BUF_SHARED);
	assert_int_equal(shmr_buf_word_refs(w), 3);
	w = atomic_load(word(f, 2));
	assert_int_equal(shmr_buf_word_state(w), SHMR_BUF_FREE);
}

static void set_word(struct fix *f, uint32_t index, uint64_t w)
{
	atomic_store(word(f, index), w);
}

static void test_receiver_gone(void **state)
{
	struct fix *f = *state;
	struct shmr_buf_ref named = { 0, 1, 6, 0 };
	uint64_t w;

	/* Holder 3 lives; receiver 7 was killed. */
	atomic_store(&shmr_ctl_dom_ep(&f->d, 3)->state, SHMR_EP_ACTIVE);
	/* Buffer 0: SENT by 3, its slot released by 7, never given back. */
	set_word(f, 0, shmr_buf_word(SHMR_BUF_SENT, 3, 5));
	/* Buffer 1: SENT by 3, which names it: on its way to its lane. */
	set_word(f, 1, shmr_buf_word(SHMR_BUF_SENT, 3, 6));
	atomic_store(&shmr_ctl_dom_ep_peer(&f->d, 3)->sending,
		     shmr_buf_ref_word(&named));
	/* Buffer 2: SENT by 3, in receiver 4's inbound lane. */
	set_word(f, 2, shmr_buf_word(SHMR_BUF_SENT, 3, 8));
	put_ref(f, 4, 0, 3, 2, 8);
	/* Buffer 3: being written by 3. */
	set_word(f, 3, shmr_buf_word(SHMR_BUF_WRITING, 3, 2));
	/* Buffer 4: kept by 7 (the generation after its slot's) from a
	 * slot of 3's still unreleased in 7's inbound lane. */
	set_word(f, 4, shmr_buf_word(SHMR_BUF_WRITING, 7, 10));
	put_ref(f, 7, 0, 3, 4, 9);
	/* Buffer 5: allocated by 7; a stale slot naming the generation
	 * before sits in 3's outbound lane (not one 7 received). */
	set_word(f, 5, shmr_buf_word(SHMR_BUF_WRITING, 7, 12));
	put_ref(f, 3, SHMR_LANE_OUT(f->d.geo.nlcores), 3, 5, 11);

	assert_int_equal(shmr_ctl_arena_reclaim(&f->d, 7), 2);
	/* The kept one goes back to its slot, to be redelivered with it. */
	assert_int_equal(atomic_load(word(f, 4)),
			 shmr_buf_word(SHMR_BUF_SENT, 3, 9));
	assert_int_equal(atomic_load(word(f, 5)), shmr_buf_word_free(12));
	assert_int_equal(atomic_load(word(f, 0)), shmr_buf_word_free(5));
	assert_int_equal(atomic_load(word(f, 1)),
			 shmr_buf_word(SHMR_BUF_SENT, 3, 6));
	assert_int_equal(atomic_load(word(f, 2)),
			 shmr_buf_word(SHMR_BUF_SENT, 3, 8));
	assert_int_equal(atomic_load(word(f, 3)),
			 shmr_buf_word(SHMR_BUF_WRITING, 3, 2));

	/* A later look: named still, kept; the name gone (the slot was
	 * enqueued, then received and released by a receiver that died
	 * before its give-back), freed. */
	uint64_t due = shmr_ctl_arena_recheck(&f->d, 1000);

	assert_true(due > 0);
	due = shmr_ctl_arena_recheck(&f->d, due);
	w = atomic_load(word(f, 1));
	assert_int_equal(w, shmr_buf_word(SHMR_BUF_SENT, 3, 6));
	atomic_store(&shmr_ctl_dom_ep_peer(&f->d, 3)->sending, 0);
	assert_true(due > 0);
	(void)shmr_ctl_arena_recheck(&f->d, due);
	assert_int_equal(atomic_load(word(f, 1)), shmr_buf_word_free(6));
	assert_int_equal(atomic_load(word(f, 2)),
			 shmr_buf_word(SHMR_BUF_SENT, 3, 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_recount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_receiver_gone, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
