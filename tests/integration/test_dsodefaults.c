/*
 * A behaviour shared object supplies defaults only, against the real
 * daemons (examples/key_example.c: logic "consistent-hash", pool_size 3,
 * virtual_nodes 50, the key from the payload's first 8 bytes):
 *   - a router that gives only `dso` and a pool program runs the object's
 *     logic over a pool of the object's size, keyed by the payload;
 *   - a router with the same object whose file says round-robin and size
 *     2 runs round-robin over 2 (the configuration wins);
 *   - an object that gives nothing usable fails the start (and --check)
 *     with exit status 2 and one line naming file:line and the field.
 * Barriers are GetRoutees answers and routed calls, never sleeps.
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

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define WAIT_MS 30000

static char dir[] = "/tmp/shmr-dsodef-XXXXXX";

struct ctx {
	struct shmr_test_app app;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	char ans[SHMR_PROTO_MAX];
	struct shmr_pid want_router;
	const char *want;
};

static const char *need(const char *var)
{
	const char *p = getenv(var);

	if (!p || !*p)
		fail_msg("%s is not set", var);
	return p;
}

/* A call to @p router with @p key and an 8-byte payload @p pkey: the tag
 * of the routee that answered. */
static void call(struct ctx *c, struct shmr_pid router, uint64_t key,
		 uint64_t pkey, char tag[8])
{
	struct shmr_test_stats st;

	assert_int_equal(shmr_call(c->ep, router, 1, key, &pkey, sizeof(pkey),
				   &st, sizeof(st), WAIT_MS),
			 (int)sizeof(st));
	memcpy(tag, st.tag, 8);
}

static int routees_are(void *arg)
{
	struct ctx *c = arg;
	int rc;

	memset(c->ans, 0, sizeof(c->ans));
	rc = shmr_call_prio(c->ep, c->want_router, SHMR_PRIO_HIGH,
			    SHMR_TYPE_GET_ROUTEES, 0, NULL, 0, c->ans,
			    sizeof(c->ans) - 1, WAIT_MS);
	return rc >= 0 && strcmp(c->ans, c->want) == 0;
}

static void wait_routees(struct ctx *c, struct shmr_pid router,
			 const char *want)
{
	c->want_router = router;
	c->want = want;
	if (!shmr_test_wait(routees_are, c, WAIT_MS))
		fail_msg("routees \"%s\", wanted \"%s\"", c->ans, want);
}

/* The object's defaults where the file is silent; the file where not. */
static void test_defaults_and_overrides(void **state)
{
	const char *key_so = need("SHMR_EXAMPLE_KEY");
	struct shmr_pid keyed, rr;
	char conf[2048], tag[8], first[8];
	unsigned count[2] = { 0 }, seen = 0;
	struct ctx c;
	(void)state;

	memset(&c, 0, sizeof(c));
	snprintf(conf, sizeof(conf),
		 "stop_grace_ms = 500;\n"
		 "routers = (\n"
		 "  { name = \"keyed\"; dso = \"%s\";\n"
		 "    pool = { program = \"shmr-test-worker\"; }; },\n"
		 "  { name = \"rr\"; dso = \"%s\"; behaviour = \"round-robin\";\n"
		 "    pool = { size = 2; program = \"shmr-test-worker\"; };\n"
		 "    resizer = { upper_bound = 4; }; }\n"
		 ");\n",
		 key_so, key_so);
	assert_int_equal(shmr_test_app_start(&c.app, "dsodef", conf), 0);
	assert_int_equal(shmr_attach_path(c.app.sock, &c.d), 0);
	assert_int_equal(shmr_endpoint_open(c.d, &c.ep), 0);
	assert_int_equal(shmr_lookup(c.d, "keyed", &keyed), 0);
	assert_int_equal(shmr_lookup(c.d, "rr", &rr), 0);

	/* pool_size 3 from the object, and its resizer; the file's resizer
	 * wins for rr. */
	wait_routees(&c, keyed, "keyed:0\nkeyed:1\nkeyed:2\n");
	assert_int_equal(shmr_test_ctl(&c.app, "INSPECT keyed", c.ans,
				       sizeof(c.ans)),
			 0);
	assert_non_null(strstr(c.ans, "\nshmr:resizer optimal\n"));
	assert_int_equal(shmr_test_ctl(&c.app, "INSPECT rr", c.ans,
				       sizeof(c.ans)),
			 0);
	assert_non_null(strstr(c.ans, "\nshmr:resizer default\n"));
	/* consistent-hash on the payload's key: the same payload key lands
	 * on the same routee whatever msg->key says; the keys spread. */
	for (uint64_t pkey = 0; pkey < 24; pkey++) {
		call(&c, keyed, 0, pkey, first);
		assert_int_equal(strncmp(first, "keyed:", 6), 0);
		seen |= 1u << (first[6] - '0');
		for (uint64_t key = 1; key < 6; key++) {
			call(&c, keyed, key * 1000003 + pkey, pkey, tag);
			assert_int_equal(strncmp(tag, first, 8), 0);
		}
	}
	assert_true(seen != 1 && seen != 2 && seen != 4); /* not one only */

	/* The file says round-robin over 2: exactly 3 each in 6 calls,
	 * whatever the payload key. */
	wait_routees(&c, rr, "rr:0\nrr:1\n");
	for (unsigned i = 0; i < 6; i++) {
		call(&c, rr, 0, 42, tag);
		if (strncmp(tag, "rr:0", 8) == 0)
			count[0]++;
		else if (strncmp(tag, "rr:1", 8) == 0)
			count[1]++;
		else
			fail_msg("answered by \"%.8s\"", tag);
	}
	assert_int_equal(count[0], 3);
	assert_int_equal(count[1], 3);

	shmr_endpoint_close(c.ep);
	shmr_detach(c.d);
	assert_int_equal(shmr_test_app_stop(&c.app), 0);
}

