/*
 * DPDK telemetry (issue 14): Debian's dpdk-telemetry.py, run against the
 * test appliance's dataplane as an operator runs it
 * (`dpdk-telemetry.py -f shmr-DOMAIN`, commands on its standard input),
 * answers each /shmr/ command with JSON that holds what the test caused:
 * the calls it made through a router show on the route, its inbox and
 * the lcore.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include <shmr/shmr.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CALLS 3

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid inbox;
};

/* The appliance of the first group, and what the test caused in it. */
static struct ctx g_app;

/* Start it, and make CALLS calls through router "front" to route "a". */
static int group_setup(void **state)
{
	struct ctx *c = &g_app;
	struct shmr_pid router;
	struct shmr_test_stats st;
	int i = 0;

	if (shmr_test_client_start(
		    &c->cl, "telemetry",
		    "lcores = 1;\n"
		    "routers = ( { name = \"front\"; behaviour = \"type\";\n"
		    "  types = ( { type = 1; route = \"a\"; } );\n"
		    "  routes = ( { name = \"a\"; program = "
		    "\"shmr-test-worker\"; } ); } );\n",
		    -1) < 0)
		return -1;
	if (shmr_lookup(c->cl.d, "front", &router) == 0 &&
	    shmr_test_route_pid(&c->cl.app, "front", "a", &c->inbox) == 0)
		while (i < CALLS &&
		       shmr_call(c->cl.ep, router, 1, 0, "stats", 5, &st,
				 sizeof(st), 30000) == (int)sizeof(st))
			i++;
	if (i < CALLS) {
		shmr_test_client_stop(&c->cl);
		return -1;
	}
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return shmr_test_client_stop(&g_app.cl) == 0 ? 0 : -1;
}

/*
 * Run dpdk-telemetry.py -f shmr-DOMAIN with @p cmd on its input and return
 * the JSON value it printed for @p cmd (NULL in the answer when the
 * command was refused); fails the test if the script printed no JSON.
 */
static json_object *telemetry(struct ctx *c, const char *cmd, char *out,
			      size_t cap)
{
	char script[512], prefix[SHMR_NAME_MAX + 8], key[64];
	json_object *all, *v = NULL;

	snprintf(prefix, sizeof(prefix), "shmr-%s", c->cl.app.domain);
	snprintf(script, sizeof(script),
		 "echo '%s' | dpdk-telemetry.py -f '%s'", cmd, prefix);
	char *argv[] = { "sh", "-c", script, NULL };

	assert_int_equal(shmr_test_run(argv, out, cap), 0);
	print_message("%s -> %s", cmd, out);
	all = json_tokener_parse(out);
	if (!all)
		fail_msg("dpdk-telemetry.py printed no JSON for %s: %s", cmd,
			 out);
	/* The answer's key is the command without its parameter. */
	snprintf(key, sizeof(key), "%.*s", (int)strcspn(cmd, ","), cmd);
	assert_true(json_object_object_get_ex(all, key, &v));
	/* Keep the value, drop the wrapper. */
	v = json_object_get(v);
	json_object_put(all);
	return v;
}

static int64_t field(json_object *o, const char *name)
{
	json_object *f;

	if (!json_object_object_get_ex(o, name, &f))
		fail_msg("no field %s", name);
	assert_true(json_object_is_type(f, json_type_int));
	return json_object_get_int64(f);
}

static const char *sfield(json_object *o, const char *name)
{
	json_object *f;

	if (!json_object_object_get_ex(o, name, &f))
		fail_msg("no field %s", name);
	assert_true(json_object_is_type(f, json_type_string));
	return json_object_get_string(f);
}

/* "/" (what the script completes commands from) lists the five. */
static void test_commands_listed(void **state)
{
	static const char *const want[] = { "/shmr/lcores", "/shmr/routers",
					    "/shmr/routes", "/shmr/endpoints",
					    "/shmr/lanes" };
	char out[16384];
	json_object *v = telemetry(*state, "/", out, sizeof(out));

	assert_true(json_object_is_type(v, json_type_array));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int seen = 0;

		for (size_t j = 0; j < json_object_array_length(v); j++)
			seen |= strcmp(json_object_get_string(
					       json_object_array_get_idx(v, j)),
				       want[i]) == 0;
		if (!seen)
			fail_msg("%s not listed by /", want[i]);
	}
	json_object_put(v);
}

