/*
 * Client side of the control-socket protocol (see proto.h).  Not installed.
 */
#ifndef SHMR_PROTO_CLIENT_H
#define SHMR_PROTO_CLIENT_H

#include <stddef.h>

#include <shmr/proto.h>

/** "<run_dir>/<domain>.sock" with run_dir from SHMR_RUN_DIR or the default. */
int shmr_proto_sock_path(const char *domain, char *buf, size_t cap);

/**
 * Connect to a control socket.
 * Returns: the fd, or -SHMR_E_NO_DOMAIN (no socket there), -SHMR_E_PERM,
 *          -errno.
 */
int shmr_proto_connect(const char *path);

/**
 * Send @p req and wait for the answer into @p ans (NUL-terminated).  When
 * @p fd_out is not NULL, a descriptor passed with the answer lands there
 * (-1 when none).
 * Returns: 0 for "OK...", the negated code of an "ERR <code> ...", or
 *          -SHMR_E_PROTO / -errno.
 */
int shmr_proto_request(int sock, const char *req, char *ans, size_t cap,
		       int *fd_out);

#endif
