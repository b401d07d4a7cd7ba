/*
 * Domain layout, lanes, bells and the spec seqcount.
 *
 * Lane repair rests on how DPDK's single-thread (ST) sync type moves a
 * ring's head/tail pair: a producer moves prod.head, copies, then stores
 * prod.tail with release; a peek consumer moves cons.head at start and
 * cons.tail at finish.  Slots between cons.tail and cons.head were read but
 * not released, so the producer cannot reuse them (its free count is
 * measured from cons.tail); after the consumer is confirmed dead they can be
 * rewritten and handed back by moving cons.head to cons.tail.  Slots between
 * prod.tail and prod.head were never published, so a dead producer's
 * half-done enqueue is dropped by moving prod.head back to prod.tail.
 */
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

#define ALIGN_UP(x, a) (((x) + (a)-1) & ~((uint64_t)(a)-1))

int64_t shmr_layout_plan(const struct shmr_geometry *g,
			 struct shmr_domain_hdr *h)
{
	return shmr_layout_plan_arena(g, NULL, h);
}

int64_t shmr_layout_plan_arena(const struct shmr_geometry *g,
			       const struct shmr_arena_geo *a,
			       struct shmr_domain_hdr *h)
{
	static const struct shmr_arena_geo none;
	ssize_t ring;
	uint64_t off, nlanes;

	if (!a)
		a = &none;
	if (shmr_geometry_check(g, NULL) < 0 ||
	    shmr_arena_geo_check(a, NULL) < 0)
		return -EINVAL;
	ring = rte_ring_get_memsize_elem(g->slot_size, g->lane_size);
	if (ring < 0)
		return -EINVAL;

	memset(h, 0, sizeof(*h));
	h->magic = SHMR_MAGIC;
	h->layout_version = SHMR_LAYOUT_VERSION;
	h->slot_size = g->slot_size;
	h->lane_size = g->lane_size;
	h->nlcores = g->nlcores;
	h->max_endpoints = shmr_geometry_endpoints(g);
	h->max_names = shmr_geometry_names(g);
	h->max_types = shmr_geometry_types(g);
	h->max_routers = shmr_geometry_routers(g);
	h->max_routes = shmr_geometry_routes(g);
	h->poll_mode = g->poll_mode;
	h->spin_polls = g->spin_polls ? g->spin_polls : 2048;
	h->lane_stride = ALIGN_UP((uint64_t)ring, SHMR_CACHE_LINE);

	off = ALIGN_UP(sizeof(*h), 4096);
	h->ep_off = off;
	off = ALIGN_UP(off + (uint64_t)h->max_endpoints *
				     sizeof(struct shmr_ep_shared),
		       4096);
	h->spec_off = off;
	off = ALIGN_UP(off + shmr_spec_size(h->max_routers), 4096);
	h->active_off = off;
	off = ALIGN_UP(off + (uint64_t)h->max_endpoints * sizeof(uint32_t),
		       4096);
	h->names_off = off;
	off = ALIGN_UP(off + (uint64_t)h->max_names *
				     sizeof(struct shmr_spec_reg),
		       4096);
	h->types_off = off;
	off = ALIGN_UP(off + shmr_spec_types_size(h->max_types,
						  h->max_routers),
		       4096);
	h->routes_off = off;
	off = ALIGN_UP(off + shmr_spec_routes_size(h->max_routes,
						   h->max_routers),
		       4096);
	h->counters_off = off;
	off = ALIGN_UP(off + (uint64_t)g->nlcores *
				     sizeof(struct shmr_lcore_stats),
		       4096);
	h->epctr_off = off;
	off = ALIGN_UP(off + (uint64_t)g->nlcores *
				     shmr_ep_ctr_stride(h->max_endpoints),
		       4096);
	h->ctl_off = off;
	/* The lanes part: on a 2 MiB boundary (the domain part's memfd
	 * ends here, and either may be hugetlb). */
	off = ALIGN_UP(off + h->lane_stride, 2u << 20);
	h->peer_off = off;
	h->bells_off = off;
	off = ALIGN_UP(off + (uint64_t)g->nlcores * sizeof(struct shmr_bell),
		       4096);
	h->work_off = off;
	off = ALIGN_UP(off + (uint64_t)g->nlcores *
				     shmr_work_stride(h->max_endpoints,
						      g->nlcores),
		       4096);
	h->eppeer_off = off;
	off = ALIGN_UP(off + (uint64_t)h->max_endpoints *
				     sizeof(struct shmr_ep_peer),
		       4096);
	h->hist_off = off;
	off = ALIGN_UP(off + (uint64_t)h->max_endpoints *
				     sizeof(struct shmr_hist),
		       4096);
	h->lanes_off = off;
	nlanes = (uint64_t)h->max_endpoints * SHMR_LANES_PER_EP(g->nlcores);
	off = ALIGN_UP(off + nlanes * h->lane_stride, 2u << 20);
	/* The arena (arena.h), in the lanes part: every class's owner words,
	 * then every class's buffers, each class on a page boundary. */
	h->arena_nclasses = a->nclasses;
	h->arena_off = off;
	if (a->nclasses)
		off = ALIGN_UP(off + SHMR_ARENA_MAX_CLASSES *
					     sizeof(struct shmr_arena_stats),
			       4096);
	for (uint32_t i = 0; i < a->nclasses; i++) {
		h->arena[i].size = a->cls[i].size;
		h->arena[i].count = a->cls[i].count;
		h->arena[i].words_off = off;
		off = ALIGN_UP(off + (uint64_t)a->cls[i].count * 8u, 4096);
	}
	for (uint32_t i = 0; i < a->nclasses; i++) {
		h->arena[i].data_off = off;
		off = ALIGN_UP(off + (uint64_t)a->cls[i].count *
					     a->cls[i].size,
			       4096);
	}
	off = ALIGN_UP(off, 2u << 20);
	h->arena_size = off - h->arena_off;
	h->size = off;
	return (int64_t)off;
}

