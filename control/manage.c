/*
 * The management and special messages of a router (include/shmr/shmr.h,
 * SHMR_TYPE_*), the same whether they come as messages on the admin path
 * or as shmrctl's requests on the control socket: GetRoutees, AddRoutee,
 * RemoveRoutee, AdjustPoolSize, PoisonPill and Kill.  The work is pool.c's
 * and lifecycle.c's; this file maps a request to it and logs what changed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <shmr/domain.h>

#include "control_internal.h"
#include "manage.h"
#include "pool.h"

void shmr_ctl_manage_init(struct shmr_ctl_pools *p, struct shmr_ctl_model *m,
			  struct shmr_ctl_life *life, struct shmr_ctl_domain *d,
			  struct shmr_ctl_admin *admin)
{
	*p = (struct shmr_ctl_pools){ .m = m, .life = life, .d = d,
				      .admin = admin };
}

/* The changes not logged one by one, in one line. */
static void change_log_flush(struct shmr_ctl_pools *p)
{
	const uint64_t *h = p->log_held;

	if (h[0] + h[1] + h[2])
		shmr_ctl_log("%" PRIu64 " more routee change(s) in the second "
			     "before, not logged one by one: AddRoutee %" PRIu64
			     ", RemoveRoutee %" PRIu64 ", AdjustPoolSize %" PRIu64,
			     h[0] + h[1] + h[2], h[0], h[1], h[2]);
	memset(p->log_held, 0, sizeof(p->log_held));
	p->log_flush_ms = 0;
}

/* A change's line (@p kind: 0 add, 1 remove, 2 adjust), or a count of it
 * past SHMR_CTL_CHANGE_LOG_PER_S in a second: a script or a churn of
 * thousands of changes a second must neither flood the journal nor pay a
 * write(2) a change.  Each change is answered as usual. */
__attribute__((format(printf, 3, 4)))
static void change_log(struct shmr_ctl_pools *p, unsigned kind,
		       const char *fmt, ...)
{
	uint64_t now = shmr_ctl_now_ms();
	char line[256];
	va_list ap;

	if (now >= p->log_window_ms + 1000) {
		change_log_flush(p);
		p->log_window_ms = now;
		p->log_n = 0;
	}
	if (p->log_n >= SHMR_CTL_CHANGE_LOG_PER_S) {
		p->log_held[kind]++;
		p->log_flush_ms = p->log_window_ms + 1000;
		return;
	}
	p->log_n++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	shmr_ctl_log("%s", line);
}

int shmr_ctl_manage(struct shmr_ctl_pools *p, unsigned r, uint32_t type,
		    const char *name, int64_t delta, char *text, size_t cap)
{
	struct shmr_ctl_router *ro = &p->m->routers[r];
	const char *rn = ro->conf->name;
	int rc;

	if (cap)
		text[0] = '\0';
	if (type == SHMR_TYPE_GET_ROUTEES)
		return shmr_ctl_routees_format(ro, text, cap);
	if (ro->stopped)
		return -SHMR_E_NOT_ALLOWED;
	switch (type) {
	case SHMR_TYPE_ADD_ROUTEE:
		rc = shmr_ctl_routee_add(p->life, r, name);
		change_log(p, 0, "router %s: AddRoutee %s: %s", rn, name,
			     rc < 0 ? shmr_strerror(rc) : "ok");
		return rc;
	case SHMR_TYPE_REMOVE_ROUTEE:
		rc = shmr_ctl_routee_remove(p->life, r, name);
		change_log(p, 1, "router %s: RemoveRoutee %s: %s", rn, name,
			     rc < 0 ? shmr_strerror(rc) : "ok");
		return rc;
	case SHMR_TYPE_ADJUST_POOL_SIZE:
		if (delta > SHMR_MAX_ROUTES)
			delta = SHMR_MAX_ROUTES;
		if (delta < -(int64_t)SHMR_MAX_ROUTES)
			delta = -(int64_t)SHMR_MAX_ROUTES;
		rc = shmr_ctl_pool_adjust(p->life, r, (int)delta);
		change_log(p, 2, "router %s: AdjustPoolSize(%+" PRId64 "): %s%d",
			     rn, delta, rc < 0 ? "" : "size ",
			     rc < 0 ? 0 : rc);
		if (rc >= 0)
			snprintf(text, cap, "%d", rc);
		return rc < 0 ? rc : (int)strlen(text);
	case SHMR_TYPE_POISON_PILL:
		shmr_ctl_log("router %s: PoisonPill: stopping the router "
			     "and its pool", rn);
		shmr_ctl_life_stop_router(p->life, r);
		return 0;
	case SHMR_TYPE_KILL:
		shmr_ctl_log("router %s: Kill: %s", rn,
			     ro->conf->on_kill_stop
				     ? "stopping the router (on_kill = stop)"
				     : "restarting its routees");
		shmr_ctl_life_kill_router(p->life, r);
		return 0;
	default:
		return -SHMR_E_NOT_ALLOWED;
	}
}

