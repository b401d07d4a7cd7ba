/*
 * The dataplane's DPDK telemetry commands: /shmr/lcores, /shmr/routers,
 * /shmr/routes, /shmr/endpoints and /shmr/lanes, answered on EAL's
 * telemetry socket
 * (RUNTIME_DIRECTORY, else /var/run for root, else $XDG_RUNTIME_DIR or
 * /tmp; then dpdk/shmr-DOMAIN/dpdk_telemetry.v2), so that Debian's
 * `dpdk-telemetry.py -f shmr-DOMAIN` lists and answers them.
 *
 * Each command follows DPDK's own convention (/ethdev/list, then
 * /ethdev/stats,ID): without a parameter it answers the list of what it
 * describes (lcore indices, router names, "router/route" names, endpoint
 * slots), with one it answers a dict of that item's figures: what names
 * it, then every counter of the registry's scope (shmr/counters.def:
 * ROUTER, ROUTE, LCORE, ENDPOINT) under its registry name, with the value
 * shmrctl shows (telemetry_ctrs.c).  One answer stays well inside the
 * socket's 16 KiB message whatever the domain's size.
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
#include "telemetry_ctrs.h"

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
	/* Not a registry counter: the spec version the lcore applied. */
	rte_tel_data_add_dict_u64(d, "table_version", ld(&st->table_version));
	shmr_dp_tel_lcore_add(g_tel_env, (uint32_t)i, d);
	return 0;
}

