/*
 * `shmr-perf idle`'s in-process figure: what one routing lcore spends per
 * message when one endpoint sends beside idle ones, measured in the CPU
 * time of this one thread, so that other processes on a shared machine
 * change it little (the end-to-end runs of idle.c swing with them).  The
 * dataplane's own code (dp_core) on a heap domain: the thread plays the
 * sender (a burst into its outbound lane and its work bit, as libshmr's
 * push() does), the lcore (shmr_dp_poll_once_rcu()) and the sink (the
 * burst taken out of its inbound lane).  No table swap, no RCU reader
 * but this thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shmr/domain.h>
#include <shmr/lane_copy.h>

#include "lcore.h"
#include "table.h"
#include "forward.h"
#include "perf_dp.h"
#include "perf_internal.h"

#define ROUND_MSGS 4000000u /* messages per figure */

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sender slot 1, sink slot 2, idle endpoints 3 on; all clients. */
static void attach_all(struct perf_dom *d, unsigned idle)
{
	struct shmr_spec *s = shmr_spec_of(d->base);
	uint32_t *active = shmr_active_of(d->base);

	shmr_spec_write_begin(s);
	s->nactive = 0;
	for (uint32_t e = 1; e <= 2 + idle; e++) {
		struct shmr_ep_shared *ep = shmr_ep_at(d->base, e);

		ep->gen = 1;
		ep->kind = SHMR_EPK_CLIENT;
		atomic_store(&ep->state, SHMR_EP_ACTIVE);
		active[s->nactive++] = e;
	}
	s->version++;
	shmr_spec_write_end(s);
}

double perf_idle_round_ns(const struct perf_opts *o, unsigned idle,
			  uint32_t sweep_every)
{
	struct perf_dom d;
	struct shmr_dp_table *t = NULL;
	struct shmr_dp_lcore lc;
	unsigned char *buf = NULL;
	struct rte_ring *out, *in;
	uint32_t ss = o->slot, burst = o->burst;
	uint64_t moved = 0, t0, t1;
	double ns = -1;
	int rc = perf_heap_domain(&d, o, 1, "perf-idle");

	if (rc == -E2BIG)
		return PERF_IDLE_TOO_BIG;
	if (rc < 0) {
		fprintf(stderr, "shmr-perf idle: heap domain failed\n");
		return -1;
	}
	if (idle + 3 > d.env.max_endpoints) {
		fprintf(stderr, "shmr-perf idle: at most %u idle endpoints in "
				"the domain\n",
			d.env.max_endpoints - 3);
		free(d.base);
		return -1;
	}
	attach_all(&d, idle);
	buf = calloc(burst, ss);
	if (!buf || shmr_dp_table_build(&d.env, &t) < 0 ||
	    shmr_dp_lcore_init(&lc, &d.env, 0) < 0) {
		fprintf(stderr, "shmr-perf idle: table or lcore failed\n");
		goto out_dom;
	}
	lc.sweep_every = sweep_every;
	for (unsigned j = 0; j < burst; j++) {
		struct shmr_msg *m = (struct shmr_msg *)(buf + (size_t)j * ss);

		m->kind = SHMR_KIND_SEND;
		m->type = 1;
		m->from = (struct shmr_pid){ 1, 1 };
		m->to = (struct shmr_pid){ 2, 1 };
		m->key = j;
	}
	out = shmr_lane_at(d.base, 1, SHMR_LANE_OUT(1));
	in = shmr_lane_at(d.base, 2, 0);
	(void)shmr_dp_poll_once_rcu(&lc, t); /* the first round sweeps */
	t0 = thread_ns();
	while (moved < ROUND_MSGS) {
		unsigned n = shmr_lane_put(out, buf, ss, burst);

		shmr_work_note(d.base, shmr_hdr(d.base), 1);
		if (shmr_dp_poll_once_rcu(&lc, t) != n) {
			fprintf(stderr, "shmr-perf idle: a round did not "
					"forward the burst\n");
			goto out;
		}
		moved += shmr_lane_take(in, buf, ss, burst);
	}
	t1 = thread_ns();
	ns = (double)(t1 - t0) / (double)moved;
out:
	shmr_dp_lcore_fini(&lc);
out_dom:
	if (t)
		shmr_dp_table_free(t);
	free(buf);
	free(d.base);
	return ns;
}
