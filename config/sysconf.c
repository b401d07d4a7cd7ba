/*
 * Which configuration file is "the" configuration when none is named:
 * shmr-control without -c runs it, and shmrctl without -d takes its
 * domain (and run_dir) from it, so the two always agree on the default.
 * The installed file's path is the build's (meson passes
 * $prefix/$sysconfdir/shmr/shmr.conf as SHMR_SYSCONF_CONF).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "shmr_config.h"

#ifndef SHMR_SYSCONF_CONF
#error "SHMR_SYSCONF_CONF ($sysconfdir/shmr/shmr.conf) is not set"
#endif

const char *shmr_config_sysconf_path(void)
{
	return SHMR_SYSCONF_CONF;
}

const char *shmr_config_default_file(const char **looked)
{
	const char *env = getenv(SHMR_CONFIG_ENV);
	const char *path = env && *env ? env : SHMR_SYSCONF_CONF;
	struct stat st;

	if (looked)
		*looked = path;
	/* Only absence falls back: a file that is there but cannot be read
	 * is returned, and reading it fails with its reason. */
	if (stat(path, &st) < 0 && errno == ENOENT)
		return NULL;
	return path;
}
