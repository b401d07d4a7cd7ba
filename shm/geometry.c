/*
 * Which geometries a domain can have (see <shmr/geometry.h>).  No DPDK
 * here: the configuration loader links this alone.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include <shmr/geometry.h>

static const char *arena_why(const struct shmr_arena_geo *g)
{
	uint64_t total = 0;

	if (g->nclasses > SHMR_ARENA_MAX_CLASSES)
		return "arena: at most 8 classes";
	for (uint32_t i = 0; i < g->nclasses; i++) {
		const struct shmr_arena_conf *c = &g->cls[i];

		if (c->size < SHMR_ARENA_BUF_MIN || c->size > SHMR_ARENA_BUF_MAX ||
		    (c->size & (c->size - 1)) != 0)
			return "arena: a class's size must be a power of two "
			       "from 64 bytes to 64M";
		if (i && c->size <= g->cls[i - 1].size)
			return "arena: classes must be listed by growing size, "
			       "each size once";
		if (c->count < 1 || c->count > SHMR_ARENA_COUNT_MAX)
			return "arena: a class's count must be from 1 to 65536";
		total += (uint64_t)c->size * c->count;
	}
	if (total > SHMR_ARENA_BYTES_MAX)
		return "arena: more than 64G of buffers in all";
	return NULL;
}

int shmr_arena_geo_check(const struct shmr_arena_geo *a, const char **why)
{
	const char *w = arena_why(a);

	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}

void shmr_arena_geo_from(struct shmr_arena_geo *a,
			 const struct shmr_domain_hdr *h)
{
	uint32_t n = h->arena_nclasses;

	/* A count beyond the table is kept as it is: the check refuses it. */
	memset(a, 0, sizeof(*a));
	a->nclasses = n;
	if (n > SHMR_ARENA_MAX_CLASSES)
		n = SHMR_ARENA_MAX_CLASSES;
	for (uint32_t i = 0; i < n; i++) {
		a->cls[i].size = h->arena[i].size;
		a->cls[i].count = h->arena[i].count;
	}
}

/* The messages below spell the limits out. */
static_assert(SHMR_MAX_LCORES == 32 && SHMR_MIN_ENDPOINTS == 16 &&
		      SHMR_MAX_ENDPOINTS == 16384 && SHMR_MIN_NAMES == 16 &&
		      SHMR_MAX_NAMES == 16384 && SHMR_MIN_TYPES == 1 &&
		      SHMR_MAX_TYPES == 1024,
	      "update shmr_geometry_check()'s messages");

int shmr_geometry_check(const struct shmr_geometry *g, const char **why)
{
	const char *w = NULL;

	static_assert(SHMR_MIN_ROUTERS == 1 && SHMR_MAX_ROUTERS == 256,
		      "the words below say the range");

	if (g->slot_size < SHMR_SLOT_MIN || g->slot_size > SHMR_SLOT_MAX ||
	    g->slot_size % 8 != 0)
		w = "slot_size must be a multiple of 8 from 64 to 4096";
	else if (g->lane_size < 64 || g->lane_size > 65536 ||
		 (g->lane_size & (g->lane_size - 1)) != 0)
		w = "lane_size must be a power of two from 64 to 65536";
	else if (g->nlcores < 1 || g->nlcores > SHMR_MAX_LCORES)
		w = "lcores must be from 1 to 32";
	else if (shmr_geometry_endpoints(g) < SHMR_MIN_ENDPOINTS ||
		 shmr_geometry_endpoints(g) > SHMR_MAX_ENDPOINTS)
		w = "max_endpoints must be from 16 to 16384";
	else if (shmr_geometry_names(g) < SHMR_MIN_NAMES ||
		 shmr_geometry_names(g) > SHMR_MAX_NAMES)
		w = "max_names must be from 16 to 16384";
	else if (shmr_geometry_types(g) < SHMR_MIN_TYPES ||
		 shmr_geometry_types(g) > SHMR_MAX_TYPES)
		w = "max_types must be from 1 to 1024";
	else if (shmr_geometry_routers(g) < SHMR_MIN_ROUTERS ||
		 shmr_geometry_routers(g) > SHMR_MAX_ROUTERS)
		w = "max_routers must be from 1 to 256";
	else if (shmr_geometry_routes(g) < SHMR_MIN_ROUTES ||
		 shmr_geometry_routes(g) > SHMR_MAX_ROUTES)
		w = "max_routes must be from 1 to 128";
	else if (g->poll_mode != SHMR_POLL_ADAPTIVE &&
		 g->poll_mode != SHMR_POLL_BUSY)
		w = "poll_mode must be adaptive or busy";
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}
