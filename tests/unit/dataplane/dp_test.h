/*
 * Helpers for the dataplane's unit tests: a domain in heap memory (or a
 * memfd) initialised with shmr_layout_init(), and a spec written the way
 * the control plane writes it (under the seqcount, version bumped).
 */
#ifndef DP_TEST_H
#define DP_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

#include "dataplane_internal.h"
#include "decide.h"
#include "forward.h"
#include "lcore.h"
#include "rcu.h"
#include "table.h"

struct dp_dom {
	void *base;
	size_t size;
	struct shmr_dp_env env;
};

/* A domain of geometry @p g. */
static inline int dp_dom_init_geo(struct dp_dom *d,
				  const struct shmr_geometry *g)
{
	struct shmr_domain_hdr plan;
	int64_t size = shmr_layout_plan(g, &plan);

	if (size < 0)
		return -1;
	d->size = (size_t)size;
	d->base = aligned_alloc(4096, d->size);
	if (!d->base)
		return -1;
	memset(d->base, 0, d->size);
	if (shmr_layout_init(d->base, g, "unit") < 0)
		return -1;
	return shmr_dp_env_init(&d->env, d->base, d->size);
}

/* Slot 128, lanes of @p lane entries, @p eps endpoint slots (0: the
 * default; a big lane times the default's 1024 endpoints is a domain of
 * gigabytes), room for a router of SHMR_MAX_ROUTES routes. */
static inline int dp_dom_init_lane_eps(struct dp_dom *d, uint32_t nlcores,
				       uint32_t lane, uint32_t eps)
{
	struct shmr_geometry g = { 128, lane, nlcores, SHMR_POLL_ADAPTIVE, 0,
				   eps, 0, 0, 0, SHMR_MAX_ROUTES };

	return dp_dom_init_geo(d, &g);
}

/* Slot 128, lanes of @p lane entries, the default endpoint slots. */
static inline int dp_dom_init_lane(struct dp_dom *d, uint32_t nlcores,
				   uint32_t lane)
{
	return dp_dom_init_lane_eps(d, nlcores, lane, 0);
}

/* A small geometry: slot 128, lane 64. */
static inline int dp_dom_init(struct dp_dom *d, uint32_t nlcores)
{
	return dp_dom_init_lane(d, nlcores, 64);
}

static inline void dp_dom_fini(struct dp_dom *d)
{
	free(d->base);
	d->base = NULL;
}

/* An lcore, its table and its domain, undone in that order. */
static inline void dp_all_fini(struct dp_dom *d, struct shmr_dp_lcore *lc,
			       struct shmr_dp_table *t)
{
	shmr_dp_lcore_fini(lc);
	shmr_dp_table_free(t);
	dp_dom_fini(d);
}

static inline struct shmr_spec *dp_spec(struct dp_dom *d)
{
	return shmr_spec_of(d->base);
}

/* Bracket spec changes like the control plane does. */
static inline void dp_spec_begin(struct dp_dom *d)
{
	shmr_spec_write_begin(dp_spec(d));
}

static inline void dp_spec_end(struct dp_dom *d)
{
	dp_spec(d)->version++;
	shmr_spec_write_end(dp_spec(d));
}

/* An endpoint in use (and polled unless it is a router). */
static inline struct shmr_pid dp_ep(struct dp_dom *d, uint32_t slot,
				    uint32_t gen, uint32_t kind)
{
	struct shmr_ep_shared *ep = shmr_ep_at(d->base, slot);
	struct shmr_spec *s = dp_spec(d);

	ep->gen = gen;
	ep->kind = kind;
	atomic_store(&ep->state, SHMR_EP_ACTIVE);
	if (kind != SHMR_EPK_ROUTER)
		shmr_active_of(d->base)[s->nactive++] = slot;
	return (struct shmr_pid){ slot, gen };
}

static inline unsigned dp_router(struct dp_dom *d, const char *name,
				 struct shmr_pid pid, uint32_t behaviour)
{
	struct shmr_spec *s = dp_spec(d);
	struct shmr_spec_router *r = &s->routers[s->nrouters];

