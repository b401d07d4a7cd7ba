/*
 * The dataplane's counters in the domain: per routing lcore, its own
 * counters and its counters by endpoint slot.  Part of the layout
 * (<shmr/layout.h> includes it, and pins every size and offset here);
 * not for direct inclusion.
 */
#ifndef SHMR_STATS_H
#define SHMR_STATS_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#ifndef SHMR_LAYOUT_H
#error "include <shmr/layout.h>, which defines the limits used here"
#endif

/*
 * Dataplane counters, one block per routing lcore, each written by that
 * lcore only (relaxed stores of its own values) and summed by readers.
 * What is counted by endpoint slot (a router's counters by its endpoint
 * slot, a route's forwarded count by its inbox's slot) is in struct
 * shmr_ep_ctr, below.
 */
struct shmr_lcore_stats {
	alignas(SHMR_CACHE_LINE) _Atomic(uint64_t) polls;
	_Atomic(uint64_t) rx;        /* slots taken from outbound lanes */
	_Atomic(uint64_t) forwarded; /* routed + direct */
	_Atomic(uint64_t) discarded;
	_Atomic(uint64_t) failed;
	_Atomic(uint64_t) bad;       /* slots with a bad length/kind/target */
	_Atomic(uint64_t) sleeps;
	_Atomic(uint64_t) table_version; /* version this lcore last saw */
	_Atomic(uint64_t) admin;         /* slots put into the admin endpoint */
	/* meant for it, but its lane was full */
	_Atomic(uint64_t) admin_dropped;
	_Atomic(uint64_t) busy_polls; /* polls that found work */
	_Atomic(uint64_t) wakeups;    /* sleeps ended by a ring, not a timeout */
};

/*
 * One lcore's counters of one endpoint slot, in the domain part at
 * epctr_off: per lcore, max_endpoints + 1 of them (the last one counts
 * what a bad slot number would have counted, so a writer bounds an index
 * with a compare, never a division), each lcore's block on a cache line
 * of its own (shmr_ep_ctr_stride()).  Written by that lcore only.
 */
struct shmr_ep_ctr {
	_Atomic(uint64_t) router_forwarded;
	_Atomic(uint64_t) router_discarded;
	_Atomic(uint64_t) router_failed;
	_Atomic(uint64_t) ep_delivered; /* into inbox slot */
	/* Enqueues into inbox slot that found its lane full (the lcore
	 * held the slot back, or failed it as the router asks). */
	_Atomic(uint64_t) ep_full;
};

/* Bytes between two lcores' blocks of struct shmr_ep_ctr. */
static inline uint64_t shmr_ep_ctr_stride(uint32_t max_endpoints)
{
	uint64_t b = ((uint64_t)max_endpoints + 1) * sizeof(struct shmr_ep_ctr);

	return (b + SHMR_CACHE_LINE - 1) & ~(uint64_t)(SHMR_CACHE_LINE - 1);
}

#endif
