/*
 * The shared-memory layout of a shmrouter domain.  Not installed: the
 * appliance's own parts (libshmr, shmr-dataplane, shmr-control, tests)
 * include it; third-party workers see only <shmr/shmr.h>.
 *
 * The domain is two memfds, mapped by every process back to back at one
 * address of its own (shmr_domain_map()), so the layout holds offsets from
 * that base, never pointers, and one offset reaches either part.  The
 * first, the "domain" part, holds what only the daemons write; clients and
 * workers are handed a read-only descriptor of it and map it read-only, so
 * a peer's store there faults instead of landing.  The second, the "lanes"
 * part, holds everything a peer must write.  All sizes and offsets of
 * fixed structures are checked with static_assert (against the table
 * shmr/layout_pin.def, at the end); the header's layout_version is checked
 * at attach.  Atomics are spelled _Atomic(T), which C11 reads as
 * _Atomic T and C++23's <stdatomic.h> as std::atomic<T> (same size and
 * alignment), so a C++ reader of the domain can include this header too.
 *
 *   +---------------------------+ 0           domain memfd (peers: read-only)
 *   | struct shmr_domain_hdr    |  geometry, ready word (written last)
 *   +---------------------------+ ep_off
 *   | struct shmr_ep_shared[N]  |  endpoint table (control, dataplane lines)
 *   +---------------------------+ spec_off
 *   | struct shmr_spec          |  counts, routers (seqcount)
 *   +---------------------------+ active_off
 *   | uint32_t[N]               |  the endpoint slots to poll (seqcount)
 *   +---------------------------+ names_off
 *   | struct shmr_spec_reg[R]   |  the registry (under the spec's seqcount)
 *   +---------------------------+ types_off
 *   | struct shmr_spec_type[..] |  per router: type map, call map (seqcount)
 *   +---------------------------+ routes_off
 *   | routes, names [..]        |  per router: routes, hash/routee names
 *   +---------------------------+ counters_off
 *   | struct shmr_lcore_stats[L]|  one block per routing lcore (dataplane writes)
 *   +---------------------------+ epctr_off
 *   | struct shmr_ep_ctr[L][N+1]|  per lcore, per endpoint slot (dataplane)
 *   +---------------------------+ ctl_off
 *   | control lane              |  control -> dataplane update thread
 *   +---------------------------+ peer_off    lanes memfd (peers: read-write)
 *   | struct shmr_bell[L]       |  bells_off: the routing lcores' bells
 *   +---------------------------+ work_off
 *   | work bits[L]              |  per lcore: which endpoints have work
 *   +---------------------------+ eppeer_off
 *   | struct shmr_ep_peer[N]    |  per endpoint: its bell, its owner's line
 *   +---------------------------+ hist_off
 *   | struct shmr_hist[N]       |  per endpoint: its receiver's sojourns
 *   +---------------------------+ lanes_off
 *   | lanes: N * (L + 2)        |  per endpoint: L inbound, 1 out, 1 out-high
 *   +---------------------------+ arena_off   (only with an arena)
 *   | struct shmr_arena_stats[C]|  per class: allocation failures
 *   | per class: owner words,   |  arena.h: one 64-bit word per buffer,
 *   | then its buffers          |  then the buffers (page aligned)
 *   +---------------------------+ size
 *
 * Who writes what:
 *   - shmr-control: header (at creation), endpoint table's control lines
 *     (the first and the third, struct shmr_ep_figs), spec, control lane producer side, and lane repair after a peer's
 *     death is confirmed.
 *   - shmr-dataplane: lcore stats, the endpoint table's dataplane line
 *     (quarantine words, bad-slot counts), inbound lanes' producer side,
 *     outbound lanes' consumer side, control lane consumer side.
 *   - an endpoint's owner: its inbound lanes' consumer side, its outbound
 *     lanes' producer side, its shmr_ep_peer (bell sleepers, busy), its
 *     sojourn histogram (struct shmr_hist, shmr/hist.h), the lcore bells
 *     it rings.  All of it in the lanes part, which every
 *     reader validates against its own copy of the geometry: a peer can
 *     write any of it (the lanes memfd is one file for all peers).
 */
#ifndef SHMR_LAYOUT_H
#define SHMR_LAYOUT_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/ep_figs.h>
#include <shmr/hist.h>
#include <shmr/shmr.h>

#define SHMR_MAGIC 0x314d4f44524d4853ull /* "SHMRDOM1" little-endian */

