/*
 * The router run: the bare chain's measurement, through the appliance.
 *
 * A private appliance is started for each run: a configuration in a fresh
 * temporary directory (router "perf", behaviour hash or type over N routes
 * whose program is shmr-perf-sink), shmr-control started as our child with
 * --ready-fd, its output kept in the directory's control.log.  This process
 * is the client, pinned where the bare producer is; the dataplane gets the
 * forwarder's CPU (dataplane_cpus) and the sinks the consumer's (cpus).
 *
 * Message i carries key i and type (i % N) + 1, so both behaviours send it
 * to route s<i % N> (hash: key % N; type: a map 1..N -> s0..sN-1); a call
 * with key j and type j + 1 reaches sink j.  Before the run, each sink is
 * told how many messages to expect from us; it notes the time the last one
 * arrived.  The rate is count / (latest such time - our first send).
 * Afterwards each sink is asked what it received and whether a key ever
 * skipped or went backwards; a call queues behind our sends on the same
 * lanes, so its answer covers all of them.
 *
 * With o->logic (shmr-perf logics) the router is that routing logic over
 * the routes, and which sink gets which key is the logic's business: each
 * sink registers "perf.s<j>" and is asked directly, by PID, what it got
 * and when its last burst arrived (PERF_OP_LAST); sinks check only that
 * keys grow.  The clock ends at the latest sink's last burst; broadcast
 * delivers count x routes.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shmr/shmr.h>

#include "perf_app.h"
#include "perf_internal.h"
#include "perf_proto.h"

#define COLLECT_ROUNDS 10000 /* balancing: 1 ms apart */
#define READY_TIMEOUT_MS 30000


static int executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* shmr-control: $SHMR_CONTROL, the build tree, next to us, then PATH. */
static int find_control(char *out, size_t cap)
{
	const char *env = getenv("SHMR_CONTROL"), *path = getenv("PATH");
	const char *dir = perf_exe_dir();

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return executable(out) ? 0 : -1;
	}
	snprintf(out, cap, "%s/../control/shmr-control", dir);
	if (executable(out))
		return 0;
	snprintf(out, cap, "%s/shmr-control", dir);
	if (executable(out))
		return 0;
	while (path && *path) {
		const char *colon = strchr(path, ':');
		int len = colon ? (int)(colon - path) : (int)strlen(path);

		snprintf(out, cap, "%.*s/shmr-control", len, path);
		if (len && executable(out))
			return 0;
		path = colon ? colon + 1 : NULL;
	}
	return -1;
}

/* shmr-control looks for shmr-dataplane next to itself or in the build
 * tree's ../dataplane/: without it the appliance cannot start. */
static int have_dataplane(const char *control)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", control);
	slash = strrchr(dir, '/');
	if (!slash)
		return 1; /* found in PATH: let shmr-control decide */
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/shmr-dataplane", dir);
	if (executable(path))
		return 1;
	snprintf(path, sizeof(path), "%s/../dataplane/shmr-dataplane", dir);
	return executable(path);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void dump_log(struct perf_app *a)
{
	char line[512];
	FILE *f = fopen(a->log, "r");

	if (!f || a->log_shown++)
		return;
	fprintf(stderr, "--- %s ---\n", a->log);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fprintf(stderr, "---\n");
	fclose(f);
}

