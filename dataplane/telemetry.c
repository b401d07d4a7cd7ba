/*
 * The dataplane's DPDK telemetry commands: /shmr/lcores, /shmr/routes,
 * /shmr/endpoints and /shmr/lanes, answered on EAL's telemetry socket
 * (RUNTIME_DIRECTORY, else /var/run for root, else $XDG_RUNTIME_DIR or
 * /tmp; then dpdk/shmr-DOMAIN/dpdk_telemetry.v2), so that Debian's
 * `dpdk-telemetry.py -f shmr-DOMAIN` lists and answers them.
 *
 * Each command follows DPDK's own convention (/ethdev/list, then
 * /ethdev/stats,ID): without a parameter it answers the list of what it
 * describes (lcore indices, "router/route" names, endpoint slots), with
 * one it answers a dict of that item's figures.  One answer stays well
 * inside the socket's 16 KiB message whatever the domain's size.
 *
 * Who runs this: DPDK's telemetry threads (one per connected client,
 * outside every routing lcore, never QSBR readers).  They only read the
 * domain: counters with relaxed loads (no partner: a snapshot, as every
 * reader of the single-writer counters takes it), the spec and the
 * endpoint table's control line inside one seqcount read (S3, as every
 * spec reader), the lanes' tails through shmr_lane_unconsumed().  They
 * never store to a line an lcore writes, so an operator polling
 * telemetry costs the fast path nothing but shared cache-line reads.
 * Everything they read may have been written by a peer (the lanes part)
 * or be mid-change: a lane that is not sound reads as -1, a name is
 * printed only as far as its safe characters go.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_telemetry.h>

#include "dataplane_internal.h"
#include "telemetry.h"

static const struct shmr_dp_env *g_tel_env;

/* A name from the domain as telemetry may print it: characters outside
 * [A-Za-z0-9._/:-] become '_', and it ends at SHMR_NAME_MAX whatever the
 * field holds (22.11's JSON writer escapes nothing). */
