/*
 * shmr-control internals: what crosses the control plane's files.  Not for
 * direct inclusion outside control/ and tests/unit/control/.
 *
 * Two halves:
 *   - the core (static library control_core): pure logic with no process,
 *     socket or domain mapping behind it, unit-tested on its own: the
 *     endpoint allocator (generations, deferred reuse), the model of
 *     routers/routes/registry and the spec built from it, the request
 *     parser of the control socket, cpu lists, and the text/JSON formatting
 *     of ROUTES, INSPECT and STATUS;
 *   - the daemon (shmr-control): the domain mapping, the socket server, the
 *     spawner, the event loop.  Single-threaded: nothing here takes a lock.
 */
#ifndef SHMR_CONTROL_INTERNAL_H
#define SHMR_CONTROL_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hwloc.h>

#include <shmr/behaviour.h>
#include <shmr/layout.h>
#include <shmr/shmr.h>

#include "resizer.h"
#include "shmr_config.h"

/* ------------------------------------------------------------------ */
/* Endpoint allocator                                                  */
/* ------------------------------------------------------------------ */

/*
 * Every endpoint slot has a generation: a PID is (slot, gen), gen starts at
 * 1 and moves on every reuse, so a stale PID never reaches a slot's next
 * owner.  A freed slot is not reusable at once: the dataplane may still poll
 * its lanes or enqueue into them until every routing lcore has applied the
 * spec version that removed it.  So a free records that version, and the
 * allocator hands the slot out again only once the caller reports that the
 * slowest lcore has seen it (min over lcores of stats.table_version).
 */

enum shmr_ctl_slot_state {
	SHMR_CTL_SLOT_FREE = 0,     /* never used */
	SHMR_CTL_SLOT_USED = 1,
	SHMR_CTL_SLOT_DEFERRED = 2, /* freed; reusable once seen >= freed_version */
};

struct shmr_ctl_slot {
	uint32_t state;         /* enum shmr_ctl_slot_state */
	uint32_t gen;           /* current or last owner's; 0 = never used */
	uint32_t kind;          /* enum shmr_ep_kind while used */
	int32_t os_pid;         /* owner process, 0 when none */
	uint64_t owner;         /* connection id of a client slot, else 0 */
	uint64_t freed_version; /* spec version that removed it */
	char name[SHMR_NAME_MAX];
};

struct shmr_ctl_alloc {
	uint32_t nslots; /* usable slots, <= SHMR_MAX_ENDPOINTS */
	uint32_t nused;
	struct shmr_ctl_slot slots[SHMR_MAX_ENDPOINTS];
};

/** Empty allocator of @p nslots slots (clamped to SHMR_MAX_ENDPOINTS). */
void shmr_ctl_alloc_init(struct shmr_ctl_alloc *a, uint32_t nslots);

/**
 * Take the lowest slot that is free, or deferred with a freed_version
 * <= @p seen_version.
 *
 * Returns: the slot (>= 0), with *out = {slot, gen} and *reused = 1 when
 *          the slot had an owner before (its lanes must be re-initialised
 *          before the new owner uses them); -SHMR_E_NO_ENDPOINT when none.
 */
int shmr_ctl_alloc_get(struct shmr_ctl_alloc *a, uint32_t kind,
		       uint64_t seen_version, struct shmr_pid *out,
		       int *reused);

/**
 * Free @p pid; the slot is reusable once every lcore has seen
 * @p removal_version (the spec version that no longer has it).
 * Errors: -SHMR_E_NO_ENDPOINT when @p pid is not a used slot of that gen.
 */
int shmr_ctl_alloc_put(struct shmr_ctl_alloc *a, struct shmr_pid pid,
		       uint64_t removal_version);

/** The used slot of @p pid (gen must match), or NULL. */
struct shmr_ctl_slot *shmr_ctl_alloc_lookup(struct shmr_ctl_alloc *a,
					    struct shmr_pid pid);

/* ------------------------------------------------------------------ */
/* Model: routers, routes, registry, and the spec built from them      */
/* ------------------------------------------------------------------ */

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
	struct shmr_ctl_resizer_cfg rcfg;
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
	unsigned nrouters;
	struct shmr_ctl_router routers[SHMR_MAX_ROUTERS];
	unsigned nnames;
	struct shmr_ctl_name names[SHMR_MAX_REGISTRY];
};

/**
 * Build the model of @p cfg: an endpoint per router (SHMR_EPK_ROUTER) and
 * an inbox per route (SHMR_EPK_ROUTE), routers first, in configuration
 * order; every route starts DEAD (no worker yet).
 *
 * Ownership: @p cfg must outlive @p m (the model points into it).
 * Errors:    -SHMR_E_NO_ENDPOINT (more endpoints than slots),
 *            -SHMR_E_NAME (a bad or duplicated router name).
 */
