/*
 * The bare baseline: what the hardware and DPDK's ring give without any
 * shmrouter code on the path.
 *
 * Throughput: producer -> forwarder -> consumer, two hops over plain SPSC
 * rte_rings (RING_F_SP_ENQ | RING_F_SC_DEQ) initialised in place in a memfd,
 * element size = slot size, moved with the _elem burst API.  Each process
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

#include "perf_internal.h"

#define CTL_BYTES 4096u

/* Results the children leave in shared memory; read after waitpid. */
struct bare_ctl {
	alignas(64) uint64_t t_start_ns; /* producer, before its first enqueue */
	alignas(64) uint64_t t_end_ns;   /* consumer, after the last dequeue */
	uint64_t received, gaps, reorders;
	alignas(64) uint64_t rtt_ticks_p50, rtt_ticks_p99, rtt_ticks_p999,
		rtt_ticks_max;
	unsigned rtt_done;
};
_Static_assert(sizeof(struct bare_ctl) <= CTL_BYTES, "ctl page");

/* The first bytes of every element; the rest of the slot rides along. */
struct bare_elem {
	uint64_t seq;
	uint32_t from;
	uint32_t type;
};

struct bare {
	const struct perf_opts *o;
	int memfd;
	size_t size, ring_bytes;
	int go[2], ready[2];
};

enum { RING_P2F, RING_F2C, RING_PING, RING_PONG, RING_COUNT };

struct bare_map {
	void *base;
	struct bare_ctl *ctl;
	struct rte_ring *ring[RING_COUNT];
};

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
static void child_sync(struct bare *b)
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

static void child_fail(const char *who, const char *what)
{
	fprintf(stderr, "shmr-perf bare: %s: %s\n", who, what);
	_exit(PERF_EXIT_FAIL);
}

static void producer(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *out = m->ring[RING_P2F];
	unsigned char *buf = calloc(o->burst, o->slot);
	struct perf_stall st = { 0 };
	unsigned idle = 0;
	uint64_t seq = 0;

	if (!buf)
		child_fail("producer", "out of memory");
	child_sync(b);
	m->ctl->t_start_ns = perf_now_ns();
	while (seq < o->count) {
		unsigned n = o->burst, done = 0;

		if (o->count - seq < n)
			n = (unsigned)(o->count - seq);
		for (unsigned i = 0; i < n; i++) {
			struct bare_elem *e =
				(struct bare_elem *)(buf + (size_t)i * o->slot);
			e->seq = seq + i;
			e->from = 1;
			e->type = 1;
		}
		while (done < n) {
			unsigned k = rte_ring_enqueue_burst_elem(
				out, buf + (size_t)done * o->slot, o->slot,
				n - done, NULL);
			if (k) {
				done += k;
				perf_progress(&st);
				continue;
			}
			if (perf_stalled(&st))
				child_fail("producer", "forwarder stopped taking");
			perf_backoff(&idle, PERF_SPIN_SHARED);
		}
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
		child_fail("forwarder", "out of memory");
	child_sync(b);
	while (fwd < o->count) {
		unsigned n = rte_ring_dequeue_burst_elem(in, buf, o->slot,
							 o->burst, NULL);
		unsigned done = 0;

		if (n == 0) {
			if (perf_stalled(&st))
				child_fail("forwarder", "producer stopped");
			perf_backoff(&idle, PERF_SPIN_ALONE);
			continue;
		}
		perf_progress(&st);
		while (done < n) {
			unsigned k = rte_ring_enqueue_burst_elem(
				out, buf + (size_t)done * o->slot, o->slot,
				n - done, NULL);
			if (k) {
				done += k;
				perf_progress(&st);
				continue;
			}
			if (perf_stalled(&st))
				child_fail("forwarder", "consumer stopped");
			perf_backoff(&idle, PERF_SPIN_ALONE);
		}
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
		child_fail("consumer", "out of memory");
	child_sync(b);
	while (got < o->count) {
		unsigned n = rte_ring_dequeue_burst_elem(in, buf, o->slot,
							 o->burst, NULL);
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

static void pinger(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *out = m->ring[RING_PING], *in = m->ring[RING_PONG];
	unsigned char *tx = calloc(1, o->slot), *rx = calloc(1, o->slot);
	unsigned total = PING_WARMUP + o->rtt;
	uint64_t *ticks = calloc(o->rtt ? o->rtt : 1, sizeof(*ticks));
	struct perf_stall st = { 0 };
	struct perf_result r;

	if (!tx || !rx || !ticks)
		child_fail("pinger", "out of memory");
	perf_tsc_per_us(); /* calibrate before the clock starts */
	child_sync(b);
	for (unsigned i = 0; i < total; i++) {
		struct bare_elem *e = (struct bare_elem *)tx;
		uint64_t t0 = rte_rdtsc(), t1;

		e->seq = i;
		while (rte_ring_enqueue_elem(out, tx, o->slot) != 0)
			rte_pause();
		while (rte_ring_dequeue_elem(in, rx, o->slot) != 0) {
			if (perf_stalled(&st))
				child_fail("pinger", "ponger stopped");
			rte_pause();
		}
		t1 = rte_rdtsc();
		perf_progress(&st);
		if (((struct bare_elem *)rx)->seq != i)
			child_fail("pinger", "answer out of order");
		if (i >= PING_WARMUP)
			ticks[i - PING_WARMUP] = t1 - t0;
	}
	((struct bare_elem *)tx)->seq = PING_STOP;
	while (rte_ring_enqueue_elem(out, tx, o->slot) != 0)
		rte_pause();
	perf_latency_summary(ticks, o->rtt, &r);
	m->ctl->rtt_ticks_p50 = ticks[o->rtt / 2];
	m->ctl->rtt_ticks_p99 = ticks[(uint64_t)o->rtt * 99 / 100];
	m->ctl->rtt_ticks_p999 = ticks[(uint64_t)o->rtt * 999 / 1000];
	m->ctl->rtt_ticks_max = ticks[o->rtt ? o->rtt - 1 : 0];
	m->ctl->rtt_done = o->rtt;
	_exit(PERF_EXIT_OK);
}

static void ponger(struct bare *b, struct bare_map *m)
{
	const struct perf_opts *o = b->o;
	struct rte_ring *in = m->ring[RING_PING], *out = m->ring[RING_PONG];
	unsigned char *buf = calloc(1, o->slot);
	struct perf_stall st = { 0 };

	if (!buf)
		child_fail("ponger", "out of memory");
	child_sync(b);
	for (;;) {
		if (rte_ring_dequeue_elem(in, buf, o->slot) != 0) {
			if (perf_stalled(&st))
				child_fail("ponger", "pinger stopped");
			rte_pause();
			continue;
		}
		perf_progress(&st);
		if (((struct bare_elem *)buf)->seq == PING_STOP)
			break;
		while (rte_ring_enqueue_elem(out, buf, o->slot) != 0)
			rte_pause();
	}
	_exit(PERF_EXIT_OK);
}

/* Fork one child per role, pinned; release them together; wait for all. */
static int run_children(struct bare *b,
			void (*const *roles)(struct bare *, struct bare_map *),
			const int *cpus, const char *const *names, int n)
{
	pid_t pids[4];
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
				child_fail(names[i], "mmap failed");
			roles[i](b, &m);
			_exit(PERF_EXIT_FAIL); /* roles never return */
		}
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
	for (int i = 0; i < started; i++) {
		int status;

		while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "shmr-perf bare: %s failed (%s %d)\n",
				names[i],
				WIFEXITED(status) ? "exit" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status)
						  : WTERMSIG(status));
			failed = 1;
		}
	}
	return failed ? -1 : 0;
}

