/*
 * What crosses the configuration loader's files, and not the part
 * (config/ only; not for direct inclusion elsewhere: shmr_config.h is the
 * part's interface).
 *
 *   parse.c          the file, its top level, the domain and geometry
 *   parse_routers.c  one router: behaviour, type maps, routes, logics
 *   parse_route.c    one route's settings (a route, a pool's template)
 *   parse_pools.c    a router's pool and its resizer
 *   parse_chash.c    a consistent-hash router's key and ring settings
 *   parse_serve.c    eal_args, log_level, metrics_listen
 *   parse_fields.c   readers of one setting each, the rule on cpu lists,
 *                    and the error line
 *   validate.c       rules on a whole configuration; the one entry point
 *                    shmr_config_load()
 *
 * Calls go down that list's dependencies only: validate.c calls the
 * parser and dso_defaults.c; parse.c calls parse_routers.c, which calls
 * parse_route.c and parse_pools.c; everything calls parse_fields.c.
 *   resizer_conf.c   a pool resizer's parameters: defaults and ranges
 *   dso_defaults.c   what a router's behaviour object fills in
 *
 * Every reader below returns 1 when the setting was read, 0 when it is
 * absent (where absence is allowed), or -EINVAL after writing the one
 * error line into pctx's buffer (shmr_conf_fail()).
 */
#ifndef SHMR_CONFIG_INTERNAL_H
#define SHMR_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "shmr_config.h"

/* Everything one parse needs to report an error. */
struct pctx {
	const char *source; /* the file name as the caller gave it */
	const char *dir;    /* absolute directory of the file, or NULL */
	char *err;
	size_t errlen;
	/* A type map's most entries: the configuration's max_types, once
	 * the top level is read (before the routers). */
	uint32_t max_types;
	/* A router's most routes (and routees, hash entries): the
	 * configuration's max_routes, once the top level is read. */
	uint32_t max_routes;
	/* The configuration being filled: its files[] (shmr_conf_file_of()). */
	struct shmr_config *out;
};

/* A field path such as "routers.[0].routes.[1]". */
struct fpath {
	char s[160];
};

/* ---- parse_fields.c: field paths and the error line ------------------- */

/* @p parent's path, then ".key" (or "key" at the top). */
void shmr_conf_fp_key(struct fpath *out, const struct fpath *parent,
		      const char *key);
/* @p parent's path, then ".[i]". */
void shmr_conf_fp_index(struct fpath *out, const struct fpath *parent,
			unsigned i);
/* Control characters of a quoted value as '?': an error stays one line. */
void shmr_conf_one_line(char *s);
/* The file a setting or error came from (@p buf holds a joined path). */
const char *shmr_conf_file_name(struct pctx *p, const char *file, char *buf,
				size_t cap);
/* The `file` index of where @p s came from (0: the source parsed), for
 * an error named after the parse; 0 too when the name cannot be kept
 * (out of memory: only a later error's file name is at stake). */
unsigned shmr_conf_file_of(struct pctx *p, const config_setting_t *s);
/* Write "file:line: field: message" into p's buffer; returns -EINVAL.
 * Context: any; @p s NULL: @p line is used. */
__attribute__((format(printf, 5, 6)))
int shmr_conf_fail(struct pctx *p, const config_setting_t *s, int line,
		   const char *field, const char *fmt, ...);

/* ---- parse_fields.c: one setting each ---------------------------------- */

/* Every member of @p grp is one of @p known (NULL-terminated), or fail. */
int shmr_conf_check_keys(struct pctx *p, const config_setting_t *grp,
			 const struct fpath *path, const char *const *known);
/* Member @p key of libconfig type @p want: 1 (*out set), 0, -EINVAL. */
int shmr_conf_member(struct pctx *p, const config_setting_t *grp,
		     const struct fpath *path, const char *key, int want,
		     config_setting_t **out);
/* "required setting is missing (@p what)"; returns -EINVAL. */
int shmr_conf_missing(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key,
		      const char *what);
int shmr_conf_copy_str(struct pctx *p, const config_setting_t *s,
		       const char *field, const char *val, char *dst,
		       size_t cap);
/* A character of a name: [A-Za-z0-9_.:-]. */
bool shmr_conf_name_char(char c);
/* A router, route, registry or domain name: [A-Za-z0-9_.:-]{1,31}. */
int shmr_conf_copy_name(struct pctx *p, const config_setting_t *s,
			const char *field, const char *val,
			char dst[SHMR_NAME_MAX]);
int shmr_conf_get_name(struct pctx *p, const config_setting_t *grp,
		       const struct fpath *path, const char *key,
		       const char *what, char dst[SHMR_NAME_MAX],
		       config_setting_t **where);
