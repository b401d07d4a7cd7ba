/*
 * Timing, percentiles and pinning for shmr-perf.
 */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_internal.h"

static double tsc_per_us;
static cpu_set_t start_mask;
static int start_mask_saved;

double perf_tsc_per_us(void)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	uint64_t t0, t1, c0, c1;

	if (tsc_per_us > 0)
		return tsc_per_us;
	/* Without EAL, rte_get_tsc_hz() is 0: calibrate against the
	 * monotonic clock over 20 ms (error well under 0.1 %). */
	t0 = perf_now_ns();
	c0 = rte_rdtsc();
	nanosleep(&nap, NULL);
	t1 = perf_now_ns();
	c1 = rte_rdtsc();
	tsc_per_us = (double)(c1 - c0) * 1000.0 / (double)(t1 - t0);
	return tsc_per_us;
}

double perf_tsc_read_ns(void)
{
	enum { N = 1 << 20 };
	uint64_t t0, t1;

	t0 = perf_now_ns();
	/* rte_rdtsc() is inline asm the compiler may not drop: each read
	 * in the loop is made. */
	for (unsigned i = 0; i < N; i++)
		(void)rte_rdtsc();
	t1 = perf_now_ns();
	return (double)(t1 - t0) / N;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void perf_latency_summary(uint64_t *ticks, unsigned n, struct perf_result *r)
{
	double per_us = perf_tsc_per_us();

	r->rtt = n;
	if (n == 0) {
		r->p50_us = r->p99_us = r->p999_us = r->max_us = 0;
		return;
	}
	qsort(ticks, n, sizeof(*ticks), cmp_u64);
	r->p50_us = (double)ticks[n / 2] / per_us;
	r->p99_us = (double)ticks[(uint64_t)n * 99 / 100] / per_us;
	r->p999_us = (double)ticks[(uint64_t)n * 999 / 1000] / per_us;
	r->max_us = (double)ticks[n - 1] / per_us;
}

void perf_affinity_save(void)
{
	if (sched_getaffinity(0, sizeof(start_mask), &start_mask) == 0)
		start_mask_saved = 1;
}

int perf_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -errno;
}

int perf_cpu_usable(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return 0;
	if (start_mask_saved)
		return CPU_ISSET(cpu, &start_mask);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	return CPU_ISSET(cpu, &set);
}

void perf_unpin(void)
{
	if (start_mask_saved)
		sched_setaffinity(0, sizeof(start_mask), &start_mask);
}

const char *perf_exe_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	else
		strcpy(dir, "/");
	return dir;
}

/* Busy and total jiffies of all CPUs, from /proc/stat's first line. */
static int cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return -1;
	/* user nice system idle iowait irq softirq steal */
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*total = *busy + v[3] + v[4];
	return 0;
}

int perf_wait_idle(unsigned max_s)
{
	struct timespec half = { 0, 500 * 1000 * 1000 };
	unsigned quiet = 0;

	for (unsigned i = 0; i < max_s * 2; i++) {
		unsigned long long b0, t0, b1, t1;

		if (cpu_jiffies(&b0, &t0) < 0)
			return 0;
		nanosleep(&half, NULL);
		if (cpu_jiffies(&b1, &t1) < 0)
			return 0;
		/* Under 5 % of the machine busy, twice in a row. */
		if (t1 > t0 && (b1 - b0) * 100 < 5 * (t1 - t0))
			quiet++;
		else
			quiet = 0;
		if (quiet >= 2)
			return 0;
	}
	return -1;
}

/* ---- ratios from interleaved pairs ----------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double perf_median(const double *v, unsigned n)
{
	double s[PERF_REPS_MAX];

	if (n == 0)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void perf_ratio_pairs(const double *num, const double *den, unsigned n,
		      struct perf_ratio *out)
{
	double r[PERF_REPS_MAX];
	unsigned k = 0;

	memset(out, 0, sizeof(*out));
	if (n > PERF_REPS_MAX)
		n = PERF_REPS_MAX;
	for (unsigned i = 0; i < n; i++)
		if (num[i] > 0 && den[i] > 0)
			r[k++] = num[i] / den[i];
	out->pairs = k;
	if (k == 0)
		return;
	out->median = perf_median(r, k);
	out->min = out->max = r[0];
	for (unsigned i = 1; i < k; i++) {
		out->min = r[i] < out->min ? r[i] : out->min;
		out->max = r[i] > out->max ? r[i] : out->max;
	}
	out->spread = out->median > 0 ? (out->max - out->min) / out->median
				      : 0;
}

double perf_ratio_by_speed(const double *num, const double *den,
			   const double *speed, unsigned n,
			   struct perf_ratio *fast, struct perf_ratio *slow)
{
	double fn[PERF_REPS_MAX], fd[PERF_REPS_MAX];
	double sn[PERF_REPS_MAX], sd[PERF_REPS_MAX];
	double lo = 0, hi = 0, cut;
	unsigned nf = 0, ns = 0;

	memset(fast, 0, sizeof(*fast));
	memset(slow, 0, sizeof(*slow));
	if (n > PERF_REPS_MAX)
		n = PERF_REPS_MAX;
	for (unsigned i = 0; i < n; i++) {
		if (!(speed[i] > 0))
			continue;
		lo = lo == 0 || speed[i] < lo ? speed[i] : lo;
		hi = speed[i] > hi ? speed[i] : hi;
	}
	if (lo == 0 || hi <= PERF_SPEEDS_APART * lo)
		return 0;
	cut = (lo + hi) / 2;
	for (unsigned i = 0; i < n; i++) {
		if (!(speed[i] > 0))
			continue;
		if (speed[i] >= cut) {
			fn[nf] = num[i];
			fd[nf++] = den[i];
		} else {
			sn[ns] = num[i];
			sd[ns++] = den[i];
		}
	}
	perf_ratio_pairs(fn, fd, nf, fast);
	perf_ratio_pairs(sn, sd, ns, slow);
	return cut;
}

void perf_ratio_print(const char *what, const struct perf_ratio *r)
{
	printf("%s = %.3f, median of %u pair%s (range %.3f..%.3f, spread "
	       "%.1f %%)",
	       what, r->median, r->pairs, r->pairs == 1 ? "" : "s", r->min,
	       r->max, r->spread * 100);
}
