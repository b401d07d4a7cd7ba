/*
 * The routing table and the routing decisions, on hand-made specs in a
 * heap domain: resolution order, route states, the built-in behaviours,
 * the example DSO behaviour, routers of routers and the hop limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_ring.h>

#include "dp_test.h"

/* Endpoints every test starts with. */
struct fixture {
	struct dp_dom d;
	struct shmr_pid client, router, payments, shipments, reports, audit,
		other;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || dp_dom_init(&f->d, 1) < 0)
		return -1;
	f->client = dp_ep(&f->d, 1, 1, SHMR_EPK_CLIENT);
	f->router = dp_ep(&f->d, 2, 1, SHMR_EPK_ROUTER);
	f->payments = dp_ep(&f->d, 10, 3, SHMR_EPK_ROUTE);
	f->shipments = dp_ep(&f->d, 11, 1, SHMR_EPK_ROUTE);
	f->reports = dp_ep(&f->d, 12, 1, SHMR_EPK_ROUTE);
	f->audit = dp_ep(&f->d, 20, 5, SHMR_EPK_CLIENT);
	f->other = dp_ep(&f->d, 21, 1, SHMR_EPK_CLIENT);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dp_dom_fini(&f->d);
	free(f);
	return 0;
}

static struct shmr_dp_table *build(struct fixture *f)
{
	struct shmr_dp_table *t = NULL;

	assert_int_equal(shmr_dp_table_build(&f->d.env, &t), 0);
	assert_non_null(t);
	assert_true(t->magic == SHMR_DP_TABLE_MAGIC);
	return t;
}

static void assert_deliver(const struct shmr_dp_target *t,
			   struct shmr_pid pid)
{
	assert_int_equal(t->verdict, SHMR_DP_DELIVER);
	assert_int_equal(t->router, -1);
	assert_int_equal(t->slot, pid.slot);
	assert_int_equal(t->gen, pid.gen);
}

static void assert_fail(const struct shmr_dp_target *t, int err)
{
	assert_int_equal(t->verdict, SHMR_DP_FAIL);
	assert_int_equal(t->err, err);
}

static struct shmr_msg msg(uint8_t kind, uint32_t type, uint64_t key)
{
	struct shmr_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.type = type;
	m.key = key;
	return m;
}

/* The routing logics' per-lcore state, as one lcore would hold it. */
static uint64_t pick_rr[SHMR_MAX_ROUTERS];
static struct shmr_dp_pick pick = { .rr = pick_rr };

static void decide(struct shmr_dp_table *t, unsigned ri, uint8_t kind,
		   uint32_t type, uint64_t key, struct shmr_dp_decision *d)
{
	struct shmr_msg m = msg(kind, type, key);

	shmr_dp_decide_rcu(t, &pick, ri, &m, d);
}

/* Owned routes first, then the registry; unknown names fail. */
static void test_resolution_order(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_table *t;
	char longname[SHMR_NAME_MAX + 8];
	unsigned ri;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "events", f->router, SHMR_BEH_TYPE);
	dp_route(&f->d, ri, "payments", f->payments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "shipments", f->shipments, SHMR_ROUTE_RUNNING);
	dp_reg(&f->d, "payments", f->other); /* shadowed by the route */
	dp_reg(&f->d, "audit", f->audit);
	dp_reg(&f->d, "ghost", (struct shmr_pid){ 21, 9 }); /* stale gen */
	dp_reg(&f->d, "nobody", (struct shmr_pid){ 99, 1 }); /* free slot */
	dp_spec_end(&f->d);
	t = build(f);

	assert_deliver(shmr_dp_resolve_rcu(t, ri, "payments"), f->payments);
	assert_deliver(shmr_dp_resolve_rcu(t, ri, "shipments"), f->shipments);
	assert_deliver(shmr_dp_resolve_rcu(t, ri, "audit"), f->audit);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "ghost"),
		    -SHMR_E_PROCESS_UNKNOWN);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "nobody"),
		    -SHMR_E_PROCESS_UNKNOWN);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "reports"),
		    -SHMR_E_PROCESS_UNKNOWN);
	assert_fail(shmr_dp_resolve_rcu(t, ri, ""), -SHMR_E_PROCESS_UNKNOWN);
	memset(longname, 'p', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_fail(shmr_dp_resolve_rcu(t, ri, longname),
		    -SHMR_E_PROCESS_UNKNOWN);
	/* The registry alone for a name the router does not own, and for
	 * any name when asked outside a router. */
	assert_deliver(shmr_dp_resolve_rcu(t, 7, "payments"), f->other);
	/* Routers are not polled; the client and routes are. */
	assert_int_equal(t->lists[0].n, 6);
	for (uint32_t i = 0; i < t->lists[0].n; i++)
		assert_int_not_equal(t->lists[0].e[i].slot, f->router.slot);
	shmr_dp_table_free(t);
}

