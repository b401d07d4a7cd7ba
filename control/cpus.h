/*
 * CPU lists (cpus.c): parsing and default pinning.  Internal to the
 * control plane: not for direct inclusion outside control/ and
 * tests/unit/control/.
 */
#ifndef SHMR_CONTROL_CPUS_H
#define SHMR_CONTROL_CPUS_H

#include <hwloc.h>

/**
 * Parse a cpu list ("0", "0-3", "0,2-3"; "" = no pinning) into @p set
 * (emptied first).  Only digits, ',' and '-' in ascending ranges below
 * 4096 are accepted.
 * Errors: -EINVAL.
 */
int shmr_ctl_cpus_parse(const char *list, hwloc_bitmap_t set);

/**
 * The PUs the dataplane's routing lcores run on, as shmr-dataplane maps
 * them (lcore i on the (i % n)-th cpu of its --cpus list, in written
 * order).  @p dp_list is the configured dataplane_cpus, already checked
 * with shmr_ctl_cpus_parse(); "" means the control plane chooses: the
 * first @p nlcores PUs of @p allowed, which it then passes as --cpus.
 *
 * Context: pure; @p out is emptied first.
 * Errors:  -EINVAL (a bad list, @p nlcores 0, or "" with @p allowed
 *          empty).
 */
int shmr_ctl_cpus_lcores(const char *dp_list, hwloc_const_bitmap_t allowed,
			 unsigned nlcores, hwloc_bitmap_t out);

/**
 * The PU of the @p nth (from 0, in configuration order) route whose cpus
 * are "": round-robin over the PUs of @p allowed that are not in
 * @p lcores, or over all of @p allowed when every one of them routes.
 *
 * Context: pure.
 * Returns: the PU's OS index (>= 0); -EINVAL when @p allowed is empty,
 *          -ENOMEM.
 */
int shmr_ctl_cpus_pick(hwloc_const_bitmap_t allowed,
		       hwloc_const_bitmap_t lcores, unsigned nth);

#endif
