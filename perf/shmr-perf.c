/*
 * shmr-perf: the appliance's benchmark harness and demo load generator.
 *
 *   shmr-perf [compare] [flags]   bare and router runs interleaved, medians,
 *                                 ratios against the bars
 *   shmr-perf bare [flags]        two-hop SPSC chain + two-ring ping-pong
 *   shmr-perf router [flags]      the same through shmr-control/-dataplane
 *   shmr-perf load --domain D ... paced load into a running appliance
 *
 * Every run checks what it measured: the consumer (bare) or the sinks
 * (router) must have received every message, in order per sender; if not,
 * the exit status is 1.  The bars are reported, never enforced: missing one
 * still exits 0.  Bad arguments exit 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_internal.h"

/* The bars (64-byte slots, bursts of 32). */
#define BAR_THROUGHPUT 0.5 /* router >= 0.5 x bare */
#define BAR_LATENCY 3.0    /* router call p50 <= 3 x bare ping-pong p50 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: shmr-perf [compare|bare|router] [--slot BYTES] "
		"[--burst N] [--count N] [--cpus A,B[,C]]\n"
		"                 [--rtt N] [--lane N] [--routes N] "
		"[--poll busy|adaptive] [--behaviour hash|type]\n"
		"                 [--lcores N] [--reps N] [--wait-idle] "
		"[--keep] [-v]\n"
		"       shmr-perf load [--domain D] [--run-dir DIR] "
		"[--router NAME] [--types 1,2,3] [--rate N] [--duration SEC]\n"
		"  --cpus A,B[,C]  A: producer/client/pinger, B: forwarder/"
		"dataplane/ponger,\n"
		"                  C: consumer/sink workers (default A); "
		"default 0,1\n");
}

