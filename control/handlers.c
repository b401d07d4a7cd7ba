/*
 * A router's admin-path handlers (include/shmr/handler.h):
 * loaded from the shared object its configuration names, run in the
 * control plane's single thread for the admin endpoint's slots and for
 * INSPECT, and the router's stop when one of them fails.
 *
 * Each router has a struct shmr_ctl_hrouter whose first member is the
 * public struct shmr_admin the hooks receive; the ops given to them find
 * the rest from it.  A hook runs to completion before the loop does
 * anything else, so no state here is shared with another thread.
 *
 * A stopped router's hooks are never run again: what still reaches its
 * admin path gets the defaults (dead letters are kept, calls refused).
 *
 * The defaults (a router without handlers, or a hook that asks for them):
 *   - MessageRouteFailed: one log line (at most one a second, with a count
 *     of those suppressed) and a record appended to the router's dead-
 *     letter file <run_dir>/<domain>.<router>.dlq (dlqfile.c, dlq.c);
 *   - another high-priority send: logged (rate-limited) and counted;
 *   - a high-priority call: payload "stats" is answered with the router's
 *     counters as text ("forwarded=N discarded=N failed=N admin=N", admin
 *     counting the admin-path sends handled, MessageRouteFailed
 *     included); anything else gets -SHMR_E_NOT_ALLOWED (no admin command
 *     of that name).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/domain.h>
#include <shmr/handler.h>

#include "control_internal.h"
#include "arena.h"
#include "dlq.h"
#include "handlers.h"
#include "programs.h"

/* ------------------------------------------------------------------ */
/* The defaults                                                        */
/* ------------------------------------------------------------------ */

void shmr_ctl_handlers_default_call(struct shmr_ctl_handlers *hs, unsigned r,
				    const struct shmr_msg *m)
{
	static struct shmr_ctl_counters cnt;
	char text[200];
	uint32_t s;

	if (m->len != 5 || memcmp(m->data, "stats", 5) != 0) {
		shmr_ctl_admin_reply_text(hs->admin, m, -SHMR_E_NOT_ALLOWED,
					  NULL);
		return;
	}
	s = hs->m->routers[r].pid.slot;
	shmr_ctl_counters_read(hs->d, hs->m, &cnt);
	snprintf(text, sizeof(text),
		 "forwarded=%" PRIu64 " discarded=%" PRIu64 " failed=%" PRIu64
		 " admin=%" PRIu64,
		 cnt.forwarded[s], cnt.discarded[s], cnt.failed[s],
		 hs->msgs[r]);
	shmr_ctl_admin_reply_text(hs->admin, m, 0, text);
}

void shmr_ctl_handlers_default_message(struct shmr_ctl_handlers *hs,
				       unsigned r, const struct shmr_msg *m)
{
	const char *rname = hs->m->routers[r].conf->name;
	uint32_t ss = hs->d->geo.slot_size;

	if (m->flags & SHMR_F_ROUTE_FAILED) {
		char name[SHMR_NAME_MAX];
		int fd = shmr_ctl_dlq_fd(hs->dlq, r), rc;

		uint32_t plen = 0;
		/* A payload in an arena buffer is copied into the file
		 * (admin.c gives the buffer back after this). */
		const void *p = (m->flags & SHMR_F_ARENA)
					? shmr_ctl_arena_payload(hs->d, m, &plen)
					: NULL;

		shmr_ctl_dlq_name(m, ss, name);
		rc = fd < 0 ? -errno
			    : shmr_ctl_dlq_append_payload(fd, m, ss, p, plen);
		shmr_ctl_admin_log(hs->admin, SHMR_CTL_ALOG_FAILED,
				   "router %s: route %s failed: %s (type "
				   "%" PRIu32 " from %u:%u)%s%s",
				   rname, name, shmr_strerror(m->status),
				   m->type, m->from.slot, m->from.gen,
				   rc < 0 ? "; dead letter lost: " : "",
				   rc < 0 ? strerror(-rc) : "");
		return;
	}
	shmr_ctl_admin_log(hs->admin, SHMR_CTL_ALOG_SEND,
			   "router %s: admin message type %" PRIu32
			   " from %u:%u (%" PRIu64 " so far)",
			   rname, m->type, m->from.slot, m->from.gen,
			   hs->msgs[r]);
}

/* ------------------------------------------------------------------ */
/* The ops the hooks get                                               */
/* ------------------------------------------------------------------ */

