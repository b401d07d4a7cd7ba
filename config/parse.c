/*
 * The configuration loader: libconfig does the syntax, this file does the
 * schema.  It walks the parsed tree once, top to bottom, and stops at the
 * first thing that is wrong, so an operator always gets exactly one line
 * that names the file, the line and the field:
 *
 *   app.conf:12: routers.[0].routes.[1].name: duplicate route name "payments"
 *
 * Field paths use libconfig's own path syntax (a list element is ".[i]"),
 * so the path a message names is the path config_lookup() would take.
 *
 * What is checked here is everything that can be checked without touching
 * the system: types, names, ranges, uniqueness, references that must exist
 * inside the file.  Whether a program is installed, a cpu exists or a group
 * is known is for the control plane to find out when it acts.
 *
 * Every setting the schema does not know is an error, at every level: a
 * misspelt "dataplane_cpu" must not silently mean "any cpu".
 *
 * Known limit of libconfig 1.5 (Debian 12): an integer literal that does not
 * fit in 32 bits without the L suffix is truncated by libconfig's scanner
 * before we see it; the ranges below catch most such values, not all.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include <shmr/domain.h>
#include <shmr/layout.h>
#include <shmr/proto.h>

#include "shmr_config.h"

#define CONF_FILE_MAX (1u << 20) /* a configuration is text, not data */
#define CPU_MAX 1023u            /* highest cpu number a list may name */
#define STOP_GRACE_MAX 3600000u  /* one hour */
#define BACKOFF_MAX 3600000u     /* one hour */
#define SUN_PATH_MAX 108u        /* sizeof(struct sockaddr_un.sun_path) */

/* Everything one parse needs to report an error. */
struct pctx {
	const char *source; /* the file name as the caller gave it */
	const char *dir;    /* absolute directory of the file, or NULL */
	char *err;
	size_t errlen;
};

/* A field path such as "routers.[0].routes.[1]". */
struct fpath {
	char s[160];
};

/* A path too long for the buffer (an absurd unknown key) ends in "...". */
static void fp_fix(struct fpath *out, int n)
{
	if (n < 0 || (size_t)n >= sizeof(out->s))
		strcpy(out->s + sizeof(out->s) - 4, "...");
}

static void fp_key(struct fpath *out, const struct fpath *parent,
		   const char *key)
{
	int n;

	if (parent && parent->s[0])
		n = snprintf(out->s, sizeof(out->s), "%s.%s", parent->s, key);
	else
		n = snprintf(out->s, sizeof(out->s), "%s", key);
	fp_fix(out, n);
}

static void fp_index(struct fpath *out, const struct fpath *parent,
		     unsigned i)
{
	fp_fix(out, snprintf(out->s, sizeof(out->s), "%s.[%u]", parent->s, i));
}

/* A value quoted in a message may hold "\n": the error stays one line. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/*
 * Write "file:line: field: message" into the caller's buffer and return
 * -EINVAL.  The file is the one the setting came from (an @include'd file
 * names itself), else the source being parsed.  @p s may be NULL, then
 * @p line is used; line 0 (libconfig's root) is reported as line 1.
 */
/*
 * The file a setting or error came from: an @include'd file names itself
 * (libconfig records the name as written, relative to the including
 * file's directory), the text being parsed is p->source.
 */
static const char *file_name(struct pctx *p, const char *file, char *buf,
			     size_t cap)
{
	if (!file)
		return p->source;
	if (file[0] != '/' && p->dir) {
		snprintf(buf, cap, "%s/%s", p->dir, file);
		return buf;
	}
	return file;
}

__attribute__((format(printf, 5, 6)))
static int fail(struct pctx *p, const config_setting_t *s, int line,
		const char *field, const char *fmt, ...)
{
	const char *file = NULL;
	char msg[512], fbuf[PATH_MAX + 64];
	va_list ap;

	if (s) {
		file = config_setting_source_file(s);
		line = config_setting_source_line(s);
	}
	file = file_name(p, file, fbuf, sizeof(fbuf));
	if (line <= 0)
		line = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen) {
		snprintf(p->err, p->errlen, "%s:%d: %s: %s", file, line, field,
			 msg);
		one_line(p->err);
	}
	return -EINVAL;
}

static const char *type_word(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP: return "a group { ... }";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64: return "an integer";
	case CONFIG_TYPE_FLOAT: return "a float";
	case CONFIG_TYPE_STRING: return "a string";
	case CONFIG_TYPE_BOOL: return "a boolean";
	case CONFIG_TYPE_ARRAY: return "an array [ ... ]";
	case CONFIG_TYPE_LIST: return "a list ( ... )";
	default: return "nothing";
	}
}

/* Every member of @p grp must be one of @p known (NULL-terminated). */
static int check_keys(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *const *known)
{
	int n = config_setting_length(grp);

	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(grp, i);
		const char *name = config_setting_name(m);
		char list[256] = "";
		size_t used = 0;
		struct fpath f;
		bool ok = false;

		for (const char *const *k = known; *k; k++) {
			if (strcmp(*k, name) == 0)
				ok = true;
			used += snprintf(list + used, sizeof(list) - used,
					 "%s%s", used ? ", " : "", *k);
			if (used >= sizeof(list))
				used = sizeof(list) - 1;
		}
		if (!ok) {
			fp_key(&f, path, name);
			return fail(p, m, 0, f.s,
				    "unknown setting (expected one of: %s)",
				    list);
		}
	}
	return 0;
}

/*
 * Find member @p key of @p grp.  Returns 1 and sets *out when present with
 * libconfig type @p want (INT also accepts INT64, ARRAY also accepts LIST
 * so that "args = ( ... )" works as well as "[ ... ]"), 0 when absent,
 * -EINVAL when present with another type.
 */
static int member(struct pctx *p, const config_setting_t *grp,
		  const struct fpath *path, const char *key, int want,
		  config_setting_t **out)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	struct fpath f;
	int t;

	*out = NULL;
	if (!s)
		return 0;
	t = config_setting_type(s);
	if (t == want || (want == CONFIG_TYPE_INT && t == CONFIG_TYPE_INT64) ||
	    (want == CONFIG_TYPE_ARRAY && t == CONFIG_TYPE_LIST)) {
		*out = s;
		return 1;
	}
	fp_key(&f, path, key);
	return fail(p, s, 0, f.s, "expected %s, found %s", type_word(want),
		    type_word(t));
}

static int missing(struct pctx *p, const config_setting_t *grp,
		   const struct fpath *path, const char *key, const char *what)
{
	struct fpath f;

	fp_key(&f, path, key);
	return fail(p, grp, 0, f.s, "required setting is missing (%s)", what);
}

/* Copy a string into a fixed field, or say that it is too long. */
static int copy_str(struct pctx *p, const config_setting_t *s,
		    const char *field, const char *val, char *dst, size_t cap)
{
	size_t n = strlen(val);

	if (n >= cap)
		return fail(p, s, 0, field,
			    "too long: %zu characters (at most %zu)", n,
			    cap - 1);
	memcpy(dst, val, n + 1);
	return 0;
}

static bool name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
	       c == '-';
}

