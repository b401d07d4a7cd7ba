/*
 * A stand-in for shmr-dataplane in the control plane's own tests: it maps
 * the domain passed with --domain-fd, applies every spec version it is told
 * of (reporting it in each lcore's stats.table_version, which is what lets
 * the control plane reuse a freed slot), forwards nothing, and exits 0 on
 * SHMR_CTL_SHUTDOWN or SIGTERM.  With STUB_DP_PIDFILE set it writes its pid
 * there, so a test can check it is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

static _Atomic int stop; /* lock-free: async-signal-safe */

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	uint64_t slot[SHMR_SLOT_MAX / 8];
	struct shmr_domain_hdr *h;
	const char *pidfile = getenv("STUB_DP_PIDFILE");
	struct stat st;
	void *base;
	int fd = -1;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--domain-fd") == 0 && i + 1 < argc)
			fd = atoi(argv[++i]);
	if (fd < 0 || fstat(fd, &st) < 0)
		return 2;
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (base == MAP_FAILED ||
	    shmr_layout_check(base, (size_t)st.st_size) < 0)
		return 3;
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	h = shmr_hdr(base);
	while (!atomic_load(&stop)) {
		uint32_t seen = shmr_bell_prepare(&h->ctl_bell);
		struct shmr_msg *m = (struct shmr_msg *)slot;

		if (rte_ring_dequeue_burst_elem(shmr_ctl_lane(base), slot,
						h->slot_size, 1, NULL) == 0) {
			shmr_bell_sleep(&h->ctl_bell, seen, -1);
			continue;
		}
		shmr_bell_cancel(&h->ctl_bell);
		if (m->type == SHMR_CTL_SHUTDOWN)
			break;
		if (m->type == SHMR_CTL_SPEC) {
			struct shmr_spec *s = shmr_spec_of(base);
			uint64_t seq, v;

			do {
				seq = shmr_spec_read_begin(s);
				v = s->version;
			} while (shmr_spec_read_retry(s, seq));
			for (uint32_t l = 0; l < h->nlcores; l++)
				atomic_store_explicit(
					&shmr_stats_of(base, l)->table_version,
					v, memory_order_release);
		}
	}
	return 0;
}
