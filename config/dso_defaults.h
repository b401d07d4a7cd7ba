/*
 * What a router's behaviour shared object supplies as defaults (struct
 * shmr_behaviour, ABI 2): the routing logic when the configuration gives
 * no behaviour, the pool size when its pool gives no size, consistent-
 * hash's virtual nodes when it gives none.  The parser cannot open the
 * object; shmr_config_load() fills these in after parsing (shmr-control's
 * start and --check), before the whole is validated and anything is built
 * from it.
 */
#ifndef SHMR_CONFIG_DSO_DEFAULTS_H
#define SHMR_CONFIG_DSO_DEFAULTS_H

#include <stddef.h>

#include "shmr_config.h"

/**
 * Fill in every router's settings left to its dso: behaviour
 * SHMR_CONF_BEH_FROM_DSO becomes the object's logic (or SHMR_BEH_DSO when
 * it names none and routes itself; its handlers then default to the
 * object, as for behaviour = "dso"), a pool with size_from_dso gets the
 * object's pool_size and its routes, a consistent-hash router with
 * vnodes 0 the object's virtual_nodes.  What the file gives is kept.
 * Every object a router names (its dso, and handlers of its own) is
 * dlopen()ed whether or not anything is left to it, so that one that
 * cannot be loaded is refused here; a dso is read, never initialised
 * (init() is the dataplane's), and closed again.
 *
 * Context:   shmr_config_load(), after the parse (shmr-control's thread,
 *            before the model is built).
 * Ownership: @p cfg is updated in place.
 * Errors:    -EINVAL (the object gives nothing usable, or the file's
 *            settings do not fit the logic it names), -ENOENT (a dso or
 *            handlers object cannot be loaded, or a dso has no
 *            shmr_behaviour), -EPROTO (its ABI
 *            is not one this control plane reads).  @p err then holds one
 *            line "file:line: routers.[i].field: what is wrong".
 */
int shmr_config_dso_defaults(struct shmr_config *cfg, char *err,
			     size_t errlen);

#endif
