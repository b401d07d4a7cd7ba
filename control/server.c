/*
 * The control socket: <run_dir>/<domain>.sock, AF_UNIX SOCK_SEQPACKET, one
 * request per packet, one answer per request (see shmr/proto.h).
 *
 * Trust: the socket file is mode 0600 (0660 and chowned to the configured
 * socket_group), and every accepted peer is checked again with SO_PEERCRED
 * and its groups (SO_PEERGROUPS: the groups it connected with, not racy;
 * /proc/PID/status on a kernel without it); the file mode alone does not
 * survive a chmod or a renamed directory.  A refused peer's first request
 * is answered "ERR <SHMR_E_PERM> permission denied" and it is
 * disconnected.  Every request is parsed by shmr_ctl_req_parse() and
 * anything malformed gets "ERR <code> <message>".
 *
 * Roles (the table is verbs[] below; docs/operator-guide.md has it too):
 * the owner (our euid), root and members of admin_group may do
 * everything; socket_group's other members may use the appliance
 * (ATTACH, OPEN, REGISTER, ... as libshmr does) and read it (STATUS,
 * ROUTES, ROUTE, INSPECT, ROUTEES, DLQ_LIST), and every verb that
 * changes it is refused: "ERR <SHMR_E_NOT_ALLOWED> add: needs the owner
 * ...".  ADD and REPLACE may only start a program the configuration
 * names (programs.c), whoever asks.
 *
 * Nobody locks the others out: one uid other than the owner's and
 * root's holds at most max_connections_per_user connections (one more is
 * kept to answer its first request with why, then closed; beyond that a
 * connection is closed at once), and the last RESERVED_CONNS entries of
 * the table are kept for the owner and root.  A connection that has not
 * sent ATTACH is closed when it has not completed a request for
 * idle_timeout_ms (it could only be stalling: shmrctl sends its request
 * at once); an attached one is a process's lifelong link (its end is how
 * we learn that the process died) and never times out.  Each refusal and
 * idle close is counted (STATUS) and logged, at most one line a second.
 *
 * Never blocking: every socket is non-blocking.  A peer that does not read
 * its answers fills its receive queue and is disconnected rather than
 * stalling the control plane; a peer is served at most a few packets per
 * wake-up so that one cannot starve the rest.
 *
 * Lifetime: the endpoints a connection OPENed, the names it registered and
 * the inbox it CLAIMed belong to the connection: when it closes (the
 * process exited, or closed it) they are freed, dropped, released.  After
 * an adoption there are no connections yet: what a live process held is
 * owned by its pid and watched by its pidfd (owners[]) until the process
 * exits (then freed, as a closed connection's) or sends ATTACH again (then
 * bound to that connection, SO_PEERCRED's pid).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <shmr/domain.h>
#include <shmr/proto.h>

#include "control_internal.h"
#include "dlq.h"
#include "drain.h"
#include "format.h"
#include "programs.h"
#include "request.h"
#include "server.h"

#define PACKETS_PER_WAKE 16
/* Entries of conns[] that only the owner and root may take. */
#define RESERVED_CONNS 8

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59 /* Linux >= 4.13; older headers lack it */
#endif

/* Every verb: its name as shmrctl spells it, and whether it changes the
 * appliance (then only SHMR_CTL_ROLE_ADMIN may send it).  A verb missing
 * here is refused to everyone but an admin (admin = 1 is the default
 * that fails safe). */
static const struct {
	const char *word;
	int user; /* 1: socket_group members may send it */
} verbs[] = {
	[SHMR_REQ_ATTACH] = { "attach", 1 },
	[SHMR_REQ_OPEN] = { "open", 1 },
	[SHMR_REQ_CLAIM] = { "claim", 1 },
	[SHMR_REQ_CLOSE] = { "close", 1 },
	[SHMR_REQ_REGISTER] = { "register", 1 },
	[SHMR_REQ_UNREGISTER] = { "unregister", 1 },
	[SHMR_REQ_RETIRE] = { "retire", 1 }, /* its own route only */
	[SHMR_REQ_ROUTES] = { "routes", 1 },
	[SHMR_REQ_INSPECT] = { "inspect", 1 },
	[SHMR_REQ_STATUS] = { "status", 1 },
	[SHMR_REQ_ROUTE] = { "route", 1 },
	[SHMR_REQ_ROUTEES] = { "routees", 1 },
	[SHMR_REQ_DLQ_LIST] = { "dlq list", 1 },
	[SHMR_REQ_STOP] = { "stop", 0 },
	[SHMR_REQ_ADD] = { "add", 0 },
	[SHMR_REQ_REMOVE] = { "remove", 0 },
	[SHMR_REQ_DISABLE] = { "disable", 0 },
	[SHMR_REQ_ENABLE] = { "enable", 0 },
	[SHMR_REQ_REPLACE] = { "replace", 0 },
	[SHMR_REQ_RESPAWN] = { "respawn", 0 },
	[SHMR_REQ_DLQ_REPLAY] = { "dlq replay", 0 },
	[SHMR_REQ_DRAIN] = { "disable --drain", 0 },
	[SHMR_REQ_ROUTEE_ADD] = { "routee add", 0 },
	[SHMR_REQ_ROUTEE_REMOVE] = { "routee remove", 0 },
	[SHMR_REQ_POOL_ADJUST] = { "pool", 0 },
	[SHMR_REQ_KILL] = { "kill", 0 },
	[SHMR_REQ_POISON] = { "poison", 0 },
};

static char answer[SHMR_PROTO_MAX];

void shmr_ctl_server_init(struct shmr_ctl_server *srv,
			  const struct shmr_ctl_server_deps *dep,
			  const char *sock_path)
{
	*srv = (struct shmr_ctl_server){ .dep = *dep, .sock_path = sock_path,
					 .lfd = -1 };
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
		srv->conns[i].fd = -1;
	for (unsigned i = 0; i < SHMR_CTL_MAX_OWNERS; i++)
		srv->owners[i].pidfd = -1;
}

