/*
 * The routing logics through the real appliance: shmr-control, the
 * dataplane and shmr-test-worker routes (each answers a call with its
 * stats: route name, sends and calls counted).  Checked from outside, the
 * way a user would: counts per worker, which worker answered a call, the
 * keys each worker recorded.
 *
 *   round-robin       one sender's 4k sends: exactly k per worker; calls
 *                     rotate; a router with no routees fails the call
 *   random            every worker is hit; shares within a stated margin
 *   broadcast         every send reaches every worker exactly once, also
 *                     while one worker is held (gated) and backpressure
 *                     reaches the sender; a call gets one reply
 *   consistent-hash   a key always reaches the same worker; a route added
 *                     with shmr_route_add() takes keys only for itself
 *   smallest-mailbox  a worker held busy on a burst (libshmr's busy flag,
 *                     read from the domain) loses to an idle one, and wins
 *                     again once it is idle
 *   the examples      each config/examples/<logic>.conf starts and routes
 *
 * Waits are bounded retries on real conditions (counts, flags, replies),
 * never fixed sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include <shmr/domain.h>
#include <shmr/proto.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 20000
#define CALL_MS 5000

struct ctx {
	struct shmr_test_client cl; /* domain mapped here, read-only */
	/* for the predicates */
	struct shmr_pid pids[8];
	unsigned n;
	uint64_t want;
	struct shmr_pid send_to;
	const char *gate;
	const char *router, *tag;
	uint64_t key;
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

static struct ctx *start(const char *tag, const char *body)
{
	return client_ctx_start(sizeof(struct ctx), tag, body, 0);
}

/* A call through @p router with @p key; the answering worker's stats. */
static int call_router(struct ctx *c, const char *router, uint64_t key,
		       struct shmr_test_stats *st)
{
	int rc = shmr_call(c->cl.ep, client_lookup(&c->cl, router), 1, key,
			   "q", 1, st, sizeof(*st), CALL_MS);

	if (rc >= 0 && rc != (int)sizeof(*st))
		return -EPROTO;
	st->tag[sizeof(st->tag) - 1] = '\0';
	return rc < 0 ? rc : 0;
}

static int sent_ok(void *arg)
{
	struct ctx *c = arg;
	int rc = shmr_send(c->cl.ep, c->send_to, 1, c->key, &c->key,
			   sizeof(c->key));

	assert_true(rc == 0 || rc == -EAGAIN);
	return rc == 0;
}

/* Send key @p key to @p to; a full lane is waited out. Returns 1 when the
 * lane was full at first. */
static int send_key(struct ctx *c, struct shmr_pid to, uint64_t key)
{
	int rc = shmr_send(c->cl.ep, to, 1, key, &key, sizeof(key));

	if (rc == 0)
		return 0;
	assert_int_equal(rc, -EAGAIN);
	c->send_to = to;
	c->key = key;
	assert_true(shmr_test_wait(sent_ok, c, WAIT_MS));
	return 1;
}

/* Sum of the sends the workers c->pids[0..n) counted is c->want. */
static int total_is(void *arg)
{
	struct ctx *c = arg;
	struct shmr_test_stats st;
	uint64_t sum = 0;

	for (unsigned i = 0; i < c->n; i++) {
		if (client_stats(&c->cl, c->pids[i], &st) < 0)
			return 0;
		sum += st.count;
	}
	return sum == c->want;
}

/* Each of the workers c->pids[0..n) counted c->want sends. */
static int each_is(void *arg)
{
	struct ctx *c = arg;
	struct shmr_test_stats st;

	for (unsigned i = 0; i < c->n; i++)
		if (client_stats(&c->cl, c->pids[i], &st) < 0 ||
		    st.count != c->want)
			return 0;
	return 1;
}

/* c->pids[0] busy, c->pids[1..n) not. */
static int first_busy_rest_idle(void *arg)
{
	struct ctx *c = arg;

	if (!client_busy(&c->cl, c->pids[0]))
		return 0;
	for (unsigned i = 1; i < c->n; i++)
		if (client_busy(&c->cl, c->pids[i]))
			return 0;
	return 1;
}

