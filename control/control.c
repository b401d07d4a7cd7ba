/*
 * shmr-control: the authority of a shmrouter domain.
 *
 *   shmr-control [-c FILE] [--run-dir DIR] [--ready-fd N] [--dataplane PATH]
 *                [--check] [--quiet] [--log-level L]
 *   shmr-control --version | --help
 *
 * Exit statuses:
 *   0  clean stop (SIGINT, SIGTERM or a STOP request), or --check passed;
 *   1  runtime failure: the run dir, domain or socket could not be made,
 *      another control plane holds the domain's lock (its run dir's or
 *      the host-wide one) or is live on the socket, or a worker or the dataplane failed to start at init (the
 *      dataplane also fails if it exits, or takes no routing table within
 *      30 s) (whatever was started is stopped first: nothing is left
 *      running);
 *   2  bad configuration or bad arguments: one line on stderr,
 *      "shmr-control: FILE:LINE: field: message" or a usage line; or a
 *      running domain of this name that another configuration made (left
 *      running, untouched: see adopt.h).
 *
 * Start-up, in order: parse and check the configuration (-c FILE; else
 * $SHMR_CONFIG, else $sysconfdir/shmr/shmr.conf, when that file exists
 * (config/sysconf.c); else the embedded default; the first log
 * line says which); resolve the run
 * dir (--run-dir, else the configuration's run_dir when it is not the
 * built-in default, else $SHMR_RUN_DIR, else /run/shmr); take the domain's
 * lock (<run_dir>/<domain>.lock, flock: one control plane per domain),
 * then the host-wide one (take_host_lock(): one per domain name on the
 * host, whatever the run dir, as EAL's file prefix is);
 * read the state file (<run_dir>/<domain>.state) to see whether a
 * running domain is there to adopt; bind the socket (refusing when a live
 * control answers on it, replacing a stale file).  Then either
 *   - adopt (adopt.c): take the domain's memory back from the live
 *     dataplane, rebuild the model from the domain, the state file and the
 *     configuration, hold the dataplane and the workers by pidfd, handle
 *     the deaths that happened meanwhile, resume pending operations, keep
 *     the live clients' endpoints; log "adopted domain NAME: dataplane
 *     PID, N workers, M endpoints"; or, when there is nothing to adopt
 *     (or it cannot be trusted: one line says why),
 *   - create the domain (memfd, hugetlb when there are free hugepages);
 *     publish spec version 1; start the dataplane and wait (at most 30 s)
 *     until every routing lcore reports that version; start every route's
 *     worker, each pinned (a route with cpus "" to a PU of its own, see
 *     pin.c).  Initialisation is atomic: if any start fails, everything
 *     started is stopped and the exit status is 1.
 * Only then is "R" written to --ready-fd, and READY=1 sent to systemd
 * (notify.h: also STATUS= lines, STOPPING=1 and the watchdog).  From the first child on, the
 * state file is rewritten (by rename) after every publication, and removed
 * at a clean stop.
 *
 * Then the control plane sleeps in epoll_wait: a signalfd (SIGINT, SIGTERM,
 * SIGCHLD), the listening socket and its connections, one pidfd per child,
 * and a timerfd armed only while a restart is backing off, a resizer
 * looks, a worker's stop grace runs, a control connection that has not
 * attached may time out (server.c), or a closed client's lanes drain
 * (drain.c).  An idle appliance wakes it for nothing.
 *
 * The loop owns no module's state (see control_internal.h for the map):
 * each event goes to the module it is for (the socket to server.c, a
 * child's exit to spawn.c, the admin endpoint's slots to manage.c or
 * handlers.c, the timer to spawn.c and manage.c's resizers), and after
 * each one the loop publishes what changed and re-arms the timer for the
 * earliest deadline those modules report.
 *
 * Route lifecycle: ADD, REMOVE, DISABLE, ENABLE, REPLACE and RESPAWN on the
 * socket run lifecycle.c's state machine, with spawn.c's process
 * operations: a worker asked to stop gets SIGTERM, SIGKILL after
 * stop_grace_ms (on the timerfd), each to its whole process group, and the
 * pending operation completes when its pidfd reports the exit (what is
 * left of its group is killed before it is reaped: procs.c).
 *
 * Publication (domain.c): every change of the model (a worker up or down,
 * a client endpoint opened or freed, a name registered or dropped, a
 * route's lifecycle) is published as one new spec version: the endpoint
 * table and the spec are written inside the spec seqcount, then a
 * SHMR_CTL_SPEC slot (key = version) goes on the control lane and its bell
 * rings.  The dataplane's update thread rebuilds
 * its table from the spec and each lcore reports the version it applied,
 * which is what lets a freed slot be reused (see alloc.c).
 *
 * Nothing dies with the control plane: children get no parent-death
 * signal and run in process groups of their own, so a control plane killed
 * with SIGKILL leaves the dataplane forwarding with its last table and the
 * workers serving.  A clean stop (SIGINT, SIGTERM, STOP) still stops every
 * process of the domain, in order (spawn.c, shmr_ctl_stop_children()).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <shmr/domain.h>
#include <shmr/proto.h>
#include <shmr/version.h>

#include "admin.h"
#include "adopt.h"
#include "control_internal.h"
#include "daemon_conf.h"
#include "dlqfile.h"
#include "domain.h"
#include "drain.h"
#include "handlers.h"
#include "http.h"
#include "lifecycle.h"
#include "manage.h"
#include "model.h"
#include "notify.h"
#include "pin.h"
#include "request.h"
#include "resizer.h"
#include "server.h"
#include "spawn.h"
#include "startup.h"
#include "state.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE SHMR_CTL_EXIT_USAGE
#define DATAPLANE_START_MS 30000u /* to take its first routing table */

