/*
 * A router's pool (its routees, copies of one program) and the pool's
 * resizer, with Pekko's keys; the control plane fills in the resizer's
 * defaults and checks its ranges when it builds the pool.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libconfig.h>

#include "config_internal.h"
#include "resizer_conf.h"

/*
 * pool = { size = N; program = ...; args = [...]; cpus = ...; }: N routes
 * "<router>:0" .. "<router>:N-1" of one program (a router with a pool has
 * no routes of its own in the file).
 */
int shmr_conf_pool_parse(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const keys[] = { "size", "program", "args",
					    "cpus", NULL };
	config_setting_t *s;
	struct fpath f, pf;
	uint32_t size = 0;
	unsigned bad = 0;
	int given;
	int rc = shmr_conf_member(p, g, path, "pool", CONFIG_TYPE_GROUP, &s);

	if (rc <= 0)
		return rc;
	shmr_conf_fp_key(&pf, path, "pool");
	if (rt->behaviour == SHMR_BEH_TYPE || rt->behaviour == SHMR_BEH_HASH ||
	    rt->behaviour == SHMR_BEH_DSO)
		return shmr_conf_fail(p, s, 0, pf.s,
				      "a pool needs a routing logic (behaviour = \"round-robin\", ...)");
	if (config_setting_get_member(g, "routes")) {
		shmr_conf_fp_key(&f, path, "routes");
		return shmr_conf_fail(p, config_setting_get_member(g, "routes"), 0, f.s,
				      "a router with a pool has no routes of its own (its routees are the pool's)");
	}
	if ((rc = shmr_conf_check_keys(p, s, &pf, keys)) < 0)
		return rc;
	/* At most max_routes (validate.c holds a collecting router to
	 * less). */
	rc = shmr_conf_get_u32(p, s, &pf, "size", 0, p->max_routes, &size, NULL);
	if (rc < 0)
		return rc;
	given = rc > 0;
	if (rc == 0 && !rt->dso[0])
		return shmr_conf_missing(p, s, &pf, "size", "how many routees to start");
	rt->pool.line = config_setting_source_line(s);
	rt->pool.file = shmr_conf_file_of(p, s);
	if ((rc = shmr_conf_route_body(p, s, &pf, &rt->pool.tmpl)) < 0)
		return rc;
	if (given && size == 0) {
		/* Only with a resizer: shmr_conf_pool_start() checks. */
		rt->pool.empty = 1;
		return 0;
	}
	if (size == 0) {
		/* The dso's pool_size, read by the control plane at start. */
		rt->pool.size_from_dso = 1;
		return 0;
	}
	if (shmr_config_pool_expand(rt, size, &bad) < 0)
		return shmr_conf_fail(p, s, 0, pf.s,
				      "routee name \"%s:%u\" is too long (router names of a pool: at most %u characters)",
				      rt->name, bad, SHMR_NAME_MAX - 5);
	return 0;
}

int shmr_config_pool_expand(struct shmr_conf_router *rt, unsigned size,
			    unsigned *bad)
{
	char rname[SHMR_NAME_MAX];

	if (size == 0 || size > SHMR_MAX_ROUTES)
		return -EINVAL;
	/* A copy: GCC cannot tell that routes[i].name is not the router's
	 * name (-Wrestrict under the sanitizers). */
	memcpy(rname, rt->name, sizeof(rname));
	rname[sizeof(rname) - 1] = '\0';
	for (unsigned i = 0; i < size; i++) {
		struct shmr_conf_route *q = &rt->routes[i];
		int n;

		*q = rt->pool.tmpl;
		n = snprintf(q->name, sizeof(q->name), "%s:%u", rname, i);
		if (n < 0 || (size_t)n >= sizeof(q->name)) {
			if (bad)
				*bad = i;
			rt->nroutes = 0;
			return -ENAMETOOLONG;
		}
		q->line = rt->pool.line;
		q->file = rt->pool.file;
	}
	rt->pool.size = size;
	rt->nroutes = size;
	return 0;
}

/*
 * resizer = { ... } (Pekko's default resizer) or optimal_resizer = { ... }
 * (its optimal-size exploring one), for a pool; keys as Pekko's with '_'
 * for '-'.  Absent keys stay "unset" (INT_MIN, NaN, UINT64_MAX):
 * shmr_config_resizer_from_conf() (resizer_conf.c) fills in Pekko's
 * defaults and shmr_config_validate() checks the ranges.
 */
