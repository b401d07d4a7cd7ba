/*
 * Children of the control plane: the dataplane and one worker per route.
 *
 * Starting: fork and exec with a synchronous report of the step that
 * failed (procs.c, shmr_ctl_proc_spawn()).  We have threads, so what a
 * child needs (argv, its environment, its cpu mask, the descriptors it
 * keeps) is built here and in procs.c before the fork, and the child
 * makes only async-signal-safe calls until exec.  Each child gets its own
 * process group, so a terminal's Ctrl-C reaches the control plane alone,
 * which then stops everyone in order, and a stop reaches all a worker
 * started (its group: procs.c); and no parent-death signal: a
 * control plane that dies leaves the dataplane and the workers running,
 * and the next one adopts them (adopt.c).
 *
 * Watching: a pidfd per process in the epoll set, ours or adopted.  When
 * one is readable (or SIGCHLD arrives) every exited child is reaped with
 * waitpid(WNOHANG), and every adopted process (not our child: waitpid
 * cannot reap it) whose pidfd is readable is taken as exited, its status
 * unknown.  Every signal goes through the pidfd (procs.c), so a pid
 * reused after an unnoticed exit is never hit.
 *
 * The restart protocol (the invariant: a lane has at most one producer and
 * one consumer, and a dead one's half-done operation is undone before a
 * new one starts):
 *   worker of route R died (confirmed by waitpid):
 *     1. its inbound lanes (consumer side: a burst it had peeked and not
 *        released) get shmr_lane_repair_consumer(): the burst is flagged
 *        SHMR_F_REDELIVERED and handed to the next consumer;
 *     2. its OUT and OUT_HIGH lanes (producer side): shmr_lane_repair_
 *        producer() drops an enqueue it had not published;
 *        (1 and 2 are shmr_ctl_slot_take_over(), domain.c: our own copy
 *        of the geometry places the lanes and bounds the repairs, and a
 *        lane the worker left unsound, geometry or indices, is
 *        initialised again in place instead: counted, logged once);
 *     3. R goes DEAD (its names and claim are dropped): the dataplane keeps
 *        queueing into the inbox, which belongs to the route;
 *     4. a replacement is forked into the same slot (same endpoint PID), so
 *        it finds what was queued (unless the router's supervisor says
 *        otherwise: supervise.c).  Nothing else can consume the inbox in
 *        between: only the route's spawned worker may CLAIM it.
 *   the dataplane died:
 *     every used endpoint's inbound lanes get the producer repair and its
 *     OUT/OUT_HIGH lanes (and the control lane) the consumer repair, then a
 *     new dataplane starts (hdr.dataplane_starts counts every start).
 * A child that keeps dying within a second of its start is restarted with
 * a growing delay (100 ms doubling up to 5 s) on the timerfd; so is one
 * whose exec fails after init.  While it waits its route is DEAD.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_ring.h>

#include <shmr/domain.h>
#include <shmr/logline.h>
#include <shmr/proto.h>

#include "arena.h"
#include "control_internal.h"
#include "procs.h"
#include "spawn.h"
#include "supervise.h"
#include "worker_env.h"

#define QUICK_EXIT_MS 1000u
#define DRAIN_POLL_MS 10u
#define BACKOFF_FIRST_MS 100u
#define BACKOFF_MAX_MS 5000u

/* Fork and exec (procs.c), the pidfd in our epoll set. */
static int spawn(struct shmr_ctl_spawner *sp, const struct shmr_ctl_exec *x,
		 pid_t *pid_out, int *pidfd_out, int *stage)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int rc = shmr_ctl_proc_spawn(x, sp->dep.pin->topo, pid_out, pidfd_out,
				     stage);

	if (rc < 0)
		return rc;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_CHILD << 32;
	if (sp->dep.loop->epfd >= 0)
		(void)epoll_ctl(sp->dep.loop->epfd, EPOLL_CTL_ADD, *pidfd_out,
				&ev);
	return 0;
}

void shmr_ctl_spawn_init(struct shmr_ctl_spawner *sp,
			 const struct shmr_ctl_spawn_deps *dep)
{
	*sp = (struct shmr_ctl_spawner){ .dep = *dep, .dp.pidfd = -1,
					 .dp_fd = -1, .dp_lanes_fd = -1 };
}

void shmr_ctl_spawn_free(struct shmr_ctl_spawner *sp)
{
	free(sp->workers);
	free(sp->pfd);
	free(sp->stopping);
	sp->workers = NULL;
	sp->pfd = NULL;
	sp->stopping = NULL;
	sp->nworkers = 0;
}

