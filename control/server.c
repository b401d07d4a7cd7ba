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
 * Roles (the table is verbs[] in server_access.c; docs/operator-guide.md has it too):
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
#include "metrics.h"
#include "programs.h"
#include "request.h"
#include "server.h"
#include "server_internal.h"

#define PACKETS_PER_WAKE SHMR_CTL_ANSWERS_MAX
static char answer[SHMR_PROTO_MAX];

/* The server whose connection's answers are being held (answers.h):
 * set by shmr_ctl_server_event() for its wake-up, NULL otherwise.  One
 * thread serves the socket. */
static struct shmr_ctl_server *holding;

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
	shmr_ctl_answers_init(&srv->ans);
}

/* A management change's publication: at once, or, while answers are
 * held, once for the whole wake-up, before they go out (release()). */
static void publish_later(struct shmr_ctl_server *srv)
{
	if (holding == srv)
		srv->publish_due = 1;
	else
		shmr_ctl_publish(srv->dep.d, srv->dep.m);
}

/* Publish what is due, then send the held answers: -1 when the peer did
 * not take them (the connection is to be closed). */
static int release(struct shmr_ctl_server *srv)
{
	if (srv->publish_due) {
		srv->publish_due = 0;
		shmr_ctl_publish(srv->dep.d, srv->dep.m);
	}
	return srv->ans.n ? shmr_ctl_answers_send(&srv->ans) : 0;
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

/* A refusal or an idle close: counted by the caller, logged here at most
 * once a second (a peer that hammers us must not flood the log). */
void shmr_ctl_srv_refusal_log(struct shmr_ctl_server *srv, const char *fmt,
			      ...)
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
	/* Held with the others when it can be; else after them. */
	if (holding && fd == holding->ans.fd) {
		if (nfds == 0 && shmr_ctl_answers_put(&holding->ans, fd, buf, len))
			return 0;
		if (release(holding) < 0)
			return -1;
	}
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

int shmr_ctl_srv_send_err(int fd, int code, const char *fmt, const char *arg)
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
	return shmr_ctl_srv_send_err(fd, code, "%s", text);
}

