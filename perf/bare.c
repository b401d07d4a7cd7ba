/*
 * The bare baseline: what the hardware and DPDK's ring give without any
 * shmrouter code on the path.
 *
 * Throughput: producer -> forwarder -> consumer, two hops over plain SPSC
 * rte_rings (RING_F_SP_ENQ | RING_F_SC_DEQ) initialised in place in a memfd,
 * element size = slot size, moved in bursts with DPDK's zero-copy calls and
 * memcpy() (shmr/lane_copy.h), as libshmr and the dataplane move them, so
 * the baseline has the same copy as the router.  Each process
 * maps the memfd itself, at its own address, as the appliance's processes
 * do.  The processes are pinned like the router run pins client, dataplane
 * and worker (producer on the client's CPU, forwarder on the dataplane's,
 * consumer on the sinks'), and wait for work with the same policy as the
 * router run's client and sinks (perf_backoff()).
 *
 * Round trip: one process sends a slot on one ring and spins for it to come
 * back on another; the partner echoes.  Pinger on the client's CPU, ponger
 * on the dataplane's: the two-ring ping-pong of ARCHITECTURE.md.
 *
 * Three-process round trip: the router call's shape without its code.
 * Pinger (client's CPU) -> forwarder (dataplane's) -> echoer (the sinks')
 * -> forwarder -> pinger, four hops over four SPSC rings.  The pinger waits
 * as shmr_call() does (pause, and sched_yield() every 8th poll), the echoer
 * as the sink does (perf_backoff()), the forwarder busy-polls both inbound
 * rings like the dataplane in busy mode.  With two cores the echoer shares
 * the pinger's core, so each round trip pays the same two context switches
 * a router call pays; the difference to the call is shmrouter's own cost.
 *
 * Same-core handoff: the two-ring ping-pong again, but with pinger and
 * ponger both on the client's CPU, each calling sched_yield() at once when
 * its ring is empty.  No third process, no shmrouter code: it measures
 * only the two context switches that any round trip pays when three
 * processes share two cores (two of them must take turns on one core,
 * once to let the other run and once to run again), and so is a floor
 * under the three-process round trip and the router's call.
 *
 * The bare fan-out, the baseline of `shmr-perf logics`, is bare_fanout.c's,
 * on this file's machinery (perf_bare.h).
 *
 * The parent forks, releases all children at once through a pipe (EOF on
 * the "go" pipe) and then blocks in waitpid: it never wakes while they run.
 */
#include <errno.h>
#include <stdalign.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/lane_copy.h>

#include "perf_bare.h"
#include "perf_internal.h"

static int bare_map(const struct bare *b, struct bare_map *m)
{
	m->base = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       b->memfd, 0);
	if (m->base == MAP_FAILED)
		return -errno;
	m->ctl = m->base;
	for (int i = 0; i < RING_COUNT; i++)
		m->ring[i] = (struct rte_ring *)((char *)m->base + CTL_BYTES +
						 (size_t)i * b->ring_bytes);
	return 0;
}

/* In a child: say we are ready, then wait until the parent says go. */
void bare_child_sync(struct bare *b)
{
	char c = 'r';

	if (write(b->ready[1], &c, 1) != 1)
		_exit(PERF_EXIT_FAIL);
	/* So that the parent sees EOF if a sibling dies before its byte. */
	close(b->ready[1]);
	/* EOF arrives when the parent closes its end: everyone at once. */
	while (read(b->go[0], &c, 1) < 0 && errno == EINTR)
		;
}

void bare_child_fail(const char *who, const char *what)
{
	fprintf(stderr, "shmr-perf bare: %s: %s\n", who, what);
	_exit(PERF_EXIT_FAIL);
}

/*
 * Enqueue all @p n slots of @p buf, backing off while @p out is full; a
 * consumer that stops taking for the stall bound fails the run as @p who.
 */
void bare_push_all(struct rte_ring *out, const unsigned char *buf,
		   unsigned n, const struct perf_opts *o,
		   struct perf_stall *st, unsigned *idle, unsigned spin,
		   const char *who, const char *what)
{
	unsigned done = 0;

	while (done < n) {
		unsigned k = shmr_lane_put(out, buf + (size_t)done * o->slot,
					   o->slot, n - done);
		if (k) {
			done += k;
			perf_progress(st);
			continue;
		}
		if (perf_stalled(st))
			bare_child_fail(who, what);
		perf_backoff(idle, spin);
	}
}

