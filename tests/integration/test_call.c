/*
 * shmr_call()'s contract through the real appliance (lanes of 64 slots,
 * one routing lcore, so a few dozen messages fill an inbox):
 *
 *   bad priority      shmr_call_prio() over SHMR_PRIO_MAX: -EINVAL at
 *                     once, nothing enqueued
 *   full inbox        a caller whose inbox another endpoint filled gets
 *                     -ENOBUFS, not its timeout; its next receives return
 *                     every queued message in order, and a call after
 *                     them is answered
 *   nested call       a worker that calls out while handling the first
 *                     message of a burst [call, A, B] and dies before B:
 *                     its replacement gets A and B again, flagged
 *                     redelivered (the call kept the burst in the ring)
 *
 * Waits are bounded retries on real conditions (lane counts read from
 * the domain as mapped here), never fixed sleeps; the call bounds are
 * liveness only.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>

#include <shmr/domain.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 30000

#define NKEYS 3u   /* route n's keys: the plug, A, B */
#define KEY_PLUG 0u
#define KEY_A 1u
#define KEY_B 2u

struct ctx {
	struct shmr_test_client cl; /* domain mapped here */
	char gate[128], rec[128];
	struct shmr_pid e, n; /* the routes' inboxes */
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

static int group_setup(void **state)
{
	char gate[128], rec[128], body[1024];
	struct ctx *c;

	client_make_gate_record("call", gate, rec, sizeof(gate), NKEYS);
	/* n calls e while handling a call, and dies at B's first delivery;
	 * its first two bursts wait at the gate, so the test decides what
	 * the second one holds. */
	snprintf(body, sizeof(body),
		 "lcores = 1;\nlane_size = 64;\npoll_mode = \"adaptive\";\n"
		 "routers = ( { name = \"r\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"e\"; },\n"
		 "            { type = 2; route = \"n\"; } );\n"
		 "  routes = (\n"
		 "    { name = \"e\"; program = \"shmr-test-worker\"; },\n"
		 "    { name = \"n\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--record\", \"%s\", \"--gate\", \"%s\",\n"
		 "               \"--gate-count\", \"2\", \"--call-out\", \"r/e\",\n"
		 "               \"--die-at\", \"%u\" ]; } ); } );\n",
		 rec, gate, KEY_B);
	c = client_ctx_start(sizeof(*c), "call", body, 0);
	memcpy(c->gate, gate, sizeof(gate));
	memcpy(c->rec, rec, sizeof(rec));
	c->e = client_route_pid(&c->cl, "r", "e");
	c->n = client_route_pid(&c->cl, "r", "n");
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;

	unlink(c->gate);
	unlink(c->rec);
	client_ctx_stop(c);
	return 0;
}

/* Slots of @p pid's inbound lane (one lcore) its consumer has not
 * released: queued, and peeked but not released. */
static int64_t inbox_count(struct ctx *c, struct shmr_pid pid)
{
	return shmr_lane_unconsumed(shmr_lane_at(c->cl.base, pid.slot, 0),
				    shmr_hdr(c->cl.base)->lane_size);
}

struct inbox_wait {
	struct ctx *c;
	struct shmr_pid pid;
	int64_t want;
};

static int inbox_holds(void *arg)
{
	struct inbox_wait *w = arg;

	return inbox_count(w->c, w->pid) == w->want;
}

static void wait_inbox(struct ctx *c, struct shmr_pid pid, int64_t want)
{
	struct inbox_wait w = { c, pid, want };

	if (!shmr_test_wait(inbox_holds, &w, WAIT_MS))
		fail_msg("inbox of slot %u holds %lld, wanted %lld", pid.slot,
			 (long long)inbox_count(c, pid), (long long)want);
}

/* A send from @p ep, retried while the lanes are full (bounded). */
static void send_key(struct shmr_endpoint *ep, struct shmr_pid to,
		     uint32_t type, uint64_t k)
{
	int rc, tries = 0;

	while ((rc = shmr_send(ep, to, type, k, &k, sizeof(k))) == -EAGAIN) {
		assert_true(++tries < 1000000);
		usleep(100);
	}
	assert_int_equal(rc, 0);
}

/* A priority the dataplane would drop: refused before anything is
 * enqueued, so the call does not wait for an answer that never comes. */
static void test_bad_priority(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid me = shmr_endpoint_pid(c->cl.ep);
	uint32_t nl = shmr_hdr(c->cl.base)->nlcores;
	struct rte_ring *out = shmr_lane_at(c->cl.base, me.slot,
					    SHMR_LANE_OUT(nl));
	struct rte_ring *high = shmr_lane_at(c->cl.base, me.slot,
					     SHMR_LANE_OUT_HIGH(nl));
	/* This thread is both lanes' producer: it reads its own writes. */
	uint32_t out_tail = out->prod.tail, high_tail = high->prod.tail;
	struct shmr_test_stats st;

	assert_int_equal(shmr_call_prio(c->cl.ep, client_lookup(&c->cl, "r"),
					(enum shmr_priority)(SHMR_PRIO_MAX + 1),
					1, 0, "s", 1, &st, sizeof(st),
					CLIENT_CALL_MS),
			 -EINVAL);
	assert_int_equal(out->prod.tail, out_tail);
	assert_int_equal(high->prod.tail, high_tail);
	/* The endpoint still calls. */
	assert_int_equal(shmr_call(c->cl.ep, c->e, 0, 0, "s", 1, &st,
				   sizeof(st), CLIENT_CALL_MS),
			 (int)sizeof(st));
}

/* Another endpoint fills our inbox; our call to e cannot be answered
 * through it: -ENOBUFS, and nothing queued is lost. */
static void test_full_inbox(void **state)
{
	struct ctx *c = *state;
	struct shmr_endpoint *b;
	struct shmr_pid me = shmr_endpoint_pid(c->cl.ep), bp;
	const struct shmr_msg *m[256];
	struct shmr_test_stats st;
	uint32_t cap = shmr_hdr(c->cl.base)->lane_size - 1;
	const uint64_t total = 100; /* our inbox's 63, the rest held back */
	uint64_t got = 0;
	int n;

	assert_int_equal(shmr_endpoint_open(c->cl.d, &b), 0);
	bp = shmr_endpoint_pid(b);
	for (uint64_t k = 0; k < total; k++)
		send_key(b, me, 7, k);
	wait_inbox(c, me, cap);
	assert_int_equal(shmr_call(c->cl.ep, c->e, 0, 0, "s", 1, &st,
				   sizeof(st), CLIENT_CALL_MS),
			 -ENOBUFS);
	while (got < total) {
		n = shmr_recv_burst(c->cl.ep, m, 256, CLIENT_CALL_MS);
		assert_true(n > 0);
		for (int i = 0; i < n; i++, got++) {
			assert_int_equal(m[i]->kind, SHMR_KIND_SEND);
			assert_int_equal(m[i]->type, 7);
			assert_int_equal(m[i]->key, got);
			assert_int_equal(m[i]->from.slot, bp.slot);
			assert_int_equal(m[i]->flags & SHMR_F_REDELIVERED, 0);
		}
	}
	/* Drained: the call is answered (the first one's late answer, if
	 * it comes now, is dropped as stale). */
	assert_int_equal(shmr_call(c->cl.ep, c->e, 0, 0, "s", 1, &st,
				   sizeof(st), CLIENT_CALL_MS),
			 (int)sizeof(st));
	assert_string_equal(st.tag, "e");
	assert_int_equal(shmr_recv_burst(c->cl.ep, m, 256, 0), 0);
	shmr_endpoint_close(b);
}

static int n_busy(void *arg)
{
	struct ctx *c = arg;

	return client_busy(&c->cl, c->n) != 0;
}

struct caller {
	struct shmr_endpoint *ep;
	struct shmr_pid to;
	int rc;
};

static void *call_n(void *arg)
{
	struct caller *k = arg;
	struct shmr_test_stats st;

	k->rc = shmr_call(k->ep, k->to, 0, 0, "c", 1, &st, sizeof(st),
			  WAIT_MS);
	return NULL;
}

/* n's second burst is [call, A, B]: it calls e while handling the call,
 * handles A, dies at B.  Nothing is lost: A and B come again. */
static void test_nested_call_keeps_burst(void **state)
{
	struct ctx *c = *state;
	struct client_record_wait w = { c->gate, c->rec, NKEYS, -1 };
	unsigned char counts[2 * NKEYS];
	struct caller k = { NULL, c->n, 0 };
	pthread_t t;

	/* The plug: n takes it (its busy flag says so) and waits at the
	 * gate with it. */
	send_key(c->cl.ep, c->n, 2, KEY_PLUG);
	assert_true(shmr_test_wait(n_busy, c, WAIT_MS));
	wait_inbox(c, c->n, 1);
	/* Then the call (from its own endpoint and thread: it blocks), A
	 * and B, in this order, behind the plug. */
	assert_int_equal(shmr_endpoint_open(c->cl.d, &k.ep), 0);
	assert_int_equal(pthread_create(&t, NULL, call_n, &k), 0);
	wait_inbox(c, c->n, 2);
	send_key(c->cl.ep, c->n, 2, KEY_A);
	send_key(c->cl.ep, c->n, 2, KEY_B);
	wait_inbox(c, c->n, 4);
	/* Let the gates go until B is recorded: by n's replacement. */
	assert_true(shmr_test_wait(client_gate_recorded, &w, WAIT_MS));
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(k.rc, (int)sizeof(struct shmr_test_stats));
	client_read_record(c->rec, counts, NKEYS);
	assert_int_equal(counts[KEY_PLUG], 1);
	assert_int_equal(counts[NKEYS + KEY_PLUG], 0);
	/* A before the death and again after; B after only. */
	assert_int_equal(counts[KEY_A], 2);
	assert_int_equal(counts[NKEYS + KEY_A], 1);
	assert_int_equal(counts[KEY_B], 1);
	assert_int_equal(counts[NKEYS + KEY_B], 1);
	shmr_endpoint_close(k.ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_priority),
		cmocka_unit_test(test_full_inbox),
		cmocka_unit_test(test_nested_call_keeps_burst),
	};
	return cmocka_run_group_tests_name("call", tests, group_setup,
					   group_teardown);
}
