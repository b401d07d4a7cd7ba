/*
 * Validation in one place.  The parser checks every setting as it reads
 * it (parse*.c, with the rules on values below), so that the one error
 * line names the file, line and field; what can only be checked once the
 * whole configuration is known, and once a router's behaviour object has
 * filled in what the file leaves to it (dso_defaults.c), is checked here
 * by shmr_config_validate(): the geometry, the domain's name, the cpu
 * lists (by parse_fields.c's rule), the pools' resizers (resizer_conf.c) and the endpoint slots.
 * shmr_config_load() does all three in order, so that shmr-control only
 * applies what it is given.  The parse is over by then, and libconfig's
 * tree with it: each router, route, pool and resizer keeps the file its
 * line is in (shmr_config_file()), so that a setting an @include'd file
 * gives is named in that file, as the parser names it.
 *
 * Nothing here touches the system beyond opening behaviour objects (no
 * DPDK, no hwloc, no group database): whether a program is installed, a
 * cpu exists or a group is known is for the control plane to find out.
 * The cpus it may use it reads itself and hands to shmr_config_cpus_fit(),
 * which names the setting as the rest of this file does.
 */
#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <shmr/cpulist.h>
#include <shmr/geometry.h>
#include <shmr/layout.h>

#include "config_internal.h"
#include "dso_defaults.h"
#include "resizer_conf.h"

/* A name as the control socket and the spec take it: 1 to
 * SHMR_NAME_MAX - 1 characters of [A-Za-z0-9_.:-]. */
static bool name_ok(const char *s)
{
	size_t n = strnlen(s, SHMR_NAME_MAX);

	if (n == 0 || n >= SHMR_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!shmr_conf_name_char(s[i]))
			return false;
	return true;
}