static int write_config(struct perf_app *a, const struct perf_opts *o)
{
	FILE *f = fopen(a->conf, "w");

	if (!f) {
		perror("shmr-perf router: config");
		return -1;
	}
	if (o->max_endpoints)
		fprintf(f, "max_endpoints = %u;\n", o->max_endpoints);
	fprintf(f,
		"# written by shmr-perf router\n"
		"domain = \"%s\";\nrun_dir = \"%s\";\n"
		"slot_size = %u;\nlane_size = %u;\nlcores = %u;\n"
		"poll_mode = \"%s\";\ndataplane_cpus = \"%d\";\n"
		"sojourn = %s;\n%s\n"
		"routers = (\n  {\n    name = \"perf\";\n"
		"    behaviour = \"%s\";\n",
		a->domain, a->dir, o->slot, o->lane, o->lcores,
		o->poll_busy ? "busy" : "adaptive", o->cpu_hub,
		o->sojourn_off ? "false" : "true",
		o->arena ? o->arena : "",
		o->logic ? o->logic : o->by_type ? "type" : "hash");
	if (o->logic && strcmp(o->logic, "balancing") == 0) {
		/* A pool (balancing has no other kind): routees perf:<j>,
		 * each registering perf.s<j>. */
		fprintf(f,
			"    pool = { size = %u; program = \"shmr-perf-sink\"; "
			"args = [ \"--stride\", \"0\", \"--burst\", \"%u\", "
			"\"--register\", \"perf.s*\" ]; cpus = \"%d\"; };\n"
			"  }\n);\n",
			o->routes, o->burst, o->cpu_sink);
		return fclose(f) == 0 ? 0 : -1;
	}
	if (o->logic) {
		/* no list: the routes below, in order */
		if (o->vnodes && strcmp(o->logic, "consistent-hash") == 0)
			fprintf(f, "    virtual_nodes = %u;\n", o->vnodes);
		/* Calls wait for a reply for up to PERF_CALL_TIMEOUT_MS
		 * anyway; tail-chopping tries one more routee only after a
		 * second, so a call costs one try when its routee answers. */
		if (strcmp(o->logic, "scatter-gather") == 0)
			fprintf(f, "    within_ms = %u;\n",
				PERF_CALL_TIMEOUT_MS);
		if (strcmp(o->logic, "tail-chopping") == 0)
			fprintf(f, "    within_ms = %u;\n    interval_ms = 1000;\n",
				PERF_CALL_TIMEOUT_MS);
	} else if (o->by_type) {
		fprintf(f, "    types = (");
		for (unsigned j = 0; j < o->routes; j++)
			fprintf(f, "%s { type = %u; route = \"s%u\"; }",
				j ? "," : "", j + 1, j);
		fprintf(f, " );\n");
	} else {
		fprintf(f, "    hash = [");
		for (unsigned j = 0; j < o->routes; j++)
			fprintf(f, "%s \"s%u\"", j ? "," : "", j);
		fprintf(f, " ];\n");
	}
	fprintf(f, "    routes = (\n");
	for (unsigned j = 0; j < o->routes; j++)
		fprintf(f,
			"      { name = \"s%u\"; program = \"shmr-perf-sink\"; "
			"args = [ \"--stride\", \"%u\", \"--burst\", \"%u\", "
			"\"--register\", \"perf.s%u\" ]; "
			"cpus = \"%d\"; }%s\n",
			j, o->logic ? 0 : o->routes, o->burst, j, o->cpu_sink,
			j + 1 < o->routes ? "," : "");
	fprintf(f, "    );\n  }%s\n", o->churn ? "," : "\n);");
	/* churn.c's target: a group of names no process registers (no
	 * worker, nothing sent to it), changed by AddRoutee/RemoveRoutee. */
	if (o->churn)
		fprintf(f, "  { name = \"churn\"; behaviour = \"round-robin\"; "
			   "routees = [ \"churn.base\" ]; "
			   "keep_when_empty = true; }\n);\n");
	return fclose(f) == 0 ? 0 : -1;
}

void perf_app_stop(struct perf_app *a, const struct perf_opts *o)
{
	int status = 0, waited = 0;

	if (a->control > 0) {
		kill(a->control, SIGTERM);
		/* Liveness bound only; it normally stops within the workers'
		 * grace period. */
		for (;;) {
			pid_t p = waitpid(a->control, &status, WNOHANG);
			struct timespec nap = { 0, 10 * 1000 * 1000 };

			if (p == a->control)
				break;
			if (p < 0 && errno != EINTR)
				break;
			if (waited >= PERF_STOP_TIMEOUT_MS) {
				fprintf(stderr, "shmr-perf router: shmr-control "
						"did not stop; killing it\n");
				kill(a->control, SIGKILL);
				waitpid(a->control, &status, 0);
				break;
			}
			nanosleep(&nap, NULL);
			waited += 10;
		}
		perf_untrack_pid(a->control);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "shmr-perf router: shmr-control "
					"ended with %s %d\n",
				WIFEXITED(status) ? "status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status)
						  : WTERMSIG(status));
			if (o->verbose)
				dump_log(a);
		}
		a->control = 0;
	}
	if (a->dir[0]) {
		if (o->keep)
			fprintf(stderr, "shmr-perf router: kept %s\n", a->dir);
		else
			nftw(a->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		perf_untrack_dir(a->dir);
	}
}

