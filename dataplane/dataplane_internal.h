/*
 * shmr-dataplane's core: what every module of the dataplane shares (the
 * private view of the domain, logging, the single-writer counters).
 * Internal, not for direct inclusion outside dataplane/ (the dataplane's
 * unit tests and shmr-perf's decide mode excepted).
 *
 * The modules, in the order a slot meets them, each with its own header:
 *   env.c      this header's functions: the geometry copy, logging;
 *   table.h    the routing table: build, free, resolve (table.c; DSO
 *              behaviours loaded through dso.h, dso.c);
 *   decide.h   the decision: the stateless fast path and the behaviour
 *              call, routers of routers (decide.c; the routing logics'
 *              pure parts in logic.h);
 *   rcu.h      the table swap (rcu.c);
 *   lcore.h    one routing lcore's state, wake and sleep (lcore.c);
 *   forward.h  the burst and the poll loop (forward.c, forward_poll.c;
 *              the glue in forward_bcast.c, forward_collect.c,
 *              forward_balance.c and their shared slot helpers in
 *              forward_slot.h; the reply collector and the balancing
 *              queue in collect.h, balance.h).
 *
 * Nothing here calls rte_eal_init(): the lanes are used through DPDK's
 * inline ring API only, so the tests link this code without EAL.  main.c
 * adds EAL, the lcores and the update thread.
 *
 * The model:
 *   - struct shmr_dp_env (here) is the dataplane's private copy of the domain's
 *     geometry, taken once at start after shmr_layout_check().  Peers can
 *     scribble on the shared header; the fast path never reads it again.
 *   - struct shmr_dp_table (table.h) and struct shmr_dp_lcore (lcore.h)
 *     are described in their headers.
 */
#ifndef SHMR_DATAPLANE_INTERNAL_H
#define SHMR_DATAPLANE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/arena.h>
#include <shmr/domain.h>
#include <shmr/layout.h>

struct rte_ring;

#define SHMR_DP_BURST 64u    /* slots peeked per lane per round */
#define SHMR_DP_MAX_HOPS 4u  /* routers one message may pass through */

/* Log levels (--log-level). */
enum shmr_dp_level {
	SHMR_DP_LOG_ERROR = 1,
	SHMR_DP_LOG_WARNING = 2,
	SHMR_DP_LOG_INFO = 3,
	SHMR_DP_LOG_DEBUG = 4,
};

/** The dataplane's private view of one domain mapping. */
struct shmr_dp_env {
	void *base;
	size_t map_size;
	uint32_t slot_size, lane_size, nlcores, max_endpoints;
	uint32_t poll_mode, spin_polls;
	uint64_t lane_stride, ep_off, spec_off, counters_off, ctl_off,
		lanes_off, bells_off, eppeer_off, work_off, work_stride;
	uint64_t epctr_off, epctr_stride; /* struct shmr_ep_ctr blocks */
	uint32_t max_names;  /* registry entries at names_off */
	uint64_t names_off;
	uint32_t max_types;  /* type-map entries a map at types_off */
	uint64_t types_off;
	/* The spec's routers (and type-map pairs): every router index read
	 * from the domain is held below it, never the header's value. */
	uint32_t max_routers;
	uint32_t max_routes; /* routes (and names) a router at routes_off */
	uint64_t routes_off;
	uint64_t active_off; /* the active list: max_endpoints entries */
	uint32_t work_nwords, work_nsum; /* per lcore (layout.h) */
	char name[SHMR_NAME_MAX];
	/* The payload arena's classes, our copy (arena.h). */
	struct shmr_arena_view arena;
	/* Where the core reports what it decided to drop or quarantine.
	 * Context: any dataplane thread; must be thread-safe.  NULL: silent. */
	void (*log)(void *ctx, int level, const char *line);
	void *log_ctx;
};

/**
 * Check a mapping (shmr_layout_check()) and take the private copy of its
 * geometry.
 *
 * Errors: -SHMR_E_PROTO, -SHMR_E_VERSION, -EINVAL (geometry unusable).
 */