int shmr_ctl_server_watch(struct shmr_ctl_server *srv, pid_t pid, int pidfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned i;

	for (i = 0; i < SHMR_CTL_MAX_OWNERS; i++)
		if (srv->owners[i].pidfd < 0)
			break;
	if (i == SHMR_CTL_MAX_OWNERS)
		return -ENOSPC;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_OWNER << 32 | i;
	if (epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_ADD, pidfd, &ev) < 0)
		return -errno;
	srv->owners[i] = (struct shmr_ctl_owner){ pid, pidfd };
	return 0;
}

static void owner_forget(struct shmr_ctl_server *srv, unsigned idx)
{
	struct shmr_ctl_owner *o = &srv->owners[idx];

	epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_DEL, o->pidfd, NULL);
	close(o->pidfd);
	*o = (struct shmr_ctl_owner){ 0, -1 };
}

/* Endpoints just closed whose lanes are already empty go at once, in
 * the same publication (the loop looks again at the rest: drain.c). */
static void drain_now(struct shmr_ctl_server *srv)
{
	(void)shmr_ctl_drain_poll(srv->dep.d, srv->dep.m, srv->dep.dlq,
				  shmr_ctl_now_ms());
}

void shmr_ctl_server_owner_event(struct shmr_ctl_server *srv, unsigned idx)
{
	struct shmr_ctl_owner *o;
	int freed;

	if (idx >= SHMR_CTL_MAX_OWNERS || srv->owners[idx].pidfd < 0)
		return;
	o = &srv->owners[idx];
	freed = shmr_ctl_model_drop_owner(srv->dep.m,
					  shmr_ctl_owner_of_pid(o->pid));
	shmr_ctl_log("process %d gone: %d endpoint(s) freed", (int)o->pid,
		     freed);
	owner_forget(srv, idx);
	drain_now(srv);
	shmr_ctl_publish(srv->dep.d, srv->dep.m);
}

/* ATTACH from a process that owns endpoints, names or a claim by pid
 * (an adopted domain's client or worker): they are the connection's from
 * now on, and its pidfd watch ends. */
static void owner_attached(struct shmr_ctl_server *srv,
			   const struct shmr_ctl_conn *k)
{
	int n = shmr_ctl_model_rebind_owner(
		srv->dep.m, shmr_ctl_owner_of_pid(k->pid), k->id);

	if (n > 0)
		shmr_ctl_log("process %d attached again: %d endpoint(s) "
			     "bound to its connection", (int)k->pid, n);
	for (unsigned i = 0; i < SHMR_CTL_MAX_OWNERS; i++)
		if (srv->owners[i].pidfd >= 0 && srv->owners[i].pid == k->pid)
			owner_forget(srv, i);
}

int shmr_ctl_server_open(struct shmr_ctl_server *srv, int have_group,
			 gid_t group, int have_admin, gid_t admin)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	srv->have_group = have_group;
	srv->group = group;
	srv->have_admin = have_admin;
	srv->admin = admin;
	if (strlen(srv->sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, srv->sock_path);

	/* A live control plane answers a connect: refuse to steal its
	 * socket.  Refused or missing: a stale file from a dead one. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return -EADDRINUSE;
	}
	close(fd);
	if (unlink(srv->sock_path) < 0 && errno != ENOENT)
		return -errno;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Never a moment with looser permissions than intended. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (srv->have_group) {
		if (chown(srv->sock_path, (uid_t)-1, srv->group) < 0 ||
		    chmod(srv->sock_path, 0660) < 0) {
			rc = -errno;
			unlink(srv->sock_path);
			close(fd);
			return rc;
		}
	}
	if (listen(fd, 128) < 0) {
		rc = -errno;
		unlink(srv->sock_path);
		close(fd);
		return rc;
	}
	srv->lfd = fd;
	return 0;
}

int shmr_ctl_server_listen_fd(const struct shmr_ctl_server *srv)
{
	return srv->lfd;
}

void shmr_ctl_server_close_listener(struct shmr_ctl_server *srv)
{
	if (srv->lfd < 0)
		return;
	if (srv->dep.loop->epfd >= 0)
		epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_DEL, srv->lfd, NULL);
	close(srv->lfd);
	srv->lfd = -1;
	unlink(srv->sock_path);
}

/* Is @p gid among the supplementary groups of process @p pid? */
static int proc_in_group(pid_t pid, gid_t gid)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == gid)
				found = 1;
		}
		break;
	}
	fclose(f);
	return found;
}

/* Is @p gid among the groups socket @p fd's peer connected with?  1, 0,
 * or -1 when the kernel cannot say (no SO_PEERGROUPS). */
static int peer_in_group(int fd, gid_t gid)
{
	gid_t small[64], *g = small;
	socklen_t len = sizeof(small);
	int found = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0) {
		if (errno != ERANGE)
			return -1;
		/* len is what it needs (at most NGROUPS_MAX gids). */
		g = malloc(len);
		if (!g || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) <
				  0) {
			free(g);
			return -1;
		}
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (g[i] == gid)
			found = 1;
	if (g != small)
		free(g);
	return found;
}

static int in_group(int fd, const struct ucred *cr, gid_t gid)
{
	int rc;

	if (cr->gid == gid)
		return 1;
	rc = peer_in_group(fd, gid);
	return rc >= 0 ? rc : proc_in_group(cr->pid, gid);
}

static int is_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static int peer_role(const struct shmr_ctl_server *srv, int fd,
		     const struct ucred *cr)
{
	if (is_owner(cr->uid))
		return SHMR_CTL_ROLE_ADMIN;
	if (srv->have_admin && in_group(fd, cr, srv->admin))
		return SHMR_CTL_ROLE_ADMIN;
	if (srv->have_group && in_group(fd, cr, srv->group))
		return SHMR_CTL_ROLE_USER;
	return SHMR_CTL_ROLE_NONE;
}

/* A refusal or an idle close: counted by the caller, logged here at most
 * once a second (a peer that hammers us must not flood the log). */
