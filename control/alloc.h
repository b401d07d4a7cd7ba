/*
 * The endpoint allocator (alloc.c): slots with generations and deferred
 * reuse.  Internal to the control plane: not for direct inclusion outside
 * control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_ALLOC_H
#define SHMR_CONTROL_ALLOC_H

#include <stdint.h>

#include <shmr/layout.h>
#include <shmr/shmr.h>

/*
 * Every endpoint slot has a generation: a PID is (slot, gen), gen starts at
 * 1 and moves on every reuse, so a stale PID never reaches a slot's next
 * owner.  A freed slot is not reusable at once: the dataplane may still poll
 * its lanes or enqueue into them until every routing lcore has applied the
 * spec version that removed it.  So a free records that version, and the
 * allocator hands the slot out again only once the caller reports that the
 * slowest lcore has seen it (min over lcores of stats.table_version).
 */

enum shmr_ctl_slot_state {
	SHMR_CTL_SLOT_FREE = 0,     /* never used */
	SHMR_CTL_SLOT_USED = 1,
	SHMR_CTL_SLOT_DEFERRED = 2, /* freed; reusable once seen >= freed_version */
};

/*
 * A client slot closed or given up by its process does not go at once:
 * its outbound lanes may still hold what it sent (control/drain.c).
 */
enum shmr_ctl_drain {
	SHMR_CTL_DRAIN_NONE = 0,
	SHMR_CTL_DRAIN_POLL = 1,  /* still USED and polled, no owner: until
				   * its outbound lanes are empty */
	SHMR_CTL_DRAIN_COUNT = 2, /* DEFERRED, drained or given up: not
				   * reusable until what is left in its
				   * lanes has been counted and dropped */
	SHMR_CTL_DRAIN_INBOX = 3, /* DEFERRED, a route's inbox its supervisor
				   * removed: not reusable until what is
				   * queued there is dead-lettered
				   * (control/supervise.c) */
};

struct shmr_ctl_slot {
	uint32_t state;         /* enum shmr_ctl_slot_state */
	uint32_t drain;         /* enum shmr_ctl_drain */
	uint64_t drain_since;   /* ms (shmr_ctl_now_ms()) of the last
				 * progress seen while draining; 0: not
				 * yet looked at */
	int64_t drain_left;     /* what was left then */
	uint32_t gen;           /* current or last owner's; 0 = never used */
	uint32_t kind;          /* enum shmr_ep_kind while used */
	int32_t os_pid;         /* owner process, 0 when none */
	uint64_t owner;         /* connection id of a client slot, else 0 */
	uint32_t role;          /* client slot: its opener's role
				 * (SHMR_CTL_ROLE_*, server.h), kept after
				 * it left, for what it sent before */
	uint64_t freed_version; /* spec version that removed it */
	char name[SHMR_NAME_MAX];
};

struct shmr_ctl_alloc {
	uint32_t nslots; /* usable slots, <= SHMR_MAX_ENDPOINTS */
	uint32_t nused;
	struct shmr_ctl_slot slots[SHMR_MAX_ENDPOINTS];
};

/** Empty allocator of @p nslots slots (clamped to SHMR_MAX_ENDPOINTS). */
void shmr_ctl_alloc_init(struct shmr_ctl_alloc *a, uint32_t nslots);

/**
 * Take the lowest slot that is free, or deferred with a freed_version
 * <= @p seen_version and nothing left to count (drain NONE).
 *
 * Returns: the slot (>= 0), with *out = {slot, gen} and *reused = 1 when
 *          the slot had an owner before (its lanes must be re-initialised
 *          before the new owner uses them); -SHMR_E_NO_ENDPOINT when none.
 */
int shmr_ctl_alloc_get(struct shmr_ctl_alloc *a, uint32_t kind,
		       uint64_t seen_version, struct shmr_pid *out,
		       int *reused);

/**
 * Free @p pid; the slot is reusable once every lcore has seen
 * @p removal_version (the spec version that no longer has it).
 * Errors: -SHMR_E_NO_ENDPOINT when @p pid is not a used slot of that gen.
 */
int shmr_ctl_alloc_put(struct shmr_ctl_alloc *a, struct shmr_pid pid,
		       uint64_t removal_version);

/** The slot @p pid names, used or freed since (gen must match: nobody
 *  took it again), or NULL. */
struct shmr_ctl_slot *shmr_ctl_alloc_lookup_last(struct shmr_ctl_alloc *a,
						 struct shmr_pid pid);

/** The used slot of @p pid (gen must match), or NULL. */
struct shmr_ctl_slot *shmr_ctl_alloc_lookup(struct shmr_ctl_alloc *a,
					    struct shmr_pid pid);

#endif
