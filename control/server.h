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

struct shmr_ctl_conn {
	int fd;      /* -1: free entry */
	uint64_t id; /* never 0, never reused */
	pid_t pid;   /* SO_PEERCRED */
	uid_t uid;
	gid_t gid;
	int denied;  /* credentials refused: answer ERR PERM, then close */
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
	int lfd;                       /* the listener; -1: none */
	struct shmr_ctl_conn conns[SHMR_CTL_MAX_CONNS];
	uint64_t next_conn_id;
	struct shmr_ctl_owner owners[SHMR_CTL_MAX_OWNERS];
};

/** No listener, no connection; serves requests on what @p dep points to. */
void shmr_ctl_server_init(struct shmr_ctl_server *s,
			  const struct shmr_ctl_server_deps *dep,
			  const char *sock_path);
/** Bind the socket (mode 0600, or 0660 for @p group when @p have_group);
 *  -EADDRINUSE when a live control answers. */
int shmr_ctl_server_open(struct shmr_ctl_server *s, int have_group,
			 gid_t group);
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