int shmr_ctl_manage_kill_router(const struct shmr_ctl_pools *p, int r,
				struct shmr_pid to, unsigned *ri)
{
	const struct shmr_ctl_route *q;

	if (r >= 0) {
		*ri = (unsigned)r;
		return 0;
	}
	q = shmr_ctl_model_route_of_slot(p->m, to.slot, ri);
	return q && q->pid.gen == to.gen ? 0 : -SHMR_E_PROCESS_UNKNOWN;
}

/* Kill route @p k of router @p ri's worker, if it has one; 1 if killed. */
static int kill_route(struct shmr_ctl_pools *p, unsigned ri, unsigned k,
		      const struct shmr_msg *m)
{
	struct shmr_ctl_route *q = &p->m->routers[ri].routes[k];

	if (q->os_pid == 0 || q->state == SHMR_ROUTE_PENDING_REMOVE)
		return 0;
	shmr_ctl_log("route %s: Kill from %u:%u%s: killing worker %d",
		     q->conf->name, m->from.slot, m->from.gen,
		     m->flags & SHMR_F_BROADCAST ? " (Broadcast)" : "",
		     (int)q->os_pid);
	p->life->ops->kill(p->life->ctx, ri, k);
	return 1;
}

/* Router @p ri's listed routee @p name as a route: a route of that name
 * (in any router), or the route whose inbox a registered name is. */
static int kill_listed(struct shmr_ctl_pools *p, const char *name,
		       const struct shmr_msg *m)
{
	const struct shmr_ctl_model *mo = p->m;
	unsigned ri;

	for (ri = 0; ri < mo->nrouters; ri++) {
		int k = shmr_ctl_model_route_index(&mo->routers[ri], name);

		if (k >= 0)
			return kill_route(p, ri, (unsigned)k, m);
	}
	for (unsigned i = 0; i < mo->nnames; i++) {
		const struct shmr_ctl_route *q;

		if (strncmp(mo->names[i].name, name, SHMR_NAME_MAX) != 0)
			continue;
		q = shmr_ctl_model_route_of_slot(p->m, mo->names[i].pid.slot,
						 &ri);
		if (q)
			return kill_route(
				p, ri,
				(unsigned)(q - mo->routers[ri].routes), m);
		break;
	}
	shmr_ctl_log("Kill from %u:%u: routee %s is not a route of this "
		     "appliance: not killed",
		     m->from.slot, m->from.gen, name);
	return 0;
}

int shmr_ctl_manage_kill(struct shmr_ctl_pools *p, int r,
			 const struct shmr_msg *m)
{
	struct shmr_ctl_router *ro;
	unsigned ri;
	int n = 0;

	if (r < 0) {
		const struct shmr_ctl_route *q =
			shmr_ctl_model_route_of_slot(p->m, m->to.slot, &ri);

		if (!q || q->pid.gen != m->to.gen)
			return -SHMR_E_PROCESS_UNKNOWN;
		return kill_route(p, ri,
				  (unsigned)(q - p->m->routers[ri].routes), m);
	}
	ro = &p->m->routers[r];
	if (ro->stopped)
		return -SHMR_E_NOT_ALLOWED;
	if (ro->listed) {
		for (unsigned i = 0; i < ro->nroutees; i++)
			n += kill_listed(p, ro->routees[i], m);
		return n;
	}
	for (unsigned k = 0; k < ro->nroutes; k++)
		n += kill_route(p, (unsigned)r, k, m);
	return n;
}

#define RESIZE_TICK_MS 100u

/* The load of router @p ri's routees: busy flags and inbox depths. */
static unsigned loads(struct shmr_ctl_pools *p, unsigned ri,
		      const struct shmr_ctl_counters *cnt,
		      struct shmr_ctl_routee_load *out, uint64_t *taken)
{
	const struct shmr_ctl_router *r = &p->m->routers[ri];
	unsigned n = 0;

	*taken = 0;
	for (unsigned k = 0; k < r->nroutes; k++) {
		uint32_t s = r->routes[k].pid.slot;

		if (r->routes[k].state == SHMR_ROUTE_PENDING_REMOVE)
			continue;
		/* Relaxed: a hint the worker's library keeps; no partner. */
		out[n].busy = atomic_load_explicit(
			&shmr_ctl_dom_ep_peer(p->d, s)->busy,
			memory_order_relaxed);
		out[n].depth = cnt->queued[s] > UINT32_MAX
				       ? UINT32_MAX
				       : (uint32_t)cnt->queued[s];
		if (cnt->delivered[s] > cnt->queued[s])
			*taken += cnt->delivered[s] - cnt->queued[s];
		n++;
	}
	return n;
}