int perf_app_start(struct perf_app *a, const struct perf_opts *o)
{
	char control[PATH_MAX], sink[PATH_MAX];
	pid_t parent;
	int pfd[2];
	struct pollfd p;
	char c = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	if (find_control(control, sizeof(control)) < 0) {
		fprintf(stderr, "shmr-perf router: shmr-control not found "
				"(build control/, or set SHMR_CONTROL)\n");
		return -PERF_EXIT_SKIP;
	}
	if (!have_dataplane(control)) {
		fprintf(stderr, "shmr-perf router: shmr-dataplane not found "
				"next to %s\n", control);
		return -PERF_EXIT_SKIP;
	}
	snprintf(sink, sizeof(sink), "%s/shmr-perf-sink", perf_exe_dir());
	if (!executable(sink)) {
		fprintf(stderr, "shmr-perf router: %s not found\n", sink);
		return -PERF_EXIT_SKIP;
	}
	/* churn's control plane rewrites its state file with every change:
	 * on tmpfs, as under /run/shmr, when there is one (on ext4 the
	 * rename's flush is half of a change's cost). */
	snprintf(a->dir, sizeof(a->dir), "%s/shmr-perf-XXXXXX",
		 o->churn && access("/dev/shm", W_OK) == 0 ? "/dev/shm"
							   : "/tmp");
	if (!mkdtemp(a->dir)) {
		perror("shmr-perf router: mkdtemp");
		a->dir[0] = '\0';
		return -1;
	}
	perf_track_dir(a->dir);
	snprintf(a->domain, sizeof(a->domain), "perf%d", (int)getpid());
	snprintf(a->conf, sizeof(a->conf), "%s/perf.conf", a->dir);
	snprintf(a->sock, sizeof(a->sock), "%s/%s.sock", a->dir, a->domain);
	snprintf(a->log, sizeof(a->log), "%s/control.log", a->dir);
	if (write_config(a, o) < 0)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		perror("shmr-perf router: pipe");
		return -1;
	}
	parent = getpid();
	a->control = fork();
	if (a->control < 0) {
		perror("shmr-perf router: fork");
		return -1;
	}
	if (a->control == 0) {
		char fdarg[16], path[PATH_MAX * 2];
		const char *old = getenv("PATH");
		int fd = dup(pfd[1]); /* without O_CLOEXEC: it is inherited */
		int logfd = open(a->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		/* Never outlive the harness, whatever happens to it. */
		perf_child_init(parent, SIGTERM);
		if (logfd >= 0) {
			dup2(logfd, STDOUT_FILENO);
			dup2(logfd, STDERR_FILENO);
		}
		/* Route programs are found in PATH: ours first. */
		snprintf(path, sizeof(path), "%s%s%s", perf_exe_dir(),
			 old && *old ? ":" : "", old ? old : "");
		setenv("PATH", path, 1);
		snprintf(fdarg, sizeof(fdarg), "%d", fd);
		execl(control, "shmr-control", "-c", a->conf, "--run-dir",
		      a->dir, "--ready-fd", fdarg, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", control, strerror(errno));
		_exit(127);
	}
	perf_track_pid(a->control, SIGTERM);
	close(pfd[1]);
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	do
		rc = poll(&p, 1, READY_TIMEOUT_MS);
	while (rc < 0 && errno == EINTR);
	if (rc != 1 || read(pfd[0], &c, 1) != 1) {
		fprintf(stderr, "shmr-perf router: appliance did not come up "
				"(%s)\n",
			rc == 1 ? "shmr-control exited" : "timeout");
		close(pfd[0]);
		dump_log(a);
		return -1;
	}
	close(pfd[0]);
	return 0;
}

int perf_app_attach(const struct perf_app *a, struct shmr_domain **d,
		    struct shmr_endpoint **ep, struct shmr_pid *router)
{
	int rc = shmr_attach_path(a->sock, d);

	if (rc == 0)
		rc = shmr_endpoint_open(*d, ep);
	if (rc == 0)
		rc = shmr_lookup(*d, "perf", router);
	return rc;
}

int perf_sink_call(struct shmr_endpoint *ep, struct shmr_pid router,
		     unsigned j, uint32_t op, uint64_t arg,
		     struct perf_ans *ans)
{
	struct perf_req req = { .op = op, .arg = arg };
	int rc;

	memset(ans, 0, sizeof(*ans));
	rc = shmr_call(ep, router, j + 1, j, &req, sizeof(req), ans,
		       sizeof(*ans), PERF_CALL_TIMEOUT_MS);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf router: call to sink s%u: %s\n", j,
			shmr_strerror(rc));
		return rc;
	}
	if (rc != (int)sizeof(*ans)) {
		fprintf(stderr, "shmr-perf router: sink s%u answered %d "
				"bytes\n",
			j, rc);
		return -1;
	}
	return 0;
}

