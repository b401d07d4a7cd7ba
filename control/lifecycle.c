/*
 * The route lifecycle: ADD, REMOVE, DISABLE, ENABLE, REPLACE, RESPAWN, and
 * what a worker's exit completes.  Pure logic over the model; starting,
 * stopping and forgetting processes go through the injected ops table (the
 * daemon's are in spawn.c; the unit tests' record and force failures).
 *
 * States (shmr_ctl_route.state, as the dataplane reads them in the spec):
 *
 *   DEAD --spawn--> RUNNING --exit--> DEAD (eager restart, counted)
 *   RUNNING --disable/replace/remove--> PENDING_* (worker asked to stop)
 *   PENDING_DISABLE --exit--> DISABLED
 *   PENDING_REPLACE --exit--> spawn new spec --> RUNNING, or when that
 *                   fails REPLACE_WAIT (no worker; messages get BUSY)
 *   REPLACE_WAIT --retry (restart: lazy, timer; respawn; replace)--> RUNNING
 *                --disable/remove--> as a DEAD route (nothing to wait for)
 *   PENDING_REMOVE  --exit--> gone (inbox freed, deferred reuse)
 *   DEAD --disable--> DISABLED, --remove--> gone, --replace--> spawn new
 *        (a failed start keeps the new spec: DEAD until a start succeeds)
 *   DISABLED --enable--> DEAD, then spawn (a failed start stays DEAD),
 *            --replace--> spec swapped only, --remove--> gone
 *
 * Every change marks the model dirty; the daemon publishes it as a new spec
 * version after the request (or the exit) is handled.
 */
#include <errno.h>
#include <string.h>

#include "lifecycle.h"
#include "request.h"

static int is_pending(uint32_t state)
{
	return state == SHMR_ROUTE_PENDING_DISABLE ||
	       state == SHMR_ROUTE_PENDING_REPLACE ||
	       state == SHMR_ROUTE_PENDING_REMOVE;
}

/* Find router and route; -SHMR_E_NO_ROUTE when either is unknown. */
static int find(struct shmr_ctl_life *l, const char *router, const char *name,
		unsigned *ri, unsigned *ki)
{
	struct shmr_ctl_router *r;
	int k;

	r = router ? shmr_ctl_model_router(l->m, router) : NULL;
	if (!r)
		return -SHMR_E_NO_ROUTE;
	/* A stopped router refuses before any argument is checked. */
	if (r->stopped)
		return -SHMR_E_NOT_ALLOWED;
	if (!name)
		return -SHMR_E_NO_ROUTE;
	*ri = (unsigned)(r - l->m->routers);
	k = shmr_ctl_model_route_index(r, name);
	if (k < 0)
		return -SHMR_E_NO_ROUTE;
	*ki = (unsigned)k;
	return 0;
}

static struct shmr_ctl_route *route_at(struct shmr_ctl_life *l, unsigned r,
				       unsigned k)
{
	return &l->m->routers[r].routes[k];
}

/*
 * The route a mutator acts on: -SHMR_E_NO_ROUTE when router or route is
 * unknown, -SHMR_E_BUSY while a pending operation is in flight (mutators
 * are exclusive per route).
 */
static int find_settled(struct shmr_ctl_life *l, const char *router,
			const char *name, unsigned *r, unsigned *k,
			struct shmr_ctl_route **q)
{
	int rc = find(l, router, name, r, k);

	if (rc < 0)
		return rc;
	*q = route_at(l, *r, *k);
	return is_pending((*q)->state) ? -SHMR_E_BUSY : 0;
}

/* Start the worker of a DEAD route; on success it is RUNNING. */
static int start(struct shmr_ctl_life *l, unsigned r, unsigned k)
{
	struct shmr_ctl_route *q = route_at(l, r, k);
	int pid = l->ops->spawn(l->ctx, r, k);

	/* A dead route whose start failed fails what is routed to it with
	 * this error, and each such message retries (the spec's start_err);
	 * a start that succeeds clears it. */
	if (q->start_err != (pid < 0 ? pid : 0))
		l->m->dirty = 1;
	q->start_err = pid < 0 ? pid : 0;
	if (pid < 0)
		return pid;
	q->state = SHMR_ROUTE_DEAD;
	shmr_ctl_model_route_set(l->m, q, pid);
	return 0;
}

