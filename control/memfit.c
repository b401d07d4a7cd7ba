/*
 * A configuration's domain against this host's memory (memfit.h).  The
 * size is the layout's own plan, never a second copy of the formula: the
 * operator guide's "Domain memory" writes the same sum out for people.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <shmr/domain.h>
#include <shmr/geometry.h>

#include "memfit.h"

#define MIB (1024.0 * 1024.0)

/* @p b bytes as "N.N MiB", or GiB from 10 GiB up, into @p buf. */
static const char *size_text(uint64_t b, char *buf, size_t cap)
{
	if (b >= (10ull << 30))
		snprintf(buf, cap, "%.1f GiB", b / (MIB * 1024.0));
	else
		snprintf(buf, cap, "%.1f MiB", b / MIB);
	return buf;
}

int shmr_ctl_meminfo_read(const char *path, struct shmr_ctl_meminfo *out)
{
	uint64_t huge_pages = 0, huge_free = 0, huge_kb = 0, total_kb = 0;
	char line[256];
	FILE *f = fopen(path ? path : "/proc/meminfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t v;

		if (sscanf(line, "MemTotal: %" SCNu64, &v) == 1)
			total_kb = v;
		else if (sscanf(line, "HugePages_Total: %" SCNu64, &v) == 1)
			huge_pages = v;
		else if (sscanf(line, "HugePages_Free: %" SCNu64, &v) == 1)
			huge_free = v;
		else if (sscanf(line, "Hugepagesize: %" SCNu64, &v) == 1)
			huge_kb = v;
	}
	fclose(f);
	if (total_kb == 0)
		return -EINVAL;
	out->total = total_kb * 1024u;
	out->huge_total = huge_pages * huge_kb * 1024u;
	out->huge_free = huge_free * huge_kb * 1024u;
	return 0;
}

const char *shmr_ctl_memfit_why(uint64_t need, const struct shmr_ctl_meminfo *mi,
				char *buf, size_t cap)
{
	uint64_t plain = mi->total > mi->huge_total ? mi->total - mi->huge_total
						    : 0;
	char n[32], h[32], p[32];

	if (need <= mi->huge_free || need <= plain)
		return NULL;
	snprintf(buf, cap,
		 "the domain needs %s (docs/operator-guide.md, \"Domain "
		 "memory\"), more than this host has: %s of free hugepages, "
		 "%s of memory besides the hugepages",
		 size_text(need, n, sizeof(n)),
		 size_text(mi->huge_free, h, sizeof(h)),
		 size_text(plain, p, sizeof(p)));
	return buf;
}

int shmr_ctl_memfit_check(const struct shmr_config *cfg, const char *meminfo,
			  char *err, size_t cap)
{
	struct shmr_ctl_meminfo mi;
	struct shmr_domain_hdr plan;
	struct shmr_geometry g;
	const char *where;
	char why[256];
	int64_t need, bare;

	shmr_config_geometry(cfg, &g);
	need = shmr_layout_plan_arena(&g, &cfg->arena, &plan);
	if (need < 0 || shmr_ctl_meminfo_read(meminfo, &mi) < 0)
		return 0; /* validated already; no meminfo: nothing to say */
	if (!shmr_ctl_memfit_why((uint64_t)need, &mi, why, sizeof(why)))
		return 0;
	/* The arena is a part of its own (its classes alone size it): when
	 * it weighs more than the rest of the plan, no geometry setting is
	 * what to change, and naming one sends the operator the wrong way. */
	bare = shmr_layout_plan(&g, &plan);
	where = cfg->size_where;
	if (cfg->arena_where[0] && bare >= 0 && need - bare > bare)
		where = cfg->arena_where;
	if (where[0])
		snprintf(err, cap, "%s: %s", where, why);
	else
		snprintf(err, cap, "%s: domain: %s", cfg->source, why);
	return -ENOMEM;
}
