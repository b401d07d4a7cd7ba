/*
 * Custom routing behaviours, loaded by shmr-dataplane from a shared object
 * named in the configuration (behaviour = "dso"; dso = "path.so"): the
 * behaviour ABI.  (A router's admin-path handlers, loaded by shmr-control,
 * are another ABI: <shmr/handler.h>.)
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
/* The handler ABI was declared here before it had its own header: objects
 * written then still build.  New code includes <shmr/handler.h> itself. */
#include <shmr/handler.h>

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
	 * Context:     the dataplane's update thread, when the router's table
	 *              is (re)built.  Optional (NULL: state is NULL).
	 * Concurrency: lcores may meanwhile run the callbacks with the
	 *              previous table's state (another @p state).
	 * Ownership:   *state is the object's until fini().
	 * Errors:      0, or a negative errno; the router then discards.
	 */
	int (*init)(const char *arg, void **state);

	/**
	 * Free what init() made.  Optional.
	 * Context: the dataplane, once no lcore can still be inside a
	 *          callback with @p state (after a grace period).
	 */
	void (*fini)(void *state);

	/**
	 * Pick the route for an asynchronous message.
	 * Context:     a routing lcore, inside its RCU read-side section,
	 *              once per message: no blocking, sleeping, allocation
	 *              or syscalls.
	 * Concurrency: several lcores at once with the same @p state.
	 * Ownership:   @p msg is read-only and valid during the call only.
	 * Returns:     a route or registered name; NULL or "" discards it.
	 *              The string must outlive the call (static or in state).
	 * Errors:      none (a name that resolves to nothing fails the
	 *              message, as the router's other failures do).
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

#ifdef __cplusplus
}
#endif
#endif
