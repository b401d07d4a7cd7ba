/*
 * shmr-dataplane as a process, without the control plane: this test plays
 * shmr-control (creates the domain in a memfd, writes the spec, talks on the
 * control lane) and the endpoints.  It checks the start line, forwarding
 * through a router with From and Ref preserved, table updates by message
 * and by the 100 ms re-read, an idle dataplane that sleeps, and the three
 * clean ways to stop (SHMR_CTL_SHUTDOWN, SIGTERM, SIGINT).
 *
 * Waits are on real conditions: the receiver sleeps on its endpoint's bell
 * as libshmr does, and the start line is read from the daemon's stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dp_test.h"

#define SS 128u
#define WAIT_MS 10000

struct daemon {
	int fd;
	void *base;
	size_t size;
	struct dp_dom d; /* d.base == base: the memfd mapping */
	pid_t pid;
	int err;  /* read end of its stderr */
	char log[16384];
	size_t loglen;
	struct shmr_pid client, router, w1, w2;
	unsigned ri;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read the daemon's stderr until @p what appears or @p ms pass. */
static int wait_log(struct daemon *dm, const char *what, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	for (;;) {
		struct pollfd pfd = { dm->err, POLLIN, 0 };
		ssize_t n;
		int left = (int)(end - now_ms());

		dm->log[dm->loglen] = '\0';
		if (strstr(dm->log, what))
			return 0;
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return -1;
		n = read(dm->err, dm->log + dm->loglen,
			 sizeof(dm->log) - 1 - dm->loglen);
		if (n <= 0)
			return -1;
		dm->loglen += (size_t)n;
	}
}

