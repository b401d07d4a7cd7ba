/*
 * shmrctl's read verbs: routes, route, status, routees, dlq list (and
 * dlq replay, which shares its parsing), inspect, metrics and watch.
 *
 * The control plane answers in its one text form (key=value words, "key
 * value" lines: shmr/proto.h), which the tests and other tools read too;
 * shmrctl turns that into what a person or a script wants:
 *
 *   - without --json, an aligned table with a header row (one column per
 *     field, in the order the answer gives them; status: FIELD VALUE);
 *   - with --json, JSON built with json-c, each field typed by the schema
 *     below (numbers as numbers, yes/no as booleans, a pid as
 *     {"slot", "gen"}, router_names as an array): docs/shmrctl-json.md
 *     lists every field, and tests/integration/test_json.c checks the
 *     output against that page, so the two cannot drift.
 *
 * Doing it here, not in the control plane, keeps one wire format (no
 * second encoder in the daemon, nothing new to trust on its socket) and
 * puts the typing where the documentation of the output is.
 *
 * Nothing in an answer is trusted: a value the schema calls a number
 * that is not one, or a line that is not "word key=value...", ends the
 * command with "shmrctl: unexpected ANSWER answer: ..." (exit 1), never
 * a half-typed document.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "shmrctl_cli.h"

#define MAX_ROUTES 256
#define TABLE_COLS 64

enum ftype { T_STR, T_INT, T_BOOL, T_PID, T_LIST };

struct field {
	const char *key;
	enum ftype type;
};

/* The fields of each answer, as docs/shmrctl-json.md documents them. */
static const struct field route_fields[] = {
	{ "name", T_STR },     { "pid", T_PID },	  { "os_pid", T_INT },
	{ "state", T_STR },    { "restarts", T_INT }, { "delivered", T_INT },
	{ "queued", T_INT },   { "cpus", T_STR },
	{ "sojourn_count", T_INT }, { "sojourn_p50_ns", T_INT },
	{ "sojourn_p99_ns", T_INT }, { "sojourn_p999_ns", T_INT },
	{ "sojourn_max_ns", T_INT }, { NULL, T_STR },
};
static const struct field status_fields[] = {
	{ "domain", T_STR },
	{ "size", T_INT },
	{ "hugepages", T_BOOL },
	{ "control_pid", T_INT },
	{ "dataplane_pid", T_INT },
	{ "dataplane_starts", T_INT },
	{ "admin_dropped", T_INT },
	{ "nlcores", T_INT },
	{ "slot_size", T_INT },
	{ "lane_size", T_INT },
	{ "lanes_reinit", T_INT },
	{ "endpoints", T_INT },
	{ "draining", T_INT },
	{ "close_dropped", T_INT },
	{ "routers", T_INT },
	{ "router_names", T_LIST },
	{ "spec_version", T_INT },
	{ "socket", T_STR },
	{ "connections_refused", T_INT },
	{ "requests_refused", T_INT },
	{ "idle_closed", T_INT },
	{ NULL, T_STR },
};
static const struct field routee_fields[] = {
	{ "name", T_STR },
	{ NULL, T_STR },
};
static const struct field dlq_fields[] = {
	{ "index", T_INT }, { "reason", T_STR }, { "name", T_STR },
	{ "type", T_INT },  { "key", T_INT },    { "from", T_PID },
	{ "len", T_INT },   { NULL, T_STR },
};

/* One line of an answer: its fields, pointing into the caller's copy. */
struct rec {
	unsigned n, cap;
	const char **key, **val;
};

struct recs {
	unsigned n, cap;
	struct rec *r;
	char *text; /* the body's copy the fields point into */
};

static const char *what; /* the answer's name, for messages */

static _Noreturn void unexpected(const char *why, const char *detail)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "unexpected %s answer: %s%s%.64s", what,
		 why, detail ? ": " : "", detail ? detail : "");
	shmr_cli_die(msg);
}