static int parse_u64(const char *s, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	/* Accept a k/M suffix for counts: 10M, 100k. */
	if (*end == 'k' || *end == 'K') {
		v *= 1000;
		end++;
	} else if (*end == 'M' || *end == 'm') {
		v *= 1000000;
		end++;
	}
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned min, unsigned max,
		      unsigned *out)
{
	uint64_t v;

	if (parse_u64(s, min, max, &v) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_cpus(const char *s, struct perf_opts *o)
{
	int v[3], n = 0;
	const char *p = s;

	while (n < 3) {
		char *end;
		long x;

		errno = 0;
		x = strtol(p, &end, 10);
		if (end == p || errno || x < 0 || x >= 1024)
			return -1;
		v[n++] = (int)x;
		if (*end == '\0')
			break;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
	if (n < 2 || (n == 3 && *p && strchr(p, ',')))
		return -1;
	o->cpu_client = v[0];
	o->cpu_hub = v[1];
	o->cpu_sink = n == 3 ? v[2] : v[0];
	return 0;
}

static int parse_opts(int argc, char **argv, int first, struct perf_opts *o)
{
	*o = (struct perf_opts){
		.slot = 64, .burst = 32, .count = 10000000, .rtt = 100000,
		.lane = 1024, .cpu_client = 0, .cpu_hub = 1, .cpu_sink = 0,
		.routes = 1, .poll_busy = 1, .by_type = 0, .lcores = 1,
		.reps = 3,
	};
	for (int i = first; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0, takes = 1;

		if (strcmp(a, "--slot") == 0)
			bad = parse_uint(v, 64, 4096, &o->slot) < 0 ||
			      o->slot % 8 != 0;
		else if (strcmp(a, "--burst") == 0)
			bad = parse_uint(v, 1, 256, &o->burst);
		else if (strcmp(a, "--count") == 0)
			bad = parse_u64(v, 1, UINT64_MAX / 2, &o->count);
		else if (strcmp(a, "--rtt") == 0)
			bad = parse_uint(v, 0, 100000000, &o->rtt);
		else if (strcmp(a, "--lane") == 0)
			bad = parse_uint(v, 64, 65536, &o->lane) < 0 ||
			      (o->lane & (o->lane - 1)) != 0;
		else if (strcmp(a, "--routes") == 0)
			bad = parse_uint(v, 1, 32, &o->routes);
		else if (strcmp(a, "--lcores") == 0)
			bad = parse_uint(v, 1, 4, &o->lcores);
		else if (strcmp(a, "--reps") == 0)
			bad = parse_uint(v, 1, 101, &o->reps);
		else if (strcmp(a, "--cpus") == 0)
			bad = !v || parse_cpus(v, o) < 0;
		else if (strcmp(a, "--poll") == 0) {
			bad = !v || (strcmp(v, "busy") && strcmp(v, "adaptive"));
			if (!bad)
				o->poll_busy = strcmp(v, "busy") == 0;
		} else if (strcmp(a, "--behaviour") == 0 ||
			   strcmp(a, "--behavior") == 0) {
			bad = !v || (strcmp(v, "hash") && strcmp(v, "type"));
			if (!bad)
				o->by_type = strcmp(v, "type") == 0;
		} else if (strcmp(a, "--wait-idle") == 0) {
			o->wait_idle = 1;
			takes = 0;
		} else if (strcmp(a, "--keep") == 0) {
			o->keep = 1;
			takes = 0;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			o->verbose = 1;
			takes = 0;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(PERF_EXIT_OK);
		} else {
			fprintf(stderr, "shmr-perf: unknown argument '%s'\n", a);
			return -1;
		}
		if (bad) {
			fprintf(stderr, "shmr-perf: bad value for %s: '%s'\n",
				a, v ? v : "(missing)");
			return -1;
		}
		i += takes;
	}
	if (!perf_cpu_usable(o->cpu_client) || !perf_cpu_usable(o->cpu_hub) ||
	    !perf_cpu_usable(o->cpu_sink)) {
		fprintf(stderr, "shmr-perf: --cpus %d,%d,%d: not all of them "
				"are online and allowed\n",
			o->cpu_client, o->cpu_hub, o->cpu_sink);
		return -1;
	}
	return 0;
}

static int result_ok(const char *what, const struct perf_result *r)
{
	if (r->received == r->sent && r->gaps == 0 && r->reorders == 0)
		return 1;
	fprintf(stderr,
		"shmr-perf %s: LOSS/ORDER: sent %llu, received %llu, "
		"gaps %llu, reordered %llu\n",
		what, (unsigned long long)r->sent,
		(unsigned long long)r->received, (unsigned long long)r->gaps,
		(unsigned long long)r->reorders);
	return 0;
}

static void print_setup(const char *mode, const struct perf_opts *o)
{
	printf("shmr-perf %s: slot %u B, burst %u, count %llu, lane %u, "
	       "round trips %u; cpus: producer/client %d, forwarder/dataplane "
	       "%d, consumer/sinks %d",
	       mode, o->slot, o->burst, (unsigned long long)o->count, o->lane,
	       o->rtt, o->cpu_client, o->cpu_hub, o->cpu_sink);
	if (strcmp(mode, "bare") != 0)
		printf("; router: %u %s route%s, %s poll, %u lcore%s",
		       o->routes, o->by_type ? "type" : "hash",
		       o->routes == 1 ? "" : "s",
		       o->poll_busy ? "busy" : "adaptive", o->lcores,
		       o->lcores == 1 ? "" : "s");
	printf("\n");
}

static void print_result(const char *what, const struct perf_result *r)
{
	printf("%-6s %8.2f M msg/s  (%llu msgs, lost %llu, gaps %llu, "
	       "reordered %llu)",
	       what, r->mps / 1e6, (unsigned long long)r->sent,
	       (unsigned long long)(r->sent - r->received),
	       (unsigned long long)r->gaps, (unsigned long long)r->reorders);
	if (r->rtt)
		printf("; round trip p50 %.2f us, p99 %.2f us, p99.9 %.2f us, "
		       "max %.1f us (%u)",
		       r->p50_us, r->p99_us, r->p999_us, r->max_us, r->rtt);
	printf("\n");
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	double s[128];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int run_one(const char *mode, const struct perf_opts *o)
{
	struct perf_result r;
	int rc;

	print_setup(mode, o);
	rc = strcmp(mode, "bare") == 0 ? perf_bare_run(o, &r)
				       : perf_router_run(o, &r);
	if (rc == -PERF_EXIT_SKIP)
		return PERF_EXIT_SKIP;
	if (rc < 0)
		return PERF_EXIT_FAIL;
	print_result(mode, &r);
	return result_ok(mode, &r) ? PERF_EXIT_OK : PERF_EXIT_FAIL;
}

static int compare(const struct perf_opts *o)
{
	double bm[101], rm[101], bp50[101], bp99[101], rp50[101], rp99[101];
	struct perf_result b, r;
	double bare_mps, router_mps, tput, lat;
	int failed = 0;

	print_setup("compare", o);
	printf("%-4s %12s %12s %22s %22s\n", "rep", "bare M/s", "router M/s",
	       "bare ping p50/p99 us", "router call p50/p99 us");
	for (unsigned i = 0; i < o->reps; i++) {
		int rc;

		if (o->wait_idle && perf_wait_idle(120) < 0)
			printf("note: the machine did not go idle\n");
		if (perf_bare_run(o, &b) < 0)
			return PERF_EXIT_FAIL;
		if (!result_ok("bare", &b))
			failed = 1;
		if (o->wait_idle && perf_wait_idle(120) < 0)
			printf("note: the machine did not go idle\n");
		rc = perf_router_run(o, &r);
		if (rc == -PERF_EXIT_SKIP) {
			printf("%-4u %12.2f %12s %10.2f / %-9.2f %22s\n",
			       i + 1, b.mps / 1e6, "pending", b.p50_us,
			       b.p99_us, "pending");
			printf("router: the appliance is not built (see above); "
			       "router figures pending\n");
			return PERF_EXIT_FAIL;
		}
		if (rc < 0)
			return PERF_EXIT_FAIL;
		if (!result_ok("router", &r))
			failed = 1;
		bm[i] = b.mps;
		rm[i] = r.mps;
		bp50[i] = b.p50_us;
		bp99[i] = b.p99_us;
		rp50[i] = r.p50_us;
		rp99[i] = r.p99_us;
		printf("%-4u %12.2f %12.2f %10.2f / %-9.2f %10.2f / %-9.2f\n",
		       i + 1, bm[i] / 1e6, rm[i] / 1e6, bp50[i], bp99[i],
		       rp50[i], rp99[i]);
		fflush(stdout);
	}
	bare_mps = median(bm, o->reps);
	router_mps = median(rm, o->reps);
	tput = bare_mps > 0 ? router_mps / bare_mps : 0;
	printf("%-4s %12.2f %12.2f %10.2f / %-9.2f %10.2f / %-9.2f\n",
	       "med", bare_mps / 1e6, router_mps / 1e6, median(bp50, o->reps),
	       median(bp99, o->reps), median(rp50, o->reps),
	       median(rp99, o->reps));
	printf("throughput: router / bare = %.2f  (bar >= %.1f): %s\n", tput,
	       BAR_THROUGHPUT, tput >= BAR_THROUGHPUT ? "PASS" : "BELOW");
	if (o->rtt) {
		double bp = median(bp50, o->reps), rp = median(rp50, o->reps);

		lat = bp > 0 ? rp / bp : 0;
		printf("latency: router call p50 / bare ping-pong p50 = %.2f  "
		       "(bar <= %.1f): %s\n",
		       lat, BAR_LATENCY, lat <= BAR_LATENCY ? "PASS" : "BELOW");
	}
	{
		double lo = bm[0], hi = bm[0];

		for (unsigned i = 1; i < o->reps; i++) {
			lo = bm[i] < lo ? bm[i] : lo;
			hi = bm[i] > hi ? bm[i] : hi;
		}
		if (lo > 0 && hi > 1.3 * lo)
			printf("note: bare throughput varied %.0f%% across "
			       "repetitions: something else was running\n",
			       (hi / lo - 1) * 100);
	}
	if (o->slot != 64 || o->burst != 32)
		printf("note: the bars are defined for --slot 64 --burst 32\n");
	if (failed)
		printf("messages were lost or reordered: see above\n");
	return failed ? PERF_EXIT_FAIL : PERF_EXIT_OK;
}

int main(int argc, char **argv)
{
	const char *mode = "compare";
	struct perf_opts o;
	int first = 1;

	perf_affinity_save();
	if (argc > 1 && argv[1][0] != '-') {
		mode = argv[1];
		first = 2;
	}
	if (strcmp(mode, "load") == 0)
		return perf_load_main(argc - 1, argv + 1);
	if (strcmp(mode, "compare") && strcmp(mode, "bare") &&
	    strcmp(mode, "router")) {
		fprintf(stderr, "shmr-perf: unknown mode '%s'\n", mode);
		usage(stderr);
		return PERF_EXIT_USAGE;
	}
	if (parse_opts(argc, argv, first, &o) < 0) {
		usage(stderr);
		return PERF_EXIT_USAGE;
	}
	/* Unbuffered-enough output when piped into tee. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "compare") == 0)
		return compare(&o);
	return run_one(mode, &o);
}