static struct shmr_ctl_hrouter *of(struct shmr_admin *a)
{
	return (struct shmr_ctl_hrouter *)((char *)a -
					   offsetof(struct shmr_ctl_hrouter,
						    admin));
}

static int op_reply(struct shmr_admin *a, const struct shmr_msg *call,
		    int32_t status, const void *data, size_t len)
{
	struct shmr_ctl_hrouter *h = of(a);
	int rc = shmr_ctl_admin_reply(h->hs->admin, call, status, data, len);

	if (rc == 0 && call->ref == h->call_ref)
		h->replied = 1;
	return rc;
}

static int op_default_message(struct shmr_admin *a, const struct shmr_msg *m)
{
	struct shmr_ctl_hrouter *h = of(a);

	shmr_ctl_handlers_default_message(h->hs, h->r, m);
	return 0;
}

static int op_default_call(struct shmr_admin *a, const struct shmr_msg *m)
{
	struct shmr_ctl_hrouter *h = of(a);

	shmr_ctl_handlers_default_call(h->hs, h->r, m);
	if (m->ref == h->call_ref)
		h->replied = 1;
	return 0;
}

static void op_failed_name(struct shmr_admin *a, const struct shmr_msg *m,
			   char out[SHMR_NAME_MAX])
{
	struct shmr_ctl_hrouter *h = of(a);

	shmr_ctl_dlq_name(m, h->hs->d->geo.slot_size, out);
}

static const char *router_name(struct shmr_ctl_hrouter *h)
{
	return h->hs->m->routers[h->r].conf->name;
}

static int op_disable(struct shmr_admin *a, const char *route)
{
	struct shmr_ctl_hrouter *h = of(a);

	return shmr_ctl_life_disable(h->hs->life, router_name(h), route);
}

static int op_enable(struct shmr_admin *a, const char *route)
{
	struct shmr_ctl_hrouter *h = of(a);

	return shmr_ctl_life_enable(h->hs->life, router_name(h), route);
}

static int op_remove(struct shmr_admin *a, const char *route)
{
	struct shmr_ctl_hrouter *h = of(a);

	return shmr_ctl_life_remove(h->hs->life, router_name(h), route);
}

static int op_respawn(struct shmr_admin *a, const char *route)
{
	struct shmr_ctl_hrouter *h = of(a);

	return shmr_ctl_life_respawn(h->hs->life, router_name(h), route);
}

/* A route spec from a hook's arguments; -SHMR_E_NAME when one does not
 * fit (as the control socket's limits say). */
static int spec_of(struct shmr_conf_route *q, const char *route,
		   const char *program, const char *const *args,
		   unsigned nargs)
{
	memset(q, 0, sizeof(*q));
	if (!route || !program || strlen(route) >= sizeof(q->name) ||
	    strlen(program) >= sizeof(q->program) ||
	    nargs > SHMR_CONF_ARGS_MAX || (nargs && !args))
		return -SHMR_E_NAME;
	memcpy(q->name, route, strlen(route));
	memcpy(q->program, program, strlen(program));
	for (unsigned i = 0; i < nargs; i++) {
		if (!args[i] || strlen(args[i]) >= sizeof(q->args[i]))
			return -SHMR_E_NAME;
		memcpy(q->args[i], args[i], strlen(args[i]));
	}
	q->nargs = nargs;
	return 0;
}

/* A hook's ADD or REPLACE (@p what) obeys the configuration's programs
 * as the control socket's do (programs.h): @p q's program becomes what
 * was checked; -SHMR_E_NOT_ALLOWED (logged) when it is not listed. */
static int program_ok(struct shmr_ctl_hrouter *h, const char *what,
		      struct shmr_conf_route *q)
{
	char prog[sizeof(q->program)];

	if (shmr_ctl_program_allowed(h->hs->m->cfg, q->program, prog,
				     sizeof(prog)) < 0) {
		shmr_ctl_warn("router %s: handlers: %s: program %s is not in "
			      "the configuration's programs",
			      router_name(h), what, q->program);
		return -SHMR_E_NOT_ALLOWED;
	}
	memcpy(q->program, prog, sizeof(prog));
	return 0;
}

