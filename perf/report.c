/*
 * `shmr-perf report [--out DIR] FILE...`: SVG plots from the JSON results
 * of `shmr-perf ... --json` (docs/benchmarks.md, "Plots").
 *
 * Reads every record of every FILE (JSON Lines, or one array of records),
 * and draws with gnuplot what they hold:
 *
 *   throughput.svg  compare summaries: router / bare throughput, by slot
 *                   size and burst, one bar per poll mode
 *   latency-S-B.svg compare medians of slot size S and burst B: round-trip
 *                   p50, p99, p99.9 of the bare runs and the router's call
 *   logics.svg      logics medians: each logic's throughput / bare fan-out
 *   decide.svg      decide medians: ns per decision
 *
 * A cell that several records fill (the same figure from several files:
 * runs on several days, or machines) is drawn as their median.
 *
 * The files are input from elsewhere: a record that is not what --json
 * writes (not an object, an unknown schema, a figure that is not a
 * number, a name with characters gnuplot would read) stops the report
 * with one line naming the file, the line and the key.  Records of other
 * modes (adopt, load) are skipped.  Nothing is drawn from a file that
 * fails; nothing is written when no file has anything to draw.
 */
#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "perf_internal.h"

#define CAT_MAX 64
#define SER_MAX 4
#define VAL_MAX PERF_REPS_MAX
#define LABEL_MAX 64
#define FILE_MAX_BYTES (64u << 20)

struct cell {
	double v[VAL_MAX];
	unsigned n;
};

struct chart {
	const char *file, *title, *ylabel;
	char grp[LABEL_MAX];  /* latency: the setup it is drawn for */
	char file_buf[48], title_buf[96];
	int logy;             /* percentiles span decades: log scale */
	double ref[2];        /* horizontal lines (0: none) */
	const char *ref_name[2];
	char cat[CAT_MAX][LABEL_MAX];
	unsigned ncat;
	const char *ser[SER_MAX];
	unsigned nser;
	struct cell cell[CAT_MAX][SER_MAX];
};

enum { CH_THROUGHPUT, CH_LOGICS, CH_DECIDE, CH_COUNT };

static struct chart charts[CH_COUNT] = {
	[CH_THROUGHPUT] = {
		.file = "throughput.svg",
		.title = "router throughput / bare two-hop chain (medians)",
		.ylabel = "router / bare",
		.ref = { 1.0, 0.5 },
		.ref_name = { "bare = 1", "bar 0.5" },
		.ser = { "busy", "adaptive" },
		.nser = 2,
	},
	[CH_LOGICS] = {
		.file = "logics.svg",
		.title = "routing logics: throughput / bare fan-out "
			 "(medians)",
		.ylabel = "router / bare",
		.ref = { 1.0, 0 },
		.ref_name = { "bare = 1", NULL },
		.ser = { "messages", "deliveries" },
		.nser = 2,
	},
	[CH_DECIDE] = {
		.file = "decide.svg",
		.title = "the routing decision alone (medians)",
		.ylabel = "ns per decision",
		.ser = { "ns per decision" },
		.nser = 1,
	},
};

/* Where the record being read came from, for the one-line error. */
struct where {
	const char *file;
	unsigned line;
};

static int bad(const struct where *w, const char *what, const char *key)
{
	fprintf(stderr, "shmr-perf report: %s: line %u: %s%s%s\n", w->file,
		w->line, what, key ? ": " : "", key ? key : "");
	return -1;
}

/* A figure: absent -> 0 with *have 0; present -> a finite number. */
static int num(const struct where *w, struct json_object *j,
	       const char *key, double *out, int *have)
{
	struct json_object *v;

	*have = 0;
	if (!json_object_object_get_ex(j, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_double) &&
	    !json_object_is_type(v, json_type_int))
		return bad(w, "not a number", key);
	*out = json_object_get_double(v);
	if (!isfinite(*out) || *out < 0)
		return bad(w, "not a finite figure >= 0", key);
	*have = 1;
	return 0;
}

/* A figure the record must have. */
static int need(const struct where *w, struct json_object *j,
		const char *key, double *out)
{
	int have;

	if (num(w, j, key, out, &have) < 0)
		return -1;
	return have ? 0 : bad(w, "missing", key);
}

