/*
 * Publication: the table swap under liburcu QSBR (rcu.c's essay).
 *
 * Internal, not for direct inclusion outside dataplane/ (the dataplane's
 * unit tests excepted).
 */
#ifndef SHMR_DP_RCU_H
#define SHMR_DP_RCU_H

#include "table.h"

/** The pointer lcores read the current table through. */
struct shmr_dp_current {
	struct shmr_dp_table *table; /* rcu_dereference / rcu_xchg_pointer */
};

/**
 * The current table: rcu_dereference() (pairs with [P1] in
 * shmr_dp_table_publish()); an acquire load in ThreadSanitizer builds.
 * Context: a registered QSBR reader, online, until its next quiescent state.
 */
struct shmr_dp_table *shmr_dp_table_get_rcu(struct shmr_dp_current *c);

/**
 * The current table, as the writer sees it: the pointer it published
 * last, read without the reader's ordering (no partner: the single writer
 * reads its own store, and a thread that joined every reader and the
 * writer is ordered after them by the joins).
 * Context: the update thread (the single writer of @p c), or any thread
 *          once no reader is online any more (shutdown, after the lcores
 *          and the update thread were joined).  Never a QSBR reader: it
 *          uses shmr_dp_table_get_rcu().
 */
struct shmr_dp_table *shmr_dp_table_current(struct shmr_dp_current *c);

/**
 * Publish @p t (rcu_assign_pointer semantics), wait for a grace period
 * (synchronize_rcu) and return the previous table, which no reader holds
 * any more: the caller frees it.
 * Context: the update thread; not a registered reader.  Blocking.
 */
struct shmr_dp_table *shmr_dp_table_publish(struct shmr_dp_current *c,
					    struct shmr_dp_table *t);

/**
 * Announce a QSBR quiescent state (rcu_quiescent_state()), telling
 * ThreadSanitizer about the grace period it ends.
 * Context: a registered reader, once per poll loop, holding no table.
 */
void shmr_dp_quiescent(void);

/** rcu_thread_offline(), with the same annotation. */
void shmr_dp_offline(void);

/** rcu_thread_online(). */
void shmr_dp_online(void);

#endif
