/*
 * The route lifecycle's state machine (control/lifecycle.c) against fake
 * process operations: spawns return made-up pids or a forced error, stops
 * are recorded, exits are reported by the test.  One test per rule of the
 * reference's "Worker Lifecycle", "Pending Operations" and "Management
 * Methods", named after it.
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

#include "lifecycle.h"
#include "pool.h"

struct fake {
	int next_pid;
	int fail_spawn;   /* -errno the next spawns return; 0: succeed */
	unsigned spawns;  /* successful */
	unsigned stops;
	unsigned drains;
	unsigned kills;
	unsigned forgets;
	unsigned addeds;
	unsigned reinits;
	char last_program[SHMR_CONF_PATH_MAX]; /* of the last spawn */
};

struct fixture {
	struct shmr_config cfg;
	struct shmr_ctl_model m;
	struct shmr_ctl_life l;
	struct fake f;
	/* room for the configuration's routers (the default) */
	struct shmr_spec *spec;
	uint32_t active[SHMR_MAX_ENDPOINTS];
	struct shmr_spec_reg names[SHMR_MAX_NAMES];
	struct shmr_spec_type types[SHMR_ROUTERS_DEFAULT * 2 * SHMR_MAX_TYPES];
	/* and their routes and names: room for max_routes at its most */
	alignas(8) unsigned char routes[SHMR_ROUTERS_DEFAULT *
					SHMR_MAX_ROUTES *
					(sizeof(struct shmr_spec_route) +
					 SHMR_NAME_MAX)];
};

/* The spec as the control plane would publish it now. */
static void spec_build(struct fixture *x)
{
	shmr_ctl_model_spec_build(&x->m, &(const struct shmr_ctl_spec_bufs){
						  .spec = x->spec,
						  .active = x->active,
						  .names = x->names,
						  .types = x->types,
						  .routes = x->routes });
}

/* Router 0's routes in the spec built last (max_routes a router). */
static struct shmr_spec_route *spec_routes(struct fixture *x)
{
	return shmr_spec_routes_at(x->routes,
				   shmr_ctl_model_routes_room(&x->m), 0);
}

static int fk_spawn(void *ctx, unsigned r, unsigned k)
{
	struct fixture *x = ctx;

	if (x->f.fail_spawn)
		return x->f.fail_spawn;
	x->f.spawns++;
	snprintf(x->f.last_program, sizeof(x->f.last_program), "%s",
		 x->m.routers[r].routes[k].conf->program);
	return x->f.next_pid++;
}

static void fk_stop(void *ctx, unsigned r, unsigned k)
{
	struct fixture *x = ctx;

	(void)r;
	(void)k;
	x->f.stops++;
}

static void fk_drain(void *ctx, unsigned r, unsigned k)
{
	struct fixture *x = ctx;

	(void)r;
	(void)k;
	x->f.drains++;
}

static void fk_kill(void *ctx, unsigned r, unsigned k)
{
	struct fixture *x = ctx;

	(void)r;
	(void)k;
	x->f.kills++;
}

static int fk_added(void *ctx, unsigned r, unsigned k)
{
	struct fixture *x = ctx;

	(void)r;
	(void)k;
	x->f.addeds++;
	return 0;
}

static void fk_forget(void *ctx, unsigned r, unsigned k)
{
	struct fixture *x = ctx;

	(void)r;
	(void)k;
	x->f.forgets++;
}

static void fk_reinit(void *ctx, uint32_t slot)
{
	struct fixture *x = ctx;

	(void)slot;
	x->f.reinits++;
}

static uint64_t fk_seen(void *ctx)
{
	return ((struct fixture *)ctx)->m.version;
}

static const struct shmr_ctl_life_ops fake_ops = {
	.spawn = fk_spawn,
	.stop = fk_stop,
	.drain = fk_drain,
	.kill = fk_kill,
	.added = fk_added,
	.forget = fk_forget,
	.reinit = fk_reinit,
	.seen_version = fk_seen,
};

static void conf_route(struct shmr_conf_router *r, const char *name)
{
	struct shmr_conf_route *q = &r->routes[r->nroutes++];

	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(q->program, sizeof(q->program), "worker-%s", name);
}

