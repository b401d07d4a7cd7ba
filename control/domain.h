/*
 * The domain (domain.c): the shared mapping shmr-control creates, what the
 * daemon writes into it (the published spec and endpoint table, the
 * control lane, the lanes of a reused slot) and what it reads out of it
 * (the version each lcore applied, the counters).  Internal to shmr-control:
 * not for direct inclusion outside control/.
 */
#ifndef SHMR_CONTROL_DOMAIN_H
#define SHMR_CONTROL_DOMAIN_H

#include <stdint.h>

#include <shmr/layout.h>

#include "format.h"
#include "model.h"
#include "shmr_config.h"

struct shmr_ctl_domain {
	int memfd;  /* -1: not created */
	void *base; /* NULL: not created */
	uint64_t size;
	int hugepages;
	struct shmr_spec spec_buf; /* private copy the spec is built in */
};

/**
 * Create the domain of @p cfg's geometry: a memfd (hugetlb when there are
 * free hugepages, else 4 KiB pages), sealed, mapped and laid out.
 * Context: start-up.  Errors: -errno, the layout's -SHMR_E_*.
 */
int shmr_ctl_domain_create(struct shmr_ctl_domain *d,
			   const struct shmr_config *cfg);
/** Publish @p m if dirty: ep table + spec under the seqcount, then a
 *  SHMR_CTL_SPEC slot on the control lane and its bell. */
void shmr_ctl_publish(struct shmr_ctl_domain *d, struct shmr_ctl_model *m);
/** Queue one control-lane message; 0 or -ENOBUFS (lane full). */
int shmr_ctl_lane_send(struct shmr_ctl_domain *d, uint32_t type,
		       uint64_t key);
/** min over routing lcores of stats.table_version. */
uint64_t shmr_ctl_seen_version(const struct shmr_ctl_domain *d);
/** Re-initialise every lane of @p slot (a reused slot), reset its bell. */
void shmr_ctl_slot_reinit(struct shmr_ctl_domain *d, uint32_t slot);
/** Read the counters of every slot used in @p m out of the domain. */
void shmr_ctl_counters_read(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_counters *out);

#endif
