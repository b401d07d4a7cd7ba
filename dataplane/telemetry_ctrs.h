/*
 * The counter registry in the dataplane's telemetry (telemetry_ctrs.c):
 * one /shmr/ answer's registry counters, under their registry names.
 * Internal to shmr-dataplane: not for direct inclusion elsewhere.
 */
#ifndef SHMR_DP_TELEMETRY_CTRS_H
#define SHMR_DP_TELEMETRY_CTRS_H

#include <stdint.h>

#include <rte_telemetry.h>

#include <shmr/layout.h>

struct shmr_dp_env;

/* The registry's scopes (counters.def), as telemetry answers them. */
enum shmr_dp_tel_scope {
	SHMR_DP_TEL_ROUTER,   /* /shmr/routers,ROUTER */
	SHMR_DP_TEL_ROUTE,    /* /shmr/routes,ROUTER/ROUTE */
	SHMR_DP_TEL_LCORE,    /* /shmr/lcores,N */
	SHMR_DP_TEL_ENDPOINT, /* /shmr/endpoints,SLOT */
	SHMR_DP_TEL_ARENA,    /* none: the control plane's (counters.def) */
};

/* A router as one consistent spec read found it (telemetry.c). */
struct shmr_dp_tel_router_view {
	uint32_t slot; /* the router's endpoint */
	uint32_t nroutes;
	struct {
		uint32_t slot, state; /* the inbox, enum shmr_route_state */
		int32_t os_pid;       /* its worker (the slot's entry), or 0 */
	} routes[SHMR_MAX_ROUTES];
};

/**
 * Add routing lcore @p lcore's LCORE lines to the dict @p d.
 *
 * Context:     a telemetry callback; @p lcore < env->nlcores.
 * Concurrency: relaxed loads only (telemetry_ctrs.c's opening).
 * Errors:      none.
 */
void shmr_dp_tel_lcore_add(const struct shmr_dp_env *env, uint32_t lcore,
			   struct rte_tel_data *d);

/**
 * Add the @p scope lines (SHMR_DP_TEL_ROUTE for a route's inbox slot,
 * SHMR_DP_TEL_ENDPOINT for any endpoint) of slot @p slot to the dict @p d.
 *
 * Context:     a telemetry callback.
 * Concurrency: relaxed loads, one spec read (telemetry_ctrs.c's opening).
 * Errors:      -EINVAL for a slot out of range, -SHMR_E_TIMEOUT when no
 *              consistent spec read could be had (nothing added).
 */
int shmr_dp_tel_slot_add(const struct shmr_dp_env *env, uint32_t scope,
			 uint32_t slot, struct rte_tel_data *d);

/**
 * Add the ROUTER lines of the router @p v describes to the dict @p d.
 *
 * Context:     a telemetry callback.
 * Concurrency: as shmr_dp_tel_slot_add().
 * Errors:      -SHMR_E_TIMEOUT (nothing added); a route whose figures
 *              could not be read is left out of the sums.
 */
int shmr_dp_tel_router_add(const struct shmr_dp_env *env,
			   const struct shmr_dp_tel_router_view *v,
			   struct rte_tel_data *d);

#endif