/* The lcore list, and lcore 0's counters: every call came through it. */
static void test_lcores(void **state)
{
	char out[16384];
	json_object *v = telemetry(*state, "/shmr/lcores", out, sizeof(out));

	assert_true(json_object_is_type(v, json_type_array));
	assert_int_equal(json_object_array_length(v), 1);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(v, 0)),
			 0);
	json_object_put(v);

	v = telemetry(*state, "/shmr/lcores,0", out, sizeof(out));
	assert_true(json_object_is_type(v, json_type_object));
	assert_true(field(v, "polls") > 0);
	/* CALLS calls in, CALLS replies back out through the lcore. */
	assert_true(field(v, "slots_in") >= 2 * CALLS);
	assert_true(field(v, "forwarded") >= 2 * CALLS);
	assert_int_equal(field(v, "bad"), 0);
	json_object_put(v);

	/* No such lcore: refused (null), the dataplane still answers. */
	v = telemetry(*state, "/shmr/lcores,7", out, sizeof(out));
	assert_null(v);
}

/* @p cmd (a list) answers the one name @p want. */
static void list_of_one(struct ctx *c, const char *cmd, const char *want)
{
	char out[16384];
	json_object *v = telemetry(c, cmd, out, sizeof(out));

	assert_true(json_object_is_type(v, json_type_array));
	assert_int_equal(json_object_array_length(v), 1);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(v, 0)), want);
	json_object_put(v);
}

/* The route list names router/route; the route shows the calls, and so
 * does its router. */
static void test_routes(void **state)
{
	struct ctx *c = *state;
	char out[16384];
	json_object *v;

	list_of_one(c, "/shmr/routes", "front/a");
	v = telemetry(c, "/shmr/routes,front/a", out, sizeof(out));
	assert_string_equal(sfield(v, "router"), "front");
	assert_string_equal(sfield(v, "route"), "a");
	assert_string_equal(sfield(v, "state"), "running");
	assert_int_equal(field(v, "inbox_slot"), c->inbox.slot);
	/* The registry's ROUTE lines, under their names. */
	assert_int_equal(field(v, "forwarded"), CALLS);
	assert_int_equal(field(v, "queued"), 0);
	assert_int_equal(field(v, "restarts"), 0);
	json_object_put(v);

	assert_null(telemetry(c, "/shmr/routes,front/nosuch", out,
			      sizeof(out)));

	/* The router list, and the router's registry counters. */
	list_of_one(c, "/shmr/routers", "front");
	v = telemetry(c, "/shmr/routers,front", out, sizeof(out));
	assert_string_equal(sfield(v, "router"), "front");
	assert_int_equal(field(v, "forwarded"), CALLS);
	assert_int_equal(field(v, "failed"), 0);
	assert_int_equal(field(v, "routes_total"), 1);
	assert_int_equal(field(v, "routes_active"), 1);
	json_object_put(v);

	assert_null(telemetry(c, "/shmr/routers,nosuch", out, sizeof(out)));
}

/* Endpoints in use include the route's inbox; its lanes are empty. */
static void test_endpoints_and_lanes(void **state)
{
	struct ctx *c = *state;
	char out[16384], cmd[64];
	json_object *v = telemetry(c, "/shmr/endpoints", out, sizeof(out));
	int seen = 0;

	assert_true(json_object_is_type(v, json_type_array));
	for (size_t i = 0; i < json_object_array_length(v); i++)
		seen |= json_object_get_int(json_object_array_get_idx(v, i)) ==
			(int)c->inbox.slot;
	assert_true(seen);
	json_object_put(v);

	snprintf(cmd, sizeof(cmd), "/shmr/endpoints,%u", c->inbox.slot);
	v = telemetry(c, cmd, out, sizeof(out));
	assert_int_equal(field(v, "gen"), c->inbox.gen);
	assert_string_equal(sfield(v, "kind"), "route");
	assert_string_equal(sfield(v, "state"), "active");
	assert_int_equal(field(v, "delivered"), CALLS);
	assert_int_equal(field(v, "quarantined"), 0);
	json_object_put(v);

	snprintf(cmd, sizeof(cmd), "/shmr/lanes,%u", c->inbox.slot);
	v = telemetry(c, cmd, out, sizeof(out));
	assert_int_equal(field(v, "in_0"), 0);
	assert_int_equal(field(v, "out"), 0);
	assert_int_equal(field(v, "out_high"), 0);
	assert_true(field(v, "capacity") > 0);
	json_object_put(v);

	assert_null(telemetry(c, "/shmr/endpoints,x", out, sizeof(out)));
}

/* More endpoints in use than a DPDK telemetry list holds (512): the list
 * gives the first 512 in order, and from=LAST+1 the rest, so that every
 * one is listed exactly once. */
