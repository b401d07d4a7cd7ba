/*
 * A domain configured past the old compile-time limits (issue 16: limits
 * from configuration), on the real daemons:
 *   - max_names = 300 (the old registry held 128 entries, routers' names
 *     included): every name registered is found by shmr_lookup() and
 *     routed to by the dataplane (a type router whose targets are
 *     registry names past the 128th entry), and the registry is full at
 *     exactly max_names;
 *   - max_types = 100 (the old type maps held 64): a type router of 100
 *     entries and a call map of 100 route every type, the last ones
 *     included;
 *   - max_routes = 100 (a router held 32 routes): a type router of 100
 *     routes, each an echo worker, and every route answers the call its
 *     type is mapped to; a round-robin router with a routees list of 100
 *     registry names reaches each of them once in 100 sends;
 *   - max_routers = 40 (a domain held 8 routers): 40 routers, and a
 *     message through the 38th (balancing: its queue's index past a
 *     32-bit mask), the 39th (type, to a registry name) and the 40th
 *     (round-robin: its counter's index) each arrives;
 *   - max_routes = 1 (the domain has room for one route and one name a
 *     router, side by side): three routers of one route each answer
 *     from their own route, "router/route" names look up each one's
 *     inbox, and a second route is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shmr_test_app.h"

#define NAMES 300 /* max_names below */

/* The router's targets: registry names registered 10th, 200th and
 * 299th (the last one that fits with the router's own name). */
#define CONF                                                                 \
	"lcores = 1;\nmax_names = 300;\n"                                    \
	"routers = ( { name = \"reg\"; behaviour = \"type\";\n"              \
	"  types = ( { type = 1; route = \"n10\"; },\n"                      \
	"            { type = 2; route = \"n200\"; },\n"                     \
	"            { type = 3; route = \"n298\"; } );\n"                   \
	"  routes = ( ); } );\n"

#define TYPES 100 /* max_types below */

/* A type router of TYPES entries (odd types to "odd", even ones to
 * "even": registry names), and a hash router with a call map of TYPES
 * entries (odd types to its route "eodd", even ones to "eeven": echo
 * workers). */
static char *types_conf(void)
{
	size_t cap = 16384, n = 0;
	char *s = malloc(cap);

	n += (size_t)snprintf(s + n, cap - n,
			      "lcores = 1;\nmax_types = %d;\nrouters = (\n",
			      TYPES);
	for (int r = 0; r < 2; r++) {
		n += (size_t)snprintf(
			s + n, cap - n, "%s",
			r == 0 ? "  { name = \"bytype\"; behaviour = \"type\";\n"
				 "    types = ("
			       : "  { name = \"cqrs\"; behaviour = \"hash\";\n"
				 "    hash = [ \"eodd\" ]; call_types = (");
		for (int t = 1; t <= TYPES; t++)
			n += (size_t)snprintf(s + n, cap - n,
					      "%s{ type = %d; route = \"%s%s\"; }",
					      t > 1 ? ", " : " ", t,
					      r == 0 ? "" : "e",
					      t % 2 ? "odd" : "even");
		n += (size_t)snprintf(
			s + n, cap - n, " );\n    routes = (%s); }%s\n",
			r == 0 ? " "
			       : " { name = \"eodd\"; program = "
				 "\"shmr-echo-worker\"; },\n"
				 "      { name = \"eeven\"; program = "
				 "\"shmr-echo-worker\"; } ",
			r == 0 ? "," : "");
	}
	snprintf(s + n, cap - n, ");\n");
	return s;
}

#define ROUTES 100 /* max_routes below */

/* A type router "many" of ROUTES routes "q1".."q100" (echo workers),
 * type t to route "q<t>", and a round-robin router "rr" whose routees are
 * ROUTES registry names "p1".."p100" (the test's endpoints). */
