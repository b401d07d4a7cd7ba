/*
 * Which geometries a domain can have (see <shmr/geometry.h>).  No DPDK
 * here: the configuration loader links this alone.
 */
#include <errno.h>

#include <shmr/geometry.h>

int shmr_geometry_check(const struct shmr_geometry *g, const char **why)
{
	const char *w = NULL;

	if (g->slot_size < SHMR_SLOT_MIN || g->slot_size > SHMR_SLOT_MAX ||
	    g->slot_size % 8 != 0)
		w = "slot_size must be a multiple of 8 from 64 to 4096";
	else if (g->lane_size < 64 || g->lane_size > 65536 ||
		 (g->lane_size & (g->lane_size - 1)) != 0)
		w = "lane_size must be a power of two from 64 to 65536";
	else if (g->nlcores < 1 || g->nlcores > SHMR_MAX_LCORES)
		w = "lcores must be from 1 to 4";
	else if (g->poll_mode != SHMR_POLL_ADAPTIVE &&
		 g->poll_mode != SHMR_POLL_BUSY)
		w = "poll_mode must be adaptive or busy";
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}
