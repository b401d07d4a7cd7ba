/*
 * The reference's use cases, each started from its example configuration
 * in config/examples (the file as an operator would use it, with the
 * test's private domain and run directory), and checked from outside the
 * way an operator would: calls through the router, whose echo workers
 * answer "<route>:<payload>", so the reply names the route that answered;
 * shmrctl for the lifecycle commands; ROUTE's delivered= for sends.
 *
 * Processes that stand for workers supervised elsewhere (registry names)
 * are started by the test itself as `shmr-echo-worker --domain --name`,
 * and stopped and reaped by it before the appliance is stopped.
 *
 * Waits are bounded retries on a real condition (the dataplane applies a
 * spec change asynchronously), never fixed sleeps.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"

#define WAIT_MS 20000

struct ctx {
	struct shmr_test_client cl;
	char reply[256];
	/* for the predicates */
	const char *router;
	uint32_t type;
	uint64_t key;
	const char *want; /* reply prefix, or NULL: want_rc */
	int want_rc;
	const char *route;
	long long not_pid;
	long long want_delivered;
	const char *want_state;
};

static struct ctx *start(const char *tag, const char *example)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char path[PATH_MAX];

	assert_non_null(c);
	assert_int_equal(shmr_test_example_path(example, path, sizeof(path)),
			 0);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(shmr_test_client_start_file(&c->cl, tag, path, -1), 0);
	return c;
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	free(c);
}

/* One call of @p type / @p key through @p router: the reply's length (the
 * reply, NUL-terminated, in c->reply) or the error. */
static int call(struct ctx *c, const char *router, uint32_t type,
		uint64_t key)
{
	struct shmr_pid to;
	int rc = shmr_lookup(c->cl.d, router, &to);

	c->reply[0] = '\0';
	if (rc < 0)
		return rc;
	/* A call can be lost with a process that exits under it (a
	 * registered process being stopped): the waits retry, so a short
	 * timeout keeps them short. */
	rc = shmr_call(c->cl.ep, to, type, key, "q", 1, c->reply,
		       sizeof(c->reply) - 1, 2000);
	if (rc >= 0)
		c->reply[rc] = '\0';
	return rc;
}

static int call_gives(void *arg)
{
	struct ctx *c = arg;
	int rc = call(c, c->router, c->type, c->key);

	if (c->want)
		return rc >= 0 && strcmp(c->reply, c->want) == 0;
	return rc == c->want_rc;
}

/* Wait until a call is answered "<route>:q" by route @p route. */
static void wait_answer(struct ctx *c, const char *router, uint32_t type,
			uint64_t key, const char *route)
{
	char want[96];

	snprintf(want, sizeof(want), "%s:q", route);
	c->router = router;
	c->type = type;
	c->key = key;
	c->want = want;
	if (!shmr_test_wait(call_gives, c, WAIT_MS))
		fail_msg("call %s type %u key %llu: wanted \"%s\", got \"%s\"",
			 router, type, (unsigned long long)key, want,
			 c->reply);
	c->want = NULL;
}

/* Wait until a call fails with @p rc. */
static void wait_error(struct ctx *c, const char *router, uint32_t type,
		       uint64_t key, int rc)
{
	c->router = router;
	c->type = type;
	c->key = key;
	c->want = NULL;
	c->want_rc = rc;
	if (!shmr_test_wait(call_gives, c, WAIT_MS))
		fail_msg("call %s type %u key %llu: wanted %s", router, type,
			 (unsigned long long)key, shmr_strerror(rc));
}

/* A "name=value" number from route @p route's ROUTE line; -1 if none. */
static long long route_field(struct ctx *c, const char *router,
			     const char *route, const char *field)
{
	char req[128], ans[SHMR_PROTO_MAX], key[40];
	const char *p;

	snprintf(req, sizeof(req), "ROUTE %s %s", router, route);
	if (shmr_test_ctl(&c->cl.app, req, ans, sizeof(ans)) < 0)
		return -1;
	snprintf(key, sizeof(key), " %s=", field);
	p = strstr(ans, key);
	return p ? atoll(p + strlen(key)) : -1;
}

