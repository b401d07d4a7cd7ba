/*
 * Pools, routee lists and the management messages (Pekko's GetRoutees,
 * AddRoutee, RemoveRoutee, AdjustPoolSize), over the model and the route
 * lifecycle; pure logic like lifecycle.c (process operations injected).
 *
 * A pool is a router whose routes are copies of one program, named
 * "<router>:<i>" (the parser expands `pool = { size = N; ... }` into N
 * routes).  Its routees are its routes, in creation order: growing appends
 * routes with the lowest free index, shrinking removes the newest ones,
 * each after it has handled what is queued for it (remove_drained).  Its
 * size is kept within [1, upper] without a resizer, within the resizer's
 * bounds with one, at all times (shmr_ctl_pool_keep_bounds(): at start,
 * and at once after a RemoveRoutee); without a resizer it stops with its
 * last routee.
 *
 * A routing logic over an explicit list (a group: `routees = [...]`, or
 * any router once AddRoutee/RemoveRoutee changed its list) keeps the names
 * in shmr_ctl_router.routees; "listed" is 0 while the router's own routes
 * are its routees.  The first AddRoutee on such a router starts the list
 * from its current routes, so nothing it routed to is lost.  RemoveRoutee
 * of one of the router's own routes removes the route (after its queue).
 *
 * Ordering: management messages reach the control plane through the admin
 * endpoint in the order each sender sent them, and each is applied to the
 * model before the next is read, so a GetRoutees after an AddRoutee from
 * the same sender sees the addition.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pool.h"
#include "resizer_conf.h"
#include "request.h"

/* Routes that are routees now: not on their way out. */
static unsigned members(const struct shmr_ctl_router *r)
{
	unsigned n = 0;

	for (unsigned k = 0; k < r->nroutes; k++)
		n += r->routes[k].state != SHMR_ROUTE_PENDING_REMOVE;
	return n;
}

void shmr_ctl_pool_bounds(const struct shmr_ctl_model *m,
			  const struct shmr_ctl_router *r, unsigned *lo,
			  unsigned *hi)
{
	const unsigned most = shmr_ctl_model_max_routes(m, r);
	const struct shmr_conf_resizer *z = &r->conf->resizer;
	struct shmr_conf_resizer_cfg d;
	struct shmr_conf_optimal_cfg o;
	int zlo, zhi;

	*lo = 1;
	*hi = most;
	if (z->kind != SHMR_RESIZER_NONE) {
		/* The bounds as the resizer runs them: Pekko's defaults for
		 * those left out (ranges passed shmr_config_validate()). */
		(void)shmr_config_resizer_from_conf(z, &d, &o, NULL);
		zlo = z->kind == SHMR_RESIZER_DEFAULT ? d.lower_bound
						      : o.lower_bound;
		zhi = z->kind == SHMR_RESIZER_DEFAULT ? d.upper_bound
						      : o.upper_bound;
		*lo = zlo < 0 ? 0 : (unsigned)zlo;
		*hi = zhi < 0 ? 0 : (unsigned)zhi;
		if (*hi > most)
			*hi = most;
		if (*lo > *hi)
			*lo = *hi;
	}
}

static int listed_index(const struct shmr_ctl_router *r, const char *name)
{
	for (unsigned i = 0; i < r->nroutees; i++)
		if (strncmp(r->routees[i], name, SHMR_NAME_MAX) == 0)
			return (int)i;
	return -1;
}

static void list_append(struct shmr_ctl_model *m, struct shmr_ctl_router *r,
			const char *name)
{
	if (!r->listed || listed_index(r, name) >= 0 ||
	    r->nroutees >= shmr_ctl_model_max_routes(m, r))
		return;
	snprintf(r->routees[r->nroutees++], SHMR_NAME_MAX, "%s", name);
	m->dirty = 1;
}

