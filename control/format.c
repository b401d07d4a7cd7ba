/*
 * Text and JSON bodies of ROUTES, INSPECT and STATUS answers.  Values come
 * from the model and from counters the caller read out of the domain;
 * nothing here touches shared memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "counters.h"
#include "format.h"

static void put(struct shmr_ctl_kv *kv, const char *s, size_t n)
{
	if (kv->overflow < 0)
		return;
	if (kv->overflow || kv->len + n + 1 > kv->cap) {
		kv->overflow = 1;
		return;
	}
	memcpy(kv->buf + kv->len, s, n);
	kv->len += n;
	kv->buf[kv->len] = '\0';
}

void shmr_ctl_kv_begin(struct shmr_ctl_kv *kv, char *buf, size_t cap,
		       int json)
{
	*kv = (struct shmr_ctl_kv){ .buf = buf, .cap = cap, .json = json };
	if (cap == 0) {
		kv->overflow = 1;
		return;
	}
	buf[0] = '\0';
	if (json) {
		kv->obj = json_object_new_object();
		if (!kv->obj)
			kv->overflow = -1;
	}
}

/* The extra that overrides @p key, marked used, or NULL. */
static const char *override(struct shmr_ctl_kv *kv, const char *key)
{
	for (unsigned i = 0; kv->extra && i < kv->extra->n; i++) {
		struct shmr_ctl_kv_pair *e = &kv->extra->p[i];

		if (!e->used && strcmp(e->key, key) == 0) {
			e->used = 1;
			return e->value;
		}
	}
	return NULL;
}

/* Add @p key: as @p jv in JSON (owned: freed when not added), as @p text
 * in text. */
static void emit(struct shmr_ctl_kv *kv, const char *key, const char *text,
		 struct json_object *jv)
{
	if (kv->json) {
		if (kv->overflow || !jv ||
		    json_object_object_add(kv->obj, key, jv) < 0) {
			json_object_put(jv);
			if (!kv->overflow)
				kv->overflow = -1;
			return;
		}
	} else {
		put(kv, key, strlen(key));
		put(kv, " ", 1);
		put(kv, text, strlen(text));
		put(kv, "\n", 1);
	}
	kv->n++;
}

/* Add @p key: @p text, as @p jv in JSON (owned), unless a behaviour's
 * key of the same name overrides it (then its value, a string). */
static void add_value(struct shmr_ctl_kv *kv, const char *key,
		      const char *text, struct json_object *jv)
{
	const char *o = override(kv, key);

	if (o) {
		json_object_put(jv);
		text = o;
		jv = kv->json ? json_object_new_string(o) : NULL;
	}
	emit(kv, key, text, jv);
}

void shmr_ctl_kv_add(struct shmr_ctl_kv *kv, const char *key,
		     const char *fmt, ...)
{
	char val[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(val)) {
		kv->overflow = 1;
		return;
	}
	add_value(kv, key, val, kv->json ? json_object_new_string(val) : NULL);
}

void shmr_ctl_kv_add_str(struct shmr_ctl_kv *kv, const char *key,
			 const char *s)
{
	add_value(kv, key, s, kv->json ? json_object_new_string(s) : NULL);
}

void shmr_ctl_kv_add_pid(struct shmr_ctl_kv *kv, const char *key,
			 struct shmr_pid pid)
{
	char val[24];
	struct json_object *o = NULL;

	snprintf(val, sizeof(val), "%" PRIu32 ":%" PRIu32, pid.slot, pid.gen);
	if (kv->json) {
		o = json_object_new_object();
		if (o && (json_object_object_add(
				  o, "slot", json_object_new_uint64(pid.slot)) <
				  0 ||
			  json_object_object_add(
				  o, "gen", json_object_new_uint64(pid.gen)) <
				  0)) {
			json_object_put(o);
			o = NULL; /* emit() counts it as out of memory */
		}
	}
	add_value(kv, key, val, o);
}

