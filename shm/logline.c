/*
 * The daemons' log line: the format of shmr/logline.h, and whether
 * standard error is the journal.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <shmr/logline.h>

static const char *const names[] = { "?", "error", "warning", "info",
				     "debug" };
/* syslog(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const int prio[] = { 6, 3, 4, 6, 7 };

const char *shmr_log_level_name(int level)
{
	return level >= SHMR_LOG_ERROR && level <= SHMR_LOG_DEBUG
		       ? names[level]
		       : names[0];
}

int shmr_log_journal(void)
{
	/* -1: not decided.  Relaxed: every thread computes the same
	 * answer, so a racing first call needs no partner. */
	static atomic_int journal = -1;
	int j = atomic_load_explicit(&journal, memory_order_relaxed);

	if (j < 0) {
		const char *e = getenv("JOURNAL_STREAM");
		uintmax_t dev, ino;
		struct stat st;
		char tail;

		j = e && sscanf(e, "%ju:%ju%c", &dev, &ino, &tail) == 2 &&
		    fstat(STDERR_FILENO, &st) == 0 &&
		    (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
		atomic_store_explicit(&journal, j, memory_order_relaxed);
	}
	return j;
}

size_t shmr_log_format(char *buf, size_t cap, int level, int stamped,
		       const char *prog, const char *text)
{
	int lv = level >= SHMR_LOG_ERROR && level <= SHMR_LOG_DEBUG ? level : 0;
	int n;

	if (shmr_log_journal()) {
		n = snprintf(buf, cap, "<%d>%s: %s\n", prio[lv], prog, text);
	} else if (stamped) {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		n = snprintf(buf, cap, "%s.%03ldZ %s %s: %s\n", when,
			     ts.tv_nsec / 1000000L, names[lv], prog, text);
	} else {
		n = snprintf(buf, cap, "%s: %s\n", prog, text);
	}
	if (n < 0) {
		buf[0] = '\n';
		buf[1] = '\0';
		return 1;
	}
	if ((size_t)n >= cap) {
		n = (int)cap - 1;
		buf[n - 1] = '\n';
	}
	return (size_t)n;
}

void shmr_log_write(int level, int stamped, const char *prog,
		    const char *text)
{
	char line[1200];
	size_t n = shmr_log_format(line, sizeof(line), level, stamped, prog,
				   text);

	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}
