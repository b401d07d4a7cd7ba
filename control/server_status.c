/*
 * STATUS: the domain at a glance, as key=value lines (format.h), for
 * shmrctl status, the tests and shmrctl's completion (router_names).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <shmr/domain.h>

#include "arena.h"
#include "control_internal.h"
#include "domain.h"
#include "format.h"
#include "server.h"
#include "server_internal.h"
#include "spawn.h"

int shmr_ctl_srv_status(struct shmr_ctl_server *srv, char *buf, size_t cap)
{
	const struct shmr_domain_hdr *h = shmr_hdr(srv->dep.d->base);
	struct shmr_ctl_kv kv;

	shmr_ctl_kv_begin(&kv, buf, cap, 0);
	shmr_ctl_kv_add(&kv, "domain", "%s", srv->dep.cfg->domain);
	shmr_ctl_kv_add(&kv, "size", "%" PRIu64, srv->dep.d->size);
	shmr_ctl_kv_add(&kv, "hugepages", "%s",
			srv->dep.d->hugepages ? "yes" : "no");
	shmr_ctl_kv_add(&kv, "control_pid", "%d", (int)getpid());
	shmr_ctl_kv_add(&kv, "dataplane_pid", "%d",
			(int)shmr_ctl_spawn_dataplane_pid(srv->dep.sp));
	shmr_ctl_kv_add(&kv, "dataplane_starts", "%" PRIu64,
			atomic_load_explicit(&((struct shmr_domain_hdr *)h)
						      ->dataplane_starts,
					     memory_order_relaxed));
	{
		uint64_t dropped = 0;

		/* Relaxed: statistics, each word written by one lcore. */
		for (uint32_t i = 0; i < srv->dep.d->geo.nlcores; i++)
			dropped += atomic_load_explicit(
				&shmr_ctl_dom_stats(srv->dep.d, i)
					 ->admin_dropped,
				memory_order_relaxed);
		/* Meant for the admin endpoint, but its lanes were full (a
		 * control plane away or too slow). */
		shmr_ctl_kv_add(&kv, "admin_dropped", "%" PRIu64, dropped);
	}
	shmr_ctl_kv_add(&kv, "nlcores", "%" PRIu32, srv->dep.d->geo.nlcores);
	shmr_ctl_kv_add(&kv, "slot_size", "%" PRIu32,
			srv->dep.d->geo.slot_size);
	shmr_ctl_kv_add(&kv, "lane_size", "%" PRIu32,
			srv->dep.d->geo.lane_size);
	/* Lanes initialised again after a process left them unsound. */
	shmr_ctl_kv_add(&kv, "lanes_reinit", "%" PRIu64,
			srv->dep.d->lanes_reinit);
	shmr_ctl_kv_add(&kv, "endpoints", "%" PRIu32, srv->dep.m->alloc.nused);
	{
		unsigned draining = 0;

		for (uint32_t i = 0; i < srv->dep.m->alloc.nslots; i++)
			draining += srv->dep.m->alloc.slots[i].drain ==
				    SHMR_CTL_DRAIN_POLL;
		/* Closed or gone clients whose outbound lanes are still
		 * polled, and what such clients sent that the dataplane
		 * never took (drain.c). */
		shmr_ctl_kv_add(&kv, "draining", "%u", draining);
		shmr_ctl_kv_add(&kv, "close_dropped", "%" PRIu64,
				srv->dep.m->close_dropped);
	}
	shmr_ctl_kv_add(&kv, "routers", "%u", srv->dep.m->nrouters);
	{
		/* Their names, comma-separated (a name has no comma): what
		 * shmrctl's completion offers. */
		size_t cap = (size_t)srv->dep.m->nrouters * SHMR_NAME_MAX + 1;
		char *names = calloc(1, cap);
		size_t len = 0;

		if (!names)
			return -ENOMEM;
		for (unsigned i = 0; i < srv->dep.m->nrouters; i++)
			len += (size_t)snprintf(names + len, cap - len,
						"%s%s", i ? "," : "",
						srv->dep.m->routers[i].conf->name);
		shmr_ctl_kv_add_str(&kv, "router_names", names);
		free(names);
	}
	shmr_ctl_kv_add(&kv, "spec_version", "%" PRIu64, srv->dep.m->version);
	shmr_ctl_kv_add(&kv, "socket", "%s", srv->sock_path);
	/* The control socket's refusals (server_access.c). */
	shmr_ctl_kv_add(&kv, "connections_refused", "%" PRIu64,
			srv->conns_refused);
	shmr_ctl_kv_add(&kv, "requests_refused", "%" PRIu64,
			srv->requests_refused);
	shmr_ctl_kv_add(&kv, "idle_closed", "%" PRIu64, srv->idle_closed);
	shmr_ctl_arena_status(srv->dep.d, &kv);
	return shmr_ctl_kv_end(&kv);
}
