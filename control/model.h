/*
 * The model (model.c): routers, routes, the registry, and the spec built
 * from them.  Pure logic, part of control_core.  Internal to the control
 * plane: not for direct inclusion outside control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_MODEL_H
#define SHMR_CONTROL_MODEL_H

#include <stdint.h>

#include <shmr/layout.h>
#include <shmr/shmr.h>

#include "alloc.h"
#include "resizer.h"
#include "shmr_config.h"

#define SHMR_CTL_CPUS_MAX 128 /* a cpu list as shown ("0-1,4") */

struct shmr_ctl_route {
	const struct shmr_conf_route *conf; /* always &spec (re-pointed
					     * whenever routes move) */
	struct shmr_conf_route spec; /* the route's own copy: from the
				      * configuration, ADD or REPLACE */
	char cpus[SHMR_CTL_CPUS_MAX]; /* the PUs its workers are pinned to,
				       * set by the daemon; "" = unpinned */
	struct shmr_pid pid;  /* the route's inbox: survives its workers */
	uint32_t state;       /* enum shmr_route_state */
	int32_t os_pid;       /* the live worker, 0 when none */
	uint64_t claimed_by;  /* connection that CLAIMed the inbox, 0 none */
	uint64_t restarts;    /* starts after the first */
	int32_t start_err;    /* the last start's error, 0 once one succeeds:
			       * a DEAD route's in the spec (lifecycle.c) */
	uint64_t redelivered; /* messages a dead worker held, handed back to
			       * the inbox flagged SHMR_F_REDELIVERED */
};

struct shmr_ctl_router {
	const struct shmr_conf_router *conf;
	struct shmr_pid pid; /* the router's endpoint (served by the dataplane) */
	int stopped;         /* a handler failed (or it was told to stop):
			      * workers stopped, mutators refused, reads work */
	/* The routee list of a routing logic when it is one of its own
	 * (configured "routees", or changed by AddRoutee/RemoveRoutee);
	 * listed == 0: the router's own routes, in order (pool.c). */
	int listed;
	unsigned nroutees;
	char routees[SHMR_MAX_ROUTES][SHMR_NAME_MAX];
	/* A pool's resizer (pool.c) */
	uint64_t rs_seen;        /* default: messages routed when it last looked */
	uint64_t rs_processed;   /* optimal: messages taken by the routees */
	struct shmr_ctl_optimal optimal;
	struct shmr_conf_resizer_cfg rcfg;
	unsigned nroutes;
	struct shmr_ctl_route routes[SHMR_MAX_ROUTES];
};

/* A name a client registered (routers' names are implicit). */
struct shmr_ctl_name {
	char name[SHMR_NAME_MAX];
	struct shmr_pid pid;
	uint64_t owner; /* connection id */
};

struct shmr_ctl_model {
	const struct shmr_config *cfg;
	uint64_t version; /* last published spec version (0: none yet) */
	int dirty;        /* changed since the last publication */
	struct shmr_ctl_alloc alloc;
	/* The configuration's routers, in its order: as many as it has
	 * (at most its max_routers), allocated by shmr_ctl_model_init() */
	unsigned nrouters;
	struct shmr_ctl_router *routers;
	unsigned nnames;
	/* The most the registry holds is the configuration's max_names
	 * (shmr_ctl_model_max_names()), routers' names included; the
	 * array has room for the most any configuration may ask. */
	struct shmr_ctl_name names[SHMR_MAX_NAMES];
	/* Messages closed or gone clients sent that the dataplane never
	 * took (control/drain.c): STATUS close_dropped. */
	uint64_t close_dropped;
};

/**
 * Build the model of @p cfg: an endpoint per router (SHMR_EPK_ROUTER) and
 * an inbox per route (SHMR_EPK_ROUTE), routers first, in configuration
 * order; every route starts DEAD (no worker yet).
 *
 * Ownership: @p cfg must outlive @p m (the model points into it).  @p m
 *            is all zero or a model this made before (what that held is
 *            freed first); shmr_ctl_model_fini() frees what it holds.
 * Errors:    -SHMR_E_NO_ENDPOINT (more endpoints than slots, more routers
 *            than max_routers), -SHMR_E_NAME (a bad or duplicated router
 *            name), -ENOMEM.
 */
int shmr_ctl_model_init(struct shmr_ctl_model *m,
			const struct shmr_config *cfg);

/** Free what shmr_ctl_model_init() gave @p m (all zero after). */
void shmr_ctl_model_fini(struct shmr_ctl_model *m);

