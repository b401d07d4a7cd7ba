/*
 * The routes' sojourn histograms as Prometheus text (sojourn_metrics.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "sojourn_metrics.h"

struct out {
	char *buf;
	size_t cap, len;
	int full;
};

static void outf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len)
		o->full = 1;
	else
		o->len += (size_t)n;
}

/* A label value, escaped as the exposition format says (\\, \", \n). */
static void label(struct out *o, const char *s)
{
	for (; *s && !o->full; s++) {
		if (*s == '\\' || *s == '"')
			outf(o, "\\%c", *s);
		else if (*s == '\n')
			outf(o, "\\n");
		else
			outf(o, "%c", *s);
	}
}

static void labels(struct out *o, const char *router, const char *route)
{
	outf(o, "{router=\"");
	label(o, router);
	outf(o, "\",route=\"");
	label(o, route);
	outf(o, "\"");
}

static int finish(struct out *o, char *buf, size_t *len)
{
	if (o->full) {
		if (*len < o->cap)
			buf[*len] = '\0';
		return -ENOSPC;
	}
	*len = o->len;
	return 0;
}

int shmr_ctl_sojourn_metrics_head(char *buf, size_t cap, size_t *len)
{
	struct out o = { buf, cap, *len, *len >= cap };

	outf(&o, "# HELP %s How long the messages a route's workers received "
		 "waited, from their send to their receive\n",
	     SHMR_CTL_SOJOURN_METRIC);
	outf(&o, "# TYPE %s histogram\n", SHMR_CTL_SOJOURN_METRIC);
	return finish(&o, buf, len);
}

int shmr_ctl_sojourn_metrics_route(char *buf, size_t cap, size_t *len,
				   const char *router, const char *route,
				   const struct shmr_hist_summary *s)
{
	struct out o = { buf, cap, *len, *len >= cap };

	for (unsigned j = 0; j < SHMR_HIST_EDGES; j++) {
		double le = (double)(1ull << (SHMR_HIST_EDGE_FIRST + j)) / 1e9;

		outf(&o, "%s_bucket", SHMR_CTL_SOJOURN_METRIC);
		labels(&o, router, route);
		outf(&o, ",le=\"%.12g\"} %" PRIu64 "\n", le, s->below[j]);
	}
	outf(&o, "%s_bucket", SHMR_CTL_SOJOURN_METRIC);
	labels(&o, router, route);
	outf(&o, ",le=\"+Inf\"} %" PRIu64 "\n", s->count);
	outf(&o, "%s_sum", SHMR_CTL_SOJOURN_METRIC);
	labels(&o, router, route);
	outf(&o, "} %.9f\n", (double)s->sum_ns / 1e9);
	outf(&o, "%s_count", SHMR_CTL_SOJOURN_METRIC);
	labels(&o, router, route);
	outf(&o, "} %" PRIu64 "\n", s->count);
	return finish(&o, buf, len);
}
