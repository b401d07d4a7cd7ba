/*
 * kill -9 a route worker while 100,000 numbered messages stream to it: the
 * control plane restarts it into the same slot, and every message reaches a
 * worker at least once; duplicates are at most one receive burst, and each
 * of them is flagged as redelivered.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define N 100000u
#define BURST 32u /* the worker's receive burst */
/* What a dataplane round may hold of a sender's lane and may redeliver
 * after its kill -9 (SHMR_DP_POOL_MAX, dataplane/lcore.h: the slots of a
 * round's fan-out staging stay in their source lane until they are out). */
#define DP_ROUND 512u

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	unsigned char *rec; /* N counts, then N redelivered marks */
	char recpath[300];
};

static long long route_value(struct ctx *c, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&c->cl.app, "INSPECT events", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

static uint64_t received(struct ctx *c)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < N; i++)
		n += c->rec[i] != 0;
	return n;
}

static int all_received(void *arg)
{
	return received(arg) == N;
}

static int restarted(void *arg)
{
	return route_value(arg, "shmr:restarts") >= 1 &&
	       route_value(arg, "shmr:route:w:os_pid") > 0;
}

/* A private appliance with one recording worker (route "w" by type), or
 * with @p fan of them behind a hash (routes w0, w1, ...: key k to route
 * k % fan, all recording into one file), and a client on it. */
static struct ctx *start_fan(const char *tag, unsigned fan)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[8192];
	int fd;

	assert_non_null(c);
	snprintf(c->recpath, sizeof(c->recpath), "/tmp/shmr-rec-%s-%d", tag,
		 getpid());
	fd = open(c->recpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * N), 0);
	c->rec = mmap(NULL, 2 * N, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(c->rec != MAP_FAILED);
	close(fd);

	if (fan == 0) {
		snprintf(conf, sizeof(conf),
			 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
			 "  types = ( { type = 1; route = \"w\"; } );\n"
			 "  routes = ( { name = \"w\"; program = \"shmr-test-worker\";\n"
			 "    args = [\"--record\", \"%s\", \"--spin-ns\", \"2000\"]; } );\n"
			 "} );\n",
			 c->recpath);
	} else {
		size_t n = (size_t)snprintf(
			conf, sizeof(conf),
			"routers = ( { name = \"events\"; behaviour = \"hash\";\n"
			"  hash = [");
		for (unsigned i = 0; i < fan; i++)
			n += (size_t)snprintf(conf + n, sizeof(conf) - n,
					      "%s\"w%u\"", i ? ", " : "", i);
		n += (size_t)snprintf(conf + n, sizeof(conf) - n,
				      "];\n  routes = (");
		for (unsigned i = 0; i < fan; i++)
			n += (size_t)snprintf(
				conf + n, sizeof(conf) - n,
				"%s { name = \"w%u\"; program = "
				"\"shmr-test-worker\";\n    args = "
				"[\"--record\", \"%s\", \"--spin-ns\", "
				"\"200\"]; }",
				i ? "," : "", i, c->recpath);
		n += (size_t)snprintf(conf + n, sizeof(conf) - n, " );\n} );\n");
		assert_true(n < sizeof(conf));
	}
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	return c;
}

static struct ctx *start(const char *tag)
{
	return start_fan(tag, 0);
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	munmap(c->rec, 2 * N);
	unlink(c->recpath);
	free(c);
}

/*
 * Stream keys 0..N-1 to the worker and kill -9 @p victim mid-stream: once
 * the worker has taken a fifth of them while the lanes are full, or at the
 * latest halfway through sending.
 */
static void stream_and_kill(struct ctx *c, pid_t victim)
{
	int killed = 0, rc;

	for (uint64_t k = 0; k < N; k++) {
		while ((rc = shmr_send(c->cl.ep, c->router, 1, k, &k,
				       sizeof(k))) == -EAGAIN) {
			if (!killed && received(c) > N / 5) {
				assert_int_equal(kill(victim, SIGKILL), 0);
				killed = 1;
			}
		}
		assert_int_equal(rc, 0);
		if (!killed && k == N / 2) {
			assert_int_equal(kill(victim, SIGKILL), 0);
			killed = 1;
		}
	}
}

/* Every key arrived at least once; at most @p most twice (a burst of the
 * worker's, a round of the dataplane's), all flagged. */
static void check_at_least_once(struct ctx *c, uint64_t most)
{
	uint64_t dup = 0, unflagged_dup = 0, flagged = 0;

	assert_true(shmr_test_wait(all_received, c, 60000));
	for (uint32_t i = 0; i < N; i++) {
		assert_true(c->rec[i] >= 1);
		if (c->rec[i] > 1) {
			dup += c->rec[i] - 1u;
			unflagged_dup += !c->rec[N + i];
		}
		flagged += c->rec[N + i];
	}
	assert_true(dup <= most);
	assert_int_equal(unflagged_dup, 0);
	assert_true(flagged <= most);
}