static void test_endpoints_past_one_list(void **state)
{
	struct ctx *c = *state;
	static struct shmr_endpoint *eps[600];
	static char out[1 << 16];
	static unsigned char listed[1 << 14];
	char cmd[64];
	unsigned n = 0, pages = 0, total = 0;
	int next = 0;

	while (n < 600 && shmr_endpoint_open(c->cl.d, &eps[n]) == 0)
		n++;
	assert_int_equal(n, 600);
	for (;;) {
		json_object *v;
		size_t len;
		int last = -1;

		snprintf(cmd, sizeof(cmd), "/shmr/endpoints,from=%d", next);
		v = telemetry(c, pages ? cmd : "/shmr/endpoints", out,
			      sizeof(out));
		assert_non_null(v);
		assert_true(json_object_is_type(v, json_type_array));
		len = json_object_array_length(v);
		assert_true(len <= 512);
		for (size_t i = 0; i < len; i++) {
			int s = json_object_get_int(
				json_object_array_get_idx(v, i));

			assert_true(s > last && s < (int)sizeof(listed));
			assert_int_equal(listed[s], 0);
			listed[s] = 1;
			last = s;
		}
		json_object_put(v);
		pages++;
		total += (unsigned)len;
		if (len < 512)
			break;
		next = last + 1;
	}
	print_message("%u endpoints listed in %u lists\n", total, pages);
	assert_true(pages >= 2);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(listed[shmr_endpoint_pid(eps[i]).slot], 1);
		shmr_endpoint_close(eps[i]);
	}
	assert_null(telemetry(c, "/shmr/endpoints,from=x", out, sizeof(out)));
}

/* eal_args reach the dataplane's EAL: --no-telemetry turns the socket
 * off (the appliance runs as ever, and dpdk-telemetry.py finds nothing). */
static void test_eal_args_pass_through(void **state)
{
	struct ctx other = { 0 };
	char out[4096], script[512];

	(void)state;
	assert_int_equal(shmr_test_client_start(
				 &other.cl, "ealargs",
				 "lcores = 1;\n"
				 "eal_args = [ \"--no-telemetry\", "
				 "\"--log-level=lib.eal:error\" ];\n"
				 "routers = ( { name = \"front\"; "
				 "behaviour = \"round-robin\";\n"
				 "  routes = ( { name = \"a\"; program = "
				 "\"shmr-test-worker\"; } ); } );\n",
				 -1),
			 0);
	snprintf(script, sizeof(script),
		 "echo /shmr/lcores | dpdk-telemetry.py -f 'shmr-%s'",
		 other.cl.app.domain);
	char *argv[] = { "sh", "-c", script, NULL };

	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	print_message("with --no-telemetry: %s", out);
	assert_non_null(strstr(out, "Error connecting"));
	assert_int_equal(shmr_test_client_stop(&other.cl), 0);
}

/* --check refuses an EAL option the dataplane sets itself, and one that
 * is not a long option, naming the setting. */
static void test_eal_args_checked(void **state)
{
	static const struct {
		const char *args, *why;
	} bad[] = {
		{ "\"--lcores=0@0\"", "--lcores is set by shmr-dataplane itself" },
		{ "\"--file-prefix=x\"", "--file-prefix is set by shmr-dataplane itself" },
		{ "\"-m\", \"64\"", "\"-m\" is not an EAL long option" },
		{ "\"--log-level lib.eal:debug\"", "has a space" },
	};
	char dir[] = "/tmp/shmr-test-ealcheck-XXXXXX", out[4096], text[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "domain = \"ealcheck\";\neal_args = [ %s ];\n",
			 bad[i].args);
		const char *conf = shmr_test_write_conf(dir, "bad.conf", text);

		assert_int_equal(shmr_test_run_control(conf, dir, "--check", out,
						       sizeof(out)),
				 2);
		print_message("%s -> %s", bad[i].args, out);
		assert_non_null(strstr(out, "bad.conf:2: eal_args"));
		assert_non_null(strstr(out, bad[i].why));
		unlink(conf);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_listed),
		cmocka_unit_test(test_lcores),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_endpoints_and_lanes),
		cmocka_unit_test(test_endpoints_past_one_list),
	};
	/* An appliance of their own each: after the first one is gone. */
	const struct CMUnitTest eal_tests[] = {
		cmocka_unit_test(test_eal_args_pass_through),
		cmocka_unit_test(test_eal_args_checked),
	};
	int failed = cmocka_run_group_tests(tests, group_setup, group_teardown);

	return failed + cmocka_run_group_tests(eal_tests, NULL, NULL);
}
