/*
 * shmr_ctl_metrics_render(): the domain's counters and the dead-letter
 * counts, read now, formatted by metrics.c.  Reading is relaxed loads and
 * ring counts (domain.c): nothing the dataplane or libshmr writes is
 * written here.  shmr_ctl_metrics_render_grow() renders into a buffer it
 * grows as the domain needs (a domain of thousands of clients is
 * megabytes of text), shmr_ctl_metrics_memfd() hands such a text to
 * `shmrctl metrics` as a sealed memfd, past what one answer holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dlq.h"
#include "dlqfile.h"
#include "domain.h"
#include "metrics.h"

/* The control plane's one thread (see metrics.h): static, as the
 * server's own copy is (too much for its stack). */
static struct shmr_ctl_counters g_c;

static void read_all(const struct shmr_ctl_domain *d,
		     const struct shmr_ctl_model *m,
		     struct shmr_ctl_dlq_files *dlq)
{
	struct shmr_ctl_counters *cp = &g_c;

	shmr_ctl_counters_read(d, m, cp);
	for (unsigned i = 0; dlq && i < m->nrouters; i++) {
		unsigned char *f;
		size_t sz;

		if (shmr_ctl_dlq_load(dlq, i, &f, &sz) == 0) {
			long n = shmr_ctl_dlq_count(f, sz);

			cp->dlq_size[m->routers[i].pid.slot] =
				n > 0 ? (uint64_t)n : 0;
			free(f);
		}
	}
}

int shmr_ctl_metrics_render(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_dlq_files *dlq, char *buf,
			    size_t cap)
{
	read_all(d, m, dlq);
	return shmr_ctl_metrics_format(m, &g_c, buf, cap);
}

int shmr_ctl_metrics_render_grow(const struct shmr_ctl_domain *d,
				 const struct shmr_ctl_model *m,
				 struct shmr_ctl_dlq_files *dlq, char **buf,
				 size_t *cap)
{
	int n;

	read_all(d, m, dlq);
	while ((n = shmr_ctl_metrics_format(m, &g_c, *buf, *cap)) == -ENOSPC) {
		size_t want = *cap ? *cap * 2 : SHMR_CTL_METRICS_FIRST;
		char *nb;

		if (*cap >= SHMR_CTL_METRICS_MAX)
			return -ENOSPC;
		if (want > SHMR_CTL_METRICS_MAX)
			want = SHMR_CTL_METRICS_MAX;
		nb = realloc(*buf, want);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = want;
	}
	return n;
}

int shmr_ctl_metrics_memfd(const char *text, size_t n)
{
	int fd = memfd_create("shmr-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < n) {
		ssize_t w = write(fd, text + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int rc = w < 0 ? -errno : -EIO;

			close(fd);
			return rc;
		}
		done += (size_t)w;
	}
	/* Sealed: the reader may trust the size it sees to stay. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
				       F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}
