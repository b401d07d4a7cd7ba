/*
 * shmr-perf --json: the machine-readable results (docs/benchmarks.md,
 * "JSON results", is the schema).
 *
 * JSON Lines: one object per line on stdout, one per run as it finishes,
 * then one per median and the summaries.  Written with json-c, so strings
 * are escaped and numbers are numbers whatever a name or figure holds.
 * Every figure is a JSON number whose key carries its unit (msgs_per_s,
 * rtt_p50_ns); counts are integers; a figure that is not finite (never
 * expected: every division is guarded) is written as null rather than as
 * an invalid token.
 *
 * With --json, main() moves the text report to stderr (perf_json_open()),
 * so that nothing but these lines can reach stdout, and the text, one line
 * per run as each finishes, is the progress a long run shows.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "perf_internal.h"

FILE *perf_json;

int perf_json_open(void)
{
	int fd;

	fflush(stdout);
	fd = dup(STDOUT_FILENO);
	if (fd < 0)
		return -1;
	perf_json = fdopen(fd, "w");
	if (!perf_json) {
		close(fd);
		return -1;
	}
	setvbuf(perf_json, NULL, _IOLBF, 0);
	/* Everything printf() writes from now on is the text report, on
	 * stderr.  Children inherit the same: none of ours writes JSON. */
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return -1;
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	return 0;
}

struct json_object *perf_json_record(const char *mode, const char *record)
{
	struct json_object *j = json_object_new_object();

	json_object_object_add(j, "schema",
			       json_object_new_int(PERF_JSON_SCHEMA));
	json_object_object_add(j, "mode", json_object_new_string(mode));
	json_object_object_add(j, "record", json_object_new_string(record));
	return j;
}

void perf_json_str(struct json_object *j, const char *key, const char *v)
{
	json_object_object_add(j, key, json_object_new_string(v));
}

void perf_json_u64(struct json_object *j, const char *key, uint64_t v)
{
	json_object_object_add(j, key, json_object_new_uint64(v));
}

void perf_json_num(struct json_object *j, const char *key, double v)
{
	json_object_object_add(j, key,
			       isfinite(v) ? json_object_new_double(v) : NULL);
}

void perf_json_bool(struct json_object *j, const char *key, int v)
{
	json_object_object_add(j, key, json_object_new_boolean(v != 0));
}

void perf_json_cpus(struct json_object *j, const struct perf_opts *o)
{
	struct json_object *cpus = json_object_new_array();

	json_object_array_add(cpus, json_object_new_int(o->cpu_client));
	json_object_array_add(cpus, json_object_new_int(o->cpu_hub));
	json_object_array_add(cpus, json_object_new_int(o->cpu_sink));
	json_object_object_add(j, "cpus", cpus);
}

void perf_json_setup(struct json_object *j, const struct perf_opts *o,
		     int router)
{
	perf_json_u64(j, "slot_bytes", o->slot);
	perf_json_u64(j, "burst", o->burst);
	perf_json_u64(j, "count", o->count);
	perf_json_u64(j, "lane_entries", o->lane);
	perf_json_u64(j, "round_trips", o->rtt);
	perf_json_cpus(j, o);
	if (!router)
		return;
	perf_json_u64(j, "routes", o->routes);
	perf_json_u64(j, "lcores", o->lcores);
	perf_json_str(j, "behaviour", o->by_type ? "type" : "hash");
	if (o->polls == PERF_POLL_BUSY || o->polls == PERF_POLL_ADAPTIVE)
		perf_json_str(j, "poll",
			      o->polls == PERF_POLL_BUSY ? "busy" : "adaptive");
	perf_json_bool(j, "sojourn", !o->sojourn_off);
}

/* One latency series: NAME_count and NAME_p50_ns ... NAME_max_ns. */
static void latency(struct json_object *j, const char *name, unsigned n,
		    double p50_us, double p99_us, double p999_us,
		    double max_us, int counts)
{
	static const char *const pct[] = { "p50", "p99", "p999", "max" };
	const double us[] = { p50_us, p99_us, p999_us, max_us };
	char key[48];

	if (!n)
		return;
	if (counts) {
		snprintf(key, sizeof(key), "%s_count", name);
		perf_json_u64(j, key, n);
	}
	for (unsigned i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "%s_%s_ns", name, pct[i]);
		perf_json_num(j, key, us[i] * 1000.0);
	}
}

void perf_json_rtt(struct json_object *j, const struct perf_result *r)
{
	latency(j, "rtt", r->rtt, r->p50_us, r->p99_us, r->p999_us,
		r->max_us, 1);
}

