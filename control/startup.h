/*
 * shmr-control's start-up (startup.c): usage, and where the run
 * directory, the socket and the dataplane's binary are.  Internal to
 * shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_STARTUP_H
#define SHMR_CONTROL_STARTUP_H

#include <stddef.h>
#include <sys/types.h>

struct shmr_config;

/* Bad arguments or a bad configuration (documented in --help). */
#define SHMR_CTL_EXIT_USAGE 2

extern const char shmr_ctl_usage_line[];

/** --help's text on stdout. */
void shmr_ctl_usage_full(void);

/** @p why (may be NULL) and the usage line on stderr; exit 2. */
_Noreturn void shmr_ctl_usage_error(const char *why);

/** mkdir -p @p path.  0, or -errno (-ENAMETOOLONG). */
int shmr_ctl_mkdir_p(const char *path, mode_t mode);

/**
 * The run directory: @p opt (--run-dir), else the run_dir @p cfg's file
 * set, else $SHMR_RUN_DIR, else SHMR_RUN_DIR_DEFAULT; into @p run_dir,
 * and <run_dir>/<domain>.sock into @p sock_path.
 * Returns: 0, or -ENAMETOOLONG.
 */
int shmr_ctl_run_dir_resolve(const struct shmr_config *cfg, const char *opt,
			     char *run_dir, size_t rcap, char *sock_path,
			     size_t scap);

/**
 * The dataplane's binary: @p opt (--dataplane), else shmr-dataplane next
 * to this one, then in ../dataplane/, else "shmr-dataplane" (PATH).
 */
void shmr_ctl_dataplane_resolve(const char *opt, char *out, size_t cap);

#endif
