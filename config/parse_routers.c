/*
 * One router of the configuration: its name, its behaviour and what that
 * behaviour reads (type maps, a hash list, a dso, a routing logic's
 * routees and timings), its handlers, and its routes.  A route's own
 * settings are parse_route.c's, pools and resizers parse_pools.c's, the
 * readers of single settings parse_fields.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <libconfig.h>

#include "config_internal.h"

static int hash_elem(struct pctx *p, const config_setting_t *s,
		     const char *field, const char *val, unsigned i, void *arg)
{
	struct shmr_conf_router *r = arg;

	r->nhash = i + 1;
	return shmr_conf_copy_name(p, s, field, val, r->hash[i]);
}

static const char *const route_keys[] = {
	"name", "program", "args", "cpus", NULL
};

static int parse_route(struct pctx *p, const config_setting_t *g,
		       const struct fpath *path, struct shmr_conf_router *rt)
{
	struct shmr_conf_route *r = &rt->routes[rt->nroutes];
	config_setting_t *s;
	struct fpath f;
	int rc;

	r->line = config_setting_source_line(g);
	r->file = shmr_conf_file_of(p, g);
	if ((rc = shmr_conf_check_keys(p, g, path, route_keys)) < 0)
		return rc;
	if ((rc = shmr_conf_get_name(p, g, path, "name", "the route's name", r->name,
				     &s)) < 0)
		return rc;
	for (unsigned i = 0; i < rt->nroutes; i++)
		if (strcmp(rt->routes[i].name, r->name) == 0) {
			shmr_conf_fp_key(&f, path, "name");
			return shmr_conf_fail(p, s, 0, f.s,
					      "duplicate route name \"%s\" (first at line %d)",
					      r->name, rt->routes[i].line);
		}
	return shmr_conf_route_body(p, g, path, r);
}

/* One entry of a type map (types or call_types) of @p n entries so far. */
static int type_entry(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_type *map,
		      unsigned n, int *type_lines)
{
	static const char *const keys[] = { "type", "route", NULL };
	struct shmr_conf_type *t = &map[n];
	config_setting_t *s;
	struct fpath f;
	int rc;

	if ((rc = shmr_conf_check_keys(p, g, path, keys)) < 0)
		return rc;
	rc = shmr_conf_get_u32(p, g, path, "type", 1, UINT32_MAX, &t->type, &s);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, g, path, "type",
					 "the message type, a number > 0");
	for (unsigned i = 0; i < n; i++)
		if (map[i].type == t->type) {
			shmr_conf_fp_key(&f, path, "type");
			return shmr_conf_fail(p, s, 0, f.s,
					      "duplicate type %" PRIu32 " (first at line %d)",
					      t->type, type_lines[i]);
		}
	type_lines[n] = config_setting_source_line(s);
	return shmr_conf_get_name(p, g, path, "route",
				  "a route or registry name", t->route, NULL);
}

static const char *const router_keys[] = {
	"name", "behaviour", "types", "hash", "dso", "dso_arg", "routes",
	"call_types", "mailbox_full", "handlers", "handlers_arg", "routees",
	"virtual_nodes", "pool", "resizer", "optimal_resizer", "on_kill",
	"within_ms", "interval_ms", "keep_when_empty", "hash_key",
	"hash_mode", "node_prefix", "supervisor", NULL
};

/* Settings that belong to one behaviour only. */
static int not_for(struct pctx *p, const config_setting_t *g,
		   const struct fpath *path, const char *beh,
		   const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		config_setting_t *s = config_setting_get_member(g, *k);
		struct fpath f;

		if (s) {
			shmr_conf_fp_key(&f, path, *k);
			return shmr_conf_fail(p, s, 0, f.s,
					      "not used by behaviour \"%s\"", beh);
		}
	}
	return 0;
}

/* List @p lst of router @p rt's routes, routees or hash entries (@p what)
 * within what it may hold: max_routes, at most SHMR_COLLECT_ROUTEES_MAX
 * for a scatter-gather or tail-chopping router (shmr_config_routes_max());
 * the first entry past it is named.  0 or -EINVAL. */