void perf_json_counts(struct json_object *j, const struct perf_result *r)
{
	perf_json_u64(j, "sent", r->sent);
	perf_json_u64(j, "received", r->received);
	perf_json_u64(j, "lost", r->sent > r->received
					 ? r->sent - r->received : 0);
	perf_json_u64(j, "gaps", r->gaps);
	perf_json_u64(j, "reordered", r->reorders);
	perf_json_bool(j, "ok", perf_result_ok(r));
}

void perf_json_result(struct json_object *j, const struct perf_result *r,
		      int median)
{
	if (!median)
		perf_json_counts(j, r);
	perf_json_num(j, "msgs_per_s", r->mps);
	if (r->dps > 0)
		perf_json_num(j, "deliveries_per_s", r->dps);
	latency(j, "rtt", r->rtt, r->p50_us, r->p99_us, r->p999_us,
		r->max_us, !median);
	latency(j, "rtt3", r->rtt3, r->rtt3_p50_us, r->rtt3_p99_us,
		r->rtt3_p999_us, r->rtt3_max_us, !median);
	latency(j, "handoff", r->handoff, r->handoff_p50_us,
		r->handoff_p99_us, r->handoff_p999_us, r->handoff_max_us,
		!median);
}

void perf_json_emit(struct json_object *j)
{
	if (perf_json) {
		fprintf(perf_json, "%s\n",
			json_object_to_json_string_ext(j,
						       JSON_C_TO_STRING_PLAIN));
		fflush(perf_json);
	}
	json_object_put(j);
}

int perf_result_ok(const struct perf_result *r)
{
	return r->received == r->sent && r->gaps == 0 && r->reorders == 0;
}

int perf_result_checked(const char *who, const struct perf_result *r)
{
	if (perf_result_ok(r))
		return 1;
	fprintf(stderr,
		"%s: LOSS/ORDER: sent %llu, received %llu, gaps %llu, "
		"reordered %llu\n",
		who, (unsigned long long)r->sent,
		(unsigned long long)r->received, (unsigned long long)r->gaps,
		(unsigned long long)r->reorders);
	return 0;
}

void perf_result_median(const struct perf_result *v, unsigned n,
			struct perf_result *out)
{
	/* Every figure of struct perf_result, medianed field by field. */
	static const size_t fig[] = {
		offsetof(struct perf_result, mps),
		offsetof(struct perf_result, dps),
		offsetof(struct perf_result, p50_us),
		offsetof(struct perf_result, p99_us),
		offsetof(struct perf_result, p999_us),
		offsetof(struct perf_result, max_us),
		offsetof(struct perf_result, rtt3_p50_us),
		offsetof(struct perf_result, rtt3_p99_us),
		offsetof(struct perf_result, rtt3_p999_us),
		offsetof(struct perf_result, rtt3_max_us),
		offsetof(struct perf_result, handoff_p50_us),
		offsetof(struct perf_result, handoff_p99_us),
		offsetof(struct perf_result, handoff_p999_us),
		offsetof(struct perf_result, handoff_max_us),
	};
	double s[PERF_REPS_MAX];

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	if (n > PERF_REPS_MAX)
		n = PERF_REPS_MAX;
	/* Counts: the same in every run of one kind. */
	out->rtt = v[0].rtt;
	out->rtt3 = v[0].rtt3;
	out->handoff = v[0].handoff;
	for (unsigned f = 0; f < sizeof(fig) / sizeof(fig[0]); f++) {
		for (unsigned i = 0; i < n; i++)
			memcpy(&s[i], (const char *)&v[i] + fig[f],
			       sizeof(double));
		s[0] = perf_median(s, n);
		memcpy((char *)out + fig[f], &s[0], sizeof(double));
	}
}

struct json_object *perf_json_run(const char *mode, const struct perf_opts *o,
				  int router, unsigned rep, const char *run,
				  const struct perf_result *r)
{
	struct json_object *j = perf_json_record(mode, rep ? "run" : "median");

	perf_json_str(j, "run", run);
	perf_json_setup(j, o, router);
	if (rep)
		perf_json_u64(j, "rep", rep);
	else
		perf_json_u64(j, "reps", o->reps);
	perf_json_result(j, r, rep == 0);
	return j;
}

void perf_json_ratio(struct json_object *j, const char *key,
		     const struct perf_ratio *r)
{
	char k[64];

	perf_json_num(j, key, r->median);
	snprintf(k, sizeof(k), "%s_min", key);
	perf_json_num(j, k, r->min);
	snprintf(k, sizeof(k), "%s_max", key);
	perf_json_num(j, k, r->max);
	snprintf(k, sizeof(k), "%s_spread", key);
	perf_json_num(j, k, r->spread);
	snprintf(k, sizeof(k), "%s_pairs", key);
	perf_json_u64(j, k, r->pairs);
	snprintf(k, sizeof(k), "%s_spread_warning", key);
	perf_json_bool(j, k, perf_ratio_warn(r));
}
