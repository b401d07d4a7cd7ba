/*
 * The model of routers, routes and the registry, and the spec built from a
 * configuration: names, PIDs, types, hash, dso; clients' endpoints and
 * names with their connection's lifetime; claims by the spawned worker.
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

#include "model.h"

static void add_route(struct shmr_conf_router *r, const char *name,
		      const char *cpus)
{
	struct shmr_conf_route *q = &r->routes[r->nroutes++];

	strcpy(q->name, name);
	strcpy(q->program, "worker");
	strcpy(q->cpus, cpus);
	q->line = 10 + (int)r->nroutes;
}

/* Router "events" (type: 1->payments 2->shipments 3->reports 9->audit),
 * router "shards" (hash over a, b), router "custom" (dso, no routes). */
static struct shmr_config *make_config(void)
{
	struct shmr_config *c = calloc(1, sizeof(*c));
	struct shmr_conf_router *r;

	assert_non_null(c);
	assert_int_equal(shmr_config_routers_alloc(c, SHMR_ROUTERS_DEFAULT), 0);

	strcpy(c->source, "test.conf");
	strcpy(c->domain, "unit");
	c->slot_size = 128;
	c->lane_size = 64;
	c->lcores = 2;
	c->stop_grace_ms = 100;

	r = &c->routers[c->nrouters++];
	strcpy(r->name, "events");
	r->behaviour = SHMR_BEH_TYPE;
	add_route(r, "payments", "0");
	add_route(r, "shipments", "");
	add_route(r, "reports", "0-1");
	r->types[0] = (struct shmr_conf_type){ 1, "payments" };
	r->types[1] = (struct shmr_conf_type){ 2, "shipments" };
	r->types[2] = (struct shmr_conf_type){ 3, "reports" };
	r->types[3] = (struct shmr_conf_type){ 9, "audit" };
	r->ntypes = 4;

	r = &c->routers[c->nrouters++];
	strcpy(r->name, "shards");
	r->behaviour = SHMR_BEH_HASH;
	add_route(r, "a", "");
	add_route(r, "b", "");
	strcpy(r->hash[0], "a");
	strcpy(r->hash[1], "b");
	strcpy(r->hash[2], "a");
	r->nhash = 3;

	r = &c->routers[c->nrouters++];
	strcpy(r->name, "custom");
	r->behaviour = SHMR_BEH_DSO;
	strcpy(r->dso, "/opt/behaviour.so");
	strcpy(r->dso_arg, "mode=fast");
	return c;
}

struct fixture {
	struct shmr_config *cfg;
	struct shmr_ctl_model m;
	/* room for the configuration's routers (the default) */
	struct shmr_spec *spec;
	uint32_t active[SHMR_MAX_ENDPOINTS];
	struct shmr_spec_reg names[SHMR_MAX_NAMES];
	struct shmr_spec_type types[SHMR_ROUTERS_DEFAULT * 2 * SHMR_MAX_TYPES];
	/* the routes and names: max_routes (the default) a router */
	alignas(8) unsigned char routes[SHMR_ROUTERS_DEFAULT *
					SHMR_ROUTES_DEFAULT *
					(sizeof(struct shmr_spec_route) +
					 SHMR_NAME_MAX)];
};

/* Router @p ri's routes and names as published. */
static struct shmr_spec_route *spec_routes(struct fixture *f, uint32_t ri)
{
	return shmr_spec_routes_at(f->routes, SHMR_ROUTES_DEFAULT, ri);
}