/* A router @p name that is not there. */
static int send_no_router(int fd, const char *name)
{
	return send_code(fd, SHMR_E_NO_ROUTE, "router %s%s", name, "");
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
				shmr_ctl_err("accept: %s", strerror(errno));
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
			shmr_ctl_srv_send_err(fd, EMFILE, "%s", "too many connections");
			close(fd);
			continue;
		}
		if (shmr_ctl_srv_conn_admit(srv, idx, fd, &cr) < 0) {
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
		shmr_ctl_srv_refusal_log(srv,
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
	free(srv->mbuf);
	srv->mbuf = NULL;
	srv->mcap = 0;
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
	int rc, n, corrupt, more;

	if (req->verb == SHMR_REQ_DLQ_REPLAY) {
		rc = shmr_ctl_dlq_replay(srv->dep.dlq, ri, &sent, &left);
		if (rc < 0)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s", shmr_strerror(rc));
		n = snprintf(answer, sizeof(answer), "OK %u %u", sent, left);
		return send_answer(k->fd, answer, (size_t)n, -1);
	}
	rc = shmr_ctl_dlq_load(srv->dep.dlq, ri, &buf, &size);
	if (rc < 0)
		return shmr_ctl_srv_send_err(k->fd, rc, "%s", shmr_strerror(rc));
	/* Room for the first line; the records follow it, from req->from
	 * (0 unless asked), as many as fit: "more" says the list goes on
	 * at COUNT (shmr/proto.h). */
	n = shmr_ctl_dlq_format_from(buf, size, req->paged ? req->from : 0,
				     answer + 32, sizeof(answer) - 32, &count,
				     &corrupt, &more);
	free(buf);
	if (n < 0)
		return shmr_ctl_srv_send_err(k->fd, SHMR_E_TOO_BIG, "%s", "answer too large");
	{
		char head[32];
		int h = snprintf(head, sizeof(head), "OK %u %s\n", count,
				 corrupt ? "corrupt" : more ? "more" : "ok");

		memmove(answer + h, answer + 32, (size_t)n);
		memcpy(answer, head, (size_t)h);
		return send_answer(k->fd, answer, (size_t)(h + n), -1);
	}
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

#define MANAGE_VERBS                                                      \
	(1ull << SHMR_REQ_ROUTEES | 1ull << SHMR_REQ_ROUTEE_ADD |          \
	 1ull << SHMR_REQ_ROUTEE_REMOVE | 1ull << SHMR_REQ_POOL_ADJUST |   \
	 1ull << SHMR_REQ_KILL | 1ull << SHMR_REQ_POISON)

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
		shmr_ctl_srv_send_err(k->fd, k->refuse_code, "%s", k->refusal);
		return -1;
	}
	rc = shmr_ctl_req_parse(pkt, len, &req, &why);
	/* Only management changes wait for the wake-up's one publication
	 * (publish_later()); any other request sees them published. */
	if (srv->publish_due && (rc < 0 || !(1ull << req.verb & MANAGE_VERBS))) {
		srv->publish_due = 0;
		shmr_ctl_publish(srv->dep.d, m);
	}
	if (rc < 0 && !on_stopped_router(srv, &req))
		return shmr_ctl_srv_send_err(k->fd, rc, "%s", why);
	/* A request completed: the idle clock starts again. */
	if (!k->attached)
		k->idle_deadline_ms =
			shmr_ctl_now_ms() + srv->dep.cfg->idle_timeout_ms;
	rc = shmr_ctl_srv_role_check(srv, k, &req, &refused);
	if (refused)
		return rc;
	if (on_stopped_router(srv, &req))
		return shmr_ctl_srv_send_err(k->fd, SHMR_E_NOT_ALLOWED, "router %s is stopped",
				req.name);
	if (req.verb == SHMR_REQ_OPEN || req.verb == SHMR_REQ_REGISTER) {
		rc = shmr_ctl_srv_share_check(srv, k, &req, &refused);
		if (refused)
			return rc;
	}
	if (req.verb == SHMR_REQ_ADD || req.verb == SHMR_REQ_REPLACE) {
		struct shmr_conf_route spec;

		rc = shmr_ctl_srv_program_check(srv, k, &req, &spec, &refused);
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
		/* Closed slots whose every lcore has moved on are counted
		 * (and their lanes emptied) first, so they can be handed
		 * out now (drain.c). */
		drain_now(srv);
		rc = shmr_ctl_model_open(m, k->id, k->pid,
					 shmr_ctl_seen_version(srv->dep.d),
					 &pid, &reused);
		if (rc < 0)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s", "no free endpoint");
		m->alloc.slots[pid.slot].role = (uint32_t)k->role;
		if (reused)
			shmr_ctl_slot_reinit(srv->dep.d, pid.slot);
		shmr_ctl_publish(srv->dep.d, m);
		n = snprintf(answer, sizeof(answer), "OK %" PRIu32 " %" PRIu32,
			     pid.slot, pid.gen);
		return send_answer(k->fd, answer, (size_t)n, -1);
	case SHMR_REQ_CLAIM:
		rc = shmr_ctl_model_claim(m, k->id, k->pid, req.pid);
		if (rc == -SHMR_E_PERM)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s",
					"not the route's worker");
		if (rc < 0)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s",
					"no such route endpoint");
		break;
	case SHMR_REQ_RETIRE: {
		/* The worker of a route got a PoisonPill: the route goes once
		 * its inbox is empty (as a pool shrinking). */
		struct shmr_ctl_route *q;
		unsigned ri;

		q = shmr_ctl_model_route_of_slot(m, req.pid.slot, &ri);
		if (!q || q->pid.gen != req.pid.gen || q->claimed_by != k->id)
			return shmr_ctl_srv_send_err(k->fd, SHMR_E_PERM, "%s",
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
			return shmr_ctl_srv_send_err(k->fd, rc, "%s", shmr_strerror(rc));
		break;
	}
	case SHMR_REQ_CLOSE:
		rc = shmr_ctl_model_close(m, k->id, req.pid);
		if (rc < 0)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s",
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
			return shmr_ctl_srv_send_err(k->fd, rc, "%s", "registry full");
		if (rc < 0)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s",
					"not an endpoint of this connection");
		shmr_ctl_publish(srv->dep.d, m);
		break;
	case SHMR_REQ_UNREGISTER:
		rc = shmr_ctl_model_unregister(m, k->id, req.name,
					       req.pid);
		if (rc == -SHMR_E_PERM)
			return shmr_ctl_srv_send_err(k->fd, rc,
					"name %s belongs to another endpoint",
					req.name);
		if (rc < 0)
			return shmr_ctl_srv_send_err(k->fd, rc, "%s",
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
			/* A part (from=N): "OK NEXT TOTAL\n" and its body. */
			n = req.paged ? shmr_ctl_format_inspect_paged(
						r, &counters, &extra, req.json,
						req.from, answer,
						sizeof(answer)) - 3
				      : shmr_ctl_format_inspect(
						r, &counters, &extra, req.json,
						answer + 3, sizeof(answer) - 3);
		}
		if (n < 0)
			return shmr_ctl_srv_send_err(k->fd, SHMR_E_TOO_BIG, "%s",
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
			return shmr_ctl_srv_send_err(k->fd, SHMR_E_TOO_BIG, "%s",
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
			return shmr_ctl_srv_send_err(k->fd, SHMR_E_NOT_ALLOWED, "%s",
					"stopping");
		rc = shmr_ctl_manage(srv->dep.pools, (unsigned)(r - m->routers),
				     type_of[req.verb], req.route, req.delta,
				     answer + 3, sizeof(answer) - 3);
		publish_later(srv);
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
	case SHMR_REQ_METRICS:
		/* The same text as GET /metrics (metrics.h); past one
		 * answer, as a sealed memfd to an asker that takes one. */
		n = shmr_ctl_metrics_render_grow(srv->dep.d, m, srv->dep.dlq,
						 &srv->mbuf, &srv->mcap);
		if (n >= 0 && (size_t)n + 3 <= sizeof(answer)) {
			memcpy(answer, "OK\n", 3);
			memcpy(answer + 3, srv->mbuf, (size_t)n);
			return send_answer(k->fd, answer, (size_t)n + 3, -1);
		}
		if (n < 0 || !req.fd_ok || (rc = shmr_ctl_metrics_memfd(
					       srv->mbuf, (size_t)n)) < 0)
			return shmr_ctl_srv_send_err(k->fd, SHMR_E_TOO_BIG, "%s",
					"answer too large (METRICS fd takes it)");
		snprintf(answer, sizeof(answer), "OK FD %d", n);
		n = send_answer(k->fd, answer, strlen(answer), rc);
		close(rc);
		return n;
	case SHMR_REQ_STATUS:
		memcpy(answer, "OK\n", 3);
		n = shmr_ctl_srv_status(srv, answer + 3, sizeof(answer) - 3);
		if (n < 0)
			return shmr_ctl_srv_send_err(k->fd, SHMR_E_TOO_BIG, "%s",
					"answer too large");
		return send_answer(k->fd, answer, (size_t)n + 3, -1);
	case SHMR_REQ_STOP:
		if (!srv->dep.loop->stop_requested)
			shmr_ctl_log("STOP from process %d: stopping",
				     (int)k->pid);
		srv->dep.loop->stop_requested = 1;
		break;
	default:
		return shmr_ctl_srv_send_err(k->fd, SHMR_E_PROTO, "%s", "unknown request");
	}
	return send_answer(k->fd, "OK", 2, -1);
}

