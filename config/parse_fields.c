/*
 * The schema's readers: one setting of one type (a name, a string, a
 * number in a range, a cpu list, a list of strings or of groups, a shared
 * object's path), each checked as it is read, and the one error line
 * "file:line: field: what is wrong" that every failure writes (see the
 * essay at the top of parse.c).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include <shmr/cpulist.h>

#include "config_internal.h"

/* Highest cpu number a list may name: the last a cpu_set_t holds, since
 * the dataplane pins its lcores with one (shmr-dataplane's --cpus). */
#define CPU_MAX 1023u
static_assert(CPU_MAX == CPU_SETSIZE - 1,
	      "a cpu list names only cpus a cpu_set_t holds");
static_assert(CPU_MAX < SHMR_CPULIST_LIMIT,
	      "within the cpu-list parser's limit");

static int above_max(unsigned lo, unsigned hi, void *arg)
{
	(void)lo;
	(void)arg;
	return hi > CPU_MAX ? -ERANGE : 0;
}

/*
 * A cpu list: "" (any), or comma-separated "N" / "N-M" with N <= M,
 * numbers in decimal up to CPU_MAX.  Returns NULL or what is wrong.  A
 * range's numbers are checked before its order, so "2000-1" names a cpu
 * above CPU_MAX rather than a reversed range.
 */
const char *shmr_conf_cpulist_why(const char *s, char *buf, size_t cap)
{
	struct shmr_cpulist_range bad = { 0, 0 };
	int rc = shmr_cpulist_parse(s, above_max, NULL, &bad);

	if (rc == 0)
		return NULL;
	if (rc == -ERANGE || (rc == -EDOM && bad.lo > CPU_MAX)) {
		snprintf(buf, cap, "cpu list \"%s\" names a cpu above %u", s,
			 CPU_MAX);
		return buf;
	}
	if (rc == -EDOM) {
		snprintf(buf, cap, "cpu list \"%s\" has a reversed range %u-%u",
			 s, bad.lo, bad.hi);
		return buf;
	}
	snprintf(buf, cap,
		 "bad cpu list \"%s\" (expected N, N-M, or a comma-separated list of them, e.g. \"0,2-3\")",
		 s);
	return buf;
}

/* A path too long for the buffer (an absurd unknown key) ends in "...". */
static void fp_fix(struct fpath *out, int n)
{
	if (n < 0 || (size_t)n >= sizeof(out->s))
		strcpy(out->s + sizeof(out->s) - 4, "...");
}

void shmr_conf_fp_key(struct fpath *out, const struct fpath *parent,
		      const char *key)
{
	int n;

	if (parent && parent->s[0])
		n = snprintf(out->s, sizeof(out->s), "%s.%s", parent->s, key);
	else
		n = snprintf(out->s, sizeof(out->s), "%s", key);
	fp_fix(out, n);
}

void shmr_conf_fp_index(struct fpath *out, const struct fpath *parent,
			unsigned i)
{
	fp_fix(out, snprintf(out->s, sizeof(out->s), "%s.[%u]", parent->s, i));
}

/* A value quoted in a message may hold "\n": the error stays one line. */
void shmr_conf_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/*
 * The file a setting or error came from: an @include'd file names itself
 * (libconfig records the name as written, relative to the including
 * file's directory), the text being parsed is p->source.
 */
