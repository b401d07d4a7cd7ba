/*
 * The admin endpoint's order (control/admin.c), on a real domain made
 * here, without the bell thread: slots put into the endpoint's inbound
 * lanes as the dataplane puts them come out of shmr_ctl_admin_next() max
 * priority first, each priority in lane order, and a max slot queued
 * behind more than the staging store holds overtakes what is staged;
 * a management call's answer waits for the lcores to apply its version.
 */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

#include "admin.h"
#include "control_internal.h"
#include "domain.h"
#include "model.h"

struct fix {
	struct shmr_config cfg;
	struct shmr_ctl_model m;
	struct shmr_ctl_domain d;
	struct shmr_ctl_loop loop;
	struct shmr_ctl_admin a;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->cfg.domain, "unit-admin");
	f->cfg.slot_size = 128;
	f->cfg.lane_size = 64;
	f->cfg.lcores = 2;
	f->d = (struct shmr_ctl_domain){ .memfd = -1, .lanes_fd = -1,
					 .peer_ro_fd = -1 };
	f->loop.epfd = -1;
	if (shmr_ctl_model_init(&f->m, &f->cfg) < 0 ||
	    shmr_ctl_domain_create(&f->d, &f->cfg) < 0)
		return -1;
	shmr_ctl_admin_init(&f->a, &f->loop, &f->d, &f->m);
	if (shmr_ctl_admin_open(&f->a) < 0 ||
	    shmr_ctl_admin_stage_alloc(&f->a) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	shmr_ctl_admin_stage_free(&f->a);
	shmr_ctl_domain_close(&f->d);
	shmr_ctl_model_fini(&f->m);
	free(f);
	return 0;
}

/* What the dataplane does: slot @p text at @p prio into inbound lane
 * @p lane (the lcore's) of the admin endpoint. */
static void put(struct fix *f, uint32_t lane, uint8_t prio, uint8_t flags,
		const char *text)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)] = { 0 };
	struct shmr_msg *m = (struct shmr_msg *)buf;
	struct rte_ring *r = shmr_ctl_dom_lane(&f->d, f->a.pid.slot, lane);

	m->kind = SHMR_KIND_SEND;
	m->priority = prio;
	m->flags = flags;
	m->len = (uint32_t)strlen(text);
	memcpy(m->data, text, m->len);
	assert_int_equal(rte_ring_enqueue_burst_elem(r, m, f->d.geo.slot_size,
						     1, NULL),
			 1);
}

/* The next slot's payload, "" when there is none. */
static const char *next(struct fix *f)
{
	static uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	static char text[64];
	struct shmr_msg *m = (struct shmr_msg *)buf;

	if (!shmr_ctl_admin_next(&f->a, m))
		return "";
	snprintf(text, sizeof(text), "%.*s", (int)m->len,
		 (const char *)m->data);
	return text;
}

/* Everything waiting: max first, in lane order (lane 0, then lane 1),
 * each priority keeping its order; MessageRouteFailed (normal priority)
 * and management messages are "the rest", with the high ones. */
static void test_max_first_then_the_rest_in_order(void **state)
{
	struct fix *f = *state;

	put(f, 0, SHMR_PRIO_HIGH, 0, "h1");
	put(f, 0, SHMR_PRIO_NORMAL, SHMR_F_ROUTE_FAILED, "f1");
	put(f, 0, SHMR_PRIO_MAX, 0, "m1");
	put(f, 0, SHMR_PRIO_HIGH, 0, "h2");
	put(f, 1, SHMR_PRIO_HIGH, 0, "h3");
	put(f, 1, SHMR_PRIO_MAX, 0, "m2");
	put(f, 0, 7, 0, "odd"); /* a peer's priority byte: not max */
	assert_string_equal(next(f), "m1");
	assert_string_equal(next(f), "m2");
	assert_string_equal(next(f), "h1");
	assert_string_equal(next(f), "f1");
	assert_string_equal(next(f), "h2");
	assert_string_equal(next(f), "odd");
	assert_string_equal(next(f), "h3");
	assert_string_equal(next(f), "");
}

/* A max slot that arrives while the loop hands out high ones (a handler
 * ran) goes before the high ones staged earlier. */
static void test_max_arriving_later_overtakes(void **state)
{
	struct fix *f = *state;

	put(f, 0, SHMR_PRIO_HIGH, 0, "h1");
	put(f, 0, SHMR_PRIO_HIGH, 0, "h2");
	put(f, 0, SHMR_PRIO_HIGH, 0, "h3");
	assert_string_equal(next(f), "h1");
	put(f, 0, SHMR_PRIO_MAX, 0, "m1");
	put(f, 0, SHMR_PRIO_HIGH, 0, "h4");
	assert_string_equal(next(f), "m1");
	assert_string_equal(next(f), "h2");
	assert_string_equal(next(f), "h3");
	assert_string_equal(next(f), "h4");
	assert_string_equal(next(f), "");
}

/* The store holds lcores x lane_size slots (here 128, less than
 * SHMR_CTL_ADMIN_STAGE_MAX): with the store full of high slots and more
 * in the lane, a max slot behind them is staged as soon as there is room,
 * and overtakes the cap - 1 high slots then staged; nothing is lost, and
 * the high ones keep their order. */