/* Route @p route's ROUTE line holds " state=<want_state> ". */
static int state_is(void *arg)
{
	struct ctx *c = arg;
	char req[128], ans[SHMR_PROTO_MAX], want[48];

	snprintf(req, sizeof(req), "ROUTE %s %s", c->router, c->route);
	snprintf(want, sizeof(want), " state=%s ", c->want_state);
	return shmr_test_ctl(&c->cl.app, req, ans, sizeof(ans)) >= 0 &&
	       strstr(ans, want) != NULL;
}

static void wait_state(struct ctx *c, const char *router, const char *route,
		       const char *state)
{
	c->router = router;
	c->route = route;
	c->want_state = state;
	if (!shmr_test_wait(state_is, c, WAIT_MS))
		fail_msg("route %s never reached state %s", route, state);
}

static int new_pid(void *arg)
{
	struct ctx *c = arg;
	long long pid = route_field(c, c->router, c->route, "os_pid");

	return pid > 0 && pid != c->not_pid;
}

static int delivered_is(void *arg)
{
	struct ctx *c = arg;

	return route_field(c, c->router, c->route, "delivered") ==
	       c->want_delivered;
}

static void wait_delivered(struct ctx *c, const char *router,
			   const char *route, long long n)
{
	c->router = router;
	c->route = route;
	c->want_delivered = n;
	if (!shmr_test_wait(delivered_is, c, WAIT_MS))
		fail_msg("route %s: delivered=%lld, wanted %lld", route,
			 route_field(c, router, route, "delivered"), n);
}

