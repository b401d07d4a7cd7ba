/*
 * Client side of the control-socket protocol: the requests' one encoder
 * (libshmr and shmrctl both build theirs here, so the two cannot drift
 * apart), then connect, one request, one answer, optionally a passed
 * descriptor.
 *
 * Surviving the control plane's death.  The socket is SOCK_SEQPACKET: a
 * request is one packet, delivered whole or not at all.  So a send that
 * fails because the connection is gone (EPIPE, ECONNRESET, ENOTCONN) put
 * nothing in front of any control plane, and the request may be sent on
 * a new connection whatever it is.  A send that succeeded and then meets
 * the end of the connection (EOF, ECONNRESET) may have been read and
 * acted on before the death, or not: only a request that just reads
 * (shmr_proto_repeatable()) is sent again; for the rest the caller hears
 * SHMR_E_CONTROL_LOST, and decides.  Reconnecting is bounded (a deadline
 * for each loss, a few losses per request), so no request waits forever
 * for a control plane that does not come back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <shmr/domain.h>
#include <shmr/layout.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

/* ---- encoding -------------------------------------------------------- */

int shmr_proto_word_ok(const char *s, size_t max)
{
	return s && *s && strlen(s) < max && !strpbrk(s, " \t\n");
}

int shmr_proto_encode(char *buf, size_t cap, const char *verb,
		      const char *const *words, unsigned n)
{
	size_t len;
	int k;

	k = snprintf(buf, cap, "%s", verb);
	if (k < 0 || (size_t)k >= cap)
		return -ENAMETOOLONG;
	len = (size_t)k;
	for (unsigned i = 0; i < n; i++) {
		k = snprintf(buf + len, cap - len, " %s", words[i]);
		if (k < 0 || (size_t)k >= cap - len)
			return -ENAMETOOLONG;
		len += (size_t)k;
	}
	return (int)len;
}

int shmr_proto_pid_encode(char *buf, size_t cap, const char *verb,
			  const char *name, struct shmr_pid pid)
{
	char slot[12], gen[12];
	const char *words[3];
	unsigned n = 0;

	snprintf(slot, sizeof(slot), "%u", pid.slot);
	snprintf(gen, sizeof(gen), "%u", pid.gen);
	if (name)
		words[n++] = name;
	words[n++] = slot;
	words[n++] = gen;
	return shmr_proto_encode(buf, cap, verb, words, n);
}

static int route_bad(enum shmr_proto_bad *bad, enum shmr_proto_bad what)
{
	if (bad)
		*bad = what;
	return -SHMR_E_NAME;
}

int shmr_proto_route_encode(char *buf, size_t cap,
			    const struct shmr_proto_route_req *r,
			    enum shmr_proto_bad *bad)
{
	/* router, route, cpus, program, the arguments */
	const char *words[4 + SHMR_PROTO_ARGS_MAX];
	size_t lim = cap < SHMR_PROTO_ROUTE_REQ_MAX + 1
			     ? cap
			     : SHMR_PROTO_ROUTE_REQ_MAX + 1;
	unsigned n = 0;
	int len;

	if (bad)
		*bad = SHMR_PROTO_BAD_NONE;
	if (!shmr_proto_word_ok(r->router, SHMR_NAME_MAX) ||
	    !shmr_proto_word_ok(r->route, SHMR_NAME_MAX))
		return route_bad(bad, SHMR_PROTO_BAD_NAME);
	words[n++] = r->router;
	words[n++] = r->route;
	if (r->cpus) {
		if (*r->cpus &&
		    !shmr_proto_word_ok(r->cpus, SHMR_PROTO_CPUS_MAX))
			return route_bad(bad, SHMR_PROTO_BAD_CPUS);
		words[n++] = *r->cpus ? r->cpus : "-";
	}
	if (r->program) {
		if (!shmr_proto_word_ok(r->program, SHMR_PROTO_PROGRAM_MAX) ||
		    (r->nargs && !r->args))
			return route_bad(bad, SHMR_PROTO_BAD_WORD);
		words[n++] = r->program;
		for (unsigned i = 0; i < r->nargs; i++) {
			if (!shmr_proto_word_ok(r->args[i], SHMR_PROTO_ARG_MAX))
				return route_bad(bad, SHMR_PROTO_BAD_WORD);
			if (i >= SHMR_PROTO_ARGS_MAX)
				return route_bad(bad, SHMR_PROTO_BAD_NARGS);
			words[n++] = r->args[i];
		}
	}
	len = shmr_proto_encode(buf, lim, r->verb, words, n);
	if (len == -ENAMETOOLONG && lim > SHMR_PROTO_ROUTE_REQ_MAX)
		return route_bad(bad, SHMR_PROTO_BAD_LONG);
	return len;
}