void shmr_ctl_kv_add_u64(struct shmr_ctl_kv *kv, const char *key,
			 uint64_t v)
{
	char val[24];

	snprintf(val, sizeof(val), "%" PRIu64, v);
	add_value(kv, key, val, kv->json ? json_object_new_uint64(v) : NULL);
}

void shmr_ctl_kv_add_i64(struct shmr_ctl_kv *kv, const char *key,
			 int64_t v)
{
	char val[24];

	snprintf(val, sizeof(val), "%" PRId64, v);
	add_value(kv, key, val, kv->json ? json_object_new_int64(v) : NULL);
}

void shmr_ctl_kv_add_bool(struct shmr_ctl_kv *kv, const char *key, int v)
{
	add_value(kv, key, v ? "true" : "false",
		  kv->json ? json_object_new_boolean(v != 0) : NULL);
}

int shmr_ctl_kv_end(struct shmr_ctl_kv *kv)
{
	/* The behaviour's own keys, after the built-in ones. */
	for (unsigned i = 0; kv->extra && i < kv->extra->n; i++) {
		struct shmr_ctl_kv_pair *e = &kv->extra->p[i];

		if (!e->used) {
			e->used = 1;
			emit(kv, e->key, e->value,
			     kv->json ? json_object_new_string(e->value)
				      : NULL);
		}
	}
	if (kv->json) {
		const char *s = NULL;
		const int flags = JSON_C_TO_STRING_PRETTY |
				  JSON_C_TO_STRING_SPACED |
				  JSON_C_TO_STRING_NOSLASHESCAPE;

		if (!kv->overflow)
			s = json_object_to_json_string_ext(kv->obj, flags);
		if (s) {
			put(kv, s, strlen(s));
			put(kv, "\n", 1);
		} else if (!kv->overflow) {
			kv->overflow = -1;
		}
		json_object_put(kv->obj);
		kv->obj = NULL;
	}
	if (kv->overflow < 0)
		return -ENOMEM;
	if (kv->overflow)
		return -ENOSPC;
	return (int)kv->len;
}

const char *shmr_ctl_behaviour_name(uint32_t behaviour)
{
	switch (behaviour) {
	case SHMR_BEH_TYPE:
		return "type";
	case SHMR_BEH_HASH:
		return "hash";
	case SHMR_BEH_DSO:
		return "dso";
	case SHMR_BEH_ROUND_ROBIN:
		return "round-robin";
	case SHMR_BEH_RANDOM:
		return "random";
	case SHMR_BEH_SMALLEST_MAILBOX:
		return "smallest-mailbox";
	case SHMR_BEH_BROADCAST:
		return "broadcast";
	case SHMR_BEH_CONSISTENT_HASH:
		return "consistent-hash";
	case SHMR_BEH_SCATTER_GATHER:
		return "scatter-gather";
	case SHMR_BEH_TAIL_CHOPPING:
		return "tail-chopping";
	case SHMR_BEH_BALANCING:
		return "balancing";
	default:
		return "unknown";
	}
}

const char *shmr_ctl_route_state_name(uint32_t state)
{
	switch (state) {
	case SHMR_ROUTE_RUNNING:
		return "running";
	case SHMR_ROUTE_DEAD:
		return "dead";
	case SHMR_ROUTE_DISABLED:
		return "disabled";
	case SHMR_ROUTE_PENDING_DISABLE:
		return "pending_disable";
	case SHMR_ROUTE_PENDING_REPLACE:
		return "pending_replace";
	case SHMR_ROUTE_PENDING_REMOVE:
		return "pending_remove";
	case SHMR_ROUTE_REPLACE_WAIT:
		return "replace_wait";
	default:
		return "unknown";
	}
}

const char *shmr_ctl_route_shown_state(const struct shmr_ctl_route *q)
{
	if (q->state == SHMR_ROUTE_RUNNING && q->claimed_by == 0)
		return "starting";
	return shmr_ctl_route_state_name(q->state);
}

