/*
 * The routers' management and special messages (manage.c): GetRoutees,
 * AddRoutee, RemoveRoutee, AdjustPoolSize, PoisonPill and Kill, from the
 * admin path or the control socket; and the pools' resizers, with the
 * clock and random source they look by.  Internal to shmr-control: not
 * for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_MANAGE_H
#define SHMR_CONTROL_MANAGE_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/shmr.h>

#include "admin.h"
#include "domain.h"
#include "lifecycle.h"
#include "model.h"

struct shmr_ctl_pools {
	/* Given by the daemon (shmr_ctl_manage_init()) */
	struct shmr_ctl_model *m;
	struct shmr_ctl_life *life;
	struct shmr_ctl_domain *d;
	struct shmr_ctl_admin *admin; /* answers to management calls */
	/* The resizers' clock */
	uint64_t resize_at_ms; /* next look of the pools' resizers; 0: none */
	uint64_t rng_state;    /* the optimal resizer's random source */
	/* Change lines (AddRoutee, RemoveRoutee, AdjustPoolSize): the first
	 * SHMR_CTL_CHANGE_LOG_PER_S of a second logged, the rest counted
	 * and summed up in one line when that second is over. */
	uint64_t log_window_ms; /* when the current second began */
	unsigned log_n;         /* change lines in it so far */
	uint64_t log_held[3];   /* not logged: adds, removes, adjusts */
	uint64_t log_flush_ms;  /* when to say so; 0: nothing held */
};

#define SHMR_CTL_CHANGE_LOG_PER_S 10u

/** No resizer looks yet; works on what it is given. */
void shmr_ctl_manage_init(struct shmr_ctl_pools *p, struct shmr_ctl_model *m,
			  struct shmr_ctl_life *life, struct shmr_ctl_domain *d,
			  struct shmr_ctl_admin *admin);
/**
 * Router @p r's management or special message @p type (SHMR_TYPE_*), with
 * @p name (ADD/REMOVE_ROUTEE) or @p delta (ADJUST_POOL_SIZE); text for the
 * answer (GetRoutees' names, the new pool size) into @p text.
 * Returns: the text's length (>= 0), or -SHMR_E_NOT_ALLOWED (a stopped
 *          router, another type), or the operation's error.
 */
int shmr_ctl_manage(struct shmr_ctl_pools *p, unsigned r, uint32_t type,
		    const char *name, int64_t delta, char *text, size_t cap);
/** The same for a message on the admin path; a call gets the answer. */
void shmr_ctl_manage_msg(struct shmr_ctl_pools *p, unsigned r,
			 const struct shmr_msg *m);

/**
 * Kill (SHMR_TYPE_KILL) for routees: sent straight to a route's inbox
 * (@p r < 0: @p m->to names the route), or in a Broadcast envelope to
 * router @p r (every routee that is a route of this appliance).  Each
 * such route's live worker is SIGKILLed through its pidfd; the program
 * never sees the message, and the route's supervision restarts it into
 * its slot, inbox kept.  A routee that is not a route (a registered
 * client's endpoint) is not the control plane's to kill: logged, left.
 * *ri is set to the router the message is for (the route's own router
 * when @p r < 0), for the caller's permission check, by
 * shmr_ctl_manage_kill_router().
 *
 * Context: the control plane's loop (admin endpoint).
 * Returns: routes killed (>= 0), or -SHMR_E_PROCESS_UNKNOWN (no such
 *          route), -SHMR_E_NOT_ALLOWED (a stopped router).
 */
int shmr_ctl_manage_kill_router(const struct shmr_ctl_pools *p, int r,
				struct shmr_pid to, unsigned *ri);
int shmr_ctl_manage_kill(struct shmr_ctl_pools *p, int r,
			 const struct shmr_msg *m);

/** Start the clock: the first look is due at once (it finds out whether
 *  any pool has a resizer); @p seed is the random source's. */
void shmr_ctl_resize_start(struct shmr_ctl_pools *p, uint64_t seed);
/** When the resizers look next, or the change lines held back are to be
 *  logged (whichever is first); 0: never (no resizer left, none held). */
uint64_t shmr_ctl_resize_next_ms(const struct shmr_ctl_pools *p);
/** The timer fired at @p now: log the held change lines' count and look,
 *  each if due. */
void shmr_ctl_resize_due(struct shmr_ctl_pools *p, uint64_t now);
/** The pools' resizers look at their routees (every 100 ms while a pool
 *  has one): the default resizer every messages_per_resize messages
 *  routed, the optimal one every action_interval; each adjusts its pool.
 *  Sets the next look (0: no resizer left). */
void shmr_ctl_resize_tick(struct shmr_ctl_pools *p, uint64_t now_ms);

#endif
