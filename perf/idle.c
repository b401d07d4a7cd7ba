/*
 * `shmr-perf idle`: what endpoints that are attached and do nothing cost
 * the one that sends (issue 16, "idle endpoints cost nothing").
 *
 * Each repetition runs the router run (router.c: one client through router
 * "perf" to one shmr-perf-sink route, busy poll by default) twice, next
 * to each other: with no other endpoint attached, and with --idle N more
 * endpoints opened by the client and left idle (default 1,000), both in a
 * domain of max_endpoints = N + 16 (at least the default 1,024), so the
 * pair differs only in what is attached.  The figure is the
 * median over the repetitions of each pair's ratio, idle / none, so that
 * the machine's swings between pairs cancel; the spread of the ratios is
 * printed beside it.  A short ping-pong before, between and after the
 * two runs (perf_probe_fold(), as compare's) tells a pair measured across
 * a change of the host's speed: it is left out of the ratio, unless no
 * pair kept one speed.  The goal (at least 0.9 with 1,000 idle endpoints,
 * 0.8 with 10,000) is reported as PASS or BELOW, never enforced; a run
 * that lost or reordered a message fails the exit status.
 *
 * Before the pairs, the lcore's own cost per message in this process
 * (idle_rounds.c), with none, with N idle, and with N idle polled every
 * round as the loop did before work bits: CPU time of one thread, which
 * a busy machine changes far less than the end-to-end figures.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json_object.h>

#include "lcore.h"
#include "perf_dp.h"
#include "perf_internal.h"
#include "perf_modes.h"

/* idle / none, the bars: 0.9 with 1,000 idle endpoints, 0.8 with
 * 10,000 (a count from 10,000 up is held to the second). */
#define IDLE_GOAL(n) ((n) >= 10000 ? 0.8 : 0.9)

/* The endpoint slots of shmr-perf idle's domains: room for --idle beside
 * the run's own, never below the default. */
static unsigned perf_idle_endpoints(const struct perf_opts *o)
{
	unsigned n = o->idle + 16;

	return n < SHMR_ENDPOINTS_DEFAULT ? SHMR_ENDPOINTS_DEFAULT : n;
}

/* One router run with @p idle idle endpoints, its row printed and its
 * JSON record left in *@p j for the pair's probes; -1 when it failed. */
static int one_run(const struct perf_opts *o, unsigned idle, unsigned rep,
		   struct perf_result *r, int *failed, struct json_object **j)
{
	struct perf_opts one = *o;
	char what[48];
	int rc;

	one.idle = idle;
	one.rtt = 0;
	/* Both runs of a pair in a domain of the same size: room for the
	 * idle endpoints beside the run's own. */
	one.max_endpoints = perf_idle_endpoints(o);
	rc = perf_router_run(&one, r);
	if (rc == -PERF_EXIT_SKIP) {
		printf("router: the appliance is not built (see above)\n");
		return -1;
	}
	if (rc < 0)
		return -1;
	snprintf(what, sizeof(what), "shmr-perf idle: %u idle", idle);
	if (!perf_result_checked(what, r))
		*failed = 1;
	snprintf(what, sizeof(what), "%u idle", idle);
	printf("%-4u %-10s %8.2f\n", rep, what, r->mps / 1e6);
	fflush(stdout);
	*j = perf_json_run("idle", &one, 1, rep, "router", r);
	perf_json_u64(*j, "idle_endpoints", idle);
	return 0;
}

/* A pair's run record, with its pair's probes, out. */
static void emit_run(struct json_object *j, double plo, double phi,
		     int steady)
{
	perf_json_num(j, "probe_p50_min_us", plo);
	perf_json_num(j, "probe_p50_max_us", phi);
	perf_json_bool(j, "one_speed", steady);
	perf_json_emit(j);
}

/* The lcore's own cost, in this process (idle_rounds.c), into @p ns[3]
 * (left -1 when the domain is too large for a heap copy); -1 on
 * failure. */