static uint64_t expected_for(const struct perf_opts *o, unsigned j)
{
	return o->count / o->routes + (j < o->count % o->routes);
}

int perf_send_all(struct shmr_endpoint *ep, struct shmr_out *out,
		  unsigned n, struct perf_stall *st, unsigned *idle,
		  uint64_t *full, uint64_t seq)
{
	unsigned done = 0;

	while (done < n) {
		int k = shmr_send_burst(ep, out + done, n - done);

		if (k > 0) {
			done += (unsigned)k;
			perf_progress(st);
			continue;
		}
		if (k < 0) {
			fprintf(stderr, "shmr-perf: send: %s\n",
				shmr_strerror(k));
			return -1;
		}
		(*full)++;
		if (perf_stalled(st)) {
			fprintf(stderr, "shmr-perf: the dataplane stopped "
					"taking messages after %llu\n",
				(unsigned long long)(seq + done));
			return -1;
		}
		perf_backoff(idle, PERF_SPIN_SHARED);
	}
	return 0;
}

/* The timed part: push o->count messages, spinning on a full lane. */
static int push_all(struct shmr_endpoint *ep, struct shmr_pid router,
		    const struct perf_opts *o, uint64_t *t_start)
{
	struct shmr_out *out = calloc(o->burst, sizeof(*out));
	uint64_t *keys = calloc(o->burst, sizeof(*keys));
	struct perf_stall st = { 0 };
	unsigned idle = 0, route = 0;
	uint64_t seq = 0, full = 0;

	if (!out || !keys) {
		free(out);
		free(keys);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < o->burst; k++) {
		out[k].to = router;
		out[k].data = &keys[k];
		out[k].len = sizeof(keys[k]);
	}
	*t_start = perf_now_ns();
	while (seq < o->count) {
		unsigned n = o->burst;

		if (o->count - seq < n)
			n = (unsigned)(o->count - seq);
		for (unsigned k = 0; k < n; k++) {
			keys[k] = seq + k;
			out[k].key = seq + k;
			out[k].type = route + 1;
			if (++route == o->routes)
				route = 0;
		}
		if (perf_send_all(ep, out, n, &st, &idle, &full, seq) < 0)
			goto fail;
		seq += n;
	}
	if (o->verbose)
		fprintf(stderr, "shmr-perf router: client found its lane full "
				"%llu times in %llu bursts; %llu sends placed "
				"slots, %.1f messages a send (a clock read "
				"each, with stamps)\n",
			(unsigned long long)full,
			(unsigned long long)((o->count + o->burst - 1) /
					     o->burst),
			(unsigned long long)st.moved,
			st.moved ? (double)o->count / (double)st.moved : 0);
	free(out);
	free(keys);
	return 0;
fail:
	free(out);
	free(keys);
	return -1;
}

int perf_sink_collect(struct shmr_endpoint *ep, struct shmr_pid router,
		      unsigned routes, uint64_t total, struct perf_result *r,
		      uint64_t *t_end)
{
	struct perf_ans ans;

	if (t_end)
		*t_end = 0;
	for (unsigned j = 0; j < routes; j++) {
		uint64_t want = total / routes + (j < total % routes);
		uint64_t last = UINT64_MAX;
		unsigned still = 0;

		/* The call queues behind our sends, so one answer should be
		 * final; ask again while the count still moves, in case a
		 * dataplane ever reorders across lanes. */
		for (;;) {
			if (perf_sink_call(ep, router, j, PERF_OP_COUNT, 0, &ans) < 0)
				return -1;
			if (ans.a >= want || (ans.a == last && ++still >= 10))
				break;
			if (ans.a != last)
				still = 0;
			last = ans.a;
			nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 },
				  NULL);
		}
		r->received += ans.a;
		if (t_end && ans.b > *t_end)
			*t_end = ans.b;
		if (ans.a != want || (t_end && ans.b == 0))
			fprintf(stderr, "shmr-perf: sink s%u got %llu of %llu\n",
				j, (unsigned long long)ans.a,
				(unsigned long long)want);
		if (perf_sink_call(ep, router, j, PERF_OP_ERRORS, 0, &ans) < 0)
			return -1;
		r->gaps += ans.a;
		r->reorders += ans.b;
	}
	return 0;
}

