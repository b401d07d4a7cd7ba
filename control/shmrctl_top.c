/*
 * shmrctl top [ROUTER...] [--interval SEC] [--duration SEC]: the running
 * appliance at a glance, redrawn in place once per interval, as
 * AeronStat or iox-introspection-client show theirs.
 *
 * Each interval it asks STATUS (the routers, unless named) and INSPECT of
 * each router over one connection, and shows per router and per route:
 * state, msgs/s (forwarded since the last sample, per second), queued,
 * restarts; a column for lane-full events per second, one for
 * redeliveries and one for the sojourn p99 (from ROUTES, microseconds,
 * since the route's slot was handed out) appear only when the control
 * plane's counters have them (no figure is made up); then one line per routing lcore: its load (busy
 * polls / polls over the interval) when the dataplane counts busy polls,
 * else polls, slots and sleeps per second; and, with a payload arena, one
 * line per size class: its buffers, free, in use, reclaimed from dead or
 * closed holders and allocation failures (the domain's, as INSPECT has
 * them).
 *
 * On a terminal it draws with ncurses (q or ^C quits, exit 0; fits 80x24,
 * rows past the screen are summed up in a last line); when stdout is not
 * a terminal, or without ncurses at build time, it prints the same rows
 * as one aligned table per interval, a blank line between them, until
 * --duration or SIGINT.  Read-only: a sample is a read request, which the
 * control plane answers from counters the dataplane writes; nothing here
 * touches shared memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef SHMR_HAVE_NCURSES
#include <curses.h>
#endif

#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "shmrctl_cli.h"

#define MAX_ROUTERS 16
#define MAX_KEYS 8192
#define MAX_LINES 1024
#define MAX_ROUTES_TOP 256
#define NAME_W ((int)SHMR_NAME_MAX - 1)
#define LINE_MAX_ 160

/* One sample: the "key value" lines of every router's INSPECT, each key
 * prefixed with "ROUTER/". */
struct kv {
	char key[200];
	char val[40];
};
struct sample {
	unsigned n;
	struct kv *kv;
	double t;
};

static _Atomic int stop_flag; /* lock-free: async-signal-safe */

static void on_signal(int sig)
{
	(void)sig;
	atomic_store_explicit(&stop_flag, 1, memory_order_relaxed);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *get(const struct sample *s, const char *router,
		       const char *key)
{
	char full[200];

	snprintf(full, sizeof(full), "%.*s/%.*s", (int)SHMR_NAME_MAX,
		 router, 150, key);
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->kv[i].key, full) == 0)
			return s->kv[i].val;
	return NULL;
}

static int get_u64(const struct sample *s, const char *router,
		   const char *key, uint64_t *out)
{
	const char *v = get(s, router, key);
	char *end;

	if (!v || !(*v >= '0' && *v <= '9'))
		return -1;
	*out = strtoull(v, &end, 10);
	return *end ? -1 : 0;
}

/* Per second, from the previous sample; -1 when either lacks it. */
static double rate(const struct sample *prev, const struct sample *cur,
		   const char *router, const char *key)
{
	uint64_t a, b;
	double dt = cur->t - prev->t;

	if (get_u64(prev, router, key, &a) < 0 ||
	    get_u64(cur, router, key, &b) < 0 || dt <= 0)
		return -1;
	return b >= a ? (double)(b - a) / dt : 0;
}

/* Add router @p router's INSPECT body to @p s. */
static void take(struct sample *s, const char *router, const char *body)
{
	const char *line = body;

	while (*line && s->n < MAX_KEYS) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *sp = memchr(line, ' ', len);

		if (sp) {
			struct kv *e = &s->kv[s->n++];

			snprintf(e->key, sizeof(e->key), "%s/%.*s", router,
				 (int)(sp - line), line);
			snprintf(e->val, sizeof(e->val), "%.*s",
				 (int)(len - (size_t)(sp - line) - 1), sp + 1);
		}
		line += len + (eol != NULL);
	}
}

