/*
 * Scatter-gather, tail-chopping and balancing through the real appliance,
 * with shmr-test-worker routes (a call is answered with the worker's stats:
 * its route name first).  Slow routees are gated ones: they hold what they
 * received until the test opens their FIFO.
 *
 *   scatter-gather  the free routee's reply wins while two are held; their
 *                   late replies are dropped and counted (shmr:discarded);
 *                   every routee held: SHMR_E_TIMEOUT after within_ms; no
 *                   routee: SHMR_E_NO_ROUTEES at once; with two routing
 *                   lcores every call is still answered
 *   tail-chopping   a call first tried on the held routee is answered by
 *                   the other one, tried after interval_ms
 *   balancing       a pool of three where one routee holds its message:
 *                   the other two take all the work; kill -9 of a worker
 *                   in the middle of a message loses nothing queued (every
 *                   key recorded once; a second time only when flagged
 *                   redelivered)
 *
 * Waits are bounded retries on real conditions, never fixed sleeps, and
 * nothing is asserted about time.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/domain.h>
#include <shmr/proto.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 30000
#define CALL_MS 10000

struct ctx {
	struct shmr_test_client cl; /* domain mapped here, read-only */
	char ans[SHMR_PROTO_MAX];
	const char *router, *gate, *rec, *hold, *want;
	long long want_value;
	const char *key;
	struct shmr_pid pid;
	unsigned nkeys;
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

static struct ctx *start(const char *tag, const char *body)
{
	return client_ctx_start(sizeof(struct ctx), tag, body, 0);
}

static long long inspect(struct ctx *c, const char *key)
{
	return client_inspect(&c->cl, c->router, c->ans, sizeof(c->ans), key);
}

/* A call through the router: 0 and the answering worker's stats, or the
 * error. */
static int call(struct ctx *c, struct shmr_test_stats *st)
{
	int rc = shmr_call(c->cl.ep, client_lookup(&c->cl, c->router), 1, 0,
			   "q", 1, st, sizeof(*st), CALL_MS);

	if (rc >= 0 && rc != (int)sizeof(*st))
		return -EPROTO;
	if (rc >= 0)
		st->tag[sizeof(st->tag) - 1] = '\0';
	return rc < 0 ? rc : 0;
}

/* Release whoever waits at the gate FIFO c->gate (every reader blocked in
 * open()); 1 when someone was there. */
static int gate_poke(struct ctx *c)
{
	int fd = open(c->gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		assert_int_equal(errno, ENXIO); /* nobody at the gate */
		return 0;
	}
	close(fd);
	return 1;
}

/* Keep releasing the gate until inspect's c->key reaches c->want_value. */
static int poke_until_value(void *arg)
{
	struct ctx *c = arg;

	(void)gate_poke(c);
	return inspect(c, c->key) >= c->want_value;
}

static void release_until(struct ctx *c, const char *key, long long value)
{
	c->key = key;
	c->want_value = value;
	if (!shmr_test_wait(poke_until_value, c, WAIT_MS))
		fail_msg("%s stayed at %lld, wanted %lld", key,
			 inspect(c, key), value);
}

/* ---- scatter-gather --------------------------------------------------- */

/* Routes "free" (answers at once) and "held0", "held1" (gated on every
 * call they get: each opening of the FIFO lets one burst through). */
static struct ctx *start_sg(const char *tag, char *gate, size_t cap,
			    const char *extra, unsigned within_ms)
{
	char body[2048];
	struct ctx *c;

	client_make_fifo(gate, cap, tag);
	snprintf(body, sizeof(body),
		 "%s\n"
		 "routers = ( { name = \"sg\"; behaviour = \"scatter-gather\";\n"
		 "  within_ms = %u;\n"
		 "  routes = (\n"
		 "    { name = \"held0\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--gate\", \"%s\" ]; },\n"
		 "    { name = \"free\"; program = \"shmr-test-worker\"; },\n"
		 "    { name = \"held1\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--gate\", \"%s\" ]; } ); },\n"
		 "  { name = \"nobody\"; behaviour = \"scatter-gather\";\n"
		 "    within_ms = 1000; routees = [ \"not-registered\" ]; } );\n",
		 extra, within_ms, gate, gate);
	c = start(tag, body);
	c->router = "sg";
	c->gate = gate;
	return c;
}

