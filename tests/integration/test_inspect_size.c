/*
 * `shmrctl inspect` of the largest router the limits allow (issue 14):
 * SHMR_MAX_ROUTES routes (max_routes at its most) with the longest
 * names, every endpoint slot left open by a client, the most lcores, and handlers that add as many keys
 * to its inspect as a router may, of the longest (fat_handlers.c): more
 * than one answer of the control socket holds.  Every route's sojourn
 * figures and every key are in the answer, text and --json, each once,
 * never cut or refused.
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
#include <json-c/json.h>

#include <shmr/layout.h>
#include <shmr/proto.h>
#include <shmr/shmr.h>

#include "shmr_test_app.h"

#define NAME_FMT "route-with-the-longest-name-%03u" /* 31 characters */

static struct shmr_test_client g_cl;
static struct shmr_endpoint *g_eps[SHMR_MAX_ENDPOINTS];
static unsigned g_neps;
static unsigned g_port; /* metrics_listen's */

static int group_setup(void **state)
{
	static char conf[16384];
	size_t n;
	int rc;

	const char *fat = getenv("SHMR_FAT_HANDLERS");
	char first[64];

	if (!fat)
		return -1;
	snprintf(first, sizeof(first), NAME_FMT, 0u);
	g_port = shmr_test_free_port();
	n = (size_t)snprintf(conf, sizeof(conf),
			     "metrics_listen = \"127.0.0.1:%u\";\n"
			     "lcores = %u;\nmax_routes = %u;\n"
			     "routers = ( { name = \"big\"; "
			     "behaviour = \"round-robin\";\n"
			     "  handlers = \"%s\"; handlers_arg = \"%s\";\n"
			     "  routes = (",
			     g_port, SHMR_MAX_LCORES, SHMR_MAX_ROUTES, fat,
			     first);
	for (unsigned i = 0; i < SHMR_MAX_ROUTES; i++)
		n += (size_t)snprintf(conf + n, sizeof(conf) - n,
				      "%s { name = \"" NAME_FMT "\"; program = "
				      "\"shmr-test-worker\"; }\n",
				      i ? "," : "", i);
	snprintf(conf + n, sizeof(conf) - n, "); } );\n");
	if (shmr_test_client_start(&g_cl, "insize", conf, -1) < 0)
		return -1;
	/* Every slot left: a client endpoint each. */
	while (g_neps < SHMR_MAX_ENDPOINTS &&
	       (rc = shmr_endpoint_open(g_cl.d, &g_eps[g_neps])) == 0)
		g_neps++;
	print_message("%u client endpoints opened (the last open: %d)\n",
		      g_neps, rc);
	*state = &g_cl;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (unsigned i = 0; i < g_neps; i++)
		shmr_endpoint_close(g_eps[i]);
	return shmr_test_client_stop(&g_cl) == 0 ? 0 : -1;
}

/* `shmrctl -s SOCK inspect big [--json]` into @p out; its exit status. */
static int inspect(char *out, size_t cap, int json)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", g_cl.app.sock, "inspect",
			 "big", json ? "--json" : NULL, NULL };

	assert_non_null(argv[0]);
	return shmr_test_run(argv, out, cap);
}

static int has_prefix_key(struct json_object *o, const char *prefix)
{
	json_object_object_foreach(o, k, v) {
		(void)v;
		if (strncmp(k, prefix, strlen(prefix)) == 0)
			return 1;
	}
	return 0;
}

static void test_inspect_json_whole(void **state)
{
	static char out[1 << 22];
	struct json_object *o, *v;
	char key[128];

	(void)state;
	assert_int_equal(inspect(out, sizeof(out), 1), 0);
	print_message("inspect --json: %zu bytes\n", strlen(out));
	/* More than one answer: it was asked in parts. */
	assert_true(strlen(out) > SHMR_PROTO_MAX);
	o = json_tokener_parse(out);
	assert_non_null(o);
	for (unsigned i = 0; i < SHMR_MAX_ROUTES; i++) {
		static const char *const want[] = {
			"pid", "os_pid", "forwarded", "sojourn_count",
			"sojourn_p50_ns", "sojourn_p99_ns", "sojourn_p999_ns",
			"sojourn_max_ns"
		};

		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			snprintf(key, sizeof(key), "shmr:route:" NAME_FMT ":%s",
				 i, want[k]);
			if (!json_object_object_get_ex(o, key, &v))
				fail_msg("inspect --json: no %s", key);
		}
	}
	for (unsigned i = 0; i < g_neps; i++) {
		struct shmr_pid p = shmr_endpoint_pid(g_eps[i]);

		snprintf(key, sizeof(key), "shmr:endpoint:%u:%u:lane_full",
			 p.slot, p.gen);
		if (!json_object_object_get_ex(o, key, &v))
			fail_msg("inspect --json: no %s", key);
	}
	/* The handlers' keys: the override, and the 63 of their own. */
	snprintf(key, sizeof(key), "shmr:route:" NAME_FMT ":cpus", 0u);
	assert_true(json_object_object_get_ex(o, key, &v));
	assert_string_equal(json_object_get_string(v), "fat");
	for (unsigned i = 1; i < 64; i++) {
		snprintf(key, sizeof(key), "fat:%02u:", i);
		assert_true(has_prefix_key(o, key));
	}
	json_object_put(o);
}