/* A router, route, registry or domain name: [A-Za-z0-9_.:-]{1,31}. */
static int copy_name(struct pctx *p, const config_setting_t *s,
		     const char *field, const char *val,
		     char dst[SHMR_NAME_MAX])
{
	size_t n = strlen(val);

	if (n == 0)
		return fail(p, s, 0, field, "empty name");
	if (n >= SHMR_NAME_MAX)
		return fail(p, s, 0, field,
			    "name \"%s\" is too long: %zu characters (at most %u)",
			    val, n, SHMR_NAME_MAX - 1);
	for (size_t i = 0; i < n; i++)
		if (!name_char(val[i]))
			return fail(p, s, 0, field,
				    "name \"%s\" has a character outside [A-Za-z0-9_.:-]",
				    val);
	memcpy(dst, val, n + 1);
	memset(dst + n, 0, SHMR_NAME_MAX - n);
	return 0;
}

/* Required name member. */
static int get_name(struct pctx *p, const config_setting_t *grp,
		    const struct fpath *path, const char *key, const char *what,
		    char dst[SHMR_NAME_MAX], config_setting_t **where)
{
	config_setting_t *s;
	struct fpath f;
	int rc = member(p, grp, path, key, CONFIG_TYPE_STRING, &s);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, grp, path, key, what);
	if (where)
		*where = s;
	fp_key(&f, path, key);
	return copy_name(p, s, f.s, config_setting_get_string(s), dst);
}

/* Optional string member copied into @p dst (left alone when absent). */
static int get_str(struct pctx *p, const config_setting_t *grp,
		   const struct fpath *path, const char *key, char *dst,
		   size_t cap, config_setting_t **where)
{
	config_setting_t *s;
	struct fpath f;
	int rc = member(p, grp, path, key, CONFIG_TYPE_STRING, &s);

	if (where)
		*where = s;
	if (rc <= 0)
		return rc;
	fp_key(&f, path, key);
	rc = copy_str(p, s, f.s, config_setting_get_string(s), dst, cap);
	return rc < 0 ? rc : 1;
}

/* Optional integer member in [lo, hi] (left alone when absent). */
static int get_u32(struct pctx *p, const config_setting_t *grp,
		   const struct fpath *path, const char *key, uint32_t lo,
		   uint32_t hi, uint32_t *dst, config_setting_t **where)
{
	config_setting_t *s;
	struct fpath f;
	long long v;
	int rc = member(p, grp, path, key, CONFIG_TYPE_INT, &s);

	if (where)
		*where = s;
	if (rc <= 0)
		return rc;
	v = config_setting_get_int64(s);
	if (v < (long long)lo || v > (long long)hi) {
		fp_key(&f, path, key);
		return fail(p, s, 0, f.s,
			    "%lld is out of range (%" PRIu32 " to %" PRIu32 ")",
			    v, lo, hi);
	}
	*dst = (uint32_t)v;
	return 1;
}

/*
 * A cpu list: "" (any), or comma-separated "N" / "N-M" with N <= M,
 * numbers in decimal up to CPU_MAX.  Returns NULL or what is wrong.
 */
static const char *cpulist_why(const char *s, char *buf, size_t cap)
{
	const char *c = s;

	if (!*c)
		return NULL;
	for (;;) {
		unsigned long lo, hi;
		char *end;

		if (*c < '0' || *c > '9')
			goto bad;
		errno = 0;
		lo = strtoul(c, &end, 10);
		hi = lo;
		c = end;
		if (*c == '-') {
			c++;
			if (*c < '0' || *c > '9')
				goto bad;
			hi = strtoul(c, &end, 10);
			c = end;
		}
		if (errno || lo > CPU_MAX || hi > CPU_MAX) {
			snprintf(buf, cap, "cpu list \"%s\" names a cpu above %u",
				 s, CPU_MAX);
			return buf;
		}
		if (hi < lo) {
			snprintf(buf, cap,
				 "cpu list \"%s\" has a reversed range %lu-%lu",
				 s, lo, hi);
			return buf;
		}
		if (*c == '\0')
			return NULL;
		if (*c != ',')
			goto bad;
		c++;
	}
bad:
	snprintf(buf, cap,
		 "bad cpu list \"%s\" (expected N, N-M, or a comma-separated list of them, e.g. \"0,2-3\")",
		 s);
	return buf;
}

static int get_cpus(struct pctx *p, const config_setting_t *grp,
		    const struct fpath *path, const char *key,
		    char dst[SHMR_CONF_CPUS_MAX])
{
	config_setting_t *s;
	char why[256];
	const char *w;
	struct fpath f;
	int rc = get_str(p, grp, path, key, dst, SHMR_CONF_CPUS_MAX, &s);

	if (rc <= 0)
		return rc;
	w = cpulist_why(dst, why, sizeof(why));
	if (w) {
		fp_key(&f, path, key);
		return fail(p, s, 0, f.s, "%s", w);
	}
	return 0;
}

