/*
 * Pekko's special messages through the real appliance: the Broadcast
 * envelope (a send flagged SHMR_F_BROADCAST reaches every routee of the
 * router, whatever its logic), Broadcast(PoisonPill) draining a pool, and
 * the router's own messages (PoisonPill, Kill, GetRoutees) sent at normal
 * priority.
 *
 *   Broadcast(PoisonPill)  a pool of 3 whose workers hold queued messages:
 *                          each handles its whole queue (every key recorded
 *                          once), then leaves; the router stops with the
 *                          last one (inspect: shmr:state stopped)
 *   Broadcast(message)     to a type router: each of its routes gets every
 *                          such message once; an ordinary send still goes
 *                          by the type map
 *   normal priority        GetRoutees answers, Kill restarts the pool,
 *                          PoisonPill stops it
 *
 * libshmr has no call that sets a message's flags, so the envelope is
 * written straight into our endpoint's outbound lane, from our own
 * mapping of the domain (one producer: this thread).  Waits are bounded
 * retries on real conditions, never fixed sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
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

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/proto.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 30000
#define CALL_MS 5000

struct ctx {
	struct shmr_test_client cl; /* domain mapped here, read-write */
	char ans[SHMR_PROTO_MAX];
	const char *router, *want, *gate;
	struct shmr_pid pids[4];
	struct shmr_pid pid; /* for the predicates */
	unsigned n;
	uint64_t want_count;
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

static struct ctx *start(const char *tag, const char *body)
{
	return client_ctx_start(sizeof(struct ctx), tag, body, 1);
}

/* A Broadcast envelope through libshmr; a full outbound lane is waited
 * out (the dataplane drains it). */
static void broadcast(struct ctx *c, struct shmr_pid to, uint32_t type,
		      uint64_t key)
{
	int rc, tries = 0;

	while ((rc = shmr_send_broadcast(c->cl.ep, to, type, key, NULL, 0)) ==
	       -EAGAIN) {
		assert_true(++tries < 1000000);
		usleep(100);
	}
	assert_int_equal(rc, 0);
}

static long long inspect(struct ctx *c, const char *key)
{
	return client_inspect(&c->cl, c->router, c->ans, sizeof(c->ans), key);
}

/* GetRoutees as a call at NORMAL priority answers c->want. */
static int routees_are(void *arg)
{
	struct ctx *c = arg;

	return client_routees(&c->cl, c->router, c->ans, sizeof(c->ans)) >=
		       0 &&
	       strcmp(c->ans, c->want) == 0;
}

static void wait_routees(struct ctx *c, const char *want)
{
	c->want = want;
	if (!shmr_test_wait(routees_are, c, WAIT_MS))
		fail_msg("routees \"%s\", wanted \"%s\"", c->ans, want);
}

static int state_stopped(void *arg)
{
	struct ctx *c = arg;
	char req[64];

	snprintf(req, sizeof(req), "INSPECT %s", c->router);
	assert_int_equal(shmr_test_ctl(&c->cl.app, req, c->ans, sizeof(c->ans)),
			 0);
	return strstr(c->ans, "\nshmr:state stopped\n") != NULL &&
	       strstr(c->ans, "\nshmr:routes_active 0\n") != NULL;
}

static int all_busy(void *arg)
{
	struct ctx *c = arg;

	for (unsigned i = 0; i < c->n; i++)
		if (!client_busy(&c->cl, c->pids[i]))
			return 0;
	return 1;
}

/* Release whoever waits at the gate (a FIFO opened for writing releases
 * every reader blocked in open()); then: is the router stopped? */
static int poke_until_stopped(void *arg)
{
	struct ctx *c = arg;
	int fd = open(c->gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	else
		assert_int_equal(errno, ENXIO); /* nobody at the gate */
	return state_stopped(c);
}

static void read_record(const char *path, unsigned char *counts, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, counts, 2 * n), (ssize_t)(2 * n));
	close(fd);
}

/* ---- Broadcast(PoisonPill) ------------------------------------------ */

#define PILL_K 10u /* messages per worker */

static int refused_as_stopped(void *arg)
{
	struct ctx *c = arg;

	return shmr_call(c->cl.ep, c->pid, 1, 0, "?", 1, c->ans, sizeof(c->ans),
			 CALL_MS) == -SHMR_E_NOT_ALLOWED;
}

/*
 * Each worker of a pool of three holds its first message at a gate while
 * more queue behind it; then Broadcast(PoisonPill) joins every queue, and
 * the gate opens.  Every worker handles everything that was queued before
 * the pill (each key recorded exactly once), then leaves, and the router
 * stops when the last one is gone.
 */
