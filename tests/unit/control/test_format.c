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
#include <json-c/json.h>

#include "counters.h"
#include "format.h"
#include <shmr/proto.h>
#include "metrics.h"

struct fixture {
	struct shmr_config cfg;
	struct shmr_ctl_model m;
	struct shmr_ctl_counters c;
	char buf[16384];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct shmr_conf_router *r;
	const char *names[] = { "payments", "shipments", "reports" };

	assert_non_null(f);
	assert_int_equal(shmr_config_routers_alloc(&f->cfg, 1), 0);
	r = &f->cfg.routers[0];

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
	f->c.inbox_slots = 2046; /* 2 lcores of lane_size 1024 */
	/* payments' worker received 600 messages (shmr/hist.h's summary). */
	f->c.sojourn[1] = (struct shmr_hist_summary){
		.count = 600, .sum_ns = 900000, .max_ns = 250000,
		.p50_ns = 1023, .p99_ns = 102399, .p999_ns = 245759 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	shmr_ctl_model_fini(&f->m);
	shmr_config_free(&f->cfg);
	free(f);
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
	has_line(f->buf, "shmr:queued 17");
	has_line(f->buf, "shmr:mailbox_size 2046");
	has_line(f->buf, "shmr:forwarded 1000");
	has_line(f->buf, "shmr:discarded 7");
	has_line(f->buf, "shmr:failed 3");
	has_line(f->buf, "shmr:restarts 3");
	has_line(f->buf, "shmr:dlq_size 0");
	has_line(f->buf, "shmr:route:payments:pid 1:1");
	has_line(f->buf, "shmr:route:payments:forwarded 600");
	has_line(f->buf, "shmr:route:payments:os_pid 101");
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

/* The JSON object (json-c parses it): numbers are JSON numbers, booleans
 * booleans, the rest strings. */
static struct json_object *member(struct json_object *o, const char *key,
				  enum json_type type)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no key \"%s\"", key);
	if (!json_object_is_type(v, type))
		fail_msg("\"%s\" is a %s, not a %s", key,
			 json_type_to_name(json_object_get_type(v)),
			 json_type_to_name(type));
	return v;
}

static uint64_t num(struct json_object *o, const char *key)
{
	return json_object_get_uint64(member(o, key, json_type_int));
}

static void inspect_json(void **state)
{
	struct fixture *f = *state;
	int n = shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 1, f->buf,
					sizeof(f->buf));
	struct json_object *o;

	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(f->buf));
	assert_string_equal(f->buf + n - 2, "}\n");
	o = json_tokener_parse(f->buf);
	assert_non_null(o);
	assert_string_equal(
		json_object_get_string(member(o, "shmr:type", json_type_string)),
		"type");
	assert_int_equal(num(o, "shmr:routes_total"),
			 3);
	assert_int_equal(num(o, "shmr:queued"), 17);
	assert_int_equal(num(o, "shmr:mailbox_size"), 2046);
	assert_int_equal(num(o, "shmr:forwarded"),
			 1000);
	assert_int_equal(
		num(o, "shmr:route:payments:forwarded"),
		600);
	assert_int_equal(json_object_get_int64(member(
				 o, "shmr:route:payments:os_pid", json_type_int)),
			 101);
	assert_false(json_object_get_boolean(member(
		o, "shmr:route:payments:disabled", json_type_boolean)));
	{
		struct json_object *pid = member(o, "shmr:route:reports:pid",
						 json_type_object);

		assert_int_equal(json_object_get_int64(member(
					 pid, "slot", json_type_int)),
				 3);
		assert_int_equal(json_object_get_int64(member(
					 pid, "gen", json_type_int)),
				 1);
	}
	assert_string_equal(
		json_object_get_string(member(o, "shmr:route:shipments:cpus",
					      json_type_string)),
		"0,2-3");
	json_object_put(o);
}

/* Every figure of the registry is in INSPECT, as a number, under the key
 * counters.def says: the router's, each route's, each lcore's. */
