/*
 * The domain (domain.c): the shared mapping shmr-control creates, what the
 * daemon writes into it (the published spec and endpoint table, the
 * control lane, the lanes of a reused slot) and what it reads out of it
 * (the version each lcore applied, the counters).  Internal to shmr-control:
 * not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_DOMAIN_H
#define SHMR_CONTROL_DOMAIN_H

#include <stdint.h>

#include <shmr/layout.h>

#include <rte_ring_core.h>

#include "format.h"
#include "model.h"
#include "shmr_config.h"

struct shmr_ctl_domain {
	/* The domain's two memfds (layout.h), read-write (-1: not created),
	 * and the read-only descriptor of the first that ATTACH hands to
	 * peers (opened again through /proc, so it cannot be mapped or
	 * mprotect()ed writable; the file itself is mode 0600, so a peer
	 * of another user cannot open it again for writing either). */
	int memfd, lanes_fd, peer_ro_fd;
	void *base; /* NULL: not created; both parts, back to back */
	uint64_t size;
	int hugepages;
	/* Our own copy of the header's geometry and offsets (the plan of
	 * the configuration's geometry, at creation or adoption).  A peer
	 * can write the shared header: every reader here uses this copy,
	 * never the header's nlcores, sizes or offsets. */
	struct shmr_domain_hdr geo;
	uint64_t lanes_reinit; /* lanes initialised again after their owner
				* died and left them unsound */
	/* Per arena class: buffers taken back from gone holders, or freed
	 * with slots that were dropped (control/arena.c). */
	uint64_t arena_reclaimed_cls[SHMR_ARENA_MAX_CLASSES];
	/* Looks left, and when the next is due (0: not set), for shared
	 * buffers a death left counted too high (shmr_ctl_arena_recheck()). */
	unsigned arena_recheck_left;
	uint64_t arena_recheck_at;
	/* The private copy the spec is built in: room for geo.max_routers
	 * routers (shmr_spec_size()); allocated with our copy of the
	 * geometry (shmr_ctl_domain_bufs()), freed by close. */
	struct shmr_spec *spec_buf;
	/* and its active list: geo.max_endpoints entries (allocated with
	 * spec_buf) */
	uint32_t *active_buf;
	/* and its registry (geo.max_names used of it) */
	struct shmr_spec_reg names_buf[SHMR_MAX_NAMES];
	/* and its type maps: geo.max_routers pairs of geo.max_types
	 * entries (allocated with spec_buf) */
	struct shmr_spec_type *types_buf;
	/* and its routes and names: geo.max_routers blocks of
	 * geo.max_routes each (allocated with spec_buf) */
	void *routes_buf;
	/* The dataplane's per-slot counters (summed over lcores) as they
	 * stood when the slot was handed to its current owner: what the
	 * counters show is the difference, so that a reused slot starts at
	 * 0 (taken by shmr_ctl_publish(); see domain.c). */
	struct shmr_ctl_slot_base {
		uint64_t forwarded, discarded, failed, delivered, inbox_full;
		uint64_t bad_slots;
	} ctr_base[SHMR_MAX_ENDPOINTS];
};

/* The domain's parts, placed by our copy of the geometry (d->geo). */
static inline struct rte_ring *shmr_ctl_dom_lane(
	const struct shmr_ctl_domain *d, uint32_t slot, uint32_t idx)
{
	uint64_t n = (uint64_t)slot * SHMR_LANES_PER_EP(d->geo.nlcores) + idx;

	return (struct rte_ring *)((char *)d->base + d->geo.lanes_off +
				   n * d->geo.lane_stride);
}

static inline struct rte_ring *shmr_ctl_dom_ctl_lane(
	const struct shmr_ctl_domain *d)
{
	return (struct rte_ring *)((char *)d->base + d->geo.ctl_off);
}

static inline struct shmr_ep_shared *shmr_ctl_dom_ep(
	const struct shmr_ctl_domain *d, uint32_t slot)
{
	return (struct shmr_ep_shared *)((char *)d->base + d->geo.ep_off) +
	       slot;
}

static inline struct shmr_ep_peer *shmr_ctl_dom_ep_peer(
	const struct shmr_ctl_domain *d, uint32_t slot)
{
	return (struct shmr_ep_peer *)((char *)d->base + d->geo.eppeer_off) +
	       slot;
}

static inline struct shmr_hist *shmr_ctl_dom_hist(
	const struct shmr_ctl_domain *d, uint32_t slot)
{
	return (struct shmr_hist *)((char *)d->base + d->geo.hist_off) + slot;
}

static inline struct shmr_bell *shmr_ctl_dom_lcore_bell(
	const struct shmr_ctl_domain *d, uint32_t lcore)
{
	return (struct shmr_bell *)((char *)d->base + d->geo.bells_off) +
	       lcore;
}

static inline struct shmr_spec *shmr_ctl_dom_spec(
	const struct shmr_ctl_domain *d)
{
	return (struct shmr_spec *)((char *)d->base + d->geo.spec_off);
}

/* The spec's active list: geo.max_endpoints entries, its nactive used. */
static inline uint32_t *shmr_ctl_dom_active(const struct shmr_ctl_domain *d)
{
	return (uint32_t *)((char *)d->base + d->geo.active_off);
}

