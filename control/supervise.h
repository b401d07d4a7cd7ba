/*
 * Supervision per router (supervise.c): what an unexpected exit of one of
 * a router's own routes does, by its `supervisor`.  Internal to
 * shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_SUPERVISE_H
#define SHMR_CONTROL_SUPERVISE_H

#include <stdint.h>

#include "spawn.h"

/**
 * The worker of route @p k of router @p r died unexpectedly (it was
 * RUNNING or DEAD, its lanes are repaired, shmr_ctl_life_exited() asked
 * for a restart, the router runs).  Apply the router's supervisor.
 * Context:  shmr-control's thread (spawn.c's death path).
 * Returns:  0 when the route is to restart into its slot as always
 *           (restart, or a death its router's own failure caused), 1
 *           when supervision took it (the caller does nothing more:
 *           indices past @p k may have moved).
 */
int shmr_ctl_supervise_exited(struct shmr_ctl_spawner *sp, unsigned r,
			      unsigned k);

/**
 * The timer at @p now: the inboxes of routees that "stop" removed, once
 * no lcore can enqueue there any more, are dead-lettered into their
 * router's file and their slots made reusable.
 * Context: shmr-control's thread; blocking file I/O (the dead letters).
 */
void shmr_ctl_supervise_due(struct shmr_ctl_spawner *sp, uint64_t now);

/** The lifecycle's kill_failed operation (ctx is the spawner): SIGKILL
 *  through the pidfd, the exit restarting the route whatever the
 *  supervisor. */
void shmr_ctl_supervise_kill_failed(void *ctx, unsigned r, unsigned k);

#endif
