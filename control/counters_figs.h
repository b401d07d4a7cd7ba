/*
 * The control plane's figures in the domain (counters_figs.c): what only
 * shmr-control knows of each endpoint slot, written into the endpoint
 * table's third line (struct shmr_ep_figs, layout.h) so that the
 * dataplane's telemetry answers the registry's counters with the values
 * shmrctl shows.  Internal to shmr-control: not for direct inclusion
 * outside control/.
 */
#ifndef SHMR_CONTROL_COUNTERS_FIGS_H
#define SHMR_CONTROL_COUNTERS_FIGS_H

#include <stdint.h>

struct shmr_ctl_domain;
struct shmr_ctl_model;

/**
 * Slot @p slot was handed to a new owner: store its counter bases
 * (d->ctr_base[slot]) into its figures line, and zero its restarts and
 * redeliveries.  Each word only when it changed.
 *
 * Context:     the control plane's thread; inside the spec's seqcount
 *              write that publishes the slot's new generation
 *              (sync_endpoints(), domain.c), so a reader sees a slot's
 *              base with its generation.  @p slot < d->geo.max_endpoints.
 * Concurrency: relaxed stores, single writer; readers load relaxed (no
 *              partner: statistics).
 * Errors:      none.
 */
void shmr_ctl_figs_slot_handed(struct shmr_ctl_domain *d, uint32_t slot);

/**
 * Store each route's restarts and redelivered count into its inbox slot's
 * figures line, and, the first time for a domain (created or adopted),
 * every slot's line (shmr_ctl_figs_slot_handed()).  Each word only when it
 * changed (a line nobody else writes; readers are off the fast path).
 * Costs a pass over the routes, not over the endpoint slots.
 *
 * Context:     the control plane's thread; from shmr_ctl_publish().
 * Concurrency: as shmr_ctl_figs_slot_handed().
 * Errors:      none; a domain not created (d->base NULL) is left alone.
 */
void shmr_ctl_figs_sync(struct shmr_ctl_domain *d,
			const struct shmr_ctl_model *m);

#endif
