/*
 * An idle appliance (control, dataplane, three idle workers) in the default
 * adaptive mode uses under 2% of one core over 10 seconds.  This bounds CPU
 * time consumed, not wall time, so a busy machine does not make it flaky.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_test_app.h"

#define CONF                                                                   \
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"            \
	"  types = ( { type = 1; route = \"a\"; }, { type = 2; route = \"b\"; },\n" \
	"            { type = 3; route = \"c\"; } );\n"                      \
	"  routes = ( { name = \"a\"; program = \"shmr-echo-worker\"; },\n"   \
	"             { name = \"b\"; program = \"shmr-echo-worker\"; },\n"   \
	"             { name = \"c\"; program = \"shmr-echo-worker\"; } ); } );\n"

/* utime+stime, in clock ticks, of @pid and its descendants still alive. */
static unsigned long long cpu_ticks_tree(pid_t root, int *nproc)
{
	unsigned long long sum = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pids[4096], ppids[4096];
	unsigned long long ticks[4096];
	int n = 0;

	while (d && (e = readdir(d)) && n < 4096) {
		char path[64], buf[1024];
		long p = strtol(e->d_name, NULL, 10);
		FILE *f;
		if (p <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			char *rp = strrchr(buf, ')');
			char st;
			long ppid;
			unsigned long long ut, stt;
			if (rp && sscanf(rp + 2,
					 "%c %ld %*d %*d %*d %*d %*u %*u %*u "
					 "%*u %*u %llu %llu",
					 &st, &ppid, &ut, &stt) == 4) {
				pids[n] = (pid_t)p;
				ppids[n] = (pid_t)ppid;
				ticks[n++] = ut + stt;
			}
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	/* Descendants of root: a few passes suffice (depth 2). */
	char in[4096] = { 0 };
	for (int pass = 0; pass < 4; pass++)
		for (int i = 0; i < n; i++)
			if (pids[i] == root || ppids[i] == root)
				in[i] = 1;
			else
				for (int j = 0; j < n; j++)
					if (in[j] && ppids[i] == pids[j])
						in[i] = 1;
	*nproc = 0;
	for (int i = 0; i < n; i++)
		if (in[i]) {
			sum += ticks[i];
			(*nproc)++;
		}
	return sum;
}

static void test_idle_under_two_percent(void **state)
{
	struct shmr_test_app app;
	int n0, n1;
	(void)state;

	assert_int_equal(shmr_test_app_start(&app, "idle", CONF), 0);
	/* Let start-up work settle, then measure 10 s of idleness. */
	sleep(1);
	unsigned long long t0 = cpu_ticks_tree(app.control, &n0);
	sleep(10);
	unsigned long long t1 = cpu_ticks_tree(app.control, &n1);
	long hz = sysconf(_SC_CLK_TCK);
	double pct = 100.0 * (double)(t1 - t0) / (double)hz / 10.0;

	printf("# idle appliance: %d processes used %.2f%% of one core\n", n1,
	       pct);
	assert_int_equal(n0, 5); /* control, dataplane, three workers */
	assert_int_equal(n1, 5);
	assert_true(pct < 2.0);
	assert_int_equal(shmr_test_app_stop(&app), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_under_two_percent),
	};
	return cmocka_run_group_tests_name("idle", tests, NULL, NULL);
}