/* Drop route k of router r: free its inbox, move the later ones down. */
static void drop(struct shmr_ctl_life *l, unsigned r, unsigned k)
{
	struct shmr_ctl_router *ro = &l->m->routers[r];
	struct shmr_ctl_route *q = &ro->routes[k];

	shmr_ctl_model_route_set(l->m, q, 0); /* names and claim go */
	(void)shmr_ctl_alloc_put(&l->m->alloc, q->pid, l->m->version + 1);
	l->ops->forget(l->ctx, r, k);
	memmove(&ro->routes[k], &ro->routes[k + 1],
		(ro->nroutes - k - 1) * sizeof(ro->routes[0]));
	ro->nroutes--;
	memset(&ro->routes[ro->nroutes], 0, sizeof(ro->routes[0]));
	for (unsigned i = 0; i < ro->nroutes; i++)
		ro->routes[i].conf = &ro->routes[i].spec;
	l->m->dirty = 1;
}

/* Ask the live worker to stop and wait for its exit in @p pending. */
static void stop(struct shmr_ctl_life *l, unsigned r, unsigned k,
		 uint32_t pending)
{
	route_at(l, r, k)->state = pending;
	l->m->dirty = 1;
	l->ops->stop(l->ctx, r, k);
}

/* As stop(), but the worker is asked to stop only once its inbox is
 * empty (the daemon watches it: ops->drain). */
static void stop_drained(struct shmr_ctl_life *l, unsigned r, unsigned k,
			 uint32_t pending)
{
	route_at(l, r, k)->state = pending;
	l->m->dirty = 1;
	l->ops->drain(l->ctx, r, k);
}

/* A pool (without a resizer) that has lost its last routee. */
static int ro_pool_empty(const struct shmr_ctl_router *ro)
{
	return ro->conf->pool.size > 0 &&
	       ro->conf->resizer.kind == SHMR_RESIZER_NONE && ro->nroutes == 0;
}

static int spec_valid(const struct shmr_conf_route *spec)
{
	return spec->program[0] != '\0' &&
	       memchr(spec->program, '\0', sizeof(spec->program)) &&
	       spec->nargs <= SHMR_CONF_ARGS_MAX;
}

int shmr_ctl_life_add(struct shmr_ctl_life *l, const char *router,
		      const struct shmr_conf_route *spec)
{
	struct shmr_ctl_router *ro;
	struct shmr_ctl_route *q;
	struct shmr_pid pid;
	unsigned r, k;
	int reused, rc;

	/* A stopped router refuses before any argument is checked. */
	ro = shmr_ctl_model_router(l->m, router);
	if (!ro)
		return -SHMR_E_NO_ROUTE;
	if (ro->stopped)
		return -SHMR_E_NOT_ALLOWED;
	if (!shmr_ctl_name_valid(spec->name) || !spec_valid(spec))
		return -SHMR_E_NAME;
	if (shmr_ctl_model_route_index(ro, spec->name) >= 0)
		return -SHMR_E_ROUTE_DUPLICATE;
	if (ro->nroutes >= shmr_ctl_model_max_routes(l->m, ro))
		return -SHMR_E_NO_ENDPOINT;
	rc = shmr_ctl_alloc_get(&l->m->alloc, SHMR_EPK_ROUTE,
				l->ops->seen_version(l->ctx), &pid, &reused);
	if (rc < 0)
		return rc;
	if (reused)
		l->ops->reinit(l->ctx, pid.slot);
	memcpy(l->m->alloc.slots[pid.slot].name, spec->name, SHMR_NAME_MAX);
	r = (unsigned)(ro - l->m->routers);
	k = ro->nroutes++;
	q = &ro->routes[k];
	memset(q, 0, sizeof(*q));
	q->spec = *spec;
	q->spec.line = 0;
	q->conf = &q->spec;
	q->pid = pid;
	q->state = SHMR_ROUTE_DEAD;
	l->m->dirty = 1;
	rc = l->ops->added(l->ctx, r, k);
	if (rc == 0)
		rc = start(l, r, k);
	if (rc < 0) {
		drop(l, r, k); /* not added: as if never asked */
		return rc;
	}
	return 0;
}

