/*
 * The one cpu-list parser: "0", "0-3", "0,2-3" as the configuration, the
 * control socket and shmr-dataplane's --cpus spell a set of cpus.  Not
 * installed; not for worker programs.  No DPDK: the configuration loader
 * links it alone.
 */
#ifndef SHMR_CPULIST_H
#define SHMR_CPULIST_H

/*
 * Every cpu number a list names is below this (4096: what the control
 * plane's hwloc bitmaps have always taken).  A user that ends in a
 * cpu_set_t (the dataplane's lcores, hence the configuration's lists)
 * refuses cpus from CPU_SETSIZE up in its @p each callback.
 */
#define SHMR_CPULIST_LIMIT 4096u

/** A range lo..hi of cpus, both included. */
struct shmr_cpulist_range {
	unsigned lo, hi;
};

/**
 * Parse a cpu list: "" (no cpus), or comma-separated ranges "N" or "N-M",
 * N and M in decimal digits only (no sign, no space), N <= M, both below
 * SHMR_CPULIST_LIMIT.  Each range is checked in written order: its
 * digits, then its numbers against the limit, then its order; then
 * @p each (when not NULL) is called with it, then the ',' or end that
 * follows is checked.  A non-zero return of @p each stops the parse and
 * is returned.
 *
 * Context: any; pure (as pure as @p each).
 * Errors:  -EINVAL (@p list NULL, or not of this grammar), -ERANGE (a
 *          number at or above SHMR_CPULIST_LIMIT), -EDOM (a range N-M
 *          with M < N).  On -ERANGE and -EDOM @p bad, when not NULL, gets
 *          the range at fault (numbers at or above the limit read as the
 *          limit).
 */
int shmr_cpulist_parse(const char *list,
		       int (*each)(unsigned lo, unsigned hi, void *arg),
		       void *arg, struct shmr_cpulist_range *bad);

#endif
