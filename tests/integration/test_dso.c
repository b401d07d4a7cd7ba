/*
 * A router whose decision is the example shared object
 * (examples/behaviour_example.c), loaded by the real dataplane: types below
 * dso_arg go to "payments", the rest to "shipments" or "reports" by the
 * key's parity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shmr_test_app.h"
#include "test_worker.h"

static void test_dso_decides(void **state)
{
	const char *so = getenv("SHMR_EXAMPLE_BEHAVIOUR");
	struct shmr_test_app app;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid router;
	struct shmr_test_stats st;
	char conf[2048];
	static const struct {
		uint32_t type;
		uint64_t key;
		const char *route;
	} cases[] = {
		{ 1, 0, "payment" },   { 49, 7, "payment" }, { 50, 2, "shipmen" },
		{ 50, 3, "reports" },  { 900, 10, "shipmen" }, { 900, 11, "reports" },
	};
	(void)state;

	assert_non_null(so);
	snprintf(conf, sizeof(conf),
		 "routers = ( { name = \"custom\"; behaviour = \"dso\";\n"
		 "  dso = \"%s\"; dso_arg = \"50\";\n"
		 "  routes = (\n"
		 "    { name = \"payments\"; program = \"shmr-test-worker\"; },\n"
		 "    { name = \"shipments\"; program = \"shmr-test-worker\"; },\n"
		 "    { name = \"reports\"; program = \"shmr-test-worker\"; } ); } );\n",
		 so);
	assert_int_equal(shmr_test_app_start(&app, "dso", conf), 0);
	assert_int_equal(shmr_attach_path(app.sock, &d), 0);
	assert_int_equal(shmr_endpoint_open(d, &ep), 0);
	assert_int_equal(shmr_lookup(d, "custom", &router), 0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = shmr_call(ep, router, cases[i].type, cases[i].key, "?",
				   1, &st, sizeof(st), 30000);
		assert_int_equal(rc, (int)sizeof(st));
		/* tag holds the route name, cut to 7 characters. */
		assert_string_equal(st.tag, cases[i].route);
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	assert_int_equal(shmr_test_app_stop(&app), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dso_decides),
	};
	return cmocka_run_group_tests_name("dso", tests, NULL, NULL);
}