/* The table: a FIELD VALUE row for every key, each once. */
static void test_inspect_text_whole(void **state)
{
	static char out[1 << 22];
	char key[128];
	unsigned rows = 0;

	(void)state;
	assert_int_equal(inspect(out, sizeof(out), 0), 0);
	print_message("inspect: %zu bytes\n", strlen(out));
	assert_int_equal(strncmp(out, "FIELD ", 6), 0);
	for (unsigned i = 0; i < SHMR_MAX_ROUTES; i++) {
		snprintf(key, sizeof(key),
			 "\nshmr:route:" NAME_FMT ":sojourn_p999_ns ", i);
		if (!strstr(out, key))
			fail_msg("inspect: no row%s", key);
	}
	for (unsigned i = 0; i < g_neps; i++) {
		struct shmr_pid p = shmr_endpoint_pid(g_eps[i]);

		snprintf(key, sizeof(key), "\nshmr:endpoint:%u:%u:delivered ",
			 p.slot, p.gen);
		if (!strstr(out, key))
			fail_msg("inspect: no row%s", key);
	}
	/* No key twice. */
	for (const char *l = strchr(out, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		size_t kl = strcspn(l + 1, " \n");

		snprintf(key, sizeof(key), "\n%.*s ", (int)kl, l + 1);
		assert_true(strstr(l + 1, key) == NULL);
		rows++;
	}
	print_message("inspect: %u rows\n", rows);
}

/* Every client's samples are in @p out (an endpoint's label is its PID,
 * endpoint="SLOT:GEN"). */
static void has_every_client(const char *what, const char *out)
{
	char key[128];

	print_message("%s: %zu bytes\n", what, strlen(out));
	for (unsigned i = 0; i < g_neps; i++) {
		struct shmr_pid p = shmr_endpoint_pid(g_eps[i]);

		snprintf(key, sizeof(key),
			 "\nshmr_endpoint_lane_full_total{endpoint=\"%u:%u\"",
			 p.slot, p.gen);
		if (!strstr(out, key))
			fail_msg("%s: no sample%s", what, key);
	}
}

/* `shmrctl metrics` and GET /metrics of the same domain: its hundreds of
 * KiB whole (more than one answer of the control socket), never cut or
 * refused as too large. */
static void test_metrics_whole(void **state)
{
	static char out[1 << 24];
	char *argv[] = { getenv("SHMRCTL"), "-s", g_cl.app.sock, "metrics",
			 NULL };
	char url[64];
	char *get[] = { "python3", "-c",
			"import sys, urllib.request\n"
			"sys.stdout.write(urllib.request.urlopen(sys.argv[1], "
			"timeout=30).read().decode())",
			url, NULL };

	(void)state;
	assert_non_null(argv[0]);
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	assert_true(strlen(out) > SHMR_PROTO_MAX);
	has_every_client("shmrctl metrics", out);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics", g_port);
	assert_int_equal(shmr_test_run(get, out, sizeof(out)), 0);
	has_every_client("GET /metrics", out);
}

/* `shmrctl top`, piped (one table an interval), of the same domain: it
 * shows a row for every route (their names cut to top's column), the
 * router's INSPECT being asked in parts. */
static void test_top_whole(void **state)
{
	static char out[1 << 20];
	char *argv[] = { getenv("SHMRCTL"), "-s", g_cl.app.sock, "top",
			 "--interval", "0.2", "--duration", "0.5", NULL };
	const char *l, *end;
	unsigned rows = 0;

	(void)state;
	assert_non_null(argv[0]);
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	/* The first table: up to the second header, if any. */
	l = strstr(out, "ROUTER/ROUTE");
	assert_non_null(l);
	end = strstr(l, "shmr top:");
	for (; l && (!end || l < end); l = strchr(l + 1, '\n'))
		if (strncmp(l, "\n  route-with-", 14) == 0)
			rows++;
	if (rows != SHMR_MAX_ROUTES)
		fail_msg("top: %u route rows, not %u, in:\n%s", rows,
			 SHMR_MAX_ROUTES, out);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_inspect_json_whole),
	cmocka_unit_test(test_inspect_text_whole),
	cmocka_unit_test(test_metrics_whole),
	cmocka_unit_test(test_top_whole),
};

int main(void)
{
	/* One appliance for both (starting 32 workers is the slow part). */
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
