/*
 * The counter registry (shmr/counters.def) in the dataplane's telemetry:
 * every line whose value lives in the domain is answered under its
 * registry name by the /shmr/ command of its scope (ROUTER: /shmr/routers,
 * ROUTE: /shmr/routes, LCORE: /shmr/lcores, ENDPOINT: /shmr/endpoints),
 * with the value shmrctl shows, so that one line added to the registry
 * shows in telemetry as well as in inspect and the metrics.
 *
 * How: counters.def's value expressions are written over the control
 * plane's reading of the domain (control/format.h: c->delivered[qs],
 * q->restarts, agg.queued, ...).  Here the same expressions are compiled
 * over the dataplane's own reading, with the same names:
 *   - c (struct shmr_dp_tel_c): one item's per-slot figures.  Each is an
 *     array of one, and the slot variables (rs, qs, es) are 0, so that
 *     c->delivered[qs] is the figure of the item asked about, read from
 *     the domain for that one slot (no table sized by the domain's
 *     limits on a telemetry thread's stack);
 *   - r (struct shmr_dp_tel_router): the router's spec line (nroutes);
 *   - q (struct shmr_dp_tel_route): the route's restarts and redeliveries
 *     from its slot's figures line (struct shmr_ep_figs, which the control
 *     plane writes: control/counters_figs.c);
 *   - agg (struct shmr_dp_tel_agg): the sums over the router's routes,
 *     as shmr_ctl_router_agg() makes them;
 *   - an LCORE line's value is its field of struct shmr_lcore_stats.
 * A new name in an expression that the dataplane does not read fails to
 * compile here: the figure must be added to the structs below (or the
 * line marked SHMR_CTR_CONTROL(), with its reason in the docs' table).
 * A value marked SHMR_CTR_CONTROL() is left out of the answer.
 *
 * Per-slot figures count since the slot was handed to its current owner,
 * as the control plane counts them: the dataplane's sums less the bases
 * the control plane stored in the slot's figures line when it handed the
 * slot out.  A base is read inside one seqcount read of the spec, with
 * the slot's generation (the control plane stores it inside the write
 * that publishes the generation), so a reused slot never shows its last
 * owner's counts under its new owner's PID.
 *
 * Who runs this: DPDK's telemetry threads (telemetry.c's opening): loads
 * only, relaxed (statistics, no partner), never a store to a line the
 * fast path writes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/lane.h>

#include "dataplane_internal.h"
#include "telemetry_ctrs.h"

/* One item's per-slot figures (see the opening: arrays of one). */
struct shmr_dp_tel_c {
	uint64_t forwarded[1], discarded[1], failed[1]; /* router_* */
	uint64_t delivered[1], inbox_full[1];           /* ep_delivered, ep_full */
	uint64_t queued[1], in_hand[1];                 /* its inbound lanes */
	uint64_t lane_full[1], bad_slots[1], quarantined[1];
	uint64_t inbox_slots; /* a route's inbox: nlcores * (lane_size - 1) */
};

struct shmr_dp_tel_router {
	uint64_t nroutes;
};

struct shmr_dp_tel_route {
	uint64_t restarts, redelivered;
};

struct shmr_dp_tel_agg {
	uint64_t active, disabled, pending, queued, restarts;
};

/* Where one value is read (the scope's part set). */
struct shmr_dp_tel_at {
	const struct shmr_dp_tel_c *c;
	const struct shmr_dp_tel_router *r;
	const struct shmr_dp_tel_route *q;
	const struct shmr_dp_tel_agg *agg;
	const struct shmr_lcore_stats *st;
};

/* Relaxed: a snapshot of single-writer counters (no partner). */
static uint64_t ld(const _Atomic(uint64_t) *w)
{
	return atomic_load_explicit(w, memory_order_relaxed);
}

static uint64_t since(uint64_t now, uint64_t base)
{
	return now >= base ? now - base : 0;
}

/* The registry's value functions: 0 and *out, or -1 for a value only the
 * control plane has (SHMR_CTR_CONTROL). */
#define SHMR_CTR_CONTROL(value) (control = 1, 0)
#define SHMR_TEL_VARS_ROUTER                                         \
	const struct shmr_dp_tel_c *c = at->c;                        \
	const struct shmr_dp_tel_router *r = at->r;                   \
	const struct shmr_dp_tel_agg agg = *at->agg;                  \
	const uint32_t rs = 0;                                        \
	(void)c, (void)r, (void)agg, (void)rs;
