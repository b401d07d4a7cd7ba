/*
 * One routing lcore's life outside the burst: its state set up and torn
 * down, its rings to the other lcores, the rate-limited log of what it
 * drops, the bells it owes, and the re-check and bounded sleep of an idle
 * lcore.
 *
 * Wake and sleep: an lcore that found no work announces itself on its
 * bell (shmr_bell_prepare(), B1 in shm/), looks once more at every lane it
 * polls (shmr_dp_has_work_rcu()) and only then sleeps; whoever enqueues
 * for it after that rings it awake (the fence B2 in shmr_dp_ring_bells()
 * pairs with B1), so no wake-up is lost.  The sleep is bounded by the
 * reply collector's next timer and shortened while a balancing queue
 * waits for a routee (shmr_dp_sleep_ms()).
 *
 * Which endpoints a round polls: those whose work bit is set (the
 * protocol is in shmr/notify.h), so an endpoint attached and idle costs a
 * round nothing, and a round's cost grows with the endpoints that send,
 * not with those attached.  A sender sets its bit after its enqueue when
 * it finds it clear; the lcore polls a set bit's endpoint every round and
 * clears the bit only after SHMR_DP_RETIRE_ROUNDS empty rounds in a row,
 * with the fence D1 and a look at the lanes after it, so a slot enqueued
 * meanwhile is never left behind: either the sender sees its bit clear
 * and sets it again, or the look sees the slot.  A busy-mode sender has
 * no fence between its enqueue and its bit's load, so its slot may not be
 * visible yet to that look: a second look, SHMR_DP_RECHECK_NS later (D5,
 * from a ring of those due, read against the TSC only while one is),
 * sees it.  In a steady stream nobody writes the bit's line: the sender
 * only reads it.
 *
 * The bits are in the lanes part, which every peer can write, so they are
 * a hint.  A bit set for nothing costs a look and is retired; a bit
 * cleared under a sender (a buggy peer, or a producer that died between
 * its enqueue and its bit) is found by the sweep, which polls endpoints of
 * the lcore's list as the loop did before bits and sets the bit of each
 * one found with work.  It comes in two sizes.  A whole sweep, at the
 * first round with a new table (an endpoint attached since may have sent
 * before the table knew it: the work of an attach, not of the endpoints
 * that sit there) and after every sleep (the lcore looked at every lane
 * before sleeping anyway, shmr_dp_has_work_rcu()).  And the slow sweep:
 * every SHMR_DP_SWEEP_ROUNDS rounds, the next SHMR_DP_SWEEP_CHUNK
 * endpoints of the list from a cursor, so a round's cost never grows with
 * the endpoints attached (an eighth of one endpoint's look per round, on
 * average), and a bit lost under load is found within
 * max_endpoints / nlcores / SHMR_DP_SWEEP_CHUNK * SHMR_DP_SWEEP_ROUNDS
 * rounds: 8,192 with 1,024 endpoints on one lcore, a few milliseconds of
 * rounds that have work.  Rounds, not time: counting them costs no clock
 * read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>

#include "lcore.h"

/* The collector's clock (lc->clock_ns): read from the vDSO, no syscall. */
static uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	/* vDSO: no syscall. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


/*
 * TSC ticks a second: from EAL's calibration when it ran, else measured
 * here against CLOCK_MONOTONIC over 2 ms (a unit test's lcore, set up
 * without EAL).  At set-up only.
 */
static uint64_t tsc_hz(void)
{
	uint64_t hz = rte_get_tsc_hz(), t0, c0;

	if (hz == 0) {
		t0 = clock_mono_ns();
		c0 = rte_rdtsc();
		while (clock_mono_ns() - t0 < 2000000u)
			rte_pause();
		hz = (rte_rdtsc() - c0) * 500u;
	}
	return hz;
}

/* TSC ticks in @p ns at @p hz ticks a second. */
static uint64_t tsc_ticks(uint64_t hz, uint64_t ns)
{
	return hz / 1000u * ns / 1000000u;
}

/* Carve @p n elements of @p size bytes from @p *at (cache-line aligned). */
static void *carve(unsigned char **at, size_t n, size_t size)
{
	void *p = *at;

	*at += (n * size + SHMR_CACHE_LINE - 1) & ~(size_t)(SHMR_CACHE_LINE - 1);
	return p;
}

