/*
 * A pool's resizer parameters (see resizer_conf.h): Pekko's defaults, the
 * configured values over them, and the ranges, checked once by
 * shmr_config_validate().  The resizers themselves, and why the rates are
 * bounded (their integer arithmetic), are in control/resizer.c.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "resizer_conf.h"
#include "shmr_config.h"

/* NaN compares false with everything, so test it first. */
static int is_nan(double x)
{
	return x != x;
}

static int bad(const char **field, const char *name)
{
	if (field)
		*field = name;
	return -EINVAL;
}

static int probability(double x)
{
	return !is_nan(x) && x >= 0.0 && x <= 1.0;
}

static int ratio(double x)
{
	return !is_nan(x) && x >= 0.0 && x <= SHMR_CONF_RATE_MAX;
}

/* Both resizers' pool bounds: 0 <= lower <= upper <= SHMR_CONF_POOL_MAX. */
static int bounds_check(int lower, int upper, const char **field)
{
	if (lower < 0)
		return bad(field, "lower-bound");
	if (upper < 0 || upper < lower || upper > (int)SHMR_CONF_POOL_MAX)
		return bad(field, "upper-bound");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Default resizer                                                     */
/* ------------------------------------------------------------------ */

void shmr_config_resizer_defaults(struct shmr_conf_resizer_cfg *c)
{
	c->lower_bound = 1;
	c->upper_bound = 10;
	c->pressure_threshold = 1;
	c->rampup_rate = 0.2;
	c->backoff_threshold = 0.3;
	c->backoff_rate = 0.1;
	c->messages_per_resize = 10;
}

int shmr_config_resizer_check(const struct shmr_conf_resizer_cfg *c,
			      const char **field)
{
	int rc = bounds_check(c->lower_bound, c->upper_bound, field);

	if (rc < 0)
		return rc;
	if (!ratio(c->rampup_rate))
		return bad(field, "rampup-rate");
	if (is_nan(c->backoff_threshold) || c->backoff_threshold > 1.0)
		return bad(field, "backoff-threshold");
	if (!ratio(c->backoff_rate))
		return bad(field, "backoff-rate");
	if (c->messages_per_resize < 1)
		return bad(field, "messages-per-resize");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Optimal-size exploring resizer                                      */
/* ------------------------------------------------------------------ */

void shmr_config_optimal_defaults(struct shmr_conf_optimal_cfg *c)
{
	c->lower_bound = 1;
	c->upper_bound = 30;
	c->chance_of_ramping_down_when_full = 0.2;
	c->action_interval_ms = 5000;
	c->downsize_after_underutilized_for_ms = 72ull * 3600 * 1000;
	c->explore_step_size = 0.1;
	c->chance_of_exploration = 0.4;
	c->downsize_ratio = 0.8;
	c->optimization_range = 16;
	c->weight_of_latest_metric = 0.5;
}

int shmr_config_optimal_check(const struct shmr_conf_optimal_cfg *c,
			      const char **field)
{
	int rc = bounds_check(c->lower_bound, c->upper_bound, field);

	if (rc < 0)
		return rc;
	if (c->optimization_range < 2)
		return bad(field, "optimization-range");
	if (!probability(c->chance_of_ramping_down_when_full))
		return bad(field, "chance-of-ramping-down-when-full");
	if (!ratio(c->explore_step_size))
		return bad(field, "explore-step-size");
	if (!ratio(c->downsize_ratio))
		return bad(field, "downsize-ratio");
	if (!probability(c->chance_of_exploration))
		return bad(field, "chance-of-exploration");
	if (!probability(c->weight_of_latest_metric))
		return bad(field, "weight-of-latest-metric");
	return 0;
}

int shmr_config_resizer_from_conf(const struct shmr_conf_resizer *z,
				  struct shmr_conf_resizer_cfg *d,
				  struct shmr_conf_optimal_cfg *o,
				  const char **field)
{
#define SET_INT(dst, v)                                                    \
	do {                                                               \
		if ((v) != INT_MIN)                                        \
			(dst) = (v);                                       \
	} while (0)
#define SET_DBL(dst, v)                                                    \
	do {                                                               \
		if (!isnan(v))                                             \
			(dst) = (v);                                       \
	} while (0)
	shmr_config_resizer_defaults(d);
	shmr_config_optimal_defaults(o);
	if (z->kind == SHMR_RESIZER_DEFAULT) {
		SET_INT(d->lower_bound, z->lower_bound);
		SET_INT(d->upper_bound, z->upper_bound);
		SET_INT(d->pressure_threshold, z->pressure_threshold);
		SET_INT(d->messages_per_resize, z->messages_per_resize);
		SET_DBL(d->rampup_rate, z->rampup_rate);
		SET_DBL(d->backoff_threshold, z->backoff_threshold);
		SET_DBL(d->backoff_rate, z->backoff_rate);
		return shmr_config_resizer_check(d, field);
	}
	if (z->kind == SHMR_RESIZER_OPTIMAL) {
		SET_INT(o->lower_bound, z->lower_bound);
		SET_INT(o->upper_bound, z->upper_bound);
		SET_INT(o->optimization_range, z->optimization_range);
		SET_DBL(o->chance_of_ramping_down_when_full,
			z->chance_of_ramping_down_when_full);
		SET_DBL(o->explore_step_size, z->explore_step_size);
		SET_DBL(o->chance_of_exploration, z->chance_of_exploration);
		SET_DBL(o->downsize_ratio, z->downsize_ratio);
		SET_DBL(o->weight_of_latest_metric, z->weight_of_latest_metric);
		if (z->action_interval_ms != UINT64_MAX)
			o->action_interval_ms = z->action_interval_ms;
		if (z->downsize_after_underutilized_for_ms != UINT64_MAX)
			o->downsize_after_underutilized_for_ms =
				z->downsize_after_underutilized_for_ms;
		return shmr_config_optimal_check(o, field);
	}
#undef SET_INT
#undef SET_DBL
	return 0;
}