#define SHMR_TEL_VARS_ROUTE                                          \
	const struct shmr_dp_tel_c *c = at->c;                        \
	const struct shmr_dp_tel_route *q = at->q;                    \
	const uint32_t qs = 0;                                        \
	(void)c, (void)q, (void)qs;
#define SHMR_TEL_VARS_ENDPOINT                                       \
	const struct shmr_dp_tel_c *c = at->c;                        \
	const uint32_t es = 0;                                        \
	(void)c, (void)es;
#define SHMR_TEL_FN_EXPR(scope, ctr, value)                                \
	static int t_##scope##_##ctr(const struct shmr_dp_tel_at *at,       \
				     uint64_t *out)                         \
	{                                                                   \
		int control = 0;                                            \
		SHMR_TEL_VARS_##scope                                       \
		*out = (uint64_t)(value);                                   \
		return control ? -1 : 0;                                    \
	}
#define SHMR_TEL_FN_ROUTER(ctr, value) SHMR_TEL_FN_EXPR(ROUTER, ctr, value)
#define SHMR_TEL_FN_ROUTE(ctr, value) SHMR_TEL_FN_EXPR(ROUTE, ctr, value)
#define SHMR_TEL_FN_ENDPOINT(ctr, value) \
	SHMR_TEL_FN_EXPR(ENDPOINT, ctr, value)
#define SHMR_TEL_FN_LCORE(ctr, field)                                   \
	static int t_LCORE_##ctr(const struct shmr_dp_tel_at *at,        \
				 uint64_t *out)                          \
	{                                                               \
		*out = ld(&at->st->field);                              \
		return 0;                                               \
	}
/* The arena's lines are all SHMR_CTR_CONTROL: never answered here. */
#define SHMR_TEL_FN_ARENA(ctr, value)                                   \
	static int t_ARENA_##ctr(const struct shmr_dp_tel_at *at,        \
				 uint64_t *out)                          \
	{                                                               \
		(void)at;                                               \
		*out = 0;                                               \
		return -1;                                              \
	}
#define SHMR_CTR(scope, ctr, kind, unit, help, value) \
	SHMR_TEL_FN_##scope(ctr, value)
#include <shmr/counters.def>
#undef SHMR_CTR
#undef SHMR_TEL_FN_ARENA
#undef SHMR_TEL_FN_ROUTER
#undef SHMR_TEL_FN_ROUTE
#undef SHMR_TEL_FN_ENDPOINT
#undef SHMR_TEL_FN_LCORE
#undef SHMR_TEL_FN_EXPR
#undef SHMR_CTR_CONTROL

static const struct {
	uint32_t scope; /* enum shmr_dp_tel_scope */
	const char *name;
	int (*value)(const struct shmr_dp_tel_at *at, uint64_t *out);
} registry[] = {
#define SHMR_CTR(scope, ctr, kind, unit, help, value) \
	{ SHMR_DP_TEL_##scope, #ctr, t_##scope##_##ctr },
#include <shmr/counters.def>
#undef SHMR_CTR
};

/* Every line of @p scope into the dict @p d, under its registry name. */
static void add_scope(struct rte_tel_data *d, uint32_t scope,
		      const struct shmr_dp_tel_at *at)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
		uint64_t v;

		if (registry[i].scope == scope && registry[i].value(at, &v) == 0)
			rte_tel_data_add_dict_u64(d, registry[i].name, v);
	}
}

/* Slot @p slot's figures lines' bases and restarts, read with its
 * generation inside one spec read; -SHMR_E_TIMEOUT without one. */
static int read_figs(const struct shmr_dp_env *env, uint32_t slot,
		     uint64_t base[6], struct shmr_dp_tel_route *q)
{
	const struct shmr_spec *s = shmr_dp_spec(env);
	const struct shmr_ep_figs *f = &shmr_dp_ep(env, slot)->figs;
	uint64_t seq, deadline = shmr_spec_deadline();

	do {
		if (shmr_spec_read_begin(s, deadline, &seq) < 0)
			return -SHMR_E_TIMEOUT;
		base[0] = ld(&f->base_forwarded);
		base[1] = ld(&f->base_discarded);
		base[2] = ld(&f->base_failed);
		base[3] = ld(&f->base_delivered);
		base[4] = ld(&f->base_inbox_full);
		base[5] = ld(&f->base_bad_slots);
		q->restarts = ld(&f->restarts);
		q->redelivered = ld(&f->redelivered);
	} while (shmr_spec_read_retry(s, seq));
	return 0;
}

/* Slot @p slot's per-slot figures (and its route's, for a route's inbox)
 * as shmr_ctl_counters_read() makes them. */