static struct rec *rec_new(struct recs *rs)
{
	if (rs->n == rs->cap) {
		unsigned cap = rs->cap ? rs->cap * 2 : 16;
		struct rec *r = realloc(rs->r, cap * sizeof(*r));

		if (!r)
			shmr_cli_die(strerror(ENOMEM));
		rs->r = r;
		rs->cap = cap;
	}
	rs->r[rs->n] = (struct rec){ 0 };
	return &rs->r[rs->n++];
}

static void rec_put(struct rec *r, const char *key, const char *val)
{
	if (r->n == r->cap) {
		unsigned cap = r->cap ? r->cap * 2 : 16;
		const char **k = realloc(r->key, cap * sizeof(*k));
		const char **v = k ? realloc(r->val, cap * sizeof(*v)) : NULL;

		if (k)
			r->key = k;
		if (!v)
			shmr_cli_die(strerror(ENOMEM));
		r->val = v;
		r->cap = cap;
	}
	r->key[r->n] = key;
	r->val[r->n] = val;
	r->n++;
}

/*
 * Lines "FIRST key=value key=value..." (routes, route, routees, dlq
 * list), FIRST being field @p first; or, with @p kv_lines, "key value"
 * lines that make one record (status).
 */
static void parse(const char *body, const char *first, int kv_lines,
		  struct recs *rs)
{
	char *line, *save = NULL;
	struct rec *one = NULL;

	memset(rs, 0, sizeof(*rs));
	rs->text = strdup(body);
	if (!rs->text)
		shmr_cli_die(strerror(ENOMEM));
	if (kv_lines)
		one = rec_new(rs);
	for (line = strtok_r(rs->text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *w, *wsave = NULL, *sp;
		struct rec *r;

		if (kv_lines) {
			sp = strchr(line, ' ');
			if (!sp || sp == line)
				unexpected("not a \"key value\" line", line);
			*sp = '\0';
			rec_put(one, line, sp + 1);
			continue;
		}
		r = rec_new(rs);
		w = strtok_r(line, " ", &wsave);
		if (!w)
			unexpected("an empty line", NULL);
		rec_put(r, first, w);
		while ((w = strtok_r(NULL, " ", &wsave))) {
			char *eq = strchr(w, '=');

			if (!eq || eq == w)
				unexpected("not key=value", w);
			*eq = '\0';
			rec_put(r, w, eq + 1);
		}
	}
}

static void recs_free(struct recs *rs)
{
	for (unsigned i = 0; i < rs->n; i++) {
		free(rs->r[i].key);
		free(rs->r[i].val);
	}
	free(rs->r);
	free(rs->text);
}

/* The schema's type of @p key; an undocumented one is typed by its look
 * (all digits: a number), so it still shows, and test_json flags it. */
static enum ftype type_of(const struct field *schema, const char *key,
			  const char *val)
{
	for (; schema->key; schema++)
		if (strcmp(schema->key, key) == 0)
			return schema->type;
	return *val && strspn(val, "0123456789") == strlen(val) ? T_INT
								 : T_STR;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!(*s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static struct json_object *json_value(const char *key, enum ftype t,
				      const char *v)
{
	struct json_object *o;
	uint64_t a, b;
	char *end;

	switch (t) {
	case T_INT:
		if (v[0] == '-') {
			long long n;

			errno = 0;
			n = strtoll(v, &end, 10);
			if (errno || end == v + 1 || *end)
				unexpected("not a number", key);
			return json_object_new_int64(n);
		}
		if (parse_u64(v, &a) < 0)
			unexpected("not a number", key);
		return json_object_new_uint64(a);
	case T_BOOL:
		if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0)
			return json_object_new_boolean(1);
		if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0)
			return json_object_new_boolean(0);
		unexpected("not yes or no", key);
	case T_PID: {
		const char *colon = strchr(v, ':');
		char slot[24];

		if (!colon || (size_t)(colon - v) >= sizeof(slot))
			unexpected("not SLOT:GEN", key);
		memcpy(slot, v, (size_t)(colon - v));
		slot[colon - v] = '\0';
		if (parse_u64(slot, &a) < 0 || parse_u64(colon + 1, &b) < 0 ||
		    a > UINT32_MAX || b > UINT32_MAX)
			unexpected("not SLOT:GEN", key);
		o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_uint64(a));
		json_object_object_add(o, "gen", json_object_new_uint64(b));
		return o;
	}
	case T_LIST: {
		const char *p = v;

		o = json_object_new_array();
		while (*p) {
			size_t n = strcspn(p, ",");

			json_object_array_add(
				o, json_object_new_string_len(p, (int)n));
			p += n;
			if (*p)
				p++;
		}
		return o;
	}
	default:
		return json_object_new_string(v);
	}
}

