/*
 * The control socket's request parser: every well-formed request parses
 * into the right fields, and every kind of bad request gets the right
 * error code (never a crash, never a wrong parse).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "request.h"

static int parse(const char *s, struct shmr_ctl_req *r)
{
	const char *why = NULL;
	int rc = shmr_ctl_req_parse(s, strlen(s), r, &why);

	if (rc < 0)
		assert_non_null(why);
	return rc;
}

static void good_requests(void **state)
{
	struct shmr_ctl_req r;
	char att[32];

	snprintf(att, sizeof(att), "ATTACH %u", SHMR_LAYOUT_VERSION);
	assert_int_equal(parse(att, &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ATTACH);
	assert_int_equal(r.version, SHMR_LAYOUT_VERSION);
	assert_int_equal(parse("OPEN", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_OPEN);
	assert_int_equal(parse("CLAIM 3 1", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_CLAIM);
	assert_int_equal(r.pid.slot, 3);
	assert_int_equal(r.pid.gen, 1);
	assert_int_equal(parse("CLOSE 127 4294967295", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_CLOSE);
	assert_int_equal(r.pid.slot, 127);
	assert_int_equal(r.pid.gen, 4294967295u);
	assert_int_equal(parse("REGISTER my.name:x-1_Z 0 2", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_REGISTER);
	assert_string_equal(r.name, "my.name:x-1_Z");
	assert_int_equal(r.pid.slot, 0);
	assert_int_equal(r.pid.gen, 2);
	assert_int_equal(parse("UNREGISTER n 5 6", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_UNREGISTER);
	assert_int_equal(parse("ROUTES events", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ROUTES);
	assert_string_equal(r.name, "events");
	assert_int_equal(parse("INSPECT events", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_INSPECT);
	assert_int_equal(r.json, 0);
	assert_int_equal(parse("INSPECT events json", &r), 0);
	assert_int_equal(r.paged, 0);
	assert_int_equal(r.json, 1);
	/* A part of INSPECT: from item N, either order of the options. */
	assert_int_equal(parse("INSPECT events json from=0", &r), 0);
	assert_true(r.paged && r.json && r.from == 0);
	assert_int_equal(parse("METRICS", &r), 0);
	assert_int_equal(r.fd_ok, 0);
	assert_int_equal(parse("METRICS fd", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_METRICS);
	assert_int_equal(r.fd_ok, 1);
	assert_int_equal(parse("INSPECT events from=37", &r), 0);
	assert_true(r.paged && !r.json && r.from == 37);
	assert_int_equal(parse("INSPECT events from=4 json", &r), 0);
	assert_true(r.paged && r.json && r.from == 4);
	assert_int_equal(parse("STATUS", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_STATUS);
	assert_int_equal(parse("DLQ_LIST events", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_DLQ_LIST);
	assert_int_equal(r.paged, 0);
	/* A part of DLQ_LIST: the records from index N on. */
	assert_int_equal(parse("DLQ_LIST events from=950", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_DLQ_LIST);
	assert_true(r.paged && r.from == 950);
	assert_string_equal(r.name, "events");
	assert_string_equal(r.name, "events");
	assert_int_equal(parse("DLQ_REPLAY events", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_DLQ_REPLAY);
	assert_string_equal(r.name, "events");
	assert_int_equal(parse("STOP", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_STOP);
	/* One trailing newline is tolerated. */
	assert_int_equal(parse("STATUS\n", &r), 0);
	/* A 31-character name is the longest. */
	assert_int_equal(parse("ROUTES abcdefghijklmnopqrstuvwxyz01234", &r),
			 0);
}

struct bad {
	const char *req;
	int code;
};

static void bad_requests(void **state)
{
	static const struct bad bad[] = {
		/* malformed: SHMR_E_PROTO */
		{ "", SHMR_E_PROTO },
		{ "\n", SHMR_E_PROTO },
		{ "NOPE", SHMR_E_PROTO },
		{ "status", SHMR_E_PROTO },
		{ "STATUSX", SHMR_E_PROTO },
		{ " STATUS", SHMR_E_PROTO },
		{ "STATUS ", SHMR_E_PROTO },
		{ "CLAIM  3 1", SHMR_E_PROTO },
		{ "STATUS\n\n", SHMR_E_PROTO },
		{ "STATUS\tx", SHMR_E_PROTO },
		{ "ROUTES ev\x01", SHMR_E_PROTO },
		{ "ROUTES \xc3\xa9v", SHMR_E_PROTO },
		{ "STATUS now", SHMR_E_PROTO },
		{ "OPEN 1", SHMR_E_PROTO },
		{ "STOP please", SHMR_E_PROTO },
		{ "ATTACH", SHMR_E_PROTO },
		{ "ATTACH 1 2", SHMR_E_PROTO },
		{ "ATTACH one", SHMR_E_PROTO },
		{ "ATTACH -1", SHMR_E_PROTO },
		{ "CLAIM 3", SHMR_E_PROTO },
		{ "CLAIM 3 1 1", SHMR_E_PROTO },
		{ "CLAIM +3 1", SHMR_E_PROTO },
		{ "CLAIM -3 1", SHMR_E_PROTO },
		{ "CLAIM 03 1", SHMR_E_PROTO },
		{ "CLAIM 0x3 1", SHMR_E_PROTO },
		{ "CLAIM 3 1.0", SHMR_E_PROTO },
		{ "CLAIM 3 4294967296", SHMR_E_PROTO },
		{ "CLAIM 3 99999999999999999999", SHMR_E_PROTO },
		{ "CLOSE a b", SHMR_E_PROTO },
		{ "REGISTER name 1", SHMR_E_PROTO },
		{ "REGISTER name x 1", SHMR_E_PROTO },
		{ "UNREGISTER name 1 2 3", SHMR_E_PROTO },
		{ "ROUTES", SHMR_E_PROTO },
		{ "ROUTES a b", SHMR_E_PROTO },
		{ "INSPECT", SHMR_E_PROTO },
		{ "INSPECT events JSON", SHMR_E_PROTO },
		{ "INSPECT events json x", SHMR_E_PROTO },
		{ "INSPECT events json json", SHMR_E_PROTO },
		{ "INSPECT events from=", SHMR_E_PROTO },
		{ "INSPECT events from=01", SHMR_E_PROTO },
		{ "INSPECT events from=4294967296", SHMR_E_PROTO },
		{ "INSPECT events from=1 from=2", SHMR_E_PROTO },
		{ "DLQ_LIST events json", SHMR_E_PROTO },
		{ "DLQ_LIST events from=", SHMR_E_PROTO },
		{ "DLQ_LIST events from=x", SHMR_E_PROTO },
		{ "DLQ_LIST events from=1 from=2", SHMR_E_PROTO },
		{ "INSPECT events json from=1 x", SHMR_E_PROTO },
		{ "METRICS json", SHMR_E_PROTO },
		{ "METRICS fd fd", SHMR_E_PROTO },
		{ "METRICS f", SHMR_E_PROTO },
		{ "INSPECT events xml", SHMR_E_PROTO },
		{ "A B C D E F G", SHMR_E_PROTO },
		/* bad names: SHMR_E_NAME */
		{ "ROUTES abcdefghijklmnopqrstuvwxyz012345", SHMR_E_NAME },
		{ "ROUTES ev/x", SHMR_E_NAME },
		{ "ROUTES ev\"x", SHMR_E_NAME },
		{ "INSPECT ../x json", SHMR_E_NAME },
		{ "REGISTER a/b 1 1", SHMR_E_NAME },
		{ "REGISTER abcdefghijklmnopqrstuvwxyz012345 1 1", SHMR_E_NAME },
		{ "UNREGISTER a%b 1 1", SHMR_E_NAME },
		/* bad PIDs: SHMR_E_NO_ENDPOINT */
		{ "CLAIM 16384 1", SHMR_E_NO_ENDPOINT },
		{ "CLAIM 4294967295 1", SHMR_E_NO_ENDPOINT },
		{ "CLAIM 3 0", SHMR_E_NO_ENDPOINT },
		{ "CLOSE 0 0", SHMR_E_NO_ENDPOINT },
		{ "REGISTER ok 16384 1", SHMR_E_NO_ENDPOINT },
		{ "UNREGISTER ok 1 0", SHMR_E_NO_ENDPOINT },
		/* another layout: SHMR_E_VERSION */
		{ "ATTACH 0", SHMR_E_VERSION },
		{ "ATTACH 1", SHMR_E_VERSION },
		{ "DLQ_LIST", SHMR_E_PROTO },
		{ "DLQ_LIST a b", SHMR_E_PROTO },
		{ "DLQ_REPLAY bad/name", SHMR_E_NAME },
		{ "ATTACH 4294967295", SHMR_E_VERSION },
	};
	struct shmr_ctl_req r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].req, &r);

		if (rc != -bad[i].code)
			fail_msg("\"%s\": got %d, want %d", bad[i].req, rc,
				 -bad[i].code);
	}
}

/* ROUTE, ADD, REMOVE, DISABLE, ENABLE, REPLACE, RESPAWN. */
static void lifecycle_requests(void **state)
{
	static const struct {
		const char *req;
		int code;
	} bad[] = {
		{ "ADD events w", SHMR_E_PROTO },       /* no cpus, no program */
		{ "ADD events w -", SHMR_E_PROTO },     /* no program */
		{ "ADD events w 0-x prog", SHMR_E_PROTO }, /* bad cpu list */
		{ "ADD events w 3-1 prog", SHMR_E_PROTO },
		{ "ADD events w/x - prog", SHMR_E_NAME },
		{ "ADD ev%ts w - prog", SHMR_E_NAME },
		{ "ADD events w - p 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
		  SHMR_E_PROTO }, /* 17 args */
		{ "REPLACE events w", SHMR_E_PROTO },
		{ "REMOVE events", SHMR_E_PROTO },
		{ "REMOVE events w x", SHMR_E_PROTO },
		{ "DISABLE events", SHMR_E_PROTO },
		{ "ENABLE events w x", SHMR_E_PROTO },
		{ "RESPAWN", SHMR_E_PROTO },
		{ "ROUTE events", SHMR_E_PROTO },
		{ "ROUTE events a/b", SHMR_E_NAME },
	};
	char req[SHMR_CTL_REQ_MAX + 1], arg[SHMR_CONF_ARG_MAX + 1];
	struct shmr_ctl_req r;
	(void)state;

	assert_int_equal(parse("ADD events w - shmr-test-worker --x 1", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ADD);
	assert_string_equal(r.name, "events");
	assert_string_equal(r.route, "w");
	assert_string_equal(r.spec.name, "w");
	assert_string_equal(r.spec.cpus, "");
	assert_string_equal(r.spec.program, "shmr-test-worker");
	assert_int_equal(r.spec.nargs, 2);
	assert_string_equal(r.spec.args[0], "--x");
	assert_string_equal(r.spec.args[1], "1");
	assert_int_equal(parse("ADD events w 0,2-3 /bin/w", &r), 0);
	assert_string_equal(r.spec.cpus, "0,2-3");
	assert_int_equal(r.spec.nargs, 0);
	assert_int_equal(
		parse("ADD events w - p 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		      &r),
		0);
	assert_int_equal(r.spec.nargs, 16);
	assert_int_equal(parse("REPLACE events w /bin/v2 --a", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_REPLACE);
	assert_string_equal(r.spec.program, "/bin/v2");
	assert_int_equal(r.spec.nargs, 1);
	assert_int_equal(parse("REMOVE events w", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_REMOVE);
	assert_int_equal(parse("DISABLE events w", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_DISABLE);
	assert_int_equal(parse("ENABLE events w", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ENABLE);
	assert_int_equal(parse("RESPAWN events w", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_RESPAWN);
	assert_int_equal(parse("ROUTE events w", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ROUTE);
	assert_string_equal(r.route, "w");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].req, &r);

		if (rc != -bad[i].code)
			fail_msg("\"%s\": got %d, want %d", bad[i].req, rc,
				 -bad[i].code);
	}
	/* An argument of SHMR_CONF_ARG_MAX bytes does not fit. */
	memset(arg, 'a', SHMR_CONF_ARG_MAX);
	arg[SHMR_CONF_ARG_MAX] = '\0';
	snprintf(req, sizeof(req), "REPLACE events w p %s", arg);
	assert_int_equal(parse(req, &r), -SHMR_E_PROTO);
	arg[SHMR_CONF_ARG_MAX - 1] = '\0';
	snprintf(req, sizeof(req), "REPLACE events w p %s", arg);
	assert_int_equal(parse(req, &r), 0);
	assert_int_equal(strlen(r.spec.args[0]), SHMR_CONF_ARG_MAX - 1);
}

/* The routers' management requests (shmrctl routees/routee/pool/kill/
 * poison) and DRAIN. */
static void management_requests(void **state)
{
	static const struct {
		const char *req;
		int code;
	} bad[] = {
		{ "POOL_ADJUST work 2", SHMR_E_PROTO },
		{ "POOL_ADJUST work +", SHMR_E_PROTO },
		{ "POOL_ADJUST work +129", SHMR_E_PROTO },
		{ "POOL_ADJUST work -1x", SHMR_E_PROTO },
		{ "POOL_ADJUST work", SHMR_E_PROTO },
		{ "POOL_ADJUST bad/name +1", SHMR_E_NAME },
		{ "ROUTEE_ADD work", SHMR_E_PROTO },
		{ "ROUTEE_ADD work bad/name", SHMR_E_NAME },
		{ "ROUTEES", SHMR_E_PROTO },
		{ "KILL work now", SHMR_E_PROTO },
		{ "DRAIN events", SHMR_E_PROTO },
	};
	struct shmr_ctl_req r;
	(void)state;

	assert_int_equal(parse("POOL_ADJUST work +3", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_POOL_ADJUST);
	assert_string_equal(r.name, "work");
	assert_int_equal(r.delta, 3);
	assert_int_equal(parse("POOL_ADJUST work -32", &r), 0);
	assert_int_equal(r.delta, -32);
	assert_int_equal(parse("ROUTEES work", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ROUTEES);
	assert_int_equal(parse("ROUTEE_ADD work outside", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ROUTEE_ADD);
	assert_string_equal(r.route, "outside");
	assert_int_equal(parse("ROUTEE_REMOVE work work:1", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_ROUTEE_REMOVE);
	assert_int_equal(parse("KILL work", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_KILL);
	assert_int_equal(parse("POISON work", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_POISON);
	assert_int_equal(parse("DRAIN events w", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_DRAIN);
	/* INSPECT is not confused with its neighbours. */
	assert_int_equal(parse("INSPECT work json", &r), 0);
	assert_int_equal(r.verb, SHMR_REQ_INSPECT);
	assert_int_equal(r.json, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].req, &r);

		if (rc != -bad[i].code)
			fail_msg("\"%s\": got %d, want %d", bad[i].req, rc,
				 -bad[i].code);
	}
}

static void embedded_nul(void **state)
{
	static const char req[] = "ROUTES ev\0ents";
	struct shmr_ctl_req r;
	const char *why;

	assert_int_equal(shmr_ctl_req_parse(req, sizeof(req) - 1, &r, &why),
			 -SHMR_E_PROTO);
	assert_int_equal(shmr_ctl_req_parse("STATUS", 0, &r, &why),
			 -SHMR_E_PROTO);
	/* A NULL why is allowed. */
	assert_int_equal(shmr_ctl_req_parse("x", 1, &r, NULL), -SHMR_E_PROTO);
}

static void too_long(void **state)
{
	char buf[SHMR_CTL_REQ_MAX + 2];
	struct shmr_ctl_req r;
	const char *why;

	memset(buf, 'A', sizeof(buf));
	assert_int_equal(shmr_ctl_req_parse(buf, SHMR_CTL_REQ_MAX + 1, &r,
					    &why),
			 -SHMR_E_TOO_BIG);
	/* At the limit it is parsed (and is merely unknown). */
	assert_int_equal(shmr_ctl_req_parse(buf, SHMR_CTL_REQ_MAX, &r, &why),
			 -SHMR_E_PROTO);
}

static void every_byte_is_safe(void **state)
{
	/* Each byte value in each position of a short request. */
	char buf[16];
	struct shmr_ctl_req r;

	for (int pos = 0; pos < 12; pos++) {
		for (int b = 0; b < 256; b++) {
			memcpy(buf, "CLAIM 12 34", 11);
			buf[pos] = (char)b;
			(void)shmr_ctl_req_parse(buf, 11, &r, NULL);
		}
	}
}

static void names(void **state)
{
	assert_true(shmr_ctl_name_valid("a"));
	assert_true(shmr_ctl_name_valid("A-Z_a.z:0-9"));
	assert_false(shmr_ctl_name_valid(""));
	assert_false(shmr_ctl_name_valid(NULL));
	assert_false(shmr_ctl_name_valid("a b"));
	assert_false(shmr_ctl_name_valid("a/b"));
	assert_true(shmr_ctl_name_valid("0123456789012345678901234567890"));
	assert_false(shmr_ctl_name_valid("01234567890123456789012345678901"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_requests),
		cmocka_unit_test(bad_requests),
		cmocka_unit_test(lifecycle_requests),
		cmocka_unit_test(management_requests),
		cmocka_unit_test(embedded_nul),
		cmocka_unit_test(too_long),
		cmocka_unit_test(every_byte_is_safe),
		cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
