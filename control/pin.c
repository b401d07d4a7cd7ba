/*
 * Pinning: the topology (loaded once at start-up), the PUs the dataplane's
 * routing lcores run on, and each route's cpu set, kept in step with the
 * routes as they come and go.  The choice for a route whose cpus are ""
 * is cpus.c's arithmetic; this file applies it to the daemon's routes, at
 * start-up and for a route that ADD (or a pool growing) appends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "cpus.h"
#include "pin.h"

void shmr_ctl_pin_init(struct shmr_ctl_pin *p,
		       hwloc_bitmap_t (*cpus)[SHMR_MAX_ROUTES])
{
	*p = (struct shmr_ctl_pin){ .cpus = cpus };
}

/*
 * Default pinning (the choice itself is cpus.c's): fix the dataplane's
 * routing PUs and give every route whose cpus are "" one PU of its own,
 * then write each route's set as ROUTES and INSPECT show it.  The PUs we
 * may use are our own binding within what the topology allows: the
 * dataplane inherits it, and a worker pinned outside it would fail.
 * Returns 0, or -1 after printing why.
 */
int shmr_ctl_pin_plan(struct shmr_ctl_pin *p, const struct shmr_config *cfg,
		      struct shmr_ctl_model *m, unsigned nlcores)
{
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
	hwloc_bitmap_t lcores = hwloc_bitmap_alloc();
	unsigned nth = 0;
	int rc = 0, n;

	if (!allowed || !lcores)
		abort();
	if (hwloc_get_cpubind(p->topo, allowed, HWLOC_CPUBIND_PROCESS) < 0)
		hwloc_bitmap_fill(allowed);
	hwloc_bitmap_and(allowed, allowed,
			 hwloc_topology_get_allowed_cpuset(p->topo));
	if (hwloc_bitmap_iszero(allowed)) {
		shmr_ctl_warn("no cpu to run on: the hwloc topology allows "
			      "none of this process's cpus");
		rc = -1;
		goto out;
	}
	if (shmr_ctl_cpus_lcores(cfg->dataplane_cpus, allowed,
				 nlcores, lcores) < 0)
		abort(); /* the list passed shmr_config_validate() */
	if (cfg->dataplane_cpus[0])
		n = snprintf(p->dp_cpus, sizeof(p->dp_cpus), "%s",
			     cfg->dataplane_cpus);
	else
		n = hwloc_bitmap_list_snprintf(p->dp_cpus,
					       sizeof(p->dp_cpus), lcores);
	if (n < 0 || (size_t)n >= sizeof(p->dp_cpus))
		abort(); /* at most SHMR_MAX_LCORES numbers below 4096 */
	for (unsigned i = 0; i < m->nrouters; i++) {
		struct shmr_ctl_router *r = &m->routers[i];

		for (unsigned k = 0; k < r->nroutes; k++) {
			struct shmr_ctl_route *q = &r->routes[k];

			if (q->conf->cpus[0] == '\0') {
				int pu = shmr_ctl_cpus_pick(allowed, lcores,
							    nth++);

				if (pu < 0)
					abort(); /* allowed is not empty */
				hwloc_bitmap_only(p->cpus[i][k], (unsigned)pu);
			}
			n = hwloc_bitmap_list_snprintf(q->cpus, sizeof(q->cpus),
						       p->cpus[i][k]);
			if (n < 0 || (size_t)n >= sizeof(q->cpus))
				snprintf(q->cpus, sizeof(q->cpus), "%s",
					 q->conf->cpus);
		}
	}
	shmr_ctl_log("dataplane lcores on cpus %s", p->dp_cpus);
	/* Kept: a route added later is pinned the same way. */
	p->allowed = allowed;
	p->lcores = lcores;
	return 0;
out:
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(lcores);
	return rc;
}

/* Pin an added route like a configured one: its list, or a PU of its own
 * (see shmr_ctl_pin_plan()). */
int shmr_ctl_pin_added(struct shmr_ctl_pin *p, struct shmr_ctl_model *m,
		       unsigned r, unsigned k)
{
	struct shmr_ctl_route *q = &m->routers[r].routes[k];
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	unsigned nth = 0;
	int n;

	if (!set)
		return -ENOMEM;
	if (shmr_ctl_cpus_parse(q->conf->cpus, set) < 0) {
		hwloc_bitmap_free(set);
		return -EINVAL;
	}
	if (q->conf->cpus[0] == '\0' && p->allowed && p->lcores) {
		for (unsigned i = 0; i < m->nrouters; i++)
			nth += m->routers[i].nroutes;
		n = shmr_ctl_cpus_pick(p->allowed, p->lcores, nth - 1);
		if (n >= 0)
			hwloc_bitmap_only(set, (unsigned)n);
	}
	n = hwloc_bitmap_list_snprintf(q->cpus, sizeof(q->cpus), set);
	if (n < 0 || (size_t)n >= sizeof(q->cpus))
		snprintf(q->cpus, sizeof(q->cpus), "%s", q->conf->cpus);
	p->cpus[r][k] = set;
	return 0;
}

void shmr_ctl_pin_forget(struct shmr_ctl_pin *p, unsigned n, unsigned r,
			 unsigned k)
{
	if (p->cpus[r][k])
		hwloc_bitmap_free(p->cpus[r][k]);
	memmove(&p->cpus[r][k], &p->cpus[r][k + 1],
		(n - k - 1) * sizeof(p->cpus[r][0]));
	p->cpus[r][n - 1] = NULL;
}
