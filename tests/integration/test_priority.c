/*
 * Priorities on a router's admin path (issue 12), against the real
 * daemons: max-priority messages are handled before the high-priority ones
 * already queued, as Ergo's urgent queue goes before its system queue.
 *
 * The router's handlers (prio_handlers.c) write down the order in which
 * they get admin messages and hold the control plane on the first one
 * until the test releases it.  While it is held the test queues high
 * sends, a failed routed send (a MessageRouteFailed), max sends and a max
 * call, and waits until the dataplane has put every one of them into the
 * admin endpoint's lanes (read from the domain); then it releases the
 * handler.  The max ones must come first, in the order sent, then the rest
 * in the order sent, nothing lost and nothing twice.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char dir[64];
	struct shmr_endpoint *caller; /* the max call's own endpoint */
	uint32_t want;                /* for admin_has() */
	/* The max call, made from a thread (it waits for its reply) */
	int call_rc;
	char call_ans[16];
};

static char *path_in(struct ctx *x, const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", x->dir, name);
	return p;
}

static void release(struct ctx *x)
{
	FILE *f = fopen(path_in(x, "release"), "w");

	if (f)
		fclose(f);
}

static int setup(void **state)
{
	static struct ctx x;
	char conf[1024];

	memset(&x, 0, sizeof(x));
	snprintf(x.dir, sizeof(x.dir), "/tmp/shmr-prio-XXXXXX");
	if (!mkdtemp(x.dir))
		return -1;
	snprintf(conf, sizeof(conf),
		 "lane_size = 64; stop_grace_ms = 200;\n"
		 "routers = ( { name = \"r\"; behaviour = \"type\";\n"
		 "  handlers = \"%s\"; handlers_arg = \"%s\";\n"
		 "  types = ( { type = 1; route = \"w\"; },\n"
		 "            { type = 2; route = \"nobody\"; } );\n"
		 "  routes = ( { name = \"w\"; program = \"shmr-test-worker\"; }"
		 " ); } );\n",
		 getenv("SHMR_PRIO_HANDLERS"), x.dir);
	if (shmr_test_client_start(&x.cl, "prio", conf, 0) < 0 ||
	    shmr_lookup(x.cl.d, "r", &x.router) < 0 ||
	    shmr_endpoint_open(x.cl.d, &x.caller) < 0)
		return -1;
	*state = &x;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;
	const char *files[] = { "log", "held", "release" };
	int left;

	/* Never leave the control plane held (a failed assert). */
	release(x);
	shmr_endpoint_close(x->caller);
	left = shmr_test_client_stop(&x->cl);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(path_in(x, files[i]));
	rmdir(x->dir);
	return left == 0 ? 0 : -1;
}

/* Slots the dataplane has put into the admin endpoint's inbound lanes
 * that the control plane has not taken yet. */
static uint32_t admin_queued(struct ctx *x)
{
	struct shmr_domain_hdr *h = shmr_hdr(x->cl.base);
	/* Acquire: pairs with the control plane's release store. */
	uint64_t v = atomic_load_explicit(&h->admin_pid, memory_order_acquire);
	uint32_t n = 0;

	for (uint32_t i = 0; i < h->nlcores; i++)
		n += shmr_lane_pending_sc(
			shmr_lane_at(x->cl.base, (uint32_t)v, i));
	return n;
}

static int admin_has(void *arg)
{
	struct ctx *x = arg;

	return admin_queued(x) == x->want;
}

static int file_exists(void *arg)
{
	return access(arg, F_OK) == 0;
}

/* One send, and the wait until the dataplane has put it into the admin
 * lanes: so the arrival order is the order of the calls (normal and high
 * priority leave the client by different lanes). */
static void send_text(struct ctx *x, enum shmr_priority prio, uint32_t type,
		      const char *text)
{
	int rc;

	while ((rc = shmr_send_prio(x->cl.ep, x->router, prio, type, 0, text,
				    strlen(text))) == -EAGAIN)
		usleep(100);
	assert_int_equal(rc, 0);
	x->want++;
	assert_true(shmr_test_wait(admin_has, x, 30000));
}

static void *max_call(void *arg)
{
	struct ctx *x = arg;

	x->call_rc = shmr_call_prio(x->caller, x->router, SHMR_PRIO_MAX, 0, 0,
				    "c1", 2, x->call_ans,
				    sizeof(x->call_ans) - 1, 60000);
	return NULL;
}

/* The log the handlers wrote, once it has @p lines lines. */
static int log_lines(void *arg)
{
	struct ctx *x = arg;
	FILE *f = fopen(path_in(x, "log"), "r");
	uint32_t n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n >= x->want;
}

static void test_max_priority_overtakes_queued_high(void **state)
{
	struct ctx *x = *state;
	const char *want = "send h0\n"
			   "send m1\nsend m2\ncall c1\n"
			   "send h1\nsend h2\nfailed f1\nsend h3\n";
	char got[512];
	pthread_t thr;
	size_t n;
	FILE *f;

	/* The first high send holds the control plane in its handler (it
	 * took the slot: nothing is queued). */
	while (shmr_send_prio(x->cl.ep, x->router, SHMR_PRIO_HIGH, 1, 0, "h0",
			      2) == -EAGAIN)
		usleep(100);
	assert_true(shmr_test_wait(file_exists, path_in(x, "held"), 30000));
	assert_true(shmr_test_wait(admin_has, x, 30000));

	/* Queued behind it, in this order: high, high, a send that fails
	 * routing (type 2 names nothing: a MessageRouteFailed), high, two
	 * max sends, and a max call. */
	send_text(x, SHMR_PRIO_HIGH, 1, "h1");
	send_text(x, SHMR_PRIO_HIGH, 1, "h2");
	send_text(x, SHMR_PRIO_NORMAL, 2, "f1");
	send_text(x, SHMR_PRIO_HIGH, 1, "h3");
	send_text(x, SHMR_PRIO_MAX, 1, "m1");
	send_text(x, SHMR_PRIO_MAX, 1, "m2");
	assert_int_equal(pthread_create(&thr, NULL, max_call, x), 0);
	x->want = 7;
	assert_true(shmr_test_wait(admin_has, x, 30000));

	release(x);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(x->call_rc, 2);
	assert_string_equal(x->call_ans, "ok");

	/* Max first, each priority in the order sent, nothing lost and
	 * nothing twice. */
	x->want = 8;
	assert_true(shmr_test_wait(log_lines, x, 30000));
	f = fopen(path_in(x, "log"), "r");
	assert_non_null(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = 0;
	assert_string_equal(got, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_priority_overtakes_queued_high),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