static void list_drop(struct shmr_ctl_model *m, struct shmr_ctl_router *r,
		      const char *name)
{
	int i = listed_index(r, name);

	if (!r->listed || i < 0)
		return;
	memmove(r->routees[i], r->routees[i + 1],
		(r->nroutees - (unsigned)i - 1) * SHMR_NAME_MAX);
	r->nroutees--;
	m->dirty = 1;
}

/* A mutable router: known, not stopped. */
static int router_at(struct shmr_ctl_life *l, unsigned ri,
		     struct shmr_ctl_router **r)
{
	if (ri >= l->m->nrouters)
		return -SHMR_E_NO_ROUTE;
	*r = &l->m->routers[ri];
	return (*r)->stopped ? -SHMR_E_NOT_ALLOWED : 0;
}

/* Grow the pool by one: "<router>:<lowest free index>". */
static int grow_one(struct shmr_ctl_life *l, struct shmr_ctl_router *r)
{
	struct shmr_conf_route spec = r->conf->pool.tmpl;
	int rc;

	for (unsigned i = 0; i < 2 * SHMR_MAX_ROUTES; i++) {
		int n = snprintf(spec.name, sizeof(spec.name), "%s:%u",
				 r->conf->name, i);

		if (n < 0 || (size_t)n >= sizeof(spec.name))
			return -SHMR_E_NAME;
		if (shmr_ctl_model_route_index(r, spec.name) < 0)
			break;
	}
	rc = shmr_ctl_life_add(l, r->conf->name, &spec);
	if (rc == 0)
		list_append(l->m, r, spec.name);
	return rc;
}

/* Shrink by one: the newest routee, after its inbox drained. */
static int shrink_one(struct shmr_ctl_life *l, struct shmr_ctl_router *r)
{
	char name[SHMR_NAME_MAX];

	for (unsigned k = r->nroutes; k-- > 0;) {
		if (r->routes[k].state == SHMR_ROUTE_PENDING_REMOVE)
			continue;
		snprintf(name, sizeof(name), "%s", r->routes[k].conf->name);
		list_drop(l->m, r, name);
		return shmr_ctl_life_remove_drained(l, r->conf->name, name);
	}
	return 0;
}

int shmr_ctl_pool_adjust(struct shmr_ctl_life *l, unsigned ri, int delta)
{
	struct shmr_ctl_router *r;
	unsigned lo, hi, size, want;
	int rc = router_at(l, ri, &r);

	if (rc < 0)
		return rc;
	if (r->conf->pool.size == 0 && !r->conf->pool.empty)
		return -SHMR_E_NOT_ALLOWED; /* not a pool */
	shmr_ctl_pool_bounds(l->m, r, &lo, &hi);
	size = members(r);
	if (delta < 0 && (unsigned)-delta > size)
		want = 0;
	else
		want = (unsigned)((int)size + delta);
	if (want < lo)
		want = lo;
	if (want > hi)
		want = hi;
	while (size < want) {
		rc = grow_one(l, r);
		if (rc < 0)
			return rc;
		size++;
	}
	while (size > want) {
		rc = shrink_one(l, r);
		if (rc < 0)
			return rc;
		size--;
	}
	return (int)size;
}

int shmr_ctl_pool_keep_bounds(struct shmr_ctl_life *l, unsigned ri)
{
	struct shmr_ctl_router *r;
	unsigned lo, hi, size;

	if (router_at(l, ri, &r) < 0 ||
	    (r->conf->pool.size == 0 && !r->conf->pool.empty) ||
	    r->conf->resizer.kind == SHMR_RESIZER_NONE)
		return 0;
	shmr_ctl_pool_bounds(l->m, r, &lo, &hi);
	size = members(r);
	if (size >= lo && size <= hi)
		return (int)size;
	return shmr_ctl_pool_adjust(l, ri, 0);
}