void shmr_config_resizer_unset(struct shmr_conf_resizer *z, int kind,
			       int line)
{
	z->kind = kind;
	z->line = line;
	z->lower_bound = z->upper_bound = INT_MIN;
	z->pressure_threshold = z->messages_per_resize = INT_MIN;
	z->optimization_range = INT_MIN;
	z->rampup_rate = z->backoff_threshold = z->backoff_rate = NAN;
	z->chance_of_ramping_down_when_full = z->explore_step_size = NAN;
	z->chance_of_exploration = z->downsize_ratio = NAN;
	z->weight_of_latest_metric = NAN;
	z->action_interval_ms = UINT64_MAX;
	z->downsize_after_underutilized_for_ms = UINT64_MAX;
}

int shmr_conf_resizer_parse(struct pctx *p, const config_setting_t *g,
			    const struct fpath *path,
			    struct shmr_conf_router *rt)
{
	static const char *const dkeys[] = {
		"lower_bound", "upper_bound", "pressure_threshold",
		"rampup_rate", "backoff_threshold", "backoff_rate",
		"messages_per_resize", NULL
	};
	static const char *const okeys[] = {
		"lower_bound", "upper_bound",
		"chance_of_ramping_down_when_full", "action_interval_ms",
		"downsize_after_underutilized_for_ms", "explore_step_size",
		"chance_of_exploration", "downsize_ratio", "optimization_range",
		"weight_of_latest_metric", NULL
	};
	struct shmr_conf_resizer *z = &rt->resizer;
	config_setting_t *d, *o, *s, *v;
	struct fpath f;
	int rc;

	if ((rc = shmr_conf_member(p, g, path, "resizer", CONFIG_TYPE_GROUP, &d)) < 0 ||
	    (rc = shmr_conf_member(p, g, path, "optimal_resizer", CONFIG_TYPE_GROUP,
				   &o)) < 0)
		return rc;
	if (!d && !o)
		return 0;
	s = d ? d : o;
	shmr_conf_fp_key(&f, path, o ? "optimal_resizer" : "resizer");
	if (d && o)
		return shmr_conf_fail(p, o, 0, f.s, "a pool has one resizer: resizer or optimal_resizer");
	shmr_conf_fp_key(&f, path, d ? "resizer" : "optimal_resizer");
	if (rt->pool.size == 0 && !rt->pool.size_from_dso && !rt->pool.empty)
		return shmr_conf_fail(p, s, 0, f.s, "only a pool (pool = { ... }) has a resizer");
	if (rt->behaviour == SHMR_BEH_BALANCING)
		return shmr_conf_fail(p, s, 0, f.s, SHMR_CONF_BALANCING_NO_RESIZER);
	if ((rc = shmr_conf_check_keys(p, s, &f, d ? dkeys : okeys)) < 0)
		return rc;
	shmr_config_resizer_unset(z, d ? SHMR_RESIZER_DEFAULT
				       : SHMR_RESIZER_OPTIMAL,
				  config_setting_source_line(s));
	z->file = shmr_conf_file_of(p, s);
	if ((rc = shmr_conf_get_int(p, s, &f, "lower_bound", 0,
				    (int)p->max_routes, &z->lower_bound)) < 0 ||
	    (rc = shmr_conf_get_int(p, s, &f, "upper_bound", 0,
				    (int)p->max_routes, &z->upper_bound)) < 0 ||
	    (rc = shmr_conf_get_int(p, s, &f, "pressure_threshold", -1000000,
				    1000000, &z->pressure_threshold)) < 0 ||
	    (rc = shmr_conf_get_int(p, s, &f, "messages_per_resize", 1,
				    1000000000, &z->messages_per_resize)) < 0 ||
	    (rc = shmr_conf_get_int(p, s, &f, "optimization_range", 2, 1000000,
				    &z->optimization_range)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "rampup_rate",
				       &z->rampup_rate)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "backoff_threshold",
				       &z->backoff_threshold)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "backoff_rate",
				       &z->backoff_rate)) < 0 ||
	    (rc = shmr_conf_get_double(
		     p, s, &f, "chance_of_ramping_down_when_full",
		     &z->chance_of_ramping_down_when_full)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "explore_step_size",
				       &z->explore_step_size)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "chance_of_exploration",
				       &z->chance_of_exploration)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "downsize_ratio",
				       &z->downsize_ratio)) < 0 ||
	    (rc = shmr_conf_get_double(p, s, &f, "weight_of_latest_metric",
				       &z->weight_of_latest_metric)) < 0)
		return rc;
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "downsize_after_underutilized_for_ms"
				    : "action_interval_ms";
		uint64_t *dst = i ? &z->downsize_after_underutilized_for_ms
				  : &z->action_interval_ms;

		if ((rc = shmr_conf_member(p, s, &f, key, CONFIG_TYPE_INT,
					   &v)) < 0)
			return rc;
		if (rc) {
			long long x = config_setting_get_int64(v);
			struct fpath kf;

			if (x < 1) {
				shmr_conf_fp_key(&kf, &f, key);
				return shmr_conf_fail(p, v, 0, kf.s,
						      "%lld is out of range (at least 1)",
						      x);
			}
			*dst = (uint64_t)x;
		}
	}
	return 0;
}

