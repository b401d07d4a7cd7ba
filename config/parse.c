/*
 * The configuration loader: libconfig does the syntax, config/ does the
 * schema (this file: the file, its top level, the domain and geometry;
 * config_internal.h maps the others).  It walks the parsed tree once, top
 * to bottom, and stops at the first thing that is wrong, so an operator
 * always gets exactly one line that names the file, the line and the
 * field:
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
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include <shmr/geometry.h>
#include <shmr/layout.h>
#include <shmr/proto.h>

#include "config_internal.h"

#define CONF_FILE_MAX (1u << 20) /* a configuration is text, not data */
#define STOP_GRACE_MAX 3600000u  /* one hour */
#define BACKOFF_MAX 3600000u     /* one hour */
#define SUN_PATH_MAX 108u        /* sizeof(struct sockaddr_un.sun_path) */
#define CONNS_MAX 256u           /* SHMR_CTL_MAX_CONNS (control/server.h) */
#define IDLE_MIN 100u            /* ms: below it a slow client is cut off */
#define IDLE_MAX 3600000u        /* one hour */

static const char *const top_keys[] = {
	"domain", "run_dir", "slot_size", "lane_size", "lcores", "poll_mode",
	"max_endpoints", "max_names", "max_types", "max_routes",
	"max_routers",	"sojourn", "dataplane_cpus", "socket_group", "admin_group", "programs",
	"max_connections_per_user", "max_endpoints_per_user",
	"idle_timeout_ms", "stop_grace_ms",
	"restart_backoff_ms", "restart_backoff_max_ms", "routers",
	"eal_args", "log_level", "metrics_listen", "arena", NULL
};

/* "64K:1024": a size (bytes, or with K, M or G) and a count. */
static int arena_class(struct pctx *p, const config_setting_t *s,
		       const char *field, const char *val, unsigned i,
		       void *arg)
{
	struct shmr_config *c = arg;
	unsigned long long size, count;
	const char *why = NULL;
	unsigned shift = 0;
	char *end;

	errno = 0;
	size = strtoull(val, &end, 10);
	if (end == val || errno)
		goto bad;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end != ':' || end[1] < '0' || end[1] > '9')
		goto bad;
	count = strtoull(end + 1, &end, 10);
	if (*end || errno || count > UINT32_MAX)
		goto bad;
	/* Checked before the shift, which would wrap a size of 2^44 M
	 * (and more) into a small one that the geometry accepts. */
	if (size > (UINT32_MAX >> shift))
		return shmr_conf_fail(p, s, 0, field,
				      "\"%s\": a class's size must be a power of "
				      "two from 64 bytes to 64M",
				      val);
	size <<= shift;
	c->arena.cls[i].size = (uint32_t)size;
	c->arena.cls[i].count = (uint32_t)count;
	c->arena.nclasses = i + 1;
	if (shmr_arena_geo_check(&c->arena, &why) < 0)
		return shmr_conf_fail(p, s, 0, field, "\"%s\": %s", val,
				      why ? why + strlen("arena: ") : "not usable");
	return 0;
bad:
	return shmr_conf_fail(p, s, 0, field,
			      "\"%s\" is not SIZE:COUNT (such as \"64K:1024\")",
			      val);
}

/* arena = { classes = [ "64K:1024", "1M:64" ]; } */
static int parse_arena(struct pctx *p, const config_setting_t *root,
		       struct shmr_config *c)
{
	static const char *const keys[] = { "classes", NULL };
	config_setting_t *grp, *lst;
	struct fpath f, fl;
	int rc;

	rc = shmr_conf_member(p, root, NULL, "arena", CONFIG_TYPE_GROUP, &grp);
	if (rc <= 0)
		return rc;
	shmr_conf_fp_key(&f, NULL, "arena");
	if ((rc = shmr_conf_check_keys(p, grp, &f, keys)) < 0)
		return rc;
	rc = shmr_conf_member(p, grp, &f, "classes", CONFIG_TYPE_ARRAY, &lst);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, grp, &f, "classes",
					 "the size classes: classes = [ \"64K:1024\", ... ]");
	shmr_conf_fp_key(&fl, &f, "classes");
	{
		char fbuf[PATH_MAX + 64];

		snprintf(c->arena_where, sizeof(c->arena_where), "%s:%d: %s",
			 shmr_conf_file_name(p, config_setting_source_file(lst),
					     fbuf, sizeof(fbuf)),
			 config_setting_source_line(lst), fl.s);
	}
	return shmr_conf_str_list(p, lst, &fl, SHMR_ARENA_MAX_CLASSES,
				  "arena classes", arena_class, c);
}