static int routes_most(struct pctx *p, const config_setting_t *lst,
		       const struct fpath *f, const struct shmr_conf_router *rt,
		       const char *what)
{
	uint32_t n = shmr_config_routes_max(p->max_routes, rt->behaviour);

	return shmr_conf_list_most(p, lst, f, n, what,
				   n < p->max_routes
					   ? "the routees of a collecting router"
					   : "max_routes");
}

/*
 * Type map @p key ("types" or "call_types") into @p map / @p n.
 * Returns 1 when read, 0 when absent, -EINVAL when wrong or empty.
 */
static int type_map(struct pctx *p, const config_setting_t *g,
		    const struct fpath *path, const char *key,
		    struct shmr_conf_type *map, unsigned *n)
{
	int lines[SHMR_MAX_TYPES];
	config_setting_t *lst;
	char what[32];
	struct fpath f;
	int rc;

	rc = shmr_conf_member(p, g, path, key, CONFIG_TYPE_LIST, &lst);
	if (rc <= 0)
		return rc;
	shmr_conf_fp_key(&f, path, key);
	snprintf(what, sizeof(what), "%s entries", key);
	/* The first entry past max_types is named (at most SHMR_MAX_TYPES,
	 * the room of the map). */
	if ((rc = shmr_conf_list_most(p, lst, &f, p->max_types, what,
				      "max_types")) < 0)
		return rc;
	if ((rc = shmr_conf_group_list(p, lst, &f, SHMR_MAX_TYPES, what)) < 0)
		return rc;
	if (config_setting_length(lst) == 0)
		return shmr_conf_fail(p, lst, 0, f.s,
				      "a type map needs at least one entry ( { type = N; route = \"name\"; }, ... )");
	for (int i = 0; i < config_setting_length(lst); i++) {
		struct fpath e;

		shmr_conf_fp_index(&e, &f, (unsigned)i);
		rc = type_entry(p, config_setting_get_elem(lst, i), &e, map,
				*n, lines);
		if (rc < 0)
			return rc;
		(*n)++;
	}
	return 1;
}

static int parse_type_map(struct pctx *p, const config_setting_t *g,
			  const struct fpath *path,
			  struct shmr_conf_router *rt)
{
	static const char *const others[] = { "hash", "dso", "dso_arg",
					      "routees", "virtual_nodes",
					      "within_ms", "interval_ms",
					      NULL };
	int rc;

	if ((rc = not_for(p, g, path, "type", others)) < 0)
		return rc;
	rc = type_map(p, g, path, "types", rt->types, &rt->ntypes);
	if (rc == 0)
		return shmr_conf_missing(p, g, path, "types",
					 "behaviour \"type\" needs types = ( { type = N; route = \"name\"; }, ... )");
	return rc < 0 ? rc : 0;
}

static int parse_hash(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const others[] = { "types", "dso", "dso_arg",
					      "routees", "virtual_nodes",
					      "within_ms", "interval_ms",
					      NULL };
	config_setting_t *lst;
	struct fpath f;
	int rc;

	if ((rc = not_for(p, g, path, "hash", others)) < 0)
		return rc;
	rc = shmr_conf_member(p, g, path, "hash", CONFIG_TYPE_ARRAY, &lst);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, g, path, "hash",
					 "behaviour \"hash\" needs hash = [ \"name\", ... ]");
	shmr_conf_fp_key(&f, path, "hash");
	if (config_setting_length(lst) == 0)
		return shmr_conf_fail(p, lst, 0, f.s,
				      "behaviour \"hash\" needs at least one name");
	if ((rc = routes_most(p, lst, &f, rt, "hash entries")) < 0)
		return rc;
	return shmr_conf_str_list(p, lst, &f, SHMR_MAX_ROUTES, "hash entries", hash_elem,
				  rt);
}

static int parse_dso(struct pctx *p, const config_setting_t *g,
		     const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const others[] = { "types", "hash", "call_types",
					      "routees", "virtual_nodes",
					      "within_ms", "interval_ms",
					      NULL };
	int rc;

	if ((rc = not_for(p, g, path, "dso", others)) < 0)
		return rc;
	rc = shmr_conf_get_object(p, g, path, "dso", rt->dso);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, g, path, "dso",
					 "behaviour \"dso\" needs dso = \"path/to/behaviour.so\"");
	rc = shmr_conf_get_str(p, g, path, "dso_arg", rt->dso_arg, sizeof(rt->dso_arg),
			       NULL);
	return rc < 0 ? rc : 0;
}