/* The arrays by endpoint slot (lcore.h), sized from the geometry; 0 or
 * -ENOMEM. */
static int ep_arrays_init(struct shmr_dp_lcore *lc, uint32_t n)
{
	uint32_t w = (n + 63) / 64;
	/* Second looks due: twice the endpoints this lcore polls (one that
	 * goes busy and idle again within SHMR_DP_RECHECK_NS can be due
	 * twice), so that a crowd going idle at once is retired at once. */
	uint32_t rc = 2u * ((n + lc->env->nlcores - 1) / lc->env->nlcores);
	size_t sizes[] = {
		n * sizeof(uint16_t),
		2u * n * sizeof(uint16_t),
		n * sizeof(struct shmr_dp_stage),
		2u * n * sizeof(struct shmr_dp_held),
		w * 8u,
		w * 8u,
		n * 8u,
		n * sizeof(struct shmr_dp_bcast_progress),
		0, /* the served bitmaps: n of them, each carved alone */
		w * 8u,
		w * 4u,
		w * 4u,
		(rc < SHMR_DP_RECHECK_MIN ? SHMR_DP_RECHECK_MIN : rc) * 4u,
		(rc < SHMR_DP_RECHECK_MIN ? SHMR_DP_RECHECK_MIN : rc) * 8u,
	};
	size_t total = 0;
	unsigned char *at;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		total += (sizes[i] + SHMR_CACHE_LINE - 1) &
			 ~(size_t)(SHMR_CACHE_LINE - 1);
	/* Each served bitmap is carved on a line of its own, as carve()
	 * rounds it. */
	total += (size_t)n * (((size_t)w * 8u + SHMR_CACHE_LINE - 1) &
			      ~(size_t)(SHMR_CACHE_LINE - 1));
	lc->ep_mem = aligned_alloc(SHMR_CACHE_LINE, total);
	if (!lc->ep_mem)
		return -ENOMEM;
	memset(lc->ep_mem, 0, total);
	at = lc->ep_mem;
	lc->ep_words = w;
	lc->stage_of = carve(&at, n, sizeof(uint16_t));
	lc->src_of = carve(&at, 2u * n, sizeof(uint16_t));
	lc->stages = carve(&at, n, sizeof(struct shmr_dp_stage));
	lc->srcs = carve(&at, 2u * n, sizeof(struct shmr_dp_held));
	lc->bells = carve(&at, w, 8u);
	lc->checked = carve(&at, w, 8u);
	lc->ask_next_ns = carve(&at, n, 8u);
	lc->bcast = carve(&at, n, sizeof(struct shmr_dp_bcast_progress));
	for (uint32_t i = 0; i < n; i++)
		lc->bcast[i].served = carve(&at, w, 8u);
	lc->bcast_scratch = carve(&at, w, 8u);
	lc->bell_w = carve(&at, w, 4u);
	lc->checked_w = carve(&at, w, 4u);
	lc->recheck_cap = rc < SHMR_DP_RECHECK_MIN ? SHMR_DP_RECHECK_MIN : rc;
	lc->recheck_idx = carve(&at, lc->recheck_cap, 4u);
	lc->recheck_due = carve(&at, lc->recheck_cap, 8u);
	if (at > (unsigned char *)lc->ep_mem + total)
		abort(); /* the sizes above and the carving disagree */
	return 0;
}