/* Router "events" with routes a, b, c, each running (as after init). */
static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	struct shmr_conf_router *r;

	assert_non_null(x);
	assert_int_equal(shmr_config_routers_alloc(&x->cfg, 3), 0);
	x->spec = calloc(1, shmr_spec_size(SHMR_ROUTERS_DEFAULT));
	assert_non_null(x->spec);
	strcpy(x->cfg.domain, "unit");
	r = &x->cfg.routers[x->cfg.nrouters++];
	strcpy(r->name, "events");
	r->behaviour = SHMR_BEH_TYPE;
	conf_route(r, "a");
	conf_route(r, "b");
	conf_route(r, "c");
	/* Router "pool": a round-robin pool of two (as the parser expands
	 * it); router "group": round-robin over two registry names. */
	r = &x->cfg.routers[x->cfg.nrouters++];
	strcpy(r->name, "pool");
	r->behaviour = SHMR_BEH_ROUND_ROBIN;
	r->pool.size = 2;
	strcpy(r->pool.tmpl.program, "pool-worker");
	conf_route(r, "pool:0");
	conf_route(r, "pool:1");
	r = &x->cfg.routers[x->cfg.nrouters++];
	strcpy(r->name, "group");
	r->behaviour = SHMR_BEH_ROUND_ROBIN;
	strcpy(r->hash[r->nhash++], "x");
	strcpy(r->hash[r->nhash++], "y");
	assert_int_equal(shmr_ctl_model_init(&x->m, &x->cfg), 0);
	x->l = (struct shmr_ctl_life){ &x->m, &fake_ops, x };
	x->f.next_pid = 100;
	for (unsigned k = 0; k < 3; k++)
		shmr_ctl_model_route_set(&x->m, &x->m.routers[0].routes[k],
					 x->f.next_pid++);
	for (unsigned k = 0; k < 2; k++)
		shmr_ctl_model_route_set(&x->m, &x->m.routers[1].routes[k],
					 x->f.next_pid++);
	x->m.version = 1;
	x->m.dirty = 0;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;

	shmr_ctl_model_fini(&x->m);
	shmr_config_free(&x->cfg);
	free(x->spec);
	free(x);
	return 0;
}

static struct shmr_ctl_route *route(struct fixture *x, const char *name)
{
	int k = shmr_ctl_model_route_index(&x->m.routers[0], name);

	return k < 0 ? NULL : &x->m.routers[0].routes[k];
}

/* The worker of @p name was seen to exit (as spawn.c reports it). */
static int worker_exits(struct fixture *x, const char *name)
{
	int k = shmr_ctl_model_route_index(&x->m.routers[0], name);

	assert_true(k >= 0);
	shmr_ctl_model_route_set(&x->m, &x->m.routers[0].routes[k], 0);
	return shmr_ctl_life_exited(&x->l, 0, (unsigned)k);
}

static struct shmr_conf_route spec_of(const char *name, const char *program,
				      const char *arg)
{
	struct shmr_conf_route s;

	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "%s", name);
	snprintf(s.program, sizeof(s.program), "%s", program);
	if (arg) {
		snprintf(s.args[0], sizeof(s.args[0]), "%s", arg);
		s.nargs = 1;
	}
	return s;
}

/* The state the dataplane is given for @p name (-1: not in the spec). */
static int spec_state(struct fixture *x, const char *name)
{
	spec_build(x);
	for (unsigned k = 0; k < x->spec->routers[0].nroutes; k++)
		if (strcmp(spec_routes(x)[k].name, name) == 0)
			return (int)spec_routes(x)[k].state;
	return -1;
}

/* ---- add ------------------------------------------------------------ */

static void test_add_appends_a_running_route(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("d", "worker-d", "--x");

	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &s), 0);
	assert_non_null(route(x, "d"));
	assert_int_equal(route(x, "d")->state, SHMR_ROUTE_RUNNING);
	assert_true(route(x, "d")->os_pid > 0);
	assert_int_equal(route(x, "d")->restarts, 0);
	assert_string_equal(x->f.last_program, "worker-d");
	assert_int_equal(x->m.routers[0].nroutes, 4);
	assert_true(x->m.dirty);
	assert_int_equal(spec_state(x, "d"), SHMR_ROUTE_RUNNING);
}

/* ADD holds a router to max_routes: "events" (3 routes) takes two more
 * under max_routes 5, not a third; nothing is started for it. */
static void test_add_past_max_routes_is_no_endpoint(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route d = spec_of("d", "worker-d", NULL);
	struct shmr_conf_route e = spec_of("e", "worker-e", NULL);
	struct shmr_conf_route f = spec_of("f", "worker-f", NULL);

	x->cfg.max_routes = 5;
	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &d), 0);
	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &e), 0);
	assert_int_equal(x->f.spawns, 2);
	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &f),
			 -SHMR_E_NO_ENDPOINT);
	assert_int_equal(x->m.routers[0].nroutes, 5);
	assert_int_equal(x->f.spawns, 2);
	assert_null(route(x, "f"));
}

static void test_add_duplicate_name_is_route_duplicate(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("b", "other", NULL);

	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &s),
			 -SHMR_E_ROUTE_DUPLICATE);
	assert_int_equal(x->m.routers[0].nroutes, 3);
	assert_int_equal(x->f.spawns, 0);
}

static void test_add_whose_worker_fails_to_start_is_not_added(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("d", "/no/such", NULL);
	uint32_t used = x->m.alloc.nused;

	x->f.fail_spawn = -ENOENT;
	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &s), -ENOENT);
	assert_null(route(x, "d"));
	assert_int_equal(x->m.routers[0].nroutes, 3);
	assert_int_equal(x->m.alloc.nused, used); /* inbox given back */
	assert_int_equal(x->f.forgets, 1);
	assert_int_equal(spec_state(x, "d"), -1);
}

static void test_add_to_unknown_router_is_no_route(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("d", "w", NULL);

	assert_int_equal(shmr_ctl_life_add(&x->l, "nope", &s),
			 -SHMR_E_NO_ROUTE);
}

