/*
 * A behaviour shared object's defaults for its router (see dso_defaults.h and
 * struct shmr_behaviour in <shmr/behaviour.h>): the configuration file
 * wins, the object fills in what the file leaves out.
 *
 * Every object a router names (its dso, and its handlers when they are an
 * object of their own) is opened here, whether or not the router leaves
 * anything to it: --check would otherwise pass a file whose object is
 * missing as long as the file said everything itself, and the start then
 * fail (exit 1) in the dataplane or the handlers' loader, naming no
 * setting.  Opening is all: init() is the dataplane's and the handlers'.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <shmr/behaviour.h>
#include <shmr/layout.h>

#include "dso_defaults.h"

/* What one object offers, copied out before it is closed. */
struct offer {
	int routes_itself; /* route_message or route_call */
	int has_logic;
	char logic[64];    /* as the object spells it (cut if longer) */
	uint32_t pool_size, virtual_nodes;
	int has_resizer;
	char resizer[32];  /* as the object spells it (cut if longer) */
};

/* One line "file:line: routers.[i].field: message" into @p err; @p file
 * is the setting's index (shmr_config_file()). */
__attribute__((format(printf, 8, 9)))
static int say(const struct shmr_config *cfg, unsigned file, int line,
	       unsigned i, const char *field, char *err, size_t errlen,
	       const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen) {
		snprintf(err, errlen, "%s:%d: routers.[%u].%s: %s",
			 shmr_config_file(cfg, file), line > 0 ? line : 1, i,
			 field, msg);
		for (char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	}
	return -EINVAL;
}

/* Open router @p i's object and copy what it offers into @p o. */
static int read_offer(const struct shmr_config *cfg, unsigned i,
		      struct offer *o, char *err, size_t errlen)
{
	const struct shmr_conf_router *rt = &cfg->routers[i];
	const struct shmr_behaviour *b;
	const char *why;
	void *dl;
	int rc;

	memset(o, 0, sizeof(*o));
	dl = dlopen(rt->dso, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		why = dlerror();
		say(cfg, rt->file, rt->line, i,
		    "dso", err, errlen, "cannot load: %s",
		    why ? why : "dlopen failed");
		return -ENOENT;
	}
	b = dlsym(dl, "shmr_behaviour");
	if (!b) {
		say(cfg, rt->file, rt->line, i, "dso", err, errlen,
		    "%s has no symbol shmr_behaviour", rt->dso);
		rc = -ENOENT;
		goto out;
	}
	if (b->abi < 1 || b->abi > SHMR_BEHAVIOUR_ABI) {
		say(cfg, rt->file, rt->line, i, "dso", err, errlen,
		    "%s has ABI %u (this control plane reads 1 to %u)",
		    rt->dso, b->abi, SHMR_BEHAVIOUR_ABI);
		rc = -EPROTO;
		goto out;
	}
	o->routes_itself = b->route_message || b->route_call;
	/* ABI 1 ends at route_call: nothing past it is read. */
	if (b->abi >= 2) {
		if (b->logic) {
			o->has_logic = 1;
			snprintf(o->logic, sizeof(o->logic), "%s", b->logic);
		}
		o->pool_size = b->pool_size;
		o->virtual_nodes = b->virtual_nodes;
		if (b->resizer) {
			o->has_resizer = 1;
			snprintf(o->resizer, sizeof(o->resizer), "%s",
				 b->resizer);
		}
	}
	rc = 0;
out:
	dlclose(dl);
	return rc;
}

/* Router @p i's handlers object (one of its own, not its dso: read_offer()
 * opens that) can be loaded; what it holds is the handlers' loader's to
 * check (control/handlers.c), which runs its init(). */
static int can_open(const struct shmr_config *cfg, unsigned i, char *err,
		    size_t errlen)
{
	const struct shmr_conf_router *rt = &cfg->routers[i];
	const char *why;
	void *dl = dlopen(rt->handlers, RTLD_NOW | RTLD_LOCAL);

	if (dl) {
		dlclose(dl);
		return 0;
	}
	why = dlerror();
	say(cfg, rt->file, rt->line, i, "handlers", err, errlen,
	    "cannot load: %s", why ? why : "dlopen failed");
	return -ENOENT;
}

/* Whether logic @p beh uses the settings @p rt gives (filling in the
 * timing it leaves out); 0 or -EINVAL. */
