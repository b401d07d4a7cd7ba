/*
 * shmrctl's read verbs for scripts and for people, against the real
 * daemons: every --json output parses, and has exactly the fields that
 * docs/shmrctl-json.md lists for its verb, each of the documented type
 * (read from the page, so the page and the output cannot drift), with the
 * values the test caused; without --json, an aligned table with a header.
 *
 * usage: test_json SOURCE_DIR
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "shmr_test_app.h"

#define CONF                                                                   \
	"routers = (\n"                                                        \
	"  { name = \"events\"; behaviour = \"type\";\n"                       \
	"    types = ( { type = 1; route = \"work\"; },\n"                     \
	"              { type = 2; route = \"later\"; } );\n"                  \
	"    routes = ( { name = \"work\"; program = \"shmr-test-worker\"; },\n" \
	"               { name = \"idle\"; program = \"shmr-test-worker\"; } ); },\n" \
	"  { name = \"pool\"; behaviour = \"round-robin\";\n"                  \
	"    pool = { size = 2; program = \"shmr-test-worker\"; }; } );\n"

#define MAX_FIELDS 64

static const char *source_dir;

/* One verb's documented fields: "name" or "pid.slot", and the type. */
struct doc_verb {
	char verb[32];
	unsigned n;
	char field[MAX_FIELDS][48];
	char type[MAX_FIELDS][32];
};

static struct doc_verb doc[16];
static unsigned ndoc;

/*
 * Read docs/shmrctl-json.md: each "## " heading names its verbs (the
 * first word of each `...` in it); the rows "| `FIELD` | TYPE | ... |"
 * under it are their fields.
 */
static void read_doc(void)
{
	char path[600], line[1024];
	struct doc_verb *cur[4];
	unsigned ncur = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/docs/shmrctl-json.md", source_dir);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "## ", 3) == 0) {
			const char *p = line;

			ncur = 0;
			while ((p = strchr(p, '`')) && ncur < 4) {
				struct doc_verb *d = &doc[ndoc++];
				size_t w = strcspn(p + 1, " `");

				memset(d, 0, sizeof(*d));
				snprintf(d->verb, sizeof(d->verb), "%.*s",
					 (int)w, p + 1);
				cur[ncur++] = d;
				p = strchr(p + 1, '`');
				if (!p)
					break;
				p++;
			}
			continue;
		}
		if (strncmp(line, "| `", 3) == 0 && ncur) {
			char field[48], type[32];

			if (sscanf(line, "| `%47[^`]` | %31[^|]|", field,
				   type) != 2)
				fail_msg("docs line not understood: %s", line);
			while (type[0] && type[strlen(type) - 1] == ' ')
				type[strlen(type) - 1] = '\0';
			for (unsigned k = 0; k < ncur; k++) {
				struct doc_verb *d = cur[k];

				assert_true(d->n < MAX_FIELDS);
				strcpy(d->field[d->n], field);
				strcpy(d->type[d->n], type);
				d->n++;
			}
		}
	}
	fclose(f);
}

static const struct doc_verb *doc_of(const char *verb)
{
	for (unsigned i = 0; i < ndoc; i++)
		if (strcmp(doc[i].verb, verb) == 0)
			return &doc[i];
	fail_msg("docs/shmrctl-json.md documents no `%s`", verb);
	return NULL;
}

static int type_ok(struct json_object *v, const char *type)
{
	if (strcmp(type, "number") == 0)
		return json_object_is_type(v, json_type_int) ||
		       json_object_is_type(v, json_type_double);
	if (strcmp(type, "integer") == 0)
		return json_object_is_type(v, json_type_int);
	if (strcmp(type, "boolean") == 0)
		return json_object_is_type(v, json_type_boolean);
	if (strcmp(type, "string") == 0)
		return json_object_is_type(v, json_type_string);
	if (strcmp(type, "array of strings") == 0) {
		if (!json_object_is_type(v, json_type_array))
			return 0;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!json_object_is_type(
				    json_object_array_get_idx(v, i),
				    json_type_string))
				return 0;
		return 1;
	}
	fail_msg("docs/shmrctl-json.md: unknown type \"%s\"", type);
	return 0;
}

static struct json_object *get(struct json_object *o, const char *path);

/* "string, optional": "string". */
static const char *base_type(const char *type)
{
	static char t[32];

	snprintf(t, sizeof(t), "%.*s", (int)strcspn(type, ","), type);
	return t;
}

static unsigned required(const struct doc_verb *d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->n; i++)
		n += strstr(d->type[i], ", optional") == NULL;
	return n;
}

/* Every leaf of @p o (objects flattened to "a.b") is documented for
 * @p d with its type; returns how many leaves there were. */
