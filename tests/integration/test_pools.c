/*
 * Pools and the management messages against the real daemons: a pool
 * starts N copies of one program as routees "<router>:0".., GetRoutees /
 * AddRoutee / RemoveRoutee / AdjustPoolSize on the admin path and through
 * shmrctl, Kill and PoisonPill, and the default resizer growing a pool
 * under load.  Barriers are GetRoutees answers and routed calls, never
 * sleeps.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sys/wait.h>
#include <unistd.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define WAIT_MS 30000

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char ans[SHMR_PROTO_MAX];
	const char *want;
	struct shmr_endpoint *outside;
};

static void start(struct ctx *c, const char *tag, const char *extra,
		  unsigned size)
{
	char conf[1024];

	memset(c, 0, sizeof(*c));
	snprintf(conf, sizeof(conf),
		 "stop_grace_ms = 500;\n"
		 "routers = ( { name = \"work\"; behaviour = \"round-robin\";\n"
		 "  pool = { size = %u; program = \"shmr-test-worker\"; };\n"
		 "  %s } );\n",
		 size, extra);
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "work", &c->router), 0);
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
}

/* A routed call: the tag of the routee that answered, or the error. */
static int call(struct ctx *c, char tag[8])
{
	struct shmr_test_stats st;
	int rc = shmr_call(c->cl.ep, c->router, 1, 0, "?", 1, &st, sizeof(st),
			   WAIT_MS);

	if (rc == (int)sizeof(st))
		memcpy(tag, st.tag, 8);
	return rc;
}

/* A management message as a high-priority call; the reply text in ans. */
static int manage(struct ctx *c, uint32_t type, uint64_t key,
		  const char *payload)
{
	int rc;

	memset(c->ans, 0, sizeof(c->ans));
	rc = shmr_call_prio(c->cl.ep, c->router, SHMR_PRIO_HIGH, type, key,
			    payload, payload ? strlen(payload) : 0, c->ans,
			    sizeof(c->ans) - 1, WAIT_MS);
	return rc;
}

static int routees_are(void *arg)
{
	struct ctx *c = arg;

	return manage(c, SHMR_TYPE_GET_ROUTEES, 0, NULL) >= 0 &&
	       strcmp(c->ans, c->want) == 0;
}

static void wait_routees(struct ctx *c, const char *want)
{
	c->want = want;
	if (!shmr_test_wait(routees_are, c, WAIT_MS))
		fail_msg("routees \"%s\", wanted \"%s\"", c->ans, want);
}

static int ctl(struct ctx *c, const char *a, const char *b, const char *d)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock, (char *)a,
			 (char *)b, (char *)d, NULL };

	return shmr_test_run(argv, c->ans, sizeof(c->ans));
}

/* Every routee answers in turn: k*N calls give each exactly k. */
static void assert_round_robin(struct ctx *c, unsigned n)
{
	char tags[16][8];
	unsigned count[16] = { 0 };
	char tag[8];

	for (unsigned i = 0; i < n; i++) {
		snprintf(tags[i], 8, "work:%u", i);
	}
	for (unsigned i = 0; i < 3 * n; i++) {
		assert_int_equal(call(c, tag), (int)sizeof(struct shmr_test_stats));
		for (unsigned j = 0; j < n; j++)
			if (strncmp(tag, tags[j], 8) == 0)
				count[j]++;
	}
	for (unsigned j = 0; j < n; j++)
		assert_int_equal(count[j], 3);
}

static int one_route_left(void *arg)
{
	struct ctx *c = arg;
	unsigned lines = 0;

	if (shmr_test_ctl(&c->cl.app, "ROUTES work", c->ans, sizeof(c->ans)) <
	    0)
		return 0;
	for (const char *p = c->ans; (p = strchr(p, '\n')); p++)
		lines++;
	return lines == 2; /* "OK\n" and one route */
}

/* A pool of three: routees work:0..2 in creation order; round-robin over
 * them; AdjustPoolSize grows (lowest free index) and shrinks (newest
 * first, each after its queue), clamped at 1. */
