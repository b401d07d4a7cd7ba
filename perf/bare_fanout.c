/*
 * Bare fan-out (perf_bare_fanout_run(), the baseline of `shmr-perf
 * logics`): the producer's stream spread by a forwarder over --routes
 * consumers (the sinks' CPU, the sinks' wait), slot with seq s to
 * consumer s % routes, as the router's hash sends key s.  The forwarder
 * batches as well as it can, the way rte_eth_tx_buffer does per port:
 * each slot is copied out of its input lane straight into its
 * destination's buffer (a zero-copy dequeue: one copy), a buffer goes out
 * as one enqueue when it holds a burst, and every buffer goes out when the
 * input lane is empty.  Each consumer checks its slots come in order.
 *
 * It runs on the bare chain's machinery (bare.c's essay, perf_bare.h): the
 * same memfd of rings, its children forked, pinned and released at once,
 * the parent blocked in waitpid while they run.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/lane_copy.h>

#include "perf_bare.h"
#include "perf_internal.h"

unsigned perf_fan_take(struct perf_fan *f, struct rte_ring *in)
{
	struct rte_ring_zc_data z;
	unsigned n = rte_ring_dequeue_zc_burst_elem_start(in, f->slot, f->burst,
							  &z, NULL);
	/* A power of two of routes (one included) takes the key's low
	 * bits, as the router's hash does (decide.h): no 64-bit division a
	 * slot. */
	int pow2 = (f->routes & (f->routes - 1)) == 0;
	uint64_t mask = f->routes - 1;

	if (n == 0)
		return 0;
	/* Straight from the input lane into the buffer: one copy. */
	for (unsigned i = 0; i < n; i++) {
		const unsigned char *e =
			i < z.n1 ? (const unsigned char *)z.ptr1 +
					   (size_t)i * f->slot
				 : (const unsigned char *)z.ptr2 +
					   (size_t)(i - z.n1) * f->slot;
		uint64_t key;
		unsigned d;

		memcpy(&key, e + f->key_off, sizeof(key));
		d = (unsigned)(pow2 ? key & mask : key % f->routes);
		memcpy(f->stage + ((size_t)d * f->burst + f->cnt[d]) * f->slot,
		       e, f->slot);
		if (++f->cnt[d] == f->burst) {
			f->flush(f, d);
			f->cnt[d] = 0;
		}
	}
	rte_ring_dequeue_zc_elem_finish(in, n);
	return n;
}

void perf_fan_flush_all(struct perf_fan *f)
{
	for (unsigned d = 0; d < f->routes; d++)
		if (f->cnt[d]) {
			f->flush(f, d);
			f->cnt[d] = 0;
		}
}

/* The fan-out forwarder: its spread (first: fan_out() finds it from its
 * own), its lanes and how it waits. */
struct fan_fwd {
	struct perf_fan fan;
	const struct perf_opts *o;
	struct bare_map *m;
	struct perf_stall st;
	unsigned idle;
};

/* Consumer @p d's buffer out as one enqueue (waiting while it is full). */
static void fan_out(struct perf_fan *fan, unsigned d)
{
	struct fan_fwd *f = (struct fan_fwd *)fan;

	bare_push_all(f->m->ring[RING_FAN0 + d],
		      fan->stage + (size_t)d * fan->burst * fan->slot,
		      fan->cnt[d], f->o, &f->st, &f->idle, PERF_SPIN_ALONE,
		      "fan-out forwarder", "consumer stopped");
}

/* The fan-out's forwarder: slot seq s to consumer s % routes, a buffer
 * out when it holds a burst, every buffer out when input stops. */
static void fan_forwarder(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct fan_fwd f = {
		.fan = { .routes = o->routes, .burst = o->burst,
			 .slot = o->slot,
			 .key_off = offsetof(struct bare_elem, seq),
			 .flush = fan_out },
		.o = o,
		.m = m,
	};
	uint64_t fwd = 0;

	f.fan.stage = calloc((size_t)o->routes * o->burst, o->slot);
	if (!f.fan.stage)
		bare_child_fail("fan-out forwarder", "out of memory");
	bare_child_sync(b);
	while (fwd < o->count) {
		unsigned n = perf_fan_take(&f.fan, m->ring[RING_P2F]);

		if (n == 0) {
			perf_fan_flush_all(&f.fan);
			if (perf_stalled(&f.st))
				bare_child_fail("fan-out forwarder",
						"producer stopped");
			perf_backoff(&f.idle, PERF_SPIN_ALONE);
			continue;
		}
		perf_progress(&f.st);
		fwd += n;
	}
	perf_fan_flush_all(&f.fan);
	_exit(PERF_EXIT_OK);
}