/* An array or list of strings, every element checked by @p each. */
static int str_list(struct pctx *p, const config_setting_t *lst,
		    const struct fpath *path, unsigned max, const char *what,
		    int (*each)(struct pctx *p, const config_setting_t *s,
				const char *field, const char *val, unsigned i,
				void *arg),
		    void *arg)
{
	unsigned n = (unsigned)config_setting_length(lst);

	for (unsigned i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(lst, i);
		struct fpath f;
		int rc;

		fp_index(&f, path, i);
		if (i >= max)
			return fail(p, e, 0, f.s, "too many %s (at most %u)",
				    what, max);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return fail(p, e, 0, f.s, "expected a string, found %s",
				    type_word(config_setting_type(e)));
		rc = each(p, e, f.s, config_setting_get_string(e), i, arg);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int arg_elem(struct pctx *p, const config_setting_t *s,
		    const char *field, const char *val, unsigned i, void *arg)
{
	struct shmr_conf_route *r = arg;

	r->nargs = i + 1;
	return copy_str(p, s, field, val, r->args[i], SHMR_CONF_ARG_MAX);
}

static int hash_elem(struct pctx *p, const config_setting_t *s,
		     const char *field, const char *val, unsigned i, void *arg)
{
	struct shmr_conf_router *r = arg;

	r->nhash = i + 1;
	return copy_name(p, s, field, val, r->hash[i]);
}

/* A list ( { ... }, ... ) whose every element is a group. */
static int group_list(struct pctx *p, const config_setting_t *lst,
		      const struct fpath *path, unsigned max,
		      const char *what)
{
	unsigned n = (unsigned)config_setting_length(lst);

	if (config_setting_type(lst) != CONFIG_TYPE_LIST)
		return fail(p, lst, 0, path->s,
			    "expected a list of groups ( { ... }, ... ), found %s",
			    type_word(config_setting_type(lst)));
	for (unsigned i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(lst, i);
		struct fpath f;

		fp_index(&f, path, i);
		if (config_setting_type(e) != CONFIG_TYPE_GROUP)
			return fail(p, e, 0, f.s, "expected a group { ... }, found %s",
				    type_word(config_setting_type(e)));
		if (i >= max)
			return fail(p, e, 0, f.s, "too many %s (at most %u)",
				    what, max);
	}
	return 0;
}

static const char *const route_keys[] = {
	"name", "program", "args", "cpus", NULL
};

static int route_body(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_route *r);

static int parse_route(struct pctx *p, const config_setting_t *g,
		       const struct fpath *path, struct shmr_conf_router *rt)
{
	struct shmr_conf_route *r = &rt->routes[rt->nroutes];
	config_setting_t *s;
	struct fpath f;
	int rc;

	r->line = config_setting_source_line(g);
	if ((rc = check_keys(p, g, path, route_keys)) < 0)
		return rc;
	if ((rc = get_name(p, g, path, "name", "the route's name", r->name,
			   &s)) < 0)
		return rc;
	for (unsigned i = 0; i < rt->nroutes; i++)
		if (strcmp(rt->routes[i].name, r->name) == 0) {
			fp_key(&f, path, "name");
			return fail(p, s, 0, f.s,
				    "duplicate route name \"%s\" (first at line %d)",
				    r->name, rt->routes[i].line);
		}
	return route_body(p, g, path, r);
}

/* What a route and a pool's routees share: program, args, cpus. */
static int route_body(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_route *r)
{
	config_setting_t *s;
	struct fpath f;
	int rc = get_str(p, g, path, "program", r->program, sizeof(r->program),
			 &s);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, g, path, "program",
			       "the worker program to run");
	if (!r->program[0]) {
		fp_key(&f, path, "program");
		return fail(p, s, 0, f.s, "empty program");
	}
	if ((rc = member(p, g, path, "args", CONFIG_TYPE_ARRAY, &s)) < 0)
		return rc;
	if (rc) {
		fp_key(&f, path, "args");
		rc = str_list(p, s, &f, SHMR_CONF_ARGS_MAX, "arguments",
			      arg_elem, r);
		if (rc < 0)
			return rc;
	}
	return get_cpus(p, g, path, "cpus", r->cpus);
}

/* One entry of a type map (types or call_types) of @p n entries so far. */
static int type_entry(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_type *map,
		      unsigned n, int *type_lines)
{
	static const char *const keys[] = { "type", "route", NULL };
	struct shmr_conf_type *t = &map[n];
	config_setting_t *s;
	struct fpath f;
	int rc;

	if ((rc = check_keys(p, g, path, keys)) < 0)
		return rc;
	rc = get_u32(p, g, path, "type", 1, UINT32_MAX, &t->type, &s);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, g, path, "type",
			       "the message type, a number > 0");
	for (unsigned i = 0; i < n; i++)
		if (map[i].type == t->type) {
			fp_key(&f, path, "type");
			return fail(p, s, 0, f.s,
				    "duplicate type %" PRIu32 " (first at line %d)",
				    t->type, type_lines[i]);
		}
	type_lines[n] = config_setting_source_line(s);
	return get_name(p, g, path, "route",
			"a route or registry name", t->route, NULL);
}

static const char *const router_keys[] = {
	"name", "behaviour", "types", "hash", "dso", "dso_arg", "routes",
	"call_types", "mailbox_full", "handlers", "handlers_arg", "routees",
	"virtual_nodes", "pool", "resizer", "optimal_resizer", "on_kill",
	"within_ms", "interval_ms", NULL
};

/* Settings that belong to one behaviour only. */
static int not_for(struct pctx *p, const config_setting_t *g,
		   const struct fpath *path, const char *beh,
		   const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		config_setting_t *s = config_setting_get_member(g, *k);
		struct fpath f;

		if (s) {
			fp_key(&f, path, *k);
			return fail(p, s, 0, f.s,
				    "not used by behaviour \"%s\"", beh);
		}
	}
	return 0;
}

/*
 * Type map @p key ("types" or "call_types") into @p map / @p n.
 * Returns 1 when read, 0 when absent, -EINVAL when wrong or empty.
 */
static int type_map(struct pctx *p, const config_setting_t *g,
		    const struct fpath *path, const char *key,
		    struct shmr_conf_type *map, unsigned *n)
{
	int lines[SHMR_MAX_TYPES];
	config_setting_t *lst;
	char what[32];
	struct fpath f;
	int rc;

	rc = member(p, g, path, key, CONFIG_TYPE_LIST, &lst);
	if (rc <= 0)
		return rc;
	fp_key(&f, path, key);
	snprintf(what, sizeof(what), "%s entries", key);
	if ((rc = group_list(p, lst, &f, SHMR_MAX_TYPES, what)) < 0)
		return rc;
	if (config_setting_length(lst) == 0)
		return fail(p, lst, 0, f.s,
			    "a type map needs at least one entry ( { type = N; route = \"name\"; }, ... )");
	for (int i = 0; i < config_setting_length(lst); i++) {
		struct fpath e;

		fp_index(&e, &f, (unsigned)i);
		rc = type_entry(p, config_setting_get_elem(lst, i), &e, map,
				*n, lines);
		if (rc < 0)
			return rc;
		(*n)++;
	}
	return 1;
}

static int parse_type_map(struct pctx *p, const config_setting_t *g,
			  const struct fpath *path,
			  struct shmr_conf_router *rt)
{
	static const char *const others[] = { "hash", "dso", "dso_arg",
					      "routees", "virtual_nodes",
					      "within_ms", "interval_ms",
					      NULL };
	int rc;

	if ((rc = not_for(p, g, path, "type", others)) < 0)
		return rc;
	rc = type_map(p, g, path, "types", rt->types, &rt->ntypes);
	if (rc == 0)
		return missing(p, g, path, "types",
			       "behaviour \"type\" needs types = ( { type = N; route = \"name\"; }, ... )");
	return rc < 0 ? rc : 0;
}

static int parse_hash(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const others[] = { "types", "dso", "dso_arg",
					      "routees", "virtual_nodes",
					      "within_ms", "interval_ms",
					      NULL };
	config_setting_t *lst;
	struct fpath f;
	int rc;

	if ((rc = not_for(p, g, path, "hash", others)) < 0)
		return rc;
	rc = member(p, g, path, "hash", CONFIG_TYPE_ARRAY, &lst);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, g, path, "hash",
			       "behaviour \"hash\" needs hash = [ \"name\", ... ]");
	fp_key(&f, path, "hash");
	if (config_setting_length(lst) == 0)
		return fail(p, lst, 0, f.s,
			    "behaviour \"hash\" needs at least one name");
	return str_list(p, lst, &f, SHMR_MAX_ROUTES, "hash entries", hash_elem,
			rt);
}

/*
 * Optional shared-object path @p key into @p dst (SHMR_DSO_PATH_MAX):
 * relative to the file that names it, so a configuration and its objects
 * can move together (a string has no directory).  Returns 1 when set, 0
 * when absent, or the error.
 */
static int get_object(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, const char *key, char *dst)
{
	char raw[SHMR_DSO_PATH_MAX];
	config_setting_t *s;
	struct fpath f;
	int rc = get_str(p, g, path, key, raw, sizeof(raw), &s);

	if (rc <= 0)
		return rc;
	fp_key(&f, path, key);
	if (!raw[0])
		return fail(p, s, 0, f.s, "empty path");
	if (raw[0] != '/' && p->dir) {
		int n = snprintf(dst, SHMR_DSO_PATH_MAX, "%s/%s", p->dir, raw);

		if (n < 0 || (size_t)n >= SHMR_DSO_PATH_MAX)
			return fail(p, s, 0, f.s,
				    "path \"%s/%s\" is too long (at most %u characters)",
				    p->dir, raw, SHMR_DSO_PATH_MAX - 1);
	} else {
		memcpy(dst, raw, sizeof(raw));
	}
	return 1;
}