static void test_pool_starts_and_adjusts(void **state)
{
	struct ctx c;
	(void)state;

	start(&c, "pool", "", 3);
	wait_routees(&c, "work:0\nwork:1\nwork:2\n");
	assert_round_robin(&c, 3);

	assert_int_equal(manage(&c, SHMR_TYPE_ADJUST_POOL_SIZE, 2, NULL), 1);
	assert_string_equal(c.ans, "5");
	wait_routees(&c, "work:0\nwork:1\nwork:2\nwork:3\nwork:4\n");
	assert_int_equal(manage(&c, SHMR_TYPE_ADJUST_POOL_SIZE,
				(uint64_t)(int64_t)-10, NULL),
			 1);
	assert_string_equal(c.ans, "1");
	wait_routees(&c, "work:0\n");
	/* The removed ones are gone once their inboxes drained: then the
	 * lowest free index is 1 again. */
	assert_true(shmr_test_wait(one_route_left, &c, WAIT_MS));
	/* shmrctl: the same through the control socket. */
	assert_int_equal(ctl(&c, "pool", "work", "+1"), 0);
	assert_string_equal(c.ans, "2\n");
	assert_int_equal(ctl(&c, "routees", "work", NULL), 0);
	assert_string_equal(c.ans, "NAME\nwork:0\nwork:1\n");
	assert_int_equal(ctl(&c, "pool", "work", "7"), 2); /* usage */
	/* A number out of range is a usage error too, said by shmrctl
	 * (not the control plane's refusal of a malformed request). */
	assert_int_equal(ctl(&c, "pool", "work", "+2147483648"), 2);
	assert_non_null(strstr(c.ans, "pool: N is at most 128"));
	assert_int_equal(ctl(&c, "pool", "work", "-99999999999999999999"), 2);
	assert_int_equal(ctl(&c, "pool", "work", "+129"), 2);
	assert_int_equal(ctl(&c, "pool", "work", "-1"), 0);
	assert_string_equal(c.ans, "1\n");
	assert_int_equal(ctl(&c, "routees", "nosuch", NULL), 1);
	stop(&c);
}

/* A management message sent (not called) by an endpoint that closes at
 * once: the control plane reads it after the sender has gone, and still
 * knows who sent it (its opener's role, kept in the slot). */
static void test_management_send_outlives_its_sender(void **state)
{
	static const char *const want[] = {
		"work:0\nwork:1\n",
		"work:0\nwork:1\nwork:2\n",
		"work:0\nwork:1\nwork:2\nwork:3\n",
	};
	struct ctx c;
	(void)state;

	start(&c, "poolgone", "", 1);
	wait_routees(&c, "work:0\n");
	for (unsigned i = 0; i < 3; i++) {
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0) {
			/* A process of its own that sends and exits at
			 * once: its connection, and so its slot's owner,
			 * go with it. */
			struct shmr_domain *d;
			struct shmr_endpoint *e;

			if (shmr_attach_path(c.cl.app.sock, &d) < 0 ||
			    shmr_endpoint_open(d, &e) < 0 ||
			    shmr_send(e, c.router, SHMR_TYPE_ADJUST_POOL_SIZE,
				      1, NULL, 0) < 0)
				_exit(1);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		wait_routees(&c, want[i]);
	}
	stop(&c);
}

static int outside_reached(void *arg)
{
	struct ctx *c = arg;
	const struct shmr_msg *m[8];

	assert_int_equal(shmr_send(c->cl.ep, c->router, 1, 99, "m", 1), 0);
	return shmr_recv_burst(c->outside, m, 8, 20) > 0;
}

/* AddRoutee then GetRoutees from the same sender sees the addition (no
 * barrier in between); RemoveRoutee takes it out again. */
