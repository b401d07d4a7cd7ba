/*
 * The routing table: a private, immutable snapshot of the domain's spec,
 * pre-resolved so that the lcores do as little as possible per message.
 *
 * Invariants and why they hold:
 *   - A table is consistent with one version of the spec and endpoint
 *     table: it is built from a copy taken between two equal, even reads
 *     of the spec seqcount (S3/S4 in layout.h).  The copy is taken without
 *     waiting on a writer that may have died mid-write: after a bounded
 *     number of tries the build gives up with -EAGAIN and the dataplane
 *     keeps forwarding with the table it has.
 *   - Everything a reader follows points inside the table (names point
 *     into its own spec copy), or into a DSO's state that lives until the
 *     table is freed, so a table is self-contained for its grace period.
 *   - Names are resolved at build time wherever they are known then: every
 *     owned route, registry entry, type-map and hash entry carries its
 *     resolved target (deliver to slot/gen, into router i, or fail with a
 *     code).  Only names a DSO returns are looked up per message, in
 *     open-addressed dictionaries whose hashes were computed at build.
 *   - Resolution order is the router's owned routes, then the registry;
 *     an owned route shadows a registry entry of the same name whatever
 *     the route's state.
 *   - A routing-logic router's routees are the names of its list (or its
 *     own routes) that resolve to something deliverable when the table
 *     is built: running or dead routes (a dead one queues and asks for a
 *     worker), live registry names.  Disabled, pending-disable/remove
 *     and replace-wait routes, dead ones whose last start failed (they
 *     fail what is routed to them) and unknown names are left out until a
 *     rebuild finds them deliverable; so is a router named as a routee of
 *     a logic that delivers only to inboxes (broadcast, scatter-gather,
 *     tail-chopping, balancing).  A consistent-hash ring is built here
 *     from the routees' names (the only allocation besides the table)
 *     and freed with the table.
 *   - Every router has a broadcast set (bc[]): the inboxes a Broadcast
 *     envelope reaches, one copy each: a logic's routees that are not
 *     routers, or a type/hash/dso router's own deliverable routes.  The
 *     broadcast and scatter-gather logics deliver to it, tail-chopping
 *     and balancing pick from it.
 *   - Nothing read from the spec is trusted: counts are clamped, names are
 *     forced to end in NUL, PIDs are checked against the endpoint table,
 *     and a bad entry is logged and left out.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>

#include "dso.h"
#include "table.h"

#define SNAPSHOT_TRIES 2000

/* The configuration's range of virtual_nodes is the ring's. */
static_assert(SHMR_CHASH_VNODES_DEFAULT == SHMR_LOGIC_CHASH_VNODES_DEFAULT,
	      "vnodes default");
static_assert(SHMR_CHASH_VNODES_MAX == SHMR_LOGIC_CHASH_VNODES_MAX,
	      "vnodes range");

static const struct shmr_dp_target unknown_target = {
	.verdict = SHMR_DP_FAIL,
	.router = -1,
	.err = -SHMR_E_PROCESS_UNKNOWN,
};

uint32_t shmr_dp_name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* 1 when inserted, 0 when the name was already there (first one wins). */
static int dict_insert(struct shmr_dp_dict_ent *d, uint32_t cap,
		       const char *name, const struct shmr_dp_target *tgt)
{
	uint32_t len = (uint32_t)strnlen(name, SHMR_NAME_MAX);
	uint32_t h = shmr_dp_name_hash(name, len);

	for (uint32_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct shmr_dp_dict_ent *e = &d[i];

		if (e->len == 0) {
			*e = (struct shmr_dp_dict_ent){ h, len, name, tgt };
			return 1;
		}
		if (e->hash == h && e->len == len &&
		    memcmp(e->name, name, len) == 0)
			return 0;
	}
}

/* Never loops forever: a dictionary is at most half full. */
static const struct shmr_dp_target *
dict_find(const struct shmr_dp_dict_ent *d, uint32_t cap, const char *name,
	  uint32_t len, uint32_t h)
{
	for (uint32_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		const struct shmr_dp_dict_ent *e = &d[i];

		if (e->len == 0)
			return NULL;
		if (e->hash == h && e->len == len &&
		    memcmp(e->name, name, len) == 0)
			return e->target;
	}
}

const struct shmr_dp_target *
shmr_dp_resolve_rcu(const struct shmr_dp_table *t, unsigned router,
		    const char *name)
{
	size_t len = strnlen(name, SHMR_NAME_MAX);
	const struct shmr_dp_target *tgt = NULL;
	uint32_t h;

	if (len == 0 || len == SHMR_NAME_MAX)
		return &unknown_target;
	h = shmr_dp_name_hash(name, len);
	if (router < t->nrouters)
		tgt = dict_find(t->routers[router].route_dict,
				SHMR_DP_DICT_ROUTES, name, (uint32_t)len, h);
	if (!tgt)
		tgt = dict_find(t->reg_dict, t->reg_cap, name, (uint32_t)len,
				h);
	return tgt ? tgt : &unknown_target;
}

