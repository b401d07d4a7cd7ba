/*
 * What ADD and REPLACE may start (programs.c): only a program the
 * configuration names.  Internal to the control plane: not for direct
 * inclusion outside control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_PROGRAMS_H
#define SHMR_CONTROL_PROGRAMS_H

#include <stddef.h>

#include "shmr_config.h"

/**
 * Is @p program one that @p cfg lets ADD and REPLACE start: a route's
 * program (a pool's included), or an entry of the top-level `programs`?
 * The same string as a configured one is allowed as it is.  Anything else
 * is compared canonically: both sides resolved as exec would find them
 * (PATH for a name without '/'), then realpath(), so "../" or a second
 * spelling of a listed program is that program, and a path that leads
 * elsewhere is refused.
 *
 * @p out (@p cap bytes) gets what to run: @p program itself on an exact
 * match, else the canonical path that was checked (so that the program
 * run is the one compared, whatever spelling the request used).
 *
 * Context:     the control plane's loop (reads the file system).
 * Returns:     0 allowed; -SHMR_E_NOT_ALLOWED not in the configuration
 *              (or not found, or its canonical path does not fit @p cap).
 */
int shmr_ctl_program_allowed(const struct shmr_config *cfg,
			     const char *program, char *out, size_t cap);

#endif
