/*
 * Routee paths (issue 12): shmr_lookup("router/route") resolves a route's
 * inbox without registering it, for any client and for the route's own
 * worker.  The real appliance; this executable is also one route's worker
 * (run with --path-worker), which answers every call with what its own
 * lookup of "$SHMR_ROUTER/$SHMR_ROUTE" gave.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/shmr.h>

#include "shmr_test_app.h"
#include "test_worker.h"

struct whoami {
	int32_t rc;             /* shmr_lookup() of its own qualified name */
	uint32_t pad;
	struct shmr_pid looked; /* what it resolved to */
	struct shmr_pid self;   /* the worker's endpoint */
};

static int path_worker(void)
{
	const char *router = getenv("SHMR_ROUTER"), *route = getenv("SHMR_ROUTE");
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct whoami w = { 0 };
	char name[2 * SHMR_NAME_MAX + 2];

	if (!router || !route || shmr_attach_env(&d, &ep) < 0)
		return 1;
	snprintf(name, sizeof(name), "%s/%s", router, route);
	w.rc = shmr_lookup(d, name, &w.looked);
	w.self = shmr_endpoint_pid(ep);
	while (!shmr_stopping()) {
		const struct shmr_msg *msgs[8];
		int n = shmr_recv_burst(ep, msgs, 8, 1000);

		for (int i = 0; i < n; i++)
			if (msgs[i]->kind == SHMR_KIND_CALL)
				while (shmr_reply(ep, msgs[i], 0, &w,
						  sizeof(w)) == -EAGAIN)
					;
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}

struct ctx {
	struct shmr_test_client cl;
	struct shmr_test_app *app;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
};

static char self_exe[PATH_MAX];

static int group_setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[PATH_MAX + 1024];

	/* Two routers with a route called "a" each: the qualified name must
	 * pick the router's. */
	snprintf(conf, sizeof(conf),
		 "lcores = 1;\n"
		 "routers = (\n"
		 " { name = \"front\"; behaviour = \"type\";\n"
		 "   types = ( { type = 1; route = \"a\"; } );\n"
		 "   routes = (\n"
		 "    { name = \"a\"; program = \"shmr-test-worker\"; },\n"
		 "    { name = \"self\"; program = \"%s\"; args = [\"--path-worker\"]; } ); },\n"
		 " { name = \"back\"; behaviour = \"type\";\n"
		 "   types = ( { type = 1; route = \"a\"; } );\n"
		 "   routes = ( { name = \"a\"; program = \"shmr-test-worker\"; } ); } );\n",
		 self_exe);
	if (!c || shmr_test_client_start(&c->cl, "paths", conf, -1) < 0)
		return -1;
	c->app = &c->cl.app;
	c->d = c->cl.d;
	c->ep = c->cl.ep;
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;
	int left = shmr_test_client_stop(&c->cl);

	free(c);
	return left == 0 ? 0 : -1;
}

static void assert_pid_equal(struct shmr_pid a, struct shmr_pid b)
{
	assert_int_equal(a.slot, b.slot);
	assert_int_equal(a.gen, b.gen);
}

/* A client resolves router/route to that route's inbox (as `shmrctl route`
 * names it), and a call sent there reaches that route's worker. */
static void test_client_looks_up_route(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid fa, ba, want;
	struct shmr_test_stats st;

	assert_int_equal(shmr_lookup(c->d, "front/a", &fa), 0);
	assert_int_equal(shmr_test_route_pid(c->app, "front", "a", &want), 0);
	assert_pid_equal(fa, want);
	assert_int_equal(shmr_lookup(c->d, "back/a", &ba), 0);
	assert_int_equal(shmr_test_route_pid(c->app, "back", "a", &want), 0);
	assert_pid_equal(ba, want);
	assert_true(fa.slot != ba.slot);
	assert_int_equal(shmr_call(c->ep, fa, 1, 0, "stats", 5, &st,
				   sizeof(st), 30000),
			 (int)sizeof(st));
	assert_pid_equal(st.self, fa);
	/* Unqualified, the router's name still resolves as before. */
	assert_int_equal(shmr_lookup(c->d, "front", &want), 0);
}

/* A worker resolves its own route, and gets its own endpoint. */
static void test_worker_looks_up_own_route(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid self;
	struct whoami w;

	assert_int_equal(shmr_lookup(c->d, "front/self", &self), 0);
	assert_int_equal(shmr_call(c->ep, self, 7, 0, "who", 3, &w, sizeof(w),
				   30000),
			 (int)sizeof(w));
	assert_int_equal(w.rc, 0);
	assert_pid_equal(w.looked, w.self);
	assert_pid_equal(w.self, self);
}

/* Not there: -SHMR_E_PROCESS_UNKNOWN; not a name: -SHMR_E_NAME. */
static void test_path_errors(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid p;
	static const char *const bad[] = { "/a", "front/", "front/a/b",
					   "front//a", "/",
					   "front/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					   "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr/a" };

	assert_int_equal(shmr_lookup(c->d, "front/nosuch", &p),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(shmr_lookup(c->d, "nosuch/a", &p),
			 -SHMR_E_PROCESS_UNKNOWN);
	/* A route's bare name is not registered. */
	assert_int_equal(shmr_lookup(c->d, "self", &p),
			 -SHMR_E_PROCESS_UNKNOWN);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("lookup \"%s\"\n", bad[i]);
		assert_int_equal(shmr_lookup(c->d, bad[i], &p), -SHMR_E_NAME);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--path-worker") == 0)
		return path_worker();
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = 0;

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_looks_up_route),
		cmocka_unit_test(test_worker_looks_up_own_route),
		cmocka_unit_test(test_path_errors),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
