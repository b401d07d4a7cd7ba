/*
 * The routers' admin path, served by shmr-control from an endpoint of its
 * own (the "admin endpoint", a client slot allocated at start-up and
 * published as hdr.admin_pid).  The dataplane puts there, unchanged, every
 * high/max-priority send or call addressed to a router, and every send
 * that failed routing (SHMR_F_ROUTE_FAILED: a MessageRouteFailed).
 *
 * Waking without polling: a helper thread sleeps on the endpoint's bell;
 * when a lane has slots it writes the "kick" eventfd, which the epoll loop
 * watches, and waits on the "done" eventfd.  The main thread drains the
 * lanes (it is their only consumer and the only producer of the admin
 * endpoint's outbound lane) and writes "done"; the thread then re-arms its
 * bell and re-checks.  So the thread never reads a lane while the main
 * thread dequeues from it, and the loop stays single-threaded.
 *
 * Each slot goes to the router's handlers (handlers.c: a shared object's
 * hooks, or these defaults when it has none):
 *   - MessageRouteFailed: one log line (at most one a second, with a count
 *     of those suppressed) and a record appended to the router's dead-
 *     letter file <run_dir>/<domain>.<router>.dlq (dlq.c);
 *   - another high-priority send: logged (rate-limited) and counted;
 *   - a high-priority call: payload "stats" is answered with the router's
 *     counters as text ("forwarded=N discarded=N failed=N admin=N", admin
 *     counting the admin-path sends handled, MessageRouteFailed
 *     included); anything else gets -SHMR_E_NOT_ALLOWED (no admin command
 *     of that name).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

#include "control_internal.h"

static int admin_pending(struct shmr_ctl *c)
{
	const struct shmr_domain_hdr *h = shmr_hdr(c->base);

	for (uint32_t i = 0; i < h->nlcores; i++)
		if (shmr_lane_pending_sc(shmr_lane_at(c->base, c->admin.slot, i)))
			return 1;
	return 0;
}

static void *admin_thread(void *arg)
{
	struct shmr_ctl *c = arg;
	struct shmr_bell *bell = &shmr_ep_at(c->base, c->admin.slot)->bell;
	uint64_t one = 1, v;

	for (;;) {
		uint32_t seen = shmr_bell_prepare(bell);

		if (!admin_pending(c)) {
			(void)shmr_bell_sleep(bell, seen, -1);
			continue;
		}
		shmr_bell_cancel(bell);
		if (write(c->admin_kick, &one, sizeof(one)) < 0 &&
		    errno != EINTR)
			return NULL;
		while (read(c->admin_done, &v, sizeof(v)) < 0)
			if (errno != EINTR)
				return NULL;
	}
	return NULL;
}

int shmr_ctl_admin_open(struct shmr_ctl *c)
{
	struct shmr_ctl_alloc *a = &c->model.alloc;
	struct shmr_ctl_slot *s;
	struct shmr_pid pid;

	/* The highest slot, taken once and never freed: clients and routes
	 * keep the slots they had without it (the allocator hands out the
	 * lowest free one). */
	if (a->nslots == 0 ||
	    a->slots[a->nslots - 1].state != SHMR_CTL_SLOT_FREE)
		return -SHMR_E_NO_ENDPOINT;
	s = &a->slots[a->nslots - 1];
	memset(s, 0, sizeof(*s));
	s->state = SHMR_CTL_SLOT_USED;
	s->gen = 1;
	s->kind = SHMR_EPK_CLIENT;
	a->nused++;
	pid = (struct shmr_pid){ a->nslots - 1, 1 };
	c->model.alloc.slots[pid.slot].os_pid = getpid();
	snprintf(c->model.alloc.slots[pid.slot].name, SHMR_NAME_MAX,
		 "shmr:admin");
	c->model.dirty = 1;
	c->admin = pid;
	for (unsigned i = 0; i < SHMR_MAX_ROUTERS; i++)
		c->dlq_fd[i] = -1;
	/* Release: the endpoint's lanes (initialised with the layout) before
	 * its PID; pairs with the lcores' acquire load. */
	atomic_store_explicit(&shmr_hdr(c->base)->admin_pid,
			      (uint64_t)pid.slot | (uint64_t)pid.gen << 32,
			      memory_order_release);
	return 0;
}

int shmr_ctl_admin_start(struct shmr_ctl *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_attr_t attr;
	pthread_t thr;
	int rc;

	c->admin_kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->admin_done = eventfd(0, EFD_CLOEXEC);
	if (c->admin_kick < 0 || c->admin_done < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_ADMIN << 32;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->admin_kick, &ev) < 0)
		return -errno;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thr, &attr, admin_thread, c);
	pthread_attr_destroy(&attr);
	return -rc;
}

/* Router whose endpoint is @p pid, or -1. */
static int router_of(const struct shmr_ctl *c, struct shmr_pid pid)
{
	for (unsigned i = 0; i < c->model.nrouters; i++)
		if (c->model.routers[i].pid.slot == pid.slot &&
		    c->model.routers[i].pid.gen == pid.gen)
			return (int)i;
	return -1;
}

