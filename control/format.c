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

#include "format.h"

static void put(struct shmr_ctl_kv *kv, const char *s, size_t n)
{
	if (kv->overflow || kv->len + n + 1 > kv->cap) {
		kv->overflow = 1;
		return;
	}
	memcpy(kv->buf + kv->len, s, n);
	kv->len += n;
	kv->buf[kv->len] = '\0';
}

static void put_json_string(struct shmr_ctl_kv *kv, const char *s)
{
	char esc[8];

	put(kv, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(kv, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(kv, esc, 6);
		} else {
			put(kv, (const char *)&c, 1);
		}
	}
	put(kv, "\"", 1);
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
	if (json)
		put(kv, "{", 1);
}

static void emit(struct shmr_ctl_kv *kv, const char *key, const char *val,
		 size_t n);

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
	/* A behaviour's key of the same name overrides a built-in one. */
	for (unsigned i = 0; kv->extra && i < kv->extra->n; i++) {
		struct shmr_ctl_kv_pair *e = &kv->extra->p[i];

		if (!e->used && strcmp(e->key, key) == 0) {
			e->used = 1;
			n = snprintf(val, sizeof(val), "%s", e->value);
			break;
		}
	}
	emit(kv, key, val, (size_t)n);
}

static void emit(struct shmr_ctl_kv *kv, const char *key, const char *val,
		 size_t n)
{
	if (kv->json) {
		put(kv, kv->n ? ",\n  " : "\n  ", kv->n ? 4 : 3);
		put_json_string(kv, key);
		put(kv, ": ", 2);
		put_json_string(kv, val);
	} else {
		put(kv, key, strlen(key));
		put(kv, " ", 1);
		put(kv, val, n);
		put(kv, "\n", 1);
	}
	kv->n++;
}

int shmr_ctl_kv_end(struct shmr_ctl_kv *kv)
{
	/* The behaviour's own keys, after the built-in ones. */
	for (unsigned i = 0; kv->extra && i < kv->extra->n; i++) {
		struct shmr_ctl_kv_pair *e = &kv->extra->p[i];

		if (!e->used) {
			e->used = 1;
			emit(kv, e->key, e->value, strlen(e->value));
		}
	}
	if (kv->json)
		put(kv, kv->n ? "\n}\n" : "}\n", kv->n ? 3 : 2);
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

/* A route's sojourn figures as INSPECT keys (nanoseconds). */
static void sojourn_add(struct shmr_ctl_kv *kv, const char *nm,
			const struct shmr_hist_summary *h)
{
	static const char *const names[] = { "count", "p50_ns", "p99_ns",
					     "p999_ns", "max_ns" };
	const uint64_t v[] = { h->count, h->p50_ns, h->p99_ns, h->p999_ns,
			       h->max_ns };
	char key[96];

	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(key, sizeof(key), "shmr:route:%s:sojourn_%s", nm,
			 names[i]);
		shmr_ctl_kv_add(kv, key, "%" PRIu64, v[i]);
	}
}