static struct json_object *json_rec(const struct rec *r,
				    const struct field *schema)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; i < r->n; i++)
		json_object_object_add(
			o, r->key[i],
			json_value(r->key[i],
				   type_of(schema, r->key[i], r->val[i]),
				   r->val[i]));
	return o;
}

/* Print @p rs as JSON: one object (@p single), else an array of them. */
static void print_json(const struct recs *rs, const struct field *schema,
		       int single)
{
	struct json_object *doc;

	if (single) {
		if (rs->n != 1)
			unexpected("not one record", NULL);
		doc = json_rec(&rs->r[0], schema);
	} else {
		doc = json_object_new_array();
		for (unsigned i = 0; i < rs->n; i++)
			json_object_array_add(doc, json_rec(&rs->r[i], schema));
	}
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}

/* The header of column @p key: the key in capitals. */
static void header_of(const char *key, char *out, size_t cap)
{
	size_t i;

	for (i = 0; key[i] && i + 1 < cap; i++)
		out[i] = key[i] >= 'a' && key[i] <= 'z' ? (char)(key[i] - 32)
							: key[i];
	out[i] = '\0';
}

static const char *cell(const struct rec *r, const char *key)
{
	for (unsigned i = 0; i < r->n; i++)
		if (strcmp(r->key[i], key) == 0)
			return *r->val[i] ? r->val[i] : "-";
	return "-";
}

/* One cell, padded to @p width unless it ends the row. */
static void put_cell(const char *text, size_t width, int last)
{
	if (last)
		printf("%s\n", text);
	else
		printf("%-*s  ", (int)width, text);
}

/*
 * Print @p rs as an aligned table: a header row of the fields' names in
 * capitals, one row per record, columns two spaces apart (the last one
 * not padded).  The columns are the fields in the order the answer first
 * gives them.  With no records, the header alone.
 */
static void print_table(const struct recs *rs, const char *const *cols0,
			unsigned ncols0)
{
	const char *cols[TABLE_COLS];
	size_t width[TABLE_COLS];
	unsigned ncols = 0;
	char head[64];

	for (unsigned i = 0; i < ncols0; i++)
		cols[ncols++] = cols0[i];
	for (unsigned i = 0; i < rs->n; i++)
		for (unsigned k = 0; k < rs->r[i].n; k++) {
			unsigned c;

			for (c = 0; c < ncols; c++)
				if (strcmp(cols[c], rs->r[i].key[k]) == 0)
					break;
			if (c == ncols && ncols < TABLE_COLS)
				cols[ncols++] = rs->r[i].key[k];
		}
	for (unsigned c = 0; c < ncols; c++) {
		width[c] = strlen(cols[c]);
		for (unsigned i = 0; i < rs->n; i++) {
			size_t w = strlen(cell(&rs->r[i], cols[c]));

			if (w > width[c])
				width[c] = w;
		}
	}
	for (unsigned c = 0; c < ncols; c++) {
		header_of(cols[c], head, sizeof(head));
		put_cell(head, width[c], c + 1 == ncols);
	}
	for (unsigned i = 0; i < rs->n; i++)
		for (unsigned c = 0; c < ncols; c++)
			put_cell(cell(&rs->r[i], cols[c]), width[c],
				 c + 1 == ncols);
}

