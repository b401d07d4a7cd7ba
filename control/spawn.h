/*
 * The spawner (spawn.c): the control plane's children, the dataplane and
 * one worker per route; starting, pinning, reaping, repairing and
 * restarting them, and the lifecycle's process operations.  Its state is
 * the process table.  Internal to shmr-control: not
 * for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_SPAWN_H
#define SHMR_CONTROL_SPAWN_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include <shmr/layout.h>

#include "control_internal.h"
#include "dlqfile.h"
#include "domain.h"
#include "lifecycle.h"
#include "model.h"
#include "pin.h"
#include "shmr_config.h"

/* An exit whose status is unknown: the process was not our child (it was
 * adopted), so only its pidfd told us. */
#define SHMR_CTL_STATUS_UNKNOWN (-1)

/* A managed process: the dataplane or a route's worker, our child or
 * adopted from a previous control plane. */
struct shmr_ctl_proc {
	pid_t pid;            /* 0: not running */
	int pidfd;            /* -1 when not running */
	int adopted;          /* not our child: watched by its pidfd only */
	uint64_t start;       /* /proc start time (procs.h), 0: unknown */
	uint64_t started_ms;  /* monotonic */
	unsigned quick_fails; /* exits within 1 s of start, in a row */
	uint64_t retry_at_ms; /* 0: no restart scheduled */
	uint64_t kill_at_ms;  /* asked to stop: SIGKILL then; 0: none */
	uint64_t drain_at_ms; /* draining: look at its inbox then; 0: not */
	/* Killed by its router's own failure (a Kill to the router, or its
	 * supervisor's all-for-one or escalate): its exit restarts it,
	 * whatever the supervisor (supervise.c). */
	int restart_only;
};

static_assert(SHMR_MAX_ROUTERS < UINT16_MAX,
	      "a router index + 1 fits retire_router[]");

/* What the spawner works on, given by the daemon; kept, not copied (the
 * strings are read when a child starts). */
struct shmr_ctl_spawn_deps {
	struct shmr_ctl_loop *loop;
	const struct shmr_config *cfg;
	struct shmr_ctl_model *m;
	struct shmr_ctl_domain *d;
	struct shmr_ctl_life *life; /* whose process operations these are */
	struct shmr_ctl_pin *pin;   /* what children are pinned to */
	const char *dataplane;      /* the shmr-dataplane binary */
	const char *sock_path;      /* a worker's environment */
	const char *run_dir;
	struct shmr_ctl_dlq_files *dlq; /* a stopped routee's queue goes here */
};

struct shmr_ctl_spawner {
	struct shmr_ctl_spawn_deps dep;
	/* The process table */
	struct shmr_ctl_proc dp;
	/* The domain's descriptor numbers in the dataplane (its two
	 * parts). */
	int dp_fd, dp_lanes_fd;
	/* By router and route index: the configuration's routers
	 * (shmr_ctl_spawn_routers()), SHMR_MAX_ROUTES each */
	struct shmr_ctl_proc (*workers)[SHMR_MAX_ROUTES];
	unsigned nworkers; /* routers workers[] has room for */
	/* Stopping them all (shmr_ctl_stop_children()): a place for each
	 * worker and the dataplane, allocated with workers[] */
	struct pollfd *pfd;
	struct shmr_ctl_proc **stopping;
	/* Supervision "stop" (supervise.c): the inbox slots of routees it
	 * removed, by slot: their router's index + 1 (0: none), until what
	 * was queued there is dead-lettered; looked at then (0: none). */
	uint16_t retire_router[SHMR_MAX_ENDPOINTS]; /* up to SHMR_MAX_ROUTERS */
	uint64_t retire_at_ms;
};

/** An empty process table, working on what @p dep points to. */
void shmr_ctl_spawn_init(struct shmr_ctl_spawner *sp,
			 const struct shmr_ctl_spawn_deps *dep);
/** Room in the process table for @p nrouters routers (the
 *  configuration's).  Context: start-up, once, before any start.
 *  Errors: -ENOMEM. */
