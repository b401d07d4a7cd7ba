/*
 * The appliance's configuration: parsed from a libconfig file into plain
 * structs that the control plane acts on.  Parsing validates everything it
 * can without touching the system (names, numbers, references between
 * routers and routes); every error names file:line and the field.
 */
#ifndef SHMR_CONFIG_H
#define SHMR_CONFIG_H

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include <shmr/geometry.h>
#include <shmr/layout.h>

#define SHMR_CONF_PATH_MAX 256
#define SHMR_CONF_ARGS_MAX 16
#define SHMR_CONF_ARG_MAX 128
#define SHMR_CONF_CPUS_MAX 64
#define SHMR_CONF_PROGRAMS_MAX 32 /* entries of the top-level "programs" */
#define SHMR_CONF_EAL_ARGS_MAX 16 /* entries of "eal_args" */
#define SHMR_CONF_LISTEN_MAX 64   /* "metrics_listen": ADDRESS:PORT */

/* Log levels (log_level, --log-level): 0 is "not set" (info). */
enum shmr_conf_log_level {
	SHMR_CONF_LOG_ERROR = 1,
	SHMR_CONF_LOG_WARNING = 2,
	SHMR_CONF_LOG_INFO = 3,
	SHMR_CONF_LOG_DEBUG = 4,
};

/* Pekko's defaults for a scatter-gather or tail-chopping router that leaves
 * its timing out: within 5 s, the next routee tried after 10 ms. */
#define SHMR_WITHIN_MS_DEFAULT 5000u
#define SHMR_INTERVAL_MS_DEFAULT 10u

/* Why a balancing pool has no resizer, the one line --check prints after
 * "file:line: routers.[i].resizer: ". */
#define SHMR_CONF_BALANCING_NO_RESIZER                                         \
	"a balancing pool has no resizer: its routees share one mailbox, so "  \
	"no routee's own pressure can be measured (Pekko's BalancingPool "     \
	"turns its resizer off); give the pool a fixed size"

/* interval_ms left out: SHMR_INTERVAL_MS_DEFAULT, or @p within_ms when
 * that is shorter (interval_ms never exceeds within_ms).
 * Context: any.  Concurrency: pure.  Errors: none. */
static inline uint32_t shmr_config_interval_default(uint32_t within_ms)
{
	return within_ms < SHMR_INTERVAL_MS_DEFAULT ? within_ms
						    : SHMR_INTERVAL_MS_DEFAULT;
}

#include "conf_router.h"

