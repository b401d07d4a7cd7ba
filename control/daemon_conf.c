/*
 * shmr-control's configuration, loaded and applied: config/'s one entry
 * point (parse, defaults from behaviour objects, validation, the host's
 * memory and cpus) and what the daemon builds from what it validated
 * (the model, the routes' cpu sets, the socket's groups).  Moved out of
 * control.c's main().
 */
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "control_internal.h"
#include "cpus.h"
#include "daemon_conf.h"
#include "memfit.h"
#include "startup.h"

/* The configuration's cpus against those this process may run on, which
 * the dataplane and every worker inherit (pin.c plans within them too):
 * a cpu outside them is a configuration error, found here rather than by
 * the dataplane's EAL (its usage text, exit 1) or a worker's pinning.  An
 * affinity that cannot be read (more cpus than a cpu_set_t) is not
 * checked. */
static int cpus_check(const struct shmr_config *cfg, char *err, size_t cap)
{
	cpu_set_t host;

	if (sched_getaffinity(0, sizeof(host), &host) < 0)
		return 0;
	return shmr_config_cpus_fit(cfg, &host, err, cap);
}

void shmr_ctl_conf_load(struct shmr_config *cfg, const char *path, char *why,
			size_t cap)
{
	char err[SHMR_CONFIG_ERR_MAX];
	const char *looked = NULL;

	if (path)
		snprintf(why, cap, "configuration %s (-c)", path);
	else if ((path = shmr_config_default_file(&looked)))
		snprintf(why, cap, "configuration %s", path);
	else
		snprintf(why, cap, "configuration: the embedded default (no %s)",
			 looked);
	if (shmr_config_load(path, cfg, err, sizeof(err)) < 0 ||
	    shmr_ctl_memfit_check(cfg, NULL, err, sizeof(err)) < 0 ||
	    cpus_check(cfg, err, sizeof(err)) < 0) {
		shmr_ctl_warn("%s", err);
		exit(SHMR_CTL_EXIT_USAGE);
	}
}

/* Group setting @p key (@p name, "" for none) of @p cfg into *have and
 * *gid; a group the system does not know is a configuration error. */
static void resolve_group(const struct shmr_config *cfg, const char *key,
			  const char *name, int *have, gid_t *gid)
{
	struct group *gr;

	if (!name[0])
		return;
	gr = getgrnam(name);
	if (!gr) {
		shmr_ctl_warn("%s: %s: no group '%s'", cfg->source, key, name);
		exit(SHMR_CTL_EXIT_USAGE);
	}
	*have = 1;
	*gid = gr->gr_gid;
}

void shmr_ctl_conf_apply(const struct shmr_config *cfg,
			 struct shmr_ctl_model *m,
			 hwloc_bitmap_t (*cpus)[SHMR_MAX_ROUTES],
			 struct shmr_ctl_groups *g)
{
	/* The resizers' ranges passed shmr_config_validate(). */
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		struct shmr_conf_resizer_cfg d;
		struct shmr_conf_optimal_cfg o;

		if (shmr_config_resizer_from_conf(&cfg->routers[i].resizer, &d,
						  &o, NULL) < 0)
			abort();
	}
	/* Names (the parser's) and endpoint slots (shmr_config_validate())
	 * are checked. */
	if (shmr_ctl_model_init(m, cfg) < 0)
		abort();
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		for (unsigned k = 0; k < cfg->routers[i].nroutes; k++) {
			const struct shmr_conf_route *q =
				&cfg->routers[i].routes[k];

			cpus[i][k] = hwloc_bitmap_alloc();
			if (!cpus[i][k])
				abort();
			/* The list passed shmr_config_validate(). */
			if (shmr_ctl_cpus_parse(q->cpus, cpus[i][k]) < 0)
				abort();
		}
	}
	resolve_group(cfg, "socket_group", cfg->socket_group, &g->have_group,
		      &g->group);
	resolve_group(cfg, "admin_group", cfg->admin_group,
		      &g->have_admin_group, &g->admin_group);
}