int shmr_ctl_spawn_routers(struct shmr_ctl_spawner *sp, unsigned nrouters)
{
	size_t nw = (size_t)nrouters * SHMR_MAX_ROUTES + 1;

	shmr_ctl_spawn_free(sp);
	sp->workers = calloc(nrouters ? nrouters : 1, sizeof(*sp->workers));
	sp->pfd = calloc(nw, sizeof(*sp->pfd));
	sp->stopping = calloc(nw, sizeof(*sp->stopping));
	if (!sp->workers || !sp->pfd || !sp->stopping)
		return -ENOMEM;
	sp->nworkers = nrouters;
	for (unsigned i = 0; i < nrouters; i++)
		for (unsigned k = 0; k < SHMR_MAX_ROUTES; k++)
			sp->workers[i][k].pidfd = -1;
	return 0;
}

pid_t shmr_ctl_spawn_dataplane_pid(const struct shmr_ctl_spawner *sp)
{
	return sp->dp.pid;
}

static void proc_started(struct shmr_ctl_proc *p, pid_t pid, int pidfd)
{
	p->pid = pid;
	p->pidfd = pidfd;
	p->adopted = 0;
	p->start = shmr_ctl_proc_start(pid);
	p->started_ms = shmr_ctl_now_ms();
	p->retry_at_ms = 0;
	p->kill_at_ms = 0;
	p->restart_only = 0;
}

static void proc_gone(struct shmr_ctl_spawner *sp, struct shmr_ctl_proc *p)
{
	if (p->pidfd >= 0) {
		if (sp->dep.loop->epfd >= 0)
			epoll_ctl(sp->dep.loop->epfd, EPOLL_CTL_DEL, p->pidfd,
				  NULL);
		close(p->pidfd);
	}
	p->pidfd = -1;
	p->pid = 0;
	p->adopted = 0;
	p->start = 0;
	p->kill_at_ms = 0;
	p->drain_at_ms = 0;
}

/* Signal @p p through its pidfd (never a reused pid), and the rest of
 * its process group: what a worker started goes with it (procs.c). */
static void proc_signal(struct shmr_ctl_proc *p, int sig)
{
	if (p->pid)
		(void)shmr_ctl_proc_signal_group(p->pidfd, p->pid, sig);
}

/* Reap our child @p pid: 1 when it had exited (*status set), 0 when it
 * runs, -1 when it is not ours to reap.  Before the reap, while the
 * zombie still holds its pid as its group's id, what is left of the group
 * is killed when it was asked to stop (@p kill_rest): a helper that
 * ignored the SIGTERM must not outlive a stop or a remove. */
static int reap_child(pid_t pid, int kill_rest, int *status)
{
	siginfo_t si = { 0 };

	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return -1;
	if (si.si_pid != pid)
		return 0;
	if (kill_rest && getpgid(pid) == pid)
		(void)kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 1;
}

int shmr_ctl_spawn_dataplane(struct shmr_ctl_spawner *sp)
{
	char fdnum[16], lanesnum[16];
	char *argv[12 + SHMR_CONF_EAL_ARGS_MAX];
	/* The descriptors argv names: left open across exec. */
	int keep[] = { sp->dep.d->memfd, sp->dep.d->lanes_fd };
	unsigned nkeep = sizeof(keep) / sizeof(keep[0]);
	int n = 0, stage, rc;
	pid_t pid;
	int pidfd;

	snprintf(fdnum, sizeof(fdnum), "%d", keep[0]);
	snprintf(lanesnum, sizeof(lanesnum), "%d", keep[1]);
	argv[n++] = (char *)sp->dep.dataplane;
	argv[n++] = "--domain-fd";
	argv[n++] = fdnum;
	argv[n++] = "--lanes-fd";
	argv[n++] = lanesnum;
	/* Always a list: the control plane must know which PUs route, to
	 * keep default-pinned workers off them (pin.c). */
	if (sp->dep.pin->dp_cpus[0]) {
		argv[n++] = "--cpus";
		argv[n++] = sp->dep.pin->dp_cpus;
	}
	argv[n++] = "--log-level";
	argv[n++] = (char *)shmr_log_level_name(shmr_ctl_log_threshold());
	/* eal_args, after ours (config/parse_serve.c checked them). */
	if (sp->dep.cfg->neal_args)
		argv[n++] = "--";
	for (unsigned i = 0; i < sp->dep.cfg->neal_args; i++)
		argv[n++] = (char *)sp->dep.cfg->eal_args[i];
	argv[n] = NULL;
	rc = spawn(sp,
		   &(struct shmr_ctl_exec){ .file = sp->dep.dataplane,
					    .argv = argv, .keep_fds = keep,
					    .nkeep = nkeep },
		   &pid, &pidfd, &stage);
	if (rc < 0)
		return rc;
	proc_started(&sp->dp, pid, pidfd);
	/* Kept across exec: the same numbers. */
	sp->dp_fd = keep[0];
	sp->dp_lanes_fd = keep[1];
	/* Relaxed: informational words for tools and tests. */
	atomic_store_explicit(&shmr_hdr(sp->dep.d->base)->dataplane_pid, pid,
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&shmr_hdr(sp->dep.d->base)->dataplane_starts,
				  1, memory_order_relaxed);
	return 0;
}

