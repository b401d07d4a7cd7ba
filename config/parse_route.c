/*
 * One route's settings, the same for a route of the file and for the
 * template of a pool's routees: program, args, cpus.  Its own file so that
 * routers (parse_routers.c) and pools (parse_pools.c) both use it and
 * neither calls back into the other.
 */
#include <stdio.h>

#include <libconfig.h>

#include "config_internal.h"

static int arg_elem(struct pctx *p, const config_setting_t *s,
		    const char *field, const char *val, unsigned i, void *arg)
{
	struct shmr_conf_route *r = arg;

	r->nargs = i + 1;
	return shmr_conf_copy_str(p, s, field, val, r->args[i],
				  SHMR_CONF_ARG_MAX);
}

/* What a route and a pool's routees share: program, args, cpus. */
int shmr_conf_route_body(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_route *r)
{
	config_setting_t *s;
	struct fpath f;
	int rc = shmr_conf_get_str(p, g, path, "program", r->program, sizeof(r->program),
				   &s);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, g, path, "program",
					 "the worker program to run");
	if (!r->program[0]) {
		shmr_conf_fp_key(&f, path, "program");
		return shmr_conf_fail(p, s, 0, f.s, "empty program");
	}
	if ((rc = shmr_conf_member(p, g, path, "args", CONFIG_TYPE_ARRAY, &s)) < 0)
		return rc;
	if (rc) {
		shmr_conf_fp_key(&f, path, "args");
		rc = shmr_conf_str_list(p, s, &f, SHMR_CONF_ARGS_MAX, "arguments",
					arg_elem, r);
		if (rc < 0)
			return rc;
	}
	return shmr_conf_get_cpus(p, g, path, "cpus", r->cpus);
}