/* The type maps, routes and names of the routers in the spec copy, as
 * many entries as each says it uses (bounded by max_types, max_routes):
 * a change costs what is configured, never the room of the maps. */
static void copy_maps(const struct shmr_dp_env *env, struct shmr_dp_table *t)
{
	/* nrouters as copied: bounded by shmr_spec_copy(). */
	uint32_t nr = t->spec->nrouters < t->max_routers ? t->spec->nrouters
							: t->max_routers;

	for (uint32_t i = 0; i < nr; i++) {
		const struct shmr_spec_router *r = &t->spec->routers[i];
		uint32_t n[2] = { r->ntypes, r->ncall_types };

		for (int c = 0; c < 2; c++)
			memcpy(shmr_dp_table_types(t, i, c),
			       shmr_dp_types(env, i, c),
			       (size_t)(n[c] < t->max_types ? n[c]
							     : t->max_types) *
				       sizeof(struct shmr_spec_type));
		shmr_spec_routes_copy(t->routes, shmr_dp_routes(env),
				      t->max_routes, i, r);
	}
}

/*
 * Copy the spec and the endpoint table's control-written words under the
 * seqcount.  A writer that stays mid-write (odd seq) is not waited for
 * beyond SNAPSHOT_TRIES: it may have died there.
 */
static int snapshot(const struct shmr_dp_env *env, struct shmr_dp_table *t)
{
	struct shmr_spec *s = shmr_dp_spec(env);

	for (int i = 0; i < SNAPSHOT_TRIES; i++) {
		/* S3: pairs with the writer's S2 (layout.h). */
		uint64_t seq = atomic_load_explicit(&s->seq,
						    memory_order_acquire);

		if (seq & 1) {
			sched_yield();
			continue;
		}
		shmr_spec_copy(t->spec, s, 0, t->max_routers);
		/* nactive, nreg as copied: bounded by the table's
		 * max_endpoints, max_names. */
		memcpy(t->active, shmr_dp_active(env),
		       shmr_spec_active_used(t->spec->nactive,
					     t->max_endpoints));
		memcpy(t->reg, shmr_dp_names(env),
		       shmr_spec_names_used(t->spec->nreg, t->max_names));
		copy_maps(env, t);
		for (uint32_t e = 0; e < t->max_endpoints; e++) {
			struct shmr_ep_shared *ep = shmr_dp_ep(env, e);

			t->ep[e].state = (uint8_t)atomic_load_explicit(
				&ep->state, memory_order_relaxed);
			t->ep[e].gen = ep->gen;
			t->ep[e].kind = (uint8_t)ep->kind;
		}
		/* S4 inside: pairs with the writer's S1. */
		if (!shmr_spec_read_retry(s, seq)) {
			t->seq = seq;
			return 0;
		}
	}
	return -EAGAIN;
}

static void terminate_name(char *s, size_t n)
{
	s[n - 1] = '\0';
}

/* Clamp counts and terminate every string of the copy. */
static void sanitize(struct shmr_dp_table *t)
{
	struct shmr_spec *s = t->spec;

	if (s->nrouters > t->max_routers)
		s->nrouters = t->max_routers;
	if (s->nreg > t->max_names)
		s->nreg = t->max_names;
	if (s->nactive > t->max_endpoints)
		s->nactive = t->max_endpoints; /* each one bounded at use */
	for (uint32_t i = 0; i < s->nreg; i++)
		terminate_name(t->reg[i].name, SHMR_NAME_MAX);
	/* The routers past nrouters are zero, from the allocation. */
	for (uint32_t i = 0; i < s->nrouters; i++) {
		struct shmr_spec_router *r = &s->routers[i];
		struct shmr_spec_route *q = shmr_dp_table_routes(t, i);
		char (*hash)[SHMR_NAME_MAX] = shmr_dp_table_hash(t, i);

		if (r->nroutes > t->max_routes)
			r->nroutes = t->max_routes;
		if (r->ntypes > t->max_types)
			r->ntypes = t->max_types;
		if (r->nhash > t->max_routes)
			r->nhash = t->max_routes;
		if (r->ncall_types > t->max_types)
			r->ncall_types = t->max_types;
		terminate_name(r->name, SHMR_NAME_MAX);
		terminate_name(r->dso, SHMR_DSO_PATH_MAX);
		terminate_name(r->dso_arg, SHMR_DSO_PATH_MAX);
		terminate_name(r->node_prefix, SHMR_DSO_PATH_MAX);
		/* Only the copied entries (copy_maps()): the rest are
		 * zero, from the table's allocation. */
		for (uint32_t j = 0; j < r->nroutes; j++)
			terminate_name(q[j].name, SHMR_NAME_MAX);
		for (uint32_t j = 0; j < r->nhash; j++)
			terminate_name(hash[j], SHMR_NAME_MAX);
		/* Only the copied entries (copy_maps()): the rest are
		 * zero, from the table's allocation. */
		for (uint32_t j = 0; j < r->ntypes; j++)
			terminate_name(shmr_dp_table_types(t, i, 0)[j].target,
				       SHMR_NAME_MAX);
		for (uint32_t j = 0; j < r->ncall_types; j++)
			terminate_name(shmr_dp_table_types(t, i, 1)[j].target,
				       SHMR_NAME_MAX);
	}
}

