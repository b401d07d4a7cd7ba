/*
 * shmr-perf large: payloads in the arena (perf_large_run()).
 *
 * o->count payloads of o->size bytes go in arena buffers through a
 * round-robin router "perf" to one sink, on a private appliance of their
 * own (perf_app.h; the domain's arena has one class of o->size buffers).
 * The producer stamps a sequence number into each buffer and never
 * rewrites the whole, so the figure is what handing a buffer over costs,
 * not filling it.  Against it: memcpy of the same buffers on the client's
 * core, and the same payload carried in inline slots (slot_size 4096,
 * PERF_LARGE_CHUNK bytes a slot, on another appliance).  Then the call
 * round trip with a buffer of o->size bytes against one of 64 bytes
 * inline (p50 against p50: issue 15's goal, within 1.5 times).  The sink
 * counts slots and checks their keys in sequence: the stream's end is
 * perf_sink_collect()'s, as the router run's, and a lost or reordered
 * slot fails the run.  With --json, one record per run and a summary
 * (large_json_emit(); docs/benchmarks.md, "JSON results").
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/shmr.h>

#include "perf_app.h"
#include "perf_internal.h"
#include "perf_modes.h"
#include "perf_proto.h"

/* A call of @p len bytes: in an arena buffer (@p buf) or inline. */
static int large_call(struct shmr_endpoint *ep, struct shmr_pid router,
		      size_t len, int buf, uint64_t seq)
{
	struct perf_req req = { .op = PERF_OP_PING };
	struct perf_ans ans;
	unsigned char small[64] = { 0 };
	struct shmr_buf b;
	int rc;

	if (!buf) {
		memcpy(small, &req, sizeof(req));
		return shmr_call(ep, router, 1, 0, small, len, &ans,
				 sizeof(ans), PERF_CALL_TIMEOUT_MS);
	}
	while ((rc = shmr_buf_alloc(ep, len, &b)) == -SHMR_E_NO_BUFFER)
		sched_yield(); /* the sink may share our core */
	if (rc < 0)
		return rc;
	/* A sequence number and the request: the rest is not rewritten. */
	memcpy(b.data, &req, sizeof(req));
	memcpy((char *)b.data + sizeof(req), &seq, sizeof(seq));
	rc = shmr_call_buf(ep, router, 1, 0, &b, len, &ans, sizeof(ans),
			   PERF_CALL_TIMEOUT_MS);
	if (rc < 0 && b.data)
		shmr_buf_release(ep, &b);
	return rc;
}

/* @p n timed calls of @p len bytes after PERF_CALL_WARMUP: their round
 * trips into @p r (rtt, p50_us ... max_us).  0, or -1 (said). */
static int large_rtt(struct shmr_endpoint *ep, struct shmr_pid router,
		     size_t len, int buf, unsigned n, struct perf_result *r)
{
	uint64_t *ticks = calloc(n ? n : 1, sizeof(*ticks));

	if (!ticks)
		return -1;
	perf_tsc_per_us();
	for (unsigned i = 0; i < PERF_CALL_WARMUP + n; i++) {
		uint64_t t0 = rte_rdtsc(), t1;
		int rc = large_call(ep, router, len, buf, i);

		t1 = rte_rdtsc();
		if (rc < 0) {
			fprintf(stderr, "shmr-perf large: call of %zu bytes: "
					"%s\n",
				len, shmr_strerror(rc));
			free(ticks);
			return -1;
		}
		if (i >= PERF_CALL_WARMUP)
			ticks[i - PERF_CALL_WARMUP] = t1 - t0;
	}
	perf_latency_summary(ticks, n, r);
	free(ticks);
	return 0;
}

double perf_large_stream(const struct perf_opts *o, size_t chunk,
			 struct perf_large *out)
{
	struct perf_opts lo = *o;
	struct shmr_domain *d = NULL;
	struct shmr_endpoint *ep = NULL;
	struct shmr_pid router;
	struct perf_result r = { 0 };
	struct perf_ans ans;
	unsigned char *payload = NULL;
	size_t per = chunk ? (o->size + chunk - 1) / chunk : 1;
	char arena[128];
	uint64_t t0, t1 = 0;
	double mps = -1;
	struct perf_app a;
	int rc;

