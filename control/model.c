/*
 * The control plane's model of the domain: routers and their routes (from
 * the configuration), client endpoints and registered names (from the
 * socket), and the spec the dataplane is given.
 *
 * Invariants:
 *   - a route's inbox slot is allocated when the route is (at init, or by
 *     ADD) and freed only when the route is removed (lifecycle.c): workers
 *     come and go, the inbox (and what is queued in it) stays;
 *   - a client slot belongs to the connection that OPENed it until that
 *     connection closes or CLOSEs it; then it has no owner and no names
 *     but stays in the spec (polled: drain POLL) until the daemon finds
 *     its outbound lanes empty or gives up (shmr_ctl_model_drain_end(),
 *     control/drain.c), and only then is it freed;
 *   - a registered name points at an endpoint its connection opened or
 *     claimed, and goes when the endpoint or the connection goes;
 *   - every mutation sets dirty; the daemon then publishes the spec with
 *     version + 1, the version any slot freed meanwhile was stamped with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "request.h"

static void name_set(char dst[SHMR_NAME_MAX], const char *src)
{
	size_t n = strnlen(src, SHMR_NAME_MAX - 1);

	memcpy(dst, src, n);
	memset(dst + n, 0, SHMR_NAME_MAX - n);
}

int shmr_ctl_model_init(struct shmr_ctl_model *m,
			const struct shmr_config *cfg)
{
	struct shmr_pid pid;
	int reused, rc;

	shmr_ctl_model_fini(m);
	m->cfg = cfg;
	shmr_ctl_alloc_init(&m->alloc, shmr_config_endpoints(cfg));
	if (cfg->nrouters > shmr_config_routers(cfg) ||
	    cfg->nrouters > SHMR_MAX_ROUTERS)
		return -SHMR_E_NO_ENDPOINT;
	/* The routers configured: they never change while it runs. */
	m->routers = calloc(cfg->nrouters ? cfg->nrouters : 1,
			    sizeof(*m->routers));
	if (!m->routers)
		return -ENOMEM;
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		const struct shmr_conf_router *cr = &cfg->routers[i];
		struct shmr_ctl_router *r = &m->routers[i];

		if (!shmr_ctl_name_valid(cr->name))
			return -SHMR_E_NAME;
		for (unsigned j = 0; j < i; j++)
			if (strcmp(cfg->routers[j].name, cr->name) == 0)
				return -SHMR_E_NAME;
		if (cr->nroutes > shmr_config_routes_max(shmr_config_routes(cfg),
							 cr->behaviour) ||
		    cr->nroutes > SHMR_MAX_ROUTES)
			return -SHMR_E_NO_ENDPOINT;
		rc = shmr_ctl_alloc_get(&m->alloc, SHMR_EPK_ROUTER, 0, &pid,
					&reused);
		if (rc < 0)
			return rc;
		name_set(m->alloc.slots[pid.slot].name, cr->name);
		r->conf = cr;
		r->pid = pid;
		m->nrouters = i + 1;
	}
	for (unsigned i = 0; i < m->nrouters; i++) {
		struct shmr_ctl_router *r = &m->routers[i];

		for (unsigned k = 0; k < r->conf->nroutes; k++) {
			const struct shmr_conf_route *cq = &r->conf->routes[k];
			struct shmr_ctl_route *q = &r->routes[k];

			if (!shmr_ctl_name_valid(cq->name))
				return -SHMR_E_NAME;
			for (unsigned j = 0; j < k; j++)
				if (strcmp(r->conf->routes[j].name,
					   cq->name) == 0)
					return -SHMR_E_NAME;
			rc = shmr_ctl_alloc_get(&m->alloc, SHMR_EPK_ROUTE, 0,
						&pid, &reused);
			if (rc < 0)
				return rc;
			name_set(m->alloc.slots[pid.slot].name, cq->name);
			q->spec = *cq;
			q->conf = &q->spec;
			q->pid = pid;
			q->state = SHMR_ROUTE_DEAD;
			r->nroutes = k + 1;
		}
	}
	shmr_ctl_routees_init(m);
	m->dirty = 1;
	return 0;
}

void shmr_ctl_model_fini(struct shmr_ctl_model *m)
{
	free(m->routers);
	memset(m, 0, sizeof(*m));
}

