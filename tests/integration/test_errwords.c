/*
 * Error words (issue 12): one wording per error code, whatever the verb.
 * shmrctl against the real appliance: every verb that names a router that
 * is not there says the same, every verb that names a route that is not
 * there says the same, and a duplicate route says what it clashes with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shmr/shmr.h>

#include "shmr_test_app.h"

#define CONF                                                                   \
	"lcores = 1;\n"                                                        \
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"            \
	"  types = ( { type = 1; route = \"a\"; } );\n"                        \
	"  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; } ); } );\n"

static int group_setup(void **state)
{
	struct shmr_test_client *c = calloc(1, sizeof(*c));

	if (!c || shmr_test_client_start(c, "errw", CONF, -1) < 0)
		return -1;
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	struct shmr_test_client *c = *state;
	int left = shmr_test_client_stop(c);

	free(c);
	return left == 0 ? 0 : -1;
}

/* Run shmrctl with up to 6 arguments; expect exit 1 and exactly @p want
 * (after "shmrctl: ") on its output. */
static void expect_words(struct shmr_test_client *c, const char *want,
			 const char *a0, const char *a1, const char *a2,
			 const char *a3, const char *a4, const char *a5)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", c->app.sock, (char *)a0,
			 (char *)a1, (char *)a2, (char *)a3, (char *)a4,
			 (char *)a5, NULL };
	char out[4096], line[512];

	snprintf(line, sizeof(line), "shmrctl: %s\n", want);
	print_message("shmrctl %s %s %s %s\n", a0, a1 ? a1 : "",
		      a2 ? a2 : "", a3 ? a3 : "");
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 1);
	assert_string_equal(out, line);
}

/* (remove of a route that is not there succeeds: it is idempotent.) */
static void test_error_words_no_route(void **state)
{
	struct shmr_test_client *c = *state;
	char want[256];

	snprintf(want, sizeof(want), "%s: route events/nosuch",
		 shmr_strerror(-SHMR_E_NO_ROUTE));
	expect_words(c, want, "route", "events", "nosuch", NULL, NULL, NULL);
	expect_words(c, want, "disable", "events", "nosuch", NULL, NULL, NULL);
	expect_words(c, want, "enable", "events", "nosuch", NULL, NULL, NULL);
	expect_words(c, want, "respawn", "events", "nosuch", NULL, NULL, NULL);
	expect_words(c, want, "replace", "events", "nosuch",
		     "shmr-test-worker", NULL, NULL);
	expect_words(c, want, "disable", "--drain", "events", "nosuch", NULL,
		     NULL);
}

static void test_error_words_no_router(void **state)
{
	struct shmr_test_client *c = *state;
	char want[256];

	snprintf(want, sizeof(want), "%s: router nosuch",
		 shmr_strerror(-SHMR_E_NO_ROUTE));
	expect_words(c, want, "routes", "nosuch", NULL, NULL, NULL, NULL);
	expect_words(c, want, "inspect", "nosuch", NULL, NULL, NULL, NULL);
	expect_words(c, want, "route", "nosuch", "a", NULL, NULL, NULL);
	expect_words(c, want, "disable", "nosuch", "a", NULL, NULL, NULL);
	expect_words(c, want, "remove", "nosuch", "a", NULL, NULL, NULL);
	expect_words(c, want, "add", "nosuch", "w", "shmr-test-worker", NULL,
		     NULL);
	expect_words(c, want, "routees", "nosuch", NULL, NULL, NULL, NULL);
	expect_words(c, want, "pool", "nosuch", "+1", NULL, NULL, NULL);
	expect_words(c, want, "dlq", "list", "nosuch", NULL, NULL, NULL);
}

/* A duplicate route names the route it clashes with: not the words of a
 * registry clash alone. */
static void test_error_words_duplicate(void **state)
{
	struct shmr_test_client *c = *state;
	char want[256];

	snprintf(want, sizeof(want), "%s: route events/a",
		 shmr_strerror(-SHMR_E_ROUTE_DUPLICATE));
	expect_words(c, want, "add", "events", "a", "shmr-test-worker", NULL,
		     NULL);
	/* The registry's clash is the same code, its own object named. */
	assert_int_equal(shmr_register(c->ep, "events"),
			 -SHMR_E_ROUTE_DUPLICATE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_words_no_route),
		cmocka_unit_test(test_error_words_no_router),
		cmocka_unit_test(test_error_words_duplicate),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