/* Each route state maps to Ergo's forwarding behaviour. */
static void test_route_states(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_table *t;
	unsigned ri;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "events", f->router, SHMR_BEH_TYPE);
	dp_route(&f->d, ri, "running", f->payments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "dead", f->shipments, SHMR_ROUTE_DEAD);
	dp_route(&f->d, ri, "disabled", f->reports, SHMR_ROUTE_DISABLED);
	dp_route(&f->d, ri, "p-disable", f->reports,
		 SHMR_ROUTE_PENDING_DISABLE);
	dp_route(&f->d, ri, "p-replace", f->reports,
		 SHMR_ROUTE_PENDING_REPLACE);
	dp_route(&f->d, ri, "p-remove", f->reports,
		 SHMR_ROUTE_PENDING_REMOVE);
	dp_route(&f->d, ri, "stale", (struct shmr_pid){ 10, 2 },
		 SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "weird", f->reports, 77);
	dp_route(&f->d, ri, "r-wait", f->audit, SHMR_ROUTE_REPLACE_WAIT);
	dp_reg(&f->d, "disabled", f->audit); /* the route still wins */
	dp_spec_end(&f->d);
	t = build(f);

	/* A route with no worker asks for one: a dead route still queues
	 * (lazy restart: start, then forward); a replace whose new worker
	 * is not up is busy.  A live or disabled route never asks. */
	assert_int_equal(shmr_dp_resolve_rcu(t, ri, "dead")->ask, 1);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "r-wait"), -SHMR_E_BUSY);
	assert_int_equal(shmr_dp_resolve_rcu(t, ri, "r-wait")->ask, 1);
	assert_int_equal(shmr_dp_resolve_rcu(t, ri, "r-wait")->slot,
			 f->audit.slot);
	assert_int_equal(shmr_dp_resolve_rcu(t, ri, "running")->ask, 0);
	assert_int_equal(shmr_dp_resolve_rcu(t, ri, "p-replace")->ask, 0);
	assert_int_equal(shmr_dp_resolve_rcu(t, ri, "disabled")->ask, 0);

	assert_deliver(shmr_dp_resolve_rcu(t, ri, "running"), f->payments);
	assert_deliver(shmr_dp_resolve_rcu(t, ri, "dead"), f->shipments);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "disabled"), -SHMR_E_DISABLED);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "p-disable"),
		    -SHMR_E_DISABLED);
	assert_deliver(shmr_dp_resolve_rcu(t, ri, "p-replace"), f->reports);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "p-remove"), -SHMR_E_NO_ROUTE);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "stale"),
		    -SHMR_E_PROCESS_UNKNOWN);
	assert_fail(shmr_dp_resolve_rcu(t, ri, "weird"), -SHMR_E_NO_ROUTE);
	shmr_dp_table_free(t);
}

