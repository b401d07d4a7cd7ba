/*
 * The bounded lane copies (shm/include/shmr/lane_copy.h): whatever a peer
 * writes into a ring's size, mask and indices after the reader's lane
 * check, a copy stays inside the lane as the reader's own geometry has it.
 * The ring lies just before a PROT_NONE page, so a copy past its end
 * faults instead of passing unnoticed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/lane_copy.h>

#define SLOT 128u
#define LANE 64u

struct fixture {
	void *map;
	size_t size;
	struct rte_ring *r;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	ssize_t mem = rte_ring_get_memsize_elem(SLOT, LANE);
	size_t rw;

	assert_non_null(f);
	assert_true(mem > 0);
	rw = ((size_t)mem + page - 1) / page * page;
	f->size = rw + page;
	f->map = mmap(NULL, f->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->map != MAP_FAILED);
	assert_int_equal(mprotect((char *)f->map + rw, page, PROT_NONE), 0);
	/* The ring's last slot ends where the guard page starts (the ring
	 * header stays cache-aligned: mem and the page are multiples). */
	f->r = (struct rte_ring *)((char *)f->map + rw - (size_t)mem);
	assert_int_equal(shmr_lane_init(f->r, "bounded", LANE), 0);
	*state = f;
	return 0;
}

/* Nothing may have been written past the lane: the guard page would have
 * faulted.  0, or -1 when the mapping could not be undone. */
static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc = munmap(f->map, f->size);

	free(f);
	return rc;
}

static void fill(unsigned char *buf, unsigned n, unsigned char v)
{
	memset(buf, v, (size_t)n * SLOT);
}

/* Sound lanes: the bounded copies move slots as the plain ones do, across
 * the wrap too. */
static void test_bounded_moves_slots(void **state)
{
	struct fixture *f = *state;
	unsigned char in[8 * SLOT], out[8 * SLOT];

	for (unsigned round = 0; round < 20; round++) {
		fill(in, 5, (unsigned char)round);
		assert_int_equal(shmr_lane_put_bounded(f->r, LANE, in, SLOT, 5),
				 5);
		assert_int_equal(shmr_lane_peek_bounded(f->r, LANE, out, SLOT,
							8),
				 5);
		assert_memory_equal(in, out, 5 * SLOT);
		rte_ring_dequeue_zc_elem_finish(f->r, 5);
	}
	assert_true(shmr_lane_valid_sc(f->r, LANE));
}

/* A mask a peer wrote after our check, with indices far from 0: DPDK's
 * reservation points past the lane (the plain copy would write into the
 * guard page); the bounded one gives the slots back and copies nothing. */
static void test_bounded_refuses_a_peers_mask(void **state)
{
	struct fixture *f = *state;
	struct rte_ring_zc_data z = { 0 };
	unsigned char buf[4 * SLOT];

	f->r->prod.head = f->r->prod.tail = 0x10000u;
	f->r->cons.head = f->r->cons.tail = 0x10000u;
	f->r->mask = 0xffffffffu;
	f->r->size = 0x80000000u;
	/* What DPDK hands out now is outside the lane. */
	assert_int_equal(rte_ring_enqueue_zc_burst_elem_start(f->r, SLOT, 4,
							      &z, NULL),
			 4);
	assert_false(shmr_lane_zc_inside(f->r, LANE, SLOT, 4, &z));
	rte_ring_enqueue_zc_elem_finish(f->r, 0);

	fill(buf, 4, 0xab);
	assert_int_equal(shmr_lane_put_bounded(f->r, LANE, buf, SLOT, 4), 0);
	assert_int_equal(f->r->prod.head, f->r->prod.tail); /* given back */
	/* The consumer side: slots "published" by a peer. */
	f->r->prod.head = f->r->prod.tail = 0x10000u + 3;
	assert_int_equal(shmr_lane_peek_bounded(f->r, LANE, buf, SLOT, 4), 0);
	assert_int_equal(f->r->cons.head, f->r->cons.tail);
}

/* A size a peer wrote smaller than the index: DPDK's first part would be
 * "size - idx" slots, wrapped to billions. */
static void test_bounded_refuses_a_peers_size(void **state)
{
	struct fixture *f = *state;
	unsigned char buf[4 * SLOT];

	f->r->prod.head = f->r->prod.tail = 40;
	f->r->cons.head = f->r->cons.tail = 40;
	f->r->size = 2;
	fill(buf, 4, 0xcd);
	assert_int_equal(shmr_lane_put_bounded(f->r, LANE, buf, SLOT, 4), 0);
	assert_int_equal(f->r->prod.head, 40);
	f->r->prod.head = f->r->prod.tail = 43;
	assert_int_equal(shmr_lane_peek_bounded(f->r, LANE, buf, SLOT, 4), 0);
	assert_int_equal(f->r->cons.head, 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bounded_moves_slots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_bounded_refuses_a_peers_mask, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_bounded_refuses_a_peers_size, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