int shmr_lane_init(struct rte_ring *r, const char *name, uint32_t lane_size)
{
	/* RING_F_EXACT_SZ is not used: capacity is lane_size - 1, and the
	 * dataplane checks mask == size - 1 == capacity. */
	return rte_ring_init(r, name, lane_size, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

int shmr_layout_init(void *base, const struct shmr_geometry *g,
		     const char *name)
{
	return shmr_layout_init_arena(base, g, NULL, name);
}

int shmr_layout_init_arena(void *base, const struct shmr_geometry *g,
			   const struct shmr_arena_geo *a, const char *name)
{
	struct shmr_domain_hdr plan, *h = shmr_hdr(base);
	char rname[RTE_RING_NAMESIZE];
	int64_t size;
	int rc;

	size = shmr_layout_plan_arena(g, a, &plan);
	if (size < 0)
		return (int)size;
	if (shmr_name_copy(plan.name, name) < 0)
		return -SHMR_E_NAME;
	memcpy(h, &plan, sizeof(plan));

	rc = shmr_lane_init(shmr_ctl_lane(base), "ctl", g->lane_size);
	if (rc < 0)
		return rc;
	for (uint32_t s = 0; s < plan.max_endpoints; s++) {
		for (uint32_t i = 0; i < SHMR_LANES_PER_EP(g->nlcores); i++) {
			snprintf(rname, sizeof(rname), "ep%u.%u", s, i);
			rc = shmr_lane_init(shmr_lane_at(base, s, i), rname,
					    g->lane_size);
			if (rc < 0)
				return rc;
		}
	}
	/* R0: everything above is visible before ready (pairs with A0). */
	atomic_store_explicit(&h->ready, 1, memory_order_release);
	return 0;
}

int shmr_layout_check(const void *base, size_t map_size)
{
	const struct shmr_domain_hdr *h = base;
	struct shmr_domain_hdr plan;
	struct shmr_geometry g;
	struct shmr_arena_geo a;

	if (map_size < sizeof(*h) || h->magic != SHMR_MAGIC)
		return -SHMR_E_PROTO;
	if (h->layout_version != SHMR_LAYOUT_VERSION)
		return -SHMR_E_VERSION;
	/* A0: pairs with R0. */
	if (atomic_load_explicit(&((struct shmr_domain_hdr *)h)->ready,
				 memory_order_acquire) != 1)
		return -SHMR_E_PROTO;
	g = (struct shmr_geometry){ h->slot_size, h->lane_size, h->nlcores,
				    h->poll_mode, h->spin_polls,
				    h->max_endpoints, h->max_names,
				    h->max_types, h->max_routers,
				    h->max_routes };
	/* A max_endpoints, max_names, max_types, max_routers or max_routes
	 * of 0 would plan the default: refuse it. */
	if (h->max_endpoints == 0 || h->max_names == 0 || h->max_types == 0 ||
	    h->max_routers == 0 || h->max_routes == 0)
		return -SHMR_E_PROTO;
	shmr_arena_geo_from(&a, h);
	if (shmr_layout_plan_arena(&g, &a, &plan) != (int64_t)h->size ||
	    plan.arena_off != h->arena_off ||
	    plan.arena_size != h->arena_size ||
	    memcmp(plan.arena, h->arena, sizeof(plan.arena)) != 0 ||
	    h->size > map_size || plan.lanes_off != h->lanes_off ||
	    plan.lane_stride != h->lane_stride || plan.ep_off != h->ep_off ||
	    plan.spec_off != h->spec_off ||
	    plan.counters_off != h->counters_off || plan.ctl_off != h->ctl_off ||
	    plan.peer_off != h->peer_off || plan.bells_off != h->bells_off ||
	    plan.eppeer_off != h->eppeer_off || plan.work_off != h->work_off ||
	    plan.hist_off != h->hist_off || plan.epctr_off != h->epctr_off ||
	    plan.names_off != h->names_off || plan.types_off != h->types_off ||
	    plan.routes_off != h->routes_off ||
	    plan.active_off != h->active_off)
		return -SHMR_E_PROTO;
	return 0;
}

#define MAP_ALIGN (2ull << 20)

int shmr_domain_map(int domain_fd, int lanes_fd, uint64_t peer_off,
		    uint64_t size, int writable, void **base)
{
	struct stat a, b;
	uint64_t span = size + MAP_ALIGN;
	char *r, *p;

	*base = NULL;
	if (peer_off == 0 || peer_off >= size || peer_off % MAP_ALIGN ||
	    size % MAP_ALIGN || size > SIZE_MAX - MAP_ALIGN)
		return -EINVAL;
	if (fstat(domain_fd, &a) < 0 || fstat(lanes_fd, &b) < 0)
		return -errno;
	if ((uint64_t)a.st_size < peer_off ||
	    (uint64_t)b.st_size < size - peer_off)
		return -EINVAL;
	/* Reserve the span, then map both parts over it at an aligned
	 * address (MAP_FIXED replaces the reservation, never anything
	 * else: it is ours). */
	r = mmap(NULL, (size_t)span, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return -errno;
	p = (char *)(((uintptr_t)r + MAP_ALIGN - 1) & ~(uintptr_t)(MAP_ALIGN - 1));
	if (mmap(p, (size_t)peer_off, PROT_READ | (writable ? PROT_WRITE : 0),
		 MAP_SHARED | MAP_FIXED, domain_fd, 0) == MAP_FAILED ||
	    mmap(p + peer_off, (size_t)(size - peer_off),
		 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, lanes_fd,
		 0) == MAP_FAILED) {
		int err = errno;

		munmap(r, (size_t)span);
		return -err;
	}
	/* The slack before and after the aligned span. */
	if (p > r)
		munmap(r, (size_t)(p - r));
	if (p + size < r + span)
		munmap(p + size, (size_t)(r + span - (p + size)));
	*base = p;
	return 0;
}

void shmr_domain_unmap(void *base, uint64_t size)
{
	if (base)
		munmap(base, (size_t)size);
}

/* The lane checks (see domain.h): valid_sc/_sp, then repair. */
int shmr_lane_valid_sc(const struct rte_ring *r, uint32_t lane_size)
{
	uint32_t ch, ct, pt;

	if (!shmr_lane_geometry_valid(r, lane_size))
		return 0;
	/* Our own side: written only by this thread. */
	ch = __atomic_load_n(&r->cons.head, __ATOMIC_RELAXED);
	ct = __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED);
	/* The producer's tail moves only forward and never more than a
	 * capacity past our tail, which is stable while we read.  Acquire:
	 * pairs with the producer's release store of prod.tail. */
	pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	return ch == ct && pt - ct <= lane_size - 1;
}

int shmr_lane_valid_sp(const struct rte_ring *r, uint32_t lane_size)
{
	uint32_t ph, pt, ct;

	if (!shmr_lane_geometry_valid(r, lane_size))
		return 0;
	ph = __atomic_load_n(&r->prod.head, __ATOMIC_RELAXED);
	pt = __atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED);
	/* The consumer's tail only follows ours.  Acquire: pairs with the
	 * consumer's release store of cons.tail (dequeue finish). */
	ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	return ph == pt && pt - ct <= lane_size - 1;
}

unsigned shmr_lane_repair_consumer(struct rte_ring *r, uint32_t slot_size,
				   uint32_t lane_size)
{
	uint32_t head, tail, mask = lane_size - 1;
	unsigned n;
	unsigned char *slots = (unsigned char *)(r + 1);

	if (!shmr_lane_geometry_valid(r, lane_size))
		return 0;
	head = r->cons.head;
	tail = r->cons.tail;
	n = head - tail;
	if (n == 0)
		return 0;
	if (n > mask) {
		/* Not a burst: indices a peer wrote.  Nothing to flag. */
		r->cons.head = tail;
		return 0;
	}
	for (uint32_t i = tail; i != head; i++) {
		struct shmr_msg *m =
			(struct shmr_msg *)(slots +
					    (uint64_t)(i & mask) * slot_size);
		m->flags |= SHMR_F_REDELIVERED;
	}
	/* The flags must be visible before the next consumer can take the
	 * slots: it reads them after loading cons.head, which it wrote itself
	 * only after we are done (it attaches after this returns, and the
	 * attach handshake is a syscall round trip that orders it). */
	atomic_thread_fence(memory_order_release);
	r->cons.head = tail;
	return n;
}

int shmr_lane_repair_producer(struct rte_ring *r, uint32_t lane_size)
{
	uint32_t head, tail;

	if (!shmr_lane_geometry_valid(r, lane_size))
		return 0;
	head = r->prod.head;
	tail = r->prod.tail;
	if (head == tail)
		return 0;
	r->prod.head = tail;
	return 1;
}

int shmr_lane_sound_for_repair(const struct rte_ring *r, uint32_t lane_size,
			       int dead_consumer)
{
	uint32_t cap = lane_size - 1;
	/* Acquire on the live side's tail: as in the lane checks. */
	uint32_t pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	uint32_t ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);

	if (!shmr_lane_geometry_valid(r, lane_size) || pt - ct > cap)
		return 0;
	if (dead_consumer)
		return r->prod.head - pt <= cap;
	return r->cons.head - ct <= cap;
}

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)uaddr, op, val, ts, NULL, 0);
}

