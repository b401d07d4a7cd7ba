/*
 * shmr-dataplane's core: the routing table, the routing decisions and the
 * per-burst forwarding function.  Internal to the dataplane (and its unit
 * tests); not for direct inclusion by other parts.
 *
 * Nothing here calls rte_eal_init(): the lanes are used through DPDK's
 * inline ring API only, so the tests link this code without EAL.  main.c
 * adds EAL, the lcores and the update thread.
 *
 * The model:
 *   - struct shmr_dp_env is the dataplane's private copy of the domain's
 *     geometry, taken once at start after shmr_layout_check().  Peers can
 *     scribble on the shared header; the fast path never reads it again.
 *   - struct shmr_dp_table is a private heap object built by the update
 *     thread from a seqcount-consistent copy of the spec.  Lcores read it
 *     under liburcu QSBR; it is immutable once published, except each
 *     lcore's own poll list (quarantine and backpressure flags), which only
 *     that lcore writes.
 *   - struct shmr_dp_lcore is one routing lcore's private state: its burst
 *     buffer, the bells it owes and its log rate limiter.
 */
#ifndef SHMR_DATAPLANE_INTERNAL_H
#define SHMR_DATAPLANE_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/behaviour.h>
#include <shmr/domain.h>
#include <shmr/layout.h>

#include "balance.h"
#include "collect.h"
#include "logic.h"

struct rte_ring;

#define SHMR_DP_BURST 32u    /* slots peeked per lane per round */
#define SHMR_DP_MAX_HOPS 4u  /* routers one message may pass through */
#define SHMR_DP_TABLE_MAGIC 0x314c425450445348ull  /* "SHDPTBL1" */
#define SHMR_DP_TABLE_POISON 0xdeadf00ddeadf00dull /* a freed table */

/* Log levels (--log-level). */
enum shmr_dp_level {
	SHMR_DP_LOG_ERROR = 1,
	SHMR_DP_LOG_WARNING = 2,
	SHMR_DP_LOG_INFO = 3,
	SHMR_DP_LOG_DEBUG = 4,
};

/** The dataplane's private view of one domain mapping. */
struct shmr_dp_env {
	void *base;
	size_t map_size;
	uint32_t slot_size, lane_size, nlcores, max_endpoints;
	uint32_t poll_mode, spin_polls;
	uint64_t lane_stride, ep_off, spec_off, counters_off, ctl_off,
		lanes_off;
	char name[SHMR_NAME_MAX];
	/* Where the core reports what it decided to drop or quarantine.
	 * Context: any dataplane thread; must be thread-safe.  NULL: silent. */
	void (*log)(void *ctx, int level, const char *line);
	void *log_ctx;
};

/**
 * Check a mapping (shmr_layout_check()) and take the private copy of its
 * geometry.
 *
 * Errors: -SHMR_E_PROTO, -SHMR_E_VERSION, -EINVAL (geometry unusable).
 */
int shmr_dp_env_init(struct shmr_dp_env *env, void *base, size_t map_size);

static inline struct shmr_ep_shared *shmr_dp_ep(const struct shmr_dp_env *e,
						uint32_t slot)
{
	return (struct shmr_ep_shared *)((char *)e->base + e->ep_off) + slot;
}

static inline struct rte_ring *shmr_dp_lane(const struct shmr_dp_env *e,
					    uint32_t slot, uint32_t idx)
{
	uint64_t n = (uint64_t)slot * SHMR_LANES_PER_EP(e->nlcores) + idx;

	return (struct rte_ring *)((char *)e->base + e->lanes_off +
				   n * e->lane_stride);
}

static inline struct shmr_lcore_stats *
shmr_dp_stats(const struct shmr_dp_env *e, uint32_t lcore)
{
	return (struct shmr_lcore_stats *)((char *)e->base + e->counters_off) +
	       lcore;
}

static inline struct shmr_spec *shmr_dp_spec(const struct shmr_dp_env *e)
{
	return (struct shmr_spec *)((char *)e->base + e->spec_off);
}

