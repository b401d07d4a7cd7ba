/*
 * The environment a route's worker is started with (worker_env.c): its
 * SHMR_* variables, set over the control plane's own environment by
 * procs.c, which builds the envp before it forks.  Internal to
 * shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_WORKER_ENV_H
#define SHMR_CONTROL_WORKER_ENV_H

#include <limits.h>

#include <shmr/proto.h>
#include <shmr/shmr.h>

struct shmr_ctl_worker_env {
	char sock[sizeof(SHMR_ENV_SOCKET) + PATH_MAX];
	char ep[sizeof(SHMR_ENV_ENDPOINT) + 24];
	char route[sizeof(SHMR_ENV_ROUTE) + SHMR_NAME_MAX];
	char router[sizeof(SHMR_ENV_ROUTER) + SHMR_NAME_MAX];
	char run_dir[sizeof(SHMR_ENV_RUN_DIR) + PATH_MAX];
	char domain[sizeof("SHMR_DOMAIN") + SHMR_NAME_MAX];
	const char *vars[7]; /* "NAME=value", NULL-terminated */
	unsigned n;
};

/**
 * The variables of the worker of route @p route of router @p router,
 * whose inbox is @p inbox, on the control socket @p sock_path of domain
 * @p domain in @p run_dir, into @p e (e->vars).
 * Returns: 0, or -ENAMETOOLONG (nothing is truncated).
 */
int shmr_ctl_worker_env(struct shmr_ctl_worker_env *e, const char *sock_path,
			const char *run_dir, const char *domain,
			const char *router, const char *route,
			struct shmr_pid inbox);

#endif