void shmr_bell_ring_fenced(struct shmr_bell *b)
{
	if (atomic_load_explicit(&b->sleepers, memory_order_relaxed) == 0)
		return;
	atomic_fetch_add_explicit(&b->seq, 1, memory_order_release);
	futex(&b->seq, FUTEX_WAKE, INT_MAX, NULL);
}

void shmr_bell_ring(struct shmr_bell *b)
{
	/* B2: pairs with B1 in shmr_bell_prepare(). */
	atomic_thread_fence(memory_order_seq_cst);
	shmr_bell_ring_fenced(b);
}

uint32_t shmr_bell_prepare(struct shmr_bell *b)
{
	/* B1: seq_cst RMW, pairs with the producer's fence B2. */
	atomic_fetch_add(&b->sleepers, 1);
	return atomic_load_explicit(&b->seq, memory_order_acquire);
}

void shmr_bell_cancel(struct shmr_bell *b)
{
	atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
}

int shmr_bell_sleep(struct shmr_bell *b, uint32_t seen, int timeout_ms)
{
	struct timespec ts, *tsp = NULL;
	long rc;
	int err = 0;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	rc = futex(&b->seq, FUTEX_WAIT, seen, tsp);
	if (rc < 0 && errno == EINTR)
		err = -EINTR;
	shmr_bell_cancel(b);
	return err;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t shmr_spec_deadline(void)
{
	return mono_ns() + (uint64_t)SHMR_SPEC_WAIT_MS * 1000000u;
}

int shmr_spec_read_begin(const struct shmr_spec *s, uint64_t deadline_ns,
			 uint64_t *seq)
{
	/* The clock is read at every begin, not only while seq is odd: a
	 * peer that keeps changing an even seq makes every retry fail, and
	 * that must end at the deadline too. */
	for (unsigned spins = 0;; spins++) {
		/* S3: pairs with S2. */
		uint64_t v = atomic_load_explicit(
			&((struct shmr_spec *)s)->seq, memory_order_acquire);

		if (mono_ns() > deadline_ns)
			return -SHMR_E_TIMEOUT;
		if (!(v & 1)) {
			*seq = v;
			return 0;
		}
		if (spins >= 64)
			sched_yield();
	}
}

int shmr_spec_read_retry(const struct shmr_spec *s, uint64_t seq)
{
	/* S4: pairs with S1. */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&((struct shmr_spec *)s)->seq,
				    memory_order_relaxed) != seq;
}

void shmr_spec_write_begin(struct shmr_spec *s)
{
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	/* Odd and past every value a reader may have seen, even when a peer
	 * left seq odd: (seq + 1) | 1.  write_end's + 1 makes it even. */
	atomic_store_explicit(&s->seq, (seq + 1) | 1, memory_order_relaxed);
	/* S1: the odd seq is visible before any field changes. */
	atomic_thread_fence(memory_order_release);
}

void shmr_spec_write_end(struct shmr_spec *s)
{
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	/* S2: pairs with S3. */
	atomic_store_explicit(&s->seq, seq + 1, memory_order_release);
}

int shmr_name_copy(char dst[SHMR_NAME_MAX], const char *src)
{
	size_t n = src ? strnlen(src, SHMR_NAME_MAX) : 0;

	if (n == 0 || n >= SHMR_NAME_MAX)
		return -SHMR_E_NAME;
	memcpy(dst, src, n);
	memset(dst + n, 0, SHMR_NAME_MAX - n);
	return 0;
}