static char *routes_conf(void)
{
	size_t cap = 32768, n = 0;
	char *s = malloc(cap);

	n += (size_t)snprintf(s + n, cap - n,
			      "lcores = 1;\nmax_types = %d;\nmax_routes = %d;\n"
			      "routers = (\n  { name = \"many\"; "
			      "behaviour = \"type\";\n    types = (",
			      ROUTES, ROUTES);
	for (int t = 1; t <= ROUTES; t++)
		n += (size_t)snprintf(s + n, cap - n,
				      "%s{ type = %d; route = \"q%d\"; }",
				      t > 1 ? ", " : " ", t, t);
	n += (size_t)snprintf(s + n, cap - n, " );\n    routes = (");
	for (int t = 1; t <= ROUTES; t++)
		n += (size_t)snprintf(s + n, cap - n,
				      "%s\n      { name = \"q%d\"; "
				      "program = \"shmr-echo-worker\"; }",
				      t > 1 ? "," : "", t);
	n += (size_t)snprintf(s + n, cap - n,
			      " ); },\n  { name = \"rr\"; "
			      "behaviour = \"round-robin\";\n    routees = [");
	for (int t = 1; t <= ROUTES; t++)
		n += (size_t)snprintf(s + n, cap - n, "%s\"p%d\"",
				      t > 1 ? ", " : " ", t);
	snprintf(s + n, cap - n, " ]; }\n);\n");
	return s;
}

/* A message of @p type through the router reaches @p rx, as sent. */
static void routed(struct shmr_test_client *c, struct shmr_endpoint *rx,
		   struct shmr_pid router, uint32_t type, uint64_t key)
{
	const struct shmr_msg *m[4];
	int n;

	while (shmr_send(c->ep, router, type, key, &key, sizeof(key)) ==
	       -EAGAIN)
		;
	n = shmr_recv_burst(rx, m, 4, 10000);
	assert_int_equal(n, 1);
	assert_int_equal(m[0]->type, type);
	assert_int_equal(m[0]->key, key);
}

static void names_past_128(void **state)
{
	struct shmr_test_client c;
	struct shmr_endpoint *rx;
	struct shmr_pid router, me, got;
	char name[SHMR_NAME_MAX];
	int rc;

	(void)state;
	assert_int_equal(shmr_test_client_start(&c, "biglim", CONF, -1), 0);
	assert_int_equal(shmr_lookup(c.d, "reg", &router), 0);
	assert_int_equal(shmr_endpoint_open(c.d, &rx), 0);
	me = shmr_endpoint_pid(rx);
	/* The router's name is one entry: 299 more fit, the 300th not. */
	for (int i = 0; i < NAMES - 1; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		rc = shmr_register(rx, name);
		if (rc != 0)
			fail_msg("register %s (entry %d): %s", name, i + 2,
				 shmr_strerror(rc));
	}
	assert_int_equal(shmr_register(rx, "one_too_many"), -ENOSPC);
	for (int i = 0; i < NAMES - 1; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(shmr_lookup(c.d, name, &got), 0);
		assert_int_equal(got.slot, me.slot);
		assert_int_equal(got.gen, me.gen);
	}
	assert_int_equal(shmr_lookup(c.d, "one_too_many", &got),
			 -SHMR_E_PROCESS_UNKNOWN);
	routed(&c, rx, router, 1, 10);
	routed(&c, rx, router, 2, 200);
	routed(&c, rx, router, 3, 298);
	shmr_endpoint_close(rx);
	assert_int_equal(shmr_test_client_stop(&c), 0);
}

/* Every type of the 100-entry type map reaches its name (types 65 to
 * 100 past the old 64), and so does every call of the 100-entry call
 * map. */
static void types_past_64(void **state)
{
	struct shmr_test_client c;
	struct shmr_endpoint *odd, *even;
	struct shmr_pid bytype, cqrs;
	char *conf = types_conf();

	(void)state;
	assert_int_equal(shmr_test_client_start(&c, "biglimt", conf, -1), 0);
	free(conf);
	assert_int_equal(shmr_lookup(c.d, "bytype", &bytype), 0);
	assert_int_equal(shmr_lookup(c.d, "cqrs", &cqrs), 0);
	assert_int_equal(shmr_endpoint_open(c.d, &odd), 0);
	assert_int_equal(shmr_endpoint_open(c.d, &even), 0);
	assert_int_equal(shmr_register(odd, "odd"), 0);
	assert_int_equal(shmr_register(even, "even"), 0);
	for (uint32_t t = 1; t <= TYPES; t++)
		routed(&c, t % 2 ? odd : even, bytype, t, t);
	/* Calls by type through the call map, the last entries included:
	 * each answered by its route's echo worker. */
	for (uint32_t t = 1; t <= TYPES; t++) {
		char reply[64], want[64];
		int n = shmr_call(c.ep, cqrs, t, t, "x", 1, reply,
				  sizeof(reply) - 1, 10000);

		snprintf(want, sizeof(want), "%s:x", t % 2 ? "eodd" : "eeven");
		assert_int_equal(n, (int)strlen(want));
		reply[n] = '\0';
		assert_string_equal(reply, want);
	}
	for (struct shmr_endpoint **e = (struct shmr_endpoint *[]){ odd, even, NULL };
	     *e; e++)
		shmr_endpoint_close(*e);
	assert_int_equal(shmr_test_client_stop(&c), 0);
}

