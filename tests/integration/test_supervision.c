/*
 * Supervision per router (`supervisor = ...`, Pekko's pool supervision),
 * through the real appliance: a pool of shmr-test-worker routees, one of
 * them killed with kill -9 (its os pid from `shmrctl inspect`), and what
 * a user then sees: the routees list, the routes' processes and restart
 * counts, and which messages reached a program.
 *
 *   restart     the dead routee alone restarts into its slot, its inbox
 *               kept: what was queued for it reaches its successor
 *   stop        the dead routee leaves the pool (a Kill sent to a routee
 *               too); what was queued for it is dead-lettered, and a
 *               replay delivers it to the others; with a resizer a new
 *               routee keeps lower_bound at once; the last one gone (a
 *               kill -9, a Broadcast(Kill)), the pool stops; a Kill to
 *               the router still restarts every routee
 *   all-for-one every routee restarts into its slot, each inbox kept
 *   escalate    the router fails as on a Kill to it: every routee
 *               restarts (on_kill = "restart"), or the router stops
 *               (on_kill = "stop")
 *
 * The routee to kill is held at a gate (shmr-test-worker --gate) with
 * messages queued behind it, sent straight to its inbox.  Waits are
 * bounded retries on real conditions, never fixed sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/domain.h>
#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 30000
#define NKEYS 16u
#define QUEUED 4u /* keys 0..3 held by, or queued for, the killed routee */
#define SENT 10u  /* keys 0..9 are sent in all */

struct ctx {
	struct shmr_test_client cl; /* domain mapped here */
	char ans[SHMR_PROTO_MAX];
	char gate[128], rec[128];
	struct shmr_pid work, held;
	const char *route;
	long long old;
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

/* The router: supervisor, what else, pool size, gate, record. */
static const char conf_format[] =
	"stop_grace_ms = 500;\nrouters = ( { name = \"work\";\n"
	"  behaviour = \"round-robin\"; supervisor = \"%s\"; %s\n"
	"  pool = { size = %u; program = \"shmr-test-worker\"; args = [\n"
	"    \"--gate-count\", \"1\", \"--gate\", \"%s\", \"--record\", \"%s\" ];\n"
	"  }; } );\n";

/* A pool "work" of @p size shmr-test-worker routees under @p supervisor,
 * each gated at its first burst and recording into c->rec; @p extra goes
 * into the router's group. */
static struct ctx *start(const char *tag, const char *supervisor,
			 unsigned size, const char *extra)
{
	char body[1024], gate[128], rec[128];
	struct ctx *c;

	client_make_gate_record(tag, gate, rec, sizeof(gate), NKEYS);
	snprintf(body, sizeof(body), conf_format, supervisor, extra, size,
		 gate, rec);
	c = client_ctx_start(sizeof(*c), tag, body, 1);
	memcpy(c->gate, gate, sizeof(gate));
	memcpy(c->rec, rec, sizeof(rec));
	c->work = client_lookup(&c->cl, "work");
	return c;
}

static void finish(struct ctx *c)
{
	unlink(c->gate);
	unlink(c->rec);
	client_ctx_stop(c);
}

/* shmr:route:ROUTE:FIELD of `INSPECT work` (-1: absent). */
static long long route_field(struct ctx *c, const char *route,
			     const char *field)
{
	char key[96];

	snprintf(key, sizeof(key), "shmr:route:%s:%s", route, field);
	return client_inspect(&c->cl, "work", c->ans, sizeof(c->ans), key);
}

static long long router_field(struct ctx *c, const char *key)
{
	return client_inspect(&c->cl, "work", c->ans, sizeof(c->ans), key);
}

/* `shmrctl -s SOCK VERB [ARG] work` must succeed. */
static void shmrctl(struct ctx *c, const char *verb, const char *arg)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock,
			 (char *)verb, (char *)(arg ? arg : "work"),
			 arg ? "work" : NULL, NULL };

	if (shmr_test_run(argv, c->ans, sizeof(c->ans)) != 0)
		fail_msg("shmrctl %s %s work: %s", verb, arg ? arg : "",
			 c->ans);
}

static void send_key(struct ctx *c, struct shmr_pid to, uint32_t type,
		     uint64_t k)
{
	client_send_key(&c->cl, to, type, k);
}

static int is_busy(void *arg)
{
	struct ctx *c = arg;

	return client_busy(&c->cl, c->held) != 0;
}

