/*
 * The counter registry (shm/include/shmr/counters.def) against the real
 * appliance: every counter and gauge appears in `shmrctl inspect --json`
 * (as a JSON number), in `shmrctl metrics` and in GET /metrics over real
 * HTTP from the appliance's metrics_listen (both parsed by
 * python3-prometheus-client), and in the dataplane's DPDK telemetry
 * (Debian's dpdk-telemetry.py, the command docs/observability.md's table
 * names for it), with the values this test caused: sends and a discard, a worker killed
 * with kill -9 holding messages (redelivered, in hand), a full inbox and
 * full outbound lane (backpressure), and an endpoint slot closed and
 * opened again (its counters start at 0).  The checking is
 * check_counters.py's (SHMR_CHECK_COUNTERS); this process drives the
 * appliance and says what each figure must be.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/shmr.h>

#include "shmr_test_app.h"
#include "test_worker.h"

/* Router "events" by type: 1 to a, 2 to b, 3 to c (holds its first burst
 * until killed), 4 to d (waits at a gate before its first burst); other
 * types are discarded.  Lanes of 64 slots, so that d's inbox fills. */
static const char conf_fmt[] =
	"lcores = 1;\nlane_size = 64;\nmetrics_listen = \"127.0.0.1:%u\";\n"
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"
	"  types = ( { type = 1; route = \"a\"; }, { type = 2; route = \"b\"; },"
	" { type = 3; route = \"c\"; }, { type = 4; route = \"d\"; } );\n"
	"  routes = ( { name = \"a\"; program = \"shmr-test-worker\";"
	" args = [\"--expect-type\", \"1\"]; },\n"
	"             { name = \"b\"; program = \"shmr-test-worker\";"
	" args = [\"--expect-type\", \"2\"]; },\n"
	"             { name = \"c\"; program = \"shmr-test-worker\";"
	" args = [\"--hold-once\", \"%s\"]; },\n"
	"             { name = \"d\"; program = \"shmr-test-worker\";"
	" args = [\"--gate\", \"%s\", \"--gate-count\", \"1\"]; } ); } );\n";

#define ROUTES "a,b,c,d"

/* The appliance of this test (this process its client) and the files
 * its workers c and d wait on. */
struct ctx {
	struct shmr_test_client cl;
	struct shmr_endpoint *ep; /* cl.ep */
	struct shmr_test_app *app; /* &cl.app */
	struct shmr_pid router;
	char hold[256], gate[256];
	unsigned port; /* metrics_listen's */
};

static int group_setup(void **state)
{
	static struct ctx ctx;
	struct ctx *c = &ctx;
	char conf[2048];

	snprintf(c->hold, sizeof(c->hold), "/tmp/shmr-ctrs-hold-%d",
		 (int)getpid());
	snprintf(c->gate, sizeof(c->gate), "/tmp/shmr-ctrs-gate-%d",
		 (int)getpid());
	unlink(c->hold);
	unlink(c->gate);
	if (mkfifo(c->gate, 0600) < 0)
		return -1;
	c->port = shmr_test_free_port();
	if (!c->port)
		return -1;
	snprintf(conf, sizeof(conf), conf_fmt, c->port, c->hold, c->gate);
	if (shmr_test_client_start(&c->cl, "ctrs", conf, -1) < 0 ||
	    shmr_lookup(c->cl.d, "events", &c->router) < 0)
		return -1;
	c->ep = c->cl.ep;
	c->app = &c->cl.app;
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;

	unlink(c->hold);
	unlink(c->gate);
	/* Nothing the appliance started may outlive it. */
	return shmr_test_client_stop(&c->cl) == 0 ? 0 : -1;
}

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
	int rc;

	/* Our lane may still be full of what d's worker is draining. */
	while ((rc = shmr_call(c->ep, c->router, type, 0, "stats", 5, &st,
			       sizeof(st), 30000)) == -EAGAIN)
		usleep(1000);
	assert_int_equal(rc, (int)sizeof(st));
	return st.count;
}