/* A call through router @p to answered by the echo worker of route
 * "q<want>". */
static void echoed_by(struct shmr_test_client *c, struct shmr_pid to,
		      uint32_t type, int want)
{
	char reply[64], expect[64];
	int n = shmr_call(c->ep, to, type, type, "x", 1, reply,
			  sizeof(reply) - 1, 10000);

	snprintf(expect, sizeof(expect), "q%d:x", want);
	if (n < 0)
		fail_msg("call of type %u: %s", type, shmr_strerror(n));
	reply[n] = '\0';
	assert_string_equal(reply, expect);
}

/* Every one of the 100 routes of one router (routes 33 to 100 past the
 * old 32) answers the call of its type; round-robin over a list of 100
 * routees (33 to 100 past the old 32) reaches each once in 100 sends. */
static void routes_past_32(void **state)
{
	struct shmr_test_client c;
	struct shmr_endpoint *p[ROUTES];
	struct shmr_pid many, rr;
	char *conf = routes_conf();
	char name[SHMR_NAME_MAX];

	(void)state;
	assert_int_equal(shmr_test_client_start(&c, "biglimr", conf, -1), 0);
	free(conf);
	assert_int_equal(shmr_lookup(c.d, "many", &many), 0);
	assert_int_equal(shmr_lookup(c.d, "rr", &rr), 0);
	for (uint32_t t = 1; t <= ROUTES; t++)
		echoed_by(&c, many, t, (int)t);
	for (int i = 0; i < ROUTES; i++) {
		assert_int_equal(shmr_endpoint_open(c.d, &p[i]), 0);
		snprintf(name, sizeof(name), "p%d", i + 1);
		assert_int_equal(shmr_register(p[i], name), 0);
	}
	for (uint64_t k = 0; k < ROUTES; k++)
		while (shmr_send(c.ep, rr, 1, k, &k, sizeof(k)) == -EAGAIN)
			;
	for (int i = 0; i < ROUTES; i++) {
		const struct shmr_msg *m[4];
		int n = shmr_recv_burst(p[i], m, 4, 10000);

		if (n != 1)
			fail_msg("routee p%d got %d of the %d round-robin "
				 "sends (want 1)", i + 1, n, ROUTES);
	}
	for (int i = 0; i < ROUTES; i++)
		shmr_endpoint_close(p[i]);
	assert_int_equal(shmr_test_client_stop(&c), 0);
}

#define ROUTERS 40 /* max_routers below */

/* ROUTERS routers "r1".."r40": type routers to the registry name "sink"
 * but the last three, "r38" balancing over a pool of one ("r38:0"), "r39" type
 * to "sink", "r40" round-robin over its route "e40" (echo workers). */
static char *routers_conf(void)
{
	size_t cap = 16384, n = 0;
	char *s = malloc(cap);

	n += (size_t)snprintf(s + n, cap - n,
			      "lcores = 1;\nmax_routers = %d;\nrouters = (\n",
			      ROUTERS);
	for (int r = 1; r <= ROUTERS; r++) {
		if (r == 38)
			n += (size_t)snprintf(
				s + n, cap - n,
				"  { name = \"r38\"; behaviour = \"balancing\";\n"
				"    pool = { size = 1; program = "
				"\"shmr-echo-worker\"; }; },\n");
		else if (r == ROUTERS)
			n += (size_t)snprintf(
				s + n, cap - n,
				"  { name = \"r%d\"; behaviour = \"round-robin\";\n"
				"    routes = ( { name = \"e%d\"; program = "
				"\"shmr-echo-worker\"; } ); }\n",
				r, r);
		else
			n += (size_t)snprintf(
				s + n, cap - n,
				"  { name = \"r%d\"; behaviour = \"type\"; "
				"types = ( { type = 1; route = \"sink\"; } ); "
				"routes = ( ); },\n",
				r);
	}
	snprintf(s + n, cap - n, ");\n");
	return s;
}

