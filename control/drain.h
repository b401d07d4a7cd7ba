/*
 * Draining the outbound lanes of client endpoints that were closed or
 * whose process went (drain.c).  Internal to the control plane: not for
 * direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_DRAIN_H
#define SHMR_CONTROL_DRAIN_H

#include <stdint.h>

#include "dlqfile.h"
#include "domain.h"
#include "model.h"

/* How long a gone client's outbound lanes stay polled while the
 * dataplane takes nothing from them. */
#define SHMR_CTL_DRAIN_MS 2000u

/**
 * Look at every draining client slot of @p m: free those whose outbound
 * lanes the dataplane has emptied; give up on those it took nothing from
 * for SHMR_CTL_DRAIN_MS (freed, not reusable yet); count what
 * is left in a given-up slot once no lcore polls it any more
 * (m->close_dropped, one warning line per slot), and dead-letter those of
 * them that were sent to a router into its file of @p dlq (NULL: none),
 * with status -SHMR_E_TIMEOUT, so that `shmrctl dlq replay` can send
 * them again.  Marks @p m dirty when it freed anything: the caller
 * publishes.
 *
 * Context:     the control plane's loop, after any event; @p now from
 *              shmr_ctl_now_ms().
 * Concurrency: reads the lanes' tails (shmr_lane_unconsumed()), which the
 *              dataplane and a live producer move meanwhile; trusts
 *              nothing there beyond that check.
 * Returns:     when it wants to look again (ms, shmr_ctl_now_ms()'s
 *              clock), 0 when nothing drains.
 */
uint64_t shmr_ctl_drain_poll(struct shmr_ctl_domain *d,
			     struct shmr_ctl_model *m,
			     struct shmr_ctl_dlq_files *dlq, uint64_t now);

#endif
