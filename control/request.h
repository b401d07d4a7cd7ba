/*
 * Control-socket requests (request.c): the parser of one packet.
 * Internal to the control plane: not for direct inclusion outside control/
 * and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_REQUEST_H
#define SHMR_CONTROL_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/shmr.h>

#include "shmr_config.h"

#define SHMR_CTL_REQ_MAX 512 /* longest request accepted, in bytes */

enum shmr_ctl_verb {
	SHMR_REQ_ATTACH = 1,
	SHMR_REQ_OPEN,
	SHMR_REQ_CLAIM,
	SHMR_REQ_CLOSE,
	SHMR_REQ_REGISTER,
	SHMR_REQ_UNREGISTER,
	SHMR_REQ_ROUTES,
	SHMR_REQ_INSPECT,
	SHMR_REQ_STATUS,
	SHMR_REQ_STOP,
	SHMR_REQ_ROUTE,
	SHMR_REQ_ADD,
	SHMR_REQ_REMOVE,
	SHMR_REQ_DISABLE,
	SHMR_REQ_ENABLE,
	SHMR_REQ_REPLACE,
	SHMR_REQ_RESPAWN,
	SHMR_REQ_DLQ_LIST,
	SHMR_REQ_DLQ_REPLAY,
	SHMR_REQ_DRAIN,
	SHMR_REQ_ROUTEES,      /* ROUTEES ROUTER */
	SHMR_REQ_ROUTEE_ADD,   /* ROUTEE_ADD ROUTER NAME */
	SHMR_REQ_ROUTEE_REMOVE, /* ROUTEE_REMOVE ROUTER NAME */
	SHMR_REQ_POOL_ADJUST,  /* POOL_ADJUST ROUTER +N|-N */
	SHMR_REQ_KILL,         /* KILL ROUTER */
	SHMR_REQ_POISON,       /* POISON ROUTER */
	SHMR_REQ_RETIRE,       /* RETIRE SLOT GEN: a worker got a PoisonPill */
	SHMR_REQ_METRICS,      /* METRICS: the Prometheus text (metrics.h) */
};

struct shmr_ctl_req {
	uint32_t verb;     /* enum shmr_ctl_verb */
	uint32_t version;  /* ATTACH */
	struct shmr_pid pid; /* CLAIM, CLOSE, REGISTER, UNREGISTER */
	char name[SHMR_NAME_MAX]; /* REGISTER, UNREGISTER: the name; ROUTES,
				   * INSPECT, DLQ_*: the router */
	int json;          /* INSPECT ... json */
	int paged;         /* INSPECT, DLQ_LIST ... from=N: a part, from
			    * item (record) N */
	int fd_ok;         /* METRICS fd: a large answer as a memfd */
	uint32_t from;
	char route[SHMR_NAME_MAX]; /* ROUTE and the lifecycle verbs;
				    * ROUTEE_ADD/REMOVE: the routee */
	int32_t delta;     /* POOL_ADJUST: -SHMR_MAX_ROUTES..+SHMR_MAX_ROUTES */
	struct shmr_conf_route spec; /* ADD, REPLACE: name, program, args,
				      * cpus ("" = the control plane picks) */
};

/**
 * Parse one request packet of @p len bytes (not NUL-terminated; one
 * trailing '\n' is tolerated).  Everything is untrusted.
 *
 * Returns: 0, or the negated code to answer with, *why the message:
 *   -SHMR_E_TOO_BIG      longer than SHMR_CTL_REQ_MAX
 *   -SHMR_E_PROTO        empty, a byte outside printable ASCII, an empty
 *                        word, an unknown verb, a wrong number of words, a
 *                        number that is not a plain decimal uint32, an
 *                        INSPECT option other than "json" and "from=N", a
 *                        METRICS option other than "fd"
 *   -SHMR_E_NAME         a name not matching [A-Za-z0-9_.:-]{1,31}
 *   -SHMR_E_NO_ENDPOINT  a slot >= SHMR_MAX_ENDPOINTS or a gen of 0
 *   -SHMR_E_VERSION      ATTACH with a layout version other than ours
 *   POOL_ADJUST: -SHMR_E_PROTO for a change that is not a sign and
 *   decimal digits within +-SHMR_MAX_ROUTES.
 *   ADD/REPLACE: -SHMR_E_PROTO for more than SHMR_CONF_ARGS_MAX args, an
 *   arg of SHMR_CONF_ARG_MAX bytes or more, a program of
 *   SHMR_CONF_PATH_MAX or more, a bad cpu list.
 */
int shmr_ctl_req_parse(const char *buf, size_t len, struct shmr_ctl_req *out,
		       const char **why);

/** 1 when @p s is a valid name: 1..SHMR_NAME_MAX-1 of [A-Za-z0-9_.:-]. */
int shmr_ctl_name_valid(const char *s);

#endif
