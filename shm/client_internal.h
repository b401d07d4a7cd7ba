/*
 * What libshmr's files share: the attached domain.  Not installed; not
 * for direct inclusion by anything outside libshmr (shm/client*.c).
 */
#ifndef SHMR_CLIENT_INTERNAL_H
#define SHMR_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <shmr/domain.h>
#include <shmr/proto_client.h>

struct shmr_domain {
	void *base; /* both parts (shmr_domain_map()), the first read-only */
	size_t size;
	struct shmr_domain_hdr *hdr;
	uint32_t slot_size;
	uint32_t nlcores;
	uint32_t max_endpoints; /* slots a PID may name (our copy, bounded) */
	unsigned nendpoints;
	/* Only the control-socket calls use what follows: after the fields
	 * the fast path reads, so those keep their place. */
	/* The domain's identity (its two files), to tell a new control
	 * plane's domain from ours after a reconnect. */
	dev_t domain_dev, lanes_dev;
	ino_t domain_ino, lanes_ino;
	struct shmr_proto_conn conn; /* the control socket */
};

/**
 * The hello of @p arg's (a struct shmr_domain) control connection on a
 * new socket @p sock: ATTACH again and check it is the same domain.
 *
 * Context: inside shmr_proto_conn_request() on the domain's connection.
 * Returns: 0; -SHMR_E_NO_DOMAIN when the control plane serves another
 *          domain; shmr_proto_attach()'s errors.
 */
int shmr_client_reattach(void *arg, int sock);

#endif
