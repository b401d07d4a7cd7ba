/*
 * shmr-scribble-worker: a route worker that attacks the appliance from the
 * inside, for tests/stress/test_scribble.c (issue 11's trust boundary).
 *
 *   --scribble FILE  the scribbler.  A call of type SCRIB_ROUND whose
 *                    payload is a struct scrib_round asks for one round:
 *                    it answers the call at once (the reply leaves its
 *                    outbound lane before anything is written), then, with
 *                    a PRNG seeded from the round's seed, writes random
 *                    values into what it can write (see scribble.h's
 *                    modes), writes a struct scrib_report to FILE (whole,
 *                    by rename) and then does what the seed picked: stays
 *                    (receiving, sending to --router, and writing up to
 *                    three more times at random moments), _exit()s or
 *                    SIGKILLs itself.  A round at or below the last one
 *                    FILE reports is only answered, not done again (its
 *                    answer was lost, or the call that killed a worker
 *                    was redelivered to the next).
 *   --router NAME    where a staying scribbler sends (type SCRIB_ROUND,
 *                    as sends, which it receives back and counts)
 *   --sequence       the bystander: sends must arrive with keys 0, 1, 2,
 *                    ... in order; any call is answered with struct
 *                    scrib_seq_stats
 *
 * Where its writes go: the worker finds the domain in its own address
 * space (/proc/self/maps: the memfd mapping whose first word is the
 * domain's magic is its base; the parts are mapped back to back from
 * there) and writes through libshmr's own mappings, so with exactly the
 * rights they give a worker: the lanes part read-write, the daemons'
 * part read-only.
 * Every write is guarded: a SIGSEGV (or SIGBUS) during it is caught with
 * sigsetjmp and counted as faulted, and the worker goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/stats.h>
#include <shmr/shmr.h>

#include "scribble.h"

#define PROG "shmr-scribble-worker"

/* ---- the domain as this process maps it ------------------------------ */

struct map {
	uintptr_t start, end;
	int writable;
};

static struct map g_maps[64];
static unsigned g_nmaps;
static uintptr_t g_base;             /* where the domain header is */
static struct shmr_domain_hdr g_geo; /* the header as read at start */

/* Find the domain's mappings (every memfd mapping; the header's is the
 * one whose first word is the magic); 0, or -1 when there is none. */
static int find_domain(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (!f)
		return -1;
	while (g_nmaps < 64 && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off, inode;
		char perms[8], path[256] = "";
		unsigned maj, min;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %255[^\n]", &s, &e,
			   perms, &off, &maj, &min, &inode, path) < 7 ||
		    !strstr(path, "memfd:") || perms[0] != 'r')
			continue;
		g_maps[g_nmaps++] = (struct map){ s, e, perms[1] == 'w' };
		if (!g_base && off == 0 &&
		    e - s >= sizeof(struct shmr_domain_hdr) &&
		    ((const struct shmr_domain_hdr *)s)->magic == SHMR_MAGIC)
			g_base = s;
	}
	fclose(f);
	if (!g_base)
		return -1;
	memcpy(&g_geo, (const void *)g_base, sizeof(g_geo));
	return 0;
}

/* The address of domain offset @p off (every process maps the domain's
 * parts back to back from its base); NULL when nothing maps it. */
static void *at(uint64_t off)
{
	uintptr_t p = g_base + off;

	for (unsigned i = 0; i < g_nmaps; i++)
		if (p >= g_maps[i].start && p < g_maps[i].end)
			return (void *)p;
	return NULL;
}

static uint64_t lane_off(uint32_t slot, uint32_t idx)
{
	return g_geo.lanes_off +
	       ((uint64_t)slot * SHMR_LANES_PER_EP(g_geo.nlcores) + idx) *
		       g_geo.lane_stride;
}

/* ---- guarded writes --------------------------------------------------- */

static sigjmp_buf g_jb;
/* 1 while gwrite() stores: a fault then is ours.  Its partner is the
 * fault handler, on this same thread: lock-free, so async-signal-safe, and
 * seq_cst, so neither side's stores move across it. */
static _Atomic int g_armed;