static int parse_dso(struct pctx *p, const config_setting_t *g,
		     const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const others[] = { "types", "hash", "call_types",
					      "routees", "virtual_nodes",
					      "within_ms", "interval_ms",
					      NULL };
	int rc;

	if ((rc = not_for(p, g, path, "dso", others)) < 0)
		return rc;
	rc = get_object(p, g, path, "dso", rt->dso);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, g, path, "dso",
			       "behaviour \"dso\" needs dso = \"path/to/behaviour.so\"");
	rc = get_str(p, g, path, "dso_arg", rt->dso_arg, sizeof(rt->dso_arg),
		     NULL);
	return rc < 0 ? rc : 0;
}

/* The routing logics, as the configuration spells them. */
static const struct {
	const char *name;
	uint32_t behaviour;
} logics[] = {
	{ "round-robin", SHMR_BEH_ROUND_ROBIN },
	{ "random", SHMR_BEH_RANDOM },
	{ "smallest-mailbox", SHMR_BEH_SMALLEST_MAILBOX },
	{ "broadcast", SHMR_BEH_BROADCAST },
	{ "consistent-hash", SHMR_BEH_CONSISTENT_HASH },
	{ "scatter-gather", SHMR_BEH_SCATTER_GATHER },
	{ "tail-chopping", SHMR_BEH_TAIL_CHOPPING },
	{ "balancing", SHMR_BEH_BALANCING },
};

uint32_t shmr_config_logic_kind(const char *name)
{
	if (!name)
		return 0;
	for (unsigned i = 0; i < sizeof(logics) / sizeof(logics[0]); i++)
		if (strcmp(name, logics[i].name) == 0)
			return logics[i].behaviour;
	return 0;
}

#define BEHAVIOURS                                                        \
	"\"type\", \"hash\", \"dso\", \"round-robin\", \"random\", "          \
	"\"smallest-mailbox\", \"broadcast\", \"consistent-hash\", "           \
	"\"scatter-gather\", \"tail-chopping\" or \"balancing\""

static int routee_elem(struct pctx *p, const config_setting_t *s,
		       const char *field, const char *val, unsigned i,
		       void *arg)
{
	struct shmr_conf_router *r = arg;
	int rc = copy_name(p, s, field, val, r->hash[i]);

	if (rc < 0)
		return rc;
	for (unsigned j = 0; j < i; j++)
		if (strcmp(r->hash[j], r->hash[i]) == 0)
			return fail(p, s, 0, field,
				    "duplicate routee name \"%s\" (first at .[%u])",
				    val, j);
	r->nhash = i + 1;
	return 0;
}

/*
 * within_ms (and, for tail-chopping, interval_ms) of a scatter-gather or
 * tail-chopping router: both required, within 1 to SHMR_WITHIN_MS_MAX,
 * interval 1 to within.
 */
static int parse_timing(struct pctx *p, const config_setting_t *g,
			const struct fpath *path, struct shmr_conf_router *rt,
			const char *beh)
{
	static const char *const interval_key[] = { "interval_ms", NULL };
	int tail = rt->behaviour == SHMR_BEH_TAIL_CHOPPING;
	config_setting_t *s;
	struct fpath f;
	int rc;

	rc = get_u32(p, g, path, "within_ms", 1, SHMR_WITHIN_MS_MAX,
		     &rt->within_ms, NULL);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, g, path, "within_ms",
			       tail ? "behaviour \"tail-chopping\" needs within_ms = N (how long a call waits for a reply, 1 to 3600000)"
				    : "behaviour \"scatter-gather\" needs within_ms = N (how long a call waits for a reply, 1 to 3600000)");
	if (!tail)
		return not_for(p, g, path, beh, interval_key);
	rc = member(p, g, path, "interval_ms", CONFIG_TYPE_INT, &s);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, g, path, "interval_ms",
			       "behaviour \"tail-chopping\" needs interval_ms = N (the wait before the next routee is tried, 1 to within_ms)");
	rc = get_u32(p, g, path, "interval_ms", 1, rt->within_ms,
		     &rt->interval_ms, NULL);
	if (rc < 0) {
		/* Say why the upper end is what it is. */
		long long v = config_setting_get_int64(s);

		if (v > (long long)rt->within_ms) {
			fp_key(&f, path, "interval_ms");
			return fail(p, s, 0, f.s,
				    "%lld is longer than within_ms (%" PRIu32
				    "): every routee after the first would be tried too late",
				    v, rt->within_ms);
		}
	}
	return rc < 0 ? rc : 0;
}

/* An optional routee list ("routees", not empty): absent, the router's
 * own routes are its routees. */
static int parse_routees(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt)
{
	config_setting_t *lst;
	struct fpath f;
	int rc = member(p, g, path, "routees", CONFIG_TYPE_ARRAY, &lst);

	if (rc <= 0)
		return rc;
	fp_key(&f, path, "routees");
	if (config_setting_length(lst) == 0)
		return fail(p, lst, 0, f.s,
			    "needs at least one name (leave it out to use the router's own routes)");
	return str_list(p, lst, &f, SHMR_MAX_ROUTES, "routees", routee_elem,
			rt);
}

/*
 * A routing logic @p beh: an optional routee list (absent: the router's
 * own routes, in order); for consistent-hash only, virtual_nodes; for
 * scatter-gather and tail-chopping, within_ms (and interval_ms).  Those
 * two and balancing route calls themselves: no call_types.  Balancing's
 * routees are its pool's: no routee list (parse_router checks the pool).
 */
static int parse_logic(struct pctx *p, const config_setting_t *g,
		       const struct fpath *path, struct shmr_conf_router *rt,
		       const char *beh)
{
	static const char *const others[] = { "types", "hash", NULL };
	static const char *const chash_only[] = { "virtual_nodes", NULL };
	static const char *const timing[] = { "within_ms", "interval_ms",
					      NULL };
	static const char *const own_calls[] = { "call_types", NULL };
	static const char *const balancing[] = { "routees", NULL };
	int collect = rt->behaviour == SHMR_BEH_SCATTER_GATHER ||
		      rt->behaviour == SHMR_BEH_TAIL_CHOPPING;
	struct fpath f;
	int rc;

	if ((rc = not_for(p, g, path, beh, others)) < 0)
		return rc;
	/* A dso: its defaults (and consistent-hash's key function). */
	if ((rc = get_object(p, g, path, "dso", rt->dso)) < 0)
		return rc;
	if (rc == 0 && config_setting_get_member(g, "dso_arg")) {
		fp_key(&f, path, "dso_arg");
		return fail(p, config_setting_get_member(g, "dso_arg"), 0, f.s,
			    "needs dso = \"path/to/object.so\"");
	}
	if ((rc = get_str(p, g, path, "dso_arg", rt->dso_arg,
			  sizeof(rt->dso_arg), NULL)) < 0)
		return rc;
	if (rt->behaviour == SHMR_BEH_CONSISTENT_HASH) {
		/* Left out: the default, or the dso's (0 until the control
		 * plane reads it). */
		rt->vnodes = rt->dso[0] ? 0 : SHMR_CHASH_VNODES_DEFAULT;
		rc = get_u32(p, g, path, "virtual_nodes", 1,
			     SHMR_CHASH_VNODES_MAX, &rt->vnodes, NULL);
		if (rc < 0)
			return rc;
	} else if ((rc = not_for(p, g, path, beh, chash_only)) < 0) {
		return rc;
	}
	if (collect)
		rc = parse_timing(p, g, path, rt, beh);
	else
		rc = not_for(p, g, path, beh, timing);
	if (rc < 0)
		return rc;
	if ((collect || rt->behaviour == SHMR_BEH_BALANCING) &&
	    (rc = not_for(p, g, path, beh, own_calls)) < 0)
		return rc;
	if (rt->behaviour == SHMR_BEH_BALANCING)
		return not_for(p, g, path, beh, balancing);
	return parse_routees(p, g, path, rt);
}