/* A name: present, a string, [a-z0-9.-] only (it becomes a label). */
static int name(const struct where *w, struct json_object *j,
		const char *key, const char **out, int required)
{
	struct json_object *v;
	const char *s;

	*out = NULL;
	if (!json_object_object_get_ex(j, key, &v) || !v)
		return required ? bad(w, "missing", key) : 0;
	if (!json_object_is_type(v, json_type_string))
		return bad(w, "not a string", key);
	s = json_object_get_string(v);
	if (!*s || strlen(s) >= LABEL_MAX / 2)
		return bad(w, "empty or too long", key);
	for (const char *p = s; *p; p++)
		if (!islower((unsigned char)*p) &&
		    !isdigit((unsigned char)*p) && *p != '-' && *p != '.')
			return bad(w, "not a name of [a-z0-9.-]", key);
	*out = s;
	return 0;
}

/* "64 B, burst 32": the setup a throughput or latency figure belongs to. */
static int group(const struct where *w, struct json_object *j, char *buf,
		 size_t size, double *setup)
{
	double slot, burst;

	if (need(w, j, "slot_bytes", &slot) < 0 ||
	    need(w, j, "burst", &burst) < 0)
		return -1;
	if (slot < 1 || slot > 65536 || burst < 1 || burst > 65536 ||
	    slot != floor(slot) || burst != floor(burst))
		return bad(w, "slot_bytes or burst out of range", NULL);
	snprintf(buf, size, "%.0f B, burst %.0f", slot, burst);
	setup[0] = slot;
	setup[1] = burst;
	return 0;
}

static int put(const struct where *w, struct chart *c, const char *cat,
	       unsigned ser, double v)
{
	unsigned k;

	for (k = 0; k < c->ncat; k++)
		if (strcmp(c->cat[k], cat) == 0)
			break;
	if (k == c->ncat) {
		if (c->ncat == CAT_MAX)
			return bad(w, "too many bars for one plot", c->file);
		snprintf(c->cat[c->ncat++], LABEL_MAX, "%s", cat);
	}
	if (c->cell[k][ser].n == VAL_MAX)
		return bad(w, "too many results for one bar", cat);
	c->cell[k][ser].v[c->cell[k][ser].n++] = v;
	return 0;
}

/* One latency plot per setup (slot size, burst). */
#define LAT_MAX 8
static struct chart lat[LAT_MAX];
static unsigned nlat;

static struct chart *lat_chart(const struct where *w, const char *grp,
			       double slot, double burst)
{
	struct chart *c;

	for (unsigned i = 0; i < nlat; i++)
		if (strcmp(lat[i].grp, grp) == 0)
			return &lat[i];
	if (nlat == LAT_MAX) {
		bad(w, "too many setups (slot size, burst) for latency plots",
		    grp);
		return NULL;
	}
	c = &lat[nlat++];
	snprintf(c->grp, sizeof(c->grp), "%s", grp);
	snprintf(c->file_buf, sizeof(c->file_buf), "latency-%.0f-%.0f.svg",
		 slot, burst);
	snprintf(c->title_buf, sizeof(c->title_buf),
		 "round trip percentiles, %s (medians)", grp);
	c->file = c->file_buf;
	c->title = c->title_buf;
	c->ylabel = "microseconds (log scale)";
	c->logy = 1;
	c->ser[0] = "p50";
	c->ser[1] = "p99";
	c->ser[2] = "p99.9";
	c->nser = 3;
	return c;
}

/* logics seen in more than one setup: labels say which (pass 1). */
static int groups_many;
static char group_first[LABEL_MAX];

static void label(char *buf, size_t size, const char *what, const char *grp)
{
	if (groups_many)
		snprintf(buf, size, "%.31s (%.28s)", what, grp);
	else
		snprintf(buf, size, "%s", what);
}

static int latency(const struct where *w, struct json_object *j,
		   const char *prefix, const char *what, const char *grp,
		   const double *setup)
{
	static const char *const pct[] = { "p50", "p99", "p999" };
	struct chart *c = lat_chart(w, grp, setup[0], setup[1]);
	char key[32];

	if (!c)
		return -1;
	for (unsigned p = 0; p < 3; p++) {
		double v;
		int have;

		snprintf(key, sizeof(key), "%s_%s_ns", prefix, pct[p]);
		if (num(w, j, key, &v, &have) < 0)
			return -1;
		if (have && put(w, c, what, p, v / 1000) < 0)
			return -1;
	}
	return 0;
}

