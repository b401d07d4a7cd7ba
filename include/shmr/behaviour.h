/*
 * Custom routing behaviours, loaded by shmr-dataplane from a shared object
 * named in the configuration (behaviour = "dso"; dso = "path.so"), and a
 * router's admin-path handlers, loaded by shmr-control (see the second
 * half of this file).
 *
 * Since ABI 2 an object may also reuse a built-in routing logic instead of
 * routing itself: it names the logic and its defaults (pool size, virtual
 * nodes) and may give consistent-hash the key of each message.  The
 * configuration file always wins: a setting given there is used, and the
 * object's value only fills in what the file leaves out.
 *
 * The object exports one symbol, `shmr_behaviour`, of this type.  Its
 * routing callbacks run on the dataplane's routing lcores, inside their RCU
 * read-side section, once per message: they must not block, sleep, allocate
 * or make syscalls, and must be safe to call from several lcores at once
 * with the same state (keep per-call state on the stack).
 */
#ifndef SHMR_BEHAVIOUR_H
#define SHMR_BEHAVIOUR_H

#include <shmr/shmr.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The ABI this header describes.  An object built against ABI 1 (the
 * struct up to route_call) still loads: the fields after route_call are
 * read only when abi >= 2.
 */
#define SHMR_BEHAVIOUR_ABI 2

struct shmr_behaviour {
	/** SHMR_BEHAVIOUR_ABI (1 is still accepted: no fields past
	 *  route_call). */
	uint32_t abi;

	/**
	 * Build the behaviour's state from the router's `dso_arg` string.
	 * Context: the dataplane's update thread, when the router's table is
	 *          (re)built.  Optional (NULL: state is NULL).
	 * Returns: 0, or a negative errno; the router then discards.
	 */
	int (*init)(const char *arg, void **state);

	/** Free what init() made, after no lcore can still use it. Optional. */
	void (*fini)(void *state);

	/**
	 * Pick the route for an asynchronous message.
	 * Returns: a route or registered name; NULL or "" discards it.
	 *          The string must outlive the call (static or in state).
	 */
	const char *(*route_message)(void *state, const struct shmr_msg *msg);

	/** As route_message, for a call (kind SHMR_KIND_CALL). */
	const char *(*route_call)(void *state, const struct shmr_msg *msg);

	/* ---- ABI 2: read only when abi >= 2 ---- */

	/**
	 * The key a consistent-hash router hashes for @p msg, instead of
	 * msg->key.  Optional (NULL: msg->key).
	 * Context: a routing lcore, as route_message (no blocking, no
	 *          allocation, no syscalls; several lcores at once with the
	 *          same state).  Read by shmr-dataplane for a router whose
	 *          behaviour is "consistent-hash" and which names this object
	 *          as its `dso`; init() and fini() run for it as for a "dso"
	 *          router.
	 * Returns: the key; any value is valid.
	 */
	uint64_t (*message_key)(void *state, const struct shmr_msg *msg);

	/**
	 * A built-in routing logic ("round-robin", "random",
	 * "smallest-mailbox", "broadcast", "consistent-hash",
	 * "scatter-gather", "tail-chopping" or "balancing") that a router
	 * naming this object as its `dso` runs when its configuration gives
	 * no `behaviour`.  The object then need not have route_message or
	 * route_call.  NULL: such a router is a "dso" router (this object's
	 * route_message/route_call decide).
	 * Context: read by shmr-control (and `shmr-control --check`) when it
	 * loads the configuration, without calling init(); a `behaviour` in
	 * the configuration wins.  A name that is not a routing logic fails
	 * the start (exit status 2).
	 */
	const char *logic;

	/**
	 * The pool's size (1 to 32, the most routes a router has) for a
	 * router naming this object whose `pool` gives no `size`.  0:
	 * none; such a configuration then fails to start (exit status 2).
	 * Context: read by shmr-control at start, as logic; a `size` in
	 * the configuration wins.
	 */
	uint32_t pool_size;

	/**
	 * Consistent-hash's ring points per routee (1 to 1024) when the
	 * configuration gives no `virtual_nodes`.  0: the built-in default
	 * (10).
	 * Context: read by shmr-control at start, as logic; a
	 * `virtual_nodes` in the configuration wins.
	 */
	uint32_t virtual_nodes;

	/**
	 * A resizer for a pool naming this object whose configuration has
	 * neither `resizer` nor `optimal_resizer`: "default" (Pekko's
	 * DefaultResizer) or "optimal" (its OptimalSizeExploringResizer),
	 * with Pekko's settings.  NULL: none.
	 * Context: read by shmr-control at start, as logic; a resizer in the
	 * configuration wins.  Another name fails the start (exit status 2).
	 */
	const char *resizer;
};

/* ------------------------------------------------------------------ */
/* The admin path's handlers, run by shmr-control                      */
/* ------------------------------------------------------------------ */

