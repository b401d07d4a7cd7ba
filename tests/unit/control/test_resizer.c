/*
 * The pool resizers (control/resizer.c; their parameters' defaults and
 * ranges are config/resizer_conf.c's), as table tests of exact values:
 *   - default resizer: Pekko's defaults and validation, pressure for each
 *     kind of threshold, rampup and backoff including Pekko's published
 *     examples and the exact boundaries that binary floating point gets
 *     wrong, clamping at both bounds, messages-per-resize;
 *   - optimal-size exploring resizer: validation, the action interval, the
 *     performance log and its weighted mean, the underutilization streak,
 *     and every branch of the decision (hold, downsize, explore, optimize)
 *     with a scripted clock and random source, including how many draws
 *     each branch takes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "resizer.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define HOURS(h) ((uint64_t)(h) * 3600u * 1000u)

/* ------------------------------------------------------------------ */
/* Default resizer                                                     */
/* ------------------------------------------------------------------ */

static struct shmr_conf_resizer_cfg dflt(void)
{
	struct shmr_conf_resizer_cfg c;

	shmr_config_resizer_defaults(&c);
	return c;
}

static void default_defaults(void **state)
{
	struct shmr_conf_resizer_cfg c = dflt();
	const char *field = "untouched";

	assert_int_equal(c.lower_bound, 1);
	assert_int_equal(c.upper_bound, 10);
	assert_int_equal(c.pressure_threshold, 1);
	assert_true(c.rampup_rate == 0.2);
	assert_true(c.backoff_threshold == 0.3);
	assert_true(c.backoff_rate == 0.1);
	assert_int_equal(c.messages_per_resize, 10);
	assert_int_equal(shmr_config_resizer_check(&c, &field), 0);
	assert_string_equal(field, "untouched");
}

static void default_check(void **state)
{
	static const struct {
		const char *field; /* NULL: valid */
		struct shmr_conf_resizer_cfg c;
	} t[] = {
		{ NULL, { 0, 0, 1, 0.2, 0.3, 0.1, 10 } },    /* lower 0 ok */
		{ NULL, { 5, 5, 1, 0.2, 0.3, 0.1, 10 } },    /* upper = lower */
		{ NULL, { 1, SHMR_CTL_POOL_MAX, 1, 0.2, 0.3, 0.1, 1 } },
		{ NULL, { 1, 10, 0, 0.0, 1.0, 0.0, 1 } },    /* edges */
		{ NULL, { 1, 10, -3, 0.2, -1.0, 0.1, 10 } }, /* < 1, never
							      * back off */
		{ "lower-bound", { -1, 10, 1, 0.2, 0.3, 0.1, 10 } },
		{ "upper-bound", { 0, -1, 1, 0.2, 0.3, 0.1, 10 } },
		{ "upper-bound", { 5, 4, 1, 0.2, 0.3, 0.1, 10 } },
		{ "upper-bound", { 1, SHMR_CTL_POOL_MAX + 1, 1, 0.2, 0.3, 0.1,
				   10 } },
		{ "rampup-rate", { 1, 10, 1, -0.1, 0.3, 0.1, 10 } },
		{ "rampup-rate", { 1, 10, 1, __builtin_nan(""), 0.3, 0.1, 10 } },
		{ "rampup-rate", { 1, 10, 1, 2e6, 0.3, 0.1, 10 } },
		{ "backoff-threshold", { 1, 10, 1, 0.2, 1.01, 0.1, 10 } },
		{ "backoff-threshold", { 1, 10, 1, 0.2, __builtin_nan(""), 0.1,
					 10 } },
		{ "backoff-rate", { 1, 10, 1, 0.2, 0.3, -0.1, 10 } },
		{ "backoff-rate", { 1, 10, 1, 0.2, 0.3, __builtin_nan(""),
				    10 } },
		{ "messages-per-resize", { 1, 10, 1, 0.2, 0.3, 0.1, 0 } },
		{ "messages-per-resize", { 1, 10, 1, 0.2, 0.3, 0.1, -5 } },
	};

	for (size_t i = 0; i < N_(t); i++) {
		const char *field = NULL;
		int rc = shmr_config_resizer_check(&t[i].c, &field);

		if (!t[i].field) {
			assert_int_equal(rc, 0);
			assert_null(field);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(field);
			assert_string_equal(field, t[i].field);
		}
	}
	/* The field pointer is optional. */
	assert_int_equal(shmr_config_resizer_check(&t[5].c, NULL), -EINVAL);
}

static void default_is_time(void **state)
{
	struct shmr_conf_resizer_cfg c = dflt();

	/* 0 is the initial resize, before the first message. */
	assert_true(shmr_ctl_resizer_is_time(&c, 0));
	for (uint64_t m = 1; m < 10; m++)
		assert_false(shmr_ctl_resizer_is_time(&c, m));
	assert_true(shmr_ctl_resizer_is_time(&c, 10));
	assert_false(shmr_ctl_resizer_is_time(&c, 11));
	assert_true(shmr_ctl_resizer_is_time(&c, 20));
	assert_true(shmr_ctl_resizer_is_time(&c, 10000000000ull));

	c.messages_per_resize = 1; /* before each message */
	for (uint64_t m = 0; m < 5; m++)
		assert_true(shmr_ctl_resizer_is_time(&c, m));
}