__attribute__((format(printf, 2, 3)))
static void refusal_log(struct shmr_ctl_server *srv, const char *fmt, ...)
{
	uint64_t now = shmr_ctl_now_ms();
	char line[256];
	va_list ap;

	if (srv->log_ms && now - srv->log_ms < 1000) {
		srv->log_suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (srv->log_suppressed)
		shmr_ctl_log("%s (%u similar line(s) suppressed before it)",
			     line, srv->log_suppressed);
	else
		shmr_ctl_log("%s", line);
	srv->log_ms = now;
	srv->log_suppressed = 0;
}

/* An answer, with @p nfds descriptors (at most SHMR_PROTO_FDS_MAX) in
 * one SCM_RIGHTS message, in order. */
static int send_answer_fds(int fd, const char *buf, size_t len,
			   const int *fds, unsigned nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(SHMR_PROTO_FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > SHMR_PROTO_FDS_MAX)
		abort();
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

static int send_answer(int fd, const char *buf, size_t len, int pass_fd)
{
	return send_answer_fds(fd, buf, len, &pass_fd, pass_fd >= 0 ? 1 : 0);
}

static int send_err(int fd, int code, const char *fmt, const char *arg)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "ERR %d ", code < 0 ? -code : code);

	snprintf(buf + n, sizeof(buf) - (size_t)n, fmt, arg);
	return send_answer(fd, buf, strlen(buf), -1);
}

/* An error answer in the one wording of its code: "ERR N <the code's
 * text>: <what>", @p what naming the router, route or name it is about
 * (the same words from every verb; shmrctl prints the text as it is). */
static int send_code(int fd, int code, const char *what_fmt, const char *a,
		     const char *b)
{
	char what[2 * SHMR_NAME_MAX + 32], text[3 * SHMR_NAME_MAX + 96];

	snprintf(what, sizeof(what), what_fmt, a, b);
	snprintf(text, sizeof(text), "%s: %s", shmr_strerror(code), what);
	return send_err(fd, code, "%s", text);
}

/* A router @p name that is not there. */
static int send_no_router(int fd, const char *name)
{
	return send_code(fd, SHMR_E_NO_ROUTE, "router %s%s", name, "");
}

/* The connections of @p uid: all of them, and those kept only to be
 * refused. */
static void count_uid(const struct shmr_ctl_server *srv, uid_t uid,
		      unsigned *all, unsigned *refusing, unsigned *free_left)
{
	*all = *refusing = *free_left = 0;
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++) {
		const struct shmr_ctl_conn *k = &srv->conns[i];

		if (k->fd < 0) {
			++*free_left;
			continue;
		}
		if (k->uid != uid)
			continue;
		++*all;
		if (k->refuse_code)
			++*refusing;
	}
}

/*
 * Set up conns[@p idx] for @p fd: its role, and whether it is kept only
 * to be told why it is refused.  0, or -1 to close it at once (a uid
 * that already has a refusal pending, or the table's reserve).
 */
static int conn_admit(struct shmr_ctl_server *srv, unsigned idx, int fd,
		      const struct ucred *cr)
{
	struct shmr_ctl_conn *k = &srv->conns[idx];
	uint32_t cap = srv->dep.cfg->max_connections_per_user;
	unsigned all, refusing, free_left;

	/* Before conns[idx] is taken: what was there already. */
	count_uid(srv, cr->uid, &all, &refusing, &free_left);
	*k = (struct shmr_ctl_conn){
		.fd = fd, .id = ++srv->next_conn_id, .pid = cr->pid,
		.uid = cr->uid, .gid = cr->gid,
		.role = peer_role(srv, fd, cr),
		.idle_deadline_ms =
			shmr_ctl_now_ms() + srv->dep.cfg->idle_timeout_ms,
	};
	if (is_owner(cr->uid))
		return 0;
	if (free_left <= RESERVED_CONNS || (all >= cap && refusing > 0)) {
		srv->conns_refused++;
		refusal_log(srv,
			    "connection of process %d (uid %u) closed: %s",
			    (int)cr->pid, (unsigned)cr->uid,
			    free_left <= RESERVED_CONNS
				    ? "the rest of the table is the owner's"
				    : "over max_connections_per_user");
		return -1;
	}
	if (k->role == SHMR_CTL_ROLE_NONE) {
		k->refuse_code = SHMR_E_PERM;
		snprintf(k->refusal, sizeof(k->refusal), "permission denied");
	} else if (all >= cap) {
		srv->conns_refused++;
		k->refuse_code = SHMR_E_NOT_ALLOWED;
		snprintf(k->refusal, sizeof(k->refusal),
			 "too many connections of uid %u "
			 "(max_connections_per_user = %" PRIu32 ")",
			 (unsigned)cr->uid, cap);
		refusal_log(srv, "connection of process %d refused: %s",
			    (int)cr->pid, k->refusal);
	}
	return 0;
}

void shmr_ctl_server_accept(struct shmr_ctl_server *srv)
{
	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		unsigned idx;
		int fd = accept4(srv->lfd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				shmr_ctl_warn("accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
			close(fd);
			continue;
		}
		for (idx = 0; idx < SHMR_CTL_MAX_CONNS; idx++)
			if (srv->conns[idx].fd < 0)
				break;
		if (idx == SHMR_CTL_MAX_CONNS) {
			send_err(fd, EMFILE, "%s", "too many connections");
			close(fd);
			continue;
		}
		if (conn_admit(srv, idx, fd, &cr) < 0) {
			srv->conns[idx].fd = -1;
			close(fd);
			continue;
		}
		ev.data.u64 = (uint64_t)SHMR_CTL_TAG_CONN << 32 | idx;
		if (epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_ADD, fd, &ev) <
		    0) {
			srv->conns[idx].fd = -1;
			close(fd);
			continue;
		}
	}
}

static void conn_close(struct shmr_ctl_server *srv, unsigned idx)
{
	struct shmr_ctl_conn *k = &srv->conns[idx];
	int freed;

	if (k->fd < 0)
		return;
	epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	freed = shmr_ctl_model_drop_owner(srv->dep.m, k->id);
	if (freed > 0)
		shmr_ctl_log("process %d gone: %d endpoint(s) freed",
			     (int)k->pid, freed);
	k->fd = -1;
	k->id = 0;
	drain_now(srv);
	shmr_ctl_publish(srv->dep.d, srv->dep.m);
}

