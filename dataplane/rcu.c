/*
 * The table swap.
 *
 * Readers are the routing lcores, registered with liburcu's QSBR flavour:
 * a reader holds the table it loaded until its next quiescent state, which
 * it announces once per poll loop (or by going offline to sleep).  The
 * update thread publishes a new table, waits for a grace period
 * (synchronize_rcu: every registered reader has passed a quiescent state
 * or been offline since the publication) and only then frees the old one.
 *
 * The pointer is published with rcu_xchg_pointer() [P1] and read with
 * rcu_dereference() [P2]: a reader that sees the new pointer sees the
 * table's contents.  ThreadSanitizer does not understand liburcu's
 * barriers, so its builds use the equivalent GCC atomic builtins
 * (release exchange, acquire load: the same instructions on x86-64) and
 * are told about the grace period explicitly: every reader releases [G1]
 * before each quiescent state and the updater acquires [G2] after
 * synchronize_rcu(), which is exactly the happens-before edge the grace
 * period guarantees.
 */
#include <urcu-qsbr.h>

#include "rcu.h"

#if defined(__SANITIZE_THREAD__)
#define DP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DP_TSAN 1
#endif
#endif

#ifdef DP_TSAN
#include <sanitizer/tsan_interface.h>
static char grace_edge;
#define GRACE_RELEASE() __tsan_release(&grace_edge)
#define GRACE_ACQUIRE() __tsan_acquire(&grace_edge)
#else
#define GRACE_RELEASE() ((void)0)
#define GRACE_ACQUIRE() ((void)0)
#endif

struct shmr_dp_table *shmr_dp_table_get_rcu(struct shmr_dp_current *c)
{
	/* P2: pairs with P1. */
#ifdef DP_TSAN
	return __atomic_load_n(&c->table, __ATOMIC_ACQUIRE);
#else
	return rcu_dereference(c->table);
#endif
}

struct shmr_dp_table *shmr_dp_table_current(struct shmr_dp_current *c)
{
	/* No partner: see rcu.h (the writer's own store, or joined). */
	return __atomic_load_n(&c->table, __ATOMIC_RELAXED);
}

struct shmr_dp_table *shmr_dp_table_publish(struct shmr_dp_current *c,
					    struct shmr_dp_table *t)
{
	/* P1: the table's contents before the pointer (pairs with P2). */
#ifdef DP_TSAN
	struct shmr_dp_table *old =
		__atomic_exchange_n(&c->table, t, __ATOMIC_RELEASE);
#else
	struct shmr_dp_table *old = rcu_xchg_pointer(&c->table, t);
#endif

	if (old) {
		synchronize_rcu();
		GRACE_ACQUIRE(); /* G2: pairs with G1 */
	}
	return old;
}

void shmr_dp_quiescent(void)
{
	GRACE_RELEASE(); /* G1: pairs with G2 */
	rcu_quiescent_state();
}

void shmr_dp_offline(void)
{
	GRACE_RELEASE(); /* G1: pairs with G2 */
	rcu_thread_offline();
}

void shmr_dp_online(void)
{
	rcu_thread_online();
}