void shmr_ctl_resize_tick(struct shmr_ctl_pools *p, uint64_t now)
{
	static struct shmr_ctl_counters cnt;
	struct shmr_ctl_routee_load ld[SHMR_MAX_ROUTES];
	const struct shmr_ctl_rng rng = { shmr_ctl_rng_splitmix,
					  &p->rng_state };
	int any = 0;

	p->resize_at_ms = 0;
	shmr_ctl_counters_read(p->d, p->m, &cnt);
	for (unsigned ri = 0; ri < p->m->nrouters; ri++) {
		struct shmr_ctl_router *r = &p->m->routers[ri];
		const struct shmr_conf_router *cr = r->conf;
		uint64_t fwd = cnt.forwarded[r->pid.slot], taken;
		unsigned n, mpr;
		int delta = 0, kept;

		if (cr->resizer.kind == SHMR_RESIZER_NONE || r->stopped)
			continue;
		any = 1;
		/* Out of its bounds (at start, or after a routee died and
		 * was removed): back within them now, whatever the count. */
		n = loads(p, ri, &cnt, ld, &taken);
		kept = shmr_ctl_pool_keep_bounds(p->life, ri);
		if (kept != (int)n) {
			if (kept >= 0)
				shmr_ctl_log("router %s: resizer: size %u "
					     "outside its bounds, now %d",
					     cr->name, n, kept);
			continue;
		}
		if (cr->resizer.kind == SHMR_RESIZER_DEFAULT) {
			/* Pekko looks when a message numbered a multiple of
			 * messages_per_resize arrives; this looks when such a
			 * multiple has been passed since the last look. */
			mpr = (unsigned)r->rcfg.messages_per_resize;
			if (fwd / mpr == r->rs_seen / mpr)
				continue;
			r->rs_seen = fwd;
			delta = shmr_ctl_resizer_capacity(&r->rcfg, ld, n);
		} else {
			if (!shmr_ctl_optimal_is_time(&r->optimal, now))
				continue;
			shmr_ctl_optimal_report(&r->optimal, now, ld, n,
						taken >= r->rs_processed
							? taken - r->rs_processed
							: 0);
			r->rs_processed = taken;
			delta = shmr_ctl_optimal_resize(&r->optimal, now, n, &rng,
							NULL);
		}
		if (delta == 0)
			continue;
		shmr_ctl_log("router %s: resizer: %+d routee(s) (size %u)",
			     cr->name, delta, n);
		(void)shmr_ctl_pool_adjust(p->life, ri, delta);
	}
	if (any)
		p->resize_at_ms = now + RESIZE_TICK_MS;
}

void shmr_ctl_resize_start(struct shmr_ctl_pools *p, uint64_t seed)
{
	p->rng_state = seed;
	p->resize_at_ms = shmr_ctl_now_ms() + 1;
}

uint64_t shmr_ctl_resize_next_ms(const struct shmr_ctl_pools *p)
{
	uint64_t f = p->log_flush_ms, r = p->resize_at_ms;

	return f && (!r || f < r) ? f : r;
}

void shmr_ctl_resize_due(struct shmr_ctl_pools *p, uint64_t now)
{
	if (p->log_flush_ms && p->log_flush_ms <= now)
		change_log_flush(p);
	if (p->resize_at_ms && p->resize_at_ms <= now)
		shmr_ctl_resize_tick(p, now);
}

void shmr_ctl_manage_msg(struct shmr_ctl_pools *p, unsigned r,
			 const struct shmr_msg *m)
{
	char name[SHMR_NAME_MAX] = "";
	char text[1024];
	uint32_t ss = p->d->geo.slot_size;
	int rc;

	if ((m->type == SHMR_TYPE_ADD_ROUTEE ||
	     m->type == SHMR_TYPE_REMOVE_ROUTEE) &&
	    (m->len == 0 || m->len >= SHMR_NAME_MAX ||
	     memchr(m->data, '\0', m->len))) {
		rc = -SHMR_E_NAME;
	} else {
		if (m->type == SHMR_TYPE_ADD_ROUTEE ||
		    m->type == SHMR_TYPE_REMOVE_ROUTEE)
			memcpy(name, m->data, m->len);
		rc = shmr_ctl_manage(p, r, m->type, name, (int64_t)m->key,
				     text,
				     ss - SHMR_HDR_SIZE < sizeof(text)
					     ? ss - SHMR_HDR_SIZE
					     : sizeof(text));
	}
	/* Answered once the lcores route by what the answer says. */
	if (m->kind == SHMR_KIND_CALL)
		(void)shmr_ctl_admin_reply_applied(
			p->admin, m, rc < 0 ? rc : 0, text,
			rc > 0 ? (size_t)rc : 0,
			shmr_ctl_model_pending_version(p->m));
	else if (rc < 0)
		shmr_ctl_warn("router %s: management message type 0x%" PRIx32
			      " from %u:%u: %s",
			      p->m->routers[r].conf->name, m->type,
			      m->from.slot, m->from.gen, shmr_strerror(rc));
}
