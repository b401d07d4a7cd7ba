/*
 * The routing specification in the domain: routers, their routes, type
 * maps and routee lists, the registry, and the words that name them
 * (behaviours, route states, router flags).  Part of the layout
 * (<shmr/layout.h> includes it, and pins every size and offset here);
 * not for direct inclusion.
 */
#ifndef SHMR_SPEC_H
#define SHMR_SPEC_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <shmr/shmr.h>

#ifndef SHMR_LAYOUT_H
#error "include <shmr/layout.h>, which defines the limits used here"
#endif

/* Routing behaviours. */
enum shmr_behaviour_kind {
	SHMR_BEH_TYPE = 1, /* message type -> route name */
	SHMR_BEH_HASH = 2, /* key % nhash -> route name */
	SHMR_BEH_DSO = 3,  /* shared object's route_message/route_call */
	/* The routing logics (Pekko's), over the router's routee list:
	 * hash[]/nhash names the routees, or nhash == 0: its own routes in
	 * order.  Routees that resolve to no deliverable target are left out;
	 * none left fails with SHMR_E_NO_ROUTEES. */
	SHMR_BEH_ROUND_ROBIN = 4,     /* per lcore counter % routees */
	SHMR_BEH_RANDOM = 5,          /* uniform */
	SHMR_BEH_SMALLEST_MAILBOX = 6, /* least queued, idle first */
	SHMR_BEH_BROADCAST = 7,       /* every routee, exactly once each */
	SHMR_BEH_CONSISTENT_HASH = 8, /* ring of vnodes per routee, by key */
	/* A call goes to every routee; the first reply (within within_ms)
	 * goes to the caller, the rest are dropped; a send goes to every
	 * routee, as broadcast. */
	SHMR_BEH_SCATTER_GATHER = 9,
	/* A call goes to one routee picked at random, then every
	 * interval_ms to one more not tried yet, until the first reply or
	 * within_ms; a send goes to one random routee. */
	SHMR_BEH_TAIL_CHOPPING = 10,
	/* A pool's shared mailbox, held by the dataplane: a message goes to
	 * a routee only when it has nothing outstanding from that lcore. */
	SHMR_BEH_BALANCING = 11,
};

/* virtual_nodes of a consistent-hash router (Pekko's default factor). */
#define SHMR_CHASH_VNODES_DEFAULT 10u
#define SHMR_CHASH_VNODES_MAX 1024u

/* Where a consistent-hash router takes a message's key from
 * (struct shmr_spec_router.hash_key). */
enum shmr_hash_key {
	SHMR_HASH_KEY_FIELD = 0,   /* msg->key (or the dso's message_key) */
	SHMR_HASH_KEY_PAYLOAD = 1, /* bytes of the payload */
};

/* How a consistent-hash ring hashes (struct shmr_spec_router.hash_mode):
 * its points and its keys.  dataplane/logic.h has the definitions. */
enum shmr_hash_mode {
	SHMR_HASH_MODE_SHMR = 0,  /* rte_jhash, seed "shmr", "<name>#<v>" */
	SHMR_HASH_MODE_PEKKO = 1, /* Pekko's ConsistentHash, key as bytes */
	SHMR_HASH_MODE_PEKKO_STRING = 2, /* Pekko's, key as a String */
};

/* within_ms of a scatter-gather or tail-chopping router: at most 1 hour. */
#define SHMR_WITHIN_MS_MAX 3600000u

/* Route states as the dataplane sees them. */
enum shmr_route_state {
	SHMR_ROUTE_RUNNING = 0,  /* forward into the route's inbox */
	SHMR_ROUTE_DEAD = 1,     /* worker down: inbox keeps queueing */
	SHMR_ROUTE_DISABLED = 2, /* fail with SHMR_E_DISABLED */
	SHMR_ROUTE_PENDING_DISABLE = 3,
	SHMR_ROUTE_PENDING_REPLACE = 4,
	SHMR_ROUTE_PENDING_REMOVE = 5,
	/* A pending replace whose old worker is gone and whose new one has
	 * not started (its start failed): fail with SHMR_E_BUSY, and ask the
	 * control plane to try the start again. */
	SHMR_ROUTE_REPLACE_WAIT = 6,
};

/*
 * Flags of a slot that only the dataplane sets, on slots it puts into the
 * control plane's admin endpoint (see include/shmr/shmr.h for the public
 * ones).  The dataplane clears all three on every slot a client sends
 * directly to an endpoint, so a client cannot forge them.
 */