struct shmr_ctl_router *shmr_ctl_model_router(struct shmr_ctl_model *m,
					      const char *name)
{
	for (unsigned i = 0; i < m->nrouters; i++)
		if (strncmp(m->routers[i].conf->name, name, SHMR_NAME_MAX) ==
		    0)
			return &m->routers[i];
	return NULL;
}

int shmr_ctl_model_route_index(const struct shmr_ctl_router *r,
			       const char *name)
{
	for (unsigned k = 0; k < r->nroutes; k++)
		if (strncmp(r->routes[k].conf->name, name, SHMR_NAME_MAX) ==
		    0)
			return (int)k;
	return -1;
}

struct shmr_ctl_route *shmr_ctl_model_route_of_slot(struct shmr_ctl_model *m,
						    uint32_t slot,
						    unsigned *router)
{
	for (unsigned i = 0; i < m->nrouters; i++)
		for (unsigned k = 0; k < m->routers[i].nroutes; k++)
			if (m->routers[i].routes[k].pid.slot == slot) {
				if (router)
					*router = i;
				return &m->routers[i].routes[k];
			}
	return NULL;
}

int shmr_ctl_model_open(struct shmr_ctl_model *m, uint64_t owner,
			int32_t os_pid, uint64_t seen_version,
			struct shmr_pid *out, int *reused)
{
	int rc = shmr_ctl_alloc_get(&m->alloc, SHMR_EPK_CLIENT, seen_version,
				    out, reused);

	if (rc < 0)
		return rc;
	m->alloc.slots[out->slot].owner = owner;
	m->alloc.slots[out->slot].os_pid = os_pid;
	m->dirty = 1;
	return 0;
}

int shmr_ctl_model_claim(struct shmr_ctl_model *m, uint64_t owner,
			 int32_t os_pid, struct shmr_pid pid)
{
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(&m->alloc, pid);
	struct shmr_ctl_route *r;

	if (!s || s->kind != SHMR_EPK_ROUTE)
		return -SHMR_E_NO_ENDPOINT;
	r = shmr_ctl_model_route_of_slot(m, pid.slot, NULL);
	if (!r)
		return -SHMR_E_NO_ENDPOINT;
	if (r->os_pid == 0 || r->os_pid != os_pid)
		return -SHMR_E_PERM;
	r->claimed_by = owner;
	return 0;
}

/* Does connection @p owner hold @p pid (opened it, or claimed it)? */
static int holds(struct shmr_ctl_model *m, uint64_t owner,
		 struct shmr_pid pid)
{
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(&m->alloc, pid);
	struct shmr_ctl_route *r;

	if (!s || owner == 0)
		return 0;
	if (s->kind == SHMR_EPK_CLIENT)
		return s->owner == owner;
	if (s->kind == SHMR_EPK_ROUTE) {
		r = shmr_ctl_model_route_of_slot(m, pid.slot, NULL);
		return r && r->claimed_by == owner;
	}
	return 0;
}

static void drop_names_of(struct shmr_ctl_model *m, struct shmr_pid pid)
{
	unsigned j = 0;

	for (unsigned i = 0; i < m->nnames; i++) {
		if (m->names[i].pid.slot == pid.slot &&
		    m->names[i].pid.gen == pid.gen) {
			m->dirty = 1;
			continue;
		}
		m->names[j++] = m->names[i];
	}
	memset(&m->names[j], 0, (m->nnames - j) * sizeof(m->names[0]));
	m->nnames = j;
}

void shmr_ctl_model_route_set(struct shmr_ctl_model *m,
			      struct shmr_ctl_route *r, int32_t os_pid)
{
	if (os_pid == 0) {
		/* The worker is confirmed dead: what it registered and its
		 * claim die with it, even before its connection's close is
		 * read, so its replacement can register the same names. */
		drop_names_of(m, r->pid);
		r->claimed_by = 0;
	}
	r->os_pid = os_pid;
	m->alloc.slots[r->pid.slot].os_pid = os_pid;
	if (r->state == SHMR_ROUTE_RUNNING || r->state == SHMR_ROUTE_DEAD)
		r->state = os_pid ? SHMR_ROUTE_RUNNING : SHMR_ROUTE_DEAD;
	m->dirty = 1;
}

