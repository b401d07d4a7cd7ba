/*
 * The counter registry (control/counters.def) against the real appliance:
 * every counter and gauge appears in `shmrctl inspect --json` (as a JSON
 * number) and in `shmrctl metrics` (parsed by python3-prometheus-client),
 * with the values this test caused: sends to two routes and a discard.
 * The checking is check_counters.py's (SHMR_CHECK_COUNTERS); this process
 * drives the appliance and says what each figure must be.
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

#include <shmr/shmr.h>

#include "shmr_test_app.h"
#include "test_worker.h"

/* Router "events": type 1 to route a, type 2 to b, others discarded. */
static const char conf[] =
	"lcores = 1;\n"
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"
	"  types = ( { type = 1; route = \"a\"; },"
	" { type = 2; route = \"b\"; } );\n"
	"  routes = ( { name = \"a\"; program = \"shmr-test-worker\";"
	" args = [\"--expect-type\", \"1\"]; },\n"
	"             { name = \"b\"; program = \"shmr-test-worker\";"
	" args = [\"--expect-type\", \"2\"]; } ); } );\n";

/* The appliance of one test and this process's endpoint in it. */
struct ctx {
	struct shmr_test_app app;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid router;
};

static void send_all(struct ctx *c, uint32_t type, uint64_t key)
{
	int rc;

	while ((rc = shmr_send(c->ep, c->router, type, key, &key,
			       sizeof(key))) == -EAGAIN)
		;
	assert_int_equal(rc, 0);
}

/* A call to route @p type's worker: answered after everything this
 * endpoint sent it before (one lane, one lcore, in order). */
static uint64_t count_of(struct ctx *c, uint32_t type)
{
	struct shmr_test_stats st;
	int rc = shmr_call(c->ep, c->router, type, 0, "stats", 5, &st,
			   sizeof(st), 30000);

	assert_int_equal(rc, (int)sizeof(st));
	return st.count;
}

/* `shmrctl -s SOCK ARGS...` into @p path; its exit status. */
static int shmrctl_to(struct ctx *c, const char *path, char *a1, char *a2,
		      char *a3)
{
	static char out[1 << 17];
	char *argv[] = { getenv("SHMRCTL"), "-s", c->app.sock, a1, a2, a3,
			 NULL };
	FILE *f;
	int rc;

	assert_non_null(argv[0]);
	rc = shmr_test_run(argv, out, sizeof(out));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(out, f);
	fclose(f);
	return rc;
}

static int check(struct ctx *c, const char *expect)
{
	char cmd[4096], js[320], pm[320];
	const char *py = getenv("SHMR_CHECK_COUNTERS"),
		   *def = getenv("SHMR_COUNTERS_DEF"),
		   *python = getenv("SHMR_PYTHON");

	assert_non_null(py);
	assert_non_null(python);
	assert_non_null(def);
	snprintf(js, sizeof(js), "%s/inspect.json", c->app.dir);
	snprintf(pm, sizeof(pm), "%s/metrics.txt", c->app.dir);
	assert_int_equal(shmrctl_to(c, js, "inspect", "events", "--json"), 0);
	assert_int_equal(shmrctl_to(c, pm, "metrics", NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd), "%s %s %s %s %s events a,b 1 %s", python,
		 py, def, js, pm, expect);
	return system(cmd);
}

/* Sends to a and b, one discard: each figure where the registry says, the
 * same in both outputs. */
static void test_counters_every_output(void **state)
{
	static struct ctx ctx;
	struct ctx *c = &ctx;
	char expect[1024];
	const unsigned na = 300, nb = 120;

	(void)state;
	assert_int_equal(shmr_test_app_start(&c->app, "ctrs", conf), 0);
	assert_int_equal(shmr_attach_path(c->app.sock, &c->d), 0);
	assert_int_equal(shmr_endpoint_open(c->d, &c->ep), 0);
	assert_int_equal(shmr_lookup(c->d, "events", &c->router), 0);

	for (unsigned i = 0; i < na; i++)
		send_all(c, 1, i);
	for (unsigned i = 0; i < nb; i++)
		send_all(c, 2, i);
	send_all(c, 42, 0); /* no route for type 42: discarded */
	assert_int_equal(count_of(c, 1), na);
	assert_int_equal(count_of(c, 2), nb);
	/* The calls went through the router too (one each). */
	snprintf(expect, sizeof(expect),
		 "shmr:forwarded=%u shmr:discarded=1 shmr:failed=0 "
		 "shmr:routes_total=2 shmr:routes_active=2 shmr:restarts=0 "
		 "shmr:route:a:forwarded=%u shmr:route:b:forwarded=%u "
		 "shmr:route:a:restarts=0 shmr:lcore:0:slots_in'>='%u "
		 "shmr:lcore:0:polls'>='1",
		 na + nb + 2, na + 1, nb + 1, na + nb + 3);
	assert_int_equal(check(c, expect), 0);
	shmr_endpoint_close(c->ep);
	shmr_detach(c->d);
	/* Nothing the appliance started outlives its control plane. */
	assert_int_equal(shmr_test_app_stop(&c->app), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_every_output),
	};
	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