static int start(struct daemon *dm, uint32_t nlcores, const char *extra_arg)
{
	struct shmr_geometry g = { SS, 64, nlcores, SHMR_POLL_ADAPTIVE, 0, 0,
				   0, 0, 0, 0 };
	struct shmr_domain_hdr plan;
	const char *exe = getenv("SHMR_DATAPLANE");
	int pipefd[2], lanes_fd;
	char fdarg[16], lanesarg[16];

	if (!exe)
		return -1;
	/* The domain as shmr-control makes it: two memfds (layout.h). */
	dm->size = (size_t)shmr_layout_plan(&g, &plan);
	dm->fd = memfd_create("shmr-dp-test", 0);
	lanes_fd = memfd_create("shmr-dp-test.lanes", 0);
	if (dm->fd < 0 || lanes_fd < 0 ||
	    ftruncate(dm->fd, (off_t)plan.peer_off) < 0 ||
	    ftruncate(lanes_fd, (off_t)(dm->size - plan.peer_off)) < 0 ||
	    shmr_domain_map(dm->fd, lanes_fd, plan.peer_off, dm->size, 1,
			    &dm->base) < 0 ||
	    shmr_layout_init(dm->base, &g, "dptest") < 0 ||
	    shmr_dp_env_init(&dm->d.env, dm->base, dm->size) < 0)
		return -1;
	dm->d.base = dm->base;
	dm->d.size = dm->size;

	dp_spec_begin(&dm->d);
	dm->client = dp_ep(&dm->d, 1, 1, SHMR_EPK_CLIENT);
	dm->router = dp_ep(&dm->d, 2, 1, SHMR_EPK_ROUTER);
	dm->w1 = dp_ep(&dm->d, 3, 2, SHMR_EPK_ROUTE);
	dm->w2 = dp_ep(&dm->d, 4, 3, SHMR_EPK_ROUTE);
	dm->ri = dp_router(&dm->d, "events", dm->router, SHMR_BEH_TYPE);
	dp_route(&dm->d, dm->ri, "w1", dm->w1, SHMR_ROUTE_RUNNING);
	dp_route(&dm->d, dm->ri, "w2", dm->w2, SHMR_ROUTE_RUNNING);
	dp_type(&dm->d, dm->ri, 1, "w1");
	dp_spec_end(&dm->d);

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", dm->fd);
	snprintf(lanesarg, sizeof(lanesarg), "%d", lanes_fd);
	dm->pid = fork();
	if (dm->pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		execl(exe, exe, "--domain-fd", fdarg, "--lanes-fd", lanesarg,
		      "--log-level", "debug", extra_arg ? "--cpus" : NULL,
		      extra_arg, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	dm->err = pipefd[0];
	close(dm->fd);
	close(lanes_fd);
	return dm->pid > 0 ? 0 : -1;
}

/* Wait for the daemon's exit; returns its status or -1. */
static int reap(struct daemon *dm)
{
	int status;

	if (dm->pid <= 0)
		return -1;
	if (waitpid(dm->pid, &status, 0) != dm->pid)
		return -1;
	dm->pid = 0;
	return status;
}

static int setup_n(void **state, uint32_t nlcores, const char *cpus)
{
	struct daemon *dm = calloc(1, sizeof(*dm));
	char line[128];

	if (!dm || start(dm, nlcores, cpus) < 0)
		return -1;
	snprintf(line, sizeof(line),
		 "shmr-dataplane: domain dptest, %u lcores, poll mode "
		 "adaptive\n",
		 nlcores);
	if (wait_log(dm, line, WAIT_MS) < 0) {
		fprintf(stderr, "no start line; log:\n%s\n", dm->log);
		return -1;
	}
	*state = dm;
	return 0;
}

static int setup(void **state)
{
	return setup_n(state, 1, NULL);
}

/* Two routing lcores sharing cpu 0. */
static int setup2(void **state)
{
	return setup_n(state, 2, "0");
}

static int teardown(void **state)
{
	struct daemon *dm = *state;

	if (dm->pid > 0) {
		kill(dm->pid, SIGKILL);
		reap(dm);
	}
	if (getenv("DP_TEST_SHOWLOG")) {
		wait_log(dm, "\001never", 300);
		fprintf(stderr, "--- daemon log ---\n%s", dm->log);
	}
	close(dm->err);
	munmap(dm->base, dm->size);
	free(dm);
	return 0;
}

static void send_from(struct daemon *dm, struct shmr_pid from,
		      struct shmr_pid to, uint32_t type, uint64_t key,
		      uint64_t ref)
{
	uint32_t nl = dm->d.env.nlcores;
	struct rte_ring *out = shmr_lane_at(dm->base, from.slot,
					    SHMR_LANE_OUT(nl));
	struct shmr_bell *bell = shmr_lcore_bell(dm->base, from.slot % nl);
	unsigned char slot[SS];

	dp_msg(slot, SHMR_KIND_SEND, from, to, type, key, ref);
	while (rte_ring_enqueue_burst_elem(out, slot, SS, 1, NULL) == 0) {
		/* The dataplane drains it; it was rung below. */
		shmr_bell_ring(bell);
		sched_yield();
	}
	shmr_bell_ring(bell);
}

static void send_to(struct daemon *dm, struct shmr_pid to, uint32_t type,
		    uint64_t key, uint64_t ref)
{
	send_from(dm, dm->client, to, type, key, ref);
}

/* Receive as libshmr does: sleep on our bell until something arrives. */
static int recv_lane(struct daemon *dm, struct shmr_pid me, uint32_t lane,
		     unsigned char *slot)
{
	struct rte_ring *in = shmr_lane_at(dm->base, me.slot, lane);
	struct shmr_bell *bell = &shmr_ep_peer_at(dm->base, me.slot)->bell;
	uint64_t end = now_ms() + WAIT_MS;

	while (now_ms() < end) {
		uint32_t seen;

		if (rte_ring_dequeue_burst_elem(in, slot, SS, 1, NULL) == 1)
			return 0;
		seen = shmr_bell_prepare(bell);
		if (rte_ring_count(in)) {
			shmr_bell_cancel(bell);
			continue;
		}
		shmr_bell_sleep(bell, seen, 1000);
	}
	return -1;
}

static int recv_one(struct daemon *dm, struct shmr_pid me,
		    unsigned char *slot)
{
	return recv_lane(dm, me, 0, slot);
}

static void ctl_send(struct daemon *dm, uint32_t type, uint64_t key)
{
	struct shmr_domain_hdr *h = shmr_hdr(dm->base);
	unsigned char slot[SS];

	dp_msg(slot, SHMR_KIND_SEND, (struct shmr_pid){ 0, 0 },
	       (struct shmr_pid){ 0, 0 }, type, key, 0);
	assert_int_equal(rte_ring_enqueue_burst_elem(shmr_ctl_lane(dm->base),
						     slot, SS, 1, NULL),
			 1);
	shmr_bell_ring(&h->ctl_bell);
}

/* The lcore's adopted version reaches @p v (the control plane's wait). */
static int wait_version(struct daemon *dm, uint64_t v)
{
	struct shmr_lcore_stats *st = shmr_stats_of(dm->base, 0);
	uint64_t end = now_ms() + WAIT_MS;

	while (atomic_load_explicit(&st->table_version,
				    memory_order_acquire) != v) {
		if (now_ms() > end)
			return -1;
		/* The update thread wakes a sleeping lcore after each swap. */
		usleep(1000);
	}
	return 0;
}

static void test_forward(void **state)
{
	struct daemon *dm = *state;
	unsigned char slot[SS];
	const struct shmr_msg *m = (const void *)slot;

	assert_int_equal(atomic_load(&shmr_hdr(dm->base)->dataplane_pid),
			 dm->pid);
	for (uint64_t i = 0; i < 1000; i++) {
		send_to(dm, dm->router, 1, i, 5000 + i);
		assert_int_equal(recv_one(dm, dm->w1, slot), 0);
		assert_int_equal(m->key, i);
		assert_int_equal(m->ref, 5000 + i);
		assert_int_equal(m->from.slot, dm->client.slot);
		assert_int_equal(m->from.gen, dm->client.gen);
		assert_int_equal(m->hops, 1);
	}
	assert_int_equal(
		atomic_load(&shmr_ep_ctr_of(dm->base, 0, 2)->router_forwarded),
		1000);
}

/* A spec change told on the control lane, and one whose message was
 * lost (the control plane died before sending it). */
static void test_table_updates(void **state)
{
	struct daemon *dm = *state;
	unsigned char slot[SS];
	const struct shmr_msg *m = (const void *)slot;
	struct shmr_spec *s = dp_spec(&dm->d);

	assert_int_equal(wait_version(dm, s->version), 0);
	dp_spec_begin(&dm->d);
	dp_type(&dm->d, dm->ri, 2, "w2");
	dp_spec_end(&dm->d);
	ctl_send(dm, SHMR_CTL_SPEC, s->version);
	assert_int_equal(wait_version(dm, s->version), 0);
	send_to(dm, dm->router, 2, 22, 1);
	assert_int_equal(recv_one(dm, dm->w2, slot), 0);
	assert_int_equal(m->key, 22);

	dp_spec_begin(&dm->d);
	shmr_types_of(dm->d.base, dm->ri, 0)[1].target[1] = '1'; /* 2 -> w1 */
	dp_spec_end(&dm->d);
	assert_int_equal(wait_version(dm, s->version), 0);
	send_to(dm, dm->router, 2, 23, 2);
	assert_int_equal(recv_one(dm, dm->w1, slot), 0);
	assert_int_equal(m->key, 23);
}

static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
				"%lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/* An idle dataplane sleeps: its lcore counts sleeps, and over two seconds
 * it uses a small fraction of a core. */
static void test_idle(void **state)
{
	struct daemon *dm = *state;
	struct shmr_lcore_stats *st = shmr_stats_of(dm->base, 0);
	long hz = sysconf(_SC_CLK_TCK), t0, t1;
	uint64_t sleeps;

	send_to(dm, dm->router, 1, 0, 0); /* some work first */
	unsigned char slot[SS];

	assert_int_equal(recv_one(dm, dm->w1, slot), 0);
	sleeps = atomic_load(&st->sleeps);
	t0 = cpu_ticks(dm->pid);
	sleep(2);
	t1 = cpu_ticks(dm->pid);
	assert_true(t0 >= 0 && t1 >= t0);
	print_message("idle dataplane: %ld ticks of %ld in 2 s, %" PRIu64
		      " sleeps\n",
		      t1 - t0, 2 * hz, atomic_load(&st->sleeps) - sleeps);
	assert_true(atomic_load(&st->sleeps) > sleeps);
	/* Generous: a busy-polling lcore would use all 2 * hz ticks. */
	assert_true(t1 - t0 < 2 * hz / 10);
}

static void test_stop_by_message(void **state)
{
	struct daemon *dm = *state;
	int status;

	ctl_send(dm, SHMR_CTL_SHUTDOWN, 0);
	status = reap(dm);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(atomic_load(&shmr_hdr(dm->base)->dataplane_pid), 0);
	assert_int_equal(wait_log(dm, "shmr-dataplane: stopped\n", WAIT_MS),
			 0);
	/* EAL's runtime directory went with it. */
	if (getuid() == 0)
		assert_int_equal(access("/var/run/dpdk/shmr-dptest", F_OK), -1);
}

static void test_stop_by_signal(void **state)
{
	struct daemon *dm = *state;
	int status;

	assert_int_equal(kill(dm->pid, SIGTERM), 0);
	status = reap(dm);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_stop_by_interrupt(void **state)
{
	struct daemon *dm = *state;
	int status;

	/* While it is busy, too. */
	for (uint64_t i = 0; i < 50; i++)
		send_to(dm, dm->router, 1, i, i);
	assert_int_equal(kill(dm->pid, SIGINT), 0);
	status = reap(dm);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Each lcore polls its endpoints (slot % 2) and delivers into the
 * target's inbound lane numbered after itself. */
static void test_two_lcores(void **state)
{
	struct daemon *dm = *state;
	struct shmr_pid other = { 4, 3 }; /* w2's slot: polled by lcore 0 */
	unsigned char slot[SS];
	const struct shmr_msg *m = (const void *)slot;

	send_from(dm, dm->client, dm->router, 1, 1, 11); /* slot 1: lcore 1 */
	assert_int_equal(recv_lane(dm, dm->w1, 1, slot), 0);
	assert_int_equal(m->ref, 11);
	send_from(dm, other, dm->router, 1, 2, 12); /* slot 4: lcore 0 */
	assert_int_equal(recv_lane(dm, dm->w1, 0, slot), 0);
	assert_int_equal(m->ref, 12);
	assert_int_equal(m->from.slot, other.slot);
	assert_int_equal(rte_ring_count(shmr_lane_at(dm->base, dm->w1.slot, 0)),
			 0);
	assert_int_equal(rte_ring_count(shmr_lane_at(dm->base, dm->w1.slot, 1)),
			 0);
	for (uint32_t l = 0; l < 2; l++)
		assert_int_equal(atomic_load(&shmr_stats_of(dm->base, l)
							->forwarded),
				 1);
	assert_int_equal(kill(dm->pid, SIGTERM), 0);
	int status = reap(dm);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Bad usage: status 2 and a one-line reason. */
static void test_usage(void **state)
{
	const char *exe = getenv("SHMR_DATAPLANE");
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDERR_FILENO);
		execl(exe, exe, "--domain-fd", "notanumber", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_forward),
		T(test_table_updates),
		T(test_idle),
		T(test_stop_by_message),
		T(test_stop_by_signal),
		T(test_stop_by_interrupt),
		cmocka_unit_test_setup_teardown(test_two_lcores, setup2,
						teardown),
		cmocka_unit_test(test_usage),
#undef T
	};

	if (!getenv("SHMR_DATAPLANE"))
		return 77;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
