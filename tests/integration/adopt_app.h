/*
 * A control plane killed and started again on the same appliance, for the
 * adoption tests (tests/integration/test_adopt.c, tests/stress/
 * test_adopt_loop.c).  The test process is a child subreaper (tests/lib),
 * so the dataplane and the workers, orphaned by the kill, become its
 * children: shmr_test_app_stop() reaps them after the adopted control
 * plane has stopped them.  Include after <cmocka.h>.
 */
#ifndef SHMR_ADOPT_APP_H
#define SHMR_ADOPT_APP_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"

static inline uint64_t adopt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A record file of shmr-test-worker --record for @p n keys (n counts,
 * then n redelivered marks), mapped here; its path into @p path. */
static inline unsigned char *adopt_rec_file(char *path, size_t cap,
					    const char *tag, int i, size_t n)
{
	unsigned char *p;
	int fd;

	snprintf(path, cap, "/tmp/shmr-rec-%s%d-%d", tag, i, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(2 * n)), 0);
	p = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	return p;
}

/* kill -9 the control plane and reap it. */
static inline void adopt_kill_control(struct shmr_test_app *app)
{
	assert_int_equal(shmr_test_app_kill_control(app), 0);
}

/* Start shmr-control again on @p app's configuration, as systemd's
 * Restart= would, and wait for its ready byte.  Returns the microseconds
 * from the fork to ready. */
static inline uint64_t adopt_restart(struct shmr_test_app *app)
{
	uint64_t t0 = adopt_now_us();

	assert_int_equal(shmr_test_app_restart_control(app, 0), 0);
	return adopt_now_us() - t0;
}

static inline long long adopt_status(const struct shmr_test_app *app,
				     const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(app, "STATUS", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

/* Route @p route of @p router as ROUTES shows it: its worker's os pid,
 * restarts, and state ("running", "disabled", ...) into @p state. */
static inline int adopt_route(const struct shmr_test_app *app,
			      const char *router, const char *route,
			      long long *os_pid, long long *restarts,
			      char *state, size_t cap)
{
	char ans[SHMR_PROTO_MAX], req[128], *line, *save = NULL;
	size_t n = strlen(route);

	snprintf(req, sizeof(req), "ROUTES %s", router);
	if (shmr_test_ctl(app, req, ans, sizeof(ans)) < 0)
		return -1;
	for (line = strtok_r(ans, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *p;

		if (strncmp(line, route, n) != 0 || line[n] != ' ')
			continue;
		p = strstr(line, "os_pid=");
		*os_pid = p ? strtoll(p + 7, NULL, 10) : -1;
		p = strstr(line, "restarts=");
		*restarts = p ? strtoll(p + 9, NULL, 10) : -1;
		p = strstr(line, "state=");
		if (state && p)
			snprintf(state, cap, "%.*s", (int)strcspn(p + 6, " "),
				 p + 6);
		return 0;
	}
	return -1;
}

#endif