#define SHMR_F_INTERNAL_MASK                                              \
	(SHMR_F_ROUTE_FAILED | SHMR_F_ROUTE_NAME | SHMR_F_WANT_WORKER)
/* A message was routed to a route with no worker (DEAD, whether its last
 * start failed or not, or REPLACE_WAIT): `to` is the route's inbox.  No
 * payload.  The lazy restart's trigger. */
#define SHMR_F_WANT_WORKER 0x40u

/* Router flags (struct shmr_spec_router.flags). */
#define SHMR_RF_FAIL_WHEN_FULL 0x1u /* a full route inbox fails the message
				      * with SHMR_E_MAILBOX_FULL instead of
				      * holding the sender back */
#define SHMR_RF_STOPPED 0x2u /* the router is stopped: everything sent to
			       * it fails with SHMR_E_NOT_ALLOWED */

struct shmr_spec_route {
	char name[SHMR_NAME_MAX];
	struct shmr_pid pid; /* the route's inbox endpoint */
	uint32_t state;      /* enum shmr_route_state */
	/* DEAD only: 0, or the error of the route's last failed start
	 * (-errno or -SHMR_E_*).  Then the dataplane fails what is routed
	 * there with it at once (a call's reply, a send's MessageRouteFailed)
	 * and asks for another start, instead of queueing into the inbox; what
	 * the inbox already holds waits for the next successful start.  Was
	 * padding (always 0): a dataplane that ignores it only queues. */
	int32_t start_err;
};
static_assert(sizeof(struct shmr_spec_route) == 48, "spec route size");

struct shmr_spec_type {
	uint32_t type;
	char target[SHMR_NAME_MAX]; /* a route or registry name */
};
static_assert(sizeof(struct shmr_spec_type) == 36, "spec type size");

struct shmr_spec_router {
	char name[SHMR_NAME_MAX];
	struct shmr_pid pid; /* the router's endpoint: clients send here */
	uint32_t behaviour;  /* enum shmr_behaviour_kind */
	uint32_t flags;      /* SHMR_RF_* */
	uint32_t nroutes;
	uint32_t ntypes;     /* SHMR_BEH_TYPE: entries in types[] */
	uint32_t nhash;      /* entries in hash[]: SHMR_BEH_HASH's list, or
			      * the routing logics' routee names (0: the
			      * router's own routes) */
	char dso[SHMR_DSO_PATH_MAX];  /* SHMR_BEH_DSO: path of the object */
	char dso_arg[SHMR_DSO_PATH_MAX]; /* passed to its init hook */
	/* The routes (nroutes of them) and the hash or routee names (nhash)
	 * are not here: the header's routes_off region holds them, max_routes
	 * of each a router (shmr_spec_routes_at(), shmr_spec_hash_at()); the
	 * type map (ntypes entries), the types_off region
	 * (shmr_spec_types_at()). */
	/* Every built-in behaviour (not SHMR_BEH_DSO): when ncall_types > 0,
	 * calls are routed by type through call_types[] and sends as the
	 * behaviour says (CQRS: commands by key, queries by type); the
	 * call map beside the type map (shmr_spec_types_at()). */
	uint32_t ncall_types;
	/* SHMR_BEH_CONSISTENT_HASH: ring points per routee, 1 to
	 * SHMR_CHASH_VNODES_MAX (0 or out of range: the default). */
	uint32_t vnodes;
	/* SHMR_BEH_SCATTER_GATHER and SHMR_BEH_TAIL_CHOPPING: a call's
	 * reply must come within within_ms (1 to SHMR_WITHIN_MS_MAX);
	 * tail-chopping tries one more routee every interval_ms (1 to
	 * within_ms).  Out of range: the router fails its calls. */
	uint32_t within_ms;
	uint32_t interval_ms;
	/* SHMR_BEH_CONSISTENT_HASH: the key's source (enum shmr_hash_key);
	 * for SHMR_HASH_KEY_PAYLOAD the payload bytes [key_offset,
	 * key_offset + key_length), key_length 0: to the payload's end.  A
	 * payload too short for them gives the bytes it has (none: the
	 * empty key). */
	uint32_t hash_key;
	uint32_t key_offset;
	uint32_t key_length;
	uint32_t hash_mode; /* enum shmr_hash_mode */
	/* Put before each routee's name on the ring (Pekko: the JVM
	 * side's actor path up to the routee's name); "" for none. */
	char node_prefix[SHMR_DSO_PATH_MAX];
};

