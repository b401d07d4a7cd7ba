/*
 * Supervision per router: a routee's unexpected exit (it crashed, was
 * killed with kill -9, or by a Kill sent to it) is the failure of one of
 * the router's children, as in Pekko, and the router's `supervisor`
 * decides what follows.  An exit the appliance asked for (disable,
 * remove, replace, a shrinking pool, PoisonPill) is no failure and never
 * gets here: lifecycle.c completes it.
 *
 *   restart      the routee restarts into its slot (spawn.c, as always):
 *                same endpoint, its inbox kept.
 *   stop         the routee leaves the router (pool.c): out of the
 *                routees at once, so nothing more is routed to it, and a
 *                resizer's lower_bound is made good at once by a new
 *                routee.  What was queued for it loses nothing: it is
 *                dead-lettered into the router's file (MessageRouteFailed,
 *                SHMR_E_NO_ROUTE), where `shmrctl dlq list` counts it and
 *                `dlq replay` sends it to the remaining routees.
 *   all-for-one  every routee of the router restarts: the others are
 *                killed (marked restart_only, so their own deaths do not
 *                apply the supervisor again) and each restarts into its
 *                slot with its inbox, as the one that died does.
 *   escalate     the router fails, as on a Kill to it
 *                (shmr_ctl_life_kill_router()): with on_kill = "restart"
 *                every routee restarts (the one that died included), with
 *                "stop" the router stops and nothing restarts.
 *
 * Why the dead letters wait.  The route's slot is freed at once, but an
 * lcore that has not yet applied the spec without it may still enqueue
 * into its inbox (a send straight to its PID).  The inbox is final only
 * once every lcore has seen the spec version that freed the slot
 * (freed_version <= shmr_ctl_seen_version()); until then the slot is
 * kept from reuse (SHMR_CTL_DRAIN_INBOX), so no new route's
 * re-initialisation wipes it, and the timer looks again every few
 * milliseconds.  We are the inbox's only consumer meanwhile (its worker
 * is dead, its lanes repaired), and read it without consuming: the
 * slot's next owner starts from re-initialised lanes.
 *
 * A death its router's own failure caused (a Kill to the router) is
 * marked restart_only when it is killed, and restarts whatever the
 * supervisor: the router failing is not its routees failing.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include <shmr/domain.h>

#include "control_internal.h"
#include "drain.h"
#include "pool.h"
#include "procs.h"
#include "supervise.h"

/* How often a removed routee's inbox is looked at until the dataplane
 * has left it. */
#define RETIRE_TICK_MS 5u

static void retire_arm(struct shmr_ctl_spawner *sp, uint64_t at)
{
	if (!sp->retire_at_ms || at < sp->retire_at_ms)
		sp->retire_at_ms = at;
}

/* supervisor = "stop": the routee leaves the router. */
static void stop_routee(struct shmr_ctl_spawner *sp, unsigned r, unsigned k)
{
	struct shmr_ctl_router *ro = &sp->dep.m->routers[r];
	char name[SHMR_NAME_MAX];
	uint32_t slot = UINT32_MAX;
	int rc;

	snprintf(name, sizeof(name), "%s", ro->routes[k].conf->name);
	rc = shmr_ctl_pool_routee_stopped(sp->dep.life, r, k, &slot);
	if (slot != UINT32_MAX) {
		sp->retire_router[slot] = (uint16_t)(r + 1);
		retire_arm(sp, shmr_ctl_now_ms() + 1);
	}
	shmr_ctl_log("router %s: routee %s stopped by its supervisor "
		     "(supervisor = stop): removed%s",
		     ro->conf->name, name,
		     ro->stopped ? "; no routees left: the router stops" : "");
	if (rc < 0)
		shmr_ctl_warn("router %s: cannot start a routee to keep its "
			      "resizer's lower_bound: %s",
			      ro->conf->name, shmr_strerror(rc));
}