/* Route @p route (work:0): key 0 held at its gate, keys 1..3 queued
 * behind it in its inbox; returns its os pid. */
static pid_t hold_routee(struct ctx *c, const char *route)
{
	long long pid = route_field(c, route, "os_pid");

	assert_true(pid > 0);
	c->held = client_route_pid(&c->cl, "work", route);
	send_key(c, c->held, 1, 0);
	assert_true(shmr_test_wait(is_busy, c, WAIT_MS));
	for (uint64_t k = 1; k < QUEUED; k++)
		send_key(c, c->held, 1, k);
	return (pid_t)pid;
}

static void wait_routees(struct ctx *c, const char *want)
{
	client_wait_routees(&c->cl, "work", want, WAIT_MS);
}

/* Route c->route runs a process other than c->old. */
static int replaced(void *arg)
{
	struct ctx *c = arg;
	long long pid = route_field(c, c->route, "os_pid");

	return pid > 0 && pid != c->old;
}

static void wait_replaced(struct ctx *c, const char *route, long long old)
{
	c->route = route;
	c->old = old;
	if (!shmr_test_wait(replaced, c, WAIT_MS))
		fail_msg("%s: worker %lld was not replaced: %s", route, old,
			 c->ans);
}

/* Keys QUEUED..SENT-1 through the router; then every key 0..SENT-1 must
 * reach a program exactly once. */
static void send_rest_and_check(struct ctx *c)
{
	struct client_record_wait w = { c->gate, c->rec, SENT, -1 };
	unsigned char counts[2 * NKEYS];

	for (uint64_t k = QUEUED; k < SENT; k++)
		send_key(c, c->work, 1, k);
	if (!shmr_test_wait(client_gate_recorded, &w, WAIT_MS))
		fail_msg("not every message reached a routee");
	client_read_record(c->rec, counts, NKEYS);
	for (unsigned k = 0; k < SENT; k++)
		if (counts[k] != 1)
			fail_msg("key %u received %u times", k, counts[k]);
}

/*
 * restart (the default, Pekko's default for a routee's failure as this
 * appliance has always done it): kill -9 of work:0 restarts work:0 alone,
 * into the same slot: the others keep their processes, the routees list
 * is unchanged, and what was queued for work:0 (and the message it held)
 * reaches its successor.
 */
static void test_supervisor_restart(void **state)
{
	long long p1, p2;
	struct ctx *c;
	pid_t victim;
	(void)state;

	c = start("sup-restart", "restart", 3, "");
	(void)router_field(c, "shmr:state");
	assert_non_null(strstr(c->ans, "\nshmr:supervisor restart\n"));
	p1 = route_field(c, "work:1", "os_pid");
	p2 = route_field(c, "work:2", "os_pid");
	victim = hold_routee(c, "work:0");
	assert_int_equal(kill(victim, SIGKILL), 0);
	wait_replaced(c, "work:0", victim);
	assert_int_equal(route_field(c, "work:0", "restarts"), 1);
	assert_int_equal(route_field(c, "work:1", "os_pid"), p1);
	assert_int_equal(route_field(c, "work:2", "os_pid"), p2);
	assert_int_equal(route_field(c, "work:1", "restarts"), 0);
	wait_routees(c, "work:0\nwork:1\nwork:2\n");
	send_rest_and_check(c);
	finish(c);
}

static int dlq_is(void *arg)
{
	struct ctx *c = arg;

	return router_field(c, "shmr:dlq_size") == (long long)QUEUED;
}

static int router_stopped(void *arg)
{
	struct ctx *c = arg;

	(void)router_field(c, "shmr:state");
	return strstr(c->ans, "\nshmr:state stopped\n") != NULL;
}

/* Router stopped, and every routing lcore routes by the spec that says
 * so (the control plane answers from its model at once; the dataplane
 * applies a spec a moment later, and a call routed before that waits in
 * a gone routee's inbox instead of being refused). */
static int router_stopped_applied(void *arg)
{
	struct ctx *c = arg;
	const struct shmr_domain_hdr *h = shmr_hdr(c->cl.base);
	long long v;

	if (!router_stopped(c) ||
	    shmr_test_ctl(&c->cl.app, "STATUS", c->ans, sizeof(c->ans)) != 0 ||
	    (v = shmr_test_value(c->ans, "spec_version")) < 0)
		return 0;
	for (uint32_t l = 0; l < h->nlcores && l < SHMR_MAX_LCORES; l++)
		if (atomic_load(&shmr_stats_of(c->cl.base, l)->table_version) <
		    (uint64_t)v)
			return 0;
	return 1;
}

