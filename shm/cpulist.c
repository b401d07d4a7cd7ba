/*
 * The one cpu-list parser (see <shmr/cpulist.h>).  Three parts read cpu
 * lists: the configuration loader (an operator's file), the control plane
 * (its socket's requests, and the lists it pins workers with) and
 * shmr-dataplane (--cpus, written by the control plane).  They share this
 * grammar and this limit; what each does with a range, and any bound of
 * its own, is its @p each callback.
 */
#include <errno.h>
#include <stddef.h>

#include <shmr/cpulist.h>

/* Decimal digits at *p into *out, read as SHMR_CPULIST_LIMIT when they
 * reach it (so no number overflows); NULL when there is no digit. */
static const char *number(const char *p, unsigned *out)
{
	unsigned v = 0;

	if (*p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v >= SHMR_CPULIST_LIMIT)
			v = SHMR_CPULIST_LIMIT;
	}
	*out = v;
	return p;
}

int shmr_cpulist_parse(const char *list,
		       int (*each)(unsigned lo, unsigned hi, void *arg),
		       void *arg, struct shmr_cpulist_range *bad)
{
	const char *p = list;

	if (!list)
		return -EINVAL;
	if (*p == '\0')
		return 0;
	for (;;) {
		struct shmr_cpulist_range r;
		int rc;

		p = number(p, &r.lo);
		if (!p)
			return -EINVAL;
		r.hi = r.lo;
		if (*p == '-') {
			p = number(p + 1, &r.hi);
			if (!p)
				return -EINVAL;
		}
		if (r.lo >= SHMR_CPULIST_LIMIT || r.hi >= SHMR_CPULIST_LIMIT ||
		    r.hi < r.lo) {
			if (bad)
				*bad = r;
			return r.hi < r.lo && r.lo < SHMR_CPULIST_LIMIT
				       ? -EDOM
				       : -ERANGE;
		}
		if (each && (rc = each(r.lo, r.hi, arg)) != 0)
			return rc;
		if (*p == '\0')
			return 0;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
}