/*
 * No behaviour, but a dso: the object's logic (or its route_message) decides,
 * and the control plane reads it at start (struct shmr_behaviour).  What
 * the file gives is checked here as far as it can be without the object:
 * the settings of some routing logic, each in range; which of them the
 * logic really uses is checked once it is known.
 */
static int parse_from_dso(struct pctx *p, const config_setting_t *g,
			  const struct fpath *path,
			  struct shmr_conf_router *rt)
{
	static const char *const others[] = { "types", "hash", NULL };
	int rc;

	if ((rc = not_for(p, g, path, "dso", others)) < 0)
		return rc;
	if ((rc = get_object(p, g, path, "dso", rt->dso)) < 0)
		return rc;
	if ((rc = get_str(p, g, path, "dso_arg", rt->dso_arg,
			  sizeof(rt->dso_arg), NULL)) < 0)
		return rc;
	rt->behaviour = SHMR_CONF_BEH_FROM_DSO;
	if ((rc = get_u32(p, g, path, "virtual_nodes", 1,
			  SHMR_CHASH_VNODES_MAX, &rt->vnodes, NULL)) < 0 ||
	    (rc = get_u32(p, g, path, "within_ms", 1, SHMR_WITHIN_MS_MAX,
			  &rt->within_ms, NULL)) < 0 ||
	    (rc = get_u32(p, g, path, "interval_ms", 1,
			  rt->within_ms ? rt->within_ms : SHMR_WITHIN_MS_MAX,
			  &rt->interval_ms, NULL)) < 0)
		return rc;
	return parse_routees(p, g, path, rt);
}

/* An optional string member that is @p no (*dst = 0, the default) or
 * @p yes (*dst = 1). */
static int get_choice(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, const char *key,
		      const char *no, const char *yes, int *dst)
{
	config_setting_t *s;
	struct fpath f;
	const char *m;
	int rc = member(p, g, path, key, CONFIG_TYPE_STRING, &s);

	if (rc <= 0)
		return rc;
	m = config_setting_get_string(s);
	if (strcmp(m, yes) == 0) {
		*dst = 1;
		return 1;
	}
	if (strcmp(m, no) == 0)
		return 1;
	fp_key(&f, path, key);
	return fail(p, s, 0, f.s, "unknown choice \"%s\" (expected \"%s\" or \"%s\")",
		    m, no, yes);
}

/* An optional number member (integer or float) into @p dst. */
static int get_double(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, double *dst)
{
	config_setting_t *s = config_setting_get_member(grp, key);
	struct fpath f;
	int t;

	if (!s)
		return 0;
	t = config_setting_type(s);
	if (t == CONFIG_TYPE_FLOAT) {
		*dst = config_setting_get_float(s);
		return 1;
	}
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		*dst = (double)config_setting_get_int64(s);
		return 1;
	}
	fp_key(&f, path, key);
	return fail(p, s, 0, f.s, "expected a number, found %s",
		    type_word(t));
}

/* An optional integer member in [lo, hi] into @p dst (signed). */
static int get_int(struct pctx *p, const config_setting_t *grp,
		   const struct fpath *path, const char *key, long long lo,
		   long long hi, int *dst)
{
	config_setting_t *s;
	struct fpath f;
	long long v;
	int rc = member(p, grp, path, key, CONFIG_TYPE_INT, &s);

	if (rc <= 0)
		return rc;
	v = config_setting_get_int64(s);
	if (v < lo || v > hi) {
		fp_key(&f, path, key);
		return fail(p, s, 0, f.s, "%lld is out of range (%lld to %lld)",
			    v, lo, hi);
	}
	*dst = (int)v;
	return 1;
}

/*
 * pool = { size = N; program = ...; args = [...]; cpus = ...; }: N routes
 * "<router>:0" .. "<router>:N-1" of one program (a router with a pool has
 * no routes of its own in the file).
 */
static int parse_pool(struct pctx *p, const config_setting_t *g,
		      const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const keys[] = { "size", "program", "args",
					    "cpus", NULL };
	config_setting_t *s;
	struct fpath f, pf;
	uint32_t size = 0;
	unsigned bad = 0;
	int rc = member(p, g, path, "pool", CONFIG_TYPE_GROUP, &s);

	if (rc <= 0)
		return rc;
	fp_key(&pf, path, "pool");
	if (rt->behaviour == SHMR_BEH_TYPE || rt->behaviour == SHMR_BEH_HASH ||
	    rt->behaviour == SHMR_BEH_DSO)
		return fail(p, s, 0, pf.s,
			    "a pool needs a routing logic (behaviour = \"round-robin\", ...)");
	if (config_setting_get_member(g, "routes")) {
		fp_key(&f, path, "routes");
		return fail(p, config_setting_get_member(g, "routes"), 0, f.s,
			    "a router with a pool has no routes of its own (its routees are the pool's)");
	}
	if ((rc = check_keys(p, s, &pf, keys)) < 0)
		return rc;
	rc = get_u32(p, s, &pf, "size", 1, SHMR_MAX_ROUTES, &size, NULL);
	if (rc < 0)
		return rc;
	if (rc == 0 && !rt->dso[0])
		return missing(p, s, &pf, "size", "how many routees to start");
	rt->pool.line = config_setting_source_line(s);
	if ((rc = route_body(p, s, &pf, &rt->pool.tmpl)) < 0)
		return rc;
	if (size == 0) {
		/* The dso's pool_size, read by the control plane at start. */
		rt->pool.size_from_dso = 1;
		return 0;
	}
	if (shmr_config_pool_expand(rt, size, &bad) < 0)
		return fail(p, s, 0, pf.s,
			    "routee name \"%s:%u\" is too long (router names of a pool: at most %u characters)",
			    rt->name, bad, SHMR_NAME_MAX - 5);
	return 0;
}

