/*
 * libshmr's send path: a slot built in the endpoint's staging buffer
 * (ep->tx), stamped with the burst's clock where the domain's senders
 * stamp, and enqueued into one of its two outbound lanes (normal and
 * high priority), with the work bit and the bell that tell the routing
 * lcore polling them (shmr_client_push()).
 */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <rte_cycles.h>

#include <shmr/domain.h>
#include <shmr/lane_copy.h>
#include <shmr/shmr.h>

#include "client_internal.h"

/* ---- send ------------------------------------------------------------ */

/* The clock a burst's slots are stamped with: read once per burst; 0 (no
 * stamps) when the domain's senders do not stamp. */
static inline uint64_t burst_clock(const struct shmr_endpoint *ep)
{
	return ep->d->tsc_mult ? rte_rdtsc() : 0;
}

/* @p done of @p n slots went into an outbound lane: count a full lane,
 * set our work bit if the lcore retired it, ring the lcore's bell if it
 * sleeps.  Returns @p done. */
static unsigned pushed(struct shmr_endpoint *ep, unsigned done, unsigned n)
{
	/* Backpressure, counted on our own line (we are its one writer;
	 * relaxed: a statistic, no partner), from our own count so that a
	 * peer's scribble does not last. */
	if (done < n)
		atomic_store_explicit(&ep->peer->lane_full, ++ep->lane_full,
				      memory_order_relaxed);
	if (!done)
		return 0;
	/* One fence for both protocols, once per burst, in adaptive mode
	 * only: B2 (pairs with the lcore's B1 before it sleeps) and D2
	 * (pairs with its D1 when it retires our work bit).  In busy mode
	 * no lcore sleeps, and the lcore's second look at a lane whose bit
	 * it retired (D5, shmr/notify.h) stands in for D2.  The fence waited
	 * for the burst's stores to reach lines the lcore had read: without
	 * it, single route went from about 0.70 to 0.75 of the bare chain
	 * (docs/benchmarks.md, "The busy sender's fence"). */
	if (ep->bell_needed)
		atomic_thread_fence(memory_order_seq_cst);
	shmr_work_note_fenced(ep->work, ep->work_nsum, ep->work_idx);
	if (ep->bell_needed)
		shmr_bell_ring_fenced(ep->dp_bell);
	return done;
}

/* Enqueue @n prepared slots from ep->tx (pushed()). */
unsigned shmr_client_push(struct shmr_endpoint *ep, int high, unsigned n)
{
	struct rte_ring *r = high ? ep->out_high : ep->out;

	return pushed(ep,
		      shmr_lane_put_bounded(r, ep->d->lane_size, ep->tx,
					    ep->d->slot_size, n),
		      n);
}

int shmr_client_send_one(struct shmr_endpoint *ep, uint8_t kind, uint8_t prio,
			 struct shmr_pid to, uint32_t type, uint64_t key,
			 uint64_t ref, int32_t status, const void *data,
			 size_t len)
{
	if (len > ep->d->slot_size - SHMR_HDR_SIZE)
		return -SHMR_E_TOO_BIG;
	/* A slot that cannot exist: no need to ask the dataplane (it would
	 * drop the slot as a bad target, and a call would wait it out). */
	if (to.slot >= ep->d->max_endpoints)
		return -SHMR_E_PROCESS_UNKNOWN;
	fill_slot_stamped((struct shmr_msg *)ep->tx, ep->pid, kind, prio, to,
			  type, key, ref, status, data, (uint32_t)len,
			  burst_clock(ep), stamp_room(ep->d->slot_size));
	return shmr_client_push(ep, prio != SHMR_PRIO_NORMAL, 1) == 1 ? 0
								   : -EAGAIN;
}

int shmr_send(struct shmr_endpoint *ep, struct shmr_pid to, uint32_t type,
	      uint64_t key, const void *data, size_t len)
{
	return shmr_client_send_one(ep, SHMR_KIND_SEND, SHMR_PRIO_NORMAL, to,
				    type, key, 0, 0, data, len);
}

int shmr_send_broadcast(struct shmr_endpoint *ep, struct shmr_pid router,
			uint32_t type, uint64_t key, const void *data,
			size_t len)
{
	struct shmr_msg *m = (struct shmr_msg *)ep->tx;

	if (len > ep->d->slot_size - SHMR_HDR_SIZE)
		return -SHMR_E_TOO_BIG;
	if (router.slot >= ep->d->max_endpoints)
		return -SHMR_E_PROCESS_UNKNOWN;
	fill_slot_stamped(m, ep->pid, SHMR_KIND_SEND, SHMR_PRIO_NORMAL, router,
			  type, key, 0, 0, data, (uint32_t)len,
			  burst_clock(ep), stamp_room(ep->d->slot_size));
	m->flags = (uint8_t)(m->flags | SHMR_F_BROADCAST);
	return shmr_client_push(ep, 0, 1) == 1 ? 0 : -EAGAIN;
}