uint64_t shmr_ctl_server_next_ms(const struct shmr_ctl_server *srv)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++) {
		const struct shmr_ctl_conn *k = &srv->conns[i];

		if (k->fd >= 0 && k->idle_deadline_ms &&
		    (!next || k->idle_deadline_ms < next))
			next = k->idle_deadline_ms;
	}
	return next;
}

void shmr_ctl_server_due(struct shmr_ctl_server *srv, uint64_t now)
{
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++) {
		struct shmr_ctl_conn *k = &srv->conns[i];

		if (k->fd < 0 || !k->idle_deadline_ms ||
		    k->idle_deadline_ms > now)
			continue;
		srv->idle_closed++;
		refusal_log(srv,
			    "connection of process %d (uid %u) closed: no "
			    "request completed in idle_timeout_ms = %" PRIu32,
			    (int)k->pid, (unsigned)k->uid,
			    srv->dep.cfg->idle_timeout_ms);
		conn_close(srv, i);
	}
}

void shmr_ctl_server_close_all(struct shmr_ctl_server *srv)
{
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
		if (srv->conns[i].fd >= 0) {
			epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_DEL,
				  srv->conns[i].fd, NULL);
			close(srv->conns[i].fd);
			srv->conns[i].fd = -1;
		}
	for (unsigned i = 0; i < SHMR_CTL_MAX_OWNERS; i++)
		if (srv->owners[i].pidfd >= 0)
			owner_forget(srv, i);
}

static int answer_status(struct shmr_ctl_server *srv, char *buf, size_t cap)
{
	const struct shmr_domain_hdr *h = shmr_hdr(srv->dep.d->base);
	struct shmr_ctl_kv kv;

	shmr_ctl_kv_begin(&kv, buf, cap, 0);
	shmr_ctl_kv_add(&kv, "domain", "%s", srv->dep.cfg->domain);
	shmr_ctl_kv_add(&kv, "size", "%" PRIu64, srv->dep.d->size);
	shmr_ctl_kv_add(&kv, "hugepages", "%s",
			srv->dep.d->hugepages ? "yes" : "no");
	shmr_ctl_kv_add(&kv, "control_pid", "%d", (int)getpid());
	shmr_ctl_kv_add(&kv, "dataplane_pid", "%d",
			(int)shmr_ctl_spawn_dataplane_pid(srv->dep.sp));
	shmr_ctl_kv_add(&kv, "dataplane_starts", "%" PRIu64,
			atomic_load_explicit(&((struct shmr_domain_hdr *)h)
						      ->dataplane_starts,
					     memory_order_relaxed));
	{
		uint64_t dropped = 0;

		/* Relaxed: statistics, each word written by one lcore. */
		for (uint32_t i = 0; i < srv->dep.d->geo.nlcores; i++)
			dropped += atomic_load_explicit(
				&shmr_ctl_dom_stats(srv->dep.d, i)
					 ->admin_dropped,
				memory_order_relaxed);
		/* Meant for the admin endpoint, but its lanes were full (a
		 * control plane away or too slow). */
		shmr_ctl_kv_add(&kv, "admin_dropped", "%" PRIu64, dropped);
	}
	shmr_ctl_kv_add(&kv, "nlcores", "%" PRIu32, srv->dep.d->geo.nlcores);
	shmr_ctl_kv_add(&kv, "slot_size", "%" PRIu32,
			srv->dep.d->geo.slot_size);
	shmr_ctl_kv_add(&kv, "lane_size", "%" PRIu32,
			srv->dep.d->geo.lane_size);
	/* Lanes initialised again after a process left them unsound. */
	shmr_ctl_kv_add(&kv, "lanes_reinit", "%" PRIu64,
			srv->dep.d->lanes_reinit);
	shmr_ctl_kv_add(&kv, "endpoints", "%" PRIu32, srv->dep.m->alloc.nused);
	{
		unsigned draining = 0;

		for (uint32_t i = 0; i < srv->dep.m->alloc.nslots; i++)
			draining += srv->dep.m->alloc.slots[i].drain ==
				    SHMR_CTL_DRAIN_POLL;
		/* Closed or gone clients whose outbound lanes are still
		 * polled, and what such clients sent that the dataplane
		 * never took (drain.c). */
		shmr_ctl_kv_add(&kv, "draining", "%u", draining);
		shmr_ctl_kv_add(&kv, "close_dropped", "%" PRIu64,
				srv->dep.m->close_dropped);
	}
	shmr_ctl_kv_add(&kv, "routers", "%u", srv->dep.m->nrouters);
	{
		/* Their names, comma-separated (a name has no comma): what
		 * shmrctl's completion offers. */
		char names[SHMR_MAX_ROUTERS * SHMR_NAME_MAX + 1] = "";
		size_t len = 0;

		for (unsigned i = 0; i < srv->dep.m->nrouters; i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len,
						"%s%s", i ? "," : "",
						srv->dep.m->routers[i].conf->name);
		shmr_ctl_kv_add(&kv, "router_names", "%s", names);
	}
	shmr_ctl_kv_add(&kv, "spec_version", "%" PRIu64, srv->dep.m->version);
	shmr_ctl_kv_add(&kv, "socket", "%s", srv->sock_path);
	/* The control socket's refusals (see the top of this file). */
	shmr_ctl_kv_add(&kv, "connections_refused", "%" PRIu64,
			srv->conns_refused);
	shmr_ctl_kv_add(&kv, "requests_refused", "%" PRIu64,
			srv->requests_refused);
	shmr_ctl_kv_add(&kv, "idle_closed", "%" PRIu64, srv->idle_closed);
	return shmr_ctl_kv_end(&kv);
}