void bare_producer(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *out = m->ring[RING_P2F];
	unsigned char *buf = calloc(o->burst, o->slot);
	struct perf_stall st = { 0 };
	unsigned idle = 0;
	uint64_t seq = 0;

	if (!buf)
		bare_child_fail("producer", "out of memory");
	bare_child_sync(b);
	m->ctl->t_start_ns = perf_now_ns();
	while (seq < o->count) {
		unsigned n = o->burst;

		if (o->count - seq < n)
			n = (unsigned)(o->count - seq);
		for (unsigned i = 0; i < n; i++) {
			struct bare_elem *e =
				(struct bare_elem *)(buf + (size_t)i * o->slot);
			e->seq = seq + i;
			e->from = 1;
			e->type = 1;
		}
		bare_push_all(out, buf, n, o, &st, &idle, PERF_SPIN_SHARED,
			      "producer", "forwarder stopped taking");
		seq += n;
	}
	_exit(PERF_EXIT_OK);
}

static void forwarder(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *in = m->ring[RING_P2F], *out = m->ring[RING_F2C];
	unsigned char *buf = calloc(o->burst, o->slot);
	struct perf_stall st = { 0 };
	unsigned idle = 0;
	uint64_t fwd = 0;

	if (!buf)
		bare_child_fail("forwarder", "out of memory");
	bare_child_sync(b);
	while (fwd < o->count) {
		unsigned n = shmr_lane_take(in, buf, o->slot, o->burst);

		if (n == 0) {
			if (perf_stalled(&st))
				bare_child_fail("forwarder",
						"producer stopped");
			perf_backoff(&idle, PERF_SPIN_ALONE);
			continue;
		}
		perf_progress(&st);
		bare_push_all(out, buf, n, o, &st, &idle, PERF_SPIN_ALONE,
			      "forwarder", "consumer stopped");
		fwd += n;
	}
	_exit(PERF_EXIT_OK);
}

static void consumer(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *in = m->ring[RING_F2C];
	unsigned char *buf = calloc(o->burst, o->slot);
	struct perf_stall st = { 0 };
	uint64_t got = 0, expect = 0, gaps = 0, reorders = 0;
	unsigned idle = 0;

	if (!buf)
		bare_child_fail("consumer", "out of memory");
	bare_child_sync(b);
	while (got < o->count) {
		unsigned n = shmr_lane_take(in, buf, o->slot, o->burst);
		if (n == 0) {
			if (perf_stalled(&st)) {
				fprintf(stderr, "shmr-perf bare: consumer: "
						"stalled after %llu\n",
					(unsigned long long)got);
				break;
			}
			perf_backoff(&idle, PERF_SPIN_SHARED);
			continue;
		}
		perf_progress(&st);
		for (unsigned i = 0; i < n; i++) {
			const struct bare_elem *e = (const struct bare_elem *)(
				buf + (size_t)i * o->slot);
			if (e->seq != expect) {
				if (e->seq < expect)
					reorders++;
				else
					gaps++;
			}
			if (e->seq >= expect)
				expect = e->seq + 1;
		}
		got += n;
	}
	m->ctl->t_end_ns = perf_now_ns();
	m->ctl->received = got;
	m->ctl->gaps = gaps;
	m->ctl->reorders = reorders;
	_exit(got == o->count ? PERF_EXIT_OK : PERF_EXIT_FAIL);
}

#define PING_WARMUP 1000u
#define PING_STOP UINT64_MAX

/* Sort the pinger's o->rtt samples and leave the percentiles for the
 * parent (as TSC ticks: the parent converts). */
static void pinger_report(struct bare *b, struct bare_map *m,
			  uint64_t *ticks)
{
	unsigned n = b->o->rtt;
	struct perf_result r;

	perf_latency_summary(ticks, n, &r);
	m->ctl->rtt[b->rtt_run].p50 = ticks[n / 2];
	m->ctl->rtt[b->rtt_run].p99 = ticks[(uint64_t)n * 99 / 100];
	m->ctl->rtt[b->rtt_run].p999 = ticks[(uint64_t)n * 999 / 1000];
	m->ctl->rtt[b->rtt_run].max = ticks[n ? n - 1 : 0];
	m->ctl->rtt[b->rtt_run].done = n;
}

/* The two-process round trips' wait: spin on a core of one's own, hand
 * the core over at once when sharing it with the partner. */