struct shmr_config {
	char source[SHMR_CONF_PATH_MAX]; /* file name, or "<default>" */
	/* The @include'd files that settings came from, named as the
	 * parser's errors name them: a router's, route's, pool's or
	 * resizer's `file` is 0 for source, k for files[k - 1], so that an
	 * error found after the parse (validate.c, dso_defaults.c) names
	 * the file its line is in.  Allocated by the parser, freed by
	 * shmr_config_free(); shmr_config_file() reads it. */
	unsigned nfiles;
	char **files;
	char domain[SHMR_NAME_MAX];      /* default "shmr" */
	char run_dir[SHMR_CONF_PATH_MAX];/* default SHMR_RUN_DIR_DEFAULT */
	uint32_t slot_size;              /* default SHMR_SLOT_DEFAULT */
	uint32_t lane_size;              /* default SHMR_LANE_DEFAULT */
	uint32_t lcores;                 /* routing lcores, default 1 */
	/* endpoint slots of the domain (routers, routes' inboxes, clients,
	 * the admin endpoint), default SHMR_ENDPOINTS_DEFAULT */
	uint32_t max_endpoints;
	/* registry entries (routers' names and the names clients
	 * register), default SHMR_NAMES_DEFAULT */
	uint32_t max_names;
	/* entries of one router's type map (types, call_types: each),
	 * default SHMR_TYPES_DEFAULT; the maps below have room for the most
	 * a configuration may ask (SHMR_MAX_TYPES) */
	uint32_t max_types;
	/* routes per router, and names in one router's hash or routees
	 * list, default SHMR_ROUTES_DEFAULT; the arrays below have room for
	 * the most a configuration may ask (SHMR_MAX_ROUTES) */
	uint32_t max_routes;
	/* routers of the domain, default SHMR_ROUTERS_DEFAULT (at most
	 * SHMR_MAX_ROUTERS): the domain's spec and the daemons' tables have
	 * room for this many */
	uint32_t max_routers;
	/* "FILE:LINE: KEY" of the setting that sizes the domain most
	 * (max_endpoints, else lane_size, slot_size, lcores) where the file
	 * sets one, else "": what a domain too large for the host names. */
	char size_where[SHMR_CONF_PATH_MAX + 48];
	/* "FILE:LINE: arena.classes" where the file gives an arena, else "":
	 * named in size_where's place when the arena is the larger part of
	 * the domain (control/memfit.c weighs the two with the layout's
	 * plan, which the parser has no copy of). */
	char arena_where[SHMR_CONF_PATH_MAX + 48];
	uint32_t poll_mode;              /* default SHMR_POLL_ADAPTIVE */
	/* Senders stamp messages and receivers record their sojourn
	 * (`sojourn = false` turns it off: shmr_domain_hdr.tsc_hz 0);
	 * default 1. */
	int sojourn;
	/* arena = { classes = [ "64K:1024", ... ] }: the payload arena's
	 * size classes (none by default) */
	struct shmr_arena_geo arena;
	char dataplane_cpus[SHMR_CONF_CPUS_MAX]; /* "" = picked by the control plane */
	/* where the file sets dataplane_cpus (shmr_config_file()), for
	 * shmr_config_cpus_fit()'s error; line 0 when it does not */
	int dataplane_cpus_line;
	unsigned dataplane_cpus_file;
	char socket_group[SHMR_NAME_MAX];        /* "" = mode 0600 */
	/* Roles on the control socket (control/server.c): members of
	 * admin_group may change the appliance (add, remove, stop, ...) as
	 * the owner does; socket_group's other members only use and read
	 * it.  "" = the owner and root only.  Needs socket_group. */
	char admin_group[SHMR_NAME_MAX];
	/* What ADD and REPLACE may start, beyond the routes' own programs:
	 * absolute paths, compared canonically (realpath). */
	unsigned nprograms;
	char programs[SHMR_CONF_PROGRAMS_MAX][SHMR_CONF_PATH_MAX];
	/* Concurrent control connections of one uid other than the owner's
	 * and root's (default 32, of SHMR_CTL_MAX_CONNS = 256). */
	uint32_t max_connections_per_user;
	/* Client endpoints, and registered names, that one such uid may hold
	 * (default 32, of the domain's max_endpoints and max_names). */
	uint32_t max_endpoints_per_user;
	/* A connection that has not attached is closed when it has not
	 * completed a request for this long (default 10000). */
	uint32_t idle_timeout_ms;
	uint32_t stop_grace_ms;          /* SIGTERM -> SIGKILL, default 2000 */
	/* A worker that keeps failing (it exits within a second of its start,
	 * or cannot be started) waits before each further restart: first
	 * restart_backoff_ms, doubling up to restart_backoff_max_ms.  0 (the
	 * default) is no backoff: restart at once, as the reference does. */
	uint32_t restart_backoff_ms;
	uint32_t restart_backoff_max_ms; /* default 5000 */
	/* routers[nrouters], allocated (by the parser: as many as the file
	 * lists; by hand: shmr_config_routers_alloc()); freed by
	 * shmr_config_free() */
	unsigned nrouters;
	struct shmr_conf_router *routers;
	/* "eal_args": EAL options for the dataplane, after its own
	 * (config/parse_serve.c says which are refused). */
	unsigned neal_args;
	char eal_args[SHMR_CONF_EAL_ARGS_MAX][SHMR_CONF_ARG_MAX];
	int log_level; /* "log_level": enum shmr_conf_log_level; 0 unset */
	/* "metrics_listen": ADDRESS:PORT of the Prometheus listener; ""
	 * (the default): no listener */
	char metrics_listen[SHMR_CONF_LISTEN_MAX];
};

/* shmr_conf_router.supervisor: Pekko's supervision directives, per router. */
enum shmr_conf_supervisor {
	SHMR_SUPERVISOR_RESTART = 0, /* the routee alone, into its slot */
	SHMR_SUPERVISOR_STOP,        /* the routee leaves the pool */
	SHMR_SUPERVISOR_ALL_FOR_ONE, /* every routee of the router restarts */
	SHMR_SUPERVISOR_ESCALATE,    /* the router fails (as on_kill says) */
};

/**
 * The configuration's spelling of supervisor @p s ("restart", "stop",
 * "all-for-one", "escalate"); "?" for a value out of range.
 * Context: any; static storage.
 */
const char *shmr_config_supervisor_name(uint32_t s);

/**
 * A log level's name: "error", "warning" (or "warn"), "info", "debug".
 * Returns: enum shmr_conf_log_level, or -EINVAL.
 * Context: any.
 */
int shmr_conf_level_parse(const char *s);

