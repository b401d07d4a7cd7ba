/*
 * shmr-control's answers to bad input: a configuration error exits 2 with
 * one line naming file:line and the field, bad arguments exit 2 with a
 * usage line, --check validates without starting anything.
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

#include "shmr_test_app.h"

static char dir[] = "/tmp/shmr-cli-XXXXXX";

static const char *write_conf(const char *name, const char *text)
{
	return shmr_test_write_conf(dir, name, text);
}

static int run_control(const char *conf, const char *extra, char *out,
		       size_t cap)
{
	return shmr_test_run_control(conf, dir, extra, out, cap);
}

static void test_config_error_names_file_line_field(void **state)
{
	char out[4096], want[300];
	(void)state;
	const char *p = write_conf("bad.conf",
				   "domain = \"cli\";\n"
				   "routers = (\n"
				   "  { name = \"events\"; behaviour = \"type\";\n"
				   "    types = ( { type = 1; route = \"a\"; } );\n"
				   "    routes = ( { name = \"a\"; program = \"x\"; },\n"
				   "               { name = \"a\"; program = \"y\"; } );\n"
				   "  } );\n");

	assert_int_equal(run_control(p, NULL, out, sizeof(out)), 2);
	snprintf(want, sizeof(want), "%s:6:", p);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "duplicate"));
	/* One line. */
	assert_true(strchr(out, '\n') == out + strlen(out) - 1);
}

static void test_syntax_error_and_missing_file(void **state)
{
	char out[4096], want[300];
	(void)state;
	const char *p = write_conf("syntax.conf", "domain = \"x\";\nlcores = ;\n");

	assert_int_equal(run_control(p, NULL, out, sizeof(out)), 2);
	snprintf(want, sizeof(want), "%s:2:", p);
	assert_non_null(strstr(out, want));
	assert_int_equal(run_control("/nonexistent/app.conf", NULL, out,
				     sizeof(out)),
			 2);
	assert_non_null(strstr(out, "/nonexistent/app.conf"));
}

static void test_check_mode(void **state)
{
	char out[4096];
	(void)state;
	const char *p = write_conf("ok.conf",
				   "domain = \"cli\";\n"
				   "routers = ( { name = \"events\"; behaviour = \"hash\";\n"
				   "  hash = [\"a\"];\n"
				   "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; } ); } );\n");

	assert_int_equal(run_control(p, "--check", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "ok"));
}

static void test_bad_arguments(void **state)
{
	char out[4096];
	char *argv[] = { getenv("SHMR_CONTROL"), "--frobnicate", NULL };
	(void)state;

	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "usage"));
}

static void test_worker_that_cannot_start_fails_init(void **state)
{
	char out[4096];
	(void)state;
	const char *p = write_conf("nostart.conf",
				   "domain = \"cli\";\n"
				   "routers = ( { name = \"events\"; behaviour = \"hash\";\n"
				   "  hash = [\"a\", \"b\"];\n"
				   "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; },\n"
				   "             { name = \"b\"; program = \"/nonexistent/worker\"; } ); } );\n");

	/* Init is atomic: exit 1, naming the route, nothing left running. */
	assert_int_equal(run_control(p, NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "route b"));
	assert_non_null(strstr(out, "/nonexistent/worker"));
}

/* Handlers that cannot be loaded are a configuration error, found before
 * anything starts (--check too): exit 2, one line naming the file, the
 * router's line and the setting (they failed the start, exit 1). */
static void test_handlers_that_cannot_load_fail_the_start(void **state)
{
	char out[4096];
	(void)state;
	const char *p = write_conf("nohandlers.conf",
				   "domain = \"cli\";\n"
				   "routers = ( { name = \"events\"; behaviour = \"hash\";\n"
				   "  hash = [\"a\"]; handlers = \"/nonexistent/h.so\";\n"
				   "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; } ); } );\n");

	char want[512];

	assert_int_equal(run_control(p, NULL, out, sizeof(out)), 2);
	snprintf(want, sizeof(want),
		 "%s:2: routers.[0].handlers: cannot load: /nonexistent/h.so",
		 p);
	if (!strstr(out, want))
		fail_msg("got \"%s\", wanted \"...%s...\"", out, want);
	assert_non_null(strchr(out, '\n'));
	assert_int_equal(strchr(out, '\n')[1], '\0');
}

/* A resizer value out of Pekko's ranges stops the start: exit 2, naming
 * the file, the line and the key. */
static void test_resizer_out_of_range_is_a_config_error(void **state)
{
	char out[4096], want[512];
	(void)state;
	const char *p = write_conf("resizer.conf",
				   "domain = \"cli\";\n"
				   "routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
				   "  pool = { size = 1; program = \"shmr-test-worker\"; };\n"
				   "  resizer = { rampup_rate = -1.0; }; } );\n");

	assert_int_equal(run_control(p, "--check", out, sizeof(out)), 2);
	snprintf(want, sizeof(want), "%s:4: routers.[0].resizer.rampup_rate: "
		 "out of range", p);
	assert_non_null(strstr(out, want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_error_names_file_line_field),
		cmocka_unit_test(test_syntax_error_and_missing_file),
		cmocka_unit_test(test_check_mode),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_worker_that_cannot_start_fails_init),
		cmocka_unit_test(test_handlers_that_cannot_load_fail_the_start),
		cmocka_unit_test(test_resizer_out_of_range_is_a_config_error),
	};
	if (!mkdtemp(dir))
		return 1;
	int rc = cmocka_run_group_tests_name("cli", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