/* ---- transport ------------------------------------------------------- */

int shmr_proto_sock_path(const char *domain, char *buf, size_t cap)
{
	const char *dir = getenv(SHMR_ENV_RUN_DIR);
	int n;

	if (!domain || !*domain || strlen(domain) >= SHMR_NAME_MAX ||
	    strchr(domain, '/'))
		return -SHMR_E_NAME;
	if (!dir || !*dir)
		dir = SHMR_RUN_DIR_DEFAULT;
	n = snprintf(buf, cap, "%s/%s.sock", dir, domain);
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	return 0;
}

int shmr_proto_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		close(fd);
		if (err == ENOENT || err == ECONNREFUSED)
			return -SHMR_E_NO_DOMAIN;
		if (err == EACCES || err == EPERM)
			return -SHMR_E_PERM;
		return -err;
	}
	return fd;
}

int shmr_proto_request(int sock, const char *req, char *ans, size_t cap,
		       int *fd_out)
{
	return shmr_proto_request_fds(sock, req, ans, cap, fd_out,
				      fd_out ? 1 : 0);
}

int shmr_proto_request_fds(int sock, const char *req, char *ans, size_t cap,
			   int *fds, unsigned nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(SHMR_PROTO_FDS_MAX * sizeof(int))];
	} ctl;
	unsigned got = 0;
	struct iovec iov = { .iov_base = ans, .iov_len = cap - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;
	long code;
	char *end;

	if (nfds > SHMR_PROTO_FDS_MAX || cap < 2)
		return -EINVAL;
	for (unsigned i = 0; i < nfds; i++)
		fds[i] = -1;
	do
		n = send(sock, req, strlen(req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE || errno == ECONNRESET ||
				       errno == ENOTCONN
			       ? -EPIPE /* gone before: nothing went out */
			       : -errno;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -SHMR_E_CONTROL_LOST : -errno;
	if (n == 0)
		return -SHMR_E_CONTROL_LOST; /* closed with our request read */
	ans[n] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			/* Whatever came: ours in order, up to nfds; the rest
			 * closed (a cmsg cut short by MSG_CTRUNC keeps only
			 * what fitted, and those are closed or taken too). */
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < n; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(fd));
				if (got < nfds)
					fds[got++] = fd;
				else
					close(fd);
			}
		}
	}
	if (strncmp(ans, "OK", 2) == 0 &&
	    (ans[2] == '\0' || ans[2] == ' ' || ans[2] == '\n'))
		return 0;
	if (strncmp(ans, "ERR ", 4) == 0) {
		code = strtol(ans + 4, &end, 10);
		if (end != ans + 4 && code > 0 && code < SHMR_E_LAST)
			return -(int)code;
	}
	return -SHMR_E_PROTO;
}

static int absent(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 && errno == ENOENT;
}

int shmr_proto_connect_wait(const char *path, int wait_ms)
{
	struct timespec t0, now, pause;
	long delay_ms = 5, spent_ms;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = shmr_proto_connect(path);
		if (fd != -SHMR_E_NO_DOMAIN)
			return fd;
		clock_gettime(CLOCK_MONOTONIC, &now);
		spent_ms = (now.tv_sec - t0.tv_sec) * 1000 +
			   (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent_ms >= wait_ms)
			return fd;
		/* No socket file at all: no control plane is restarting here
		 * (a killed one leaves its socket, a new one binds it within
		 * moments), so a wrong name or a stopped domain fails soon. */
		if (spent_ms >= SHMR_PROTO_ABSENT_MS && absent(path))
			return fd;
		if (delay_ms > wait_ms - spent_ms)
			delay_ms = wait_ms - spent_ms;
		pause.tv_sec = delay_ms / 1000;
		pause.tv_nsec = (delay_ms % 1000) * 1000000;
		nanosleep(&pause, NULL);
		delay_ms = delay_ms * 2 > 100 ? 100 : delay_ms * 2;
	}
}

int shmr_proto_attach(int sock, struct shmr_proto_attached *a)
{
	char ans[256];
	int fds[2], rc;

	rc = shmr_proto_request_fds(sock, "ATTACH " SHMR_LAYOUT_VERSION_TEXT,
				    ans, sizeof(ans), fds, 2);
	a->domain_fd = fds[0];
	a->lanes_fd = fds[1];
	if (rc == 0 &&
	    (a->domain_fd < 0 || a->lanes_fd < 0 ||
	     fstat(a->domain_fd, &a->domain_st) < 0 ||
	     fstat(a->lanes_fd, &a->lanes_st) < 0 ||
	     a->domain_st.st_size <= 0 || a->lanes_st.st_size <= 0))
		rc = -SHMR_E_PROTO;
	if (rc < 0)
		shmr_proto_attached_close(a);
	return rc;
}

