/*
 * Pools, routee lists, management messages (pool.c), over the model and
 * the lifecycle.  Internal to the control plane: not for direct inclusion
 * outside control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_POOL_H
#define SHMR_CONTROL_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "lifecycle.h"

/** A pool's size bounds: [1, max_routes] (shmr_ctl_model_max_routes()),
 *  or its resizer's within them. */
void shmr_ctl_pool_bounds(const struct shmr_ctl_model *m,
			  const struct shmr_ctl_router *r, unsigned *lo,
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
/**
 * A pool with a resizer back within its bounds at once (Pekko's resizer
 * keeps them at all times): at start when its configured size is outside
 * them, and when a RemoveRoutee (or a death that removes a routee) took it
 * below lower_bound; not waiting for messages_per_resize messages.
 * Returns: the size (>= 0), 0 for a router without a resizer or stopped
 *          (nothing done), or a start's error as shmr_ctl_pool_adjust().
 * Context: shmr-control's thread.  Errors: as shmr_ctl_pool_adjust().
 */
int shmr_ctl_pool_keep_bounds(struct shmr_ctl_life *l, unsigned ri);
/**
 * Supervision "stop": route @p k of router @p ri, whose worker died, is
 * no routee any more: out of the list, removed at once (a pool without a
 * resizer stops with its last routee), and a resizer's lower_bound made
 * good at once (shmr_ctl_pool_keep_bounds()).  Its inbox slot is freed
 * but kept from reuse (SHMR_CTL_DRAIN_INBOX) until what is queued there
 * is dead-lettered (supervise.c); *@p slot says which.
 * Context: shmr-control's thread; the route is DEAD with no worker.
 * Returns: 0, or a start's error as shmr_ctl_pool_adjust() (the removal
 *          stands).
 */
int shmr_ctl_pool_routee_stopped(struct shmr_ctl_life *l, unsigned ri,
				 unsigned k, uint32_t *slot);
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

#endif