static int read_slot(const struct shmr_dp_env *env, uint32_t slot,
		     struct shmr_dp_tel_c *c, struct shmr_dp_tel_route *q)
{
	const struct shmr_ep_shared *e = shmr_dp_ep(env, slot);
	uint64_t base[6];
	uint32_t kind;

	memset(c, 0, sizeof(*c));
	if (read_figs(env, slot, base, q) < 0)
		return -SHMR_E_TIMEOUT;
	/* Relaxed: written under the seqcount, read as a hint here. */
	kind = __atomic_load_n(&e->kind, __ATOMIC_RELAXED);
	for (uint32_t l = 0; l < env->nlcores; l++) {
		const struct shmr_ep_ctr *st = shmr_dp_ep_ctr(env, l, slot);

		c->forwarded[0] += ld(&st->router_forwarded);
		c->discarded[0] += ld(&st->router_discarded);
		c->failed[0] += ld(&st->router_failed);
		c->delivered[0] += ld(&st->ep_delivered);
		c->inbox_full[0] += ld(&st->ep_full);
		if (kind != SHMR_EPK_ROUTER)
			shmr_lane_depths(shmr_dp_lane(env, slot, l),
					 env->lane_size, &c->queued[0],
					 &c->in_hand[0]);
	}
	c->forwarded[0] = since(c->forwarded[0], base[0]);
	c->discarded[0] = since(c->discarded[0], base[1]);
	c->failed[0] = since(c->failed[0], base[2]);
	c->delivered[0] = since(c->delivered[0], base[3]);
	c->inbox_full[0] = since(c->inbox_full[0], base[4]);
	c->bad_slots[0] = since(ld(&e->bad_slots), base[5]);
	/* Relaxed: the dataplane's word and the owner's hint (no partner). */
	c->quarantined[0] =
		atomic_load_explicit(&e->quarantined, memory_order_relaxed) != 0;
	c->lane_full[0] = ld(&shmr_dp_ep_peer(env, slot)->lane_full);
	c->inbox_slots = (uint64_t)env->nlcores * (env->lane_size - 1);
	return 0;
}

void shmr_dp_tel_lcore_add(const struct shmr_dp_env *env, uint32_t lcore,
			   struct rte_tel_data *d)
{
	struct shmr_dp_tel_at at = { .st = shmr_dp_stats(env, lcore) };

	add_scope(d, SHMR_DP_TEL_LCORE, &at);
}

int shmr_dp_tel_slot_add(const struct shmr_dp_env *env, uint32_t scope,
			 uint32_t slot, struct rte_tel_data *d)
{
	struct shmr_dp_tel_c c;
	struct shmr_dp_tel_route q;
	struct shmr_dp_tel_at at = { .c = &c, .q = &q };

	if (slot >= env->max_endpoints)
		return -EINVAL;
	if (read_slot(env, slot, &c, &q) < 0)
		return -SHMR_E_TIMEOUT;
	add_scope(d, scope, &at);
	return 0;
}

static int route_pending(uint32_t state)
{
	return state == SHMR_ROUTE_PENDING_DISABLE ||
	       state == SHMR_ROUTE_PENDING_REPLACE ||
	       state == SHMR_ROUTE_REPLACE_WAIT ||
	       state == SHMR_ROUTE_PENDING_REMOVE;
}

int shmr_dp_tel_router_add(const struct shmr_dp_env *env,
			   const struct shmr_dp_tel_router_view *v,
			   struct rte_tel_data *d)
{
	struct shmr_dp_tel_c c, qc;
	struct shmr_dp_tel_route q;
	struct shmr_dp_tel_router r = { v->nroutes };
	struct shmr_dp_tel_agg agg = { 0 };
	struct shmr_dp_tel_at at = { .c = &c, .r = &r, .agg = &agg };

	if (v->slot >= env->max_endpoints || read_slot(env, v->slot, &c, &q) < 0)
		return -SHMR_E_TIMEOUT;
	for (uint32_t k = 0; k < v->nroutes; k++) {
		uint32_t s = v->routes[k].slot;

		if (s >= env->max_endpoints || read_slot(env, s, &qc, &q) < 0)
			continue;
		agg.active += v->routes[k].os_pid != 0;
		agg.disabled += v->routes[k].state == SHMR_ROUTE_DISABLED;
		agg.pending += route_pending(v->routes[k].state);
		agg.queued += qc.queued[0];
		agg.restarts += q.restarts;
	}
	add_scope(d, SHMR_DP_TEL_ROUTER, &at);
	return 0;
}