/* A client slot its process closed or left: no owner, still polled. */
static void retire(struct shmr_ctl_model *m, struct shmr_ctl_slot *s)
{
	s->owner = 0;
	s->os_pid = 0;
	s->drain = SHMR_CTL_DRAIN_POLL;
	s->drain_since = 0;
	s->drain_left = 0;
	m->dirty = 1;
}

void shmr_ctl_model_retire(struct shmr_ctl_model *m, struct shmr_pid pid)
{
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(&m->alloc, pid);

	if (s && s->kind == SHMR_EPK_CLIENT) {
		drop_names_of(m, pid);
		retire(m, s);
	}
}

void shmr_ctl_model_drain_end(struct shmr_ctl_model *m, struct shmr_pid pid)
{
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(&m->alloc, pid);

	if (!s || s->drain != SHMR_CTL_DRAIN_POLL)
		return;
	shmr_ctl_alloc_put(&m->alloc, pid, m->version + 1);
	/* Drained or given up, it is counted once no lcore can put into
	 * its lanes (drain.c: what is left in them, sent or to be
	 * received, is dropped then). */
	s->drain = SHMR_CTL_DRAIN_COUNT;
	m->dirty = 1;
}

void shmr_ctl_model_drain_counted(struct shmr_ctl_model *m, uint32_t slot,
				  uint64_t dropped)
{
	if (slot >= m->alloc.nslots ||
	    m->alloc.slots[slot].drain != SHMR_CTL_DRAIN_COUNT)
		return;
	m->alloc.slots[slot].drain = SHMR_CTL_DRAIN_NONE;
	m->close_dropped += dropped;
}

int shmr_ctl_model_close(struct shmr_ctl_model *m, uint64_t owner,
			 struct shmr_pid pid)
{
	struct shmr_ctl_slot *s;

	if (!holds(m, owner, pid))
		return -SHMR_E_NO_ENDPOINT;
	s = shmr_ctl_alloc_lookup(&m->alloc, pid);
	drop_names_of(m, pid);
	if (s->kind == SHMR_EPK_CLIENT) {
		retire(m, s);
	} else {
		shmr_ctl_model_route_of_slot(m, pid.slot, NULL)->claimed_by =
			0;
	}
	return 0;
}

static int name_taken(const struct shmr_ctl_model *m, const char *name)
{
	for (unsigned i = 0; i < m->nrouters; i++)
		if (strcmp(m->routers[i].conf->name, name) == 0)
			return 1;
	for (unsigned i = 0; i < m->nnames; i++)
		if (strcmp(m->names[i].name, name) == 0)
			return 1;
	return 0;
}

int shmr_ctl_model_register(struct shmr_ctl_model *m, uint64_t owner,
			    const char *name, struct shmr_pid pid)
{
	struct shmr_ctl_name *n;

	if (!shmr_ctl_name_valid(name))
		return -SHMR_E_NAME;
	if (!holds(m, owner, pid))
		return -SHMR_E_NO_ENDPOINT;
	if (name_taken(m, name))
		return -SHMR_E_ROUTE_DUPLICATE;
	if (m->nrouters + m->nnames >= shmr_ctl_model_max_names(m))
		return -ENOSPC;
	n = &m->names[m->nnames++];
	name_set(n->name, name);
	n->pid = pid;
	n->owner = owner;
	m->dirty = 1;
	return 0;
}

int shmr_ctl_model_unregister(struct shmr_ctl_model *m, uint64_t owner,
			      const char *name, struct shmr_pid pid)
{
	if (!shmr_ctl_name_valid(name))
		return -SHMR_E_NAME;
	if (!holds(m, owner, pid))
		return -SHMR_E_NO_ENDPOINT;
	for (unsigned i = 0; i < m->nrouters; i++)
		if (strcmp(m->routers[i].conf->name, name) == 0)
			return -SHMR_E_PERM;
	for (unsigned i = 0; i < m->nnames; i++) {
		struct shmr_ctl_name *n = &m->names[i];

		if (strcmp(n->name, name) != 0)
			continue;
		if (n->pid.slot != pid.slot || n->pid.gen != pid.gen)
			return -SHMR_E_PERM;
		m->names[i] = m->names[--m->nnames];
		memset(&m->names[m->nnames], 0, sizeof(m->names[0]));
		m->dirty = 1;
		return 0;
	}
	return 0;
}