/*
 * stop (Pekko's pool behaviour: a routee that dies is not replaced):
 * kill -9 of work:0, holding key 0 with keys 1..3 queued behind it,
 * removes work:0 from the routees; the others keep their processes;
 * the four messages are in the router's dead letters (shmr:dlq_size 4),
 * none reached a program, and `shmrctl dlq replay` delivers them to the
 * remaining routees, each exactly once.  A Kill sent to work:1 removes it
 * too, and once work:2 is killed the pool, with no routees left, stops.
 */
static void test_supervisor_stop(void **state)
{
	unsigned char counts[2 * NKEYS];
	long long p1, p2;
	struct ctx *c;
	pid_t victim;
	(void)state;

	c = start("sup-stop", "stop", 3, "");
	p1 = route_field(c, "work:1", "os_pid");
	p2 = route_field(c, "work:2", "os_pid");
	victim = hold_routee(c, "work:0");
	assert_int_equal(kill(victim, SIGKILL), 0);
	wait_routees(c, "work:1\nwork:2\n");
	assert_int_equal(router_field(c, "shmr:routes_total"), 2);
	assert_int_equal(route_field(c, "work:0", "os_pid"), -1);
	assert_int_equal(route_field(c, "work:1", "os_pid"), p1);
	assert_int_equal(route_field(c, "work:2", "os_pid"), p2);
	assert_int_equal(route_field(c, "work:1", "restarts"), 0);
	if (!shmr_test_wait(dlq_is, c, WAIT_MS))
		fail_msg("wanted %u dead letters: %s", QUEUED, c->ans);
	client_read_record(c->rec, counts, NKEYS);
	for (unsigned k = 0; k < QUEUED; k++)
		assert_int_equal(counts[k], 0);
	shmrctl(c, "dlq", "replay");
	send_rest_and_check(c);

	send_key(c, client_route_pid(&c->cl, "work", "work:1"),
		 SHMR_TYPE_KILL, 0);
	wait_routees(c, "work:2\n");
	assert_int_equal(kill((pid_t)p2, SIGKILL), 0);
	if (!shmr_test_wait(router_stopped, c, WAIT_MS))
		fail_msg("the pool did not stop with its last routee: %s",
			 c->ans);
	finish(c);
}

/*
 * stop with a resizer (lower_bound 2): the routee killed is replaced at
 * once by a new one (the lowest free index, listed last: creation
 * order), not restarted (restarts 0), before any message is routed.
 */
static void test_supervisor_stop_keeps_resizer_bounds(void **state)
{
	long long old, now;
	struct ctx *c;
	(void)state;

	c = start("sup-bounds", "stop", 2,
		  "resizer = { lower_bound = 2; upper_bound = 4; };");
	old = route_field(c, "work:0", "os_pid");
	assert_true(old > 0);
	assert_int_equal(kill((pid_t)old, SIGKILL), 0);
	wait_routees(c, "work:1\nwork:0\n");
	now = route_field(c, "work:0", "os_pid");
	assert_true(now > 0 && now != old);
	assert_int_equal(route_field(c, "work:0", "restarts"), 0);
	finish(c);
}

/*
 * stop and Broadcast(Kill): every routee is killed once and removed, and
 * the pool, with no routees left and no resizer, stops (Pekko's pool
 * terminates once all its routees have).
 */
static void test_supervisor_stop_broadcast_kill_stops_the_pool(void **state)
{
	struct ctx *c;
	int rc, tries = 0;
	(void)state;

	c = start("sup-bkill", "stop", 2, "");
	while ((rc = shmr_send_broadcast(c->cl.ep, c->work, SHMR_TYPE_KILL, 0,
					 NULL, 0)) == -EAGAIN) {
		assert_true(++tries < 1000000);
		usleep(100);
	}
	assert_int_equal(rc, 0);
	if (!shmr_test_wait(router_stopped, c, WAIT_MS))
		fail_msg("the pool did not stop: %s", c->ans);
	assert_int_equal(router_field(c, "shmr:routes_total"), 0);
	assert_int_equal(router_field(c, "shmr:restarts"), 0);
	finish(c);
}