static int op_add(struct shmr_admin *a, const char *route,
		  const char *program, const char *const *args, unsigned nargs)
{
	struct shmr_ctl_hrouter *h = of(a);
	struct shmr_conf_route q;
	int rc = spec_of(&q, route, program, args, nargs);

	if (rc == 0)
		rc = program_ok(h, "add", &q);
	return rc < 0 ? rc : shmr_ctl_life_add(h->hs->life, router_name(h), &q);
}

static int op_replace(struct shmr_admin *a, const char *route,
		      const char *program, const char *const *args,
		      unsigned nargs)
{
	struct shmr_ctl_hrouter *h = of(a);
	struct shmr_conf_route q;
	int rc = spec_of(&q, route, program, args, nargs);

	if (rc == 0)
		rc = program_ok(h, "replace", &q);
	return rc < 0 ? rc
		      : shmr_ctl_life_replace(h->hs->life, router_name(h),
					      route, &q);
}

static void op_inspect_add(struct shmr_admin *a, const char *key,
			   const char *value)
{
	struct shmr_ctl_hrouter *h = of(a);
	struct shmr_ctl_kv_extra *x = h->inspect;
	struct shmr_ctl_kv_pair *p;

	if (!x || !key || !value || x->n >= SHMR_CTL_KV_EXTRA_MAX)
		return;
	p = &x->p[x->n++];
	snprintf(p->key, sizeof(p->key), "%s", key);
	snprintf(p->value, sizeof(p->value), "%s", value);
	p->used = 0;
}

static const void *op_payload(struct shmr_admin *a, const struct shmr_msg *m,
			      size_t *len)
{
	struct shmr_ctl_hrouter *h = of(a);
	uint32_t n = 0;
	const void *p;

	if (m->flags & SHMR_F_ARENA) {
		/* Checked there; admin.c gives it back after the hook. */
		p = shmr_ctl_arena_payload(h->hs->d, m, &n);
	} else {
		p = m->len <= h->hs->d->geo.slot_size - SHMR_HDR_SIZE ? m->data
								      : NULL;
		n = p ? m->len : 0;
	}
	*len = n;
	return p;
}

static const struct shmr_admin_ops admin_ops = {
	.reply = op_reply,
	.default_message = op_default_message,
	.default_call = op_default_call,
	.failed_name = op_failed_name,
	.route_disable = op_disable,
	.route_enable = op_enable,
	.route_remove = op_remove,
	.route_respawn = op_respawn,
	.route_add = op_add,
	.route_replace = op_replace,
	.inspect_add = op_inspect_add,
	.payload = op_payload,
};

void shmr_ctl_handlers_init(struct shmr_ctl_handlers *hs,
			    struct shmr_ctl_model *m,
			    struct shmr_ctl_life *life,
			    struct shmr_ctl_domain *d,
			    struct shmr_ctl_admin *admin,
			    struct shmr_ctl_dlq_files *dlq)
{
	*hs = (struct shmr_ctl_handlers){ .m = m, .life = life, .d = d,
					  .admin = admin, .dlq = dlq };
}

int shmr_ctl_handlers_routers(struct shmr_ctl_handlers *hs,
			      unsigned nrouters)
{
	free(hs->msgs);
	free(hs->hr);
	hs->nrouters = 0;
	hs->msgs = calloc(nrouters ? nrouters : 1, sizeof(*hs->msgs));
	hs->hr = calloc(nrouters ? nrouters : 1, sizeof(*hs->hr));
	if (!hs->msgs || !hs->hr)
		return -ENOMEM;
	hs->nrouters = nrouters;
	return 0;
}