/* Where a PID leads: a live endpoint, a router, or nowhere. */
static struct shmr_dp_target pid_target(const struct shmr_dp_table *t,
					struct shmr_pid pid, const char *name)
{
	struct shmr_dp_target tgt = unknown_target;
	const struct shmr_dp_ep *e;

	tgt.name = name;
	if (pid.slot >= t->max_endpoints)
		return tgt;
	e = &t->ep[pid.slot];
	if (e->router >= 0) {
		if (t->routers[e->router].pid.gen != pid.gen)
			return tgt;
		tgt.verdict = SHMR_DP_DELIVER;
		tgt.err = 0;
		tgt.router = e->router;
		tgt.slot = pid.slot;
		tgt.gen = pid.gen;
		return tgt;
	}
	if (e->state != SHMR_EP_ACTIVE || e->gen != pid.gen || pid.gen == 0)
		return tgt;
	tgt.verdict = SHMR_DP_DELIVER;
	tgt.err = 0;
	tgt.slot = pid.slot;
	tgt.gen = pid.gen;
	return tgt;
}

/* A route's start_err as the control plane writes it: 0, -errno or
 * -SHMR_E_*.  Anything else (the spec lies in shared memory) is taken as
 * 0: the route only queues, as it would without the word. */
static int start_err_sound(int32_t err)
{
	return (err < 0 && err > -SHMR_E_BASE) ||
	       (err < -SHMR_E_BASE && err > -SHMR_E_LAST);
}

static struct shmr_dp_target route_target(const struct shmr_dp_table *t,
					  const struct shmr_spec_route *rt)
{
	struct shmr_dp_target tgt = unknown_target;

	tgt.name = rt->name;
	switch (rt->state) {
	case SHMR_ROUTE_DEAD:
		/* The inbox keeps queueing, and the message asks for a worker
		 * (lazy restart): restart, then forward. */
		tgt = pid_target(t, rt->pid, rt->name);
		if (tgt.verdict != SHMR_DP_DELIVER)
			return tgt;
		tgt.ask = 1;
		/* Its last start failed: the message fails with that error
		 * at once, and still asks (each message retries the start,
		 * as Ergo's do).  What the inbox holds stays for the next
		 * start that succeeds. */
		if (start_err_sound(rt->start_err)) {
			tgt.verdict = SHMR_DP_FAIL;
			tgt.err = rt->start_err;
		}
		return tgt;
	case SHMR_ROUTE_RUNNING:
	case SHMR_ROUTE_PENDING_REPLACE: /* best effort, to the current one */
		return pid_target(t, rt->pid, rt->name);
	case SHMR_ROUTE_REPLACE_WAIT:
		/* Old worker gone, new one not started: busy, and ask. */
		tgt.err = -SHMR_E_BUSY;
		if (rt->pid.slot < t->max_endpoints) {
			tgt.ask = 1;
			tgt.slot = rt->pid.slot;
			tgt.gen = rt->pid.gen;
		}
		return tgt;
	case SHMR_ROUTE_DISABLED:
	case SHMR_ROUTE_PENDING_DISABLE:
		tgt.err = -SHMR_E_DISABLED;
		return tgt;
	case SHMR_ROUTE_PENDING_REMOVE:
	default:
		tgt.err = -SHMR_E_NO_ROUTE;
		return tgt;
	}
}

/* A built-in entry's name, resolved now; "" discards. */
static struct shmr_dp_target name_target(const struct shmr_dp_table *t,
					 unsigned router, const char *name)
{
	struct shmr_dp_target tgt;

	if (name[0] == '\0') {
		tgt = unknown_target;
		tgt.verdict = SHMR_DP_DISCARD;
		tgt.err = 0;
		tgt.name = NULL;
		return tgt;
	}
	tgt = *shmr_dp_resolve_rcu(t, router, name);
	tgt.name = name;
	return tgt;
}

