/*
 * libshmr's calls that are control-socket requests on a domain and
 * nothing else: the route lifecycle, and the greeting of a new control
 * plane after the old one died (shm/client.c's essay).
 */
#include <sys/stat.h>
#include <unistd.h>

#include <shmr/domain.h>
#include <shmr/proto.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "client_internal.h"

/* ---- after a restart ------------------------------------------------- */

/*
 * The hello on a new connection (shmr_proto_conn's): ATTACH again, and
 * check that the descriptors passed back are the files we mapped (same
 * device and inode: while our mapping holds them no other file can have
 * them), so a control plane that made a new domain is never taken for
 * ours.  The descriptors are closed: we keep our mapping.
 */
int shmr_client_reattach(void *arg, int sock)
{
	struct shmr_domain *d = arg;
	struct shmr_proto_attached a;
	int rc = shmr_proto_attach(sock, &a);

	if (rc == 0 && (a.domain_st.st_dev != d->domain_dev ||
			a.domain_st.st_ino != d->domain_ino ||
			a.lanes_st.st_dev != d->lanes_dev ||
			a.lanes_st.st_ino != d->lanes_ino ||
			(size_t)(a.domain_st.st_size + a.lanes_st.st_size) !=
				d->size))
		rc = -SHMR_E_NO_DOMAIN; /* ours is gone: a new one was made */
	shmr_proto_attached_close(&a);
	return rc;
}

/* ---- route lifecycle ------------------------------------------------- */

/* VERB ROUTER NAME [CPUS] [PROGRAM ARG...], checked and encoded by the
 * encoder shmrctl uses too. */
static int life_request(struct shmr_domain *d, const char *verb,
			const char *router, const char *name,
			const char *cpus, const char *program,
			const char *const *args, unsigned nargs)
{
	const struct shmr_proto_route_req r = {
		.verb = verb, .router = router, .route = name, .cpus = cpus,
		.program = program, .args = args, .nargs = nargs,
	};
	char req[SHMR_PROTO_ROUTE_REQ_MAX + 1], ans[256];
	int rc;

	/* The encoder takes any word; the control plane's parser turns a
	 * control or non-ASCII byte away before it reads a name
	 * (-SHMR_E_PROTO): every bad name is ours to refuse (shmr.h). */
	if (!shmr_proto_name_ok(router) || !shmr_proto_name_ok(name))
		return -SHMR_E_NAME;
	rc = shmr_proto_route_encode(req, sizeof(req), &r, NULL);
	if (rc < 0)
		return rc;
	/* After what this process sent (shmr.h, "Order"): a request on the
	 * socket would overtake messages still in our outbound lanes. */
	(void)shmr_client_sends_taken(d);
	rc = shmr_proto_conn_request(&d->conn, req, ans, sizeof(ans), NULL);
	/* The control plane answers once it has published the change, but
	 * the routing lcores take it up a little later: until then they
	 * still route by the old table (a drained route still gets
	 * messages).  The call promises the new routing from its return. */
	if (rc == 0)
		shmr_client_wait_adopted(d);
	return rc;
}

int shmr_route_add(struct shmr_domain *d, const char *router,
		   const char *name, const char *program,
		   const char *const *args, unsigned nargs, const char *cpus)
{
	return life_request(d, "ADD", router, name, cpus ? cpus : "", program,
			    args, nargs);
}

int shmr_route_remove(struct shmr_domain *d, const char *router,
		      const char *name)
{
	return life_request(d, "REMOVE", router, name, NULL, NULL, NULL, 0);
}

int shmr_route_disable(struct shmr_domain *d, const char *router,
		       const char *name)
{
	return life_request(d, "DISABLE", router, name, NULL, NULL, NULL, 0);
}

int shmr_route_drain(struct shmr_domain *d, const char *router,
		     const char *name)
{
	return life_request(d, "DRAIN", router, name, NULL, NULL, NULL, 0);
}

int shmr_route_enable(struct shmr_domain *d, const char *router,
		      const char *name)
{
	return life_request(d, "ENABLE", router, name, NULL, NULL, NULL, 0);
}

int shmr_route_replace(struct shmr_domain *d, const char *router,
		       const char *name, const char *program,
		       const char *const *args, unsigned nargs)
{
	return life_request(d, "REPLACE", router, name, NULL, program, args,
			    nargs);
}

int shmr_route_respawn(struct shmr_domain *d, const char *router,
		       const char *name)
{
	return life_request(d, "RESPAWN", router, name, NULL, NULL, NULL, 0);
}
