/*
 * The route lifecycle (lifecycle.c): the state machine over the model,
 * its process operations injected.  Internal to the control plane: not for
 * direct inclusion outside control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_LIFECYCLE_H
#define SHMR_CONTROL_LIFECYCLE_H

#include <stdint.h>

#include "model.h"

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
	/** As kill(), for the router's own failure (a Kill to the router):
	 *  the exit restarts the route whatever the router's supervisor.
	 *  NULL: kill(). */
	void (*kill_failed)(void *ctx, unsigned r, unsigned k);
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

#endif
