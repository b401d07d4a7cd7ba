/*
 * Supervision per router (`supervisor = ...`, Pekko's pool supervision),
 * through the real appliance: a pool of shmr-test-worker routees, one of
 * them killed with kill -9 (its os pid from `shmrctl inspect`), and what
 * a user then sees: the routees list, the routes' processes and restart
 * counts, and which messages reached a program.
 *
 *   restart     the dead routee alone restarts into its slot, its inbox
 *               kept: what was queued for it reaches its successor
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supervisor_restart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