/*
 * Sort type map @p src (@p n entries) into @p dst by type, each name
 * resolved now; the first entry for a type wins.  Returns the entries kept.
 */
static uint32_t build_type_map(const struct shmr_dp_env *env,
			       const struct shmr_dp_table *t, unsigned ri,
			       const struct shmr_spec_type *src, uint32_t n,
			       struct shmr_dp_type_ent *dst, const char *what)
{
	uint32_t kept = 0;

	for (uint32_t j = 0; j < n; j++) {
		uint32_t type = src[j].type, k = kept;
		int dup = 0;

		for (uint32_t x = 0; x < kept; x++)
			dup |= dst[x].type == type;
		if (dup) {
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "router %s: %s type %u mapped twice: "
				    "the first mapping wins",
				    t->routers[ri].name, what, type);
			continue;
		}
		while (k > 0 && dst[k - 1].type > type) {
			dst[k] = dst[k - 1];
			k--;
		}
		dst[k].type = type;
		dst[k].target = name_target(t, ri, src[j].target);
		kept++;
	}
	return kept;
}

static int is_logic(uint32_t behaviour)
{
	return behaviour >= SHMR_BEH_ROUND_ROBIN &&
	       behaviour <= SHMR_BEH_BALANCING;
}

/* The logics that deliver only to inboxes (copies, a rewritten call, a
 * hand-out): a routee that is a router cannot take part. */
static int inbox_only(uint32_t behaviour)
{
	return behaviour == SHMR_BEH_BROADCAST ||
	       behaviour == SHMR_BEH_SCATTER_GATHER ||
	       behaviour == SHMR_BEH_TAIL_CHOPPING ||
	       behaviour == SHMR_BEH_BALANCING;
}

/* Add @p tgt to router @p r's broadcast set (see struct shmr_dp_router):
 * deliverable, not a router, and not an inbox it holds already. */
static void bc_add(struct shmr_dp_router *r, const struct shmr_dp_target *tgt)
{
	if (tgt->verdict != SHMR_DP_DELIVER || tgt->router >= 0)
		return;
	for (uint32_t k = 0; k < r->nbc; k++)
		if (r->bc[k].slot == tgt->slot)
			return;
	r->bc[r->nbc++] = *tgt;
}

/*
 * Scatter-gather and tail-chopping: the call target and the timings.  A
 * within or interval out of range (the configuration refuses them) makes
 * the router fail its calls.
 */
static void build_collect(const struct shmr_dp_env *env,
			  struct shmr_dp_table *t, unsigned ri)
{
	const struct shmr_spec_router *sr = &t->spec->routers[ri];
	struct shmr_dp_router *r = &t->routers[ri];
	int tail = sr->behaviour == SHMR_BEH_TAIL_CHOPPING;

	r->collect_tgt = (struct shmr_dp_target){
		.verdict = SHMR_DP_COLLECT,
		.router = (int16_t)ri,
	};
	if (sr->within_ms == 0 || sr->within_ms > SHMR_WITHIN_MS_MAX ||
	    (tail && (sr->interval_ms == 0 ||
		      sr->interval_ms > sr->within_ms))) {
		shmr_dp_log(env, SHMR_DP_LOG_ERROR,
			    "router %s: within_ms %u / interval_ms %u out of "
			    "range: the router fails every call",
			    r->name, sr->within_ms, sr->interval_ms);
		r->collect_tgt.verdict = SHMR_DP_FAIL;
		r->collect_tgt.router = -1;
		r->collect_tgt.err = -SHMR_E_NOT_ALLOWED;
		return;
	}
	r->within_ns = (uint64_t)sr->within_ms * 1000000u;
	r->interval_ns = (uint64_t)sr->interval_ms * 1000000u;
}

/*
 * The routee list of routing-logic router @p ri (see the essay above).
 * Returns 0, or -ENOMEM when its ring cannot be allocated.
 */
static int build_routees(const struct shmr_dp_env *env,
			 struct shmr_dp_table *t, unsigned ri)
{
	struct shmr_spec_router *sr = &t->spec->routers[ri];
	struct shmr_dp_router *r = &t->routers[ri];
	const char *names[SHMR_MAX_ROUTES];
	const struct shmr_spec_route *routes = shmr_dp_table_routes(t, ri);
	char (*hash)[SHMR_NAME_MAX] = shmr_dp_table_hash(t, ri);
	uint32_t n = sr->nhash ? sr->nhash : sr->nroutes, vnodes;
	size_t size;
	int rc;