int shmr_ctl_model_drop_owner(struct shmr_ctl_model *m, uint64_t owner)
{
	int freed = 0;
	unsigned j = 0;

	if (owner == 0)
		return 0;
	for (unsigned i = 0; i < m->nnames; i++) {
		if (m->names[i].owner == owner) {
			m->dirty = 1;
			continue;
		}
		m->names[j++] = m->names[i];
	}
	memset(&m->names[j], 0, (m->nnames - j) * sizeof(m->names[0]));
	m->nnames = j;
	for (uint32_t i = 0; i < m->alloc.nslots; i++) {
		struct shmr_ctl_slot *s = &m->alloc.slots[i];

		if (s->state == SHMR_CTL_SLOT_USED &&
		    s->kind == SHMR_EPK_CLIENT && s->owner == owner) {
			retire(m, s);
			freed++;
		}
	}
	for (unsigned i = 0; i < m->nrouters; i++)
		for (unsigned k = 0; k < m->routers[i].nroutes; k++)
			if (m->routers[i].routes[k].claimed_by == owner)
				m->routers[i].routes[k].claimed_by = 0;
	return freed;
}

int shmr_ctl_model_rebind_owner(struct shmr_ctl_model *m, uint64_t from,
				uint64_t to)
{
	int moved = 0;

	if (from == 0)
		return 0;
	for (unsigned i = 0; i < m->nnames; i++)
		if (m->names[i].owner == from)
			m->names[i].owner = to;
	for (uint32_t i = 0; i < m->alloc.nslots; i++) {
		struct shmr_ctl_slot *s = &m->alloc.slots[i];

		if (s->state == SHMR_CTL_SLOT_USED &&
		    s->kind == SHMR_EPK_CLIENT && s->owner == from) {
			s->owner = to;
			moved++;
		}
	}
	for (unsigned i = 0; i < m->nrouters; i++)
		for (unsigned k = 0; k < m->routers[i].nroutes; k++)
			if (m->routers[i].routes[k].claimed_by == from) {
				m->routers[i].routes[k].claimed_by = to;
				moved++;
			}
	return moved;
}