int shmr_dp_lcore_init(struct shmr_dp_lcore *lc, const struct shmr_dp_env *env,
		       uint32_t index)
{
	uint64_t hz;
	size_t size;

	memset(lc, 0, sizeof(*lc));
	if (index >= env->nlcores)
		return -EINVAL;
	lc->env = env;
	lc->index = index;
	lc->stats = shmr_dp_stats(env, index);
	lc->epc = shmr_dp_ep_ctr(env, index, 0);
	lc->clock_ns = clock_mono_ns;
	lc->sweep_every = SHMR_DP_SWEEP_ROUNDS;
	lc->sweep_due = 1;
	lc->pool_cap = SHMR_DP_POOL_BYTES / env->slot_size;
	if (lc->pool_cap > SHMR_DP_POOL_MAX)
		lc->pool_cap = SHMR_DP_POOL_MAX;
	/* What a round holds is room its senders do not have until the
	 * round ends: at most a fraction of a lane (lcore.h). */
	if (lc->pool_cap > env->lane_size / SHMR_DP_POOL_LANE_DIV)
		lc->pool_cap = env->lane_size / SHMR_DP_POOL_LANE_DIV;
	if (lc->pool_cap < SHMR_DP_BURST)
		lc->pool_cap = SHMR_DP_BURST;
	hz = tsc_hz();
	lc->stage_ticks = tsc_ticks(hz, SHMR_DP_STAGE_NS);
	lc->recheck_ticks = tsc_ticks(hz, SHMR_DP_RECHECK_NS);
	if (ep_arrays_init(lc, env->max_endpoints) < 0)
		return -ENOMEM;
	/* By router index: as many as the domain has (env->max_routers,
	 * our copy of the header's), never the most allowed. */
	lc->bal = calloc(env->max_routers, sizeof(*lc->bal));
	lc->bal_act = calloc(env->max_routers, sizeof(*lc->bal_act));
	if (!lc->bal || !lc->bal_act ||
	    shmr_dp_pick_init(&lc->pick, env->max_routers) < 0) {
		shmr_dp_lcore_fini(lc);
		return -ENOMEM;
	}
	lc->pick.stage_of = lc->stage_of;
	lc->pick.stages = lc->stages;
	lc->buf = aligned_alloc(SHMR_CACHE_LINE,
				(size_t)lc->pool_cap * env->slot_size);
	lc->burst = lc->buf;
	size = (shmr_dp_collect_mem_size(SHMR_DP_COLLECT_CAP_DEFAULT,
					 env->slot_size) +
		SHMR_CACHE_LINE - 1) &
	       ~(size_t)(SHMR_CACHE_LINE - 1);
	lc->coll_mem = aligned_alloc(SHMR_CACHE_LINE, size);
	if (!lc->buf || !lc->coll_mem ||
	    shmr_dp_collect_init(&lc->coll, lc->coll_mem, size,
				 SHMR_DP_COLLECT_CAP_DEFAULT, env->slot_size,
				 index) < 0) {
		shmr_dp_lcore_fini(lc);
		return -ENOMEM;
	}
	return 0;
}

void shmr_dp_lcore_fini(struct shmr_dp_lcore *lc)
{
	free(lc->ep_mem);
	lc->ep_mem = NULL;
	free(lc->buf);
	lc->buf = NULL;
	free(lc->coll_mem);
	lc->coll_mem = NULL;
	for (uint32_t j = 0; j < SHMR_MAX_LCORES; j++) {
		free(lc->xin[j]); /* ours: we are its consumer */
		lc->xin[j] = NULL;
		lc->xout[j] = NULL;
	}
	lc->xin_any = 0;
	for (uint32_t i = 0; lc->bal && i < lc->env->max_routers; i++) {
		free(lc->bal[i].mem);
		lc->bal[i].mem = NULL;
	}
	free(lc->bal);
	lc->bal = NULL;
	free(lc->bal_act);
	lc->bal_act = NULL;
	lc->bal_active = 0;
	shmr_dp_pick_fini(&lc->pick);
}

int shmr_dp_lcores_link(struct shmr_dp_lcore *const *lcs, unsigned n)
{
	uint32_t ss;
	size_t size;

	if (n > SHMR_MAX_LCORES)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (lcs[i]->index != i)
			return -EINVAL;
	if (n < 2)
		return 0;
	ss = lcs[0]->env->slot_size;
	size = (size_t)rte_ring_get_memsize_elem(ss, SHMR_DP_XRING_SIZE);
	size = (size + SHMR_CACHE_LINE - 1) & ~(size_t)(SHMR_CACHE_LINE - 1);
	for (unsigned to = 0; to < n; to++) {
		for (unsigned from = 0; from < n; from++) {
			char name[32];
			struct rte_ring *r;

			if (from == to)
				continue;
			r = aligned_alloc(SHMR_CACHE_LINE, size);
			if (!r)
				return -ENOMEM; /* fini frees what was made */
			snprintf(name, sizeof(name), "shmr-x%u-%u", from, to);
			/* In place, as the domain's lanes are: no EAL
			 * memzone, no registry.  Single producer (lcore
			 * from), single consumer (lcore to), both threads of
			 * this process. */
			if (rte_ring_init(r, name, SHMR_DP_XRING_SIZE,
					  RING_F_SP_ENQ | RING_F_SC_DEQ) < 0) {
				free(r);
				return -EINVAL;
			}
			lcs[to]->xin[from] = r;
			lcs[to]->xin_any = 1;
			lcs[from]->xout[to] = r;
		}
	}
	return 0;
}