/* type: message type -> name, resolved at build; unknown type discards. */
static void test_type_decision(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_decision d;
	struct shmr_dp_table *t;
	unsigned ri;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "events", f->router, SHMR_BEH_TYPE);
	dp_route(&f->d, ri, "payments", f->payments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "shipments", f->shipments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "reports", f->reports, SHMR_ROUTE_DISABLED);
	dp_reg(&f->d, "audit", f->audit);
	dp_type(&f->d, ri, 7, "audit");
	dp_type(&f->d, ri, 1, "payments");
	dp_type(&f->d, ri, 2, "shipments");
	dp_type(&f->d, ri, 1, "shipments"); /* a duplicate: first wins */
	dp_type(&f->d, ri, 3, "reports");
	dp_type(&f->d, ri, 4, "nosuch");
	dp_type(&f->d, ri, 5, "");
	dp_type(&f->d, ri, 0xffffffffu, "shipments");
	dp_spec_end(&f->d);
	t = build(f);

	for (int kind = SHMR_KIND_SEND; kind <= SHMR_KIND_CALL; kind++) {
		decide(t, ri, (uint8_t)kind, 1, 0, &d);
		assert_int_equal(d.verdict, SHMR_DP_DELIVER);
		assert_int_equal(d.slot, f->payments.slot);
		assert_int_equal(d.gen, f->payments.gen);
		assert_string_equal(d.name, "payments");
		assert_int_equal(d.nrouters, 1);
		assert_int_equal(d.routers[0], ri);
	}
	decide(t, ri, SHMR_KIND_SEND, 2, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DELIVER);
	assert_int_equal(d.slot, f->shipments.slot);
	assert_string_equal(d.name, "shipments");
	decide(t, ri, SHMR_KIND_SEND, 0xffffffffu, 0, &d);
	assert_int_equal(d.slot, f->shipments.slot);
	decide(t, ri, SHMR_KIND_SEND, 7, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DELIVER);
	assert_int_equal(d.slot, f->audit.slot);
	assert_string_equal(d.name, "audit");
	decide(t, ri, SHMR_KIND_SEND, 3, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.err, -SHMR_E_DISABLED);
	assert_string_equal(d.name, "reports");
	decide(t, ri, SHMR_KIND_SEND, 4, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.err, -SHMR_E_PROCESS_UNKNOWN);
	assert_string_equal(d.name, "nosuch");
	decide(t, ri, SHMR_KIND_SEND, 5, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);
	decide(t, ri, SHMR_KIND_CALL, 6, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);
	assert_null(d.name);
	shmr_dp_table_free(t);
}

/* hash: key % nhash picks the name. */
static void test_hash_decision(void **state)
{
	struct fixture *f = *state;
	static const char *const expect[] = { "payments", "shipments",
					      "reports" };
	struct shmr_pid pids[3] = { f->payments, f->shipments, f->reports };
	struct shmr_dp_decision d;
	struct shmr_dp_table *t;
	unsigned ri, empty;

	dp_spec_begin(&f->d);
	ri = dp_router(&f->d, "shards", f->router, SHMR_BEH_HASH);
	for (int i = 0; i < 3; i++) {
		dp_route(&f->d, ri, expect[i], pids[i], SHMR_ROUTE_RUNNING);
		dp_hash(&f->d, ri, expect[i]);
	}
	empty = dp_router(&f->d, "empty", dp_ep(&f->d, 3, 1, SHMR_EPK_ROUTER),
			  SHMR_BEH_HASH);
	dp_spec_end(&f->d);
	t = build(f);

	for (uint64_t key = 0; key < 30; key++) {
		decide(t, ri, SHMR_KIND_SEND, 1, key, &d);
		assert_int_equal(d.verdict, SHMR_DP_DELIVER);
		assert_int_equal(d.slot, pids[key % 3].slot);
		assert_string_equal(d.name, expect[key % 3]);
	}
	decide(t, ri, SHMR_KIND_CALL, 1, UINT64_MAX, &d);
	assert_string_equal(d.name, expect[UINT64_MAX % 3]);
	decide(t, empty, SHMR_KIND_SEND, 1, 5, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);
	shmr_dp_table_free(t);
}