/*
 * Every call goes to all three; the free routee's reply (the first) is
 * the caller's, from the worker, with the caller's ref (libshmr checks);
 * the held routees' replies, once let go, are dropped and counted.  The
 * routees see the call come from the router.
 */
static void test_scatter_gather_first_reply_wins(void **state)
{
	struct shmr_test_stats st;
	char gate[128];
	struct ctx *c;
	(void)state;

	c = start_sg("sgfirst", gate, sizeof(gate), "", 60000);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(call(c, &st), 0);
		assert_string_equal(st.tag, "free");
		assert_int_equal(st.last_call_from.slot,
				 client_lookup(&c->cl, "sg").slot);
	}
	/* Ten late replies once the held routees answer. */
	release_until(c, "shmr:discarded", 10);
	assert_int_equal(inspect(c, "shmr:discarded"), 10);
	assert_int_equal(inspect(c, "shmr:failed"), 0);
	assert_int_equal(inspect(c, "shmr:forwarded"), 15); /* 3 per call */
	/* The caller is not confused by what was dropped: a direct call
	 * still gets its own answer (the free worker saw five calls, and
	 * this one). */
	assert_int_equal(
		client_stats(&c->cl, client_route_pid(&c->cl, "sg", "free"),
			     &st),
		0);
	assert_int_equal(st.calls, 5 + 1);
	client_ctx_stop(c);
	unlink(gate);
}

/* Every routee held: the caller gets SHMR_E_TIMEOUT (from the router,
 * before its own wait ends); the replies that come later are dropped.  A
 * router with no routee taking part answers SHMR_E_NO_ROUTEES. */
static void test_scatter_gather_timeout_and_no_routees(void **state)
{
	char gate[128], body[2048];
	struct shmr_test_stats st;
	struct ctx *c;
	(void)state;

	client_make_fifo(gate, sizeof(gate), "sgtimeout");
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"sg\"; behaviour = \"scatter-gather\";\n"
		 "  within_ms = 200;\n"
		 "  routes = (\n"
		 "    { name = \"held0\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--gate\", \"%s\" ]; },\n"
		 "    { name = \"held1\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--gate\", \"%s\" ]; } ); },\n"
		 "  { name = \"nobody\"; behaviour = \"scatter-gather\";\n"
		 "    within_ms = 60000; routees = [ \"not-registered\" ]; } );\n",
		 gate, gate);
	c = start("sgtimeout", body);
	c->router = "sg";
	c->gate = gate;
	assert_int_equal(call(c, &st), -SHMR_E_TIMEOUT);
	assert_int_equal(inspect(c, "shmr:failed"), 1);
	release_until(c, "shmr:discarded", 2);
	/* Nobody to ask. */
	c->router = "nobody";
	assert_int_equal(call(c, &st), -SHMR_E_NO_ROUTEES);
	assert_int_equal(inspect(c, "shmr:failed"), 1);
	client_ctx_stop(c);
	unlink(gate);
}

/* Two routing lcores: a reply may be polled by the lcore that did not
 * send the call; it still reaches its caller, once. */
static void test_scatter_gather_two_lcores(void **state)
{
	struct shmr_test_stats st;
	char gate[128];
	struct ctx *c;
	(void)state;

	c = start_sg("sglcores", gate, sizeof(gate), "lcores = 2;", 60000);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(call(c, &st), 0);
		assert_string_equal(st.tag, "free");
	}
	release_until(c, "shmr:discarded", 16);
	client_ctx_stop(c);
	unlink(gate);
}

/* ---- tail-chopping ---------------------------------------------------- */

/*
 * Routees "held" (gated) and "free".  Calls until one was tried on the
 * held routee first (its busy flag shows it holds a call): that call too
 * was answered by the free one, tried an interval later.  Calls that
 * went to "free" first are answered before the interval, and "held"
 * never sees them.
 */
