/*
 * ROUTES and INSPECT bodies: the lines and keys an operator (and shmrctl)
 * reads, with counters summed by the caller.
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

#include "format.h"

struct fixture {
	struct shmr_config cfg;
	struct shmr_ctl_model m;
	struct shmr_ctl_counters c;
	char buf[8192];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct shmr_conf_router *r = &f->cfg.routers[0];
	const char *names[] = { "payments", "shipments", "reports" };

	strcpy(f->cfg.domain, "unit");
	f->cfg.nrouters = 1;
	strcpy(r->name, "events");
	r->behaviour = SHMR_BEH_TYPE;
	for (int k = 0; k < 3; k++)
		strcpy(r->routes[r->nroutes++].name, names[k]);
	assert_int_equal(shmr_ctl_model_init(&f->m, &f->cfg), 0);
	/* events = slot 0; payments 1, shipments 2, reports 3. */
	shmr_ctl_model_route_set(&f->m, &f->m.routers[0].routes[0], 101);
	shmr_ctl_model_route_set(&f->m, &f->m.routers[0].routes[2], 103);
	/* Both workers attached (CLAIMed their inboxes). */
	f->m.routers[0].routes[0].claimed_by = 11;
	f->m.routers[0].routes[2].claimed_by = 13;
	/* What the daemon pinned them to; reports is unpinned. */
	strcpy(f->m.routers[0].routes[0].cpus, "1");
	strcpy(f->m.routers[0].routes[1].cpus, "0,2-3");
	f->m.routers[0].routes[1].restarts = 2;
	f->m.routers[0].routes[2].restarts = 1;
	f->c.forwarded[0] = 1000;
	f->c.discarded[0] = 7;
	f->c.failed[0] = 3;
	f->c.delivered[1] = 600;
	f->c.delivered[2] = 0;
	f->c.delivered[3] = 400;
	f->c.queued[1] = 5;
	f->c.queued[2] = 12;
	/* payments' worker received 600 messages (shmr/hist.h's summary). */
	f->c.sojourn[1] = (struct shmr_hist_summary){
		.count = 600, .sum_ns = 900000, .max_ns = 250000,
		.p50_ns = 1023, .p99_ns = 102399, .p999_ns = 245759 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void routes_lines(void **state)
{
	struct fixture *f = *state;
	int n = shmr_ctl_format_routes(&f->m.routers[0], &f->c, f->buf,
				       sizeof(f->buf));

	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(f->buf));
	assert_string_equal(
		f->buf,
		"payments pid=1:1 os_pid=101 state=running restarts=0 "
		"delivered=600 queued=5 cpus=1 sojourn_count=600 "
		"sojourn_p50_ns=1023 sojourn_p99_ns=102399 "
		"sojourn_p999_ns=245759 sojourn_max_ns=250000\n"
		"shipments pid=2:1 os_pid=0 state=dead restarts=2 "
		"delivered=0 queued=12 cpus=0,2-3 sojourn_count=0 "
		"sojourn_p50_ns=0 sojourn_p99_ns=0 sojourn_p999_ns=0 "
		"sojourn_max_ns=0\n"
		"reports pid=3:1 os_pid=103 state=running restarts=1 "
		"delivered=400 queued=0 cpus=any sojourn_count=0 "
		"sojourn_p50_ns=0 sojourn_p99_ns=0 sojourn_p999_ns=0 "
		"sojourn_max_ns=0\n");
}

/* A worker started but not attached yet: the route shows "starting",
 * in ROUTES as in INSPECT; attached, "running". */
static void route_starting_until_attached(void **state)
{
	struct fixture *f = *state;
	struct shmr_ctl_route *q = &f->m.routers[0].routes[0];

	q->claimed_by = 0;
	assert_true(shmr_ctl_format_route(q, &f->c, f->buf, sizeof(f->buf)) >
		    0);
	assert_non_null(strstr(f->buf, " os_pid=101 state=starting "));
	assert_true(shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 0,
					    f->buf, sizeof(f->buf)) > 0);
	assert_non_null(strstr(f->buf, "\nshmr:route:payments:state "
				       "starting\n"));
	q->claimed_by = 11;
	assert_string_equal(shmr_ctl_route_shown_state(q), "running");
	/* Not running at all: its own state, attached or not. */
	assert_string_equal(shmr_ctl_route_shown_state(&f->m.routers[0].routes[1]),
			    "dead");
}