int shmr_ctl_handlers_load(struct shmr_ctl_handlers *hs)
{
	for (unsigned i = 0; i < hs->m->nrouters; i++) {
		const struct shmr_conf_router *rc = hs->m->routers[i].conf;
		struct shmr_ctl_hrouter *h = &hs->hr[i];
		/* A "dso" router's object may have routing only. */
		int optional = rc->behaviour == SHMR_BEH_DSO &&
			       strcmp(rc->handlers, rc->dso) == 0;
		int err;

		memset(h, 0, sizeof(*h));
		h->hs = hs;
		h->r = i;
		h->admin.router = rc->name;
		h->admin.ops = &admin_ops;
		if (!rc->handlers[0])
			continue;
		h->dl = dlopen(rc->handlers, RTLD_NOW | RTLD_LOCAL);
		if (!h->dl) {
			shmr_ctl_err("router %s: handlers %s: %s", rc->name,
				      rc->handlers, dlerror());
			return -ENOENT;
		}
		h->h = dlsym(h->dl, "shmr_handlers");
		if (!h->h) {
			dlclose(h->dl);
			h->dl = NULL;
			if (optional)
				continue;
			shmr_ctl_err("router %s: handlers %s: no symbol "
				      "shmr_handlers",
				      rc->name, rc->handlers);
			return -ENOENT;
		}
		if (h->h->abi != SHMR_HANDLERS_ABI) {
			shmr_ctl_err("router %s: handlers %s: ABI %u, this "
				      "control plane has %u",
				      rc->name, rc->handlers, h->h->abi,
				      SHMR_HANDLERS_ABI);
			return -EPROTO;
		}
		err = h->h->init ? h->h->init(&h->admin, rc->handlers_arg) : 0;
		if (err < 0) {
			shmr_ctl_err("router %s: handlers %s: init(\"%s\") "
				      "failed: %d",
				      rc->name, rc->handlers, rc->handlers_arg,
				      err);
			return err;
		}
		h->initialised = 1;
		shmr_ctl_log("router %s: handlers from %s", rc->name,
			     rc->handlers);
	}
	return 0;
}

void shmr_ctl_handlers_unload(struct shmr_ctl_handlers *hs)
{
	for (unsigned i = 0; i < hs->nrouters; i++) {
		struct shmr_ctl_hrouter *h = &hs->hr[i];

		if (h->initialised && h->h->fini)
			h->h->fini(&h->admin);
		if (h->dl)
			dlclose(h->dl);
		memset(h, 0, sizeof(*h));
	}
}

/* The hooks of router @p r that may run now, or NULL. */
static struct shmr_ctl_hrouter *live(struct shmr_ctl_handlers *hs,
				      unsigned r)
{
	struct shmr_ctl_hrouter *h = &hs->hr[r];

	if (!h->h || hs->m->routers[r].stopped)
		return NULL;
	return h;
}

void shmr_ctl_router_stop(struct shmr_ctl_handlers *hs, unsigned r,
			  const char *hook, int err)
{
	shmr_ctl_err("router %s: %s returned %d (%s): stopping the router "
		      "and its workers",
		      hs->m->routers[r].conf->name, hook, err,
		      err <= -SHMR_E_BASE ? shmr_strerror(err)
					  : strerror(-err));
	shmr_ctl_life_stop_router(hs->life, r);
}

void shmr_ctl_handlers_message(struct shmr_ctl_handlers *hs, unsigned r,
			       const struct shmr_msg *m)
{
	struct shmr_ctl_hrouter *h = live(hs, r);
	int rc;

	hs->msgs[r]++;
	if (!h || !h->h->handle_message) {
		shmr_ctl_handlers_default_message(hs, r, m);
		return;
	}
	rc = h->h->handle_message(&h->admin, m);
	if (rc < 0)
		shmr_ctl_router_stop(hs, r, "handle_message", rc);
}

void shmr_ctl_handlers_call(struct shmr_ctl_handlers *hs, unsigned r,
			    const struct shmr_msg *m)
{
	struct shmr_ctl_hrouter *h = live(hs, r);
	int rc;

	if (hs->m->routers[r].stopped) {
		(void)shmr_ctl_admin_reply(hs->admin, m, -SHMR_E_NOT_ALLOWED,
					   NULL, 0);
		return;
	}
	if (!h || !h->h->handle_call) {
		shmr_ctl_handlers_default_call(hs, r, m);
		return;
	}
	h->call_ref = m->ref;
	h->replied = 0;
	rc = h->h->handle_call(&h->admin, m);
	h->call_ref = 0;
	if (rc < 0) {
		if (!h->replied)
			(void)shmr_ctl_admin_reply(hs->admin, m,
						   -SHMR_E_NOT_ALLOWED, NULL,
						   0);
		shmr_ctl_router_stop(hs, r, "handle_call", rc);
	}
}

void shmr_ctl_handlers_inspect(struct shmr_ctl_handlers *hs, unsigned r,
			       struct shmr_ctl_kv_extra *extra)
{
	struct shmr_ctl_hrouter *h = live(hs, r);
	int rc;

	extra->n = 0;
	if (!h || !h->h->handle_inspect)
		return;
	h->inspect = extra;
	rc = h->h->handle_inspect(&h->admin);
	h->inspect = NULL;
	if (rc < 0)
		shmr_ctl_router_stop(hs, r, "handle_inspect", rc);
}
