/*
 * Domain and lane primitives shared by the appliance's parts (libshmr,
 * shmr-dataplane, shmr-control).  Not installed; not for worker programs.
 *
 * Lanes are DPDK rte_rings initialised in place in the domain with
 * rte_ring_init() and the single-producer/single-consumer sync type, used
 * through the _elem burst API with the domain's slot size as element size.
 * Consumers use the peek API (dequeue start/finish) so that a burst stays in
 * the ring until its consumer asks for the next one: a consumer that dies
 * mid-burst leaves [cons.tail, cons.head) behind, which
 * shmr_lane_repair_consumer() hands back.
 */
#ifndef SHMR_DOMAIN_H
#define SHMR_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/geometry.h>
#include <shmr/layout.h>

#include <rte_ring_core.h>

struct rte_ring;

/**
 * Size of a domain of geometry @p g (both parts), and fill in the offsets
 * of @p h (everything but the bells and ready word).  The domain part is
 * [0, h->peer_off), the lanes part [h->peer_off, size); both sizes are
 * multiples of 2 MiB.
 *
 * Errors: -EINVAL naming nothing: the caller validated @p g (see
 *         shmr_geometry_check()).
 */
int64_t shmr_layout_plan(const struct shmr_geometry *g,
			 struct shmr_domain_hdr *h);

/**
 * As shmr_layout_plan(), with the payload arena @p a (NULL: none) at the
 * end of the lanes part (<shmr/arena.h>).
 *
 * Errors: -EINVAL when @p g or @p a is not usable.
 */
int64_t shmr_layout_plan_arena(const struct shmr_geometry *g,
			       const struct shmr_arena_geo *a,
			       struct shmr_domain_hdr *h);

/**
 * Initialise a zeroed mapping of shmr_layout_plan() bytes: header, endpoint
 * table, spec, every lane's ring.  The ready word is written last [R0].
 *
 * Context: the control plane, before anyone else maps the domain.
 */
int shmr_layout_init(void *base, const struct shmr_geometry *g,
		     const char *name);

/** As shmr_layout_init(), with the payload arena @p a (NULL: none); its
 *  owner words start free (the mapping is zeroed). */
int shmr_layout_init_arena(void *base, const struct shmr_geometry *g,
			   const struct shmr_arena_geo *a, const char *name);

/**
 * Check a mapping's header before use: magic, version, ready [A0], size.
 * Returns 0 or -SHMR_E_VERSION / -SHMR_E_PROTO.
 */
int shmr_layout_check(const void *base, size_t map_size);

/**
 * Map a domain's two memfds back to back at one address: @p domain_fd
 * ([0, @p peer_off), read-write when @p writable, else read-only: a
 * peer's mapping) and @p lanes_fd ([@p peer_off, @p size), read-write).
 * The address is aligned to 2 MiB, as a hugetlb mapping needs.  Checks
 * that each descriptor is at least as large as its part (a smaller one
 * would be a SIGBUS at first touch).
 *
 * Context:     any process, once per domain.
 * Returns:     0 and *@p base; -EINVAL (sizes), -errno of mmap(2) (a
 *              read-only descriptor mapped @p writable fails with
 *              -EACCES).
 */
int shmr_domain_map(int domain_fd, int lanes_fd, uint64_t peer_off,
		    uint64_t size, int writable, void **base);

/** Undo shmr_domain_map() (@p size as given to it). */
void shmr_domain_unmap(void *base, uint64_t size);

static inline struct shmr_domain_hdr *shmr_hdr(void *base)
{
	return (struct shmr_domain_hdr *)base;
}

static inline struct shmr_ep_shared *shmr_ep_at(void *base, uint32_t slot)
{
	struct shmr_domain_hdr *h = shmr_hdr(base);
	return (struct shmr_ep_shared *)((char *)base + h->ep_off) + slot;
}

/** The part of endpoint @p slot its owner writes (lanes part). */
static inline struct shmr_ep_peer *shmr_ep_peer_at(void *base, uint32_t slot)
{
	struct shmr_domain_hdr *h = shmr_hdr(base);
	return (struct shmr_ep_peer *)((char *)base + h->eppeer_off) + slot;
}

/** Endpoint @p slot's sojourn histogram (lanes part: its receiver
 *  writes it). */