int shmr_ctl_format_inspect(const struct shmr_ctl_router *r,
			    const struct shmr_ctl_counters *c,
			    struct shmr_ctl_kv_extra *extra, int json,
			    char *buf, size_t cap)
{
	struct shmr_ctl_kv kv;
	unsigned active = 0, disabled = 0, pending = 0;
	uint64_t mailbox = 0, restarts = 0;
	uint32_t rs = r->pid.slot;
	char key[96];

	for (unsigned k = 0; k < r->nroutes; k++) {
		const struct shmr_ctl_route *q = &r->routes[k];

		if (q->os_pid != 0)
			active++;
		if (q->state == SHMR_ROUTE_DISABLED)
			disabled++;
		if (pending_op(q->state))
			pending++;
		mailbox += c->queued[q->pid.slot];
		restarts += q->restarts;
	}
	shmr_ctl_kv_begin(&kv, buf, cap, json);
	kv.extra = extra;
	shmr_ctl_kv_add(&kv, "shmr:type", "%s",
			shmr_ctl_behaviour_name(r->conf->behaviour));
	shmr_ctl_kv_add(&kv, "shmr:state", "%s",
			r->stopped ? "stopped" : "running");
	if (r->conf->pool.size > 0 || r->conf->pool.empty)
		shmr_ctl_kv_add(&kv, "shmr:resizer", "%s",
				r->conf->resizer.kind == SHMR_RESIZER_DEFAULT
					? "default"
				: r->conf->resizer.kind == SHMR_RESIZER_OPTIMAL
					? "optimal"
					: "none");
	shmr_ctl_kv_add(&kv, "shmr:supervisor", "%s",
			shmr_config_supervisor_name(r->conf->supervisor));
	shmr_ctl_kv_add(&kv, "shmr:routes_total", "%u", r->nroutes);
	shmr_ctl_kv_add(&kv, "shmr:routes_active", "%u", active);
	shmr_ctl_kv_add(&kv, "shmr:routes_disabled", "%u", disabled);
	shmr_ctl_kv_add(&kv, "shmr:routes_pending", "%u", pending);
	shmr_ctl_kv_add(&kv, "shmr:mailbox_size", "%" PRIu64, mailbox);
	shmr_ctl_kv_add(&kv, "shmr:forwarded", "%" PRIu64, c->forwarded[rs]);
	shmr_ctl_kv_add(&kv, "shmr:discarded", "%" PRIu64, c->discarded[rs]);
	shmr_ctl_kv_add(&kv, "shmr:failed", "%" PRIu64, c->failed[rs]);
	shmr_ctl_kv_add(&kv, "shmr:restarts", "%" PRIu64, restarts);
	shmr_ctl_kv_add(&kv, "shmr:dlq_size", "%" PRIu64, c->dlq_size[rs]);
	for (unsigned k = 0; k < r->nroutes; k++) {
		const struct shmr_ctl_route *q = &r->routes[k];
		const char *nm = q->conf->name;

		snprintf(key, sizeof(key), "shmr:route:%s:pid", nm);
		shmr_ctl_kv_add(&kv, key, "%" PRIu32 ":%" PRIu32, q->pid.slot,
				q->pid.gen);
		snprintf(key, sizeof(key), "shmr:route:%s:forwarded", nm);
		shmr_ctl_kv_add(&kv, key, "%" PRIu64,
				c->delivered[q->pid.slot]);
		snprintf(key, sizeof(key), "shmr:route:%s:os_pid", nm);
		shmr_ctl_kv_add(&kv, key, "%" PRId32, q->os_pid);
		snprintf(key, sizeof(key), "shmr:route:%s:state", nm);
		shmr_ctl_kv_add(&kv, key, "%s", shmr_ctl_route_shown_state(q));
		/* The reference's per-route keys: disabled once a disable
		 * has completed; pending only while an operation waits for
		 * the worker's exit. */
		snprintf(key, sizeof(key), "shmr:route:%s:disabled", nm);
		shmr_ctl_kv_add(&kv, key, "%s",
				q->state == SHMR_ROUTE_DISABLED ? "true"
								: "false");
		if (pending_op(q->state)) {
			snprintf(key, sizeof(key), "shmr:route:%s:pending", nm);
			shmr_ctl_kv_add(&kv, key, "%s", pending_op(q->state));
		}
		snprintf(key, sizeof(key), "shmr:route:%s:restarts", nm);
		shmr_ctl_kv_add(&kv, key, "%" PRIu64, q->restarts);
		snprintf(key, sizeof(key), "shmr:route:%s:queued", nm);
		shmr_ctl_kv_add(&kv, key, "%" PRIu64, c->queued[q->pid.slot]);
		snprintf(key, sizeof(key), "shmr:route:%s:cpus", nm);
		shmr_ctl_kv_add(&kv, key, "%s", q->cpus[0] ? q->cpus : "any");
		sojourn_add(&kv, nm, &c->sojourn[q->pid.slot]);
	}
	return shmr_ctl_kv_end(&kv);
}