	r->bcast_tgt = (struct shmr_dp_target){
		.verdict = SHMR_DP_BROADCAST,
		.router = (int16_t)ri,
	};
	/* n <= max_routes <= SHMR_MAX_ROUTES (sanitize()). */
	r->routees = n ? calloc(n, sizeof(*r->routees)) : NULL;
	if (n && !r->routees)
		return -ENOMEM;
	for (uint32_t j = 0; j < n; j++) {
		const char *name = sr->nhash ? hash[j] : routes[j].name;
		struct shmr_dp_routee *e = &r->routees[r->nroutees];
		struct shmr_dp_target tgt;
		int dup = 0;

		if (name[0] == '\0')
			continue;
		for (uint32_t k = 0; k < r->nroutees; k++)
			dup |= strcmp(names[k], name) == 0;
		if (dup) {
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "router %s: routee \"%s\" listed twice: "
				    "it takes part once",
				    r->name, name);
			continue;
		}
		tgt = *shmr_dp_resolve_rcu(t, ri, name);
		tgt.name = name;
		if (tgt.verdict != SHMR_DP_DELIVER) {
			shmr_dp_log(env, SHMR_DP_LOG_DEBUG,
				    "router %s: routee \"%s\" left out (%s)",
				    r->name, name, shmr_strerror(tgt.err));
			continue;
		}
		if (tgt.router >= 0 && inbox_only(sr->behaviour)) {
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "router %s: routee \"%s\" is a router, "
				    "which this logic cannot deliver to: left "
				    "out",
				    r->name, name);
			continue;
		}
		memset(e, 0, sizeof(*e));
		e->tgt = tgt;
		if (tgt.router < 0) {
			e->peer = shmr_dp_ep_peer(env, tgt.slot);
			for (uint32_t l = 0; l < env->nlcores; l++)
				e->in[l] = shmr_dp_lane(env, tgt.slot, l);
		}
		names[r->nroutees++] = name;
		bc_add(r, &tgt);
	}
	if (sr->behaviour != SHMR_BEH_CONSISTENT_HASH)
		return 0;
	vnodes = sr->vnodes;
	if (vnodes == 0 || vnodes > SHMR_CHASH_VNODES_MAX) {
		if (vnodes)
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "router %s: %u virtual nodes is out of "
				    "range: %u used",
				    r->name, vnodes, SHMR_CHASH_VNODES_DEFAULT);
		vnodes = SHMR_CHASH_VNODES_DEFAULT;
	}
	/* The ring, then its lookup index, in one allocation. */
	size = (shmr_logic_chash_size(r->nroutees, vnodes) + 7) & ~(size_t)7;
	r->ring = malloc(size + shmr_logic_chash_index_size(
					r->nroutees * vnodes));
	if (!r->ring)
		return -ENOMEM;
	r->ring_ix = (struct shmr_logic_chash_index *)((char *)r->ring + size);
	r->key_from = sr->hash_key == SHMR_HASH_KEY_PAYLOAD
			      ? SHMR_HASH_KEY_PAYLOAD
			      : SHMR_HASH_KEY_FIELD;
	r->key_off = sr->key_offset;
	r->key_len = sr->key_length;
	r->key_cap = env->slot_size - SHMR_HDR_SIZE;
	/* Cannot fail but for a mode this build does not know: names are
	 * non-empty, terminated and distinct, the prefix terminated, and
	 * the sizes are the functions' own. */
	rc = shmr_logic_chash_build_mode(r->ring, size, names, r->nroutees,
					 vnodes, sr->hash_mode,
					 sr->node_prefix);
	if (rc >= 0)
		rc = shmr_logic_chash_index_build(
			r->ring_ix,
			shmr_logic_chash_index_size(r->ring->npoints), r->ring);
	if (rc < 0) {
		shmr_dp_log(env, SHMR_DP_LOG_ERROR,
			    "router %s: ring not built (%s): the router fails "
			    "every message",
			    r->name, strerror(-rc));
		free(r->ring);
		r->ring = NULL;
		r->ring_ix = NULL;
	}
	return 0;
}

static int build_router(const struct shmr_dp_env *env,
			struct shmr_dp_table *t, unsigned ri)
{
	struct shmr_spec_router *sr = &t->spec->routers[ri];
	struct shmr_dp_router *r = &t->routers[ri];
	char (*hash)[SHMR_NAME_MAX] = shmr_dp_table_hash(t, ri);
	char why[256];