static char (*spec_hash(struct fixture *f, uint32_t ri))[SHMR_NAME_MAX]
{
	return shmr_spec_hash_at(f->routes, SHMR_ROUTES_DEFAULT, ri);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->spec = calloc(1, shmr_spec_size(SHMR_ROUTERS_DEFAULT));
	assert_non_null(f->spec);
	f->cfg = make_config();
	assert_int_equal(shmr_ctl_model_init(&f->m, f->cfg), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	shmr_ctl_model_fini(&f->m);
	shmr_config_free(f->cfg);
	free(f->cfg);
	free(f->spec);
	free(f);
	return 0;
}

static void publish(struct fixture *f)
{
	f->m.version++;
	f->m.dirty = 0;
	shmr_ctl_model_spec_build(&f->m, &(const struct shmr_ctl_spec_bufs){
						 .spec = f->spec,
						 .active = f->active,
						 .names = f->names,
						 .types = f->types,
						 .routes = f->routes });
}

static const struct shmr_spec_reg *reg_find_in(const struct fixture *f,
					       const char *name)
{
	for (uint32_t i = 0; i < f->spec->nreg; i++)
		if (strcmp(f->names[i].name, name) == 0)
			return &f->names[i];
	return NULL;
}

static void spec_from_config(void **state)
{
	struct fixture *f = *state;
	const struct shmr_spec *s = f->spec;
	const struct shmr_spec_router *ev, *sh, *cu;
	/* Router 0's type map: max_types (the default) entries a map. */
	const struct shmr_spec_type *ev_types =
		shmr_spec_types_at(f->types, SHMR_TYPES_DEFAULT, 0, 0);
	const struct shmr_spec_route *ev_routes = spec_routes(f, 0);
	const struct shmr_spec_route *sh_routes = spec_routes(f, 1);
	char(*sh_hash)[SHMR_NAME_MAX] = spec_hash(f, 1);

	assert_true(f->m.dirty);
	publish(f);
	assert_int_equal(s->version, 1);
	assert_int_equal(s->nrouters, 3);
	ev = &s->routers[0];
	sh = &s->routers[1];
	cu = &s->routers[2];

	/* Routers take the first slots, then the routes, in order. */
	assert_string_equal(ev->name, "events");
	assert_int_equal(ev->pid.slot, 0);
	assert_int_equal(ev->pid.gen, 1);
	assert_string_equal(sh->name, "shards");
	assert_int_equal(sh->pid.slot, 1);
	assert_string_equal(cu->name, "custom");
	assert_int_equal(cu->pid.slot, 2);

	assert_int_equal(ev->behaviour, SHMR_BEH_TYPE);
	assert_int_equal(ev->nroutes, 3);
	assert_string_equal(ev_routes[0].name, "payments");
	assert_int_equal(ev_routes[0].pid.slot, 3);
	assert_int_equal(ev_routes[0].pid.gen, 1);
	assert_string_equal(ev_routes[1].name, "shipments");
	assert_int_equal(ev_routes[1].pid.slot, 4);
	assert_string_equal(ev_routes[2].name, "reports");
	assert_int_equal(ev_routes[2].pid.slot, 5);
	for (int k = 0; k < 3; k++)
		assert_int_equal(ev_routes[k].state, SHMR_ROUTE_DEAD);
	assert_int_equal(ev->ntypes, 4);
	assert_int_equal(ev_types[0].type, 1);
	assert_string_equal(ev_types[0].target, "payments");
	assert_int_equal(ev_types[3].type, 9);
	assert_string_equal(ev_types[3].target, "audit");

	assert_int_equal(sh->behaviour, SHMR_BEH_HASH);
	assert_int_equal(sh->nroutes, 2);
	assert_int_equal(sh_routes[0].pid.slot, 6);
	assert_int_equal(sh_routes[1].pid.slot, 7);
	assert_int_equal(sh->nhash, 3);
	assert_string_equal(sh_hash[0], "a");
	assert_string_equal(sh_hash[1], "b");
	assert_string_equal(sh_hash[2], "a");

	assert_int_equal(cu->behaviour, SHMR_BEH_DSO);
	assert_int_equal(cu->nroutes, 0);
	assert_string_equal(cu->dso, "/opt/behaviour.so");
	assert_string_equal(cu->dso_arg, "mode=fast");

	/* The registry: every router's name -> its endpoint. */
	assert_int_equal(s->nreg, 3);
	assert_int_equal(reg_find_in(f, "events")->pid.slot, 0);
	assert_int_equal(reg_find_in(f, "shards")->pid.slot, 1);
	assert_int_equal(reg_find_in(f, "custom")->pid.slot, 2);

	/* active[]: the route inboxes, never the routers. */
	assert_int_equal(s->nactive, 5);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(f->active[i], 3 + i);
	assert_int_equal(f->m.alloc.slots[0].kind, SHMR_EPK_ROUTER);
	assert_int_equal(f->m.alloc.slots[3].kind, SHMR_EPK_ROUTE);
	assert_string_equal(f->m.alloc.slots[3].name, "payments");
}

static void route_up_and_down(void **state)
{
	struct fixture *f = *state;
	struct shmr_ctl_route *q = &f->m.routers[0].routes[1];
	unsigned router = 99;

	assert_ptr_equal(shmr_ctl_model_route_of_slot(&f->m, 4, &router), q);
	assert_int_equal(router, 0);
	assert_null(shmr_ctl_model_route_of_slot(&f->m, 0, NULL));
	publish(f);
	shmr_ctl_model_route_set(&f->m, q, 4242);
	assert_true(f->m.dirty);
	publish(f);
	assert_int_equal(spec_routes(f, 0)[1].state,
			 SHMR_ROUTE_RUNNING);
	assert_int_equal(f->m.alloc.slots[4].os_pid, 4242);
	shmr_ctl_model_route_set(&f->m, q, 0);
	publish(f);
	assert_int_equal(spec_routes(f, 0)[1].state, SHMR_ROUTE_DEAD);
	/* Same inbox PID through the restart. */
	assert_int_equal(spec_routes(f, 0)[1].pid.slot, 4);
	assert_int_equal(spec_routes(f, 0)[1].pid.gen, 1);
}

static void clients_and_names(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid a, b, c;
	int reused;

	publish(f);
	assert_int_equal(shmr_ctl_model_open(&f->m, 11, 100, 0, &a, &reused),
			 0);
	assert_int_equal(a.slot, 8);
	assert_int_equal(a.gen, 1);
	assert_int_equal(shmr_ctl_model_open(&f->m, 11, 100, 0, &b, &reused),
			 0);
	assert_int_equal(shmr_ctl_model_open(&f->m, 22, 200, 0, &c, &reused),
			 0);
	assert_int_equal(shmr_ctl_model_register(&f->m, 11, "alpha", a), 0);
	assert_int_equal(shmr_ctl_model_register(&f->m, 11, "beta", b), 0);
	assert_int_equal(shmr_ctl_model_register(&f->m, 22, "gamma", c), 0);
	/* Taken names, by a client or a router. */
	assert_int_equal(shmr_ctl_model_register(&f->m, 22, "alpha", c),
			 -SHMR_E_ROUTE_DUPLICATE);
	assert_int_equal(shmr_ctl_model_register(&f->m, 22, "events", c),
			 -SHMR_E_ROUTE_DUPLICATE);
	/* Someone else's endpoint, or a bad name. */
	assert_int_equal(shmr_ctl_model_register(&f->m, 22, "delta", a),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(shmr_ctl_model_register(&f->m, 11, "bad name", a),
			 -SHMR_E_NAME);
	publish(f);
	assert_int_equal(f->spec->nreg, 6);
	assert_int_equal(reg_find_in(f, "alpha")->pid.slot, a.slot);
	assert_int_equal(f->spec->nactive, 8);
	assert_int_equal(f->m.alloc.slots[a.slot].os_pid, 100);

	/* Unregister: another's name is refused, unknown is success. */
	assert_int_equal(shmr_ctl_model_unregister(&f->m, 22, "alpha", c),
			 -SHMR_E_PERM);
	assert_int_equal(shmr_ctl_model_unregister(&f->m, 22, "events", c),
			 -SHMR_E_PERM);
	assert_int_equal(shmr_ctl_model_unregister(&f->m, 22, "nobody", c), 0);
	assert_int_equal(shmr_ctl_model_unregister(&f->m, 22, "gamma", c), 0);
	publish(f);
	assert_null(reg_find_in(f, "gamma"));

	/* CLOSE drops its names at once; the endpoint stays polled, with no
	 * owner, until its lanes are drained, and only then goes. */
	assert_int_equal(shmr_ctl_model_close(&f->m, 22, a),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(shmr_ctl_model_close(&f->m, 11, a), 0);
	publish(f);
	assert_null(reg_find_in(f, "alpha"));
	assert_non_null(reg_find_in(f, "beta"));
	assert_int_equal(f->spec->nactive, 8);
	assert_int_equal(f->m.alloc.slots[a.slot].drain, SHMR_CTL_DRAIN_POLL);
	assert_int_equal(f->m.alloc.slots[a.slot].os_pid, 0);
	assert_int_equal(shmr_ctl_model_close(&f->m, 11, a),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(shmr_ctl_model_register(&f->m, 11, "again", a),
			 -SHMR_E_NO_ENDPOINT);
	shmr_ctl_model_drain_end(&f->m, a);
	publish(f);
	assert_int_equal(f->spec->nactive, 7);

	/* The connection closes: the rest goes the same way. */
	assert_int_equal(shmr_ctl_model_drop_owner(&f->m, 11), 1);
	publish(f);
	assert_null(reg_find_in(f, "beta"));
	assert_int_equal(f->spec->nactive, 7);
	assert_int_equal(f->spec->nreg, 3);
	shmr_ctl_model_drain_end(&f->m, b);
	publish(f);
	assert_int_equal(f->spec->nactive, 6);
}

/* A slot given up with messages left is not reused until they are
 * counted, however far the dataplane has got. */
static void given_up_slot_waits_for_its_count(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid a, b;
	int reused;

	publish(f);
	assert_int_equal(shmr_ctl_model_open(&f->m, 5, 1, 0, &a, &reused), 0);
	publish(f);
	shmr_ctl_model_drop_owner(&f->m, 5);
	shmr_ctl_model_drain_end(&f->m, a);
	/* Retiring a route's inbox does nothing; a client's drains. */
	shmr_ctl_model_retire(&f->m, f->m.routers[0].routes[0].pid);
	assert_int_equal(
		f->m.alloc.slots[f->m.routers[0].routes[0].pid.slot].drain,
		SHMR_CTL_DRAIN_NONE);
	/* Every lcore is past it, but it is still not handed out. */
	for (uint64_t owner = 6; owner <= 7; owner++) {
		publish(f);
		assert_int_equal(shmr_ctl_model_open(&f->m, owner, 1,
						     UINT64_MAX, &b, &reused),
				 0);
		if (owner == 7)
			break;
		assert_int_not_equal(b.slot, a.slot);
		shmr_ctl_model_drain_counted(&f->m, a.slot, 3);
		assert_int_equal(f->m.close_dropped, 3);
		shmr_ctl_model_retire(&f->m, b);
		assert_int_equal(f->m.alloc.slots[b.slot].drain,
				 SHMR_CTL_DRAIN_POLL);
		shmr_ctl_model_drain_end(&f->m, b);
	}
	/* Counted: it comes back. */
	assert_int_equal(b.slot, a.slot);
	assert_int_equal(reused, 1);
}

static void freed_client_slot_deferred(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid a, b;
	int reused;

	publish(f); /* version 1 */
	shmr_ctl_model_open(&f->m, 5, 1, 0, &a, &reused);
	publish(f); /* version 2 */
	shmr_ctl_model_drop_owner(&f->m, 5);
	shmr_ctl_model_drain_end(&f->m, a); /* its lanes were empty */
	publish(f); /* version 3 removed it */
	shmr_ctl_model_drain_counted(&f->m, a.slot, 0);
	/* The dataplane has applied only version 2: a different slot. */
	assert_int_equal(shmr_ctl_model_open(&f->m, 6, 1, 2, &b, &reused), 0);
	assert_int_not_equal(b.slot, a.slot);
	assert_int_equal(reused, 0);
	shmr_ctl_model_drop_owner(&f->m, 6);
	shmr_ctl_model_drain_end(&f->m, b);
	shmr_ctl_model_drain_counted(&f->m, b.slot, 0);
	publish(f); /* version 4 */
	/* Applied 4: the lowest slot comes back with the next gen. */
	assert_int_equal(shmr_ctl_model_open(&f->m, 7, 1, 4, &b, &reused), 0);
	assert_int_equal(b.slot, a.slot);
	assert_int_equal(b.gen, 2);
	assert_int_equal(reused, 1);
}

static void claim_by_spawned_worker_only(void **state)
{
	struct fixture *f = *state;
	struct shmr_ctl_route *q = &f->m.routers[0].routes[0];
	struct shmr_pid inbox = q->pid, stale = { q->pid.slot, 2 };

	/* No worker yet. */
	assert_int_equal(shmr_ctl_model_claim(&f->m, 3, 777, inbox),
			 -SHMR_E_PERM);
	shmr_ctl_model_route_set(&f->m, q, 777);
	assert_int_equal(shmr_ctl_model_claim(&f->m, 3, 778, inbox),
			 -SHMR_E_PERM);
	assert_int_equal(shmr_ctl_model_claim(&f->m, 3, 777, stale),
			 -SHMR_E_NO_ENDPOINT);
	/* A router's endpoint is not claimable. */
	assert_int_equal(shmr_ctl_model_claim(&f->m, 3, 777,
					      f->m.routers[0].pid),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(shmr_ctl_model_claim(&f->m, 3, 777, inbox), 0);
	/* The worker registers a name for its inbox; it dies: the name
	 * goes, the inbox stays. */
	assert_int_equal(shmr_ctl_model_register(&f->m, 3, "pay", inbox), 0);
	assert_int_equal(shmr_ctl_model_register(&f->m, 4, "pay2", inbox),
			 -SHMR_E_NO_ENDPOINT);
	shmr_ctl_model_route_set(&f->m, q, 0);
	publish(f);
	assert_null(reg_find_in(f, "pay"));
	assert_int_equal(f->spec->nactive, 5);
	/* The replacement registers the same name. */
	shmr_ctl_model_route_set(&f->m, q, 779);
	assert_int_equal(shmr_ctl_model_claim(&f->m, 9, 779, inbox), 0);
	assert_int_equal(shmr_ctl_model_register(&f->m, 9, "pay", inbox), 0);
	/* CLOSE of a claimed inbox releases the claim, not the inbox. */
	assert_int_equal(shmr_ctl_model_close(&f->m, 9, inbox), 0);
	publish(f);
	assert_null(reg_find_in(f, "pay"));
	assert_int_equal(f->spec->nactive, 5);
	assert_int_equal(shmr_ctl_model_register(&f->m, 9, "pay", inbox),
			 -SHMR_E_NO_ENDPOINT);
}

static void registry_full(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid a;
	char name[16];
	int reused, rc = 0, n = 0;

	shmr_ctl_model_open(&f->m, 1, 1, 0, &a, &reused);
	while (rc == 0) {
		snprintf(name, sizeof(name), "n%d", n++);
		rc = shmr_ctl_model_register(&f->m, 1, name, a);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(f->m.nnames + f->m.nrouters, SHMR_NAMES_DEFAULT);
	publish(f);
	assert_int_equal(f->spec->nreg, SHMR_NAMES_DEFAULT);
}

/* max_names sizes the registry: 300 entries, routers' names included,
 * and every one of them published. */
static void registry_sized_by_max_names(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid a;
	char name[16];
	int reused, rc = 0, n = 0;

	f->cfg->max_names = 300;
	shmr_ctl_model_open(&f->m, 1, 1, 0, &a, &reused);
	while (rc == 0) {
		snprintf(name, sizeof(name), "n%d", n++);
		rc = shmr_ctl_model_register(&f->m, 1, name, a);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(f->m.nnames + f->m.nrouters, 300);
	publish(f);
	assert_int_equal(f->spec->nreg, 300);
	assert_non_null(reg_find_in(f, "n0"));
	snprintf(name, sizeof(name), "n%u", 299 - f->m.nrouters);
	assert_non_null(reg_find_in(f, name));
}

static void endpoints_exhausted(void **state)
{
	struct fixture *f = *state;
	struct shmr_pid p;
	int reused, n = 0;

	while (shmr_ctl_model_open(&f->m, 1, 1, 0, &p, &reused) == 0)
		n++;
	assert_int_equal(n, shmr_config_endpoints(f->cfg) - 8);
	assert_int_equal(shmr_ctl_model_open(&f->m, 1, 1, 0, &p, &reused),
			 -SHMR_E_NO_ENDPOINT);
}

static void bad_configs(void **state)
{
	struct shmr_config *c = make_config();
	struct shmr_ctl_model *m = calloc(1, sizeof(*m));

	strcpy(c->routers[1].name, "events");
	assert_int_equal(shmr_ctl_model_init(m, c), -SHMR_E_NAME);
	shmr_config_free(c);
	free(c);

	c = make_config();
	strcpy(c->routers[0].routes[2].name, "payments");
	assert_int_equal(shmr_ctl_model_init(m, c), -SHMR_E_NAME);
	shmr_config_free(c);
	free(c);

	/* 8 routers of 32 routes: more than the 128 endpoints configured. */
	c = calloc(1, sizeof(*c));
	assert_non_null(c);
	assert_int_equal(shmr_config_routers_alloc(c, SHMR_ROUTERS_DEFAULT), 0);
	c->max_endpoints = 128;
	for (unsigned i = 0; i < SHMR_ROUTERS_DEFAULT; i++) {
		struct shmr_conf_router *r = &c->routers[c->nrouters++];

		snprintf(r->name, sizeof(r->name), "r%u", i);
		r->behaviour = SHMR_BEH_HASH;
		for (unsigned k = 0; k < SHMR_ROUTES_DEFAULT; k++) {
			char nm[16];

			snprintf(nm, sizeof(nm), "q%u", k);
			add_route(r, nm, "");
		}
	}
	assert_int_equal(shmr_ctl_model_init(m, c), -SHMR_E_NO_ENDPOINT);
	/* With the endpoints, max_routes holds each router: 32 by default,
	 * then 31 (one router past it), then 32 again. */
	c->max_endpoints = 0;
	assert_int_equal(shmr_ctl_model_init(m, c), 0);
	c->max_routes = SHMR_ROUTES_DEFAULT - 1;
	assert_int_equal(shmr_ctl_model_init(m, c), -SHMR_E_NO_ENDPOINT);
	c->max_routes = SHMR_ROUTES_DEFAULT;
	assert_int_equal(shmr_ctl_model_init(m, c), 0);
	/* max_routers holds the routers: 8 of 7 are refused. */
	c->max_routers = SHMR_ROUTERS_DEFAULT - 1;
	assert_int_equal(shmr_ctl_model_init(m, c), -SHMR_E_NO_ENDPOINT);
	c->max_routers = 0; /* the default, 8 */
	assert_int_equal(shmr_ctl_model_init(m, c), 0);
	assert_int_equal(m->nrouters, SHMR_ROUTERS_DEFAULT);
	shmr_config_free(c);
	free(c);
	shmr_ctl_model_fini(m);
	free(m);
}

static void router_lookup(void **state)
{
	struct fixture *f = *state;

	assert_ptr_equal(shmr_ctl_model_router(&f->m, "shards"),
			 &f->m.routers[1]);
	assert_null(shmr_ctl_model_router(&f->m, "nope"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(spec_from_config, setup,
						teardown),
		cmocka_unit_test_setup_teardown(route_up_and_down, setup,
						teardown),
		cmocka_unit_test_setup_teardown(clients_and_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(freed_client_slot_deferred,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			given_up_slot_waits_for_its_count, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_by_spawned_worker_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(registry_full, setup,
						teardown),
		cmocka_unit_test_setup_teardown(registry_sized_by_max_names,
						setup, teardown),
		cmocka_unit_test_setup_teardown(endpoints_exhausted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(router_lookup, setup,
						teardown),
		cmocka_unit_test(bad_configs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