/* The routing logics, as the configuration spells them. */
static const struct {
	const char *name;
	uint32_t behaviour;
} logics[] = {
	{ "round-robin", SHMR_BEH_ROUND_ROBIN },
	{ "random", SHMR_BEH_RANDOM },
	{ "smallest-mailbox", SHMR_BEH_SMALLEST_MAILBOX },
	{ "broadcast", SHMR_BEH_BROADCAST },
	{ "consistent-hash", SHMR_BEH_CONSISTENT_HASH },
	{ "scatter-gather", SHMR_BEH_SCATTER_GATHER },
	{ "tail-chopping", SHMR_BEH_TAIL_CHOPPING },
	{ "balancing", SHMR_BEH_BALANCING },
};

uint32_t shmr_config_logic_kind(const char *name)
{
	if (!name)
		return 0;
	for (unsigned i = 0; i < sizeof(logics) / sizeof(logics[0]); i++)
		if (strcmp(name, logics[i].name) == 0)
			return logics[i].behaviour;
	return 0;
}

#define BEHAVIOURS                                                        \
	"\"type\", \"hash\", \"dso\", \"round-robin\", \"random\", "          \
	"\"smallest-mailbox\", \"broadcast\", \"consistent-hash\", "           \
	"\"scatter-gather\", \"tail-chopping\" or \"balancing\""

static int routee_elem(struct pctx *p, const config_setting_t *s,
		       const char *field, const char *val, unsigned i,
		       void *arg)
{
	struct shmr_conf_router *r = arg;
	int rc = shmr_conf_copy_name(p, s, field, val, r->hash[i]);

	if (rc < 0)
		return rc;
	for (unsigned j = 0; j < i; j++)
		if (strcmp(r->hash[j], r->hash[i]) == 0)
			return shmr_conf_fail(p, s, 0, field,
					      "duplicate routee name \"%s\" (first at .[%u])",
					      val, j);
	r->nhash = i + 1;
	return 0;
}

/*
 * within_ms (and, for tail-chopping, interval_ms) of a scatter-gather or
 * tail-chopping router, as Pekko's: left out, within_ms is
 * SHMR_WITHIN_MS_DEFAULT (5 s) and interval_ms SHMR_INTERVAL_MS_DEFAULT
 * (10 ms, or within_ms when that is shorter).  Given, within_ms is 1 to
 * SHMR_WITHIN_MS_MAX and interval_ms 1 to within_ms.
 */
static int parse_timing(struct pctx *p, const config_setting_t *g,
			const struct fpath *path, struct shmr_conf_router *rt,
			const char *beh)
{
	static const char *const interval_key[] = { "interval_ms", NULL };
	int tail = rt->behaviour == SHMR_BEH_TAIL_CHOPPING;
	config_setting_t *s;
	struct fpath f;
	int given, rc;

	rc = shmr_conf_get_u32(p, g, path, "within_ms", 1, SHMR_WITHIN_MS_MAX,
			       &rt->within_ms, NULL);
	if (rc < 0)
		return rc;
	given = rc > 0;
	if (!given)
		rt->within_ms = SHMR_WITHIN_MS_DEFAULT;
	if (!tail)
		return not_for(p, g, path, beh, interval_key);
	rc = shmr_conf_member(p, g, path, "interval_ms", CONFIG_TYPE_INT, &s);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		rt->interval_ms = shmr_config_interval_default(rt->within_ms);
		return 0;
	}
	rc = shmr_conf_get_u32(p, g, path, "interval_ms", 1, rt->within_ms,
			       &rt->interval_ms, NULL);
	if (rc < 0) {
		/* Say why the upper end is what it is. */
		long long v = config_setting_get_int64(s);

		if (v > (long long)rt->within_ms) {
			shmr_conf_fp_key(&f, path, "interval_ms");
			return shmr_conf_fail(p, s, 0, f.s,
					      "%lld is longer than within_ms (%" PRIu32
					      "%s): every routee after the first would be tried too late",
					      v, rt->within_ms,
					      given ? "" : ", the default");
		}
	}
	return rc < 0 ? rc : 0;
}

/* An optional routee list ("routees", not empty): absent, the router's
 * own routes are its routees. */