static inline struct rte_ring *shmr_dp_ctl_lane(const struct shmr_dp_env *e)
{
	return (struct rte_ring *)((char *)e->base + e->ctl_off);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */

/* What a name (or a PID) resolves to. */
enum shmr_dp_verdict {
	SHMR_DP_DELIVER = 0, /* to slot/gen, or into router `router` */
	SHMR_DP_DISCARD = 1, /* the decision discarded it */
	SHMR_DP_FAIL = 2,    /* err says why */
	SHMR_DP_BROADCAST = 3, /* to every routee of router `router` */
	SHMR_DP_COLLECT = 4,   /* a call router `router` collects the reply
				* of (scatter-gather, tail-chopping) */
	SHMR_DP_BALANCE = 5,   /* into router `router`'s balancing queue */
};

struct shmr_dp_target {
	uint8_t verdict; /* enum shmr_dp_verdict */
	int8_t router;   /* DELIVER: >= 0 when the target is a router */
	uint8_t ask;     /* a route with no worker: ask the control plane for
			  * one (slot is then the route's inbox, whatever
			  * the verdict) */
	uint8_t pad;
	int32_t err;     /* FAIL: -SHMR_E_* */
	uint32_t slot, gen;
	const char *name; /* the name it came from (inside the table), or NULL */
};

/* Endpoint slot as the table sees it. */
struct shmr_dp_ep {
	uint32_t gen;
	uint8_t state;  /* enum shmr_ep_state */
	uint8_t kind;   /* enum shmr_ep_kind */
	int8_t router;  /* router index when the slot is a router, else -1 */
	uint8_t pad;
};

/* An open-addressed name -> target map; the hash is computed at build. */
struct shmr_dp_dict_ent {
	uint32_t hash;
	uint32_t len; /* 0: empty */
	const char *name;
	const struct shmr_dp_target *target;
};

#define SHMR_DP_DICT_ROUTES 64u /* >= 2 * SHMR_MAX_ROUTES */
#define SHMR_DP_DICT_REG 256u   /* >= 2 * SHMR_MAX_REGISTRY */

struct shmr_dp_type_ent {
	uint32_t type;
	struct shmr_dp_target target;
};

/*
 * One routee of a routing-logic router: a name that resolved, at build, to
 * a deliverable target (a running or dead route, a live registry name).
 * For smallest-mailbox, where its load is read: its inbound lanes (one per
 * lcore) and its shared endpoint line; NULL when the target is a router.
 */
struct shmr_dp_routee {
	struct shmr_dp_target tgt;
	const struct shmr_ep_shared *ep;
	const struct rte_ring *in[SHMR_MAX_LCORES];
};

struct shmr_dp_router {
	char name[SHMR_NAME_MAX];
	struct shmr_pid pid;
	uint32_t behaviour; /* enum shmr_behaviour_kind */
	uint32_t flags;     /* SHMR_RF_* */
	uint32_t nroutes, ntypes, nhash;
	const struct shmr_spec_route *routes; /* in the table's spec copy */
	struct shmr_dp_target route_tgt[SHMR_MAX_ROUTES];
	struct shmr_dp_dict_ent route_dict[SHMR_DP_DICT_ROUTES];
	struct shmr_dp_type_ent types[SHMR_MAX_TYPES]; /* sorted by type */
	struct shmr_dp_target hash_tgt[SHMR_MAX_ROUTES];
	/* calls by type, when ncall_types > 0 (every built-in behaviour) */
	uint32_t ncall_types;
	struct shmr_dp_type_ent call_types[SHMR_MAX_TYPES]; /* sorted */
	/* The routing logics: the routees taking part, in list order (a
	 * pool's routees, in creation order, once pools fill the list). */
	uint32_t nroutees;
	struct shmr_dp_routee routees[SHMR_MAX_ROUTES];
	struct shmr_logic_chash *ring; /* consistent-hash; owned, or NULL */
	struct shmr_logic_chash_index *ring_ix; /* in ring's allocation */
	struct shmr_dp_target bcast_tgt; /* broadcast: BROADCAST into us */
	struct shmr_dp_target collect_tgt; /* scatter-gather, tail-chopping
					    * calls: COLLECT into us (or FAIL
					    * when within is out of range) */
	struct shmr_dp_target balance_tgt; /* balancing: BALANCE into us */
	/* What a broadcast delivers to, one copy each (the broadcast and
	 * scatter-gather logics, the Broadcast envelope), and what
	 * tail-chopping and balancing pick from: the routees taking part,
	 * or a type/hash/dso router's own deliverable routes; never a
	 * router, never one inbox twice. */
	uint32_t nbc;
	struct shmr_dp_target bc[SHMR_MAX_ROUTES];
	uint64_t within_ns, interval_ns; /* scatter-gather, tail-chopping */
	/* SHMR_BEH_DSO, and a consistent-hash router's dso */
	void *dl;
	const struct shmr_behaviour *ops; /* NULL: discard everything */
	void *state;
	/* consistent-hash: the object's message_key (ABI >= 2) and its
	 * state; key.key NULL (no dso, or none in it): msg->key */
	struct shmr_logic_key_fn key;
};

/* One polled endpoint of one lcore. */
struct shmr_dp_poll {
	uint32_t slot, gen;
	struct rte_ring *out, *out_high;
	struct shmr_ep_shared *ep;
	/* Written by the owning lcore only. */
	uint8_t quarantined; /* skip until the table is rebuilt */
	uint8_t blocked;     /* last round stopped on a full target lane */
};

struct shmr_dp_poll_list {
	alignas(SHMR_CACHE_LINE) uint32_t n;
	struct shmr_dp_poll e[SHMR_MAX_ENDPOINTS];
};

struct shmr_dp_table {
	uint64_t magic;   /* SHMR_DP_TABLE_MAGIC; POISON once freed */
	uint64_t version; /* spec version it was built from */
	uint64_t seq;     /* spec seqcount value it was read at */
	uint32_t nlcores, max_endpoints;
	uint32_t nrouters, nreg;
	uint32_t lane_cap; /* entries an inbound lane holds (lane_size - 1) */
	struct shmr_dp_ep ep[SHMR_MAX_ENDPOINTS];
	struct shmr_dp_router routers[SHMR_MAX_ROUTERS];
	struct shmr_dp_target reg_tgt[SHMR_MAX_REGISTRY];
	struct shmr_dp_dict_ent reg_dict[SHMR_DP_DICT_REG];
	struct shmr_dp_poll_list lists[SHMR_MAX_LCORES];
	struct shmr_spec spec; /* the copy every name above points into */
};

/**
 * Build a table from the domain's current spec and endpoint table.
 * Reads the spec under its seqcount, without waiting on a writer that
 * might have died mid-write; dlopen()s and initialises DSO behaviours;
 * re-checks the lanes of quarantined endpoints (clearing the mark of those
 * found sound again).
 *
 * Context:   the update thread (or a test).  Blocking (dlopen, malloc).
 * Ownership: *out is the caller's; release with shmr_dp_table_free() only
 *            after a grace period once it was published.
 * Errors:    -EAGAIN (the spec stayed mid-write: retry later), -ENOMEM.
 *            A bad entry in the spec is not an error: it is logged and
 *            left out (a DSO that fails to load makes its router discard).
 */
int shmr_dp_table_build(const struct shmr_dp_env *env,
			struct shmr_dp_table **out);

/**
 * Free a table: finalise and unload its DSO behaviours, poison it, free.
 * Context: no reader can hold @p t (a grace period has elapsed).
 */
void shmr_dp_table_free(struct shmr_dp_table *t);

/** FNV-1a of a name's first @p len bytes (how the dictionaries hash). */
uint32_t shmr_dp_name_hash(const char *s, size_t len);

/**
 * Resolve @p name as router @p router would: its owned routes first, then
 * the registry.  Unknown names fail with -SHMR_E_PROCESS_UNKNOWN.
 *
 * Context: inside the read-side section that holds @p t.  Wait-free.
 * Returns: a target inside @p t (or a static one); never NULL.
 */
const struct shmr_dp_target *
shmr_dp_resolve_rcu(const struct shmr_dp_table *t, unsigned router,
		    const char *name);

/*
 * What one routing lcore keeps for the routing logics between messages.
 * Private to that lcore: no shared write per message.
 */
struct shmr_dp_pick {
	/* round-robin: one counter per router, by the router's endpoint
	 * slot, so a table swap keeps the sequence going */
	uint64_t rr[SHMR_MAX_ENDPOINTS];
	/* smallest-mailbox: *pend_n slots this lcore has decided for
	 * endpoint *pend_slot and not enqueued yet (the open run of the burst
	 * being forwarded), counted as queued there.  Set once per burst to
	 * the run's own fields, so the forwarding loop stores nothing per
	 * slot; NULL outside a burst. */
	const uint32_t *pend_slot;
	const unsigned *pend_n;
};

/** What a routing decision (with its router-of-routers hops) came to. */
struct shmr_dp_decision {
	uint32_t verdict; /* enum shmr_dp_verdict */
	int32_t err;      /* FAIL: -SHMR_E_* */
	uint32_t slot, gen; /* DELIVER: the endpoint it goes to */
	uint32_t bcast;     /* BROADCAST, COLLECT, BALANCE: index of the
			     * router whose routees all get it, that
			     * collects its reply, that queues it */
	uint32_t ask_slot;  /* a route inbox with no worker that the message
			     * was routed to (lazy restart), or UINT32_MAX */
	uint32_t flags;     /* SHMR_RF_* of the last router that decided */
	uint32_t nrouters;  /* routers that decided, first to last */
	uint32_t routers[SHMR_DP_MAX_HOPS];
	const char *name; /* the last name chosen (NULL on discard) */
};

/*
 * The type map's target for @p type (a binary search of the sorted map),
 * or NULL when the type is not mapped.
 */
static inline const struct shmr_dp_target *
shmr_dp_type_find(const struct shmr_dp_type_ent *map, uint32_t n,
		  uint32_t type)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (map[mid].type == type)
			return &map[mid].target;
		if (map[mid].type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The decisions that need nothing but the message and router @p r's
 * table: a call by its type when the router has a call map, else the
 * hash and type behaviours.  Inline, so that the forwarding loop's fast
 * path (forward.c, classify()) and decide_one() decide the same way.
 * Returns NULL when the router decides otherwise (a routing logic, a
 * DSO) or when the type is not mapped (decide_one() discards it).
 */
static inline const struct shmr_dp_target *
shmr_dp_decide_stateless(const struct shmr_dp_router *r,
			 const struct shmr_msg *m)
{
	if (r->ncall_types > 0 && m->kind == SHMR_KIND_CALL &&
	    r->behaviour != SHMR_BEH_DSO)
		return shmr_dp_type_find(r->call_types, r->ncall_types,
					 m->type);
	if (r->behaviour == SHMR_BEH_HASH)
		return r->nhash ? &r->hash_tgt[m->key % r->nhash] : NULL;
	if (r->behaviour == SHMR_BEH_TYPE)
		return shmr_dp_type_find(r->types, r->ntypes, m->type);
	return NULL;
}

/**
 * Run router @p router's decision for @p m (route_message for a send,
 * route_call for a call), following routers of routers in the same pass.
 * A message may pass at most SHMR_DP_MAX_HOPS routers in all (m->hops
 * counts those it passed before); one more fails with -SHMR_E_NO_ROUTE.
 * A broadcast router ends the pass with SHMR_DP_BROADCAST: the caller
 * delivers to each of its routees.
 *
 * Context:     inside the read-side section that holds @p t.  Wait-free
 *              for the built-in behaviours; a DSO behaviour runs its
 *              callback.
 * Concurrency: @p pk is the calling lcore's own (round-robin counters);
 *              smallest-mailbox reads routees' lane indices and busy
 *              flags, relaxed.  random draws from rte_rand(), per lcore.
 */
void shmr_dp_decide_rcu(const struct shmr_dp_table *t, struct shmr_dp_pick *pk,
			unsigned router, const struct shmr_msg *m,
			struct shmr_dp_decision *d);

/**
 * dlopen() the behaviour at @p path, check its ABI (1 to
 * SHMR_BEHAVIOUR_ABI) and run its init() with @p arg; on success r->dl,
 * r->ops and r->state are set, and r->key to the object's message_key
 * (ABI >= 2; NULL when it has none).  A "dso" router (r->behaviour
 * SHMR_BEH_DSO) needs route_message or route_call; another router (a
 * consistent-hash one, for its key function) does not.
 * Context:   the update thread, building a table.  Blocking.
 * Ownership: undone by shmr_dp_behaviour_unload() when the table is freed.
 * Errors:    -ENOENT (no object or no symbol), -EPROTO (other ABI),
 *            -EINVAL, or what init() returned; @p why says which.
 */
int shmr_dp_behaviour_load(struct shmr_dp_router *r, const char *path,
			   const char *arg, char *why, size_t whylen);

/** fini() and dlclose(); nothing when nothing was loaded. */
void shmr_dp_behaviour_unload(struct shmr_dp_router *r);

/**
 * One decision of router @p router alone (no router-of-routers hop).
 * Context: as shmr_dp_decide_rcu().
 * Returns: its target (DELIVER may name another router, BROADCAST names
 *          the router itself); never NULL.
 */
const struct shmr_dp_target *
shmr_dp_behaviour_decide_rcu(const struct shmr_dp_table *t,
			     struct shmr_dp_pick *pk, unsigned router,
			     const struct shmr_msg *m);


/* ------------------------------------------------------------------ */
/* Publication (the table swap)                                        */

/** The pointer lcores read the current table through. */
struct shmr_dp_current {
	struct shmr_dp_table *table; /* rcu_dereference / rcu_xchg_pointer */
};

/**
 * The current table: rcu_dereference() (pairs with [P1] in
 * shmr_dp_table_publish()); an acquire load in ThreadSanitizer builds.
 * Context: a registered QSBR reader, online, until its next quiescent state.
 */
struct shmr_dp_table *shmr_dp_table_get_rcu(struct shmr_dp_current *c);

/**
 * Publish @p t (rcu_assign_pointer semantics), wait for a grace period
 * (synchronize_rcu) and return the previous table, which no reader holds
 * any more: the caller frees it.
 * Context: the update thread; not a registered reader.  Blocking.
 */
struct shmr_dp_table *shmr_dp_table_publish(struct shmr_dp_current *c,
					    struct shmr_dp_table *t);

/**
 * Announce a QSBR quiescent state (rcu_quiescent_state()), telling
 * ThreadSanitizer about the grace period it ends.
 * Context: a registered reader, once per poll loop, holding no table.
 */
void shmr_dp_quiescent(void);

/** rcu_thread_offline(), with the same annotation. */
void shmr_dp_offline(void);

/** rcu_thread_online(). */
void shmr_dp_online(void);

/* ------------------------------------------------------------------ */
/* Forwarding                                                          */

enum shmr_dp_event {
	SHMR_DP_EV_BAD,
	SHMR_DP_EV_QUARANTINE,
	SHMR_DP_EV_FAILED,
	SHMR_DP_EV_DISCARDED,
	SHMR_DP_EV_MAX
};

struct shmr_dp_ratelimit {
	uint64_t next_ns;   /* no line before this time */
	uint64_t suppressed;
};

/* Per slot of the burst: what to count once the slot is handled. */
struct shmr_dp_meta {
	uint8_t what;     /* forward, error reply, drop, bad (forward.c) */
	uint8_t verdict;  /* refused: SHMR_DP_DISCARD or SHMR_DP_FAIL */
	uint8_t nrouters;
	uint8_t why;      /* bad: which check failed */
	uint8_t fail_full; /* routed by a router with SHMR_RF_FAIL_WHEN_FULL:
			    * a full target fails it, never holds it back */
	uint8_t bcast;    /* META_BCAST: index of the broadcasting router;
			   * META_COLLECT, META_BALANCE, META_COLLECTED: of
			   * the collecting or balancing router */
	uint8_t pad[2];
	int32_t err;      /* refused: -SHMR_E_* */
	uint32_t target;  /* slot it is enqueued to */
	uint32_t routers[SHMR_DP_MAX_HOPS]; /* router endpoint slots */
	const char *name; /* the name the last router chose */
};

/* A balancing router's queue on one lcore (balance.h), in private memory
 * allocated at the router's first message on this lcore. */
struct shmr_dp_bal {
	struct shmr_pid router; /* whose queue it is */
	void *mem;              /* NULL: not allocated yet */
	struct shmr_dp_balance q;
};

/* Messages a balancing routee may hold from one lcore (K): 1, so a worker
 * is handed its next message only once it is done with the last. */
#define SHMR_DP_BALANCE_CREDIT 1u

/* Entries of a ring between two lcores (replies for a collector of the
 * other lcore). */
#define SHMR_DP_XRING_SIZE 256u

/** One routing lcore's private state. */
struct shmr_dp_lcore {
	const struct shmr_dp_env *env;
	uint32_t index;
	struct shmr_lcore_stats *stats;
	unsigned char *buf; /* SHMR_DP_BURST * slot_size */
	struct shmr_dp_meta meta[SHMR_DP_BURST];
	uint64_t bells[SHMR_MAX_ENDPOINTS / 64]; /* owed this round */
	uint64_t checked[SHMR_MAX_ENDPOINTS / 64]; /* inbound lanes found
						      sound this burst */
	unsigned nblocked; /* lanes left blocked by backpressure this round */
	uint64_t ask_next_ns[SHMR_MAX_ENDPOINTS]; /* lazy-restart asks: the
						   * next one for a slot not
						   * before then */
	struct shmr_dp_ratelimit rl[SHMR_DP_EV_MAX];
	struct shmr_dp_pick pick; /* the routing logics' own state */
	/* Broadcast progress, by source endpoint slot: the head slot of its
	 * lane (ring position pos) was held back by a full routee after
	 * reaching the routees whose inbox slots are marked in `served`.
	 * Applies only while that same slot is broadcast by the same
	 * router again, so a table swap in between cannot make a routee
	 * get it twice (see forward.c). */
	struct shmr_dp_bcast_progress {
		uint8_t active;
		uint8_t high;        /* on the high-priority lane */
		uint32_t gen;        /* the source endpoint's gen */
		uint32_t pos;        /* ring position of the held slot */
		uint32_t router;     /* broadcasting router's endpoint slot */
		uint64_t served[SHMR_MAX_ENDPOINTS / 64];
	} bcast[SHMR_MAX_ENDPOINTS];
	/* Scatter-gather and tail-chopping: the calls in flight whose
	 * replies this lcore collects (collect.h); its memory. */
	struct shmr_dp_collector coll;
	void *coll_mem;
	/* Time for the collector: CLOCK_MONOTONIC in ns (vDSO, no syscall);
	 * a test may put its own clock here. */
	uint64_t (*clock_ns)(void);
	/* Replies that reached this lcore for another lcore's collector go
	 * to that lcore over xout[owner]; xin[j] brings lcore j's to us.
	 * In-process SPSC rings (shmr_dp_lcores_link()); NULL with one
	 * lcore.  xbells: lcores owed a bell for what we put in xout. */
	struct rte_ring *xin[SHMR_MAX_LCORES];
	struct rte_ring *xout[SHMR_MAX_LCORES];
	uint32_t xin_any; /* some xin[] exists */
	uint32_t xheld;   /* xin[j] stopped last round on a full caller lane */
	uint32_t xbells;
	/* Balancing queues, by router index; bal_active: those holding
	 * messages (bit i: router i). */
	struct shmr_dp_bal bal[SHMR_MAX_ROUTERS];
	uint32_t bal_active;
};

/**
 * Set up routing lcore @p index of @p env.
 * Errors: -ENOMEM, -EINVAL (index out of range).
 */
int shmr_dp_lcore_init(struct shmr_dp_lcore *lc, const struct shmr_dp_env *env,
		       uint32_t index);
void shmr_dp_lcore_fini(struct shmr_dp_lcore *lc);

/**
 * Give every pair of the @p n routing lcores @p lcs (index i at lcs[i]) a
 * ring each way, so a reply polled by one lcore reaches the lcore whose
 * collector waits for it.  The rings are private memory of this process
 * between two of its threads, initialised in place with rte_ring_init()
 * (single producer, single consumer): nothing crosses a process, and no
 * EAL memzone is needed.  Freed by shmr_dp_lcore_fini() of the receiver
 * (so the lcores are finished together).
 *
 * Context: before the lcores run.  Blocking (allocation).
 * Errors:  -ENOMEM, -EINVAL (n beyond SHMR_MAX_LCORES or an index that
 *          does not match its place).
 */
int shmr_dp_lcores_link(struct shmr_dp_lcore *const *lcs, unsigned n);

/**
 * How long an idle lcore may sleep: @p ms, shortened to wake for the
 * collector's next timer (rounded up to a whole ms) and to
 * BLOCKED-style 1 ms polling while a balancing queue holds messages
 * (a worker that frees up rings no bell).  0: do not sleep, a timer is
 * due.
 * Context: the lcore itself.  Reads the clock only with calls in flight.
 */
int shmr_dp_sleep_ms(struct shmr_dp_lcore *lc, int ms);

/**
 * Forward one burst from @p src, an outbound lane of polled endpoint @p p:
 * peek up to SHMR_DP_BURST slots, validate, route or deliver each into the
 * target's inbound lane of this lcore (From, Ref unchanged; hops counts
 * routers passed), answer failed and discarded calls, and release exactly
 * the slots handled.  A full target lane stops the burst there: the rest
 * stays in @p src for the next round.  A corrupted @p src quarantines @p p.
 *
 * Context:     the routing lcore of @p p, inside its read-side section
 *              holding @p t.
 * Concurrency: single consumer of @p src, single producer of every inbound
 *              lane numbered lc->index; wait-free.  Bells are only noted
 *              (rung by shmr_dp_ring_bells()).
 * Returns:     slots consumed (forwarded, discarded, failed or bad).
 */
unsigned shmr_dp_forward_burst_rcu(struct shmr_dp_lcore *lc,
				   const struct shmr_dp_table *t,
				   struct shmr_dp_poll *p, struct rte_ring *src);

/**
 * One poll loop: every endpoint of this lcore's list (high lane, then
 * normal lane), then the bells owed.
 * Context: as shmr_dp_forward_burst_rcu().  Returns: slots consumed.
 */
unsigned shmr_dp_poll_once_rcu(struct shmr_dp_lcore *lc,
			       struct shmr_dp_table *t);

/**
 * Ring the bells of the endpoints delivered to since the last call: one
 * seq_cst fence [B2] then shmr_bell_ring_fenced() each.
 */
void shmr_dp_ring_bells(struct shmr_dp_lcore *lc);

/**
 * Is there work on any lane this lcore polls (ignoring lanes blocked by
 * backpressure)?  The re-check between shmr_bell_prepare() and sleeping.
 * Context: as shmr_dp_forward_burst_rcu().
 */
int shmr_dp_has_work_rcu(const struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t);

/** Report an event through env->log, at most one line a second per kind. */
void shmr_dp_event(struct shmr_dp_lcore *lc, enum shmr_dp_event ev,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));


/** Format and log one line through @p env (no rate limit). */
void shmr_dp_log(const struct shmr_dp_env *env, int level, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));

/*
 * Single-writer counters: only the owning lcore writes them, readers sum,
 * so a relaxed load and store replace a locked RMW.  No partner: readers
 * take whatever value is current.
 */
static inline void shmr_dp_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(
		c, atomic_load_explicit(c, memory_order_relaxed) + n,
		memory_order_relaxed);
}

#endif