/* Handle one request; returns -1 when the connection must be closed. */
/* One lifecycle request; 0 or the negated code to answer. */
static int lifecycle(struct shmr_ctl_server *srv, const struct shmr_ctl_conn *k,
		     const struct shmr_ctl_req *req)
{
	static const char *const verb[] = {
		[SHMR_REQ_ADD] = "add", [SHMR_REQ_REMOVE] = "remove",
		[SHMR_REQ_DISABLE] = "disable", [SHMR_REQ_ENABLE] = "enable",
		[SHMR_REQ_REPLACE] = "replace", [SHMR_REQ_RESPAWN] = "respawn",
		[SHMR_REQ_DRAIN] = "drain",
	};
	struct shmr_ctl_life *l = srv->dep.life;
	int rc;

	if (srv->dep.loop->stopping)
		return -SHMR_E_NOT_ALLOWED;
	switch (req->verb) {
	case SHMR_REQ_ADD:
		rc = shmr_ctl_life_add(l, req->name, &req->spec);
		break;
	case SHMR_REQ_REMOVE:
		rc = shmr_ctl_life_remove(l, req->name, req->route);
		break;
	case SHMR_REQ_DISABLE:
		rc = shmr_ctl_life_disable(l, req->name, req->route);
		break;
	case SHMR_REQ_DRAIN:
		rc = shmr_ctl_life_drain(l, req->name, req->route);
		break;
	case SHMR_REQ_ENABLE:
		rc = shmr_ctl_life_enable(l, req->name, req->route);
		break;
	case SHMR_REQ_REPLACE:
		rc = shmr_ctl_life_replace(l, req->name, req->route,
					   &req->spec);
		break;
	case SHMR_REQ_RESPAWN:
		rc = shmr_ctl_life_respawn(l, req->name, req->route);
		break;
	default:
		return -SHMR_E_PROTO;
	}
	shmr_ctl_log("%s %s/%s from process %d: %s", verb[req->verb],
		     req->name, req->route, (int)k->pid,
		     rc == 0 ? "ok"
			     : rc <= -SHMR_E_BASE ? shmr_strerror(rc)
						  : strerror(-rc));
	return rc;
}

/* DLQ_LIST / DLQ_REPLAY of router @p ri (see shmr/proto.h). */
static int dlq_request(struct shmr_ctl_server *srv, struct shmr_ctl_conn *k,
		       const struct shmr_ctl_req *req, unsigned ri)
{
	unsigned char *buf;
	size_t size;
	unsigned count, sent, left;
	int rc, n, corrupt;

	if (req->verb == SHMR_REQ_DLQ_REPLAY) {
		rc = shmr_ctl_dlq_replay(srv->dep.dlq, ri, &sent, &left);
		if (rc < 0)
			return send_err(k->fd, rc, "%s", shmr_strerror(rc));
		n = snprintf(answer, sizeof(answer), "OK %u %u", sent, left);
		return send_answer(k->fd, answer, (size_t)n, -1);
	}
	rc = shmr_ctl_dlq_load(srv->dep.dlq, ri, &buf, &size);
	if (rc < 0)
		return send_err(k->fd, rc, "%s", shmr_strerror(rc));
	/* Room for the first line; the records follow it. */
	n = shmr_ctl_dlq_format(buf, size, answer + 32, sizeof(answer) - 32,
				&count, &corrupt);
	free(buf);
	if (n < 0)
		return send_err(k->fd, SHMR_E_TOO_BIG, "%s", "answer too large");
	{
		char head[32];
		int h = snprintf(head, sizeof(head), "OK %u %s\n", count,
				 corrupt ? "corrupt" : "ok");

		memmove(answer + h, answer + 32, (size_t)n);
		memcpy(answer, head, (size_t)h);
		return send_answer(k->fd, answer, (size_t)(h + n), -1);
	}
}

/* The role of the process behind client endpoint slot @p sl: its
 * connection's, or, for one owned by pid (adopted, not attached again),
 * what its credentials in /proc give. */
static int slot_role(const struct shmr_ctl_server *srv,
		     const struct shmr_ctl_slot *sl)
{
	char path[64];
	struct stat st;

	if (!(sl->owner & SHMR_CTL_OWNER_PID)) {
		for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
			if (srv->conns[i].fd >= 0 &&
			    srv->conns[i].id == sl->owner)
				return srv->conns[i].role;
		return SHMR_CTL_ROLE_NONE;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)sl->os_pid);
	if (stat(path, &st) < 0)
		return SHMR_CTL_ROLE_NONE;
	if (is_owner(st.st_uid) ||
	    (srv->have_admin && proc_in_group(sl->os_pid, srv->admin)))
		return SHMR_CTL_ROLE_ADMIN;
	return SHMR_CTL_ROLE_USER;
}

int shmr_ctl_server_msg_allowed(struct shmr_ctl_server *srv, unsigned r,
				const struct shmr_msg *m)
{
	const struct shmr_ctl_slot *sl;

	if (m->type == SHMR_TYPE_GET_ROUTEES)
		return 1;
	/* The dataplane checked m->from against the lane it came on. */
	sl = shmr_ctl_alloc_lookup(&srv->dep.m->alloc, m->from);
	/* Not a client's: a router (the dataplane) or a route's inbox (a
	 * worker this control plane started). */
	if (sl && (sl->kind != SHMR_EPK_CLIENT ||
		   slot_role(srv, sl) == SHMR_CTL_ROLE_ADMIN))
		return 1;
	srv->requests_refused++;
	refusal_log(srv,
		    "router %s: management message type 0x%" PRIx32
		    " from %u:%u (process %d) refused: needs the owner, root "
		    "or admin_group",
		    srv->dep.m->routers[r].conf->name, m->type, m->from.slot,
		    m->from.gen, sl ? (int)sl->os_pid : 0);
	return 0;
}

/* Answer @p req with SHMR_E_NOT_ALLOWED and @p why; counted, logged. */
static int refuse(struct shmr_ctl_server *srv, const struct shmr_ctl_conn *k,
		  const char *why)
{
	srv->requests_refused++;
	refusal_log(srv, "refused from process %d (uid %u): %s", (int)k->pid,
		    (unsigned)k->uid, why);
	return send_err(k->fd, SHMR_E_NOT_ALLOWED, "%s", why);
}