static void inspect_has_every_counter(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char key[128];
	unsigned nr = 0, nq = 0, nl = 0, ne = 0, na = 0;

	f->c.narena = 2;
	snprintf(f->c.arena[0].cls, sizeof(f->c.arena[0].cls), "64K");
	snprintf(f->c.arena[1].cls, sizeof(f->c.arena[1].cls), "1M");
	f->c.arena[1].in_use = 3;
	f->c.arena[1].reclaimed = 7;
	f->c.nlcores = 2;
	f->c.lcore[1].polls = 42;
	f->c.lcore[0].admin_dropped = 9;
	f->c.nclients = 1;
	f->c.client[0].pid = (struct shmr_pid){ 5, 2 };
	f->c.lane_full[5] = 8;
	assert_true(shmr_ctl_format_inspect(&f->m.routers[0], &f->c, NULL, 1,
					    f->buf, sizeof(f->buf)) > 0);
	o = json_tokener_parse(f->buf);
	assert_non_null(o);
	for (unsigned i = 0; i < shmr_ctl_ctr_count; i++) {
		const struct shmr_ctl_ctr_desc *d = &shmr_ctl_ctr_registry[i];
		unsigned copies = d->scope == SHMR_CTL_CTR_ROUTE   ? 3
				  : d->scope == SHMR_CTL_CTR_LCORE ? 2
				  : d->scope == SHMR_CTL_CTR_ARENA ? 2
								   : 1;

		for (unsigned k = 0; k < copies; k++) {
			if (d->scope == SHMR_CTL_CTR_ROUTER)
				snprintf(key, sizeof(key), "shmr:%s", d->name);
			else if (d->scope == SHMR_CTL_CTR_ROUTE)
				snprintf(key, sizeof(key), "shmr:route:%s:%s",
					 f->m.routers[0].routes[k].conf->name,
					 d->name);
			else if (d->scope == SHMR_CTL_CTR_LCORE)
				snprintf(key, sizeof(key), "shmr:lcore:%u:%s",
					 k, d->name);
			else if (d->scope == SHMR_CTL_CTR_ARENA)
				snprintf(key, sizeof(key), "shmr:arena:%s:%s",
					 k ? "1M" : "64K", d->name);
			else
				snprintf(key, sizeof(key),
					 "shmr:endpoint:5:2:%s", d->name);
			member(o, key, json_type_int);
		}
		nr += d->scope == SHMR_CTL_CTR_ROUTER;
		nq += d->scope == SHMR_CTL_CTR_ROUTE;
		nl += d->scope == SHMR_CTL_CTR_LCORE;
		ne += d->scope == SHMR_CTL_CTR_ENDPOINT;
		na += d->scope == SHMR_CTL_CTR_ARENA;
	}
	assert_true(nr > 0 && nq > 0 && nl > 0 && ne > 0 && na > 0);
	assert_int_equal(num(o, "shmr:arena:1M:in_use"), 3);
	assert_int_equal(num(o, "shmr:arena:1M:reclaimed"), 7);
	assert_false(json_object_object_get_ex(o, "shmr:arena:2M:free", NULL));
	assert_int_equal(num(o, "shmr:endpoint:5:2:lane_full"), 8);
	assert_int_equal(num(o, "shmr:lcore:1:polls"),
			 42);
	assert_int_equal(num(o, "shmr:lcore:0:admin_dropped"),
			 9);
	/* No third lcore. */
	assert_false(json_object_object_get_ex(o, "shmr:lcore:2:polls", NULL));
	json_object_put(o);
}

/* The Prometheus text: HELP and TYPE from the registry, one sample per
 * router, route and lcore, counters with _total; too small a buffer is
 * -ENOSPC. */