static void default_pressure(void **state)
{
	/* One routee of each kind. */
	static const struct shmr_ctl_routee_load r[] = {
		{ 0, 0 }, /* idle, empty */
		{ 1, 0 }, /* busy, nothing waiting */
		{ 1, 1 }, /* busy, one waiting */
		{ 0, 1 }, /* idle, one waiting (about to pick it up) */
		{ 1, 3 }, /* busy, three waiting */
		{ 0, 5 }, /* idle, five waiting */
	};
	static const struct {
		int threshold;
		unsigned pressure;
	} t[] = {
		{ -2, 3 }, /* < 1: busy: r1 r2 r4 */
		{ 0, 3 },
		{ 1, 2 }, /* busy with messages waiting: r2 r4 */
		{ 2, 2 }, /* >= 2 waiting: r4 r5 */
		{ 3, 2 },
		{ 4, 1 }, /* r5 */
		{ 5, 1 },
		{ 6, 0 },
	};
	struct shmr_conf_resizer_cfg c = dflt();

	for (size_t i = 0; i < N_(t); i++) {
		c.pressure_threshold = t[i].threshold;
		assert_int_equal(shmr_ctl_resizer_pressure(&c, r, N_(r)),
				 t[i].pressure);
	}
	assert_int_equal(shmr_ctl_resizer_pressure(&c, r, 0), 0);
}

static void default_rampup(void **state)
{
	static const struct {
		double rate;
		unsigned pressure, capacity;
		int rampup;
	} t[] = {
		/* Pekko's examples (rampup-rate 0.2). */
		{ 0.2, 9, 10, 0 },
		{ 0.2, 5, 5, 1 },
		{ 0.2, 6, 6, 2 },
		/* More at 0.2: only a fully pressed pool grows. */
		{ 0.2, 10, 10, 2 },
		{ 0.2, 1, 1, 1 },
		{ 0.2, 4, 5, 0 },
		{ 0.2, 0, 0, 0 },
		{ 0.2, 11, 11, 3 },
		/* Exact multiples that doubles push over (0.07 * 100 is
		 * 7.000000000000001, 0.28 * 25 is 7.000000000000001). */
		{ 0.07, 100, 100, 7 },
		{ 0.28, 25, 25, 7 },
		{ 0.1, 30, 30, 3 },
		{ 0.3, 10, 10, 3 },
		{ 0.1, 31, 31, 4 },
		/* Rate 0 never grows, rate 1 doubles, rate 2.5 more. */
		{ 0.0, 8, 8, 0 },
		{ 1.0, 8, 8, 8 },
		{ 2.5, 3, 3, 8 },
	};
	struct shmr_conf_resizer_cfg c = dflt();

	for (size_t i = 0; i < N_(t); i++) {
		c.rampup_rate = t[i].rate;
		assert_int_equal(shmr_ctl_resizer_rampup(&c, t[i].pressure,
							 t[i].capacity),
				 t[i].rampup);
	}
}

static void default_backoff(void **state)
{
	static const struct {
		double threshold, rate;
		unsigned pressure, capacity;
		int backoff;
	} t[] = {
		/* Pekko's examples (threshold 0.3, rate 0.1). */
		{ 0.3, 0.1, 3, 10, 0 },
		{ 0.3, 0.1, 2, 10, -1 },
		/* More at the defaults: rate 0.1 of 9 rounds to 1. */
		{ 0.3, 0.1, 0, 10, -1 },
		{ 0.3, 0.1, 2, 9, -1 },
		{ 0.3, 0.1, 3, 9, 0 },
		{ 0.3, 0.1, 6, 20, 0 },
		{ 0.3, 0.1, 5, 20, -2 },
		{ 0.3, 0.1, 0, 1, -1 },
		{ 0.3, 0.1, 0, 0, 0 },
		/* The comparison is exact at other thresholds too. */
		{ 0.7, 0.1, 7, 10, 0 },
		{ 0.7, 0.1, 69, 100, -10 },
		{ 0.7, 0.1, 70, 100, 0 },
		{ 1.0, 0.1, 9, 10, -1 },
		{ 1.0, 0.1, 10, 10, 0 },
		/* -0.07 * 100 is -7.000000000000001 in doubles. */
		{ 0.3, 0.07, 0, 100, -7 },
		/* Threshold <= 0 or rate 0: never backs off. */
		{ 0.0, 0.1, 0, 10, 0 },
		{ -1.0, 0.1, 0, 10, 0 },
		{ 0.3, 0.0, 0, 10, 0 },
	};
	struct shmr_conf_resizer_cfg c = dflt();

	for (size_t i = 0; i < N_(t); i++) {
		c.backoff_threshold = t[i].threshold;
		c.backoff_rate = t[i].rate;
		assert_int_equal(shmr_ctl_resizer_backoff(&c, t[i].pressure,
							  t[i].capacity),
				 t[i].backoff);
	}
}