/* A call-map entry (spec field call_types), set by hand. */
static void call_type(struct fixture *f, unsigned ri, uint32_t type,
		      const char *name)
{
	struct shmr_spec_router *r = &dp_spec(&f->d)->routers[ri];
	struct shmr_spec_type *e =
		&shmr_types_of(f->d.base, ri, 1)[r->ncall_types++];

	e->type = type;
	snprintf(e->target, sizeof(e->target), "%s", name);
}

/* CQRS: with a call map, calls route by type and sends by the behaviour
 * (hash: key % N; type: the send map); without one, calls follow sends. */
static void test_calls_route_apart_from_sends(void **state)
{
	struct fixture *f = *state;
	static const char *const shard[] = { "payments", "shipments" };
	struct shmr_pid pids[2] = { f->payments, f->shipments };
	struct shmr_dp_decision d;
	struct shmr_dp_table *t;
	unsigned cqrs, typed;

	dp_spec_begin(&f->d);
	cqrs = dp_router(&f->d, "orders", f->router, SHMR_BEH_HASH);
	for (int i = 0; i < 2; i++) {
		dp_route(&f->d, cqrs, shard[i], pids[i], SHMR_ROUTE_RUNNING);
		dp_hash(&f->d, cqrs, shard[i]);
	}
	dp_route(&f->d, cqrs, "reports", f->reports, SHMR_ROUTE_RUNNING);
	call_type(f, cqrs, 9, "audit");   /* a registry name */
	call_type(f, cqrs, 2, "reports");
	call_type(f, cqrs, 2, "payments"); /* a duplicate: first wins */
	dp_reg(&f->d, "audit", f->audit);
	typed = dp_router(&f->d, "typed",
			  dp_ep(&f->d, 3, 1, SHMR_EPK_ROUTER), SHMR_BEH_TYPE);
	dp_route(&f->d, typed, "payments", f->payments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, typed, "shipments", f->shipments, SHMR_ROUTE_RUNNING);
	dp_type(&f->d, typed, 1, "payments");
	call_type(f, typed, 1, "shipments");
	dp_spec_end(&f->d);
	t = build(f);

	for (uint64_t key = 0; key < 10; key++) {
		/* Commands: by key, whatever the type. */
		decide(t, cqrs, SHMR_KIND_SEND, 2, key, &d);
		assert_int_equal(d.verdict, SHMR_DP_DELIVER);
		assert_int_equal(d.slot, pids[key % 2].slot);
		assert_string_equal(d.name, shard[key % 2]);
		/* Queries: by type, whatever the key. */
		decide(t, cqrs, SHMR_KIND_CALL, 2, key, &d);
		assert_int_equal(d.verdict, SHMR_DP_DELIVER);
		assert_int_equal(d.slot, f->reports.slot);
		assert_string_equal(d.name, "reports");
	}
	decide(t, cqrs, SHMR_KIND_CALL, 9, 1, &d);
	assert_int_equal(d.verdict, SHMR_DP_DELIVER);
	assert_int_equal(d.slot, f->audit.slot);
	/* A query type with no entry is discarded, not hashed. */
	decide(t, cqrs, SHMR_KIND_CALL, 3, 1, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);

	/* behaviour "type": sends by types, calls by call_types. */
	decide(t, typed, SHMR_KIND_SEND, 1, 0, &d);
	assert_int_equal(d.slot, f->payments.slot);
	decide(t, typed, SHMR_KIND_CALL, 1, 0, &d);
	assert_int_equal(d.slot, f->shipments.slot);
	assert_string_equal(d.name, "shipments");
	decide(t, typed, SHMR_KIND_CALL, 2, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);
	shmr_dp_table_free(t);
}