/* A question to sink @p pid directly (not routed). */
static int pid_call(struct shmr_endpoint *ep, struct shmr_pid pid,
		    unsigned j, uint32_t op, struct perf_ans *ans)
{
	struct perf_req req = { .op = op };
	int rc;

	memset(ans, 0, sizeof(*ans));
	rc = shmr_call(ep, pid, 0, 0, &req, sizeof(req), ans, sizeof(*ans),
		       PERF_CALL_TIMEOUT_MS);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf logics: call to sink s%u: %s\n", j,
			shmr_strerror(rc));
		return rc;
	}
	return rc == (int)sizeof(*ans) ? 0 : -1;
}

/*
 * The logic run's measurement (see the essay): find the sinks, reset
 * them, push, then ask each what arrived and when.
 */
static int logic_measure(struct shmr_domain *d, struct shmr_endpoint *ep,
			 struct shmr_pid router, const struct perf_opts *o,
			 struct perf_result *r)
{
	struct shmr_pid sink[32];
	struct perf_ans ans;
	uint64_t t0 = 0, t_end = 0, want;
	/* A send to scatter-gather goes to every routee, as broadcast. */
	int bcast = strcmp(o->logic, "broadcast") == 0 ||
		    strcmp(o->logic, "scatter-gather") == 0;
	int balancing = strcmp(o->logic, "balancing") == 0;

	for (unsigned j = 0; j < o->routes; j++) {
		char name[32];
		int rc, waited = 0;

		snprintf(name, sizeof(name), "perf.s%u", j);
		/* Registered by the sink once it runs: start-up, not the
		 * measured part. */
		while ((rc = shmr_lookup(d, name, &sink[j])) < 0 &&
		       waited < READY_TIMEOUT_MS) {
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			waited++;
		}
		if (rc < 0) {
			fprintf(stderr, "shmr-perf logics: sink %s never "
					"registered\n", name);
			return -1;
		}
		if (pid_call(ep, sink[j], j, PERF_OP_EXPECT, &ans) < 0)
			return -1;
		if (ans.a != j) {
			fprintf(stderr, "shmr-perf logics: %s is route s%llu\n",
				name, (unsigned long long)ans.a);
			return -1;
		}
	}
	want = bcast ? o->count * o->routes : o->count;
	r->sent = want;
	if (push_all(ep, router, o, &t0) < 0)
		return -1;
	/* Each question queues behind our sends to that sink, on the same
	 * lanes: one round of answers covers them all.  Not with balancing,
	 * whose sends wait in the dataplane's queue while our questions go
	 * straight to the sinks: ask again until every message is in (or
	 * for at most COLLECT_ROUNDS rounds). */
	for (unsigned round = 0;; round++) {
		uint64_t in = 0;

		for (unsigned j = 0; j < o->routes; j++) {
			if (pid_call(ep, sink[j], j, PERF_OP_LAST, &ans) < 0)
				return -1;
			in += ans.a;
		}
		if (!balancing || in >= want || round >= COLLECT_ROUNDS)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	for (unsigned j = 0; j < o->routes; j++) {
		uint64_t got;

		if (pid_call(ep, sink[j], j, PERF_OP_LAST, &ans) < 0)
			return -1;
		got = ans.a;
		r->received += got;
		if (ans.b > t_end)
			t_end = ans.b;
		if (pid_call(ep, sink[j], j, PERF_OP_ERRORS, &ans) < 0)
			return -1;
		r->gaps += ans.a;
		r->reorders += ans.b;
		if (o->verbose)
			fprintf(stderr, "shmr-perf logics: %s: sink s%u got "
					"%llu\n",
				o->logic, j, (unsigned long long)got);
	}
	if (r->received != want)
		fprintf(stderr, "shmr-perf logics: %s: %llu of %llu "
				"delivered\n",
			o->logic, (unsigned long long)r->received,
			(unsigned long long)want);
	if (t_end > t0 && r->received == want) {
		r->mps = (double)o->count * 1e9 / (double)(t_end - t0);
		r->dps = (double)want * 1e9 / (double)(t_end - t0);
	}
	return 0;
}

static int time_calls(struct shmr_endpoint *ep, struct shmr_pid router,
		      const struct perf_opts *o, struct perf_result *r)
{
	uint64_t *ticks = calloc(o->rtt ? o->rtt : 1, sizeof(*ticks));
	struct perf_req req = { .op = PERF_OP_PING };
	struct perf_ans ans;

	if (!ticks)
		return -ENOMEM;
	perf_tsc_per_us();
	for (unsigned i = 0; i < PERF_CALL_WARMUP + o->rtt; i++) {
		uint64_t t0 = rte_rdtsc(), t1;
		int rc = shmr_call(ep, router, 1, 0, &req, sizeof(req), &ans,
				   sizeof(ans), PERF_CALL_TIMEOUT_MS);

		t1 = rte_rdtsc();
		if (rc < 0) {
			fprintf(stderr, "shmr-perf router: call %u: %s\n", i,
				shmr_strerror(rc));
			free(ticks);
			return -1;
		}
		if (i >= PERF_CALL_WARMUP)
			ticks[i - PERF_CALL_WARMUP] = t1 - t0;
	}
	perf_latency_summary(ticks, o->rtt, r);
	free(ticks);
	return 0;
}

int perf_app_client(const struct perf_app *a, const struct perf_opts *o,
		    const char *who, struct shmr_domain **d,
		    struct shmr_endpoint **ep, struct shmr_pid *router)
{
	int rc = perf_app_attach(a, d, ep, router);

