/*
 * A round of a routing lcore (shmr_dp_poll_once_rcu()): which endpoints
 * it polls, the passes it makes over their lanes, and what follows them.
 * The burst itself, and the staging a round bounds, are forward.c's (its
 * essay, "Batches per destination", says why a round gathers).
 *
 * Which endpoints: those whose work bit is set (poll_bits()), and every
 * endpoint of the lcore's list in a sweep round (poll_all()), which sets
 * the bit of each one left with work; lcore.c's essay says when a sweep
 * is due and when an idle endpoint's bit is retired, and shmr/notify.h
 * has the protocol with the senders.  The bits are peers' words, so they
 * are only a hint: every bound comes from the lcore's own geometry.
 *
 * The passes: one burst per lane per pass, high priority first, while a
 * pass brings work and the round holds something staged, for at most
 * stage_ticks from the end of the first pass (the TSC, read only once
 * something is held).  An endpoint whose target was full is left for the
 * next round after the first pass.  Then everything staged goes out and
 * every source lane is released (shmr_dp_fwd_round_out()), so nothing is
 * held when the round returns; then the routing logics' own work, each
 * only when it has any, and the bells owed (at once, or in a stream of
 * full rounds once every SHMR_DP_BELL_ROUNDS: see the round's end).
 */
#include <rte_cycles.h>
#include <rte_ring.h>

#include "forward.h"
#include "forward_slot.h"

/* One endpoint's lanes, high priority first, in pass @p pass of a round;
 * slots taken (staged or out).  After the first pass, an endpoint whose
 * target was full is left for the next round. */
static unsigned poll_ep(struct shmr_dp_lcore *lc, struct shmr_dp_table *t,
			struct shmr_dp_poll *p, unsigned pass)
{
	unsigned n;

	if (pass == 0)
		p->blocked = 0;
	else if (p->blocked)
		return 0;
	n = shmr_dp_fwd_burst_rcu(lc, t, p, p->out_high);
	if (!p->quarantined)
		n += shmr_dp_fwd_burst_rcu(lc, t, p, p->out);
	return n;
}

/* The sweep: every endpoint of the list from @p from, at most @p n of
 * them (wrapping), as the loop was before work bits; each one left with
 * work gets its bit (lcore.c says when).  Returns slots taken; the
 * cursor moves on past what it polled. */
static unsigned poll_all(struct shmr_dp_lcore *lc, struct shmr_dp_table *t,
			 unsigned pass, uint32_t n)
{
	struct shmr_dp_poll_list *l = &t->lists[lc->index];
	uint32_t i = lc->sweep_at < l->n ? lc->sweep_at : 0;
	unsigned total = 0;

	if (n > l->n)
		n = l->n;
	for (uint32_t k = 0; k < n; k++, i = i + 1 < l->n ? i + 1 : 0) {
		struct shmr_dp_poll *p = &l->e[i];
		unsigned got;

		if (p->quarantined)
			continue;
		got = poll_ep(lc, t, p, pass);
		total += got;
		if (!p->quarantined &&
		    (got || p->blocked || shmr_dp_poll_pending(p)))
			shmr_dp_work_set(lc, p->slot / lc->env->nlcores);
	}
	lc->sweep_at = i;
	return total;
}

/* A whole sweep, at a new table or after a sleep (lcore.c). */
static unsigned sweep_full(struct shmr_dp_lcore *lc, struct shmr_dp_table *t,
			   unsigned pass)
{
	unsigned total;

	lc->sweep_at = 0;
	total = poll_all(lc, t, pass, UINT32_MAX);
	lc->swept_build = t->build;
	lc->rounds = 0;
	lc->sweep_due = 0;
	return total;
}

/* The endpoints whose work bit is set; bounds from our own geometry,
 * whatever a peer wrote into the words. */