/* May @p k send @p req?  0, or the refusal's answer (see verbs[]). */
static int role_check(struct shmr_ctl_server *srv,
		      const struct shmr_ctl_conn *k,
		      const struct shmr_ctl_req *req, int *refused)
{
	const char *word = req->verb < sizeof(verbs) / sizeof(verbs[0]) &&
					   verbs[req->verb].word
				   ? verbs[req->verb].word
				   : "request";
	char why[200];

	*refused = 0;
	if (k->role == SHMR_CTL_ROLE_ADMIN ||
	    (req->verb < sizeof(verbs) / sizeof(verbs[0]) &&
	     verbs[req->verb].user))
		return 0;
	*refused = 1;
	if (srv->have_admin)
		snprintf(why, sizeof(why),
			 "%s: needs the owner (uid %u), root or admin_group "
			 "'%s'",
			 word, (unsigned)geteuid(), srv->dep.cfg->admin_group);
	else
		snprintf(why, sizeof(why),
			 "%s: needs the owner (uid %u) or root (no "
			 "admin_group is configured)",
			 word, (unsigned)geteuid());
	return refuse(srv, k, why);
}

/* ADD, REPLACE: @p req's spec with its program checked against the
 * configuration (programs.c) into @p spec; 0, or *refused and the
 * refusal's answer. */
static int program_check(struct shmr_ctl_server *srv,
			 const struct shmr_ctl_conn *k,
			 const struct shmr_ctl_req *req,
			 struct shmr_conf_route *spec, int *refused)
{
	char why[SHMR_CONF_PATH_MAX + 96];

	*refused = 0;
	*spec = req->spec;
	if (shmr_ctl_program_allowed(srv->dep.cfg, req->spec.program,
				     spec->program,
				     sizeof(spec->program)) == 0)
		return 0;
	*refused = 1;
	snprintf(why, sizeof(why),
		 "%s: program %s is not in the configuration's programs",
		 verbs[req->verb].word, req->spec.program);
	return refuse(srv, k, why);
}

/* The uid of connection id @p owner; -1 when it is not a live one. */
static long long uid_of_conn(const struct shmr_ctl_server *srv,
			     uint64_t owner)
{
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
		if (srv->conns[i].fd >= 0 && srv->conns[i].id == owner)
			return srv->conns[i].uid;
	return -1;
}

/*
 * OPEN, REGISTER: a user other than the owner and root holds at most
 * max_endpoints_per_user client endpoints, and as many names, so that
 * one user cannot take the domain's endpoint slots or its registry from
 * the others.  0, or *refused and the refusal's answer.
 */
static int share_check(struct shmr_ctl_server *srv,
		       const struct shmr_ctl_conn *k,
		       const struct shmr_ctl_req *req, int *refused)
{
	const struct shmr_ctl_model *m = srv->dep.m;
	uint32_t cap = srv->dep.cfg->max_endpoints_per_user;
	unsigned held = 0;
	char why[200];

	*refused = 0;
	if (is_owner(k->uid))
		return 0;
	if (req->verb == SHMR_REQ_OPEN) {
		for (uint32_t i = 0; i < m->alloc.nslots; i++) {
			const struct shmr_ctl_slot *sl = &m->alloc.slots[i];

			held += sl->state == SHMR_CTL_SLOT_USED &&
				sl->kind == SHMR_EPK_CLIENT &&
				uid_of_conn(srv, sl->owner) ==
					(long long)k->uid;
		}
	} else {
		for (unsigned i = 0; i < m->nnames; i++)
			held += uid_of_conn(srv, m->names[i].owner) ==
				(long long)k->uid;
	}
	if (held < cap)
		return 0;
	*refused = 1;
	snprintf(why, sizeof(why),
		 "%s: uid %u holds %u %s (max_endpoints_per_user = %" PRIu32
		 ")",
		 verbs[req->verb].word, (unsigned)k->uid, held,
		 req->verb == SHMR_REQ_OPEN ? "endpoints" : "names", cap);
	return refuse(srv, k, why);
}

/*
 * A mutator (a route's lifecycle, a pool's routees) on a stopped router
 * is refused before any of its arguments is checked, as Ergo's router
 * does: the router's name is all that is read (@p req->name, which the
 * parser fills first, even from a request it then rejects).  1 when
 * @p req is such a request.
 */
static int on_stopped_router(const struct shmr_ctl_server *srv,
			     const struct shmr_ctl_req *req)
{
	static const uint64_t mutators =
		1ull << SHMR_REQ_ADD | 1ull << SHMR_REQ_REMOVE |
		1ull << SHMR_REQ_DISABLE | 1ull << SHMR_REQ_DRAIN |
		1ull << SHMR_REQ_ENABLE | 1ull << SHMR_REQ_REPLACE |
		1ull << SHMR_REQ_RESPAWN | 1ull << SHMR_REQ_ROUTEE_ADD |
		1ull << SHMR_REQ_ROUTEE_REMOVE | 1ull << SHMR_REQ_POOL_ADJUST;
	const struct shmr_ctl_router *r;

	_Static_assert(SHMR_REQ_RETIRE < 64, "verbs fit the mask");
	if (req->verb >= 64 || !(mutators >> req->verb & 1))
		return 0;
	r = req->name[0] ? shmr_ctl_model_router(srv->dep.m, req->name) : NULL;
	return r && r->stopped;
}