static int parse_routees(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt)
{
	config_setting_t *lst;
	struct fpath f;
	int rc = shmr_conf_member(p, g, path, "routees", CONFIG_TYPE_ARRAY, &lst);

	if (rc <= 0)
		return rc;
	shmr_conf_fp_key(&f, path, "routees");
	if (config_setting_length(lst) == 0)
		return shmr_conf_fail(p, lst, 0, f.s,
				      "needs at least one name (leave it out to use the router's own routes)");
	if ((rc = routes_most(p, lst, &f, rt, "routees")) < 0)
		return rc;
	return shmr_conf_str_list(p, lst, &f, SHMR_MAX_ROUTES, "routees", routee_elem,
				  rt);
}

/*
 * A routing logic @p beh: an optional routee list (absent: the router's
 * own routes, in order); for consistent-hash only, virtual_nodes; for
 * scatter-gather and tail-chopping, within_ms (and interval_ms).  Those
 * two and balancing route calls themselves: no call_types.  Balancing's
 * routees are its pool's: no routee list (parse_router checks the pool).
 */
static int parse_logic(struct pctx *p, const config_setting_t *g,
		       const struct fpath *path, struct shmr_conf_router *rt,
		       const char *beh)
{
	static const char *const others[] = { "types", "hash", NULL };
	static const char *const chash_only[] = { "virtual_nodes", NULL };
	static const char *const timing[] = { "within_ms", "interval_ms",
					      NULL };
	static const char *const own_calls[] = { "call_types", NULL };
	static const char *const balancing[] = { "routees", NULL };
	int collect = rt->behaviour == SHMR_BEH_SCATTER_GATHER ||
		      rt->behaviour == SHMR_BEH_TAIL_CHOPPING;
	struct fpath f;
	int rc;

	if ((rc = not_for(p, g, path, beh, others)) < 0)
		return rc;
	/* A dso: its defaults (and consistent-hash's key function). */
	if ((rc = shmr_conf_get_object(p, g, path, "dso", rt->dso)) < 0)
		return rc;
	if (rc == 0 && config_setting_get_member(g, "dso_arg")) {
		shmr_conf_fp_key(&f, path, "dso_arg");
		return shmr_conf_fail(p, config_setting_get_member(g, "dso_arg"), 0, f.s,
				      "needs dso = \"path/to/object.so\"");
	}
	if ((rc = shmr_conf_get_str(p, g, path, "dso_arg", rt->dso_arg,
				    sizeof(rt->dso_arg), NULL)) < 0)
		return rc;
	if (rt->behaviour == SHMR_BEH_CONSISTENT_HASH) {
		/* Left out: the default, or the dso's (0 until the control
		 * plane reads it). */
		rt->vnodes = rt->dso[0] ? 0 : SHMR_CHASH_VNODES_DEFAULT;
		rc = shmr_conf_get_u32(p, g, path, "virtual_nodes", 1,
				       SHMR_CHASH_VNODES_MAX, &rt->vnodes,
				       NULL);
		if (rc < 0)
			return rc;
	} else if ((rc = not_for(p, g, path, beh, chash_only)) < 0) {
		return rc;
	}
	if (collect)
		rc = parse_timing(p, g, path, rt, beh);
	else
		rc = not_for(p, g, path, beh, timing);
	if (rc < 0)
		return rc;
	if ((collect || rt->behaviour == SHMR_BEH_BALANCING) &&
	    (rc = not_for(p, g, path, beh, own_calls)) < 0)
		return rc;
	if (rt->behaviour == SHMR_BEH_BALANCING)
		return not_for(p, g, path, beh, balancing);
	return parse_routees(p, g, path, rt);
}

/*
 * No behaviour, but a dso: the object's logic (or its route_message) decides,
 * and the control plane reads it at start (struct shmr_behaviour).  What
 * the file gives is checked here as far as it can be without the object:
 * the settings of some routing logic, each in range; which of them the
 * logic really uses is checked once it is known.
 */
static int parse_from_dso(struct pctx *p, const config_setting_t *g,
			  const struct fpath *path,
			  struct shmr_conf_router *rt)
{
	static const char *const others[] = { "types", "hash", NULL };
	int rc;