static unsigned poll_bits(struct shmr_dp_lcore *lc, struct shmr_dp_table *t,
			  unsigned pass)
{
	const struct shmr_dp_env *env = lc->env;
	struct shmr_dp_poll_list *l = &t->lists[lc->index];
	_Atomic(uint64_t) *work = shmr_dp_work(env, lc->index);
	unsigned total = 0;

	for (uint32_t s = 0; s < env->work_nsum; s++) {
		/* No partner: a hint.  What is read on its strength, a
		 * lane's tail, has its own acquire (the ring's). */
		uint64_t sv = atomic_load_explicit(&work[s], memory_order_relaxed);

		while (sv) {
			uint32_t w = s * 64 + (uint32_t)__builtin_ctzll(sv);
			uint64_t bits;

			sv &= sv - 1;
			if (w >= env->work_nwords) {
				/* A peer's: no such word.  No partner. */
				atomic_fetch_and_explicit(
					&work[s], ~(1ull << (w % 64)),
					memory_order_relaxed);
				continue;
			}
			bits = atomic_load_explicit(&work[env->work_nsum + w],
						    memory_order_relaxed);
			if (!bits) {
				shmr_dp_work_word_idle(lc, w);
				continue;
			}
			while (bits) {
				uint32_t idx = w * 64 +
					       (uint32_t)__builtin_ctzll(bits);
				uint32_t slot = idx * env->nlcores + lc->index;
				uint32_t at = slot < t->max_endpoints
						      ? l->at[slot]
						      : 0;
				struct shmr_dp_poll *p;
				unsigned n;

				bits &= bits - 1;
				if (at == 0 || l->e[at - 1].quarantined) {
					shmr_dp_work_drop(lc, idx);
					continue;
				}
				p = &l->e[at - 1];
				n = poll_ep(lc, t, p, pass);
				total += n;
				/* Idle rounds: counted in a round's first
				 * pass only. */
				if (n || p->blocked) {
					p->idle = 0;
				} else if (pass == 0 &&
					   ++p->idle >= SHMR_DP_RETIRE_ROUNDS) {
					p->idle = 0;
					shmr_dp_work_retire_rcu(lc, p, idx);
				}
			}
		}
	}
	return total;
}

unsigned shmr_dp_poll_once_rcu(struct shmr_dp_lcore *lc,
			       struct shmr_dp_table *t)
{
	uint64_t until = 0;
	unsigned total = 0;
	uint32_t chunk;
	int sweep;

	lc->nblocked = 0;
	/* The second looks at retired endpoints that are due [D5]. */
	if (lc->nrecheck)
		shmr_dp_work_recheck_rcu(lc, t);
	/* Which endpoints this round polls: lcore.c's essay.  The first
	 * pass sweeps when one is due; the later ones take the endpoints
	 * whose work bit is set (a sweep sets it for those left with work). */
	sweep = lc->sweep_due || t->build != lc->swept_build;
	/* The slow sweep: SHMR_DP_SWEEP_CHUNK more endpoints of the list
	 * every sweep_every rounds, beside the bits (1: all of them, every
	 * round). */
	chunk = 0;
	if (!sweep && ++lc->rounds >= lc->sweep_every) {
		lc->rounds = 0;
		chunk = lc->sweep_every == 1 ? UINT32_MAX : SHMR_DP_SWEEP_CHUNK;
	}
	/* Passes over the lanes while they bring work and the round holds
	 * something staged, for at most stage_ticks: see the essay. */
	for (unsigned pass = 0;; pass++) {
		unsigned got;

		if (sweep && pass == 0) {
			got = sweep_full(lc, t, pass);
		} else {
			got = poll_bits(lc, t, pass);
			if (chunk && pass == 0)
				got += poll_all(lc, t, pass, chunk);
		}
		total += got;
		if (got == 0 || lc->nsrcs == 0)
			break;
		/* The clock only once something is held: a round of one
		 * pass (one lane's full burst for one inbox) never reads it.
		 * The bound counts from the end of the first pass. */
		if (until == 0)
			until = rte_rdtsc() + lc->stage_ticks;
		else if (rte_rdtsc() >= until)
			break;
	}
	shmr_dp_fwd_round_out(lc);
	/* The routing logics' own work, each only when it has any: replies
	 * other lcores polled for our collector, its timers, and the
	 * balancing queues' hand-outs. */
	if (lc->xin_any)
		total += shmr_dp_fwd_xin_drain_rcu(lc, t);
	if (lc->coll.nlive)
		shmr_dp_fwd_collect_tick_rcu(lc, t);
	if (lc->bal_active)
		total += shmr_dp_fwd_balance_dispatch_rcu(lc, t);
	shmr_dp_count(&lc->stats->polls, 1);
	if (total)
		shmr_dp_count(&lc->stats->busy_polls, 1);
	/* The bells owed, after the fence B2 that drains every store of
	 * the round into the consumers' lanes: at once when the round was
	 * not full (a call's slot, the stream's end: nobody waits longer
	 * than before), and in a stream of full rounds once every
	 * SHMR_DP_BELL_ROUNDS.  No wake-up is lost: the fence still comes
	 * after every enqueue it covers, and before the lcore can sleep
	 * (only after a round that found nothing); a consumer asleep under
	 * a full stream waits at most that many rounds (microseconds). */
	if (total < SHMR_DP_BURST ||
	    ++lc->bell_rounds >= SHMR_DP_BELL_ROUNDS) {
		lc->bell_rounds = 0;
		shmr_dp_ring_bells(lc);
	}
	return total;
}