static void default_delta(void **state)
{
	static const struct {
		int lower, upper;
		unsigned pressure, size;
		int delta;
	} t[] = {
		/* Unclamped. */
		{ 1, 10, 5, 5, 1 },
		{ 1, 10, 6, 6, 2 },
		{ 1, 10, 2, 10, -1 },
		{ 1, 10, 3, 10, 0 },
		{ 1, 10, 4, 7, 0 },
		/* At the upper bound: 9 + 2 is 11, kept to 10. */
		{ 1, 10, 9, 9, 1 },
		{ 1, 10, 10, 10, 0 },
		/* Above it (bounds lowered under a running pool). */
		{ 1, 5, 7, 7, -2 },
		{ 1, 5, 0, 7, -2 },
		/* At the lower bound: 1 - 1 is 0, kept to 1. */
		{ 1, 10, 0, 1, 0 },
		{ 3, 10, 0, 3, 0 },
		{ 3, 10, 0, 4, -1 },
		/* Below it: the empty pool's initial resize, and a pool that
		 * lost routees. */
		{ 1, 10, 0, 0, 1 },
		{ 3, 10, 0, 0, 3 },
		{ 3, 10, 1, 2, 1 },
		{ 0, 10, 0, 1, -1 },
		{ 0, 10, 0, 0, 0 },
	};
	struct shmr_conf_resizer_cfg c = dflt();

	for (size_t i = 0; i < N_(t); i++) {
		c.lower_bound = t[i].lower;
		c.upper_bound = t[i].upper;
		assert_int_equal(shmr_ctl_resizer_delta(&c, t[i].pressure,
							t[i].size),
				 t[i].delta);
	}
}

static void default_capacity(void **state)
{
	struct shmr_conf_resizer_cfg c = dflt();
	struct shmr_ctl_routee_load r[10];

	/* Five routees, all busy with a backlog: grow by 1. */
	for (unsigned i = 0; i < 5; i++)
		r[i] = (struct shmr_ctl_routee_load){ 1, 2 };
	assert_int_equal(shmr_ctl_resizer_capacity(&c, r, 5), 1);

	/* One of them catches up (busy, empty): not all pressed. */
	r[4].depth = 0;
	assert_int_equal(shmr_ctl_resizer_capacity(&c, r, 5), 0);

	/* Ten routees, two under pressure: shrink by 1; three: keep. */
	memset(r, 0, sizeof(r));
	r[0] = r[7] = (struct shmr_ctl_routee_load){ 1, 1 };
	r[3] = (struct shmr_ctl_routee_load){ 1, 0 }; /* busy, no backlog */
	assert_int_equal(shmr_ctl_resizer_capacity(&c, r, 10), -1);
	r[3].depth = 4;
	assert_int_equal(shmr_ctl_resizer_capacity(&c, r, 10), 0);

	/* Threshold 0 counts the busy ones alone. */
	c.pressure_threshold = 0;
	r[3].depth = 0;
	assert_int_equal(shmr_ctl_resizer_capacity(&c, r, 10), 0);

	/* No routees at all: up to the lower bound. */
	assert_int_equal(shmr_ctl_resizer_capacity(&c, r, 0), 1);
}

/* ------------------------------------------------------------------ */
/* Optimal-size exploring resizer                                      */
/* ------------------------------------------------------------------ */

/* A scripted random source: returns u[0], u[1], ... and fails the test
 * when asked for more. */
struct script {
	const double *u;
	unsigned n, used;
};

static double script_next(void *ctx)
{
	struct script *s = ctx;

	assert_true(s->used < s->n);
	return s->u[s->used++];
}

