/*
 * Names of every error code, shared by libshmr and the daemons.
 */
#include <limits.h>
#include <string.h>

#include <shmr/shmr.h>

static const char *const shmr_error_names[] = {
	[SHMR_E_NO_DOMAIN - SHMR_E_BASE] = "no such domain (is shmr-control running?)",
	[SHMR_E_PERM - SHMR_E_BASE] = "permission denied by the control plane",
	[SHMR_E_VERSION - SHMR_E_BASE] = "domain layout version mismatch",
	[SHMR_E_PROTO - SHMR_E_BASE] = "protocol error with the control plane",
	[SHMR_E_TIMEOUT - SHMR_E_BASE] = "timed out",
	[SHMR_E_TOO_BIG - SHMR_E_BASE] = "too large: more than a slot, the arena's largest class or a request holds",
	[SHMR_E_NAME - SHMR_E_BASE] = "empty, overlong or invalid name",
	[SHMR_E_NO_ENDPOINT - SHMR_E_BASE] = "no such endpoint, or none free",
	[SHMR_E_PROCESS_UNKNOWN - SHMR_E_BASE] = "name resolves to no process",
	[SHMR_E_NO_ROUTE - SHMR_E_BASE] = "no such router or route",
	[SHMR_E_DISCARDED - SHMR_E_BASE] = "discarded by the routing decision",
	[SHMR_E_DISABLED - SHMR_E_BASE] = "route disabled",
	[SHMR_E_BUSY - SHMR_E_BASE] = "route busy with a pending operation",
	[SHMR_E_MAILBOX_FULL - SHMR_E_BASE] = "target inbox full",
	[SHMR_E_ROUTE_DUPLICATE - SHMR_E_BASE] = "name already taken",
	[SHMR_E_ROUTE_RUNNING - SHMR_E_BASE] = "route worker already running",
	[SHMR_E_NOT_ALLOWED - SHMR_E_BASE] = "not allowed in the router's state",
	[SHMR_E_NO_ENV - SHMR_E_BASE] = "not started by shmr-control (no SHMR_SOCKET/SHMR_ENDPOINT)",
	[SHMR_E_NO_ROUTEES - SHMR_E_BASE] = "no routees",
	[SHMR_E_CONTROL_LOST - SHMR_E_BASE] = "the control plane went away during the request; its outcome is unknown",
	[SHMR_E_NO_BUFFER - SHMR_E_BASE] = "no free buffer in the arena's class for that size",
};

const char *shmr_strerror(int err)
{
	/* INT_MIN has no positive counterpart (a status a peer wrote). */
	if (err == INT_MIN)
		return "unknown error";
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	if (err > SHMR_E_BASE && err < SHMR_E_LAST &&
	    shmr_error_names[err - SHMR_E_BASE])
		return shmr_error_names[err - SHMR_E_BASE];
	if (err < SHMR_E_BASE)
		return strerrordesc_np(err) ? strerrordesc_np(err)
					    : "unknown error";
	return "unknown error";
}