static inline struct shmr_hist *shmr_ep_hist_at(void *base, uint32_t slot)
{
	struct shmr_domain_hdr *h = shmr_hdr(base);
	return (struct shmr_hist *)((char *)base + h->hist_off) + slot;
}

/** Routing lcore @p lcore's bell (lanes part: endpoints ring it). */
static inline struct shmr_bell *shmr_lcore_bell(void *base, uint32_t lcore)
{
	return (struct shmr_bell *)((char *)base + shmr_hdr(base)->bells_off) +
	       lcore;
}

/** Routing lcore @p lcore's work bits (lanes part; layout.h): the
 *  summary words first, then the bit words. */
static inline _Atomic(uint64_t) *shmr_work_at(void *base, uint32_t lcore)
{
	struct shmr_domain_hdr *h = shmr_hdr(base);

	return (_Atomic(uint64_t) *)((char *)base + h->work_off +
				      lcore * shmr_work_stride(
						      h->max_endpoints,
						      h->nlcores));
}

/**
 * Tell the lcore whose work bits are @p work (nsum summary words) that
 * bit @p idx's endpoint has something in an outbound lane: the
 * producer's side of the work-bit protocol (layout.h), after its
 * enqueue and the fence [D2] (shared with a bell's B2).
 *
 * Context:     a producer of one of the endpoint's outbound lanes, right
 *              after atomic_thread_fence(memory_order_seq_cst).
 * Concurrency: lock-free; stores only when the bit was clear (when the
 *              endpoint went from idle to busy), else one load.
 */
static inline void shmr_work_note_fenced(_Atomic(uint64_t) *work,
					 uint32_t nsum, uint32_t idx)
{
	_Atomic(uint64_t) *w = work + nsum + idx / 64;
	_Atomic(uint64_t) *s = work + idx / 64 / 64;
	uint64_t bit = 1ull << (idx % 64), sbit = 1ull << (idx / 64 % 64);

	/* Relaxed: the fence D2 before it orders our enqueue first; a
	 * stale 1 is a bit the lcore clears only with D1, which then
	 * sees our slot. */
	if (atomic_load_explicit(w, memory_order_relaxed) & bit)
		return;
	atomic_fetch_or(w, bit); /* seq_cst */
	/* D4: pairs with D3 in the lcore's summary clear. */
	if (!(atomic_load(s) & sbit))
		atomic_fetch_or(s, sbit);
}

/** Fence [D2], then shmr_work_note_fenced() for endpoint @p slot of the
 *  domain at @p base, placed by @p geo (the caller's trusted copy of the
 *  header: a daemon's, or a test's own header). */
static inline void shmr_work_note(void *base,
				  const struct shmr_domain_hdr *geo,
				  uint32_t slot)
{
	uint32_t nl = geo->nlcores;
	_Atomic(uint64_t) *work = (_Atomic(uint64_t) *)(
		(char *)base + geo->work_off +
		(slot % nl) * shmr_work_stride(geo->max_endpoints, nl));

	/* D2: our enqueue before the bit's load; pairs with D1. */
	atomic_thread_fence(memory_order_seq_cst);
	shmr_work_note_fenced(
		work, shmr_work_nsum(shmr_work_nwords(geo->max_endpoints, nl)),
		slot / nl);
}

static inline struct shmr_spec *shmr_spec_of(void *base)
{
	return (struct shmr_spec *)((char *)base + shmr_hdr(base)->spec_off);
}

static inline struct shmr_lcore_stats *shmr_stats_of(void *base,
						     uint32_t lcore)
{
	return (struct shmr_lcore_stats *)((char *)base +
					   shmr_hdr(base)->counters_off) +
	       lcore;
}

/** Lane @p idx (see SHMR_LANE_*) of endpoint @p slot. */
static inline struct rte_ring *shmr_lane_at(void *base, uint32_t slot,
					    uint32_t idx)
{
	struct shmr_domain_hdr *h = shmr_hdr(base);
	uint64_t n = (uint64_t)slot * SHMR_LANES_PER_EP(h->nlcores) + idx;
	return (struct rte_ring *)((char *)base + h->lanes_off +
				   n * h->lane_stride);
}

/** The control lane (control plane -> dataplane update thread). */
static inline struct rte_ring *shmr_ctl_lane(void *base)
{
	return (struct rte_ring *)((char *)base + shmr_hdr(base)->ctl_off);
}