/* A group name for the control socket (@p key: socket_group,
 * admin_group): like a user name, no ':'. */
static int check_group(struct pctx *p, const config_setting_t *s,
		       const char *key, const char *g)
{
	for (const char *c = g; *c; c++)
		if (!shmr_conf_name_char(*c) || *c == ':' ||
		    (c == g && *c == '-'))
			return shmr_conf_fail(p, s, 0, key,
					      "group name \"%s\" has a character outside [A-Za-z0-9_.-] (or starts with '-')",
					      g);
	return 0;
}

/* programs = ( "/abs/path", ... ): one entry, absolute and unique. */
static int program_elem(struct pctx *p, const config_setting_t *s,
			const char *field, const char *val, unsigned i,
			void *arg)
{
	struct shmr_config *c = arg;
	int rc;

	if (val[0] != '/')
		return shmr_conf_fail(p, s, 0, field,
				      "\"%s\" is not an absolute path", val);
	for (unsigned k = 0; k < i; k++)
		if (strcmp(c->programs[k], val) == 0)
			return shmr_conf_fail(p, s, 0, field,
					      "\"%s\" is listed twice", val);
	rc = shmr_conf_copy_str(p, s, field, val, c->programs[i],
				sizeof(c->programs[i]));
	if (rc == 0)
		c->nprograms = i + 1;
	return rc;
}

/* socket_group, admin_group, programs and the connection limits: who may
 * use the control socket, and what it may start. */
static int parse_access(struct pctx *p, const config_setting_t *root,
			struct shmr_config *c)
{
	config_setting_t *s;
	struct fpath f;
	int rc;

	rc = shmr_conf_get_str(p, root, NULL, "socket_group", c->socket_group,
			       sizeof(c->socket_group), &s);
	if (rc < 0)
		return rc;
	if (rc && (rc = check_group(p, s, "socket_group",
				    c->socket_group)) < 0)
		return rc;
	rc = shmr_conf_get_str(p, root, NULL, "admin_group", c->admin_group,
			       sizeof(c->admin_group), &s);
	if (rc < 0)
		return rc;
	if (rc && (rc = check_group(p, s, "admin_group", c->admin_group)) < 0)
		return rc;
	if (c->admin_group[0] && !c->socket_group[0])
		return shmr_conf_fail(p, s, 0, "admin_group",
				      "needs socket_group (without it the socket is mode 0600: only its owner can connect)");
	rc = shmr_conf_member(p, root, NULL, "programs", CONFIG_TYPE_ARRAY, &s);
	if (rc < 0)
		return rc;
	if (rc) {
		shmr_conf_fp_key(&f, NULL, "programs");
		rc = shmr_conf_str_list(p, s, &f, SHMR_CONF_PROGRAMS_MAX,
					"programs", program_elem, c);
		if (rc < 0)
			return rc;
	}
	if ((rc = shmr_conf_get_u32(p, root, NULL, "max_connections_per_user",
				    1, CONNS_MAX, &c->max_connections_per_user,
				    NULL)) < 0)
		return rc;
	if ((rc = shmr_conf_get_u32(p, root, NULL, "max_endpoints_per_user", 1,
				    SHMR_MAX_ENDPOINTS,
				    &c->max_endpoints_per_user, NULL)) < 0)
		return rc;
	return shmr_conf_get_u32(p, root, NULL, "idle_timeout_ms", IDLE_MIN,
				 IDLE_MAX, &c->idle_timeout_ms, NULL);
}