/*
 * Start-up only: wait until every routing lcore reports the published spec
 * version (stats.table_version), so that "ready" means the dataplane routes
 * with our table.  Nothing rings the control plane for this, so it checks
 * every few milliseconds, bounded; the idle appliance never polls.
 * Returns 0, or -1 after printing why (the dataplane died, or is too slow).
 */
int shmr_ctl_spawn_wait_ready(struct shmr_ctl_spawner *sp, uint64_t version,
			      unsigned timeout_ms)
{
	uint64_t deadline = shmr_ctl_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = sp->dp.pidfd, .events = POLLIN };
	int status;

	while (shmr_ctl_seen_version(sp->dep.d) < version) {
		if (waitpid(sp->dp.pid, &status, WNOHANG) == sp->dp.pid) {
			sp->dp.pid = 0;
			shmr_ctl_err("dataplane %s %s %d during start-up",
				      sp->dep.dataplane,
				      WIFEXITED(status) ? "exited with status"
							: "was killed by signal",
				      WIFEXITED(status) ? WEXITSTATUS(status)
							: WTERMSIG(status));
			return -1;
		}
		if (shmr_ctl_now_ms() >= deadline) {
			shmr_ctl_err("dataplane %s did not take the routing "
				      "table within %u s",
				      sp->dep.dataplane, timeout_ms / 1000);
			return -1;
		}
		(void)poll(&pfd, 1, 5);
	}
	return 0;
}