/**
 * Slots the consumer of @p r has not released yet (read or not).
 * Context:     the lane's consumer (its own cons.tail is stable).
 * Concurrency: wait-free; acquire on prod.tail pairs with the producer's
 *              release store of it, so the slots counted are readable.
 */
static inline uint32_t shmr_lane_pending_sc(const struct rte_ring *r)
{
	uint32_t pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);

	return pt - __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED);
}

/*
 * Lane checks (valid) and lane repair (repair), side by side as Concurrency
 * Kit pairs them: valid tells a lane that may be used from one that must
 * not be touched, repair takes over a dead peer's side of a valid one.
 */

/**
 * Is @p r's geometry the one a lane of @p lane_size entries was created
 * with?  Only what no legitimate peer ever writes after creation: size,
 * mask, capacity and the single-thread sync types.  Index arithmetic in
 * the ring code only uses size and mask, so a lane that passes cannot make
 * its user read or write outside it.
 *
 * Context:     anyone; reads no index.
 * Concurrency: wait-free.
 * Returns:     1 valid, 0 not.
 */
static inline int shmr_lane_geometry_valid(const struct rte_ring *r,
					   uint32_t lane_size)
{
	return r->size == lane_size && r->mask == lane_size - 1 &&
	       r->capacity == lane_size - 1 &&
	       r->prod.sync_type == RTE_RING_SYNC_ST &&
	       r->cons.sync_type == RTE_RING_SYNC_ST;
}

/**
 * Slots of @p r that its consumer has not released yet: prod.tail -
 * cons.tail, or -1 when the lane cannot be judged (its geometry is not
 * that of @p lane_size, or the producer is more than a capacity ahead:
 * indices a peer wrote).  Nothing read is trusted beyond that check.
 *
 * Context:     anyone mapping the domain (the producer waiting for its
 *              lanes to drain, the control plane watching a gone
 *              client's, a consumer that found nothing); reads only the
 *              two tails.
 * Concurrency: wait-free.  Acquire on cons.tail pairs with the
 *              consumer's release store of it (dequeue finish): once 0 is
 *              seen, the consumer is done with every slot.  Acquire on
 *              prod.tail pairs with the producer's release store.
 * _at:         also gives the consumer tail the count starts from (the
 *              slots [*from, *from + count) are published).
 */
static inline int64_t shmr_lane_unconsumed_at(const struct rte_ring *r,
					      uint32_t lane_size,
					      uint32_t *from)
{
	uint32_t ct, pt;

	if (!shmr_lane_geometry_valid(r, lane_size))
		return -1;
	ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	if (pt - ct > lane_size - 1)
		return -1;
	*from = ct;
	return (int64_t)(pt - ct);
}

static inline int64_t shmr_lane_unconsumed(const struct rte_ring *r,
					   uint32_t lane_size)
{
	uint32_t ct;

	return shmr_lane_unconsumed_at(r, lane_size, &ct);
}

/**
 * Is a lane we consume still sound?  Checks the geometry
 * (shmr_lane_geometry_valid()), that our own side is at rest (no burst
 * held: head == tail), and that the producer's tail is at most a capacity
 * ahead of our tail.  It reads no head/tail pair that the peer moves while
 * we read it, so a live producer never makes a sound ring look corrupted.
 * Out of line on purpose: the dataplane calls it once per burst, and
 * inlined into the burst it cost 4 to 5% of the router's throughput
 * (docs/benchmarks.md); a call keeps the burst's own code tight.
 *
 * Context:     the lane's consumer, between bursts.
 * Concurrency: wait-free.
 * Returns:     1 sound, 0 not.
 */
int shmr_lane_valid_sc(const struct rte_ring *r, uint32_t lane_size);

/**
 * As shmr_lane_valid_sc(), for a lane we produce (out of line for the same
 * reason).
 *
 * Context:     the lane's producer, between enqueues.
 * Concurrency: wait-free.
 * Returns:     1 sound, 0 not.
 */
int shmr_lane_valid_sp(const struct rte_ring *r, uint32_t lane_size);

/**
 * Hand an unfinished burst back: flag slots [cons.tail, cons.head) as
 * SHMR_F_REDELIVERED and move cons.head back to cons.tail.  Trusts
 * nothing in the ring but its indices: a lane whose geometry is not that
 * of @p lane_size is left alone (0), the slots are found with our mask
 * (@p lane_size - 1), and a burst longer than a capacity (indices a peer
 * wrote) hands nothing back but still moves cons.head to cons.tail.
 *
 * Context:     only once the consumer's death is confirmed (waitpid), and
 *              before its replacement attaches: nobody else consumes.
 * Concurrency: the producer may keep enqueueing; it never writes those slots.
 * Returns:     how many slots were handed back.
 */