/* status as a table: FIELD VALUE, one row per field. */
static void print_fields(const struct rec *r)
{
	size_t w = strlen("FIELD");

	for (unsigned i = 0; i < r->n; i++)
		if (strlen(r->key[i]) > w)
			w = strlen(r->key[i]);
	printf("%-*s  VALUE\n", (int)w, "FIELD");
	for (unsigned i = 0; i < r->n; i++)
		printf("%-*s  %s\n", (int)w, r->key[i],
		       *r->val[i] ? r->val[i] : "-");
}

/* The words after the verb: --json (anywhere) taken out, the others
 * into @p words; usage unless there are exactly @p want of them. */
static int take_args(int argc, char **argv, int i, const char **words,
		     int want, const char *use)
{
	int n = 0, json = 0;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = 1;
			continue;
		}
		if (n == want)
			shmr_cli_usage("unexpected argument");
		words[n++] = argv[i];
	}
	if (n != want)
		shmr_cli_usage(use);
	for (int k = 0; k < n; k++)
		if (!shmr_proto_word_ok(words[k], SHMR_NAME_MAX))
			shmr_cli_usage(k == 0 && want > 0 ? "bad ROUTER name"
							  : "bad NAME");
	return json;
}

static const char *ask(const char *verb, const char *const *words,
		       unsigned n)
{
	char req[160];

	if (shmr_proto_encode(req, sizeof(req), verb, words, n) < 0)
		shmr_cli_usage("request too long");
	what = verb;
	shmr_cli_connect();
	return shmr_cli_request(req);
}

/* routes ROUTER / route ROUTER NAME [--json]. */
static int routes(int one, int argc, char **argv, int i)
{
	const char *words[2];
	struct recs rs;
	int json = take_args(argc, argv, i, words, one ? 2 : 1,
			     one ? "route: ROUTER NAME" : "missing ROUTER");

	parse(ask(one ? "ROUTE" : "ROUTES", words, one ? 2u : 1u), "name", 0,
	      &rs);
	shmr_cli_close();
	if (json)
		print_json(&rs, route_fields, one);
	else
		print_table(&rs, (const char *const[]){ "name" }, 1);
	recs_free(&rs);
	return 0;
}

static int status(int argc, char **argv, int i)
{
	struct recs rs;
	int json = take_args(argc, argv, i, NULL, 0, "status: no arguments");

	parse(ask("STATUS", NULL, 0), NULL, 1, &rs);
	shmr_cli_close();
	if (json)
		print_json(&rs, status_fields, 1);
	else
		print_fields(&rs.r[0]);
	recs_free(&rs);
	return 0;
}

static int routees(int argc, char **argv, int i)
{
	const char *router;
	struct recs rs;
	int json = take_args(argc, argv, i, &router, 1, "expected ROUTER");

	parse(ask("ROUTEES", &router, 1), "name", 0, &rs);
	shmr_cli_close();
	if (json)
		print_json(&rs, routee_fields, 0);
	else
		print_table(&rs, (const char *const[]){ "name" }, 1);
	recs_free(&rs);
	return 0;
}

/*
 * DLQ_LIST ROUTER, whole whatever its size: asked part by part (from=N;
 * each answer "OK NEXT ok|corrupt|more" and the records from N that fit
 * one packet) and joined.  The answer is a peer's: a part that does not
 * move on ends it with a one-line error.  *count: the records listed (the
 * index of a corrupted one); @p state: "ok" or "corrupt".  The body is
 * static, until the next call.
 */