int shmr_config_pool_expand(struct shmr_conf_router *rt, unsigned size,
			    unsigned *bad)
{
	char rname[SHMR_NAME_MAX];

	if (size == 0 || size > SHMR_MAX_ROUTES)
		return -EINVAL;
	/* A copy: GCC cannot tell that routes[i].name is not the router's
	 * name (-Wrestrict under the sanitizers). */
	memcpy(rname, rt->name, sizeof(rname));
	rname[sizeof(rname) - 1] = '\0';
	for (unsigned i = 0; i < size; i++) {
		struct shmr_conf_route *q = &rt->routes[i];
		int n;

		*q = rt->pool.tmpl;
		n = snprintf(q->name, sizeof(q->name), "%s:%u", rname, i);
		if (n < 0 || (size_t)n >= sizeof(q->name)) {
			if (bad)
				*bad = i;
			rt->nroutes = 0;
			return -ENAMETOOLONG;
		}
		q->line = rt->pool.line;
	}
	rt->pool.size = size;
	rt->nroutes = size;
	return 0;
}

/*
 * resizer = { ... } (Pekko's default resizer) or optimal_resizer = { ... }
 * (its optimal-size exploring one), for a pool; keys as Pekko's with '_'
 * for '-'.  Absent keys stay "unset" (INT_MIN, NaN, UINT64_MAX): the
 * control plane fills in Pekko's defaults and checks the ranges.
 */
void shmr_config_resizer_unset(struct shmr_conf_resizer *z, int kind,
			       int line)
{
	z->kind = kind;
	z->line = line;
	z->lower_bound = z->upper_bound = INT_MIN;
	z->pressure_threshold = z->messages_per_resize = INT_MIN;
	z->optimization_range = INT_MIN;
	z->rampup_rate = z->backoff_threshold = z->backoff_rate = NAN;
	z->chance_of_ramping_down_when_full = z->explore_step_size = NAN;
	z->chance_of_exploration = z->downsize_ratio = NAN;
	z->weight_of_latest_metric = NAN;
	z->action_interval_ms = UINT64_MAX;
	z->downsize_after_underutilized_for_ms = UINT64_MAX;
}

static int parse_resizer(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt)
{
	static const char *const dkeys[] = {
		"lower_bound", "upper_bound", "pressure_threshold",
		"rampup_rate", "backoff_threshold", "backoff_rate",
		"messages_per_resize", NULL
	};
	static const char *const okeys[] = {
		"lower_bound", "upper_bound",
		"chance_of_ramping_down_when_full", "action_interval_ms",
		"downsize_after_underutilized_for_ms", "explore_step_size",
		"chance_of_exploration", "downsize_ratio", "optimization_range",
		"weight_of_latest_metric", NULL
	};
	struct shmr_conf_resizer *z = &rt->resizer;
	config_setting_t *d, *o, *s, *v;
	struct fpath f;
	int rc;

	if ((rc = member(p, g, path, "resizer", CONFIG_TYPE_GROUP, &d)) < 0 ||
	    (rc = member(p, g, path, "optimal_resizer", CONFIG_TYPE_GROUP,
			 &o)) < 0)
		return rc;
	if (!d && !o)
		return 0;
	s = d ? d : o;
	fp_key(&f, path, o ? "optimal_resizer" : "resizer");
	if (d && o)
		return fail(p, o, 0, f.s, "a pool has one resizer: resizer or optimal_resizer");
	fp_key(&f, path, d ? "resizer" : "optimal_resizer");
	if (rt->pool.size == 0 && !rt->pool.size_from_dso)
		return fail(p, s, 0, f.s, "only a pool (pool = { ... }) has a resizer");
	if ((rc = check_keys(p, s, &f, d ? dkeys : okeys)) < 0)
		return rc;
	shmr_config_resizer_unset(z, d ? SHMR_RESIZER_DEFAULT
				       : SHMR_RESIZER_OPTIMAL,
				  config_setting_source_line(s));
	if ((rc = get_int(p, s, &f, "lower_bound", 0, SHMR_MAX_ROUTES,
			  &z->lower_bound)) < 0 ||
	    (rc = get_int(p, s, &f, "upper_bound", 0, SHMR_MAX_ROUTES,
			  &z->upper_bound)) < 0 ||
	    (rc = get_int(p, s, &f, "pressure_threshold", -1000000, 1000000,
			  &z->pressure_threshold)) < 0 ||
	    (rc = get_int(p, s, &f, "messages_per_resize", 1, 1000000000,
			  &z->messages_per_resize)) < 0 ||
	    (rc = get_int(p, s, &f, "optimization_range", 2, 1000000,
			  &z->optimization_range)) < 0 ||
	    (rc = get_double(p, s, &f, "rampup_rate", &z->rampup_rate)) < 0 ||
	    (rc = get_double(p, s, &f, "backoff_threshold",
			     &z->backoff_threshold)) < 0 ||
	    (rc = get_double(p, s, &f, "backoff_rate", &z->backoff_rate)) < 0 ||
	    (rc = get_double(p, s, &f, "chance_of_ramping_down_when_full",
			     &z->chance_of_ramping_down_when_full)) < 0 ||
	    (rc = get_double(p, s, &f, "explore_step_size",
			     &z->explore_step_size)) < 0 ||
	    (rc = get_double(p, s, &f, "chance_of_exploration",
			     &z->chance_of_exploration)) < 0 ||
	    (rc = get_double(p, s, &f, "downsize_ratio",
			     &z->downsize_ratio)) < 0 ||
	    (rc = get_double(p, s, &f, "weight_of_latest_metric",
			     &z->weight_of_latest_metric)) < 0)
		return rc;
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "downsize_after_underutilized_for_ms"
				    : "action_interval_ms";
		uint64_t *dst = i ? &z->downsize_after_underutilized_for_ms
				  : &z->action_interval_ms;

		if ((rc = member(p, s, &f, key, CONFIG_TYPE_INT, &v)) < 0)
			return rc;
		if (rc) {
			long long x = config_setting_get_int64(v);
			struct fpath kf;

			if (x < 1) {
				fp_key(&kf, &f, key);
				return fail(p, v, 0, kf.s,
					    "%lld is out of range (at least 1)",
					    x);
			}
			*dst = (uint64_t)x;
		}
	}
	return 0;
}

