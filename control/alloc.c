/*
 * Endpoint slot allocator: generations and deferred reuse.
 *
 * Why deferred: the dataplane learns of a freed endpoint only when its
 * lcores apply the spec version that dropped it; until then an lcore may
 * still dequeue from the slot's outbound lanes or enqueue into its inbound
 * lanes.  Handing the slot (and re-initialising its lanes) to a new owner
 * before that would let two producers or two consumers meet on one SPSC
 * ring.  Each lcore publishes the version it applied (stats.table_version);
 * the caller passes the minimum, and a slot freed at version V is reusable
 * only when that minimum is >= V.
 */
#include <string.h>

#include "alloc.h"

void shmr_ctl_alloc_init(struct shmr_ctl_alloc *a, uint32_t nslots)
{
	memset(a, 0, sizeof(*a));
	a->nslots = nslots > SHMR_MAX_ENDPOINTS ? SHMR_MAX_ENDPOINTS : nslots;
}

int shmr_ctl_alloc_get(struct shmr_ctl_alloc *a, uint32_t kind,
		       uint64_t seen_version, struct shmr_pid *out,
		       int *reused)
{
	for (uint32_t i = 0; i < a->nslots; i++) {
		struct shmr_ctl_slot *s = &a->slots[i];

		if (s->state == SHMR_CTL_SLOT_USED ||
		    s->drain != SHMR_CTL_DRAIN_NONE)
			continue;
		if (s->state == SHMR_CTL_SLOT_DEFERRED &&
		    s->freed_version > seen_version)
			continue;
		*reused = s->gen != 0;
		s->gen = s->gen + 1 == 0 ? 1 : s->gen + 1;
		s->state = SHMR_CTL_SLOT_USED;
		s->kind = kind;
		s->os_pid = 0;
		s->owner = 0;
		s->role = 0;
		s->freed_version = 0;
		s->drain_since = 0;
		s->drain_left = 0;
		memset(s->name, 0, sizeof(s->name));
		a->nused++;
		*out = (struct shmr_pid){ i, s->gen };
		return (int)i;
	}
	return -SHMR_E_NO_ENDPOINT;
}

struct shmr_ctl_slot *shmr_ctl_alloc_lookup(struct shmr_ctl_alloc *a,
					    struct shmr_pid pid)
{
	struct shmr_ctl_slot *s;

	if (pid.slot >= a->nslots)
		return NULL;
	s = &a->slots[pid.slot];
	if (s->state != SHMR_CTL_SLOT_USED || s->gen != pid.gen || pid.gen == 0)
		return NULL;
	return s;
}

struct shmr_ctl_slot *shmr_ctl_alloc_lookup_last(struct shmr_ctl_alloc *a,
						 struct shmr_pid pid)
{
	struct shmr_ctl_slot *s;

	if (pid.slot >= a->nslots)
		return NULL;
	s = &a->slots[pid.slot];
	if (s->state == SHMR_CTL_SLOT_FREE || s->gen != pid.gen ||
	    pid.gen == 0)
		return NULL;
	return s;
}

int shmr_ctl_alloc_put(struct shmr_ctl_alloc *a, struct shmr_pid pid,
		       uint64_t removal_version)
{
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(a, pid);

	if (!s)
		return -SHMR_E_NO_ENDPOINT;
	s->state = SHMR_CTL_SLOT_DEFERRED;
	s->freed_version = removal_version;
	s->owner = 0;
	s->os_pid = 0;
	a->nused--;
	return 0;
}
