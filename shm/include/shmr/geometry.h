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

/** Geometry a domain is created with. */
struct shmr_geometry {
	uint32_t slot_size;  /* multiple of 8, SHMR_SLOT_MIN..SHMR_SLOT_MAX */
	uint32_t lane_size;  /* power of two, 64..65536 */
	uint32_t nlcores;    /* 1..SHMR_MAX_LCORES */
	uint32_t poll_mode;  /* enum shmr_poll_mode */
	uint32_t spin_polls; /* 0: default */
};

/** 0 when @p g is usable, else -EINVAL; @p why gets a one-line reason.
 *  Context: any; pure. */
int shmr_geometry_check(const struct shmr_geometry *g, const char **why);

#endif