/* supervisor = "all-for-one": every other live routee restarts too. */
static void restart_all(struct shmr_ctl_spawner *sp, unsigned r, unsigned k)
{
	struct shmr_ctl_router *ro = &sp->dep.m->routers[r];
	unsigned n = 0;

	for (unsigned j = 0; j < ro->nroutes; j++)
		if (j != k && ro->routes[j].os_pid &&
		    ro->routes[j].state == SHMR_ROUTE_RUNNING) {
			shmr_ctl_supervise_kill_failed(sp, r, j);
			n++;
		}
	shmr_ctl_log("router %s: routee %s failed: restarting it and the "
		     "%u other(s) (supervisor = all-for-one)",
		     ro->conf->name, ro->routes[k].conf->name, n);
}

int shmr_ctl_supervise_exited(struct shmr_ctl_spawner *sp, unsigned r,
			      unsigned k)
{
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	if (p->restart_only) {
		p->restart_only = 0;
		return 0;
	}
	switch (sp->dep.m->routers[r].conf->supervisor) {
	case SHMR_SUPERVISOR_STOP:
		stop_routee(sp, r, k);
		return 1;
	case SHMR_SUPERVISOR_ALL_FOR_ONE:
		restart_all(sp, r, k);
		return 0;
	case SHMR_SUPERVISOR_ESCALATE:
		shmr_ctl_log("router %s: routee %s failed: the router fails "
			     "(supervisor = escalate): %s",
			     sp->dep.m->routers[r].conf->name,
			     sp->dep.m->routers[r].routes[k].conf->name,
			     sp->dep.m->routers[r].conf->on_kill_stop
				     ? "stopping it (on_kill = stop)"
				     : "restarting its routees");
		shmr_ctl_life_kill_router(sp->dep.life, r);
		return sp->dep.m->routers[r].stopped;
	default:
		return 0;
	}
}

/* Dead-letter what is queued in inbox slot @p s for router @p ri. */
static void retire_inbox(struct shmr_ctl_spawner *sp, uint32_t s,
			 unsigned ri)
{
	const struct shmr_ctl_domain *d = sp->dep.d;
	int64_t left = 0;
	unsigned written = 0;
	int bad = 0;

	for (uint32_t i = 0; i < d->geo.nlcores; i++) {
		const struct rte_ring *lane = shmr_ctl_dom_lane(d, s, i);
		int64_t q = shmr_lane_unconsumed(lane, d->geo.lane_size);

		if (q < 0) {
			bad = 1;
			continue;
		}
		left += q;
		if (q > 0)
			written += shmr_ctl_drain_dead_letter(
				d, sp->dep.m, sp->dep.dlq, lane, q, (int)ri,
				-SHMR_E_NO_ROUTE);
	}
	if (left || bad)
		shmr_ctl_warn("router %s: %" PRId64 " message(s) queued for "
			      "a routee its supervisor stopped: %u "
			      "dead-lettered (shmrctl dlq list %s)%s",
			      sp->dep.m->routers[ri].conf->name, left, written,
			      sp->dep.m->routers[ri].conf->name,
			      bad ? "; a corrupted lane's messages are lost"
				  : "");
}

void shmr_ctl_supervise_due(struct shmr_ctl_spawner *sp, uint64_t now)
{
	struct shmr_ctl_alloc *a = &sp->dep.m->alloc;
	uint64_t seen;
	int waiting = 0;

	if (!sp->retire_at_ms || sp->retire_at_ms > now || !sp->dep.d->base)
		return;
	sp->retire_at_ms = 0;
	seen = shmr_ctl_seen_version(sp->dep.d);
	for (uint32_t s = 0; s < a->nslots; s++) {
		if (!sp->retire_router[s])
			continue;
		if (a->slots[s].freed_version > seen) {
			waiting = 1; /* an lcore may still enqueue there */
			continue;
		}
		retire_inbox(sp, s, sp->retire_router[s] - 1u);
		sp->retire_router[s] = 0;
		if (a->slots[s].drain == SHMR_CTL_DRAIN_INBOX)
			a->slots[s].drain = SHMR_CTL_DRAIN_NONE;
	}
	if (waiting)
		retire_arm(sp, now + RETIRE_TICK_MS);
}

void shmr_ctl_supervise_kill_failed(void *ctx, unsigned r, unsigned k)
{
	struct shmr_ctl_spawner *sp = ctx;
	struct shmr_ctl_proc *p = &sp->workers[r][k];

	if (p->pid == 0)
		return;
	p->restart_only = 1;
	(void)shmr_ctl_proc_signal_group(p->pidfd, p->pid, SIGKILL);
}