static const int event_level[SHMR_DP_EV_MAX] = {
	[SHMR_DP_EV_BAD] = SHMR_DP_LOG_WARNING,
	[SHMR_DP_EV_QUARANTINE] = SHMR_DP_LOG_ERROR,
	[SHMR_DP_EV_FAILED] = SHMR_DP_LOG_WARNING,
	[SHMR_DP_EV_DISCARDED] = SHMR_DP_LOG_INFO,
};

void shmr_dp_event(struct shmr_dp_lcore *lc, enum shmr_dp_event ev,
		   const char *fmt, ...)
{
	struct shmr_dp_ratelimit *rl = &lc->rl[ev];
	char line[400];
	struct timespec ts;
	uint64_t now;
	va_list ap;
	int n;

	if (!lc->env->log)
		return;
	/* The coarse clock is read from the vDSO: no syscall. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now < rl->next_ns) {
		rl->suppressed++;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (rl->suppressed && n >= 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n,
			 " (and %" PRIu64 " more like it in the last second)",
			 rl->suppressed);
	rl->suppressed = 0;
	rl->next_ns = now + 1000000000u;
	lc->env->log(lc->env->log_ctx, event_level[ev], line);
}

void shmr_dp_ring_bells(struct shmr_dp_lcore *lc)
{
	if (lc->xbells == 0 && lc->nbell_w == 0)
		return;
	/* B2: our enqueues (prod.tail release stores) before the sleepers'
	 * counts we read next; pairs with B1 in shmr_bell_prepare() (an
	 * endpoint's, or another lcore's for what we put in its xin). */
	atomic_thread_fence(memory_order_seq_cst);
	while (lc->xbells) {
		unsigned j = (unsigned)__builtin_ctz(lc->xbells);

		lc->xbells &= lc->xbells - 1;
		shmr_bell_ring_fenced(shmr_dp_lcore_bell(lc->env, j));
	}
	for (uint32_t i = 0; i < lc->nbell_w; i++) {
		uint32_t w = lc->bell_w[i];
		uint64_t bits = lc->bells[w];

		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);

			bits &= bits - 1;
			shmr_bell_ring_fenced(
				&shmr_dp_ep_peer(lc->env, w * 64 + b)->bell);
		}
		lc->bells[w] = 0;
	}
	lc->nbell_w = 0;
}

int shmr_dp_has_work_rcu(const struct shmr_dp_lcore *lc,
			 const struct shmr_dp_table *t)
{
	const struct shmr_dp_poll_list *l = &t->lists[lc->index];
	const struct shmr_dp_env *env = lc->env;
	int any = 0;

	for (uint32_t i = 0; i < l->n; i++) {
		const struct shmr_dp_poll *p = &l->e[i];

		if (p->quarantined || p->blocked)
			continue;
		if (shmr_dp_poll_pending(p)) {
			/* Our own hint: no fence needed, we poll next. */
			shmr_work_note_fenced(shmr_dp_work(env, lc->index),
					      env->work_nsum,
					      p->slot / env->nlcores);
			any = 1;
		}
	}
	if (any)
		return 1;
	for (uint32_t j = 0; lc->xin_any && j < lc->env->nlcores; j++)
		if (lc->xin[j] && !(lc->xheld & (1u << j)) &&
		    shmr_lane_pending_sc(lc->xin[j]))
			return 1;
	return 0;
}

void shmr_dp_work_set(struct shmr_dp_lcore *lc, uint32_t idx)
{
	const struct shmr_dp_env *env = lc->env;

	shmr_work_note_fenced(shmr_dp_work(env, lc->index), env->work_nsum,
			      idx);
}

