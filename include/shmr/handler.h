/*
 * A router's admin-path handlers, loaded by shmr-control: the handler ABI.
 * (The dataplane's routing behaviours, a different ABI run elsewhere, are
 * in <shmr/behaviour.h>.)
 *
 * A router's handlers are what shmr-control runs for the router's admin
 * path (high/max-priority sends and calls to the router, and
 * MessageRouteFailed for its failed sends) and for `shmrctl inspect`.
 * They come from a shared object named by the router's `handlers` setting
 * (or its `dso`, for a "dso" router), which exports one symbol,
 * `shmr_handlers`, of type struct shmr_handlers.  Any hook left NULL gets
 * the default: a MessageRouteFailed is logged and kept as a dead letter,
 * another admin send is logged, the call "stats" is answered with the
 * router's counters and any other call is refused with -SHMR_E_NOT_ALLOWED.
 *
 * Context: every hook runs in shmr-control's single thread, one at a time,
 * between its other work: keep them short and never block for long (no
 * waiting on a worker).  A hook may call the ops below, and nothing else
 * of shmr-control.
 *
 * Concurrency: none to manage.  No two hooks (of any router) ever run at
 * once, and an op runs to completion inside the hook that called it, so a
 * handler's state needs no lock.
 *
 * A hook that returns a negative value stops the router: its workers are
 * asked to stop and are not restarted, everything sent to the router fails
 * with -SHMR_E_NOT_ALLOWED, every route mutator on it returns
 * -SHMR_E_NOT_ALLOWED, and reads (routes, route, inspect) keep working.
 * A stopped router's hooks are never run again.
 */
#ifndef SHMR_HANDLER_H
#define SHMR_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/shmr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The handler ABI this header describes (struct shmr_handlers.abi). */
#define SHMR_HANDLERS_ABI 1

struct shmr_admin;

/**
 * What a handler may do.  Every op is synchronous and returns before the
 * hook goes on.
 *
 * Context (every op): inside one of this router's hooks, with the
 * struct shmr_admin that hook was given; never from another thread.
 */