/**
 * "ADDRESS:PORT" (numeric IPv4) or "[ADDRESS]:PORT" (IPv6), port 1 to
 * 65535, into @p host (numeric, no brackets) and @p port.
 * Returns: 0, or -EINVAL.
 * Context: any.
 */
int shmr_conf_listen_parse(const char *s, char host[64], unsigned *port);

/* shmr_conf_router.behaviour of a router whose dso decides it. */
#define SHMR_CONF_BEH_FROM_DSO 0u

/**
 * The behaviour kind (enum shmr_behaviour_kind) of routing logic @p name
 * as the configuration spells it ("round-robin", ..., "balancing"), or 0
 * when @p name is not a routing logic ("type", "hash" and "dso" are not).
 * Context: any.
 */
uint32_t shmr_config_logic_kind(const char *name);

/**
 * Make @p rt's routes the @p size routees of its pool: "<router>:0" ..
 * "<router>:size-1", each a copy of rt->pool.tmpl at rt->pool.line; sets
 * rt->pool.size and rt->nroutes.  The parser uses it for a pool's size,
 * the control plane for a size the router's dso gives.
 * Context: any.
 * Errors: -EINVAL (@p size is 0 or above SHMR_MAX_ROUTES),
 *         -ENAMETOOLONG (a routee name does not fit; *bad, when not NULL,
 *         is its index); @p rt is then left with no pool routes.
 */
int shmr_config_pool_expand(struct shmr_conf_router *rt, unsigned size,
			    unsigned *bad);

/**
 * A resizer of @p kind (enum shmr_conf_resizer_kind) declared at @p line
 * with every key unset, so that each takes Pekko's default: what the
 * parser does before it reads the keys given, and what dso_defaults.c
 * does for a resizer a router's dso names.  Context: any.
 */
void shmr_config_resizer_unset(struct shmr_conf_resizer *z, int kind,
			       int line);

/* Room for any one-line error of the functions below: the file's path
 * and the longest message (an unknown setting's lists every setting the
 * group may hold).  A smaller buffer gets the line cut short. */
#define SHMR_CONFIG_ERR_MAX (PATH_MAX + 1024)

/**
 * Parse the file at @p path into @p out (fully overwritten: @p out is
 * all zero, or loaded before, and what it held is freed first).
 *
 * Ownership: on success @p out holds its routers: shmr_config_free().
 *            On error it holds nothing.
 * Errors: -ENOENT/-EACCES (cannot read), -EINVAL (syntax or a bad value).
 *         On error @p err holds one line "file:line: field: what is wrong".
 */
int shmr_config_load_file(const char *path, struct shmr_config *out,
			  char *err, size_t errlen);

/** As shmr_config_load_file(), from text; @p source names it in errors. */
int shmr_config_load_string(const char *text, const char *source,
			    struct shmr_config *out, char *err, size_t errlen);

/**
 * The configuration shmr-control runs with, in one call: parse the file at
 * @p path (NULL: the embedded default, source "<default>"), fill in what
 * it leaves to its routers' behaviour objects (every object a router
 * names is dlopen()ed, a behaviour object read, never initialised), then
 * shmr_config_validate() the whole.
 *
 * Context: the caller's thread; opens the file and behaviour objects.
 * Errors:  as shmr_config_load_file(), and -ENOENT/-EPROTO/-EINVAL from a
 *          behaviour object, or -EINVAL from shmr_config_validate().  On
 *          error @p err holds the one line the daemon prints.
 * Ownership: as shmr_config_load_file().
 */
int shmr_config_load(const char *path, struct shmr_config *out, char *err,
		     size_t errlen);

/**
 * Check what can only be checked of the whole (parsed, defaults filled in):
 * its geometry, its domain name, every cpu list, every pool's resizer
 * (the ranges of resizer_conf.h) and that the routers and routes fit the
 * domain's endpoint slots.
 *
 * Context: any; pure.
 * Errors:  -EINVAL with one line in @p err ("source: field: what").
 */
/* The domain geometry @p cfg asks for.
 * Context: any.  Concurrency: pure.  Errors: none (not checked). */
/** The domain's endpoint slots: @p cfg's max_endpoints, its default
 *  for 0 (a configuration built by hand).  Context: any; pure. */
static inline uint32_t shmr_config_endpoints(const struct shmr_config *cfg)
{
	return cfg->max_endpoints ? cfg->max_endpoints : SHMR_ENDPOINTS_DEFAULT;
}

/** The domain's registry entries: @p cfg's max_names, its default for 0.
 *  Context: any; pure. */
