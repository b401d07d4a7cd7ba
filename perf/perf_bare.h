/*
 * The bare baseline's shared parts (bare.c's essay): the memfd's layout,
 * what the children leave in it, and the roles and machinery that the
 * two-hop chain (bare.c) and the fan-out (bare_fanout.c) both use, and
 * the fan-out's forwarding, which `shmr-perf decide` also times in one
 * process (decide.c).  Not installed; for shmr-perf only.
 */
#ifndef SHMR_PERF_BARE_H
#define SHMR_PERF_BARE_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_internal.h"

struct rte_ring;

#define CTL_BYTES 4096u
#define PERF_FAN_MAX 32u /* consumers of the fan-out (--routes' bound) */

/* Results the children leave in shared memory; read after waitpid. */
struct bare_ctl {
	alignas(64) uint64_t t_start_ns; /* producer, before its first enqueue */
	alignas(64) uint64_t t_end_ns;   /* consumer, after the last dequeue */
	uint64_t received, gaps, reorders;
	/* One per round-trip run: [RTT_PINGPONG], [RTT_THREE],
	 * [RTT_HANDOFF]. */
	struct {
		alignas(64) uint64_t p50, p99, p999, max;
		unsigned done;
	} rtt[3];
	/* The fan-out run: per consumer. */
	struct {
		alignas(64) uint64_t end_ns;
		uint64_t received, gaps, reorders;
	} fan[PERF_FAN_MAX];
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
	unsigned rtt_run; /* RTT_*: where the pinger leaves its figures */
	unsigned fan_id;  /* the fan-out consumer a child is: its role's */
	int fan_first;    /* index less fan_first */
};

enum { RTT_PINGPONG, RTT_THREE, RTT_HANDOFF };

/*
 * Throughput: P2F, F2C.  Two-process round trip: PING, PONG.  Three-process
 * round trip: P2F, F2C (emptied by the throughput run), then back on C2F,
 * F2P: the client's, the worker's and the dataplane's lanes of a call.
 */
enum {
	RING_P2F,
	RING_F2C,
	RING_PING,
	RING_PONG,
	RING_C2F,
	RING_F2P,
	RING_FAN0, /* the fan-out's consumers' lanes, PERF_FAN_MAX of them */
	RING_COUNT = RING_FAN0 + PERF_FAN_MAX
};

/* bare_elem.from of an echo: the pinger must only ever see these. */
#define FROM_PINGER 1u
#define FROM_ECHOER 3u

struct bare_map {
	void *base;
	struct bare_ctl *ctl;
	struct rte_ring *ring[RING_COUNT];
};

/*
 * The bare fan-out's forwarding, as rte_eth_tx_buffer batches per port:
 * each slot of a burst is copied out of its input lane straight into the
 * buffer of its destination (its 64-bit key, at key_off, modulo routes),
 * and a buffer goes out, by flush(), when it holds a burst.
 */
struct perf_fan {
	unsigned routes, burst;
	uint32_t slot;        /* bytes a slot */
	size_t key_off;       /* where in a slot its key is */
	unsigned char *stage; /* routes x burst slots */
	unsigned cnt[PERF_FAN_MAX];
	/* Out with buffer d's cnt[d] slots (cnt[d] is zeroed after). */
	void (*flush)(struct perf_fan *f, unsigned d);
};

/** One burst of @p in spread over @p f's buffers (a zero-copy dequeue:
 *  one copy a slot); returns the slots taken, 0 when @p in is empty. */
unsigned perf_fan_take(struct perf_fan *f, struct rte_ring *in);

/** Every buffer that holds something out. */
void perf_fan_flush_all(struct perf_fan *f);

/* In a child: say we are ready, then wait until the parent says go. */
void bare_child_sync(struct bare *b);

/** A child's end on failure: "shmr-perf bare: @p who: @p what", exit 1. */
void bare_child_fail(const char *who, const char *what);

/** Enqueue all @p n slots of @p buf (bare.c says how it waits). */
void bare_push_all(struct rte_ring *out, const unsigned char *buf,
		   unsigned n, const struct perf_opts *o,
		   struct perf_stall *st, unsigned *idle, unsigned spin,
		   const char *who, const char *what);

/** The producer role: o->count slots, seq 0 up, into RING_P2F. */
void bare_producer(struct bare *b, struct bare_map *m);

/** Fork one child per role, pinned; release them together; wait for
 *  all.  0, or -1 when one failed (message printed). */
int bare_run_children(struct bare *b,
		      void (*const *roles)(struct bare *, struct bare_map *),
		      const int *cpus, const char *const *names, int n);

/** The memfd and its rings; 0, or -1 (message printed, *b cleaned). */
int bare_open(struct bare *b, struct bare_map *m);

#endif
