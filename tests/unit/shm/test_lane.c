/*
 * Lanes: SPSC rte_rings initialised in place in a domain, with peek-based
 * consumption, repair after a dead peer, soundness checks and bells.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek.h>

#include <shmr/domain.h>

#define SLOT 128u
#define LANE 64u

struct fixture {
	void *base;
	size_t size;
	struct rte_ring *r;
};

static int setup(void **state)
{
	struct shmr_geometry g = { SLOT, LANE, 2, SHMR_POLL_ADAPTIVE, 0, 0, 0,
				   0, 0, 0 };
	struct shmr_domain_hdr h;
	struct fixture *f = calloc(1, sizeof(*f));
	int64_t size = shmr_layout_plan(&g, &h);

	assert_true(size > 0);
	f->size = (size_t)size;
	f->base = mmap(NULL, f->size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(f->base != MAP_FAILED);
	assert_int_equal(shmr_layout_init(f->base, &g, "unit"), 0);
	f->r = shmr_lane_at(f->base, 3, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	munmap(f->base, f->size);
	free(f);
	return 0;
}

static void make(unsigned char *buf, uint64_t seq)
{
	struct shmr_msg *m = (struct shmr_msg *)buf;

	memset(buf, 0, SLOT);
	m->kind = SHMR_KIND_SEND;
	m->key = seq;
	m->len = 8;
	memcpy(m->data, &seq, 8);
}

static unsigned enq(struct rte_ring *r, uint64_t first, unsigned n)
{
	unsigned char buf[SLOT * 64];

	for (unsigned i = 0; i < n; i++)
		make(buf + i * SLOT, first + i);
	return rte_ring_enqueue_burst_elem(r, buf, SLOT, n, NULL);
}

static void test_layout_checks(void **state)
{
	struct fixture *f = *state;
	struct shmr_domain_hdr *h = shmr_hdr(f->base);
	struct shmr_geometry bad = { 100, LANE, 1, 0, 0, 0, 0, 0, 0, 0 };
	const char *why = NULL;

	assert_int_equal(shmr_layout_check(f->base, f->size), 0);
	assert_int_equal(shmr_layout_check(f->base, 100), -SHMR_E_PROTO);
	h->layout_version++;
	assert_int_equal(shmr_layout_check(f->base, f->size), -SHMR_E_VERSION);
	h->layout_version--;
	assert_int_equal(shmr_geometry_check(&bad, &why), -EINVAL);
	assert_non_null(strstr(why, "slot_size"));
	bad.slot_size = SLOT;
	bad.lane_size = 100;
	assert_int_equal(shmr_geometry_check(&bad, &why), -EINVAL);
	assert_non_null(strstr(why, "lane_size"));
	/* Lanes do not overlap: the last lane ends inside the mapping. */
	assert_true((char *)shmr_lane_at(f->base, h->max_endpoints - 1,
					 SHMR_LANES_PER_EP(2) - 1) +
			    h->lane_stride <=
		    (char *)f->base + f->size);
}

static void test_empty_full_wrap(void **state)
{
	struct fixture *f = *state;
	unsigned char out[SLOT * 64];
	uint64_t expect = 0;

	assert_int_equal(rte_ring_count(f->r), 0);
	assert_int_equal(rte_ring_dequeue_burst_elem(f->r, out, SLOT, 8, NULL),
			 0);
	/* Capacity is LANE - 1; a full lane takes nothing more. */
	assert_int_equal(enq(f->r, 0, 63), 63);
	assert_int_equal(enq(f->r, 63, 1), 0);
	assert_int_equal(rte_ring_free_count(f->r), 0);
	/* Wrap around many times, in odd-sized bursts; order is kept. */
	uint64_t next = 63;
	for (int round = 0; round < 500; round++) {
		unsigned got = rte_ring_dequeue_burst_elem(f->r, out, SLOT,
							   1 + round % 37, NULL);
		for (unsigned i = 0; i < got; i++) {
			struct shmr_msg *m = (struct shmr_msg *)(out + i * SLOT);
			assert_int_equal(m->key, expect);
			expect++;
		}
		next += enq(f->r, next, 1 + round % 29);
	}
	assert_true(expect > 5 * LANE);
}

static void test_peek_keeps_burst_until_finish(void **state)
{
	struct fixture *f = *state;
	unsigned char out[SLOT * 64];

	assert_int_equal(enq(f->r, 100, 10), 10);
	assert_int_equal(rte_ring_dequeue_burst_elem_start(f->r, out, SLOT, 4,
							   NULL),
			 4);
	/* Not yet released: the producer still sees them as taken space. */
	assert_int_equal(rte_ring_free_count(f->r), 63 - 10);
	rte_ring_dequeue_elem_finish(f->r, 4);
	assert_int_equal(rte_ring_free_count(f->r), 63 - 6);
}

static void test_repair_consumer_redelivers(void **state)
{
	struct fixture *f = *state;
	unsigned char out[SLOT * 64];
	struct shmr_msg *m;

	assert_int_equal(enq(f->r, 0, 20), 20);
	/* A consumer takes 5 and finishes them, then peeks 8 and dies. */
	assert_int_equal(rte_ring_dequeue_burst_elem_start(f->r, out, SLOT, 5,
							   NULL),
			 5);
	rte_ring_dequeue_elem_finish(f->r, 5);
	assert_int_equal(rte_ring_dequeue_burst_elem_start(f->r, out, SLOT, 8,
							   NULL),
			 8);
	assert_int_equal(shmr_lane_repair_consumer(f->r, SLOT, LANE), 8);
	assert_int_equal(shmr_lane_repair_consumer(f->r, SLOT, LANE), 0);
	/* The replacement gets the 8 again, flagged, then the rest not. */
	assert_int_equal(rte_ring_dequeue_burst_elem_start(f->r, out, SLOT, 64,
							   NULL),
			 15);
	for (unsigned i = 0; i < 15; i++) {
		m = (struct shmr_msg *)(out + i * SLOT);
		assert_int_equal(m->key, 5 + i);
		assert_int_equal(!!(m->flags & SHMR_F_REDELIVERED), i < 8);
	}
	rte_ring_dequeue_elem_finish(f->r, 15);
	assert_int_equal(rte_ring_count(f->r), 0);
}