const char *shmr_conf_file_name(struct pctx *p, const char *file, char *buf,
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

unsigned shmr_conf_file_of(struct pctx *p, const config_setting_t *s)
{
	const char *file = config_setting_source_file(s);
	struct shmr_config *c = p->out;
	char fbuf[PATH_MAX + 64], **t;

	if (!file || !c)
		return 0;
	file = shmr_conf_file_name(p, file, fbuf, sizeof(fbuf));
	for (unsigned k = 0; k < c->nfiles; k++)
		if (strcmp(c->files[k], file) == 0)
			return k + 1;
	t = realloc(c->files, (c->nfiles + 1) * sizeof(*t));
	if (!t)
		return 0;
	c->files = t;
	if (!(t[c->nfiles] = strdup(file)))
		return 0;
	return ++c->nfiles;
}

/*
 * Write "file:line: field: message" into the caller's buffer and return
 * -EINVAL.  The file is the one the setting came from (an @include'd file
 * names itself), else the source being parsed.  @p s may be NULL, then
 * @p line is used; line 0 (libconfig's root) is reported as line 1.
 */
__attribute__((format(printf, 5, 6)))
int shmr_conf_fail(struct pctx *p, const config_setting_t *s, int line,
		   const char *field, const char *fmt, ...)
{
	const char *file = NULL;
	char msg[1024], fbuf[PATH_MAX + 64];
	va_list ap;

	if (s) {
		file = config_setting_source_file(s);
		line = config_setting_source_line(s);
	}
	file = shmr_conf_file_name(p, file, fbuf, sizeof(fbuf));
	if (line <= 0)
		line = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen) {
		snprintf(p->err, p->errlen, "%s:%d: %s: %s", file, line, field,
			 msg);
		shmr_conf_one_line(p->err);
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
int shmr_conf_check_keys(struct pctx *p, const config_setting_t *grp,
			 const struct fpath *path, const char *const *known)
{
	int n = config_setting_length(grp);

	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(grp, i);
		const char *name = config_setting_name(m);
		char list[768] = "";
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
			shmr_conf_fp_key(&f, path, name);
			return shmr_conf_fail(p, m, 0, f.s,
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
int shmr_conf_member(struct pctx *p, const config_setting_t *grp,
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
	shmr_conf_fp_key(&f, path, key);
	return shmr_conf_fail(p, s, 0, f.s, "expected %s, found %s", type_word(want),
			      type_word(t));
}

int shmr_conf_missing(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key,
		      const char *what)
{
	struct fpath f;

	shmr_conf_fp_key(&f, path, key);
	return shmr_conf_fail(p, grp, 0, f.s, "required setting is missing (%s)", what);
}

/* Copy a string into a fixed field, or say that it is too long. */
int shmr_conf_copy_str(struct pctx *p, const config_setting_t *s,
		       const char *field, const char *val, char *dst,
		       size_t cap)
{
	size_t n = strlen(val);

	if (n >= cap)
		return shmr_conf_fail(p, s, 0, field,
				      "too long: %zu characters (at most %zu)", n,
				      cap - 1);
	memcpy(dst, val, n + 1);
	return 0;
}

bool shmr_conf_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
	       c == '-';
}

/* A router, route, registry or domain name: [A-Za-z0-9_.:-]{1,31}. */
int shmr_conf_copy_name(struct pctx *p, const config_setting_t *s,
			const char *field, const char *val,
			char dst[SHMR_NAME_MAX])
{
	size_t n = strlen(val);

	if (n == 0)
		return shmr_conf_fail(p, s, 0, field, "empty name");
	if (n >= SHMR_NAME_MAX)
		return shmr_conf_fail(p, s, 0, field,
				      "name \"%s\" is too long: %zu characters (at most %u)",
				      val, n, SHMR_NAME_MAX - 1);
	for (size_t i = 0; i < n; i++)
		if (!shmr_conf_name_char(val[i]))
			return shmr_conf_fail(p, s, 0, field,
					      "name \"%s\" has a character outside [A-Za-z0-9_.:-]",
					      val);
	memcpy(dst, val, n + 1);
	memset(dst + n, 0, SHMR_NAME_MAX - n);
	return 0;
}

/* Required name member. */
int shmr_conf_get_name(struct pctx *p, const config_setting_t *grp,
		       const struct fpath *path, const char *key,
		       const char *what, char dst[SHMR_NAME_MAX],
		       config_setting_t **where)
{
	config_setting_t *s;
	struct fpath f;
	int rc = shmr_conf_member(p, grp, path, key, CONFIG_TYPE_STRING, &s);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, grp, path, key, what);
	if (where)
		*where = s;
	shmr_conf_fp_key(&f, path, key);
	return shmr_conf_copy_name(p, s, f.s, config_setting_get_string(s),
				   dst);
}

/* Optional string member copied into @p dst (left alone when absent). */
int shmr_conf_get_str(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, char *dst,
		      size_t cap, config_setting_t **where)
{
	config_setting_t *s;
	struct fpath f;
	int rc = shmr_conf_member(p, grp, path, key, CONFIG_TYPE_STRING, &s);

	if (where)
		*where = s;
	if (rc <= 0)
		return rc;
	shmr_conf_fp_key(&f, path, key);
	rc = shmr_conf_copy_str(p, s, f.s, config_setting_get_string(s), dst,
				cap);
	return rc < 0 ? rc : 1;
}

/* Optional integer member in [lo, hi] (left alone when absent). */
int shmr_conf_get_u32(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, uint32_t lo,
		      uint32_t hi, uint32_t *dst, config_setting_t **where)
{
	config_setting_t *s;
	struct fpath f;
	long long v;
	int rc = shmr_conf_member(p, grp, path, key, CONFIG_TYPE_INT, &s);

	if (where)
		*where = s;
	if (rc <= 0)
		return rc;
	v = config_setting_get_int64(s);
	if (v < (long long)lo || v > (long long)hi) {
		shmr_conf_fp_key(&f, path, key);
		return shmr_conf_fail(p, s, 0, f.s,
				      "%lld is out of range (%" PRIu32 " to %" PRIu32 ")",
				      v, lo, hi);
	}
	*dst = (uint32_t)v;
	return 1;
}

int shmr_conf_get_cpus(struct pctx *p, const config_setting_t *grp,
		       const struct fpath *path, const char *key,
		       char dst[SHMR_CONF_CPUS_MAX])
{
	config_setting_t *s;
	char why[256];
	const char *w;
	struct fpath f;
	int rc = shmr_conf_get_str(p, grp, path, key, dst, SHMR_CONF_CPUS_MAX,
				   &s);

	if (rc <= 0)
		return rc;
	w = shmr_conf_cpulist_why(dst, why, sizeof(why));
	if (w) {
		shmr_conf_fp_key(&f, path, key);
		return shmr_conf_fail(p, s, 0, f.s, "%s", w);
	}
	return 0;
}

/* An array or list of strings, every element checked by @p each. */
int shmr_conf_str_list(struct pctx *p, const config_setting_t *lst,
		       const struct fpath *path, unsigned max, const char *what,
		       int (*each)(struct pctx *p, const config_setting_t *s,
				   const char *field, const char *val,
				   unsigned i, void *arg),
		       void *arg)
{
	unsigned n = (unsigned)config_setting_length(lst);

	for (unsigned i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(lst, i);
		struct fpath f;
		int rc;

		shmr_conf_fp_index(&f, path, i);
		if (i >= max)
			return shmr_conf_fail(p, e, 0, f.s, "too many %s (at most %u)",
					      what, max);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return shmr_conf_fail(
				p, e, 0, f.s, "expected a string, found %s",
				type_word(config_setting_type(e)));
		rc = each(p, e, f.s, config_setting_get_string(e), i, arg);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int shmr_conf_list_most(struct pctx *p, const config_setting_t *lst,
			const struct fpath *path, unsigned most,
			const char *what, const char *limit)
{
	struct fpath e;

	if ((unsigned)config_setting_length(lst) <= most)
		return 0;
	shmr_conf_fp_index(&e, path, most);
	return shmr_conf_fail(p, config_setting_get_elem(lst, most), 0, e.s,
			      "%d %s, more than %s (%u)",
			      config_setting_length(lst), what, limit, most);
}

/* A list ( { ... }, ... ) whose every element is a group. */
int shmr_conf_group_list(struct pctx *p, const config_setting_t *lst,
			 const struct fpath *path, unsigned max,
			 const char *what)
{
	unsigned n = (unsigned)config_setting_length(lst);

	if (config_setting_type(lst) != CONFIG_TYPE_LIST)
		return shmr_conf_fail(p, lst, 0, path->s,
				      "expected a list of groups ( { ... }, ... ), found %s",
				      type_word(config_setting_type(lst)));
	for (unsigned i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(lst, i);
		struct fpath f;

		shmr_conf_fp_index(&f, path, i);
		if (config_setting_type(e) != CONFIG_TYPE_GROUP)
			return shmr_conf_fail(
				p, e, 0, f.s,
				"expected a group { ... }, found %s",
				type_word(config_setting_type(e)));
		if (i >= max)
			return shmr_conf_fail(p, e, 0, f.s, "too many %s (at most %u)",
					      what, max);
	}
	return 0;
}

/*
 * Optional shared-object path @p key into @p dst (SHMR_DSO_PATH_MAX):
 * relative to the file that names it, so a configuration and its objects
 * can move together (a string has no directory).  Returns 1 when set, 0
 * when absent, or the error.
 */
int shmr_conf_get_object(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, const char *key, char *dst)
{
	char raw[SHMR_DSO_PATH_MAX];
	config_setting_t *s;
	struct fpath f;
	int rc = shmr_conf_get_str(p, g, path, key, raw, sizeof(raw), &s);

	if (rc <= 0)
		return rc;
	shmr_conf_fp_key(&f, path, key);
	if (!raw[0])
		return shmr_conf_fail(p, s, 0, f.s, "empty path");
	if (raw[0] != '/' && p->dir) {
		int n = snprintf(dst, SHMR_DSO_PATH_MAX, "%s/%s", p->dir, raw);

		if (n < 0 || (size_t)n >= SHMR_DSO_PATH_MAX)
			return shmr_conf_fail(p, s, 0, f.s,
					      "path \"%s/%s\" is too long (at most %u characters)",
					      p->dir, raw,
					      SHMR_DSO_PATH_MAX - 1);
	} else {
		memcpy(dst, raw, sizeof(raw));
	}
	return 1;
}

/* An optional string member that is @p no (*dst = 0, the default) or
 * @p yes (*dst = 1). */
int shmr_conf_get_choice(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, const char *key,
			 const char *no, const char *yes, int *dst)
{
	config_setting_t *s;
	struct fpath f;
	const char *m;
	int rc = shmr_conf_member(p, g, path, key, CONFIG_TYPE_STRING, &s);

	if (rc <= 0)
		return rc;
	m = config_setting_get_string(s);
	if (strcmp(m, yes) == 0) {
		*dst = 1;
		return 1;
	}
	if (strcmp(m, no) == 0)
		return 1;
	shmr_conf_fp_key(&f, path, key);
	return shmr_conf_fail(p, s, 0, f.s, "unknown choice \"%s\" (expected \"%s\" or \"%s\")",
			      m, no, yes);
}

/* An optional number member (integer or float) into @p dst. */
int shmr_conf_get_double(struct pctx *p, const config_setting_t *grp,
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
	shmr_conf_fp_key(&f, path, key);
	return shmr_conf_fail(p, s, 0, f.s, "expected a number, found %s",
			      type_word(t));
}

/* An optional integer member in [lo, hi] into @p dst (signed). */
int shmr_conf_get_int(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, long long lo,
		      long long hi, int *dst)
{
	config_setting_t *s;
	struct fpath f;
	long long v;
	int rc = shmr_conf_member(p, grp, path, key, CONFIG_TYPE_INT, &s);

	if (rc <= 0)
		return rc;
	v = config_setting_get_int64(s);
	if (v < lo || v > hi) {
		shmr_conf_fp_key(&f, path, key);
		return shmr_conf_fail(p, s, 0, f.s, "%lld is out of range (%lld to %lld)",
				      v, lo, hi);
	}
	*dst = (int)v;
	return 1;
}