/* shmrctl -d DOMAIN ARGS...: its exit status. */
static int shmrctl(struct ctx *c, const char *const *args)
{
	char *argv[16], out[4096];
	int n = 0;

	argv[n++] = getenv("SHMRCTL");
	argv[n++] = "-d";
	argv[n++] = c->cl.app.domain;
	for (; *args && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	return shmr_test_run(argv, out, sizeof(out));
}

/* A process outside the appliance that registers @p name itself. */
static pid_t external(struct ctx *c, const char *name, const char *tag)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("shmr-echo-worker", "shmr-echo-worker", "--domain",
		       c->cl.app.domain, "--name", name, "--tag", tag,
		       (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void external_stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* Content-based dispatch: the type picks the route; an unmapped type is
 * discarded. */
static void test_content_based_dispatch(void **state)
{
	struct ctx *c = start("content", "content.conf");
	(void)state;

	wait_answer(c, "events", 1, 0, "payments");
	wait_answer(c, "events", 2, 0, "shipments");
	wait_answer(c, "events", 3, 7, "reports");
	assert_int_equal(call(c, "events", 9, 0), -SHMR_E_DISCARDED);
	stop(c);
}

/* Every payload length a call can carry arrives byte for byte, and comes
 * back in the reply: libshmr copies short payloads (8 to 16 bytes) its
 * own way, longer and shorter ones with memcpy(). */
static void test_payload_every_length(void **state)
{
	struct ctx *c = start("payload", "content.conf");
	const char *prefix = "payments:";
	size_t pl = strlen(prefix), max = shmr_payload_max(c->cl.d) - pl;
	struct shmr_pid to;
	unsigned char req[256];
	char want[256];
	(void)state;

	wait_answer(c, "events", 1, 0, "payments");
	assert_int_equal(shmr_lookup(c->cl.d, "events", &to), 0);
	assert_true(max < sizeof(req));
	for (size_t len = 0; len <= max; len++) {
		for (size_t i = 0; i < len; i++)
			req[i] = (unsigned char)(i * 7 + len + 1);
		memcpy(want, prefix, pl);
		memcpy(want + pl, req, len);
		assert_int_equal(shmr_call(c->cl.ep, to, 1, len, req, len,
					   c->reply, sizeof(c->reply), 20000),
				 (int)(pl + len));
		assert_memory_equal(c->reply, want, pl + len);
	}
	stop(c);
}

/* Key affinity: key % 4 picks the shard, the same key always the same
 * shard, also after the shard's worker was killed and restarted. */
static void test_key_affinity_shards(void **state)
{
	struct ctx *c = start("shards", "hash.conf");
	char name[32];
	long long pid;
	(void)state;

	for (uint64_t key = 0; key < 12; key++) {
		snprintf(name, sizeof(name), "shard:%u", (unsigned)(key % 4));
		wait_answer(c, "orders", 1, key, name);
	}
	pid = route_field(c, "orders", "shard:1", "os_pid");
	assert_true(pid > 0);
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	c->router = "orders";
	c->route = "shard:1";
	c->not_pid = pid;
	assert_true(shmr_test_wait(new_pid, c, WAIT_MS));
	wait_answer(c, "orders", 1, 5, "shard:1");
	assert_true(route_field(c, "orders", "shard:1", "restarts") >= 1);
	stop(c);
}

/* Router + pool per shard: a free router whose shard names are
 * registered by processes started elsewhere (here, by the test). */
static void test_router_plus_pool_per_shard_via_registry(void **state)
{
	struct ctx *c = start("pools", "shard-pools.conf");
	pid_t shard[4];
	char name[32];
	(void)state;

	/* Nobody registered the names yet. */
	assert_int_equal(call(c, "orders", 1, 0), -SHMR_E_PROCESS_UNKNOWN);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "shard:%u", i);
		shard[i] = external(c, name, name);
	}
	for (uint64_t key = 0; key < 8; key++) {
		snprintf(name, sizeof(name), "shard:%u", (unsigned)(key % 4));
		wait_answer(c, "orders", 1, key, name);
	}
	/* The process behind shard:2 goes: its name is dropped; a new
	 * process registering the name takes the shard's traffic. */
	external_stop(shard[2]);
	wait_error(c, "orders", 1, 6, -SHMR_E_PROCESS_UNKNOWN);
	shard[2] = external(c, "shard:2", "shard:2");
	wait_answer(c, "orders", 1, 6, "shard:2");
	for (unsigned i = 0; i < 4; i++)
		external_stop(shard[i]);
	stop(c);
}

/* CQRS: sends (commands) by key % 4 to the write shards, calls (queries)
 * by type to the views, whatever their key. */
static void test_cqrs_commands_by_key_queries_by_type(void **state)
{
	struct ctx *c = start("cqrs", "cqrs.conf");
	static const char *const views[] = { "orders.view",
					     "user_orders.view",
					     "stats.view" };
	struct shmr_pid orders;
	long long seen[3];
	char name[32];
	(void)state;

	for (uint32_t type = 1; type <= 3; type++)
		for (uint64_t key = 0; key < 5; key++)
			wait_answer(c, "orders", type, key, views[type - 1]);
	assert_int_equal(call(c, "orders", 4, 0), -SHMR_E_DISCARDED);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "orders.write:%u", i);
		assert_int_equal(route_field(c, "orders", name, "delivered"),
				 0);
	}

	for (unsigned i = 0; i < 3; i++) {
		seen[i] = route_field(c, "orders", views[i], "delivered");
		assert_true(seen[i] >= 5);
	}

	/* Commands: keys 0..8 of type 1 (the type a query uses too). */
	assert_int_equal(shmr_lookup(c->cl.d, "orders", &orders), 0);
	for (uint64_t key = 0; key < 9; key++)
		assert_int_equal(
			shmr_send(c->cl.ep, orders, 1, key, "c", 1), 0);
	wait_delivered(c, "orders", "orders.write:0", 3); /* 0, 4, 8 */
	wait_delivered(c, "orders", "orders.write:1", 2);
	wait_delivered(c, "orders", "orders.write:2", 2);
	wait_delivered(c, "orders", "orders.write:3", 2);
	/* No command reached a view. */
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(route_field(c, "orders", views[i],
					     "delivered"),
				 seen[i]);
	stop(c);
}

/* Router of routers: one call through the top router reaches the worker
 * behind the domain router its type names. */