static void test_add_then_get_routees_sees_it(void **state)
{
	struct ctx c;
	struct shmr_endpoint *outside;
	char tag[8];
	int outside_hits = 0;
	(void)state;

	start(&c, "routees", "", 1);
	assert_int_equal(shmr_endpoint_open(c.cl.d, &outside), 0);
	assert_int_equal(shmr_register(outside, "outside"), 0);
	assert_int_equal(shmr_send_prio(c.cl.ep, c.router, SHMR_PRIO_HIGH,
					SHMR_TYPE_ADD_ROUTEE, 0, "outside", 7),
			 0);
	assert_true(manage(&c, SHMR_TYPE_GET_ROUTEES, 0, NULL) > 0);
	assert_string_equal(c.ans, "work:0\noutside\n");
	/* Once the dataplane has the new list (sends until one arrives,
	 * bounded), sends alternate between work:0 and the outside one. */
	c.outside = outside;
	assert_true(shmr_test_wait(outside_reached, &c, WAIT_MS));
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(shmr_send(c.cl.ep, c.router, 1, i, "m", 1), 0);
	while (outside_hits < 2) {
		const struct shmr_msg *m[8];
		int n = shmr_recv_burst(outside, m, 8, WAIT_MS);

		assert_true(n > 0);
		outside_hits += n;
	}
	assert_int_equal(outside_hits, 2);
	assert_int_equal(manage(&c, SHMR_TYPE_REMOVE_ROUTEE, 0, "outside"), 0);
	wait_routees(&c, "work:0\n");
	assert_int_equal(call(&c, tag), (int)sizeof(struct shmr_test_stats));
	assert_int_equal(strncmp(tag, "work:0", 8), 0);
	/* Errors: a bad name, an unknown reserved type. */
	assert_int_equal(manage(&c, SHMR_TYPE_ADD_ROUTEE, 0, "bad name"),
			 -SHMR_E_NAME);
	assert_int_equal(manage(&c, SHMR_TYPE_RESERVED + 0x77, 0, NULL),
			 -SHMR_E_NOT_ALLOWED);
	/* shmrctl routee add / remove. */
	assert_int_equal(ctl(&c, "routee", "add", "work"), 2); /* usage */
	shmr_endpoint_close(outside);
	stop(&c);
}

static long long restarts_of(struct ctx *c)
{
	char ans[SHMR_PROTO_MAX];

	assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT work", ans,
				       sizeof(ans)),
			 0);
	return shmr_test_value(ans, "shmr:restarts");
}

static int restarted_two(void *arg)
{
	return restarts_of(arg) >= 2;
}

static int state_stopped(void *arg)
{
	struct ctx *c = arg;

	assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT work", c->ans,
				       sizeof(c->ans)),
			 0);
	return strstr(c->ans, "\nshmr:state stopped\n") != NULL &&
	       strstr(c->ans, "\nshmr:routes_active 0\n") != NULL;
}

/* Routed calls are refused as by a stopped router (once the dataplane
 * has the change: until then they may still find a routee, or none). */
static int refused(void *arg)
{
	char tag[8];

	return call(arg, tag) == -SHMR_E_NOT_ALLOWED;
}

/* Kill: the router fails and its pool comes back at the same size (each
 * routee restarted, counted); on_kill = "stop" stops it instead. */
static void test_kill_restarts_the_pool_or_stops(void **state)
{
	struct ctx c;
	char tag[8];
	(void)state;

	start(&c, "kill", "", 2);
	wait_routees(&c, "work:0\nwork:1\n");
	assert_int_equal(manage(&c, SHMR_TYPE_KILL, 0, NULL), 0);
	assert_true(shmr_test_wait(restarted_two, &c, WAIT_MS));
	wait_routees(&c, "work:0\nwork:1\n");
	assert_int_equal(call(&c, tag), (int)sizeof(struct shmr_test_stats));
	stop(&c);

	start(&c, "killstop", "on_kill = \"stop\";", 2);
	assert_int_equal(ctl(&c, "kill", "work", NULL), 0);
	assert_true(shmr_test_wait(state_stopped, &c, WAIT_MS));
	assert_true(shmr_test_wait(refused, &c, WAIT_MS));
	assert_int_equal(restarts_of(&c), 0);
	stop(&c);
}

/* PoisonPill to the router stops the router and its pool. */
static void test_poison_pill_stops_router_and_pool(void **state)
{
	struct ctx c;
	(void)state;

	start(&c, "poison", "", 2);
	wait_routees(&c, "work:0\nwork:1\n");
	assert_int_equal(manage(&c, SHMR_TYPE_POISON_PILL, 0, NULL), 0);
	assert_true(shmr_test_wait(state_stopped, &c, WAIT_MS));
	assert_true(shmr_test_wait(refused, &c, WAIT_MS));
	/* Reads still answer. */
	assert_int_equal(ctl(&c, "routees", "work", NULL), 0);
	assert_int_equal(ctl(&c, "pool", "work", "+1"), 1);
	stop(&c);
}