int perf_bare_run(const struct perf_opts *o, struct perf_result *r)
{
	struct bare b = { .o = o, .memfd = -1 };
	struct bare_map m;
	ssize_t rb;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	rb = rte_ring_get_memsize_elem(o->slot, o->lane);
	if (rb < 0) {
		fprintf(stderr, "shmr-perf bare: ring of %u x %u B: %s\n",
			o->lane, o->slot, strerror((int)-rb));
		return -1;
	}
	b.ring_bytes = ((size_t)rb + 4095) & ~(size_t)4095;
	b.size = CTL_BYTES + RING_COUNT * b.ring_bytes;
	b.memfd = memfd_create("shmr-perf-bare", MFD_CLOEXEC);
	if (b.memfd < 0 || ftruncate(b.memfd, (off_t)b.size) < 0) {
		perror("shmr-perf bare: memfd");
		goto out;
	}
	if (bare_map(&b, &m) < 0) {
		perror("shmr-perf bare: mmap");
		goto out;
	}
	for (int i = 0; i < RING_COUNT; i++) {
		char name[16];

		snprintf(name, sizeof(name), "bare%d", i);
		if (rte_ring_init(m.ring[i], name, o->lane,
				  RING_F_SP_ENQ | RING_F_SC_DEQ) < 0) {
			fprintf(stderr, "shmr-perf bare: rte_ring_init failed\n");
			goto unmap;
		}
	}

	{
		void (*const roles[])(struct bare *, struct bare_map *) = {
			forwarder, consumer, producer
		};
		const int cpus[] = { o->cpu_hub, o->cpu_sink, o->cpu_client };
		const char *const names[] = { "forwarder", "consumer",
					      "producer" };
		if (run_children(&b, roles, cpus, names, 3) < 0)
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
		void (*const roles[])(struct bare *, struct bare_map *) = {
			ponger, pinger
		};
		const int cpus[] = { o->cpu_hub, o->cpu_client };
		const char *const names[] = { "ponger", "pinger" };
		double per_us = perf_tsc_per_us();

		if (run_children(&b, roles, cpus, names, 2) < 0)
			goto unmap;
		r->rtt = m.ctl->rtt_done;
		r->p50_us = (double)m.ctl->rtt_ticks_p50 / per_us;
		r->p99_us = (double)m.ctl->rtt_ticks_p99 / per_us;
		r->p999_us = (double)m.ctl->rtt_ticks_p999 / per_us;
		r->max_us = (double)m.ctl->rtt_ticks_max / per_us;
	}
	rc = 0;
unmap:
	munmap(m.base, b.size);
out:
	if (b.memfd >= 0)
		close(b.memfd);
	return rc;
}