int shmr_ctl_model_init(struct shmr_ctl_model *m,
			const struct shmr_config *cfg);

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
 * CLOSE: a client endpoint of @p owner is freed (with its names); a route
 * inbox it claimed is released (its names dropped, the inbox stays).
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
 * Connection @p owner closed: free its client endpoints, drop its names,
 * release its claims.  Returns how many endpoints were freed.
 */
int shmr_ctl_model_drop_owner(struct shmr_ctl_model *m, uint64_t owner);

/**
 * Fill @p out (a private copy: seq is zeroed; version = m->version; the
 * daemon copies everything after seq into the domain under the seqcount)
 * from the model: routers
 * with their routes, types, hash and dso from the configuration; the
 * registry (every router's name, then the clients' names); active[] (every
 * used route and client slot, in slot order; never routers).
 */
void shmr_ctl_model_spec_build(const struct shmr_ctl_model *m,
			       struct shmr_spec *out);

/* ------------------------------------------------------------------ */
/* Route lifecycle (the state machine; process operations injected)   */
/* ------------------------------------------------------------------ */

/*
 * A route's state is its shmr_ctl_route.state (enum shmr_route_state):
 * RUNNING / DEAD / DISABLED, or one of the PENDING_* states while a worker
 * that was asked to stop has not been seen to exit.  The semantics are the
 * reference's ("Pending Operations", "Management Methods"):
 *   - any mutator on a pending route: -SHMR_E_BUSY;
 *   - disable/replace/remove of a live worker: stop it, go PENDING_*, and
 *     complete in shmr_ctl_life_exited(); of a dead one: complete at once;
 *   - enable only spawns a DISABLED route (idempotent otherwise);
 *   - replace of a DISABLED route swaps the spec only;
 *   - a mutator that fails leaves the route as it was.
 * Only restarts after an unexpected exit (shmr_ctl_life_restart()) count in
 * `restarts`.
 */
struct shmr_ctl_life_ops {
	/** Start the worker of route @p k of router @p r from its spec.
	 *  Returns its OS pid (> 0) or -errno. */
	int (*spawn)(void *ctx, unsigned r, unsigned k);
	/** Ask the live worker to stop (SIGTERM, SIGKILL after the grace);
	 *  its exit comes back through shmr_ctl_life_exited(). */
	void (*stop)(void *ctx, unsigned r, unsigned k);
	/** Route @p k was appended by ADD: prepare per-route state (cpus).
	 *  0 or -errno. */
	int (*added)(void *ctx, unsigned r, unsigned k);
	/** Route @p k is gone: drop its per-route state and move routes
	 *  k+1.. down by one, as the model does. */
	void (*forget)(void *ctx, unsigned r, unsigned k);
	/** The inbox slot @p slot was reused: re-initialise its lanes. */
	void (*reinit)(void *ctx, uint32_t slot);
	/** min over routing lcores of the spec version applied. */
	uint64_t (*seen_version)(void *ctx);
	/** Kill the live worker at once (SIGKILL); its exit comes back
	 *  through shmr_ctl_life_exited(). */
	void (*kill)(void *ctx, unsigned r, unsigned k);
	/** Watch the live worker of a draining route: once its inbox is
	 *  empty, stop it as stop() does. */
	void (*drain)(void *ctx, unsigned r, unsigned k);
};

struct shmr_ctl_life {
	struct shmr_ctl_model *m;
	const struct shmr_ctl_life_ops *ops;
	void *ctx;
};

/**
 * ADD route @p spec to router @p router and start it.  The route is kept
 * only if its worker starts.
 * Errors: -SHMR_E_NAME (bad route name, empty program), -SHMR_E_NO_ROUTE
 *         (no such router), -SHMR_E_ROUTE_DUPLICATE, -SHMR_E_NO_ENDPOINT
 *         (router or domain full), or the spawn's -errno.
 */
int shmr_ctl_life_add(struct shmr_ctl_life *l, const char *router,
		      const struct shmr_conf_route *spec);
/** REMOVE; unknown route is success.  Errors: -SHMR_E_NO_ROUTE (router),
 *  -SHMR_E_BUSY. */
int shmr_ctl_life_remove(struct shmr_ctl_life *l, const char *router,
			 const char *name);
/** DISABLE.  Errors: -SHMR_E_NO_ROUTE, -SHMR_E_BUSY. */
int shmr_ctl_life_disable(struct shmr_ctl_life *l, const char *router,
			  const char *name);
/** ENABLE.  Errors: -SHMR_E_NO_ROUTE, -SHMR_E_BUSY, the spawn's -errno
 *  (the route stays disabled). */
int shmr_ctl_life_enable(struct shmr_ctl_life *l, const char *router,
			 const char *name);
/** REPLACE the program and args (name and cpus stay).
 *  Errors: -SHMR_E_NAME (empty program), -SHMR_E_NO_ROUTE, -SHMR_E_BUSY,
 *  the spawn's -errno for a dead route (the old spec is kept). */
