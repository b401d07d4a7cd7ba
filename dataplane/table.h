/*
 * The routing table: a private heap object built by the update thread
 * from a seqcount-consistent copy of the spec, resolved in advance so that
 * the lcores do as little as possible per message (table.c's essay says
 * how and why).  Lcores read it under liburcu QSBR (rcu.h); it is
 * immutable once published, except each lcore's own poll list
 * (quarantine and backpressure flags), which only that lcore writes.
 *
 * Internal, not for direct inclusion outside dataplane/ (the dataplane's
 * unit tests and shmr-perf's decide mode excepted).
 */
#ifndef SHMR_DP_TABLE_H
#define SHMR_DP_TABLE_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/behaviour.h>
#include <shmr/layout.h>

#include "dataplane_internal.h"
#include "logic.h"

struct rte_ring;

#define SHMR_DP_TABLE_MAGIC 0x314c425450445348ull  /* "SHDPTBL1" */
#define SHMR_DP_TABLE_POISON 0xdeadf00ddeadf00dull /* a freed table */

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
	uint8_t ask;     /* a route with no worker: ask the control plane for
			  * one (slot is then the route's inbox, whatever
			  * the verdict) */
	int16_t router;  /* DELIVER: >= 0 when the target is a router (int16:
			  * room for a domain of more than 127 routers) */
	int32_t err;     /* FAIL: -SHMR_E_* */
	uint32_t slot, gen;
	const char *name; /* the name it came from (inside the table), or NULL */
};
static_assert(sizeof(struct shmr_dp_target) == 16 + sizeof(void *),
	      "a wider router index kept the target's size");

/* Endpoint slot as the table sees it. */
struct shmr_dp_ep {
	uint32_t gen;
	uint8_t state;  /* enum shmr_ep_state */
	uint8_t kind;   /* enum shmr_ep_kind */
	int16_t router; /* router index when the slot is a router, else -1 */
};
static_assert(sizeof(struct shmr_dp_ep) == 8, "table endpoint size");
/* A router index fits both (and lcore.h's uint8_t meta bcast, which the
 * routers past 256 would have to widen). */
static_assert(SHMR_MAX_ROUTERS <= 256, "router indexes fit int16 and uint8");

/* An open-addressed name -> target map; the hash is computed at build. */
struct shmr_dp_dict_ent {
	uint32_t hash;
	uint32_t len; /* 0: empty */
	const char *name;
	const struct shmr_dp_target *target;
};

#define SHMR_DP_DICT_ROUTES 256u /* >= 2 * SHMR_MAX_ROUTES */
static_assert(SHMR_DP_DICT_ROUTES >= 2 * SHMR_MAX_ROUTES &&
		      (SHMR_DP_DICT_ROUTES & (SHMR_DP_DICT_ROUTES - 1)) == 0,
	      "a router's route dictionary is a power of two, half empty");
/* The registry's dictionary: a power of two, at least 2 * max_names
 * (shmr_dp_dict_reg_cap()). */
static inline uint32_t shmr_dp_dict_reg_cap(uint32_t max_names)
{
	uint32_t c = 16;

	while (c < 2 * max_names)
		c *= 2;
	return c;
}

struct shmr_dp_type_ent {
	uint32_t type;
	struct shmr_dp_target target;
};

/*
 * One routee of a routing-logic router: a name that resolved, at build, to
 * a deliverable target (a running or dead route, a live registry name).
 * For smallest-mailbox, where its load is read: its inbound lanes (one per
 * lcore) and its owner's line (busy); NULL when the target is a router.
 */
struct shmr_dp_routee {
	struct shmr_dp_target tgt;
	const struct shmr_ep_peer *peer;
	const struct rte_ring *in[SHMR_MAX_LCORES];
};

struct shmr_dp_router {
	char name[SHMR_NAME_MAX];
	struct shmr_pid pid;
	uint32_t behaviour; /* enum shmr_behaviour_kind */
	uint32_t flags;     /* SHMR_RF_* */
	uint32_t nroutes, ntypes, nhash;
	/* nroutes of them, in the table's copy of the route region */
	const struct shmr_spec_route *routes;
	struct shmr_dp_target route_tgt[SHMR_MAX_ROUTES];
	struct shmr_dp_dict_ent route_dict[SHMR_DP_DICT_ROUTES];
	/* sorted by type; max_types entries each, in the table's
	 * allocation */
	struct shmr_dp_type_ent *types;
	struct shmr_dp_target hash_tgt[SHMR_MAX_ROUTES];
	/* calls by type, when ncall_types > 0 (every built-in behaviour) */
	uint32_t ncall_types;
	struct shmr_dp_type_ent *call_types; /* sorted */
	/* The routing logics: the routees taking part, in list order (a
	 * pool's routees, in creation order, once pools fill the list). */
	uint32_t nroutees;
	/* Owned (table_free): room for the router's candidates, its nhash
	 * names or nroutes routes, not SHMR_MAX_ROUTES (288 bytes each);
	 * NULL for a router with none. */
	struct shmr_dp_routee *routees;
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
	/* consistent-hash: the key's source (enum shmr_hash_key); from the
	 * payload, its bytes [key_off, key_off + key_len) (key_len 0: to
	 * its end), never past key_cap, the slot's payload capacity. */
	uint32_t key_from, key_off, key_len, key_cap;
};

