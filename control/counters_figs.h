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

struct shmr_ctl_domain;
struct shmr_ctl_model;

/**
 * Store each slot's counter bases (d->ctr_base) and each route's restarts
 * and redelivered count into its slot's figures line, each word only when
 * it changed (a line nobody else writes; readers are off the fast path).
 *
 * Context:     the control plane's thread; from shmr_ctl_publish(), inside
 *              the spec's seqcount write when the endpoint table changed
 *              (so a reader sees a slot's base with its generation), on
 *              its own otherwise.
 * Concurrency: relaxed stores, single writer; readers load relaxed (no
 *              partner: statistics).
 * Errors:      none; a domain not created (d->base NULL) is left alone.
 */
void shmr_ctl_figs_sync(struct shmr_ctl_domain *d,
			const struct shmr_ctl_model *m);

#endif