#define SCRIPT(name, ...)                                                 \
	static const double name##_u[] = { __VA_ARGS__ };                 \
	struct script name = { name##_u, N_(name##_u), 0 };               \
	struct shmr_ctl_rng name##_rng = { script_next, &name }

/* No draws allowed. */
static double no_draw(void *ctx)
{
	fail_msg("unexpected random draw");
	return 0.0;
}

static const struct shmr_ctl_rng forbidden = { no_draw, NULL };

static struct shmr_conf_optimal_cfg odflt(void)
{
	struct shmr_conf_optimal_cfg c;

	shmr_config_optimal_defaults(&c);
	return c;
}

/* @p n routees, the first @p utilized of them busy. */
static void loads(struct shmr_ctl_routee_load *r, unsigned n,
		  unsigned utilized)
{
	for (unsigned i = 0; i < n; i++)
		r[i] = (struct shmr_ctl_routee_load){ i < utilized, 0 };
}

/* Log @p ms_per_msg (a multiple of 0.001) at size @p n, on a fresh log
 * entry: two fully utilized reports ms_per_msg * 1000 ms apart, with 1000
 * messages processed in between. */
static void log_size(struct shmr_ctl_optimal *o, uint64_t *now, unsigned n,
		     double ms_per_msg)
{
	struct shmr_ctl_routee_load r[SHMR_CTL_POOL_MAX];
	double got;

	loads(r, n, n);
	shmr_ctl_optimal_report(o, *now, r, n, 0);
	*now += (uint64_t)(ms_per_msg * 1000.0 + 0.5);
	shmr_ctl_optimal_report(o, *now, r, n, 1000);
	assert_int_equal(shmr_ctl_optimal_logged(o, n, &got), 0);
	assert_true(got == ms_per_msg);
}

static void optimal_defaults(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	double ms;

	assert_int_equal(c.lower_bound, 1);
	assert_int_equal(c.upper_bound, 30);
	assert_true(c.chance_of_ramping_down_when_full == 0.2);
	assert_int_equal(c.action_interval_ms, 5000);
	assert_int_equal(c.downsize_after_underutilized_for_ms, HOURS(72));
	assert_true(c.explore_step_size == 0.1);
	assert_true(c.chance_of_exploration == 0.4);
	assert_true(c.downsize_ratio == 0.8);
	assert_int_equal(c.optimization_range, 16);
	assert_true(c.weight_of_latest_metric == 0.5);

	memset(&o, 0xa5, sizeof(o));
	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	assert_int_equal(o.nlogged, 0);
	assert_int_equal(o.streak, 0);
	for (unsigned s = 0; s <= SHMR_CTL_POOL_MAX; s++)
		assert_int_equal(shmr_ctl_optimal_logged(&o, s, &ms), -ENOENT);
	assert_int_equal(shmr_ctl_optimal_logged(&o, SHMR_CTL_POOL_MAX + 1,
						 &ms),
			 -ENOENT);
}

enum okey {
	K_LOWER, K_UPPER, K_RANGE, K_DOWN, K_EXPLORE, K_WEIGHT, K_STEP,
	K_RATIO, K_INTERVAL,
};

static void oset(struct shmr_conf_optimal_cfg *c, enum okey k, double v)
{
	switch (k) {
	case K_LOWER: c->lower_bound = (int)v; break;
	case K_UPPER: c->upper_bound = (int)v; break;
	case K_RANGE: c->optimization_range = (int)v; break;
	case K_DOWN: c->chance_of_ramping_down_when_full = v; break;
	case K_EXPLORE: c->chance_of_exploration = v; break;
	case K_WEIGHT: c->weight_of_latest_metric = v; break;
	case K_STEP: c->explore_step_size = v; break;
	case K_RATIO: c->downsize_ratio = v; break;
	case K_INTERVAL: c->action_interval_ms = (uint64_t)v; break;
	}
}

static void optimal_check(void **state)
{
	static const struct {
		const char *field; /* NULL: valid */
		enum okey k;
		double v;
	} t[] = {
		{ NULL, K_LOWER, 0 },
		{ NULL, K_UPPER, 1 },
		{ NULL, K_UPPER, SHMR_CTL_POOL_MAX },
		{ NULL, K_RANGE, 2 },
		{ NULL, K_DOWN, 1.0 },
		{ NULL, K_EXPLORE, 0.0 },
		{ NULL, K_WEIGHT, 1.0 },
		{ NULL, K_STEP, 0.0 },
		{ NULL, K_RATIO, 0.0 },
		{ NULL, K_INTERVAL, 0 },
		{ "lower-bound", K_LOWER, -1 },
		{ "upper-bound", K_UPPER, -1 },
		{ "upper-bound", K_UPPER, 0 }, /* below lower-bound 1 */
		{ "upper-bound", K_UPPER, SHMR_CTL_POOL_MAX + 1 },
		{ "optimization-range", K_RANGE, 1 },
		{ "chance-of-ramping-down-when-full", K_DOWN, 1.5 },
		{ "chance-of-ramping-down-when-full", K_DOWN, -0.1 },
		{ "explore-step-size", K_STEP, -0.1 },
		{ "explore-step-size", K_STEP, __builtin_nan("") },
		{ "downsize-ratio", K_RATIO, -1.0 },
		{ "downsize-ratio", K_RATIO, 2e6 },
		{ "chance-of-exploration", K_EXPLORE, 1.01 },
		{ "chance-of-exploration", K_EXPLORE, __builtin_nan("") },
		{ "weight-of-latest-metric", K_WEIGHT, -0.5 },
	};

	for (size_t i = 0; i < N_(t); i++) {
		struct shmr_conf_optimal_cfg c = odflt();
		struct shmr_ctl_optimal o;
		const char *field = NULL;

		oset(&c, t[i].k, t[i].v);
		if (!t[i].field) {
			assert_int_equal(shmr_config_optimal_check(&c, &field),
					 0);
			assert_null(field);
			continue;
		}
		assert_int_equal(shmr_config_optimal_check(&c, &field), -EINVAL);
		assert_string_equal(field, t[i].field);
		/* init refuses it the same way and leaves o alone */
		field = NULL;
		memset(&o, 0x5a, sizeof(o));
		assert_int_equal(shmr_ctl_optimal_init(&o, &c, &field),
				 -EINVAL);
		assert_string_equal(field, t[i].field);
		assert_int_equal(o.nlogged, 0x5a5a5a5au);
	}
}

static void optimal_is_time(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	struct shmr_ctl_routee_load r[2];

	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	loads(r, 2, 2);
	/* Nothing reported yet: time at once, whatever the clock. */
	assert_true(shmr_ctl_optimal_is_time(&o, 0));
	assert_true(shmr_ctl_optimal_is_time(&o, 123456));

	shmr_ctl_optimal_report(&o, 1000, r, 2, 0);
	assert_false(shmr_ctl_optimal_is_time(&o, 1000));
	assert_false(shmr_ctl_optimal_is_time(&o, 5999));
	assert_false(shmr_ctl_optimal_is_time(&o, 6000)); /* strictly more */
	assert_true(shmr_ctl_optimal_is_time(&o, 6001));
	assert_false(shmr_ctl_optimal_is_time(&o, 999)); /* clock behind */

	/* A report at 0 counts as a report. */
	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	shmr_ctl_optimal_report(&o, 0, r, 2, 0);
	assert_false(shmr_ctl_optimal_is_time(&o, 5000));
	assert_true(shmr_ctl_optimal_is_time(&o, 5001));
}

static void optimal_perf_log(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	struct shmr_ctl_routee_load r[4];
	double ms;

	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	/* Four routees, each busy or with a backlog: fully utilized. */
	r[0] = (struct shmr_ctl_routee_load){ 1, 0 };
	r[1] = (struct shmr_ctl_routee_load){ 1, 7 };
	r[2] = (struct shmr_ctl_routee_load){ 0, 1 };
	r[3] = (struct shmr_ctl_routee_load){ 1, 2 };

	/* The first report has no interval before it: nothing logged. */
	shmr_ctl_optimal_report(&o, 10000, r, 4, 999);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), -ENOENT);
	assert_int_equal(o.streak, 0);

	/* 1000 ms, 500 messages: 2 ms each. */
	shmr_ctl_optimal_report(&o, 11000, r, 4, 500);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), 0);
	assert_true(ms == 2.0);
	assert_int_equal(o.nlogged, 1);

	/* 1000 ms, 1000 messages: 1 ms, weighted 0.5: 1.5. */
	shmr_ctl_optimal_report(&o, 12000, r, 4, 1000);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), 0);
	assert_true(ms == 1.5);

	/* Nothing processed: no metric, the log stays. */
	shmr_ctl_optimal_report(&o, 13000, r, 4, 0);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), 0);
	assert_true(ms == 1.5);

	/* 2000 ms, 400 messages: 5 ms; weight 0.25: 1.5*0.75 + 5*0.25. */
	o.cfg.weight_of_latest_metric = 0.25;
	shmr_ctl_optimal_report(&o, 15000, r, 4, 400);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), 0);
	assert_true(ms == 2.375);

	/* Another size has its own entry: 3 routees, 1000 ms, 250 msgs. */
	shmr_ctl_optimal_report(&o, 16000, r, 3, 250);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 3, &ms), 0);
	assert_true(ms == 4.0);
	assert_int_equal(o.nlogged, 2);

	/* One routee idle and empty: not fully utilized, nothing logged,
	 * and the next full interval is not measured either (it started
	 * underutilized). */
	r[2] = (struct shmr_ctl_routee_load){ 0, 0 };
	shmr_ctl_optimal_report(&o, 17000, r, 4, 100);
	assert_int_equal(o.streak, 1);
	r[2].busy = 1;
	shmr_ctl_optimal_report(&o, 18000, r, 4, 100);
	assert_int_equal(o.streak, 0);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), 0);
	assert_true(ms == 2.375);
	/* The one after it is. */
	shmr_ctl_optimal_report(&o, 19000, r, 4, 1000);
	assert_int_equal(shmr_ctl_optimal_logged(&o, 4, &ms), 0);
	assert_true(ms == 2.375 * 0.75 + 1.0 * 0.25);
}