static int parse_router(struct pctx *p, const config_setting_t *g,
			const struct fpath *path, struct shmr_config *c)
{
	struct shmr_conf_router *rt = &c->routers[c->nrouters];
	config_setting_t *s, *lst;
	const char *beh;
	struct fpath f;
	int rc;

	rt->line = config_setting_source_line(g);
	if ((rc = check_keys(p, g, path, router_keys)) < 0)
		return rc;
	if ((rc = get_name(p, g, path, "name", "the router's name", rt->name,
			   &s)) < 0)
		return rc;
	for (unsigned i = 0; i < c->nrouters; i++)
		if (strcmp(c->routers[i].name, rt->name) == 0) {
			fp_key(&f, path, "name");
			return fail(p, s, 0, f.s,
				    "duplicate router name \"%s\" (first at line %d)",
				    rt->name, c->routers[i].line);
		}

	rc = member(p, g, path, "behaviour", CONFIG_TYPE_STRING, &s);
	if (rc < 0)
		return rc;
	if (rc == 0 && !config_setting_get_member(g, "dso"))
		return missing(p, g, path, "behaviour",
			       BEHAVIOURS ", or a dso that names one");
	beh = rc ? config_setting_get_string(s) : NULL;
	if (!beh) {
		rc = parse_from_dso(p, g, path, rt);
	} else if (strcmp(beh, "type") == 0) {
		rt->behaviour = SHMR_BEH_TYPE;
		rc = parse_type_map(p, g, path, rt);
	} else if (strcmp(beh, "hash") == 0) {
		rt->behaviour = SHMR_BEH_HASH;
		rc = parse_hash(p, g, path, rt);
	} else if (strcmp(beh, "dso") == 0) {
		rt->behaviour = SHMR_BEH_DSO;
		rc = parse_dso(p, g, path, rt);
	} else {
		rc = 1;
		for (unsigned i = 0; i < sizeof(logics) / sizeof(logics[0]);
		     i++)
			if (strcmp(beh, logics[i].name) == 0) {
				rt->behaviour = logics[i].behaviour;
				rc = parse_logic(p, g, path, rt, beh);
				break;
			}
		if (rc == 1) {
			fp_key(&f, path, "behaviour");
			rc = fail(p, s, 0, f.s,
				  "unknown behaviour \"%s\" (expected "
				  BEHAVIOURS ")",
				  beh);
		}
	}
	if (rc < 0)
		return rc;
	/* Calls by type, sends by the behaviour (every built-in one; a dso
	 * routes calls itself, and refused call_types above). */
	if (rt->behaviour != SHMR_BEH_DSO) {
		rc = type_map(p, g, path, "call_types", rt->call_types,
			      &rt->ncall_types);
		if (rc < 0)
			return rc;
	}

	/* The admin path's handlers: a shared object of their own, else the
	 * behaviour's when it is one (it may have none: the defaults). */
	rc = get_object(p, g, path, "handlers", rt->handlers);
	if (rc < 0)
		return rc;
	if (rc == 0 && rt->behaviour == SHMR_BEH_DSO)
		memcpy(rt->handlers, rt->dso, sizeof(rt->handlers));
	rc = get_str(p, g, path, "handlers_arg", rt->handlers_arg,
		     sizeof(rt->handlers_arg), NULL);
	if (rc < 0)
		return rc;
	if (rc == 0 && rt->behaviour == SHMR_BEH_DSO &&
	    strcmp(rt->handlers, rt->dso) == 0)
		memcpy(rt->handlers_arg, rt->dso_arg,
		       sizeof(rt->handlers_arg));

	if ((rc = get_choice(p, g, path, "on_kill", "restart", "stop",
			     &rt->on_kill_stop)) < 0 ||
	    (rc = parse_pool(p, g, path, rt)) < 0 ||
	    (rc = parse_resizer(p, g, path, rt)) < 0 ||
	    (rc = get_choice(p, g, path, "mailbox_full", "backpressure",
			     "fail", &rt->fail_when_full)) < 0)
		return rc;

	/* Pekko's BalancingPool has no group variant: the dataplane hands
	 * work to routees it knows the inboxes of, a pool's. */
	if (rt->behaviour == SHMR_BEH_BALANCING && rt->pool.size == 0 &&
	    !rt->pool.size_from_dso) {
		fp_key(&f, path, "pool");
		return fail(p, g, 0, f.s,
			    "behaviour \"balancing\" needs a pool (pool = { size = N; program = \"...\"; }): there is no balancing group");
	}

	/* No routes is a "free" router: every name resolves through the
	 * registry. */
	rc = member(p, g, path, "routes", CONFIG_TYPE_LIST, &lst);
	if (rc <= 0)
		return rc;
	fp_key(&f, path, "routes");
	if ((rc = group_list(p, lst, &f, SHMR_MAX_ROUTES, "routes")) < 0)
		return rc;
	for (int i = 0; i < config_setting_length(lst); i++) {
		struct fpath e;

		fp_index(&e, &f, (unsigned)i);
		rc = parse_route(p, config_setting_get_elem(lst, i), &e, rt);
		if (rc < 0)
			return rc;
		rt->nroutes++;
	}
	return 0;
}

static const char *const top_keys[] = {
	"domain", "run_dir", "slot_size", "lane_size", "lcores", "poll_mode",
	"dataplane_cpus", "socket_group", "stop_grace_ms", "restart_backoff_ms",
	"restart_backoff_max_ms", "routers", NULL
};

/* A group name for the control socket: like a user name, no ':'. */
static int check_group(struct pctx *p, const config_setting_t *s,
		       const char *g)
{
	for (const char *c = g; *c; c++)
		if (!name_char(*c) || *c == ':' || (c == g && *c == '-'))
			return fail(p, s, 0, "socket_group",
				    "group name \"%s\" has a character outside [A-Za-z0-9_.-] (or starts with '-')",
				    g);
	return 0;
}

static int parse_geometry(struct pctx *p, const config_setting_t *root,
			  struct shmr_config *c)
{
	static const char *const fields[] = {
		"slot_size", "lane_size", "lcores", "poll_mode"
	};
	const struct shmr_geometry def = {
		.slot_size = SHMR_SLOT_DEFAULT,
		.lane_size = SHMR_LANE_DEFAULT,
		.nlcores = 1,
		.poll_mode = SHMR_POLL_ADAPTIVE,
	};
	config_setting_t *where[4] = { NULL };
	const char *why = NULL;
	config_setting_t *s;
	int rc;

	if ((rc = get_u32(p, root, NULL, "slot_size", 0, UINT32_MAX,
			  &c->slot_size, &where[0])) < 0 ||
	    (rc = get_u32(p, root, NULL, "lane_size", 0, UINT32_MAX,
			  &c->lane_size, &where[1])) < 0 ||
	    (rc = get_u32(p, root, NULL, "lcores", 0, UINT32_MAX, &c->lcores,
			  &where[2])) < 0)
		return rc;
	rc = member(p, root, NULL, "poll_mode", CONFIG_TYPE_STRING, &s);
	if (rc < 0)
		return rc;
	where[3] = s;
	if (rc) {
		const char *m = config_setting_get_string(s);

		if (strcmp(m, "adaptive") == 0)
			c->poll_mode = SHMR_POLL_ADAPTIVE;
		else if (strcmp(m, "busy") == 0)
			c->poll_mode = SHMR_POLL_BUSY;
		else
			return fail(p, s, 0, "poll_mode",
				    "unknown poll mode \"%s\" (expected \"adaptive\" or \"busy\")",
				    m);
	}

	/* One field at a time against the defaults, so the message names
	 * the field (and line) that the geometry check refuses. */
	for (unsigned i = 0; i < 4; i++) {
		struct shmr_geometry g = def;

		switch (i) {
		case 0: g.slot_size = c->slot_size; break;
		case 1: g.lane_size = c->lane_size; break;
		case 2: g.nlcores = c->lcores; break;
		default: g.poll_mode = c->poll_mode; break;
		}
		if (shmr_geometry_check(&g, &why) < 0)
			return fail(p, where[i], 0, fields[i], "%s",
				    why ? why : "not a usable value");
	}
	return 0;
}

static int parse_root(struct pctx *p, const config_setting_t *root,
		      struct shmr_config *c)
{
	config_setting_t *s, *dom = NULL, *run = NULL, *lst;
	struct fpath f;
	int rc;