/* Two-step, so that a macro argument is expanded first. */
#define SHMR_STRINGIFY_(x) #x
#define SHMR_STRINGIFY(x) SHMR_STRINGIFY_(x)
#define SHMR_PASTE_(a, b) a##b
#define SHMR_PASTE(a, b) SHMR_PASTE_(a, b)

/*
 * The layout version, written once, as bare digits: SHMR_LAYOUT_VERSION
 * (unsigned) and SHMR_LAYOUT_VERSION_TEXT (as ATTACH sends it) are made
 * from them.  Bump it with any change to a size or offset below (the
 * static_asserts fail until their values are updated too).
 *   2: admin_pid, admin counters; 3: replace wait, router flags, restart
 *   asks; 4: the routing logics (routee list, vnodes), the endpoint's busy
 *   line; 5: scatter-gather, tail-chopping and balancing (within_ms,
 *   interval_ms); 6: two memfds, the daemons' part read-only for peers
 *   (struct shmr_ep_peer, the lcore bells moved to the lanes part); 7:
 *   consistent-hash keys from the payload, hash modes, node prefix;
 *   8: counters: the lcores' busy polls, wake-ups and full inboxes, the
 *   endpoint owner's full outbound lanes (struct shmr_ep_peer.lane_full);
 *   9: the payload arena (classes in the header, owner words and buffers
 *   at the end of the lanes part)
 *   10: the lcores' work bits (work_off), set by senders;
 *   11: sojourn stamps (SHMR_F_STAMPED, after the payload) and the
 *   endpoints' histograms (hist_off, tsc_hz, at the header's end);
 *   12: the endpoint table's third line (struct shmr_ep_figs: what only
 *   the control plane knows, for the dataplane's telemetry);
 *   13: max_endpoints and nlcores from the configuration, the lcores'
 *   per-endpoint counters apart (struct shmr_ep_ctr at epctr_off);
 *   14: arena buffers shared by broadcast and scatter-gather (the owner
 *   word's SHARED state with its reference counts);
 *   15: the endpoint owner's line names the arena buffer it is sending
 *   (struct shmr_ep_peer.sending), and a buffer kept, or taken back from
 *   a failed send, takes a new generation;
 *   16: the registry (names_off) and the routers' type maps (types_off)
 *   out of the spec, sized by max_names, max_types;
 *   17: a router's routes and routee names have room for SHMR_MAX_ROUTES
 *   (128, was 32); max_routes from the configuration bounds them;
 *   18: a send's sojourn stamp in its ref (a call's, a reply's: after the
 *   payload, as since 11);
 *   19: the spec's routers last and max_routers of them (the header's,
 *   from the configuration), the type maps as many pairs;
 *   20: the routers' routes and names out of the spec (routes_off),
 *   max_routes of each a router (the header's, from the configuration);
 *   21: the active list out of the spec (active_off), max_endpoints
 *   entries
 */
#define SHMR_LAYOUT_VERSION_DIGITS 21
#define SHMR_LAYOUT_VERSION SHMR_PASTE(SHMR_LAYOUT_VERSION_DIGITS, u)
#define SHMR_LAYOUT_VERSION_TEXT SHMR_STRINGIFY(SHMR_LAYOUT_VERSION_DIGITS)

#define SHMR_CACHE_LINE 64

/* Endpoint slots and routing lcores: a domain has the configuration's
 * max_endpoints and lcores (the header's max_endpoints, nlcores), these
 * are only the most a configuration may ask for.  Nothing of a domain's
 * size, and nothing of the dataplane's round, grows with them: every
 * array indexed by endpoint slot is sized from the header (operator
 * guide: the domain's memory). */
#define SHMR_MAX_ENDPOINTS 16384u /* the most endpoint slots a domain has */
#define SHMR_MIN_ENDPOINTS 16u
#define SHMR_ENDPOINTS_DEFAULT 1024u
#define SHMR_MAX_LCORES 32u /* the most routing lcores */
/* Routers of a domain: the configuration's max_routers (the header's),
 * these are the most and least it may ask.  The spec has max_routers
 * routers, the daemons' tables as many: nothing is sized by the most. */
#define SHMR_MAX_ROUTERS 256u
#define SHMR_MIN_ROUTERS 1u
#define SHMR_ROUTERS_DEFAULT 8u
/* Routes per router (and routee names per routing logic): the
 * configuration's max_routes (the header's), these are the most and
 * least it may ask.  The domain's route region has max_routes of each a
 * router (shmr_spec_routes_size()); a copy takes only what is used
 * (shmr_spec_routes_copy()). */
