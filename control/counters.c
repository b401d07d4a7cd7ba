/*
 * The registry's table: counters.def expanded into one value function per
 * line and one row per line.  Everything that shows a counter iterates
 * this table, so that a line added to counters.def shows everywhere.
 */
#include "counters.h"

/* What each scope's value expressions may name (see counters.def). */
#define SHMR_CTR_VARS_ROUTER                                       \
	const struct shmr_ctl_router *r = at->r;                    \
	const struct shmr_ctl_counters *c = at->c;                  \
	const struct shmr_ctl_router_agg agg = *at->agg;            \
	uint32_t rs = r->pid.slot;                                  \
	(void)c, (void)agg, (void)rs;
#define SHMR_CTR_VARS_ROUTE                                        \
	const struct shmr_ctl_route *q = at->q;                     \
	const struct shmr_ctl_counters *c = at->c;                  \
	uint32_t qs = q->pid.slot;                                  \
	(void)c, (void)qs;
/* An arena class's figures (struct shmr_ctl_arena_counters). */
#define SHMR_CTR_VARS_ARENA \
	const struct shmr_ctl_arena_counters *a = &at->c->arena[at->arena];
#define SHMR_CTR_VARS_ENDPOINT                      \
	const struct shmr_ctl_counters *c = at->c;   \
	uint32_t es = at->slot;

/* A value only the control plane has (the dataplane leaves it out). */
#define SHMR_CTR_CONTROL(value) (value)

/* A value over the scope's variables (SHMR_CTR_VARS_<scope>). */
#define SHMR_CTR_FN_EXPR(scope, ctr, value)                              \
	static uint64_t v_##scope##_##ctr(const struct shmr_ctl_ctr_at *at) \
	{                                                                   \
		SHMR_CTR_VARS_##scope                                       \
		return (uint64_t)(value);                                   \
	}
#define SHMR_CTR(scope, ctr, kind, unit, help, value) \
	SHMR_CTR_FN_##scope(ctr, value)
#define SHMR_CTR_FN_ROUTER(ctr, value) SHMR_CTR_FN_EXPR(ROUTER, ctr, value)
#define SHMR_CTR_FN_ROUTE(ctr, value) SHMR_CTR_FN_EXPR(ROUTE, ctr, value)
#define SHMR_CTR_FN_ENDPOINT(ctr, value) \
	SHMR_CTR_FN_EXPR(ENDPOINT, ctr, value)
/* An lcore's value is its field of struct shmr_ctl_lcore_counters (the
 * name; the layout field it was loaded from is domain.c's business). */
#define SHMR_CTR_FN_LCORE(ctr, field)                                   \
	static uint64_t v_LCORE_##ctr(const struct shmr_ctl_ctr_at *at) \
	{                                                               \
		return at->c->lcore[at->lcore].ctr;                     \
	}
#define SHMR_CTR_FN_ARENA(ctr, value) SHMR_CTR_FN_EXPR(ARENA, ctr, value)
#include <shmr/counters.def>
#undef SHMR_CTR_FN_ARENA
#undef SHMR_CTR_FN_ROUTER
#undef SHMR_CTR_FN_ROUTE
#undef SHMR_CTR_FN_LCORE
#undef SHMR_CTR_FN_ENDPOINT
#undef SHMR_CTR_FN_EXPR
#undef SHMR_CTR_CONTROL
#undef SHMR_CTR

#define SHMR_CTR_IS_COUNTER 1
#define SHMR_CTR_IS_GAUGE 0

const struct shmr_ctl_ctr_desc shmr_ctl_ctr_registry[] = {
#define SHMR_CTR(scope, ctr, kind, unit, help, value)                    \
	{ SHMR_CTL_CTR_##scope, #ctr, SHMR_CTR_IS_##kind, unit, help, \
	  v_##scope##_##ctr },
#include <shmr/counters.def>
#undef SHMR_CTR
};

const unsigned shmr_ctl_ctr_count =
	sizeof(shmr_ctl_ctr_registry) / sizeof(shmr_ctl_ctr_registry[0]);