int shmr_conf_get_str(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, char *dst,
		      size_t cap, config_setting_t **where);
int shmr_conf_get_u32(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, uint32_t lo,
		      uint32_t hi, uint32_t *dst, config_setting_t **where);
int shmr_conf_get_int(struct pctx *p, const config_setting_t *grp,
		      const struct fpath *path, const char *key, long long lo,
		      long long hi, int *dst);
int shmr_conf_get_double(struct pctx *p, const config_setting_t *grp,
			 const struct fpath *path, const char *key,
			 double *dst);
int shmr_conf_get_choice(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, const char *key,
			 const char *no, const char *yes, int *dst);
/* A cpu list (shmr_conf_cpulist_why()). */
int shmr_conf_get_cpus(struct pctx *p, const config_setting_t *grp,
		       const struct fpath *path, const char *key,
		       char dst[SHMR_CONF_CPUS_MAX]);
/* A shared object's path, relative to the file that names it. */
int shmr_conf_get_object(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, const char *key, char *dst);
/* An array or list of strings, each checked by @p each. */
int shmr_conf_str_list(struct pctx *p, const config_setting_t *lst,
		       const struct fpath *path, unsigned max, const char *what,
		       int (*each)(struct pctx *p, const config_setting_t *s,
				   const char *field, const char *val,
				   unsigned i, void *arg),
		       void *arg);
/* List @p lst (at @p path) of more than @p most entries, the limit that
 * key @p limit sets: -EINVAL naming the first entry past it with its line
 * ("N WHAT, more than LIMIT (MOST)"); else 0. */
int shmr_conf_list_most(struct pctx *p, const config_setting_t *lst,
			const struct fpath *path, unsigned most,
			const char *what, const char *limit);
/* A list ( { ... }, ... ) of at most @p max groups. */
int shmr_conf_group_list(struct pctx *p, const config_setting_t *lst,
			 const struct fpath *path, unsigned max,
			 const char *what);

/* ---- parse_serve.c ------------------------------------------------------ */

/* eal_args, log_level and metrics_listen of the top level. */
int shmr_conf_serve_parse(struct pctx *p, const config_setting_t *root,
			  struct shmr_config *c);

/* ---- parse_routers.c, parse_route.c, parse_pools.c --------------------- */

/* Router @p g into c->routers[c->nrouters] (the caller counts it). */
int shmr_conf_router_parse(struct pctx *p, const config_setting_t *g,
			   const struct fpath *path, struct shmr_config *c);
/* What a route and a pool's routees share: program, args, cpus. */
int shmr_conf_route_body(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_route *r);
/* parse_chash.c: a consistent-hash router's hash_key, hash_mode and
 * node_prefix (a key range within what @p slot_size carries). */
int shmr_conf_chash_parse(struct pctx *p, const config_setting_t *g,
			  const struct fpath *path, uint32_t slot_size,
			  struct shmr_conf_router *rt);
/* Those settings' names, NULL-terminated (refused by other behaviours). */
const char *const *shmr_conf_chash_keys(void);
/* "pool" of router @p g: its routees (expanded into rt->routes). */
int shmr_conf_pool_parse(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt);
/* "resizer" or "optimal_resizer" of a pool, keys unset by default. */
/* After the pool and its resizer: a size below the resizer's lower_bound
 * raised to it (Pekko's pool starts within its bounds); size 0 refused
 * without a resizer. */
int shmr_conf_pool_start(struct pctx *p, const config_setting_t *g,
			 const struct fpath *path, struct shmr_conf_router *rt);
int shmr_conf_resizer_parse(struct pctx *p, const config_setting_t *g,
			    const struct fpath *path,
			    struct shmr_conf_router *rt);
/* "supervisor" of router @p g into rt->supervisor: one of its four names,
 * and (checked once the routes are known) only on a router that starts
 * routees of its own (a pool, or routes). */
int shmr_conf_supervisor_parse(struct pctx *p, const config_setting_t *g,
			       const struct fpath *path,
			       struct shmr_conf_router *rt);
int shmr_conf_supervisor_check(struct pctx *p, const config_setting_t *g,
			       const struct fpath *path,
			       const struct shmr_conf_router *rt);

/* ---- parse_fields.c: the rule on cpu lists ------------------------------ */

/*
 * A cpu list as the configuration allows it: shmr's one grammar
 * (<shmr/cpulist.h>), and no cpu above what a cpu_set_t holds (the
 * dataplane's lcores are pinned with one).  Returns NULL, or what is
 * wrong, written into @p buf.  Context: any; pure.
 */
const char *shmr_conf_cpulist_why(const char *s, char *buf, size_t cap);

#endif