static const char *dlq_list_body(const char *router, unsigned *count,
				 char *state, size_t cap)
{
	static char *text;
	static size_t len;
	const char *words[2] = { router, NULL };
	unsigned next = 0;
	char from[24], word[16];
	FILE *out;

	free(text);
	text = NULL;
	out = open_memstream(&text, &len);
	if (!out)
		shmr_cli_die(strerror(ENOMEM));
	for (;;) {
		const char *body;
		unsigned n;

		snprintf(from, sizeof(from), "from=%u", next);
		words[1] = from;
		body = ask("DLQ_LIST", words, 2);
		if (sscanf(shmr_cli_ans, "OK %u %15s", &n, word) != 2 ||
		    (strcmp(word, "ok") && strcmp(word, "corrupt") &&
		     strcmp(word, "more")))
			unexpected("not OK COUNT ok|corrupt|more", NULL);
		if (n < next || (strcmp(word, "more") == 0 && n == next))
			unexpected("a part that does not move on", NULL);
		if (fputs(body, out) < 0)
			shmr_cli_die(strerror(ENOMEM));
		next = n;
		if (strcmp(word, "more") != 0)
			break;
	}
	if (fclose(out) != 0)
		shmr_cli_die(strerror(ENOMEM));
	*count = next;
	snprintf(state, cap, "%s", word);
	return text;
}

/*
 * dlq list|replay ROUTER.  list: the records, a table or a JSON array; a
 * corrupted or truncated record ends the listing (what came before it is
 * printed) with exit status 1.  replay: "resent N left M".
 */
static int dlq(int argc, char **argv, int i)
{
	const char *words[2], *sub;
	unsigned count = 0, sent = 0, left = 0;
	char word[16] = "";
	struct recs rs;
	int json;

	json = take_args(argc, argv, i, words, 2, "dlq: list|replay ROUTER");
	sub = words[0];
	if (strcmp(sub, "list") && strcmp(sub, "replay"))
		shmr_cli_usage("dlq: list|replay ROUTER");
	if (sub[0] == 'r') {
		if (json)
			shmr_cli_usage("dlq replay: no --json");
		ask("DLQ_REPLAY", words + 1, 1);
		shmr_cli_close();
		if (sscanf(shmr_cli_ans, "OK %u %u", &sent, &left) != 2)
			unexpected("not OK SENT LEFT", NULL);
		printf("resent %u left %u\n", sent, left);
		return 0;
	}
	parse(dlq_list_body(words[1], &count, word, sizeof(word)), "index", 0,
	      &rs);
	shmr_cli_close();
	if (json)
		print_json(&rs, dlq_fields, 0);
	else
		print_table(&rs,
			    (const char *const[]){ "index", "reason", "name",
						   "type", "key", "from",
						   "len" },
			    7);
	recs_free(&rs);
	if (strcmp(word, "ok") != 0) {
		fflush(stdout);
		fprintf(stderr,
			"shmrctl: record %u: corrupted or truncated; listing "
			"stops\n",
			count);
		return 1;
	}
	return 0;
}

/* A Prometheus label value ("..." with \\, \" and \n escapes) at @p p
 * into @p out; returns what follows its closing quote, or NULL. */
static const char *label_value(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			c = *++p;
			if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return NULL;
		}
		if (n + 1 < cap)
			out[n++] = c;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

/* One sample line "NAME{L="V",...} VALUE" as an object, with the type
 * and help its family's # TYPE and # HELP lines gave. */
static struct json_object *metric_sample(const char *line, const char *type,
					 const char *help)
{
	struct json_object *o = json_object_new_object(),
			   *labels = json_object_new_object();
	size_t n = strcspn(line, "{ ");
	const char *p = line + n, *v;
	char key[64], val[256], *end;
	double d;

	json_object_object_add(o, "name",
			       json_object_new_string_len(line, (int)n));
	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, "help", json_object_new_string(help));
	if (*p == '{') {
		p++;
		while (*p && *p != '}') {
			size_t k = strcspn(p, "=");

			if (!p[k] || k == 0 || k >= sizeof(key))
				unexpected("a bad label", line);
			memcpy(key, p, k);
			key[k] = '\0';
			p = label_value(p + k + 1, val, sizeof(val));
			if (!p)
				unexpected("a bad label value", line);
			json_object_object_add(labels, key,
					       json_object_new_string(val));
			if (*p == ',')
				p++;
		}
		if (*p++ != '}')
			unexpected("labels not closed", line);
	}
	json_object_object_add(o, "labels", labels);
	if (*p != ' ')
		unexpected("no value", line);
	v = p + 1;
	if (*v >= '0' && *v <= '9' && strspn(v, "0123456789") == strlen(v)) {
		json_object_object_add(o, "value",
				       json_value("value", T_INT, v));
		return o;
	}
	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end)
		unexpected("not a number", line);
	json_object_object_add(o, "value", json_object_new_double(d));
	return o;
}