static const char *write_conf(const char *name, const char *text)
{
	return shmr_test_write_conf(dir, name, text);
}

static int run_control(const char *conf, const char *extra, char *out,
		       size_t cap)
{
	return shmr_test_run_control(conf, dir, extra, out, cap);
}

/* Exit 2 with one line "file:LINE: FIELD: ..." containing @p what, at
 * start and under --check alike. */
static void expect_refused(const char *name, const char *text, int line,
			   const char *field, const char *what)
{
	const char *p = write_conf(name, text);
	char out[4096], want[512];

	for (int check = 0; check < 2; check++) {
		assert_int_equal(run_control(p, check ? "--check" : NULL, out,
					     sizeof(out)),
				 2);
		snprintf(want, sizeof(want), "%s:%d: %s: ", p, line, field);
		if (!strstr(out, want) || !strstr(out, what) ||
		    strchr(out, '\n') != out + strlen(out) - 1)
			fail_msg("got \"%s\", wanted \"%s...%s\"", out, want,
				 what);
	}
}

/* An object that gives nothing usable stops the start; --check agrees. */
static void test_bad_objects(void **state)
{
	const char *key_so = need("SHMR_EXAMPLE_KEY");
	const char *beh_so = need("SHMR_EXAMPLE_BEHAVIOUR");
	const char *hnd_so = need("SHMR_EXAMPLE_HANDLERS");
	char conf[2048], out[4096];
	(void)state;

	/* No shmr_behaviour at all. */
	snprintf(conf, sizeof(conf),
		 "domain = \"dsodef\";\n"
		 "routers = ( { name = \"w\"; dso = \"%s\";\n"
		 "  pool = { program = \"shmr-test-worker\"; }; } );\n",
		 hnd_so);
	expect_refused("nosym.conf", conf, 2, "routers.[0].dso",
		       "has no symbol shmr_behaviour");
	/* A routing object (no logic) cannot run a pool. */
	snprintf(conf, sizeof(conf),
		 "domain = \"dsodef\";\n"
		 "routers = ( { name = \"w\"; dso = \"%s\";\n"
		 "  pool = { program = \"shmr-test-worker\"; }; } );\n",
		 beh_so);
	expect_refused("nologic.conf", conf, 2, "routers.[0].pool",
		       "names no logic");
	/* No pool size in the file or the object. */
	snprintf(conf, sizeof(conf),
		 "domain = \"dsodef\";\n"
		 "routers = ( { name = \"w\"; dso = \"%s\";\n"
		 "  behaviour = \"random\";\n"
		 "  pool = { program = \"shmr-test-worker\"; }; } );\n",
		 beh_so);
	expect_refused("nosize.conf", conf, 4, "routers.[0].pool.size",
		       "gives no pool_size");
	/* A setting the object's logic does not use. */
	snprintf(conf, sizeof(conf),
		 "domain = \"dsodef\";\n"
		 "routers = ( { name = \"w\"; dso = \"%s\";\n"
		 "  within_ms = 10;\n"
		 "  pool = { program = \"shmr-test-worker\"; }; } );\n",
		 key_so);
	expect_refused("unused.conf", conf, 2, "routers.[0].within_ms",
		       "not used by behaviour \"consistent-hash\"");
	/* The good one passes --check. */
	snprintf(conf, sizeof(conf),
		 "domain = \"dsodef\";\n"
		 "routers = ( { name = \"w\"; dso = \"%s\";\n"
		 "  pool = { program = \"shmr-test-worker\"; }; } );\n",
		 key_so);
	assert_int_equal(run_control(write_conf("ok.conf", conf), "--check",
				     out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, "ok"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_overrides),
		cmocka_unit_test(test_bad_objects),
	};
	char cmd[300];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests_name("dsodefaults", tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