static void test_add_with_bad_name_or_empty_program_is_name(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("bad name", "w", NULL);

	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &s),
			 -SHMR_E_NAME);
	s = spec_of("d", "", NULL);
	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &s),
			 -SHMR_E_NAME);
}

/* ---- remove --------------------------------------------------------- */

static void test_remove_of_unknown_name_is_success(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "zz"), 0);
	assert_int_equal(x->m.routers[0].nroutes, 3);
}

static void test_remove_of_live_worker_is_pending_until_exit(void **state)
{
	struct fixture *x = *state;
	int32_t old = route(x, "b")->os_pid;
	struct shmr_pid inbox = route(x, "b")->pid;

	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "b"), 0);
	assert_int_equal(x->f.stops, 1);
	assert_int_equal(route(x, "b")->state, SHMR_ROUTE_PENDING_REMOVE);
	assert_int_equal(route(x, "b")->os_pid, old); /* the old pid shows */
	assert_int_equal(spec_state(x, "b"), SHMR_ROUTE_PENDING_REMOVE);
	assert_int_equal(worker_exits(x, "b"), 0); /* no restart */
	assert_null(route(x, "b"));
	assert_int_equal(x->m.routers[0].nroutes, 2);
	assert_string_equal(x->m.routers[0].routes[1].conf->name, "c");
	assert_ptr_equal(x->m.routers[0].routes[1].conf,
			 &x->m.routers[0].routes[1].spec);
	assert_int_equal(spec_state(x, "b"), -1);
	assert_int_equal(x->f.spawns, 0);
	/* The inbox is freed for deferred reuse: not before every lcore
	 * has applied the spec that drops it. */
	assert_int_equal(x->m.alloc.slots[inbox.slot].state,
			 SHMR_CTL_SLOT_DEFERRED);
	assert_int_equal(x->m.alloc.slots[inbox.slot].freed_version,
			 x->m.version + 1);
}

static void test_remove_of_dead_route_completes_at_once(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a"); /* wants a restart; the test does not do it */
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "a"), 0);
	assert_int_equal(x->f.stops, 0);
	assert_null(route(x, "a"));
}

static void test_remove_of_disabled_route_completes_at_once(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "a"), 0);
	assert_null(route(x, "a"));
}

/* ---- unknown and pending --------------------------------------------- */

static void test_mutators_on_unknown_route_are_no_route(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("zz", "w", NULL);

	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "zz"),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "zz"),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "zz", &s),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "zz"),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(shmr_ctl_life_disable(&x->l, "nope", "a"),
			 -SHMR_E_NO_ROUTE);
}

static void test_mutators_on_pending_route_are_busy(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("a", "w2", NULL);
	const uint32_t pendings[] = { SHMR_ROUTE_PENDING_DISABLE,
				      SHMR_ROUTE_PENDING_REPLACE,
				      SHMR_ROUTE_PENDING_REMOVE };

	for (unsigned i = 0; i < 3; i++) {
		route(x, "a")->state = pendings[i];
		assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "a"),
				 -SHMR_E_BUSY);
		assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"),
				 -SHMR_E_BUSY);
		assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"),
				 -SHMR_E_BUSY);
		assert_int_equal(
			shmr_ctl_life_replace(&x->l, "events", "a", &s),
			-SHMR_E_BUSY);
		assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "a"),
				 -SHMR_E_BUSY);
		assert_int_equal(route(x, "a")->state, pendings[i]);
	}
	assert_string_equal(route(x, "a")->conf->program, "worker-a");
	assert_int_equal(x->f.stops + x->f.spawns, 0);
}

/* ---- respawn ---------------------------------------------------------- */

static void test_respawn_of_live_worker_is_route_running(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "a"),
			 -SHMR_E_ROUTE_RUNNING);
	assert_int_equal(x->f.spawns, 0);
}

static void test_respawn_of_disabled_route_is_disabled(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "a"),
			 -SHMR_E_DISABLED);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DISABLED);
}

static void test_respawn_wakes_a_dead_route(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	x->f.fail_spawn = -EAGAIN; /* the transient failure ... */
	assert_int_equal(shmr_ctl_life_restart(&x->l, 0, 0), -EAGAIN);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DEAD);
	x->f.fail_spawn = 0; /* ... is fixed */
	assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
	assert_int_equal(route(x, "a")->restarts, 0);
}

/* ---- disable / enable ------------------------------------------------ */

static void test_disable_of_live_worker_is_pending_until_exit(void **state)
{
	struct fixture *x = *state;
	int32_t old = route(x, "a")->os_pid;

	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(x->f.stops, 1);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_PENDING_DISABLE);
	assert_int_equal(route(x, "a")->os_pid, old);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_PENDING_DISABLE);
	assert_int_equal(worker_exits(x, "a"), 0); /* no restart */
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DISABLED);
	assert_int_equal(route(x, "a")->os_pid, 0);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_DISABLED);
	assert_int_equal(x->f.spawns, 0);
}