static void metrics_text(void **state)
{
	struct fixture *f = *state;
	static char big[65536];
	int n;

	f->c.nlcores = 1;
	f->c.lcore[0].sleeps = 5;
	f->c.nclients = 1;
	f->c.client[0].pid = (struct shmr_pid){ 5, 2 };
	strcpy(f->c.client[0].name, "probe");
	f->c.lane_full[5] = 8;
	f->c.narena = 1;
	strcpy(f->c.arena[0].cls, "64K");
	f->c.arena[0].alloc_failures = 4;
	n = shmr_ctl_metrics_format(&f->m, &f->c, big, sizeof(big));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(big));
	has_line(big, "# TYPE shmr_router_forwarded_total counter");
	has_line(big, "# HELP shmr_router_forwarded_total Messages the router "
		      "forwarded to one of its routes (messages).");
	has_line(big, "shmr_router_forwarded_total{router=\"events\"} 1000");
	has_line(big, "shmr_router_restarts_total{router=\"events\"} 3");
	has_line(big, "# TYPE shmr_router_queued gauge");
	has_line(big, "shmr_router_queued{router=\"events\"} 17");
	has_line(big, "shmr_router_mailbox_size{router=\"events\"} 2046");
	has_line(big, "shmr_route_forwarded_total{router=\"events\","
		      "route=\"payments\"} 600");
	has_line(big, "shmr_route_queued{router=\"events\",route=\"shipments\"} 12");
	has_line(big, "shmr_route_restarts_total{router=\"events\","
		      "route=\"shipments\"} 2");
	has_line(big, "shmr_lcore_sleeps_total{lcore=\"0\"} 5");
	has_line(big, "shmr_endpoint_lane_full_total{endpoint=\"5:2\","
		      "name=\"probe\"} 8");
	has_line(big, "# TYPE shmr_arena_alloc_failures_total counter");
	has_line(big, "shmr_arena_alloc_failures_total{class=\"64K\"} 4");
	has_line(big, "shmr_arena_free{class=\"64K\"} 0");
	assert_null(strstr(big, "lcore=\"1\""));
	assert_int_equal(big[n - 1], '\n');
	assert_int_equal(shmr_ctl_metrics_format(&f->m, &f->c, big, 100),
			 -ENOSPC);
	assert_int_equal(shmr_ctl_metrics_format(&f->m, &f->c, big, 0),
			 -ENOSPC);
}

static unsigned parts_are_whole(const struct shmr_ctl_router *r,
				const struct shmr_ctl_counters *c,
				struct shmr_ctl_kv_extra *x, int json,
				size_t cap);

/* The largest router: SHMR_MAX_ROUTES routes (max_routes at its most) with
 * the longest names, 128 other slots clients, SHMR_MAX_LCORES lcores, every
 * figure at its widest.  Its INSPECT --json is more than one answer of
 * the control socket holds (SHMR_PROTO_MAX): in parts (INSPECT ...
 * from=N), each one answer, it is whole, text and JSON; the metrics text
 * fits the 1 MiB the HTTP listener starts with. */