static int fits_logic(const struct shmr_config *cfg, unsigned i,
		      struct shmr_conf_router *rt, const char *logic,
		      char *err, size_t errlen)
{
	uint32_t beh = rt->behaviour;
	int collect = beh == SHMR_BEH_SCATTER_GATHER ||
		      beh == SHMR_BEH_TAIL_CHOPPING;
	const char *unused = NULL;

	if (rt->vnodes && beh != SHMR_BEH_CONSISTENT_HASH)
		unused = "virtual_nodes";
	else if (rt->within_ms && !collect)
		unused = "within_ms";
	else if (rt->interval_ms && beh != SHMR_BEH_TAIL_CHOPPING)
		unused = "interval_ms";
	else if (rt->ncall_types && (collect || beh == SHMR_BEH_BALANCING))
		unused = "call_types";
	else if (rt->nhash && beh == SHMR_BEH_BALANCING)
		unused = "routees";
	if (unused)
		return say(cfg, rt->file, rt->line, i, unused, err, errlen,
			   "not used by behaviour \"%s\" (the logic of %s)",
			   logic, rt->dso);
	/* Left out: Pekko's defaults, as for a behaviour the file names. */
	if (collect && rt->within_ms == 0)
		rt->within_ms = SHMR_WITHIN_MS_DEFAULT;
	if (beh == SHMR_BEH_TAIL_CHOPPING && rt->interval_ms == 0)
		rt->interval_ms = shmr_config_interval_default(rt->within_ms);
	if (rt->interval_ms > rt->within_ms)
		return say(cfg, rt->file, rt->line, i,
			   "interval_ms", err, errlen,
			   "%u is longer than within_ms (%u, the default): "
			   "every routee after the first would be tried too "
			   "late",
			   rt->interval_ms, rt->within_ms);
	if (beh == SHMR_BEH_BALANCING && rt->pool.size == 0 &&
	    !rt->pool.size_from_dso)
		return say(cfg, rt->file, rt->line, i, "pool", err, errlen,
			   "behaviour \"balancing\" (the logic of %s) needs "
			   "a pool: there is no balancing group",
			   rt->dso);
	return 0;
}

/* Behaviour left out: the object's logic, or the object itself. */
static int resolve_behaviour(struct shmr_config *cfg, unsigned i,
			     const struct offer *o, char *err, size_t errlen)
{
	struct shmr_conf_router *rt = &cfg->routers[i];

	if (o->has_logic) {
		rt->behaviour = shmr_config_logic_kind(o->logic);
		if (rt->behaviour == 0)
			return say(cfg, rt->file, rt->line, i,
				   "behaviour", err, errlen,
				   "left out, and %s names logic \"%s\", "
				   "which is not a routing logic (expected "
				   "\"round-robin\", \"random\", "
				   "\"smallest-mailbox\", \"broadcast\", "
				   "\"consistent-hash\", \"scatter-gather\", "
				   "\"tail-chopping\" or \"balancing\")",
				   rt->dso, o->logic);
		return fits_logic(cfg, i, rt, o->logic, err, errlen);
	}
	if (!o->routes_itself)
		return say(cfg, rt->file, rt->line, i, "behaviour", err, errlen,
			   "left out, and %s names no logic and has no "
			   "route_message or route_call",
			   rt->dso);
	/* A "dso" router, as if the file had said so. */
	rt->behaviour = SHMR_BEH_DSO;
	if (rt->pool.size || rt->pool.size_from_dso || rt->pool.empty)
		return say(cfg, rt->file, rt->line, i, "pool", err, errlen,
			   "%s names no logic (it routes itself): a pool "
			   "needs a routing logic",
			   rt->dso);
	if (rt->vnodes || rt->within_ms || rt->interval_ms || rt->nhash ||
	    rt->ncall_types)
		return say(cfg, rt->file, rt->line, i,
			   rt->vnodes        ? "virtual_nodes"
			   : rt->within_ms   ? "within_ms"
			   : rt->interval_ms ? "interval_ms"
			   : rt->nhash       ? "routees"
					     : "call_types",
			   err, errlen,
			   "not used by behaviour \"dso\" (%s names no logic)",
			   rt->dso);
	if (!rt->handlers[0]) {
		memcpy(rt->handlers, rt->dso, sizeof(rt->handlers));
		if (!rt->handlers_arg[0])
			memcpy(rt->handlers_arg, rt->dso_arg,
			       sizeof(rt->handlers_arg));
	}
	return 0;
}