/** Router called @p name, or NULL. */
struct shmr_ctl_router *shmr_ctl_model_router(struct shmr_ctl_model *m,
					      const char *name);

/** Route whose inbox is slot @p slot, or NULL (router index to *router). */
struct shmr_ctl_route *shmr_ctl_model_route_of_slot(struct shmr_ctl_model *m,
						    uint32_t slot,
						    unsigned *router);

/** Index of route @p name in @p r, or -1. */
int shmr_ctl_model_route_index(const struct shmr_ctl_router *r,
			       const char *name);

/**
 * A route's worker is up (@p os_pid) or confirmed dead (0: its names and
 * claim are dropped).  Marks dirty.
 */
void shmr_ctl_model_route_set(struct shmr_ctl_model *m,
			      struct shmr_ctl_route *r, int32_t os_pid);

/**
 * OPEN: a client endpoint owned by connection @p owner of process
 * @p os_pid.  @p seen_version: see shmr_ctl_alloc_get().
 * Errors: -SHMR_E_NO_ENDPOINT.
 */
int shmr_ctl_model_open(struct shmr_ctl_model *m, uint64_t owner,
			int32_t os_pid, uint64_t seen_version,
			struct shmr_pid *out, int *reused);

/**
 * CLAIM: connection @p owner of process @p os_pid takes the route inbox
 * @p pid; @p os_pid must be the worker spawned for that route.
 * Errors: -SHMR_E_NO_ENDPOINT (not a route inbox of that gen),
 *         -SHMR_E_PERM (another process).
 */
int shmr_ctl_model_claim(struct shmr_ctl_model *m, uint64_t owner,
			 int32_t os_pid, struct shmr_pid pid);

/**
 * CLOSE: a client endpoint of @p owner loses its names and its owner and
 * starts draining (drain POLL: still in the spec, so the dataplane takes
 * what is left in its outbound lanes; freed by shmr_ctl_model_drain_end());
 * a route inbox it claimed is released (its names dropped, the inbox
 * stays).
 * Errors: -SHMR_E_NO_ENDPOINT (not @p owner's).
 */
int shmr_ctl_model_close(struct shmr_ctl_model *m, uint64_t owner,
			 struct shmr_pid pid);

/**
 * REGISTER @p name for @p pid, an endpoint that @p owner opened or claimed.
 * Errors: -SHMR_E_NAME, -SHMR_E_NO_ENDPOINT (not @p owner's),
 *         -SHMR_E_ROUTE_DUPLICATE (taken, by a router or a client),
 *         -ENOSPC (registry full).
 */
int shmr_ctl_model_register(struct shmr_ctl_model *m, uint64_t owner,
			    const char *name, struct shmr_pid pid);

/**
 * UNREGISTER: drop @p name registered for @p pid.  Unknown names are
 * success.  Errors: -SHMR_E_NAME, -SHMR_E_NO_ENDPOINT (not @p owner's),
 * -SHMR_E_PERM (the name belongs to another endpoint, or is a router's).
 */
int shmr_ctl_model_unregister(struct shmr_ctl_model *m, uint64_t owner,
			      const char *name, struct shmr_pid pid);

/**
 * Connection @p owner closed: its client endpoints start draining (as for
 * CLOSE), its names are dropped, its claims released.  Returns how many
 * endpoints it had.
 */
int shmr_ctl_model_drop_owner(struct shmr_ctl_model *m, uint64_t owner);

/**
 * Client slot @p pid has no owner any more (found so when a domain is
 * adopted): it drains as after CLOSE.  Anything else: nothing.
 */
void shmr_ctl_model_retire(struct shmr_ctl_model *m, struct shmr_pid pid);

/**
 * A draining client slot @p pid is done being polled (its outbound lanes
 * are empty, or the daemon gave up on what they hold): freed, but not
 * reused until shmr_ctl_model_drain_counted() says how many messages the
 * dataplane never took, which the daemon does once every lcore has seen
 * the next version (drain.c: then nothing is put into its lanes either,
 * and what is left there is dropped).  Anything else than a draining
 * slot: nothing.
 */
void shmr_ctl_model_drain_end(struct shmr_ctl_model *m, struct shmr_pid pid);

/**
 * What was left in drained slot @p slot has been counted: @p dropped
 * more in close_dropped; the slot is reusable again.
 */
void shmr_ctl_model_drain_counted(struct shmr_ctl_model *m, uint32_t slot,
				  uint64_t dropped);

/*
 * Owners "by pid": a control plane that adopted a domain has no
 * connections; what a live process owned (its client endpoints, names,
 * claims) is owned by that process until it attaches again or exits.
 * Such an owner id has the top bit set; connection ids never do.
 */
