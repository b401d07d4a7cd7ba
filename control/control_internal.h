/*
 * shmr-control internals: what truly crosses the daemon's modules.  Not for
 * direct inclusion outside control/.
 *
 * Two halves, each module with a header of its own:
 *   - the core (static library control_core): pure logic with no process,
 *     socket or domain mapping behind it, unit-tested on its own: the
 *     endpoint allocator (alloc.h: generations, deferred reuse), the model
 *     of routers/routes/registry and the spec built from it (model.h), the
 *     route lifecycle (lifecycle.h) and the pools over it (pool.h), the
 *     resizers (resizer.h), the request parser of the control socket
 *     (request.h), cpu lists (cpus.h), the text/JSON formatting of ROUTES,
 *     INSPECT and STATUS (format.h), and dead-letter records (dlq.h);
 *   - the daemon (shmr-control): the event loop and start-up (control.c),
 *     the domain mapping and publication (domain.h), pinning (pin.h), the
 *     spawner (spawn.h), the socket server (server.h), the admin endpoint
 *     (admin.h), the dead-letter files (dlqfile.h), the routers' handlers
 *     (handlers.h), the management messages and the pool resizers'
 *     clock (manage.h), processes by pidfd (procs.h), the state file
 *     (state.h) and the adoption of a running domain (adopt.h).  Single-threaded: nothing here takes a lock.
 *
 * Each daemon module owns its state (a struct of its own, which control.c
 * holds and wires up at start-up: what a module may use of another's is
 * the pointer it is given) and calls only downwards; nothing calls back
 * into the loop.  The one injected interface is the lifecycle's process
 * operations (struct shmr_ctl_life_ops), which spawn.c fills in: the core
 * stays free of processes.  Who calls whom:
 *
 *   control.c --> adopt, state, server, admin, handlers, manage, spawn,
 *                 pin, dlqfile, domain
 *   adopt     --> state, server, admin, spawn, domain, procs
 *   server    --> handlers, manage, dlqfile, spawn (reads), domain
 *   handlers  --> dlqfile, admin, domain
 *   manage    --> admin, domain
 *   dlqfile   --> admin
 *   spawn     --> pin, domain, procs
 *   state     --> procs (and reads the spawner's process table)
 *   every one --> the core, and the log below (admin.c: nothing else)
 *
 * Events flow from the loop into the modules; what a module changes in the
 * model, the loop publishes after the event (the server also publishes
 * before it answers, so a client never sees an answer before its change),
 * and the loop re-arms the timer from the deadlines each module reports.
 *
 * What crosses all of them is here: the loop's shared words, the epoll
 * tags, and logging.
 */
#ifndef SHMR_CONTROL_INTERNAL_H
#define SHMR_CONTROL_INTERNAL_H

#include <stdint.h>

/*
 * What the loop shares with the modules it runs.
 * Context: the loop's thread only (the admin bell thread never sees it).
 */
struct shmr_ctl_loop {
	int epfd;           /* the epoll set; -1 until the loop is set up */
	int stop_requested; /* a signal or STOP: the loop ends after the
			     * events at hand */
	int stopping;       /* children are being stopped: nothing starts */
};

/* epoll tags: data.u64 = tag << 32 | index */
enum shmr_ctl_tag {
	SHMR_CTL_TAG_SIGNAL = 1,
	SHMR_CTL_TAG_LISTEN,
	SHMR_CTL_TAG_TIMER,
	SHMR_CTL_TAG_CONN,   /* index: the server's conns[] */
	SHMR_CTL_TAG_CHILD,  /* any child's pidfd: reap */
	SHMR_CTL_TAG_ADMIN,  /* the admin endpoint has slots */
	SHMR_CTL_TAG_OWNER,  /* index: the server's owners[] (a process
			      * owning endpoints by pid exited) */
	SHMR_CTL_TAG_HTTP,   /* the metrics listener (http.c) has work */
};

/* log.c: shmr/logline.h's lines, at a level (error, warning, info,
 * debug), below the threshold only. */
/** An info line: "shmr-control: <line>" on stderr. */
void shmr_ctl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** A warning line: something went wrong and was handled (a worker died,
 *  a peer's bad value refused); not printed under --quiet. */
void shmr_ctl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** An error line (printed under --quiet too): the appliance, or a part of
 *  it, cannot do what it was asked (start-up failed, a router stops). */
void shmr_ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** A line at @p level (enum shmr_log_level). */
void shmr_ctl_logl(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** From now on only errors are printed (--quiet, or after the one line
 *  that says why start-up failed). */
void shmr_ctl_log_quiet(void);
/** --log-level @p name; 0, or -EINVAL for a name that is not a level. */
int shmr_ctl_log_level_set(const char *name);
/** --log-level @p name, or the usage error (exit 2) naming it. */
void shmr_ctl_log_level_opt(const char *name);
/** The daemon runs: lines carry time and level from now on, and the
 *  configuration's log_level (@p conf_level, 0 unset) applies unless
 *  --log-level or --quiet was given; then log @p first (info). */
void shmr_ctl_log_start(int conf_level, const char *first);
/** The threshold now (enum shmr_log_level): the dataplane's --log-level. */
int shmr_ctl_log_threshold(void);
/** CLOCK_MONOTONIC in milliseconds. */
uint64_t shmr_ctl_now_ms(void);

#endif