int shmr_ctl_spawn_worker(struct shmr_ctl_spawner *sp, unsigned r, unsigned k,
			  const char **what)
{
	struct shmr_ctl_route *q = &sp->dep.m->routers[r].routes[k];
	const struct shmr_conf_route *cq = q->conf;
	char *argv[SHMR_CONF_ARGS_MAX + 2];
	struct shmr_ctl_worker_env env;
	unsigned n = 0;
	int stage = SHMR_CTL_STAGE_SETUP, rc, pidfd;
	pid_t pid;

	*what = NULL;
	argv[n++] = (char *)cq->program;
	for (unsigned i = 0; i < cq->nargs && i < SHMR_CONF_ARGS_MAX; i++)
		argv[n++] = (char *)cq->args[i];
	argv[n] = NULL;
	rc = shmr_ctl_worker_env(&env, sp->dep.sock_path, sp->dep.run_dir,
				 sp->dep.cfg->domain,
				 sp->dep.m->routers[r].conf->name,
				 q->conf->name, q->pid);
	if (rc == 0)
		rc = spawn(sp,
			   &(struct shmr_ctl_exec){
				   .file = cq->program, .argv = argv,
				   .env = env.vars,
				   .cpus = sp->dep.pin->cpus[r][k] },
			   &pid, &pidfd, &stage);
	if (rc < 0) {
		if (stage == SHMR_CTL_STAGE_PIN)
			*what = "pin";
		return rc;
	}
	proc_started(&sp->workers[r][k], pid, pidfd);
	shmr_ctl_model_route_set(sp->dep.m, q, pid);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Exits and restarts                                                  */
/* ------------------------------------------------------------------ */

static void describe(int status, char *buf, size_t cap)
{
	if (status == SHMR_CTL_STATUS_UNKNOWN)
		snprintf(buf, cap, "exited (not our child: status unknown)");
	else if (WIFEXITED(status))
		snprintf(buf, cap, "exited with status %d",
			 WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, cap, "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "ended (status 0x%x)", status);
}

/* The dataplane's: always on (it is the appliance, not a user program). */
static uint64_t backoff_ms(unsigned quick_fails)
{
	return shmr_ctl_backoff_ms(quick_fails, BACKOFF_FIRST_MS, BACKOFF_MAX_MS);
}

/* A route's: as configured (restart_backoff_ms, 0 = none). */
static uint64_t worker_backoff_ms(const struct shmr_ctl_spawner *sp,
				  unsigned quick_fails)
{
	return shmr_ctl_backoff_ms(quick_fails, sp->dep.cfg->restart_backoff_ms,
			  sp->dep.cfg->restart_backoff_max_ms);
}

uint64_t shmr_ctl_spawn_next_ms(const struct shmr_ctl_spawner *sp)
{
	uint64_t next = 0;

	if (sp->dp.retry_at_ms)
		next = sp->dp.retry_at_ms;
	if (sp->retire_at_ms && (!next || sp->retire_at_ms < next))
		next = sp->retire_at_ms;
	for (unsigned i = 0; i < sp->dep.m->nrouters; i++)
		for (unsigned k = 0; k < sp->dep.m->routers[i].nroutes; k++) {
			uint64_t t = sp->workers[i][k].retry_at_ms;
			uint64_t kt = sp->workers[i][k].kill_at_ms;
			uint64_t dt = sp->workers[i][k].drain_at_ms;

			if (t && (!next || t < next))
				next = t;
			if (kt && (!next || kt < next))
				next = kt;
			if (dt && (!next || dt < next))
				next = dt;
		}
	return next;
}

static void restart_worker(struct shmr_ctl_spawner *sp, unsigned r, unsigned k)
{
	struct shmr_ctl_route *q = &sp->dep.m->routers[r].routes[k];
	struct shmr_ctl_proc *p = &sp->workers[r][k];
	int rc;

	uint64_t wait;

	if ((q->state != SHMR_ROUTE_DEAD &&
	     q->state != SHMR_ROUTE_REPLACE_WAIT) ||
	    sp->dep.m->routers[r].stopped)
		return; /* disabled, pending or running meanwhile */
	rc = shmr_ctl_life_restart(sp->dep.life, r, k); /* warns on failure */
	if (rc == 0)
		return;
	if (rc > 0) {
		shmr_ctl_log("route %s: %s as process %d (restarts %"
			     PRIu64 ")", q->conf->name,
			     q->restarts ? "restarted" : "started", (int)p->pid,
			     q->restarts);
		return;
	}
	/* The slot stays empty; what is routed there fails with the start
	 * error (the spec's start_err) and asks again (lazy restart), while
	 * its inbox keeps what it held.  With a backoff the timer retries
	 * too. */
	p->quick_fails++;
	p->started_ms = shmr_ctl_now_ms();
	wait = worker_backoff_ms(sp, p->quick_fails);
	if (sp->dep.cfg->restart_backoff_ms == 0) {
		shmr_ctl_warn("route %s: left without a worker; what is "
			      "routed to it fails with the start error and "
			      "retries", q->conf->name);
		return;
	}
	p->retry_at_ms = shmr_ctl_now_ms() +
			 (wait ? wait : sp->dep.cfg->restart_backoff_ms);
	shmr_ctl_warn("route %s: retrying in %" PRIu64 " ms (or when a "
		      "message is routed to it, whichever is later)",
		      q->conf->name, p->retry_at_ms - shmr_ctl_now_ms());
}

void shmr_ctl_want_worker(struct shmr_ctl_spawner *sp, struct shmr_pid inbox)
{
	struct shmr_ctl_route *q;
	unsigned r;

	if (sp->dep.loop->stopping)
		return;
	q = shmr_ctl_model_route_of_slot(sp->dep.m, inbox.slot, &r);
	if (!q || q->pid.gen != inbox.gen || q->os_pid)
		return;
	unsigned k = (unsigned)(q - sp->dep.m->routers[r].routes);
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	/* A backoff in progress decides when the next start is. */
	if (p->retry_at_ms)
		return;
	if (q->state == SHMR_ROUTE_DEAD || q->state == SHMR_ROUTE_REPLACE_WAIT)
		shmr_ctl_log("route %s: a message was routed to it: "
			     "starting its worker (lazy restart)",
			     q->conf->name);
	restart_worker(sp, r, k);
}

static void restart_dataplane(struct shmr_ctl_spawner *sp)
{
	struct shmr_domain_hdr *h = shmr_hdr(sp->dep.d->base);
	int rc = shmr_ctl_spawn_dataplane(sp);

	if (rc == 0) {
		shmr_ctl_log("dataplane restarted as process %d (starts %"
			     PRIu64 ")", (int)sp->dp.pid,
			     atomic_load_explicit(&h->dataplane_starts,
						  memory_order_relaxed));
		/* Tell it the current version straight away. */
		(void)shmr_ctl_lane_send(sp->dep.d, SHMR_CTL_SPEC,
					 sp->dep.m->version);
		return;
	}
	sp->dp.quick_fails++;
	sp->dp.retry_at_ms = shmr_ctl_now_ms() +
			    (backoff_ms(sp->dp.quick_fails)
				     ? backoff_ms(sp->dp.quick_fails)
				     : BACKOFF_FIRST_MS);
	shmr_ctl_err("cannot start dataplane %s: %s; retrying",
		      sp->dep.dataplane, strerror(-rc));
}

static void schedule(struct shmr_ctl_proc *p, uint64_t now)
{
	if (now - p->started_ms >= QUICK_EXIT_MS)
		p->quick_fails = 0;
	else
		p->quick_fails++;
	p->retry_at_ms = now + backoff_ms(p->quick_fails);
}

static void worker_exited(struct shmr_ctl_spawner *sp, unsigned r, unsigned k,
			  int status)
{
	struct shmr_ctl_route *q = &sp->dep.m->routers[r].routes[k];
	struct shmr_ctl_proc *p = &sp->workers[r][k];
	uint32_t slot = q->pid.slot;
	unsigned handed_back;
	char how[96];
	pid_t pid = p->pid;

	proc_gone(sp, p);
	describe(status, how, sizeof(how));
	/* Repair (or initialise again) before anything else can consume or
	 * produce: the replacement is forked only below. */
	handed_back = shmr_ctl_slot_take_over(sp->dep.d, slot);
	q->redelivered += handed_back;
	/* Its unsent arena buffers, before the replacement can allocate
	 * into the same slot (what its inbox holds stays, redelivered). */
	(void)shmr_ctl_arena_reclaim(sp->dep.d, slot);
	shmr_ctl_model_route_set(sp->dep.m, q, 0);
	if (sp->dep.loop->stopping) {
		shmr_ctl_log("route %s: worker %d %s", q->conf->name,
			     (int)pid, how);
		return;
	}
	if (q->state != SHMR_ROUTE_RUNNING && q->state != SHMR_ROUTE_DEAD) {
		/* Asked to stop: complete the pending operation (a remove
		 * moves the routes after k: q and p are not used again). */
		shmr_ctl_log("route %s: worker %d %s (%s completes)",
			     q->conf->name, (int)pid, how,
			     shmr_ctl_route_state_name(q->state));
		(void)shmr_ctl_life_exited(sp->dep.life, r, k);
		return;
	}
	shmr_ctl_warn("route %s: worker %d %s; %u message(s) to redeliver",
		      q->conf->name, (int)pid, how, handed_back);
	if (!shmr_ctl_life_exited(sp->dep.life, r, k))
		return;
	if (sp->dep.m->routers[r].stopped ||
	    shmr_ctl_supervise_exited(sp, r, k))
		return;
	if (shmr_ctl_now_ms() - p->started_ms >= QUICK_EXIT_MS)
		p->quick_fails = 0;
	else
		p->quick_fails++;
	if (worker_backoff_ms(sp, p->quick_fails) == 0) {
		restart_worker(sp, r, k);
		return;
	}
	p->retry_at_ms = shmr_ctl_now_ms() +
			 worker_backoff_ms(sp, p->quick_fails);
	shmr_ctl_warn("route %s: exited %u time(s) in a row within a second "
		      "of its start: restarting in %" PRIu64 " ms",
		      q->conf->name, p->quick_fails,
		      p->retry_at_ms - shmr_ctl_now_ms());
}

static void dataplane_exited(struct shmr_ctl_spawner *sp, int status)
{
	struct shmr_domain_hdr *h = shmr_hdr(sp->dep.d->base);
	const struct shmr_ctl_domain *d = sp->dep.d;
	const struct shmr_ctl_alloc *a = &sp->dep.m->alloc;
	uint32_t nl = d->geo.nlcores, ls = d->geo.lane_size;
	char how[96];
	pid_t pid = sp->dp.pid;

	proc_gone(sp, &sp->dp);
	atomic_store_explicit(&h->dataplane_pid, 0, memory_order_relaxed);
	describe(status, how, sizeof(how));
	for (uint32_t s = 0; s < a->nslots; s++) {
		if (a->slots[s].state != SHMR_CTL_SLOT_USED ||
		    a->slots[s].kind == SHMR_EPK_ROUTER)
			continue;
		/* Our copy of the geometry; a lane whose geometry a worker
		 * wrote is left alone by the repairs (the dataplane's lane
		 * checks refuse it; its owner's exit initialises it). */
		for (uint32_t i = 0; i < nl; i++)
			shmr_lane_repair_producer(shmr_ctl_dom_lane(d, s, i),
						  ls);
		shmr_lane_repair_consumer(
			shmr_ctl_dom_lane(d, s, SHMR_LANE_OUT(nl)),
			d->geo.slot_size, ls);
		shmr_lane_repair_consumer(
			shmr_ctl_dom_lane(d, s, SHMR_LANE_OUT_HIGH(nl)),
			d->geo.slot_size, ls);
	}
	shmr_lane_repair_consumer(shmr_ctl_dom_ctl_lane(d), d->geo.slot_size,
				  ls);
	(void)shmr_ctl_arena_dataplane_gone(sp->dep.d);
	if (sp->dep.loop->stopping) {
		shmr_ctl_log("dataplane %d %s", (int)pid, how);
		return;
	}
	shmr_ctl_warn("dataplane %d %s", (int)pid, how);
	schedule(&sp->dp, shmr_ctl_now_ms());
	if (backoff_ms(sp->dp.quick_fails) == 0)
		restart_dataplane(sp);
}

/* Was the worker @p pid asked to stop (its group goes with it)? */
static int stop_asked(const struct shmr_ctl_spawner *sp, pid_t pid)
{
	if (sp->dep.loop->stopping)
		return 1;
	for (unsigned i = 0; i < sp->dep.m->nrouters; i++)
		for (unsigned k = 0; k < sp->dep.m->routers[i].nroutes; k++)
			if (sp->workers[i][k].pid == pid)
				return sp->workers[i][k].kill_at_ms != 0;
	return 0;
}

/* Dispatch one reaped child; 0 when it was not ours. */
static int exited(struct shmr_ctl_spawner *sp, pid_t pid, int status)
{
	if (sp->dp.pid == pid) {
		dataplane_exited(sp, status);
		return 1;
	}
	for (unsigned i = 0; i < sp->dep.m->nrouters; i++)
		for (unsigned k = 0; k < sp->dep.m->routers[i].nroutes; k++)
			if (sp->workers[i][k].pid == pid) {
				worker_exited(sp, i, k, status);
				return 1;
			}
	return 0;
}

void shmr_ctl_reap(struct shmr_ctl_spawner *sp)
{
	int status;
	pid_t pid;

	for (;;) {
		siginfo_t si = { 0 };

		/* Peek first (WNOWAIT): reap_child() needs the zombie. */
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid <= 0)
			break;
		pid = si.si_pid;
		if (reap_child(pid, stop_asked(sp, pid), &status) != 1)
			break;
		exited(sp, pid, status);
	}
	/* Adopted processes: readable pidfd, no status. */
	if (sp->dp.pid && sp->dp.adopted && shmr_ctl_pidfd_exited(sp->dp.pidfd))
		dataplane_exited(sp, SHMR_CTL_STATUS_UNKNOWN);
	for (unsigned i = 0; i < sp->dep.m->nrouters; i++)
		for (unsigned k = 0; k < sp->dep.m->routers[i].nroutes; k++) {
			struct shmr_ctl_proc *p = &sp->workers[i][k];

			if (p->pid && p->adopted &&
			    shmr_ctl_pidfd_exited(p->pidfd))
				exited(sp, p->pid, SHMR_CTL_STATUS_UNKNOWN);
		}
}

/* What is queued for route @p k of router @p r, taken or not: a burst
 * the worker holds still counts until it asks for the next one. */
static uint64_t inbox_queued(const struct shmr_ctl_spawner *sp, unsigned r,
			     unsigned k)
{
	uint32_t slot = sp->dep.m->routers[r].routes[k].pid.slot;
	uint64_t n = 0;

	for (uint32_t i = 0; i < sp->dep.d->geo.nlcores; i++)
		n += rte_ring_count(shmr_ctl_dom_lane(sp->dep.d, slot, i));
	return n;
}

static void op_stop(void *ctx, unsigned r, unsigned k);

/* A draining worker: stop it once its inbox is empty, else look again
 * in DRAIN_POLL_MS.  Polling only while an operator drains a route. */
static void drain_check(struct shmr_ctl_spawner *sp, unsigned r, unsigned k,
			uint64_t now)
{
	struct shmr_ctl_proc *p = &sp->workers[r][k];
	uint32_t st = sp->dep.m->routers[r].routes[k].state;

	if (st != SHMR_ROUTE_PENDING_DISABLE &&
	    st != SHMR_ROUTE_PENDING_REMOVE) {
		p->drain_at_ms = 0;
		return;
	}
	if (inbox_queued(sp, r, k) != 0) {
		p->drain_at_ms = now + DRAIN_POLL_MS;
		return;
	}
	p->drain_at_ms = 0;
	shmr_ctl_log("route %s: inbox drained: stopping worker %d",
		     sp->dep.m->routers[r].routes[k].conf->name, (int)p->pid);
	op_stop(sp, r, k);
}

void shmr_ctl_spawn_due(struct shmr_ctl_spawner *sp, uint64_t now)
{
	if (!sp->dep.loop->stopping && sp->dp.retry_at_ms &&
	    sp->dp.retry_at_ms <= now) {
		sp->dp.retry_at_ms = 0;
		restart_dataplane(sp);
	}
	shmr_ctl_supervise_due(sp, now);
	for (unsigned i = 0;
	     i < sp->dep.m->nrouters && !sp->dep.loop->stopping; i++)
		for (unsigned k = 0; k < sp->dep.m->routers[i].nroutes; k++) {
			struct shmr_ctl_proc *p = &sp->workers[i][k];

			if (p->pid && p->kill_at_ms && p->kill_at_ms <= now) {
				shmr_ctl_log("route %s: worker %d did not "
					     "stop within the grace: SIGKILL",
					     sp->dep.m->routers[i].routes[k]
						     .conf->name,
					     (int)p->pid);
				proc_signal(p, SIGKILL);
				p->kill_at_ms = 0;
			}
			if (p->pid && p->drain_at_ms && p->drain_at_ms <= now)
				drain_check(sp, i, k, now);
			if (p->pid == 0 && p->retry_at_ms &&
			    p->retry_at_ms <= now) {
				p->retry_at_ms = 0;
				restart_worker(sp, i, k);
			}
		}
}

/* ------------------------------------------------------------------ */
/* Adoption: processes a previous control plane started                */
/* ------------------------------------------------------------------ */

/* Hold @p pid (started at @p start) by a pidfd in @p p; -ESRCH when it is
 * gone or its pid now names another process. */
static int adopt(struct shmr_ctl_spawner *sp, struct shmr_ctl_proc *p,
		 pid_t pid, uint64_t start)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int pidfd;

	if (pid <= 0 || start == 0)
		return -ESRCH;
	pidfd = shmr_ctl_pidfd_open(pid);
	if (pidfd < 0)
		return pidfd;
	/* After the pidfd: a pid reused before it is caught here, one
	 * reused after it cannot be (the pidfd pins the process). */
	if (shmr_ctl_proc_start(pid) != start) {
		close(pidfd);
		return -ESRCH;
	}
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_CHILD << 32;
	if (sp->dep.loop->epfd >= 0)
		(void)epoll_ctl(sp->dep.loop->epfd, EPOLL_CTL_ADD, pidfd, &ev);
	*p = (struct shmr_ctl_proc){ .pid = pid, .pidfd = pidfd,
				     .adopted = 1, .start = start,
				     .started_ms = shmr_ctl_now_ms() };
	return 0;
}