struct shmr_admin_ops {
	/**
	 * Answer the call @p call with @p status (0 or -SHMR_E_*) and
	 * @p len bytes of @p data, now or later (from a later hook: keep a
	 * copy of the call's header; only from, ref and type are used).
	 * Ownership: @p data is copied before the op returns.
	 * Errors: -SHMR_E_TOO_BIG, -EAGAIN (the admin lane is full).
	 */
	int (*reply)(struct shmr_admin *a, const struct shmr_msg *call,
		     int32_t status, const void *data, size_t len);
	/**
	 * The default handling of @p msg, or of the call @p call (see
	 * above); it answers the call.
	 * Errors: none; returns 0.
	 */
	int (*default_message)(struct shmr_admin *a,
			       const struct shmr_msg *msg);
	int (*default_call)(struct shmr_admin *a, const struct shmr_msg *call);
	/**
	 * For a MessageRouteFailed (flags SHMR_F_ROUTE_FAILED): the name
	 * the router chose, copied into @p out; "?" when it did not fit.
	 * Its reason is msg->status.
	 * Errors: none.
	 */
	void (*failed_name)(struct shmr_admin *a, const struct shmr_msg *msg,
			    char out[SHMR_NAME_MAX]);
	/**
	 * The router's route lifecycle, with the semantics and errors of
	 * shmr_route_disable() and the others in <shmr/shmr.h>; the
	 * control plane applies them at once (no socket round trip), and a
	 * worker it starts is forked before the op returns.
	 * Errors: as those functions; -SHMR_E_NOT_ALLOWED on a stopped
	 *         router.
	 */
	int (*route_disable)(struct shmr_admin *a, const char *route);
	int (*route_enable)(struct shmr_admin *a, const char *route);
	int (*route_remove)(struct shmr_admin *a, const char *route);
	int (*route_respawn)(struct shmr_admin *a, const char *route);
	/**
	 * Add a route running @p program with @p nargs arguments (cpus
	 * chosen by the control plane), or replace its program and
	 * arguments; as shmr_route_add() and shmr_route_replace().
	 * Ownership: the strings are copied.
	 * Errors: as those functions; -SHMR_E_NAME when a string does not
	 *         fit the configuration's limits.
	 */
	int (*route_add)(struct shmr_admin *a, const char *route,
			 const char *program, const char *const *args,
			 unsigned nargs);
	int (*route_replace)(struct shmr_admin *a, const char *route,
			     const char *program, const char *const *args,
			     unsigned nargs);
	/**
	 * Add (or, with a "shmr:" key that names a built-in one, override)
	 * an inspect key.
	 * Context: inside handle_inspect only; elsewhere it does nothing.
	 * Ownership: both strings are copied (a long one is cut short).
	 * Errors: none; keys past the 64th of one inspect are dropped.
	 */
	void (*inspect_add)(struct shmr_admin *a, const char *key,
			    const char *value);
	/**
	 * The payload of @p m, the message or call the running hook was
	 * given: its inline bytes, or, when it was sent in an arena buffer
	 * (flags SHMR_F_ARENA), the buffer's bytes in place, never copied:
	 * read-only, at most the buffer's class size, as many as the
	 * reference says (checked against the control plane's own copy of
	 * the arena's classes and the buffer's owner word: the sender is a
	 * peer).
	 * Ownership: valid until the hook returns; then the buffer goes back
	 *            to the arena (once; a control plane killed before that
	 *            leaves it to the reclaim of its sender, as a dead
	 *            letter's).  Copy what a later hook needs.
	 * Returns: the bytes, and their count in @p *len; NULL and 0 when
	 *          @p m names a buffer that does not check (a peer rewrote
	 *          it) or claims more inline bytes than a slot holds.
	 */
	const void *(*payload)(struct shmr_admin *a, const struct shmr_msg *m,
			       size_t *len);
};

/** The router as its handlers see it. */
struct shmr_admin {
	const char *router;               /**< the router's name */
	void *state;                      /**< set by init, yours */
	const struct shmr_admin_ops *ops; /**< what a hook may do */
};

/**
 * The object's one exported symbol, `shmr_handlers`.
 *
 * Context (every hook): shmr-control's single thread, one hook at a time
 * (see the top of this file).  Hooks are all optional (NULL: the default).
 */
struct shmr_handlers {
	/** Must be SHMR_HANDLERS_ABI. */
	uint32_t abi;
	/**
	 * Set a->state from the router's `handlers_arg`.
	 * Context: shmr-control's start, before any other hook.
	 * Errors:  a negative return fails the start (exit status 1).
	 */
	int (*init)(struct shmr_admin *a, const char *arg);
	/**
	 * Free a->state.
	 * Context: shmr-control's stop, after every other hook; only when
	 *          init succeeded (or is NULL).
	 */
	void (*fini)(struct shmr_admin *a);
	/**
	 * An admin send, or a MessageRouteFailed.
	 * Ownership: @p m is the control plane's copy of the slot, valid
	 *            until the hook returns.
	 * Errors: 0, or < 0 to stop the router.
	 */
	int (*handle_message)(struct shmr_admin *a, const struct shmr_msg *m);
	/**
	 * An admin call: answer it with ops->reply (now, or later to defer
	 * it), then return 0.
	 * Ownership: @p call is the control plane's copy of the slot, valid
	 *            until the hook returns: keep a copy of its header to
	 *            answer later.
	 * Errors: < 0 stops the router (a call not answered yet then gets
	 *         -SHMR_E_NOT_ALLOWED).
	 */
	int (*handle_call)(struct shmr_admin *a, const struct shmr_msg *call);
	/**
	 * `shmrctl inspect`: add keys with ops->inspect_add.
	 * Errors: 0, or < 0 to stop the router.
	 */
	int (*handle_inspect)(struct shmr_admin *a);
};

#ifdef __cplusplus
}
#endif
#endif