static inline uint32_t shmr_config_names(const struct shmr_config *cfg)
{
	return cfg->max_names ? cfg->max_names : SHMR_NAMES_DEFAULT;
}

/** One router's type-map entries: @p cfg's max_types, its default for 0.
 *  Context: any; pure. */
static inline uint32_t shmr_config_types(const struct shmr_config *cfg)
{
	return cfg->max_types ? cfg->max_types : SHMR_TYPES_DEFAULT;
}

/** Routes per router: @p cfg's max_routes, its default for 0.
 *  Context: any; pure. */
static inline uint32_t shmr_config_routes(const struct shmr_config *cfg)
{
	return cfg->max_routes ? cfg->max_routes : SHMR_ROUTES_DEFAULT;
}

/** Routers of the domain: @p cfg's max_routers, its default for 0.
 *  Context: any; pure. */
static inline uint32_t shmr_config_routers(const struct shmr_config *cfg)
{
	return cfg->max_routers ? cfg->max_routers : SHMR_ROUTERS_DEFAULT;
}

/** The file that a setting's `file` index (0: @p cfg's source) names,
 *  for its `line`.  Context: any; pure. */
static inline const char *shmr_config_file(const struct shmr_config *cfg,
					   unsigned file)
{
	return file && file <= cfg->nfiles ? cfg->files[file - 1]
					   : cfg->source;
}

/**
 * Give @p cfg room for @p n routers (zeroed; nrouters 0), for a
 * configuration built by hand; what it had is freed.
 * Ownership: shmr_config_free() frees it.
 * Errors:    -ENOMEM (@p cfg left with none).
 */
int shmr_config_routers_alloc(struct shmr_config *cfg, unsigned n);

/**
 * Free what a loaded (or shmr_config_routers_alloc()ed) @p cfg holds: its
 * routers (nrouters 0 after) and its files' names.  The struct itself is the caller's.
 * Context: any; @p cfg may be all zero.
 */
void shmr_config_free(struct shmr_config *cfg);

/** The most routes (and routees) a router of @p behaviour may have under
 *  @p max_routes (shmr_config_routes()): max_routes, and at most
 *  SHMR_COLLECT_ROUTEES_MAX for a scatter-gather or tail-chopping
 *  router.  Context: any; pure. */
static inline uint32_t shmr_config_routes_max(uint32_t max_routes,
					      uint32_t behaviour)
{
	uint32_t n = max_routes;

	if ((behaviour == SHMR_BEH_SCATTER_GATHER ||
	     behaviour == SHMR_BEH_TAIL_CHOPPING) &&
	    n > SHMR_COLLECT_ROUTEES_MAX)
		n = SHMR_COLLECT_ROUTEES_MAX;
	return n;
}

void shmr_config_geometry(const struct shmr_config *cfg,
			  struct shmr_geometry *g);

int shmr_config_validate(const struct shmr_config *cfg, char *err,
			 size_t errlen);

/**
 * Every cpu that @p cfg's lists name (dataplane_cpus, each route's and
 * pool's cpus) is one of @p host: the cpus this process may run on (its
 * affinity), which the dataplane and the workers it starts inherit.  A cpu
 * outside it fails the start after the domain is made (the dataplane's
 * EAL prints its usage, a worker cannot be pinned), so shmr-control checks
 * it at --check and start, as it checks the host's memory.
 *
 * Context: any; pure (the caller reads the host: sched_getaffinity(2)).
 * Errors:  -EINVAL with one line in @p err, "file:line: field: cpu N ...".
 */
int shmr_config_cpus_fit(const struct shmr_config *cfg, const cpu_set_t *host,
			 char *err, size_t errlen);

/** The embedded default configuration's text (config/default.conf). */
const char *shmr_config_default_text(void);

/** The variable that names the configuration file in place of the
 *  installed one (shmr_config_default_file()). */
#define SHMR_CONFIG_ENV "SHMR_CONFIG"

/** The installed configuration's path, $sysconfdir/shmr/shmr.conf of this
 *  build (/etc/shmr/shmr.conf for prefix /usr). */
const char *shmr_config_sysconf_path(void);

/**
 * The configuration file to use when no file is named: $SHMR_CONFIG, else
 * shmr_config_sysconf_path(), when that file exists (a file that exists
 * but cannot be read is returned all the same: reading it says why).
 * Returns NULL when it does not exist: the embedded default applies.
 * *@p looked (when not NULL) is the path that was looked at.
 *
 * Context: any; stat(2) only.
 */
const char *shmr_config_default_file(const char **looked);

#endif
