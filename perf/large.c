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
 * inline.  The sink counts slots: the stream's end is
 * perf_sink_collect()'s, as the router run's.
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

static double large_rtt_us(struct shmr_endpoint *ep, struct shmr_pid router,
			   size_t len, int buf, unsigned n)
{
	uint64_t t0 = 0;

	for (unsigned i = 0; i < PERF_CALL_WARMUP + n; i++) {
		if (i == PERF_CALL_WARMUP)
			t0 = perf_now_ns();
		int rc = large_call(ep, router, len, buf, i);

		if (rc < 0) {
			fprintf(stderr, "shmr-perf large: call of %zu bytes: "
					"%s\n",
				len, shmr_strerror(rc));
			return -1;
		}
	}
	return (double)(perf_now_ns() - t0) / 1e3 / n;
}

double perf_large_stream(const struct perf_opts *o, size_t chunk)
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
	if (perf_sink_collect(ep, router, lo.routes, lo.count, &r, &t1) < 0 ||
	    r.received != lo.count)
		goto out;
	mps = (double)o->count * 1e9 / (double)(t1 - t0);
	if (!chunk && o->rtt) {
		double big = large_rtt_us(ep, router, o->size, 1, o->rtt);
		double tiny = large_rtt_us(ep, router, 64, 0, o->rtt);

		if (big > 0 && tiny > 0)
			printf("large: call round trip %zu B %.2f us, 64 B %.2f "
			       "us: %.2f times\n",
			       o->size, big, tiny, big / tiny);
	}
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

int perf_large_run(const struct perf_opts *o)
{
	double arena = perf_large_stream(o, 0), cpy, in = -1;
	char size[32];

	if (arena < 0)
		return -1;
	cpy = perf_large_memcpy(o);
	in = perf_large_stream(o, PERF_LARGE_CHUNK);
	perf_large_size_name(o->size, size, sizeof(size));
	printf("large: %s %.3f M msg/s %.2f GB/s, vs memcpy %.2f\n", size,
	       arena / 1e6, arena * (double)o->size / 1e9,
	       cpy > 0 ? arena / cpy : 0);
	printf("large: %s memcpy %.3f M copies/s %.2f GB/s; inline slots "
	       "(%u-byte chunks) %.3f M msg/s %.2f GB/s\n",
	       size, cpy / 1e6, cpy * (double)o->size / 1e9,
	       PERF_LARGE_CHUNK, in / 1e6,
	       in * (double)o->size / 1e9);
	return 0;
}