struct shmr_spec_reg {
	char name[SHMR_NAME_MAX];
	struct shmr_pid pid;
};
static_assert(sizeof(struct shmr_spec_reg) == 40, "spec reg size");

/*
 * The routing specification: everything the dataplane's table is built from.
 * Written only by shmr-control; read by the dataplane's update thread (which
 * builds its private RCU table from a copy) and by clients (registry lookups).
 *
 * Seqcount protocol: the writer makes seq odd (store, then release fence
 * [S1]), writes, then makes it even with a release store [S2].  A reader
 * loads seq with acquire [S3, pairs with S2], copies, issues an acquire
 * fence [S4, pairs with S1], reloads seq, and retries on change or odd.
 * A reader waits for an even seq only until a deadline (SHMR_SPEC_WAIT_MS,
 * shm/domain.h): a peer that stored an odd seq cannot hang it; the writer
 * starts from an odd seq as from an even one, and so heals it.
 */
struct shmr_spec {
	alignas(SHMR_CACHE_LINE) _Atomic(uint64_t) seq;
	uint64_t version; /* bumped on every change; told over the control lane */
	uint32_t nrouters;
	uint32_t nreg;
	/* Entries of the active list: the endpoint slots to poll, not here
	 * but max_endpoints entries at the header's active_off, under this
	 * seqcount.  A copy takes its first nactive entries
	 * (shmr_spec_active_used()): what a change costs grows with the
	 * endpoints attached, not with max_endpoints. */
	uint32_t nactive;
	uint32_t pad;
	/* The registry is not here: max_names entries of struct
	 * shmr_spec_reg at the header's names_off, under this seqcount
	 * (shmr_spec_names_used()). */
	/* The header's max_routers of them (shmr_spec_size()), nrouters
	 * used; a copy takes those (each as far as it is used). */
	struct shmr_spec_router routers[];
};

/* The bytes of a spec with room for @p max_routers routers (the header's
 * max_routers): its size in the domain, and of every private copy.
 * Context: any; pure. */
static inline size_t shmr_spec_size(uint32_t max_routers)
{
	return offsetof(struct shmr_spec, routers) +
	       (size_t)max_routers * sizeof(struct shmr_spec_router);
}

/* Copy spec @p src into @p dst from byte @p from (0, or past seq for the
 * writer) as far as it is used: the counts and the first nrouters
 * routers, that count read once and bounded by @p max_routers, the room
 * both have (the reader's own copy of the header's max_routers, never the
 * shared header's); the rest of @p dst is left as it was.  The active
 * list, the registry and the routers' routes, names and maps are in
 * regions of their own (shmr_spec_active_used(), shmr_spec_names_used(),
 * shmr_spec_routes_copy(), the callers' type-map copies).  Context: any;
 * a reader inside its seqcount (a torn count is retried with the
 * rest). */
static inline void shmr_spec_copy(struct shmr_spec *dst,
				  const struct shmr_spec *src, size_t from,
				  uint32_t max_routers)
{
	/* Relaxed, once each: the seqcount orders them (S3/S4), and the
	 * values are bounded below. */
	uint32_t nr = __atomic_load_n(&src->nrouters, __ATOMIC_RELAXED);
	const size_t r0 = offsetof(struct shmr_spec, routers);

	if (nr > max_routers)
		nr = max_routers;
	if (from < r0)
		memcpy((char *)dst + from, (const char *)src + from, r0 - from);
	memcpy(dst->routers, src->routers,
	       (size_t)nr * sizeof(struct shmr_spec_router));
}

/* The bytes of an active list of @p nactive used entries (the spec's
 * nactive, read once by the caller) in a region of @p max_endpoints: a
 * copy of that many bytes from its start is a copy of the list.
 * Context: any. */
static inline size_t shmr_spec_active_used(uint32_t nactive,
					   uint32_t max_endpoints)
{
	return (size_t)(nactive < max_endpoints ? nactive : max_endpoints) *
	       sizeof(uint32_t);
}

/* The bytes of a registry of @p nreg used entries (the spec's nreg, read
 * once by the caller) in a region of @p max_names: a copy of that many
 * bytes from its start is a copy of the registry.  Context: any. */