/*
 * The daemon: the configuration and what start-up resolves from it, and
 * the state of each module, wired together in wire().  Only this file
 * sees the whole; a module gets pointers to what it may use.
 */
struct shmr_ctl {
	struct shmr_config cfg;
	struct shmr_ctl_model model;
	char run_dir[PATH_MAX];
	char sock_path[108];
	char dataplane[PATH_MAX];
	struct shmr_ctl_groups groups; /* resolved by shmr_ctl_conf_apply() */
	/* Each route's cpu set, parsed by shmr_ctl_conf_apply(); pin.c keeps it
	 * from then on. */
	hwloc_bitmap_t (*cpus)[SHMR_MAX_ROUTES]; /* the configuration's
						  * routers of them */
	/* the event loop */
	struct shmr_ctl_loop loop;
	int sigfd, timerfd;
	/* the modules */
	struct shmr_ctl_domain dom;
	struct shmr_ctl_life life; /* the lifecycle on this daemon */
	struct shmr_ctl_pin pin;
	struct shmr_ctl_spawner sp;
	struct shmr_ctl_server srv;
	struct shmr_ctl_admin admin;
	struct shmr_ctl_dlq_files dlq;
	struct shmr_ctl_handlers hnd;
	struct shmr_ctl_pools pools;
	struct shmr_ctl_state_file state;
	struct shmr_ctl_adopt adopt;
	struct shmr_ctl_notify notify; /* sd_notify: READY, STATUS, ... */
	struct shmr_ctl_http http;     /* metrics_listen (http.c) */
	int lockfd; /* <run_dir>/<domain>.lock, held (flock) while we run */
	int hostlockfd; /* the host-wide one (take_host_lock()), held too */
	char hostlock[PATH_MAX + 64]; /* its path; "" until it is held */
	uint64_t drain_next; /* drain.c looks again then (0: nothing drains) */
};

static struct shmr_ctl ctl; /* large: keep it off the stack */

static void fatal_init(struct shmr_ctl *c)
{
	/* the one line that says why is printed already */
	shmr_ctl_log_quiet();
	shmr_ctl_stop_children(&c->sp);
	shmr_ctl_server_close_listener(&c->srv);
	shmr_ctl_state_remove(&c->state);
	exit(EXIT_RUNTIME);
}