static int parse_geometry(struct pctx *p, const config_setting_t *root,
			  struct shmr_config *c)
{
	static const char *const fields[] = {
		"slot_size", "lane_size", "lcores", "poll_mode",
		"max_endpoints", "max_names", "max_types"
	};
	const struct shmr_geometry def = {
		.slot_size = SHMR_SLOT_DEFAULT,
		.lane_size = SHMR_LANE_DEFAULT,
		.nlcores = 1,
		.poll_mode = SHMR_POLL_ADAPTIVE,
	};
	config_setting_t *where[7] = { NULL };
	const char *why = NULL;
	config_setting_t *s;
	int rc;

	if ((rc = shmr_conf_get_u32(p, root, NULL, "slot_size", 0, UINT32_MAX,
				    &c->slot_size, &where[0])) < 0 ||
	    (rc = shmr_conf_get_u32(p, root, NULL, "lane_size", 0, UINT32_MAX,
				    &c->lane_size, &where[1])) < 0 ||
	    (rc = shmr_conf_get_u32(p, root, NULL, "lcores", 0, UINT32_MAX, &c->lcores,
				    &where[2])) < 0 ||
	    (rc = shmr_conf_get_u32(p, root, NULL, "max_endpoints", 0,
				    UINT32_MAX, &c->max_endpoints,
				    &where[4])) < 0 ||
	    (rc = shmr_conf_get_u32(p, root, NULL, "max_names", 0, UINT32_MAX,
				    &c->max_names, &where[5])) < 0 ||
	    (rc = shmr_conf_get_u32(p, root, NULL, "max_types", 0, UINT32_MAX,
				    &c->max_types, &where[6])) < 0)
		return rc;
	rc = shmr_conf_member(p, root, NULL, "poll_mode", CONFIG_TYPE_STRING, &s);
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
			return shmr_conf_fail(p, s, 0, "poll_mode",
					      "unknown poll mode \"%s\" (expected \"adaptive\" or \"busy\")",
					      m);
	}

	/* What sizes the domain most, for an error about its memory. */
	for (unsigned i = 0; i < 4; i++) {
		static const unsigned order[] = { 4, 1, 0, 2 };
		const config_setting_t *w = where[order[i]];
		char fbuf[PATH_MAX + 64];

		if (!w)
			continue;
		snprintf(c->size_where, sizeof(c->size_where), "%s:%d: %s",
			 shmr_conf_file_name(p, config_setting_source_file(w),
					     fbuf, sizeof(fbuf)),
			 config_setting_source_line(w), fields[order[i]]);
		break;
	}
	/* One field at a time against the defaults, so the message names
	 * the field (and line) that the geometry check refuses. */
	for (unsigned i = 0; i < 7; i++) {
		struct shmr_geometry g = def;

		switch (i) {
		case 0: g.slot_size = c->slot_size; break;
		case 1: g.lane_size = c->lane_size; break;
		case 2: g.nlcores = c->lcores; break;
		case 3: g.poll_mode = c->poll_mode; break;
		case 5:
			g.max_names = c->max_names ? c->max_names : UINT32_MAX;
			break;
		case 6:
			g.max_types = c->max_types ? c->max_types : UINT32_MAX;
			break;
		default:
			/* 0 is no count (the geometry's 0 is its default) */
			g.max_endpoints = c->max_endpoints ? c->max_endpoints
							   : UINT32_MAX;
			break;
		}
		if (shmr_geometry_check(&g, &why) < 0)
			return shmr_conf_fail(p, where[i], 0, fields[i], "%s",
					      why ? why : "not a usable value");
	}
	return 0;
}

static int parse_root(struct pctx *p, const config_setting_t *root,
		      struct shmr_config *c)
{
	config_setting_t *s, *dom = NULL, *run = NULL, *bo = NULL, *lst;
	struct fpath f;
	int rc;

	if ((rc = shmr_conf_check_keys(p, root, NULL, top_keys)) < 0)
		return rc;

	rc = shmr_conf_member(p, root, NULL, "domain", CONFIG_TYPE_STRING, &dom);
	if (rc < 0)
		return rc;
	if (rc && (rc = shmr_conf_copy_name(p, dom, "domain",
					    config_setting_get_string(dom),
					    c->domain)) < 0)
		return rc;