/* One record; @p pass 1 only notes the setups seen. */
static int record(const struct where *w, struct json_object *j, int pass)
{
	struct json_object *v;
	const char *mode, *rec, *run, *poll, *logic, *variant;
	char grp[LABEL_MAX], cat[LABEL_MAX];
	double x, setup[2];

	if (!json_object_is_type(j, json_type_object))
		return bad(w, "not a JSON object", NULL);
	if (!json_object_object_get_ex(j, "schema", &v) ||
	    !json_object_is_type(v, json_type_int))
		return bad(w, "no integer", "schema");
	if (json_object_get_int64(v) != PERF_JSON_SCHEMA)
		return bad(w, "a schema this shmr-perf does not read",
			   "schema");
	if (name(w, j, "mode", &mode, 1) < 0 ||
	    name(w, j, "record", &rec, 1) < 0)
		return -1;
	if (strcmp(mode, "compare") && strcmp(mode, "logics") &&
	    strcmp(mode, "decide"))
		return 0; /* bare, router, adopt, load: nothing plotted */
	if (strcmp(rec, "summary") && strcmp(rec, "median"))
		return 0; /* the runs: their medians are plotted */
	if (strcmp(mode, "decide") == 0) {
		if (pass == 1)
			return 0;
		if (name(w, j, "logic", &logic, 1) < 0 ||
		    name(w, j, "variant", &variant, 0) < 0 ||
		    need(w, j, "ns_per_decision", &x) < 0)
			return -1;
		if (variant)
			snprintf(cat, sizeof(cat), "%.31s (%.28s)", logic,
				 variant);
		else
			snprintf(cat, sizeof(cat), "%s", logic);
		return put(w, &charts[CH_DECIDE], cat, 0, x);
	}
	if (group(w, j, grp, sizeof(grp), setup) < 0)
		return -1;
	if (pass == 1) {
		if (strcmp(mode, "logics") != 0)
			return 0;
		if (!group_first[0])
			snprintf(group_first, sizeof(group_first), "%s", grp);
		else if (strcmp(group_first, grp) != 0)
			groups_many = 1;
		return 0;
	}
	if (strcmp(mode, "compare") == 0 && strcmp(rec, "summary") == 0) {
		if (name(w, j, "poll", &poll, 1) < 0 ||
		    need(w, j, "throughput_vs_bare", &x) < 0)
			return -1;
		if (strcmp(poll, "busy") && strcmp(poll, "adaptive"))
			return bad(w, "neither busy nor adaptive", "poll");
		return put(w, &charts[CH_THROUGHPUT], grp,
			   strcmp(poll, "busy") ? 1 : 0, x);
	}
	if (strcmp(rec, "median") != 0)
		return 0;
	if (name(w, j, "run", &run, 1) < 0)
		return -1;
	if (strcmp(mode, "compare") == 0) {
		if (strcmp(run, "bare") == 0)
			return latency(w, j, "rtt", "bare ping-pong", grp,
				       setup) ||
			       latency(w, j, "rtt3", "bare 3-proc", grp,
				       setup) ||
			       latency(w, j, "handoff", "bare handoff", grp,
				       setup)
				       ? -1 : 0;
		if (name(w, j, "poll", &poll, 1) < 0)
			return -1;
		snprintf(cat, sizeof(cat), "router call, %s", poll);
		return latency(w, j, "rtt", cat, grp, setup);
	}
	/* logics */
	if (strcmp(run, "router") != 0)
		return 0; /* bare is the 1 every bar is divided by */
	if (name(w, j, "logic", &logic, 1) < 0 ||
	    need(w, j, "vs_bare", &x) < 0)
		return -1;
	label(cat, sizeof(cat), logic, grp);
	if (put(w, &charts[CH_LOGICS], cat, 0, x) < 0)
		return -1;
	{
		double mps, dps;
		int have;

		if (need(w, j, "msgs_per_s", &mps) < 0 ||
		    num(w, j, "deliveries_per_s", &dps, &have) < 0)
			return -1;
		/* Deliveries against bare: broadcast's copies. */
		return put(w, &charts[CH_LOGICS], cat, 1,
			   have && mps > 0 ? x * dps / mps : x);
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "shmr-perf report: %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb;

			if (cap >= FILE_MAX_BYTES) {
				fprintf(stderr, "shmr-perf report: %s: larger "
						"than %u MiB\n",
					path, FILE_MAX_BYTES >> 20);
				goto fail;
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (!nb)
				goto fail;
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "shmr-perf report: %s: read error\n", path);
		goto fail;
	}
	fclose(f);
	buf = buf ? buf : calloc(1, 1);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

/* Every record of @p path (JSON Lines, or arrays of records). */
static int read_file(const char *path, int pass)
{
	struct json_tokener *tok = json_tokener_new();
	struct where w = { path, 1 };
	size_t len, off = 0;
	char *buf = slurp(path, &len);
	int rc = 0, records = 0;

	if (!buf || !tok) {
		free(buf);
		if (tok)
			json_tokener_free(tok);
		return -1;
	}
	while (rc == 0) {
		struct json_object *j;
		enum json_tokener_error err;

		while (off < len && isspace((unsigned char)buf[off]))
			w.line += buf[off++] == '\n';
		if (off == len)
			break;
		json_tokener_reset(tok);
		j = json_tokener_parse_ex(tok, buf + off, (int)(len - off));
		err = json_tokener_get_error(tok);
		if (!j) {
			rc = bad(&w, "not JSON",
				 err == json_tokener_continue
					 ? "truncated"
					 : json_tokener_error_desc(err));
			break;
		}
		if (json_object_is_type(j, json_type_array)) {
			size_t n = json_object_array_length(j);

			for (size_t i = 0; i < n && rc == 0; i++)
				rc = record(&w, json_object_array_get_idx(j, i),
					    pass);
			records += (int)n;
		} else {
			rc = record(&w, j, pass);
			records++;
		}
		json_object_put(j);
		for (size_t e = off + json_tokener_get_parse_end(tok); off < e;
		     off++)
			w.line += buf[off] == '\n';
	}
	if (rc == 0 && records == 0)
		rc = bad(&w, "no records", NULL);
	json_tokener_free(tok);
	free(buf);
	return rc;
}

static int rm_entry(const char *p, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Data and script of @p c in @p tmp; gnuplot draws @p out. */
static int write_script(const struct chart *c, const char *tmp,
			const char *out, char *script, size_t size)
{
	char data[4096];
	FILE *f;
	unsigned used[SER_MAX] = { 0 };

	snprintf(data, sizeof(data), "%s/%s.dat", tmp, c->file);
	f = fopen(data, "w");
	if (!f)
		return -1;
	for (unsigned k = 0; k < c->ncat; k++) {
		fprintf(f, "\"%s\"", c->cat[k]);
		for (unsigned s = 0; s < c->nser; s++) {
			const struct cell *e = &c->cell[k][s];

			if (e->n) {
				fprintf(f, " %.6g", perf_median(e->v, e->n));
				used[s] = 1;
			} else {
				fprintf(f, " ?");
			}
		}
		fprintf(f, "\n");
	}
	if (fclose(f) != 0)
		return -1;
	snprintf(script, size, "%s/%s.gp", tmp, c->file);
	f = fopen(script, "w");
	if (!f)
		return -1;
	fprintf(f,
		"set terminal svg size %u,420 dynamic noenhanced "
		"font \"sans,11\" background rgb \"white\"\n"
		"set output \"%s\"\n"
		"set title \"%s\"\n"
		"set ylabel \"%s\"\n"
		"set datafile missing \"?\"\n"
		"set style data histograms\n"
		"set style histogram clustered gap 1\n"
		"set style fill solid 0.8 border -1\n"
		"%s\n"
		"set offsets 0, 0, graph 0.1, 0\n"
		"set grid ytics\n"
		"set key below horizontal\n"
		"set xtics nomirror%s\n",
		c->ncat * 170 < 720 ? 720 : c->ncat * 170 > 1360 ? 1360
								 : c->ncat * 170,
		out, c->title, c->ylabel,
		c->logy ? "set logscale y\nset yrange [0.1:*]"
			: "set yrange [0:*]",
		c->ncat > 8 ? " rotate by -30" : "");
	fprintf(f, "plot ");
	for (unsigned s = 0, first = 1; s < c->nser; s++) {
		if (!used[s])
			continue;
		fprintf(f, "%s\"%s\" using %u%s title \"%s\"",
			first ? "" : ", ", data, s + 2,
			first ? ":xtic(1)" : "", c->ser[s]);
		first = 0;
	}
	for (unsigned r = 0; r < 2; r++)
		if (c->ref[r] > 0)
			fprintf(f, ", %g with lines dt %u lw 1.5 lc rgb "
				   "\"black\" title \"%s\"",
				c->ref[r], r + 2, c->ref_name[r]);
	fprintf(f, "\n");
	return fclose(f) == 0 ? 0 : -1;
}

static int gnuplot(const char *script)
{
	const char *prog = getenv("GNUPLOT");
	int status = -1;
	pid_t pid, parent = getpid();

	prog = prog && *prog ? prog : "gnuplot";
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		perf_child_init(parent, SIGTERM);
		execlp(prog, prog, script, (char *)NULL);
		fprintf(stderr, "shmr-perf report: %s: %s (Debian: apt-get "
				"install gnuplot-nox)\n",
			prog, strerror(errno));
		_exit(127);
	}
	perf_track_pid(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			break;
	perf_untrack_pid(pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int report_usage(void)
{
	fprintf(stderr, "usage: shmr-perf report [--out DIR] FILE.json...\n"
			"  plots (SVG, gnuplot) from shmr-perf --json results: "
			"throughput.svg,\n"
			"  latency-SLOT-BURST.svg, logics.svg, decide.svg in "
			"DIR (default .)\n");
	return PERF_EXIT_USAGE;
}

int perf_report_main(int argc, char **argv)
{
	char tmp[] = "/tmp/shmr-perf-report-XXXXXX";
	const char *outdir = ".";
	int first = 1, ret = PERF_EXIT_OK, drawn = 0;
	struct stat st;

	for (; first < argc && argv[first][0] == '-'; first++) {
		if (strcmp(argv[first], "--out") == 0 && first + 1 < argc) {
			outdir = argv[++first];
		} else if (strcmp(argv[first], "-h") == 0 ||
			   strcmp(argv[first], "--help") == 0) {
			report_usage();
			return PERF_EXIT_OK;
		} else {
			fprintf(stderr, "shmr-perf report: unknown argument "
					"'%s'\n", argv[first]);
			return report_usage();
		}
	}
	if (first == argc)
		return report_usage();
	/* It is written into gnuplot's script as a string. */
	if (strpbrk(outdir, "\"\\\n") || strlen(outdir) > 1024) {
		fprintf(stderr, "shmr-perf report: --out %s: no quotes, "
				"backslashes or newlines, at most 1024 bytes\n",
			outdir);
		return PERF_EXIT_USAGE;
	}
	if (stat(outdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "shmr-perf report: --out %s: not a "
				"directory\n", outdir);
		return PERF_EXIT_USAGE;
	}
	for (int pass = 1; pass <= 2; pass++)
		for (int i = first; i < argc; i++)
			if (read_file(argv[i], pass) < 0)
				return PERF_EXIT_FAIL;
	if (!mkdtemp(tmp)) {
		perror("shmr-perf report: mkdtemp");
		return PERF_EXIT_FAIL;
	}
	perf_track_dir(tmp);
	for (unsigned i = 0; i < CH_COUNT + nlat; i++) {
		const struct chart *c = i < CH_COUNT ? &charts[i]
						     : &lat[i - CH_COUNT];
		char out[1100], script[4096];

		if (!c->ncat)
			continue;
		snprintf(out, sizeof(out), "%s/%s", outdir, c->file);
		if (write_script(c, tmp, out, script, sizeof(script)) < 0 ||
		    gnuplot(script) < 0 || stat(out, &st) < 0 ||
		    st.st_size == 0) {
			fprintf(stderr, "shmr-perf report: %s: not written\n",
				out);
			ret = PERF_EXIT_FAIL;
			continue;
		}
		printf("shmr-perf report: wrote %s (%u bars)\n", out, c->ncat);
		drawn++;
	}
	nftw(tmp, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	perf_untrack_dir(tmp);
	if (!drawn && ret == PERF_EXIT_OK) {
		fprintf(stderr, "shmr-perf report: nothing to plot: no "
				"compare, logics or decide medians in the "
				"files\n");
		ret = PERF_EXIT_FAIL;
	}
	return ret;
}