static int all_idle(void *arg)
{
	struct ctx *c = arg;

	for (unsigned i = 0; i < c->n; i++)
		if (client_busy(&c->cl, c->pids[i]))
			return 0;
	return 1;
}

/* Open the gate FIFO for writing once its worker waits there: one burst
 * is released. */
static int gate_opened(void *arg)
{
	struct ctx *c = arg;
	int fd = open(c->gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		assert_int_equal(errno, ENXIO); /* nobody at the gate yet */
		return 0;
	}
	close(fd);
	return 1;
}

/* ---- round-robin ------------------------------------------------------ */

#define RR_N 4u
#define RR_K 50u

static void test_round_robin(void **state)
{
	struct ctx *c = start("rr",
		"routers = (\n"
		"  { name = \"rr\"; behaviour = \"round-robin\";\n"
		"    routes = (\n"
		"      { name = \"w0\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"w1\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"w2\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"w3\"; program = \"shmr-test-worker\"; } ); },\n"
		"  { name = \"nobody\"; behaviour = \"round-robin\";\n"
		"    routees = [ \"ghost\" ]; }\n"
		");\n");
	struct shmr_pid rr = client_lookup(&c->cl, "rr");
	struct shmr_test_stats st;
	char first[8];
	int seen[RR_N] = { 0 };
	(void)state;

	c->n = RR_N;
	for (unsigned j = 0; j < RR_N; j++) {
		char name[8];

		snprintf(name, sizeof(name), "w%u", j);
		c->pids[j] = client_route_pid(&c->cl, "rr", name);
	}
	/* k * N sequential sends from one sender (queued in the inboxes of
	 * routes whose workers are still starting). */
	for (uint64_t i = 0; i < RR_K * RR_N; i++)
		send_key(c, rr, i);
	c->want = RR_K * RR_N;
	assert_true(shmr_test_wait(total_is, c, WAIT_MS));
	for (unsigned j = 0; j < RR_N; j++) {
		assert_int_equal(client_stats(&c->cl, c->pids[j], &st), 0);
		assert_int_equal(st.count, RR_K);
		assert_int_equal(st.from_mismatch, 0);
	}
	/* Calls take turns too: 2N calls, each worker twice, in rotation. */
	for (unsigned i = 0; i < 2 * RR_N; i++) {
		assert_int_equal(call_router(c, "rr", i, &st), 0);
		assert_true(st.tag[0] == 'w' && st.tag[1] >= '0' &&
			    st.tag[1] < '0' + (int)RR_N);
		seen[st.tag[1] - '0']++;
		if (i == 0)
			memcpy(first, st.tag, sizeof(first));
		if (i == RR_N)
			assert_string_equal(st.tag, first);
	}
	for (unsigned j = 0; j < RR_N; j++)
		assert_int_equal(seen[j], 2);
	/* Nobody to route to. */
	assert_int_equal(call_router(c, "nobody", 0, &st), -SHMR_E_NO_ROUTEES);
	client_ctx_stop(c);
}

/* ---- random ----------------------------------------------------------- */

#define RND_N 4u
#define RND_K 2000u

static void test_random(void **state)
{
	struct ctx *c = start("random",
		"routers = (\n"
		"  { name = \"rnd\"; behaviour = \"random\";\n"
		"    routes = (\n"
		"      { name = \"w0\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"w1\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"w2\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"w3\"; program = \"shmr-test-worker\"; } ); }\n"
		");\n");
	struct shmr_pid rnd = client_lookup(&c->cl, "rnd");
	struct shmr_test_stats st;
	(void)state;

	c->n = RND_N;
	for (unsigned j = 0; j < RND_N; j++) {
		char name[8];

		snprintf(name, sizeof(name), "w%u", j);
		c->pids[j] = client_route_pid(&c->cl, "rnd", name);
	}
	for (uint64_t i = 0; i < RND_K; i++)
		send_key(c, rnd, i);
	c->want = RND_K;
	assert_true(shmr_test_wait(total_is, c, WAIT_MS));
	/* Each share is 500 expected, standard deviation about 19: the
	 * margin 300..700 is more than 10 of them (the seed is the
	 * dataplane's own, so no exact count can be asked for). */
	for (unsigned j = 0; j < RND_N; j++) {
		assert_int_equal(client_stats(&c->cl, c->pids[j], &st), 0);
		if (st.count < 300 || st.count > 700)
			fail_msg("w%u got %llu of %u", j,
				 (unsigned long long)st.count, RND_K);
	}
	client_ctx_stop(c);
}