#define SHMR_MAX_ROUTES 128u
#define SHMR_MIN_ROUTES 1u
#define SHMR_ROUTES_DEFAULT 32u
/* Routees of a scatter-gather or tail-chopping router (the dataplane's
 * tried set is a 64-bit mask): max_routes, at most this. */
#define SHMR_COLLECT_ROUTEES_MAX 64u
/* A domain's entries per type map and registry entries are its
 * max_types and max_names (the header's): these are the most allowed. */
#define SHMR_MAX_TYPES 1024u
#define SHMR_MIN_TYPES 1u
#define SHMR_TYPES_DEFAULT 64u
#define SHMR_MAX_NAMES 16384u
#define SHMR_MIN_NAMES 16u
#define SHMR_NAMES_DEFAULT 128u
#define SHMR_DSO_PATH_MAX 160u

#define SHMR_HDR_SIZE 48u        /* sizeof(struct shmr_msg) */
#define SHMR_SLOT_MIN 64u
#define SHMR_SLOT_MAX 4096u
#define SHMR_SLOT_DEFAULT 128u
#define SHMR_LANE_DEFAULT 1024u /* entries per lane (power of two) */

/* The payload arena (shm/include/shmr/arena.h): size classes, each a power
 * of two of buffers, at most this many buffers per class and bytes in all. */
#define SHMR_ARENA_MAX_CLASSES 8u
#define SHMR_ARENA_BUF_MIN 64u
#define SHMR_ARENA_BUF_MAX 67108864u /* 64 MiB */
#define SHMR_ARENA_COUNT_MAX 65536u
#define SHMR_ARENA_BYTES_MAX 68719476736ull /* 64 GiB, all classes */

static_assert(sizeof(struct shmr_msg) == SHMR_HDR_SIZE, "slot header size");

/*
 * The sojourn stamp: the sender's TSC (read once per burst), flagged
 * SHMR_F_STAMPED.  A send carries it in its ref (a send has no call
 * reference: the header's 48 bytes are otherwise all used, and a store
 * the sender makes anyway costs nothing more); a call or a reply, whose
 * ref is the call's, in the 8 bytes right after the payload (data[len],
 * unaligned) when the slot has room for them (len <= slot_size -
 * SHMR_HDR_SIZE - SHMR_STAMP_SIZE): only such a message of the slot's
 * last 8 bytes goes unmeasured.  Whatever copies a message copies
 * shmr_msg_bytes() of it, so the stamp goes along; the dataplane clears
 * the flag where it writes after the payload itself (a failed send's
 * route name).
 */
#define SHMR_STAMP_SIZE 8u

/* The bytes of slot @p m that hold its message (header, payload and the
 * stamp if it has one), never more than a slot of @p ss bytes: read once,
 * so that a length a peer changes meanwhile cannot overrun.  Context:
 * any; @p m may lie in memory peers write. */
static inline size_t shmr_msg_bytes(const struct shmr_msg *m, uint32_t ss)
{
	/* Relaxed loads, each once: no partner (a peer's value is checked
	 * below, nothing else is read on its strength). */
	uint32_t len = __atomic_load_n(&m->len, __ATOMIC_RELAXED);
	uint8_t fl = __atomic_load_n(&m->flags, __ATOMIC_RELAXED);
	uint8_t kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
	size_t room = ss - SHMR_HDR_SIZE;

	if (len > room)
		return ss;
	if ((fl & SHMR_F_STAMPED) && kind != SHMR_KIND_SEND &&
	    len + SHMR_STAMP_SIZE <= room)
		return SHMR_HDR_SIZE + (size_t)len + SHMR_STAMP_SIZE;
	return SHMR_HDR_SIZE + (size_t)len;
}

static_assert(SHMR_SLOT_MIN >= SHMR_HDR_SIZE + SHMR_STAMP_SIZE,
	      "every slot has room for a stamp after an empty payload");
static_assert(sizeof(struct shmr_pid) == 8, "pid size");

/* The doorbell and the work bits (struct shmr_bell, shmr_work_*()): the
 * protocols, with their labels B1-B2 and D1-D5, are in shmr/notify.h. */
#include <shmr/notify.h>

/* Endpoint states (struct shmr_ep_shared.state). */
enum shmr_ep_state {
	SHMR_EP_FREE = 0,
	SHMR_EP_ACTIVE = 1,      /* owned by a live process, or a route's inbox */
	SHMR_EP_QUARANTINED = 2, /* a ring was found corrupted; not polled */
};