static void largest_domain_fits(void **state)
{
	static struct shmr_config cfg;
	static struct shmr_ctl_model m;
	static struct shmr_ctl_counters c;
	static char big[1 << 20];
	struct shmr_conf_router *r;
	int n;

	(void)state;
	assert_int_equal(shmr_config_routers_alloc(&cfg, 1), 0);
	r = &cfg.routers[0];
	strcpy(cfg.domain, "unit");
	cfg.max_routes = SHMR_MAX_ROUTES;
	cfg.max_endpoints = 1 + SHMR_MAX_ROUTES + 128;
	cfg.nrouters = 1;
	memset(r->name, 'r', SHMR_NAME_MAX - 1);
	r->behaviour = SHMR_BEH_TYPE;
	for (unsigned k = 0; k < SHMR_MAX_ROUTES; k++) {
		snprintf(r->routes[k].name, SHMR_NAME_MAX, "%030u", k);
		r->nroutes++;
	}
	assert_int_equal(shmr_ctl_model_init(&m, &cfg), 0);
	memset(&c, 0xff, sizeof(c)); /* every figure UINT64_MAX */
	c.nlcores = 4;
	c.nclients = 128; /* every other slot of the domain */
	for (unsigned i = 0; i < c.nclients; i++) {
		c.client[i].pid = (struct shmr_pid){ 33 + i, UINT32_MAX };
		memset(c.client[i].name, 'n', SHMR_NAME_MAX - 1);
		c.client[i].name[SHMR_NAME_MAX - 1] = '\0';
	}
	for (unsigned k = 0; k < SHMR_MAX_ROUTES; k++)
		strcpy(m.routers[0].routes[k].cpus, "0-63");
	/* Every class, labels as wide as a class's size gets ("512K"). */
	c.narena = SHMR_ARENA_MAX_CLASSES;
	for (unsigned k = 0; k < SHMR_ARENA_MAX_CLASSES; k++)
		snprintf(c.arena[k].cls, sizeof(c.arena[k].cls), "%uK",
			 500 + k);
	/* Whole, it is more than one answer holds (the routes' sojourns
	 * took it over): in parts, each one answer, it is all there. */
	int nj = shmr_ctl_format_inspect(&m.routers[0], &c, NULL, 1, big,
					 sizeof(big));

	assert_true(nj > SHMR_PROTO_MAX - 3);
	assert_int_equal(shmr_ctl_format_inspect(&m.routers[0], &c, NULL, 1,
						 big, SHMR_PROTO_MAX - 3),
			 -ENOSPC);
	assert_true(parts_are_whole(&m.routers[0], &c, NULL, 1,
				    SHMR_PROTO_MAX) > 1);
	assert_true(parts_are_whole(&m.routers[0], &c, NULL, 0,
				    SHMR_PROTO_MAX) >= 1);
	n = shmr_ctl_metrics_format(&m, &c, big, sizeof(big));
	assert_true(n > 0);
	print_message("largest domain: inspect --json %d bytes, metrics %d\n",
		      nj, n);
	shmr_ctl_model_fini(&m);
	shmr_config_free(&cfg);
}

/* A router's behaviour keys, in parts: each overrides where its key is,
 * the others come once, with the last part; every part fits. */
static void inspect_parts_with_behaviour_keys(void **state)
{
	struct fixture *f = *state;
	struct shmr_ctl_kv_extra x = { .n = 2 };

	snprintf(x.p[0].key, sizeof(x.p[0].key), "shmr:route:reports:cpus");
	snprintf(x.p[0].value, sizeof(x.p[0].value), "mine");
	snprintf(x.p[1].key, sizeof(x.p[1].key), "breaker:tripped");
	snprintf(x.p[1].value, sizeof(x.p[1].value), "2");
	for (int json = 0; json < 2; json++)
		assert_true(parts_are_whole(&f->m.routers[0], &f->c, &x, json,
					    1024) > 2);
}

/*
 * INSPECT of @p r in parts of at most @p cap bytes (as the server answers
 * INSPECT ... from=N): each part fits and advances, and the parts' keys
 * merged are the whole answer's, each once.  Returns the parts.
 */