	r->nroutes = sr->nroutes;
	r->routes = shmr_dp_table_routes(t, ri);
	for (uint32_t j = 0; j < sr->nroutes; j++) {
		const struct shmr_spec_route *rt = &r->routes[j];

		r->route_tgt[j] = route_target(t, rt);
		if (rt->name[0] == '\0' ||
		    !dict_insert(r->route_dict, SHMR_DP_DICT_ROUTES, rt->name,
				 &r->route_tgt[j]))
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "router %s: route %u (\"%s\") is empty or "
				    "a duplicate: left out",
				    r->name, j, rt->name);
	}

	switch (sr->behaviour) {
	case SHMR_BEH_TYPE:
		r->ntypes = build_type_map(env, t, ri,
					   shmr_dp_table_types(t, ri, 0),
					   sr->ntypes, r->types, "send");
		break;
	case SHMR_BEH_HASH:
		r->nhash = sr->nhash;
		for (uint32_t j = 0; j < sr->nhash; j++)
			r->hash_tgt[j] = name_target(t, ri, hash[j]);
		break;
	case SHMR_BEH_DSO:
		if (shmr_dp_behaviour_load(r, sr->dso, sr->dso_arg, why,
					   sizeof(why)) < 0)
			shmr_dp_log(env, SHMR_DP_LOG_ERROR,
				    "router %s: behaviour %s not loaded (%s): "
				    "the router discards every message",
				    r->name, sr->dso, why);
		break;
	case SHMR_BEH_CONSISTENT_HASH:
		/* The dso's key function (message_key), if it names one. */
		if (sr->dso[0] &&
		    shmr_dp_behaviour_load(r, sr->dso, sr->dso_arg, why,
					   sizeof(why)) < 0)
			shmr_dp_log(env, SHMR_DP_LOG_ERROR,
				    "router %s: dso %s not loaded (%s): the "
				    "router hashes the message's key field",
				    r->name, sr->dso, why);
		/* fall through */
	case SHMR_BEH_ROUND_ROBIN:
	case SHMR_BEH_RANDOM:
	case SHMR_BEH_SMALLEST_MAILBOX:
	case SHMR_BEH_BROADCAST:
	case SHMR_BEH_SCATTER_GATHER:
	case SHMR_BEH_TAIL_CHOPPING:
	case SHMR_BEH_BALANCING:
		if (build_routees(env, t, ri) < 0)
			return -ENOMEM;
		if (sr->behaviour == SHMR_BEH_SCATTER_GATHER ||
		    sr->behaviour == SHMR_BEH_TAIL_CHOPPING)
			build_collect(env, t, ri);
		r->balance_tgt = (struct shmr_dp_target){
			.verdict = SHMR_DP_BALANCE,
			.router = (int16_t)ri,
		};
		break;
	default:
		shmr_dp_log(env, SHMR_DP_LOG_ERROR,
			    "router %s: unknown behaviour %u: the router "
			    "discards every message",
			    r->name, sr->behaviour);
		break;
	}
	/* A Broadcast envelope to a type, hash or dso router reaches its
	 * own routes (a logic's set was made with its routees). */
	if (!is_logic(sr->behaviour))
		for (uint32_t j = 0; j < sr->nroutes; j++)
			bc_add(r, &r->route_tgt[j]);
	/* Calls by type (CQRS); a DSO decides calls itself, and so do the
	 * logics that exist for their calls (and balancing). */
	if (sr->behaviour == SHMR_BEH_TYPE || sr->behaviour == SHMR_BEH_HASH ||
	    (is_logic(sr->behaviour) && !inbox_only(sr->behaviour)) ||
	    sr->behaviour == SHMR_BEH_BROADCAST)
		r->ncall_types = build_type_map(env, t, ri,
						shmr_dp_table_types(t, ri, 1),
						sr->ncall_types, r->call_types,
						"call");
	return 0;
}

/* Every lane of endpoint @p slot, by what no legitimate peer ever writes
 * after creation (shmr_lane_geometry_valid()). */
static int ep_geometry_ok(const struct shmr_dp_env *env, uint32_t slot)
{
	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(env->nlcores); i++)
		if (!shmr_lane_geometry_valid(shmr_dp_lane(env, slot, i),
					      env->lane_size))
			return 0;
	return 1;
}

static void build_lists(const struct shmr_dp_env *env,
			struct shmr_dp_table *t)
{
	uint64_t seen[SHMR_MAX_ENDPOINTS / 64] = { 0 };
	uint32_t per = (t->max_endpoints + t->nlcores - 1) / t->nlcores;

