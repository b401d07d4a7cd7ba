/*
 * shmr_ctl_metrics_render(): the domain's counters and the dead-letter
 * counts, read now, formatted by metrics.c.  Reading is relaxed loads and
 * ring counts (domain.c): nothing the dataplane or libshmr writes is
 * written here.
 */
#include <errno.h>
#include <stdlib.h>

#include "dlq.h"
#include "dlqfile.h"
#include "domain.h"
#include "metrics.h"

int shmr_ctl_metrics_render(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_dlq_files *dlq, char *buf,
			    size_t cap)
{
	/* The control plane's one thread (see metrics.h): static, as the
	 * server's own copy is (6 KiB is too much for its stack). */
	static struct shmr_ctl_counters c;

	shmr_ctl_counters_read(d, m, &c);
	for (unsigned i = 0; dlq && i < m->nrouters; i++) {
		unsigned char *f;
		size_t sz;

		if (shmr_ctl_dlq_load(dlq, i, &f, &sz) == 0) {
			long n = shmr_ctl_dlq_count(f, sz);

			c.dlq_size[m->routers[i].pid.slot] =
				n > 0 ? (uint64_t)n : 0;
			free(f);
		}
	}
	return shmr_ctl_metrics_format(m, &c, buf, cap);
}