/* The reference's pending operation of a route in @p state, or NULL.  A
 * replace whose new worker has not started yet is still pending. */
static const char *pending_op(uint32_t state)
{
	switch (state) {
	case SHMR_ROUTE_PENDING_DISABLE:
		return "disable";
	case SHMR_ROUTE_PENDING_REPLACE:
	case SHMR_ROUTE_REPLACE_WAIT:
		return "replace";
	case SHMR_ROUTE_PENDING_REMOVE:
		return "remove";
	default:
		return NULL;
	}
}

int shmr_ctl_format_route(const struct shmr_ctl_route *q,
			  const struct shmr_ctl_counters *c, char *buf,
			  size_t cap)
{
	uint32_t s = q->pid.slot;
	const struct shmr_hist_summary *h = &c->sojourn[s];
	int n = snprintf(buf, cap,
			 "%s pid=%" PRIu32 ":%" PRIu32 " os_pid=%" PRId32
			 " state=%s restarts=%" PRIu64 " delivered=%" PRIu64
			 " queued=%" PRIu64 " cpus=%s sojourn_count=%" PRIu64
			 " sojourn_p50_ns=%" PRIu64 " sojourn_p99_ns=%" PRIu64
			 " sojourn_p999_ns=%" PRIu64
			 " sojourn_max_ns=%" PRIu64 "\n",
			 q->conf->name, q->pid.slot, q->pid.gen, q->os_pid,
			 shmr_ctl_route_shown_state(q), q->restarts,
			 c->delivered[s], c->queued[s],
			 q->cpus[0] ? q->cpus : "any", h->count, h->p50_ns,
			 h->p99_ns, h->p999_ns, h->max_ns);

	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}

int shmr_ctl_format_routes(const struct shmr_ctl_router *r,
			   const struct shmr_ctl_counters *c, char *buf,
			   size_t cap)
{
	size_t len = 0;

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (unsigned k = 0; k < r->nroutes; k++) {
		int n = shmr_ctl_format_route(&r->routes[k], c, buf + len,
					      cap - len);

		if (n < 0)
			return n;
		len += (size_t)n;
	}
	return (int)len;
}

void shmr_ctl_router_agg(const struct shmr_ctl_router *r,
			 const struct shmr_ctl_counters *c,
			 struct shmr_ctl_router_agg *out)
{
	*out = (struct shmr_ctl_router_agg){ 0 };
	for (unsigned k = 0; k < r->nroutes; k++) {
		const struct shmr_ctl_route *q = &r->routes[k];

		if (q->os_pid != 0)
			out->active++;
		if (q->state == SHMR_ROUTE_DISABLED)
			out->disabled++;
		if (pending_op(q->state))
			out->pending++;
		out->queued += c->queued[q->pid.slot];
		out->restarts += q->restarts;
	}
}

/* The registry's figures of @p scope (counters.h) at @p at, as
 * "shmr:" @p infix NAME keys. */
static void inspect_counters(struct shmr_ctl_kv *kv, uint32_t scope,
			     const char *infix,
			     const struct shmr_ctl_ctr_at *at)
{
	char key[96];

	for (unsigned i = 0; i < shmr_ctl_ctr_count; i++) {
		const struct shmr_ctl_ctr_desc *d = &shmr_ctl_ctr_registry[i];

		if (d->scope != scope)
			continue;
		snprintf(key, sizeof(key), "shmr:%s%s", infix, d->name);
		shmr_ctl_kv_add_u64(kv, key, d->value(at));
	}
}

/* INSPECT's item @p item (shmr_ctl_format_inspect_part()) into @p kv. */
static void inspect_item(struct shmr_ctl_kv *kv,
			 const struct shmr_ctl_router *r,
			 const struct shmr_ctl_counters *c,
			 struct shmr_ctl_ctr_at *at, unsigned item)
{
	unsigned nl = c->nlcores < SHMR_MAX_LCORES ? c->nlcores
						   : SHMR_MAX_LCORES;
	unsigned ncl = c->nclients < SHMR_MAX_ENDPOINTS ? c->nclients
							: SHMR_MAX_ENDPOINTS;
	char key[96], infix[64];