int shmr_config_dso_defaults(struct shmr_config *cfg, char *err,
			     size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		struct shmr_conf_router *rt = &cfg->routers[i];
		struct offer o;
		unsigned bad = 0;
		int rc;

		int pool = rt->pool.size > 0 || rt->pool.size_from_dso ||
			   rt->pool.empty;

		if (rt->handlers[0] && strcmp(rt->handlers, rt->dso) != 0 &&
		    (rc = can_open(cfg, i, err, errlen)) < 0)
			return rc;
		if (!rt->dso[0])
			continue;
		/* Read even when nothing is left to it: one that cannot be
		 * loaded is refused here, naming routers.[i].dso. */
		if ((rc = read_offer(cfg, i, &o, err, errlen)) < 0)
			return rc;
		if (rt->behaviour != SHMR_CONF_BEH_FROM_DSO &&
		    !rt->pool.size_from_dso &&
		    !(rt->behaviour == SHMR_BEH_CONSISTENT_HASH &&
		      rt->vnodes == 0) &&
		    !(pool && rt->resizer.kind == SHMR_RESIZER_NONE))
			continue;
		if (rt->behaviour == SHMR_CONF_BEH_FROM_DSO &&
		    (rc = resolve_behaviour(cfg, i, &o, err, errlen)) < 0)
			return rc;
		if (rt->pool.size_from_dso) {
			if (o.pool_size == 0 ||
			    o.pool_size > shmr_config_routes(cfg))
				return say(cfg, rt->pool.file, rt->pool.line, i,
					   "pool.size",
					   err, errlen,
					   "left out, and %s gives %s (1 to "
					   "%u)",
					   rt->dso,
					   o.pool_size ? "a pool_size out of range"
						       : "no pool_size",
					   shmr_config_routes(cfg));
			if (shmr_config_pool_expand(rt, o.pool_size, &bad) < 0)
				return say(cfg, rt->pool.file, rt->pool.line, i,
					   "pool", err,
					   errlen,
					   "routee name \"%s:%u\" is too long "
					   "(router names of a pool: at most "
					   "%u characters)",
					   rt->name, bad, SHMR_NAME_MAX - 5);
			rt->pool.size_from_dso = 0;
		}
		/* A balancing pool has none: one the file names is refused,
		 * the object's is not taken (as Pekko forces it off). */
		if (rt->behaviour == SHMR_BEH_BALANCING &&
		    rt->resizer.kind != SHMR_RESIZER_NONE)
			return say(cfg, rt->resizer.file, rt->resizer.line, i,
				   rt->resizer.kind == SHMR_RESIZER_DEFAULT
					   ? "resizer"
					   : "optimal_resizer",
				   err, errlen, "%s",
				   SHMR_CONF_BALANCING_NO_RESIZER);
		/* A pool without a resizer of its own takes the object's. */
		if (pool && rt->resizer.kind == SHMR_RESIZER_NONE &&
		    o.has_resizer && rt->behaviour != SHMR_BEH_BALANCING) {
			if (strcmp(o.resizer, "default") == 0)
				shmr_config_resizer_unset(&rt->resizer,
							  SHMR_RESIZER_DEFAULT,
							  rt->line);
			else if (strcmp(o.resizer, "optimal") == 0)
				shmr_config_resizer_unset(&rt->resizer,
							  SHMR_RESIZER_OPTIMAL,
							  rt->line);
			else
				return say(cfg, rt->file, rt->line, i,
					   "resizer", err,
					   errlen,
					   "left out, and %s names resizer "
					   "\"%s\" (\"default\" or \"optimal\")",
					   rt->dso, o.resizer);
			/* At the router, in its file. */
			rt->resizer.file = rt->file;
		}
		if (rt->behaviour == SHMR_BEH_CONSISTENT_HASH &&
		    rt->vnodes == 0) {
			if (o.virtual_nodes > SHMR_CHASH_VNODES_MAX)
				return say(cfg, rt->file, rt->line, i,
					   "virtual_nodes",
					   err, errlen,
					   "left out, and %s gives %u (1 to "
					   "%u)",
					   rt->dso, o.virtual_nodes,
					   SHMR_CHASH_VNODES_MAX);
			rt->vnodes = o.virtual_nodes
					     ? o.virtual_nodes
					     : SHMR_CHASH_VNODES_DEFAULT;
		}
	}
	return 0;
}
