/*
 * The routers' admin-path handlers (handlers.c): each router's shared
 * object's hooks, or the defaults, for the admin endpoint's slots and for
 * INSPECT, and the router's stop when a hook fails.  Internal to
 * shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_HANDLERS_H
#define SHMR_CONTROL_HANDLERS_H

#include <stdint.h>

#include <shmr/handler.h>
#include <shmr/shmr.h>

#include "admin.h"
#include "dlqfile.h"
#include "domain.h"
#include "format.h"
#include "lifecycle.h"
#include "model.h"

struct shmr_ctl_handlers;

/* A router's admin-path handlers. */
struct shmr_ctl_hrouter {
	struct shmr_admin admin; /* what the hooks get (ops find the rest) */
	struct shmr_ctl_handlers *hs;
	unsigned r;              /* router index */
	void *dl;                /* dlopen handle, NULL: none */
	const struct shmr_handlers *h; /* NULL: the defaults */
	int initialised;         /* init ran (fini is owed) */
	struct shmr_ctl_kv_extra *inspect; /* during handle_inspect */
	uint64_t call_ref;       /* the call handle_call is running for */
	int replied;             /* ...and it has been answered */
};

struct shmr_ctl_handlers {
	/* Given by the daemon (shmr_ctl_handlers_init()) */
	struct shmr_ctl_model *m;
	struct shmr_ctl_life *life;
	struct shmr_ctl_domain *d;
	struct shmr_ctl_admin *admin;
	struct shmr_ctl_dlq_files *dlq;
	/* Its own */
	/* By router index, the configuration's routers
	 * (shmr_ctl_handlers_routers()) */
	unsigned nrouters;
	uint64_t *msgs; /* admin-path sends handled */
	struct shmr_ctl_hrouter *hr;
};

/** No handlers loaded yet; works on what it is given. */
void shmr_ctl_handlers_init(struct shmr_ctl_handlers *hs,
			    struct shmr_ctl_model *m,
			    struct shmr_ctl_life *life,
			    struct shmr_ctl_domain *d,
			    struct shmr_ctl_admin *admin,
			    struct shmr_ctl_dlq_files *dlq);
/** Room for @p nrouters routers (the configuration's).  Context:
 *  start-up, once, before the load.  Errors: -ENOMEM. */
int shmr_ctl_handlers_routers(struct shmr_ctl_handlers *hs,
			      unsigned nrouters);
/** Load every router's handlers object and run its init.
 *  Context: start-up.  Errors: -ENOENT, -EPROTO, init's error (logged). */
int shmr_ctl_handlers_load(struct shmr_ctl_handlers *hs);
/** fini and dlclose every one.  Context: shutdown. */
void shmr_ctl_handlers_unload(struct shmr_ctl_handlers *hs);
/** An admin send or MessageRouteFailed for router @p r (counted): its
 *  hook, or the default; a failing hook stops the router. */
void shmr_ctl_handlers_message(struct shmr_ctl_handlers *hs, unsigned r,
			       const struct shmr_msg *m);
/** An admin call for router @p r, likewise (a stopped router refuses it
 *  with -SHMR_E_NOT_ALLOWED). */
void shmr_ctl_handlers_call(struct shmr_ctl_handlers *hs, unsigned r,
			    const struct shmr_msg *m);
/** INSPECT: the hook's keys into @p extra (emptied first). */
void shmr_ctl_handlers_inspect(struct shmr_ctl_handlers *hs, unsigned r,
			       struct shmr_ctl_kv_extra *extra);
/** Stop router @p r because @p hook returned @p err (logged). */
void shmr_ctl_router_stop(struct shmr_ctl_handlers *hs, unsigned r,
			  const char *hook, int err);
/** The default handlers: a MessageRouteFailed is logged and kept as a
 *  dead letter, another admin send logged; the call "stats" answered,
 *  any other refused (-SHMR_E_NOT_ALLOWED). */
void shmr_ctl_handlers_default_message(struct shmr_ctl_handlers *hs,
				       unsigned r, const struct shmr_msg *m);
void shmr_ctl_handlers_default_call(struct shmr_ctl_handlers *hs, unsigned r,
				    const struct shmr_msg *m);

#endif