void shmr_ctl_model_spec_build(const struct shmr_ctl_model *m,
			       const struct shmr_ctl_spec_bufs *b)
{
	struct shmr_spec *out = b->spec;
	struct shmr_spec_reg *names = b->names;
	struct shmr_spec_type *types = b->types;
	void *routes = b->routes;
	uint32_t max = shmr_ctl_model_max_names(m);
	uint32_t maxt = shmr_ctl_model_max_types(m);
	uint32_t maxq = shmr_ctl_model_routes_room(m);
	struct shmr_spec_type *tm;

	/* Up to the routers, each of the nrouters written below: what is
	 * published (shmr_spec_copy()). */
	memset(out, 0, offsetof(struct shmr_spec, routers));
	out->version = m->version;
	out->nrouters = m->nrouters;
	for (unsigned i = 0; i < m->nrouters; i++) {
		const struct shmr_ctl_router *r = &m->routers[i];
		const struct shmr_conf_router *c = r->conf;
		struct shmr_spec_router *s = &out->routers[i];
		struct shmr_spec_route *q = shmr_spec_routes_at(routes, maxq, i);
		char (*hash)[SHMR_NAME_MAX] = shmr_spec_hash_at(routes, maxq, i);

		memset(s, 0, sizeof(*s));
		name_set(s->name, c->name);
		s->pid = r->pid;
		s->behaviour = c->behaviour;
		s->flags = (c->fail_when_full ? SHMR_RF_FAIL_WHEN_FULL : 0) |
			   (r->stopped ? SHMR_RF_STOPPED : 0);
		s->nroutes = r->nroutes > maxq ? maxq : r->nroutes;
		for (unsigned k = 0; k < s->nroutes; k++) {
			memset(&q[k], 0, sizeof(q[k]));
			name_set(q[k].name, r->routes[k].conf->name);
			q[k].pid = r->routes[k].pid;
			q[k].state = r->routes[k].state;
			if (r->routes[k].state == SHMR_ROUTE_DEAD)
				q[k].start_err = r->routes[k].start_err;
		}
		s->ntypes = c->ntypes > maxt ? maxt : c->ntypes;
		tm = shmr_spec_types_at(types, maxt, i, 0);
		for (unsigned k = 0; k < s->ntypes; k++) {
			tm[k].type = c->types[k].type;
			name_set(tm[k].target, c->types[k].route);
		}
		/* The hash list, or a routing logic's routee names (none:
		 * its own routes, which the dataplane reads from the
		 * routes). */
		s->nhash = c->nhash > maxq ? maxq : c->nhash;
		for (unsigned k = 0; k < s->nhash; k++)
			name_set(hash[k], c->hash[k]);
		/* A routing logic's list as AddRoutee/RemoveRoutee left it
		 * (pool.c), or its own routes (nhash 0). */
		if (shmr_ctl_is_logic(c->behaviour)) {
			s->nhash = r->listed ? r->nroutees : 0;
			if (s->nhash > maxq)
				s->nhash = maxq;
			for (unsigned k = 0; k < s->nhash; k++)
				name_set(hash[k], r->routees[k]);
		}
		s->vnodes = c->vnodes;
		s->hash_key = c->hash_key;
		s->key_offset = c->key_offset;
		s->key_length = c->key_length;
		s->hash_mode = c->hash_mode;
		memcpy(s->node_prefix, c->node_prefix, sizeof(s->node_prefix));
		s->node_prefix[sizeof(s->node_prefix) - 1] = '\0';
		s->within_ms = c->within_ms;
		s->interval_ms = c->interval_ms;
		s->ncall_types = c->ncall_types > maxt ? maxt : c->ncall_types;
		tm = shmr_spec_types_at(types, maxt, i, 1);
		for (unsigned k = 0; k < s->ncall_types; k++) {
			tm[k].type = c->call_types[k].type;
			name_set(tm[k].target, c->call_types[k].route);
		}
		memcpy(s->dso, c->dso, sizeof(s->dso));
		s->dso[sizeof(s->dso) - 1] = '\0';
		memcpy(s->dso_arg, c->dso_arg, sizeof(s->dso_arg));
		s->dso_arg[sizeof(s->dso_arg) - 1] = '\0';
	}
	for (unsigned i = 0; i < m->nrouters && out->nreg < max; i++) {
		struct shmr_spec_reg *g = &names[out->nreg++];

		name_set(g->name, m->routers[i].conf->name);
		g->pid = m->routers[i].pid;
	}
	for (unsigned i = 0; i < m->nnames && out->nreg < max; i++) {
		struct shmr_spec_reg *g = &names[out->nreg++];

		name_set(g->name, m->names[i].name);
		g->pid = m->names[i].pid;
	}
	for (uint32_t i = 0; i < m->alloc.nslots; i++) {
		const struct shmr_ctl_slot *s = &m->alloc.slots[i];

		if (s->state == SHMR_CTL_SLOT_USED &&
		    (s->kind == SHMR_EPK_ROUTE || s->kind == SHMR_EPK_CLIENT))
			b->active[out->nactive++] = i;
	}
}

int shmr_ctl_is_logic(uint32_t behaviour)
{
	return behaviour != SHMR_BEH_TYPE && behaviour != SHMR_BEH_HASH &&
	       behaviour != SHMR_BEH_DSO;
}


void shmr_ctl_routees_init(struct shmr_ctl_model *m)
{
	for (unsigned i = 0; i < m->nrouters; i++) {
		struct shmr_ctl_router *r = &m->routers[i];
		const struct shmr_conf_router *cr = r->conf;

		r->listed = shmr_ctl_is_logic(cr->behaviour) && cr->nhash > 0;
		r->nroutees = r->listed ? cr->nhash : 0;
		for (unsigned k = 0; k < r->nroutees; k++)
			snprintf(r->routees[k], SHMR_NAME_MAX, "%s",
				 cr->hash[k]);
		/* Checked by shmr_config_validate(). */
		if (cr->resizer.kind != SHMR_RESIZER_NONE) {
			struct shmr_conf_optimal_cfg o;

			if (shmr_config_resizer_from_conf(&cr->resizer,
							  &r->rcfg, &o,
							  NULL) == 0 &&
			    cr->resizer.kind == SHMR_RESIZER_OPTIMAL)
				(void)shmr_ctl_optimal_init(&r->optimal, &o,
							    NULL);
		}
	}
}