static void has_line(const char *body, const char *line)
{
	char want[260];

	/* A whole line: at the start, or after a newline. */
	snprintf(want, sizeof(want), "%s\n", line);
	if (strncmp(body, want, strlen(want)) == 0)
		return;
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(body, want))
		fail_msg("no line \"%s\" in:\n%s", line, body);
}

static void inspect_text(void **state)
{
	struct fixture *f = *state;
	int n = shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 0, f->buf,
					sizeof(f->buf));

	assert_true(n > 0);
	has_line(f->buf, "shmr:type type");
	has_line(f->buf, "shmr:routes_total 3");
	has_line(f->buf, "shmr:routes_active 2");
	has_line(f->buf, "shmr:routes_disabled 0");
	has_line(f->buf, "shmr:routes_pending 0");
	has_line(f->buf, "shmr:mailbox_size 17");
	has_line(f->buf, "shmr:forwarded 1000");
	has_line(f->buf, "shmr:discarded 7");
	has_line(f->buf, "shmr:failed 3");
	has_line(f->buf, "shmr:restarts 3");
	has_line(f->buf, "shmr:dlq_size 0");
	has_line(f->buf, "shmr:route:payments:pid 1:1");
	has_line(f->buf, "shmr:route:payments:forwarded 600");
	has_line(f->buf, "shmr:route:payments:os_pid 101");
	has_line(f->buf, "shmr:route:payments:sojourn_count 600");
	has_line(f->buf, "shmr:route:payments:sojourn_p50_ns 1023");
	has_line(f->buf, "shmr:route:payments:sojourn_p99_ns 102399");
	has_line(f->buf, "shmr:route:payments:sojourn_p999_ns 245759");
	has_line(f->buf, "shmr:route:payments:sojourn_max_ns 250000");
	has_line(f->buf, "shmr:route:reports:sojourn_p99_ns 0");
	has_line(f->buf, "shmr:route:shipments:os_pid 0");
	has_line(f->buf, "shmr:route:reports:forwarded 400");
	has_line(f->buf, "shmr:route:payments:cpus 1");
	has_line(f->buf, "shmr:route:shipments:cpus 0,2-3");
	has_line(f->buf, "shmr:route:reports:cpus any");
	has_line(f->buf, "shmr:route:payments:disabled false");
	assert_null(strstr(f->buf, ":pending "));
	assert_int_equal(strncmp(f->buf, "shmr:type type\n", 15), 0);
}

/* disabled only once a disable completed; pending only while pending. */
static void inspect_disabled_and_pending(void **state)
{
	struct fixture *f = *state;

	f->m.routers[0].routes[0].state = SHMR_ROUTE_PENDING_DISABLE;
	f->m.routers[0].routes[2].state = SHMR_ROUTE_DISABLED;
	assert_true(shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 0, f->buf,
					    sizeof(f->buf)) > 0);
	has_line(f->buf, "shmr:route:payments:pending disable");
	has_line(f->buf, "shmr:route:payments:disabled false");
	has_line(f->buf, "shmr:route:reports:disabled true");
	has_line(f->buf, "shmr:routes_pending 1");
	has_line(f->buf, "shmr:routes_disabled 1");
	assert_null(strstr(f->buf, "shmr:route:reports:pending"));
}

/* A handle_inspect hook's keys: one naming a built-in key with the prefix
 * overrides it in place; one without the prefix is its own key (after the
 * built-in ones) and overrides nothing. */
static void inspect_merges_behaviour_keys(void **state)
{
	struct fixture *f = *state;
	struct shmr_ctl_kv_extra x = { .n = 3 };
	char *own, *state_line;

	snprintf(x.p[0].key, sizeof(x.p[0].key), "shmr:type");
	snprintf(x.p[0].value, sizeof(x.p[0].value), "breaker");
	snprintf(x.p[1].key, sizeof(x.p[1].key), "failed");
	snprintf(x.p[1].value, sizeof(x.p[1].value), "not mine");
	snprintf(x.p[2].key, sizeof(x.p[2].key), "breaker:tripped");
	snprintf(x.p[2].value, sizeof(x.p[2].value), "2");
	assert_true(shmr_ctl_format_inspect(&f->m.routers[0], &f->c, &x, 0,
					    f->buf, sizeof(f->buf)) > 0);
	assert_int_equal(strncmp(f->buf, "shmr:type breaker\n", 18), 0);
	assert_null(strstr(f->buf, "shmr:type type"));
	has_line(f->buf, "shmr:failed 3");
	has_line(f->buf, "failed not mine");
	has_line(f->buf, "breaker:tripped 2");
	has_line(f->buf, "shmr:state running");
	own = strstr(f->buf, "\nbreaker:tripped");
	state_line = strstr(f->buf, "shmr:route:reports:cpus");
	assert_true(own && state_line && own > state_line);

	f->m.routers[0].stopped = 1;
	assert_true(shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 0,
					    f->buf, sizeof(f->buf)) > 0);
	has_line(f->buf, "shmr:state stopped");
}