static void test_router_of_routers(void **state)
{
	struct ctx *c = start("tiers", "router-of-routers.conf");
	(void)state;

	wait_answer(c, "top", 1, 0, "orders.create");
	wait_answer(c, "top", 2, 0, "orders.query");
	wait_answer(c, "top", 3, 0, "billing.invoice");
	wait_answer(c, "top", 4, 0, "billing.refund");
	/* The second tier is a router in its own right. */
	wait_answer(c, "billing", 3, 0, "billing.invoice");
	assert_int_equal(call(c, "top", 5, 0), -SHMR_E_DISCARDED);
	stop(c);
}

/* Circuit breaker: shmrctl disable -> SHMR_E_DISABLED, the other routes
 * unaffected; enable -> answered again, by a new worker. */
static void test_circuit_breaker(void **state)
{
	struct ctx *c = start("breaker", "circuit-breaker.conf");
	const char *off[] = { "disable", "events", "payments", NULL };
	const char *on[] = { "enable", "events", "payments", NULL };
	long long pid;
	(void)state;

	wait_answer(c, "events", 1, 0, "payments");
	pid = route_field(c, "events", "payments", "os_pid");
	assert_int_equal(shmrctl(c, off), 0);
	wait_error(c, "events", 1, 0, -SHMR_E_DISABLED);
	wait_answer(c, "events", 2, 0, "shipments");
	/* The worker has exited: the disable is complete. */
	wait_state(c, "events", "payments", "disabled");
	assert_int_equal(shmrctl(c, off), 0); /* idempotent */
	assert_int_equal(call(c, "events", 1, 0), -SHMR_E_DISABLED);
	assert_int_equal(shmrctl(c, on), 0);
	wait_answer(c, "events", 1, 0, "payments");
	assert_true(route_field(c, "events", "payments", "os_pid") != pid);
	stop(c);
}

/* Hot deploy: shmrctl replace puts a new program behind the route; the
 * route's name stays, a new process answers with the new code's reply. */
static void test_hot_deploy(void **state)
{
	struct ctx *c = start("deploy", "hot-deploy.conf");
	const char *rep[] = { "replace", "events", "payments",
			      "shmr-echo-worker", "--tag", "payments-v2",
			      NULL };
	long long pid;
	(void)state;

	wait_answer(c, "events", 1, 0, "payments");
	pid = route_field(c, "events", "payments", "os_pid");
	assert_true(pid > 0);
	assert_int_equal(shmrctl(c, rep), 0);
	wait_answer(c, "events", 1, 0, "payments-v2");
	c->router = "events";
	c->route = "payments";
	c->not_pid = pid;
	assert_true(shmr_test_wait(new_pid, c, WAIT_MS));
	wait_answer(c, "events", 2, 0, "shipments"); /* untouched */
	stop(c);
}

/* Mixed mode: one owned route and one registry name; promoting the name
 * to an owned route moves its traffic without touching the type map. */
static void test_mixed_mode_migration(void **state)
{
	struct ctx *c = start("mixed", "mixed.conf");
	const char *add[] = { "add", "events", "shipments",
			      "shmr-echo-worker", "--tag", "shipments", NULL };
	pid_t ext;
	(void)state;

	wait_answer(c, "events", 1, 0, "payments");
	assert_int_equal(call(c, "events", 2, 0), -SHMR_E_PROCESS_UNKNOWN);
	ext = external(c, "shipments", "shipments-external");
	wait_answer(c, "events", 2, 0, "shipments-external");

	/* Promote: the owned route shadows the registry name. */
	assert_int_equal(shmrctl(c, add), 0);
	wait_answer(c, "events", 2, 0, "shipments");
	external_stop(ext);
	wait_answer(c, "events", 2, 0, "shipments");
	wait_answer(c, "events", 1, 0, "payments");
	stop(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_based_dispatch),
		cmocka_unit_test(test_payload_every_length),
		cmocka_unit_test(test_key_affinity_shards),
		cmocka_unit_test(test_router_plus_pool_per_shard_via_registry),
		cmocka_unit_test(test_cqrs_commands_by_key_queries_by_type),
		cmocka_unit_test(test_router_of_routers),
		cmocka_unit_test(test_circuit_breaker),
		cmocka_unit_test(test_hot_deploy),
		cmocka_unit_test(test_mixed_mode_migration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
