/*
 * The routers' dead-letter files (dlqfile.c): <run_dir>/<domain>.<router>.dlq,
 * records as dlq.h writes them; their append descriptors, loading, and
 * replay from the admin endpoint.  Internal to shmr-control: not for direct
 * inclusion outside control/.
 */
#ifndef SHMR_CONTROL_DLQFILE_H
#define SHMR_CONTROL_DLQFILE_H

#include <stddef.h>

#include <shmr/layout.h>

#include "admin.h"
#include "model.h"

struct shmr_ctl_dlq_files {
	/* Given by the daemon (shmr_ctl_dlq_files_init()) */
	const struct shmr_ctl_model *m;
	struct shmr_ctl_admin *admin; /* replays are sent from it */
	const char *run_dir;
	const char *domain;
	/* Its own */
	/* By router index, the configuration's routers
	 * (shmr_ctl_dlq_files_routers()): append descriptors, -1: not
	 * open */
	unsigned nrouters;
	int *fd;
};

/** None open yet.  @p run_dir and @p domain are kept, not copied. */
void shmr_ctl_dlq_files_init(struct shmr_ctl_dlq_files *f,
			     const struct shmr_ctl_model *m,
			     struct shmr_ctl_admin *admin, const char *run_dir,
			     const char *domain);
/** Room for @p nrouters routers (the configuration's), none open.
 *  Context: start-up, once.  Errors: -ENOMEM. */
int shmr_ctl_dlq_files_routers(struct shmr_ctl_dlq_files *f,
			       unsigned nrouters);
/** "<run_dir>/<domain>.<router>.dlq" of router @p r. */
void shmr_ctl_dlq_path(const struct shmr_ctl_dlq_files *f, unsigned r,
		       char *out, size_t cap);
/** Router @p r's append descriptor, opened (created) on first use;
 *  -1 with errno when it cannot be. */
int shmr_ctl_dlq_fd(struct shmr_ctl_dlq_files *f, unsigned r);
/** Read router @p r's dead-letter file (malloc'd; none: NULL, 0).
 *  Errors: -errno, -EFBIG. */
int shmr_ctl_dlq_load(struct shmr_ctl_dlq_files *f, unsigned r,
		      unsigned char **buf, size_t *size);
/** Re-send router @p r's dead letters from the admin endpoint and drop
 *  those sent from the file.  Errors: -errno (the file was not rewritten). */
int shmr_ctl_dlq_replay(struct shmr_ctl_dlq_files *f, unsigned r,
			unsigned *sent, unsigned *left);

#endif
