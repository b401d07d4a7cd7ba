/*
 * A worker's SHMR_* variables (worker_env.h): where its control socket
 * is, which endpoint is its inbox, its route, router, run directory and
 * domain.  libshmr's shmr_attach_env() reads them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "worker_env.h"

/* "NAME=value" into @p buf, appended to e->vars. */
static int env_put(struct shmr_ctl_worker_env *e, char *buf, size_t cap,
		   const char *name, const char *val)
{
	int n = snprintf(buf, cap, "%s=%s", name, val);

	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	e->vars[e->n++] = buf;
	e->vars[e->n] = NULL;
	return 0;
}

int shmr_ctl_worker_env(struct shmr_ctl_worker_env *e, const char *sock_path,
			const char *run_dir, const char *domain,
			const char *router, const char *route,
			struct shmr_pid inbox)
{
	char ep[24];

	snprintf(ep, sizeof(ep), "%" PRIu32 ":%" PRIu32, inbox.slot,
		 inbox.gen);
	e->n = 0;
	if (env_put(e, e->sock, sizeof(e->sock), SHMR_ENV_SOCKET,
		    sock_path) < 0 ||
	    env_put(e, e->ep, sizeof(e->ep), SHMR_ENV_ENDPOINT, ep) < 0 ||
	    env_put(e, e->route, sizeof(e->route), SHMR_ENV_ROUTE, route) < 0 ||
	    env_put(e, e->router, sizeof(e->router), SHMR_ENV_ROUTER,
		    router) < 0 ||
	    env_put(e, e->run_dir, sizeof(e->run_dir), SHMR_ENV_RUN_DIR,
		    run_dir) < 0 ||
	    env_put(e, e->domain, sizeof(e->domain), "SHMR_DOMAIN", domain) < 0)
		return -ENAMETOOLONG;
	return 0;
}