void shmr_ctl_dlq_path(const struct shmr_ctl *c, unsigned r, char *out,
		       size_t cap)
{
	snprintf(out, cap, "%s/%s.%s.dlq", c->run_dir, c->cfg.domain,
		 c->model.routers[r].conf->name);
}

/* Rate-limited log line: at most one a second per kind. */
static void admin_log(struct shmr_ctl *c, unsigned kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void admin_log(struct shmr_ctl *c, unsigned kind, const char *fmt, ...)
{
	uint64_t now = shmr_ctl_now_ms();
	char line[300];
	va_list ap;

	if (now < c->admin_log_next[kind]) {
		c->admin_log_suppressed[kind]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->admin_log_suppressed[kind])
		shmr_ctl_log(c, "%s (and %" PRIu64 " more like it)", line,
			     c->admin_log_suppressed[kind]);
	else
		shmr_ctl_log(c, "%s", line);
	c->admin_log_suppressed[kind] = 0;
	c->admin_log_next[kind] = now + 1000;
}

static int dlq_fd(struct shmr_ctl *c, unsigned r)
{
	char path[PATH_MAX + 80];

	if (c->dlq_fd[r] >= 0)
		return c->dlq_fd[r];
	shmr_ctl_dlq_path(c, r, path, sizeof(path));
	c->dlq_fd[r] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			    0600);
	return c->dlq_fd[r];
}

/* Enqueue one slot on the admin endpoint's outbound lane. */
static int admin_put(struct shmr_ctl *c, const struct shmr_msg *m)
{
	struct shmr_domain_hdr *h = shmr_hdr(c->base);

	if (rte_ring_enqueue_burst_elem(
		    shmr_lane_at(c->base, c->admin.slot,
				 SHMR_LANE_OUT(h->nlcores)),
		    m, h->slot_size, 1, NULL) != 1)
		return -EAGAIN;
	/* B2 inside: pairs with the lcore's B1. */
	shmr_bell_ring(&h->lcore_bell[c->admin.slot % h->nlcores]);
	return 0;
}

int shmr_ctl_admin_reply(struct shmr_ctl *c, const struct shmr_msg *req,
			 int32_t status, const void *data, size_t n)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *m = (struct shmr_msg *)buf;
	size_t max = shmr_hdr(c->base)->slot_size - SHMR_HDR_SIZE;

	if (n > max)
		return -SHMR_E_TOO_BIG;
	memset(m, 0, SHMR_HDR_SIZE);
	m->kind = SHMR_KIND_REPLY;
	m->from = c->admin;
	m->to = req->from;
	m->ref = req->ref;
	m->type = req->type;
	m->status = status;
	m->len = (uint32_t)n;
	if (n)
		memcpy(m->data, data, n);
	if (admin_put(c, m) < 0) {
		admin_log(c, 2, "admin: reply to %u:%u lost: lane full",
			  req->from.slot, req->from.gen);
		return -EAGAIN;
	}
	return 0;
}

/* A text reply, cut to the slot. */
static void reply(struct shmr_ctl *c, const struct shmr_msg *req,
		  int32_t status, const char *text)
{
	size_t max = shmr_hdr(c->base)->slot_size - SHMR_HDR_SIZE;
	size_t n = text ? strlen(text) : 0;

	(void)shmr_ctl_admin_reply(c, req, status, text, n > max ? max : n);
}

void shmr_ctl_admin_default_call(struct shmr_ctl *c, unsigned r,
				 const struct shmr_msg *m)
{
	static struct shmr_ctl_counters cnt;
	char text[200];
	uint32_t s;

	if (m->len != 5 || memcmp(m->data, "stats", 5) != 0) {
		reply(c, m, -SHMR_E_NOT_ALLOWED, NULL);
		return;
	}
	s = c->model.routers[r].pid.slot;
	shmr_ctl_counters_read(c, &cnt);
	snprintf(text, sizeof(text),
		 "forwarded=%" PRIu64 " discarded=%" PRIu64 " failed=%" PRIu64
		 " admin=%" PRIu64,
		 cnt.forwarded[s], cnt.discarded[s], cnt.failed[s],
		 c->admin_msgs[r]);
	reply(c, m, 0, text);
}

void shmr_ctl_admin_default_message(struct shmr_ctl *c, unsigned r,
				    const struct shmr_msg *m)
{
	const char *rname = c->model.routers[r].conf->name;
	uint32_t ss = shmr_hdr(c->base)->slot_size;

	if (m->flags & SHMR_F_ROUTE_FAILED) {
		char name[SHMR_NAME_MAX];
		int fd = dlq_fd(c, r), rc;

		shmr_ctl_dlq_name(m, ss, name);
		rc = fd < 0 ? -errno : shmr_ctl_dlq_append(fd, m, ss);
		admin_log(c, 0,
			  "router %s: route %s failed: %s (type %" PRIu32
			  " from %u:%u)%s%s",
			  rname, name, shmr_strerror(m->status), m->type,
			  m->from.slot, m->from.gen,
			  rc < 0 ? "; dead letter lost: " : "",
			  rc < 0 ? strerror(-rc) : "");
		return;
	}
	admin_log(c, 1, "router %s: admin message type %" PRIu32
		  " from %u:%u (%" PRIu64 " so far)",
		  rname, m->type, m->from.slot, m->from.gen,
		  c->admin_msgs[r]);
}

