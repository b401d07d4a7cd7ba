/*
 * shmr-control's configuration, loaded and applied (daemon_conf.c): the
 * one entry point into config/ and what the daemon builds from a valid
 * configuration.  Part of control.c's main(), on its own so that the
 * daemon's file stays its event loop and wiring.  Internal to
 * shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_DAEMON_CONF_H
#define SHMR_CONTROL_DAEMON_CONF_H

#include <stddef.h>
#include <sys/types.h>

#include <hwloc.h>

#include <shmr/layout.h>

#include "model.h"
#include "shmr_config.h"

/* The control socket's groups (socket_group, admin_group), resolved. */
struct shmr_ctl_groups {
	int have_group; /* socket_group set */
	gid_t group;
	int have_admin_group; /* admin_group set */
	gid_t admin_group;
};

/**
 * Load the configuration into @p cfg: @p path (-c), else the default
 * file (shmr_config_default_file()), else the embedded default; parse,
 * defaults from behaviour objects, validation, and the host's memory
 * (memfit.c).  *@p why says where it came from, for the first log line.
 * Context: start-up, single-threaded.
 * Errors: exits 2 (SHMR_CTL_EXIT_USAGE) after one line on stderr.
 */
void shmr_ctl_conf_load(struct shmr_config *cfg, const char *path, char *why,
			size_t cap);

/**
 * What the daemon builds from @p cfg (loaded by shmr_ctl_conf_load()):
 * the model @p m (and the pools' resizers in it), each route's cpu set
 * into @p cpus (allocated here; pin.c keeps them), and the socket's
 * groups into @p g.  Only the groups are new to it (the host's group
 * database).
 * Context: start-up, single-threaded.
 * Errors: a group the system does not know exits 2 after one line; any
 * other failure is a broken invariant (abort).
 */
void shmr_ctl_conf_apply(const struct shmr_config *cfg,
			 struct shmr_ctl_model *m,
			 hwloc_bitmap_t (*cpus)[SHMR_MAX_ROUTES],
			 struct shmr_ctl_groups *g);

#endif