static void inspect_json(void **state)
{
	struct fixture *f = *state;
	int n = shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 1, f->buf,
					sizeof(f->buf));

	assert_true(n > 0);
	assert_int_equal(f->buf[0], '{');
	assert_string_equal(f->buf + n - 2, "}\n");
	assert_non_null(strstr(f->buf, "\"shmr:type\": \"type\""));
	assert_non_null(strstr(f->buf, "\"shmr:routes_total\": \"3\""));
	assert_non_null(strstr(f->buf, "\"shmr:mailbox_size\": \"17\""));
	assert_non_null(
		strstr(f->buf, "\"shmr:route:payments:forwarded\": \"600\""));
	assert_non_null(strstr(f->buf, "\"shmr:route:reports:pid\": \"3:1\""));
	assert_non_null(
		strstr(f->buf, "\"shmr:route:shipments:cpus\": \"0,2-3\""));
	/* Comma between members, none after the last. */
	assert_null(strstr(f->buf, ",\n}"));
	assert_null(strstr(f->buf, "\"\n  \""));
}

static void too_small(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 0,
						 f->buf, 64),
			 -ENOSPC);
	assert_int_equal(shmr_ctl_format_routes(&f->m.routers[0], &f->c,
						f->buf, 64),
			 -ENOSPC);
	assert_int_equal(shmr_ctl_format_routes(&f->m.routers[0], &f->c,
						f->buf, 0),
			 -ENOSPC);
}

static void kv_escapes(void **state)
{
	char buf[256];
	struct shmr_ctl_kv kv;

	shmr_ctl_kv_begin(&kv, buf, sizeof(buf), 1);
	shmr_ctl_kv_add(&kv, "k\"1", "a\\b\n");
	assert_true(shmr_ctl_kv_end(&kv) > 0);
	assert_string_equal(buf, "{\n  \"k\\\"1\": \"a\\\\b\\u000a\"\n}\n");

	shmr_ctl_kv_begin(&kv, buf, sizeof(buf), 1);
	assert_int_equal(shmr_ctl_kv_end(&kv), 3);
	assert_string_equal(buf, "{}\n");

	shmr_ctl_kv_begin(&kv, buf, sizeof(buf), 0);
	shmr_ctl_kv_add(&kv, "a", "%d", 1);
	shmr_ctl_kv_add(&kv, "b", "%s", "two");
	assert_int_equal(shmr_ctl_kv_end(&kv), 10);
	assert_string_equal(buf, "a 1\nb two\n");
}

static void names_of_enums(void **state)
{
	assert_string_equal(shmr_ctl_behaviour_name(SHMR_BEH_HASH), "hash");
	assert_string_equal(shmr_ctl_behaviour_name(SHMR_BEH_DSO), "dso");
	assert_string_equal(shmr_ctl_behaviour_name(77), "unknown");
	/* Every behaviour the configuration accepts has its name. */
	for (uint32_t b = SHMR_BEH_TYPE; b <= SHMR_BEH_BALANCING; b++)
		assert_string_not_equal(shmr_ctl_behaviour_name(b), "unknown");
	assert_string_equal(shmr_ctl_behaviour_name(SHMR_BEH_SCATTER_GATHER),
			    "scatter-gather");
	assert_string_equal(shmr_ctl_route_state_name(SHMR_ROUTE_DISABLED),
			    "disabled");
	assert_string_equal(
		shmr_ctl_route_state_name(SHMR_ROUTE_PENDING_REMOVE),
		"pending_remove");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(routes_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(route_starting_until_attached,
						setup, teardown),
		cmocka_unit_test_setup_teardown(inspect_text, setup, teardown),
		cmocka_unit_test_setup_teardown(inspect_disabled_and_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(inspect_merges_behaviour_keys, setup,
						teardown),
		cmocka_unit_test_setup_teardown(inspect_json, setup, teardown),
		cmocka_unit_test_setup_teardown(too_small, setup, teardown),
		cmocka_unit_test(kv_escapes),
		cmocka_unit_test(names_of_enums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
