/*
 * The control socket: <run_dir>/<domain>.sock, AF_UNIX SOCK_SEQPACKET, one
 * request per packet, one answer per request (see shmr/proto.h).
 *
 * Trust: the socket file is mode 0600 (0660 and chowned to the configured
 * socket_group), and every accepted peer is checked again with SO_PEERCRED
 * (root, our uid, or a member of the group); the file mode alone does not
 * survive a chmod or a renamed directory.  A refused peer's first request
 * is answered "ERR <SHMR_E_PERM> permission denied" and it is disconnected.  Every request is parsed by
 * shmr_ctl_req_parse() and anything malformed gets "ERR <code> <message>".
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
#include "request.h"
#include "server.h"

#define PACKETS_PER_WAKE 16

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
			 gid_t group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	srv->have_group = have_group;
	srv->group = group;
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

static int peer_allowed(const struct shmr_ctl_server *srv,
			const struct ucred *cr)
{
	if (cr->uid == 0 || cr->uid == geteuid())
		return 1;
	if (srv->have_group &&
	    (cr->gid == srv->group || proc_in_group(cr->pid, srv->group)))
		return 1;
	return 0;
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
		ev.data.u64 = (uint64_t)SHMR_CTL_TAG_CONN << 32 | idx;
		if (epoll_ctl(srv->dep.loop->epfd, EPOLL_CTL_ADD, fd, &ev) <
		    0) {
			close(fd);
			continue;
		}
		srv->conns[idx] = (struct shmr_ctl_conn){
			.fd = fd, .id = ++srv->next_conn_id, .pid = cr.pid,
			.uid = cr.uid, .gid = cr.gid,
			.denied = !peer_allowed(srv, &cr)
		};
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
	shmr_ctl_kv_add(&kv, "spec_version", "%" PRIu64, srv->dep.m->version);
	shmr_ctl_kv_add(&kv, "socket", "%s", srv->sock_path);
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
			return send_err(k->fd, rc, "%s", strerror(-rc));
		n = snprintf(answer, sizeof(answer), "OK %u %u", sent, left);
		return send_answer(k->fd, answer, (size_t)n, -1);
	}
	rc = shmr_ctl_dlq_load(srv->dep.dlq, ri, &buf, &size);
	if (rc < 0)
		return send_err(k->fd, rc, "%s", strerror(-rc));
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

static int handle(struct shmr_ctl_server *srv, struct shmr_ctl_conn *k,
		  const char *pkt, size_t len)
{
	static struct shmr_ctl_counters counters;
	struct shmr_ctl_model *m = srv->dep.m;
	struct shmr_ctl_req req;
	struct shmr_ctl_router *r;
	struct shmr_pid pid;
	const char *why = "bad request";
	int rc, n, reused;

	/* A refused peer gets its answer to its first request, then the
	 * connection is closed: closing at accept would race its send (EPIPE)
	 * and it would never read why. */
	if (k->denied) {
		send_err(k->fd, SHMR_E_PERM, "%s", "permission denied");
		return -1;
	}
	rc = shmr_ctl_req_parse(pkt, len, &req, &why);
	if (rc < 0)
		return send_err(k->fd, rc, "%s", why);

	switch (req.verb) {
	case SHMR_REQ_ATTACH:
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
			return send_err(k->fd, rc, "name %s is taken",
					req.name);
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
			return send_err(k->fd, SHMR_E_NO_ROUTE, "no router %s",
					req.name);
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
			return send_err(k->fd, SHMR_E_NO_ROUTE, "no router %s",
					req.name);
		qi = shmr_ctl_model_route_index(r, req.route);
		if (qi < 0)
			return send_err(k->fd, SHMR_E_NO_ROUTE, "no route %s",
					req.route);
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
		if (rc < 0)
			return send_err(k->fd, rc, "%s",
					rc <= -SHMR_E_BASE ? shmr_strerror(rc)
							   : strerror(-rc));
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
			return send_err(k->fd, SHMR_E_NO_ROUTE, "no router %s",
					req.name);
		if (srv->dep.loop->stopping)
			return send_err(k->fd, SHMR_E_NOT_ALLOWED, "%s",
					"stopping");
		rc = shmr_ctl_manage(srv->dep.pools, (unsigned)(r - m->routers),
				     type_of[req.verb], req.route, req.delta,
				     answer + 3, sizeof(answer) - 3);
		shmr_ctl_publish(srv->dep.d, m);
		if (rc < 0)
			return send_err(k->fd, rc, "%s",
					rc <= -SHMR_E_BASE ? shmr_strerror(rc)
							   : strerror(-rc));
		memcpy(answer, "OK\n", 3);
		return send_answer(k->fd, answer, (size_t)rc + 3, -1);
	}
	case SHMR_REQ_DLQ_LIST:
	case SHMR_REQ_DLQ_REPLAY:
		r = shmr_ctl_model_router(m, req.name);
		if (!r)
			return send_err(k->fd, SHMR_E_NO_ROUTE, "no router %s",
					req.name);
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