	for (uint32_t i = 0; i < t->spec->nactive; i++) {
		uint32_t slot = t->active[i];
		struct shmr_dp_poll_list *l;
		struct shmr_dp_poll *p;
		struct shmr_ep_shared *ep;

		if (slot >= t->max_endpoints || t->ep[slot].router >= 0 ||
		    t->ep[slot].state != SHMR_EP_ACTIVE ||
		    (seen[slot / 64] >> (slot % 64) & 1))
			continue;
		seen[slot / 64] |= 1ull << (slot % 64);
		l = &t->lists[slot % t->nlcores];
		if (l->n >= per)
			abort(); /* seen[] keeps each slot of a residue once */
		p = &l->e[l->n++];
		l->at[slot] = (uint16_t)l->n;
		ep = shmr_dp_ep(env, slot);
		p->slot = slot;
		p->gen = t->ep[slot].gen;
		p->ep = ep;
		p->out = shmr_dp_lane(env, slot, SHMR_LANE_OUT(env->nlcores));
		p->out_high = shmr_dp_lane(env, slot,
					   SHMR_LANE_OUT_HIGH(env->nlcores));
		/* Quarantine holds until a rebuild finds the lanes' geometry
		 * sound again; the lcore re-checks the rest at every burst.
		 * No partner: a flag, read by the control plane for display. */
		if (atomic_load_explicit(&ep->quarantined,
					 memory_order_relaxed)) {
			if (ep_geometry_ok(env, slot)) {
				atomic_store_explicit(&ep->quarantined, 0,
						      memory_order_relaxed);
				shmr_dp_log(env, SHMR_DP_LOG_INFO,
					    "endpoint %u: lanes sound again, "
					    "polling it",
					    slot);
			} else {
				p->quarantined = 1;
			}
		}
	}
}

/* Tables built by this process (table.h: build). */
static _Atomic(uint64_t) g_builds;

#define ROUND_LINE(x) (((x) + SHMR_CACHE_LINE - 1) & ~(size_t)(SHMR_CACHE_LINE - 1))

/* A zeroed table with its arrays by endpoint slot (table.h) sized from
 * the geometry, in one allocation; NULL when out of memory. */
static struct shmr_dp_table *table_alloc(const struct shmr_dp_env *env)
{
	uint32_t n = env->max_endpoints, nl = env->nlcores;
	uint32_t per = (n + nl - 1) / nl, nn = env->max_names;
	uint32_t dc = shmr_dp_dict_reg_cap(nn), nt = env->max_types;
	uint32_t nr = env->max_routers, mr = env->max_routes;
	/* Per router slot, its two maps: the spec's entries and the built
	 * ones (table.h); then its routes and names. */
	size_t types = ROUND_LINE(shmr_spec_types_size(nt, nr)) +
		       ROUND_LINE((size_t)nr * 2 * nt *
				  sizeof(struct shmr_dp_type_ent)) +
		       ROUND_LINE(shmr_spec_routes_size(mr, nr));
	/* The routers and the spec's copy: as many as the domain has. */
	size_t routers = ROUND_LINE((size_t)nr * sizeof(struct shmr_dp_router));
	size_t spec = ROUND_LINE(shmr_spec_size(nr));
	size_t reg = ROUND_LINE((size_t)nn * (sizeof(struct shmr_spec_reg) +
					      sizeof(struct shmr_dp_target))) +
		     ROUND_LINE((size_t)dc * sizeof(struct shmr_dp_dict_ent));
	size_t ep = ROUND_LINE((size_t)n * sizeof(struct shmr_dp_ep)) +
		    ROUND_LINE((size_t)n * sizeof(uint32_t));
	size_t e = ROUND_LINE((size_t)per * sizeof(struct shmr_dp_poll));
	size_t at = ROUND_LINE((size_t)n * sizeof(uint16_t));
	size_t size = ROUND_LINE(sizeof(struct shmr_dp_table)) + ep +
		      routers + spec + nl * (e + at) + reg + types;
	struct shmr_dp_table *t = aligned_alloc(SHMR_CACHE_LINE, size);
	unsigned char *p;

	if (!t)
		return NULL;
	memset(t, 0, size);
	t->alloc_size = size;
	t->nlcores = nl;
	t->max_endpoints = n;
	p = (unsigned char *)t + ROUND_LINE(sizeof(*t));
	t->ep = (struct shmr_dp_ep *)p;
	t->active = (uint32_t *)(p + ROUND_LINE((size_t)n *
					       sizeof(struct shmr_dp_ep)));
	p += ep;
	t->max_routers = nr;
	t->routers = (struct shmr_dp_router *)p;
	p += routers;
	t->spec = (struct shmr_spec *)p;
	p += spec;
	for (uint32_t i = 0; i < nl; i++) {
		t->lists[i].e = (struct shmr_dp_poll *)p;
		t->lists[i].at = (uint16_t *)(p + e);
		p += e + at;
	}
	t->max_names = nn;
	t->reg_cap = dc;
	t->reg_dict = (struct shmr_dp_dict_ent *)p;
	p += ROUND_LINE((size_t)dc * sizeof(struct shmr_dp_dict_ent));
	t->reg_tgt = (struct shmr_dp_target *)p;
	t->reg = (struct shmr_spec_reg *)(p + (size_t)nn *
						  sizeof(struct shmr_dp_target));
	p = (unsigned char *)t + size - types;
	t->max_types = nt;
	t->types = (struct shmr_spec_type *)p;
	p += ROUND_LINE(shmr_spec_types_size(nt, nr));
	for (uint32_t i = 0; i < nr; i++) {
		t->routers[i].types = (struct shmr_dp_type_ent *)p +
				      (size_t)i * 2 * nt;
		t->routers[i].call_types = t->routers[i].types + nt;
	}
	p += ROUND_LINE((size_t)nr * 2 * nt * sizeof(struct shmr_dp_type_ent));
	t->max_routes = mr;
	t->routes = p;
	return t;
}