unsigned shmr_lane_repair_consumer(struct rte_ring *r, uint32_t slot_size,
				   uint32_t lane_size);

/**
 * Drop a half-done enqueue of a dead producer (prod.head back to prod.tail:
 * the slots were never published).  A lane whose geometry is not that of
 * @p lane_size is left alone.
 * Context: only once the producer's death is confirmed.
 * Returns: 1 when something was repaired.
 */
int shmr_lane_repair_producer(struct rte_ring *r, uint32_t lane_size);

/**
 * Can a lane whose one side belonged to a dead process be taken over by
 * the repairs above, or must it be initialised again?  Unsound: its
 * geometry is not that of @p lane_size, or the live peer's side or the
 * producer's lead over the consumer is more than a capacity (so the live
 * peer's own lane check refuses the lane: it is not using it, and
 * shmr_lane_init() on it races with nobody).  @p dead_consumer: the dead
 * process consumed the lane (its cons.head is repaired, not judged).
 *
 * Context:     once the dead side's process is gone.
 * Concurrency: wait-free; reads the live side's indices.
 * Returns:     1 sound, 0 initialise it again.
 */
int shmr_lane_sound_for_repair(const struct rte_ring *r, uint32_t lane_size,
			       int dead_consumer);

/** Initialise one ring in place (SP/SC, @p lane_size entries). */
int shmr_lane_init(struct rte_ring *r, const char *name, uint32_t lane_size);

/**
 * Wake the sleepers of @p b, if any.  The caller has made its enqueue
 * visible and issued atomic_thread_fence(memory_order_seq_cst) [B2] (once
 * for any number of bells).  A syscall only when someone sleeps.
 */
void shmr_bell_ring_fenced(struct shmr_bell *b);

/** Fence [B2], then shmr_bell_ring_fenced(). */
void shmr_bell_ring(struct shmr_bell *b);

/**
 * Announce a sleeper on @p b [B1]; returns the seq value to pass to
 * shmr_bell_sleep() after re-checking for work.
 */
uint32_t shmr_bell_prepare(struct shmr_bell *b);

/**
 * Sleep until @p b's seq moves from @p seen or @p timeout_ms passes
 * (< 0: forever), then withdraw the sleeper.  Call shmr_bell_cancel()
 * instead when the re-check found work.
 * Returns: 0, or -EINTR when a signal interrupted.
 */
int shmr_bell_sleep(struct shmr_bell *b, uint32_t seen, int timeout_ms);

/** Withdraw a sleeper announced by shmr_bell_prepare(). */
void shmr_bell_cancel(struct shmr_bell *b);

/*
 * Spec seqcount (see struct shmr_spec).  A reader's wait is bounded: a
 * write takes the control plane microseconds, so a seq that stays odd, or
 * keeps changing, for SHMR_SPEC_WAIT_MS is a peer's doing (or a writer
 * stopped mid-write), and the read gives up.
 */
#define SHMR_SPEC_WAIT_MS 1000

/** The deadline for one read: now (CLOCK_MONOTONIC) + SHMR_SPEC_WAIT_MS,
 *  in ns, to pass to every shmr_spec_read_begin() of that read. */
uint64_t shmr_spec_deadline(void);

/**
 * Begin (or begin again, after shmr_spec_read_retry()) a read: wait for an
 * even seq [S3] and put it in @p seq.
 * Context:     any reader; spins, then yields, never past @p deadline_ns.
 * Returns:     0, or -SHMR_E_TIMEOUT once @p deadline_ns has passed.
 */
int shmr_spec_read_begin(const struct shmr_spec *s, uint64_t deadline_ns,
			 uint64_t *seq);
int shmr_spec_read_retry(const struct shmr_spec *s, uint64_t seq);
/** Make seq odd [S1], whatever it was (a peer may have left it odd). */
void shmr_spec_write_begin(struct shmr_spec *s);
void shmr_spec_write_end(struct shmr_spec *s);

/**
 * Copy a name into a fixed field; -SHMR_E_NAME when empty or too long.
 */
int shmr_name_copy(char dst[SHMR_NAME_MAX], const char *src);

#endif
