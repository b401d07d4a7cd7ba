/*
 * The control socket (server.c): <run_dir>/<domain>.sock, its connections
 * and every request on them.  Its state is the listener and the
 * connection table.  Internal to shmr-control: not for direct inclusion
 * outside control/.
 */
#ifndef SHMR_CONTROL_SERVER_H
#define SHMR_CONTROL_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include "answers.h"
#include "control_internal.h"
#include "dlqfile.h"
#include "domain.h"
#include "handlers.h"
#include "lifecycle.h"
#include "manage.h"
#include "model.h"
#include "shmr_config.h"
#include "spawn.h"

#define SHMR_CTL_MAX_CONNS 256
#define SHMR_CTL_MAX_OWNERS SHMR_MAX_ENDPOINTS

/* A process that owns endpoints "by pid" (an adopted domain's client that
 * has not attached again): watched by its pidfd. */
struct shmr_ctl_owner {
	pid_t pid;
	int pidfd; /* -1: free entry */
};

/* What a peer may do on the control socket (see server.c's table). */
enum shmr_ctl_role {
	SHMR_CTL_ROLE_NONE = 0, /* refused: answered, then closed */
	SHMR_CTL_ROLE_USER,     /* socket_group: use and read */
	SHMR_CTL_ROLE_ADMIN,    /* the owner, root, admin_group: everything */
};

struct shmr_ctl_conn {
	int fd;      /* -1: free entry */
	uint64_t id; /* never 0, never reused */
	pid_t pid;   /* SO_PEERCRED */
	uid_t uid;
	gid_t gid;
	int role;    /* enum shmr_ctl_role */
	/* Refused at accept (role NONE: not allowed in; or over
	 * max_connections_per_user): its first request is answered
	 * "ERR <code> <refusal>", then it is closed. */
	int refuse_code;
	char refusal[112];
	int attached; /* sent ATTACH: a process's lifelong connection */
	uint64_t idle_deadline_ms; /* not attached: closed at this time
				    * unless it completes a request; 0: none */
};

/* What the requests reach: the loop's flags (STOP, "stopping"), the
 * model, the domain (ATTACH, publication, counters), the lifecycle, the
 * routers' handlers (INSPECT), the management messages, the dead-letter
 * files, and the spawner (STATUS reads the dataplane's pid). */
struct shmr_ctl_server_deps {
	struct shmr_ctl_loop *loop;
	const struct shmr_config *cfg;
	struct shmr_ctl_model *m;
	struct shmr_ctl_domain *d;
	struct shmr_ctl_life *life;
	struct shmr_ctl_handlers *hnd;
	struct shmr_ctl_pools *pools;
	struct shmr_ctl_dlq_files *dlq;
	const struct shmr_ctl_spawner *sp;
};

struct shmr_ctl_server {
	struct shmr_ctl_server_deps dep; /* given by the daemon */
	const char *sock_path;         /* kept, not copied */
	int have_group;                /* socket_group, resolved */
	gid_t group;
	int have_admin;                /* admin_group, resolved */
	gid_t admin;
	/* Counted (STATUS) and logged at most once a second. */
	uint64_t conns_refused;        /* over max_connections_per_user,
					* or the table's share for others */
	uint64_t requests_refused;     /* a role or a program refused */
	uint64_t idle_closed;          /* idle_timeout_ms passed */
	uint64_t log_ms;               /* the last refusal's log line */
	unsigned log_suppressed;       /* refusals not logged since */
	int lfd;                       /* the listener; -1: none */
	struct shmr_ctl_conn conns[SHMR_CTL_MAX_CONNS];
	uint64_t next_conn_id;
	struct shmr_ctl_owner owners[SHMR_CTL_MAX_OWNERS];
	char *mbuf; /* METRICS' text (metrics.h), grown as it needs */
	size_t mcap;
	/* A wake-up's answers, held until its one publication (answers.h),
	 * and whether a management change waits for that publication. */
	struct shmr_ctl_answers ans;
	int publish_due;
};

/** No listener, no connection; serves requests on what @p dep points to. */
void shmr_ctl_server_init(struct shmr_ctl_server *s,
			  const struct shmr_ctl_server_deps *dep,
			  const char *sock_path);
/** Bind the socket (mode 0600, or 0660 for @p group when @p have_group);
 *  members of @p admin (when @p have_admin) get the owner's role.
 *  -EADDRINUSE when a live control answers. */
int shmr_ctl_server_open(struct shmr_ctl_server *s, int have_group,
			 gid_t group, int have_admin, gid_t admin);
/**
 * May router @p r's management message @p m (SHMR_TYPE_*, on the admin
 * path) be acted on?  The sender's role decides, as for the control
 * socket's verbs: GetRoutees is a read; the others (AddRoutee,
 * RemoveRoutee, AdjustPoolSize, PoisonPill, Kill) need a client endpoint
 * of the owner, root or admin_group (or come from the dataplane or a
 * route's worker).  A refusal is counted and logged; the caller answers
 * a call with -SHMR_E_NOT_ALLOWED.
 * Returns: 1 allowed, 0 refused.
 */
int shmr_ctl_server_msg_allowed(struct shmr_ctl_server *s, unsigned r,
				const struct shmr_msg *m);
/** The earliest idle deadline of a connection (CLOCK_MONOTONIC ms, as
 *  shmr_ctl_now_ms()), or 0 when none. */
uint64_t shmr_ctl_server_next_ms(const struct shmr_ctl_server *s);
/** Close the connections whose idle deadline is at or before @p now. */
void shmr_ctl_server_due(struct shmr_ctl_server *s, uint64_t now);
/** The listener, for the loop's epoll set; -1 when none. */
int shmr_ctl_server_listen_fd(const struct shmr_ctl_server *s);
/** The listener is readable: accept every pending connection. */
void shmr_ctl_server_accept(struct shmr_ctl_server *s);
/** Connection @p idx has @p ev: serve a few requests, or close it. */
void shmr_ctl_server_event(struct shmr_ctl_server *s, unsigned idx,
			   uint32_t ev);
/** Stop accepting: close the listener and unlink the socket. */
/**
 * Adoption: process @p pid owns endpoints by pid (model.h); watch it with
 * @p pidfd (taken over).  When it exits, what it owned is freed ("process
 * N gone"); when it sends ATTACH, what it owned is bound to that
 * connection and from then on goes with it, as for any client.
 * Errors: -ENOSPC (table full: the caller frees its endpoints), -errno.
 */
int shmr_ctl_server_watch(struct shmr_ctl_server *s, pid_t pid, int pidfd);
/** Watched process @p idx exited (SHMR_CTL_TAG_OWNER). */
void shmr_ctl_server_owner_event(struct shmr_ctl_server *s, unsigned idx);
void shmr_ctl_server_close_listener(struct shmr_ctl_server *s);
void shmr_ctl_server_close_all(struct shmr_ctl_server *s);

#endif