/* REMOVE: a live worker stops now, or after its inbox (@p drained). */
static int remove_route(struct shmr_ctl_life *l, const char *router,
			const char *name, int drained)
{
	struct shmr_ctl_router *ro = shmr_ctl_model_router(l->m, router);
	struct shmr_ctl_route *q;
	unsigned r, k;
	int rc;

	if (!ro)
		return -SHMR_E_NO_ROUTE;
	if (ro->stopped)
		return -SHMR_E_NOT_ALLOWED;
	rc = find_settled(l, router, name, &r, &k, &q);
	if (rc == -SHMR_E_NO_ROUTE)
		return 0; /* idempotent */
	if (rc < 0)
		return rc;
	if (q->os_pid) {
		(drained ? stop_drained : stop)(l, r, k,
					       SHMR_ROUTE_PENDING_REMOVE);
		return 0;
	}
	drop(l, r, k);
	if (ro_pool_empty(&l->m->routers[r]))
		shmr_ctl_life_stop_router(l, r);
	return 0;
}

int shmr_ctl_life_remove(struct shmr_ctl_life *l, const char *router,
			 const char *name)
{
	return remove_route(l, router, name, 0);
}

/* DISABLE: a live worker stops now, or after its inbox (@p drained). */
static int disable_route(struct shmr_ctl_life *l, const char *router,
			 const char *name, int drained)
{
	unsigned r, k;
	struct shmr_ctl_route *q;
	int rc = find_settled(l, router, name, &r, &k, &q);

	if (rc < 0)
		return rc;
	if (q->state == SHMR_ROUTE_DISABLED)
		return 0;
	if (q->os_pid) {
		(drained ? stop_drained : stop)(l, r, k,
					       SHMR_ROUTE_PENDING_DISABLE);
		return 0;
	}
	q->state = SHMR_ROUTE_DISABLED;
	l->m->dirty = 1;
	return 0;
}

int shmr_ctl_life_disable(struct shmr_ctl_life *l, const char *router,
			  const char *name)
{
	return disable_route(l, router, name, 0);
}

int shmr_ctl_life_drain(struct shmr_ctl_life *l, const char *router,
			const char *name)
{
	return disable_route(l, router, name, 1);
}

int shmr_ctl_life_remove_drained(struct shmr_ctl_life *l, const char *router,
				 const char *name)
{
	return remove_route(l, router, name, 1);
}

void shmr_ctl_life_kill_router(struct shmr_ctl_life *l, unsigned r)
{
	struct shmr_ctl_router *ro = &l->m->routers[r];

	if (ro->stopped)
		return;
	if (ro->conf->on_kill_stop) {
		ro->stopped = 1;
		l->m->dirty = 1;
	}
	for (unsigned k = 0; k < ro->nroutes; k++)
		if (ro->routes[k].os_pid)
			(l->ops->kill_failed ? l->ops->kill_failed
					     : l->ops->kill)(l->ctx, r, k);
}

int shmr_ctl_life_enable(struct shmr_ctl_life *l, const char *router,
			 const char *name)
{
	unsigned r, k;
	struct shmr_ctl_route *q;
	int rc = find_settled(l, router, name, &r, &k, &q);

	if (rc < 0)
		return rc;
	if (q->state != SHMR_ROUTE_DISABLED)
		return 0; /* enabled already, live or not: respawn wakes it */
	/* As Ergo's EnableRoute: enabled first, then started; a start that
	 * fails leaves the route enabled but dead, and the next message
	 * routed there (or the backoff timer) tries again. */
	q->state = SHMR_ROUTE_DEAD;
	l->m->dirty = 1;
	return start(l, r, k);
}

/* Put @p spec's program and args into @p q (name and cpus stay). */
static void swap_spec(struct shmr_ctl_route *q,
		      const struct shmr_conf_route *spec)
{
	memcpy(q->spec.program, spec->program, sizeof(q->spec.program));
	q->spec.nargs = spec->nargs;
	memcpy(q->spec.args, spec->args, sizeof(q->spec.args));
}

