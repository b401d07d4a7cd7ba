/*
 * The endpoint table's third line (struct shmr_ep_shared.figs, layout.h):
 * what only the control plane knows of an endpoint slot, for the other
 * readers of the domain.  Internal to the appliance's parts: not
 * installed, included through shmr/layout.h.
 */
#ifndef SHMR_EP_FIGS_H
#define SHMR_EP_FIGS_H

#include <stdatomic.h>
#include <stdint.h>

/*
 * What only the control plane knows of an endpoint slot, in its third
 * line (struct shmr_ep_shared.figs): written by the control plane alone,
 * with relaxed stores, only when a value changes (control/counters_figs.c);
 * read relaxed by the dataplane's telemetry.  No partner: statistics.
 * The bases are stored inside the spec's seqcount write that hands the
 * slot to a new owner, so that a reader inside one seqcount read sees the
 * base of the owner it sees.
 *
 *   base_*       the dataplane's per-slot counters (summed over lcores)
 *                when the slot was handed to its current owner (a reused
 *                slot's figures start at 0: the counters are now - base);
 *                bad_slots is the slot's own dataplane line.
 *   restarts     a route's inbox slot: its worker's restarts.
 *   redelivered  a route's inbox slot: messages a dead worker held,
 *                handed to the next one.
 */
struct shmr_ep_figs {
	_Atomic(uint64_t) base_forwarded; /* router_forwarded */
	_Atomic(uint64_t) base_discarded; /* router_discarded */
	_Atomic(uint64_t) base_failed;    /* router_failed */
	_Atomic(uint64_t) base_delivered; /* ep_delivered */
	_Atomic(uint64_t) base_inbox_full; /* ep_full */
	_Atomic(uint64_t) base_bad_slots;
	_Atomic(uint64_t) restarts;
	_Atomic(uint64_t) redelivered;
};

#endif
