/*
 * Pool resizers (see resizer.h for the two algorithms and the contract).
 *
 * Exactness.  A rate r that multiplies a pool size is turned once into
 * millionths, R = round(r * 1e6), and the rounding Pekko asks for is done on
 * integers: ceil(r * n) = (R * n + 999999) / 1000000, floor(r * n) =
 * R * n / 1000000, and p / n < t becomes p * 1000000 < T * n.  With
 * R <= 1e12 (rates <= SHMR_CONF_RATE_MAX = 1e6, enforced by config/'s
 * checks) and n <= SHMR_CTL_POOL_MAX the products stay far inside int64.
 * So "5 of 5 at 0.2" is exactly 1 and "3 of 10 under 0.3" is exactly not
 * below, whatever the binary expansion of 0.2 or 0.3.
 *
 * The chances (compared with a uniform draw) and the metric weight stay
 * doubles: they are not rounded into a count, so no boundary turns on them.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "resizer.h"

#define MICRO 1000000

/* r in [0, SHMR_CONF_RATE_MAX], checked by config/ (resizer_conf.c):
 * round to millionths. */
static int64_t micro(double r)
{
	return (int64_t)(r * 1e6 + 0.5);
}

/*
 * ceil(R / 1e6 * n) and floor(R / 1e6 * n) for R >= 0.  Within the
 * documented ranges they are exact; a pool size far beyond
 * SHMR_CTL_POOL_MAX saturates at INT32_MAX instead of overflowing.
 */
static int64_t ceil_mul(int64_t rate_micro, unsigned n)
{
	if (n != 0 && rate_micro > (INT64_MAX - MICRO) / (int64_t)n)
		return INT32_MAX;
	return (rate_micro * (int64_t)n + (MICRO - 1)) / MICRO;
}

static int64_t floor_mul(int64_t rate_micro, unsigned n)
{
	if (n != 0 && rate_micro > INT64_MAX / (int64_t)n)
		return INT32_MAX;
	return rate_micro * (int64_t)n / MICRO;
}

/* (size + change) kept within [lower, upper], less size. */
static int clamp_delta(unsigned size, int64_t change, int lower, int upper)
{
	int64_t proposed = (int64_t)size + change;

	if (proposed < lower)
		proposed = lower;
	if (proposed > upper)
		proposed = upper;
	return (int)(proposed - (int64_t)size);
}