static void ping_wait(const struct bare *b)
{
	if (b->rtt_run == RTT_HANDOFF)
		sched_yield();
	else
		rte_pause();
}

static void pinger(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *out = m->ring[RING_PING], *in = m->ring[RING_PONG];
	unsigned char *tx = calloc(1, o->slot), *rx = calloc(1, o->slot);
	unsigned total = PING_WARMUP + o->rtt;
	uint64_t *ticks = calloc(o->rtt ? o->rtt : 1, sizeof(*ticks));
	struct perf_stall st = { 0 };

	if (!tx || !rx || !ticks)
		bare_child_fail("pinger", "out of memory");
	perf_tsc_per_us(); /* calibrate before the clock starts */
	bare_child_sync(b);
	for (unsigned i = 0; i < total; i++) {
		struct bare_elem *e = (struct bare_elem *)tx;
		uint64_t t0 = rte_rdtsc(), t1;

		e->seq = i;
		while (shmr_lane_put(out, tx, o->slot, 1) != 1)
			rte_pause();
		while (shmr_lane_take(in, rx, o->slot, 1) != 1) {
			if (perf_stalled(&st))
				bare_child_fail("pinger", "ponger stopped");
			ping_wait(b);
		}
		t1 = rte_rdtsc();
		perf_progress(&st);
		if (((struct bare_elem *)rx)->seq != i)
			bare_child_fail("pinger", "answer out of order");
		if (i >= PING_WARMUP)
			ticks[i - PING_WARMUP] = t1 - t0;
	}
	((struct bare_elem *)tx)->seq = PING_STOP;
	while (shmr_lane_put(out, tx, o->slot, 1) != 1)
		rte_pause();
	pinger_report(b, m, ticks);
	_exit(PERF_EXIT_OK);
}

static void ponger(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *in = m->ring[RING_PING], *out = m->ring[RING_PONG];
	unsigned char *buf = calloc(1, o->slot);
	struct perf_stall st = { 0 };

	if (!buf)
		bare_child_fail("ponger", "out of memory");
	bare_child_sync(b);
	for (;;) {
		if (shmr_lane_take(in, buf, o->slot, 1) != 1) {
			if (perf_stalled(&st))
				bare_child_fail("ponger", "pinger stopped");
			ping_wait(b);
			continue;
		}
		perf_progress(&st);
		if (((struct bare_elem *)buf)->seq == PING_STOP)
			break;
		while (shmr_lane_put(out, buf, o->slot, 1) != 1)
			rte_pause();
	}
	_exit(PERF_EXIT_OK);
}

/*
 * The three-process round trip's client: send one slot, wait for its echo
 * the way shmr_call()'s wait_input() does, check it is the echo of this
 * very slot.  One slot in flight, so a lost echo stalls (and fails after
 * PERF_STALL_NS) and a duplicated or reordered one carries the wrong seq.
 */
static void pinger3(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *out = m->ring[RING_P2F], *in = m->ring[RING_F2P];
	unsigned char *tx = calloc(1, o->slot), *rx = calloc(1, o->slot);
	unsigned total = PING_WARMUP + o->rtt;
	uint64_t *ticks = calloc(o->rtt ? o->rtt : 1, sizeof(*ticks));
	struct bare_elem *e = (struct bare_elem *)tx;
	const struct bare_elem *echo = (const struct bare_elem *)rx;
	struct perf_stall st = { 0 };

	if (!tx || !rx || !ticks)
		bare_child_fail("pinger", "out of memory");
	perf_tsc_per_us(); /* calibrate before the clock starts */
	bare_child_sync(b);
	e->from = FROM_PINGER;
	for (unsigned i = 0; i < total; i++) {
		uint64_t t0 = rte_rdtsc(), t1;

		e->seq = i;
		e->type = 1;
		/* Never full: one slot in flight on a lane of >= 64. */
		if (shmr_lane_put(out, tx, o->slot, 1) != 1)
			bare_child_fail("pinger",
					"lane full with one in flight");
		for (unsigned w = 0; shmr_lane_take(in, rx, o->slot, 1) != 1;
		     w++) {
			if (perf_stalled(&st))
				bare_child_fail("pinger", "no echo (lost)");
			/* libshmr's wait_input(): the echoer may need this
			 * core to answer. */
			if ((w & 7) == 7)
				sched_yield();
			else
				rte_pause();
		}
		t1 = rte_rdtsc();
		perf_progress(&st);
		if (echo->seq != i || echo->from != FROM_ECHOER) {
			fprintf(stderr, "shmr-perf bare: pinger: sent %u, got "
					"seq %llu from %u\n",
				i, (unsigned long long)echo->seq, echo->from);
			bare_child_fail("pinger", "echo lost, duplicated or "
					"reordered");
		}
		if (i >= PING_WARMUP)
			ticks[i - PING_WARMUP] = t1 - t0;
	}
	e->seq = PING_STOP;
	if (shmr_lane_put(out, tx, o->slot, 1) != 1)
		bare_child_fail("pinger", "lane full at stop");
	pinger_report(b, m, ticks);
	_exit(PERF_EXIT_OK);
}

