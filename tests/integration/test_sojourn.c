/*
 * Sojourn figures (issue 14: "latency you can see"), through the real
 * appliance (shmr-control, the dataplane, shmr-test-worker routes), read
 * as an operator reads them, from ROUTE (what `shmrctl route` shows):
 *
 *   waited       sends queued for a worker that is stopped (SIGSTOP) for
 *                300 ms show a median and a max of at least 300 ms once
 *                it runs again: the stamp is the sender's, the record
 *                the receiver's, so the wait is in the figure whatever
 *                the machine's speed (a lower bound from causality, and
 *                a generous upper one)
 *   bursts       sends in bursts (one stamp for each burst's 32, which
 *                the receiver records as one weighted add) mixed with
 *                single sends: every one counted, once, with its wait
 *   reused slot  a route added where a removed one was starts from 0
 *   off          `sojourn = false`: nothing is stamped, nothing recorded
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define CALL_MS 5000
#define SENDS 20
#define WAIT_MS 300
#define MS 1000000ll

static const char conf_one[] =
	"routers = (\n"
	"  { name = \"lat\"; behaviour = \"round-robin\";\n"
	"    routes = ( { name = \"w0\"; program = \"shmr-test-worker\"; } ); }\n"
	");\n";

/* Route <route> of lat: its ROUTE answer's figure <what>= (-1: no such
 * route or figure); "pid" is the slot of its SLOT:GEN. */