/* Endpoint kinds. */
enum shmr_ep_kind {
	SHMR_EPK_CLIENT = 1, /* opened by an attached process */
	SHMR_EPK_ROUTE = 2,  /* a route's inbox: survives its worker */
	SHMR_EPK_ROUTER = 3, /* a router: served by the dataplane, no lanes used */
};

/*
 * One endpoint slot, in the domain part (read-only for peers).  The first
 * line is written by the control plane only (under the spec seqcount when
 * it changes gen/state); the second by the dataplane only; the third
 * (struct shmr_ep_figs) by the control plane only.
 */
struct shmr_ep_shared {
	/* enum shmr_ep_state */
	alignas(SHMR_CACHE_LINE) _Atomic(uint32_t) state;
	uint32_t gen;
	uint32_t kind;   /* enum shmr_ep_kind */
	int32_t os_pid;  /* owner process, 0 when none */
	char name[SHMR_NAME_MAX];
	alignas(SHMR_CACHE_LINE) _Atomic(uint32_t) quarantined; /* dataplane */
	uint32_t pad0;
	/* dataplane: slots dropped from its lanes */
	_Atomic(uint64_t) bad_slots;
	/* Third line: the control plane's figures of the slot, for every
	 * reader of the domain (the dataplane's telemetry answers the
	 * registry's counters from them, as shmrctl does). */
	alignas(SHMR_CACHE_LINE) struct shmr_ep_figs figs;
};
static_assert(sizeof(struct shmr_ep_shared) == 3 * SHMR_CACHE_LINE, "ep size");

/* What of an endpoint slot its owner writes (struct shmr_ep_peer). */
#include <shmr/ep_peer.h>

/* The routing specification (struct shmr_spec and its parts). */
#include <shmr/spec.h>

/* The dataplane's counters (struct shmr_lcore_stats, struct shmr_ep_ctr). */
#include <shmr/stats.h>

/* Control-lane messages (struct shmr_msg.type, kind SEND). */
enum shmr_ctl_type {
	SHMR_CTL_SPEC = 1,     /* spec changed; key = new version */
	SHMR_CTL_SHUTDOWN = 2, /* dataplane: stop cleanly */
};

/* Poll modes (hdr.poll_mode). */
enum shmr_poll_mode {
	SHMR_POLL_ADAPTIVE = 0, /* spin briefly, then sleep on a bell */
	SHMR_POLL_BUSY = 1,     /* never sleep */
};

/* Lanes of an endpoint, by index: [0, nlcores) inbound from lcore i. */
#define SHMR_LANE_OUT(nlcores) (nlcores)            /* endpoint -> dataplane */
#define SHMR_LANE_OUT_HIGH(nlcores) ((nlcores) + 1) /* high/max priority */
#define SHMR_LANES_PER_EP(nlcores) ((nlcores) + 2)

/*
 * One size class of the payload arena, as the creator placed it (in the
 * header, so in the daemons' part: peers read it, never write it).  Both
 * offsets are from the domain's base and lie in the lanes part.
 */
struct shmr_arena_class {
	uint32_t size;      /* bytes per buffer: a power of two */
	uint32_t count;     /* buffers */
	uint64_t words_off; /* count owner words (_Atomic uint64_t) */
	uint64_t data_off;  /* count * size bytes of buffers */
};

/*
 * Per class of the arena, in the lanes part (arena_off): what allocators
 * count.  Peers write it (one relaxed add per failed allocation), so it is
 * shown, never trusted.
 */
struct shmr_arena_stats {
	alignas(SHMR_CACHE_LINE) _Atomic(uint64_t) alloc_failures;
};

