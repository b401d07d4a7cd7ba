/*
 * The routers' dead-letter files: <run_dir>/<domain>.<router>.dlq, one
 * record per MessageRouteFailed the default handlers kept (the record
 * format is dlq.c's).  Appends go through one descriptor per router,
 * opened on the first dead letter; DLQ_LIST reads the file whole; a replay
 * re-sends the records from the admin endpoint and rewrites the file with
 * what was not sent.  A letter whose payload was in an arena buffer (the
 * file holds the bytes) goes inline when they fit a slot, else in a new
 * buffer the admin endpoint allocates; when its class is empty the replay
 * stops there, as at a full lane, and the rest stays in the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shmr/domain.h>

#include "admin.h"
#include "arena.h"
#include "dlq.h"
#include "dlqfile.h"

void shmr_ctl_dlq_files_init(struct shmr_ctl_dlq_files *f,
			     const struct shmr_ctl_model *m,
			     struct shmr_ctl_admin *admin, const char *run_dir,
			     const char *domain)
{
	*f = (struct shmr_ctl_dlq_files){
		.m = m, .admin = admin, .run_dir = run_dir, .domain = domain,
	};
}

int shmr_ctl_dlq_files_routers(struct shmr_ctl_dlq_files *f,
			       unsigned nrouters)
{
	free(f->fd);
	f->nrouters = 0;
	f->fd = malloc((nrouters ? nrouters : 1) * sizeof(*f->fd));
	if (!f->fd)
		return -ENOMEM;
	f->nrouters = nrouters;
	for (unsigned i = 0; i < nrouters; i++)
		f->fd[i] = -1;
	return 0;
}

void shmr_ctl_dlq_path(const struct shmr_ctl_dlq_files *f, unsigned r,
		       char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s.%s.dlq", f->run_dir, f->domain,
		 f->m->routers[r].conf->name);
}

int shmr_ctl_dlq_fd(struct shmr_ctl_dlq_files *f, unsigned r)
{
	char path[PATH_MAX + 80];

	if (f->fd[r] >= 0)
		return f->fd[r];
	shmr_ctl_dlq_path(f, r, path, sizeof(path));
	f->fd[r] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			    0600);
	return f->fd[r];
}

int shmr_ctl_dlq_load(struct shmr_ctl_dlq_files *f, unsigned r,
		      unsigned char **buf, size_t *size)
{
	char path[PATH_MAX + 80];
	struct stat st;
	int fd;
	ssize_t got;

	*buf = NULL;
	*size = 0;
	shmr_ctl_dlq_path(f, r, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || st.st_size > (1 << 28)) {
		close(fd);
		return -EFBIG;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	got = read(fd, *buf, (size_t)st.st_size);
	close(fd);
	if (got < 0) {
		free(*buf);
		*buf = NULL;
		return -errno;
	}
	*size = (size_t)got;
	return 0;
}

int shmr_ctl_dlq_replay(struct shmr_ctl_dlq_files *f, unsigned r,
			unsigned *sent, unsigned *left)
{
	union {
		struct shmr_msg m;
		unsigned char b[SHMR_SLOT_MAX];
	} slot;
	uint32_t ss = f->admin->d->geo.slot_size, slen, plen;
	const unsigned char *payload;
	char path[PATH_MAX + 80], tmp[PATH_MAX + 90];
	unsigned char *buf;
	size_t size, off = 0;
	int rc, fd;

	*sent = *left = 0;
	rc = shmr_ctl_dlq_load(f, r, &buf, &size);
	if (rc < 0)
		return rc;
	while ((rc = shmr_ctl_dlq_next_payload(buf, size, off, &slot.m, &slen,
					       &payload, &plen)) > 0) {
		struct shmr_msg *m = &slot.m;
		struct shmr_buf_ref ref;
		int in_buf = 0;

		if (slen > ss || m->len > ss - SHMR_HDR_SIZE)
			break;
		if (payload && plen <= ss - SHMR_HDR_SIZE) {
			memcpy(m->data, payload, plen);
			m->len = plen;
		} else if (payload) {
			if (shmr_ctl_arena_send_copy(f->admin->d,
						     f->admin->pid.slot, payload,
						     plen, &ref) < 0)
				break;
			memcpy(m->data, &ref, sizeof(ref));
			m->len = sizeof(ref);
			in_buf = 1;
		}
		m->kind = SHMR_KIND_SEND;
		m->flags = in_buf ? SHMR_F_ARENA : 0;
		m->priority = SHMR_PRIO_NORMAL;
		m->hops = 0;
		m->from = f->admin->pid;
		m->to = f->m->routers[r].pid;
		m->ref = 0;
		m->status = 0;
		if (shmr_ctl_admin_put(f->admin, m) < 0) {
			if (in_buf)
				shmr_ctl_arena_unsend(f->admin->d,
						      f->admin->pid.slot, &ref);
			break;
		}
		off += (size_t)rc;
		(*sent)++;
	}
	*left = (unsigned)shmr_ctl_dlq_count(buf + off, size - off);
	/* Rewrite what was not re-sent (from the first record left, bad
	 * records included) and swap it in; the append descriptor is
	 * reopened on the next dead letter. */
	shmr_ctl_dlq_path(f, r, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rc = 0;
	if (*sent) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || (size > off && write(fd, buf + off, size - off) !=
						     (ssize_t)(size - off)))
			rc = errno ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
		if (rc == 0 && rename(tmp, path) < 0)
			rc = -errno;
		if (f->fd[r] >= 0) {
			close(f->fd[r]);
			f->fd[r] = -1;
		}
	}
	free(buf);
	return rc;
}