static unsigned check_leaves(struct json_object *o, const char *prefix,
			     const struct doc_verb *d)
{
	unsigned n = 0;

	json_object_object_foreach(o, key, val)
	{
		char name[96];
		unsigned i;

		snprintf(name, sizeof(name), "%s%s", prefix, key);
		if (json_object_is_type(val, json_type_object)) {
			char sub[100];

			snprintf(sub, sizeof(sub), "%s.", name);
			n += check_leaves(val, sub, d);
			continue;
		}
		for (i = 0; i < d->n; i++)
			if (strcmp(d->field[i], name) == 0)
				break;
		if (i == d->n)
			fail_msg("%s --json: field %s is not in "
				 "docs/shmrctl-json.md",
				 d->verb, name);
		if (!type_ok(val, base_type(d->type[i])))
			fail_msg("%s --json: field %s is not a %s: %s", d->verb,
				 name, d->type[i],
				 json_object_to_json_string(val));
		n++;
	}
	return n;
}

/* @p o has exactly @p d's fields, each of its type. */
static void check_object(struct json_object *o, const struct doc_verb *d)
{
	unsigned leaves, have = 0;

	assert_true(json_object_is_type(o, json_type_object));
	/* Every leaf documented and typed, and every field documented
	 * without ", optional" there. */
	leaves = check_leaves(o, "", d);
	for (unsigned i = 0; i < d->n; i++)
		if (!strstr(d->type[i], ", optional")) {
			if (!get(o, d->field[i]))
				fail_msg("%s --json: documented field %s is "
					 "missing",
					 d->verb, d->field[i]);
			have++;
		}
	assert_int_equal(have, required(d));
	assert_true(leaves >= have);
}

static struct json_object *get(struct json_object *o, const char *path)
{
	char part[64];

	while (o && *path) {
		size_t w = strcspn(path, ".");

		snprintf(part, sizeof(part), "%.*s", (int)w, path);
		if (!json_object_object_get_ex(o, part, &o))
			return NULL;
		path += w + (path[w] == '.');
	}
	return o;
}

static int64_t num(struct json_object *o, const char *path)
{
	struct json_object *v = get(o, path);

	if (!v || !json_object_is_type(v, json_type_int))
		fail_msg("no integer %s", path);
	return json_object_get_int64(v);
}

static const char *str(struct json_object *o, const char *path)
{
	struct json_object *v = get(o, path);

	if (!v || !json_object_is_type(v, json_type_string))
		fail_msg("no string %s", path);
	return json_object_get_string(v);
}

struct ctx {
	struct shmr_test_client cl;
	char out[65536];
};

/* shmrctl -s SOCK WORDS... ; its exit status, output in c->out. */
static int ctl(struct ctx *c, const char *w0, const char *w1, const char *w2,
	       const char *w3)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock,
			 (char *)w0,	     (char *)w1,     (char *)w2,
			 (char *)w3,	     NULL };

	return shmr_test_run(argv, c->out, sizeof(c->out));
}

/* The JSON document shmrctl printed (the test owns it). */
static struct json_object *run_json(struct ctx *c, const char *w0,
				    const char *w1, const char *w2,
				    const char *w3)
{
	struct json_object *o;
	enum json_tokener_error err;

	if (ctl(c, w0, w1, w2, w3) != 0)
		fail_msg("shmrctl %s %s: %s", w0, w1 ? w1 : "", c->out);
	o = json_tokener_parse_verbose(c->out, &err);
	if (!o)
		fail_msg("shmrctl %s %s --json: not JSON (%s): %s", w0,
			 w1 ? w1 : "", json_tokener_error_desc(err), c->out);
	return o;
}

static int dead_letter_listed(void *arg)
{
	struct ctx *c = arg;

	return ctl(c, "dlq", "list", "events", NULL) == 0 &&
	       strstr(c->out, "SHMR_E_PROCESS_UNKNOWN") != NULL;
}

static void start(struct ctx *c, const char *tag)
{
	memset(c, 0, sizeof(*c));
	read_doc();
	assert_int_equal(shmr_test_client_start(&c->cl, tag, CONF, -1), 0);
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	ndoc = 0;
}

/* inspect --json's documented per-route keys ("ROUTE" in them standing
 * for @p route), each there with its documented type. */
static void inspect_route_keys(struct json_object *o, const char *route)
{
	const struct doc_verb *d = doc_of("inspect");
	char path[128];

	assert_true(d->n > 0);
	for (unsigned i = 0; i < d->n; i++) {
		const char *at = strstr(d->field[i], "ROUTE");
		struct json_object *v;

		assert_non_null(at);
		snprintf(path, sizeof(path), "%.*s%s%s",
			 (int)(at - d->field[i]), d->field[i], route, at + 5);
		v = get(o, path);
		/* An optional key (pending) is there only at times. */
		if (!v && strstr(d->type[i], ", optional"))
			continue;
		if (!v || !type_ok(v, base_type(d->type[i])))
			fail_msg("inspect --json: %s is not a %s", path,
				 d->type[i]);
	}
}