int shmr_dp_table_build(const struct shmr_dp_env *env,
			struct shmr_dp_table **out)
{
	struct shmr_dp_table *t;
	int rc;

	*out = NULL;
	t = table_alloc(env);
	if (!t)
		return -ENOMEM;
	rc = snapshot(env, t);
	if (rc < 0) {
		free(t);
		return rc;
	}
	sanitize(t);
	t->magic = SHMR_DP_TABLE_MAGIC;
	t->version = t->spec->version;
	/* Relaxed: a count, nothing is read on its strength; 0 is never a
	 * table's (an lcore starts with swept_build 0). */
	t->build = atomic_fetch_add_explicit(&g_builds, 1,
					     memory_order_relaxed) + 1;
	t->lane_cap = env->lane_size - 1;
	for (uint32_t e = 0; e < t->max_endpoints; e++)
		t->ep[e].router = -1;

	/* Routers' endpoints first: every resolution below needs them. */
	t->nrouters = t->spec->nrouters;
	for (uint32_t i = 0; i < t->nrouters; i++) {
		struct shmr_spec_router *sr = &t->spec->routers[i];
		struct shmr_dp_router *r = &t->routers[i];

		memcpy(r->name, sr->name, SHMR_NAME_MAX);
		r->pid = sr->pid;
		r->behaviour = sr->behaviour;
		r->flags = sr->flags;
		if (sr->pid.slot >= t->max_endpoints ||
		    t->ep[sr->pid.slot].router >= 0) {
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "router %s: endpoint %u is out of range "
				    "or taken: unreachable",
				    r->name, sr->pid.slot);
			continue;
		}
		/* The spec names the router's endpoint; its gen is the one
		 * senders hold, whatever the endpoint table says. */
		t->ep[sr->pid.slot].router = (int16_t)i;
	}

	t->nreg = t->spec->nreg;
	for (uint32_t i = 0; i < t->nreg; i++) {
		struct shmr_spec_reg *e = &t->reg[i];

		t->reg_tgt[i] = pid_target(t, e->pid, e->name);
		if (e->name[0] == '\0' ||
		    t->reg_tgt[i].verdict != SHMR_DP_DELIVER) {
			shmr_dp_log(env, SHMR_DP_LOG_DEBUG,
				    "registry entry %u (\"%s\" -> %u.%u) is "
				    "empty or stale: left out",
				    i, e->name, e->pid.slot, e->pid.gen);
			continue;
		}
		if (!dict_insert(t->reg_dict, t->reg_cap, e->name,
				 &t->reg_tgt[i]))
			shmr_dp_log(env, SHMR_DP_LOG_WARNING,
				    "registry name \"%s\" appears twice: the "
				    "first entry wins",
				    e->name);
	}

	/* Each router builds its own routes' dictionary before resolving
	 * its built-in entries: names resolve in the deciding router's
	 * routes, then the registry (complete by now). */
	for (uint32_t i = 0; i < t->nrouters; i++) {
		if (build_router(env, t, i) < 0) {
			shmr_dp_table_free(t);
			return -ENOMEM;
		}
	}
	build_lists(env, t);
	*out = t;
	return 0;
}

void shmr_dp_table_free(struct shmr_dp_table *t)
{
	if (!t)
		return;
	if (t->magic != SHMR_DP_TABLE_MAGIC)
		abort(); /* a double free: a broken invariant */
	for (uint32_t i = 0; i < t->nrouters; i++) {
		shmr_dp_behaviour_unload(&t->routers[i]);
		free(t->routers[i].ring); /* and its index */
		t->routers[i].ring = NULL;
		t->routers[i].ring_ix = NULL;
		free(t->routers[i].routees);
		t->routers[i].routees = NULL;
	}
	/* Poison first: a reader that still held it sees a dead table. */
	memset(t, 0x5a, t->alloc_size);
	t->magic = SHMR_DP_TABLE_POISON;
	t->version = UINT64_MAX;
	free(t);
}