static void test_disable_of_dead_route_completes_at_once(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(x->f.stops, 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DISABLED);
	/* A retry that was scheduled finds it disabled and does nothing. */
	assert_int_equal(shmr_ctl_life_restart(&x->l, 0, 0), 0);
	assert_int_equal(x->f.spawns, 0);
}

static void test_disable_and_enable_are_idempotent(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DISABLED);
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
	assert_int_equal(x->f.spawns, 1);
	assert_int_equal(route(x, "a")->restarts, 0);
}

static void test_enable_does_not_spawn_an_enabled_dead_route(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DEAD);
	assert_int_equal(x->f.spawns, 0);
}

/* As Ergo's code: enabled, but dead; a restart (the next message) starts
 * it. */
static void test_enable_whose_start_fails_stays_enabled_dead(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	x->f.fail_spawn = -ENOENT;
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"), -ENOENT);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DEAD);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_DEAD);
	x->f.fail_spawn = 0;
	assert_true(shmr_ctl_life_restart(&x->l, 0, 0) > 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
}

/* ---- replace --------------------------------------------------------- */

static void test_replace_of_live_worker_is_pending_until_exit(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("ignored", "worker-v2", "--v2");
	int32_t old = route(x, "a")->os_pid;
	struct shmr_pid inbox = route(x, "a")->pid;

	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &s), 0);
	assert_int_equal(x->f.stops, 1);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_PENDING_REPLACE);
	assert_int_equal(route(x, "a")->os_pid, old);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_PENDING_REPLACE);
	assert_int_equal(x->f.spawns, 0);
	assert_int_equal(worker_exits(x, "a"), 0);
	assert_int_equal(x->f.spawns, 1);
	assert_string_equal(x->f.last_program, "worker-v2");
	assert_string_equal(route(x, "a")->conf->args[0], "--v2");
	assert_string_equal(route(x, "a")->conf->name, "a"); /* stable */
	assert_int_equal(route(x, "a")->pid.slot, inbox.slot);
	assert_int_equal(route(x, "a")->pid.gen, inbox.gen);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
	assert_int_not_equal(route(x, "a")->os_pid, old);
	assert_int_equal(route(x, "a")->restarts, 0);
}

/* The old worker is gone and the new one cannot start: the replace waits
 * with no worker (messages get SHMR_E_BUSY), a retry completes it without
 * counting a restart, and remove or disable still act on it. */
static void test_replace_whose_new_worker_fails_waits_busy(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("a", "worker-v2", NULL);

	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &s), 0);
	x->f.fail_spawn = -ENOENT;
	assert_int_equal(worker_exits(x, "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_REPLACE_WAIT);
	assert_int_equal(route(x, "a")->os_pid, 0);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_REPLACE_WAIT);
	/* A retry that fails again keeps it waiting. */
	assert_int_equal(shmr_ctl_life_restart(&x->l, 0, 0), -ENOENT);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_REPLACE_WAIT);
	x->f.fail_spawn = 0;
	assert_true(shmr_ctl_life_restart(&x->l, 0, 0) > 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
	assert_string_equal(x->f.last_program, "worker-v2");
	assert_int_equal(route(x, "a")->restarts, 0);

	/* Nothing left to wait for: remove completes at once. */
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "b", &s), 0);
	x->f.fail_spawn = -ENOENT;
	worker_exits(x, "b");
	assert_int_equal(route(x, "b")->state, SHMR_ROUTE_REPLACE_WAIT);
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "b"), 0);
	assert_null(route(x, "b"));
}

static void test_replace_of_dead_route_starts_the_new_spec(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("a", "worker-v2", NULL);

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &s), 0);
	assert_int_equal(x->f.stops, 0);
	assert_string_equal(x->f.last_program, "worker-v2");
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
}

/* As Ergo's ReplaceRoute: the new spec stays, the route dead until a
 * start (of the new program) succeeds. */
static void test_replace_whose_start_fails_keeps_the_new_spec(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("a", "/no/such", NULL);

	worker_exits(x, "a");
	x->f.fail_spawn = -ENOENT;
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &s),
			 -ENOENT);
	assert_string_equal(route(x, "a")->conf->program, "/no/such");
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DEAD);
	x->f.fail_spawn = 0;
	assert_true(shmr_ctl_life_restart(&x->l, 0, 0) > 0);
	assert_string_equal(x->f.last_program, "/no/such");
}

static void test_replace_on_disabled_route_swaps_spec_only(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("a", "worker-v2", NULL);

	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &s), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DISABLED);
	assert_int_equal(x->f.spawns, 0);
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"), 0);
	assert_string_equal(x->f.last_program, "worker-v2");
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
}

/* ---- restarts -------------------------------------------------------- */

static void test_exit_with_nothing_pending_restarts_eagerly(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(worker_exits(x, "a"), 1);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DEAD);
	assert_true(shmr_ctl_life_restart(&x->l, 0, 0) > 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_RUNNING);
	assert_int_equal(route(x, "a")->restarts, 1);
}