static int handle(struct shmr_ctl_server *srv, struct shmr_ctl_conn *k,
		  const char *pkt, size_t len)
{
	static struct shmr_ctl_counters counters;
	struct shmr_ctl_model *m = srv->dep.m;
	struct shmr_ctl_req req;
	struct shmr_ctl_router *r;
	struct shmr_pid pid;
	const char *why = "bad request";
	int rc, n, reused, refused;

	/* A refused peer gets its answer to its first request, then the
	 * connection is closed: closing at accept would race its send (EPIPE)
	 * and it would never read why. */
	if (k->refuse_code) {
		send_err(k->fd, k->refuse_code, "%s", k->refusal);
		return -1;
	}
	rc = shmr_ctl_req_parse(pkt, len, &req, &why);
	if (rc < 0 && !on_stopped_router(srv, &req))
		return send_err(k->fd, rc, "%s", why);
	/* A request completed: the idle clock starts again. */
	if (!k->attached)
		k->idle_deadline_ms =
			shmr_ctl_now_ms() + srv->dep.cfg->idle_timeout_ms;
	rc = role_check(srv, k, &req, &refused);
	if (refused)
		return rc;
	if (on_stopped_router(srv, &req))
		return send_err(k->fd, SHMR_E_NOT_ALLOWED, "router %s is stopped",
				req.name);
	if (req.verb == SHMR_REQ_OPEN || req.verb == SHMR_REQ_REGISTER) {
		rc = share_check(srv, k, &req, &refused);
		if (refused)
			return rc;
	}
	if (req.verb == SHMR_REQ_ADD || req.verb == SHMR_REQ_REPLACE) {
		struct shmr_conf_route spec;

		rc = program_check(srv, k, &req, &spec, &refused);
		if (refused)
			return rc;
		req.spec = spec;
	}

	switch (req.verb) {
	case SHMR_REQ_ATTACH:
		/* A process's lifelong link: no idle timeout. */
		k->attached = 1;
		k->idle_deadline_ms = 0;
		owner_attached(srv, k);
		n = snprintf(answer, sizeof(answer), "OK %" PRIu64,
			     srv->dep.d->size);
		/* The daemons' part read-only, then the lanes (layout.h). */
		return send_answer_fds(k->fd, answer, (size_t)n,
				       (const int[]){ srv->dep.d->peer_ro_fd,
						      srv->dep.d->lanes_fd },
				       2);
	case SHMR_REQ_OPEN:
		rc = shmr_ctl_model_open(m, k->id, k->pid,
					 shmr_ctl_seen_version(srv->dep.d),
					 &pid, &reused);
		if (rc < 0)
			return send_err(k->fd, rc, "%s", "no free endpoint");
		if (reused)
			shmr_ctl_slot_reinit(srv->dep.d, pid.slot);
		shmr_ctl_publish(srv->dep.d, m);
		n = snprintf(answer, sizeof(answer), "OK %" PRIu32 " %" PRIu32,
			     pid.slot, pid.gen);
		return send_answer(k->fd, answer, (size_t)n, -1);
	case SHMR_REQ_CLAIM:
		rc = shmr_ctl_model_claim(m, k->id, k->pid, req.pid);
		if (rc == -SHMR_E_PERM)
			return send_err(k->fd, rc, "%s",
					"not the route's worker");
		if (rc < 0)
			return send_err(k->fd, rc, "%s",
					"no such route endpoint");
		break;
	case SHMR_REQ_RETIRE: {
		/* The worker of a route got a PoisonPill: the route goes once
		 * its inbox is empty (as a pool shrinking). */
		struct shmr_ctl_route *q;
		unsigned ri;

		q = shmr_ctl_model_route_of_slot(m, req.pid.slot, &ri);
		if (!q || q->pid.gen != req.pid.gen || q->claimed_by != k->id)
			return send_err(k->fd, SHMR_E_PERM, "%s",
					"not this connection's route");
		{
			char name[SHMR_NAME_MAX];

			/* q may move once the route is dropped. */
			memcpy(name, q->conf->name, SHMR_NAME_MAX);
			rc = shmr_ctl_life_remove_drained(
				srv->dep.life, m->routers[ri].conf->name,
				name);
			shmr_ctl_log("route %s: PoisonPill: retiring after "
				     "its inbox: %s",
				     name, rc < 0 ? shmr_strerror(rc) : "ok");
		}
		shmr_ctl_publish(srv->dep.d, m);
		if (rc < 0)
			return send_err(k->fd, rc, "%s", shmr_strerror(rc));
		break;
	}
	case SHMR_REQ_CLOSE:
		rc = shmr_ctl_model_close(m, k->id, req.pid);
		if (rc < 0)
			return send_err(k->fd, rc, "%s",
					"not an endpoint of this connection");
		drain_now(srv);
		shmr_ctl_publish(srv->dep.d, m);
		break;
	case SHMR_REQ_REGISTER:
		rc = shmr_ctl_model_register(m, k->id, req.name,
					     req.pid);
		if (rc == -SHMR_E_ROUTE_DUPLICATE)
			return send_code(k->fd, rc,
					 "%s%s (a router or registered name)",
					 req.name, "");
		if (rc == -ENOSPC)
			return send_err(k->fd, rc, "%s", "registry full");
		if (rc < 0)
			return send_err(k->fd, rc, "%s",
					"not an endpoint of this connection");
		shmr_ctl_publish(srv->dep.d, m);
		break;
	case SHMR_REQ_UNREGISTER:
		rc = shmr_ctl_model_unregister(m, k->id, req.name,
					       req.pid);
		if (rc == -SHMR_E_PERM)
			return send_err(k->fd, rc,
					"name %s belongs to another endpoint",
					req.name);
		if (rc < 0)
			return send_err(k->fd, rc, "%s",
					"not an endpoint of this connection");
		shmr_ctl_publish(srv->dep.d, m);
		break;
	case SHMR_REQ_ROUTES:
	case SHMR_REQ_INSPECT:
		r = shmr_ctl_model_router(m, req.name);
		if (!r)
			return send_no_router(k->fd, req.name);
		shmr_ctl_counters_read(srv->dep.d, m, &counters);
		if (req.verb == SHMR_REQ_INSPECT) {
			unsigned char *dlq;
			size_t dsz;

			if (shmr_ctl_dlq_load(srv->dep.dlq,
					      (unsigned)(r - m->routers), &dlq,
					      &dsz) == 0) {
				counters.dlq_size[r->pid.slot] =
					(uint64_t)shmr_ctl_dlq_count(dlq, dsz);
				free(dlq);
			}
		}
		memcpy(answer, "OK\n", 3);
		if (req.verb == SHMR_REQ_ROUTES)
			n = shmr_ctl_format_routes(r, &counters, answer + 3,
						   sizeof(answer) - 3);
		else {
			static struct shmr_ctl_kv_extra extra;

			shmr_ctl_handlers_inspect(
				srv->dep.hnd, (unsigned)(r - m->routers),
				&extra);
			n = shmr_ctl_format_inspect(r, &counters, &extra,
						    req.json, answer + 3,
						    sizeof(answer) - 3);
		}
		if (n < 0)
			return send_err(k->fd, SHMR_E_TOO_BIG, "%s",
					"answer too large");
		return send_answer(k->fd, answer, (size_t)n + 3, -1);
	case SHMR_REQ_ROUTE: {
		int qi;

		r = shmr_ctl_model_router(m, req.name);
		if (!r)
			return send_no_router(k->fd, req.name);
		qi = shmr_ctl_model_route_index(r, req.route);
		if (qi < 0)
			return send_code(k->fd, SHMR_E_NO_ROUTE, "route %s/%s",
					 req.name, req.route);
		shmr_ctl_counters_read(srv->dep.d, m, &counters);
		memcpy(answer, "OK\n", 3);
		n = shmr_ctl_format_route(&r->routes[qi], &counters, answer + 3,
					  sizeof(answer) - 3);
		if (n < 0)
			return send_err(k->fd, SHMR_E_TOO_BIG, "%s",
					"answer too large");
		return send_answer(k->fd, answer, (size_t)n + 3, -1);
	}
	case SHMR_REQ_ADD:
	case SHMR_REQ_REMOVE:
	case SHMR_REQ_DISABLE:
	case SHMR_REQ_DRAIN:
	case SHMR_REQ_ENABLE:
	case SHMR_REQ_REPLACE:
	case SHMR_REQ_RESPAWN:
		rc = lifecycle(srv, k, &req);
		shmr_ctl_publish(srv->dep.d, m);
		if (rc == -SHMR_E_NO_ROUTE && !shmr_ctl_model_router(m, req.name))
			return send_no_router(k->fd, req.name);
		if (rc < 0)
			return send_code(k->fd, rc, "route %s/%s", req.name,
					 req.verb == SHMR_REQ_ADD
						 ? req.spec.name
						 : req.route);
		break;
	case SHMR_REQ_ROUTEES:
	case SHMR_REQ_ROUTEE_ADD:
	case SHMR_REQ_ROUTEE_REMOVE:
	case SHMR_REQ_POOL_ADJUST:
	case SHMR_REQ_KILL:
	case SHMR_REQ_POISON: {
		static const uint32_t type_of[] = {
			[SHMR_REQ_ROUTEES] = SHMR_TYPE_GET_ROUTEES,
			[SHMR_REQ_ROUTEE_ADD] = SHMR_TYPE_ADD_ROUTEE,
			[SHMR_REQ_ROUTEE_REMOVE] = SHMR_TYPE_REMOVE_ROUTEE,
			[SHMR_REQ_POOL_ADJUST] = SHMR_TYPE_ADJUST_POOL_SIZE,
			[SHMR_REQ_KILL] = SHMR_TYPE_KILL,
			[SHMR_REQ_POISON] = SHMR_TYPE_POISON_PILL,
		};

		r = shmr_ctl_model_router(m, req.name);
		if (!r)
			return send_no_router(k->fd, req.name);
		if (srv->dep.loop->stopping)
			return send_err(k->fd, SHMR_E_NOT_ALLOWED, "%s",
					"stopping");
		rc = shmr_ctl_manage(srv->dep.pools, (unsigned)(r - m->routers),
				     type_of[req.verb], req.route, req.delta,
				     answer + 3, sizeof(answer) - 3);
		shmr_ctl_publish(srv->dep.d, m);
		if (rc < 0 && req.route[0])
			return send_code(k->fd, rc, "route %s/%s", req.name,
					 req.route);
		if (rc < 0)
			return send_code(k->fd, rc, "router %s%s", req.name,
					 "");
		memcpy(answer, "OK\n", 3);
		return send_answer(k->fd, answer, (size_t)rc + 3, -1);
	}
	case SHMR_REQ_DLQ_LIST:
	case SHMR_REQ_DLQ_REPLAY:
		r = shmr_ctl_model_router(m, req.name);
		if (!r)
			return send_no_router(k->fd, req.name);
		return dlq_request(srv, k, &req, (unsigned)(r - m->routers));
	case SHMR_REQ_STATUS:
		memcpy(answer, "OK\n", 3);
		n = answer_status(srv, answer + 3, sizeof(answer) - 3);
		if (n < 0)
			return send_err(k->fd, SHMR_E_TOO_BIG, "%s",
					"answer too large");
		return send_answer(k->fd, answer, (size_t)n + 3, -1);
	case SHMR_REQ_STOP:
		if (!srv->dep.loop->stop_requested)
			shmr_ctl_log("STOP from process %d: stopping",
				     (int)k->pid);
		srv->dep.loop->stop_requested = 1;
		break;
	default:
		return send_err(k->fd, SHMR_E_PROTO, "%s", "unknown request");
	}
	return send_answer(k->fd, "OK", 2, -1);
}