static void optimal_streak(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	struct shmr_ctl_routee_load r[5];

	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	loads(r, 5, 3);
	shmr_ctl_optimal_report(&o, 100, r, 5, 10);
	assert_int_equal(o.streak, 1);
	assert_int_equal(o.streak_start_ms, 100);
	assert_int_equal(o.streak_highest, 3);

	/* A backlog on an idle routee is utilization too. */
	r[4] = (struct shmr_ctl_routee_load){ 0, 2 };
	shmr_ctl_optimal_report(&o, 200, r, 5, 10);
	assert_int_equal(o.streak_start_ms, 100);
	assert_int_equal(o.streak_highest, 4);

	/* Lower utilization keeps the highest. */
	loads(r, 5, 1);
	shmr_ctl_optimal_report(&o, 300, r, 5, 10);
	assert_int_equal(o.streak_start_ms, 100);
	assert_int_equal(o.streak_highest, 4);

	/* Fully utilized ends it; the next one starts afresh. */
	loads(r, 5, 5);
	shmr_ctl_optimal_report(&o, 400, r, 5, 10);
	assert_int_equal(o.streak, 0);
	loads(r, 5, 2);
	shmr_ctl_optimal_report(&o, 500, r, 5, 10);
	assert_int_equal(o.streak, 1);
	assert_int_equal(o.streak_start_ms, 500);
	assert_int_equal(o.streak_highest, 2);
	assert_int_equal(o.nlogged, 0);
}