static void test_failed_restart_leaves_the_slot_empty(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	x->f.fail_spawn = -ENOENT;
	assert_int_equal(shmr_ctl_life_restart(&x->l, 0, 0), -ENOENT);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DEAD);
	assert_int_equal(route(x, "a")->os_pid, 0);
	assert_int_equal(route(x, "a")->restarts, 0);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_DEAD);
}

/* The error of a failed start is the dead route's start_err in the spec
 * (the dataplane fails what is routed there with it at once); a start
 * that succeeds clears it, and a route that is not dead publishes none. */
static int spec_start_err(struct fixture *x, const char *name)
{
	spec_build(x);
	for (unsigned k = 0; k < x->spec->routers[0].nroutes; k++)
		if (strcmp(spec_routes(x)[k].name, name) == 0)
			return spec_routes(x)[k].start_err;
	return 1;
}

static void test_failed_start_is_published_until_one_succeeds(void **state)
{
	struct fixture *x = *state;

	worker_exits(x, "a");
	assert_int_equal(spec_start_err(x, "a"), 0);
	x->f.fail_spawn = -EACCES;
	x->m.dirty = 0;
	assert_int_equal(shmr_ctl_life_restart(&x->l, 0, 0), -EACCES);
	assert_true(x->m.dirty);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_DEAD);
	assert_int_equal(spec_start_err(x, "a"), -EACCES);
	/* Disabled: the spec says disabled, no start error. */
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"), 0);
	assert_int_equal(spec_start_err(x, "a"), 0);
	x->f.fail_spawn = 0;
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"), 0);
	assert_int_equal(route(x, "a")->start_err, 0);
	assert_int_equal(spec_start_err(x, "a"), 0);
	/* Dead again after a failed start, then a start that succeeds. */
	worker_exits(x, "a");
	x->f.fail_spawn = -ENOENT;
	assert_int_equal(shmr_ctl_life_restart(&x->l, 0, 0), -ENOENT);
	assert_int_equal(spec_start_err(x, "a"), -ENOENT);
	x->f.fail_spawn = 0;
	assert_true(shmr_ctl_life_restart(&x->l, 0, 0) > 0);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_RUNNING);
	assert_int_equal(spec_start_err(x, "a"), 0);
	/* It dies again: dead, but no start has failed yet (it queues). */
	worker_exits(x, "a");
	assert_int_equal(spec_start_err(x, "a"), 0);
}

/* A stopped router: its live workers are asked to stop, an exit is not
 * restarted, every mutator is NOT_ALLOWED, reads (the model) still work. */
static void test_stopped_router_refuses_mutators(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route s = spec_of("d", "worker-d", NULL);
	unsigned live = 0;

	for (unsigned k = 0; k < x->m.routers[0].nroutes; k++)
		live += x->m.routers[0].routes[k].os_pid != 0;
	shmr_ctl_life_stop_router(&x->l, 0);
	assert_int_equal(x->f.stops, live);
	assert_true(x->m.routers[0].stopped);
	assert_true(x->m.dirty);
	spec_build(x);
	assert_true(x->spec->routers[0].flags & SHMR_RF_STOPPED);
	shmr_ctl_life_stop_router(&x->l, 0); /* idempotent */
	assert_int_equal(x->f.stops, live);

	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &s),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "a"),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "nosuch"),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "a"),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "a"),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &s),
			 -SHMR_E_NOT_ALLOWED);
	assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "a"),
			 -SHMR_E_NOT_ALLOWED);
	/* Before any argument check: a bad spec, an unknown route. */
	{
		struct shmr_conf_route bad = spec_of("", "", NULL);

		assert_int_equal(shmr_ctl_life_add(&x->l, "events", &bad),
				 -SHMR_E_NOT_ALLOWED);
		assert_int_equal(
			shmr_ctl_life_replace(&x->l, "events", "a", &bad),
			-SHMR_E_NOT_ALLOWED);
		assert_int_equal(
			shmr_ctl_life_replace(&x->l, "events", "nosuch", &bad),
			-SHMR_E_NOT_ALLOWED);
		assert_int_equal(shmr_ctl_life_enable(&x->l, "events", NULL),
				 -SHMR_E_NOT_ALLOWED);
	}
	/* The unknown router is still NO_ROUTE. */
	assert_int_equal(shmr_ctl_life_disable(&x->l, "nosuch", "a"),
			 -SHMR_E_NO_ROUTE);
	assert_int_equal(x->f.spawns, 0);
	assert_non_null(route(x, "a"));
}

/* DRAIN: a live worker is not asked to stop but watched (the daemon
 * stops it once its inbox is empty); the route refuses new messages
 * meanwhile (PENDING_DISABLE, so mutators are BUSY) and the exit
 * completes the disable.  A dead route is disabled at once. */