__attribute__((format(printf, 3, 4)))
static int invalid(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * Router @p i's resizer, as its pool will run it: Pekko's defaults under
 * what the file (or the router's dso) set, in range.  The key at fault is
 * named as this configuration spells it (Pekko's, dashes as underscores).
 */
static int resizer_valid(const struct shmr_config *cfg, unsigned i,
			 char *err, size_t errlen)
{
	const struct shmr_conf_resizer *z = &cfg->routers[i].resizer;
	struct shmr_conf_resizer_cfg d;
	struct shmr_conf_optimal_cfg o;
	const char *field = "?";
	char key[64];

	if (shmr_config_resizer_from_conf(z, &d, &o, &field) == 0)
		return 0;
	/* Pekko's key, as this configuration spells it. */
	snprintf(key, sizeof(key), "%s", field);
	for (char *k = key; *k; k++)
		if (*k == '-')
			*k = '_';
	return invalid(err, errlen,
		       "%s:%d: routers.[%u].%s.%s: out of range (see "
		       "docs/pools.md)",
		       shmr_config_file(cfg, z->file), z->line, i,
		       z->kind == SHMR_RESIZER_DEFAULT ? "resizer"
						       : "optimal_resizer",
		       key);
}

/*
 * Every router and every route (a pool's routees included) takes one of
 * the domain's max_endpoints endpoint slots, routers first, as
 * shmr-control's model allocates them; the admin endpoint, allocated at
 * start once they all are, takes one more (shmr.conf(5)), so a file that
 * fills every slot with routers and routes cannot start.  The error names
 * the pool's size, or the first route, that does not fit.
 */
static int endpoints_fit(const struct shmr_config *cfg, char *err,
			 size_t errlen)
{
	unsigned used = cfg->nrouters + 1, n = shmr_config_endpoints(cfg);

	/* max_routers may exceed max_endpoints: router n - 1 would take the
	 * admin endpoint's slot. */
	if (used > n)
		return invalid(err, errlen,
			       "%s:%d: routers.[%u]: more routers than "
			       "endpoint slots (the domain has %u, one of "
			       "them the admin endpoint's)",
			       shmr_config_file(cfg, cfg->routers[n - 1].file),
			       cfg->routers[n - 1].line, n - 1, n);
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		const struct shmr_conf_router *rt = &cfg->routers[i];

		if (rt->nroutes <= n - used) {
			used += rt->nroutes;
			continue;
		}
		if (rt->pool.size)
			return invalid(err, errlen,
				       "%s:%d: routers.[%u].pool.size: more "
				       "routers and routes than endpoint slots "
				       "(the domain has %u, one of them the "
				       "admin endpoint's)",
				       shmr_config_file(cfg, rt->pool.file),
				       rt->pool.line, i, n);
		return invalid(err, errlen,
			       "%s:%d: routers.[%u].routes.[%u]: more routers "
			       "and routes than endpoint slots (the domain "
			       "has %u, one of them the admin endpoint's)",
			       shmr_config_file(cfg, rt->routes[n - used].file),
			       rt->routes[n - used].line, i, n - used, n);
	}
	return 0;
}

/*
 * Every router holds at most max_routes routes and as many names in its
 * hash or routees list (a scatter-gather or tail-chopping router at most
 * SHMR_COLLECT_ROUTEES_MAX: shmr_config_routes_max()).  The error names
 * the key and the count, at the first route past the limit (a pool: its
 * size).
 */
static int routes_fit(const struct shmr_config *cfg, char *err, size_t errlen)
{
	/* Both in range: shmr_geometry_check() came first. */
	uint32_t mr = shmr_config_routes(cfg);
	uint32_t nr = shmr_config_routers(cfg);

	if (cfg->nrouters > nr)
		return invalid(err, errlen,
			       "%s:%d: routers.[%u]: %u routers, more than "
			       "max_routers (%u)",
			       shmr_config_file(cfg, cfg->routers[nr].file),
			       cfg->routers[nr].line, nr,
			       cfg->nrouters, nr);

	for (unsigned i = 0; i < cfg->nrouters; i++) {
		const struct shmr_conf_router *rt = &cfg->routers[i];
		uint32_t n = shmr_config_routes_max(mr, rt->behaviour);
		const char *lim = n < mr ? "the routees of a collecting router"
					 : "max_routes";

		if (rt->nroutes > n && rt->pool.size)
			return invalid(err, errlen,
				       "%s:%d: routers.[%u].pool.size: %u "
				       "routes, more than %s (%u)",
				       shmr_config_file(cfg, rt->pool.file),
				       rt->pool.line, i, rt->nroutes, lim, n);
		if (rt->nroutes > n)
			return invalid(err, errlen,
				       "%s:%d: routers.[%u].routes.[%u]: %u "
				       "routes, more than %s (%u)",
				       shmr_config_file(cfg,
							rt->routes[n].file),
				       rt->routes[n].line, i, n, rt->nroutes,
				       lim, n);
		if (rt->nhash > n)
			return invalid(err, errlen,
				       "%s:%d: routers.[%u].%s: %u names, "
				       "more than %s (%u)",
				       shmr_config_file(cfg, rt->file),
				       rt->line, i,
				       rt->behaviour == SHMR_BEH_HASH
					       ? "hash"
					       : "routees",
				       rt->nhash, lim, n);
	}
	return 0;
}

/* The first cpu of a list that is not in the host's set. */
struct cpu_miss {
	const cpu_set_t *host;
	unsigned cpu;
};

static int not_on_host(unsigned lo, unsigned hi, void *arg)
{
	struct cpu_miss *m = arg;

	for (unsigned c = lo; c <= hi; c++)
		if (c >= CPU_SETSIZE || !CPU_ISSET(c, m->host)) {
			m->cpu = c;
			return 1;
		}
	return 0;
}

/* @p host as a cpu list ("0-1", "0,2-3") into @p buf, cut short with
 * "..." when it does not fit. */
static const char *host_list(const cpu_set_t *host, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		unsigned e = c;
		int w;

		if (!CPU_ISSET(c, host))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, host))
			e++;
		w = e > c ? snprintf(buf + n, cap - n, "%s%u-%u",
				     n ? "," : "", c, e)
			  : snprintf(buf + n, cap - n, "%s%u", n ? "," : "",
				     c);
		if (w < 0 || (size_t)w >= cap - n) {
			snprintf(buf + (n < cap - 4 ? n : cap - 4), 4, "...");
			break;
		}
		n += (size_t)w;
		c = e;
	}
	return buf;
}

/* List @p list (already of the grammar) against @p host: 0, or -EINVAL
 * naming @p field at @p file:@p line. */
static int list_fits(const struct shmr_config *cfg, const char *list,
		     const cpu_set_t *host, unsigned file, int line,
		     const char *field, char *err, size_t errlen)
{
	struct cpu_miss m = { .host = host };
	char have[128];

	if (shmr_cpulist_parse(list, not_on_host, &m, NULL) != 1)
		return 0;
	return invalid(err, errlen,
		       "%s:%d: %s: cpu %u is not one this host lets "
		       "shmr-control run on (it has %s)",
		       shmr_config_file(cfg, file), line > 0 ? line : 1, field,
		       m.cpu, host_list(host, have, sizeof(have)));
}