int shmr_ctl_life_replace(struct shmr_ctl_life *l, const char *router,
			  const char *name, const struct shmr_conf_route *spec);
/**
 * DRAIN: disable the route, but let its live worker finish what is queued
 * in its inbox first: new messages fail with SHMR_E_DISABLED at once (the
 * route is PENDING_DISABLE), and the worker is asked to stop only when
 * its inbox is empty (ops->drain); its exit completes the disable.  A
 * dead route is disabled at once, a disabled one is left alone.
 * Errors: -SHMR_E_NO_ROUTE, -SHMR_E_BUSY, -SHMR_E_NOT_ALLOWED.
 */
int shmr_ctl_life_drain(struct shmr_ctl_life *l, const char *router,
			const char *name);
/**
 * REMOVE, letting a live worker finish its inbox first (a pool shrinking,
 * RemoveRoutee): the route is PENDING_REMOVE (messages routed to it fail
 * with SHMR_E_NO_ROUTE; a routing logic leaves it out), and the worker is
 * asked to stop once its inbox is empty (ops->drain).  Unknown route:
 * success.  Errors: -SHMR_E_NO_ROUTE (router), -SHMR_E_BUSY,
 * -SHMR_E_NOT_ALLOWED.
 */
int shmr_ctl_life_remove_drained(struct shmr_ctl_life *l, const char *router,
				 const char *name);
/**
 * Kill: the router fails.  Its live workers are killed at once (SIGKILL)
 * and, as after any crash, restarted into the same routes, so the pool
 * comes back at the same size; with on_kill = "stop" the router is
 * stopped instead (nothing restarted).  A stopped router: nothing.
 */
void shmr_ctl_life_kill_router(struct shmr_ctl_life *l, unsigned r);
/** RESPAWN a dead route.  Errors: -SHMR_E_NO_ROUTE, -SHMR_E_BUSY,
 *  -SHMR_E_ROUTE_RUNNING, -SHMR_E_DISABLED, the spawn's -errno. */
int shmr_ctl_life_respawn(struct shmr_ctl_life *l, const char *router,
			  const char *name);
/**
 * The worker of route @p k of router @p r was seen to exit (the caller has
 * already marked it dead with shmr_ctl_model_route_set(.., 0)).  Completes
 * a pending operation (a completed remove calls ops->forget: indices past
 * @p k move).
 * Returns: 1 when the route wants an eager restart (it exited with nothing
 *          pending and is not disabled), else 0.
 */
int shmr_ctl_life_exited(struct shmr_ctl_life *l, unsigned r, unsigned k);
/**
 * Restart the DEAD route @p k of router @p r after an exit (eager, lazy,
 * or a timed retry); counts in restarts.  A REPLACE_WAIT route starts its
 * new spec (not counted: it completes the replace).  Any other route is
 * left alone.
 * Returns: the OS pid, 0 when nothing was to do, or the spawn's -errno.
 */
int shmr_ctl_life_restart(struct shmr_ctl_life *l, unsigned r, unsigned k);

/**
 * Stop router @p r (a handler failed): it is marked stopped (the spec
 * tells the dataplane to refuse everything sent to it), each live worker
 * is asked to stop and none is restarted.  Every mutator on a stopped
 * router returns -SHMR_E_NOT_ALLOWED; reads keep working.  Idempotent.
 */
void shmr_ctl_life_stop_router(struct shmr_ctl_life *l, unsigned r);

/**
 * The wait before the next start of a worker that failed @p quick_fails
 * times in a row (exited within a second of its start, or could not be
 * started): none after the first failure, then @p first doubling up to
 * @p max; none at all when @p first is 0 (no backoff).  Pure.
 */
uint64_t shmr_ctl_backoff_ms(unsigned quick_fails, uint64_t first,
			     uint64_t max);

/* ------------------------------------------------------------------ */
/* Pools, routee lists, management messages (pool.c)                   */
/* ------------------------------------------------------------------ */

/** 1 for the routing logics (round-robin, ...), 0 for type/hash/dso. */
int shmr_ctl_is_logic(uint32_t behaviour);
/** A pool's size bounds: [1, SHMR_MAX_ROUTES], or its resizer's. */
void shmr_ctl_pool_bounds(const struct shmr_ctl_router *r, unsigned *lo,
			  unsigned *hi);
/**
 * AdjustPoolSize(@p delta): grow by routes with the lowest free index, or
 * shrink by removing the newest routees after their queue; the size is
 * clamped to shmr_ctl_pool_bounds().
 * Returns: the size it goes to (>= 0); -SHMR_E_NOT_ALLOWED (not a pool, or
 *          stopped), -SHMR_E_NO_ROUTE, or a start's error (the routees
 *          started before it stay).
 */
int shmr_ctl_pool_adjust(struct shmr_ctl_life *l, unsigned ri, int delta);
/** GetRoutees body: one name per line, in creation order.
 *  Returns the length, or -ENOSPC. */