static long long inspect(struct ctx *c, const char *key)
{
	static char ans[1 << 17];

	assert_int_equal(shmr_test_ctl(c->app, "INSPECT events", ans,
				       sizeof(ans)),
			 0);
	return shmr_test_value(ans, key);
}

/* `shmrctl -s SOCK ARGS...` into @p path; its exit status. */
static int shmrctl_to(struct ctx *c, const char *path, char *a1, char *a2,
		      char *a3)
{
	static char out[1 << 17];
	char *argv[] = { getenv("SHMRCTL"), "-s", c->app->sock, a1, a2, a3,
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

/* Every output, checked against the registry and @p expect (KEY=N or
 * KEY>=N words); the client endpoints are @p eps (SLOT:GEN,...). */
static void check(struct ctx *c, const char *eps, const char *expect)
{
	char cmd[4096], js[320], pm[320];
	const char *py = getenv("SHMR_CHECK_COUNTERS"),
		   *def = getenv("SHMR_COUNTERS_DEF"),
		   *docs = getenv("SHMR_OBSERVABILITY_MD"),
		   *python = getenv("SHMR_PYTHON");

	assert_non_null(py);
	assert_non_null(def);
	assert_non_null(docs);
	assert_non_null(python);
	snprintf(js, sizeof(js), "%s/inspect.json", c->app->dir);
	snprintf(pm, sizeof(pm), "%s/metrics.txt", c->app->dir);
	assert_int_equal(shmrctl_to(c, js, "inspect", "events", "--json"), 0);
	assert_int_equal(shmrctl_to(c, pm, "metrics", NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 "'%s' '%s' '%s' '%s' '%s' '%s' http://127.0.0.1:%u/metrics "
		 "'shmr-%s' events " ROUTES " 1 %s %s",
		 python, py, def, docs, js, pm, c->port, c->app->domain, eps,
		 expect);
	assert_int_equal(system(cmd), 0);
}

static const char *me(struct ctx *c)
{
	static char s[32];
	struct shmr_pid p = shmr_endpoint_pid(c->ep);

	snprintf(s, sizeof(s), "%u:%u", p.slot, p.gen);
	return s;
}

/* Sends to a and b, one discard: each figure where the registry says, the
 * same in both outputs. */
static void test_counters_sends_and_discard(void **state)
{
	struct ctx *c = *state;
	char expect[1024];
	const unsigned na = 300, nb = 120;

	for (unsigned i = 0; i < na; i++)
		send_all(c, 1, i);
	for (unsigned i = 0; i < nb; i++)
		send_all(c, 2, i);
	send_all(c, 42, 0); /* no route for type 42: discarded */
	assert_int_equal(count_of(c, 1), na);
	assert_int_equal(count_of(c, 2), nb);
	/* The calls went through the router too (one each), and their
	 * answers into this endpoint's inbox. */
	snprintf(expect, sizeof(expect),
		 "shmr:forwarded=%u shmr:discarded=1 shmr:failed=0 "
		 "shmr:routes_total=4 shmr:restarts=0 shmr:queued=0 "
		 /* lane_size 64 on one lcore: 63 slots an inbox */
		 "shmr:mailbox_size=63 "
		 "shmr:route:a:forwarded=%u shmr:route:b:forwarded=%u "
		 "shmr:route:a:restarts=0 shmr:route:a:queued=0 "
		 "shmr:lcore:0:slots_in'>='%u shmr:lcore:0:polls'>='1 "
		 "shmr:lcore:0:busy_polls'>='1 "
		 "shmr:endpoint:%s:delivered=2",
		 na + nb + 2, na + 1, nb + 1, na + nb + 3, me(c));
	check(c, me(c), expect);
}

static int hold_file_there(void *arg)
{
	return access(arg, F_OK) == 0;
}

static int restarted(void *arg)
{
	return inspect(arg, "shmr:route:c:restarts") == 1 &&
	       inspect(arg, "shmr:route:c:os_pid") > 0;
}

/* c's worker holds a burst (in hand, not queued), is killed with kill -9,
 * and its replacement gets what it held flagged redelivered: counted. */
static void test_counters_kill9_redelivered(void **state)
{
	struct ctx *c = *state;
	char expect[1024];
	const unsigned n = 5;
	long long held, pid;
	FILE *f;

	for (unsigned i = 0; i < n; i++)
		send_all(c, 3, i);
	assert_true(shmr_test_wait(hold_file_there, c->hold, 10000));
	f = fopen(c->hold, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lld", &held), 1);
	fclose(f);
	assert_true(held >= 1 && held <= n);
	/* The held burst is in hand; the rest waits. */
	assert_int_equal(inspect(c, "shmr:route:c:in_hand"), held);
	assert_int_equal(inspect(c, "shmr:route:c:queued"), n - held);
	pid = inspect(c, "shmr:route:c:os_pid");
	assert_true(pid > 0);
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	assert_true(shmr_test_wait(restarted, c, 20000));
	assert_int_equal(count_of(c, 3), n);
	snprintf(expect, sizeof(expect),
		 "shmr:route:c:redelivered=%lld shmr:route:c:restarts=1 "
		 "shmr:restarts=1 shmr:route:c:in_hand=0 "
		 "shmr:route:c:queued=0 shmr:route:c:forwarded=%u",
		 held, n + 1);
	check(c, me(c), expect);
}

/* d's worker waits at its gate: its inbox fills (the dataplane counts
 * it), then this endpoint's outbound lane (libshmr counts each send that
 * found it full).  Opened, everything arrives. */
static void test_counters_full_lanes(void **state)
{
	struct ctx *c = *state;
	char expect[1024];
	unsigned sent = 0, eagain = 0;
	char key[64];
	long long before;
	int fd;

	/* send_all() retried on full lanes before: each try was counted. */
	snprintf(key, sizeof(key), "shmr:endpoint:%s:lane_full", me(c));
	before = inspect(c, key);
	assert_true(before >= 0);

	/* 64 in the inbox, 64 in our lane, some in the lcore's hands: a few
	 * hundred sends are sure to meet a full lane. */
	/* Until our lane was full three times and the dataplane has found
	 * d's inbox full (on a loaded machine our lane can fill first, the
	 * dataplane not having drained it yet). */
	while (sent < 100000 && eagain < 100000) {
		uint64_t k = sent;
		int rc = shmr_send(c->ep, c->router, 4, k, &k, sizeof(k));

		if (rc == -EAGAIN) {
			eagain++;
			if (eagain >= 3 &&
			    inspect(c, "shmr:route:d:inbox_full") >= 1)
				break;
			usleep(1000);
			continue;
		}
		assert_int_equal(rc, 0);
		sent++;
	}
	assert_true(eagain >= 3);
	assert_true(inspect(c, "shmr:route:d:inbox_full") >= 1);
	snprintf(expect, sizeof(expect),
		 "shmr:endpoint:%s:lane_full=%lld shmr:route:d:inbox_full'>='1 "
		 "shmr:route:d:queued'>='1",
		 me(c), before + eagain);
	check(c, me(c), expect);
	/* Open the gate (one burst gated): everything sent arrives. */
	fd = open(c->gate, O_WRONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(count_of(c, 4), sent);
}

/* An endpoint slot closed and handed out again: the new endpoint's
 * counters start at 0, not at what the last owner had. */
static void test_counters_slot_reuse_starts_at_zero(void **state)
{
	struct ctx *c = *state;
	struct shmr_endpoint *old, *e = NULL;
	struct shmr_pid po, pe = { 0, 0 };
	struct shmr_test_stats st;
	char expect[1024], eps[96], oldpid[32];

	assert_int_equal(shmr_endpoint_open(c->cl.d, &old), 0);
	po = shmr_endpoint_pid(old);
	/* Two answers into its inbox. */
	for (int i = 0; i < 2; i++)
		assert_int_equal(shmr_call(old, c->router, 1, 0, "stats", 5,
					   &st, sizeof(st), 30000),
				 (int)sizeof(st));
	snprintf(oldpid, sizeof(oldpid), "%u:%u", po.slot, po.gen);
	snprintf(eps, sizeof(eps), "%s,%s", me(c), oldpid);
	snprintf(expect, sizeof(expect), "shmr:endpoint:%s:delivered=2",
		 oldpid);
	check(c, eps, expect);
	shmr_endpoint_close(old);
	/* The slot is handed out again once every lcore has dropped it:
	 * open until it is (a liveness bound, not a timing). */
	for (int i = 0; i < 5000 && pe.slot != po.slot; i++) {
		if (e) {
			shmr_endpoint_close(e);
			usleep(1000);
		}
		assert_int_equal(shmr_endpoint_open(c->cl.d, &e), 0);
		pe = shmr_endpoint_pid(e);
	}
	assert_int_equal(pe.slot, po.slot);
	assert_true(pe.gen > po.gen);
	snprintf(eps, sizeof(eps), "%s,%u:%u", me(c), pe.slot, pe.gen);
	snprintf(expect, sizeof(expect),
		 "shmr:endpoint:%u:%u:delivered=0 "
		 "shmr:endpoint:%u:%u:lane_full=0",
		 pe.slot, pe.gen, pe.slot, pe.gen);
	check(c, eps, expect);
	/* And it counts its own from there. */
	assert_int_equal(shmr_call(e, c->router, 1, 0, "stats", 5, &st,
				   sizeof(st), 30000),
			 (int)sizeof(st));
	snprintf(expect, sizeof(expect), "shmr:endpoint:%u:%u:delivered=1",
		 pe.slot, pe.gen);
	check(c, eps, expect);
	shmr_endpoint_close(e);
}

static int route_gone(void *arg)
{
	struct ctx *c = ((void **)arg)[0];
	const char *name = ((void **)arg)[1];
	struct shmr_pid p;

	return shmr_test_route_pid(c->app, "events", name, &p) ==
	       -SHMR_E_NO_ROUTE;
}

/* Remove route @p name and wait until it is gone (its worker exited). */
static void remove_route(struct ctx *c, const char *name)
{
	char req[96], ans[4096];
	void *arg[2] = { c, (void *)name };

	snprintf(req, sizeof(req), "REMOVE events %s", name);
	assert_int_equal(shmr_test_ctl(c->app, req, ans, sizeof(ans)), 0);
	assert_true(shmr_test_wait(route_gone, arg, 20000));
}

/* Issue 12's friction: a new route (a routee added to a router) in the
 * slot of a removed one starts at 0, not at the old route's count.  Last:
 * it changes the routes the other tests check. */
static void test_counters_route_slot_reuse_starts_at_zero(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid old, now = { 0, 0 };
	char ans[4096];
	int added = 0;

	assert_int_equal(shmr_test_route_pid(c->app, "events", "b", &old), 0);
	assert_true(inspect(c, "shmr:route:b:forwarded") > 0);
	remove_route(c, "b");
	/* Slot reuse waits until every lcore has dropped the old route:
	 * add until the new route has its slot (a liveness bound). */
	for (int i = 0; i < 50 && now.slot != old.slot; i++) {
		if (added) {
			remove_route(c, "e");
			usleep(10000);
		}
		assert_int_equal(shmr_test_ctl(c->app,
					       "ADD events e - shmr-test-worker",
					       ans, sizeof(ans)),
				 0);
		added = 1;
		assert_int_equal(
			shmr_test_route_pid(c->app, "events", "e", &now), 0);
	}
	assert_int_equal(now.slot, old.slot);
	assert_true(now.gen > old.gen);
	assert_int_equal(inspect(c, "shmr:route:e:forwarded"), 0);
	assert_int_equal(shmr_test_ctl(c->app, "ROUTE events e", ans,
				       sizeof(ans)),
			 0);
	assert_non_null(strstr(ans, " delivered=0 "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_sends_and_discard),
		cmocka_unit_test(test_counters_kill9_redelivered),
		cmocka_unit_test(test_counters_full_lanes),
		cmocka_unit_test(test_counters_slot_reuse_starts_at_zero),
		cmocka_unit_test(test_counters_route_slot_reuse_starts_at_zero),
	};
	return cmocka_run_group_tests_name("counters", tests, group_setup,
					   group_teardown);
}
