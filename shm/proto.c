/*
 * Client side of the control-socket protocol: the requests' one encoder
 * (libshmr and shmrctl both build theirs here, so the two cannot drift
 * apart), then connect, one request, one answer, optionally a passed
 * descriptor.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = ans, .iov_len = cap - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;
	long code;
	char *end;

	if (fd_out)
		*fd_out = -1;
	if (cap < 2)
		return -EINVAL;
	do
		n = send(sock, req, strlen(req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE ? -SHMR_E_PROTO : -errno;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -SHMR_E_PROTO; /* the control plane closed on us */
	ans[n] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
			if (fd_out)
				*fd_out = fd;
			else
				close(fd);
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
