/*
 * Domain primitives shared by the appliance's parts (libshmr,
 * shmr-dataplane, shmr-control).  Not installed; not for worker programs.
 *
 * A domain's layout (planned, initialised, checked and mapped), where each
 * thing lies in a mapping, the work bits and bells by which a producer
 * tells a consumer, and the spec's seqcount.  A lane's own checks and
 * repairs are in <shmr/lane.h>, which this includes.
 */
#ifndef SHMR_DOMAIN_H
#define SHMR_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/geometry.h>
#include <shmr/lane.h>
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

/** Routing lcore @p lcore's work bits (lanes part; shmr/notify.h): the
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
 * producer's side of the work-bit protocol (shmr/notify.h), after its
 * enqueue and the fence [D2] (shared with a bell's B2), which busy mode
 * leaves out (the lcore's second look D5 stands in for it).
 *
 * Context:     a producer of one of the endpoint's outbound lanes, right
 *              after atomic_thread_fence(memory_order_seq_cst), or right
 *              after its enqueue in busy mode.
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
	 * sees our slot (or, with no D2 in busy mode, its look D5). */
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

/** The spec's active list (the header's max_endpoints entries, the
 *  spec's nactive used).  Context: the daemons and tests. */
static inline uint32_t *shmr_active_of(void *base)
{
	return (uint32_t *)((char *)base + shmr_hdr(base)->active_off);
}

/** The registry's entries (the header's max_names of them, the spec's
 *  nreg used).  Context: the daemons and tests (the header is their
 *  own); a client uses its own copy of names_off and max_names. */
static inline struct shmr_spec_reg *shmr_names_of(void *base)
{
	return (struct shmr_spec_reg *)((char *)base +
					shmr_hdr(base)->names_off);
}

/** Router slot @p ri's type map (@p call 0) or call map (1), by the
 *  header's max_types and types_off.  Context: the daemons and tests. */
static inline struct shmr_spec_type *shmr_types_of(void *base, uint32_t ri,
						   int call)
{
	const struct shmr_domain_hdr *h = shmr_hdr(base);

	return shmr_spec_types_at((char *)base + h->types_off, h->max_types,
				  ri, call);
}

/** Router slot @p ri's routes (the header's max_routes, its nroutes
 *  used), by the header's max_routes and routes_off.  Context: the
 *  daemons and tests; a client uses its own copy of both. */
static inline struct shmr_spec_route *shmr_routes_of(void *base, uint32_t ri)
{
	const struct shmr_domain_hdr *h = shmr_hdr(base);

	return shmr_spec_routes_at((char *)base + h->routes_off,
				   h->max_routes, ri);
}

/** Router slot @p ri's hash or routee names (the header's max_routes,
 *  its nhash used).  Context: as shmr_routes_of(). */
static inline char (*shmr_hash_of(void *base, uint32_t ri))[SHMR_NAME_MAX]
{
	const struct shmr_domain_hdr *h = shmr_hdr(base);

	return shmr_spec_hash_at((char *)base + h->routes_off, h->max_routes,
				 ri);
}

static inline struct shmr_lcore_stats *shmr_stats_of(void *base,
						     uint32_t lcore)
{
	return (struct shmr_lcore_stats *)((char *)base +
					   shmr_hdr(base)->counters_off) +
	       lcore;
}

/** Routing lcore @p lcore's counters of endpoint @p slot (layout.h);
 *  a @p slot beyond the header's max_endpoints gets the block's spare
 *  entry.  Context: the daemons and tests (the header is their own). */
static inline struct shmr_ep_ctr *shmr_ep_ctr_of(void *base, uint32_t lcore,
						 uint32_t slot)
{
	struct shmr_domain_hdr *h = shmr_hdr(base);
	uint32_t n = h->max_endpoints;

	return (struct shmr_ep_ctr *)((char *)base + h->epctr_off +
				      lcore * shmr_ep_ctr_stride(n)) +
	       (slot < n ? slot : n);
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