	if (item == 0) {
		shmr_ctl_kv_add(kv, "shmr:type", "%s",
				shmr_ctl_behaviour_name(r->conf->behaviour));
		shmr_ctl_kv_add(kv, "shmr:state", "%s",
				r->stopped ? "stopped" : "running");
		if (r->conf->pool.size > 0 || r->conf->pool.empty)
			shmr_ctl_kv_add(
				kv, "shmr:resizer", "%s",
				r->conf->resizer.kind == SHMR_RESIZER_DEFAULT
					? "default"
				: r->conf->resizer.kind == SHMR_RESIZER_OPTIMAL
					? "optimal"
					: "none");
		shmr_ctl_kv_add(kv, "shmr:supervisor", "%s",
				shmr_config_supervisor_name(r->conf->supervisor));
		inspect_counters(kv, SHMR_CTL_CTR_ROUTER, "", at);
		return;
	}
	item--;
	if (item < r->nroutes) {
		const struct shmr_ctl_route *q = &r->routes[item];
		const struct shmr_hist_summary *h = &c->sojourn[q->pid.slot];
		const char *nm = q->conf->name;
		const struct {
			const char *what;
			uint64_t v;
		} soj[] = {
			{ "sojourn_count", h->count },
			{ "sojourn_p50_ns", h->p50_ns },
			{ "sojourn_p99_ns", h->p99_ns },
			{ "sojourn_p999_ns", h->p999_ns },
			{ "sojourn_max_ns", h->max_ns },
		};

		snprintf(key, sizeof(key), "shmr:route:%s:pid", nm);
		shmr_ctl_kv_add_pid(kv, key, q->pid);
		snprintf(key, sizeof(key), "shmr:route:%s:os_pid", nm);
		shmr_ctl_kv_add_i64(kv, key, q->os_pid);
		snprintf(key, sizeof(key), "shmr:route:%s:state", nm);
		shmr_ctl_kv_add(kv, key, "%s", shmr_ctl_route_shown_state(q));
		/* The reference's per-route keys: disabled once a disable
		 * has completed; pending only while an operation waits for
		 * the worker's exit. */
		snprintf(key, sizeof(key), "shmr:route:%s:disabled", nm);
		shmr_ctl_kv_add_bool(kv, key, q->state == SHMR_ROUTE_DISABLED);
		if (pending_op(q->state)) {
			snprintf(key, sizeof(key), "shmr:route:%s:pending", nm);
			shmr_ctl_kv_add(kv, key, "%s", pending_op(q->state));
		}
		snprintf(key, sizeof(key), "shmr:route:%s:cpus", nm);
		shmr_ctl_kv_add(kv, key, "%s", q->cpus[0] ? q->cpus : "any");
		at->q = q;
		snprintf(infix, sizeof(infix), "route:%s:", nm);
		inspect_counters(kv, SHMR_CTL_CTR_ROUTE, infix, at);
		/* The sojourns of the messages its workers received, as
		 * ROUTES shows them (shmr/hist.h). */
		for (size_t k = 0; k < sizeof(soj) / sizeof(soj[0]); k++) {
			snprintf(key, sizeof(key), "shmr:route:%s:%s", nm,
				 soj[k].what);
			shmr_ctl_kv_add_u64(kv, key, soj[k].v);
		}
		return;
	}
	item -= r->nroutes;
	if (item < nl) {
		at->lcore = item;
		snprintf(infix, sizeof(infix), "lcore:%u:", item);
		inspect_counters(kv, SHMR_CTL_CTR_LCORE, infix, at);
		return;
	}
	item -= nl;
	if (item < ncl) {
		at->slot = c->client[item].pid.slot % SHMR_MAX_ENDPOINTS;
		snprintf(infix, sizeof(infix),
			 "endpoint:%" PRIu32 ":%" PRIu32 ":",
			 c->client[item].pid.slot, c->client[item].pid.gen);
		inspect_counters(kv, SHMR_CTL_CTR_ENDPOINT, infix, at);
		return;
	}
	/* The payload arena's classes (the domain's, as the lcores). */
	at->arena = item - ncl;
	snprintf(infix, sizeof(infix), "arena:%.15s:", c->arena[at->arena].cls);
	inspect_counters(kv, SHMR_CTL_CTR_ARENA, infix, at);
}

