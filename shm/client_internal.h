/*
 * What libshmr's files share: the attached domain.  Not installed; not
 * for direct inclusion by anything outside libshmr (shm/client*.c).
 */
#ifndef SHMR_CLIENT_INTERNAL_H
#define SHMR_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <shmr/arena.h>
#include <shmr/domain.h>
#include <shmr/proto_client.h>

struct shmr_domain {
	void *base; /* both parts (shmr_domain_map()), the first read-only */
	size_t size;
	struct shmr_domain_hdr *hdr;
	uint32_t slot_size;
	uint32_t lane_size; /* our copy: every copy in or out is bounded by it */
	uint32_t nlcores;
	uint32_t max_endpoints; /* slots a PID may name (our copy, bounded) */
	/* TSC ticks to ns (shmr_tsc_mult() of the header's tsc_hz, read
	 * once); 0: the domain's senders do not stamp, so neither do we. */
	uint64_t tsc_mult;
	unsigned nendpoints;
	/* Our copy of the payload arena's classes (arena.h), from attach. */
	struct shmr_arena_view arena;
	/* Only the control-socket calls use what follows: after the fields
	 * the fast path reads, so those keep their place. */
	/* The domain's identity (its two files), to tell a new control
	 * plane's domain from ours after a reconnect. */
	dev_t domain_dev, lanes_dev;
	ino_t domain_ino, lanes_ino;
	struct shmr_proto_conn conn; /* the control socket */
	struct shmr_endpoint *eps; /* the endpoints open on it, newest first */
};

/**
 * Order a control request after this process's sends: wait until the
 * dataplane has taken (forwarded, queued or failed) every slot that was
 * in the outbound lanes of @p d's endpoints when the call began.  Sends
 * made meanwhile (another thread's) are not waited for.  Bounded as
 * shmr_endpoint_close()'s wait: SHMR_CLOSE_WAIT_MS without progress on
 * an endpoint (default 2000), once: after a wait that gave up, the other
 * endpoints are not waited for; nor is a lane the dataplane cannot take.
 *
 * Context:     a call that talks to the control plane, before its request.
 * Concurrency: serialised with the other such calls on @p d (the endpoint
 *              list); reads other threads' lanes with acquire loads only.
 * Returns:     0, or how many slots were still not taken at the bound.
 */
int shmr_client_sends_taken(struct shmr_domain *d);

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
