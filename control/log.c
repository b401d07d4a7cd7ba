/*
 * shmr-control's log lines: one line each on stderr, in shmr/logline.h's
 * format: "<N>shmr-control: ..." under the journal, else
 * "TIME LEVEL shmr-control: ..." once the daemon runs
 * (shmr_ctl_log_start()), and plain "shmr-control: ..." for what it says
 * as a command before that (a bad option or configuration, --check).
 * The daemon logs once, where it decides what to do; --log-level (or the
 * configuration's log_level) is the threshold, --quiet the same as
 * --log-level warning.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include <shmr/logline.h>

#include "control_internal.h"
#include "shmr_config.h"

static int threshold = SHMR_LOG_INFO;
static int level_fixed; /* --log-level or --quiet given: the file's
			   log_level does not override it */
static int stamped;

void shmr_ctl_log_quiet(void)
{
	threshold = SHMR_LOG_WARNING;
	level_fixed = 1;
}

int shmr_ctl_log_level_set(const char *name)
{
	int l = shmr_conf_level_parse(name);

	if (l < 0)
		return l;
	threshold = l;
	level_fixed = 1;
	return 0;
}

void shmr_ctl_log_start(int conf_level, const char *first)
{
	if (!level_fixed && conf_level > 0)
		threshold = conf_level;
	stamped = 1;
	shmr_ctl_log("%s", first);
}

int shmr_ctl_log_threshold(void)
{
	return threshold;
}

static void vlog(int level, const char *fmt, va_list ap)
{
	char line[1024];

	if (level > threshold)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	shmr_log_write(level, stamped, "shmr-control", line);
}

void shmr_ctl_logl(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void shmr_ctl_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(SHMR_LOG_INFO, fmt, ap);
	va_end(ap);
}

void shmr_ctl_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(SHMR_LOG_WARNING, fmt, ap);
	va_end(ap);
}

void shmr_ctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(SHMR_LOG_ERROR, fmt, ap);
	va_end(ap);
}

uint64_t shmr_ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
