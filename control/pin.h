/*
 * Pinning (pin.c): the topology, the PUs the dataplane routes on, and each
 * route's cpu set, with the default choice for a route whose cpus are "".
 * Internal to shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_PIN_H
#define SHMR_CONTROL_PIN_H

#include <hwloc.h>

#include <shmr/layout.h>

#include "model.h"
#include "shmr_config.h"

struct shmr_ctl_pin {
	hwloc_topology_t topo; /* loaded once by the daemon at start-up */
	/* What each route's workers are pinned to: the configured list, or
	 * the PU chosen for it (see cpus.c); the daemon's table, built by
	 * shmr_ctl_conf_apply() (daemon_conf.c) from lists that passed
	 * shmr_config_validate(). */
	hwloc_bitmap_t (*cpus)[SHMR_MAX_ROUTES];
	hwloc_bitmap_t allowed, lcores; /* kept from the plan for ADD */
	char dp_cpus[SHMR_CTL_CPUS_MAX]; /* --cpus given to the dataplane */
};

/** No plan yet; @p cpus (the routes' sets) is kept, not copied. */
void shmr_ctl_pin_init(struct shmr_ctl_pin *p,
		       hwloc_bitmap_t (*cpus)[SHMR_MAX_ROUTES]);
/**
 * Default pinning: fix the dataplane's @p nlcores routing PUs (dp_cpus)
 * and give every route of @p m whose cpus are "" one PU of its own, then
 * write each route's set as ROUTES and INSPECT show it.
 * Context: start-up, topo loaded.  Returns 0, or -1 after printing why.
 */
int shmr_ctl_pin_plan(struct shmr_ctl_pin *p, const struct shmr_config *cfg,
		      struct shmr_ctl_model *m, unsigned nlcores);
/** Route @p k of router @p r was appended: its set, as the plan would
 *  have chosen it.  Errors: -ENOMEM, -EINVAL (a bad cpu list). */
int shmr_ctl_pin_added(struct shmr_ctl_pin *p, struct shmr_ctl_model *m,
		       unsigned r, unsigned k);
/** Route @p k of router @p r (of @p n routes) is gone: free its set and
 *  move the sets of routes k+1.. down by one, as the model does. */
void shmr_ctl_pin_forget(struct shmr_ctl_pin *p, unsigned n, unsigned r,
			 unsigned k);

#endif