static inline size_t shmr_spec_names_used(uint32_t nreg, uint32_t max_names)
{
	return (size_t)(nreg < max_names ? nreg : max_names) *
	       sizeof(struct shmr_spec_reg);
}

/* Router slot @p ri's type map (@p call 0) or call map (@p call 1) in a
 * type-map region at @p types (the header's types_off) of @p max_types
 * entries a map: max_types entries, its ntypes / ncall_types used.
 * @p ri < the header's max_routers.  Context: any. */
static inline struct shmr_spec_type *
shmr_spec_types_at(void *types, uint32_t max_types, uint32_t ri, int call)
{
	return (struct shmr_spec_type *)types +
	       ((size_t)ri * 2 + (call ? 1 : 0)) * max_types;
}

/* The bytes of one router's block in a route region of @p max_routes
 * a router: max_routes routes, then max_routes names. */
static inline size_t shmr_spec_routes_stride(uint32_t max_routes)
{
	return (size_t)max_routes *
	       (sizeof(struct shmr_spec_route) + SHMR_NAME_MAX);
}

/* Router slot @p ri's routes in a route region at @p routes (the
 * header's routes_off) of @p max_routes a router: max_routes entries,
 * its nroutes used.  @p ri < the header's max_routers.  Context: any. */
static inline struct shmr_spec_route *
shmr_spec_routes_at(void *routes, uint32_t max_routes, uint32_t ri)
{
	return (struct shmr_spec_route *)((char *)routes +
					  (size_t)ri *
						  shmr_spec_routes_stride(
							  max_routes));
}

/* Router slot @p ri's hash or routee names in the same region: max_routes
 * names after its routes, its nhash used.  Context: any. */
static inline char (*shmr_spec_hash_at(void *routes, uint32_t max_routes,
				       uint32_t ri))[SHMR_NAME_MAX]
{
	return (char (*)[SHMR_NAME_MAX])(shmr_spec_routes_at(routes,
							     max_routes, ri) +
					 max_routes);
}

/* The bytes of a route region of @p max_routes a router, for
 * @p max_routers routers. */
static inline size_t shmr_spec_routes_size(uint32_t max_routes,
					   uint32_t max_routers)
{
	return (size_t)max_routers * shmr_spec_routes_stride(max_routes);
}

/* Router @p r's routes (nroutes) and hash or routee names (nhash), each
 * read once (relaxed: as shmr_spec_copy()'s counts; @p r may be the
 * shared spec's router) and held below @p max_routes, the reader's own
 * copy of the header's.  Context: any. */
static inline uint32_t shmr_spec_nroutes(const struct shmr_spec_router *r,
					 uint32_t max_routes)
{
	uint32_t n = __atomic_load_n(&r->nroutes, __ATOMIC_RELAXED);

	return n < max_routes ? n : max_routes;
}

static inline uint32_t shmr_spec_nhash(const struct shmr_spec_router *r,
				       uint32_t max_routes)
{
	uint32_t n = __atomic_load_n(&r->nhash, __ATOMIC_RELAXED);

	return n < max_routes ? n : max_routes;
}

/* Copy router slot @p ri's routes and names from route region @p src to
 * @p dst (both of @p max_routes a router) as far as router @p r uses
 * them: its first nroutes routes and nhash names, each count read once
 * and bounded by max_routes; the rest of @p dst is left as it was.
 * Context: as shmr_spec_copy(). */
static inline void shmr_spec_routes_copy(void *dst, const void *src,
					 uint32_t max_routes, uint32_t ri,
					 const struct shmr_spec_router *r)
{
	uint32_t nq = shmr_spec_nroutes(r, max_routes);
	uint32_t nh = shmr_spec_nhash(r, max_routes);
	const size_t at = (size_t)ri * shmr_spec_routes_stride(max_routes);
	const size_t names = (size_t)max_routes *
			     sizeof(struct shmr_spec_route);

	memcpy((char *)dst + at, (const char *)src + at,
	       (size_t)nq * sizeof(struct shmr_spec_route));
	memcpy((char *)dst + at + names, (const char *)src + at + names,
	       (size_t)nh * SHMR_NAME_MAX);
}

/* The bytes of a type-map region of @p max_types entries a map, two maps
 * for each of @p max_routers routers. */
static inline size_t shmr_spec_types_size(uint32_t max_types,
					  uint32_t max_routers)
{
	return (size_t)max_routers * 2 * max_types *
	       sizeof(struct shmr_spec_type);
}

#endif