int shmr_ctl_spawn_adopt_dataplane(struct shmr_ctl_spawner *sp, pid_t pid,
				   uint64_t start)
{
	return adopt(sp, &sp->dp, pid, start);
}

int shmr_ctl_spawn_adopt_worker(struct shmr_ctl_spawner *sp, unsigned r,
				unsigned k, pid_t pid, uint64_t start)
{
	int rc = adopt(sp, &sp->workers[r][k], pid, start);

	if (rc == 0)
		shmr_ctl_model_route_set(sp->dep.m,
					 &sp->dep.m->routers[r].routes[k], pid);
	return rc;
}

void shmr_ctl_spawn_worker_lost(struct shmr_ctl_spawner *sp, unsigned r,
				unsigned k, pid_t pid)
{
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	/* As if it had just exited (not quickly: no backoff), so that the
	 * repair, a pending operation and the restart run as for any
	 * exit. */
	*p = (struct shmr_ctl_proc){ .pid = pid, .pidfd = -1, .adopted = 1 };
	worker_exited(sp, r, k, SHMR_CTL_STATUS_UNKNOWN);
}

void shmr_ctl_spawn_dataplane_lost(struct shmr_ctl_spawner *sp, pid_t pid)
{
	sp->dp = (struct shmr_ctl_proc){ .pid = pid, .pidfd = -1,
					 .adopted = 1 };
	dataplane_exited(sp, SHMR_CTL_STATUS_UNKNOWN);
}