	memset(r, 0, sizeof(*r));
	shmr_name_copy(r->name, name);
	r->pid = pid;
	r->behaviour = behaviour;
	return s->nrouters++;
}

static inline void dp_route(struct dp_dom *d, unsigned ri, const char *name,
			    struct shmr_pid pid, uint32_t state)
{
	struct shmr_spec_router *r = &dp_spec(d)->routers[ri];
	struct shmr_spec_route *rt = &shmr_routes_of(d->base, ri)[r->nroutes++];

	shmr_name_copy(rt->name, name);
	rt->pid = pid;
	rt->state = state;
}

static inline void dp_type(struct dp_dom *d, unsigned ri, uint32_t type,
			   const char *target)
{
	struct shmr_spec_router *r = &dp_spec(d)->routers[ri];
	struct shmr_spec_type *e = &shmr_types_of(d->base, ri, 0)[r->ntypes++];

	e->type = type;
	memset(e->target, 0, SHMR_NAME_MAX);
	strncpy(e->target, target, SHMR_NAME_MAX - 1);
}

static inline void dp_hash(struct dp_dom *d, unsigned ri, const char *name)
{
	struct shmr_spec_router *r = &dp_spec(d)->routers[ri];

	shmr_name_copy(shmr_hash_of(d->base, ri)[r->nhash++], name);
}

static inline void dp_reg(struct dp_dom *d, const char *name,
			  struct shmr_pid pid)
{
	struct shmr_spec *s = dp_spec(d);
	struct shmr_spec_reg *e = &shmr_names_of(d->base)[s->nreg++];

	shmr_name_copy(e->name, name);
	e->pid = pid;
}

/* A message header in a slot buffer of the domain's slot size. */
static inline struct shmr_msg *dp_msg(void *slot, uint8_t kind,
				      struct shmr_pid from,
				      struct shmr_pid to, uint32_t type,
				      uint64_t key, uint64_t ref)
{
	struct shmr_msg *m = slot;

	memset(m, 0, 128);
	m->kind = kind;
	m->from = from;
	m->to = to;
	m->type = type;
	m->key = key;
	m->ref = ref;
	return m;
}


/* ---- lanes and slots of the test domain (slot size 128) ----------- */

#define DP_SS 128u

static inline struct rte_ring *dp_lane(const struct dp_dom *d,
				       struct shmr_pid p, uint32_t idx)
{
	return shmr_lane_at(d->base, p.slot, idx);
}

/* The endpoint's (normal-priority) outbound lane. */
static inline struct rte_ring *dp_out_lane(const struct dp_dom *d,
					   struct shmr_pid p)
{
	return dp_lane(d, p, SHMR_LANE_OUT(d->env.nlcores));
}

/* Take up to @p max slots from @p r into @p out (DP_SS bytes each). */
static inline unsigned dp_take(struct rte_ring *r, unsigned char *out,
			       unsigned max)
{
	return rte_ring_dequeue_burst_elem(r, out, DP_SS, max, NULL);
}

static inline struct shmr_msg *dp_at(unsigned char *buf, unsigned i)
{
	return (struct shmr_msg *)(buf + (size_t)i * DP_SS);
}

#ifdef assert_int_equal /* CMocka is in: the asserting helpers */
static inline void dp_put(struct rte_ring *r, const struct shmr_msg *m)
{
	assert_int_equal(rte_ring_enqueue_burst_elem(r, m, DP_SS, 1, NULL), 1);
}

/* As dp_put(), into a lane of domain @p d, and when it is an endpoint's
 * outbound lane, with what a sender does next: the fence and the work bit
 * of its endpoint (libshmr's push(); layout.h). */
static inline void dp_put_noted(const struct dp_dom *d, struct rte_ring *r,
				const struct shmr_msg *m)
{
	struct shmr_domain_hdr *h = shmr_hdr(d->base);
	uint64_t n = (uint64_t)((char *)r - (char *)d->base - h->lanes_off) /
		     h->lane_stride;
	uint32_t per = SHMR_LANES_PER_EP(h->nlcores);

	dp_put(r, m);
	if (n % per >= SHMR_LANE_OUT(h->nlcores))
		shmr_work_note(d->base, h, (uint32_t)(n / per));
}

