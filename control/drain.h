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
 *              It also runs shmr_ctl_arena_recheck() (control/arena.h).
 * Returns:     when it wants to look again (ms, shmr_ctl_now_ms()'s
 *              clock), 0 when nothing drains and no recheck is due.
 */
uint64_t shmr_ctl_drain_poll(struct shmr_ctl_domain *d,
			     struct shmr_ctl_model *m,
			     struct shmr_ctl_dlq_files *dlq, uint64_t now);

/**
 * Dead-letter the @p left messages at the consumer end of lane @p r
 * (nobody consumes it now) into router @p router's file of @p dlq, or,
 * with @p router < 0, into the file of the router each was sent to (the
 * others are skipped): MessageRouteFailed records with status
 * @p status.  Nothing is trusted: the payload length is checked (a bad
 * one is only counted), the slots are found with our own mask.
 * Context: the control plane's thread; blocking file I/O.
 * Returns: how many were written.
 */
unsigned shmr_ctl_drain_dead_letter(const struct shmr_ctl_domain *d,
				    const struct shmr_ctl_model *m,
				    struct shmr_ctl_dlq_files *dlq,
				    const struct rte_ring *r, int64_t left,
				    int router, int32_t status);

#endif