/* Move up to a burst from @p in to @p out; returns the count moved. */
static unsigned relay(struct rte_ring *in, struct rte_ring *out,
		      unsigned char *buf, const struct perf_opts *o,
		      struct perf_stall *st, int *stop)
{
	unsigned n = shmr_lane_take(in, buf, o->slot, o->burst);
	unsigned done = 0;

	for (unsigned i = 0; i < n; i++)
		if (((const struct bare_elem *)(buf + (size_t)i * o->slot))
			    ->seq == PING_STOP)
			*stop = 1;
	while (done < n) {
		done += shmr_lane_put(out, buf + (size_t)done * o->slot,
				      o->slot, n - done);
		if (done < n) {
			if (perf_stalled(st))
				bare_child_fail("forwarder",
						"lane stayed full");
			rte_pause();
		}
	}
	return n;
}

/* The dataplane's part in busy mode: poll both inbound lanes, forward,
 * never yield.  Stops after passing the pinger's stop on to the echoer. */
static void forwarder3(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	unsigned char *buf = calloc(o->burst, o->slot);
	struct perf_stall st = { 0 };
	int stop = 0;

	if (!buf)
		bare_child_fail("forwarder", "out of memory");
	bare_child_sync(b);
	while (!stop) {
		unsigned n = relay(m->ring[RING_P2F], m->ring[RING_F2C], buf, o,
				   &st, &stop);

		n += relay(m->ring[RING_C2F], m->ring[RING_F2P], buf, o, &st,
			   &stop);
		if (n) {
			perf_progress(&st);
			continue;
		}
		if (perf_stalled(&st))
			bare_child_fail("forwarder", "pinger stopped");
		rte_pause();
	}
	_exit(PERF_EXIT_OK);
}

/* The worker's part: wait like shmr-perf-sink, check each ping is the next
 * one, mark it as an echo and send it back. */
static void echoer3(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *in = m->ring[RING_F2C], *out = m->ring[RING_C2F];
	unsigned char *buf = calloc(1, o->slot);
	struct bare_elem *e = (struct bare_elem *)buf;
	struct perf_stall st = { 0 };
	unsigned idle = 0;
	uint64_t expect = 0;

	if (!buf)
		bare_child_fail("echoer", "out of memory");
	bare_child_sync(b);
	for (;;) {
		if (shmr_lane_take(in, buf, o->slot, 1) != 1) {
			if (perf_stalled(&st))
				bare_child_fail("echoer", "pinger stopped");
			perf_backoff(&idle, PERF_SPIN_SHARED);
			continue;
		}
		idle = 0;
		perf_progress(&st);
		if (e->seq == PING_STOP)
			break;
		if (e->seq != expect++ || e->from != FROM_PINGER)
			bare_child_fail("echoer", "ping lost or reordered");
		e->from = FROM_ECHOER;
#ifdef PERF_FAULT_ECHO
		/* Test builds only (perf/meson.build): break one echo, so
		 * the run must fail: 1 loses it, 2 sends it twice. */
		if (e->seq == PING_WARMUP + 10) {
			if (PERF_FAULT_ECHO == 1)
				continue;
			if (shmr_lane_put(out, buf, o->slot, 1) != 1)
				bare_child_fail("echoer", "lane full");
		}
#endif
		if (shmr_lane_put(out, buf, o->slot, 1) != 1)
			bare_child_fail("echoer",
					"lane full with one in flight");
	}
	_exit(PERF_EXIT_OK);
}

