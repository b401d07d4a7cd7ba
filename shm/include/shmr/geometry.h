/*
 * A domain's geometry (slot size, lane size, lcores, poll mode) and the
 * rule that says which geometries are usable.  Not installed; not for
 * worker programs.
 *
 * Kept apart from <shmr/domain.h> so that the configuration loader can
 * check a geometry without DPDK: the rule is written in shmr's own layout
 * constants, and a geometry it accepts is one rte_ring accepts too
 * (tests/unit/shm/test_geometry.c holds the two together).
 */
#ifndef SHMR_GEOMETRY_H
#define SHMR_GEOMETRY_H

#include <stdint.h>

#include <shmr/layout.h>

/** One size class of the payload arena: @p count buffers of @p size. */
struct shmr_arena_conf {
	uint32_t size;  /* power of two, SHMR_ARENA_BUF_MIN..SHMR_ARENA_BUF_MAX */
	uint32_t count; /* 1..SHMR_ARENA_COUNT_MAX */
};

/** Geometry a domain is created with. */
struct shmr_geometry {
	uint32_t slot_size;  /* multiple of 8, SHMR_SLOT_MIN..SHMR_SLOT_MAX */
	uint32_t lane_size;  /* power of two, 64..65536 */
	uint32_t nlcores;    /* 1..SHMR_MAX_LCORES */
	uint32_t poll_mode;  /* enum shmr_poll_mode */
	uint32_t spin_polls; /* 0: default */
	/* endpoint slots, SHMR_MIN_ENDPOINTS..SHMR_MAX_ENDPOINTS; 0: the
	 * default, SHMR_ENDPOINTS_DEFAULT */
	uint32_t max_endpoints;
	/* registry entries, SHMR_MIN_NAMES..SHMR_MAX_NAMES; 0: the default,
	 * SHMR_NAMES_DEFAULT */
	uint32_t max_names;
	/* type-map entries per router (types, call_types: each),
	 * SHMR_MIN_TYPES..SHMR_MAX_TYPES; 0: the default, SHMR_TYPES_DEFAULT */
	uint32_t max_types;
	/* routers, SHMR_MIN_ROUTERS..SHMR_MAX_ROUTERS; 0: the default,
	 * SHMR_ROUTERS_DEFAULT */
	uint32_t max_routers;
	/* routes per router (and hash or routee names: each),
	 * SHMR_MIN_ROUTES..SHMR_MAX_ROUTES; 0: the default,
	 * SHMR_ROUTES_DEFAULT */
	uint32_t max_routes;
};

/** The endpoint slots a domain of geometry @p g has (its default for 0).
 *  Context: any; pure. */
static inline uint32_t shmr_geometry_endpoints(const struct shmr_geometry *g)
{
	return g->max_endpoints ? g->max_endpoints : SHMR_ENDPOINTS_DEFAULT;
}

/** The registry entries a domain of geometry @p g has (its default for
 *  0).  Context: any; pure. */
static inline uint32_t shmr_geometry_names(const struct shmr_geometry *g)
{
	return g->max_names ? g->max_names : SHMR_NAMES_DEFAULT;
}

/** The type-map entries a router of a domain of geometry @p g has (its
 *  default for 0).  Context: any; pure. */
static inline uint32_t shmr_geometry_types(const struct shmr_geometry *g)
{
	return g->max_types ? g->max_types : SHMR_TYPES_DEFAULT;
}

/** The routers a domain of geometry @p g has room for (its default for
 *  0).  Context: any; pure. */
static inline uint32_t shmr_geometry_routers(const struct shmr_geometry *g)
{
	return g->max_routers ? g->max_routers : SHMR_ROUTERS_DEFAULT;
}

/** The routes (and names) a router of a domain of geometry @p g has room
 *  for (its default for 0).  Context: any; pure. */
static inline uint32_t shmr_geometry_routes(const struct shmr_geometry *g)
{
	return g->max_routes ? g->max_routes : SHMR_ROUTES_DEFAULT;
}

/** The payload arena a domain is created with: 0 classes (no arena), or
 *  up to SHMR_ARENA_MAX_CLASSES of strictly growing sizes, at most
 *  SHMR_ARENA_BYTES_MAX in all. */
struct shmr_arena_geo {
	uint32_t nclasses;
	struct shmr_arena_conf cls[SHMR_ARENA_MAX_CLASSES];
};

/** 0 when @p a is usable, else -EINVAL; @p why gets a one-line reason.
 *  Context: any; pure. */
int shmr_arena_geo_check(const struct shmr_arena_geo *a, const char **why);

/** The arena's classes of a header @p h into @p a (no check).
 *  Context: any; pure. */
void shmr_arena_geo_from(struct shmr_arena_geo *a,
			 const struct shmr_domain_hdr *h);

/** 0 when @p g is usable, else -EINVAL; @p why gets a one-line reason.
 *  Context: any; pure. */
int shmr_geometry_check(const struct shmr_geometry *g, const char **why);

#endif