static void test_tail_chopping_tries_the_next_routee(void **state)
{
	char gate[128], body[2048];
	struct shmr_test_stats st;
	struct shmr_pid held;
	struct ctx *c;
	unsigned calls = 0;
	(void)state;

	client_make_fifo(gate, sizeof(gate), "tail");
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"tc\"; behaviour = \"tail-chopping\";\n"
		 "  within_ms = 60000; interval_ms = 50;\n"
		 "  routes = (\n"
		 "    { name = \"held\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--gate\", \"%s\", \"--gate-count\", \"1\" ]; },\n"
		 "    { name = \"free\"; program = \"shmr-test-worker\"; } ); } );\n",
		 gate);
	c = start("tail", body);
	c->router = "tc";
	c->gate = gate;
	held = client_route_pid(&c->cl, "tc", "held");
	/* Each call has even odds to try "held" first: 64 calls miss it
	 * with odds 2^-64. */
	while (!client_busy(&c->cl, held)) {
		assert_true(calls++ < 64);
		assert_int_equal(call(c, &st), 0);
		assert_string_equal(st.tag, "free");
	}
	/* That call was answered, by the other routee. */
	assert_int_equal(inspect(c, "shmr:failed"), 0);
	/* Once let go, the held routee's answer is late: dropped. */
	release_until(c, "shmr:discarded", 1);
	client_ctx_stop(c);
	unlink(gate);
}

/* ---- balancing -------------------------------------------------------- */

#define BAL_N 300u /* keys 1..BAL_N; key 0 is the one held */

static int hold_file_written(void *arg)
{
	return access(((struct ctx *)arg)->hold, F_OK) == 0;
}

static int routees_are(void *arg)
{
	struct ctx *c = arg;

	return client_routees(&c->cl, c->router, c->ans, sizeof(c->ans)) >=
		       0 &&
	       strcmp(c->ans, c->want) == 0;
}

/* Every key 0..c->nkeys-1 recorded at least once. */
static int all_recorded(void *arg)
{
	struct ctx *c = arg;
	unsigned char counts[2 * (BAL_N + 1)];
	int fd = open(c->rec, O_RDONLY | O_CLOEXEC);
	int ok = 1;

	assert_true(fd >= 0);
	assert_int_equal(read(fd, counts, 2 * c->nkeys),
			 (ssize_t)(2 * c->nkeys));
	close(fd);
	for (unsigned k = 0; k < c->nkeys; k++)
		ok &= counts[k] >= 1;
	return ok;
}

static int key0_redelivered(void *arg)
{
	struct ctx *c = arg;
	unsigned char mark = 0;
	int fd = open(c->rec, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &mark, 1, BAL_N + 1), 1);
	close(fd);
	return mark != 0;
}

static long long os_pid_of(struct ctx *c, const char *route)
{
	char key[64];

	snprintf(key, sizeof(key), "shmr:route:%s:os_pid", route);
	return inspect(c, key);
}

static int restarted(void *arg)
{
	struct ctx *c = arg;
	long long pid = os_pid_of(c, "work:0");

	return pid > 0 && pid != c->want_value;
}

/*
 * A balancing pool: work:0 takes key 0 and keeps it (--hold-once), then
 * work:1 and work:2 join (AdjustPoolSize) and take every other key, since
 * a routee gets its next message only once it is done with the last.
 * Then, with the queue full of slow work, work:0 (in the middle of key 0)
 * and work:1 (in the middle of some key) are killed with SIGKILL: every
 * key is still recorded exactly once, or twice when the second time was
 * flagged redelivered (the message a dead worker held goes to its
 * replacement).
 */