/*
 * A router's handlers: what shmr-control runs for the router's admin path
 * (high/max-priority sends and calls to the router, and MessageRouteFailed
 * for its failed sends) and for `shmrctl inspect`.  They come from a shared
 * object named by the router's `handlers` setting (or its `dso`, for a
 * "dso" router), which exports one symbol, `shmr_handlers`, of type
 * struct shmr_handlers.  Any hook left NULL gets the default: a
 * MessageRouteFailed is logged and kept as a dead letter, another admin
 * send is logged, the call "stats" is answered with the router's counters
 * and any other call is refused with -SHMR_E_NOT_ALLOWED.
 *
 * Context: every hook runs in shmr-control's single thread, one at a time,
 * between its other work: keep them short and never block for long (no
 * waiting on a worker).  A hook may call the ops below, and nothing else
 * of shmr-control.
 *
 * A hook that returns a negative value stops the router: its workers are
 * asked to stop and are not restarted, everything sent to the router fails
 * with -SHMR_E_NOT_ALLOWED, every route mutator on it returns
 * -SHMR_E_NOT_ALLOWED, and reads (routes, route, inspect) keep working.
 */
#define SHMR_HANDLERS_ABI 1

struct shmr_admin;

/** What a handler may do.  Every call is synchronous. */
struct shmr_admin_ops {
	/**
	 * Answer the call @p call with @p status (0 or -SHMR_E_*) and
	 * @p len bytes of @p data, now or later (from a later hook: keep a
	 * copy of the call's header; only from, ref and type are used).
	 * Errors: -SHMR_E_TOO_BIG, -EAGAIN (the admin lane is full).
	 */
	int (*reply)(struct shmr_admin *a, const struct shmr_msg *call,
		     int32_t status, const void *data, size_t len);
	/** The default handling of @p msg (see above); its return value. */
	int (*default_message)(struct shmr_admin *a,
			       const struct shmr_msg *msg);
	int (*default_call)(struct shmr_admin *a, const struct shmr_msg *call);
	/**
	 * For a MessageRouteFailed (flags SHMR_F_ROUTE_FAILED): the name
	 * the router chose, copied into @p out; "?" when it did not fit.
	 * Its reason is msg->status.
	 */
	void (*failed_name)(struct shmr_admin *a, const struct shmr_msg *msg,
			    char out[SHMR_NAME_MAX]);
	/** The router's route lifecycle, with the semantics and errors of
	 *  shmr_route_disable() and the others in <shmr/shmr.h>. */
	int (*route_disable)(struct shmr_admin *a, const char *route);
	int (*route_enable)(struct shmr_admin *a, const char *route);
	int (*route_remove)(struct shmr_admin *a, const char *route);
	int (*route_respawn)(struct shmr_admin *a, const char *route);
	/** Add a route running @p program with @p nargs arguments (cpus
	 *  chosen by the control plane), or replace its program and
	 *  arguments; as shmr_route_add() and shmr_route_replace(). */
	int (*route_add)(struct shmr_admin *a, const char *route,
			 const char *program, const char *const *args,
			 unsigned nargs);
	int (*route_replace)(struct shmr_admin *a, const char *route,
			     const char *program, const char *const *args,
			     unsigned nargs);
	/** Inside handle_inspect only: add (or, with a "shmr:" key that
	 *  names a built-in one, override) an inspect key. */
	void (*inspect_add)(struct shmr_admin *a, const char *key,
			    const char *value);
};

/** The router as its handlers see it. */
struct shmr_admin {
	const char *router;               /**< the router's name */
	void *state;                      /**< set by init, yours */
	const struct shmr_admin_ops *ops; /**< what a hook may do */
};

struct shmr_handlers {
	/** Must be SHMR_HANDLERS_ABI. */
	uint32_t abi;
	/** Set a->state from the router's `handlers_arg`.  Optional.
	 *  Context: shmr-control's start.  A negative return fails the
	 *  start (exit status 1). */
	int (*init)(struct shmr_admin *a, const char *arg);
	/** Free a->state when shmr-control stops.  Optional. */
	void (*fini)(struct shmr_admin *a);
	/** An admin send, or a MessageRouteFailed.  0, or < 0 to stop. */
	int (*handle_message)(struct shmr_admin *a, const struct shmr_msg *m);
	/**
	 * An admin call: answer it with ops->reply (now, or later to defer
	 * it), then return 0.  < 0 stops the router (a call not answered
	 * yet then gets -SHMR_E_NOT_ALLOWED).
	 */
	int (*handle_call)(struct shmr_admin *a, const struct shmr_msg *call);
	/** `shmrctl inspect`: add keys with ops->inspect_add.  0, or < 0 to
	 *  stop the router. */
	int (*handle_inspect)(struct shmr_admin *a);
};

#ifdef __cplusplus
}
#endif
#endif
