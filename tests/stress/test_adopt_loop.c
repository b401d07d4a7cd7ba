/*
 * The control plane killed with -9 ten times under load and started again
 * each time (as systemd's Restart= would): it adopts the running domain
 * every time.  Two routes take numbered messages at 10,000 msg/s from a
 * client that never stops sending: every message is delivered at least
 * once, a redelivery is flagged, the sender sees no error and never waits
 * on a full lane for more than a moment, and the dataplane is the same
 * process throughout.  Then a worker killed after the last adoption is
 * restarted by the adopted control plane (its exit seen through a pidfd:
 * it is not that control plane's child).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "adopt_app.h"
#include "shmr_test_app.h"

#define N 40000u
#define RATE 10000u  /* messages per second, paced */
#define KILLS 10
#define MOMENT_US 1000000u /* the longest a sender may wait on a full lane */

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	unsigned char *rec[2]; /* route a: even keys, b: odd keys */
	char recpath[2][300];
	int send_err;
	uint64_t max_wait_us, t0_us, t1_us;
	atomic_int done;
};

static void *sender(void *arg)
{
	struct ctx *c = arg;

	c->t0_us = adopt_now_us();
	for (uint64_t k = 0; k < N; k++) {
		uint32_t type = 1 + (uint32_t)(k & 1);
		uint64_t wait_from = 0;
		int rc;

		while ((rc = shmr_send(c->cl.ep, c->router, type, k, &k,
				       sizeof(k))) == -EAGAIN)
			if (!wait_from)
				wait_from = adopt_now_us();
		if (wait_from && adopt_now_us() - wait_from > c->max_wait_us)
			c->max_wait_us = adopt_now_us() - wait_from;
		if (rc < 0) {
			c->send_err = rc;
			break;
		}
		if (k % 100 == 99) {
			uint64_t due = c->t0_us + (k + 1) * 1000000u / RATE;
			uint64_t now = adopt_now_us();

			if (due > now)
				usleep((useconds_t)(due - now));
		}
	}
	c->t1_us = adopt_now_us();
	atomic_store(&c->done, 1);
	return NULL;
}

static int all_received(void *arg)
{
	struct ctx *c = arg;

	for (uint32_t k = 0; k < N; k++)
		if (!c->rec[k & 1][k])
			return 0;
	return 1;
}

static unsigned sockets_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".sock") != NULL;
	closedir(d);
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int worker_restarted(void *arg)
{
	long long *w = arg, pid, restarts;
	struct ctx *c = (struct ctx *)(intptr_t)w[1];

	return adopt_route(&c->cl.app, "events", "a", &pid, &restarts, NULL,
			   0) == 0 &&
	       pid > 0 && pid != w[0] && restarts >= 1;
}

static void test_control_kill9_ten_times_under_load(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[1400];
	uint64_t us[KILLS];
	long long dp, pid, restarts, w[2];
	pthread_t thr;
	(void)state;

	assert_non_null(c);
	for (int i = 0; i < 2; i++)
		c->rec[i] = adopt_rec_file(c->recpath[i],
					   sizeof(c->recpath[i]), "adopt", i,
					   N);
	snprintf(conf, sizeof(conf),
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"a\"; },\n"
		 "            { type = 2; route = \"b\"; } );\n"
		 "  routes = (\n"
		 "    { name = \"a\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\"]; },\n"
		 "    { name = \"b\"; program = \"shmr-test-worker\";\n"
		 "      args = [\"--record\", \"%s\"]; } );\n"
		 "} );\n",
		 c->recpath[0], c->recpath[1]);
	assert_int_equal(shmr_test_client_start(&c->cl, "adoptloop", conf, -1),
			 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	dp = adopt_status(&c->cl.app, "dataplane_pid");
	assert_true(dp > 0);

	assert_int_equal(pthread_create(&thr, NULL, sender, c), 0);
	for (int i = 0; i < KILLS; i++) {
		usleep(100000);
		adopt_kill_control(&c->cl.app);
		/* Away for a moment: the dataplane forwards alone. */
		usleep(50000);
		us[i] = adopt_restart(&c->cl.app);
		assert_int_equal(adopt_status(&c->cl.app, "dataplane_pid"), dp);
		assert_int_equal(sockets_in(c->cl.app.dir), 1);
	}
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(c->send_err, 0);
	assert_true(c->max_wait_us < MOMENT_US);
	/* At least 5,000 msg/s, the control plane's deaths included. */
	assert_true((uint64_t)N * 1000000u / (c->t1_us - c->t0_us) >= 5000u);

	/* Liveness bound only. */
	assert_true(shmr_test_wait(all_received, c, 60000));
	for (uint32_t k = 0; k < N; k++) {
		unsigned char *r = c->rec[k & 1];

		assert_true(r[k] >= 1);
		if (r[k] > 1)
			assert_true(r[N + k] != 0); /* flagged */
	}
	assert_int_equal(adopt_status(&c->cl.app, "dataplane_pid"), dp);
	assert_int_equal(adopt_status(&c->cl.app, "dataplane_starts"), 1);

	qsort(us, KILLS, sizeof(us[0]), cmp_u64);
	printf("restart to adopted: p50 %llu us, max %llu us over %d; "
	       "%u messages at %llu msg/s, longest full-lane wait %llu us\n",
	       (unsigned long long)us[KILLS / 2],
	       (unsigned long long)us[KILLS - 1], KILLS, N,
	       (unsigned long long)((uint64_t)N * 1000000u /
				    (c->t1_us - c->t0_us)),
	       (unsigned long long)c->max_wait_us);

	/* A worker killed now: the adopted control plane restarts it. */
	assert_int_equal(adopt_route(&c->cl.app, "events", "a", &pid,
				     &restarts, NULL, 0),
			 0);
	assert_true(pid > 0);
	w[0] = pid;
	w[1] = (long long)(intptr_t)c;
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	assert_true(shmr_test_wait(worker_restarted, w, 30000));

	/* Nothing left running, no other domain or socket. */
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	assert_false(shmr_test_pid_alive((pid_t)dp));
	for (int i = 0; i < 2; i++) {
		munmap(c->rec[i], 2 * N);
		unlink(c->recpath[i]);
	}
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_kill9_ten_times_under_load),
	};
	return cmocka_run_group_tests_name("adopt_loop", tests, NULL, NULL);
}