void shmr_ctl_spawn_restart(struct shmr_ctl_spawner *sp, unsigned r,
			    unsigned k)
{
	restart_worker(sp, r, k);
}

int shmr_ctl_spawn_is_draining(const struct shmr_ctl_spawner *sp, unsigned r,
			       unsigned k)
{
	return sp->workers[r][k].drain_at_ms != 0;
}

/* ------------------------------------------------------------------ */
/* The lifecycle's process operations                                  */
/* ------------------------------------------------------------------ */

static int op_spawn(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;
	struct shmr_ctl_route *q = &sp->dep.m->routers[r].routes[k];
	const char *what = NULL;
	int rc = shmr_ctl_spawn_worker(sp, r, k, &what);

	if (rc < 0) {
		if (what)
			shmr_ctl_warn("route %s: cannot pin to cpus %s: %s",
				      q->conf->name, q->cpus, strerror(-rc));
		else
			shmr_ctl_warn("route %s: cannot start %s: %s",
				      q->conf->name, q->conf->program,
				      strerror(-rc));
		return rc;
	}
	return (int)sp->workers[r][k].pid;
}

static void op_stop(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	if (p->pid == 0)
		return;
	proc_signal(p, SIGTERM);
	p->retry_at_ms = 0;
	p->kill_at_ms = shmr_ctl_now_ms() + sp->dep.cfg->stop_grace_ms;
}