static void test_kill9_mid_stream_loses_nothing(void **state)
{
	struct ctx *c = start("kill9");
	long long victim = route_value(c, "shmr:route:w:os_pid");
	(void)state;

	assert_true(victim > 0);
	stream_and_kill(c, (pid_t)victim);
	/* Liveness bound only. */
	assert_true(shmr_test_wait(restarted, c, 30000));
	assert_true(route_value(c, "shmr:route:w:os_pid") != victim);
	check_at_least_once(c, BURST);
	assert_int_equal(route_value(c, "shmr:restarts"), 1);
	stop(c);
}

static long long status_value(struct ctx *c, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&c->cl.app, "STATUS", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

static int dataplane_restarted(void *arg)
{
	return status_value(arg, "dataplane_starts") >= 2 &&
	       status_value(arg, "dataplane_pid") > 0;
}

/* Stream to @p c and kill -9 its dataplane mid-stream; it is restarted
 * and every key arrives (at most a round of them twice, flagged). */
static void dataplane_kill9(struct ctx *c)
{
	long long victim = status_value(c, "dataplane_pid");

	assert_true(victim > 0);
	stream_and_kill(c, (pid_t)victim);
	assert_true(shmr_test_wait(dataplane_restarted, c, 30000));
	assert_true(status_value(c, "dataplane_pid") != victim);
	check_at_least_once(c, DP_ROUND);
}

/* The dataplane dies mid-stream: the control plane restarts it, and the
 * rings, which live in the domain, kept everything; the dataplane
 * re-forwards at most the round it had taken. */
static void test_dataplane_kill9_loses_nothing(void **state)
{
	struct ctx *c = start("dpkill");
	(void)state;

	dataplane_kill9(c);
	/* The worker itself never died. */
	assert_int_equal(route_value(c, "shmr:restarts"), 0);
	stop(c);
}

/* The same with the dataplane batching a fan-out (hash over 16 routes,
 * keys 0, 1, ... to a different route each): what it had staged was
 * still in the client's lane, so nothing is lost; what it had already put
 * into inboxes comes again, flagged, at most a round of it. */
static void test_dataplane_kill9_fanout_loses_nothing(void **state)
{
	struct ctx *c = start_fan("dpfan", 16);
	(void)state;

	dataplane_kill9(c);
	stop(c);
}

static int gone(void *arg)
{
	pid_t *pids = arg;

	for (int i = 0; pids[i]; i++)
		if (shmr_test_pid_alive(pids[i]))
			return 0; /* still running */
	return 1;
}

static int first_received(void *arg)
{
	return ((struct ctx *)arg)->rec[0] != 0;
}

static int alive(pid_t pid)
{
	pid_t pids[2] = { pid, 0 };

	return !gone(pids);
}

/* A control plane killed with -9 leaves the dataplane and its workers
 * running (nothing dies with it: a new control plane adopts them, see
 * test_adopt.c); here nobody comes back, so the test stops them itself. */
static void test_control_kill9_leaves_children_running(void **state)
{
	struct ctx *c = start("ctlkill");
	pid_t pids[3] = { (pid_t)status_value(c, "dataplane_pid"),
			  (pid_t)route_value(c, "shmr:route:w:os_pid"), 0 };
	(void)state;

	assert_true(pids[0] > 0 && pids[1] > 0);
	/* The worker is past its attach (its serving loop has a message). */
	uint64_t k0 = 0;
	assert_int_equal(shmr_send(c->cl.ep, c->router, 1, 0, &k0, sizeof(k0)),
			 0);
	assert_true(shmr_test_wait(first_received, c, 10000));
	/* Closed while the control plane can answer: after its death the
	 * close would wait SHMR_RECONNECT_MS for a successor. */
	shmr_endpoint_close(c->cl.ep);
	shmr_detach(c->cl.d);
	assert_int_equal(kill(c->cl.app.control, SIGKILL), 0);
	/* A parent-death signal would have killed them by now. */
	usleep(300000);
	assert_true(alive(pids[0]));
	assert_true(alive(pids[1]));
	for (int i = 0; pids[i]; i++)
		kill(pids[i], SIGKILL);
	assert_true(shmr_test_wait(gone, pids, 10000));
	/* The control plane is reaped; what it started is killed above. */
	assert_int_equal(shmr_test_app_stop(&c->cl.app), 0);
	munmap(c->rec, 2 * N);
	unlink(c->recpath);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill9_mid_stream_loses_nothing),
		cmocka_unit_test(test_dataplane_kill9_loses_nothing),
		cmocka_unit_test(test_dataplane_kill9_fanout_loses_nothing),
		cmocka_unit_test(test_control_kill9_leaves_children_running),
	};
	return cmocka_run_group_tests_name("restart", tests, NULL, NULL);
}
