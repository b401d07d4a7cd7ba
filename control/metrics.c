/*
 * The Prometheus text exposition format (version 0.0.4) of the registry
 * (counters.def): for each line of the registry, its HELP and TYPE lines,
 * then one sample per router, route or lcore.  Counters are named
 * shmr_<scope>_<name>_total, gauges shmr_<scope>_<name>.  Nothing here
 * touches shared memory: the values come from struct shmr_ctl_counters,
 * read by the caller (metrics_render.c), through the registry's table
 * (counters.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "metrics.h"
#include "sojourn_metrics.h"

struct out {
	char *buf;
	size_t cap, len;
	int overflow;
};

static void outf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->overflow = 1;
		o->buf[o->len] = '\0';
		return;
	}
	o->len += (size_t)n;
}

/* A label value, escaped as the format wants (\\, \" and \n).  Names are
 * [A-Za-z0-9_.:-] today; the escaping keeps the output valid whatever a
 * name holds. */
static void label(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			outf(o, "\\\\");
		else if (*s == '"')
			outf(o, "\\\"");
		else if (*s == '\n')
			outf(o, "\\n");
		else
			outf(o, "%c", *s);
	}
}

/* One sample: shmr_<scope>_<name>[_total]{LABELS} VALUE. */
static void sample(struct out *o, const char *metric,
		   const struct shmr_ctl_ctr_desc *d,
		   const struct shmr_ctl_ctr_at *at)
{
	outf(o, "%s{", metric);
	if (d->scope == SHMR_CTL_CTR_LCORE) {
		outf(o, "lcore=\"%u\"", at->lcore);
	} else if (d->scope == SHMR_CTL_CTR_ARENA) {
		outf(o, "class=\"");
		label(o, at->c->arena[at->arena].cls);
		outf(o, "\"");
	} else if (d->scope == SHMR_CTL_CTR_ENDPOINT) {
		const struct shmr_ctl_client *cl = at->client;

		outf(o, "endpoint=\"%" PRIu32 ":%" PRIu32 "\",name=\"",
		     cl->pid.slot, cl->pid.gen);
		label(o, cl->name);
		outf(o, "\"");
	} else {
		outf(o, "router=\"");
		label(o, at->r->conf->name);
		if (d->scope == SHMR_CTL_CTR_ROUTE) {
			outf(o, "\",route=\"");
			label(o, at->q->conf->name);
		}
		outf(o, "\"");
	}
	outf(o, "} %" PRIu64 "\n", d->value(at));
}

/* Every sample of registry line @p d. */
static void family(struct out *o, const struct shmr_ctl_model *m,
		   const struct shmr_ctl_counters *c,
		   const struct shmr_ctl_ctr_desc *d)
{
	static const char *const scope_word[] = {
		[SHMR_CTL_CTR_ROUTER] = "router",
		[SHMR_CTL_CTR_ROUTE] = "route",
		[SHMR_CTL_CTR_LCORE] = "lcore",
		[SHMR_CTL_CTR_ENDPOINT] = "endpoint",
		[SHMR_CTL_CTR_ARENA] = "arena",
	};
	struct shmr_ctl_router_agg agg;
	struct shmr_ctl_ctr_at at = { .c = c, .agg = &agg };
	char metric[96];

	snprintf(metric, sizeof(metric), "shmr_%s_%s%s", scope_word[d->scope],
		 d->name, d->counter ? "_total" : "");
	outf(o, "# HELP %s %s (%s).\n# TYPE %s %s\n", metric, d->help,
	     d->unit, metric, d->counter ? "counter" : "gauge");
	if (d->scope == SHMR_CTL_CTR_ENDPOINT) {
		for (unsigned i = 0;
		     i < c->nclients && i < SHMR_MAX_ENDPOINTS; i++) {
			at.client = &c->client[i];
			at.slot = at.client->pid.slot % SHMR_MAX_ENDPOINTS;
			sample(o, metric, d, &at);
		}
		return;
	}
	if (d->scope == SHMR_CTL_CTR_LCORE || d->scope == SHMR_CTL_CTR_ARENA) {
		int lc = d->scope == SHMR_CTL_CTR_LCORE;
		unsigned n = lc ? c->nlcores : c->narena,
			 max = lc ? SHMR_MAX_LCORES : SHMR_ARENA_MAX_CLASSES;

		for (unsigned i = 0; i < n && i < max; i++) {
			at.lcore = at.arena = i;
			sample(o, metric, d, &at);
		}
		return;
	}
	for (unsigned i = 0; i < m->nrouters; i++) {
		at.r = &m->routers[i];
		if (d->scope == SHMR_CTL_CTR_ROUTER) {
			shmr_ctl_router_agg(at.r, c, &agg);
			sample(o, metric, d, &at);
			continue;
		}
		for (unsigned k = 0; k < at.r->nroutes; k++) {
			at.q = &at.r->routes[k];
			sample(o, metric, d, &at);
		}
	}
}