/* Pin an added route like a configured one (pin.c). */
static int op_added(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;

	sp->workers[r][k] = (struct shmr_ctl_proc){ .pidfd = -1 };
	return shmr_ctl_pin_added(sp->dep.pin, sp->dep.m, r, k);
}

static void op_forget(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;
	unsigned n = sp->dep.m->routers[r].nroutes;

	proc_gone(sp, &sp->workers[r][k]);
	shmr_ctl_pin_forget(sp->dep.pin, n, r, k);
	memmove(&sp->workers[r][k], &sp->workers[r][k + 1],
		(n - k - 1) * sizeof(sp->workers[r][0]));
	sp->workers[r][n - 1] = (struct shmr_ctl_proc){ .pidfd = -1 };
}

static void op_reinit(void *ctx, uint32_t slot)
{
	struct shmr_ctl_spawner *sp = ctx;

	shmr_ctl_slot_reinit(sp->dep.d, slot);
}

static uint64_t op_seen_version(void *ctx)
{
	const struct shmr_ctl_spawner *sp = ctx;

	return shmr_ctl_seen_version(sp->dep.d);
}

static void op_kill(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	proc_signal(p, SIGKILL);
}

static void op_drain(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	if (p->pid == 0)
		return;
	p->retry_at_ms = 0;
	p->drain_at_ms = shmr_ctl_now_ms();
}