/* Every read verb's --json parses and has the documented fields, with
 * the figures this test caused. */
static void test_json_outputs_have_the_documented_fields(void **state)
{
	struct ctx c;
	struct json_object *o, *e;
	struct shmr_pid events, work, me;
	(void)state;

	start(&c, "json");
	me = shmr_endpoint_pid(c.cl.ep);
	assert_int_equal(shmr_lookup(c.cl.d, "events", &events), 0);
	assert_int_equal(shmr_test_route_pid(&c.cl.app, "events", "work",
					     &work),
			 0);
	/* A dead letter: type 2 goes to "later", which nobody holds. */
	assert_int_equal(shmr_send(c.cl.ep, events, 2, 77, "hello", 5), 0);
	assert_true(shmr_test_wait(dead_letter_listed, &c, 30000));

	o = run_json(&c, "routes", "events", "--json", NULL);
	assert_true(json_object_is_type(o, json_type_array));
	assert_int_equal(json_object_array_length(o), 2);
	for (size_t i = 0; i < 2; i++)
		check_object(json_object_array_get_idx(o, i), doc_of("routes"));
	e = json_object_array_get_idx(o, 0);
	assert_string_equal(str(e, "name"), "work");
	assert_int_equal(num(e, "pid.slot"), work.slot);
	assert_int_equal(num(e, "pid.gen"), work.gen);
	assert_true(num(e, "os_pid") > 0);
	assert_true(shmr_test_pid_alive((pid_t)num(e, "os_pid")));
	assert_string_equal(str(e, "state"), "running");
	assert_string_equal(str(json_object_array_get_idx(o, 1), "name"),
			    "idle");
	json_object_put(o);

	o = run_json(&c, "route", "events", "idle", "--json");
	check_object(o, doc_of("route"));
	assert_string_equal(str(o, "name"), "idle");
	json_object_put(o);

	o = run_json(&c, "status", "--json", NULL, NULL);
	check_object(o, doc_of("status"));
	assert_string_equal(str(o, "domain"), c.cl.app.domain);
	assert_int_equal(num(o, "routers"), 2);
	e = get(o, "router_names");
	assert_int_equal(json_object_array_length(e), 2);
	assert_string_equal(json_object_get_string(
				    json_object_array_get_idx(e, 0)),
			    "events");
	assert_string_equal(json_object_get_string(
				    json_object_array_get_idx(e, 1)),
			    "pool");
	assert_string_equal(str(o, "socket"), c.cl.app.sock);
	assert_true(num(o, "dataplane_pid") > 0);
	json_object_put(o);

	o = run_json(&c, "routees", "pool", "--json", NULL);
	assert_true(json_object_is_type(o, json_type_array));
	assert_int_equal(json_object_array_length(o), 2);
	for (size_t i = 0; i < 2; i++)
		check_object(json_object_array_get_idx(o, i),
			     doc_of("routees"));
	assert_string_equal(str(json_object_array_get_idx(o, 0), "name"),
			    "pool:0");
	assert_string_equal(str(json_object_array_get_idx(o, 1), "name"),
			    "pool:1");
	json_object_put(o);

	o = run_json(&c, "dlq", "list", "events", "--json");
	assert_true(json_object_is_type(o, json_type_array));
	assert_int_equal(json_object_array_length(o), 1);
	e = json_object_array_get_idx(o, 0);
	check_object(e, doc_of("dlq"));
	assert_int_equal(num(e, "index"), 0);
	assert_string_equal(str(e, "reason"), "SHMR_E_PROCESS_UNKNOWN");
	assert_string_equal(str(e, "name"), "later");
	assert_int_equal(num(e, "type"), 2);
	assert_int_equal(num(e, "key"), 77);
	assert_int_equal(num(e, "from.slot"), me.slot);
	assert_int_equal(num(e, "from.gen"), me.gen);
	assert_int_equal(num(e, "len"), 5);
	json_object_put(o);

	/* inspect: each documented per-route key of route "work", typed as
	 * documented; its PID the object every output gives a PID as. */
	o = run_json(&c, "inspect", "events", "--json", NULL);
	assert_true(json_object_is_type(o, json_type_object));
	inspect_route_keys(o, "work");
	assert_int_equal(num(o, "shmr:route:work:pid.slot"), work.slot);
	assert_int_equal(num(o, "shmr:route:work:pid.gen"), work.gen);
	json_object_put(o);

	/* metrics: every sample typed; the route's forwarded counter is
	 * there with its labels. */
	o = run_json(&c, "metrics", "--json", NULL, NULL);
	assert_true(json_object_is_type(o, json_type_array));
	{
		int found = 0;

		for (size_t i = 0; i < json_object_array_length(o); i++) {
			e = json_object_array_get_idx(o, i);
			check_object(e, doc_of("metrics"));
			if (strcmp(str(e, "name"), "shmr_route_forwarded_total") ==
				    0 &&
			    strcmp(str(e, "labels.route"), "work") == 0) {
				assert_string_equal(str(e, "labels.router"),
						    "events");
				assert_string_equal(str(e, "type"), "counter");
				found = 1;
			}
		}
		assert_true(found);
	}
	json_object_put(o);

	/* An error is one line on stderr, nothing else: no half document. */
	assert_int_equal(ctl(&c, "routes", "nosuch", "--json", NULL), 1);
	assert_null(strchr(c.out, '{'));
	assert_null(strchr(c.out, '['));
	stop(&c);
}