static unsigned parts_are_whole(const struct shmr_ctl_router *r,
				const struct shmr_ctl_counters *c,
				struct shmr_ctl_kv_extra *x, int json,
				size_t cap)
{
	static char part[SHMR_PROTO_MAX], whole[1 << 20];
	struct json_object *all = json_object_new_object(), *w;
	unsigned from = 0, total = 1, parts = 0, n, t, lines = 0, wlines = 0;

	assert_true(shmr_ctl_format_inspect(r, c, x, json, whole,
					    sizeof(whole)) > 0);
	while (from < total) {
		int len = shmr_ctl_format_inspect_paged(r, c, x, json, from,
							part, cap);
		const char *body;

		assert_true(len > 0 && (size_t)len < cap);
		assert_int_equal(sscanf(part, "OK %u %u", &n, &t), 2);
		assert_true(n > from && n <= t);
		body = strchr(part, '\n') + 1;
		if (json) {
			struct json_object *o = json_tokener_parse(body);

			assert_non_null(o);
			json_object_object_foreach(o, k, v)
				json_object_object_add(all, k,
						       json_object_get(v));
			json_object_put(o);
		} else {
			for (const char *l = body; *l; l = strchr(l, '\n') + 1) {
				size_t kl = strcspn(l, " ");
				char key[160];

				snprintf(key, sizeof(key), "\n%.*s ", (int)kl, l);
				/* In the whole answer, with the same line. */
				assert_non_null(strstr(whole, key + 1));
				lines++;
			}
		}
		from = n;
		total = t;
		parts++;
	}
	if (json) {
		w = json_tokener_parse(whole);
		assert_non_null(w);
		assert_int_equal(json_object_object_length(all),
				 json_object_object_length(w));
		json_object_object_foreach(w, k, v) {
			struct json_object *got;

			assert_true(json_object_object_get_ex(all, k, &got));
			assert_true(json_object_equal(got, v));
		}
		json_object_put(w);
	} else {
		for (const char *l = whole; *l; l = strchr(l, '\n') + 1)
			wlines++;
		/* Every line, and an overriding extra once more. */
		assert_true(lines >= wlines && lines <= wlines + (x ? x->n : 0));
	}
	json_object_put(all);
	return parts;
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
	struct json_object *o;

	(void)state;
	shmr_ctl_kv_begin(&kv, buf, sizeof(buf), 1);
	shmr_ctl_kv_add(&kv, "k\"1", "a\\b\n");
	shmr_ctl_kv_add_u64(&kv, "n", UINT64_MAX);
	shmr_ctl_kv_add_bool(&kv, "t", 1);
	assert_true(shmr_ctl_kv_end(&kv) > 0);
	o = json_tokener_parse(buf);
	assert_non_null(o);
	assert_string_equal(
		json_object_get_string(member(o, "k\"1", json_type_string)),
		"a\\b\n");
	assert_true(num(o, "n") ==
		    UINT64_MAX);
	assert_true(json_object_get_boolean(member(o, "t", json_type_boolean)));
	json_object_put(o);

	shmr_ctl_kv_begin(&kv, buf, sizeof(buf), 1);
	assert_true(shmr_ctl_kv_end(&kv) > 0);
	o = json_tokener_parse(buf);
	assert_non_null(o);
	assert_int_equal(json_object_object_length(o), 0);
	json_object_put(o);

	/* Too small a buffer for the object: -ENOSPC, no leak. */
	shmr_ctl_kv_begin(&kv, buf, 8, 1);
	shmr_ctl_kv_add(&kv, "a long key", "%s", "a long value");
	assert_int_equal(shmr_ctl_kv_end(&kv), -ENOSPC);

	shmr_ctl_kv_begin(&kv, buf, sizeof(buf), 0);
	shmr_ctl_kv_add(&kv, "a", "%d", 1);
	shmr_ctl_kv_add(&kv, "b", "%s", "two");
	shmr_ctl_kv_add_u64(&kv, "c", 3);
	shmr_ctl_kv_add_bool(&kv, "d", 0);
	assert_int_equal(shmr_ctl_kv_end(&kv), 22);
	assert_string_equal(buf, "a 1\nb two\nc 3\nd false\n");
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
		cmocka_unit_test_setup_teardown(inspect_has_every_counter, setup,
						teardown),
		cmocka_unit_test_setup_teardown(metrics_text, setup, teardown),
		cmocka_unit_test(largest_domain_fits),
		cmocka_unit_test_setup_teardown(inspect_parts_with_behaviour_keys,
						setup, teardown),
		cmocka_unit_test_setup_teardown(too_small, setup, teardown),
		cmocka_unit_test(kv_escapes),
		cmocka_unit_test(names_of_enums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