static unsigned dso_router(struct fixture *f, struct shmr_pid pid,
			   const char *name, const char *path,
			   const char *arg)
{
	struct shmr_spec_router *r;
	unsigned ri;

	ri = dp_router(&f->d, name, pid, SHMR_BEH_DSO);
	r = &dp_spec(&f->d)->routers[ri];
	snprintf(r->dso, sizeof(r->dso), "%s", path);
	snprintf(r->dso_arg, sizeof(r->dso_arg), "%s", arg);
	dp_route(&f->d, ri, "payments", f->payments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "shipments", f->shipments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, ri, "reports", f->reports, SHMR_ROUTE_RUNNING);
	return ri;
}

/* The example behaviour: type < threshold -> payments, else key parity. */
static void test_dso_decision(void **state)
{
	struct fixture *f = *state;
	const char *path = getenv("SHMR_EXAMPLE_BEHAVIOUR");
	struct shmr_dp_decision d;
	struct shmr_dp_table *t;
	unsigned def, ten, bad_arg, missing;

	if (!path || !*path)
		skip();
	dp_spec_begin(&f->d);
	def = dso_router(f, f->router, "def", path, "");
	ten = dso_router(f, dp_ep(&f->d, 3, 1, SHMR_EPK_ROUTER), "ten", path,
			 "10");
	bad_arg = dso_router(f, dp_ep(&f->d, 4, 1, SHMR_EPK_ROUTER), "bad",
			     path, "ten");
	missing = dso_router(f, dp_ep(&f->d, 5, 1, SHMR_EPK_ROUTER),
			     "missing", "/nonexistent/libnothing.so", "");
	dp_spec_end(&f->d);
	t = build(f);
	assert_non_null(t->routers[def].ops);
	assert_null(t->routers[bad_arg].ops);
	assert_null(t->routers[missing].ops);

	for (int kind = SHMR_KIND_SEND; kind <= SHMR_KIND_CALL; kind++) {
		decide(t, def, (uint8_t)kind, 5, 3, &d);
		assert_int_equal(d.verdict, SHMR_DP_DELIVER);
		assert_int_equal(d.slot, f->payments.slot);
		assert_string_equal(d.name, "payments");
		decide(t, def, (uint8_t)kind, 99, 1, &d);
		assert_string_equal(d.name, "payments");
		decide(t, def, (uint8_t)kind, 150, 2, &d);
		assert_int_equal(d.slot, f->shipments.slot);
		assert_string_equal(d.name, "shipments");
		decide(t, def, (uint8_t)kind, 100, 3, &d);
		assert_int_equal(d.slot, f->reports.slot);
		assert_string_equal(d.name, "reports");
	}
	/* dso_arg sets the threshold. */
	decide(t, ten, SHMR_KIND_SEND, 50, 1, &d);
	assert_string_equal(d.name, "reports");
	decide(t, ten, SHMR_KIND_SEND, 9, 1, &d);
	assert_string_equal(d.name, "payments");
	/* An init that refuses, or an object that is not there: discard. */
	decide(t, bad_arg, SHMR_KIND_SEND, 5, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);
	decide(t, missing, SHMR_KIND_CALL, 5, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DISCARD);
	/* Rebuilding loads it again; freeing calls fini (ASan/LSan would
	 * report the state otherwise). */
	dp_spec_begin(&f->d);
	dp_spec_end(&f->d);
	struct shmr_dp_table *t2 = build(f);

	decide(t2, def, SHMR_KIND_SEND, 150, 4, &d);
	assert_string_equal(d.name, "shipments");
	shmr_dp_table_free(t);
	shmr_dp_table_free(t2);
}

/* A router whose route (or registry name) is another router: both decide
 * in one pass and the message reaches the inner router's choice. */
