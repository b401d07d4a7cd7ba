/*
 * CPU lists of the configuration ("0", "0-3", "0,2-3") into hwloc bitmaps.
 * hwloc's own list parser accepts more than the configuration promises
 * (open ranges like "2-" meaning every cpu from 2 up), so the lists are
 * read with shmr's one parser (<shmr/cpulist.h>): N or N-M (N <= M),
 * comma-separated, below SHMR_CPULIST_LIMIT (4096).
 */
#include <errno.h>

#include <shmr/cpulist.h>

#include "cpus.h"

/* The set from the one parser's ranges, in decimal as the configuration
 * and the dataplane read them (hwloc's own list parser read "010" as
 * octal, and "08-9" as a set it could not print). */
static int set_range(unsigned lo, unsigned hi, void *arg)
{
	hwloc_bitmap_set_range(arg, lo, (int)hi);
	return 0;
}

int shmr_ctl_cpus_parse(const char *list, hwloc_bitmap_t set)
{
	hwloc_bitmap_zero(set);
	if (shmr_cpulist_parse(list, set_range, set, NULL) < 0) {
		hwloc_bitmap_zero(set);
		return -EINVAL;
	}
	return 0;
}

/*
 * Default pinning.  The dataplane puts routing lcore i on list[i % n],
 * where list is its --cpus in written order (or its affinity, ascending).
 * The control plane never lets it fall back on its affinity: when
 * dataplane_cpus is "" it passes the list it chose here, the first
 * nlcores allowed PUs, so both sides agree on which PUs route.  Workers
 * whose cpus are "" then go one PU each, round-robin, on the allowed PUs
 * no lcore uses; when every allowed PU routes, on all of them.
 */

/* The lcores' PUs so far, for shmr_ctl_cpus_lcores(). */
struct lcores_taken {
	hwloc_bitmap_t out;
	unsigned nlcores, taken;
};

static int take_lcores(unsigned lo, unsigned hi, void *arg)
{
	struct lcores_taken *l = arg;

	for (unsigned c = lo; c <= hi && l->taken < l->nlcores;
	     c++, l->taken++)
		hwloc_bitmap_set(l->out, c);
	return 0;
}

int shmr_ctl_cpus_lcores(const char *dp_list, hwloc_const_bitmap_t allowed,
			 unsigned nlcores, hwloc_bitmap_t out)
{
	const char *p = dp_list;
	struct lcores_taken l;
	unsigned taken = 0;
	int pu;

	hwloc_bitmap_zero(out);
	if (!dp_list || nlcores == 0)
		return -EINVAL;
	if (*p == '\0') {
		hwloc_bitmap_foreach_begin(pu, allowed)
		{
			if (taken == nlcores)
				break;
			hwloc_bitmap_set(out, (unsigned)pu);
			taken++;
		}
		hwloc_bitmap_foreach_end();
		return taken ? 0 : -EINVAL;
	}
	/* The first nlcores entries in written order ("3,1" puts lcore 0 on
	 * 3); a shorter list is reused from its start, adding nothing new. */
	l.out = out;
	l.nlcores = nlcores;
	l.taken = 0;
	if (shmr_cpulist_parse(dp_list, take_lcores, &l, NULL) < 0)
		return -EINVAL;
	return 0;
}

int shmr_ctl_cpus_pick(hwloc_const_bitmap_t allowed,
		       hwloc_const_bitmap_t lcores, unsigned nth)
{
	hwloc_bitmap_t pool = hwloc_bitmap_alloc();
	int n, pu;

	if (!pool)
		return -ENOMEM;
	hwloc_bitmap_andnot(pool, allowed, lcores);
	if (hwloc_bitmap_iszero(pool))
		hwloc_bitmap_copy(pool, allowed);
	n = hwloc_bitmap_weight(pool);
	if (n <= 0) { /* empty (0) or infinite (-1): nothing to pick from */
		hwloc_bitmap_free(pool);
		return -EINVAL;
	}
	pu = hwloc_bitmap_first(pool);
	for (unsigned i = 0; i < nth % (unsigned)n; i++)
		pu = hwloc_bitmap_next(pool, pu);
	hwloc_bitmap_free(pool);
	return pu;
}
