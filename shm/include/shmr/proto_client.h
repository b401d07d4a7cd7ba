/*
 * Client side of the control-socket protocol (see proto.h): the one
 * encoder of requests, shared by libshmr and shmrctl, and the transport.
 * Not installed.
 */
#ifndef SHMR_PROTO_CLIENT_H
#define SHMR_PROTO_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

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
 * Returns: the fd, or -SHMR_E_NO_DOMAIN (no socket there, or nobody
 *          listens on it), -SHMR_E_PERM, -errno.
 */
int shmr_proto_connect(const char *path);

/**
 * As shmr_proto_connect(), but while the socket refuses (a control plane
 * restarting: a killed one leaves its socket file behind) keep trying,
 * with a back-off from 5 ms up to 100 ms, for up to @p wait_ms
 * milliseconds (0: once).  While there is no socket file at all, it tries
 * for SHMR_PROTO_ABSENT_MS only: a wrong domain name, or a domain stopped
 * cleanly, is said at once rather than after the whole wait.
 *
 * Context: any thread; blocking (sleeps between tries).
 * Returns: as shmr_proto_connect(); -SHMR_E_NO_DOMAIN once the time is up.
 */
int shmr_proto_connect_wait(const char *path, int wait_ms);

/** How long shmr_proto_connect_wait() waits for a socket file to appear. */
#define SHMR_PROTO_ABSENT_MS 250

/**
 * Send @p req and wait for the answer into @p ans (NUL-terminated).  When
 * @p fd_out is not NULL, a descriptor passed with the answer lands there
 * (-1 when none).
 *
 * Context: any thread; blocking (one round trip).
 * Returns: 0 for "OK...", the negated code of an "ERR <code> ...",
 *          -EPIPE when the send found the connection gone (nothing went
 *          out: EPIPE, ECONNRESET, ENOTCONN), -SHMR_E_CONTROL_LOST when
 *          the request went out and the connection closed before an
 *          answer (its outcome is unknown), -SHMR_E_PROTO (a malformed
 *          answer), -errno.
 */
int shmr_proto_request(int sock, const char *req, char *ans, size_t cap,
		       int *fd_out);

/**
 * As shmr_proto_request(), taking up to @p nfds (at most
 * SHMR_PROTO_FDS_MAX) descriptors passed with the answer into @p fds, in
 * the order sent (-1 for each not sent); any more are closed.
 */
int shmr_proto_request_fds(int sock, const char *req, char *ans, size_t cap,
			   int *fds, unsigned nfds);

/* What ATTACH hands over: the domain's two memfds (layout.h). */
struct shmr_proto_attached {
	int domain_fd; /* the daemons' part: opened read-only for peers */
	int lanes_fd;  /* the lanes part: read-write */
	struct stat domain_st, lanes_st;
};

/**
 * ATTACH this build's layout version on @p sock: the domain's two
 * descriptors (close-on-exec) and their fstat() in *@p a.
 *
 * Context: any thread; blocking (one round trip).
 * Returns: 0; as shmr_proto_request() (the control plane's refusal, such
 *          as -SHMR_E_VERSION; -EPIPE, -SHMR_E_CONTROL_LOST); -SHMR_E_PROTO
 *          for a missing or empty descriptor; -errno.  Both descriptors
 *          are -1 on failure.
 */
int shmr_proto_attach(int sock, struct shmr_proto_attached *a);

/** Close what shmr_proto_attach() gave (each -1 afterwards). */
void shmr_proto_attached_close(struct shmr_proto_attached *a);

/**
 * Map @p a's domain (shmr_domain_map(): the domain part read-write only
 * when @p writable, which a peer's read-only descriptor refuses with
 * -EACCES) and check its header (shmr_layout_check()).
 * Returns: 0 with *@p base and *@p size (both parts); -errno,
 *          -SHMR_E_VERSION, -SHMR_E_PROTO.
 */
int shmr_proto_attached_map(const struct shmr_proto_attached *a,
			    int writable, void **base, size_t *size);

/**
 * Non-zero when request @p req may be sent again after its connection
 * died with it in flight: it only reads (ATTACH, STATUS, ROUTES, ROUTE,
 * INSPECT, ROUTEES, DLQ_LIST).  Every other verb, and anything unknown,
 * changes something or might: 0.
 *
 * Context: any; pure.
 */
int shmr_proto_repeatable(const char *req);

/**
 * A bound in milliseconds from environment variable @p name: unset,
 * empty, or not a number from 0 to @p max: @p def.
 *
 * Context: any thread not racing setenv(); reads the environment.
 */
int shmr_proto_env_ms(const char *name, int def, int max);

/**
 * How long to retry reconnecting, from SHMR_RECONNECT_MS in the
 * environment: milliseconds, 0 = never; unset, empty or not a number
 * from 0 to SHMR_PROTO_RECONNECT_MS_MAX: SHMR_PROTO_RECONNECT_MS_DEFAULT.
 *
 * Context: any thread not racing setenv(); reads the environment.
 */
int shmr_proto_reconnect_ms(void);

/**
 * A control-socket connection that survives the control plane's restart:
 * it knows its path, and its requests reconnect (shmr_proto_conn_request()).
 * The caller's memory; no field is read by anyone else.
 */
struct shmr_proto_conn {
	int fd;           /* -1: none; the next request reconnects */
	int reconnect_ms; /* the bound on one reconnect; 0: never */
	/* Run on each new connection before the request is sent again
	 * (libshmr: ATTACH again, and check the domain is ours): 0, or an
	 * error that the request then returns (the connection is closed). */
	int (*hello)(void *arg, int fd);
	void *hello_arg;
	char path[108]; /* sizeof(sockaddr_un.sun_path) */
};

/**
 * Set up @p c on the connected socket @p fd (-1: not connected yet) for
 * @p path.
 *
 * Context: any; no syscall.
 * Returns: 0, or -ENAMETOOLONG (nothing set).
 */
int shmr_proto_conn_init(struct shmr_proto_conn *c, const char *path, int fd,
			 int reconnect_ms, int (*hello)(void *arg, int fd),
			 void *hello_arg);

/**
 * One request on @p c, as shmr_proto_request(), surviving a control
 * plane that died and came back at the same path.  When the connection is
 * found gone, it is closed, and it reconnects (retrying for up to
 * c->reconnect_ms, then c->hello) and sends @p req on the new connection
 * when that cannot do it twice: the send found the connection gone, so
 * nothing went out, or @p req is shmr_proto_repeatable().  Otherwise the
 * connection stays closed until the next request.
 *
 * Context:     any thread; blocking (a round trip; up to c->reconnect_ms
 *              more, a few times at most, while the control plane is away).
 * Concurrency: one request at a time on @p c (the caller serialises).
 * Returns:     as shmr_proto_request(), never -EPIPE; -SHMR_E_CONTROL_LOST
 *              when a request that is not repeatable went out and no
 *              answer came (its outcome is unknown); -SHMR_E_NO_DOMAIN
 *              when the control plane cannot be reached (nothing was done:
 *              reconnecting is off, or it did not come back in time); or
 *              c->hello's error.
 */
int shmr_proto_conn_request(struct shmr_proto_conn *c, const char *req,
			    char *ans, size_t cap, int *fd_out);

/** Close @p c's connection (if any); @p c may be set up again. */
void shmr_proto_conn_close(struct shmr_proto_conn *c);

#ifdef __cplusplus
}
#endif
#endif
