/*
 * Custom routing behaviours, loaded by shmr-dataplane from a shared object
 * named in the configuration (behaviour = "dso"; dso = "path.so").
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

#define SHMR_BEHAVIOUR_ABI 1

struct shmr_behaviour {
	/** Must be SHMR_BEHAVIOUR_ABI. */
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
};

#ifdef __cplusplus
}
#endif
#endif