static void optimal_hold(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	struct shmr_ctl_routee_load r[6];
	enum shmr_ctl_optimal_action act = SHMR_CTL_OPTIMAL_EXPLORE;
	uint64_t now = 0;

	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	/* Empty log: nothing to go on, no draw. */
	assert_int_equal(shmr_ctl_optimal_resize(&o, 0, 6, &forbidden, &act),
			 0);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_HOLD);
	/* ... but a pool outside the bounds is brought back. */
	assert_int_equal(shmr_ctl_optimal_resize(&o, 0, 0, &forbidden, &act),
			 1);
	assert_int_equal(shmr_ctl_optimal_resize(&o, 0, 35, &forbidden,
						 &act),
			 -5);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_HOLD);

	/* A log, but underutilized now (a young streak): hold. */
	log_size(&o, &now, 6, 2.0);
	loads(r, 6, 5);
	now += 5000;
	shmr_ctl_optimal_report(&o, now, r, 6, 100);
	act = SHMR_CTL_OPTIMAL_EXPLORE;
	assert_int_equal(shmr_ctl_optimal_resize(&o, now, 6, &forbidden,
						 &act),
			 0);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_HOLD);
	/* The action pointer is optional. */
	assert_int_equal(shmr_ctl_optimal_resize(&o, now, 6, &forbidden,
						 NULL),
			 0);
}

static void optimal_downsize(void **state)
{
	static const struct {
		int lower;
		double ratio;
		unsigned size, highest;
		uint64_t after; /* ms since the streak began */
		int action, delta;
	} t[] = {
		/* Not yet 72 h (72 h exactly is not "before"). */
		{ 1, 0.8, 20, 10, HOURS(72), SHMR_CTL_OPTIMAL_HOLD, 0 },
		/* Past it: 10 * 0.8 = 8 from 20. */
		{ 1, 0.8, 20, 10, HOURS(72) + 1, SHMR_CTL_OPTIMAL_DOWNSIZE,
		  -12 },
		/* floor(7 * 0.8) = 5. */
		{ 1, 0.8, 8, 7, HOURS(100), SHMR_CTL_OPTIMAL_DOWNSIZE, -3 },
		/* Kept to the lower bound: 8 would be below 12. */
		{ 12, 0.8, 20, 10, HOURS(100), SHMR_CTL_OPTIMAL_DOWNSIZE, -8 },
		/* Nothing ever utilized: to 0, kept to lower-bound 1. */
		{ 1, 0.8, 9, 0, HOURS(100), SHMR_CTL_OPTIMAL_DOWNSIZE, -8 },
		/* 0.29 * 100 is 28.999999999999996 in doubles: 29 here. */
		{ 1, 0.29, 101, 100, HOURS(100), SHMR_CTL_OPTIMAL_DOWNSIZE,
		  -72 },
	};

	for (size_t i = 0; i < N_(t); i++) {
		struct shmr_conf_optimal_cfg c = odflt();
		struct shmr_ctl_optimal o;
		struct shmr_ctl_routee_load r[SHMR_CTL_POOL_MAX];
		enum shmr_ctl_optimal_action act;
		uint64_t now = 1000;

		c.lower_bound = t[i].lower;
		c.upper_bound = SHMR_CTL_POOL_MAX;
		c.downsize_ratio = t[i].ratio;
		assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
		/* A log entry, so that only the streak decides. */
		log_size(&o, &now, t[i].size, 1.0);
		loads(r, t[i].size, t[i].highest);
		shmr_ctl_optimal_report(&o, now, r, t[i].size, 10);
		assert_int_equal(o.streak_highest, t[i].highest);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now + t[i].after,
							 t[i].size, &forbidden,
							 &act),
				 t[i].delta);
		assert_int_equal(act, t[i].action);
	}

	/* Never grows: a streak that saw 10 of 12 busy, then the pool went
	 * down to 6 (3 busy): 10 * 0.8 = 8 is above 6, so no change. */
	{
		struct shmr_conf_optimal_cfg c = odflt();
		struct shmr_ctl_optimal o;
		struct shmr_ctl_routee_load r[12];
		enum shmr_ctl_optimal_action act;
		uint64_t now = 1000;

		assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
		log_size(&o, &now, 6, 1.0);
		loads(r, 12, 10);
		shmr_ctl_optimal_report(&o, now, r, 12, 10);
		loads(r, 6, 3);
		shmr_ctl_optimal_report(&o, now + 5001, r, 6, 10);
		assert_int_equal(o.streak_highest, 10);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now + HOURS(100),
							 6, &forbidden, &act),
				 0);
		assert_int_equal(act, SHMR_CTL_OPTIMAL_DOWNSIZE);
		/* At 11 it shrinks to 8. */
		assert_int_equal(shmr_ctl_optimal_resize(&o, now + HOURS(100),
							 11, &forbidden, &act),
				 -3);
	}
}