static void test_router_of_routers(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid inner = dp_ep(&f->d, 3, 2, SHMR_EPK_ROUTER);
	struct shmr_dp_decision d;
	struct shmr_dp_table *t;
	unsigned outer, in;

	dp_spec_begin(&f->d);
	outer = dp_router(&f->d, "front", f->router, SHMR_BEH_TYPE);
	dp_route(&f->d, outer, "owned-inner", inner, SHMR_ROUTE_RUNNING);
	dp_type(&f->d, outer, 1, "owned-inner");
	dp_type(&f->d, outer, 2, "back");
	dp_type(&f->d, outer, 3, "stale-back");
	in = dp_router(&f->d, "back", inner, SHMR_BEH_HASH);
	dp_route(&f->d, in, "payments", f->payments, SHMR_ROUTE_RUNNING);
	dp_route(&f->d, in, "shipments", f->shipments, SHMR_ROUTE_DISABLED);
	dp_hash(&f->d, in, "payments");
	dp_hash(&f->d, in, "shipments");
	dp_reg(&f->d, "back", inner);
	dp_reg(&f->d, "stale-back", (struct shmr_pid){ 3, 1 });
	dp_spec_end(&f->d);
	t = build(f);

	for (uint32_t type = 1; type <= 2; type++) {
		decide(t, outer, SHMR_KIND_SEND, type, 0, &d);
		assert_int_equal(d.verdict, SHMR_DP_DELIVER);
		assert_int_equal(d.slot, f->payments.slot);
		assert_int_equal(d.gen, f->payments.gen);
		assert_int_equal(d.nrouters, 2);
		assert_int_equal(d.routers[0], outer);
		assert_int_equal(d.routers[1], in);
		assert_string_equal(d.name, "payments");
	}
	/* The inner router's failure is the answer. */
	decide(t, outer, SHMR_KIND_CALL, 1, 1, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.err, -SHMR_E_DISABLED);
	assert_int_equal(d.nrouters, 2);
	/* A stale PID of a router is no router. */
	decide(t, outer, SHMR_KIND_SEND, 3, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.err, -SHMR_E_PROCESS_UNKNOWN);
	shmr_dp_table_free(t);
}

/* At most SHMR_DP_MAX_HOPS routers per message, loops included. */
static void test_hop_limit(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid r[5];
	struct shmr_dp_decision d;
	struct shmr_dp_table *t;
	struct shmr_msg m;
	unsigned ri[5], loop_a, loop_b;
	char name[8], next[8];

	dp_spec_begin(&f->d);
	/* A chain r0 -> r1 -> r2 -> r3 -> payments. */
	for (unsigned i = 0; i < 4; i++) {
		r[i] = dp_ep(&f->d, 40 + i, 1, SHMR_EPK_ROUTER);
		snprintf(name, sizeof(name), "r%u", i);
		snprintf(next, sizeof(next), "r%u", i + 1);
		ri[i] = dp_router(&f->d, name, r[i], SHMR_BEH_TYPE);
		dp_type(&f->d, ri[i], 1, i == 3 ? "payments" : next);
		dp_reg(&f->d, name, r[i]);
	}
	dp_reg(&f->d, "payments", f->payments);
	/* A loop a -> b -> a. */
	r[4] = dp_ep(&f->d, 50, 1, SHMR_EPK_ROUTER);
	loop_a = dp_router(&f->d, "loop-a", r[4], SHMR_BEH_TYPE);
	dp_type(&f->d, loop_a, 1, "loop-b");
	dp_reg(&f->d, "loop-a", r[4]);
	loop_b = dp_router(&f->d, "loop-b", dp_ep(&f->d, 51, 1,
						  SHMR_EPK_ROUTER),
			   SHMR_BEH_TYPE);
	dp_type(&f->d, loop_b, 1, "loop-a");
	dp_reg(&f->d, "loop-b", (struct shmr_pid){ 51, 1 });
	dp_spec_end(&f->d);
	t = build(f);

	decide(t, ri[0], SHMR_KIND_SEND, 1, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_DELIVER);
	assert_int_equal(d.slot, f->payments.slot);
	assert_int_equal(d.nrouters, 4);
	/* The same chain for a message that already passed a router. */
	m = msg(SHMR_KIND_SEND, 1, 0);
	m.hops = 1;
	shmr_dp_decide_rcu(t, &pick, ri[0], &m, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.err, -SHMR_E_NO_ROUTE);
	assert_int_equal(d.nrouters, 3);
	/* Three hops left: r1 -> r2 -> r3 -> payments fits. */
	shmr_dp_decide_rcu(t, &pick, ri[1], &m, &d);
	assert_int_equal(d.verdict, SHMR_DP_DELIVER);
	m.hops = 4;
	shmr_dp_decide_rcu(t, &pick, ri[3], &m, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.nrouters, 1);
	assert_int_equal(d.routers[0], ri[3]);

	decide(t, loop_a, SHMR_KIND_CALL, 1, 0, &d);
	assert_int_equal(d.verdict, SHMR_DP_FAIL);
	assert_int_equal(d.err, -SHMR_E_NO_ROUTE);
	assert_int_equal(d.nrouters, SHMR_DP_MAX_HOPS);
	assert_int_equal(d.routers[0], loop_a);
	assert_int_equal(d.routers[1], loop_b);
	shmr_dp_table_free(t);
}