	if (rc < 0) {
		fprintf(stderr, "shmr-perf %s: %s: %s\n", who, a->sock,
			shmr_strerror(rc));
		return -1;
	}
	/* Pinned only now: shmr-control (forked above) must not inherit it. */
	rc = perf_pin(o->cpu_client);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf %s: pin to cpu %d: %s\n", who,
			o->cpu_client, strerror(-rc));
		return -1;
	}
	return 0;
}

void perf_app_end(struct perf_app *a, const struct perf_opts *o,
		  struct shmr_domain *d, struct shmr_endpoint *ep)
{
	if (ep)
		shmr_endpoint_close(ep);
	if (d)
		shmr_detach(d);
	perf_unpin();
	perf_app_stop(a, o);
}

int perf_router_run(const struct perf_opts *o, struct perf_result *r)
{
	struct shmr_domain *d = NULL;
	struct shmr_endpoint *ep = NULL, **idle = NULL;
	unsigned nidle = 0;
	struct shmr_pid router;
	struct perf_ans ans;
	uint64_t t0 = 0, t1 = 0;
	struct perf_app a;
	int rc, ret = -1;

	memset(r, 0, sizeof(*r));
	rc = perf_app_start(&a, o);
	if (rc < 0) {
		if (rc == -PERF_EXIT_SKIP)
			return rc;
		goto out;
	}
	if (perf_app_client(&a, o, "router", &d, &ep, &router) < 0)
		goto out;
	/* shmr-perf idle: endpoints attached beside the stream, never used. */
	if (o->idle) {
		idle = calloc(o->idle, sizeof(*idle));
		if (!idle)
			goto out;
	}
	for (; nidle < o->idle; nidle++) {
		rc = shmr_endpoint_open(d, &idle[nidle]);
		if (rc < 0) {
			fprintf(stderr, "shmr-perf router: idle endpoint %u "
					"of %u: %s\n",
				nidle + 1, o->idle, shmr_strerror(rc));
			goto out;
		}
	}
	if (o->logic) {
		ret = logic_measure(d, ep, router, o, r);
		/* Then calls through the logic, one at a time. */
		if (ret == 0 && o->rtt && time_calls(ep, router, o, r) < 0)
			ret = -1;
		goto out;
	}
	/* Tell each sink what to expect; this also waits for it to be up
	 * and checks that key/type j reaches route s<j>. */
	for (unsigned j = 0; j < o->routes; j++) {
		if (perf_sink_call(ep, router, j, PERF_OP_EXPECT,
			      expected_for(o, j), &ans) < 0)
			goto out;
		if (ans.a != j) {
			fprintf(stderr, "shmr-perf router: key/type %u reached "
					"route s%llu, not s%u\n",
				j, (unsigned long long)ans.a, j);
			goto out;
		}
	}
	r->sent = o->count;
	if (push_all(ep, router, o, &t0) < 0)
		goto out;
	if (perf_sink_collect(ep, router, o->routes, o->count, r, &t1) < 0)
		goto out;
	if (t1 > t0 && r->received == r->sent)
		r->mps = (double)r->sent * 1e9 / (double)(t1 - t0);
	if (o->rtt && time_calls(ep, router, o, r) < 0)
		goto out;
	ret = 0;
out:
	while (nidle)
		shmr_endpoint_close(idle[--nidle]);
	free(idle);
	perf_app_end(&a, o, d, ep);
	return ret;
}