static void test_balancing(void **state)
{
	char rec[128], hold[128], body[2048];
	unsigned char counts[2 * (BAL_N + 1)];
	struct shmr_test_stats st;
	struct shmr_pid work;
	uint64_t taken = 0;
	struct ctx *c;
	int fd;
	(void)state;

	client_tmp_path(rec, sizeof(rec), "bal-rec");
	fd = open(rec, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(2 * (BAL_N + 1))), 0);
	close(fd);
	client_tmp_path(hold, sizeof(hold), "bal-hold");
	snprintf(body, sizeof(body),
		 "stop_grace_ms = 500;\n"
		 "routers = ( { name = \"work\"; behaviour = \"balancing\";\n"
		 "  pool = { size = 1; program = \"shmr-test-worker\";\n"
		 "    args = [ \"--record\", \"%s\", \"--hold-once\", \"%s\",\n"
		 "             \"--spin-ns\", \"2000000\" ]; }; } );\n",
		 rec, hold);
	c = start("balancing", body);
	c->router = "work";
	c->rec = rec;
	c->hold = hold;
	work = client_lookup(&c->cl, "work");

	/* work:0 holds key 0 for good; its replacement will not. */
	assert_int_equal(shmr_send(c->cl.ep, work, 1, 0, NULL, 0), 0);
	assert_true(shmr_test_wait(hold_file_written, c, WAIT_MS));
	assert_int_equal(shmr_call_prio(c->cl.ep, work, SHMR_PRIO_HIGH,
					SHMR_TYPE_ADJUST_POOL_SIZE, 2, NULL, 0,
					c->ans, sizeof(c->ans) - 1, CALL_MS),
			 1);
	c->want = "work:0\nwork:1\nwork:2\n";
	assert_true(shmr_test_wait(routees_are, c, WAIT_MS));

	/* The first half: all of it to work:1 and work:2. */
	for (uint64_t k = 1; k <= BAL_N / 2; k++)
		while (shmr_send(c->cl.ep, work, 1, k, NULL, 0) == -EAGAIN)
			;
	c->nkeys = BAL_N / 2 + 1;
	assert_true(shmr_test_wait(all_recorded, c, WAIT_MS));
	for (unsigned i = 1; i < 3; i++) {
		char name[16];
		struct shmr_pid w;

		snprintf(name, sizeof(name), "work:%u", i);
		w = client_route_pid(&c->cl, "work", name);
		assert_int_equal(client_stats(&c->cl, w, &st), 0);
		assert_true(st.count > 0); /* both took work */
		taken += st.count;
	}
	assert_int_equal(taken, BAL_N / 2);

	/* The second half, then two workers killed mid-message while the
	 * queue still holds most of it (2 ms a message each). */
	for (uint64_t k = BAL_N / 2 + 1; k <= BAL_N; k++)
		while (shmr_send(c->cl.ep, work, 1, k, NULL, 0) == -EAGAIN)
			;
	c->want_value = os_pid_of(c, "work:0");
	assert_true(c->want_value > 0);
	assert_int_equal(kill((pid_t)c->want_value, SIGKILL), 0);
	assert_true(os_pid_of(c, "work:1") > 0);
	assert_int_equal(kill((pid_t)os_pid_of(c, "work:1"), SIGKILL), 0);
	assert_true(shmr_test_wait(restarted, c, WAIT_MS));

	c->nkeys = BAL_N + 1;
	assert_true(shmr_test_wait(all_recorded, c, WAIT_MS));
	/* Key 0, held by the first work:0, comes to its replacement again,
	 * flagged. */
	assert_true(shmr_test_wait(key0_redelivered, c, WAIT_MS));
	fd = open(rec, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, counts, sizeof(counts)),
			 (ssize_t)sizeof(counts));
	close(fd);
	for (unsigned k = 0; k <= BAL_N; k++)
		if (counts[k] != 1 &&
		    !(counts[k] == 2 && counts[BAL_N + 1 + k]))
			fail_msg("key %u received %u times (redelivered %u)",
				 k, counts[k], counts[BAL_N + 1 + k]);
	assert_int_equal(counts[0], 2);
	client_ctx_stop(c);
	unlink(rec);
	unlink(hold);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scatter_gather_first_reply_wins),
		cmocka_unit_test(test_scatter_gather_timeout_and_no_routees),
		cmocka_unit_test(test_scatter_gather_two_lcores),
		cmocka_unit_test(test_tail_chopping_tries_the_next_routee),
		cmocka_unit_test(test_balancing),
	};
	return cmocka_run_group_tests_name("gather", tests, NULL, NULL);
}