	rc = shmr_conf_get_str(p, root, NULL, "run_dir", c->run_dir, sizeof(c->run_dir),
			       &run);
	if (rc < 0)
		return rc;
	if (rc) {
		if (c->run_dir[0] != '/')
			return shmr_conf_fail(p, run, 0, "run_dir",
					      "\"%s\" is not an absolute path",
					      c->run_dir);
	}
	/* The control socket "<run_dir>/<domain>.sock" must fit sun_path. */
	if (strlen(c->run_dir) + 1 + strlen(c->domain) + 5 >= SUN_PATH_MAX)
		return shmr_conf_fail(p, run ? run : dom, 0, run ? "run_dir" : "domain",
				      "socket path \"%s/%s.sock\" is longer than %u characters",
				      c->run_dir, c->domain, SUN_PATH_MAX - 1);

	if ((rc = parse_geometry(p, root, c)) < 0 ||
	    (rc = parse_arena(p, root, c)) < 0)
		return rc;
	/* Every router's type maps are held to it (parse_routers.c). */
	p->max_types = shmr_config_types(c);
	/* Routes per router: what a router may hold (validate.c checks the
	 * routers against it); the domain has room for SHMR_MAX_ROUTES. */
	if ((rc = shmr_conf_get_u32(p, root, NULL, "max_routes",
				    SHMR_MIN_ROUTES, SHMR_MAX_ROUTES,
				    &c->max_routes, NULL)) < 0)
		return rc;
	p->max_routes = shmr_config_routes(c);
	/* Routers of the domain: the list below is held to it. */
	if ((rc = shmr_conf_get_u32(p, root, NULL, "max_routers",
				    SHMR_MIN_ROUTERS, SHMR_MAX_ROUTERS,
				    &c->max_routers, NULL)) < 0)
		return rc;
	if ((rc = shmr_conf_member(p, root, NULL, "sojourn", CONFIG_TYPE_BOOL,
				   &s)) < 0)
		return rc;
	if (rc)
		c->sojourn = config_setting_get_bool(s) != 0;
	if ((rc = shmr_conf_get_cpus(p, root, NULL, "dataplane_cpus",
				     c->dataplane_cpus)) < 0)
		return rc;
	/* For the check against the host's cpus, made after the parse. */
	if ((s = config_setting_get_member(root, "dataplane_cpus"))) {
		c->dataplane_cpus_line = config_setting_source_line(s);
		c->dataplane_cpus_file = shmr_conf_file_of(p, s);
	}
	if ((rc = parse_access(p, root, c)) < 0)
		return rc;
	if ((rc = shmr_conf_serve_parse(p, root, c)) < 0)
		return rc;
	if ((rc = shmr_conf_get_u32(p, root, NULL, "stop_grace_ms", 0, STOP_GRACE_MAX,
				    &c->stop_grace_ms, NULL)) < 0)
		return rc;
	if ((rc = shmr_conf_get_u32(p, root, NULL, "restart_backoff_ms", 0,
				    BACKOFF_MAX, &c->restart_backoff_ms,
				    &bo)) < 0 ||
	    (rc = shmr_conf_get_u32(p, root, NULL, "restart_backoff_max_ms", 0,
				    BACKOFF_MAX, &c->restart_backoff_max_ms,
				    &s)) < 0)
		return rc;
	/* The setting the file gives is named: a maximum left out is the
	 * default's, which the file says nothing of. */
	if (c->restart_backoff_max_ms < c->restart_backoff_ms && s)
		return shmr_conf_fail(
			p, s, 0, "restart_backoff_max_ms",
			"%u is below restart_backoff_ms (%u)",
			c->restart_backoff_max_ms, c->restart_backoff_ms);
	if (c->restart_backoff_max_ms < c->restart_backoff_ms)
		return shmr_conf_fail(
			p, bo, 0, "restart_backoff_ms",
			"%u is above restart_backoff_max_ms (%u, the default; "
			"set it too)",
			c->restart_backoff_ms, c->restart_backoff_max_ms);