int shmr_send_prio(struct shmr_endpoint *ep, struct shmr_pid to,
		   enum shmr_priority prio, uint32_t type, uint64_t key,
		   const void *data, size_t len)
{
	if (prio > SHMR_PRIO_MAX)
		return -EINVAL;
	return shmr_client_send_one(ep, SHMR_KIND_SEND, (uint8_t)prio, to, type,
				    key, 0, 0, data, len);
}

int shmr_send_name(struct shmr_endpoint *ep, const char *name, uint32_t type,
		   uint64_t key, const void *data, size_t len)
{
	struct shmr_pid to;
	int rc = shmr_lookup(ep->d, name, &to);

	if (rc < 0)
		return rc;
	return shmr_send(ep, to, type, key, data, len);
}

/* Is @p m a message shmr_send_burst() can send: 0, or why not (as
 * shmr_client_send_one(): a slot that cannot exist is refused here, not
 * dropped by the dataplane as a bad target). */
static inline __attribute__((always_inline)) int
out_bad(const struct shmr_out *m, size_t max_len, uint32_t max_slot)
{
	if (__builtin_expect(m->len > max_len, 0))
		return -SHMR_E_TOO_BIG;
	if (__builtin_expect(m->to.slot >= max_slot, 0))
		return -SHMR_E_PROCESS_UNKNOWN;
	return 0;
}

/*
 * The burst's slots' first lines (the header and 16 bytes of payload: all
 * a small send writes), asked for with intent to write before the fill
 * stores into them: the lcore read them last, on its core, and each first
 * store into a line waits for it.  Asked for together, the lines come in
 * parallel (docs/benchmarks.md, "The send's slot stores").  PREFETCHW is
 * a hint that cannot fault; a CPU without it (CPUID 0x80000001 ECX bit 8:
 * Intel before Broadwell) is not given it.
 */
static _Atomic int have_prefetchw = -1; /* -1: not asked yet */

static int prefetchw_ok(void)
{
	int ok = atomic_load_explicit(&have_prefetchw, memory_order_relaxed);

	if (__builtin_expect(ok < 0, 0)) {
		/* Any thread may ask first: each finds the same answer. */
		ok = 0;
#if defined(__x86_64__) || defined(__i386__)
		unsigned a, b, c, d;

		ok = __get_cpuid(0x80000001u, &a, &b, &c, &d) &&
		     (c & (1u << 8));
#endif
		atomic_store_explicit(&have_prefetchw, ok,
				      memory_order_relaxed);
	}
	return ok;
}

/* A write prefetch.  Not __builtin_prefetch(p, 1, 3) (DPDK's
 * rte_prefetch0_write(), experimental in 22.11): under the build's -march
 * GCC emits no PREFETCHW for it, even in a function built for PRFCHW
 * (objdump).  GCC never drops or hoists an asm without outputs.  Called
 * only where prefetchw_ok(). */
static inline __attribute__((always_inline)) void
prefetch_slots_w(const unsigned char *p, unsigned n, size_t ss)
{
	for (unsigned i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__asm__("prefetchw %0" : : "m"(p[i * ss]));
#else
		__builtin_prefetch(p + i * ss, 1, 3);
#endif
	}
}

typedef uint64_t u64x2 __attribute__((vector_size(16), aligned(1)));

/*
 * A send of 8 or 16 payload bytes (a key or two: the usual), its slot's
 * first 64 bytes written whole as four 16-byte stores, each built in
 * registers: four store-buffer entries a slot instead of a dozen
 * (fill_slot_stamped()'s fields), so the stores of more slots wait for
 * their lines at once.  @p flags: SHMR_F_STAMPED or 0.  The 8 bytes after
 * an 8-byte payload are written 0.
 */