/* A call through @p to, answered "@p want:x" by an echo worker. */
static void answered(struct shmr_test_client *c, struct shmr_pid to,
		     const char *want)
{
	char reply[64], expect[64];
	int n = shmr_call(c->ep, to, 1, 1, "x", 1, reply, sizeof(reply) - 1,
			  10000);

	if (n < 0)
		fail_msg("call for %s: %s", want, shmr_strerror(n));
	reply[n] = '\0';
	snprintf(expect, sizeof(expect), "%s:x", want);
	assert_string_equal(reply, expect);
}

/* 40 routers under max_routers = 40 (main: "max_routers: unknown
 * setting"; a 9th router was refused): the last ones route. */
static void routers_past_8(void **state)
{
	struct shmr_test_client c;
	struct shmr_endpoint *sink;
	struct shmr_pid r1, r38, r39, r40;
	char *conf = routers_conf();

	(void)state;
	assert_int_equal(shmr_test_client_start(&c, "biglimx", conf, -1), 0);
	free(conf);
	assert_int_equal(shmr_lookup(c.d, "r1", &r1), 0);
	assert_int_equal(shmr_lookup(c.d, "r38", &r38), 0);
	assert_int_equal(shmr_lookup(c.d, "r39", &r39), 0);
	assert_int_equal(shmr_lookup(c.d, "r40", &r40), 0);
	assert_int_equal(shmr_endpoint_open(c.d, &sink), 0);
	assert_int_equal(shmr_register(sink, "sink"), 0);
	routed(&c, sink, r1, 1, 1);
	routed(&c, sink, r39, 1, 39);
	for (int i = 0; i < 3; i++) {
		answered(&c, r38, "r38:0");
		answered(&c, r40, "e40");
	}
	shmr_endpoint_close(sink);
	assert_int_equal(shmr_test_client_stop(&c), 0);
}

/* Three routers of one route each, in a domain of one route a router:
 * type "ta" to its route "qa", round-robin "rb" over its route "qb",
 * hash "hc" over the name "qc" of its route "qc" (echo workers). */
#define ONE_CONF                                                             \
	"lcores = 1;\nmax_routes = 1;\nrouters = (\n"                        \
	"  { name = \"ta\"; behaviour = \"type\";\n"                          \
	"    types = ( { type = 1; route = \"qa\"; } );\n"                    \
	"    routes = ( { name = \"qa\"; program = \"shmr-echo-worker\"; } );" \
	" },\n"                                                               \
	"  { name = \"rb\"; behaviour = \"round-robin\";\n"                   \
	"    routes = ( { name = \"qb\"; program = \"shmr-echo-worker\"; } );" \
	" },\n"                                                               \
	"  { name = \"hc\"; behaviour = \"hash\"; hash = [ \"qc\" ];\n"       \
	"    routes = ( { name = \"qc\"; program = \"shmr-echo-worker\"; } );" \
	" }\n);\n"

/* A call through @p router is answered by its route @p route, whose
 * inbox "router/route" names. */
static void answered_by(struct shmr_test_client *c, const char *router,
			const char *route)
{
	char qualified[2 * SHMR_NAME_MAX];
	struct shmr_pid r, q;

	assert_int_equal(shmr_lookup(c->d, router, &r), 0);
	answered(c, r, route);
	snprintf(qualified, sizeof(qualified), "%s/%s", router, route);
	assert_int_equal(shmr_lookup(c->d, qualified, &q), 0);
	assert_int_not_equal(q.slot, r.slot);
}

static void one_route_a_router(void **state)
{
	struct shmr_test_client c;
	struct shmr_pid q;

	(void)state;
	assert_int_equal(shmr_test_client_start(&c, "biglim1", ONE_CONF, -1),
			 0);
	for (int i = 0; i < 2; i++) {
		answered_by(&c, "ta", "qa");
		answered_by(&c, "rb", "qb");
		answered_by(&c, "hc", "qc");
	}
	assert_int_equal(shmr_lookup(c.d, "rb/qa", &q),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(shmr_route_add(c.d, "rb", "qb2", "shmr-echo-worker",
					NULL, 0, NULL),
			 -SHMR_E_NO_ENDPOINT);
	answered_by(&c, "rb", "qb");
	assert_int_equal(shmr_test_client_stop(&c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_past_128),
		cmocka_unit_test(types_past_64),
		cmocka_unit_test(routes_past_32),
		cmocka_unit_test(routers_past_8),
		cmocka_unit_test(one_route_a_router),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
