/*
 * Client side of the control-socket protocol (see proto.h): the one
 * encoder of requests, shared by libshmr and shmrctl, and the transport.
 * Not installed.
 */
#ifndef SHMR_PROTO_CLIENT_H
#define SHMR_PROTO_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/proto.h>
#include <shmr/shmr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- encoding -------------------------------------------------------- */

/**
 * Non-zero when @p s is one word of a request: not NULL, not empty,
 * shorter than @p max bytes, no space, tab or newline.
 *
 * Context: any; pure.
 */
int shmr_proto_word_ok(const char *s, size_t max);

/**
 * Encode "VERB WORD..." into @p buf: @p verb, then each of @p words[0..n)
 * after one space.  The words are copied as they are: validate them first
 * (shmr_proto_word_ok()).
 *
 * Context: any; pure.
 * Returns: the request's length (NUL-terminated in @p buf), or
 *          -ENAMETOOLONG when it does not fit in @p cap bytes (@p buf then
 *          holds a truncated string).
 */
int shmr_proto_encode(char *buf, size_t cap, const char *verb,
		      const char *const *words, unsigned n);

/**
 * Encode "VERB [NAME ]SLOT GEN", the requests about one endpoint (CLOSE,
 * CLAIM, RETIRE; REGISTER and UNREGISTER with @p name).  @p name, when not
 * NULL, is copied as it is.
 *
 * Context: any; pure.
 * Returns: as shmr_proto_encode().
 */
int shmr_proto_pid_encode(char *buf, size_t cap, const char *verb,
			  const char *name, struct shmr_pid pid);

/** A route lifecycle request: VERB ROUTER ROUTE [CPUS] [PROGRAM ARG...]. */
struct shmr_proto_route_req {
	const char *verb;    /* ADD, REMOVE, DISABLE, DRAIN, ROUTE, ... */
	const char *router;
	const char *route;
	const char *cpus;    /* NULL: no such word; "": "-" (any one PU) */
	const char *program; /* NULL: no program nor arguments */
	const char *const *args;
	unsigned nargs;
};

/** What shmr_proto_route_encode() found wrong, in the order it checks. */
enum shmr_proto_bad {
	SHMR_PROTO_BAD_NONE = 0,
	SHMR_PROTO_BAD_NAME,  /* router or route not a name */
	SHMR_PROTO_BAD_CPUS,  /* cpus not a word of < SHMR_PROTO_CPUS_MAX */
	SHMR_PROTO_BAD_WORD,  /* program or an argument not a word */
	SHMR_PROTO_BAD_NARGS, /* more than SHMR_PROTO_ARGS_MAX arguments */
	SHMR_PROTO_BAD_LONG,  /* over SHMR_PROTO_ROUTE_REQ_MAX bytes */
};

/**
 * Validate and encode a route lifecycle request (proto.h) into @p buf.
 * The program and each argument are checked in order, each one's word
 * before the count, so a caller may name the first fault it finds.
 *
 * Context: any; pure.
 * Returns: the request's length, or -SHMR_E_NAME (what was wrong in
 *          @p bad when it is not NULL) or -ENAMETOOLONG (@p cap too small
 *          for a valid request).
 */
int shmr_proto_route_encode(char *buf, size_t cap,
			    const struct shmr_proto_route_req *r,
			    enum shmr_proto_bad *bad);

/* ---- transport ------------------------------------------------------- */

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

#ifdef __cplusplus
}
#endif
#endif