/* ---- broadcast -------------------------------------------------------- */

#define BC_N 3u
#define BC_K 400u

static void test_broadcast(void **state)
{
	char gate[128], rec[BC_N][128], body[4096];
	struct shmr_test_stats st, before[BC_N];
	struct shmr_pid bc;
	struct ctx *c;
	int released = 0, backpressure = 0;
	(void)state;

	client_make_fifo(gate, sizeof(gate), "bc-gate");
	for (unsigned j = 0; j < BC_N; j++) {
		char what[16];

		snprintf(what, sizeof(what), "bc-rec%u", j);
		client_make_record(rec[j], sizeof(rec[j]), what, BC_K);
	}
	/* Small lanes, so that the held worker fills its inbox and the
	 * backpressure reaches our own lane quickly. */
	snprintf(body, sizeof(body),
		 "lane_size = 64;\n"
		 "routers = (\n"
		 "  { name = \"bc\"; behaviour = \"broadcast\";\n"
		 "    routes = (\n"
		 "      { name = \"b0\"; program = \"shmr-test-worker\";\n"
		 "        args = [ \"--record\", \"%s\", \"--gate\", \"%s\",\n"
		 "                 \"--gate-count\", \"1\" ]; },\n"
		 "      { name = \"b1\"; program = \"shmr-test-worker\";\n"
		 "        args = [ \"--record\", \"%s\" ]; },\n"
		 "      { name = \"b2\"; program = \"shmr-test-worker\";\n"
		 "        args = [ \"--record\", \"%s\" ]; } ); }\n"
		 ");\n",
		 rec[0], gate, rec[1], rec[2]);
	c = start("bcast", body);
	bc = client_lookup(&c->cl, "bc");
	c->gate = gate;
	c->n = BC_N;
	for (unsigned j = 0; j < BC_N; j++) {
		char name[8];

		snprintf(name, sizeof(name), "b%u", j);
		c->pids[j] = client_route_pid(&c->cl, "bc", name);
	}
	for (uint64_t i = 0; i < BC_K; i++) {
		if (shmr_send(c->cl.ep, bc, 1, i, &i, sizeof(i)) == 0)
			continue;
		/* Everything is backed up behind b0, held at its gate: let
		 * it go, then wait for room. */
		backpressure = 1;
		if (!released) {
			assert_true(shmr_test_wait(gate_opened, c, WAIT_MS));
			released = 1;
		}
		send_key(c, bc, i);
	}
	if (!released) /* cannot be: the lanes hold far less than BC_K */
		assert_true(shmr_test_wait(gate_opened, c, WAIT_MS));
	assert_true(backpressure);
	c->want = BC_K;
	assert_true(shmr_test_wait(each_is, c, WAIT_MS));
	/* Each worker recorded each key exactly once. */
	for (unsigned j = 0; j < BC_N; j++) {
		unsigned char counts[2 * BC_K];
		int fd = open(rec[j], O_RDONLY | O_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(read(fd, counts, sizeof(counts)),
				 (ssize_t)sizeof(counts));
		close(fd);
		for (unsigned k = 0; k < BC_K; k++)
			if (counts[k] != 1 || counts[BC_K + k] != 0)
				fail_msg("b%u: key %u received %u times "
					 "(redelivered %u)",
					 j, k, counts[k], counts[BC_K + k]);
		assert_int_equal(client_stats(&c->cl, c->pids[j], &before[j]),
				 0);
		assert_int_equal(before[j].count, BC_K);
		assert_int_equal(before[j].misrouted, 0);
		assert_string_equal(before[j].tag,
				    j == 0 ? "b0" : j == 1 ? "b1" : "b2");
	}
	/* A call reaches every worker; the caller gets one reply (the first;
	 * libshmr drops the later ones as stale). */
	assert_int_equal(call_router(c, "bc", 0, &st), 0);
	for (unsigned j = 0; j < BC_N; j++) {
		assert_int_equal(client_stats(&c->cl, c->pids[j], &st), 0);
		/* this query, and the broadcast call before it */
		assert_int_equal(st.calls, before[j].calls + 2);
	}
	client_ctx_stop(c);
	unlink(gate);
	for (unsigned j = 0; j < BC_N; j++)
		unlink(rec[j]);
}

/* ---- consistent-hash -------------------------------------------------- */

#define CH_KEYS 120u

/* Some key below c->key through c->router is answered by c->tag. */
static int some_key_answered_by(void *arg)
{
	struct ctx *c = arg;
	struct shmr_test_stats st;

	for (uint64_t k = 0; k < c->key; k++)
		if (call_router(c, c->router, k, &st) == 0 &&
		    strcmp(st.tag, c->tag) == 0)
			return 1;
	return 0;
}

static void test_consistent_hash(void **state)
{
	struct ctx *c = start("chash",
		"routers = (\n"
		"  { name = \"ch\"; behaviour = \"consistent-hash\";\n"
		"    routes = (\n"
		"      { name = \"c0\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"c1\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"c2\"; program = \"shmr-test-worker\"; } ); }\n"
		");\n");
	char owner[CH_KEYS][8];
	struct shmr_test_stats st;
	unsigned moved = 0, per[3] = { 0 };
	(void)state;

	for (uint64_t k = 0; k < CH_KEYS; k++) {
		assert_int_equal(call_router(c, "ch", k, &st), 0);
		memcpy(owner[k], st.tag, sizeof(owner[k]));
		assert_true(owner[k][0] == 'c' && owner[k][1] >= '0' &&
			    owner[k][1] <= '2');
		per[owner[k][1] - '0']++;
	}
	/* The same key, the same worker. */
	for (uint64_t k = 0; k < CH_KEYS; k++) {
		assert_int_equal(call_router(c, "ch", k, &st), 0);
		assert_string_equal(st.tag, owner[k]);
	}
	for (unsigned j = 0; j < 3; j++)
		assert_true(per[j] > 0);

	/* A fourth routee: wait until the new table routes some key to it
	 * (the ring is a function of the names: with these, keys 0..119
	 * move 30 of 120), then check every key. */
	assert_int_equal(shmr_route_add(c->cl.d, "ch", "c3", "shmr-test-worker",
					NULL, 0, NULL),
			 0);
	c->router = "ch";
	c->tag = "c3";
	c->key = CH_KEYS;
	assert_true(shmr_test_wait(some_key_answered_by, c, WAIT_MS));
	for (uint64_t k = 0; k < CH_KEYS; k++) {
		assert_int_equal(call_router(c, "ch", k, &st), 0);
		if (strcmp(st.tag, "c3") == 0)
			moved++;
		else if (strcmp(st.tag, owner[k]) != 0)
			fail_msg("key %llu moved from %s to %s, not to the new "
				 "routee",
				 (unsigned long long)k, owner[k], st.tag);
	}
	/* About 1/(N+1) of the keys; exactly 30 with these names. */
	assert_int_equal(moved, 30);
	client_ctx_stop(c);
}

/* ---- smallest-mailbox ------------------------------------------------- */

static void test_smallest_mailbox(void **state)
{
	char gate[128], body[2048];
	struct shmr_test_stats st;
	struct ctx *c;
	(void)state;

	client_make_fifo(gate, sizeof(gate), "sm-gate");
	snprintf(body, sizeof(body),
		 "routers = (\n"
		 "  { name = \"sm\"; behaviour = \"smallest-mailbox\";\n"
		 "    routes = (\n"
		 "      { name = \"held\"; program = \"shmr-test-worker\";\n"
		 "        args = [ \"--gate\", \"%s\", \"--gate-count\", \"1\" ]; },\n"
		 "      { name = \"w1\"; program = \"shmr-test-worker\"; },\n"
		 "      { name = \"w2\"; program = \"shmr-test-worker\"; } ); }\n"
		 ");\n",
		 gate);
	c = start("smallest", body);
	c->gate = gate;
	c->n = 3;
	c->pids[0] = client_route_pid(&c->cl, "sm", "held");
	c->pids[1] = client_route_pid(&c->cl, "sm", "w1");
	c->pids[2] = client_route_pid(&c->cl, "sm", "w2");
	/* Every worker up (each answers), then idle. */
	for (unsigned j = 1; j < 3; j++)
		assert_int_equal(client_stats(&c->cl, c->pids[j], &st), 0);
	/* One message straight to "held": its worker takes the burst and
	 * waits at the gate holding it (busy, inbox empty). */
	send_key(c, c->pids[0], 0);
	assert_true(shmr_test_wait(first_busy_rest_idle, c, WAIT_MS));
	/* held is first in the list and its inbox is as empty as the
	 * others': only its busy flag keeps the calls off it.  Before each
	 * call, the other two are idle again. */
	for (unsigned i = 0; i < 20; i++) {
		assert_true(shmr_test_wait(first_busy_rest_idle, c, WAIT_MS));
		assert_int_equal(call_router(c, "sm", i, &st), 0);
		/* Both idle and empty: the first of them. */
		assert_string_equal(st.tag, "w1");
	}
	/* Released: held handles its burst, comes back, finds nothing, and
	 * is idle; first in the list, it wins again. */
	assert_true(shmr_test_wait(gate_opened, c, WAIT_MS));
	assert_true(shmr_test_wait(all_idle, c, WAIT_MS));
	assert_int_equal(call_router(c, "sm", 0, &st), 0);
	assert_string_equal(st.tag, "held");
	assert_int_equal(st.count, 1);
	client_ctx_stop(c);
	unlink(gate);
}

/* ---- the examples ----------------------------------------------------- */

/* A call through @p router answered "<one of the routes>:q". */
static int example_answers(void *arg)
{
	struct ctx *c = arg;
	char reply[64];
	struct shmr_pid to;
	int rc;

	if (shmr_lookup(c->cl.d, c->router, &to) < 0)
		return 0;
	rc = shmr_call(c->cl.ep, to, 1, 7, "q", 1, reply, sizeof(reply) - 1,
		       2000);
	if (rc < 2)
		return 0;
	reply[rc] = '\0';
	return strstr(reply, c->tag) == reply &&
	       strcmp(reply + rc - 2, ":q") == 0;
}

static void test_examples(void **state)
{
	static const struct {
		const char *file, *router, *prefix;
	} ex[] = {
		{ "round-robin.conf", "jobs", "w" },
		{ "random.conf", "jobs", "w" },
		{ "smallest-mailbox.conf", "jobs", "w0" },
		{ "broadcast.conf", "updates", "replica:" },
		{ "consistent-hash.conf", "sessions", "s" },
	};
	(void)state;

	for (unsigned i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct ctx *c = calloc(1, sizeof(*c));
		char path[PATH_MAX];

		assert_non_null(c);
		assert_int_equal(
			shmr_test_example_path(ex[i].file, path, sizeof(path)),
			0);
		assert_int_equal(
			shmr_test_client_start_file(&c->cl, "ex", path, -1), 0);
		c->router = ex[i].router;
		c->tag = ex[i].prefix;
		if (!shmr_test_wait(example_answers, c, WAIT_MS))
			fail_msg("%s: no answer through %s", ex[i].file,
				 ex[i].router);
		assert_int_equal(shmr_test_client_stop(&c->cl), 0);
		free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_robin),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_broadcast),
		cmocka_unit_test(test_consistent_hash),
		cmocka_unit_test(test_smallest_mailbox),
		cmocka_unit_test(test_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
