/*
 * The daemons' log line (shmr-control and shmr-dataplane): one format,
 * one write(2) per line.  Internal to the appliance (not installed).
 *
 *   under systemd's journal:  "<N>PROG: TEXT"      (sd-daemon(3) prefix)
 *   a daemon's line:          "TIME LEVEL PROG: TEXT"
 *   a command's diagnostic:   "PROG: TEXT"         (before it runs)
 *
 * TIME is UTC, ISO 8601 with milliseconds; LEVEL one of error, warning,
 * info, debug; N the syslog priority (3, 4, 6, 7).  The journal is the
 * one JOURNAL_STREAM names when standard error is that stream (its
 * device:inode, as systemd.exec(5) says to check), not merely when the
 * variable is set: a child whose stderr was redirected is not logging
 * to the journal.
 */
#ifndef SHMR_LOGLINE_H
#define SHMR_LOGLINE_H

#include <stddef.h>

enum shmr_log_level {
	SHMR_LOG_ERROR = 1,
	SHMR_LOG_WARNING = 2,
	SHMR_LOG_INFO = 3,
	SHMR_LOG_DEBUG = 4,
};

/** "error", "warning", "info", "debug" (else "?"). */
const char *shmr_log_level_name(int level);

/**
 * Is standard error the journal stream (JOURNAL_STREAM)?  Decided on the
 * first call and remembered.
 * Context: any thread; call it once before starting threads so that the
 * first call is not a race (a racing first call decides the same).
 */
int shmr_log_journal(void);

/**
 * Format one line, newline included, into @p buf (truncated to @p cap,
 * still ending in a newline): the journal's form when shmr_log_journal(),
 * else the daemon's form when @p stamped, else the command's.
 * Returns: the line's length (< @p cap).  @p cap must be at least 2.
 */
size_t shmr_log_format(char *buf, size_t cap, int level, int stamped,
		       const char *prog, const char *text);

/** shmr_log_format(), then one write(2) to standard error (so lines of
 *  different threads or processes never interleave).  Async-unsafe only
 *  as far as the clock read is. */
void shmr_log_write(int level, int stamped, const char *prog,
		    const char *text);

#endif