int shmr_ctl_routees_format(const struct shmr_ctl_router *r, char *buf,
			    size_t cap);
/**
 * AddRoutee @p name (a route or registry name) to a routing logic's list;
 * already there: success.  Errors: -SHMR_E_NOT_ALLOWED (not a routing
 * logic, or stopped), -SHMR_E_NAME, -SHMR_E_NO_ENDPOINT (list full).
 */
int shmr_ctl_routee_add(struct shmr_ctl_life *l, unsigned ri,
			const char *name);
/** RemoveRoutee @p name: out of the list; a pool's own routee is removed
 *  after its queue.  Unknown: success.  Errors as shmr_ctl_routee_add(). */
int shmr_ctl_routee_remove(struct shmr_ctl_life *l, unsigned ri,
			   const char *name);
/** Start every router's routee list and resizer from its configuration. */
void shmr_ctl_routees_init(struct shmr_ctl_model *m);
/**
 * A pool's resizer settings: Pekko's defaults, then what the configuration
 * set, into @p d (resizer) or @p o (optimal_resizer), checked.
 * Returns: 0, or -EINVAL with *@p field the Pekko key at fault.
 */
int shmr_ctl_resizer_from_conf(const struct shmr_conf_resizer *z,
			       struct shmr_ctl_resizer_cfg *d,
			       struct shmr_ctl_optimal_cfg *o,
			       const char **field);

/* ------------------------------------------------------------------ */
/* Control-socket requests                                             */
/* ------------------------------------------------------------------ */

#define SHMR_CTL_REQ_MAX 512 /* longest request accepted, in bytes */

enum shmr_ctl_verb {
	SHMR_REQ_ATTACH = 1,
	SHMR_REQ_OPEN,
	SHMR_REQ_CLAIM,
	SHMR_REQ_CLOSE,
	SHMR_REQ_REGISTER,
	SHMR_REQ_UNREGISTER,
	SHMR_REQ_ROUTES,
	SHMR_REQ_INSPECT,
	SHMR_REQ_STATUS,
	SHMR_REQ_STOP,
	SHMR_REQ_ROUTE,
	SHMR_REQ_ADD,
	SHMR_REQ_REMOVE,
	SHMR_REQ_DISABLE,
	SHMR_REQ_ENABLE,
	SHMR_REQ_REPLACE,
	SHMR_REQ_RESPAWN,
	SHMR_REQ_DLQ_LIST,
	SHMR_REQ_DLQ_REPLAY,
	SHMR_REQ_DRAIN,
	SHMR_REQ_ROUTEES,      /* ROUTEES ROUTER */
	SHMR_REQ_ROUTEE_ADD,   /* ROUTEE_ADD ROUTER NAME */
	SHMR_REQ_ROUTEE_REMOVE, /* ROUTEE_REMOVE ROUTER NAME */
	SHMR_REQ_POOL_ADJUST,  /* POOL_ADJUST ROUTER +N|-N */
	SHMR_REQ_KILL,         /* KILL ROUTER */
	SHMR_REQ_POISON,       /* POISON ROUTER */
	SHMR_REQ_RETIRE,       /* RETIRE SLOT GEN: a worker got a PoisonPill */
};

struct shmr_ctl_req {
	uint32_t verb;     /* enum shmr_ctl_verb */
	uint32_t version;  /* ATTACH */
	struct shmr_pid pid; /* CLAIM, CLOSE, REGISTER, UNREGISTER */
	char name[SHMR_NAME_MAX]; /* REGISTER, UNREGISTER: the name; ROUTES,
				   * INSPECT, DLQ_*: the router */
	int json;          /* INSPECT ... json */
	char route[SHMR_NAME_MAX]; /* ROUTE and the lifecycle verbs;
				    * ROUTEE_ADD/REMOVE: the routee */
	int32_t delta;     /* POOL_ADJUST: -SHMR_MAX_ROUTES..+SHMR_MAX_ROUTES */
	struct shmr_conf_route spec; /* ADD, REPLACE: name, program, args,
				      * cpus ("" = the control plane picks) */
};

/**
 * Parse one request packet of @p len bytes (not NUL-terminated; one
 * trailing '\n' is tolerated).  Everything is untrusted.
 *
 * Returns: 0, or the negated code to answer with, *why the message:
 *   -SHMR_E_TOO_BIG      longer than SHMR_CTL_REQ_MAX
 *   -SHMR_E_PROTO        empty, a byte outside printable ASCII, an empty
 *                        word, an unknown verb, a wrong number of words, a
 *                        number that is not a plain decimal uint32, an
 *                        INSPECT option other than "json"
 *   -SHMR_E_NAME         a name not matching [A-Za-z0-9_.:-]{1,31}
 *   -SHMR_E_NO_ENDPOINT  a slot >= SHMR_MAX_ENDPOINTS or a gen of 0
 *   -SHMR_E_VERSION      ATTACH with a layout version other than ours
 *   POOL_ADJUST: -SHMR_E_PROTO for a change that is not a sign and
 *   decimal digits within +-SHMR_MAX_ROUTES.
 *   ADD/REPLACE: -SHMR_E_PROTO for more than SHMR_CONF_ARGS_MAX args, an
 *   arg of SHMR_CONF_ARG_MAX bytes or more, a program of
 *   SHMR_CONF_PATH_MAX or more, a bad cpu list.
 */