/* The Prometheus text @p body as a JSON array of samples. */
static void print_metrics_json(const char *body)
{
	struct json_object *doc = json_object_new_array();
	char *text = strdup(body), *line, *save = NULL;
	char type[32] = "untyped", help[512] = "";

	if (!text)
		shmr_cli_die(strerror(ENOMEM));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# TYPE ", 7) == 0) {
			const char *t = strrchr(line, ' ');

			snprintf(type, sizeof(type), "%s", t + 1);
		} else if (strncmp(line, "# HELP ", 7) == 0) {
			/* A family starts: its HELP, then its TYPE. */
			const char *h = strchr(line + 7, ' ');

			snprintf(help, sizeof(help), "%s", h ? h + 1 : "");
			snprintf(type, sizeof(type), "untyped");
		} else if (line[0] != '#') {
			json_object_array_add(doc,
					      metric_sample(line, type, help));
		}
	}
	free(text);
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}

/* metrics [--json]: every counter and gauge, the Prometheus text
 * exposition format as the control plane renders it
 * (docs/observability.md); with --json, one object per sample. */
static int metrics(int argc, char **argv, int i)
{
	int json = take_args(argc, argv, i, NULL, 0, "metrics: no arguments");
	char *body;

	what = "METRICS";
	body = shmr_cli_metrics_text();

	shmr_cli_close();
	if (json)
		print_metrics_json(body);
	else
		fputs(body, stdout);
	free(body);
	return 0;
}

/* inspect ROUTER [--json]: the router's "shmr:" keys, as a FIELD VALUE
 * table, or as the control plane's JSON (typed by its counter registry:
 * docs/observability.md). */
static int inspect(int argc, char **argv, int i)
{
	const char *words[2] = { NULL, "json" };
	int json = take_args(argc, argv, i, words, 1, "missing ROUTER");
	char *body;
	struct recs rs;

	what = "INSPECT";
	body = shmr_cli_inspect_body(words[0], json);
	shmr_cli_close();
	if (json) {
		fputs(body, stdout);
		free(body);
		return 0;
	}
	parse(body, NULL, 1, &rs);
	print_fields(&rs.r[0]);
	recs_free(&rs);
	free(body);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sample {
	unsigned n;
	char name[MAX_ROUTES][SHMR_NAME_MAX];
	uint64_t fwd[MAX_ROUTES];
	double t;
};

/* Parse "shmr:route:NAME:forwarded VALUE" lines of an INSPECT body. */
static void parse_sample(const char *body, struct sample *s)
{
	static const char pre[] = "shmr:route:", suf[] = ":forwarded";
	const char *line = body;

	s->n = 0;
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *sp = memchr(line, ' ', eol ? (size_t)(eol - line)
						       : strlen(line));
		size_t klen;

		if (!eol)
			eol = line + strlen(line);
		if (sp && strncmp(line, pre, sizeof(pre) - 1) == 0) {
			klen = (size_t)(sp - line);
			if (klen > sizeof(pre) - 1 + sizeof(suf) - 1 &&
			    memcmp(sp - (sizeof(suf) - 1), suf,
				   sizeof(suf) - 1) == 0 &&
			    s->n < MAX_ROUTES) {
				size_t nl = klen - (sizeof(pre) - 1) -
					    (sizeof(suf) - 1);

				if (nl < SHMR_NAME_MAX) {
					memcpy(s->name[s->n],
					       line + sizeof(pre) - 1, nl);
					s->name[s->n][nl] = '\0';
					s->fwd[s->n] =
						strtoull(sp + 1, NULL, 10);
					s->n++;
				}
			}
		}
		line = *eol ? eol + 1 : eol;
	}
}

