/*
 * What the two files of the control socket's server share: server.c
 * (connections, requests, answers) and server_access.c (who may do
 * what).  Internal to server*.c: not for inclusion elsewhere.
 */
#ifndef SHMR_CONTROL_SERVER_INTERNAL_H
#define SHMR_CONTROL_SERVER_INTERNAL_H

#include <sys/socket.h>

#include "request.h"
#include "server.h"
#include "shmr_config.h"

/** "ERR <code> " then @p fmt with @p arg, on @p fd.  0, or -1. */
int shmr_ctl_srv_send_err(int fd, int code, const char *fmt, const char *arg);

/** Log a refusal or an idle close, at most once a second (the rest
 *  counted and said with the next line). */
__attribute__((format(printf, 2, 3)))
void shmr_ctl_srv_refusal_log(struct shmr_ctl_server *srv, const char *fmt,
			      ...);

/**
 * Set up conns[@p idx] for a new connection @p fd of @p cr: its role, and
 * whether it is kept only to be told why it is refused
 * (max_connections_per_user, the owner's reserve of the table).
 * Returns: 0, or -1 to close it at once.
 */
int shmr_ctl_srv_conn_admit(struct shmr_ctl_server *srv, unsigned idx,
			    int fd, const struct ucred *cr);

/*
 * The checks of one request, in this order (server.c's handle()): the
 * role, then (OPEN, REGISTER) the per-user share, then (ADD, REPLACE)
 * the program.  Each returns 0 with *refused = 0 when @p req may go on,
 * or sets *refused and returns the refusal's answer (SHMR_E_NOT_ALLOWED
 * with the reason; counted in requests_refused, logged).
 */
int shmr_ctl_srv_role_check(struct shmr_ctl_server *srv,
			    const struct shmr_ctl_conn *k,
			    const struct shmr_ctl_req *req, int *refused);
int shmr_ctl_srv_share_check(struct shmr_ctl_server *srv,
			     const struct shmr_ctl_conn *k,
			     const struct shmr_ctl_req *req, int *refused);
/** ... and the checked program (its canonical path) in @p spec. */
int shmr_ctl_srv_program_check(struct shmr_ctl_server *srv,
			       const struct shmr_ctl_conn *k,
			       const struct shmr_ctl_req *req,
			       struct shmr_conf_route *spec, int *refused);

/** STATUS's answer into @p buf.  Returns its length (format.h). */
int shmr_ctl_srv_status(struct shmr_ctl_server *srv, char *buf, size_t cap);

#endif