int shmr_ctl_req_parse(const char *buf, size_t len, struct shmr_ctl_req *out,
		       const char **why);

/** 1 when @p s is a valid name: 1..SHMR_NAME_MAX-1 of [A-Za-z0-9_.:-]. */
int shmr_ctl_name_valid(const char *s);

/* ------------------------------------------------------------------ */
/* CPU lists                                                           */
/* ------------------------------------------------------------------ */

/**
 * Parse a cpu list ("0", "0-3", "0,2-3"; "" = no pinning) into @p set
 * (emptied first).  Only digits, ',' and '-' in ascending ranges below
 * 4096 are accepted.
 * Errors: -EINVAL.
 */
int shmr_ctl_cpus_parse(const char *list, hwloc_bitmap_t set);

/**
 * The PUs the dataplane's routing lcores run on, as shmr-dataplane maps
 * them (lcore i on the (i % n)-th cpu of its --cpus list, in written
 * order).  @p dp_list is the configured dataplane_cpus, already checked
 * with shmr_ctl_cpus_parse(); "" means the control plane chooses: the
 * first @p nlcores PUs of @p allowed, which it then passes as --cpus.
 *
 * Context: pure; @p out is emptied first.
 * Errors:  -EINVAL (a bad list, @p nlcores 0, or "" with @p allowed
 *          empty).
 */
int shmr_ctl_cpus_lcores(const char *dp_list, hwloc_const_bitmap_t allowed,
			 unsigned nlcores, hwloc_bitmap_t out);

/**
 * The PU of the @p nth (from 0, in configuration order) route whose cpus
 * are "": round-robin over the PUs of @p allowed that are not in
 * @p lcores, or over all of @p allowed when every one of them routes.
 *
 * Context: pure.
 * Returns: the PU's OS index (>= 0); -EINVAL when @p allowed is empty,
 *          -ENOMEM.
 */
int shmr_ctl_cpus_pick(hwloc_const_bitmap_t allowed,
		       hwloc_const_bitmap_t lcores, unsigned nth);

/* ------------------------------------------------------------------ */
/* Formatting: ROUTES, INSPECT, STATUS                                 */
/* ------------------------------------------------------------------ */

/* Counters read from the domain, by endpoint slot (summed over lcores). */
struct shmr_ctl_counters {
	uint64_t forwarded[SHMR_MAX_ENDPOINTS]; /* router_forwarded */
	uint64_t discarded[SHMR_MAX_ENDPOINTS];
	uint64_t failed[SHMR_MAX_ENDPOINTS];
	uint64_t delivered[SHMR_MAX_ENDPOINTS]; /* ep_delivered */
	uint64_t queued[SHMR_MAX_ENDPOINTS];    /* count over inbound lanes */
	uint64_t dlq_size[SHMR_MAX_ENDPOINTS];  /* by router slot: records in
						 * its dead-letter file (set
						 * by the daemon for INSPECT) */
};

/* Keys a router's handle_inspect hook added (see behaviour.h). */
#define SHMR_CTL_KV_EXTRA_MAX 64
struct shmr_ctl_kv_pair {
	char key[96];
	char value[160];
	int used; /* emitted (as an override or on its own) */
};
struct shmr_ctl_kv_extra {
	unsigned n;
	struct shmr_ctl_kv_pair p[SHMR_CTL_KV_EXTRA_MAX];
};

/* Key/value writer: "key value" lines, or one JSON object of strings.
 * With @c extra set, a key added that one of the extras names takes the
 * extra's value, and the extras left are added by shmr_ctl_kv_end(). */
struct shmr_ctl_kv {
	char *buf;
	size_t cap, len;
	int json;
	unsigned n;
	int overflow;
	struct shmr_ctl_kv_extra *extra; /* NULL: none */
};

void shmr_ctl_kv_begin(struct shmr_ctl_kv *kv, char *buf, size_t cap,
		       int json);