static int grew(void *arg)
{
	struct ctx *c = arg;

	/* Keep the pressure on: the resizer looks every 10 messages, and a
	 * look while the routee has not yet picked up its first burst sees
	 * no pressure. */
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(
			shmr_send(c->cl.ep, c->router, 1, i, "m", 1), 0);
	return ctl(c, "routees", "work", NULL) == 0 &&
	       strstr(c->ans, "work:1\n") != NULL;
}

/* The default resizer: a pool of one whose routee is always busy with
 * messages waiting (pressure 1 of 1) grows, within upper_bound. */
static void test_default_resizer_grows_a_pressed_pool(void **state)
{
	struct ctx c;
	char conf_extra[256];
	(void)state;

	snprintf(conf_extra, sizeof(conf_extra),
		 "resizer = { lower_bound = 1; upper_bound = 3; "
		 "messages_per_resize = 10; };");
	memset(&c, 0, sizeof(c));
	{
		char conf[1024];

		snprintf(conf, sizeof(conf),
			 "routers = ( { name = \"work\"; behaviour = "
			 "\"round-robin\";\n"
			 "  pool = { size = 1; program = \"shmr-test-worker\";"
			 " args = [ \"--spin-ns\", \"20000000\" ]; };\n"
			 "  %s } );\n",
			 conf_extra);
		assert_int_equal(
			shmr_test_client_start(&c.cl, "resize", conf, -1), 0);
		assert_int_equal(shmr_lookup(c.cl.d, "work", &c.router), 0);
	}
	/* 20 ms a message: 40 messages keep work:0 busy with a queue. */
	for (unsigned i = 0; i < 40; i++)
		assert_int_equal(shmr_send(c.cl.ep, c.router, 1, i, "m", 1), 0);
	assert_true(shmr_test_wait(grew, &c, WAIT_MS));
	assert_null(strstr(c.ans, "work:3\n")); /* upper_bound 3 */
	stop(&c);
}

/* The reference's "router + pool per shard": a free router hashes keys to
 * shard names that its registry resolves to pool routers (router names
 * are registered), each a round-robin pool; both decisions run in the
 * same dataplane pass.  Key k is served by shard k % 2, by both of its
 * workers in turn. */
static void test_pool_per_shard_behind_a_free_router(void **state)
{
	struct ctx c;
	struct shmr_pid orders;
	unsigned seen[2][2] = { { 0 } };
	(void)state;

	memset(&c, 0, sizeof(c));
	assert_int_equal(
		shmr_test_client_start(
			&c.cl, "shards",
			"routers = (\n"
			"  { name = \"orders\"; behaviour = \"hash\";\n"
			"    hash = [ \"s0\", \"s1\" ]; },\n"
			"  { name = \"s0\"; behaviour = \"round-robin\";\n"
			"    pool = { size = 2; program = \"shmr-test-worker\"; }; },\n"
			"  { name = \"s1\"; behaviour = \"round-robin\";\n"
			"    pool = { size = 2; program = \"shmr-test-worker\"; }; }\n"
			");\n",
			-1),
		0);
	assert_int_equal(shmr_lookup(c.cl.d, "orders", &orders), 0);
	for (uint64_t key = 0; key < 8; key++) {
		struct shmr_test_stats st;
		unsigned shard, worker;

		assert_int_equal(shmr_call(c.cl.ep, orders, 1, key, "?", 1, &st,
					   sizeof(st), WAIT_MS),
				 (int)sizeof(st));
		assert_int_equal(sscanf(st.tag, "s%u:%u", &shard, &worker), 2);
		assert_int_equal(shard, key % 2);
		assert_true(worker < 2);
		seen[shard][worker]++;
	}
	for (unsigned s = 0; s < 2; s++)
		for (unsigned w = 0; w < 2; w++)
			assert_int_equal(seen[s][w], 2);
	stop(&c);
}

/* The inbox PID of route @p name of the pool "work". */
static struct shmr_pid inbox_of(struct ctx *c, const char *name)
{
	struct shmr_pid pid;

	assert_int_equal(
		shmr_test_route_pid(&c->cl.app, "work", name, &pid), 0);
	return pid;
}

/* A PoisonPill that reaches a routee (here sent to its inbox directly)
 * is not given to its program: the routee finishes what is queued and
 * leaves the pool; the pool stops with its last routee. */
