/*
 * shmr-perf's default pinning, from the machine's topology (hwloc).
 */
#include <hwloc.h>

#include "perf_internal.h"

int perf_default_cpus(struct perf_opts *o)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t s;
	int pus[3], n = 0, ncores;

	if (hwloc_topology_init(&topo) < 0)
		return -1;
	s = hwloc_bitmap_alloc();
	if (!s || hwloc_topology_load(topo) < 0) {
		hwloc_bitmap_free(s);
		hwloc_topology_destroy(topo);
		return -1;
	}
	/* One PU (an OS cpu number) of each core, in the topology's order,
	 * so no two of the three share a core through SMT. */
	ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	for (int i = 0; i < ncores && n < 3; i++) {
		hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE,
							 (unsigned)i);
		int pu;

		hwloc_bitmap_and(s, core->cpuset,
				 hwloc_topology_get_allowed_cpuset(topo));
		pu = hwloc_bitmap_first(s);
		if (pu >= 0 && perf_cpu_usable(pu))
			pus[n++] = pu;
	}
	hwloc_bitmap_free(s);
	hwloc_topology_destroy(topo);
	if (n < 2)
		return -1;
	o->cpu_client = pus[0];
	o->cpu_hub = pus[1];
	o->cpu_sink = n == 3 ? pus[2] : pus[0];
	return 0;
}