double shmr_ctl_rng_splitmix(void *ctx)
{
	uint64_t *s = ctx;
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

/* ------------------------------------------------------------------ */
/* Default resizer                                                     */
/* ------------------------------------------------------------------ */

int shmr_ctl_resizer_is_time(const struct shmr_conf_resizer_cfg *c,
			     uint64_t message_counter)
{
	return message_counter % (uint64_t)c->messages_per_resize == 0;
}

unsigned shmr_ctl_resizer_pressure(const struct shmr_conf_resizer_cfg *c,
				   const struct shmr_ctl_routee_load *r,
				   unsigned n)
{
	int t = c->pressure_threshold;
	unsigned count = 0;

	for (unsigned i = 0; i < n; i++) {
		int pressed;

		if (t < 1)
			pressed = r[i].busy != 0;
		else if (t == 1)
			pressed = r[i].busy != 0 && r[i].depth >= 1;
		else
			pressed = r[i].depth >= (uint32_t)t;
		count += pressed;
	}
	return count;
}

int shmr_ctl_resizer_rampup(const struct shmr_conf_resizer_cfg *c,
			    unsigned pressure, unsigned capacity)
{
	if (pressure < capacity)
		return 0;
	return (int)ceil_mul(micro(c->rampup_rate), capacity);
}

int shmr_ctl_resizer_backoff(const struct shmr_conf_resizer_cfg *c,
			     unsigned pressure, unsigned capacity)
{
	int64_t t;

	/* Pekko's floor(-rate * n) is -ceil(rate * n). */
	if (!(c->backoff_threshold > 0.0) || !(c->backoff_rate > 0.0) ||
	    capacity == 0)
		return 0;
	t = micro(c->backoff_threshold);
	if ((int64_t)pressure * MICRO >= t * (int64_t)capacity)
		return 0;
	return -(int)ceil_mul(micro(c->backoff_rate), capacity);
}

int shmr_ctl_resizer_delta(const struct shmr_conf_resizer_cfg *c,
			   unsigned pressure, unsigned size)
{
	int64_t delta = (int64_t)shmr_ctl_resizer_rampup(c, pressure, size) +
			shmr_ctl_resizer_backoff(c, pressure, size);

	return clamp_delta(size, delta, c->lower_bound, c->upper_bound);
}

int shmr_ctl_resizer_capacity(const struct shmr_conf_resizer_cfg *c,
			      const struct shmr_ctl_routee_load *r,
			      unsigned n)
{
	return shmr_ctl_resizer_delta(c, shmr_ctl_resizer_pressure(c, r, n),
				      n);
}

/* ------------------------------------------------------------------ */
/* Optimal-size exploring resizer                                      */
/* ------------------------------------------------------------------ */

int shmr_ctl_optimal_init(struct shmr_ctl_optimal *o,
			  const struct shmr_conf_optimal_cfg *c,
			  const char **field)
{
	int rc = shmr_config_optimal_check(c, field);

	if (rc < 0)
		return rc;
	memset(o, 0, sizeof(*o));
	o->cfg = *c;
	return 0;
}

int shmr_ctl_optimal_is_time(const struct shmr_ctl_optimal *o,
			     uint64_t now_ms)
{
	if (!o->checked)
		return 1;
	return now_ms > o->check_ms &&
	       now_ms - o->check_ms > o->cfg.action_interval_ms;
}

void shmr_ctl_optimal_report(struct shmr_ctl_optimal *o, uint64_t now_ms,
			     const struct shmr_ctl_routee_load *r, unsigned n,
			     uint64_t processed)
{
	unsigned utilized = 0;
	int full;

	for (unsigned i = 0; i < n; i++)
		utilized += r[i].busy != 0 || r[i].depth > 0;
	full = utilized == n;

	/*
	 * Only an interval that was fully utilized from end to end measures
	 * the pool's speed at this size: the previous report must have been
	 * fully utilized too (no streak) and this one must be.
	 */
	if (full && !o->streak && o->checked && processed > 0 &&
	    n <= SHMR_CTL_POOL_MAX && now_ms >= o->check_ms) {
		struct shmr_ctl_optimal_perf *p = &o->log[n];
		double w = o->cfg.weight_of_latest_metric;
		double last = (double)(now_ms - o->check_ms) /
			      (double)processed;

		if (p->logged) {
			p->ms_per_msg = p->ms_per_msg * (1.0 - w) + last * w;
		} else {
			p->ms_per_msg = last;
			p->logged = 1;
			o->nlogged++;
		}
	}

	if (full) {
		o->streak = 0;
	} else {
		if (!o->streak) {
			o->streak = 1;
			o->streak_start_ms = now_ms;
			o->streak_highest = 0;
		}
		if (utilized > o->streak_highest)
			o->streak_highest = utilized;
	}
	o->check_ms = now_ms;
	o->checked = 1;
}

int shmr_ctl_optimal_logged(const struct shmr_ctl_optimal *o, unsigned size,
			    double *ms_per_msg)
{
	if (size > SHMR_CTL_POOL_MAX || !o->log[size].logged)
		return -ENOENT;
	*ms_per_msg = o->log[size].ms_per_msg;
	return 0;
}

/* floor(u * bound) for a draw u in [0, 1), kept below @p bound even if a
 * bad source returns 1.0 or more. */
static unsigned draw_below(double u, unsigned bound)
{
	double x = u * (double)bound;

	if (!(x > 0.0))
		return 0;
	if (x >= (double)bound)
		return bound - 1;
	return (unsigned)x;
}

static int64_t explore(const struct shmr_ctl_optimal *o, unsigned size,
		   const struct shmr_ctl_rng *rng)
{
	unsigned bound = (unsigned)ceil_mul(micro(o->cfg.explore_step_size),
					    size);
	double u = rng->next(rng->ctx);
	unsigned step;

	/* Pekko's nextInt(0) would throw; a bound of 0 (size 0 or step 0)
	 * steps by 1.  The draw is taken anyway, so explore always takes
	 * the same number of draws. */
	step = bound > 0 ? draw_below(u, bound) : 0;
	if (step < 1)
		step = 1;
	if (rng->next(rng->ctx) < o->cfg.chance_of_ramping_down_when_full)
		return -(int64_t)step;
	return step;
}

static int64_t optimize(const struct shmr_ctl_optimal *o, unsigned size)
{
	unsigned each_side = (unsigned)o->cfg.optimization_range / 2;
	unsigned left = size, right = size, k, best;
	int found = 0;
	int64_t diff;

	/* The each_side-th nearest logged size below, and at or above. */
	k = 0;
	for (unsigned s = size < SHMR_CTL_POOL_MAX + 1 ? size
						       : SHMR_CTL_POOL_MAX + 1;
	     s-- > 0 && k < each_side;) {
		if (o->log[s].logged) {
			left = s;
			k++;
		}
	}
	k = 0;
	for (unsigned s = size; s <= SHMR_CTL_POOL_MAX && k < each_side; s++) {
		if (o->log[s].logged) {
			right = s;
			k++;
		}
	}

	/* The fastest between them; scanning upward keeps ties smaller. */
	best = size;
	for (unsigned s = left; s <= right && s <= SHMR_CTL_POOL_MAX; s++) {
		if (!o->log[s].logged)
			continue;
		if (!found || o->log[s].ms_per_msg < o->log[best].ms_per_msg) {
			best = s;
			found = 1;
		}
	}
	if (!found)
		return 0;

	/* Half-way, rounded away from the current size: floor of a negative
	 * half, ceil of a positive one. */
	diff = (int64_t)best - (int64_t)size;
	return diff < 0 ? -((-diff + 1) / 2) : (diff + 1) / 2;
}

int shmr_ctl_optimal_resize(struct shmr_ctl_optimal *o, uint64_t now_ms,
			    unsigned size, const struct shmr_ctl_rng *rng,
			    enum shmr_ctl_optimal_action *action)
{
	enum shmr_ctl_optimal_action act;
	int64_t change;

	if (o->streak && now_ms > o->streak_start_ms &&
	    now_ms - o->streak_start_ms >
		    o->cfg.downsize_after_underutilized_for_ms) {
		int64_t to = floor_mul(micro(o->cfg.downsize_ratio),
				       o->streak_highest);

		act = SHMR_CTL_OPTIMAL_DOWNSIZE;
		change = to < (int64_t)size ? to - (int64_t)size : 0;
	} else if (o->nlogged == 0 || o->streak) {
		act = SHMR_CTL_OPTIMAL_HOLD;
		change = 0;
	} else if (rng->next(rng->ctx) < o->cfg.chance_of_exploration) {
		act = SHMR_CTL_OPTIMAL_EXPLORE;
		change = explore(o, size, rng);
	} else {
		act = SHMR_CTL_OPTIMAL_OPTIMIZE;
		change = optimize(o, size);
	}
	if (action)
		*action = act;
	return clamp_delta(size, change, o->cfg.lower_bound,
			   o->cfg.upper_bound);
}