static void test_poison_pill_retires_a_routee(void **state)
{
	struct ctx c;
	struct shmr_pid w1;
	(void)state;

	start(&c, "pill", "", 2);
	wait_routees(&c, "work:0\nwork:1\n");
	w1 = inbox_of(&c, "work:1");
	assert_int_equal(
		shmr_send(c.cl.ep, w1, SHMR_TYPE_POISON_PILL, 0, NULL, 0), 0);
	wait_routees(&c, "work:0\n");
	assert_int_equal(shmr_send(c.cl.ep, inbox_of(&c, "work:0"),
				   SHMR_TYPE_POISON_PILL, 0, NULL, 0),
			 0);
	assert_true(shmr_test_wait(state_stopped, &c, WAIT_MS));
	stop(&c);
}

/*
 * Resizers keep their bounds at all times: a pool of 2 whose resizer says
 * lower_bound = 3 starts at 3, and a RemoveRoutee that takes it below 3
 * is corrected at once (the GetRoutees that follows it sees the new
 * routee), not after messages_per_resize messages (1000 here: none are
 * sent).
 */
static void test_resizer_keeps_its_bounds(void **state)
{
	struct ctx c;
	char tag[8];
	unsigned new_hits = 0;
	(void)state;

	start(&c, "bounds",
	      "resizer = { lower_bound = 3; upper_bound = 5; "
	      "messages_per_resize = 1000; };",
	      2);
	wait_routees(&c, "work:0\nwork:1\nwork:2\n");
	assert_int_equal(manage(&c, SHMR_TYPE_REMOVE_ROUTEE, 0, "work:1"), 0);
	assert_int_equal(manage(&c, SHMR_TYPE_GET_ROUTEES, 0, NULL),
			 (int)strlen("work:0\nwork:2\nwork:3\n"));
	assert_string_equal(c.ans, "work:0\nwork:2\nwork:3\n");
	/* The new routee takes its share of the work (bounded: the
	 * dataplane's list follows the model's). */
	for (unsigned i = 0; i < 30 && !new_hits; i++) {
		assert_int_equal(call(&c, tag),
				 (int)sizeof(struct shmr_test_stats));
		new_hits += strncmp(tag, "work:3", 8) == 0;
	}
	assert_int_equal(new_hits, 1);
	stop(&c);
}

/* A pool of size 0 with a resizer (lower_bound 0) starts empty and runs:
 * a call fails with SHMR_E_NO_ROUTEES, and AdjustPoolSize grows it. */
static void test_resizer_pool_of_size_0(void **state)
{
	struct ctx c;
	char tag[8];
	(void)state;

	start(&c, "empty", "resizer = { lower_bound = 0; upper_bound = 4; };",
	      0);
	assert_int_equal(manage(&c, SHMR_TYPE_GET_ROUTEES, 0, NULL), 0);
	assert_string_equal(c.ans, "");
	assert_int_equal(call(&c, tag), -SHMR_E_NO_ROUTEES);
	assert_int_equal(manage(&c, SHMR_TYPE_ADJUST_POOL_SIZE, 2, NULL), 1);
	assert_string_equal(c.ans, "2");
	wait_routees(&c, "work:0\nwork:1\n");
	assert_int_equal(call(&c, tag), (int)sizeof(struct shmr_test_stats));
	stop(&c);
}

/*
 * The answer to a management call is what the caller's next message is
 * routed by, with no wait in between (Pekko's router handles them in
 * order): the routee AdjustPoolSize(+1) added takes the call that follows
 * its answer, and after AdjustPoolSize(-1) the next call finds none.
 * Before the control plane held its answers until every lcore had
 * applied the change, an lcore could still route by the table before it
 * (CI saw SHMR_E_NO_ROUTEES right after GetRoutees listed a routee).
 */
static void test_answer_orders_routing(void **state)
{
	struct ctx c;
	char tag[8];
	(void)state;

	/* The resizer only lets the pool be empty: it never looks (a look
	 * every 10 routed messages backed off the routee just added, in a
	 * loaded run's round 10). */
	start(&c, "order",
	      "resizer = { lower_bound = 0; upper_bound = 4; "
	      "messages_per_resize = 1000000000; };",
	      0);
	for (unsigned round = 0; round < 20; round++) {
		assert_int_equal(
			manage(&c, SHMR_TYPE_ADJUST_POOL_SIZE, 1, NULL), 1);
		assert_string_equal(c.ans, "1");
		int rc = call(&c, tag);

		if (rc != (int)sizeof(struct shmr_test_stats))
			fail_msg("round %u: the call after AdjustPoolSize(+1) "
				 "was not answered by the new routee: %d (%s)",
				 round, rc, rc < 0 ? shmr_strerror(rc) : "");
		assert_int_equal(manage(&c, SHMR_TYPE_ADJUST_POOL_SIZE,
					(uint64_t)(int64_t)-1, NULL),
				 1);
		assert_string_equal(c.ans, "0");
		assert_int_equal(call(&c, tag), -SHMR_E_NO_ROUTEES);
	}
	stop(&c);
}