/* One polled endpoint of one lcore. */
struct shmr_dp_poll {
	uint32_t slot, gen;
	struct rte_ring *out, *out_high;
	struct shmr_ep_shared *ep;
	/* Written by the owning lcore only. */
	uint8_t quarantined; /* skip until the table is rebuilt */
	uint8_t blocked;     /* last round stopped on a full target lane */
	uint8_t idle;        /* rounds in a row its work bit found it empty */
};

/* An lcore's polled endpoints; at[slot]: 1 + its index in e[], 0 when
 * this lcore does not poll that slot (how a work bit finds its entry).
 * e[] has room for every slot the lcore can poll (those of its residue,
 * max_endpoints / nlcores rounded up), at[] for every slot; both in the
 * table's allocation. */
struct shmr_dp_poll_list {
	alignas(SHMR_CACHE_LINE) uint32_t n;
	struct shmr_dp_poll *e;
	uint16_t *at;
};
static_assert(SHMR_MAX_ENDPOINTS < UINT16_MAX, "poll_list.at holds an index");

struct shmr_dp_table {
	uint64_t magic;   /* SHMR_DP_TABLE_MAGIC; POISON once freed */
	uint64_t version; /* spec version it was built from */
	uint64_t seq;     /* spec seqcount value it was read at */
	/* This process's count of tables built, at this one's build: never
	 * the same for two tables (an address can be, once one is freed;
	 * a version can be, for a rebuild of the same spec). */
	uint64_t build;
	uint32_t nlcores, max_endpoints;
	uint32_t nrouters, nreg;
	uint32_t lane_cap; /* entries an inbound lane holds (lane_size - 1) */
	struct shmr_dp_ep *ep; /* [max_endpoints], in the table's allocation */
	/* [max_routers] (the domain's), nrouters used; in the allocation */
	uint32_t max_routers;
	struct shmr_dp_router *routers;
	/* The registry: the copy (nreg of max_names entries), each entry's
	 * target, and the dictionary (reg_cap entries, a power of two at
	 * least twice max_names); all in the table's allocation. */
	uint32_t max_names, reg_cap;
	/* The spec's type maps: per router slot, max_types entries of its
	 * types then as many of its call_types (shmr_dp_table_types()). */
	uint32_t max_types;
	struct shmr_spec_type *types;
	/* The spec's routes and names: per router slot, max_routes routes
	 * then as many names (shmr_dp_table_routes(), shmr_dp_table_hash()). */
	uint32_t max_routes;
	void *routes;
	/* The spec's active list: max_endpoints entries, its nactive used */
	uint32_t *active;
	struct shmr_spec_reg *reg;
	struct shmr_dp_target *reg_tgt;
	struct shmr_dp_dict_ent *reg_dict;
	struct shmr_dp_poll_list lists[SHMR_MAX_LCORES];
	/* The copy every name above points into (with reg[]): room for
	 * max_routers routers (shmr_spec_size()), in the allocation. */
	struct shmr_spec *spec;
	size_t alloc_size; /* the whole allocation: this and the arrays */
};

/* Router slot @p ri's type map (@p call 0) or call map (1) in @p t's
 * copy of the spec. */
static inline struct shmr_spec_type *
shmr_dp_table_types(const struct shmr_dp_table *t, uint32_t ri, int call)
{
	return shmr_spec_types_at(t->types, t->max_types, ri, call);
}

/* Router slot @p ri's routes (max_routes, its nroutes used) and its hash
 * or routee names (max_routes, its nhash used) in @p t's copy. */
static inline struct shmr_spec_route *
shmr_dp_table_routes(const struct shmr_dp_table *t, uint32_t ri)
{
	return shmr_spec_routes_at(t->routes, t->max_routes, ri);
}

static inline char (*shmr_dp_table_hash(const struct shmr_dp_table *t,
					uint32_t ri))[SHMR_NAME_MAX]
{
	return shmr_spec_hash_at(t->routes, t->max_routes, ri);
}

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

#endif