int shmr_conf_pool_start(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt)
{
	struct shmr_conf_resizer_cfg d;
	struct shmr_conf_optimal_cfg o;
	unsigned lo, want = rt->pool.size, bad = 0;
	struct fpath f;

	if (rt->resizer.kind == SHMR_RESIZER_NONE) {
		if (!rt->pool.empty)
			return 0;
		config_setting_t *pool = config_setting_get_member(g, "pool");
		struct fpath pf;

		shmr_conf_fp_key(&pf, path, "pool");
		shmr_conf_fp_key(&f, &pf, "size");
		return shmr_conf_fail(p, config_setting_get_member(pool, "size"),
				      0, f.s,
				      "0 needs a resizer (resizer = { lower_bound = 0; ... }): a pool without one has 1 to 32 routees");
	}
	if (rt->pool.size_from_dso ||
	    shmr_config_resizer_from_conf(&rt->resizer, &d, &o, NULL) < 0)
		return 0; /* the dso's size, or out of range: validate says */
	lo = (unsigned)(rt->resizer.kind == SHMR_RESIZER_DEFAULT
				? d.lower_bound
				: o.lower_bound);
	if (want >= lo)
		return 0;
	if (shmr_config_pool_expand(rt, lo, &bad) < 0) {
		shmr_conf_fp_key(&f, path, "pool");
		return shmr_conf_fail(p, config_setting_get_member(g, "pool"), 0,
				      f.s,
				      "routee name \"%s:%u\" is too long (router names of a pool: at most %u characters)",
				      rt->name, bad, SHMR_NAME_MAX - 5);
	}
	rt->pool.empty = 0;
	return 0;
}

/* Pekko's directives, in enum shmr_conf_supervisor's order. */
static const char *const supervisors[] = { "restart", "stop", "all-for-one",
					   "escalate" };

const char *shmr_config_supervisor_name(uint32_t s)
{
	return s < sizeof(supervisors) / sizeof(supervisors[0])
		       ? supervisors[s]
		       : "?";
}

int shmr_conf_supervisor_parse(struct pctx *p, const config_setting_t *g,
			       const struct fpath *path,
			       struct shmr_conf_router *rt)
{
	config_setting_t *s;
	struct fpath f;
	const char *v;
	int rc = shmr_conf_member(p, g, path, "supervisor", CONFIG_TYPE_STRING,
				  &s);

	if (rc <= 0)
		return rc;
	v = config_setting_get_string(s);
	for (uint32_t i = 0; i < sizeof(supervisors) / sizeof(supervisors[0]);
	     i++)
		if (strcmp(v, supervisors[i]) == 0) {
			rt->supervisor = i;
			return 0;
		}
	shmr_conf_fp_key(&f, path, "supervisor");
	return shmr_conf_fail(p, s, 0, f.s,
			      "unknown supervisor \"%s\" (expected \"restart\", \"stop\", \"all-for-one\" or \"escalate\")",
			      v);
}

int shmr_conf_supervisor_check(struct pctx *p, const config_setting_t *g,
			       const struct fpath *path,
			       const struct shmr_conf_router *rt)
{
	struct fpath f;

	/* A group's listed routees are started elsewhere: no exit of theirs
	 * reaches this router's supervision. */
	if (rt->supervisor == SHMR_SUPERVISOR_RESTART || rt->nroutes > 0 ||
	    rt->pool.size > 0 || rt->pool.empty || rt->pool.size_from_dso)
		return 0;
	shmr_conf_fp_key(&f, path, "supervisor");
	return shmr_conf_fail(p, config_setting_get_member(g, "supervisor"), 0,
			      f.s,
			      "the router starts no routees of its own (a pool or routes): nothing to supervise");
}