/* The state line of router @p name, as shmrctl inspect shows it. */
static int state_is(struct ctx *c, const char *name, const char *want)
{
	char req[64], line[64];

	snprintf(req, sizeof(req), "INSPECT %s", name);
	snprintf(line, sizeof(line), "\nshmr:state %s\n", want);
	assert_int_equal(shmr_test_ctl(&c->cl.app, req, c->ans,
				       sizeof(c->ans)),
			 0);
	return strstr(c->ans, line) != NULL;
}

/*
 * Group routers: a group whose last routee is removed stops, as Pekko's
 * does (shmr:state stopped; what changes it is then refused with
 * SHMR_E_NOT_ALLOWED, as for any stopped router); one with
 * keep_when_empty = true keeps running.  The routees are a registered
 * endpoint of the test's, which is never routed to here.
 */
static void test_group_stops_with_its_last_routee(void **state)
{
	struct ctx c;
	struct shmr_endpoint *outside;
	struct shmr_pid kept;
	(void)state;

	memset(&c, 0, sizeof(c));
	assert_int_equal(
		shmr_test_client_start(
			&c.cl, "group",
			"stop_grace_ms = 500;\n"
			"routers = (\n"
			" { name = \"grp\"; behaviour = \"round-robin\";\n"
			"   routees = [ \"outside\" ]; },\n"
			" { name = \"kept\"; behaviour = \"round-robin\";\n"
			"   routees = [ \"outside\" ]; keep_when_empty = true; } );\n",
			-1),
		0);
	assert_int_equal(shmr_endpoint_open(c.cl.d, &outside), 0);
	assert_int_equal(shmr_register(outside, "outside"), 0);
	assert_int_equal(shmr_lookup(c.cl.d, "grp", &c.router), 0);
	assert_int_equal(shmr_lookup(c.cl.d, "kept", &kept), 0);
	assert_true(state_is(&c, "grp", "running"));
	assert_int_equal(manage(&c, SHMR_TYPE_REMOVE_ROUTEE, 0, "outside"), 0);
	assert_true(state_is(&c, "grp", "stopped"));
	assert_int_equal(manage(&c, SHMR_TYPE_ADD_ROUTEE, 0, "outside"),
			 -SHMR_E_NOT_ALLOWED);

	c.router = kept;
	assert_int_equal(manage(&c, SHMR_TYPE_REMOVE_ROUTEE, 0, "outside"), 0);
	assert_true(state_is(&c, "kept", "running"));
	assert_int_equal(manage(&c, SHMR_TYPE_ADD_ROUTEE, 0, "outside"), 0);
	assert_int_equal(manage(&c, SHMR_TYPE_GET_ROUTEES, 0, NULL),
			 (int)strlen("outside\n"));
	shmr_endpoint_close(outside);
	stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_starts_and_adjusts),
		cmocka_unit_test(test_management_send_outlives_its_sender),
		cmocka_unit_test(test_add_then_get_routees_sees_it),
		cmocka_unit_test(test_answer_orders_routing),
		cmocka_unit_test(test_kill_restarts_the_pool_or_stops),
		cmocka_unit_test(test_poison_pill_stops_router_and_pool),
		cmocka_unit_test(test_default_resizer_grows_a_pressed_pool),
		cmocka_unit_test(test_pool_per_shard_behind_a_free_router),
		cmocka_unit_test(test_poison_pill_retires_a_routee),
		cmocka_unit_test(test_resizer_keeps_its_bounds),
		cmocka_unit_test(test_resizer_pool_of_size_0),
		cmocka_unit_test(test_group_stops_with_its_last_routee),
	};
	return cmocka_run_group_tests_name("pools", tests, NULL, NULL);
}