/* ---- the routes' sojourn histograms (sojourn_metrics.h) ------------- */

/* Append what @p o holds to the caller's buffer, or nothing. */
static int sojourn_done(const struct out *o, char *buf, size_t *len)
{
	if (o->overflow) {
		if (*len < o->cap)
			buf[*len] = '\0';
		return -ENOSPC;
	}
	*len = o->len;
	return 0;
}

static void sojourn_labels(struct out *o, const char *router,
			   const char *route)
{
	outf(o, "{router=\"");
	label(o, router);
	outf(o, "\",route=\"");
	label(o, route);
	outf(o, "\"");
}

int shmr_ctl_sojourn_metrics_head(char *buf, size_t cap, size_t *len)
{
	struct out o = { buf, cap, *len, *len >= cap };

	outf(&o, "# HELP %s How long the messages a route's workers received "
		 "waited, from their send to their receive\n",
	     SHMR_CTL_SOJOURN_METRIC);
	outf(&o, "# TYPE %s histogram\n", SHMR_CTL_SOJOURN_METRIC);
	return sojourn_done(&o, buf, len);
}

int shmr_ctl_sojourn_metrics_route(char *buf, size_t cap, size_t *len,
				   const char *router, const char *route,
				   const struct shmr_hist_summary *s)
{
	struct out o = { buf, cap, *len, *len >= cap };

	for (unsigned j = 0; j < SHMR_HIST_EDGES; j++) {
		double le = (double)(1ull << SHMR_HIST_EDGE_BIT(j)) / 1e9;

		outf(&o, "%s_bucket", SHMR_CTL_SOJOURN_METRIC);
		sojourn_labels(&o, router, route);
		outf(&o, ",le=\"%.12g\"} %" PRIu64 "\n", le, s->below[j]);
	}
	outf(&o, "%s_bucket", SHMR_CTL_SOJOURN_METRIC);
	sojourn_labels(&o, router, route);
	outf(&o, ",le=\"+Inf\"} %" PRIu64 "\n", s->count);
	outf(&o, "%s_sum", SHMR_CTL_SOJOURN_METRIC);
	sojourn_labels(&o, router, route);
	outf(&o, "} %.9f\n", (double)s->sum_ns / 1e9);
	outf(&o, "%s_count", SHMR_CTL_SOJOURN_METRIC);
	sojourn_labels(&o, router, route);
	outf(&o, "} %" PRIu64 "\n", s->count);
	return sojourn_done(&o, buf, len);
}

/* Every route's sojourn histogram, after the registry's families. */
static int sojourns(struct out *o, const struct shmr_ctl_model *m,
		    const struct shmr_ctl_counters *c)
{
	int rc = shmr_ctl_sojourn_metrics_head(o->buf, o->cap, &o->len);

	for (unsigned i = 0; rc == 0 && i < m->nrouters; i++) {
		const struct shmr_ctl_router *r = &m->routers[i];

		for (unsigned k = 0; rc == 0 && k < r->nroutes; k++) {
			const struct shmr_ctl_route *q = &r->routes[k];

			rc = shmr_ctl_sojourn_metrics_route(
				o->buf, o->cap, &o->len, r->conf->name,
				q->conf->name,
				&c->sojourn[q->pid.slot % SHMR_MAX_ENDPOINTS]);
		}
	}
	return rc;
}

int shmr_ctl_metrics_format(const struct shmr_ctl_model *m,
			    const struct shmr_ctl_counters *c, char *buf,
			    size_t cap)
{
	struct out o = { .buf = buf, .cap = cap };

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (unsigned i = 0; i < shmr_ctl_ctr_count; i++)
		family(&o, m, c, &shmr_ctl_ctr_registry[i]);
	if (o.overflow || sojourns(&o, m, c) < 0)
		return -ENOSPC;
	return (int)o.len;
}
