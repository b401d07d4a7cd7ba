/*
 * Behaviours loaded from shared objects.
 *
 * A DSO is loaded once per table (dlopen reference-counts the object) and
 * its init() runs on the update thread; its fini() runs when that table is
 * freed, after a grace period, so no lcore can be inside a callback with
 * that state any more.
 *
 * A consistent-hash router that names a dso loads it too, for its
 * message_key (ABI 2) alone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <shmr/behaviour.h>

#include "dso.h"

int shmr_dp_behaviour_load(struct shmr_dp_router *r, const char *path,
			   const char *arg, char *why, size_t whylen)
{
	const struct shmr_behaviour *ops;
	void *dl, *state = NULL;
	const char *err;
	int rc;

	if (path[0] == '\0') {
		snprintf(why, whylen, "no dso path");
		return -EINVAL;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		err = dlerror();
		snprintf(why, whylen, "%s", err ? err : "dlopen failed");
		return -ENOENT;
	}
	ops = dlsym(dl, "shmr_behaviour");
	if (!ops) {
		snprintf(why, whylen, "no symbol shmr_behaviour");
		dlclose(dl);
		return -ENOENT;
	}
	/* ABI 1 objects end at route_call: the fields after it are read
	 * only from ABI 2 on. */
	if (ops->abi < 1 || ops->abi > SHMR_BEHAVIOUR_ABI) {
		snprintf(why, whylen, "ABI %u, this dataplane reads 1 to %u",
			 ops->abi, SHMR_BEHAVIOUR_ABI);
		dlclose(dl);
		return -EPROTO;
	}
	if (r->behaviour == SHMR_BEH_DSO && !ops->route_message &&
	    !ops->route_call) {
		snprintf(why, whylen, "neither route_message nor route_call");
		dlclose(dl);
		return -EINVAL;
	}
	if (ops->init) {
		rc = ops->init(arg, &state);
		if (rc < 0) {
			snprintf(why, whylen, "init(\"%s\"): %s", arg,
				 strerror(-rc));
			dlclose(dl);
			return rc;
		}
	}
	r->dl = dl;
	r->ops = ops;
	r->state = state;
	r->key.key = ops->abi >= 2 ? ops->message_key : NULL;
	r->key.state = state;
	return 0;
}

void shmr_dp_behaviour_unload(struct shmr_dp_router *r)
{
	if (!r->dl)
		return;
	if (r->ops && r->ops->fini)
		r->ops->fini(r->state);
	dlclose(r->dl);
	r->dl = NULL;
	r->ops = NULL;
	r->state = NULL;
	r->key.key = NULL;
	r->key.state = NULL;
}