static long long value_of(struct shmr_test_client *cl, const char *route,
			  const char *what)
{
	char ans[4096], req[96], key[64];
	const char *p;

	snprintf(req, sizeof(req), "ROUTE lat %s", route);
	if (shmr_test_ctl(&cl->app, req, ans, sizeof(ans)) != 0)
		return -1;
	if (strcmp(what, "os_pid") == 0)
		snprintf(key, sizeof(key), " os_pid=");
	else
		snprintf(key, sizeof(key), " %s=", what);
	p = strstr(ans, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static long long route_value(struct shmr_test_client *cl, const char *what)
{
	return value_of(cl, "w0", what);
}

struct gone_arg {
	struct shmr_test_client *cl;
	const char *route;
};

static int route_gone(void *arg)
{
	struct gone_arg *g = arg;

	return value_of(g->cl, g->route, "pid") < 0;
}

static void remove_route(struct shmr_test_client *cl, const char *route)
{
	struct gone_arg g = { cl, route };
	char req[64], ans[256];

	snprintf(req, sizeof(req), "REMOVE lat %s", route);
	assert_int_equal(shmr_test_ctl(&cl->app, req, ans, sizeof(ans)), 0);
	assert_true(shmr_test_wait(route_gone, &g, 20000));
}

/* What the worker has received (its answer to a call). */
static uint64_t worker_count(struct shmr_test_client *cl)
{
	struct shmr_test_stats st;

	assert_int_equal(shmr_call(cl->ep, client_lookup(cl, "lat"), 1, 0,
				   NULL, 0, &st, sizeof(st), CALL_MS),
			 (int)sizeof(st));
	return st.count;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* SENDS sends while w0's worker is stopped for WAIT_MS. */
static void sends_that_wait(struct shmr_test_client *cl)
{
	pid_t w = (pid_t)route_value(cl, "os_pid");
	struct shmr_pid lat = client_lookup(cl, "lat");

	assert_true(w > 0);
	assert_int_equal(kill(w, SIGSTOP), 0);
	for (int i = 0; i < SENDS; i++)
		assert_int_equal(shmr_send(cl->ep, lat, 1, (uint64_t)i, "x", 1),
				 0);
	nap_ms(WAIT_MS);
	assert_int_equal(kill(w, SIGCONT), 0);
	/* The call queues behind the sends: they are all received when it
	 * is answered. */
	assert_int_equal(worker_count(cl), SENDS);
}

static void test_waited(void **state)
{
	struct shmr_test_client *cl =
		client_ctx_start(sizeof(*cl), "sojwait", conf_one, 0);
	static char metrics[65536];
	const char *p;
	char ans[1024];
	long long p50, p99, p999, max;
	(void)state;

	assert_int_equal(route_value(cl, "sojourn_count"), 0);
	sends_that_wait(cl);
	/* The sends and the call: everything the worker received. */
	assert_int_equal(route_value(cl, "sojourn_count"), SENDS + 1);
	p50 = route_value(cl, "sojourn_p50_ns");
	p99 = route_value(cl, "sojourn_p99_ns");
	p999 = route_value(cl, "sojourn_p999_ns");
	max = route_value(cl, "sojourn_max_ns");
	/* 20 of 21 waited at least WAIT_MS: the median did, and the
	 * longest; no send waited a minute. */
	if (p50 < WAIT_MS * MS || max < WAIT_MS * MS)
		fail_msg("sends that waited %d ms show p50 %lld ns, max %lld ns",
			 WAIT_MS, p50, max);
	assert_true(p50 <= p99 && p99 <= p999);
	assert_true(max < 60000 * MS);
	/* A percentile is a bucket's top: at most 1/16 above the max. */
	assert_true(p999 <= max + max / 16 + 1);
	/* ROUTES says the same, and the metrics' histogram: 21 measured,
	 * 20 of them not below 2^27 ns (134 ms), none at 2^35 (34 s). */
	assert_int_equal(shmr_test_ctl(&cl->app, "ROUTES lat", ans,
				       sizeof(ans)),
			 0);
	assert_non_null(strstr(ans, " sojourn_count=21 "));
	assert_int_equal(shmr_test_ctl(&cl->app, "METRICS", metrics,
				       sizeof(metrics)),
			 0);
	assert_non_null(strstr(metrics, "\nshmr_route_sojourn_seconds_count"
					"{router=\"lat\",route=\"w0\"} 21\n"));
	assert_non_null(strstr(metrics, "\nshmr_route_sojourn_seconds_bucket"
					"{router=\"lat\",route=\"w0\","
					"le=\"+Inf\"} 21\n"));
	assert_non_null(strstr(metrics, "\nshmr_route_sojourn_seconds_bucket"
					"{router=\"lat\",route=\"w0\","
					"le=\"34.359738368\"} 21\n"));
	p = strstr(metrics, "\nshmr_route_sojourn_seconds_bucket"
			    "{router=\"lat\",route=\"w0\",le=\"0.134217728\"} ");
	assert_non_null(p);
	assert_true(atoll(strchr(p + 1, '}') + 2) <= 1);
	client_ctx_stop(cl);
}

/* Bursts of BURST through shmr_send_burst() (one stamp each) between
 * single sends, while the worker is stopped: the counts are exact (the
 * receiver records a burst's run of one stamp as one weighted add), and
 * every one of them waited.  The last burst has one payload that fills
 * its slot: a send's stamp is its ref (layout.h), so it is measured as
 * the rest of its burst is. */
#define BURST 32
#define BURSTS 4
static void test_bursts(void **state)
{
	struct shmr_test_client *cl =
		client_ctx_start(sizeof(*cl), "sojburst", conf_one, 0);
	struct shmr_pid lat = client_lookup(cl, "lat");
	pid_t w = (pid_t)route_value(cl, "os_pid");
	static struct shmr_out out[BURST];
	static uint64_t keys[BURST];
	static unsigned char full[65536];
	size_t most = shmr_payload_max(cl->d);
	long long p50, max, n = 0;
	(void)state;

	assert_true(most >= sizeof(uint64_t) && most <= sizeof(full));

	assert_true(w > 0);
	assert_int_equal(kill(w, SIGSTOP), 0);
	for (int b = 0; b < BURSTS; b++) {
		for (int i = 0; i < BURST; i++) {
			keys[i] = (uint64_t)n + (uint64_t)i;
			out[i] = (struct shmr_out){ lat, 1, keys[i], &keys[i],
						    sizeof(keys[i]) };
		}
		if (b == BURSTS - 1)
			out[BURST / 2] = (struct shmr_out){
				lat, 1, keys[BURST / 2], full, (uint32_t)most
			};
		assert_int_equal(shmr_send_burst(cl->ep, out, BURST), BURST);
		n += BURST;
		assert_int_equal(shmr_send(cl->ep, lat, 1, (uint64_t)n, "x", 1),
				 0);
		n++;
	}
	nap_ms(WAIT_MS);
	assert_int_equal(kill(w, SIGCONT), 0);
	assert_int_equal(worker_count(cl), (uint64_t)n);
	/* The sends and the call, each once: a send's stamp is its ref,
	 * so even the one whose payload fills its slot has one. */
	assert_int_equal(route_value(cl, "sojourn_count"), n + 1);
	p50 = route_value(cl, "sojourn_p50_ns");
	max = route_value(cl, "sojourn_max_ns");
	if (p50 < WAIT_MS * MS || max < WAIT_MS * MS)
		fail_msg("%lld sends that waited %d ms show p50 %lld ns, "
			 "max %lld ns",
			 n, WAIT_MS, p50, max);
	assert_true(max < 60000 * MS);
	assert_true(route_value(cl, "sojourn_p999_ns") <= max + max / 16 + 1);
	client_ctx_stop(cl);
}

/* A route added into the slot of a removed one: its figures are its own
 * (the slot's histogram starts at 0 for its new owner). */
static void test_reused_slot(void **state)
{
	struct shmr_test_client *cl =
		client_ctx_start(sizeof(*cl), "sojreuse", conf_one, 0);
	struct shmr_pid old, now = { 0, 0 };
	char ans[1024];
	int added = 0;
	(void)state;

	sends_that_wait(cl);
	assert_int_equal(route_value(cl, "sojourn_count"), SENDS + 1);
	assert_int_equal(shmr_test_route_pid(&cl->app, "lat", "w0", &old), 0);
	remove_route(cl, "w0");
	/* Slot reuse waits until every lcore has dropped the old route:
	 * add until the new route has its slot (a liveness bound). */
	for (int i = 0; i < 50 && now.slot != old.slot; i++) {
		if (added) {
			remove_route(cl, "e");
			nap_ms(10);
		}
		assert_int_equal(shmr_test_ctl(&cl->app,
					       "ADD lat e - shmr-test-worker",
					       ans, sizeof(ans)),
				 0);
		added = 1;
		assert_int_equal(shmr_test_route_pid(&cl->app, "lat", "e", &now),
				 0);
	}
	assert_int_equal(now.slot, old.slot);
	assert_int_equal(value_of(cl, "e", "sojourn_count"), 0);
	assert_int_equal(value_of(cl, "e", "sojourn_max_ns"), 0);
	client_ctx_stop(cl);
}

static void test_off(void **state)
{
	char body[1024];
	struct shmr_test_client *cl;
	(void)state;

	snprintf(body, sizeof(body), "sojourn = false;\n%s", conf_one);
	cl = client_ctx_start(sizeof(*cl), "sojoff", body, 0);
	sends_that_wait(cl);
	assert_int_equal(route_value(cl, "sojourn_count"), 0);
	assert_int_equal(route_value(cl, "sojourn_p99_ns"), 0);
	client_ctx_stop(cl);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waited),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_reused_slot),
		cmocka_unit_test(test_off),
	};

	return cmocka_run_group_tests_name("sojourn", tests, NULL, NULL);
}