void shmr_ctl_server_event(struct shmr_ctl_server *srv, unsigned idx,
			   uint32_t ev)
{
	char pkt[SHMR_CTL_REQ_MAX + 1];
	struct shmr_ctl_conn *k;
	int close_it = 0;

	if (idx >= SHMR_CTL_MAX_CONNS || srv->conns[idx].fd < 0)
		return;
	k = &srv->conns[idx];
	/* The wake-up's answers are held and go out together, after one
	 * publication of what its requests changed (answers.h). */
	holding = srv;
	srv->ans.fd = k->fd;
	for (unsigned i = 0;
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
			close_it = 1;
			break;
		}
		if (n == 0) {
			/* End of stream, or an empty packet: only the
			 * peer's shutdown tells them apart. */
			struct pollfd pfd = { .fd = k->fd,
					      .events = POLLRDHUP };

			if (poll(&pfd, 1, 0) != 0 &&
			    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
				close_it = 1;
				break;
			}
			if (handle(srv, k, pkt, 0) < 0) {
				close_it = 1;
				break;
			}
			continue;
		}
		if ((size_t)n > SHMR_CTL_REQ_MAX) {
			if (shmr_ctl_srv_send_err(k->fd, SHMR_E_TOO_BIG, "%s",
				     "request too long") < 0) {
				close_it = 1;
				break;
			}
			continue;
		}
		if (handle(srv, k, pkt, (size_t)n) < 0) {
			close_it = 1;
			break;
		}
	}
	/* A peer that shut its side down still reads what it asked for. */
	if (release(srv) < 0)
		close_it = 1;
	holding = NULL;
	srv->ans.fd = -1;
	if (close_it || ((ev & (EPOLLHUP | EPOLLERR)) && !(ev & EPOLLIN)))
		conn_close(srv, idx);
}