	if ((rc = not_for(p, g, path, "dso", others)) < 0)
		return rc;
	if ((rc = shmr_conf_get_object(p, g, path, "dso", rt->dso)) < 0)
		return rc;
	if ((rc = shmr_conf_get_str(p, g, path, "dso_arg", rt->dso_arg,
				    sizeof(rt->dso_arg), NULL)) < 0)
		return rc;
	rt->behaviour = SHMR_CONF_BEH_FROM_DSO;
	if ((rc = shmr_conf_get_u32(p, g, path, "virtual_nodes", 1,
				    SHMR_CHASH_VNODES_MAX, &rt->vnodes,
				    NULL)) < 0 ||
	    (rc = shmr_conf_get_u32(p, g, path, "within_ms", 1,
				    SHMR_WITHIN_MS_MAX, &rt->within_ms,
				    NULL)) < 0 ||
	    (rc = shmr_conf_get_u32(p, g, path, "interval_ms", 1,
				    rt->within_ms ? rt->within_ms
						  : SHMR_WITHIN_MS_MAX,
				    &rt->interval_ms, NULL)) < 0)
		return rc;
	return parse_routees(p, g, path, rt);
}

/*
 * keep_when_empty = true | false (default false): a group (a routing
 * logic over a "routees" list) that loses its last routee stops, as
 * Pekko's does, unless this says to keep it.  Only for a group: a pool
 * keeps its size by its resizer, and type, hash and dso routers have no
 * routee list.
 */
static int parse_keep_when_empty(struct pctx *p, const config_setting_t *g,
				 const struct fpath *path,
				 struct shmr_conf_router *rt)
{
	config_setting_t *s;
	struct fpath f;
	int rc = shmr_conf_member(p, g, path, "keep_when_empty",
				  CONFIG_TYPE_BOOL, &s);

	if (rc <= 0)
		return rc;
	if (rt->nhash == 0 || rt->behaviour == SHMR_BEH_TYPE ||
	    rt->behaviour == SHMR_BEH_HASH || rt->behaviour == SHMR_BEH_DSO) {
		shmr_conf_fp_key(&f, path, "keep_when_empty");
		return shmr_conf_fail(p, s, 0, f.s,
				      "only for a group (a routing logic with routees = [ ... ])");
	}
	rt->keep_when_empty = config_setting_get_bool(s) != 0;
	return 0;
}