int shmr_config_cpus_fit(const struct shmr_config *cfg, const cpu_set_t *host,
			 char *err, size_t errlen)
{
	char field[96];

	if (err && errlen)
		err[0] = '\0';
	if (list_fits(cfg, cfg->dataplane_cpus, host,
		      cfg->dataplane_cpus_file, cfg->dataplane_cpus_line,
		      "dataplane_cpus", err, errlen) < 0)
		return -EINVAL;
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		const struct shmr_conf_router *rt = &cfg->routers[i];

		for (unsigned k = 0; k < rt->nroutes; k++) {
			const struct shmr_conf_route *q = &rt->routes[k];

			/* A pool's routees are its template's copies. */
			if (rt->pool.size)
				snprintf(field, sizeof(field),
					 "routers.[%u].pool.cpus", i);
			else
				snprintf(field, sizeof(field),
					 "routers.[%u].routes.[%u].cpus", i, k);
			if (list_fits(cfg, q->cpus, host, q->file, q->line,
				      field, err, errlen) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

void shmr_config_geometry(const struct shmr_config *cfg,
			  struct shmr_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->slot_size = cfg->slot_size;
	g->lane_size = cfg->lane_size;
	g->nlcores = cfg->lcores;
	g->poll_mode = cfg->poll_mode;
	g->max_endpoints = shmr_config_endpoints(cfg);
	g->max_names = shmr_config_names(cfg);
	g->max_types = shmr_config_types(cfg);
	g->max_routers = shmr_config_routers(cfg);
	g->max_routes = shmr_config_routes(cfg);
}

int shmr_config_validate(const struct shmr_config *cfg, char *err,
			 size_t errlen)
{
	struct shmr_geometry g;
	char why_buf[256];
	const char *why;

	shmr_config_geometry(cfg, &g);
	if (err && errlen)
		err[0] = '\0';
	if (shmr_geometry_check(&g, &why) < 0 ||
	    shmr_arena_geo_check(&cfg->arena, &why) < 0)
		return invalid(err, errlen, "%s: domain: %s", cfg->source, why);
	if (!name_ok(cfg->domain))
		return invalid(err, errlen, "%s: domain: bad domain name '%s'",
			       cfg->source, cfg->domain);
	if (shmr_conf_cpulist_why(cfg->dataplane_cpus, why_buf,
				  sizeof(why_buf)))
		return invalid(err, errlen,
			       "%s: dataplane_cpus: bad cpu list '%s'",
			       cfg->source, cfg->dataplane_cpus);
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		for (unsigned k = 0; k < cfg->routers[i].nroutes; k++) {
			const struct shmr_conf_route *q =
				&cfg->routers[i].routes[k];

			if (shmr_conf_cpulist_why(q->cpus, why_buf,
						  sizeof(why_buf)))
				return invalid(err, errlen,
					       "%s:%d: cpus: bad cpu list '%s'",
					       shmr_config_file(cfg, q->file),
					       q->line, q->cpus);
		}
	}
	for (unsigned i = 0; i < cfg->nrouters; i++)
		if (resizer_valid(cfg, i, err, errlen) < 0)
			return -EINVAL;
	if (routes_fit(cfg, err, errlen) < 0)
		return -EINVAL;
	return endpoints_fit(cfg, err, errlen);
}

int shmr_config_load(const char *path, struct shmr_config *out, char *err,
		     size_t errlen)
{
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (path)
		rc = shmr_config_load_file(path, out, err, errlen);
	else
		rc = shmr_config_load_string(shmr_config_default_text(),
					     "<default>", out, err, errlen);
	if (rc < 0) {
		/* The parser holds nothing on error. */
		if (err && errlen && !err[0])
			snprintf(err, errlen, "%s: %s",
				 path ? path : "<default>", strerror(-rc));
		return rc;
	}
	/* What the file leaves to a router's dso, before the whole is
	 * checked and anything is built from the routers. */
	rc = shmr_config_dso_defaults(out, err, errlen);
	if (rc == 0)
		rc = shmr_config_validate(out, err, errlen);
	if (rc < 0)
		shmr_config_free(out);
	return rc;
}
