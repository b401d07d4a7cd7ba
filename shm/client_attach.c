/*
 * libshmr: attach and detach.  ATTACH on the control socket hands over
 * the domain's two memfds (layout.h); the daemons' part is mapped
 * read-only, the lanes part read-write, back to back at one address
 * (shmr_proto_attached_map()), and the descriptors are closed: the
 * mapping holds the files.  The connection stays open: it is how the
 * control plane knows we live, and it reconnects after a control-plane
 * restart (client.c's essay, client_ctl.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <shmr/domain.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "client_internal.h"

int shmr_attach_path(const char *sock_path, struct shmr_domain **out)
{
	struct shmr_domain *d;
	struct shmr_proto_attached a = { .domain_fd = -1, .lanes_fd = -1 };
	int sock, rc;

	*out = NULL;
	sock = shmr_proto_connect(sock_path);
	if (sock < 0)
		return sock;
	rc = shmr_proto_attach(sock, &a);
	if (rc == -EPIPE || rc == -SHMR_E_CONTROL_LOST)
		rc = -SHMR_E_NO_DOMAIN; /* it went away as we came */
	if (rc < 0)
		goto fail;
	d = calloc(1, sizeof(*d));
	if (!d) {
		rc = -ENOMEM;
		goto fail;
	}
	/* The daemons' part read-only: a store of ours there faults. */
	rc = shmr_proto_attached_map(&a, 0, &d->base, &d->size);
	if (rc == 0)
		rc = shmr_proto_conn_init(&d->conn, sock_path, sock,
					  shmr_proto_reconnect_ms(),
					  shmr_client_reattach,
					  d);
	if (rc < 0) {
		shmr_domain_unmap(d->base, d->size);
		free(d);
		goto fail;
	}
	d->domain_dev = a.domain_st.st_dev;
	d->domain_ino = a.domain_st.st_ino;
	d->lanes_dev = a.lanes_st.st_dev;
	d->lanes_ino = a.lanes_st.st_ino;
	/* The mapping holds the files; the descriptors are not needed. */
	shmr_proto_attached_close(&a);
	d->hdr = shmr_hdr(d->base);
	d->slot_size = d->hdr->slot_size;
	d->lane_size = d->hdr->lane_size;
	d->nlcores = d->hdr->nlcores;
	d->tsc_mult = shmr_tsc_mult(d->hdr->tsc_hz);
	/* Our copy, never above what this library was built for. */
	d->max_endpoints = d->hdr->max_endpoints < SHMR_MAX_ENDPOINTS
				   ? d->hdr->max_endpoints
				   : SHMR_MAX_ENDPOINTS;
	d->max_names = d->hdr->max_names < SHMR_MAX_NAMES ? d->hdr->max_names
							   : SHMR_MAX_NAMES;
	d->names = shmr_names_of(d->base);
	d->max_routers = d->hdr->max_routers < SHMR_MAX_ROUTERS
				 ? d->hdr->max_routers
				 : SHMR_MAX_ROUTERS;
	d->max_routes = d->hdr->max_routes < SHMR_MAX_ROUTES
				? d->hdr->max_routes
				: SHMR_MAX_ROUTES;
	d->routes = (char *)d->base + d->hdr->routes_off;
	shmr_arena_view_init(&d->arena, d->base);
	*out = d;
	return 0;
fail:
	shmr_proto_attached_close(&a);
	close(sock);
	return rc;
}

int shmr_attach(const char *name, struct shmr_domain **out)
{
	char path[512];
	int rc = shmr_proto_sock_path(name, path, sizeof(path));

	if (rc < 0) {
		*out = NULL;
		return rc;
	}
	return shmr_attach_path(path, out);
}

void shmr_detach(struct shmr_domain *d)
{
	if (!d)
		return;
	shmr_domain_unmap(d->base, d->size);
	shmr_proto_conn_close(&d->conn);
	free(d);
}

size_t shmr_payload_max(const struct shmr_domain *d)
{
	return d->slot_size - SHMR_HDR_SIZE;
}