static void test_drain_waits_for_the_inbox_then_disables(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(shmr_ctl_life_drain(&x->l, "events", "a"), 0);
	assert_int_equal(x->f.drains, 1);
	assert_int_equal(x->f.stops, 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_PENDING_DISABLE);
	assert_int_equal(spec_state(x, "a"), SHMR_ROUTE_PENDING_DISABLE);
	assert_int_equal(shmr_ctl_life_drain(&x->l, "events", "a"),
			 -SHMR_E_BUSY);
	assert_int_equal(worker_exits(x, "a"), 0);
	assert_int_equal(route(x, "a")->state, SHMR_ROUTE_DISABLED);
	assert_int_equal(shmr_ctl_life_drain(&x->l, "events", "a"), 0);
	assert_int_equal(x->f.drains, 1);

	worker_exits(x, "b");
	assert_int_equal(shmr_ctl_life_drain(&x->l, "events", "b"), 0);
	assert_int_equal(route(x, "b")->state, SHMR_ROUTE_DISABLED);
	assert_int_equal(x->f.drains, 1);
	assert_int_equal(shmr_ctl_life_drain(&x->l, "events", "nosuch"),
			 -SHMR_E_NO_ROUTE);
}

/* ---- pools and routee lists ------------------------------------------ */

static struct shmr_ctl_route *pool_route(struct fixture *x, const char *n)
{
	int k = shmr_ctl_model_route_index(&x->m.routers[1], n);

	return k < 0 ? NULL : &x->m.routers[1].routes[k];
}

static const char *routees(struct fixture *x, unsigned ri)
{
	static char buf[1024];

	assert_true(shmr_ctl_routees_format(&x->m.routers[ri], buf,
					    sizeof(buf)) >= 0);
	return buf;
}

/* AdjustPoolSize: growth appends "<router>:<lowest free index>" from the
 * pool's program; shrinking drains and removes the newest; the size stays
 * at least 1 without a resizer; GetRoutees is in creation order. */
static void test_pool_adjust_grows_and_shrinks_newest_first(void **state)
{
	struct fixture *x = *state;

	assert_string_equal(routees(x, 1), "pool:0\npool:1\n");
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, +2), 4);
	assert_string_equal(x->f.last_program, "pool-worker");
	assert_string_equal(routees(x, 1),
			    "pool:0\npool:1\npool:2\npool:3\n");
	assert_int_equal(pool_route(x, "pool:3")->state, SHMR_ROUTE_RUNNING);

	/* Shrink: the newest drain first (not stopped yet), and leave the
	 * routees at once. */
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, -1), 3);
	assert_int_equal(x->f.drains, 1);
	assert_int_equal(x->f.stops, 0);
	assert_int_equal(pool_route(x, "pool:3")->state,
			 SHMR_ROUTE_PENDING_REMOVE);
	assert_string_equal(routees(x, 1), "pool:0\npool:1\npool:2\n");
	x->m.routers[1].routes[3].os_pid = 0;
	assert_int_equal(shmr_ctl_life_exited(&x->l, 1, 3), 0);
	assert_null(pool_route(x, "pool:3"));

	/* Clamped at 1 without a resizer. */
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, -10), 1);
	assert_string_equal(routees(x, 1), "pool:0\n");
	/* The lowest free index is reused once its route is gone. */
	for (unsigned k = 1; k < x->m.routers[1].nroutes;)
		if (x->m.routers[1].routes[k].state ==
		    SHMR_ROUTE_PENDING_REMOVE) {
			x->m.routers[1].routes[k].os_pid = 0;
			shmr_ctl_life_exited(&x->l, 1, k);
		} else {
			k++;
		}
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, +1), 2);
	assert_string_equal(routees(x, 1), "pool:0\npool:1\n");
	/* Not a pool. */
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 0, +1),
			 -SHMR_E_NOT_ALLOWED);
}

/* With a resizer the bounds are its own (lower may be 0, and the pool
 * does not stop when empty); without one, the pool stops with its last
 * routee. */
static void test_pool_bounds_and_stop_with_last_routee(void **state)
{
	struct fixture *x = *state;

	x->cfg.routers[1].resizer.kind = SHMR_RESIZER_DEFAULT;
	x->cfg.routers[1].resizer.lower_bound = 0;
	x->cfg.routers[1].resizer.upper_bound = 3;
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, +5), 3);
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, -5), 0);
	for (unsigned k = 0; k < x->m.routers[1].nroutes;) {
		x->m.routers[1].routes[k].os_pid = 0;
		shmr_ctl_life_exited(&x->l, 1, k);
	}
	assert_int_equal(x->m.routers[1].nroutes, 0);
	assert_false(x->m.routers[1].stopped);

	x->cfg.routers[1].resizer.kind = SHMR_RESIZER_NONE;
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, +1), 1);
	assert_int_equal(shmr_ctl_routee_remove(&x->l, 1, "pool:0"), 0);
	assert_false(x->m.routers[1].stopped); /* still draining */
	x->m.routers[1].routes[0].os_pid = 0;
	shmr_ctl_life_exited(&x->l, 1, 0);
	assert_true(x->m.routers[1].stopped);
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, +1),
			 -SHMR_E_NOT_ALLOWED);
}

/* A group's list: AddRoutee appends (idempotent), RemoveRoutee drops
 * (unknown: success); on a router routing to its own routes, the first
 * AddRoutee starts the list from them. */