/* The registry's entries: geo.max_names of them, the spec's nreg used. */
static inline struct shmr_spec_reg *shmr_ctl_dom_names(
	const struct shmr_ctl_domain *d)
{
	return (struct shmr_spec_reg *)((char *)d->base + d->geo.names_off);
}

/* Router slot @p ri's type map (@p call 0) or call map (1): geo.max_types
 * entries, its ntypes / ncall_types used. */
static inline struct shmr_spec_type *
shmr_ctl_dom_types(const struct shmr_ctl_domain *d, uint32_t ri, int call)
{
	return shmr_spec_types_at((char *)d->base + d->geo.types_off,
				  d->geo.max_types, ri, call);
}

/* Router slot @p ri's routes and its hash or routee names: geo.max_routes
 * of each, its nroutes / nhash used. */
static inline struct shmr_spec_route *
shmr_ctl_dom_routes(const struct shmr_ctl_domain *d, uint32_t ri)
{
	return shmr_spec_routes_at((char *)d->base + d->geo.routes_off,
				   d->geo.max_routes, ri);
}

static inline char (*shmr_ctl_dom_hash(const struct shmr_ctl_domain *d,
				       uint32_t ri))[SHMR_NAME_MAX]
{
	return shmr_spec_hash_at((char *)d->base + d->geo.routes_off,
				 d->geo.max_routes, ri);
}

static inline struct shmr_lcore_stats *shmr_ctl_dom_stats(
	const struct shmr_ctl_domain *d, uint32_t lcore)
{
	return (struct shmr_lcore_stats *)((char *)d->base +
					   d->geo.counters_off) +
	       lcore;
}

/* Routing lcore @p l's counters of endpoint @p slot (the spare entry
 * for a slot beyond the geometry). */
static inline struct shmr_ep_ctr *
shmr_ctl_dom_ep_ctr(const struct shmr_ctl_domain *d, uint32_t l, uint32_t slot)
{
	uint32_t n = d->geo.max_endpoints;

	return (struct shmr_ep_ctr *)((char *)d->base + d->geo.epctr_off +
				      l * shmr_ep_ctr_stride(n)) +
	       (slot < n ? slot : n);
}

/**
 * Create the domain of @p cfg's geometry: two memfds (hugetlb when there
 * are free hugepages, else 4 KiB pages), sealed, mapped and laid out, and
 * the read-only descriptor for peers (shmr_ctl_domain_open_ro()).
 * Context: start-up.  Errors: -errno, the layout's -SHMR_E_*.
 */
int shmr_ctl_domain_create(struct shmr_ctl_domain *d,
			   const struct shmr_config *cfg);
/**
 * Open d->memfd again read-only into d->peer_ro_fd (for ATTACH), and make
 * the file mode 0600.  Context: after creation or adoption.
 * Errors: -errno (no /proc: peers cannot be given a read-only part).
 */
int shmr_ctl_domain_open_ro(struct shmr_ctl_domain *d);
/**
 * Allocate d->spec_buf, d->active_buf, d->types_buf and d->routes_buf
 * for our copy of the geometry (d->geo: its max_routers, max_endpoints,
 * max_types and max_routes).  Context: creation or
 * adoption, once d->geo is set.  Ownership: close frees them.
 * Errors: -ENOMEM.
 */
int shmr_ctl_domain_bufs(struct shmr_ctl_domain *d);
/** Close and unmap what creation or adoption made (idempotent). */
void shmr_ctl_domain_close(struct shmr_ctl_domain *d);
/** Publish @p m if dirty: ep table + spec under the seqcount, then a
 *  SHMR_CTL_SPEC slot on the control lane and its bell. */
void shmr_ctl_publish(struct shmr_ctl_domain *d, struct shmr_ctl_model *m);
/** Queue one control-lane message; 0 or -ENOBUFS (lane full). */
int shmr_ctl_lane_send(struct shmr_ctl_domain *d, uint32_t type,
		       uint64_t key);
/** min over routing lcores of stats.table_version. */
uint64_t shmr_ctl_seen_version(const struct shmr_ctl_domain *d);
/** Re-initialise every lane of @p slot (a reused slot), reset its bell. */
void shmr_ctl_slot_reinit(struct shmr_ctl_domain *d, uint32_t slot);
/**
 * The process that held @p slot is gone: take over its side of every lane
 * of the slot.  A lane sound enough to repair is repaired (its unfinished
 * burst handed back, its half-done enqueue dropped); one that is not (the
 * process wrote its geometry or indices, the dataplane's side included:
 * that side not at rest after LIVE_REST_WAIT_MS, domain.c, is taken to be
 * the process's doing) is initialised again in place,
 * counted in d->lanes_reinit and logged once for the slot.  The header's
 * geometry, if a peer wrote it, is written back from d->geo.
 *
 * Context: after the process's death is confirmed (waitpid, pidfd).
 * Returns: how many slots were handed back for redelivery.
 */
unsigned shmr_ctl_slot_take_over(struct shmr_ctl_domain *d, uint32_t slot);
/** Read the counters of every slot used in @p m out of the domain. */
void shmr_ctl_counters_read(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_counters *out);

#endif