void shmr_dp_work_drop(struct shmr_dp_lcore *lc, uint32_t idx)
{
	const struct shmr_dp_env *env = lc->env;
	_Atomic(uint64_t) *w =
		shmr_dp_work(env, lc->index) + env->work_nsum + idx / 64;

	/* No partner: no entry of ours to poll; an endpoint attached since
	 * the table was built is found by the new table's sweep. */
	atomic_fetch_and_explicit(w, ~(1ull << (idx % 64)),
				  memory_order_relaxed);
}

void shmr_dp_work_retire_rcu(struct shmr_dp_lcore *lc,
			     const struct shmr_dp_poll *p, uint32_t idx)
{
	const struct shmr_dp_env *env = lc->env;
	_Atomic(uint64_t) *w =
		shmr_dp_work(env, lc->index) + env->work_nsum + idx / 64;
	uint64_t bit = 1ull << (idx % 64);
	uint32_t at;

	/* No place for the second look: keep polling it for now. */
	if (lc->nrecheck == lc->recheck_cap)
		return;
	atomic_fetch_and(w, ~bit); /* seq_cst */
	/* D1: the clear before our look at the lanes; pairs with D2, the
	 * producer's fence between its enqueue and its bit's load. */
	atomic_thread_fence(memory_order_seq_cst);
	if (shmr_dp_poll_pending(p)) {
		atomic_fetch_or(w, bit);
		return;
	}
	/* D5: a busy-mode sender has no D2, so its enqueue may not have
	 * been visible to that look; the second one, later, sees it. */
	at = (lc->recheck_at + lc->nrecheck++) % lc->recheck_cap;
	lc->recheck_idx[at] = idx;
	lc->recheck_due[at] = rte_rdtsc() + lc->recheck_ticks;
}

void shmr_dp_work_recheck_rcu(struct shmr_dp_lcore *lc,
			      const struct shmr_dp_table *t)
{
	const struct shmr_dp_env *env = lc->env;
	const struct shmr_dp_poll_list *l = &t->lists[lc->index];
	uint64_t now = rte_rdtsc();

	while (lc->nrecheck && now >= lc->recheck_due[lc->recheck_at]) {
		uint32_t idx = lc->recheck_idx[lc->recheck_at];
		uint32_t slot = idx * env->nlcores + lc->index;
		uint32_t at = slot < t->max_endpoints ? l->at[slot] : 0;

		lc->recheck_at = (lc->recheck_at + 1) % lc->recheck_cap;
		lc->nrecheck--;
		/* Gone from this table, or quarantined: nothing to poll (a
		 * new table's sweep looks at every endpoint anyway). */
		if (at == 0 || l->e[at - 1].quarantined)
			continue;
		if (shmr_dp_poll_pending(&l->e[at - 1]))
			shmr_dp_work_set(lc, idx);
	}
}

void shmr_dp_work_word_idle(struct shmr_dp_lcore *lc, uint32_t w)
{
	const struct shmr_dp_env *env = lc->env;
	_Atomic(uint64_t) *work = shmr_dp_work(env, lc->index);
	uint64_t sbit = 1ull << (w % 64);

	atomic_fetch_and(&work[w / 64], ~sbit); /* seq_cst */
	/* D3: the clear before the word's load; pairs with D4, the
	 * producer's bit set before its load of the summary. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&work[env->work_nsum + w]))
		atomic_fetch_or(&work[w / 64], sbit);
}

int shmr_dp_sleep_ms(struct shmr_dp_lcore *lc, int ms)
{
	uint64_t due, now, left;

	/* Whatever woke us, or nothing: the first round after a sleep
	 * sweeps every endpoint (a producer that rang the bell but set no
	 * bit is served at once). */
	lc->sweep_due = 1;
	/* A routee that frees up rings no bell: look again soon. */
	if (lc->bal_active && ms > 1)
		ms = 1;
	if (lc->coll.nlive == 0)
		return ms;
	due = shmr_dp_collect_next_due(&lc->coll);
	now = lc->clock_ns();
	if (due <= now)
		return 0;
	left = (due - now + 999999u) / 1000000u;
	return left < (uint64_t)ms ? (int)left : ms;
}