static int setup_loop(struct shmr_ctl *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	c->loop.epfd = epoll_create1(EPOLL_CLOEXEC);
	c->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	c->timerfd = timerfd_create(CLOCK_MONOTONIC,
				    TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->loop.epfd < 0 || c->sigfd < 0 || c->timerfd < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_SIGNAL << 32;
	if (epoll_ctl(c->loop.epfd, EPOLL_CTL_ADD, c->sigfd, &ev) < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_TIMER << 32;
	if (epoll_ctl(c->loop.epfd, EPOLL_CTL_ADD, c->timerfd, &ev) < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_LISTEN << 32;
	if (epoll_ctl(c->loop.epfd, EPOLL_CTL_ADD,
		      shmr_ctl_server_listen_fd(&c->srv), &ev) < 0)
		return -errno;
	return 0;
}

static void on_signal(struct shmr_ctl *c)
{
	struct signalfd_siginfo si;

	while (read(c->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			shmr_ctl_reap(&c->sp);
		} else if (si.ssi_signo == SIGHUP) {
			/* No reload to do: the daemon's convention would
			 * have an operator expect one, and hangup's default
			 * would end us without a word (a terminal closed
			 * under a foreground run).  Said, and ignored. */
			shmr_ctl_warn("SIGHUP ignored: shmr-control does not "
				      "reload its configuration (change "
				      "routes with shmrctl add, replace and "
				      "remove)");
		} else if (!c->loop.stop_requested) {
			shmr_ctl_log("%s: stopping",
				     si.ssi_signo == SIGINT ? "SIGINT"
							    : "SIGTERM");
			c->loop.stop_requested = 1;
		}
	}
}

/* Arm the timer for the earliest deadline of the spawner, the pools'
 * resizers, the control socket's idle connections, the systemd watchdog
 * (when systemd asked for one), the closed clients' lanes (drain.c) and
 * the admin replies held for the lcores (admin.c). */
static void arm_timer(struct shmr_ctl *c)
{
	struct itimerspec its = { 0 };
	uint64_t next = shmr_ctl_spawn_next_ms(&c->sp);
	uint64_t rs = shmr_ctl_resize_next_ms(&c->pools);
	uint64_t idle = shmr_ctl_server_next_ms(&c->srv);
	uint64_t wd = shmr_ctl_notify_next_ms(&c->notify);

	if (rs && (!next || rs < next))
		next = rs;
	if (idle && (!next || idle < next))
		next = idle;
	if (wd && (!next || wd < next))
		next = wd;
	if (c->drain_next && (!next || c->drain_next < next))
		next = c->drain_next;
	if (next) {
		its.it_value.tv_sec = (time_t)(next / 1000);
		its.it_value.tv_nsec = (long)(next % 1000) * 1000000L;
	}
	/* Held admin replies: look again soon (admin.h), sooner than the
	 * millisecond the other deadlines count in. */
	if (c->admin.held_n) {
		struct timespec soon;

		clock_gettime(CLOCK_MONOTONIC, &soon);
		soon.tv_nsec += SHMR_CTL_ADMIN_HELD_POLL_US * 1000L;
		if (soon.tv_nsec >= 1000000000L) {
			soon.tv_sec++;
			soon.tv_nsec -= 1000000000L;
		}
		if (!next || soon.tv_sec < its.it_value.tv_sec ||
		    (soon.tv_sec == its.it_value.tv_sec &&
		     soon.tv_nsec < its.it_value.tv_nsec))
			its.it_value = soon;
	}
	/* All zero disarms: an idle appliance has no timer (but the
	 * watchdog's ping, which it asked for). */
	timerfd_settime(c->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void on_timer(struct shmr_ctl *c)
{
	uint64_t now = shmr_ctl_now_ms(), exp;

	while (read(c->timerfd, &exp, sizeof(exp)) > 0)
		;
	if (!c->loop.stopping)
		shmr_ctl_resize_due(&c->pools, now);
	shmr_ctl_spawn_due(&c->sp, now);
	shmr_ctl_server_due(&c->srv, now);
	/* The watchdog's ping says the loop turns, so it is sent from it. */
	shmr_ctl_notify_due(&c->notify, now);
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

/* Kill for a routee (manage.c): allowed as a management message to the
 * router it is for; a call hears how it went. */
static void on_kill(struct shmr_ctl *c, int r, const struct shmr_msg *m)
{
	unsigned ri;
	int rc = shmr_ctl_manage_kill_router(&c->pools, r, m->to, &ri);

	if (rc == 0 && !shmr_ctl_server_msg_allowed(&c->srv, ri, m))
		rc = -SHMR_E_NOT_ALLOWED;
	else if (rc == 0)
		rc = shmr_ctl_manage_kill(&c->pools, r, m);
	if (rc < 0)
		shmr_ctl_warn("Kill from %u:%u for %u:%u: %s", m->from.slot,
			      m->from.gen, m->to.slot, m->to.gen,
			      shmr_strerror(rc));
	if (m->kind == SHMR_KIND_CALL)
		(void)shmr_ctl_admin_reply(&c->admin, m, rc < 0 ? rc : 0, NULL,
					   0);
}

/* The admin endpoint has slots: each to the router it is for, max
 * priority first (admin.c stages them: a max slot goes before every high
 * one, MessageRouteFailed and management message waiting with it; each
 * priority in arrival order). */
static void on_admin(struct shmr_ctl *c)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *m = (struct shmr_msg *)buf;

	if (shmr_ctl_admin_begin(&c->admin) < 0)
		return;
	while (shmr_ctl_admin_next(&c->admin, m)) {
		int r;

		if (m->flags & SHMR_F_WANT_WORKER) {
			shmr_ctl_want_worker(&c->sp, m->to);
			continue;
		}
		r = router_of(c, m->to);
		/* Kill for a routee: sent to its inbox, or to every routee
		 * in a Broadcast envelope (the dataplane sends them here). */
		if (m->type == SHMR_TYPE_KILL && m->kind != SHMR_KIND_REPLY &&
		    !(m->flags & SHMR_F_ROUTE_FAILED) &&
		    (r < 0 || (m->flags & SHMR_F_BROADCAST))) {
			on_kill(c, r, m);
			continue;
		}
		if (r < 0) {
			if (m->kind == SHMR_KIND_CALL)
				shmr_ctl_admin_reply_text(&c->admin, m,
							  -SHMR_E_NOT_ALLOWED,
							  NULL);
			continue;
		}
		/* The router's own messages, whatever the priority
		 * (a dead letter of one is still a dead letter). */
		if (m->type >= SHMR_TYPE_RESERVED &&
		    !(m->flags & SHMR_F_ROUTE_FAILED) &&
		    m->kind != SHMR_KIND_REPLY) {
			if (!shmr_ctl_server_msg_allowed(&c->srv, (unsigned)r,
							 m)) {
				if (m->kind == SHMR_KIND_CALL)
					(void)shmr_ctl_admin_reply(
						&c->admin, m,
						-SHMR_E_NOT_ALLOWED, NULL, 0);
				continue;
			}
			shmr_ctl_manage_msg(&c->pools, (unsigned)r, m);
			continue;
		}
		if (m->kind == SHMR_KIND_CALL)
			shmr_ctl_handlers_call(&c->hnd, (unsigned)r, m);
		else if (m->kind == SHMR_KIND_SEND)
			shmr_ctl_handlers_message(&c->hnd, (unsigned)r, m);
	}
	shmr_ctl_admin_end(&c->admin);
}

/* The state file, when the model was published since it was written. */
static void save_state(struct shmr_ctl *c, int force)
{
	int rc = shmr_ctl_state_save(&c->state, &c->model, &c->sp,
				     c->dom.size, force);

	if (rc < 0)
		shmr_ctl_warn("state file %s: %s (a restarted control plane "
			      "could not adopt the domain)",
			      c->state.path, strerror(-rc));
}

/*
 * One control plane per domain: an exclusive flock on
 * <run_dir>/<domain>.lock, held until we exit (the kernel drops it when
 * we die, however we die; CLOEXEC, so no child ever holds it).
 * 0, -EADDRINUSE (held by a live control plane), or -errno.
 */
static int take_lock(struct shmr_ctl *c)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s.lock", c->run_dir,
		 c->cfg.domain);
	c->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->lockfd < 0)
		return -errno;
	if (flock(c->lockfd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EADDRINUSE : -errno;
	return 0;
}

/* At exit: the host-wide lock's file goes, still held (see
 * take_host_lock() for the next taker's side).  A child between fork
 * and exec leaves by _exit(2): never here. */
static void drop_host_lock(void)
{
	if (ctl.hostlock[0])
		(void)unlink(ctl.hostlock);
	ctl.hostlock[0] = '\0';
}

/*
 * One control plane per domain name on the host, whatever its run dir.
 * The run dir's lock is per directory, but the dataplane's EAL file
 * prefix, shmr-<domain> (dataplane/main.c), is host-wide: a second
 * control plane of the same name in another run dir would start a second
 * dataplane, whose EAL takes over (and at exit removes) the first one's
 * runtime directory and telemetry socket.  So a second flock, on
 * <base>/shmr-<prefix>.lock, where <base> is where EAL puts that
 * directory for the dataplane we start (it inherits our environment:
 * $RUNTIME_DIRECTORY, else /var/run for root, else $XDG_RUNTIME_DIR,
 * else /tmp) and <prefix> the domain as the file prefix spells it.
 * Every exit of ours removes the file while it still holds the lock
 * (drop_host_lock(), atexit: a kill -9 leaves it, harmlessly, the lock
 * gone with us); so a taker checks, once it holds the lock, that the
 * path still names the file it locked, else it locked a removed file and
 * tries again with the new one.  0, -EADDRINUSE (held: *path says
 * where), or -errno.
 */
static int take_host_lock(struct shmr_ctl *c, char *path, size_t cap)
{
	struct stat held, named;
	char prefix[64];

	snprintf(path, cap, "%s/%s.lock", shmr_proto_eal_base(),
		 shmr_proto_eal_prefix(prefix, sizeof(prefix), c->cfg.domain));
	for (;;) {
		/* O_NOFOLLOW: /tmp is everyone's. */
		c->hostlockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC |
						   O_NOFOLLOW,
				     0600);
		if (c->hostlockfd < 0)
			return -errno;
		if (flock(c->hostlockfd, LOCK_EX | LOCK_NB) < 0)
			return errno == EWOULDBLOCK ? -EADDRINUSE : -errno;
		if (fstat(c->hostlockfd, &held) < 0)
			return -errno;
		if (stat(path, &named) == 0 && named.st_ino == held.st_ino &&
		    named.st_dev == held.st_dev)
			break;
		close(c->hostlockfd);
	}
	snprintf(c->hostlock, sizeof(c->hostlock), "%s", path);
	atexit(drop_host_lock);
	return 0;
}

static int run_loop(struct shmr_ctl *c)
{
	struct epoll_event evs[64];

	while (!c->loop.stop_requested) {
		int n = epoll_wait(c->loop.epfd, evs, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			shmr_ctl_err("epoll_wait: %s", strerror(errno));
			return EXIT_RUNTIME;
		}
		for (int i = 0; i < n; i++) {
			uint32_t tag = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t idx = (uint32_t)evs[i].data.u64;

			switch (tag) {
			case SHMR_CTL_TAG_SIGNAL:
				on_signal(c);
				break;
			case SHMR_CTL_TAG_LISTEN:
				shmr_ctl_server_accept(&c->srv);
				break;
			case SHMR_CTL_TAG_TIMER:
				on_timer(c);
				break;
			case SHMR_CTL_TAG_CONN:
				shmr_ctl_server_event(&c->srv, idx,
						      evs[i].events);
				break;
			case SHMR_CTL_TAG_CHILD:
				shmr_ctl_reap(&c->sp);
				break;
			case SHMR_CTL_TAG_ADMIN:
				on_admin(c);
				break;
			case SHMR_CTL_TAG_OWNER:
				shmr_ctl_server_owner_event(&c->srv, idx);
				break;
			case SHMR_CTL_TAG_HTTP:
				shmr_ctl_http_run(&c->http);
				break;
			default:
				break;
			}
			/* Closed or gone clients' lanes (drain.c), what
			 * the event changed, and the deadlines it moved. */
			c->drain_next = shmr_ctl_drain_poll(
				&c->dom, &c->model, &c->dlq, shmr_ctl_now_ms());
			shmr_ctl_publish(&c->dom, &c->model);
			(void)shmr_ctl_admin_flush(&c->admin,
						   shmr_ctl_now_ms(), 0);
			save_state(c, 0);
			arm_timer(c);
		}
	}
	return 0;
}

/* A new domain: the dataplane (until it takes our table), then every
 * route's worker; any failure stops everything and exits 1. */
static void start_fresh(struct shmr_ctl *c)
{
	int rc = shmr_ctl_spawn_dataplane(&c->sp);

	if (rc < 0) {
		shmr_ctl_err("cannot start dataplane %s: %s", c->dataplane,
			      strerror(-rc));
		fatal_init(c);
	}
	/* From the first child on, a control plane killed during start-up
	 * leaves what it started to the next one (adopted, or stopped). */
	save_state(c, 1);
	if (shmr_ctl_spawn_wait_ready(&c->sp, c->model.version,
				      DATAPLANE_START_MS) < 0)
		fatal_init(c);
	for (unsigned i = 0; i < c->model.nrouters; i++) {
		struct shmr_ctl_router *r = &c->model.routers[i];

		for (unsigned k = 0; k < r->nroutes; k++) {
			const char *what = NULL;

			rc = shmr_ctl_spawn_worker(&c->sp, i, k, &what);
			if (rc < 0 && what)
				shmr_ctl_warn("route %s: cannot pin to cpus "
					      "%s: %s",
					      r->routes[k].conf->name,
					      r->routes[k].cpus,
					      strerror(-rc));
			else if (rc < 0)
				shmr_ctl_warn("route %s: cannot start %s: %s",
					      r->routes[k].conf->name,
					      r->routes[k].conf->program,
					      strerror(-rc));
			if (rc < 0)
				fatal_init(c);
			save_state(c, 1);
		}
	}
}

/*
 * Every module's state, empty, and what each may use of the others.  The
 * spawner is the lifecycle's process operations (its ctx).
 */
static void wire(struct shmr_ctl *c)
{
	struct shmr_ctl_spawn_deps spawn = {
		.loop = &c->loop, .cfg = &c->cfg, .m = &c->model,
		.d = &c->dom, .life = &c->life, .pin = &c->pin,
		.dataplane = c->dataplane, .sock_path = c->sock_path,
		.run_dir = c->run_dir, .dlq = &c->dlq,
	};
	struct shmr_ctl_server_deps dep = {
		.loop = &c->loop, .cfg = &c->cfg, .m = &c->model,
		.d = &c->dom, .life = &c->life, .hnd = &c->hnd,
		.pools = &c->pools, .dlq = &c->dlq, .sp = &c->sp,
	};

	memset(c, 0, sizeof(*c));
	c->loop.epfd = c->sigfd = c->timerfd = -1;
	c->dom.memfd = c->dom.lanes_fd = c->dom.peer_ro_fd = -1;
	c->life = (struct shmr_ctl_life){ &c->model, &shmr_ctl_life_daemon_ops,
					  &c->sp };
	shmr_ctl_pin_init(&c->pin, c->cpus);
	shmr_ctl_spawn_init(&c->sp, &spawn);
	shmr_ctl_server_init(&c->srv, &dep, c->sock_path);
	shmr_ctl_admin_init(&c->admin, &c->loop, &c->dom, &c->model);
	shmr_ctl_dlq_files_init(&c->dlq, &c->model, &c->admin, c->run_dir,
				c->cfg.domain);
	shmr_ctl_handlers_init(&c->hnd, &c->model, &c->life, &c->dom,
			       &c->admin, &c->dlq);
	shmr_ctl_manage_init(&c->pools, &c->model, &c->life, &c->dom,
			     &c->admin);
	c->adopt.cfg = &c->cfg;
	c->adopt.m = &c->model;
	c->adopt.d = &c->dom;
	c->adopt.sp = &c->sp;
	c->adopt.srv = &c->srv;
	c->adopt.pin = &c->pin;
	c->adopt.sock_path = c->sock_path;
	c->lockfd = -1;
	c->hostlockfd = -1;
}

/*
 * What is kept by router index, for the configuration's routers (they
 * never change while it runs): allocated once, before anything is built
 * from the configuration.  Errors: -ENOMEM.
 */
static int size_by_routers(struct shmr_ctl *c)
{
	unsigned n = c->cfg.nrouters;

	c->cpus = calloc(n ? n : 1, sizeof(*c->cpus));
	if (!c->cpus)
		return -ENOMEM;
	c->pin.cpus = c->cpus; /* wire() gave it none yet */
	if (shmr_ctl_spawn_routers(&c->sp, n) < 0 ||
	    shmr_ctl_handlers_routers(&c->hnd, n) < 0 ||
	    shmr_ctl_dlq_files_routers(&c->dlq, n) < 0)
		return -ENOMEM;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "dataplane", required_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct shmr_ctl *c = &ctl;
	const char *conf = NULL, *run_dir = NULL, *dataplane = NULL;
	int check = 0, ready_fd = -1, opt, rc, adopting;
	char *end, conf_why[PATH_MAX + 64];
	long v;

	wire(c);

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			conf = optarg;
			break;
		case 'r':
			if (!*optarg)
				shmr_ctl_usage_error("--run-dir: empty");
			run_dir = optarg;
			break;
		case 'f':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 ||
			    v > INT32_MAX || fcntl((int)v, F_GETFD) < 0)
				shmr_ctl_usage_error("--ready-fd: not an open descriptor");
			ready_fd = (int)v;
			break;
		case 'd':
			dataplane = optarg;
			break;
		case 'k':
			check = 1;
			break;
		case 'q':
			shmr_ctl_log_quiet();
			break;
		case 'L':
			shmr_ctl_log_level_opt(optarg);
			break;
		case 'h':
			shmr_ctl_usage_full();
			return 0;
		case 'V':
			printf("shmr-control %s\n", SHMR_VERSION_TEXT);
			return 0;
		case ':':
			fprintf(stderr, "shmr-control: %s: missing argument\n",
				argv[optind - 1]);
			shmr_ctl_usage_error(NULL);
			break;
		default:
			fprintf(stderr, "shmr-control: unknown option %s\n",
				argv[optind - 1]);
			shmr_ctl_usage_error(NULL);
		}
	}
	if (optind < argc)
		shmr_ctl_usage_error("unexpected argument");
	/* Children must not hold the ready pipe: its reader waits for EOF
	 * after an init failure. */
	if (ready_fd >= 0)
		(void)fcntl(ready_fd, F_SETFD, FD_CLOEXEC);

	shmr_ctl_conf_load(&c->cfg, conf, conf_why, sizeof(conf_why));
	if (size_by_routers(c) < 0) {
		shmr_ctl_err("out of memory for %u routers", c->cfg.nrouters);
		return EXIT_RUNTIME;
	}
	shmr_ctl_conf_apply(&c->cfg, &c->model, c->cpus, &c->groups);
	if (check) {
		printf("%s: ok\n", c->cfg.source[0] ? c->cfg.source
						    : (conf ? conf
							    : "<default>"));
		return 0;
	}

	/* The first line says which configuration runs. */
	shmr_ctl_log_start(c->cfg.log_level, conf_why);
	shmr_ctl_notify_init(&c->notify);
	/* A closed ready pipe must not kill us; children get SIG_DFL back. */
	signal(SIGPIPE, SIG_IGN);
	if (shmr_ctl_run_dir_resolve(&c->cfg, run_dir, c->run_dir,
				      sizeof(c->run_dir), c->sock_path,
				      sizeof(c->sock_path)) < 0) {
		shmr_ctl_err("run dir or socket path too long");
		return EXIT_RUNTIME;
	}
	shmr_ctl_dataplane_resolve(dataplane, c->dataplane,
				   sizeof(c->dataplane));
	rc = shmr_ctl_mkdir_p(c->run_dir, 0755);
	if (rc < 0) {
		shmr_ctl_err("cannot create run dir %s: %s", c->run_dir,
			      strerror(-rc));
		return EXIT_RUNTIME;
	}
	/* Absolute, so that a worker that changes directory still finds
	 * SHMR_SOCKET. */
	{
		char abs[PATH_MAX];

		errno = 0;
		if (!realpath(c->run_dir, abs) || shmr_ctl_run_dir_resolve(&c->cfg, abs, c->run_dir,
					     sizeof(c->run_dir),
					     c->sock_path,
					     sizeof(c->sock_path)) < 0) {
			shmr_ctl_err("run dir %s: %s", c->run_dir,
				      errno ? strerror(errno) : "too long");
			return EXIT_RUNTIME;
		}
	}
	rc = shmr_ctl_state_init(&c->state, c->run_dir, c->cfg.domain);
	if (rc == 0)
		rc = take_lock(c);
	if (rc == -EADDRINUSE) {
		shmr_ctl_err("domain %s is already served at %s",
			      c->cfg.domain, c->sock_path);
		return EXIT_RUNTIME;
	} else if (rc < 0) {
		shmr_ctl_err("cannot lock domain %s in %s: %s", c->cfg.domain,
			      c->run_dir, strerror(-rc));
		return EXIT_RUNTIME;
	}
	{
		char path[PATH_MAX + 64];

		rc = take_host_lock(c, path, sizeof(path));
		if (rc == -EADDRINUSE) {
			shmr_ctl_err("domain %s is already served on this "
				      "host, from another run dir (%s is "
				      "held)",
				      c->cfg.domain, path);
			return EXIT_RUNTIME;
		} else if (rc < 0) {
			shmr_ctl_err("cannot lock domain %s host-wide at %s: "
				      "%s",
				      c->cfg.domain, path, strerror(-rc));
			return EXIT_RUNTIME;
		}
	}
	adopting = shmr_ctl_adopt_probe(&c->adopt, &c->state);
	if (adopting)
		shmr_ctl_notify_status(&c->notify, "adopting domain %s",
				       c->cfg.domain);
	/* shmr_ctl_conf_apply() resolved the socket group. */
	rc = shmr_ctl_server_open(&c->srv, c->groups.have_group,
				  c->groups.group, c->groups.have_admin_group,
				  c->groups.admin_group);
	if (rc == -EADDRINUSE) {
		shmr_ctl_err("domain %s is already served at %s",
			      c->cfg.domain, c->sock_path);
		return EXIT_RUNTIME;
	} else if (rc < 0) {
		shmr_ctl_err("cannot listen on %s: %s", c->sock_path,
			      strerror(-rc));
		return EXIT_RUNTIME;
	}
	rc = adopting ? shmr_ctl_adopt_domain(&c->adopt, &c->admin) : 0;
	if (rc == SHMR_CTL_ADOPT_MISMATCH) {
		/* A running domain, but not this configuration's: it keeps
		 * running, untouched (its queues are not ours to drop). */
		shmr_ctl_err("domain %s is running with another "
			      "configuration: left running; start "
			      "shmr-control with the configuration it was "
			      "started with to adopt it",
			      c->cfg.domain);
		shmr_ctl_server_close_listener(&c->srv);
		return EXIT_USAGE;
	}
	if (rc < 0) {
		/* Not reachable at all: a new domain, without the old
		 * one's processes (they would run unmanaged forever). */
		shmr_ctl_adopt_abandon(&c->adopt);
		adopting = 0;
		shmr_ctl_domain_close(&c->dom);
		c->dom = (struct shmr_ctl_domain){ .memfd = -1, .lanes_fd = -1,
						   .peer_ro_fd = -1 };
		shmr_ctl_admin_init(&c->admin, &c->loop, &c->dom, &c->model);
		if (shmr_ctl_model_init(&c->model, &c->cfg) < 0)
			abort(); /* it worked in shmr_ctl_conf_apply() */
	}
	if (!adopting) {
		rc = shmr_ctl_domain_create(&c->dom, &c->cfg);
		if (rc < 0) {
			shmr_ctl_err("cannot create domain %s: %s",
				      c->cfg.domain,
				      rc <= -SHMR_E_BASE ? "layout"
							 : strerror(-rc));
			shmr_ctl_server_close_listener(&c->srv);
			return EXIT_RUNTIME;
		}
		rc = shmr_ctl_admin_open(&c->admin);
		if (rc < 0) {
			shmr_ctl_err("cannot allocate the admin endpoint: %s",
				      shmr_strerror(rc));
			shmr_ctl_server_close_listener(&c->srv);
			return EXIT_RUNTIME;
		}
	}
	shmr_ctl_publish(&c->dom, &c->model);
	if (hwloc_topology_init(&c->pin.topo) < 0 ||
	    hwloc_topology_load(c->pin.topo) < 0) {
		shmr_ctl_err("cannot load the hwloc topology");
		shmr_ctl_server_close_listener(&c->srv);
		return EXIT_RUNTIME;
	}
	if (adopting)
		shmr_ctl_adopt_pins(&c->adopt);
	if (shmr_ctl_pin_plan(&c->pin, &c->cfg, &c->model,
			      c->dom.geo.nlcores) < 0) {
		shmr_ctl_server_close_listener(&c->srv);
		return EXIT_RUNTIME;
	}
	if (shmr_ctl_handlers_load(&c->hnd) < 0) {
		shmr_ctl_handlers_unload(&c->hnd);
		shmr_ctl_server_close_listener(&c->srv);
		return EXIT_RUNTIME;
	}
	rc = setup_loop(c);
	if (rc == 0)
		rc = shmr_ctl_admin_start(&c->admin);
	if (rc < 0) {
		shmr_ctl_err("event loop: %s", strerror(-rc));
		shmr_ctl_server_close_listener(&c->srv);
		return EXIT_RUNTIME;
	}
	if (shmr_ctl_http_start(&c->http, c->cfg.metrics_listen, &c->loop,
				&c->dom, &c->model, &c->dlq) < 0) {
		shmr_ctl_server_close_listener(&c->srv);
		return EXIT_RUNTIME;
	}

	if (adopting) {
		shmr_ctl_adopt_processes(&c->adopt);
		shmr_ctl_publish(&c->dom, &c->model);
		shmr_ctl_log("adopted domain %s: dataplane %d, %u workers, "
			     "%" PRIu32 " endpoints",
			     c->cfg.domain,
			     (int)shmr_ctl_spawn_dataplane_pid(&c->sp),
			     c->adopt.workers, c->model.alloc.nused);
		shmr_ctl_notify_ready(&c->notify,
				      "domain %s up (adopted): dataplane %d, "
				      "%u worker(s)",
				      c->cfg.domain,
				      (int)shmr_ctl_spawn_dataplane_pid(&c->sp),
				      c->adopt.workers);
	} else {
		unsigned workers = 0;

		shmr_ctl_notify_status(&c->notify, "starting domain %s",
				       c->cfg.domain);
		start_fresh(c);
		shmr_ctl_publish(&c->dom, &c->model);
		shmr_ctl_log("domain %s up: %u router(s), socket %s, %s pages",
			     c->cfg.domain, c->model.nrouters, c->sock_path,
			     c->dom.hugepages ? "huge" : "4 KiB");
		for (unsigned i = 0; i < c->model.nrouters; i++)
			workers += c->model.routers[i].nroutes;
		shmr_ctl_notify_ready(&c->notify,
				      "domain %s up: %u router(s), %u "
				      "worker(s)",
				      c->cfg.domain, c->model.nrouters,
				      workers);
	}
	save_state(c, 1);
	if (ready_fd >= 0) {
		ssize_t w;

		do
			w = write(ready_fd, "R", 1);
		while (w < 0 && errno == EINTR);
		close(ready_fd);
	}

	/* The pools' resizers, if any, look from now on (the first tick
	 * finds out whether there are any). */
	shmr_ctl_resize_start(&c->pools,
			      (uint64_t)getpid() ^ shmr_ctl_now_ms());
	arm_timer(c);
	rc = run_loop(c);
	shmr_ctl_notify_stopping(&c->notify, "stopping domain %s",
				 c->cfg.domain);
	c->loop.stopping = 1;
	/* The dataplane still runs: held answers go now. */
	(void)shmr_ctl_admin_flush(&c->admin, shmr_ctl_now_ms(), 1);
	shmr_ctl_http_stop(&c->http);
	shmr_ctl_server_close_listener(&c->srv);
	shmr_ctl_stop_children(&c->sp);
	shmr_ctl_server_close_all(&c->srv);
	shmr_ctl_handlers_unload(&c->hnd);
	/* Nothing left to adopt. */
	shmr_ctl_state_remove(&c->state);
	shmr_ctl_log("domain %s stopped", c->cfg.domain);
	return rc;
}
