/*
 * What of an endpoint slot its owner writes, in the lanes part of the
 * layout (struct shmr_ep_peer at eppeer_off).  Part of the layout
 * (<shmr/layout.h> includes it, and pins every size and offset here); not
 * for direct inclusion.
 */
#ifndef SHMR_EP_PEER_H
#define SHMR_EP_PEER_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifndef SHMR_LAYOUT_H
#error "include <shmr/layout.h>, which defines what is used here"
#endif

/*
 * What of an endpoint slot its owner writes, in the lanes part: `bell` is
 * the wake-up word of the endpoint's receiver (its owner adds sleepers,
 * the dataplane rings seq); `busy` is the owner's own line.  A peer can
 * write these words of any endpoint: a wrong `sleepers` costs a wake-up
 * or a bounded sleep (every sleep has a timeout), a wrong `busy` a
 * smallest-mailbox pick, never a crash, a loss or a hang.
 */
struct shmr_ep_peer {
	struct shmr_bell bell;
	/* Owner: 1 while the worker holds a received burst (from the
	 * shmr_recv_burst() that returned it until the one that finds
	 * nothing), else 0.  Stored only when it changes, relaxed; read
	 * relaxed by the dataplane's smallest-mailbox.  No partner: a load
	 * hint, nothing is read on the strength of it.  A worker that dies
	 * busy leaves 1 until its replacement's first empty receive. */
	alignas(SHMR_CACHE_LINE) _Atomic(uint32_t) busy;
	uint32_t pad0;
	/* Owner: sends that found its outbound lane full (backpressure),
	 * since the endpoint's slot was handed out.  Only its owner stores
	 * it (relaxed, from its own count); the control plane loads it
	 * relaxed for the counters.  No partner: a statistic, and a hint
	 * (any peer can write it), never trusted. */
	_Atomic(uint64_t) lane_full;
	/* Owner: the arena buffer (libshmr's reference: class << 56 | index
	 * << 32 | generation) it is sending, from before its owner word
	 * says SENT until its slot is in the outbound lane (or the send
	 * failed), else 0; stored release.  The control plane reads it
	 * (acquire) after a SENT word and before its walk of the lanes: a
	 * buffer named here may be on its way into a lane the walk would
	 * miss, so it is not freed (control/arena.c).  Any peer can write
	 * it: a wrong value keeps a buffer one more look, or frees one
	 * whose owner word that peer could have written anyway. */
	_Atomic(uint64_t) sending;
};
static_assert(sizeof(struct shmr_ep_peer) == 2 * SHMR_CACHE_LINE,
	      "ep peer size");
static_assert(offsetof(struct shmr_ep_peer, busy) == SHMR_CACHE_LINE,
	      "the owner's line is its own");

#endif