static void test_routee_lists(void **state)
{
	struct fixture *x = *state;

	assert_string_equal(routees(x, 2), "x\ny\n");
	assert_int_equal(shmr_ctl_routee_add(&x->l, 2, "z"), 0);
	assert_int_equal(shmr_ctl_routee_add(&x->l, 2, "x"), 0);
	assert_string_equal(routees(x, 2), "x\ny\nz\n");
	assert_int_equal(shmr_ctl_routee_remove(&x->l, 2, "x"), 0);
	assert_int_equal(shmr_ctl_routee_remove(&x->l, 2, "nosuch"), 0);
	assert_string_equal(routees(x, 2), "y\nz\n");
	assert_int_equal(shmr_ctl_routee_add(&x->l, 2, "bad name"),
			 -SHMR_E_NAME);
	assert_true(x->m.dirty);

	assert_int_equal(shmr_ctl_routee_add(&x->l, 1, "outside"), 0);
	assert_string_equal(routees(x, 1), "pool:0\npool:1\noutside\n");
	/* Growing a listed pool lists the new routee too. */
	assert_int_equal(shmr_ctl_pool_adjust(&x->l, 1, +1), 3);
	assert_string_equal(routees(x, 1),
			    "pool:0\npool:1\noutside\npool:2\n");
	/* A type router has no routee list. */
	assert_int_equal(shmr_ctl_routee_add(&x->l, 0, "z"),
			 -SHMR_E_NOT_ALLOWED);
}

/* Kill: every live worker is killed (restarted as after a crash); with
 * on_kill = "stop" the router stops instead. */
static void test_kill_router(void **state)
{
	struct fixture *x = *state;

	shmr_ctl_life_kill_router(&x->l, 1);
	assert_int_equal(x->f.kills, 2);
	assert_false(x->m.routers[1].stopped);
	x->cfg.routers[1].on_kill_stop = 1;
	shmr_ctl_life_kill_router(&x->l, 1);
	assert_int_equal(x->f.kills, 4);
	assert_true(x->m.routers[1].stopped);
	shmr_ctl_life_kill_router(&x->l, 1);
	assert_int_equal(x->f.kills, 4);
}

/* A pool routee's worker died (as spawn.c reports it: DEAD, no worker). */
static void pool_routee_dies(struct fixture *x, unsigned k)
{
	shmr_ctl_model_route_set(&x->m, &x->m.routers[1].routes[k], 0);
	assert_int_equal(shmr_ctl_life_exited(&x->l, 1, k), 1);
}

/* Supervision "stop": the dead routee is no routee at once, its inbox
 * slot freed but kept from reuse until its queue is dead-lettered
 * (SHMR_CTL_DRAIN_INBOX); with a resizer, lower_bound is made good at once
 * by a new routee on another slot; without one, the pool stops with its
 * last routee. */
static void test_pool_routee_stopped_by_its_supervisor(void **state)
{
	struct fixture *x = *state;
	struct shmr_ctl_slot *s;
	uint32_t slot = 0, old = x->m.routers[1].routes[0].pid.slot;

	x->cfg.routers[1].resizer.kind = SHMR_RESIZER_DEFAULT;
	x->cfg.routers[1].resizer.lower_bound = 2;
	x->cfg.routers[1].resizer.upper_bound = 4;
	pool_routee_dies(x, 0);
	assert_int_equal(shmr_ctl_pool_routee_stopped(&x->l, 1, 0, &slot), 0);
	assert_int_equal(slot, old);
	s = &x->m.alloc.slots[old];
	assert_int_equal(s->state, SHMR_CTL_SLOT_DEFERRED);
	assert_int_equal(s->drain, SHMR_CTL_DRAIN_INBOX);
	assert_string_equal(routees(x, 1), "pool:1\npool:0\n");
	assert_int_not_equal(x->m.routers[1].routes[1].pid.slot, old);
	assert_int_equal(x->m.routers[1].routes[1].restarts, 0);
	assert_int_equal(x->f.spawns, 1);

	x->cfg.routers[1].resizer.kind = SHMR_RESIZER_NONE;
	pool_routee_dies(x, 0);
	assert_int_equal(shmr_ctl_pool_routee_stopped(&x->l, 1, 0, &slot), 0);
	assert_string_equal(routees(x, 1), "pool:0\n");
	assert_false(x->m.routers[1].stopped);
	pool_routee_dies(x, 0);
	assert_int_equal(shmr_ctl_pool_routee_stopped(&x->l, 1, 0, &slot), 0);
	assert_true(x->m.routers[1].stopped);
	assert_int_equal(x->m.routers[1].nroutes, 0);
}

/* restart_backoff_ms: none for the first quick failure, then doubling
 * from the configured first wait up to the maximum; 0 turns it off. */