/* Free what an lcore fixture holds: its lcore, its table, its domain. */
static inline void dp_lcore_fix_fini(struct dp_dom *d, struct shmr_dp_lcore *lc,
				     struct shmr_dp_table *t)
{
	shmr_dp_lcore_fini(lc);
	shmr_dp_table_free(t);
	dp_dom_fini(d);
}

/* The poll entry of endpoint @p p in table @p t (its lcore's list). */
static inline struct shmr_dp_poll *dp_poll_of(struct shmr_dp_table *t,
					      struct shmr_pid p)
{
	struct shmr_dp_poll_list *l = &t->lists[p.slot % t->nlcores];

	for (uint32_t i = 0; i < l->n; i++)
		if (l->e[i].slot == p.slot)
			return &l->e[i];
	fail_msg("endpoint %u not polled", p.slot);
	return NULL;
}

/* ---- a one-lcore domain for decision tests: a router endpoint (slot 2)
 * and DP_FIX_EPS route endpoints (slots 4 on), and the table ---------- */

#define DP_FIX_EPS 4u

struct dp_fix {
	struct dp_dom d;
	struct shmr_dp_table *t;
	struct shmr_pid router, r[DP_FIX_EPS];
};

static inline int dp_fix_setup(void **state)
{
	struct dp_fix *f = calloc(1, sizeof(*f));

	if (!f || dp_dom_init(&f->d, 1) < 0)
		return -1;
	f->router = dp_ep(&f->d, 2, 1, SHMR_EPK_ROUTER);
	for (uint32_t i = 0; i < DP_FIX_EPS; i++)
		f->r[i] = dp_ep(&f->d, 4 + i, 1, SHMR_EPK_ROUTE);
	*state = f;
	return 0;
}

static inline int dp_fix_teardown(void **state)
{
	struct dp_fix *f = *state;

	shmr_dp_table_free(f->t);
	dp_dom_fini(&f->d);
	free(f);
	return 0;
}

/* Begin a spec change that leaves one router, "k" of @p behaviour at
 * f->router; *ri gets its index.  Routes and settings go into the
 * returned router, then dp_fix_build(). */
static inline struct shmr_spec_router *
dp_fix_router(struct dp_fix *f, uint32_t behaviour, unsigned *ri)
{
	dp_spec_begin(&f->d);
	dp_spec(&f->d)->nrouters = 0;
	*ri = dp_router(&f->d, "k", f->router, behaviour);
	return &dp_spec(&f->d)->routers[*ri];
}

/* End the spec change begun with dp_spec_begin() and build f->t anew. */
static inline void dp_fix_build(struct dp_fix *f)
{
	dp_spec_end(&f->d);
	shmr_dp_table_free(f->t);
	f->t = NULL;
	assert_int_equal(shmr_dp_table_build(&f->d.env, &f->t), 0);
}

/* The routee name router @p ri picks for a send with key field @p key,
 * the @p n bytes at @p p as its payload and @p lenf in its len field. */
static inline const char *dp_fix_pick(struct dp_fix *f, unsigned ri,
				      uint64_t key, const void *p, uint32_t n,
				      uint32_t lenf)
{
	union {
		struct shmr_msg m;
		unsigned char b[DP_SS];
	} u;
	struct shmr_dp_pick pk;
	const struct shmr_dp_target *tgt;

	assert_true(n <= DP_SS - SHMR_HDR_SIZE);
	memset(&u, 0, sizeof(u));
	assert_int_equal(shmr_dp_pick_init(&pk, SHMR_MAX_ROUTERS), 0);
	u.m.kind = SHMR_KIND_SEND;
	u.m.key = key;
	u.m.len = lenf;
	memcpy(u.m.data, p, n);
	tgt = shmr_dp_behaviour_decide_rcu(f->t, &pk, ri, &u.m);
	assert_int_equal(tgt->verdict, SHMR_DP_DELIVER);
	assert_non_null(tgt->name);
	shmr_dp_pick_fini(&pk);
	return tgt->name;
}
#endif

#endif