	memset(out, 0, sizeof(*out));
	lo.routes = 1;
	lo.logic = "round-robin";
	if (chunk) {
		lo.slot = (unsigned)chunk + 48u; /* the slot header */
		lo.arena = NULL;
	} else {
		lo.slot = 128; /* the 64-byte call of the round trip, inline */
		snprintf(arena, sizeof(arena),
			 "arena = { classes = [ \"%zu:%u\" ]; };", o->size,
			 o->size >= (4u << 20) ? 16u : 64u);
		lo.arena = arena;
	}
	lo.count = o->count * per; /* slots the sink counts */
	rc = perf_app_start(&a, &lo);
	if (rc < 0)
		goto out;
	rc = perf_app_attach(&a, &d, &ep, &router);
	if (rc == 0)
		rc = perf_pin(o->cpu_client);
	if (rc == 0)
		rc = perf_sink_call(ep, router, 0, PERF_OP_EXPECT, lo.count, &ans);
	payload = chunk ? calloc(1, chunk) : NULL;
	if (rc < 0 || (chunk && !payload))
		goto out;
	t0 = perf_now_ns();
	for (uint64_t k = 0; k < o->count; k++) {
		if (chunk) {
			for (size_t c = 0; c < per; c++) {
				uint64_t key = k * per + c;

				memcpy(payload, &key, sizeof(key));
				while ((rc = shmr_send(ep, router, 1, key, payload,
						       chunk)) == -EAGAIN)
					sched_yield(); /* the sink may share our core */
				if (rc < 0)
					goto out;
			}
			continue;
		}
		struct shmr_buf b;

		while ((rc = shmr_buf_alloc(ep, o->size, &b)) ==
		       -SHMR_E_NO_BUFFER)
			sched_yield(); /* the sink may share our core */
		if (rc < 0)
			goto out;
		memcpy(b.data, &k, sizeof(k)); /* the stamp, nothing more */
		while ((rc = shmr_send_buf(ep, router, 1, k, &b, o->size)) ==
		       -EAGAIN)
			sched_yield(); /* the sink may share our core */
		if (rc < 0)
			goto out;
	}
	r.sent = lo.count;
	if (perf_sink_collect(ep, router, lo.routes, lo.count, &r, &t1) < 0 ||
	    !perf_result_checked("shmr-perf large", &r) || t1 <= t0)
		goto out;
	r.mps = (double)o->count * 1e9 / (double)(t1 - t0);
	out->stream = r;
	if (!chunk && o->rtt &&
	    (large_rtt(ep, router, o->size, 1, o->rtt, &out->call) < 0 ||
	     large_rtt(ep, router, 64, 0, o->rtt, &out->call64) < 0))
		goto out;
	mps = r.mps;
out:
	if (rc < 0)
		fprintf(stderr, "shmr-perf large: %s\n", shmr_strerror(rc));
	free(payload);
	if (ep)
		shmr_endpoint_close(ep);
	if (d)
		shmr_detach(d);
	perf_unpin();
	perf_app_stop(&a, &lo);
	return mps;
}

/* What the memcpy baseline read back of its copies: a global, so the sum,
 * and with it every copy, is kept. */
uint64_t perf_large_kept;

double perf_large_memcpy(const struct perf_opts *o)
{
	unsigned char *src = malloc(o->size), *dst = malloc(o->size);
	uint64_t n = o->count, t0, keep = 0;
	double cps;

	if (!src || !dst) {
		free(src);
		free(dst);
		return -1;
	}
	memset(src, 1, o->size);
	memset(dst, 2, o->size);
	(void)perf_pin(o->cpu_client);
	t0 = perf_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		src[i % o->size] = (unsigned char)i;
		memcpy(dst, src, o->size);
		/* A byte of each copy goes into perf_large_kept, so the
		 * compiler keeps every copy. */
		keep += dst[i % o->size];
	}
	cps = (double)n * 1e9 / (double)(perf_now_ns() - t0);
	perf_large_kept = keep;
	perf_unpin();
	free(src);
	free(dst);
	return cps;
}

void perf_large_size_name(size_t size, char *buf, size_t cap)
{
	if (size % (1u << 20) == 0)
		snprintf(buf, cap, "%zuM", size >> 20);
	else if (size % 1024 == 0)
		snprintf(buf, cap, "%zuK", size >> 10);
	else
		snprintf(buf, cap, "%zu", size);
}