/* Poll lists: active, non-router endpoints, slot % nlcores, once each. */
static void test_poll_lists(void **state)
{
	struct dp_dom d;
	struct shmr_dp_table *t = NULL;
	struct shmr_spec *s;

	(void)state;
	assert_int_equal(dp_dom_init(&d, 2), 0);
	s = dp_spec(&d);
	dp_spec_begin(&d);
	dp_ep(&d, 1, 1, SHMR_EPK_CLIENT);
	dp_ep(&d, 3, 1, SHMR_EPK_ROUTE);
	dp_ep(&d, 4, 1, SHMR_EPK_CLIENT);
	dp_router(&d, "r", dp_ep(&d, 5, 1, SHMR_EPK_ROUTER), SHMR_BEH_TYPE);
	shmr_active_of(d.base)[s->nactive++] = 5; /* a router listed */
	shmr_active_of(d.base)[s->nactive++] = 4; /* twice */
	shmr_active_of(d.base)[s->nactive++] = 200; /* out of range */
	shmr_active_of(d.base)[s->nactive++] = 7; /* a free slot */
	dp_spec_end(&d);
	assert_int_equal(shmr_dp_table_build(&d.env, &t), 0);

	assert_int_equal(t->lists[1].n, 2);
	assert_int_equal(t->lists[1].e[0].slot, 1);
	assert_int_equal(t->lists[1].e[1].slot, 3);
	assert_int_equal(t->lists[0].n, 1);
	assert_int_equal(t->lists[0].e[0].slot, 4);
	assert_ptr_equal(t->lists[0].e[0].out,
			 shmr_lane_at(d.base, 4, SHMR_LANE_OUT(2)));
	assert_ptr_equal(t->lists[0].e[0].out_high,
			 shmr_lane_at(d.base, 4, SHMR_LANE_OUT_HIGH(2)));
	shmr_dp_table_free(t);
	dp_dom_fini(&d);
}

/* A spec full of garbage builds (entries left out), never crashes. */
static void test_garbage_spec(void **state)
{
	struct fixture *f = *state;
	struct shmr_spec *s = dp_spec(&f->d);
	struct shmr_dp_table *t;
	const struct shmr_domain_hdr *h = shmr_hdr(f->d.base);
	uint32_t mr = h->max_routers;

	dp_spec_begin(&f->d);
	memset(s->routers, 0xff, (size_t)mr * sizeof(s->routers[0]));
	memset(shmr_routes_of(f->d.base, 0), 0xff,
	       shmr_spec_routes_size(h->max_routes, mr));
	memset(shmr_names_of(f->d.base), 'x',
	       shmr_hdr(f->d.base)->max_names * sizeof(struct shmr_spec_reg));
	s->nrouters = 1000;
	s->nreg = 100000;
	s->nactive = 99999;
	for (uint32_t i = 0; i < h->max_endpoints; i++)
		shmr_active_of(f->d.base)[i] = i * 77;
	dp_spec_end(&f->d);
	t = build(f);
	assert_int_equal(t->nrouters, mr);
	for (uint32_t i = 0; i < t->nrouters; i++) {
		struct shmr_dp_decision d;

		decide(t, i, SHMR_KIND_SEND, 1, 1, &d);
		assert_int_not_equal(d.verdict, SHMR_DP_DELIVER);
	}
	shmr_dp_table_free(t);
}

