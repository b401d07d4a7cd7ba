/*
 * libshmr: looking names up in the spec the control plane publishes (a
 * registered name, or a route by its path "router/route"), under the
 * spec's seqcount with a bounded wait (shmr_spec_read_begin()): nothing
 * here asks the control plane, and no peer can make it spin.
 */
#include <errno.h>
#include <string.h>

#include <shmr/domain.h>
#include <shmr/shmr.h>

#include "client_internal.h"

/* "router/route": both parts non-empty names, and one '/' only. */
static int split_qualified(const char *name, char router[SHMR_NAME_MAX],
			   char route[SHMR_NAME_MAX])
{
	const char *slash = strchr(name, '/');
	size_t n = (size_t)(slash - name);

	if (n == 0 || n >= SHMR_NAME_MAX || strchr(slash + 1, '/'))
		return -SHMR_E_NAME;
	memcpy(router, name, n);
	memset(router + n, 0, SHMR_NAME_MAX - n);
	return shmr_name_copy(route, slash + 1);
}

/* One consistent read of the spec: a registered name (@p route NULL), or
 * route @p route of router @p key.  1: found, 0: not there, < 0: error. */
static int spec_find(const struct shmr_domain *d, const char *key,
		     const char *route, struct shmr_pid *found)
{
	const struct shmr_spec *s = shmr_spec_of(d->base);
	uint64_t seq, deadline = shmr_spec_deadline();
	int hit;

	do {
		if (shmr_spec_read_begin(s, deadline, &seq) < 0)
			return -SHMR_E_TIMEOUT;
		hit = 0;
		if (route) {
			/* Once, relaxed (the seqcount orders it), held
			 * below our copy of the header's max_routers. */
			uint32_t nr = __atomic_load_n(&s->nrouters,
						      __ATOMIC_RELAXED);

			if (nr > d->max_routers)
				nr = d->max_routers;
			for (uint32_t i = 0; i < nr && !hit; i++) {
				const struct shmr_spec_router *r =
					&s->routers[i];
				const struct shmr_spec_route *q =
					shmr_spec_routes_at(d->routes,
							    d->max_routes, i);
				uint32_t nq =
					shmr_spec_nroutes(r, d->max_routes);

				if (memcmp(r->name, key, SHMR_NAME_MAX) != 0)
					continue;
				for (uint32_t j = 0; j < nq; j++) {
					if (memcmp(q[j].name, route,
						   SHMR_NAME_MAX) == 0) {
						*found = q[j].pid;
						hit = 1;
						break;
					}
				}
				break;
			}
		} else {
			uint32_t n = s->nreg < d->max_names ? s->nreg
							    : d->max_names;
			for (uint32_t i = 0; i < n; i++) {
				if (memcmp(d->names[i].name, key,
					   SHMR_NAME_MAX) == 0) {
					*found = d->names[i].pid;
					hit = 1;
					break;
				}
			}
		}
	} while (shmr_spec_read_retry(s, seq));
	return hit;
}

int shmr_lookup(struct shmr_domain *d, const char *name, struct shmr_pid *out)
{
	char key[SHMR_NAME_MAX], route[SHMR_NAME_MAX];
	struct shmr_pid found;
	int rc;

	if (!name)
		return -SHMR_E_NAME;
	/* Registered names never hold a '/' (the control plane refuses
	 * them), so "router/route" cannot shadow one. */
	if (strchr(name, '/'))
		rc = split_qualified(name, key, route);
	else
		rc = shmr_name_copy(key, name);
	if (rc < 0)
		return -SHMR_E_NAME;
	rc = spec_find(d, key, strchr(name, '/') ? route : NULL, &found);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -SHMR_E_PROCESS_UNKNOWN;
	*out = found;
	return 0;
}