unsigned shmr_ctl_inspect_items(const struct shmr_ctl_router *r,
				const struct shmr_ctl_counters *c)
{
	unsigned nl = c->nlcores < SHMR_MAX_LCORES ? c->nlcores
						   : SHMR_MAX_LCORES;
	unsigned ncl = c->nclients < SHMR_MAX_ENDPOINTS ? c->nclients
							: SHMR_MAX_ENDPOINTS;
	unsigned na = c->narena < SHMR_ARENA_MAX_CLASSES
			      ? c->narena
			      : SHMR_ARENA_MAX_CLASSES;

	return 1 + r->nroutes + nl + ncl + na;
}

int shmr_ctl_format_inspect_part(const struct shmr_ctl_router *r,
				 const struct shmr_ctl_counters *c,
				 struct shmr_ctl_kv_extra *extra, int json,
				 unsigned from, unsigned count, char *buf,
				 size_t cap)
{
	struct shmr_ctl_router_agg agg;
	struct shmr_ctl_ctr_at at = { .r = r, .c = c, .agg = &agg };
	struct shmr_ctl_kv kv;
	unsigned total = shmr_ctl_inspect_items(r, c);
	struct shmr_ctl_kv_extra none = { 0 };

	if (from > total)
		from = total;
	if (count > total - from)
		count = total - from;
	/* An extra overrides a key of this part; the extras left follow
	 * the last item only (an override already shown in an earlier
	 * part comes again there, with the same value). */
	for (unsigned i = 0; extra && i < extra->n; i++)
		extra->p[i].used = 0;
	shmr_ctl_router_agg(r, c, &agg);
	shmr_ctl_kv_begin(&kv, buf, cap, json);
	kv.extra = extra;
	for (unsigned i = from; i < from + count; i++)
		inspect_item(&kv, r, c, &at, i);
	if (from + count < total)
		kv.extra = &none;
	return shmr_ctl_kv_end(&kv);
}

int shmr_ctl_format_inspect_paged(const struct shmr_ctl_router *r,
				  const struct shmr_ctl_counters *c,
				  struct shmr_ctl_kv_extra *extra, int json,
				  unsigned from, char *buf, size_t cap)
{
	unsigned total = shmr_ctl_inspect_items(r, c);
	unsigned count;
	const size_t head = 32; /* "OK NEXT TOTAL\n", at most */
	char hd[32];
	int n, h;

	if (from > total)
		from = total;
	if (cap <= head)
		return -ENOSPC;
	/* As many whole items as fit, from at most 256 (a few retries,
	 * whatever the domain's size): halved until they do. */
	count = total - from < 256 ? total - from : 256;
	for (;; count /= 2) {
		n = shmr_ctl_format_inspect_part(r, c, extra, json, from,
						 count, buf + head,
						 cap - head);
		if (n != -ENOSPC || count <= 1)
			break;
	}
	if (n < 0)
		return n;
	h = snprintf(hd, sizeof(hd), "OK %u %u\n", from + count, total);
	memmove(buf + h, buf + head, (size_t)n + 1);
	memcpy(buf, hd, (size_t)h);
	return h + n;
}

int shmr_ctl_format_inspect(const struct shmr_ctl_router *r,
			    const struct shmr_ctl_counters *c,
			    struct shmr_ctl_kv_extra *extra, int json,
			    char *buf, size_t cap)
{
	return shmr_ctl_format_inspect_part(r, c, extra, json, 0,
					    shmr_ctl_inspect_items(r, c), buf,
					    cap);
}
