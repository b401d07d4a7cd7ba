/*
 * Does the domain a configuration describes fit this host?  Its size is
 * the layout's own plan (shmr_layout_plan_arena(), the formula in
 * docs/operator-guide.md, "Domain memory"), set against /proc/meminfo:
 * the domain is created on hugepages when enough are free, else on
 * 4 KiB pages from the memory the hugepages leave.  Internal to
 * shmr-control.
 */
#ifndef SHMR_CTL_MEMFIT_H
#define SHMR_CTL_MEMFIT_H

#include <stddef.h>
#include <stdint.h>

#include "shmr_config.h"

/* What /proc/meminfo says, in bytes. */
struct shmr_ctl_meminfo {
	uint64_t total;       /* MemTotal */
	uint64_t huge_total;  /* HugePages_Total * Hugepagesize */
	uint64_t huge_free;   /* HugePages_Free * Hugepagesize */
};

/**
 * Read @p path (NULL: /proc/meminfo) into @p out.
 * Context: any.  Blocking (a file read).
 * Errors:  -errno of the open; -EINVAL when it has no MemTotal.
 */
int shmr_ctl_meminfo_read(const char *path, struct shmr_ctl_meminfo *out);

/**
 * Does a domain of @p need bytes fit @p mi: on free hugepages, or on the
 * ordinary memory (MemTotal less what hugepages hold)?  NULL when it
 * does, else a one-line reason written into @p buf (@p cap bytes).
 * Context: any; pure.
 */
const char *shmr_ctl_memfit_why(uint64_t need, const struct shmr_ctl_meminfo *mi,
				char *buf, size_t cap);

/**
 * The whole check of @p cfg against this host (@p meminfo: NULL for
 * /proc/meminfo): 0 when the domain fits (or the host's memory cannot be
 * read: nothing to check against), else -ENOMEM with one line in @p err,
 * "FILE:LINE: max_endpoints: ..." naming the setting that sizes the
 * domain most: arena.classes when the arena is more than half of it,
 * else max_endpoints, lane_size, slot_size, lcores, the first of them
 * the file sets (the file alone when all are defaults).
 * Context: shmr-control's start and --check.  Blocking (a file read).
 */
int shmr_ctl_memfit_check(const struct shmr_config *cfg, const char *meminfo,
			  char *err, size_t cap);

#endif