const struct shmr_ctl_life_ops shmr_ctl_life_daemon_ops = {
	.drain = op_drain,
	.kill = op_kill,
	.kill_failed = shmr_ctl_supervise_kill_failed,
	.spawn = op_spawn,
	.stop = op_stop,
	.added = op_added,
	.forget = op_forget,
	.reinit = op_reinit,
	.seen_version = op_seen_version,
};

/* ------------------------------------------------------------------ */
/* Stop                                                                */
/* ------------------------------------------------------------------ */

/* Wait until every proc in @p ps has exited or @p deadline_ms passes
 * (0: forever).  Exited ones are reaped and marked gone. */
static void wait_procs(struct shmr_ctl_spawner *sp, struct shmr_ctl_proc **ps,
		       unsigned n, uint64_t deadline_ms, int is_dp)
{
	/* n <= every worker's, or the dataplane: sp->pfd has room. */
	struct pollfd *pfd = sp->pfd;

	for (;;) {
		unsigned live = 0;
		int timeout = -1, status;

		for (unsigned i = 0; i < n; i++) {
			if (ps[i]->pid == 0)
				continue;
			if (ps[i]->adopted &&
			    shmr_ctl_pidfd_exited(ps[i]->pidfd))
				status = SHMR_CTL_STATUS_UNKNOWN;
			else if (ps[i]->adopted ||
				 reap_child(ps[i]->pid, 1, &status) != 1)
				status = -2;
			if (status != -2) {
				if (is_dp)
					dataplane_exited(sp, status);
				else
					exited(sp, ps[i]->pid, status);
				continue;
			}
			pfd[live].fd = ps[i]->pidfd;
			pfd[live].events = POLLIN;
			live++;
		}
		if (live == 0)
			return;
		if (deadline_ms) {
			uint64_t now = shmr_ctl_now_ms();

			if (now >= deadline_ms)
				return;
			timeout = (int)(deadline_ms - now);
		}
		if (poll(pfd, live, timeout) < 0 && errno != EINTR)
			return;
	}
}

void shmr_ctl_stop_children(struct shmr_ctl_spawner *sp)
{
	struct shmr_ctl_proc **ps = sp->stopping;
	uint64_t grace = sp->dep.cfg->stop_grace_ms;
	unsigned n = 0;
	struct shmr_ctl_proc *dp = &sp->dp;

	sp->dep.loop->stopping = 1;
	for (unsigned i = 0; i < sp->dep.m->nrouters; i++)
		for (unsigned k = 0; k < sp->dep.m->routers[i].nroutes; k++) {
			struct shmr_ctl_proc *p = &sp->workers[i][k];

			p->retry_at_ms = 0;
			if (p->pid) {
				proc_signal(p, SIGTERM);
				ps[n++] = p;
			}
		}
	wait_procs(sp, ps, n, shmr_ctl_now_ms() + grace, 0);
	for (unsigned i = 0; i < n; i++)
		proc_signal(ps[i], SIGKILL);
	wait_procs(sp, ps, n, 0, 0);

	dp->retry_at_ms = 0;
	if (dp->pid) {
		if (sp->dep.d->base)
			(void)shmr_ctl_lane_send(sp->dep.d, SHMR_CTL_SHUTDOWN,
						 0);
		wait_procs(sp, &dp, 1, shmr_ctl_now_ms() + grace, 1);
	}
	if (dp->pid) {
		proc_signal(dp, SIGTERM);
		wait_procs(sp, &dp, 1, shmr_ctl_now_ms() + grace, 1);
	}
	if (dp->pid) {
		proc_signal(dp, SIGKILL);
		wait_procs(sp, &dp, 1, 0, 1);
	}
}