static int inproc_rounds(const struct perf_opts *o, double ns[3])
{
	struct perf_opts big = *o;
	double n0, n1, n2;

	big.max_endpoints = perf_idle_endpoints(o);
	n0 = perf_idle_round_ns(&big, 0, SHMR_DP_SWEEP_ROUNDS);
	n1 = perf_idle_round_ns(&big, o->idle, SHMR_DP_SWEEP_ROUNDS);
	n2 = perf_idle_round_ns(&big, o->idle, 1);
	if (n0 == PERF_IDLE_TOO_BIG || n1 == PERF_IDLE_TOO_BIG ||
	    n2 == PERF_IDLE_TOO_BIG) {
		printf("lcore, in this process: skipped (a heap copy of a "
		       "domain of %u endpoints is too large)\n",
		       big.max_endpoints);
		return 0;
	}
	if (n0 < 0 || n1 < 0 || n2 < 0)
		return -1;
	printf("lcore, in this process (CPU time per message): none "
	       "%.2f ns; %u idle %.2f ns (none / idle = %.2f); %u "
	       "idle, every endpoint every round as before work "
	       "bits %.2f ns (%.2f)\n",
	       n0, o->idle, n1, n1 > 0 ? n0 / n1 : 0, o->idle, n2,
	       n2 > 0 ? n0 / n2 : 0);
	ns[0] = n0;
	ns[1] = n1;
	ns[2] = n2;
	return 0;
}

