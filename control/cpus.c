/*
 * CPU lists of the configuration ("0", "0-3", "0,2-3") into hwloc bitmaps.
 * hwloc's own list parser accepts more than the configuration promises
 * (open ranges like "2-" meaning every cpu from 2 up), so the grammar is
 * checked here first: N or N-M (N <= M), comma-separated, below 4096.
 */
#include <errno.h>

#include "control_internal.h"

#define CPU_LIMIT 4096u

static const char *parse_num(const char *p, unsigned *out)
{
	unsigned v = 0;

	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (v >= CPU_LIMIT)
			return NULL;
	}
	*out = v;
	return p;
}

int shmr_ctl_cpus_parse(const char *list, hwloc_bitmap_t set)
{
	const char *p = list;
	unsigned a, b;

	hwloc_bitmap_zero(set);
	if (!list)
		return -EINVAL;
	if (*p == '\0')
		return 0;
	for (;;) {
		p = parse_num(p, &a);
		if (!p)
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p = parse_num(p + 1, &b);
			if (!p || b < a)
				return -EINVAL;
		}
		if (*p != ',' && *p != '\0')
			return -EINVAL;
		if (*p == ',')
			p++;
		else
			break;
	}
	if (hwloc_bitmap_list_sscanf(set, list) < 0)
		return -EINVAL;
	return 0;
}
