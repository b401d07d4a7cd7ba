/*
 * The counter registry (counters.c, from counters.def) as a table: what
 * INSPECT, --json and the Prometheus text (metrics.c) iterate.  Internal
 * to the control plane: not for direct inclusion outside control/ and
 * tests/unit/control/.
 */
#ifndef SHMR_CONTROL_COUNTERS_H
#define SHMR_CONTROL_COUNTERS_H

#include <stdint.h>

#include "format.h"

enum shmr_ctl_ctr_scope {
	SHMR_CTL_CTR_ROUTER, /* labels {router}; key shmr:NAME */
	SHMR_CTL_CTR_ROUTE,  /* labels {router, route}; shmr:route:R:NAME */
	SHMR_CTL_CTR_LCORE,  /* labels {lcore}; shmr:lcore:N:NAME */
	/* A client's endpoint (routes' are ROUTE): labels {endpoint (its
	 * PID, SLOT:GEN), name (the name it registered, or "")}; key
	 * shmr:endpoint:SLOT:GEN:NAME */
	SHMR_CTL_CTR_ENDPOINT,
	/* A payload arena class: labels {class}; key shmr:arena:CLASS:NAME */
	SHMR_CTL_CTR_ARENA,
};

/* Where one value is read: the router (and route, for ROUTE; lcore, for
 * LCORE) and the counters read from the domain. */
struct shmr_ctl_ctr_at {
	const struct shmr_ctl_router *r;
	const struct shmr_ctl_route *q;
	const struct shmr_ctl_counters *c;
	const struct shmr_ctl_router_agg *agg; /* ROUTER: r's sums */
	unsigned lcore;
	uint32_t slot; /* ENDPOINT: the client's slot */
	const struct shmr_ctl_client *client; /* ENDPOINT (metrics) */
	unsigned arena; /* ARENA: the class's index in c->arena */
};

struct shmr_ctl_ctr_desc {
	uint32_t scope;   /* enum shmr_ctl_ctr_scope */
	const char *name; /* [a-z_] */
	int counter;      /* 1: a counter (_total); 0: a gauge */
	const char *unit;
	const char *help; /* one sentence, no newline or backslash */
	uint64_t (*value)(const struct shmr_ctl_ctr_at *at);
};

/* Every line of counters.def, in its order. */
extern const struct shmr_ctl_ctr_desc shmr_ctl_ctr_registry[];
extern const unsigned shmr_ctl_ctr_count;

#endif