static void optimal_explore(void **state)
{
	static const struct {
		double step, down;
		int upper;
		unsigned size;
		double u_step, u_dir;
		int delta;
	} t[] = {
		/* ceil(30 * 0.1) = 3: steps 0..2, at least 1; up unless the
		 * direction draw is below 0.2. */
		{ 0.1, 0.2, 40, 30, 0.99, 0.5, 2 },
		{ 0.1, 0.2, 40, 30, 0.66, 0.5, 1 },
		{ 0.1, 0.2, 40, 30, 0.67, 0.5, 2 },
		{ 0.1, 0.2, 40, 30, 0.0, 0.5, 1 },
		{ 0.1, 0.2, 40, 30, 0.99, 0.19, -2 },
		{ 0.1, 0.2, 40, 30, 0.99, 0.2, 2 },
		/* ceil(25 * 0.28) = 7 (doubles say 8): floor(0.99 * 7). */
		{ 0.28, 0.2, 40, 25, 0.99, 0.5, 6 },
		/* ceil(5 * 0.1) = 1: always a step of 1. */
		{ 0.1, 0.2, 40, 5, 0.99, 0.9, 1 },
		{ 0.1, 0.2, 40, 5, 0.5, 0.0, -1 },
		/* ceil(20 * 0.5) = 10: step floor(0.75 * 10) = 7. */
		{ 0.5, 0.2, 40, 20, 0.75, 0.3, 7 },
		{ 0.5, 0.2, 40, 20, 0.75, 0.1, -7 },
		/* Step 0: ceil(0) = 0, a step of 1 (the draw is taken). */
		{ 0.0, 0.2, 40, 20, 0.75, 0.3, 1 },
		/* Clamped at the upper bound, and at the lower: ceil(4 * 2)
		 * = 8, step 7 down from 4 stops at 1. */
		{ 0.5, 0.2, 22, 20, 0.75, 0.3, 2 },
		{ 2.0, 0.2, 40, 4, 0.99, 0.0, -3 },
		/* down = 1: always down; 0: always up. */
		{ 0.1, 1.0, 40, 30, 0.99, 0.999, -2 },
		{ 0.1, 0.0, 40, 30, 0.99, 0.0, 2 },
	};

	for (size_t i = 0; i < N_(t); i++) {
		struct shmr_conf_optimal_cfg c = odflt();
		struct shmr_ctl_optimal o;
		enum shmr_ctl_optimal_action act;
		uint64_t now = 0;
		double u[3] = { 0.39, t[i].u_step, t[i].u_dir };
		struct script s = { u, 3, 0 };
		struct shmr_ctl_rng rng = { script_next, &s };

		c.explore_step_size = t[i].step;
		c.chance_of_ramping_down_when_full = t[i].down;
		c.upper_bound = t[i].upper;
		assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
		log_size(&o, &now, t[i].size, 1.0);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now, t[i].size,
							 &rng, &act),
				 t[i].delta);
		assert_int_equal(act, SHMR_CTL_OPTIMAL_EXPLORE);
		assert_int_equal(s.used, 3); /* explore, step, direction */
	}
}

static void optimal_optimize(void **state)
{
	/* A log around a pool of 6. */
	static const struct {
		unsigned size;
		double ms;
	} logged[] = {
		{ 2, 5.0 }, { 4, 3.0 }, { 6, 4.0 }, { 8, 1.0 }, { 20, 0.5 },
	};
	static const struct {
		int range;
		unsigned size;
		int delta;
	} t[] = {
		/* Range 4: sizes 2, 4 below and 6, 8 from 6 up: 8 is the
		 * fastest, half-way is +1. */
		{ 4, 6, 1 },
		/* Range 2: 4 below, 6 at: 4 wins, -1. */
		{ 2, 6, -1 },
		/* Range 16 (default): 20 is in reach, (20 - 6) / 2 = 7. */
		{ 16, 6, 7 },
		/* Range 3 is 1 each side, as range 2. */
		{ 3, 6, -1 },
		/* From 7 (not logged), range 2: 6 below, 8 above: 8, +1
		 * (half of 1, rounded up). */
		{ 2, 7, 1 },
		/* From 3, range 2: 2 below, 4 above: 4, +1. */
		{ 2, 3, 1 },
		/* From 1, range 4: nothing below, 2 and 4 above: 4 wins,
		 * (4 - 1) / 2 = 1.5 rounds to 2. */
		{ 4, 1, 2 },
		/* From 25, range 4: 8 and 20 below, nothing above: 20 wins,
		 * -2.5 rounds to -3. */
		{ 4, 25, -3 },
		/* At the best already. */
		{ 4, 20, 0 },
	};

	for (size_t i = 0; i < N_(t); i++) {
		struct shmr_conf_optimal_cfg c = odflt();
		struct shmr_ctl_optimal o;
		enum shmr_ctl_optimal_action act;
		uint64_t now = 0;
		SCRIPT(s, 0.4); /* not below 0.4: optimize */

		c.optimization_range = t[i].range;
		assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
		for (size_t k = 0; k < N_(logged); k++)
			log_size(&o, &now, logged[k].size, logged[k].ms);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now, t[i].size,
							 &s_rng, &act),
				 t[i].delta);
		assert_int_equal(act, SHMR_CTL_OPTIMAL_OPTIMIZE);
		assert_int_equal(s.used, 1); /* explore-or-optimize only */
	}
}