	rc = shmr_conf_member(p, root, NULL, "routers", CONFIG_TYPE_LIST, &lst);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return shmr_conf_missing(p, root, NULL, "routers",
					 "at least one router: routers = ( { name = ...; behaviour = ...; ... } )");
	shmr_conf_fp_key(&f, NULL, "routers");
	if ((rc = shmr_conf_group_list(p, lst, &f, UINT_MAX, "routers")) < 0 ||
	    (rc = shmr_conf_list_most(p, lst, &f, shmr_config_routers(c),
				      "routers", "max_routers")) < 0)
		return rc;
	if (config_setting_length(lst) == 0)
		return shmr_conf_fail(p, lst, 0, "routers", "at least one router is needed");
	if (shmr_config_routers_alloc(c, (unsigned)config_setting_length(lst)) < 0)
		return shmr_conf_fail(p, lst, 0, "routers", "out of memory");
	for (int i = 0; i < config_setting_length(lst); i++) {
		struct fpath e;

		shmr_conf_fp_index(&e, &f, (unsigned)i);
		rc = shmr_conf_router_parse(p, config_setting_get_elem(lst, i),
					    &e, c);
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
	c->max_endpoints = SHMR_ENDPOINTS_DEFAULT;
	c->max_names = SHMR_NAMES_DEFAULT;
	c->max_types = SHMR_TYPES_DEFAULT;
	c->max_routes = SHMR_ROUTES_DEFAULT;
	c->max_routers = SHMR_ROUTERS_DEFAULT;
	c->poll_mode = SHMR_POLL_ADAPTIVE;
	c->sojourn = 1;
	c->stop_grace_ms = 2000;
	c->restart_backoff_max_ms = 5000;
	c->max_connections_per_user = 32;
	c->max_endpoints_per_user = 32;
	c->idle_timeout_ms = 10000;
}

static int parse_text(struct pctx *p, const char *text, size_t len,
		      struct shmr_config *out)
{
	config_t cfg;
	int rc;

	/* All zero, or loaded before: what it held goes. */
	shmr_config_free(out);
	set_defaults(out, p->source);
	p->out = out;
	/* libconfig reads up to the first NUL; anything after it would be
	 * silently ignored. */
	if (memchr(text, '\0', len)) {
		int line = 1;

		for (const char *c = text; *c; c++)
			line += *c == '\n';
		return shmr_conf_fail(p, NULL, line, "syntax", "NUL byte in the text");
	}
	config_init(&cfg);
	if (p->dir)
		config_set_include_dir(&cfg, p->dir);
	if (!config_read_string(&cfg, text)) {
		char fbuf[PATH_MAX + 64];
		const char *file = shmr_conf_file_name(
			p, config_error_file(&cfg), fbuf, sizeof(fbuf));
		int line = config_error_line(&cfg);

		if (p->err && p->errlen) {
			snprintf(p->err, p->errlen, "%s:%d: syntax: %s", file,
				 line > 0 ? line : 1, config_error_text(&cfg));
			shmr_conf_one_line(p->err);
		}
		rc = -EINVAL;
	} else {
		rc = parse_root(p, config_root_setting(&cfg), out);
	}
	config_destroy(&cfg);
	if (rc < 0) {
		shmr_config_free(out);
		set_defaults(out, p->source);
	}
	return rc;
}

int shmr_config_routers_alloc(struct shmr_config *cfg, unsigned n)
{
	free(cfg->routers);
	cfg->nrouters = 0;
	cfg->routers = calloc(n ? n : 1, sizeof(*cfg->routers));
	return cfg->routers ? 0 : -ENOMEM;
}

void shmr_config_free(struct shmr_config *cfg)
{
	free(cfg->routers);
	cfg->routers = NULL;
	cfg->nrouters = 0;
	for (unsigned k = 0; k < cfg->nfiles; k++)
		free(cfg->files[k]);
	free(cfg->files);
	cfg->files = NULL;
	cfg->nfiles = 0;
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
		shmr_conf_one_line(p->err);
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
	shmr_config_free(out); /* all zero, or loaded before */
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