	if ((rc = check_keys(p, root, NULL, top_keys)) < 0)
		return rc;

	rc = member(p, root, NULL, "domain", CONFIG_TYPE_STRING, &dom);
	if (rc < 0)
		return rc;
	if (rc && (rc = copy_name(p, dom, "domain",
				  config_setting_get_string(dom),
				  c->domain)) < 0)
		return rc;

	rc = get_str(p, root, NULL, "run_dir", c->run_dir, sizeof(c->run_dir),
		     &run);
	if (rc < 0)
		return rc;
	if (rc) {
		if (c->run_dir[0] != '/')
			return fail(p, run, 0, "run_dir",
				    "\"%s\" is not an absolute path",
				    c->run_dir);
	}
	/* The control socket "<run_dir>/<domain>.sock" must fit sun_path. */
	if (strlen(c->run_dir) + 1 + strlen(c->domain) + 5 >= SUN_PATH_MAX)
		return fail(p, run ? run : dom, 0, run ? "run_dir" : "domain",
			    "socket path \"%s/%s.sock\" is longer than %u characters",
			    c->run_dir, c->domain, SUN_PATH_MAX - 1);

	if ((rc = parse_geometry(p, root, c)) < 0)
		return rc;
	if ((rc = get_cpus(p, root, NULL, "dataplane_cpus",
			   c->dataplane_cpus)) < 0)
		return rc;
	rc = get_str(p, root, NULL, "socket_group", c->socket_group,
		     sizeof(c->socket_group), &s);
	if (rc < 0)
		return rc;
	if (rc && (rc = check_group(p, s, c->socket_group)) < 0)
		return rc;
	if ((rc = get_u32(p, root, NULL, "stop_grace_ms", 0, STOP_GRACE_MAX,
			  &c->stop_grace_ms, NULL)) < 0)
		return rc;
	if ((rc = get_u32(p, root, NULL, "restart_backoff_ms", 0,
			  BACKOFF_MAX, &c->restart_backoff_ms, NULL)) < 0 ||
	    (rc = get_u32(p, root, NULL, "restart_backoff_max_ms", 0,
			  BACKOFF_MAX, &c->restart_backoff_max_ms, &s)) < 0)
		return rc;
	if (c->restart_backoff_max_ms < c->restart_backoff_ms)
		return fail(p, s ? s : root, 0, "restart_backoff_max_ms",
			    "%u is below restart_backoff_ms (%u)",
			    c->restart_backoff_max_ms, c->restart_backoff_ms);

	rc = member(p, root, NULL, "routers", CONFIG_TYPE_LIST, &lst);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return missing(p, root, NULL, "routers",
			       "at least one router: routers = ( { name = ...; behaviour = ...; ... } )");
	fp_key(&f, NULL, "routers");
	if ((rc = group_list(p, lst, &f, SHMR_MAX_ROUTERS, "routers")) < 0)
		return rc;
	if (config_setting_length(lst) == 0)
		return fail(p, lst, 0, "routers", "at least one router is needed");
	for (int i = 0; i < config_setting_length(lst); i++) {
		struct fpath e;

		fp_index(&e, &f, (unsigned)i);
		rc = parse_router(p, config_setting_get_elem(lst, i), &e, c);
		if (rc < 0)
			return rc;
		c->nrouters++;
	}
	return 0;
}

static void set_defaults(struct shmr_config *c, const char *source)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->source, sizeof(c->source), "%s", source);
	strcpy(c->domain, "shmr");
	snprintf(c->run_dir, sizeof(c->run_dir), "%s", SHMR_RUN_DIR_DEFAULT);
	c->slot_size = SHMR_SLOT_DEFAULT;
	c->lane_size = SHMR_LANE_DEFAULT;
	c->lcores = 1;
	c->poll_mode = SHMR_POLL_ADAPTIVE;
	c->stop_grace_ms = 2000;
	c->restart_backoff_max_ms = 5000;
}

static int parse_text(struct pctx *p, const char *text, size_t len,
		      struct shmr_config *out)
{
	config_t cfg;
	int rc;

	set_defaults(out, p->source);
	/* libconfig reads up to the first NUL; anything after it would be
	 * silently ignored. */
	if (memchr(text, '\0', len)) {
		int line = 1;

		for (const char *c = text; *c; c++)
			line += *c == '\n';
		return fail(p, NULL, line, "syntax", "NUL byte in the text");
	}
	config_init(&cfg);
	if (p->dir)
		config_set_include_dir(&cfg, p->dir);
	if (!config_read_string(&cfg, text)) {
		char fbuf[PATH_MAX + 64];
		const char *file = file_name(p, config_error_file(&cfg), fbuf,
					     sizeof(fbuf));
		int line = config_error_line(&cfg);

		if (p->err && p->errlen) {
			snprintf(p->err, p->errlen, "%s:%d: syntax: %s", file,
				 line > 0 ? line : 1, config_error_text(&cfg));
			one_line(p->err);
		}
		rc = -EINVAL;
	} else {
		rc = parse_root(p, config_root_setting(&cfg), out);
	}
	config_destroy(&cfg);
	if (rc < 0)
		set_defaults(out, p->source);
	return rc;
}

int shmr_config_load_string(const char *text, const char *source,
			    struct shmr_config *out, char *err, size_t errlen)
{
	struct pctx p = {
		.source = source ? source : "<string>",
		.err = err,
		.errlen = errlen,
	};

	if (err && errlen)
		err[0] = '\0';
	if (!text || !out)
		return -EINVAL;
	return parse_text(&p, text, strlen(text), out);
}

static int cannot_read(struct pctx *p, int e)
{
	char buf[128];

	if (p->err && p->errlen) {
		snprintf(p->err, p->errlen, "%s: cannot read: %s", p->source,
			 strerror_r(e, buf, sizeof(buf)));
		one_line(p->err);
	}
	return -e;
}

int shmr_config_load_file(const char *path, struct shmr_config *out,
			  char *err, size_t errlen)
{
	struct pctx p = { .source = path, .err = err, .errlen = errlen };
	char dir[PATH_MAX], *text = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int fd, rc;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cannot_read(&p, errno);
	if (fstat(fd, &st) < 0) {
		rc = cannot_read(&p, errno);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = cannot_read(&p, EISDIR);
		goto out;
	}
	/* Read to EOF, growing: the file may be a pipe with no size. */
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *t;

			if (cap > CONF_FILE_MAX) {
				rc = cannot_read(&p, EFBIG);
				goto out;
			}
			cap = cap ? cap * 2 : 4096;
			t = realloc(text, cap + 1);
			if (!t) {
				rc = cannot_read(&p, ENOMEM);
				goto out;
			}
			text = t;
		}
		n = read(fd, text + len, cap - len);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = cannot_read(&p, errno);
			goto out;
		}
		len += (size_t)n;
	}
	text[len] = '\0';

	/* The file's own directory, absolute: relative dso paths and
	 * @include resolve against it, wherever the caller runs from. */
	if (realpath(path, dir))
		p.dir = dirname(dir);
	rc = parse_text(&p, text, len, out);
out:
	free(text);
	close(fd);
	return rc;
}