struct shmr_domain_hdr {
	uint64_t magic;
	uint32_t layout_version;
	/* Written last by the creator with release [R0]; attachers load it
	 * with acquire [A0] before reading anything else. */
	_Atomic(uint32_t) ready;
	uint64_t size;
	char name[SHMR_NAME_MAX];
	uint32_t slot_size;   /* bytes per ring element, header included */
	uint32_t lane_size;   /* ring entries (power of two) */
	uint32_t nlcores;     /* routing lcores */
	uint32_t max_endpoints;
	uint32_t poll_mode;   /* enum shmr_poll_mode */
	uint32_t spin_polls;  /* empty polls before sleeping (adaptive) */
	uint64_t lane_stride; /* bytes between lanes (ring memsize, aligned) */
	uint64_t ep_off, spec_off, counters_off, ctl_off, lanes_off;
	/* Where the lanes part begins (the domain memfd's size; a multiple
	 * of 2 MiB, so either part can be hugetlb), and its lcore bells and
	 * endpoint peer blocks. */
	uint64_t peer_off, bells_off, eppeer_off;
	_Atomic(int32_t) control_pid;   /* OS pids, for shmrctl and tests */
	_Atomic(int32_t) dataplane_pid;
	_Atomic(uint64_t) dataplane_starts;
	/* The control plane's admin endpoint (slot | gen << 32; 0: none),
	 * where the dataplane puts high/max-priority messages to a router
	 * and sends that failed routing (SHMR_F_ROUTE_FAILED).  Stored once
	 * by shmr-control with release before it starts the dataplane;
	 * loaded with acquire by the lcores. */
	_Atomic(uint64_t) admin_pid;
	/* Where the lcores' work bits begin (lanes part; see above). */
	uint64_t work_off;
	/* The dataplane's update thread sleeps here (control lane).  The
	 * lcores' bells, which endpoints ring, are in the lanes part
	 * (bells_off). */
	struct shmr_bell ctl_bell;
	/* The payload arena: its classes (0: no arena) and where it lies
	 * (the end of the lanes part).  Constant after creation. */
	uint32_t arena_nclasses;
	uint32_t arena_pad;
	uint64_t arena_off, arena_size;
	struct shmr_arena_class arena[SHMR_ARENA_MAX_CLASSES];
	/* The endpoints' sojourn histograms (struct shmr_hist[N], lanes
	 * part). */
	uint64_t hist_off;
	/* The TSC's ticks a second, measured by shmr-control when it
	 * created the domain: how receivers turn a stamp into nanoseconds.
	 * 0: senders do not stamp (the configuration's `sojourn = false`, or
	 * no usable TSC). */
	uint64_t tsc_hz;
	/* The lcores' per-endpoint counters (struct shmr_ep_ctr, domain
	 * part). */
	uint64_t epctr_off;
	/* Under the spec's seqcount, in the domain part: the registry
	 * (max_names entries, the spec's nreg used) and the routers' type
	 * and call maps (max_types entries each: shmr_spec_types_at()). */
	uint32_t max_names;
	uint32_t names_pad;
	uint64_t names_off;
	uint32_t max_types;
	/* The spec's routers (shmr_spec_size()) and type-map pairs
	 * (shmr_spec_types_size()): the configuration's max_routers. */
	uint32_t max_routers;
	uint64_t types_off;
	/* The routers' routes and hash/routee names, under the spec's
	 * seqcount in the domain part: per router slot, max_routes routes
	 * then max_routes names (shmr_spec_routes_at(), shmr_spec_hash_at()). */
	uint32_t max_routes;
	uint32_t routes_pad;
	uint64_t routes_off;
	/* The spec's active list (max_endpoints entries, its nactive used),
	 * under its seqcount in the domain part. */
	uint64_t active_off;
};

/*
 * The layout pinned: every size, alignment and offset above is checked
 * with static_assert against the table in shmr/layout_pin.def, in every
 * part that includes this header.  A change to the layout fails to
 * compile: then bump SHMR_LAYOUT_VERSION_DIGITS (an old peer's ATTACH
 * fails with SHMR_E_VERSION instead of reading the wrong bytes) and write
 * the new values in the table; the first assert insists on both.
 */
static_assert(SHMR_LAYOUT_VERSION == 21u,
	      "a new layout version: pin its sizes and offsets");
#define SHMR_LAYOUT_SIZE(s, size, align)                                   \
	static_assert(sizeof(struct s) == (size) &&                        \
			      alignof(struct s) == (align),                \
		      "struct " #s " changed: bump SHMR_LAYOUT_VERSION");
#define SHMR_LAYOUT_PIN(s, f, off, size)                                   \
	static_assert(offsetof(struct s, f) == (off) &&                    \
			      sizeof(((struct s *)0)->f) == (size),        \
		      "struct " #s "." #f " moved: bump SHMR_LAYOUT_VERSION");
/* A flexible array member has an offset, no size. */
#define SHMR_LAYOUT_OFFSET(s, f, off)                                      \
	static_assert(offsetof(struct s, f) == (off),                      \
		      "struct " #s "." #f " moved: bump SHMR_LAYOUT_VERSION");
#include <shmr/layout_pin.def>
#undef SHMR_LAYOUT_SIZE
#undef SHMR_LAYOUT_PIN
#undef SHMR_LAYOUT_OFFSET

#endif