static inline __attribute__((always_inline)) void
fill_small_send(unsigned char *s, struct shmr_pid me,
		const struct shmr_out *m, uint64_t stamp, uint8_t flags)
{
	uint64_t a, b = 0, from, to;
	u64x2 v;

	static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
		      "slot words are composed little-endian");
	static_assert(SHMR_HDR_SIZE + 16 <= SHMR_SLOT_MIN,
		      "a slot holds 16 payload bytes");
	memcpy(&a, m->data, 8);
	if (m->len == 16)
		memcpy(&b, (const unsigned char *)m->data + 8, 8);
	memcpy(&from, &me, 8);
	memcpy(&to, &m->to, 8);
	/* kind, flags, priority, hops 0, type; from */
	v = (u64x2){ SHMR_KIND_SEND | (uint64_t)flags << 8 |
			     (uint64_t)SHMR_PRIO_NORMAL << 16 |
			     (uint64_t)m->type << 32,
		     from };
	memcpy(s, &v, 16);
	v = (u64x2){ to, stamp }; /* to; ref: a send's stamp */
	memcpy(s + 16, &v, 16);
	v = (u64x2){ m->key, m->len }; /* key; len, status 0 */
	memcpy(s + 32, &v, 16);
	v = (u64x2){ a, b };
	memcpy(s + 48, &v, 16);
}

/* Fill @p n sends at @p tx (@p ss bytes each) from @p msgs, each stamped
 * with @p stamp (a send's stamp is its ref: no payload length decides
 * whether it fits), each checked (out_bad()) before its slot is written.
 * Returns 0, or the first bad one's error (the caller sends none). */
static inline __attribute__((always_inline)) int
fill_burst(unsigned char *tx, size_t ss, struct shmr_pid me,
	   const struct shmr_out *msgs, unsigned n, uint64_t stamp,
	   uint32_t max_slot)
{
	uint8_t flags = stamp ? SHMR_F_STAMPED : 0;

	for (unsigned i = 0; i < n; i++) {
		int rc = out_bad(&msgs[i], ss - SHMR_HDR_SIZE, max_slot);

		if (rc < 0)
			return rc;
		if (__builtin_expect(msgs[i].len == 8 || msgs[i].len == 16,
				     1)) {
			fill_small_send(tx + i * ss, me, &msgs[i], stamp,
					flags);
			continue;
		}
		fill_slot_stamped((struct shmr_msg *)(tx + i * ss), me,
				  SHMR_KIND_SEND, SHMR_PRIO_NORMAL, msgs[i].to,
				  msgs[i].type, msgs[i].key, 0, 0, msgs[i].data,
				  msgs[i].len, stamp, SIZE_MAX);
	}
	return 0;
}

int shmr_send_burst(struct shmr_endpoint *ep, const struct shmr_out *msgs,
		    unsigned n)
{
	size_t ss = ep->d->slot_size;
	uint32_t max_slot = ep->d->max_endpoints;
	struct shmr_pid me = ep->pid;
	struct rte_ring_zc_data z;
	unsigned k, k1;
	uint64_t stamp = 0;
	int rc = 0;

	if (n > RX_BURST_MAX)
		n = RX_BURST_MAX;
	/* The slots the lane has room for, filled in place (zero-copy:
	 * no staging copy), and only those: a full lane costs no fill and
	 * no clock read, and each message's stamp is the time it goes in.
	 * Every message is checked, as its slot is filled or after, before
	 * any is published: a bad one gives the reservation back (a finish
	 * of 0), so none is sent.  Everything the fill needs from @p ep is
	 * read before it (the payloads' copies may alias it). */
	k = shmr_lane_reserve_bounded(ep->out, ep->d->lane_size, (uint32_t)ss,
				      n, &z);
	if (k) {
		k1 = k < z.n1 ? k : z.n1;
		if (prefetchw_ok()) {
			prefetch_slots_w(z.ptr1, k1, ss);
			prefetch_slots_w(z.ptr2, k - k1, ss);
		}
		stamp = burst_clock(ep);
		rc = fill_burst(z.ptr1, ss, me, msgs, k1, stamp, max_slot);
		if (rc == 0 && k > k1)
			rc = fill_burst(z.ptr2, ss, me, msgs + k1, k - k1,
					stamp, max_slot);
	}
	for (unsigned i = k; rc == 0 && i < n; i++)
		rc = out_bad(&msgs[i], ss - SHMR_HDR_SIZE, max_slot);
	if (rc < 0) {
		if (k)
			rte_ring_enqueue_zc_elem_finish(ep->out, 0);
		return rc;
	}
	if (k)
		rte_ring_enqueue_zc_elem_finish(ep->out, k);
	return (int)pushed(ep, k, n);
}

int shmr_reply(struct shmr_endpoint *ep, const struct shmr_msg *req,
	       int status, const void *data, size_t len)
{
	if (reply_ok(req, &status) < 0)
		return -EINVAL;
	return shmr_client_send_one(ep, SHMR_KIND_REPLY, SHMR_PRIO_NORMAL,
				    req->from, req->type, req->key, req->ref,
				    status, data, len);
}