int shmr_ctl_spawn_routers(struct shmr_ctl_spawner *sp, unsigned nrouters);
/** Free what shmr_ctl_spawn_routers() gave @p sp (no room after).
 *  Context: no child of it runs. */
void shmr_ctl_spawn_free(struct shmr_ctl_spawner *sp);
/** The earliest of the spawner's deadlines (restarts, SIGKILLs after the
 *  grace, drain looks), 0 when none: the loop arms its timer for it. */
uint64_t shmr_ctl_spawn_next_ms(const struct shmr_ctl_spawner *sp);
/** Start the dataplane; 0 or -errno (the message printed by the caller). */
int shmr_ctl_spawn_dataplane(struct shmr_ctl_spawner *sp);
/**
 * Start-up only: wait until every routing lcore reports spec @p version,
 * at most @p timeout_ms.  Returns 0, or -1 after printing why (the
 * dataplane died, or is too slow).
 */
int shmr_ctl_spawn_wait_ready(struct shmr_ctl_spawner *sp, uint64_t version,
			      unsigned timeout_ms);
/** The dataplane's OS pid, 0 while none runs. */
pid_t shmr_ctl_spawn_dataplane_pid(const struct shmr_ctl_spawner *sp);
/** Start route @p k of router @p r; 0 or -errno, *what says which step. */
int shmr_ctl_spawn_worker(struct shmr_ctl_spawner *sp, unsigned r,
			  unsigned k, const char **what);
/** Reap every exited child; repair, restart. */
void shmr_ctl_reap(struct shmr_ctl_spawner *sp);
/** The dataplane routed a message to route inbox @p inbox, which has no
 *  worker: start one now (lazy restart), unless a backoff is waiting. */
void shmr_ctl_want_worker(struct shmr_ctl_spawner *sp, struct shmr_pid inbox);
/** The timer fired at @p now: restarts, SIGKILLs and drain looks due. */
void shmr_ctl_spawn_due(struct shmr_ctl_spawner *sp, uint64_t now);
/** The lifecycle's process operations; ctx is the spawner. */
extern const struct shmr_ctl_life_ops shmr_ctl_life_daemon_ops;
/**
 * Adoption (adopt.c): hold the dataplane, or route @p k of router @p r's
 * worker, that a previous control plane started: @p pid must still be the
 * process started at @p start (procs.h).  Its exit is then seen through
 * its pidfd (status unknown), and it is signalled through it.
 * Errors: -ESRCH (gone, or the pid names another process), -errno.
 */
int shmr_ctl_spawn_adopt_dataplane(struct shmr_ctl_spawner *sp, pid_t pid,
				   uint64_t start);
int shmr_ctl_spawn_adopt_worker(struct shmr_ctl_spawner *sp, unsigned r,
				unsigned k, pid_t pid, uint64_t start);
/** A worker (@p pid) the previous control plane had is found dead at
 *  adoption: handled as an exit now (lane repair, a pending operation
 *  completes, the route restarts into its slot). */
void shmr_ctl_spawn_worker_lost(struct shmr_ctl_spawner *sp, unsigned r,
				unsigned k, pid_t pid);
/** The dataplane (@p pid) is gone at adoption: repaired and restarted as
 *  after any death of it. */
void shmr_ctl_spawn_dataplane_lost(struct shmr_ctl_spawner *sp, pid_t pid);
/** Start the worker of a DEAD (or REPLACE_WAIT) route that has none, as a
 *  restart after an exit (counted; a replace completes). */
void shmr_ctl_spawn_restart(struct shmr_ctl_spawner *sp, unsigned r,
			    unsigned k);
/** Is route @p k of router @p r's worker draining (ops->drain)? */
int shmr_ctl_spawn_is_draining(const struct shmr_ctl_spawner *sp, unsigned r,
			       unsigned k);
/** Stop every process, ours and adopted: workers (SIGTERM, SIGKILL after
 *  the grace), then the
 *  dataplane (SHMR_CTL_SHUTDOWN, SIGTERM, SIGKILL).  Sets loop->stopping.
 *  Blocks. */
void shmr_ctl_stop_children(struct shmr_ctl_spawner *sp);

#endif