int shmr_ctl_life_replace(struct shmr_ctl_life *l, const char *router,
			  const char *name, const struct shmr_conf_route *spec)
{
	struct shmr_ctl_route *q;
	unsigned r, k;
	int rc;

	/* A stopped router refuses before the spec is checked (find()). */
	rc = find_settled(l, router, name, &r, &k, &q);
	if (rc < 0)
		return rc;
	if (!spec_valid(spec))
		return -SHMR_E_NAME;
	swap_spec(q, spec);
	if (q->state == SHMR_ROUTE_DISABLED)
		return 0; /* the next enable starts it */
	if (q->os_pid) {
		/* The old worker runs on; the new spec starts at its exit. */
		stop(l, r, k, SHMR_ROUTE_PENDING_REPLACE);
		return 0;
	}
	/* As Ergo's ReplaceRoute: the new spec stays installed when its
	 * start fails; the route is dead until a start succeeds (the next
	 * message routed there, the backoff timer, respawn, replace). */
	l->m->dirty = 1;
	return start(l, r, k);
}

int shmr_ctl_life_respawn(struct shmr_ctl_life *l, const char *router,
			  const char *name)
{
	unsigned r, k;
	struct shmr_ctl_route *q;
	int rc = find_settled(l, router, name, &r, &k, &q);

	if (rc < 0)
		return rc;
	if (q->state == SHMR_ROUTE_DISABLED)
		return -SHMR_E_DISABLED;
	if (q->os_pid)
		return -SHMR_E_ROUTE_RUNNING;
	return start(l, r, k);
}

int shmr_ctl_life_exited(struct shmr_ctl_life *l, unsigned r, unsigned k)
{
	struct shmr_ctl_route *q = route_at(l, r, k);

	l->m->dirty = 1;
	switch (q->state) {
	case SHMR_ROUTE_PENDING_DISABLE:
		q->state = SHMR_ROUTE_DISABLED;
		return 0;
	case SHMR_ROUTE_PENDING_REMOVE:
		drop(l, r, k);
		/* A pool without a resizer stops with its last routee. */
		if (ro_pool_empty(&l->m->routers[r]))
			shmr_ctl_life_stop_router(l, r);
		return 0;
	case SHMR_ROUTE_PENDING_REPLACE:
		q->state = SHMR_ROUTE_DEAD;
		/* A failed start waits for a retry (the next message routed
		 * there, the backoff timer, respawn or replace); meanwhile
		 * messages fail with SHMR_E_BUSY. */
		if (start(l, r, k) < 0) {
			q->state = SHMR_ROUTE_REPLACE_WAIT;
			l->m->dirty = 1;
		}
		return 0;
	case SHMR_ROUTE_DISABLED:
		return 0;
	default:
		q->state = SHMR_ROUTE_DEAD;
		return 1;
	}
}

int shmr_ctl_life_restart(struct shmr_ctl_life *l, unsigned r, unsigned k)
{
	struct shmr_ctl_route *q = route_at(l, r, k);
	int rc;

	if (q->os_pid || (q->state != SHMR_ROUTE_DEAD &&
			  q->state != SHMR_ROUTE_REPLACE_WAIT))
		return 0;
	if (q->state == SHMR_ROUTE_REPLACE_WAIT) {
		/* Completing a replace is not a restart. */
		rc = start(l, r, k);
		if (rc < 0) {
			q->state = SHMR_ROUTE_REPLACE_WAIT;
			return rc;
		}
		return q->os_pid;
	}
	rc = start(l, r, k);
	if (rc < 0)
		return rc;
	q->restarts++;
	return q->os_pid;
}

void shmr_ctl_life_stop_router(struct shmr_ctl_life *l, unsigned r)
{
	struct shmr_ctl_router *ro = &l->m->routers[r];

	if (ro->stopped)
		return;
	ro->stopped = 1;
	l->m->dirty = 1;
	for (unsigned k = 0; k < ro->nroutes; k++)
		if (ro->routes[k].os_pid)
			l->ops->stop(l->ctx, r, k);
}

uint64_t shmr_ctl_backoff_ms(unsigned quick_fails, uint64_t first,
			     uint64_t max)
{
	uint64_t d;

	if (quick_fails <= 1 || first == 0)
		return 0;
	d = first << (quick_fails - 2 > 20 ? 20 : quick_fails - 2);
	return d > max ? max : d;
}