/*
 * stop does not apply to the router's own failure: a Kill to the router
 * (`shmrctl kill work`, on_kill = "restart") restarts every routee into
 * its slot, the pool keeping its size and its routees.
 */
static void test_supervisor_stop_router_kill_restarts(void **state)
{
	static const char *names[2] = { "work:0", "work:1" };
	long long old[2];
	struct ctx *c;
	(void)state;

	c = start("sup-rkill", "stop", 2, "");
	for (unsigned i = 0; i < 2; i++)
		old[i] = route_field(c, names[i], "os_pid");
	shmrctl(c, "kill", NULL);
	for (unsigned i = 0; i < 2; i++) {
		wait_replaced(c, names[i], old[i]);
		assert_int_equal(route_field(c, names[i], "restarts"), 1);
	}
	wait_routees(c, "work:0\nwork:1\n");
	finish(c);
}

/* Every routee of c's pool of three runs a process other than @p old's,
 * each restarted once; the routees list is unchanged. */
static void check_all_restarted(struct ctx *c, const long long old[3])
{
	static const char *names[3] = { "work:0", "work:1", "work:2" };

	for (unsigned i = 0; i < 3; i++) {
		wait_replaced(c, names[i], old[i]);
		assert_int_equal(route_field(c, names[i], "restarts"), 1);
	}
	wait_routees(c, "work:0\nwork:1\nwork:2\n");
}

static void pool_pids(struct ctx *c, long long old[3])
{
	char name[16];

	for (unsigned i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "work:%u", i);
		old[i] = route_field(c, name, "os_pid");
		assert_true(old[i] > 0);
	}
}

/* A pool of three under @p supervisor: kill -9 of work:0 (holding key 0,
 * keys 1..3 queued) restarts all three, once each, into their slots; the
 * routees are unchanged, what was queued for work:0 reaches its
 * successor, and the pool routes on. */
static void kill_one_restarts_all(const char *tag, const char *supervisor)
{
	long long old[3];
	struct ctx *c = start(tag, supervisor, 3, "");

	pool_pids(c, old);
	assert_int_equal(kill(hold_routee(c, "work:0"), SIGKILL), 0);
	check_all_restarted(c, old);
	assert_int_equal(router_field(c, "shmr:restarts"), 3);
	send_rest_and_check(c);
	finish(c);
}

/* all-for-one: Pekko's AllForOneStrategy with Restart. */
static void test_supervisor_all_for_one(void **state)
{
	(void)state;
	kill_one_restarts_all("sup-afo", "all-for-one");
}

/* escalate with on_kill = "restart": Pekko's default for a pool (the
 * failure goes to the router's parent, which restarts the router and so
 * every routee). */
static void test_supervisor_escalate_restarts_the_router(void **state)
{
	(void)state;
	kill_one_restarts_all("sup-esc", "escalate");
}

/*
 * escalate with on_kill = "stop": kill -9 of one routee stops the router
 * (shmr:state stopped, no worker left, nothing restarted), and a call
 * to it then fails with SHMR_E_NOT_ALLOWED, as for any stopped router.
 */
static void test_supervisor_escalate_stops_the_router(void **state)
{
	char reply[64];
	long long old[3];
	struct ctx *c;
	(void)state;

	c = start("sup-escstop", "escalate", 3, "on_kill = \"stop\";");
	pool_pids(c, old);
	assert_int_equal(kill((pid_t)old[2], SIGKILL), 0);
	if (!shmr_test_wait(router_stopped_applied, c, WAIT_MS))
		fail_msg("the router did not stop: %s", c->ans);
	assert_int_equal(router_field(c, "shmr:restarts"), 0);
	assert_int_equal(shmr_call(c->cl.ep, c->work, 1, 0, "?", 1, reply,
				   sizeof(reply), CLIENT_CALL_MS),
			 -SHMR_E_NOT_ALLOWED);
	finish(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supervisor_restart),
		cmocka_unit_test(test_supervisor_stop),
		cmocka_unit_test(test_supervisor_stop_keeps_resizer_bounds),
		cmocka_unit_test(test_supervisor_stop_router_kill_restarts),
		cmocka_unit_test(test_supervisor_stop_broadcast_kill_stops_the_pool),
		cmocka_unit_test(test_supervisor_all_for_one),
		cmocka_unit_test(test_supervisor_escalate_restarts_the_router),
		cmocka_unit_test(test_supervisor_escalate_stops_the_router),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