static void test_store_bound(void **state)
{
	struct fix *f = *state;
	uint32_t cap = f->a.stage_cap, sent = 0, got = 0, lane_cap = 63;
	char t[16];

	assert_int_equal(cap, 128);
	/* The store full (both lanes' worth), then lane 0 full again with
	 * high slots and, last, one max slot. */
	for (uint32_t l = 0; l < 2; l++)
		for (uint32_t i = 0; i < lane_cap; i++) {
			snprintf(t, sizeof(t), "h%u", sent++);
			put(f, l, SHMR_PRIO_HIGH, 0, t);
		}
	snprintf(t, sizeof(t), "h%u", got++);
	assert_string_equal(next(f), t); /* stages all 126, hands out one */
	for (uint32_t i = 0; i < lane_cap - 1; i++) {
		snprintf(t, sizeof(t), "h%u", sent++);
		put(f, 0, SHMR_PRIO_HIGH, 0, t);
	}
	put(f, 0, SHMR_PRIO_MAX, 0, "max");
	/* 125 staged and 63 waiting: the max one is the 63rd in its lane,
	 * staged when (cap - 1) high ones are in the store. */
	while (got < sent - (cap - 1)) {
		snprintf(t, sizeof(t), "h%u", got++);
		assert_string_equal(next(f), t);
	}
	assert_string_equal(next(f), "max");
	while (got < sent) {
		snprintf(t, sizeof(t), "h%u", got++);
		assert_string_equal(next(f), t);
	}
	assert_string_equal(next(f), "");
}

/* The two lcores report spec versions @p v0 and @p v1 applied. */
static void lcores_at(struct fix *f, uint64_t v0, uint64_t v1)
{
	atomic_store(&shmr_ctl_dom_stats(&f->d, 0)->table_version, v0);
	atomic_store(&shmr_ctl_dom_stats(&f->d, 1)->table_version, v1);
}

/* How many replies the admin endpoint's outbound lane holds (taken out),
 * their refs in @p refs, in order. */
static unsigned replies(struct fix *f, uint64_t *refs, unsigned max)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *m = (struct shmr_msg *)buf;
	struct rte_ring *out = shmr_ctl_dom_lane(
		&f->d, f->a.pid.slot, SHMR_LANE_OUT(f->d.geo.nlcores));
	unsigned n = 0;

	while (rte_ring_dequeue_burst_elem(out, m, f->d.geo.slot_size, 1,
					   NULL) == 1) {
		assert_int_equal(m->kind, SHMR_KIND_REPLY);
		assert_true(n < max);
		refs[n++] = m->ref;
	}
	return n;
}

static void reply(struct fix *f, uint64_t ref, uint64_t version)
{
	struct shmr_msg req = { .kind = SHMR_KIND_CALL, .ref = ref,
				.from = { 3, 1 } };

	assert_int_equal(shmr_ctl_admin_reply_applied(&f->a, &req, 0, "2", 1,
						      version),
			 0);
}

/* A management call's answer waits until every lcore has applied the
 * version it names (the slowest lcore counts), keeps its order behind the
 * answers held before it, and goes anyway when its time is up (counted). */
static void test_replies_wait_for_the_lcores(void **state)
{
	struct fix *f = *state;
	uint64_t refs[8], now = shmr_ctl_now_ms();

	lcores_at(f, 5, 5);
	reply(f, 1, 5); /* applied: at once */
	assert_int_equal(replies(f, refs, 8), 1);
	assert_int_equal(refs[0], 1);

	reply(f, 2, 6);
	assert_int_equal(replies(f, refs, 8), 0);
	assert_true(shmr_ctl_admin_flush(&f->a, now, 0) != 0);
	assert_int_equal(replies(f, refs, 8), 0);
	lcores_at(f, 6, 5); /* one lcore is not enough */
	assert_true(shmr_ctl_admin_flush(&f->a, now, 0) != 0);
	assert_int_equal(replies(f, refs, 8), 0);
	reply(f, 3, 5); /* applied, but behind reply 2 */
	assert_int_equal(replies(f, refs, 8), 0);
	lcores_at(f, 6, 6);
	assert_int_equal(shmr_ctl_admin_flush(&f->a, now, 0), 0);
	assert_int_equal(replies(f, refs, 8), 2);
	assert_int_equal(refs[0], 2);
	assert_int_equal(refs[1], 3);
	assert_int_equal(f->a.held_late, 0);

	/* A dataplane that does not take version 7: sent at the bound. */
	reply(f, 4, 7);
	assert_true(shmr_ctl_admin_flush(&f->a, now, 0) != 0);
	assert_int_equal(replies(f, refs, 8), 0);
	assert_int_equal(shmr_ctl_admin_flush(&f->a,
					      shmr_ctl_now_ms() +
						      SHMR_CTL_ADMIN_HELD_MS,
					      0),
			 0);
	assert_int_equal(replies(f, refs, 8), 1);
	assert_int_equal(refs[0], 4);
	assert_int_equal(f->a.held_late, 1);

	/* The loop stops: everything held goes. */
	reply(f, 5, 9);
	reply(f, 6, 9);
	assert_int_equal(shmr_ctl_admin_flush(&f->a, now, 1), 0);
	assert_int_equal(replies(f, refs, 8), 2);
	assert_int_equal(refs[0], 5);
	assert_int_equal(refs[1], 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_max_first_then_the_rest_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_max_arriving_later_overtakes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_replies_wait_for_the_lcores, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