static void on_fault(int sig)
{
	if (atomic_load(&g_armed)) {
		atomic_store(&g_armed, 0);
		siglongjmp(g_jb, 1);
	}
	/* Not ours (the worker broke its own lanes and libshmr read them):
	 * die of it, as the worker would have. */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Write @p n bytes of @p v at domain offset @p off.  1 landed, 0 faulted
 * (or not mapped at all). */
static int gwrite(uint64_t off, const void *v, size_t n)
{
	/* Each byte a relaxed atomic store, so that the compiler emits every
	 * one (the test is whether a store faults).  No partner: nothing
	 * here reads what it wrote. */
	_Atomic(unsigned char) *p = at(off);
	const unsigned char *src = v;

	if (!p)
		return 0;
	if (sigsetjmp(g_jb, 1))
		return 0;
	atomic_store(&g_armed, 1);
	for (size_t i = 0; i < n; i++)
		atomic_store_explicit(&p[i], src[i], memory_order_relaxed);
	atomic_store(&g_armed, 0);
	return 1;
}

/* Write back the byte that is at @p off (changes nothing where it lands). */
static int gwrite_same(uint64_t off)
{
	/* A relaxed atomic load: no partner, the byte only goes back. */
	_Atomic(unsigned char) *p = at(off);
	unsigned char b;

	if (!p)
		return 0;
	b = atomic_load_explicit(p, memory_order_relaxed);
	return gwrite(off, &b, 1);
}

/* ---- the PRNG (splitmix64: the round's seed replays it) -------------- */

static uint64_t g_rng;

static uint64_t rnd(void)
{
	uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* A 32-bit value that hurts: garbage, 0, all ones, or near what is there. */
static uint32_t nasty32(uint32_t now)
{
	switch (below(6)) {
	case 0:
		return (uint32_t)rnd();
	case 1:
		return 0;
	case 2:
		return 0xffffffffu;
	case 3:
		return now + 1 + below(4);
	case 4:
		return now - 1 - below(4);
	default:
		return now + g_geo.lane_size - 1 + below(3);
	}
}

/* ---- one round -------------------------------------------------------- */

struct worker {
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid self, router;
	int have_router;
	const char *state;
	uint32_t last_round;
	struct scrib_report rep;
	uint64_t got; /* sends received (a staying scribbler's own) */
	unsigned stay_writes; /* writes left to do while staying */
};

static void landed(struct worker *w, int ok)
{
	if (ok)
		w->rep.landed++;
	else
		w->rep.faulted++;
}

/* One random write into the ring header of one of our lanes. */
static void hit_ring(struct worker *w)
{
	static const size_t fields[] = {
		offsetof(struct rte_ring, prod.head),
		offsetof(struct rte_ring, prod.tail),
		offsetof(struct rte_ring, cons.head),
		offsetof(struct rte_ring, cons.tail),
		offsetof(struct rte_ring, mask),
		offsetof(struct rte_ring, size),
		offsetof(struct rte_ring, capacity),
		offsetof(struct rte_ring, flags),
		offsetof(struct rte_ring, prod.sync_type),
		offsetof(struct rte_ring, cons.sync_type),
	};
	uint32_t idx = below(SHMR_LANES_PER_EP(g_geo.nlcores));
	uint64_t base = lane_off(w->self.slot, idx);
	const uint32_t *now;
	uint32_t v;
	uint64_t off;

	if (below(4) == 0) {
		/* Any byte of the header, the name and padding included. */
		unsigned char b = (unsigned char)rnd();

		landed(w, gwrite(base + below(sizeof(struct rte_ring)), &b, 1));
		return;
	}
	off = base + fields[below(sizeof(fields) / sizeof(fields[0]))];
	now = at(off);
	v = nasty32(now ? *now : 0);
	landed(w, gwrite(off, &v, sizeof(v)));
}

/* One random field of a slot near the indices of one of our lanes. */
static void hit_slot(struct worker *w)
{
	static const struct {
		size_t off, size;
	} f[] = {
		{ offsetof(struct shmr_msg, kind), 1 },
		{ offsetof(struct shmr_msg, flags), 1 },
		{ offsetof(struct shmr_msg, priority), 1 },
		{ offsetof(struct shmr_msg, hops), 1 },
		{ offsetof(struct shmr_msg, type), 4 },
		{ offsetof(struct shmr_msg, from.slot), 4 },
		{ offsetof(struct shmr_msg, from.gen), 4 },
		{ offsetof(struct shmr_msg, to.slot), 4 },
		{ offsetof(struct shmr_msg, to.gen), 4 },
		{ offsetof(struct shmr_msg, len), 4 },
		{ offsetof(struct shmr_msg, status), 4 },
	};
	uint32_t idx = below(SHMR_LANES_PER_EP(g_geo.nlcores));
	uint64_t base = lane_off(w->self.slot, idx);
	const struct rte_ring *r = at(base);
	/* Our private geometry places the slot, never the ring's words. */
	uint32_t mask = g_geo.lane_size - 1, i;
	unsigned k = below(sizeof(f) / sizeof(f[0]));
	uint64_t v = rnd();

	i = r ? (idx < g_geo.nlcores ? r->cons.tail : r->prod.tail) : 0;
	i = (i + below(4)) & mask;
	landed(w, gwrite(base + sizeof(struct rte_ring) +
				 (uint64_t)i * g_geo.slot_size + f[k].off,
			 &v, f[k].size));
}

/* A slot a correct libshmr never builds, put into our own outbound lane
 * (normal or high) as a producer would: only while the lane's geometry
 * is still ours (the enqueue uses the ring's own mask). */
static void raw_slot(struct worker *w)
{
	uint64_t buf[SHMR_SLOT_MAX / 8];
	struct shmr_msg *m = (struct shmr_msg *)buf;
	uint32_t idx = SHMR_LANE_OUT(g_geo.nlcores) + below(2);
	struct rte_ring *r = at(lane_off(w->self.slot, idx));

	if (!r || !shmr_lane_valid_sp(r, g_geo.lane_size))
		return;
	for (unsigned i = 0; i < g_geo.slot_size / 8; i++)
		buf[i] = rnd();
	/* Half of them from ourselves, so they get past the sender check
	 * and meet the others. */
	if (below(2)) {
		m->from = w->self;
		m->kind = (uint8_t)(1 + below(4));
		m->priority = (uint8_t)below(4);
		if (below(2))
			m->len = below(g_geo.slot_size * 2);
		if (below(2))
			m->to.slot = below(g_geo.max_endpoints + 4);
		m->flags = (uint8_t)rnd();
	}
	if (rte_ring_enqueue_burst_elem(r, buf, g_geo.slot_size, 1, NULL))
		w->rep.raw_slots++;
}

/* Our endpoint's bell and busy line, an lcore's bell, or half a word of
 * an lcore's work bits (a summary or a bit word: set for nothing, or
 * cleared under the bystander, whose sends the lcore's sweep finds). */
static void hit_bell(struct worker *w)
{
	uint64_t peer = g_geo.eppeer_off +
			(uint64_t)w->self.slot * sizeof(struct shmr_ep_peer);
	uint32_t v = nasty32(0);
	uint64_t off;
	uint32_t nw = shmr_work_nwords(g_geo.max_endpoints, g_geo.nlcores);

	switch (below(4)) {
	case 3:
		off = g_geo.work_off +
		      below(g_geo.nlcores) *
			      shmr_work_stride(g_geo.max_endpoints,
					       g_geo.nlcores) +
		      (uint64_t)below(2 * (shmr_work_nsum(nw) + nw)) * 4;
		break;
	case 0:
		off = peer + offsetof(struct shmr_ep_peer, bell) +
		      (below(2) ? offsetof(struct shmr_bell, sleepers) : 0);
		break;
	case 1:
		off = peer + offsetof(struct shmr_ep_peer, busy);
		break;
	default:
		off = g_geo.bells_off +
		      below(g_geo.nlcores) * sizeof(struct shmr_bell) +
		      (below(2) ? offsetof(struct shmr_bell, sleepers) : 0);
		break;
	}
	landed(w, gwrite(off, &v, sizeof(v)));
}

/*
 * A daemons-only word: the header's geometry, our own and another
 * endpoint's control-plane line and dataplane counters, the spec (its
 * sequence word, routers, registry, type maps), an lcore's counters (its own and
 * by endpoint), the control lane.  Not the bells nor an endpoint's busy line (in the lanes part:
 * peers ring and sleep on the bells, the busy line is its owner's).
 * Written with the value it has: where such a write lands, nothing changes.
 */
static void hit_readonly(struct worker *w, uint32_t which)
{
	uint64_t ep = g_geo.ep_off +
		      (uint64_t)w->self.slot * sizeof(struct shmr_ep_shared);
	uint64_t other = g_geo.ep_off +
			 (uint64_t)below(g_geo.max_endpoints) *
				 sizeof(struct shmr_ep_shared);
	uint64_t routers = offsetof(struct shmr_spec, routers);
	/* Where each region starts, how many bytes of it, what it is. */
	const struct {
		uint64_t off, span;
		const char *what;
	} region[] = {
		{ 0, offsetof(struct shmr_domain_hdr, control_pid),
		  "domain header geometry" },
		{ ep, offsetof(struct shmr_ep_shared, quarantined),
		  "own endpoint's control line" },
		{ ep + offsetof(struct shmr_ep_shared, quarantined), 16,
		  "own endpoint's dataplane counters" },
		{ other, sizeof(struct shmr_ep_shared),
		  "another endpoint's lines" },
		{ g_geo.spec_off, 8, "spec sequence word" },
		{ g_geo.spec_off + offsetof(struct shmr_spec, version), 8,
		  "spec version" },
		{ g_geo.spec_off + routers, sizeof(struct shmr_spec_router),
		  "spec routers" },
		{ g_geo.active_off,
		  (uint64_t)g_geo.max_endpoints * sizeof(uint32_t),
		  "spec's active list" },
		{ g_geo.names_off,
		  (uint64_t)g_geo.max_names * sizeof(struct shmr_spec_reg),
		  "registry" },
		{ g_geo.types_off,
		  shmr_spec_types_size(g_geo.max_types, g_geo.max_routers),
		  "routers' type maps" },
		{ g_geo.routes_off,
		  shmr_spec_routes_size(g_geo.max_routes, g_geo.max_routers),
		  "routers' routes" },
		{ g_geo.counters_off,
		  g_geo.nlcores * sizeof(struct shmr_lcore_stats),
		  "lcore counters" },
		{ g_geo.ctl_off, sizeof(struct rte_ring), "control lane" },
		{ g_geo.epctr_off,
		  g_geo.nlcores * shmr_ep_ctr_stride(g_geo.max_endpoints),
		  "lcores' counters by endpoint" },
	};
	unsigned k = which % (sizeof(region) / sizeof(region[0]));
	uint64_t off = region[k].off + rnd() % region[k].span;
	const char *what = region[k].what;
	int ok;

	w->rep.ro_tries++;
	ok = gwrite_same(off);
	if (ok) {
		if (!w->rep.ro_landed)
			snprintf(w->rep.first_ro_landed,
				 sizeof(w->rep.first_ro_landed),
				 "%s (+%" PRIu64 ")", what, off);
		w->rep.ro_landed++;
	} else {
		w->rep.ro_faulted++;
	}
}

static void write_report(struct worker *w)
{
	char tmp[4096];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", w->state);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, &w->rep, sizeof(w->rep)) !=
			      (ssize_t)sizeof(w->rep) ||
	    close(fd) < 0 || rename(tmp, w->state) < 0) {
		perror(w->state);
		_exit(1);
	}
}

static void read_last_round(struct worker *w)
{
	struct scrib_report r;
	int fd = open(w->state, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (read(fd, &r, sizeof(r)) == (ssize_t)sizeof(r) &&
	    r.magic == SCRIB_MAGIC)
		w->last_round = r.round;
	close(fd);
}

/* One random write into what the worker may write. */
static void one_write(struct worker *w)
{
	switch (below(8)) {
	case 0:
	case 1:
	case 2:
		hit_ring(w);
		break;
	case 3:
	case 4:
		hit_slot(w);
		break;
	case 5:
	case 6:
		raw_slot(w);
		break;
	default:
		hit_bell(w);
		break;
	}
}

static void do_round(struct worker *w, const struct scrib_round *rq)
{
	memset(&w->rep, 0, sizeof(w->rep));
	w->rep.magic = SCRIB_MAGIC;
	w->rep.round = rq->round;
	w->rep.mode = rq->mode;
	g_rng = rq->seed;
	if (rq->mode == SCRIB_MODE_READONLY) {
		for (uint32_t i = 0; i < 10 * 8; i++)
			hit_readonly(w, i);
		w->rep.action = SCRIB_STAY;
	} else {
		unsigned n = 1 + below(8);

		for (unsigned i = 0; i < n; i++)
			one_write(w);
		hit_readonly(w, below(10));
		w->rep.action = below(3);
		/* If it stays: this many more writes while it sends and
		 * receives, at random moments (the daemons are busy with
		 * its lanes then). */
		w->stay_writes = below(4);
	}
	w->last_round = rq->round;
	write_report(w);
	if (w->rep.action == SCRIB_EXIT)
		_exit(7);
	if (w->rep.action == SCRIB_KILL)
		raise(SIGKILL);
}

/* Until our outbound lanes are empty (the reply we just sent was taken),
 * at most a second: a lane a previous round broke may never drain. */
static void wait_drained(struct worker *w)
{
	for (int i = 0; i < 1000; i++) {
		int empty = 1;

		for (uint32_t k = 0; k < 2; k++) {
			const struct rte_ring *r = at(lane_off(
				w->self.slot, SHMR_LANE_OUT(g_geo.nlcores) + k));

			if (r && r->prod.tail != r->cons.tail)
				empty = 0;
		}
		if (empty)
			return;
		usleep(1000);
	}
}

static void answer(struct shmr_endpoint *ep, const struct shmr_msg *m,
		   const void *data, size_t n)
{
	int rc;

	for (int i = 0; i < 1000; i++) {
		rc = shmr_reply(ep, m, 0, data, n);
		if (rc != -EAGAIN)
			return;
		usleep(1000);
	}
}

static int scribbler(struct worker *w)
{
	int staying = 0;
	uint64_t key = 0;

	read_last_round(w);
	for (;;) {
		const struct shmr_msg *msgs[32];
		int n;

		if (shmr_stopping())
			return 0;
		n = shmr_recv_burst(w->ep, msgs, 32, staying ? 10 : 1000);
		if (n == -EINTR || n == -SHMR_E_TIMEOUT)
			n = 0;
		if (n < 0)
			return 1;
		for (int i = 0; i < n; i++) {
			const struct shmr_msg *m = msgs[i];
			struct scrib_round rq;

			if (m->kind != SHMR_KIND_CALL) {
				w->got++;
				continue;
			}
			if (m->type != 1 || m->len != sizeof(rq)) {
				answer(w->ep, m, &w->got, sizeof(w->got));
				continue;
			}
			memcpy(&rq, m->data, sizeof(rq));
			if (rq.magic != SCRIB_MAGIC)
				continue;
			answer(w->ep, m, &rq.round, sizeof(rq.round));
			if (rq.round <= w->last_round)
				continue; /* done, its answer lost: again */
			wait_drained(w);
			do_round(w, &rq);
			staying = 1;
		}
		/* A staying scribbler keeps sending through its router, and
		 * writing now and then. */
		for (int i = 0; staying && w->have_router && i < 4; i++)
			(void)shmr_send(w->ep, w->router, 1, key++, &key,
					sizeof(key));
		if (staying && w->stay_writes && below(8) == 0) {
			w->stay_writes--;
			one_write(w);
		}
	}
}

static int sequence(struct worker *w)
{
	struct scrib_seq_stats st = { 0 };

	for (;;) {
		const struct shmr_msg *msgs[32];
		int n;

		if (shmr_stopping())
			return 0;
		n = shmr_recv_burst(w->ep, msgs, 32, 1000);
		if (n == -EINTR || n == -SHMR_E_TIMEOUT)
			continue;
		if (n < 0)
			return 1;
		for (int i = 0; i < n; i++) {
			const struct shmr_msg *m = msgs[i];

			if (m->kind == SHMR_KIND_CALL) {
				st.calls++;
				answer(w->ep, m, &st, sizeof(st));
				continue;
			}
			st.count++;
			if (m->key != st.next)
				st.out_of_order++;
			st.next = m->key + 1;
		}
	}
}

int main(int argc, char **argv)
{
	struct worker w = { 0 };
	struct sigaction sa = { 0 };
	const char *router = NULL;
	int seq = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--scribble") == 0 && i + 1 < argc)
			w.state = argv[++i];
		else if (strcmp(argv[i], "--router") == 0 && i + 1 < argc)
			router = argv[++i];
		else if (strcmp(argv[i], "--sequence") == 0)
			seq = 1;
		else {
			fprintf(stderr, PROG ": bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!seq && !w.state) {
		fprintf(stderr, PROG ": --scribble FILE or --sequence\n");
		return 2;
	}
	rc = shmr_attach_env(&w.d, &w.ep);
	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", shmr_strerror(rc));
		return 1;
	}
	w.self = shmr_endpoint_pid(w.ep);
	if (seq) {
		rc = sequence(&w);
	} else if (find_domain() < 0) {
		fprintf(stderr, PROG ": the domain is not mapped here\n");
		rc = 1;
	} else {
		if (router && shmr_lookup(w.d, router, &w.router) == 0)
			w.have_router = 1;
		sa.sa_handler = on_fault;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		rc = scribbler(&w);
	}
	shmr_endpoint_close(w.ep);
	shmr_detach(w.d);
	return rc;
}