/* A writer that died mid-write is not waited for. */
static void test_spec_mid_write(void **state)
{
	struct fixture *f = *state;
	struct shmr_dp_table *t = (void *)1;

	dp_spec_begin(&f->d);
	assert_int_equal(shmr_dp_table_build(&f->d.env, &t), -EAGAIN);
	assert_null(t);
	dp_spec_end(&f->d);
	t = build(f);
	shmr_dp_table_free(t);
}

/* A quarantine holds while the lanes are corrupted, lifts once sound. */
static void test_quarantine_rebuild(void **state)
{
	struct fixture *f = *state;
	struct shmr_ep_shared *ep = shmr_ep_at(f->d.base, f->client.slot);
	struct rte_ring *out =
		shmr_lane_at(f->d.base, f->client.slot, SHMR_LANE_OUT(1));
	struct shmr_dp_table *t;
	uint32_t mask = out->mask;

	atomic_store(&ep->quarantined, 1);
	out->mask = 0xffff;
	t = build(f);
	assert_int_equal(t->lists[0].e[0].slot, f->client.slot);
	assert_true(t->lists[0].e[0].quarantined);
	assert_int_equal(atomic_load(&ep->quarantined), 1);
	shmr_dp_table_free(t);

	out->mask = mask;
	t = build(f);
	assert_false(t->lists[0].e[0].quarantined);
	assert_int_equal(atomic_load(&ep->quarantined), 0);
	shmr_dp_table_free(t);
}

/* A table's size by the endpoint slots (the operator guide's "Domain
 * memory"): 52 bytes a slot, and 2 more a slot for every routing lcore,
 * beside what the routers' limits size, about 231 KiB at their defaults;
 * nothing else grows with them. */
static void test_table_size_by_endpoints(void **state)
{
	const uint32_t eps[3] = { 1024, 2048, 1024 }, nl[3] = { 1, 1, 2 };
	size_t size[3];

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		/* Every other limit at its default. */
		struct shmr_geometry g = { 128, 64, nl[i], SHMR_POLL_ADAPTIVE,
					   0, eps[i], 0, 0, 0, 0 };
		struct dp_dom d;
		struct shmr_dp_table *t;

		assert_int_equal(dp_dom_init_geo(&d, &g), 0);
		assert_int_equal(shmr_dp_table_build(&d.env, &t), 0);
		size[i] = t->alloc_size;
		shmr_dp_table_free(t);
		dp_dom_fini(&d);
	}
	assert_int_equal(size[1] - size[0], 1024 * (52 + 2));
	assert_int_equal(size[2] - size[0], 1024 * 2);
	/* The rest, at the default limits: 231 KiB, give or take one. */
	assert_in_range(size[0] - 1024 * (52 + 2), 230 * 1024, 232 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_resolution_order),
		T(test_route_states),
		T(test_type_decision),
		T(test_hash_decision),
		T(test_calls_route_apart_from_sends),
		T(test_dso_decision),
		T(test_router_of_routers),
		T(test_hop_limit),
		cmocka_unit_test(test_poll_lists),
		T(test_garbage_spec),
		T(test_spec_mid_write),
		T(test_quarantine_rebuild),
		cmocka_unit_test(test_table_size_by_endpoints),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
