/*
 * shmr-perf: the appliance's benchmark harness and demo load generator.
 *
 *   shmr-perf [compare] [flags]   bare and router runs interleaved, medians,
 *                                 ratios against the bars
 *   shmr-perf --version           "shmr-perf VERSION"
 *   shmr-perf bare [flags]        two-hop SPSC chain, two-ring ping-pong,
 *                                 three-process round trip
 *   shmr-perf router [flags]      the same through shmr-control/-dataplane,
 *                                 in busy and/or adaptive poll mode
 *   shmr-perf logics [flags]      each routing logic over --routes sinks
 *                                 (default 16) beside the bare two-hop
 *                                 baseline of the same run
 *   shmr-perf decide [flags]      each logic's routing decision alone, in
 *                                 this process, ns per decision
 *   shmr-perf idle [--idle N]     the router run with N idle endpoints
 *                                 attached against none, in pairs (idle.c)
 *   shmr-perf churn [--rate N]    a steady stream while the control plane
 *                                 applies N route changes a second, against
 *                                 the same stream without, in one run
 *   shmr-perf load --domain D ... paced load into a running appliance
 *   shmr-perf report FILE.json... plots (SVG, gnuplot) from --json results
 *
 * --json: JSON Lines on stdout (one object per run, per median, per
 * summary; json.c), the text report on stderr as the runs' progress.
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

#include <shmr/version.h>

#include <shmr/layout.h>

#include "perf_internal.h"

/* The bars (64-byte slots, bursts of 32). */
#define BAR_THROUGHPUT 0.5 /* router >= 0.5 x bare */
#define BAR_LATENCY 3.0    /* router call p50 <= 3 x bare ping-pong p50 */
#define BAR_SOJOURN 0.03   /* issue 14: the stamps cost under 3 % */
/* issue 16: router / bare at least 0.8 with one route, busy poll */
#define GOAL_THROUGHPUT 0.8

static const unsigned poll_bit[2] = { PERF_POLL_BUSY, PERF_POLL_ADAPTIVE };
static const char *const poll_name[2] = { "busy", "adaptive" };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: shmr-perf [compare|bare|router|logics|decide|large|"
		"iceoryx|churn] [--slot BYTES] [--size BYTES (large, iceoryx)] "
		"[--burst N] [--count N] [--cpus A,B[,C]]\n"
		"                 [--rtt N] [--lane N] [--routes N] "
		"[--poll busy|adaptive|both] [--behaviour hash|type]\n"
		"                 [--lcores N] [--reps N] [--wait-idle] "
		"[--keep] [-v] [--sojourn on|off|both]\n"
		"       shmr-perf idle [--idle N] [--reps N] [router flags]\n"
		"                 churn: [--rate N] [--phase-ms MS]\n"
		"                 [--logics hash,round-robin,random,"
		"smallest-mailbox,consistent-hash,broadcast,\n"
		"                  scatter-gather,tail-chopping,balancing] "
		"[--vnodes N]\n"
		"       shmr-perf load [--domain D] [--run-dir DIR] "
		"[--router NAME] [--types 1,2,3] [--rate N] [--duration SEC]\n"
		"       shmr-perf --version\n"
		"  --cpus A,B[,C]  A: producer/client/pinger, B: forwarder/"
		"dataplane/ponger,\n"
		"                  C: consumer/sink workers (default A); "
		"default: one cpu of each\n"
		"                  of the first three cores (two cores: "
		"A,B with C = A)\n"
		"  --sojourn       router runs with sojourn stamps on (default), "
		"off, or (compare)\n"
		"                  both, side by side, with the stamps' cost\n"
		"  --json          JSON Lines on stdout, one object per run "
		"and per median\n"
		"                  (docs/benchmarks.md); the text goes to "
		"stderr\n"
		"       shmr-perf report [--out DIR] FILE.json...  SVG plots "
		"(gnuplot)\n");
}

/* "A", "B" or "both" of @p v as bit 1, bit 2 or both in @p out (the
 * PERF_POLL_* and PERF_SOJ_* bits).  Returns 0, or -1 (left alone). */