void shmr_ctl_admin_event(struct shmr_ctl *c)
{
	struct shmr_domain_hdr *h = shmr_hdr(c->base);
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)], v;
	struct shmr_msg *m = (struct shmr_msg *)buf;
	uint64_t one = 1;

	if (read(c->admin_kick, &v, sizeof(v)) < 0)
		return;
	for (uint32_t i = 0; i < h->nlcores; i++) {
		struct rte_ring *lane = shmr_lane_at(c->base, c->admin.slot, i);

		while (rte_ring_dequeue_burst_elem(lane, buf, h->slot_size, 1,
						   NULL) == 1) {
			int r;

			if (m->flags & SHMR_F_WANT_WORKER) {
				shmr_ctl_want_worker(c, m->to);
				continue;
			}
			r = router_of(c, m->to);
			if (r < 0) {
				if (m->kind == SHMR_KIND_CALL)
					reply(c, m, -SHMR_E_NOT_ALLOWED, NULL);
				continue;
			}
			/* The router's own messages, whatever the priority
			 * (a dead letter of one is still a dead letter). */
			if (m->type >= SHMR_TYPE_RESERVED &&
			    !(m->flags & SHMR_F_ROUTE_FAILED) &&
			    m->kind != SHMR_KIND_REPLY) {
				shmr_ctl_manage_msg(c, (unsigned)r, m);
				continue;
			}
			if (m->kind == SHMR_KIND_CALL) {
				shmr_ctl_handlers_call(c, (unsigned)r, m);
			} else if (m->kind == SHMR_KIND_SEND) {
				c->admin_msgs[r]++;
				shmr_ctl_handlers_message(c, (unsigned)r, m);
			}
		}
	}
	if (write(c->admin_done, &one, sizeof(one)) < 0)
		shmr_ctl_warn("admin: eventfd: %s", strerror(errno));
}

int shmr_ctl_dlq_load(struct shmr_ctl *c, unsigned r, unsigned char **buf,
		      size_t *size)
{
	char path[PATH_MAX + 80];
	struct stat st;
	int fd;
	ssize_t got;

	*buf = NULL;
	*size = 0;
	shmr_ctl_dlq_path(c, r, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || st.st_size > (1 << 28)) {
		close(fd);
		return -EFBIG;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	got = read(fd, *buf, (size_t)st.st_size);
	close(fd);
	if (got < 0) {
		free(*buf);
		*buf = NULL;
		return -errno;
	}
	*size = (size_t)got;
	return 0;
}

int shmr_ctl_dlq_replay(struct shmr_ctl *c, unsigned r, unsigned *sent,
			unsigned *left)
{
	union {
		struct shmr_msg m;
		unsigned char b[SHMR_SLOT_MAX];
	} slot;
	uint32_t ss = shmr_hdr(c->base)->slot_size, slen;
	char path[PATH_MAX + 80], tmp[PATH_MAX + 90];
	unsigned char *buf;
	size_t size, off = 0;
	int rc, fd;

	*sent = *left = 0;
	rc = shmr_ctl_dlq_load(c, r, &buf, &size);
	if (rc < 0)
		return rc;
	while ((rc = shmr_ctl_dlq_next(buf, size, off, &slot.m, &slen)) > 0) {
		struct shmr_msg *m = &slot.m;

		if (slen > ss || m->len > ss - SHMR_HDR_SIZE)
			break;
		m->kind = SHMR_KIND_SEND;
		m->flags = 0;
		m->priority = SHMR_PRIO_NORMAL;
		m->hops = 0;
		m->from = c->admin;
		m->to = c->model.routers[r].pid;
		m->ref = 0;
		m->status = 0;
		if (admin_put(c, m) < 0)
			break;
		off += (size_t)rc;
		(*sent)++;
	}
	*left = (unsigned)shmr_ctl_dlq_count(buf + off, size - off);
	/* Rewrite what was not re-sent (from the first record left, bad
	 * records included) and swap it in; the append descriptor is
	 * reopened on the next dead letter. */
	shmr_ctl_dlq_path(c, r, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rc = 0;
	if (*sent) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || (size > off && write(fd, buf + off, size - off) !=
						     (ssize_t)(size - off)))
			rc = errno ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
		if (rc == 0 && rename(tmp, path) < 0)
			rc = -errno;
		if (c->dlq_fd[r] >= 0) {
			close(c->dlq_fd[r]);
			c->dlq_fd[r] = -1;
		}
	}
	free(buf);
	return rc;
}
