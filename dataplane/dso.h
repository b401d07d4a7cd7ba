/*
 * Behaviours loaded from shared objects: dlopen(), the ABI check, init()
 * and, when the table that loaded them is freed, fini() and dlclose()
 * (dso.c).
 *
 * Internal, not for direct inclusion outside dataplane/.
 */
#ifndef SHMR_DP_DSO_H
#define SHMR_DP_DSO_H

#include <stddef.h>

#include "table.h"

/**
 * dlopen() the behaviour at @p path, check its ABI (1 to
 * SHMR_BEHAVIOUR_ABI) and run its init() with @p arg; on success r->dl,
 * r->ops and r->state are set, and r->key to the object's message_key
 * (ABI >= 2; NULL when it has none).  A "dso" router (r->behaviour
 * SHMR_BEH_DSO) needs route_message or route_call; another router (a
 * consistent-hash one, for its key function) does not.
 * Context:   the update thread, building a table.  Blocking.
 * Ownership: undone by shmr_dp_behaviour_unload() when the table is freed.
 * Errors:    -ENOENT (no object or no symbol), -EPROTO (other ABI),
 *            -EINVAL, or what init() returned; @p why says which.
 */
int shmr_dp_behaviour_load(struct shmr_dp_router *r, const char *path,
			   const char *arg, char *why, size_t whylen);

/** fini() and dlclose(); nothing when nothing was loaded. */
void shmr_dp_behaviour_unload(struct shmr_dp_router *r);

#endif
