/*
 * A pool's resizer parameters: Pekko's DefaultResizer and
 * OptimalSizeExploringResizer settings, their defaults and their ranges.
 * The configuration's keys (struct shmr_conf_resizer, unset where the file
 * leaves them out) become one of these structs through
 * shmr_config_resizer_from_conf(), which shmr_config_validate() calls on
 * every router so that a value out of range is a configuration error; the
 * control plane's resizers (control/resizer.h, the algorithms) then run on
 * what passed.
 *
 * Context: any; every function here is pure, wait-free and allocates
 * nothing.
 */
#ifndef SHMR_CONFIG_RESIZER_CONF_H
#define SHMR_CONFIG_RESIZER_CONF_H

#include <stdint.h>

#include <shmr/layout.h>

/** The largest pool size a resizer accepts as an upper bound: a pool cannot
 *  have more routees than the domain has endpoint slots. */
#define SHMR_CONF_POOL_MAX SHMR_MAX_ENDPOINTS

/** The largest rate that multiplies a pool size (rampup-rate, backoff-rate,
 *  explore-step-size, downsize-ratio): its millionths times
 *  SHMR_CONF_POOL_MAX fit the resizers' int64 arithmetic with a wide
 *  margin (control/resizer.c). */
#define SHMR_CONF_RATE_MAX 1e6

struct shmr_conf_resizer;

/** Configuration keys of the resizer section, with Pekko's names. */
struct shmr_conf_resizer_cfg {
	int lower_bound;          /**< lower-bound: fewest routees (>= 0) */
	int upper_bound;          /**< upper-bound: most routees */
	int pressure_threshold;   /**< pressure-threshold, see pressure() */
	double rampup_rate;       /**< rampup-rate: growth when all pressed */
	double backoff_threshold; /**< backoff-threshold: <= 0 never shrinks */
	double backoff_rate;      /**< backoff-rate: shrink fraction */
	int messages_per_resize;  /**< messages-per-resize: >= 1 */
};

/** Pekko's defaults: 1, 10, 1, 0.2, 0.3, 0.1, 10. */
void shmr_config_resizer_defaults(struct shmr_conf_resizer_cfg *c);

/**
 * Validate @p c as Pekko does: lower-bound >= 0, upper-bound >= 0 and
 * >= lower-bound, rampup-rate >= 0, backoff-threshold <= 1, backoff-rate
 * >= 0, messages-per-resize >= 1.  In addition: upper-bound <=
 * SHMR_CONF_POOL_MAX, no rate is NaN, and rampup-rate and backoff-rate are
 * at most SHMR_CONF_RATE_MAX (the integer arithmetic's range).
 *
 * Returns: 0, or -EINVAL with *@p field (when @p field is not NULL) set to
 *          the configuration key at fault, a static string.
 */
int shmr_config_resizer_check(const struct shmr_conf_resizer_cfg *c,
			      const char **field);

/** Configuration keys of the optimal-size-exploring-resizer section. */
struct shmr_conf_optimal_cfg {
	int lower_bound;                     /**< lower-bound (>= 0) */
	int upper_bound;                     /**< upper-bound */
	double chance_of_ramping_down_when_full; /**< in [0, 1] */
	uint64_t action_interval_ms;         /**< action-interval */
	uint64_t downsize_after_underutilized_for_ms;
	/**< downsize-after-underutilized-for */
	double explore_step_size;            /**< explore-step-size (>= 0) */
	double chance_of_exploration;        /**< in [0, 1] */
	double downsize_ratio;               /**< downsize-ratio (>= 0) */
	int optimization_range;              /**< optimization-range (>= 2):
					      *   adjacent sizes considered */
	double weight_of_latest_metric;      /**< in [0, 1] */
};

/**
 * Pekko's defaults: lower-bound 1, upper-bound 30 (the class default;
 * Pekko's reference.conf says 10), chance-of-ramping-down-when-full 0.2,
 * action-interval 5 s, downsize-after-underutilized-for 72 h,
 * explore-step-size 0.1, chance-of-exploration 0.4, downsize-ratio 0.8,
 * optimization-range 16, weight-of-latest-metric 0.5.
 */
void shmr_config_optimal_defaults(struct shmr_conf_optimal_cfg *c);

/**
 * Validate @p c as Pekko does: lower-bound >= 0, upper-bound >= 0 and
 * >= lower-bound, optimization-range >= 2, the three chances/weights in
 * [0, 1], explore-step-size and downsize-ratio >= 0.  In addition:
 * upper-bound <= SHMR_CONF_POOL_MAX, no NaN, explore-step-size and
 * downsize-ratio at most SHMR_CONF_RATE_MAX.
 *
 * Returns: 0, or -EINVAL with *@p field (when not NULL) set to the
 *          configuration key at fault, a static string.
 */
int shmr_config_optimal_check(const struct shmr_conf_optimal_cfg *c,
			      const char **field);

/**
 * A pool's resizer settings: Pekko's defaults, then what the configuration
 * set, into @p d (resizer) or @p o (optimal_resizer), checked.
 * Returns: 0, or -EINVAL with *@p field the Pekko key at fault.
 */
int shmr_config_resizer_from_conf(const struct shmr_conf_resizer *z,
				  struct shmr_conf_resizer_cfg *d,
				  struct shmr_conf_optimal_cfg *o,
				  const char **field);

#endif /* SHMR_CONFIG_RESIZER_CONF_H */