#define SHMR_CTL_OWNER_PID (1ull << 63)
static inline uint64_t shmr_ctl_owner_of_pid(int32_t os_pid)
{
	return SHMR_CTL_OWNER_PID | (uint32_t)os_pid;
}

/**
 * Everything owner @p from holds (client endpoints, names, claims) is
 * held by @p to from now on (a process owned by pid attached again).
 * Returns how many endpoints moved (client endpoints and claimed inboxes).
 */
int shmr_ctl_model_rebind_owner(struct shmr_ctl_model *m, uint64_t from,
				uint64_t to);

/** The registry entries the domain has: the configuration's max_names
 *  (never above SHMR_MAX_NAMES, the room of names[]). */
static inline uint32_t shmr_ctl_model_max_names(const struct shmr_ctl_model *m)
{
	uint32_t n = shmr_config_names(m->cfg);

	return n < SHMR_MAX_NAMES ? n : SHMR_MAX_NAMES;
}

/** The type-map entries a router has (each map): the configuration's
 *  max_types (never above SHMR_MAX_TYPES, the room of its maps). */
static inline uint32_t shmr_ctl_model_max_types(const struct shmr_ctl_model *m)
{
	uint32_t n = shmr_config_types(m->cfg);

	return n < SHMR_MAX_TYPES ? n : SHMR_MAX_TYPES;
}

/** The routes (and routee names) the domain has room for in every
 *  router: the configuration's max_routes (never above SHMR_MAX_ROUTES),
 *  the stride of the spec's route region (shmr_spec_routes_at()). */
static inline uint32_t shmr_ctl_model_routes_room(const struct shmr_ctl_model *m)
{
	uint32_t n = shmr_config_routes(m->cfg);

	return n < SHMR_MAX_ROUTES ? n : SHMR_MAX_ROUTES;
}

/* The spec version that carries the model as it is now: the last one
 * published, or, when the model changed since, the next one (the
 * daemon's loop publishes it after the event that changed it:
 * shmr_ctl_publish()). */
static inline uint64_t
shmr_ctl_model_pending_version(const struct shmr_ctl_model *m)
{
	return m->version + (m->dirty ? 1 : 0);
}

/* The most routes router @p r may hold, and routees in its list: the
 * domain's room (shmr_ctl_model_routes_room()), less for a collecting
 * router (shmr_config_routes_max(): its tried mask). */
static inline uint32_t shmr_ctl_model_max_routes(const struct shmr_ctl_model *m,
						 const struct shmr_ctl_router *r)
{
	return shmr_config_routes_max(shmr_ctl_model_routes_room(m),
				      r->conf->behaviour);
}

/* Where shmr_ctl_model_spec_build() writes: private copies of the spec
 * and of the regions beside it, each with the room the model's
 * configuration gives the domain. */
struct shmr_ctl_spec_bufs {
	/* the counts and the routers (shmr_spec_size() of the routers
	 * configured, at least) */
	struct shmr_spec *spec;
	/* the active list: every used route and client slot, in slot order
	 * (never routers): room for the model's alloc.nslots */
	uint32_t *active;
	/* the registry: every router's name, then the clients' names, at
	 * most shmr_ctl_model_max_names() */
	struct shmr_spec_reg *names;
	/* the routers' type maps: shmr_spec_types_size(
	 * shmr_ctl_model_max_types(), ...) bytes (shmr_spec_types_at()) */
	struct shmr_spec_type *types;
	/* their routes and hash or routee names: shmr_spec_routes_size(
	 * shmr_ctl_model_routes_room(), ...) bytes (shmr_spec_routes_at(),
	 * shmr_spec_hash_at()) */
	void *routes;
};

/**
 * Fill @p b from the model: the spec (seq is zeroed; version =
 * m->version; the daemon copies everything after seq into the domain
 * under the seqcount), its routers with their routes, types, hash and dso
 * from the configuration, the active list and the registry, each region
 * as far as its count in the spec says (nactive, nreg; each router's
 * nroutes, nhash, ntypes and ncall_types).
 */
void shmr_ctl_model_spec_build(const struct shmr_ctl_model *m,
			       const struct shmr_ctl_spec_bufs *b);


/** 1 for the routing logics (round-robin, ...), 0 for type/hash/dso. */
int shmr_ctl_is_logic(uint32_t behaviour);

/** Start every router's routee list and resizer from its configuration. */
void shmr_ctl_routees_init(struct shmr_ctl_model *m);

#endif
