/*
 * The control plane's state file (state.c): <run_dir>/<domain>.state,
 * what a restarted control plane needs beyond what the domain holds, so
 * that it can adopt the running domain (adopt.c).  Internal to
 * shmr-control: not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_STATE_H
#define SHMR_CONTROL_STATE_H

#include <limits.h>
#include <stdint.h>

#include <shmr/layout.h>

#include "model.h"
#include "shmr_config.h"
#include "spawn.h"

#define SHMR_CTL_STATE_VERSION 2u

/* A process, named for good: its pid and its start time (procs.h). */
struct shmr_ctl_state_proc {
	int32_t pid; /* 0: none */
	uint64_t start;
};

/* A route: its spec (from the configuration, ADD or REPLACE), counters
 * and pending operation the domain does not hold, and its worker. */
struct shmr_ctl_state_route {
	char router[SHMR_NAME_MAX];
	struct shmr_conf_route spec; /* name, program, args, cpus */
	uint64_t restarts;
	int drain; /* a pending disable/remove waits for the inbox */
	struct shmr_ctl_state_proc worker;
};

/* A client endpoint's owner process. */
struct shmr_ctl_state_client {
	uint32_t slot, gen;
	struct shmr_ctl_state_proc owner;
};

struct shmr_ctl_state {
	char domain[SHMR_NAME_MAX];
	struct shmr_ctl_state_proc control, dataplane;
	int dp_fd;          /* the domain's descriptors in the dataplane */
	int dp_lanes_fd;
	uint64_t size;      /* of the domain */
	uint64_t spec_version;
	/* routes[nroutes], of room for the caller's max_routes
	 * (shmr_ctl_state_read()), allocated by the read */
	unsigned nroutes, max_routes;
	struct shmr_ctl_state_route *routes;
	unsigned nclients;
	struct shmr_ctl_state_client clients[SHMR_MAX_ENDPOINTS];
};

struct shmr_ctl_state_file {
	char path[PATH_MAX];
	uint64_t written; /* spec version last written, 0: none */
	uint64_t self_start; /* this process's start time, read once; 0: not yet */
	/* The last file written, less its spec line (malloc'd; NULL: none). */
	char *last;
	size_t last_len;
	/* Start times of client owners, read once per endpoint. */
	struct shmr_ctl_state_client seen[SHMR_MAX_ENDPOINTS];
};

/** The state file of @p domain in @p run_dir.  0 or -ENAMETOOLONG. */
int shmr_ctl_state_init(struct shmr_ctl_state_file *f, const char *run_dir,
			const char *domain);

/**
 * Read and check the state file into @p st.
 * Returns: 0; -ENOENT (none); -EINVAL with one line in @p why (not a
 *          state file, another version, a bad line, more than
 *          @p max_routes routes: nothing of it is used); -ENOMEM.
 * Ownership: @p st is all zero or read before (what it held is freed
 *          first); it holds room for @p max_routes routes (the
 *          configuration's routers times its max_routes) until
 *          shmr_ctl_state_free().
 */
int shmr_ctl_state_read(const struct shmr_ctl_state_file *f,
			struct shmr_ctl_state *st, unsigned max_routes,
			char *why, size_t cap);
/** Free what shmr_ctl_state_read() gave @p st (nothing read after). */
void shmr_ctl_state_free(struct shmr_ctl_state *st);

/**
 * Write the daemon's state (the model, the process table with the
 * domain's descriptor in the dataplane, the domain's @p size) if the model was
 * published since the last write (or @p force), and unless only the spec
 * version would change in it (a routee of a group added or removed: what
 * adoption takes from the domain's spec, not from this file; the file's
 * spec line is then the version its other lines last changed at, for
 * people): to a temporary file, then rename(2) over the old one, so a
 * reader sees the old file or the new one, never a part.  Not fsync'd: it
 * must survive the control plane, not the host (the run dir is a tmpfs).
 * Returns: 0, or -errno (the caller warns).
 */
int shmr_ctl_state_save(struct shmr_ctl_state_file *f,
			const struct shmr_ctl_model *m,
			const struct shmr_ctl_spawner *sp, uint64_t size,
			int force);

/** Remove the state file (a clean stop: nothing is left to adopt), and
 *  forget what was written. */
void shmr_ctl_state_remove(struct shmr_ctl_state_file *f);

/** Route @p name of router @p router in @p st, or NULL. */
const struct shmr_ctl_state_route *
shmr_ctl_state_route(const struct shmr_ctl_state *st, const char *router,
		     const char *name);

/** The recorded owner of client endpoint {@p slot, @p gen}, or NULL. */
const struct shmr_ctl_state_client *
shmr_ctl_state_client(const struct shmr_ctl_state *st, uint32_t slot,
		      uint32_t gen);

#endif