static _Atomic int interrupted; /* lock-free: async-signal-safe */

static void on_sigint(int sig)
{
	(void)sig;
	atomic_store_explicit(&interrupted, 1, memory_order_relaxed);
}

/* watch ROUTER [--interval SEC] [--duration SEC]: a header line "route
 * msgs/s total", then msgs/s per route, once per interval. */
static int watch(int argc, char **argv, int i)
{
	static struct sample prev, cur;
	struct sigaction sa = { .sa_handler = on_sigint };
	const char *router = NULL;
	double interval = 1, duration = 0;
	struct timespec next, end;
	char req[128];

	for (; i < argc; i++) {
		if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
			if (shmr_cli_parse_seconds(argv[++i], &interval) < 0 ||
			    interval < 0.01)
				shmr_cli_usage(
					"--interval: seconds, at least 0.01");
		} else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc) {
			duration = shmr_cli_parse_duration(argv[++i]);
		} else if (!router && argv[i][0] != '-') {
			router = argv[i];
		} else {
			shmr_cli_usage("unexpected argument");
		}
	}
	if (!router)
		shmr_cli_usage("missing ROUTER");
	if (!shmr_proto_word_ok(router, SHMR_NAME_MAX))
		shmr_cli_usage("bad ROUTER name");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: the sleep ends */
	sigaction(SIGTERM, &sa, NULL);
	if (shmr_proto_encode(req, sizeof(req), "INSPECT", &router, 1) < 0)
		shmr_cli_usage("request too long");
	shmr_cli_connect();
	parse_sample(shmr_cli_request(req), &prev);
	prev.t = now_s();
	/* Once, so the columns are named before the first figures. */
	printf("route msgs/s total\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	shmr_cli_ts_add(&end, duration);
	while (!atomic_load_explicit(&interrupted, memory_order_relaxed)) {
		uint64_t total = 0;
		double dt, rate_total = 0;
		/* The last sample is taken at the end of --duration (its
		 * rates over the shorter interval). */
		int last = shmr_cli_tick(&next, interval,
					 duration > 0 ? &end : NULL);

		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				    NULL) != 0 ||
		    atomic_load_explicit(&interrupted, memory_order_relaxed))
			break;
		parse_sample(shmr_cli_request(req), &cur);
		cur.t = now_s();
		dt = cur.t - prev.t;
		for (unsigned k = 0; k < cur.n; k++) {
			uint64_t before = 0;
			double rate;

			for (unsigned j = 0; j < prev.n; j++)
				if (strcmp(prev.name[j], cur.name[k]) == 0)
					before = prev.fwd[j];
			rate = dt > 0 && cur.fwd[k] >= before
				       ? (double)(cur.fwd[k] - before) / dt
				       : 0;
			rate_total += rate;
			total += cur.fwd[k];
			printf("%s %.0f %" PRIu64 "\n", cur.name[k], rate,
			       cur.fwd[k]);
		}
		printf("total %.0f %" PRIu64 "\n", rate_total, total);
		fflush(stdout);
		prev = cur;
		if (last)
			break;
	}
	shmr_cli_close();
	return 0;
}

int shmr_cli_read(const char *cmd, int argc, char **argv, int i)
{
	if (strcmp(cmd, "routes") == 0)
		return routes(0, argc, argv, i);
	if (strcmp(cmd, "route") == 0)
		return routes(1, argc, argv, i);
	if (strcmp(cmd, "status") == 0)
		return status(argc, argv, i);
	if (strcmp(cmd, "routees") == 0)
		return routees(argc, argv, i);
	if (strcmp(cmd, "dlq") == 0)
		return dlq(argc, argv, i);
	if (strcmp(cmd, "inspect") == 0)
		return inspect(argc, argv, i);
	if (strcmp(cmd, "metrics") == 0)
		return metrics(argc, argv, i);
	if (strcmp(cmd, "watch") == 0)
		return watch(argc, argv, i);
	if (strcmp(cmd, "top") == 0)
		return shmr_cli_top(argc, argv, i);
	return -1;
}