static int one_or_both(const char *v, const char *a, const char *b,
		       unsigned *out)
{
	if (!v)
		return -1;
	if (strcmp(v, a) == 0)
		*out = 1u;
	else if (strcmp(v, b) == 0)
		*out = 2u;
	else if (strcmp(v, "both") == 0)
		*out = 3u;
	else
		return -1;
	return 0;
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

#define LOGICS_ALL                                                          \
	"hash,round-robin,random,smallest-mailbox,consistent-hash,broadcast," \
	"scatter-gather,tail-chopping"

/* Every name of a --logics list is one shmr-perf logics knows. */
static int logics_ok(const char *s)
{
	static const char *const known[] = {
		"hash", "round-robin", "random", "smallest-mailbox",
		"consistent-hash", "broadcast", "scatter-gather",
		"tail-chopping", "balancing",
	};

	while (*s) {
		size_t n = strcspn(s, ",");
		int ok = 0;

		for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= strlen(known[i]) == n &&
			      strncmp(known[i], s, n) == 0;
		if (!ok)
			return 0;
		s += n;
		if (*s == ',' && *++s == '\0')
			return 0;
	}
	return 1;
}

static int parse_opts(int argc, char **argv, int first, const char *mode,
		      struct perf_opts *o)
{
	int cpus_given = 0;

	*o = (struct perf_opts){
		.slot = 64, .burst = 32, .count = 10000000, .rtt = 100000,
		.lane = 1024, .cpu_client = 0, .cpu_hub = 1, .cpu_sink = 0,
		.routes = 1, .poll_busy = 1, .by_type = 0, .lcores = 1,
		.polls = PERF_POLL_BUSY | PERF_POLL_ADAPTIVE,
		.sojourns = PERF_SOJ_ON,
		.reps = 3,
	};
	if (strcmp(mode, "large") == 0 || strcmp(mode, "iceoryx") == 0) {
		o->size = 1u << 20;
		o->count = 20000;
		o->rtt = 2000;
		o->polls = PERF_POLL_BUSY;
	}
	if (strcmp(mode, "logics") == 0 || strcmp(mode, "decide") == 0) {
		o->routes = 16;
		o->count = 2000000;
		o->rtt = 0;
		o->polls = PERF_POLL_BUSY;
		o->logics = LOGICS_ALL;
	}
	if (strcmp(mode, "idle") == 0) {
		o->idle = 1000; /* the first bar (0.9 of none) */
		o->rtt = 0;
		o->polls = PERF_POLL_BUSY;
		o->reps = 5;
	}
	/* compare: 9 pairs (3 before); docs/benchmarks.md, "Ratios, run to
	 * run", has what that bought on a shared machine. */
	if (strcmp(mode, "compare") == 0)
		o->reps = 9;
	if (strcmp(mode, "churn") == 0) {
		o->churn = 1;
		o->routes = 2;
		o->rtt = 0;
		o->reps = 9;
		o->polls = PERF_POLL_BUSY;
		o->rate = 100000;
		o->phase_ms = 500;
	}
	for (int i = first; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0, takes = 1;

		if (strcmp(a, "--size") == 0) {
			char *end = NULL;
			unsigned long long sz = v ? strtoull(v, &end, 10) : 0;

			if (end && *end == 'K')
				sz <<= 10, end++;
			else if (end && *end == 'M')
				sz <<= 20, end++;
			bad = !v || !end || *end || sz < 64 ||
			      sz > PERF_LARGE_MAX || (sz & (sz - 1));
			o->size = (size_t)sz;
		} else if (strcmp(a, "--slot") == 0)
			bad = parse_uint(v, 64, 4096, &o->slot) < 0 ||
			      o->slot % 8 != 0;
		else if (strcmp(a, "--json") == 0) {
			o->json = 1;
			takes = 0;
		}
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
			bad = parse_uint(v, 1, SHMR_MAX_LCORES, &o->lcores);
		else if (strcmp(a, "--reps") == 0)
			bad = parse_uint(v, 1, 101, &o->reps);
		else if (strcmp(a, "--idle") == 0)
			bad = parse_uint(v, 1, SHMR_MAX_ENDPOINTS - 16, &o->idle);
		else if (strcmp(a, "--rate") == 0 && o->churn)
			bad = parse_uint(v, 0, 10000000, &o->rate);
		else if (strcmp(a, "--phase-ms") == 0 && o->churn)
			bad = parse_uint(v, 50, 600000, &o->phase_ms);
		else if (strcmp(a, "--cpus") == 0) {
			bad = !v || parse_cpus(v, o) < 0;
			cpus_given = 1;
		}
		else if (strcmp(a, "--poll") == 0) {
			bad = one_or_both(v, "busy", "adaptive", &o->polls) < 0;
		} else if (strcmp(a, "--sojourn") == 0) {
			/* PERF_SOJ_ON and _OFF are bits 1 and 2 as well. */
			bad = one_or_both(v, "on", "off", &o->sojourns) < 0;
			o->sojourn_off = o->sojourns == PERF_SOJ_OFF;
		} else if (strcmp(a, "--behaviour") == 0 ||
			   strcmp(a, "--behavior") == 0) {
			bad = !v || (strcmp(v, "hash") && strcmp(v, "type"));
			if (!bad)
				o->by_type = strcmp(v, "type") == 0;
		} else if (strcmp(a, "--vnodes") == 0) {
			bad = parse_uint(v, 1, 1024, &o->vnodes);
		} else if (strcmp(a, "--logics") == 0) {
			bad = !v || !*v || !logics_ok(v);
			if (!bad)
				o->logics = v;
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
	if (!cpus_given)
		(void)perf_default_cpus(o); /* else 0,1 as set above */
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
	char who[64];

	snprintf(who, sizeof(who), "shmr-perf %s", what);
	return perf_result_checked(who, r);
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
		       o->polls == PERF_POLL_BUSY     ? "busy"
		       : o->polls == PERF_POLL_ADAPTIVE ? "adaptive"
							: "busy and adaptive",
		       o->lcores,
		       o->lcores == 1 ? "" : "s");
	printf("\n");
}

static void print_result(const char *what, const struct perf_result *r)
{
	printf("%-15s %8.2f M msg/s  (%llu msgs, lost %llu, gaps %llu, "
	       "reordered %llu)",
	       what, r->mps / 1e6, (unsigned long long)r->sent,
	       (unsigned long long)(r->sent - r->received),
	       (unsigned long long)r->gaps, (unsigned long long)r->reorders);
	if (r->rtt)
		printf("; round trip p50 %.2f us, p99 %.2f us, p99.9 %.2f us, "
		       "max %.1f us (%u)",
		       r->p50_us, r->p99_us, r->p999_us, r->max_us, r->rtt);
	printf("\n");
	if (r->rtt3)
		printf("%-15s pinger -> forwarder -> echoer -> forwarder -> "
		       "pinger: round trip p50 %.2f us, p99 %.2f us, "
		       "p99.9 %.2f us, max %.1f us (%u, every echo checked)\n",
		       "bare 3-proc rtt", r->rtt3_p50_us, r->rtt3_p99_us,
		       r->rtt3_p999_us, r->rtt3_max_us, r->rtt3);
	if (r->handoff)
		printf("%-15s pinger <-> ponger on one cpu, yielding: round "
		       "trip p50 %.2f us, p99 %.2f us (%u)\n",
		       "bare handoff", r->handoff_p50_us, r->handoff_p99_us,
		       r->handoff);
	fflush(stdout);
}

static int run_one(const char *mode, const struct perf_opts *o)
{
	struct perf_result r;
	int rc, ret = PERF_EXIT_OK;

	if (strcmp(mode, "bare") == 0) {
		print_setup(mode, o);
		if (perf_bare_run(o, &r) < 0)
			return PERF_EXIT_FAIL;
		print_result(mode, &r);
		perf_json_emit(perf_json_run(mode, o, 0, 1, "bare", &r));
		return result_ok(mode, &r) ? PERF_EXIT_OK : PERF_EXIT_FAIL;
	}
	for (unsigned m = 0; m < 2; m++) {
		struct perf_opts one = *o;
		char what[32];

		if (!(o->polls & poll_bit[m]))
			continue;
		one.polls = poll_bit[m];
		one.poll_busy = poll_bit[m] == PERF_POLL_BUSY;
		snprintf(what, sizeof(what), "router %s", poll_name[m]);
		print_setup(mode, &one);
		rc = perf_router_run(&one, &r);
		if (rc == -PERF_EXIT_SKIP)
			return PERF_EXIT_SKIP;
		if (rc < 0)
			return PERF_EXIT_FAIL;
		print_result(what, &r);
		perf_json_emit(perf_json_run(mode, &one, 1, 1, "router", &r));
		if (!result_ok(what, &r))
			ret = PERF_EXIT_FAIL;
	}
	return ret;
}

/* One row of compare's table; a negative figure prints as "-". */
static void row(const char *rep, const char *run, double mps, double p50,
		double p99, const char *note)
{
	char m[16] = "-", a[16] = "-", b[16] = "-";

	if (mps >= 0)
		snprintf(m, sizeof(m), "%.2f", mps / 1e6);
	if (p50 >= 0)
		snprintf(a, sizeof(a), "%.2f", p50);
	if (p99 >= 0)
		snprintf(b, sizeof(b), "%.2f", p99);
	printf("%-4s %-26s %8s %11s %11s  %s\n", rep, run, m, a, b, note);
	fflush(stdout);
}

/* Do two of client, hub and sinks share a cpu (a call's context switch)? */
static int shares_core(const struct perf_opts *o)
{
	return o->cpu_sink == o->cpu_client || o->cpu_sink == o->cpu_hub ||
	       o->cpu_client == o->cpu_hub;
}

/* compare's router runs: each poll mode, with the sojourn stamps on and
 * then off. */
#define CMP_MODES 4

/*
 * Mode @p m of compare's router runs in @p one (from @p o), its label
 * ("busy", "adaptive, no sojourn") in @p label.  Returns 0 when @p o did
 * not ask for it.
 */
static int cmp_mode(const struct perf_opts *o, unsigned m,
		    struct perf_opts *one, char *label, size_t cap)
{
	unsigned p = m % 2, off = m / 2;

	if (!(o->polls & poll_bit[p]) ||
	    !(o->sojourns & (off ? PERF_SOJ_OFF : PERF_SOJ_ON)))
		return 0;
	*one = *o;
	one->polls = poll_bit[p];
	one->poll_busy = poll_bit[p] == PERF_POLL_BUSY;
	one->sojourn_off = (int)off;
	snprintf(label, cap, "%s%s", poll_name[p], off ? ", no sojourn" : "");
	return 1;
}

/*
 * Issue 16's goal for a call: with client, dataplane and worker each on a
 * core of its own, p50 at most 2 x the bare two-process ping-pong's; when
 * they share cores (two cores: the context switches are the floor), at
 * most 1.05 x the bare three-process round trip's, which pays the same.
 */
#define GOAL_CALL_OWN_CORES 2.0
#define GOAL_CALL_SHARED 1.05

static void call_goal(const struct perf_opts *o, const char *poll,
		      const struct perf_ratio *lat,
		      const struct perf_ratio *lat3, const double *rp50,
		      const double *bp50, const double *tp50,
		      const double *speed, struct json_object *j)
{
	int shared = shares_core(o);
	double goal = shared ? GOAL_CALL_SHARED : GOAL_CALL_OWN_CORES;
	double v = shared ? lat3->median : lat->median;
	struct perf_ratio fast, slow;
	char two[96] = "";

	/* On a host of two speeds, the goal must hold at both: judged by
	 * the higher side's median. */
	if (perf_ratio_by_speed(rp50, shared ? tp50 : bp50, speed, o->reps,
				&fast, &slow) != 0 &&
	    fast.pairs && slow.pairs) {
		v = fast.median > slow.median ? fast.median : slow.median;
		snprintf(two, sizeof(two),
			 "; the higher of the host's two speeds, %.3f and %.3f",
			 fast.median, slow.median);
	}
	printf("goal (%s): router call p50 / bare %s p50 = %.3f <= %.2f "
	       "(%s%s): %s\n",
	       poll, shared ? "3-proc rtt" : "ping-pong", v, goal,
	       shared ? "its three processes share cores"
		      : "client, dataplane and worker each on a core",
	       two, v <= goal ? "PASS" : "BELOW");
	perf_json_num(j, "call_goal", goal);
	perf_json_str(j, "call_goal_vs", shared ? "rtt3" : "pingpong");
	perf_json_num(j, "call_goal_judged", v);
	perf_json_bool(j, "call_goal_met", v <= goal);
}

/* A ratio whose pairs disagree: say so under its line. */
static void spread_warn(const char *what, const struct perf_ratio *r,
			int *warned)
{
	if (!perf_ratio_warn(r))
		return;
	printf("warning: %s: the %u pairs spread %.1f %% (over %.0f %%)\n",
	       what, r->pairs, r->spread * 100, PERF_RATIO_SPREAD_WARN * 100);
	*warned = 1;
}

static void wait_quiet(const struct perf_opts *o)
{
	if (o->wait_idle && perf_wait_idle(120) < 0)
		printf("note: the machine did not go idle\n");
}

/*
 * Interleaved repetitions of: bare (throughput, two-process ping-pong,
 * three-process round trip), then the router in each asked-for poll mode.
 * Medians, then the two bars per mode, and the call against the
 * three-process baseline as the explanation of the latency bar.  A short
 * ping-pong before and after every run (perf_probe_fold()) tells a pair
 * measured across a change of the host's speed, which the ratios leave
 * out (all of them count only when no pair of a mode kept one speed).
 */
static int compare(const struct perf_opts *o)
{
	double bm[101], bp50[101], bp99[101], tp50[101], tp99[101];
	double hp50[101], hp99[101];
	double rm[CMP_MODES][101], rp50[CMP_MODES][101], rp99[CMP_MODES][101];
	/* Per pair: whether the probes kept one speed from the bare run to
	 * the router run, and that speed (1 / probe p50, for the split). */
	double pspeed[CMP_MODES][101] = { { 0 } };
	int steady[CMP_MODES][101] = { { 0 } };
	unsigned nsteady[CMP_MODES] = { 0 };
	double rmx[CMP_MODES][101], rp50x[CMP_MODES][101], pspx[CMP_MODES][101];
	/* Each mode's pairs by the host's speed (perf_ratio_by_speed()). */
	struct perf_ratio sfast[CMP_MODES], sslow[CMP_MODES];
	double cut[CMP_MODES] = { 0 };
	/* Every figure of every run, for --json's medians. */
	static struct perf_result bres[PERF_REPS_MAX], rres[CMP_MODES][PERF_REPS_MAX];
	double bare_mps;
	char what[96];
	int failed = 0, warned = 0, rtt = o->rtt != 0;

	/* Modes not asked for stay 0 (the ratios below read every row). */
	memset(rm, 0, sizeof(rm));
	memset(rp50, 0, sizeof(rp50));
	print_setup("compare", o);
	printf("%-4s %-26s %8s %11s %11s  %s\n", "rep", "run", "M msg/s",
	       "rtt p50 us", "rtt p99 us", "round trip");
	for (unsigned i = 0; i < o->reps; i++) {
		struct perf_result b, r;
		char rep[16];
		double plo = 0, phi = 0; /* the repetition's probes, us */

		snprintf(rep, sizeof(rep), "%u", i + 1);
		wait_quiet(o);
		if (perf_probe_fold(o, &plo, &phi, 1) < 0 ||
		    perf_bare_run(o, &b) < 0 ||
		    perf_probe_fold(o, &plo, &phi, 0) < 0)
			return PERF_EXIT_FAIL;
		if (!result_ok("bare", &b))
			failed = 1;
		bres[i] = b;
		perf_json_emit(perf_json_run("compare", o, 0, i + 1, "bare",
					     &b));
		bm[i] = b.mps;
		bp50[i] = b.p50_us;
		bp99[i] = b.p99_us;
		tp50[i] = b.rtt3_p50_us;
		tp99[i] = b.rtt3_p99_us;
		hp50[i] = b.handoff_p50_us;
		hp99[i] = b.handoff_p99_us;
		row(rep, "bare", bm[i], rtt ? bp50[i] : -1, rtt ? bp99[i] : -1,
		    "2-proc ping-pong (cpu A <-> cpu B)");
		if (rtt)
			row(rep, "bare 3-proc rtt", -1, tp50[i], tp99[i],
			    "pinger -> fwd -> echoer -> fwd -> pinger");
		if (rtt)
			row(rep, "bare handoff", -1, hp50[i], hp99[i],
			    "pinger <-> ponger, one cpu, yield at once");
		for (unsigned x = 0; x < CMP_MODES; x++) {
			/* Stamps on before off in odd repetitions, off before
			 * on in even ones: neither always runs first. */
			unsigned m = i % 2 ? x ^ 2u : x;
			struct perf_opts one;
			struct json_object *j;
			char run[48], label[32];
			int rc;

			if (!cmp_mode(o, m, &one, label, sizeof(label)))
				continue;
			snprintf(run, sizeof(run), "router %s", label);
			wait_quiet(o);
			if (perf_probe_fold(o, &plo, &phi, 0) < 0)
				return PERF_EXIT_FAIL;
			rc = perf_router_run(&one, &r);
			if (rc == -PERF_EXIT_SKIP) {
				row(rep, run, -1, -1, -1, "pending");
				printf("router: the appliance is not built (see "
				       "above); router figures pending\n");
				return PERF_EXIT_FAIL;
			}
			if (rc < 0 || perf_probe_fold(o, &plo, &phi, 0) < 0)
				return PERF_EXIT_FAIL;
			if (!result_ok(run, &r))
				failed = 1;
			rres[m][i] = r;
			steady[m][i] = perf_probes_one_speed(plo, phi);
			nsteady[m] += (unsigned)steady[m][i];
			pspeed[m][i] = phi > 0 ? 2 / (plo + phi) : 0;
			j = perf_json_run("compare", &one, 1, i + 1, "router",
					  &r);
			perf_json_num(j, "probe_p50_min_us", plo);
			perf_json_num(j, "probe_p50_max_us", phi);
			perf_json_bool(j, "one_speed", steady[m][i]);
			perf_json_emit(j);
			rm[m][i] = r.mps;
			rp50[m][i] = r.p50_us;
			rp99[m][i] = r.p99_us;
			row(rep, run, rm[m][i], rtt ? rp50[m][i] : -1,
			    rtt ? rp99[m][i] : -1,
			    "call: client -> dp -> worker -> dp -> client");
			if (!steady[m][i])
				printf("     the host changed speed during this "
				       "pair (ping-pong probe p50 %.2f to %.2f "
				       "us): left out of the ratios\n",
				       plo, phi);
		}
	}

	bare_mps = perf_median(bm, o->reps);
	row("med", "bare", bare_mps, rtt ? perf_median(bp50, o->reps) : -1,
	    rtt ? perf_median(bp99, o->reps) : -1, "2-proc ping-pong");
	if (rtt)
		row("med", "bare 3-proc rtt", -1, perf_median(tp50, o->reps),
		    perf_median(tp99, o->reps),
		    "the call's shape, no shmrouter");
	if (rtt)
		row("med", "bare handoff", -1, perf_median(hp50, o->reps),
		    perf_median(hp99, o->reps),
		    "two context switches, no work");
	if (perf_json) {
		struct perf_result med;

		perf_result_median(bres, o->reps, &med);
		perf_json_emit(perf_json_run("compare", o, 0, 0, "bare", &med));
	}
	for (unsigned m = 0; m < CMP_MODES; m++) {
		struct perf_opts one;
		struct perf_result med;
		char run[48], label[32];

		if (!cmp_mode(o, m, &one, label, sizeof(label)))
			continue;
		snprintf(run, sizeof(run), "router %s", label);
		row("med", run, perf_median(rm[m], o->reps),
		    rtt ? perf_median(rp50[m], o->reps) : -1,
		    rtt ? perf_median(rp99[m], o->reps) : -1, "call");
		perf_result_median(rres[m], o->reps, &med);
		perf_json_emit(perf_json_run("compare", &one, 1, 0, "router",
					     &med));
	}
	/* The ratios' pairs: those that kept one speed (all, in a mode where
	 * none did); the others' router figures are 0, which
	 * perf_ratio_pairs() leaves out. */
	for (unsigned m = 0; m < CMP_MODES; m++)
		for (unsigned i = 0; i < o->reps; i++) {
			int in = steady[m][i] || nsteady[m] == 0;

			rmx[m][i] = in ? rm[m][i] : 0;
			rp50x[m][i] = in ? rp50[m][i] : 0;
			/* A pair left out does not set where the speeds
			 * split either. */
			pspx[m][i] = in ? pspeed[m][i] : 0;
		}
	for (unsigned m = 0; m < CMP_MODES; m++) {
		struct perf_ratio tput, lat, lat3, floor;
		int two;
		struct perf_opts one, on;
		struct json_object *j;
		char label[32], lon[32];

		if (!cmp_mode(o, m, &one, label, sizeof(label)))
			continue;
		j = perf_json_record("compare", "summary");
		perf_json_setup(j, &one, 1);
		perf_json_u64(j, "reps", o->reps);
		/* Each router run against the bare run of its repetition. */
		perf_ratio_pairs(rmx[m], bm, o->reps, &tput);
		perf_json_u64(j, "pairs_left_out",
			      nsteady[m] ? o->reps - nsteady[m] : 0);
		/* Two speeds of the host: each one's ratio (said at the
		 * end), and the goal below is judged by the lower. */
		cut[m] = perf_ratio_by_speed(rmx[m], bm, pspx[m], o->reps,
					     &sfast[m], &sslow[m]);
		two = cut[m] != 0 && sfast[m].pairs && sslow[m].pairs;
		if (two) {
			perf_json_num(j, "throughput_vs_bare_fast_speed",
				      sfast[m].median);
			perf_json_num(j, "throughput_vs_bare_slow_speed",
				      sslow[m].median);
		}
		perf_json_ratio(j, "throughput_vs_bare", &tput);
		perf_json_num(j, "throughput_bar", BAR_THROUGHPUT);
		perf_json_bool(j, "throughput_met",
			       tput.median >= BAR_THROUGHPUT);
		snprintf(what, sizeof(what), "throughput (%s): router / bare",
			 label);
		perf_ratio_print(what, &tput);
		printf("  (bar >= %.1f): %s\n", BAR_THROUGHPUT,
		       tput.median >= BAR_THROUGHPUT ? "PASS" : "BELOW");
		spread_warn(what, &tput, &warned);
		if (one.poll_busy && one.routes == 1 && !one.sojourn_off) {
			/* On a host of two speeds, the goal must hold at
			 * both: judged by the lower side's median. */
			double judged = tput.median;
			char both[96] = "";

			if (two) {
				judged = sfast[m].median < sslow[m].median
						 ? sfast[m].median
						 : sslow[m].median;
				snprintf(both, sizeof(both),
					 "; the lower of the host's two speeds, "
					 "%.3f and %.3f",
					 sfast[m].median, sslow[m].median);
			}
			printf("goal (%s): router / bare = %.3f >= %.2f (one "
			       "route, busy poll%s): %s\n",
			       label, judged, GOAL_THROUGHPUT, both,
			       judged >= GOAL_THROUGHPUT ? "PASS" : "BELOW");
			perf_json_num(j, "throughput_goal", GOAL_THROUGHPUT);
			perf_json_num(j, "throughput_goal_judged", judged);
			perf_json_bool(j, "throughput_goal_met",
				       judged >= GOAL_THROUGHPUT);
		}
		if (rtt) {
			perf_ratio_pairs(rp50x[m], bp50, o->reps, &lat);
			perf_ratio_pairs(rp50x[m], tp50, o->reps, &lat3);
			snprintf(what, sizeof(what), "latency (%s): router call "
				 "p50 / bare ping-pong p50", label);
			perf_ratio_print(what, &lat);
			printf("  (bar <= %.1f): %s\n", BAR_LATENCY,
			       lat.median <= BAR_LATENCY ? "PASS" : "BELOW");
			spread_warn(what, &lat, &warned);
			snprintf(what, sizeof(what), "  explanation (%s): router "
				 "call p50 / bare 3-proc rtt p50", label);
			perf_ratio_print(what, &lat3);
			printf("  (same 3 processes, pinning and waits, no "
			       "shmrouter code)\n");
			spread_warn(what, &lat3, &warned);
			perf_json_ratio(j, "latency_vs_pingpong", &lat);
			perf_json_num(j, "latency_bar", BAR_LATENCY);
			perf_json_bool(j, "latency_met",
				       lat.median <= BAR_LATENCY);
			perf_json_ratio(j, "latency_vs_rtt3", &lat3);
			call_goal(o, label, &lat, &lat3, rp50x[m], bp50, tp50,
				  pspx[m], j);
			if (shares_core(o)) {
				perf_ratio_pairs(hp50, bp50, o->reps, &floor);
				perf_json_ratio(j, "floor_vs_pingpong", &floor);
			}
		}
		/* Stamps on against off, same repetition: what they cost, the
		 * median of each repetition's ratio (a noisy machine moves
		 * both runs of a repetition more alike than two
		 * repetitions). */
		if (m >= 2 && cmp_mode(o, m - 2, &on, lon, sizeof(lon))) {
			struct perf_ratio x;
			double tsc_ns;

			perf_ratio_pairs(rmx[m - 2], rmx[m], o->reps, &x);
			snprintf(what, sizeof(what), "sojourn cost (%s): router "
				 "with stamps / without", lon);
			perf_ratio_print(what, &x);
			printf("  (%.1f%% lost; goal < %.0f%%): %s\n",
			       (1 - x.median) * 100, BAR_SOJOURN * 100,
			       1 - x.median < BAR_SOJOURN ? "PASS" : "BELOW");
			tsc_ns = perf_tsc_read_ns();
			printf("  the clock the stamps read (rdtsc) takes %.1f ns "
			       "here: once per send call that places slots, "
			       "once per receive\n", tsc_ns);
			perf_json_num(j, "tsc_read_ns", tsc_ns);
			spread_warn(what, &x, &warned);
			perf_json_num(j, "sojourn_on_vs_off", x.median);
			perf_json_num(j, "sojourn_goal_percent",
				      BAR_SOJOURN * 100);
			perf_json_bool(j, "sojourn_met",
				       1 - x.median < BAR_SOJOURN);
		}
		perf_json_bool(j, "all_in_order", !failed);
		perf_json_emit(j);
	}
	if (rtt) {
		struct perf_ratio floor;

		perf_ratio_pairs(hp50, bp50, o->reps, &floor);
		if (shares_core(o)) {
			perf_ratio_print("floor: bare handoff p50 / bare "
					 "ping-pong p50", &floor);
			printf("  (the two context switches of any round "
			       "trip whose three processes share two cores, "
			       "before any work)\n");
		} else
			printf("floor: none from sharing: client, dataplane "
			       "and worker each have a cpu of their own\n");
	}
	{
		double lo = bm[0], hi = bm[0];

		for (unsigned i = 1; i < o->reps; i++) {
			lo = bm[i] < lo ? bm[i] : lo;
			hi = bm[i] > hi ? bm[i] : hi;
		}
		if (lo > 0 && hi > 1.3 * lo)
			printf("note: bare throughput varied %.0f%% across "
			       "repetitions: something else was running, "
			       "or the host changed speed\n",
			       (hi / lo - 1) * 100);
	}
	/* Pairs left out: the host changed speed during them. */
	for (unsigned m = 0; m < CMP_MODES; m++) {
		struct perf_opts one;
		char label[32];

		if (!cmp_mode(o, m, &one, label, sizeof(label)) ||
		    nsteady[m] == o->reps)
			continue;
		if (nsteady[m] == 0)
			printf("warning: %s: the host changed speed during "
			       "every pair (ping-pong probes over %.0f times "
			       "apart); the ratios count them all\n",
			       label, PERF_SPEEDS_APART);
		else
			printf("note: %s: %u of %u pairs left out of the "
			       "ratios: the host changed speed during them "
			       "(ping-pong probes over %.0f times apart)\n",
			       label, o->reps - nsteady[m], o->reps,
			       PERF_SPEEDS_APART);
	}
	/* Two speeds of the host (PERF_SPEEDS_APART): the ratio of the
	 * pairs on each side, since it differs between them. */
	for (unsigned m = 0; m < CMP_MODES; m++) {
		const struct perf_ratio *fast = &sfast[m], *slow = &sslow[m];
		struct perf_opts one;
		char label[32];

		if (!cmp_mode(o, m, &one, label, sizeof(label)) || cut[m] == 0)
			continue;
		printf("note: throughput (%s): router / bare = %.3f over the "
		       "%u pair%s whose ping-pong probes were at or below "
		       "%.2f us (spread %.1f %%), %.3f over the %u above "
		       "(spread %.1f %%): the probes were over %.0f times "
		       "apart, two speeds of the host (docs/benchmarks.md)\n",
		       label, fast->median, fast->pairs,
		       fast->pairs == 1 ? "" : "s", 1 / cut[m],
		       fast->spread * 100, slow->median, slow->pairs,
		       slow->spread * 100, PERF_SPEEDS_APART);
	}
	if (warned)
		printf("warning: a ratio's pairs spread over %.0f %%: the "
		       "machine was busy (uptime); run again with more --reps "
		       "or --wait-idle before trusting it\n",
		       PERF_RATIO_SPREAD_WARN * 100);
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
	perf_stop_init();
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("shmr-perf %s\n", SHMR_VERSION_TEXT);
		return PERF_EXIT_OK;
	}
	if (argc > 1 && argv[1][0] != '-') {
		mode = argv[1];
		first = 2;
	}
	if (strcmp(mode, "load") == 0)
		return perf_load_main(argc - 1, argv + 1);
	if (strcmp(mode, "report") == 0)
		return perf_report_main(argc - 1, argv + 1);
	if (strcmp(mode, "compare") && strcmp(mode, "bare") &&
	    strcmp(mode, "router") && strcmp(mode, "logics") &&
	    strcmp(mode, "decide") && strcmp(mode, "large") &&
	    strcmp(mode, "iceoryx") &&
	    strcmp(mode, "idle") && strcmp(mode, "churn")) {
		fprintf(stderr, "shmr-perf: unknown mode '%s'\n", mode);
		usage(stderr);
		return PERF_EXIT_USAGE;
	}
	if (parse_opts(argc, argv, first, mode, &o) < 0) {
		usage(stderr);
		return PERF_EXIT_USAGE;
	}
	if (o.json && perf_json_open() < 0) {
		perror("shmr-perf: --json");
		return PERF_EXIT_FAIL;
	}
	/* Unbuffered-enough output when piped into tee. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "compare") == 0)
		return compare(&o);
	if (strcmp(mode, "logics") == 0)
		return perf_logics_main(&o);
	if (strcmp(mode, "decide") == 0)
		return perf_decide_main(&o);
	if (strcmp(mode, "churn") == 0) {
		o.poll_busy = o.polls != PERF_POLL_ADAPTIVE;
		o.polls = o.poll_busy ? PERF_POLL_BUSY : PERF_POLL_ADAPTIVE;
		return perf_churn_main(&o);
	}
	if (strcmp(mode, "large") == 0) {
		int rc = perf_large_run(&o);

		return rc == -PERF_EXIT_SKIP ? PERF_EXIT_SKIP
		       : rc < 0	       ? PERF_EXIT_FAIL
				       : PERF_EXIT_OK;
	}
	if (strcmp(mode, "iceoryx") == 0) {
#ifdef SHMR_PERF_ICEORYX
		return perf_iceoryx_run(&o) < 0 ? PERF_EXIT_FAIL : PERF_EXIT_OK;
#else
		fprintf(stderr, "shmr-perf iceoryx: built without iceoryx "
				"(libiceoryx-binding-c-dev)\n");
		return PERF_EXIT_FAIL;
#endif
	}
	if (strcmp(mode, "idle") == 0) {
		o.poll_busy = o.polls != PERF_POLL_ADAPTIVE;
		return perf_idle_main(&o);
	}
	return run_one(mode, &o);
}
