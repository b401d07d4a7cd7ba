/*
 * Endpoints attaching and detaching while a stream runs (issue 16: the
 * dataplane polls only the endpoints whose work bit is set, shmr/notify.h and
 * dataplane/lcore.c).  Real daemons, two routing lcores, in the poll mode
 * given as argv[1] (adaptive or busy).
 *
 * One thread streams numbered messages from one endpoint to another (the
 * receiver checks every one arrives, once, in order); meanwhile a second
 * thread, on an attach of its own, opens CYCLES endpoints one after the
 * other, holding up to HOLD = 1,000 of them at once (so the domain's
 * default 1,024 slots, max_endpoints, are taken and reused with new
 * generations all the time: a domain of main's 128 fixed slots fails the
 * open of the 124th), and each new
 * endpoint sends one message to the receiver carrying its own PID before it
 * is closed in its turn.  The receiver checks each of those arrived exactly
 * once, from the endpoint whose PID it carries (none lost, none
 * misrouted).  Nothing here is timed but a generous liveness bound.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shmr_test_app.h"

#define CYCLES 3000u   /* endpoints opened and closed */
#define HOLD 1000u     /* of them open at once, at most */
#define TYPE_STREAM 1u
#define TYPE_CHURN 2u
#define STALL_MS 30000 /* liveness: the receiver gives up after this */

/* The stream goes endpoint to endpoint; the router is what a
 * configuration needs (its route's worker is one more idle endpoint). */
#define CONF_FMT                                                               \
	"lcores = 2;\npoll_mode = \"%s\";\n"                                   \
	"routers = ( { name = \"r\"; behaviour = \"type\";\n"                \
	"  types = ( { type = 1; route = \"a\"; } );\n"                        \
	"  routes = ( { name = \"a\"; program = \"shmr-echo-worker\"; } ); } );\n"

struct sweep {
	struct shmr_test_client c;
	struct shmr_endpoint *rx;
	struct shmr_pid rx_pid, tx_pid;
	atomic_int churn_done, stream_done;
	atomic_uint_fast64_t sent; /* stream messages sent */
	/* receiver */
	uint64_t got, bad_order, misrouted, dup;
	unsigned char seen[CYCLES];
	unsigned churn_got;
	int churn_err;
	char churn_what[160];
};

static void *stream(void *arg)
{
	struct sweep *s = arg;
	uint64_t k = 0;

	while (!atomic_load(&s->churn_done)) {
		int rc = shmr_send(s->c.ep, s->rx_pid, TYPE_STREAM, k, &k,
				   sizeof(k));

		if (rc == 0)
			atomic_store(&s->sent, ++k);
		else if (rc != -EAGAIN)
			break;
		else
			sched_yield();
	}
	atomic_store(&s->stream_done, 1);
	return NULL;
}

static void *churn(void *arg)
{
	struct sweep *s = arg;
	struct shmr_domain *d = NULL;
	struct shmr_endpoint *held[HOLD] = { 0 };
	int rc = shmr_attach_path(s->c.app.sock, &d);

	for (unsigned i = 0; rc == 0 && i < CYCLES; i++) {
		struct shmr_endpoint **e = &held[i % HOLD];
		struct shmr_pid me;

		if (*e && (rc = shmr_endpoint_close(*e)) < 0) {
			snprintf(s->churn_what, sizeof(s->churn_what),
				 "close before cycle %u", i);
			break;
		}
		*e = NULL;
		rc = shmr_endpoint_open(d, e);
		if (rc < 0) {
			snprintf(s->churn_what, sizeof(s->churn_what),
				 "open of cycle %u", i);
			break;
		}
		me = shmr_endpoint_pid(*e);
		do
			rc = shmr_send(*e, s->rx_pid, TYPE_CHURN, i, &me,
				       sizeof(me));
		while (rc == -EAGAIN);
		if (rc < 0)
			snprintf(s->churn_what, sizeof(s->churn_what),
				 "send of cycle %u", i);
	}
	for (unsigned i = 0; i < HOLD; i++)
		if (held[i])
			(void)shmr_endpoint_close(held[i]);
	if (d)
		shmr_detach(d);
	s->churn_err = rc;
	atomic_store(&s->churn_done, 1);
	return NULL;
}

static void handle(struct sweep *s, const struct shmr_msg *m)
{
	struct shmr_pid p;

	if (m->type == TYPE_STREAM) {
		if (m->key != s->got || m->from.slot != s->tx_pid.slot ||
		    m->from.gen != s->tx_pid.gen)
			s->bad_order++;
		s->got = m->key + 1;
		return;
	}
	if (m->type != TYPE_CHURN || m->key >= CYCLES ||
	    m->len != sizeof(p)) {
		s->misrouted++;
		return;
	}
	memcpy(&p, m->data, sizeof(p));
	if (p.slot != m->from.slot || p.gen != m->from.gen)
		s->misrouted++;
	else if (s->seen[m->key]++)
		s->dup++;
	else
		s->churn_got++;
}

/* Receive until the stream's last message and every churn message came,
 * or nothing came for STALL_MS. */
static void receive(struct sweep *s)
{
	int idle_ms = 0;

	for (;;) {
		const struct shmr_msg *m[32];
		int n = shmr_recv_burst(s->rx, m, 32, 10);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			handle(s, m[i]);
		if (atomic_load(&s->stream_done) &&
		    s->got >= atomic_load(&s->sent) &&
		    (s->churn_got == CYCLES || atomic_load(&s->churn_done)) &&
		    s->churn_got + s->dup >= CYCLES)
			return;
		idle_ms = n ? 0 : idle_ms + 10;
		if (idle_ms >= STALL_MS)
			return;
	}
}

static void run(const char *mode)
{
	struct sweep *s = calloc(1, sizeof(*s));
	char conf[512];
	pthread_t ts, tc;

	assert_non_null(s);
	snprintf(conf, sizeof(conf), CONF_FMT, mode);
	assert_int_equal(shmr_test_client_start(&s->c, "sweep", conf, -1), 0);
	assert_int_equal(shmr_endpoint_open(s->c.d, &s->rx), 0);
	s->rx_pid = shmr_endpoint_pid(s->rx);
	s->tx_pid = shmr_endpoint_pid(s->c.ep);
	assert_int_equal(pthread_create(&ts, NULL, stream, s), 0);
	assert_int_equal(pthread_create(&tc, NULL, churn, s), 0);
	receive(s);
	assert_int_equal(pthread_join(tc, NULL), 0);
	assert_int_equal(pthread_join(ts, NULL), 0);

	if (s->churn_err < 0)
		fail_msg("%s: %s", s->churn_what, shmr_strerror(s->churn_err));
	print_message("%s poll: %" PRIu64 " stream messages beside %u "
		      "endpoints opened and closed; stream received %" PRIu64
		      ", churn %u\n",
		      mode, (uint64_t)atomic_load(&s->sent), CYCLES, s->got,
		      s->churn_got);
	assert_true(atomic_load(&s->sent) > 0);
	assert_int_equal(s->got, atomic_load(&s->sent));
	assert_int_equal(s->bad_order, 0);
	assert_int_equal(s->misrouted, 0);
	assert_int_equal(s->dup, 0);
	assert_int_equal(s->churn_got, CYCLES);
	assert_int_equal(shmr_endpoint_close(s->rx), 0);
	assert_int_equal(shmr_test_client_stop(&s->c), 0);
	free(s);
}

static const char *g_mode = "adaptive";

static void test_attach_sweep(void **state)
{
	(void)state;
	run(g_mode);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_sweep),
	};

	if (argc > 1)
		g_mode = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