/* One route, as read inside one consistent spec read. */
struct route_view {
	char router[SHMR_NAME_MAX + 1], route[SHMR_NAME_MAX + 1];
	uint32_t state, slot, gen;
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
 * @p fn(spec, arg) inside one consistent read of the spec: again until a
 * read was consistent.  Returns fn's return, or -SHMR_E_TIMEOUT when no
 * consistent read could be had.
 */
static int in_spec_read(int (*fn)(const struct shmr_spec *s, void *arg),
			void *arg)
{
	const struct shmr_spec *s = shmr_dp_spec(g_tel_env);
	uint64_t seq, deadline = shmr_spec_deadline();
	int rc;

	do {
		if (shmr_spec_read_begin(s, deadline, &seq) < 0)
			return -SHMR_E_TIMEOUT;
		rc = fn(s, arg);
	} while (shmr_spec_read_retry(s, seq));
	return rc;
}

/* The spec's routers, held below our copy of the header's max_routers. */
static uint32_t spec_nrouters(const struct shmr_spec *s)
{
	uint32_t nr = __atomic_load_n(&s->nrouters, __ATOMIC_RELAXED);

	return nr < g_tel_env->max_routers ? nr : g_tel_env->max_routers;
}

/* Router slot @p ri's routes in the domain's route region. */
static const struct shmr_spec_route *spec_routes(uint32_t ri)
{
	return shmr_spec_routes_at(shmr_dp_routes(g_tel_env),
				   g_tel_env->max_routes, ri);
}

/* read_routes()'s arguments. */
struct routes_read {
	struct route_view *out;
	int max;
	const char *want;
};

static int routes_in(const struct shmr_spec *s, void *arg)
{
	const struct routes_read *a = arg;
	int n = 0;

	for (uint32_t i = 0; i < spec_nrouters(s); i++) {
		const struct shmr_spec_router *r = &s->routers[i];
		const struct shmr_spec_route *q = spec_routes(i);
		uint32_t nq = shmr_spec_nroutes(r, g_tel_env->max_routes);

		for (uint32_t j = 0; j < nq && n < a->max; j++) {
			struct route_view *v = &a->out[n];
			char full[2 * SHMR_NAME_MAX + 2];

			safe_name(v->router, r->name, SHMR_NAME_MAX);
			safe_name(v->route, q[j].name, SHMR_NAME_MAX);
			snprintf(full, sizeof(full), "%s/%s", v->router,
				 v->route);
			if (a->want && strcmp(full, a->want) != 0)
				continue;
			v->state = q[j].state;
			v->slot = q[j].pid.slot;
			v->gen = q[j].pid.gen;
			n++;
		}
	}
	return n;
}

/*
 * Every route of the spec into @p out (at most @p max), or only the one
 * named @p want ("router/route") when it is not NULL.  Returns the count,
 * or -SHMR_E_TIMEOUT when no consistent read could be had.
 */
static int read_routes(struct route_view *out, int max, const char *want)
{
	struct routes_read a = { out, max, want };

	return in_spec_read(routes_in, &a);
}

/* read_router()'s arguments. */
struct router_read {
	const char *want;
	struct shmr_dp_tel_router_view *v;
	char *name;
	struct rte_tel_data *d;
};

static int router_in(const struct shmr_spec *s, void *arg)
{
	const struct router_read *a = arg;

	if (!a->want)
		rte_tel_data_start_array(a->d, RTE_TEL_STRING_VAL);
	for (uint32_t i = 0; i < spec_nrouters(s); i++) {
		const struct shmr_spec_router *r = &s->routers[i];
		const struct shmr_spec_route *rq = spec_routes(i);

		safe_name(a->name, r->name, SHMR_NAME_MAX);
		if (!a->want) {
			rte_tel_data_add_array_string(a->d, a->name);
			continue;
		}
		if (strcmp(a->name, a->want) != 0)
			continue;
		a->v->slot = r->pid.slot;
		a->v->nroutes = shmr_spec_nroutes(r, g_tel_env->max_routes);
		for (uint32_t j = 0; j < a->v->nroutes; j++) {
			uint32_t q = rq[j].pid.slot;

			a->v->routes[j].slot = q;
			a->v->routes[j].state = rq[j].state;
			a->v->routes[j].os_pid =
				q < g_tel_env->max_endpoints
					? shmr_dp_ep(g_tel_env, q)->os_pid
					: 0;
		}
		return 1;
	}
	return 0;
}

/*
 * Router @p want's view (struct shmr_dp_tel_router_view) into @p v and its
 * safe name into @p name, or, with @p want NULL, every router's safe name
 * into the array @p d.  Inside one consistent spec read.  Returns 1 found,
 * 0 not, -SHMR_E_TIMEOUT when no consistent read could be had.
 */
static int read_router(const char *want, struct shmr_dp_tel_router_view *v,
		       char name[SHMR_NAME_MAX + 1], struct rte_tel_data *d)
{
	struct router_read a = { want, v, name, d };

	return in_spec_read(router_in, &a);
}

static int cmd_routers(const char *cmd, const char *params,
		       struct rte_tel_data *d)
{
	struct shmr_dp_tel_router_view v;
	char name[SHMR_NAME_MAX + 1];
	int rc;

	(void)cmd;
	if (!params || !*params)
		return read_router(NULL, NULL, name, d) < 0 ? -SHMR_E_TIMEOUT
							    : 0;
	rc = read_router(params, &v, name, d);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "router", name);
	rte_tel_data_add_dict_int(d, "slot", (int)v.slot);
	/* The registry's ROUTER lines. */
	return shmr_dp_tel_router_add(g_tel_env, &v, d);
}

static int cmd_routes(const char *cmd, const char *params,
		      struct rte_tel_data *d)
{
	/* Every route the domain's routers can hold. */
	const int MAXR = (int)(g_tel_env->max_routers * g_tel_env->max_routes);
	struct route_view *v = calloc((size_t)MAXR, sizeof(*v));
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
		rte_tel_data_add_dict_int(d, "inbox_slot", (int)v->slot);
		rte_tel_data_add_dict_u64(d, "inbox_gen", v->gen);
		/* The registry's ROUTE lines, of the route's inbox. */
		n = shmr_dp_tel_slot_add(g_tel_env, SHMR_DP_TEL_ROUTE, v->slot,
					 d);
	}
	free(v);
	return n < 0 ? n : 0;
}