/* A dead consumer's lane as a hostile peer left it: repairs trust only
 * our geometry; what cannot be repaired is refused, then initialised. */
static void test_repair_distrusts_the_ring(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(enq(f->r, 0, 4), 4);
	/* A "burst" longer than the capacity: nothing flagged, head back. */
	f->r->cons.head = f->r->cons.tail + 0x40000000u;
	assert_true(shmr_lane_sound_for_repair(f->r, LANE, 1));
	assert_int_equal(shmr_lane_repair_consumer(f->r, SLOT, LANE), 0);
	assert_int_equal(f->r->cons.head, f->r->cons.tail);
	assert_int_equal(rte_ring_count(f->r), 4);
	/* A mask that reaches outside the ring: left alone, unsound. */
	f->r->cons.head += 2;
	f->r->mask = 0xffffffffu;
	assert_false(shmr_lane_sound_for_repair(f->r, LANE, 1));
	assert_int_equal(shmr_lane_repair_consumer(f->r, SLOT, LANE), 0);
	assert_int_equal(shmr_lane_repair_producer(f->r, LANE), 0);
	assert_int_equal(shmr_lane_init(f->r, "again", LANE), 0);
	assert_true(shmr_lane_sound_for_repair(f->r, LANE, 1));
	assert_true(shmr_lane_sound_for_repair(f->r, LANE, 0));
	/* The live side's index out of range: unsound for either side. */
	f->r->prod.head = f->r->prod.tail + LANE;
	assert_false(shmr_lane_sound_for_repair(f->r, LANE, 1));
	f->r->prod.head = f->r->prod.tail;
	f->r->cons.head = f->r->cons.tail + LANE;
	assert_false(shmr_lane_sound_for_repair(f->r, LANE, 0));
}

static void test_repair_producer_drops_unpublished(void **state)
{
	struct fixture *f = *state;
	unsigned char out[SLOT * 64];

	assert_int_equal(enq(f->r, 0, 3), 3);
	/* A producer that died between moving head and publishing tail. */
	f->r->prod.head += 2;
	assert_int_equal(shmr_lane_repair_producer(f->r, LANE), 1);
	assert_int_equal(shmr_lane_repair_producer(f->r, LANE), 0);
	assert_int_equal(enq(f->r, 3, 2), 2);
	assert_int_equal(rte_ring_dequeue_burst_elem(f->r, out, SLOT, 64, NULL),
			 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(((struct shmr_msg *)(out + i * SLOT))->key, i);
}

/* SPSC across two threads with bells: every slot arrives once, in order. */
struct spsc {
	struct rte_ring *r;
	struct shmr_bell *bell;
	uint64_t n;
};

static void *producer(void *arg)
{
	struct spsc *s = arg;
	uint64_t sent = 0;

	while (sent < s->n) {
		unsigned k = (unsigned)(s->n - sent < 16 ? s->n - sent : 16);
		unsigned done = enq(s->r, sent, k);
		sent += done;
		if (done)
			shmr_bell_ring(s->bell);
	}
	return NULL;
}

static void test_spsc_threads_with_bell(void **state)
{
	struct fixture *f = *state;
	struct spsc s = { f->r, &shmr_ep_peer_at(f->base, 3)->bell, 200000 };
	unsigned char out[SLOT * 32];
	uint64_t expect = 0;
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, producer, &s), 0);
	while (expect < s.n) {
		unsigned got = rte_ring_dequeue_burst_elem(f->r, out, SLOT, 32,
							   NULL);
		if (!got) {
			uint32_t seen = shmr_bell_prepare(s.bell);
			if (shmr_lane_pending_sc(f->r))
				shmr_bell_cancel(s.bell);
			else
				assert_int_equal(
					shmr_bell_sleep(s.bell, seen, 1000), 0);
			continue;
		}
		for (unsigned i = 0; i < got; i++)
			assert_int_equal(
				((struct shmr_msg *)(out + i * SLOT))->key,
				expect++);
	}
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&s.bell->sleepers), 0);
}

static void test_names(void **state)
{
	char buf[SHMR_NAME_MAX];
	char longname[SHMR_NAME_MAX + 1];

	(void)state;
	memset(longname, 'a', SHMR_NAME_MAX);
	longname[SHMR_NAME_MAX] = '\0';
	assert_int_equal(shmr_name_copy(buf, "payments"), 0);
	assert_string_equal(buf, "payments");
	assert_int_equal(shmr_name_copy(buf, ""), -SHMR_E_NAME);
	assert_int_equal(shmr_name_copy(buf, NULL), -SHMR_E_NAME);
	assert_int_equal(shmr_name_copy(buf, longname), -SHMR_E_NAME);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_layout_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_full_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peek_keeps_burst_until_finish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_consumer_redelivers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_distrusts_the_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_producer_drops_unpublished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spsc_threads_with_bell, setup, teardown),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("lane", tests, NULL, NULL);
}