void shmr_ctl_server_event(struct shmr_ctl_server *srv, unsigned idx,
			   uint32_t ev)
{
	char pkt[SHMR_CTL_REQ_MAX + 1];
	struct shmr_ctl_conn *k;

	if (idx >= SHMR_CTL_MAX_CONNS || srv->conns[idx].fd < 0)
		return;
	k = &srv->conns[idx];
	for (int i = 0;
	     i < PACKETS_PER_WAKE && !srv->dep.loop->stop_requested; i++) {
		/* MSG_TRUNC: the packet's real length, to refuse (not
		 * misread) an oversized one. */
		ssize_t n = recv(k->fd, pkt, sizeof(pkt),
				 MSG_TRUNC | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			conn_close(srv, idx);
			return;
		}
		if (n == 0) {
			/* End of stream, or an empty packet: only the
			 * peer's shutdown tells them apart. */
			struct pollfd pfd = { .fd = k->fd,
					      .events = POLLRDHUP };

			if (poll(&pfd, 1, 0) != 0 &&
			    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
				conn_close(srv, idx);
				return;
			}
			if (handle(srv, k, pkt, 0) < 0) {
				conn_close(srv, idx);
				return;
			}
			continue;
		}
		if ((size_t)n > SHMR_CTL_REQ_MAX) {
			if (send_err(k->fd, SHMR_E_TOO_BIG, "%s",
				     "request too long") < 0) {
				conn_close(srv, idx);
				return;
			}
			continue;
		}
		if (handle(srv, k, pkt, (size_t)n) < 0) {
			conn_close(srv, idx);
			return;
		}
	}
	if ((ev & (EPOLLHUP | EPOLLERR)) && !(ev & EPOLLIN))
		conn_close(srv, idx);
}