/* An endpoint's table entry, read consistently with the spec. */
struct ep_view {
	uint32_t state, gen, kind;
	int32_t os_pid;
	char name[SHMR_NAME_MAX + 1];
};

/* read_ep()'s arguments. */
struct ep_read {
	uint32_t slot;
	struct ep_view *v;
};

static int ep_in(const struct shmr_spec *s, void *arg)
{
	const struct ep_read *a = arg;
	const struct shmr_ep_shared *e = shmr_dp_ep(g_tel_env, a->slot);

	(void)s;
	/* Relaxed: its writer changes it under the seqcount. */
	a->v->state = atomic_load_explicit(&e->state, memory_order_relaxed);
	a->v->gen = e->gen;
	a->v->kind = e->kind;
	a->v->os_pid = e->os_pid;
	safe_name(a->v->name, e->name, SHMR_NAME_MAX);
	return 0;
}

static int read_ep(uint32_t slot, struct ep_view *v)
{
	struct ep_read a = { slot, v };

	return in_spec_read(ep_in, &a);
}

static int cmd_endpoints(const char *cmd, const char *params,
			 struct rte_tel_data *d)
{
	static const char *const kinds[] = { "none", "client", "route",
					     "router" };
	static const char *const states[] = { "free", "active",
					      "quarantined" };
	struct ep_view v;
	long i;

	(void)cmd;
	if (!params || !*params || strncmp(params, "from=", 5) == 0) {
		/* A list holds RTE_TEL_MAX_ARRAY_ENTRIES: the slots in use
		 * from slot S (from=S, 0 without), at most that many; ask
		 * from=LAST+1 for the rest. */
		long from = params && *params
				    ? param_index(params + 5,
						  g_tel_env->max_endpoints)
				    : 0;
		unsigned n = 0;

		if (from < 0)
			return -EINVAL;
		rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
		for (uint32_t s = (uint32_t)from;
		     s < g_tel_env->max_endpoints &&
		     n < RTE_TEL_MAX_ARRAY_ENTRIES;
		     s++)
			if (atomic_load_explicit(&shmr_dp_ep(g_tel_env, s)->state,
						 memory_order_relaxed) !=
			    SHMR_EP_FREE) {
				rte_tel_data_add_array_int(d, (int)s);
				n++;
			}
		return 0;
	}
	i = param_index(params, g_tel_env->max_endpoints);
	if (i < 0)
		return -EINVAL;
	if (read_ep((uint32_t)i, &v) < 0)
		return -SHMR_E_TIMEOUT;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "slot", (int)i);
	rte_tel_data_add_dict_u64(d, "gen", v.gen);
	rte_tel_data_add_dict_string(d, "name", v.name);
	rte_tel_data_add_dict_string(d, "kind",
				     v.kind < 4 ? kinds[v.kind] : "unknown");
	rte_tel_data_add_dict_string(d, "state",
				     v.state < 3 ? states[v.state] : "unknown");
	rte_tel_data_add_dict_int(d, "os_pid", v.os_pid);
	/* The registry's ENDPOINT lines. */
	return shmr_dp_tel_slot_add(g_tel_env, SHMR_DP_TEL_ENDPOINT,
				    (uint32_t)i, d);
}

static int cmd_lanes(const char *cmd, const char *params,
		     struct rte_tel_data *d)
{
	uint32_t nl = g_tel_env->nlcores;
	long i;

	if (!params || !*params || strncmp(params, "from=", 5) == 0)
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
		{ "/shmr/routers", cmd_routers,
		  "Routers; with ,ROUTER: its counters." },
		{ "/shmr/routes", cmd_routes,
		  "Routes as router/route; with ,ROUTER/ROUTE: its state "
		  "and counters." },
		{ "/shmr/endpoints", cmd_endpoints,
		  "Endpoint slots in use (512 at most; ,from=S: from slot "
		  "S on); with ,SLOT: that endpoint." },
		{ "/shmr/lanes", cmd_lanes,
		  "Endpoint slots in use (as /shmr/endpoints); with ,SLOT: "
		  "its lanes' depths." },
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