static void optimal_optimize_rounding_and_ties(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	enum shmr_ctl_optimal_action act;
	uint64_t now = 0;

	/* Best 3 from 6: -1.5 is floored to -2; best 9 from 6: +2. */
	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	log_size(&o, &now, 3, 1.0);
	log_size(&o, &now, 6, 2.0);
	{
		SCRIPT(s, 0.9);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now, 6, &s_rng,
							 &act),
				 -2);
	}
	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	log_size(&o, &now, 9, 1.0);
	log_size(&o, &now, 6, 2.0);
	{
		SCRIPT(s, 0.9);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now, 6, &s_rng,
							 &act),
				 2);
	}

	/* A tie between 4 and 8 goes to the smaller size. */
	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	log_size(&o, &now, 8, 1.0);
	log_size(&o, &now, 4, 1.0);
	log_size(&o, &now, 6, 2.0);
	{
		SCRIPT(s, 0.9);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now, 6, &s_rng,
							 &act),
				 -1);
		assert_int_equal(act, SHMR_CTL_OPTIMAL_OPTIMIZE);
	}

	/* Clamped: best 20 from 6 (+7), upper bound 10. */
	c.upper_bound = 10;
	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);
	log_size(&o, &now, 20, 0.5);
	log_size(&o, &now, 6, 2.0);
	{
		SCRIPT(s, 0.9);
		assert_int_equal(shmr_ctl_optimal_resize(&o, now, 6, &s_rng,
							 &act),
				 4);
	}
}

/* The daemon's loop, end to end: is_time, report, resize. */
static void optimal_cycle(void **state)
{
	struct shmr_conf_optimal_cfg c = odflt();
	struct shmr_ctl_optimal o;
	struct shmr_ctl_routee_load r[SHMR_CTL_POOL_MAX];
	enum shmr_ctl_optimal_action act;
	unsigned size = 4;
	uint64_t now = 50;
	/* optimize, explore (step draw, up), optimize */
	SCRIPT(s, 0.5, 0.1, 0.0, 0.9, 0.7);

	assert_int_equal(shmr_ctl_optimal_init(&o, &c, NULL), 0);

	/* t=50: first report, full; no log yet: hold. */
	assert_true(shmr_ctl_optimal_is_time(&o, now));
	loads(r, size, size);
	shmr_ctl_optimal_report(&o, now, r, size, 0);
	assert_int_equal(shmr_ctl_optimal_resize(&o, now, size, &s_rng, &act),
			 0);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_HOLD);

	/* t=5051: 5001 ms, 1667 messages: size 4 logged; optimize among
	 * {4}: stay. */
	now += 5001;
	assert_true(shmr_ctl_optimal_is_time(&o, now));
	shmr_ctl_optimal_report(&o, now, r, size, 1667);
	assert_int_equal(shmr_ctl_optimal_resize(&o, now, size, &s_rng, &act),
			 0);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_OPTIMIZE);

	/* t=10052: explore: ceil(0.4) = 1, step 1, up: 5 routees. */
	now += 5001;
	shmr_ctl_optimal_report(&o, now, r, size, 1667);
	assert_int_equal(shmr_ctl_optimal_resize(&o, now, size, &s_rng, &act),
			 1);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_EXPLORE);
	size = 5;

	/* t=15053: the interval began at 4 routees but is measured at 5,
	 * as Pekko does: 5001 ms over 5001 messages, 1 ms at size 5.
	 * Optimize: 5 is faster than 4 (3 ms): stay. */
	now += 5001;
	loads(r, size, size);
	shmr_ctl_optimal_report(&o, now, r, size, 5001);
	{
		double ms;

		assert_int_equal(shmr_ctl_optimal_logged(&o, 5, &ms), 0);
		assert_true(ms == 1.0);
	}
	assert_int_equal(shmr_ctl_optimal_resize(&o, now, size, &s_rng, &act),
			 0);
	assert_int_equal(act, SHMR_CTL_OPTIMAL_OPTIMIZE);
	assert_int_equal(s.used, 5);
}

static void rng_splitmix(void **state)
{
	uint64_t a = 42, b = 42, z = 0;
	double lo = 1.0, hi = 0.0;

	for (int i = 0; i < 10000; i++) {
		double x = shmr_ctl_rng_splitmix(&a);

		assert_true(x >= 0.0 && x < 1.0);
		assert_true(x == shmr_ctl_rng_splitmix(&b)); /* reproducible */
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	/* It spans the interval (10000 draws: margins of 1e-2 are loose). */
	assert_true(lo < 0.01 && hi > 0.99);
	/* A zero seed works too. */
	assert_true(shmr_ctl_rng_splitmix(&z) != shmr_ctl_rng_splitmix(&z));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_defaults),
		cmocka_unit_test(default_check),
		cmocka_unit_test(default_is_time),
		cmocka_unit_test(default_pressure),
		cmocka_unit_test(default_rampup),
		cmocka_unit_test(default_backoff),
		cmocka_unit_test(default_delta),
		cmocka_unit_test(default_capacity),
		cmocka_unit_test(optimal_defaults),
		cmocka_unit_test(optimal_check),
		cmocka_unit_test(optimal_is_time),
		cmocka_unit_test(optimal_perf_log),
		cmocka_unit_test(optimal_streak),
		cmocka_unit_test(optimal_hold),
		cmocka_unit_test(optimal_downsize),
		cmocka_unit_test(optimal_explore),
		cmocka_unit_test(optimal_optimize),
		cmocka_unit_test(optimal_optimize_rounding_and_ties),
		cmocka_unit_test(optimal_cycle),
		cmocka_unit_test(rng_splitmix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