int shmr_conf_router_parse(struct pctx *p, const config_setting_t *g,
			   const struct fpath *path, struct shmr_config *c)
{
	struct shmr_conf_router *rt = &c->routers[c->nrouters];
	config_setting_t *s, *lst;
	const char *beh;
	struct fpath f;
	int rc;

	rt->line = config_setting_source_line(g);
	rt->file = shmr_conf_file_of(p, g);
	if ((rc = shmr_conf_check_keys(p, g, path, router_keys)) < 0)
		return rc;
	if ((rc = shmr_conf_get_name(p, g, path, "name", "the router's name", rt->name,
				     &s)) < 0)
		return rc;
	for (unsigned i = 0; i < c->nrouters; i++)
		if (strcmp(c->routers[i].name, rt->name) == 0) {
			shmr_conf_fp_key(&f, path, "name");
			return shmr_conf_fail(p, s, 0, f.s,
					      "duplicate router name \"%s\" (first at line %d)",
					      rt->name, c->routers[i].line);
		}

	rc = shmr_conf_member(p, g, path, "behaviour", CONFIG_TYPE_STRING, &s);
	if (rc < 0)
		return rc;
	if (rc == 0 && !config_setting_get_member(g, "dso"))
		return shmr_conf_missing(p, g, path, "behaviour",
					 BEHAVIOURS ", or a dso that names one");
	beh = rc ? config_setting_get_string(s) : NULL;
	if (!beh) {
		rc = parse_from_dso(p, g, path, rt);
	} else if (strcmp(beh, "type") == 0) {
		rt->behaviour = SHMR_BEH_TYPE;
		rc = parse_type_map(p, g, path, rt);
	} else if (strcmp(beh, "hash") == 0) {
		rt->behaviour = SHMR_BEH_HASH;
		rc = parse_hash(p, g, path, rt);
	} else if (strcmp(beh, "dso") == 0) {
		rt->behaviour = SHMR_BEH_DSO;
		rc = parse_dso(p, g, path, rt);
	} else {
		rc = 1;
		for (unsigned i = 0; i < sizeof(logics) / sizeof(logics[0]);
		     i++)
			if (strcmp(beh, logics[i].name) == 0) {
				rt->behaviour = logics[i].behaviour;
				rc = parse_logic(p, g, path, rt, beh);
				break;
			}
		if (rc == 1) {
			shmr_conf_fp_key(&f, path, "behaviour");
			rc = shmr_conf_fail(p, s, 0, f.s,
					    "unknown behaviour \"%s\" (expected "
					    BEHAVIOURS ")",
					    beh);
		}
	}
	if (rc < 0)
		return rc;
	if (rt->behaviour == SHMR_BEH_CONSISTENT_HASH)
		rc = shmr_conf_chash_parse(p, g, path, c->slot_size, rt);
	else
		rc = not_for(p, g, path, beh ? beh : "dso",
			     shmr_conf_chash_keys());
	if (rc < 0)
		return rc;
	/* Calls by type, sends by the behaviour (every built-in one; a dso
	 * routes calls itself, and refused call_types above). */
	if (rt->behaviour != SHMR_BEH_DSO) {
		rc = type_map(p, g, path, "call_types", rt->call_types,
			      &rt->ncall_types);
		if (rc < 0)
			return rc;
	}

	/* The admin path's handlers: a shared object of their own, else the
	 * behaviour's when it is one (it may have none: the defaults). */
	rc = shmr_conf_get_object(p, g, path, "handlers", rt->handlers);
	if (rc < 0)
		return rc;
	if (rc == 0 && rt->behaviour == SHMR_BEH_DSO)
		memcpy(rt->handlers, rt->dso, sizeof(rt->handlers));
	rc = shmr_conf_get_str(p, g, path, "handlers_arg", rt->handlers_arg,
			       sizeof(rt->handlers_arg), NULL);
	if (rc < 0)
		return rc;
	if (rc == 0 && rt->behaviour == SHMR_BEH_DSO &&
	    strcmp(rt->handlers, rt->dso) == 0)
		memcpy(rt->handlers_arg, rt->dso_arg,
		       sizeof(rt->handlers_arg));

	if ((rc = shmr_conf_get_choice(p, g, path, "on_kill", "restart", "stop",
				       &rt->on_kill_stop)) < 0 ||
	    (rc = shmr_conf_pool_parse(p, g, path, rt)) < 0 ||
	    (rc = shmr_conf_resizer_parse(p, g, path, rt)) < 0 ||
	    (rc = shmr_conf_pool_start(p, g, path, rt)) < 0 ||
	    (rc = parse_keep_when_empty(p, g, path, rt)) < 0 ||
	    (rc = shmr_conf_supervisor_parse(p, g, path, rt)) < 0 ||
	    (rc = shmr_conf_get_choice(p, g, path, "mailbox_full", "backpressure",
				       "fail", &rt->fail_when_full)) < 0)
		return rc;

	/* Pekko's BalancingPool has no group variant: the dataplane hands
	 * work to routees it knows the inboxes of, a pool's. */
	if (rt->behaviour == SHMR_BEH_BALANCING && rt->pool.size == 0 &&
	    !rt->pool.size_from_dso && !rt->pool.empty) {
		shmr_conf_fp_key(&f, path, "pool");
		return shmr_conf_fail(p, g, 0, f.s,
				      "behaviour \"balancing\" needs a pool (pool = { size = N; program = \"...\"; }): there is no balancing group");
	}

	/* No routes is a "free" router: every name resolves through the
	 * registry. */
	rc = shmr_conf_member(p, g, path, "routes", CONFIG_TYPE_LIST, &lst);
	if (rc <= 0)
		return rc < 0 ? rc : shmr_conf_supervisor_check(p, g, path, rt);
	shmr_conf_fp_key(&f, path, "routes");
	if ((rc = shmr_conf_group_list(p, lst, &f, SHMR_MAX_ROUTES, "routes")) < 0 ||
	    (rc = routes_most(p, lst, &f, rt, "routes")) < 0)
		return rc;
	for (int i = 0; i < config_setting_length(lst); i++) {
		struct fpath e;

		shmr_conf_fp_index(&e, &f, (unsigned)i);
		rc = parse_route(p, config_setting_get_elem(lst, i), &e, rt);
		if (rc < 0)
			return rc;
		rt->nroutes++;
	}
	return shmr_conf_supervisor_check(p, g, path, rt);
}
