/*
 * shmr-perf-adopt: what a control-plane crash costs the fast path.
 *
 *   shmr-perf-adopt [--reps N] [--phase-ms MS] [--control PATH] [--json]
 *
 * Starts a private appliance (router "bench", two routes of
 * shmr-echo-worker; "by" is the bystander), warms up for 500 ms, then
 * calls the bystander back to back through the router from one client for two phases of the
 * same run: MS milliseconds undisturbed, then MS milliseconds during which
 * another thread kills shmr-control with SIGKILL N times and starts it
 * again each time (as systemd's Restart= would), waiting for its ready
 * byte.  Printed: per phase, calls completed and the longest gap between
 * two completed calls (the bystander's longest forwarding gap, as a client
 * sees it); and the restart-to-adopted times (fork to the ready byte,
 * written once the domain is adopted) p50 / p99 / max.  Every call must
 * succeed: a failed one ends the run with status 1.  --json: the same
 * figures as one JSON object on stdout (docs/benchmarks.md), the text on
 * stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmr/shmr.h>

#include "perf_internal.h"

#define MAX_REPS 1000

static char dir[] = "/tmp/shmr-perf-adopt-XXXXXX";
static char conf[PATH_MAX], sock[PATH_MAX], control[PATH_MAX];
static pid_t control_pid;
static unsigned reps = 20, phase_ms = 2000;
static uint64_t adopt_us[MAX_REPS];
static atomic_int killing, finished;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Start shmr-control on the configuration; the microseconds to ready. */
static int64_t start_control(void)
{
	int p[2];
	char fdarg[16], byte = 0;
	struct pollfd pfd;
	uint64_t t0 = now_us();
	pid_t parent = getpid();

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	control_pid = fork();
	if (control_pid < 0)
		return -1;
	if (control_pid > 0)
		perf_track_pid(control_pid, SIGTERM);
	if (control_pid == 0) {
		int fd = dup(p[1]);
		int null = open("/dev/null", O_WRONLY);

		/* A killed harness stops the appliance cleanly. */
		perf_child_init(parent, SIGTERM);
		if (null >= 0 && !getenv("SHMR_PERF_ADOPT_LOG"))
			dup2(null, 2);
		snprintf(fdarg, sizeof(fdarg), "%d", fd);
		execl(control, "shmr-control", "-c", conf, "--run-dir", dir,
		      "--ready-fd", fdarg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (poll(&pfd, 1, 30000) != 1 || read(p[0], &byte, 1) != 1 ||
	    byte != 'R') {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return (int64_t)(now_us() - t0);
}

static void *killer(void *arg)
{
	unsigned gap_ms = phase_ms / (reps + 1);

	(void)arg;
	for (unsigned i = 0; i < reps; i++) {
		int st;
		int64_t us;

		usleep(gap_ms * 1000u);
		kill(control_pid, SIGKILL);
		waitpid(control_pid, &st, 0);
		perf_untrack_pid(control_pid);
		us = start_control();
		if (us < 0) {
			fprintf(stderr, "shmr-perf-adopt: the control plane "
				"did not come back\n");
			exit(1);
		}
		adopt_us[i] = (uint64_t)us;
	}
	atomic_store(&killing, 0);
	/* A parent-death signal is the forking thread's: the control plane
	 * started here would get its SIGTERM when this thread ends. */
	while (!atomic_load(&finished))
		usleep(10000);
	return NULL;
}

/* Call the bystander for @p ms; the longest gap between completions. */
static int phase(struct shmr_endpoint *ep, struct shmr_pid router,
		 unsigned ms, int until_done, uint64_t *calls, uint64_t *gap)
{
	uint64_t t_end = now_us() + (uint64_t)ms * 1000u, last = now_us();
	char reply[64];

	*calls = 0;
	*gap = 0;
	while (until_done ? atomic_load(&killing) || now_us() < t_end
			  : now_us() < t_end) {
		uint64_t k = *calls, t;
		int rc = shmr_call(ep, router, 1, k, &k, sizeof(k), reply,
				   sizeof(reply), 10000);

		if (rc == -EAGAIN)
			continue;
		if (rc < 0) {
			fprintf(stderr, "shmr-perf-adopt: call: %s\n",
				shmr_strerror(rc));
			return -1;
		}
		t = now_us();
		if (t - last > *gap)
			*gap = t - last;
		last = t;
		(*calls)++;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void find_binaries(const char *opt)
{
	static char path[PATH_MAX + 32];
	char self[PATH_MAX], *d;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *old = getenv("PATH");

	if (opt) {
		snprintf(control, sizeof(control), "%s", opt);
		return;
	}
	snprintf(control, sizeof(control), "shmr-control");
	if (n <= 0)
		return;
	self[n] = '\0';
	d = dirname(self);
	/* A build tree: ../control/shmr-control, ../examples for the
	 * echo worker. */
	snprintf(path, sizeof(path), "%s/../control/shmr-control", d);
	if (access(path, X_OK) == 0 && strlen(path) < sizeof(control))
		memcpy(control, path, strlen(path) + 1);
	{
		size_t need = strlen(d) + (old ? strlen(old) : 0) + 16;
		char *p = malloc(need);

		if (!p)
			return;
		snprintf(p, need, "%s/../examples:%s", d, old ? old : "");
		setenv("PATH", p, 1);
		free(p);
	}
}

int main(int argc, char **argv)
{
	const char *opt_control = NULL;
	struct shmr_domain *d = NULL;
	struct shmr_endpoint *ep = NULL;
	struct shmr_pid router;
	uint64_t calls[2], gap[2];
	pthread_t thr;
	FILE *f;
	int rc = 1, st, thr_started = 0, json = 0;
	uint64_t p99;

	perf_stop_init();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--phase-ms") == 0 && i + 1 < argc)
			phase_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--control") == 0 && i + 1 < argc)
			opt_control = argv[++i];
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else {
			fprintf(stderr, "usage: shmr-perf-adopt [--reps N] "
				"[--phase-ms MS] [--control PATH] "
				"[--json]\n");
			return 2;
		}
	}
	if (reps == 0 || reps > MAX_REPS || phase_ms < 100) {
		fprintf(stderr, "shmr-perf-adopt: --reps 1..%d, --phase-ms "
			">= 100\n", MAX_REPS);
		return 2;
	}
	if (json && perf_json_open() < 0) {
		perror("shmr-perf-adopt: --json");
		return 1;
	}
	find_binaries(opt_control);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	perf_track_dir(dir);
	snprintf(conf, sizeof(conf), "%s/app.conf", dir);
	snprintf(sock, sizeof(sock), "%s/pa%d.sock", dir, (int)getpid());
	f = fopen(conf, "w");
	if (!f)
		goto out;
	fprintf(f, "domain = \"pa%d\";\nrun_dir = \"%s\";\n"
		   "routers = ( { name = \"bench\"; behaviour = \"type\";\n"
		   "  types = ( { type = 1; route = \"by\"; },\n"
		   "            { type = 2; route = \"other\"; } );\n"
		   "  routes = ( { name = \"by\"; program = "
		   "\"shmr-echo-worker\"; },\n"
		   "             { name = \"other\"; program = "
		   "\"shmr-echo-worker\"; } );\n"
		   "} );\n",
		(int)getpid(), dir);
	fclose(f);
	if (start_control() < 0) {
		fprintf(stderr, "shmr-perf-adopt: %s did not come up\n",
			control);
		goto out;
	}
	if (shmr_attach_path(sock, &d) < 0 || shmr_endpoint_open(d, &ep) < 0 ||
	    shmr_lookup(d, "bench", &router) < 0) {
		fprintf(stderr, "shmr-perf-adopt: cannot attach\n");
		goto stop;
	}
	/* Warm up (the workers' first bursts, page faults), then measure. */
	if (phase(ep, router, 500, 0, &calls[0], &gap[0]) < 0 ||
	    phase(ep, router, phase_ms, 0, &calls[0], &gap[0]) < 0)
		goto stop;
	atomic_store(&killing, 1);
	if (pthread_create(&thr, NULL, killer, NULL) != 0)
		goto stop;
	thr_started = 1;
	rc = phase(ep, router, phase_ms, 1, &calls[1], &gap[1]);
	while (atomic_load(&killing))
		usleep(10000);
	if (rc < 0) {
		rc = 1;
		goto stop;
	}
	rc = 1;
	qsort(adopt_us, reps, sizeof(adopt_us[0]), cmp_u64);
	printf("undisturbed:      %8llu calls in %u ms, longest gap %6llu us\n",
	       (unsigned long long)calls[0], phase_ms,
	       (unsigned long long)gap[0]);
	printf("with %3u kills:   %8llu calls in %u ms, longest gap %6llu us\n",
	       reps, (unsigned long long)calls[1], phase_ms,
	       (unsigned long long)gap[1]);
	p99 = adopt_us[(reps * 99) / 100 < reps ? (reps * 99) / 100
						 : reps - 1];
	printf("restart to adopted: p50 %llu us, p99 %llu us, max %llu us "
	       "(%u restarts)\n",
	       (unsigned long long)adopt_us[reps / 2], (unsigned long long)p99,
	       (unsigned long long)adopt_us[reps - 1], reps);
	if (perf_json) {
		struct json_object *j = perf_json_record("adopt", "run");

		perf_json_u64(j, "kills", reps);
		perf_json_u64(j, "phase_ms", phase_ms);
		perf_json_u64(j, "undisturbed_calls", calls[0]);
		perf_json_u64(j, "undisturbed_longest_gap_us", gap[0]);
		perf_json_u64(j, "killed_calls", calls[1]);
		perf_json_u64(j, "killed_longest_gap_us", gap[1]);
		perf_json_u64(j, "restart_p50_us", adopt_us[reps / 2]);
		perf_json_u64(j, "restart_p99_us", p99);
		perf_json_u64(j, "restart_max_us", adopt_us[reps - 1]);
		perf_json_emit(j);
	}
	rc = 0;
stop:
	if (ep)
		shmr_endpoint_close(ep);
	if (d)
		shmr_detach(d);
	kill(control_pid, SIGTERM);
	waitpid(control_pid, &st, 0);
	perf_untrack_pid(control_pid);
	if (atomic_load(&finished) == 0 && thr_started) {
		atomic_store(&finished, 1);
		pthread_join(thr, NULL);
	}
out:
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "shmr-perf-adopt: could not remove "
				"%s\n", dir);
		perf_untrack_dir(dir);
	}
	return rc;
}