void shmr_ctl_kv_add(struct shmr_ctl_kv *kv, const char *key,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** Close the object; returns the length, or -ENOSPC when it overflowed. */
int shmr_ctl_kv_end(struct shmr_ctl_kv *kv);

/** "type", "hash", "dso" or "unknown". */
const char *shmr_ctl_behaviour_name(uint32_t behaviour);
/** "running", "dead", "disabled", "pending_disable", ... */
const char *shmr_ctl_route_state_name(uint32_t state);

/**
 * ROUTES body: one line per route, "NAME pid=<slot>:<gen> os_pid=N state=S
 * restarts=N delivered=N queued=N cpus=LIST" (LIST as /proc shows
 * Cpus_allowed_list, "any" when unpinned).
 * Returns the length, or -ENOSPC.
 */
int shmr_ctl_format_routes(const struct shmr_ctl_router *r,
			   const struct shmr_ctl_counters *c, char *buf,
			   size_t cap);

/** One ROUTES line, for ROUTE.  Returns the length, or -ENOSPC. */
int shmr_ctl_format_route(const struct shmr_ctl_route *q,
			  const struct shmr_ctl_counters *c, char *buf,
			  size_t cap);

/**
 * INSPECT body, keys prefixed "shmr:" (see control.c's header comment),
 * with @p extra (a handle_inspect hook's keys, or NULL) merged on top: an
 * extra key equal to a built-in one ("shmr:..." only) replaces its value,
 * the others follow the built-in keys.
 * Returns the length, or -ENOSPC.
 */
int shmr_ctl_format_inspect(const struct shmr_ctl_router *r,
			    const struct shmr_ctl_counters *c,
			    struct shmr_ctl_kv_extra *extra, int json,
			    char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Dead-letter files (dlq.c; format in its header comment)             */
/* ------------------------------------------------------------------ */

/** FNV-1a 32 of @p n bytes: a record's check word. */
uint32_t shmr_ctl_dlq_check(const void *p, size_t n);

/**
 * Append the MessageRouteFailed slot @p m (of a domain with @p slot_size
 * byte slots) to the open file @p fd as one record, in one write().
 * Context: blocking I/O.  Errors: -errno, -ENOSPC (short write),
 *          -EINVAL (slot size out of range).
 */
int shmr_ctl_dlq_append(int fd, const struct shmr_msg *m, size_t slot_size);

/**
 * Read the record at @p off of a file image @p buf of @p size bytes into
 * @p slot (SHMR_SLOT_MAX bytes, aligned for struct shmr_msg).
 * Returns: the record's size (> 0; the next one starts there), 0 at the
 *          end, -SHMR_E_PROTO for a truncated or corrupted record (bad
 *          length, check word, or payload length).
 */
int shmr_ctl_dlq_next(const unsigned char *buf, size_t size, size_t off,
		      struct shmr_msg *slot, uint32_t *slen);

/** The name the router chose (SHMR_F_ROUTE_NAME), or "?" without one. */
void shmr_ctl_dlq_name(const struct shmr_msg *slot, uint32_t slen,
		       char out[SHMR_NAME_MAX]);

/** "SHMR_E_PROCESS_UNKNOWN", ... for a record's status; "SHMR_E_OTHER". */
const char *shmr_ctl_dlq_reason(int32_t status);

/**
 * DLQ_LIST body: one line per record, "<index> reason=<R> name=<N>
 * type=T key=K from=S:G len=L"; stops at the first bad record (*corrupt
 * = 1).  Returns the length, or -ENOSPC.
 */
int shmr_ctl_dlq_format(const unsigned char *buf, size_t size, char *out,
			size_t cap, unsigned *count, int *corrupt);

/** Sound records at the start of @p buf. */
long shmr_ctl_dlq_count(const unsigned char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* The daemon (shmr-control only; not in control_core)                 */
/* ------------------------------------------------------------------ */


#define SHMR_CTL_MAX_CONNS 256

/* A child process: the dataplane or a route's worker. */
struct shmr_ctl_proc {
	pid_t pid;            /* 0: not running */
	int pidfd;            /* -1 when not running */
	uint64_t started_ms;  /* monotonic */
	unsigned quick_fails; /* exits within 1 s of start, in a row */
	uint64_t retry_at_ms; /* 0: no restart scheduled */
	uint64_t kill_at_ms;  /* asked to stop: SIGKILL then; 0: none */
	uint64_t drain_at_ms; /* draining: look at its inbox then; 0: not */
};

struct shmr_ctl_conn {
	int fd;      /* -1: free entry */
	uint64_t id; /* never 0, never reused */
	pid_t pid;   /* SO_PEERCRED */
	uid_t uid;
	gid_t gid;
	int denied;  /* credentials refused: answer ERR PERM, then close */
};

/* A router's admin-path handlers (handlers.c). */
struct shmr_ctl_hrouter {
	struct shmr_admin admin; /* what the hooks get (ops find the rest) */
	struct shmr_ctl *c;
	unsigned r;              /* router index */
	void *dl;                /* dlopen handle, NULL: none */
	const struct shmr_handlers *h; /* NULL: the defaults */
	int initialised;         /* init ran (fini is owed) */
	struct shmr_ctl_kv_extra *inspect; /* during handle_inspect */
	uint64_t call_ref;       /* the call handle_call is running for */
	int replied;             /* ...and it has been answered */
};

struct shmr_ctl {
	struct shmr_config cfg;
	struct shmr_ctl_model model;
	int quiet;
	char run_dir[PATH_MAX];
	char sock_path[108];
	char dataplane[PATH_MAX];
	char dp_cpus[SHMR_CTL_CPUS_MAX]; /* --cpus given to the dataplane */
	/* domain */
	int memfd;
	void *base;
	uint64_t size;
	int hugepages;
	struct shmr_spec spec_buf; /* private copy the spec is built in */
	/* event loop */
	int epfd, sigfd, timerfd, lfd;
	int have_group;
	gid_t group;
	/* spawning */
	hwloc_topology_t topo;
	/* What each route's workers are pinned to: the configured list, or
	 * the PU chosen for it (see cpus.c). */
	hwloc_bitmap_t cpus[SHMR_MAX_ROUTERS][SHMR_MAX_ROUTES];
	hwloc_bitmap_t allowed, lcores; /* kept from plan_cpus() for ADD */
	struct shmr_ctl_life life;      /* the lifecycle on this daemon */
	struct shmr_ctl_proc dp;
	struct shmr_ctl_proc workers[SHMR_MAX_ROUTERS][SHMR_MAX_ROUTES];
	/* connections */
	struct shmr_ctl_conn conns[SHMR_CTL_MAX_CONNS];
	uint64_t next_conn_id;
	int stop_requested;
	int stopping;
	/* admin path (admin.c) */
	struct shmr_pid admin;   /* the admin endpoint */
	int admin_kick, admin_done; /* eventfds: thread -> loop, loop -> thread */
	int dlq_fd[SHMR_MAX_ROUTERS]; /* append descriptors, -1: not open */
	uint64_t admin_msgs[SHMR_MAX_ROUTERS]; /* admin-path slots handled */
	uint64_t admin_log_next[3], admin_log_suppressed[3];
	struct shmr_ctl_hrouter hnd[SHMR_MAX_ROUTERS];
	uint64_t resize_at_ms; /* next look of the pools' resizers; 0: none */
	uint64_t rng_state;    /* the optimal resizer's random source */
};

/* epoll tags: data.u64 = tag << 32 | index */
enum shmr_ctl_tag {
	SHMR_CTL_TAG_SIGNAL = 1,
	SHMR_CTL_TAG_LISTEN,
	SHMR_CTL_TAG_TIMER,
	SHMR_CTL_TAG_CONN,   /* index: conns[] */
	SHMR_CTL_TAG_CHILD,  /* any child's pidfd: reap */
	SHMR_CTL_TAG_ADMIN,  /* the admin endpoint has slots */
};

/* control.c */
void shmr_ctl_log(const struct shmr_ctl *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void shmr_ctl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t shmr_ctl_now_ms(void);
/** Publish the model if dirty: ep table + spec under the seqcount, then a
 *  SHMR_CTL_SPEC slot on the control lane and its bell. */
void shmr_ctl_publish(struct shmr_ctl *c);
/** Queue one control-lane message; 0 or -ENOBUFS (lane full). */
int shmr_ctl_lane_send(struct shmr_ctl *c, uint32_t type, uint64_t key);
/** min over routing lcores of stats.table_version. */
uint64_t shmr_ctl_seen_version(const struct shmr_ctl *c);
/** Re-initialise every lane of @p slot (a reused slot), reset its bell. */
void shmr_ctl_slot_reinit(struct shmr_ctl *c, uint32_t slot);
/** Read the counters of every used slot out of the domain. */
void shmr_ctl_counters_read(const struct shmr_ctl *c,
			    struct shmr_ctl_counters *out);

/* server.c */
/** Bind <run_dir>/<domain>.sock; -EADDRINUSE when a live control answers. */
int shmr_ctl_server_open(struct shmr_ctl *c);
void shmr_ctl_server_accept(struct shmr_ctl *c);
void shmr_ctl_server_event(struct shmr_ctl *c, unsigned idx, uint32_t ev);
/** Stop accepting: close the listener and unlink the socket. */
void shmr_ctl_server_close_listener(struct shmr_ctl *c);
void shmr_ctl_server_close_all(struct shmr_ctl *c);

/* admin.c */
/** Allocate the admin endpoint and publish it (hdr.admin_pid).
 *  Context: start-up, after the domain is created.  Errors: -SHMR_E_NO_ENDPOINT. */
int shmr_ctl_admin_open(struct shmr_ctl *c);
/** Start the bell thread and watch its eventfd.  Errors: -errno. */
int shmr_ctl_admin_start(struct shmr_ctl *c);
/** The admin endpoint has slots: handle them all. */
void shmr_ctl_admin_event(struct shmr_ctl *c);
/** "<run_dir>/<domain>.<router>.dlq" of router @p r. */
void shmr_ctl_dlq_path(const struct shmr_ctl *c, unsigned r, char *out,
		       size_t cap);
/** Read router @p r's dead-letter file (malloc'd; none: NULL, 0).
 *  Errors: -errno, -EFBIG. */
int shmr_ctl_dlq_load(struct shmr_ctl *c, unsigned r, unsigned char **buf,
		      size_t *size);
/** Re-send router @p r's dead letters from the admin endpoint and drop
 *  those sent from the file.  Errors: -errno (the file was not rewritten). */
int shmr_ctl_dlq_replay(struct shmr_ctl *c, unsigned r, unsigned *sent,
			unsigned *left);

/** Answer the call @p req (status, @p n bytes of @p data) from the admin
 *  endpoint.  Errors: -SHMR_E_TOO_BIG, -EAGAIN (its lane is full). */
int shmr_ctl_admin_reply(struct shmr_ctl *c, const struct shmr_msg *req,
			 int32_t status, const void *data, size_t n);
/** The default handlers: a MessageRouteFailed is logged and kept as a
 *  dead letter, another admin send logged; the call "stats" answered,
 *  any other refused (-SHMR_E_NOT_ALLOWED). */
void shmr_ctl_admin_default_message(struct shmr_ctl *c, unsigned r,
				    const struct shmr_msg *m);
void shmr_ctl_admin_default_call(struct shmr_ctl *c, unsigned r,
				 const struct shmr_msg *m);

/* handlers.c */
/** Load every router's handlers object and run its init.
 *  Context: start-up.  Errors: -ENOENT, -EPROTO, init's error (logged). */
int shmr_ctl_handlers_load(struct shmr_ctl *c);
/** fini and dlclose every one.  Context: shutdown. */
void shmr_ctl_handlers_unload(struct shmr_ctl *c);
/** An admin send or MessageRouteFailed for router @p r: its hook, or the
 *  default; a failing hook stops the router. */
void shmr_ctl_handlers_message(struct shmr_ctl *c, unsigned r,
			       const struct shmr_msg *m);
/** An admin call for router @p r, likewise (a stopped router refuses it
 *  with -SHMR_E_NOT_ALLOWED). */
void shmr_ctl_handlers_call(struct shmr_ctl *c, unsigned r,
			    const struct shmr_msg *m);
/** INSPECT: the hook's keys into @p extra (emptied first). */
void shmr_ctl_handlers_inspect(struct shmr_ctl *c, unsigned r,
			       struct shmr_ctl_kv_extra *extra);
/** Stop router @p r because @p hook returned @p err (logged). */
void shmr_ctl_router_stop(struct shmr_ctl *c, unsigned r, const char *hook,
			  int err);

/* manage.c */
/**
 * Router @p r's management or special message @p type (SHMR_TYPE_*), with
 * @p name (ADD/REMOVE_ROUTEE) or @p delta (ADJUST_POOL_SIZE); text for the
 * answer (GetRoutees' names, the new pool size) into @p text.
 * Returns: the text's length (>= 0), or -SHMR_E_NOT_ALLOWED (a stopped
 *          router, another type), or the operation's error.
 */
int shmr_ctl_manage(struct shmr_ctl *c, unsigned r, uint32_t type,
		    const char *name, int64_t delta, char *text, size_t cap);
/** The same for a message on the admin path; a call gets the answer. */
void shmr_ctl_manage_msg(struct shmr_ctl *c, unsigned r,
			 const struct shmr_msg *m);

/** The pools' resizers look at their routees (every 100 ms while a pool
 *  has one): the default resizer every messages_per_resize messages
 *  routed, the optimal one every action_interval; each adjusts its pool.
 *  Sets c->resize_at_ms to the next look (0: no resizer left). */
void shmr_ctl_resize_tick(struct shmr_ctl *c, uint64_t now_ms);

/* spawn.c */
/** Re-arm the timer for the earliest of its deadlines. */
void shmr_ctl_arm_timer(struct shmr_ctl *c);
/** Start the dataplane; 0 or -errno (the message printed by the caller). */
int shmr_ctl_spawn_dataplane(struct shmr_ctl *c);
/** Start route @p k of router @p r; 0 or -errno, *what says which step. */
int shmr_ctl_spawn_worker(struct shmr_ctl *c, unsigned r, unsigned k,
			  const char **what);
/** Reap every exited child; repair, restart. */
void shmr_ctl_reap(struct shmr_ctl *c);
/** The dataplane routed a message to route inbox @p inbox, which has no
 *  worker: start one now (lazy restart), unless a backoff is waiting. */
void shmr_ctl_want_worker(struct shmr_ctl *c, struct shmr_pid inbox);
/** The retry timer fired. */
void shmr_ctl_retry_due(struct shmr_ctl *c);
/** The lifecycle's process operations (spawn.c); ctx is the shmr_ctl. */
extern const struct shmr_ctl_life_ops shmr_ctl_life_daemon_ops;
/** Stop every child: workers (SIGTERM, SIGKILL after the grace), then the
 *  dataplane (SHMR_CTL_SHUTDOWN, SIGTERM, SIGKILL). Blocks. */
void shmr_ctl_stop_children(struct shmr_ctl *c);

#endif