int perf_idle_main(const struct perf_opts *o)
{
	double none[PERF_REPS_MAX], busy[PERF_REPS_MAX], ratio[PERF_REPS_MAX];
	double med, lo, hi;
	char what[32];
	int failed = 0;
	unsigned nratio = 0, left_out = 0;
	int every_pair_changed;
	struct json_object *j;
	double inproc[3] = { -1, -1, -1 };
	double all[PERF_REPS_MAX];

	printf("shmr-perf idle: slot %u B, burst %u, count %llu, lane %u, "
	       "%s poll, %u lcore%s; cpus: client %d, dataplane %d, sink %d; "
	       "%u idle endpoints against none, %u pair%s\n",
	       o->slot, o->burst, (unsigned long long)o->count, o->lane,
	       o->poll_busy ? "busy" : "adaptive", o->lcores,
	       o->lcores == 1 ? "" : "s", o->cpu_client, o->cpu_hub,
	       o->cpu_sink, o->idle, o->reps, o->reps == 1 ? "" : "s");
	/* In this process first: the lcore's own cost, little moved by
	 * the rest of the machine (idle_rounds.c). */
	if (inproc_rounds(o, inproc) < 0)
		return PERF_EXIT_FAIL;
	printf("%-4s %-10s %8s\n", "rep", "run", "M msg/s");
	for (unsigned i = 0; i < o->reps; i++) {
		struct perf_result a, b;
		struct json_object *ja = NULL, *jb = NULL;
		double plo = 0, phi = 0; /* the pair's probes, us */
		int ok, steady;

		/* Which goes first alternates: a trend over the run (the
		 * machine warming up, a neighbour starting) favours
		 * neither.  The host's speed before, between and after. */
		ok = perf_probe_fold(o, &plo, &phi, 1) == 0;
		if (ok && i % 2 == 0)
			ok = one_run(o, 0, i + 1, &a, &failed, &ja) == 0 &&
			     perf_probe_fold(o, &plo, &phi, 0) == 0 &&
			     one_run(o, o->idle, i + 1, &b, &failed, &jb) == 0;
		else if (ok)
			ok = one_run(o, o->idle, i + 1, &b, &failed, &jb) == 0 &&
			     perf_probe_fold(o, &plo, &phi, 0) == 0 &&
			     one_run(o, 0, i + 1, &a, &failed, &ja) == 0;
		ok = ok && perf_probe_fold(o, &plo, &phi, 0) == 0;
		if (!ok) {
			json_object_put(ja);
			json_object_put(jb);
			return PERF_EXIT_FAIL;
		}
		steady = perf_probes_one_speed(plo, phi);
		emit_run(ja, plo, phi, steady);
		emit_run(jb, plo, phi, steady);
		none[i] = a.mps;
		busy[i] = b.mps;
		all[i] = a.mps > 0 ? b.mps / a.mps : 0;
		if (steady)
			ratio[nratio++] = all[i];
		else
			printf("     the host changed speed during this pair "
			       "(ping-pong probe p50 %.2f to %.2f us): left "
			       "out of the ratio\n",
			       plo, phi);
	}
	/* No pair kept one speed: all of them, as before the probes. */
	every_pair_changed = nratio == 0;
	if (nratio == 0) {
		memcpy(ratio, all, sizeof(all[0]) * o->reps);
		nratio = o->reps;
	} else {
		left_out = o->reps - nratio;
	}
	med = perf_median(ratio, nratio);
	lo = hi = ratio[0];
	for (unsigned i = 1; i < nratio; i++) {
		lo = ratio[i] < lo ? ratio[i] : lo;
		hi = ratio[i] > hi ? ratio[i] : hi;
	}
	snprintf(what, sizeof(what), "%u idle", o->idle);
	printf("%-4s %-10s %8.2f\n%-4s %-10s %8.2f\n", "med", "0 idle",
	       perf_median(none, o->reps) / 1e6, "med", what,
	       perf_median(busy, o->reps) / 1e6);
	printf("idle endpoints: %u attached / none = %.2f (median of %u "
	       "pair%s, spread %.2f to %.2f)  (goal >= %.1f): %s\n",
	       o->idle, med, nratio, nratio == 1 ? "" : "s", lo, hi,
	       IDLE_GOAL(o->idle),
	       med >= IDLE_GOAL(o->idle) ? "PASS" : "BELOW");
	if (med > 0 && (hi - lo) / med > 0.1)
		printf("note: the pairs' ratios spread over 10%%: something "
		       "else was running; use more --reps\n");
	if (left_out)
		printf("note: %u of %u pairs left out of the ratio: the host "
		       "changed speed during them (ping-pong probes over %.0f "
		       "times apart)\n",
		       left_out, o->reps, PERF_SPEEDS_APART);
	else if (every_pair_changed)
		printf("note: the host changed speed during every pair: the "
		       "ratio is over all of them\n");
	j = perf_json_record("idle", "summary");
	perf_json_setup(j, o, 1);
	perf_json_u64(j, "idle_endpoints", o->idle);
	perf_json_u64(j, "reps", o->reps);
	perf_json_u64(j, "pairs_left_out", left_out);
	perf_json_u64(j, "idle_vs_none_pairs", nratio);
	perf_json_num(j, "none_mps", perf_median(none, o->reps));
	perf_json_num(j, "idle_mps", perf_median(busy, o->reps));
	perf_json_num(j, "idle_vs_none", med);
	perf_json_num(j, "idle_vs_none_min", lo);
	perf_json_num(j, "idle_vs_none_max", hi);
	perf_json_num(j, "idle_goal", IDLE_GOAL(o->idle));
	perf_json_bool(j, "idle_met", med >= IDLE_GOAL(o->idle));
	if (inproc[0] > 0) {
		perf_json_num(j, "lcore_ns_none", inproc[0]);
		perf_json_num(j, "lcore_ns_idle", inproc[1]);
		perf_json_num(j, "lcore_ns_idle_every_round", inproc[2]);
	}
	perf_json_bool(j, "all_in_order", !failed);
	perf_json_emit(j);
	if (failed)
		printf("messages were lost or reordered: see above\n");
	return failed ? PERF_EXIT_FAIL : PERF_EXIT_OK;
}