static void test_broadcast_poison_pill_drains_the_pool(void **state)
{
	char gate[128], rec[128], body[1024];
	unsigned char counts[2 * 3 * PILL_K];
	struct shmr_pid work;
	struct ctx *c;
	(void)state;

	client_tmp_path(gate, sizeof(gate), "pill-gate");
	assert_int_equal(mkfifo(gate, 0600), 0);
	client_make_record(rec, sizeof(rec), "pill-rec", 3 * PILL_K);
	snprintf(body, sizeof(body),
		 "stop_grace_ms = 500;\n"
		 "routers = ( { name = \"work\"; behaviour = \"round-robin\";\n"
		 "  pool = { size = 3; program = \"shmr-test-worker\";\n"
		 "    args = [ \"--record\", \"%s\", \"--gate\", \"%s\",\n"
		 "             \"--gate-count\", \"1\" ]; }; } );\n",
		 rec, gate);
	c = start("pill", body);
	c->router = "work";
	c->gate = gate;
	work = client_lookup(&c->cl, "work");
	wait_routees(c, "work:0\nwork:1\nwork:2\n");
	c->n = 3;
	for (unsigned i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "work:%u", i);
		c->pids[i] = client_route_pid(&c->cl, "work", name);
	}
	/* One message each: every worker takes it and waits at the gate
	 * (its busy flag set)... */
	for (uint64_t k = 0; k < 3; k++)
		assert_int_equal(shmr_send(c->cl.ep, work, 1, k, &k, sizeof(k)),
				 0);
	assert_true(shmr_test_wait(all_busy, c, WAIT_MS));
	/* ... while the rest queue in their inboxes, then the pill. */
	for (uint64_t k = 3; k < 3 * PILL_K; k++)
		assert_int_equal(shmr_send(c->cl.ep, work, 1, k, &k, sizeof(k)),
				 0);
	broadcast(c, work, SHMR_TYPE_POISON_PILL, 0);
	assert_true(shmr_test_wait(poke_until_stopped, c, WAIT_MS));

	read_record(rec, counts, 3 * PILL_K);
	for (unsigned k = 0; k < 3 * PILL_K; k++)
		if (counts[k] != 1 || counts[3 * PILL_K + k] != 0)
			fail_msg("key %u received %u times (redelivered %u)",
				 k, counts[k], counts[3 * PILL_K + k]);
	/* The router is stopped: routed messages are refused once the
	 * dataplane has the change (until then: no routees), GetRoutees
	 * still answers (no routees left). */
	c->pid = work;
	assert_true(shmr_test_wait(refused_as_stopped, c, WAIT_MS));
	wait_routees(c, "");
	client_ctx_stop(c);
	unlink(gate);
	unlink(rec);
}

/* ---- Broadcast to a type router --------------------------------------- */

#define TB_K 50u

static int each_counted(void *arg)
{
	struct ctx *c = arg;
	struct shmr_test_stats st;

	for (unsigned i = 0; i < c->n; i++)
		if (client_stats(&c->cl, c->pids[i], &st) < 0 ||
		    st.count != c->want_count + (i == 0))
			return 0;
	return 1;
}

/*
 * A type router whose map sends type 1 to r0 only: Broadcast(type 7)
 * reaches r0, r1 and r2, each message once each (flag kept); an ordinary
 * type-1 send still goes to r0 alone.
 */
static void test_broadcast_to_a_type_router(void **state)
{
	char rec[3][128], body[2048];
	unsigned char counts[2 * TB_K];
	struct shmr_pid events;
	struct ctx *c;
	(void)state;

	for (unsigned j = 0; j < 3; j++) {
		char what[16];

		snprintf(what, sizeof(what), "tb-rec%u", j);
		client_make_record(rec[j], sizeof(rec[j]), what, TB_K);
	}
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"r0\"; } );\n"
		 "  routes = (\n"
		 "    { name = \"r0\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--record\", \"%s\" ]; },\n"
		 "    { name = \"r1\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--record\", \"%s\" ]; },\n"
		 "    { name = \"r2\"; program = \"shmr-test-worker\";\n"
		 "      args = [ \"--record\", \"%s\" ]; } ); } );\n",
		 rec[0], rec[1], rec[2]);
	c = start("typebc", body);
	c->router = "events";
	events = client_lookup(&c->cl, "events");
	c->n = 3;
	for (unsigned j = 0; j < 3; j++) {
		char name[8];

		snprintf(name, sizeof(name), "r%u", j);
		c->pids[j] = client_route_pid(&c->cl, "events", name);
	}
	for (uint64_t k = 0; k < TB_K; k++)
		broadcast(c, events, 7, k);
	assert_int_equal(shmr_send(c->cl.ep, events, 1, TB_K, NULL, 0), 0);
	c->want_count = TB_K;
	assert_true(shmr_test_wait(each_counted, c, WAIT_MS));
	for (unsigned j = 0; j < 3; j++) {
		struct shmr_test_stats st;

		read_record(rec[j], counts, TB_K);
		for (unsigned k = 0; k < TB_K; k++)
			if (counts[k] != 1)
				fail_msg("r%u: key %u received %u times", j, k,
					 counts[k]);
		assert_int_equal(client_stats(&c->cl, c->pids[j], &st), 0);
		assert_int_equal(st.from_mismatch, 0); /* From: us, kept */
	}
	/* Counted per copy: three per broadcast message, one more send. */
	assert_int_equal(inspect(c, "shmr:forwarded"), 3 * TB_K + 1);
	assert_int_equal(inspect(c, "shmr:failed"), 0);
	client_ctx_stop(c);
	for (unsigned j = 0; j < 3; j++)
		unlink(rec[j]);
}