int shmr_ctl_pool_routee_stopped(struct shmr_ctl_life *l, unsigned ri,
				 unsigned k, uint32_t *slot)
{
	struct shmr_ctl_router *r = &l->m->routers[ri];
	struct shmr_pid pid = r->routes[k].pid;
	char name[SHMR_NAME_MAX];
	int rc;

	snprintf(name, sizeof(name), "%s", r->routes[k].conf->name);
	*slot = pid.slot;
	list_drop(l->m, r, name);
	rc = shmr_ctl_life_remove(l, r->conf->name, name);
	if (rc < 0)
		return rc;
	/* Freed (DEFERRED) by the removal, and kept: nothing reuses the
	 * slot before its inbox is dead-lettered. */
	l->m->alloc.slots[pid.slot].drain = SHMR_CTL_DRAIN_INBOX;
	rc = shmr_ctl_pool_keep_bounds(l, ri);
	return rc > 0 ? 0 : rc;
}

int shmr_ctl_routees_format(const struct shmr_ctl_router *r, char *buf,
			    size_t cap)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	for (unsigned i = 0;; i++) {
		const char *name;
		int n;

		if (r->listed) {
			if (i >= r->nroutees)
				break;
			name = r->routees[i];
		} else {
			if (i >= r->nroutes)
				break;
			if (r->routes[i].state == SHMR_ROUTE_PENDING_REMOVE)
				continue;
			name = r->routes[i].conf->name;
		}
		n = snprintf(buf + len, cap - len, "%s\n", name);
		if (n < 0 || (size_t)n >= cap - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

/* The router of an AddRoutee/RemoveRoutee: mutable, a routing logic, and
 * a valid name. */
static int list_router(struct shmr_ctl_life *l, unsigned ri, const char *name,
		       struct shmr_ctl_router **r)
{
	int rc = router_at(l, ri, r);

	if (rc < 0)
		return rc;
	if (!shmr_ctl_is_logic((*r)->conf->behaviour))
		return -SHMR_E_NOT_ALLOWED;
	return shmr_ctl_name_valid(name) ? 0 : -SHMR_E_NAME;
}

int shmr_ctl_routee_add(struct shmr_ctl_life *l, unsigned ri,
			const char *name)
{
	struct shmr_ctl_router *r;
	int rc = list_router(l, ri, name, &r);

	if (rc < 0)
		return rc;
	if (!r->listed) {
		/* From now on the list is the router's own. */
		r->listed = 1;
		r->nroutees = 0;
		for (unsigned k = 0; k < r->nroutes; k++)
			if (r->routes[k].state != SHMR_ROUTE_PENDING_REMOVE)
				list_append(l->m, r, r->routes[k].conf->name);
	}
	if (listed_index(r, name) >= 0)
		return 0;
	if (r->nroutees >= shmr_ctl_model_max_routes(l->m, r))
		return -SHMR_E_NO_ENDPOINT;
	list_append(l->m, r, name);
	return 0;
}

int shmr_ctl_routee_remove(struct shmr_ctl_life *l, unsigned ri,
			   const char *name)
{
	struct shmr_ctl_router *r;
	int rc = list_router(l, ri, name, &r);

	if (rc < 0)
		return rc;
	list_drop(l->m, r, name);
	/* A group that lost its last routee stops, as Pekko's does, unless
	 * its configuration keeps it (a pool's size is its resizer's). */
	if (r->listed && r->nroutees == 0 && r->conf->pool.size == 0 &&
	    !r->conf->pool.empty && !r->conf->keep_when_empty &&
	    members(r) == 0) {
		shmr_ctl_life_stop_router(l, ri);
		return 0;
	}
	/* One of the router's own routes (a pool's routee) goes away, after
	 * its queue: its routes are its routees. */
	if (shmr_ctl_model_route_index(r, name) >= 0) {
		rc = shmr_ctl_life_remove_drained(l, r->conf->name, name);
		/* A resizer's lower_bound holds at once: a new routee
		 * replaces the one removed. */
		if (rc == 0 && (rc = shmr_ctl_pool_keep_bounds(l, ri)) > 0)
			rc = 0;
		return rc;
	}
	return 0;
}
