/*
 * shmr-control's log lines: one line each on stderr, "shmr-control: ...".
 * The daemon logs once, where it decides what to do; --quiet keeps only
 * the errors (shmr_ctl_warn()).
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "control_internal.h"

static int quiet;

void shmr_ctl_log_quiet(void)
{
	quiet = 1;
}

void shmr_ctl_log(const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	if (quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "shmr-control: %s\n", line);
}

void shmr_ctl_warn(const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "shmr-control: %s\n", line);
}

uint64_t shmr_ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