void shmr_proto_attached_close(struct shmr_proto_attached *a)
{
	if (a->domain_fd >= 0)
		close(a->domain_fd);
	if (a->lanes_fd >= 0)
		close(a->lanes_fd);
	a->domain_fd = a->lanes_fd = -1;
}

int shmr_proto_attached_map(const struct shmr_proto_attached *a,
			    int writable, void **base, size_t *size)
{
	uint64_t peer_off = (uint64_t)a->domain_st.st_size;
	uint64_t total = peer_off + (uint64_t)a->lanes_st.st_size;
	int rc = shmr_domain_map(a->domain_fd, a->lanes_fd, peer_off, total,
				 writable, base);

	if (rc < 0)
		return rc;
	rc = shmr_layout_check(*base, (size_t)total);
	if (rc == 0 && shmr_hdr(*base)->peer_off != peer_off)
		rc = -SHMR_E_PROTO;
	if (rc < 0) {
		shmr_domain_unmap(*base, total);
		*base = NULL;
		return rc;
	}
	*size = (size_t)total;
	return 0;
}

/* ---- surviving a restart ---------------------------------------------- */

int shmr_proto_repeatable(const char *req)
{
	/* The verbs that only read; anything else may change state. */
	static const char *const reads[] = {
		"ATTACH", "STATUS", "ROUTES", "ROUTE",
		"INSPECT", "ROUTEES", "DLQ_LIST", "METRICS",
	};
	size_t n = strcspn(req, " \n");

	for (unsigned i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		if (strlen(reads[i]) == n && memcmp(req, reads[i], n) == 0)
			return 1;
	return 0;
}

int shmr_proto_env_ms(const char *name, int def, int max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return def;
	return (int)v;
}

int shmr_proto_reconnect_ms(void)
{
	return shmr_proto_env_ms(SHMR_ENV_RECONNECT_MS,
				 SHMR_PROTO_RECONNECT_MS_DEFAULT,
				 SHMR_PROTO_RECONNECT_MS_MAX);
}

int shmr_proto_conn_init(struct shmr_proto_conn *c, const char *path, int fd,
			 int reconnect_ms, int (*hello)(void *arg, int fd),
			 void *hello_arg)
{
	if (strlen(path) >= sizeof(c->path))
		return -ENAMETOOLONG;
	strcpy(c->path, path);
	c->fd = fd;
	c->reconnect_ms = reconnect_ms;
	c->hello = hello;
	c->hello_arg = hello_arg;
	return 0;
}

void shmr_proto_conn_close(struct shmr_proto_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* A new connection to c->path, greeted; 0 or the error. */
static int reconnect(struct shmr_proto_conn *c)
{
	int fd, rc;

	if (c->reconnect_ms <= 0)
		return -SHMR_E_NO_DOMAIN;
	fd = shmr_proto_connect_wait(c->path, c->reconnect_ms);
	if (fd < 0)
		return fd;
	rc = c->hello ? c->hello(c->hello_arg, fd) : 0;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	c->fd = fd;
	return 0;
}

/* A control plane dying again and again while one request waits: after
 * this many new connections, give up (each is bounded by reconnect_ms). */
#define RECONNECTS_MAX 3

int shmr_proto_conn_request(struct shmr_proto_conn *c, const char *req,
			    char *ans, size_t cap, int *fd_out)
{
	int rc;

	if (fd_out)
		*fd_out = -1;
	if (cap)
		ans[0] = '\0'; /* no stale answer behind an error */
	for (int round = 0; round <= RECONNECTS_MAX; round++) {
		if (c->fd < 0) {
			rc = reconnect(c);
			if (rc == -EPIPE || rc == -SHMR_E_CONTROL_LOST)
				continue; /* gone again during the hello */
			if (rc < 0)
				return rc;
		}
		rc = shmr_proto_request(c->fd, req, ans, cap, fd_out);
		if (rc != -EPIPE && rc != -SHMR_E_CONTROL_LOST)
			return rc;
		shmr_proto_conn_close(c);
		if (rc == -SHMR_E_CONTROL_LOST && !shmr_proto_repeatable(req))
			return rc;
	}
	return -SHMR_E_NO_DOMAIN;
}