int shmr_dp_env_init(struct shmr_dp_env *env, void *base, size_t map_size);

static inline struct shmr_ep_shared *shmr_dp_ep(const struct shmr_dp_env *e,
						uint32_t slot)
{
	return (struct shmr_ep_shared *)((char *)e->base + e->ep_off) + slot;
}

static inline struct shmr_ep_peer *shmr_dp_ep_peer(const struct shmr_dp_env *e,
						   uint32_t slot)
{
	return (struct shmr_ep_peer *)((char *)e->base + e->eppeer_off) + slot;
}

static inline struct shmr_bell *shmr_dp_lcore_bell(const struct shmr_dp_env *e,
						   uint32_t lcore)
{
	return (struct shmr_bell *)((char *)e->base + e->bells_off) + lcore;
}

/* Routing lcore @p lcore's work bits: summary words, then bit words. */
static inline _Atomic(uint64_t) *shmr_dp_work(const struct shmr_dp_env *e,
					      uint32_t lcore)
{
	return (_Atomic(uint64_t) *)((char *)e->base + e->work_off +
				      lcore * e->work_stride);
}

static inline struct rte_ring *shmr_dp_lane(const struct shmr_dp_env *e,
					    uint32_t slot, uint32_t idx)
{
	uint64_t n = (uint64_t)slot * SHMR_LANES_PER_EP(e->nlcores) + idx;

	return (struct rte_ring *)((char *)e->base + e->lanes_off +
				   n * e->lane_stride);
}

static inline struct shmr_lcore_stats *
shmr_dp_stats(const struct shmr_dp_env *e, uint32_t lcore)
{
	return (struct shmr_lcore_stats *)((char *)e->base + e->counters_off) +
	       lcore;
}

/* Routing lcore @p lcore's counters of endpoint @p slot; a slot beyond
 * the geometry gets the block's spare entry (a compare, no division). */
static inline struct shmr_ep_ctr *
shmr_dp_ep_ctr(const struct shmr_dp_env *e, uint32_t lcore, uint32_t slot)
{
	uint32_t n = e->max_endpoints;

	return (struct shmr_ep_ctr *)((char *)e->base + e->epctr_off +
				      lcore * e->epctr_stride) +
	       (slot < n ? slot : n);
}

static inline struct shmr_spec *shmr_dp_spec(const struct shmr_dp_env *e)
{
	return (struct shmr_spec *)((char *)e->base + e->spec_off);
}

/* Router slot @p ri's type map (@p call 0) or call map (1). */
static inline struct shmr_spec_type *
shmr_dp_types(const struct shmr_dp_env *e, uint32_t ri, int call)
{
	return shmr_spec_types_at((char *)e->base + e->types_off,
				  e->max_types, ri, call);
}

/* The spec's active list (max_endpoints entries; its nactive used). */
static inline uint32_t *shmr_dp_active(const struct shmr_dp_env *e)
{
	return (uint32_t *)((char *)e->base + e->active_off);
}

/* The domain's route region (shmr_spec_routes_at(), shmr_spec_hash_at():
 * max_routes routes and names a router). */
static inline void *shmr_dp_routes(const struct shmr_dp_env *e)
{
	return (char *)e->base + e->routes_off;
}

/* The registry's entries (max_names of them; the spec's nreg used). */
static inline struct shmr_spec_reg *shmr_dp_names(const struct shmr_dp_env *e)
{
	return (struct shmr_spec_reg *)((char *)e->base + e->names_off);
}

static inline struct rte_ring *shmr_dp_ctl_lane(const struct shmr_dp_env *e)
{
	return (struct rte_ring *)((char *)e->base + e->ctl_off);
}

/** Format and log one line through @p env (no rate limit). */
void shmr_dp_log(const struct shmr_dp_env *env, int level, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));

/*
 * Single-writer counters: only the owning lcore writes them, readers sum,
 * so a relaxed load and store replace a locked RMW.  No partner: readers
 * take whatever value is current.
 */
static inline void shmr_dp_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(
		c, atomic_load_explicit(c, memory_order_relaxed) + n,
		memory_order_relaxed);
}

#endif