struct json_object *perf_large_json(const char *mode, const char *record,
				    const struct perf_opts *o, const char *run)
{
	struct json_object *j = perf_json_record(mode, record);

	if (run)
		perf_json_str(j, "run", run);
	perf_json_u64(j, "size_bytes", o->size);
	perf_json_u64(j, "count", o->count);
	perf_json_u64(j, "round_trips", o->rtt);
	perf_json_cpus(j, o);
	return j;
}

void perf_large_json_rate(struct json_object *j, const struct perf_opts *o,
			  double mps)
{
	perf_json_num(j, "msgs_per_s", mps);
	perf_json_num(j, "gb_per_s", mps * (double)o->size / 1e9);
}

/* The issue-15 goal: a call with a buffer of any size within 1.5 times
 * the round trip of a 64-byte one (p50 against p50). */
#define LARGE_CALL_GOAL 1.5

/* --json: large's records (docs/benchmarks.md, "JSON results"). */
static void large_json_emit(const struct perf_opts *o,
			    const struct perf_large *a, double cpy,
			    const struct perf_large *in)
{
	const struct perf_result *call[2] = { &a->call, &a->call64 };
	struct json_object *j;
	double x;

	j = perf_large_json("large", "run", o, "arena");
	perf_json_counts(j, &a->stream);
	perf_large_json_rate(j, o, a->stream.mps);
	perf_json_emit(j);
	j = perf_large_json("large", "run", o, "memcpy");
	perf_large_json_rate(j, o, cpy);
	perf_json_emit(j);
	j = perf_large_json("large", "run", o, "inline");
	perf_json_u64(j, "chunk_bytes", PERF_LARGE_CHUNK);
	perf_json_u64(j, "slots_per_msg",
		      (o->size + PERF_LARGE_CHUNK - 1) / PERF_LARGE_CHUNK);
	perf_json_counts(j, &in->stream);
	perf_large_json_rate(j, o, in->stream.mps);
	perf_json_emit(j);
	for (unsigned i = 0; o->rtt && i < 2; i++) {
		j = perf_large_json("large", "run", o, "call");
		perf_json_u64(j, "call_bytes", i ? 64 : o->size);
		perf_json_bool(j, "buffer", i == 0);
		perf_json_rtt(j, call[i]);
		perf_json_emit(j);
	}
	j = perf_large_json("large", "summary", o, NULL);
	perf_json_num(j, "vs_memcpy", a->stream.mps / cpy);
	perf_json_num(j, "vs_inline", a->stream.mps / in->stream.mps);
	if (o->rtt) {
		x = a->call.p50_us / a->call64.p50_us;
		perf_json_num(j, "call_rtt_p50_ns", a->call.p50_us * 1e3);
		perf_json_num(j, "call64_rtt_p50_ns", a->call64.p50_us * 1e3);
		perf_json_num(j, "call_vs_call64", x);
		perf_json_num(j, "call_goal", LARGE_CALL_GOAL);
		perf_json_bool(j, "call_goal_met", x <= LARGE_CALL_GOAL);
	}
	perf_json_emit(j);
}

int perf_large_run(const struct perf_opts *o)
{
	struct perf_large a, in;
	double arena = perf_large_stream(o, 0, &a), cpy, inl, x;
	char size[32];

	if (arena < 0)
		return -1;
	cpy = perf_large_memcpy(o);
	inl = perf_large_stream(o, PERF_LARGE_CHUNK, &in);
	if (cpy <= 0 || inl <= 0)
		return -1;
	perf_large_size_name(o->size, size, sizeof(size));
	printf("large: %s %.3f M msg/s %.2f GB/s, vs memcpy %.2f\n", size,
	       arena / 1e6, arena * (double)o->size / 1e9, arena / cpy);
	printf("large: %s memcpy %.3f M copies/s %.2f GB/s; inline slots "
	       "(%u-byte chunks) %.3f M msg/s %.2f GB/s\n",
	       size, cpy / 1e6, cpy * (double)o->size / 1e9,
	       PERF_LARGE_CHUNK, inl / 1e6,
	       inl * (double)o->size / 1e9);
	if (o->rtt) {
		x = a.call.p50_us / a.call64.p50_us;
		printf("large: call round trip p50 %s %.2f us, 64 B %.2f us: "
		       "%.2f times (goal <= %.1f): %s\n",
		       size, a.call.p50_us, a.call64.p50_us, x,
		       LARGE_CALL_GOAL, x <= LARGE_CALL_GOAL ? "PASS" : "BELOW");
	}
	if (perf_json)
		large_json_emit(o, &a, cpy, &in);
	return 0;
}
