/*
 * A router's configuration (struct shmr_conf_router): its routes, type
 * maps, pool and resizer, as the parser fills them.  Part of
 * shmr_config.h (include that): it uses the SHMR_CONF_* limits defined
 * there.
 */
#ifndef SHMR_CONF_ROUTER_H
#define SHMR_CONF_ROUTER_H

#ifndef SHMR_CONFIG_H
#error "include shmr_config.h, which defines the limits used here"
#endif

struct shmr_conf_route {
	char name[SHMR_NAME_MAX];
	char program[SHMR_CONF_PATH_MAX]; /* looked up in PATH unless it has a '/' */
	unsigned nargs;
	char args[SHMR_CONF_ARGS_MAX][SHMR_CONF_ARG_MAX]; /* argv[1..] */
	char cpus[SHMR_CONF_CPUS_MAX]; /* cpu list "0", "0-1", "0,2"; "" = one CPU picked by the control plane */
	int line;                      /* where it was declared */
	unsigned file;                 /* in which file: shmr_config_file() */
};

struct shmr_conf_type {
	uint32_t type;
	char route[SHMR_NAME_MAX]; /* route or registry name */
};

struct shmr_conf_pool {
	unsigned size;               /* routees at start; 0: not a pool,
				      * unless size_from_dso */
	/* "size" left out by a router with a dso: the object's pool_size,
	 * filled in (and the routes expanded) by the control plane at start
	 * (see struct shmr_behaviour); until then size and nroutes are 0. */
	int size_from_dso;
	/* "size = 0" with a resizer whose lower_bound is 0: a pool that
	 * starts with no routee (size and nroutes 0).  A size below the
	 * resizer's lower_bound is raised to it at load. */
	int empty;
	struct shmr_conf_route tmpl; /* program, args, cpus of every routee */
	int line;
	unsigned file;               /* shmr_config_file() */
};

enum shmr_conf_resizer_kind {
	SHMR_RESIZER_NONE = 0,
	SHMR_RESIZER_DEFAULT = 1, /* "resizer": Pekko's DefaultResizer */
	SHMR_RESIZER_OPTIMAL = 2, /* "optimal_resizer": OptimalSizeExploring */
};

/* A pool's resizer, with Pekko's keys (dashes as underscores).  Absent
 * keys are unset (shmr_config_resizer_unset()) and take Pekko's defaults;
 * shmr_config_validate() checks the values' ranges and the control plane
 * builds the pool's resizer from them (shmr_config_resizer_from_conf(),
 * resizer_conf.h). */
struct shmr_conf_resizer {
	int kind; /* enum shmr_conf_resizer_kind */
	int line;
	unsigned file; /* shmr_config_file() */
	/* both */
	int lower_bound, upper_bound;
	/* default */
	int pressure_threshold, messages_per_resize;
	double rampup_rate, backoff_threshold, backoff_rate;
	/* optimal */
	uint64_t action_interval_ms, downsize_after_underutilized_for_ms;
	int optimization_range;
	double chance_of_ramping_down_when_full, explore_step_size,
		chance_of_exploration, downsize_ratio, weight_of_latest_metric;
};

struct shmr_conf_router {
	char name[SHMR_NAME_MAX];
	/* enum shmr_behaviour_kind; SHMR_CONF_BEH_FROM_DSO (0) when the
	 * router gives a dso and no behaviour: the object's logic, else
	 * SHMR_BEH_DSO, filled in by the control plane at start */
	uint32_t behaviour;
	unsigned ntypes;
	struct shmr_conf_type types[SHMR_MAX_TYPES];
	/* behaviour "hash": its list; a routing logic ("round-robin",
	 * "random", "smallest-mailbox", "broadcast", "consistent-hash",
	 * "scatter-gather", "tail-chopping"): its "routees", route or
	 * registry names (0: the router's own routes; always 0 for
	 * "balancing", whose routees are its pool's) */
	unsigned nhash;
	char hash[SHMR_MAX_ROUTES][SHMR_NAME_MAX];
	/* "consistent-hash": "virtual_nodes", default
	 * SHMR_CHASH_VNODES_DEFAULT; 0 for other behaviours, and 0 when left
	 * out by a router with a dso (the object's virtual_nodes, filled in
	 * at start; 0 left there is the default) */
	uint32_t vnodes;
	/* "consistent-hash": "hash_key" (enum shmr_hash_key, default the
	 * key field; from the payload: key_offset and key_length, 0 to the
	 * end), "hash_mode" (enum shmr_hash_mode, default "shmr") and
	 * "node_prefix" ("" by default).  All 0 for other behaviours. */
	uint32_t hash_key, key_offset, key_length, hash_mode;
	char node_prefix[SHMR_DSO_PATH_MAX];
	/* "scatter-gather", "tail-chopping": "within_ms" (1 to
	 * SHMR_WITHIN_MS_MAX, default SHMR_WITHIN_MS_DEFAULT);
	 * "tail-chopping": "interval_ms" (1 to within_ms, default
	 * shmr_config_interval_default(within_ms)).  0 for other
	 * behaviours. */
	uint32_t within_ms, interval_ms;
	/* behaviour "dso" (required), or left out (required); a routing
	 * logic's may name one too: its defaults, and consistent-hash's key
	 * function (struct shmr_behaviour's message_key) */
	char dso[SHMR_DSO_PATH_MAX];
	char dso_arg[SHMR_DSO_PATH_MAX]; /* optional */
	unsigned nroutes;
	struct shmr_conf_route routes[SHMR_MAX_ROUTES];
	int line;
	unsigned file; /* shmr_config_file() */
	/* behaviour "type" or "hash": calls are routed by type through this
	 * map when it has entries (sends keep the behaviour's own map) */
	unsigned ncall_types;
	struct shmr_conf_type call_types[SHMR_MAX_TYPES];
	/* "mailbox_full": 0 = "backpressure" (default: the sender waits),
	 * 1 = "fail" (SHMR_E_MAILBOX_FULL) */
	int fail_when_full;
	/* the admin path's handlers (handle_message, handle_call,
	 * handle_inspect): "handlers", defaulting to the dso of a "dso"
	 * router; "" = the control plane's defaults */
	char handlers[SHMR_DSO_PATH_MAX];
	char handlers_arg[SHMR_DSO_PATH_MAX];
	/* "pool": the router's routes are `size` copies of one program,
	 * named "<router>:0" .. "<router>:size-1" (expanded into routes[] by
	 * the parser); 0: not a pool */
	struct shmr_conf_pool pool;
	struct shmr_conf_resizer resizer; /* "resizer" or "optimal_resizer" */
	int on_kill_stop; /* "on_kill": 0 = "restart" (default), 1 = "stop" */
	/* "supervisor": what an unexpected exit of one of the router's own
	 * routes (a pool's routee) does (enum shmr_conf_supervisor,
	 * control/supervise.c); default SHMR_SUPERVISOR_RESTART */
	uint32_t supervisor;
	/* "keep_when_empty" (groups only): 1 keeps a group running once its
	 * last routee is removed; 0 (default) stops it, as Pekko's does */
	int keep_when_empty;
};

#endif