/* Fork one child per role, pinned; release them together; wait for all. */
int bare_run_children(struct bare *b,
		      void (*const *roles)(struct bare *, struct bare_map *),
		      const int *cpus, const char *const *names, int n)
{
	pid_t pids[2 + PERF_FAN_MAX], parent = getpid();
	int failed = 0, started = 0;
	char c;

	if (pipe(b->go) < 0 || pipe(b->ready) < 0) {
		perror("shmr-perf bare: pipe");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("shmr-perf bare: fork");
			failed = 1;
			break;
		}
		if (pids[i] == 0) {
			struct bare_map m;
			int rc;

			/* Pinned and busy-polling: never outlive the harness. */
			perf_child_init(parent, SIGKILL);
			close(b->go[1]);
			close(b->ready[0]);
			rc = perf_pin(cpus[i]);
			if (rc < 0) {
				fprintf(stderr, "shmr-perf bare: pin %s to "
						"cpu %d: %s\n",
					names[i], cpus[i], strerror(-rc));
				_exit(PERF_EXIT_FAIL);
			}
			if (bare_map(b, &m) < 0)
				bare_child_fail(names[i], "mmap failed");
			b->fan_id = (unsigned)(i - b->fan_first);
			roles[i](b, &m);
			_exit(PERF_EXIT_FAIL); /* roles never return */
		}
		perf_track_pid(pids[i], SIGKILL);
		started++;
	}
	close(b->ready[1]);
	close(b->go[0]);
	/* Everyone is pinned and mapped before anyone starts. */
	for (int i = 0; i < started && !failed; i++)
		if (read(b->ready[0], &c, 1) != 1)
			failed = 1;
	if (failed)
		for (int i = 0; i < started; i++)
			kill(pids[i], SIGKILL);
	close(b->go[1]);
	close(b->ready[0]);
	/* Reap in the order they end; the first failure stops the others,
	 * which would otherwise wait PERF_STALL_NS for it. */
	for (int left = started; left > 0;) {
		int status, i;
		pid_t p = waitpid(-1, &status, 0);

		if (p < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing of ours left */
		}
		for (i = 0; i < started && pids[i] != p; i++)
			;
		if (i == started)
			continue;
		perf_untrack_pid(p);
		pids[i] = 0;
		left--;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL ||
		    !failed)
			fprintf(stderr, "shmr-perf bare: %s failed (%s %d)\n",
				names[i],
				WIFEXITED(status) ? "exit" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status)
						  : WTERMSIG(status));
		if (!failed)
			for (int j = 0; j < started; j++)
				if (pids[j] > 0)
					kill(pids[j], SIGKILL);
		failed = 1;
	}
	return failed ? -1 : 0;
}

/* One round-trip run: its children, then its percentiles in µs. */
static int time_rtt(struct bare *b, const struct bare_map *m, unsigned run,
		    void (*const *roles)(struct bare *, struct bare_map *),
		    const int *cpus, const char *const *names, int n,
		    unsigned *done, double *p50, double *p99, double *p999,
		    double *max)
{
	double per_us = perf_tsc_per_us();

	b->rtt_run = run;
	if (bare_run_children(b, roles, cpus, names, n) < 0)
		return -1;
	*done = m->ctl->rtt[run].done;
	*p50 = (double)m->ctl->rtt[run].p50 / per_us;
	*p99 = (double)m->ctl->rtt[run].p99 / per_us;
	*p999 = (double)m->ctl->rtt[run].p999 / per_us;
	*max = (double)m->ctl->rtt[run].max / per_us;
	return 0;
}

/* The memfd and its rings; 0, or -1 (message printed, *b cleaned). */
int bare_open(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	ssize_t rb;

	rb = rte_ring_get_memsize_elem(o->slot, o->lane);
	if (rb < 0) {
		fprintf(stderr, "shmr-perf bare: ring of %u x %u B: %s\n",
			o->lane, o->slot, strerror((int)-rb));
		return -1;
	}
	b->ring_bytes = ((size_t)rb + 4095) & ~(size_t)4095;
	b->size = CTL_BYTES + RING_COUNT * b->ring_bytes;
	b->memfd = memfd_create("shmr-perf-bare", MFD_CLOEXEC);
	if (b->memfd < 0 || ftruncate(b->memfd, (off_t)b->size) < 0) {
		perror("shmr-perf bare: memfd");
		goto out;
	}
	if (bare_map(b, m) < 0) {
		perror("shmr-perf bare: mmap");
		goto out;
	}
	for (int i = 0; i < RING_COUNT; i++) {
		char name[16];

		snprintf(name, sizeof(name), "bare%d", i);
		if (rte_ring_init(m->ring[i], name, o->lane,
				  RING_F_SP_ENQ | RING_F_SC_DEQ) < 0) {
			fprintf(stderr, "shmr-perf bare: rte_ring_init failed\n");
			munmap(m->base, b->size);
			goto out;
		}
	}
	return 0;
out:
	if (b->memfd >= 0)
		close(b->memfd);
	b->memfd = -1;
	return -1;
}