/* Add the sojourn p99 of each route in router @p router's ROUTES body
 * to @p s, as "ROUTER/shmr:route:NAME:sojourn_p99_ns" (ROUTES has the
 * sojourn figures; INSPECT has no room for them). */
static void take_sojourn(struct sample *s, const char *router,
			 const char *body)
{
	const char *line = body;

	while (*line && s->n < MAX_KEYS) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *sp = memchr(line, ' ', len);
		const char *p = sp ? strstr(sp, " sojourn_p99_ns=") : NULL;

		if (sp && p && p < line + len) {
			struct kv *e = &s->kv[s->n++];

			snprintf(e->key, sizeof(e->key),
				 "%s/shmr:route:%.*s:sojourn_p99_ns", router,
				 (int)(sp - line), line);
			snprintf(e->val, sizeof(e->val), "%.*s",
				 (int)strcspn(p + 16, " \n"), p + 16);
		}
		line += len + (eol != NULL);
	}
}

static unsigned nrouters;
static char routers[MAX_ROUTERS][SHMR_NAME_MAX];
static int routers_named; /* on the command line: not from STATUS */
static char domain_name[SHMR_NAME_MAX];

/* The routers, from STATUS's router_names (unless named), and the
 * domain's name. */
static void ask_status(void)
{
	const char *body = shmr_cli_request("STATUS"), *p;

	p = strstr(body, "domain ");
	if (p == body || (p && p[-1] == '\n'))
		snprintf(domain_name, sizeof(domain_name), "%.*s",
			 (int)strcspn(p + 7, " \n"), p + 7);
	if (routers_named)
		return;
	nrouters = 0;
	p = strstr(body, "\nrouter_names ");
	if (!p)
		return;
	p += strlen("\nrouter_names ");
	while (*p && *p != '\n' && nrouters < MAX_ROUTERS) {
		size_t n = strcspn(p, ",\n");

		if (n > 0 && n < SHMR_NAME_MAX) {
			memcpy(routers[nrouters], p, n);
			routers[nrouters][n] = '\0';
			nrouters++;
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

static void sample_take(struct sample *s)
{
	s->n = 0;
	ask_status();
	for (unsigned r = 0; r < nrouters; r++) {
		const char *w = routers[r];
		char req[128];

		/* In parts: a router of many clients is more than one
		 * answer (shmrctl_inspect.c). */
		char *body = shmr_cli_inspect_body(w, 0);

		take(s, w, body);
		free(body);
		if (shmr_proto_encode(req, sizeof(req), "ROUTES", &w, 1) < 0)
			shmr_cli_die("request too long");
		take_sojourn(s, w, shmr_cli_request(req));
	}
	s->t = now_s();
}

static char lines[MAX_LINES][LINE_MAX_];
static unsigned nlines;

static void add_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add_line(const char *fmt, ...)
{
	va_list ap;

	if (nlines == MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[nlines++], LINE_MAX_, fmt, ap);
	va_end(ap);
}

/* A figure for a column: "-" when there is none yet (the first sample). */
static const char *fig(double v, char *buf, size_t cap)
{
	if (v < 0)
		return "-";
	snprintf(buf, cap, "%.0f", v);
	return buf;
}

/* Does any router's answer have per-route key suffix @p suf? */
static int have_route_key(const struct sample *s, const char *suf)
{
	size_t n = strlen(suf);

	for (unsigned i = 0; i < s->n; i++) {
		size_t k = strlen(s->kv[i].key);

		if (k > n && strcmp(s->kv[i].key + k - n, suf) == 0 &&
		    strstr(s->kv[i].key, "/shmr:route:"))
			return 1;
	}
	return 0;
}

/* The route names of @p router in @p s, in the answer's order (its
 * "shmr:route:NAME:pid" keys). */
static unsigned route_names(const struct sample *s, const char *router,
			    char (*out)[SHMR_NAME_MAX], unsigned max)
{
	char pre[96];
	size_t pl;
	unsigned n = 0;

	snprintf(pre, sizeof(pre), "%s/shmr:route:", router);
	pl = strlen(pre);
	for (unsigned i = 0; i < s->n && n < max; i++) {
		const char *k = s->kv[i].key;
		size_t kl = strlen(k);

		if (strncmp(k, pre, pl) == 0 && kl > pl + 4 &&
		    strcmp(k + kl - 4, ":pid") == 0 &&
		    kl - pl - 4 < SHMR_NAME_MAX) {
			memcpy(out[n], k + pl, kl - pl - 4);
			out[n][kl - pl - 4] = '\0';
			n++;
		}
	}
	return n;
}

/* "shmr:route:NAME:WHAT" into @p key. */
static void route_key(char *key, size_t cap, const char *name,
		      const char *what)
{
	snprintf(key, cap, "shmr:route:%.*s:%s", NAME_W, name, what);
}

/* The payload arena's classes, one row each, from router @p rn's answer
 * (its "shmr:arena:CLASS:buffers" keys, in the answer's order); nothing
 * without an arena. */
static void build_arena(const struct sample *cur, const char *rn)
{
	static const char *const what[] = { "buffers", "free", "in_use",
					     "reclaimed", "alloc_failures" };
	char pre[96];
	size_t pl;
	int head = 0;

	snprintf(pre, sizeof(pre), "%.*s/shmr:arena:", NAME_W, rn);
	pl = strlen(pre);
	for (unsigned i = 0; i < cur->n; i++) {
		const char *k = cur->kv[i].key, *v[5];
		size_t kl = strlen(k), cl;
		char key[64];

		if (strncmp(k, pre, pl) != 0 || kl < pl + 9 ||
		    strcmp(k + kl - 8, ":buffers") != 0 ||
		    (cl = kl - pl - 8) > 15)
			continue;
		for (unsigned w = 0; w < 5; w++) {
			snprintf(key, sizeof(key), "shmr:arena:%.*s:%s",
				 (int)cl, k + pl, what[w]);
			v[w] = get(cur, rn, key);
			if (!v[w])
				v[w] = "-";
		}
		if (!head) {
			add_line("%s", "");
			add_line("%-6s %9s %9s %9s %10s %12s", "ARENA", "BUFFERS",
				 "FREE", "IN USE", "RECLAIMED", "ALLOC FAILED");
			head = 1;
		}
		add_line("%-6.*s %9s %9s %9s %10s %12s", (int)cl, k + pl, v[0],
			 v[1], v[2], v[3], v[4]);
	}
}

/* 53 columns, and at most 27 more (LANEFULL/S, REDELIV, P99 US): 80. */
#define ROW_FMT "%-15.15s %-12.12s %8s %7s %7s"

/* The screen's rows from two samples, into lines[]. */
static void build(const struct sample *prev, const struct sample *cur)
{
	static char names[MAX_ROUTES_TOP][SHMR_NAME_MAX];
	int lane_full = have_route_key(cur, ":lane_full");
	int redelivered = have_route_key(cur, ":redelivered");
	int sojourn = have_route_key(cur, ":sojourn_p99_ns");
	char b1[32], b2[32], b3[32], b4[32], key[128];
	time_t t = time(NULL);
	struct tm tm;

	nlines = 0;
	localtime_r(&t, &tm);
	add_line("shmr top: domain %s, %u router(s), %02d:%02d:%02d", domain_name,
		 nrouters, tm.tm_hour, tm.tm_min, tm.tm_sec);
	add_line(ROW_FMT "%s%s%s", "ROUTER/ROUTE", "STATE", "MSGS/S", "QUEUED",
		 "RESTART", lane_full ? " LANEFULL/S" : "",
		 redelivered ? " REDELIV" : "", sojourn ? "  P99 US" : "");
	for (unsigned r = 0; r < nrouters; r++) {
		const char *rn = routers[r], *st = get(cur, rn, "shmr:state");
		unsigned nr;

		add_line(ROW_FMT, rn, st ? st : "?",
			 fig(rate(prev, cur, rn, "shmr:forwarded"), b1,
			     sizeof(b1)),
			 get(cur, rn, "shmr:queued")
				 ? get(cur, rn, "shmr:queued")
				 : "-",
			 get(cur, rn, "shmr:restarts")
				 ? get(cur, rn, "shmr:restarts")
				 : "-");
		nr = route_names(cur, rn, names, MAX_ROUTES_TOP);
		for (unsigned k = 0; k < nr; k++) {
			char label[SHMR_NAME_MAX + 8], lf[40] = "",
						       rd[40] = "", pn[40] = "";
			const char *q, *rs, *state;

			snprintf(label, sizeof(label), "  %.*s", NAME_W, names[k]);
			route_key(key, sizeof(key), names[k], "state");
			state = get(cur, rn, key);
			route_key(key, sizeof(key), names[k], "queued");
			q = get(cur, rn, key);
			route_key(key, sizeof(key), names[k], "restarts");
			rs = get(cur, rn, key);
			if (lane_full) {
				route_key(key, sizeof(key), names[k], "lane_full");
				snprintf(lf, sizeof(lf), " %10s",
					 fig(rate(prev, cur, rn, key), b3,
					     sizeof(b3)));
			}
			if (redelivered) {
				route_key(key, sizeof(key), names[k], "redelivered");
				snprintf(rd, sizeof(rd), " %7s",
					 get(cur, rn, key) ? get(cur, rn, key)
							   : "-");
			}
			if (sojourn) {
				uint64_t ns;

				/* p99 of the messages received so far (no
				 * figure until one was). */
				route_key(key, sizeof(key), names[k],
					  "sojourn_p99_ns");
				if (get_u64(cur, rn, key, &ns) == 0 && ns)
					snprintf(pn, sizeof(pn), " %7.1f",
						 (double)ns / 1000.0);
				else
					snprintf(pn, sizeof(pn), " %7s", "-");
			}
			route_key(key, sizeof(key), names[k], "forwarded");
			add_line(ROW_FMT "%s%s%s", label, state ? state : "?",
				 fig(rate(prev, cur, rn, key), b2, sizeof(b2)),
				 q ? q : "-", rs ? rs : "-", lf, rd, pn);
		}
	}
	/* The lcores: the same figures in every router's answer; the
	 * first router's. */
	if (nrouters == 0)
		return;
	{
		const char *rn = routers[0];
		uint64_t dummy;
		int busy = 0;

		snprintf(key, sizeof(key), "shmr:lcore:0:busy_polls");
		busy = get_u64(cur, rn, key, &dummy) == 0;
		add_line("%s", "");
		/* LOAD only where the dataplane counts busy polls. */
		add_line("%-6s%s %10s %10s %10s", "LCORE", busy ? "     LOAD" : "",
			 "POLLS/S", "SLOTS/S", "SLEEPS/S");
		for (unsigned l = 0; l < 64; l++) {
			char kp[64], ks[64], kz[64], kb[64], load[16] = "";
			double polls;

			snprintf(kp, sizeof(kp), "shmr:lcore:%u:polls", l);
			if (get_u64(cur, rn, kp, &dummy) < 0)
				break;
			snprintf(ks, sizeof(ks), "shmr:lcore:%u:slots_in", l);
			snprintf(kz, sizeof(kz), "shmr:lcore:%u:sleeps", l);
			polls = rate(prev, cur, rn, kp);
			if (busy) {
				double b;

				snprintf(kb, sizeof(kb),
					 "shmr:lcore:%u:busy_polls", l);
				b = rate(prev, cur, rn, kb);
				if (polls > 0 && b >= 0)
					snprintf(load, sizeof(load), "%.1f%%",
						 100.0 * b / polls);
				else
					snprintf(load, sizeof(load), "-");
			}
			if (busy)
				snprintf(kb, sizeof(kb), " %8s", load);
			else
				kb[0] = '\0';
			add_line("%-6u%s %10s %10s %10s", l, kb,
				 fig(polls, b1, sizeof(b1)),
				 fig(rate(prev, cur, rn, ks), b2, sizeof(b2)),
				 fig(rate(prev, cur, rn, kz), b4, sizeof(b4)));
		}
		build_arena(cur, rn);
	}
}

/* Not a terminal: one table per interval, the last one at the end of
 * --duration (shmr_cli_tick()). */
static int run_plain(struct sample *prev, struct sample *cur, double interval,
		     double duration)
{
	struct timespec next, end;

	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	shmr_cli_ts_add(&end, duration);
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		struct sample *t;
		int last = shmr_cli_tick(&next, interval,
					 duration > 0 ? &end : NULL);

		/* Until @p next or a signal. */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (atomic_load_explicit(&stop_flag, memory_order_relaxed))
			break;
		sample_take(cur);
		build(prev, cur);
		for (unsigned i = 0; i < nlines; i++)
			puts(lines[i]);
		putchar('\n');
		fflush(stdout);
		t = prev;
		prev = cur;
		cur = t;
		if (last)
			break;
	}
	return 0;
}

#ifdef SHMR_HAVE_NCURSES
static int curses_on;

/* An exit while drawing (shmr_cli_die: the control plane went away)
 * leaves the terminal as it found it. */
static void curses_off(void)
{
	if (curses_on)
		endwin();
	curses_on = 0;
}

static int run_curses(struct sample *prev, struct sample *cur,
		      double interval, double duration)
{
	double start = now_s(), due = start;
	int first = 1, last = 0;

	if (!initscr())
		return run_plain(prev, cur, interval, duration);
	curses_on = 1;
	atexit(curses_off);
	cbreak();
	noecho();
	curs_set(0);
	keypad(stdscr, TRUE);
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		double left = due - now_s();
		int ch;

		if (left > 0) {
			timeout((int)(left * 1000) + 1);
			ch = getch();
			if (ch == 'q' || ch == 'Q')
				break;
			continue; /* a resize, another key, or early */
		}
		{
			struct sample *t;
			unsigned rows = (unsigned)LINES, shown;

			/* The first frame at once, its rates "-" (one
			 * sample has none). */
			if (first)
				build(prev, prev);
			else {
				sample_take(cur);
				build(prev, cur);
			}
			erase();
			shown = nlines <= rows ? nlines : rows - 1;
			for (unsigned i = 0; i < shown; i++)
				mvaddnstr((int)i, 0, lines[i], COLS);
			if (shown < nlines)
				mvprintw((int)rows - 1, 0,
					 "... %u more rows (a larger terminal "
					 "shows them)",
					 nlines - shown);
			refresh();
			if (!first) {
				t = prev;
				prev = cur;
				cur = t;
			}
			first = 0;
		}
		if (last)
			break;
		due += interval;
		/* The last frame at the end of --duration, not up to an
		 * interval after it. */
		if (duration > 0 && due >= start + duration) {
			due = start + duration;
			last = 1;
		}
	}
	curses_off();
	return 0;
}
#endif

int shmr_cli_top(int argc, char **argv, int i)
{
	static struct sample a, b;
	struct sigaction sa = { .sa_handler = on_signal };
	double interval = 1, duration = 0;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
			if (shmr_cli_parse_seconds(argv[++i], &interval) < 0 ||
			    interval < 0.1)
				shmr_cli_usage("--interval: seconds, at least 0.1");
		} else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc) {
			duration = shmr_cli_parse_duration(argv[++i]);
		} else if (argv[i][0] != '-' && nrouters < MAX_ROUTERS) {
			if (!shmr_proto_word_ok(argv[i], SHMR_NAME_MAX))
				shmr_cli_usage("bad ROUTER name");
			snprintf(routers[nrouters++], SHMR_NAME_MAX, "%s",
				 argv[i]);
			routers_named = 1;
		} else {
			shmr_cli_usage("unexpected argument");
		}
	}
	a.kv = calloc(MAX_KEYS, sizeof(*a.kv));
	b.kv = calloc(MAX_KEYS, sizeof(*b.kv));
	if (!a.kv || !b.kv)
		shmr_cli_die(strerror(ENOMEM));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: waits end */
	sigaction(SIGTERM, &sa, NULL);
	shmr_cli_connect();
	sample_take(&a);
#ifdef SHMR_HAVE_NCURSES
	if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && getenv("TERM"))
		return run_curses(&a, &b, interval, duration);
#endif
	return run_plain(&a, &b, interval, duration);
}
