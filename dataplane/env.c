/*
 * The dataplane's private view of a domain (struct shmr_dp_env): the
 * mapping's header checked once (shmr_layout_check()) and its geometry
 * copied, so that nothing a peer scribbles on the shared header later can
 * change what the fast path computes; and the one logging call every
 * module reports through.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <shmr/domain.h>

#include "dataplane_internal.h"

void shmr_dp_log(const struct shmr_dp_env *env, int level, const char *fmt,
		 ...)
{
	char line[512];
	va_list ap;

	if (!env->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	env->log(env->log_ctx, level, line);
}

int shmr_dp_env_init(struct shmr_dp_env *env, void *base, size_t map_size)
{
	const struct shmr_domain_hdr *h = base;
	struct shmr_geometry g;
	int rc;

	rc = shmr_layout_check(base, map_size);
	if (rc < 0)
		return rc;
	g = (struct shmr_geometry){ h->slot_size, h->lane_size, h->nlcores,
				    h->poll_mode, h->spin_polls,
				    h->max_endpoints, h->max_names,
				    h->max_types, h->max_routers,
				    h->max_routes };
	if (shmr_geometry_check(&g, NULL) < 0)
		return -EINVAL;
	env->base = base;
	env->map_size = map_size;
	env->slot_size = h->slot_size;
	env->lane_size = h->lane_size;
	env->nlcores = h->nlcores;
	env->max_endpoints = h->max_endpoints;
	env->max_names = h->max_names;
	env->names_off = h->names_off;
	env->max_types = h->max_types;
	env->types_off = h->types_off;
	env->max_routers = h->max_routers;
	env->max_routes = h->max_routes;
	env->routes_off = h->routes_off;
	env->active_off = h->active_off;
	env->poll_mode = h->poll_mode;
	env->spin_polls = h->spin_polls ? h->spin_polls : 1;
	env->lane_stride = h->lane_stride;
	env->ep_off = h->ep_off;
	env->spec_off = h->spec_off;
	env->counters_off = h->counters_off;
	env->ctl_off = h->ctl_off;
	env->lanes_off = h->lanes_off;
	env->bells_off = h->bells_off;
	env->eppeer_off = h->eppeer_off;
	shmr_arena_view_init(&env->arena, base);
	env->work_off = h->work_off;
	env->epctr_off = h->epctr_off;
	env->epctr_stride = shmr_ep_ctr_stride(h->max_endpoints);
	env->work_nwords = shmr_work_nwords(h->max_endpoints, h->nlcores);
	env->work_nsum = shmr_work_nsum(env->work_nwords);
	env->work_stride = shmr_work_stride(h->max_endpoints, h->nlcores);
	memcpy(env->name, h->name, SHMR_NAME_MAX);
	env->name[SHMR_NAME_MAX - 1] = '\0';
	return 0;
}