/* Split @p line at runs of spaces into the start offsets of its words. */
static unsigned word_starts(const char *line, size_t len, size_t *at,
			    unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < len && n < max; i++)
		if (line[i] != ' ' && (i == 0 || line[i - 1] == ' '))
			at[n++] = i;
	return n;
}

/* @p out is a table whose header's words are @p header (space-separated),
 * with @p rows rows, each cell starting at its header's column. */
static void check_table(const char *out, const char *header, unsigned rows)
{
	size_t head_at[16], at[16];
	unsigned ncols, nrows = 0;
	const char *line = out, *eol = strchr(out, '\n');
	char want[256];

	assert_non_null(eol);
	/* The header, words two or more spaces apart. */
	ncols = word_starts(line, (size_t)(eol - line), head_at, 16);
	{
		size_t len = 0;

		for (unsigned k = 0; k < ncols; k++) {
			size_t w = strcspn(line + head_at[k], " \n");

			len += (size_t)snprintf(want + len, sizeof(want) - len,
						"%s%.*s", k ? " " : "", (int)w,
						line + head_at[k]);
		}
	}
	assert_string_equal(want, header);
	for (line = eol + 1; *line; line = eol + 1) {
		unsigned n;

		eol = strchr(line, '\n');
		assert_non_null(eol);
		n = word_starts(line, (size_t)(eol - line), at, 16);
		assert_int_equal(n, ncols);
		for (unsigned k = 0; k < ncols; k++)
			assert_int_equal(at[k], head_at[k]);
		nrows++;
	}
	assert_int_equal(nrows, rows);
}

/* Without --json: aligned tables with a header, for a person. */
static void test_tables_are_aligned_with_a_header(void **state)
{
	struct ctx c;
	(void)state;

	start(&c, "table");
	assert_int_equal(ctl(&c, "routes", "events", NULL, NULL), 0);
	check_table(c.out,
		    "NAME PID OS_PID STATE RESTARTS DELIVERED QUEUED CPUS "
		    "SOJOURN_COUNT SOJOURN_P50_NS SOJOURN_P99_NS "
		    "SOJOURN_P999_NS SOJOURN_MAX_NS", 2);
	assert_non_null(strstr(c.out, "\nwork "));
	assert_non_null(strstr(c.out, "\nidle "));
	assert_int_equal(ctl(&c, "route", "events", "idle", NULL), 0);
	check_table(c.out,
		    "NAME PID OS_PID STATE RESTARTS DELIVERED QUEUED CPUS "
		    "SOJOURN_COUNT SOJOURN_P50_NS SOJOURN_P99_NS "
		    "SOJOURN_P999_NS SOJOURN_MAX_NS", 1);
	assert_int_equal(ctl(&c, "routees", "pool", NULL, NULL), 0);
	check_table(c.out, "NAME", 2);
	assert_int_equal(ctl(&c, "dlq", "list", "events", NULL), 0);
	check_table(c.out, "INDEX REASON NAME TYPE KEY FROM LEN", 0);
	assert_int_equal(ctl(&c, "status", NULL, NULL, NULL), 0);
	/* No arena here: its optional rows are not shown. */
	check_table(c.out, "FIELD VALUE", required(doc_of("status")));
	assert_non_null(strstr(c.out, "\nrouter_names "));
	assert_int_equal(ctl(&c, "inspect", "events", NULL, NULL), 0);
	assert_int_equal(strncmp(c.out, "FIELD ", 6), 0);
	assert_non_null(strstr(c.out, "\nshmr:forwarded "));
	assert_non_null(strstr(c.out, "\nshmr:route:work:state "));
	stop(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_outputs_have_the_documented_fields),
		cmocka_unit_test(test_tables_are_aligned_with_a_header),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_json SOURCE_DIR\n");
		return 2;
	}
	source_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