/* ---- the router's own messages at normal priority --------------------- */

static int restarted_two(void *arg)
{
	return inspect(arg, "shmr:restarts") >= 2;
}

/* GetRoutees (a call), Kill (a call: the pool comes back at the same
 * size) and PoisonPill (a send: the router and its pool stop), all at
 * normal priority, are the router's own, never routed to a worker. */
static void test_management_at_normal_priority(void **state)
{
	struct shmr_test_stats st;
	struct shmr_pid work;
	struct ctx *c;
	(void)state;

	c = start("normalprio",
		  "stop_grace_ms = 500;\n"
		  "routers = ( { name = \"work\"; behaviour = \"round-robin\";\n"
		  "  pool = { size = 2; program = \"shmr-test-worker\"; }; } );\n");
	c->router = "work";
	work = client_lookup(&c->cl, "work");
	wait_routees(c, "work:0\nwork:1\n");
	assert_int_equal(shmr_call(c->cl.ep, work, SHMR_TYPE_KILL, 0, NULL, 0,
				   c->ans, sizeof(c->ans), CALL_MS),
			 0);
	assert_true(shmr_test_wait(restarted_two, c, WAIT_MS));
	wait_routees(c, "work:0\nwork:1\n");
	/* No worker saw any of them: each counts only our calls. */
	for (unsigned i = 0; i < 2; i++) {
		char name[16];
		struct shmr_pid w;

		snprintf(name, sizeof(name), "work:%u", i);
		w = client_route_pid(&c->cl, "work", name);
		assert_int_equal(client_stats(&c->cl, w, &st), 0);
		assert_int_equal(st.count, 0);
		assert_int_equal(st.calls, 1);
	}
	assert_int_equal(shmr_send(c->cl.ep, work, SHMR_TYPE_POISON_PILL, 0,
				   NULL, 0),
			 0);
	assert_true(shmr_test_wait(state_stopped, c, WAIT_MS));
	assert_int_equal(shmr_call(c->cl.ep, work, 1, 0, "?", 1, c->ans,
				   sizeof(c->ans), CALL_MS),
			 -SHMR_E_NOT_ALLOWED);
	client_ctx_stop(c);
}

/* Calls through a broadcast router: every routee answers, the caller
 * takes the first reply and libshmr drops the others, so calls go on
 * without end (they used to fill the caller's lanes after about 64). */
static void test_broadcast_calls_keep_going(void **state)
{
	struct ctx *c = start("bcalls",
			      "routers = ( { name = \"all\"; behaviour = \"broadcast\";\n"
			      "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; },\n"
			      "             { name = \"b\"; program = \"shmr-test-worker\"; },\n"
			      "             { name = \"c\"; program = \"shmr-test-worker\"; } ); } );\n");
	struct shmr_pid all = client_lookup(&c->cl, "all");
	struct shmr_test_stats st;
	(void)state;

	for (unsigned i = 0; i < 500; i++)
		assert_int_equal(shmr_call(c->cl.ep, all, 1, i, "?", 1, &st,
					   sizeof(st), CALL_MS),
				 (int)sizeof(st));
	client_ctx_stop(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broadcast_poison_pill_drains_the_pool),
		cmocka_unit_test(test_broadcast_to_a_type_router),
		cmocka_unit_test(test_management_at_normal_priority),
		cmocka_unit_test(test_broadcast_calls_keep_going),
	};
	return cmocka_run_group_tests_name("envelopes", tests, NULL, NULL);
}