int perf_bare_probe(const struct perf_opts *o, double *p50_us)
{
	struct perf_opts po = *o;
	struct bare b = { .o = &po, .memfd = -1, .fan_first = 0 };
	struct bare_map m;
	void (*const pp[])(struct bare *, struct bare_map *) = { ponger,
								pinger };
	const int cpus[] = { o->cpu_hub, o->cpu_client };
	const char *const names[] = { "probe ponger", "probe pinger" };
	double p99, p999, max;
	unsigned done;
	int rc;

	po.rtt = PERF_PROBE_RTTS;
	if (bare_open(&b, &m) < 0)
		return -1;
	rc = time_rtt(&b, &m, RTT_PINGPONG, pp, cpus, names, 2, &done, p50_us,
		      &p99, &p999, &max);
	munmap(m.base, b.size);
	close(b.memfd);
	return rc;
}

int perf_probe_fold(const struct perf_opts *o, double *lo, double *hi,
		    int first)
{
	double p50;

	if (perf_bare_probe(o, &p50) < 0)
		return -1;
	if (first || p50 < *lo)
		*lo = p50;
	if (first || p50 > *hi)
		*hi = p50;
	return 0;
}

int perf_bare_run(const struct perf_opts *o, struct perf_result *r)
{
	struct bare b = { .o = o, .memfd = -1, .fan_first = 0 };
	struct bare_map m;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (bare_open(&b, &m) < 0)
		return -1;

	{
		void (*const roles[])(struct bare *, struct bare_map *) = {
			forwarder, consumer, bare_producer
		};
		const int cpus[] = { o->cpu_hub, o->cpu_sink, o->cpu_client };
		const char *const names[] = { "forwarder", "consumer",
					      "producer" };
		if (bare_run_children(&b, roles, cpus, names, 3) < 0)
			goto unmap;
	}
	r->sent = o->count;
	r->received = m.ctl->received;
	r->gaps = m.ctl->gaps;
	r->reorders = m.ctl->reorders;
	if (m.ctl->t_end_ns > m.ctl->t_start_ns)
		r->mps = (double)r->received * 1e9 /
			 (double)(m.ctl->t_end_ns - m.ctl->t_start_ns);

	if (o->rtt) {
		void (*const pp[])(struct bare *, struct bare_map *) = {
			ponger, pinger
		};
		/* Started in the router's order: the hub, the worker, then
		 * the client (shmr-control starts the dataplane first). */
		void (*const three[])(struct bare *, struct bare_map *) = {
			forwarder3, echoer3, pinger3
		};
		const int pp_cpus[] = { o->cpu_hub, o->cpu_client };
		const int one_cpu[] = { o->cpu_client, o->cpu_client };
		const int three_cpus[] = { o->cpu_hub, o->cpu_sink,
					   o->cpu_client };
		const char *const pp_names[] = { "ponger", "pinger" };
		const char *const ho_names[] = { "handoff ponger",
						 "handoff pinger" };
		const char *const three_names[] = { "3-proc forwarder",
						    "3-proc echoer",
						    "3-proc pinger" };

		if (time_rtt(&b, &m, RTT_PINGPONG, pp, pp_cpus, pp_names, 2,
			     &r->rtt, &r->p50_us, &r->p99_us, &r->p999_us,
			     &r->max_us) < 0 ||
		    time_rtt(&b, &m, RTT_HANDOFF, pp, one_cpu, ho_names, 2,
			     &r->handoff, &r->handoff_p50_us,
			     &r->handoff_p99_us, &r->handoff_p999_us,
			     &r->handoff_max_us) < 0 ||
		    time_rtt(&b, &m, RTT_THREE, three, three_cpus,
			     three_names, 3, &r->rtt3, &r->rtt3_p50_us,
			     &r->rtt3_p99_us, &r->rtt3_p999_us,
			     &r->rtt3_max_us) < 0)
			goto unmap;
	}
	rc = 0;
unmap:
	munmap(m.base, b.size);
	close(b.memfd);
	return rc;
}