static void safe_name(char *out, const char *in, size_t n)
{
	size_t i;

	for (i = 0; i < n && in[i]; i++) {
		char c = in[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			 c == '/' || c == ':' || c == '-';

		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
}

/* "N" in [0, max): the parameter of /cmd,N; -1 if it is not one. */
static long param_index(const char *params, uint32_t max)
{
	char *end;
	unsigned long v;

	if (!params || params[0] < '0' || params[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (errno || *end || v >= max)
		return -1;
	return (long)v;
}

/* Relaxed: a snapshot of single-writer counters (no partner). */
static uint64_t ld(const _Atomic(uint64_t) *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static uint64_t sum_delivered(uint32_t slot)
{
	uint64_t s = 0;

	for (uint32_t l = 0; l < g_tel_env->nlcores; l++)
		s += ld(&shmr_dp_ep_ctr(g_tel_env, l, slot)->ep_delivered);
	return s;
}

/* Messages waiting in @p slot's inbound lanes; -1 if one is unsound. */
static int64_t inbound_depth(uint32_t slot)
{
	int64_t s = 0;

	for (uint32_t l = 0; l < g_tel_env->nlcores; l++) {
		int64_t n = shmr_lane_unconsumed(shmr_dp_lane(g_tel_env, slot, l),
						 g_tel_env->lane_size);

		if (n < 0)
			return -1;
		s += n;
	}
	return s;
}

static int cmd_lcores(const char *cmd, const char *params,
		      struct rte_tel_data *d)
{
	const struct shmr_lcore_stats *st;
	long i;

	(void)cmd;
	if (!params || !*params) {
		rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
		for (uint32_t l = 0; l < g_tel_env->nlcores; l++)
			rte_tel_data_add_array_int(d, (int)l);
		return 0;
	}
	i = param_index(params, g_tel_env->nlcores);
	if (i < 0)
		return -EINVAL;
	st = shmr_dp_stats(g_tel_env, (uint32_t)i);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "lcore", (int)i);
	rte_tel_data_add_dict_u64(d, "polls", ld(&st->polls));
	rte_tel_data_add_dict_u64(d, "rx", ld(&st->rx));
	rte_tel_data_add_dict_u64(d, "forwarded", ld(&st->forwarded));
	rte_tel_data_add_dict_u64(d, "discarded", ld(&st->discarded));
	rte_tel_data_add_dict_u64(d, "failed", ld(&st->failed));
	rte_tel_data_add_dict_u64(d, "bad", ld(&st->bad));
	rte_tel_data_add_dict_u64(d, "sleeps", ld(&st->sleeps));
	rte_tel_data_add_dict_u64(d, "table_version", ld(&st->table_version));
	rte_tel_data_add_dict_u64(d, "admin", ld(&st->admin));
	rte_tel_data_add_dict_u64(d, "admin_dropped", ld(&st->admin_dropped));
	return 0;
}

/* One route, as read inside one consistent spec read. */
struct route_view {
	char router[SHMR_NAME_MAX + 1], route[SHMR_NAME_MAX + 1];
	uint32_t state, slot, gen;
	uint32_t router_slot; /* the router's endpoint */
};

static const char *const route_states[] = {
	[SHMR_ROUTE_RUNNING] = "running",
	[SHMR_ROUTE_DEAD] = "dead",
	[SHMR_ROUTE_DISABLED] = "disabled",
	[SHMR_ROUTE_PENDING_DISABLE] = "pending_disable",
	[SHMR_ROUTE_PENDING_REPLACE] = "pending_replace",
	[SHMR_ROUTE_PENDING_REMOVE] = "pending_remove",
	[SHMR_ROUTE_REPLACE_WAIT] = "replace_wait",
};

/*
 * Every route of the spec into @p out (at most @p max), or only the one
 * named @p want ("router/route") when it is not NULL.  Returns the count,
 * or -SHMR_E_TIMEOUT when no consistent read could be had.
 */
static int read_routes(struct route_view *out, int max, const char *want)
{
	const struct shmr_spec *s = shmr_dp_spec(g_tel_env);
	uint64_t seq, deadline = shmr_spec_deadline();
	int n;

	do {
		if (shmr_spec_read_begin(s, deadline, &seq) < 0)
			return -SHMR_E_TIMEOUT;
		n = 0;
		uint32_t nr = s->nrouters < SHMR_MAX_ROUTERS ? s->nrouters
							     : SHMR_MAX_ROUTERS;

		for (uint32_t i = 0; i < nr; i++) {
			const struct shmr_spec_router *r = &s->routers[i];
			uint32_t nq = r->nroutes < SHMR_MAX_ROUTES
					      ? r->nroutes
					      : SHMR_MAX_ROUTES;

			for (uint32_t j = 0; j < nq && n < max; j++) {
				struct route_view *v = &out[n];
				char full[2 * SHMR_NAME_MAX + 2];

				safe_name(v->router, r->name, SHMR_NAME_MAX);
				safe_name(v->route, r->routes[j].name,
					  SHMR_NAME_MAX);
				snprintf(full, sizeof(full), "%s/%s",
					 v->router, v->route);
				if (want && strcmp(full, want) != 0)
					continue;
				v->state = r->routes[j].state;
				v->slot = r->routes[j].pid.slot;
				v->gen = r->routes[j].pid.gen;
				v->router_slot = r->pid.slot;
				n++;
			}
		}
	} while (shmr_spec_read_retry(s, seq));
	return n;
}

static int cmd_routes(const char *cmd, const char *params,
		      struct rte_tel_data *d)
{
	enum { MAXR = SHMR_MAX_ROUTERS * SHMR_MAX_ROUTES };
	struct route_view *v = calloc(MAXR, sizeof(*v));
	int n;

	(void)cmd;
	if (!v)
		return -ENOMEM;
	n = read_routes(v, MAXR, params && *params ? params : NULL);
	if (n < 0 || (params && *params && n == 0)) {
		free(v);
		return n < 0 ? n : -ENOENT;
	}
	if (!params || !*params) {
		rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
		for (int i = 0; i < n; i++) {
			char full[2 * SHMR_NAME_MAX + 2];

			snprintf(full, sizeof(full), "%s/%s", v[i].router,
				 v[i].route);
			rte_tel_data_add_array_string(d, full);
		}
		free(v);
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "router", v->router);
	rte_tel_data_add_dict_string(d, "route", v->route);
	rte_tel_data_add_dict_string(
		d, "state",
		v->state < sizeof(route_states) / sizeof(route_states[0]) &&
				route_states[v->state]
			? route_states[v->state]
			: "unknown");
	if (v->slot < g_tel_env->max_endpoints) {
		int64_t q = inbound_depth(v->slot);

		rte_tel_data_add_dict_int(d, "inbox_slot", (int)v->slot);
		rte_tel_data_add_dict_u64(d, "inbox_gen", v->gen);
		rte_tel_data_add_dict_u64(d, "delivered",
					  sum_delivered(v->slot));
		rte_tel_data_add_dict_int(d, "queued", (int)q);
	}
	/* The router's own counters (all its routes together). */
	if (v->router_slot < g_tel_env->max_endpoints) {
		uint64_t fw = 0, dis = 0, fail = 0;

		for (uint32_t l = 0; l < g_tel_env->nlcores; l++) {
			const struct shmr_ep_ctr *st =
				shmr_dp_ep_ctr(g_tel_env, l, v->router_slot);

			fw += ld(&st->router_forwarded);
			dis += ld(&st->router_discarded);
			fail += ld(&st->router_failed);
		}
		rte_tel_data_add_dict_u64(d, "router_forwarded", fw);
		rte_tel_data_add_dict_u64(d, "router_discarded", dis);
		rte_tel_data_add_dict_u64(d, "router_failed", fail);
	}
	free(v);
	return 0;
}

/* An endpoint's table entry, read consistently with the spec. */
struct ep_view {
	uint32_t state, gen, kind;
	int32_t os_pid;
	char name[SHMR_NAME_MAX + 1];
};

static int read_ep(uint32_t slot, struct ep_view *v)
{
	const struct shmr_spec *s = shmr_dp_spec(g_tel_env);
	const struct shmr_ep_shared *e = shmr_dp_ep(g_tel_env, slot);
	uint64_t seq, deadline = shmr_spec_deadline();

	do {
		if (shmr_spec_read_begin(s, deadline, &seq) < 0)
			return -SHMR_E_TIMEOUT;
		/* Relaxed: its writer changes it under the seqcount. */
		v->state = atomic_load_explicit(&e->state,
						memory_order_relaxed);
		v->gen = e->gen;
		v->kind = e->kind;
		v->os_pid = e->os_pid;
		safe_name(v->name, e->name, SHMR_NAME_MAX);
	} while (shmr_spec_read_retry(s, seq));
	return 0;
}

static int cmd_endpoints(const char *cmd, const char *params,
			 struct rte_tel_data *d)
{
	static const char *const kinds[] = { "none", "client", "route",
					     "router" };
	static const char *const states[] = { "free", "active",
					      "quarantined" };
	const struct shmr_ep_shared *e;
	struct ep_view v;
	long i;

	(void)cmd;
	if (!params || !*params) {
		rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
		for (uint32_t s = 0; s < g_tel_env->max_endpoints; s++)
			if (atomic_load_explicit(&shmr_dp_ep(g_tel_env, s)->state,
						 memory_order_relaxed) !=
			    SHMR_EP_FREE)
				rte_tel_data_add_array_int(d, (int)s);
		return 0;
	}
	i = param_index(params, g_tel_env->max_endpoints);
	if (i < 0)
		return -EINVAL;
	if (read_ep((uint32_t)i, &v) < 0)
		return -SHMR_E_TIMEOUT;
	e = shmr_dp_ep(g_tel_env, (uint32_t)i);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "slot", (int)i);
	rte_tel_data_add_dict_u64(d, "gen", v.gen);
	rte_tel_data_add_dict_string(d, "name", v.name);
	rte_tel_data_add_dict_string(d, "kind",
				     v.kind < 4 ? kinds[v.kind] : "unknown");
	rte_tel_data_add_dict_string(d, "state",
				     v.state < 3 ? states[v.state] : "unknown");
	rte_tel_data_add_dict_int(d, "os_pid", v.os_pid);
	/* Relaxed: the dataplane's own words, a snapshot (no partner). */
	rte_tel_data_add_dict_u64(
		d, "quarantined",
		atomic_load_explicit(&e->quarantined, memory_order_relaxed));
	rte_tel_data_add_dict_u64(d, "bad_slots", ld(&e->bad_slots));
	rte_tel_data_add_dict_u64(d, "delivered", sum_delivered((uint32_t)i));
	return 0;
}

static int cmd_lanes(const char *cmd, const char *params,
		     struct rte_tel_data *d)
{
	uint32_t nl = g_tel_env->nlcores;
	long i;

	if (!params || !*params)
		return cmd_endpoints(cmd, params, d);
	i = param_index(params, g_tel_env->max_endpoints);
	if (i < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "slot", (int)i);
	rte_tel_data_add_dict_int(d, "capacity",
				  (int)g_tel_env->lane_size - 1);
	/* Lane depths: entries not yet consumed, -1 for a lane that is not
	 * sound (a peer scribbled on it; the dataplane quarantines it). */
	for (uint32_t l = 0; l < SHMR_LANES_PER_EP(nl); l++) {
		char key[32];
		int64_t n = shmr_lane_unconsumed(
			shmr_dp_lane(g_tel_env, (uint32_t)i, l),
			g_tel_env->lane_size);

		if (l < nl)
			snprintf(key, sizeof(key), "in_%u", l);
		else
			snprintf(key, sizeof(key), "%s",
				 l == SHMR_LANE_OUT(nl) ? "out" : "out_high");
		rte_tel_data_add_dict_int(d, key, (int)n);
	}
	return 0;
}

int shmr_dp_telemetry_register(const struct shmr_dp_env *env)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/shmr/lcores", cmd_lcores,
		  "Routing lcores; with ,N: lcore N's counters." },
		{ "/shmr/routes", cmd_routes,
		  "Routes as router/route; with ,ROUTER/ROUTE: its state "
		  "and counters." },
		{ "/shmr/endpoints", cmd_endpoints,
		  "Endpoint slots in use; with ,SLOT: that endpoint." },
		{ "/shmr/lanes", cmd_lanes,
		  "Endpoint slots in use; with ,SLOT: its lanes' depths." },
	};

	g_tel_env = env;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int rc = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn,
						    cmds[i].help);

		if (rc < 0)
			return rc;
	}
	return 0;
}