/* Fan-out consumer b->fan_id: seqs id, id + routes, ... in order. */
static void fan_consumer(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	unsigned id = b->fan_id, nd = o->routes;
	struct rte_ring *in = m->ring[RING_FAN0 + id];
	unsigned char *buf = calloc(o->burst, o->slot);
	struct perf_stall st = { 0 };
	uint64_t want = o->count > id ? (o->count - id + nd - 1) / nd : 0;
	uint64_t got = 0, expect = id, gaps = 0, reorders = 0;
	unsigned idle = 0;

	if (!buf)
		bare_child_fail("fan-out consumer", "out of memory");
	bare_child_sync(b);
	while (got < want) {
		unsigned n = shmr_lane_take(in, buf, o->slot, o->burst);

		if (n == 0) {
			if (perf_stalled(&st)) {
				fprintf(stderr, "shmr-perf bare: fan-out "
						"consumer %u: stalled after "
						"%llu\n",
					id, (unsigned long long)got);
				break;
			}
			perf_backoff(&idle, PERF_SPIN_SHARED);
			continue;
		}
		perf_progress(&st);
		for (unsigned i = 0; i < n; i++) {
			uint64_t seq = ((const struct bare_elem *)(
						buf + (size_t)i * o->slot))
					       ->seq;

			if (seq != expect) {
				if (seq < expect)
					reorders++;
				else
					gaps++;
			}
			if (seq >= expect)
				expect = seq + nd;
		}
		got += n;
	}
	m->ctl->fan[id].end_ns = perf_now_ns();
	m->ctl->fan[id].received = got;
	m->ctl->fan[id].gaps = gaps;
	m->ctl->fan[id].reorders = reorders;
	_exit(got == want ? PERF_EXIT_OK : PERF_EXIT_FAIL);
}

int perf_bare_fanout_run(const struct perf_opts *o, struct perf_result *r)
{
	void (*roles[2 + PERF_FAN_MAX])(struct bare *, struct bare_map *);
	const char *names[2 + PERF_FAN_MAX];
	int cpus[2 + PERF_FAN_MAX];
	struct bare b = { .o = o, .memfd = -1, .fan_first = 2 };
	struct bare_map m;
	uint64_t end = 0;
	unsigned nd = o->routes;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (nd == 0 || nd > PERF_FAN_MAX) {
		fprintf(stderr, "shmr-perf bare: fan-out over %u: 1 to %u\n",
			nd, PERF_FAN_MAX);
		return -1;
	}
	if (bare_open(&b, &m) < 0)
		return -1;
	/* Started as the router run's are: the hub, the sinks, the client. */
	roles[0] = fan_forwarder;
	cpus[0] = o->cpu_hub;
	names[0] = "fan-out forwarder";
	for (unsigned d = 0; d < nd; d++) {
		roles[2 + d] = fan_consumer;
		cpus[2 + d] = o->cpu_sink;
		names[2 + d] = "fan-out consumer";
	}
	roles[1] = bare_producer;
	cpus[1] = o->cpu_client;
	names[1] = "producer";
	if (bare_run_children(&b, roles, cpus, names, 2 + (int)nd) < 0)
		goto unmap;
	r->sent = o->count;
	for (unsigned d = 0; d < nd; d++) {
		r->received += m.ctl->fan[d].received;
		r->gaps += m.ctl->fan[d].gaps;
		r->reorders += m.ctl->fan[d].reorders;
		if (m.ctl->fan[d].end_ns > end)
			end = m.ctl->fan[d].end_ns;
	}
	if (end > m.ctl->t_start_ns)
		r->mps = (double)r->received * 1e9 /
			 (double)(end - m.ctl->t_start_ns);
	r->dps = r->mps;
	rc = 0;
unmap:
	munmap(m.base, b.size);
	close(b.memfd);
	return rc;
}