static void test_restart_backoff_doubles_up_to_the_maximum(void **state)
{
	static const struct {
		unsigned fails;
		uint64_t first, max, want;
	} rows[] = {
		{ 0, 100, 5000, 0 },   { 1, 100, 5000, 0 },
		{ 2, 100, 5000, 100 }, { 3, 100, 5000, 200 },
		{ 4, 100, 5000, 400 }, { 7, 100, 5000, 3200 },
		{ 8, 100, 5000, 5000 }, { 60, 100, 5000, 5000 },
		{ 9, 0, 5000, 0 },     { 2, 250, 250, 250 },
		{ 3, 250, 250, 250 },  { 1000000, 1, 3600000, 1048576 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(shmr_ctl_backoff_ms(rows[i].fails,
						     rows[i].first,
						     rows[i].max),
				 rows[i].want);
}

static void test_restarts_do_not_count_add_enable_replace_respawn(
	void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route d = spec_of("d", "worker-d", NULL);
	struct shmr_conf_route v2 = spec_of("a", "worker-v2", NULL);

	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &d), 0);
	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_respawn(&x->l, "events", "a"), 0);
	assert_int_equal(shmr_ctl_life_replace(&x->l, "events", "a", &v2), 0);
	worker_exits(x, "a");
	assert_int_equal(shmr_ctl_life_disable(&x->l, "events", "b"), 0);
	worker_exits(x, "b");
	assert_int_equal(shmr_ctl_life_enable(&x->l, "events", "b"), 0);
	for (unsigned k = 0; k < x->m.routers[0].nroutes; k++)
		assert_int_equal(x->m.routers[0].routes[k].restarts, 0);
}

/* ---- the model around it --------------------------------------------- */

static void test_added_route_reuses_a_freed_inbox_when_seen(void **state)
{
	struct fixture *x = *state;
	struct shmr_conf_route d = spec_of("d", "worker-d", NULL);
	struct shmr_pid old = route(x, "c")->pid;

	worker_exits(x, "c");
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "c"), 0);
	x->m.version++; /* published, and (fk_seen) applied everywhere */
	assert_int_equal(shmr_ctl_life_add(&x->l, "events", &d), 0);
	assert_int_equal(route(x, "d")->pid.slot, old.slot);
	assert_int_not_equal(route(x, "d")->pid.gen, old.gen);
	assert_int_equal(x->f.reinits, 1);
	assert_string_equal(x->m.alloc.slots[old.slot].name, "d");
}

static void test_removed_route_name_stops_resolving(void **state)
{
	struct fixture *x = *state;
	uint32_t slot = route(x, "b")->pid.slot;

	worker_exits(x, "b");
	assert_int_equal(shmr_ctl_life_remove(&x->l, "events", "b"), 0);
	spec_build(x);
	assert_int_equal(x->spec->routers[0].nroutes, 2);
	for (unsigned k = 0; k < x->spec->routers[0].nroutes; k++)
		assert_string_not_equal(spec_routes(x)[k].name,
					"b");
	for (unsigned k = 0; k < x->spec->nreg; k++)
		assert_string_not_equal(x->names[k].name, "b");
	for (unsigned k = 0; k < x->spec->nactive; k++)
		assert_int_not_equal(x->active[k], slot);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_add_appends_a_running_route),
		T(test_add_past_max_routes_is_no_endpoint),
		T(test_add_duplicate_name_is_route_duplicate),
		T(test_add_whose_worker_fails_to_start_is_not_added),
		T(test_add_to_unknown_router_is_no_route),
		T(test_add_with_bad_name_or_empty_program_is_name),
		T(test_remove_of_unknown_name_is_success),
		T(test_remove_of_live_worker_is_pending_until_exit),
		T(test_remove_of_dead_route_completes_at_once),
		T(test_remove_of_disabled_route_completes_at_once),
		T(test_mutators_on_unknown_route_are_no_route),
		T(test_mutators_on_pending_route_are_busy),
		T(test_respawn_of_live_worker_is_route_running),
		T(test_respawn_of_disabled_route_is_disabled),
		T(test_respawn_wakes_a_dead_route),
		T(test_disable_of_live_worker_is_pending_until_exit),
		T(test_disable_of_dead_route_completes_at_once),
		T(test_disable_and_enable_are_idempotent),
		T(test_enable_does_not_spawn_an_enabled_dead_route),
		T(test_replace_whose_new_worker_fails_waits_busy),
		cmocka_unit_test(test_restart_backoff_doubles_up_to_the_maximum),
		T(test_stopped_router_refuses_mutators),
		T(test_drain_waits_for_the_inbox_then_disables),
		T(test_pool_adjust_grows_and_shrinks_newest_first),
		T(test_pool_bounds_and_stop_with_last_routee),
		T(test_routee_lists),
		T(test_kill_router),
		T(test_pool_routee_stopped_by_its_supervisor),
		T(test_enable_whose_start_fails_stays_enabled_dead),
		T(test_replace_of_live_worker_is_pending_until_exit),
		T(test_replace_of_dead_route_starts_the_new_spec),
		T(test_replace_whose_start_fails_keeps_the_new_spec),
		T(test_replace_on_disabled_route_swaps_spec_only),
		T(test_exit_with_nothing_pending_restarts_eagerly),
		T(test_failed_restart_leaves_the_slot_empty),
		T(test_failed_start_is_published_until_one_succeeds),
		T(test_restarts_do_not_count_add_enable_replace_respawn),
		T(test_added_route_reuses_a_freed_inbox_when_seen),
		T(test_removed_route_name_stops_resolving),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
