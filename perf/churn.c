/*
 * `shmr-perf churn --rate N`: does a route change stall forwarding?
 *
 * One appliance for the whole run (router.c's): router "perf", hash over
 * --routes shmr-perf-sink routes (2 by default), and a group "churn" of
 * names nobody registers (nothing is sent to it).  This process is the
 * client and pushes one steady stream through "perf" without a pause,
 * keys 0, 1, 2, ... (key i to sink s<i % routes>, which checks that its
 * keys go up by exactly the number of routes: a lost, duplicated or
 * misrouted message shows as a gap or a reorder there).
 *
 * The stream runs in phases of --phase-ms, quiet and churn in turn, --reps
 * pairs (the order flips every pair, so a drift in the machine's load
 * counts against neither).  In a churn phase a second process, the
 * changer (forked before we pin), sends the control socket
 * ROUTEE_ADD churn churn.<k> and ROUTEE_REMOVE churn churn.<k> in turn,
 * paced to N a second, with up to WINDOW requests in flight; each is one
 * change of the domain's routing table, published as a new spec, and
 * rebuilt by the dataplane as any other route change (a route added or
 * removed, a type map changed) is.  A change counts as applied when its
 * "OK" answer is in.
 *
 * The figures: each phase's throughput is what the client got into its
 * lane over the phase (the lane holds --lane slots, nothing next to a
 * phase's millions), and the dip is 1 minus the median of the per-pair
 * ratios churn / quiet (perf_ratio_pairs(): each churn phase against the
 * quiet phase next to it).  The applied rate is every answered change
 * over the churn phases' time.  The goal (a dip of at most 5 % at 100,000
 * changes a second) is printed as PASS or BELOW, never enforced; the
 * sinks' tallies are: any message lost or misrouted fails the run.
 *
 * The changer never spins: between changes, and through quiet phases, it
 * sleeps (at most 1 ms at a time, the same in both kinds of phase), so
 * that with --rate 0 (an A/A run) both kinds of phase cost the same and
 * the dip is the measurement's own noise.  The run directory is on
 * /dev/shm when there is one (router.c): the control plane rewrites its
 * state file there after every batch of changes.
 *
 * On a machine with fewer cores than the client, dataplane, sinks,
 * control plane and changer need, the changes take cpu time from the
 * stream: that is part of what the dip measures (docs/benchmarks.md).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf_internal.h"
#include "perf_proto.h"

#define WINDOW 32u       /* change requests in flight */
#define NAMES 16u        /* churn.0 .. churn.15, added and removed */
#define GOAL_RATE 100000 /* changes a second */
#define GOAL_DIP 5.0     /* per cent */

/* Shared between the client and the changer (MAP_SHARED). */
struct churn_shared {
	_Atomic int phase;   /* CHURN_* */
	_Atomic uint64_t applied; /* changes answered OK */
	_Atomic uint64_t failed;  /* changes answered ERR */
	_Atomic int gone;    /* the changer lost its connection */
	char err[160];       /* the first ERR answer */
};

enum { CHURN_QUIET, CHURN_ON, CHURN_EXIT };

static int ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* The server closes a connection that stays idle (idle_timeout_ms): a
 * new one, when nothing was in flight on the old. */
static int ctl_reopen(int fd, const char *path)
{
	close(fd);
	return ctl_connect(path);
}

/* Read the answers that are in (all of them with @p wait); returns how
 * many, or -1 when the connection is gone. */
static int answers(int fd, struct churn_shared *sh, int wait)
{
	char buf[512];
	int got = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1,
				 wait ? 0 : MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return got;
		if (n <= 0)
			return -1;
		buf[n] = '\0';
		if (strncmp(buf, "OK", 2) == 0) {
			atomic_fetch_add_explicit(&sh->applied, 1,
						  memory_order_relaxed);
		} else {
			if (atomic_fetch_add_explicit(&sh->failed, 1,
						      memory_order_relaxed) ==
			    0)
				snprintf(sh->err, sizeof(sh->err), "%.*s",
					 (int)strcspn(buf, "\n"), buf);
		}
		got++;
		if (wait)
			return got;
	}
}

/*
 * The changer: while the phase is CHURN_ON, keep the number of changes
 * sent at rate x the time spent in churn phases so far (no catching up on
 * a quiet phase's time), at most WINDOW unanswered.
 */
static int changer(const char *sock, struct churn_shared *sh, unsigned rate)
{
	uint64_t sent = 0, answered = 0, on_ns = 0, since = 0;
	unsigned k = 0;
	int fd = ctl_connect(sock);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fd < 0) {
		atomic_store(&sh->gone, 1);
		return 1;
	}
	for (;;) {
		int phase = atomic_load_explicit(&sh->phase,
						 memory_order_acquire);
		uint64_t now = perf_now_ns(), due;
		int n;

		if (phase == CHURN_EXIT)
			break;
		if (phase != CHURN_ON) {
			if (since)
				on_ns += now - since;
			since = 0;
			/* Drain what is in flight, then wait for the next. */
			while (answered < sent) {
				n = answers(fd, sh, 1);
				if (n < 0)
					goto gone;
				answered += (uint64_t)n;
			}
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			continue;
		}
		if (!since)
			since = now;
		due = (uint64_t)((double)(on_ns + now - since) * rate / 1e9);
		while (sent < due && sent - answered < WINDOW) {
			char req[64];
			unsigned name = k / 2 % NAMES;

			snprintf(req, sizeof(req), "%s churn churn.%u",
				 k % 2 ? "ROUTEE_REMOVE" : "ROUTEE_ADD", name);
			if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
				if (errno == EINTR)
					continue;
				/* Closed for being idle (idle_timeout_ms):
				 * nothing was lost with it. */
				if (sent == answered &&
				    (fd = ctl_reopen(fd, sock)) >= 0)
					continue;
				goto gone;
			}
			k++;
			sent++;
		}
		if (sent == answered) {
			/* Nothing in flight, nothing due: sleep until the
			 * next change is (at most 1 ms), never spin: the
			 * changer's own cpu time must not be the dip. */
			uint64_t next = rate ? (uint64_t)((double)(sent + 1) *
							  1e9 / rate)
					     : UINT64_MAX;
			uint64_t at = on_ns + now - since, nap = 1000000;

			if (next > at && next - at < nap)
				nap = next - at;
			if (sent >= due)
				nanosleep(&(struct timespec){ 0, (long)nap },
					  NULL);
			continue;
		}
		/* Wait (blocked) for one answer, then take what else is in. */
		n = answers(fd, sh, 1);
		if (n >= 0) {
			int more = answers(fd, sh, 0);

			n = more < 0 ? -1 : n + more;
		}
		if (n < 0)
			goto gone;
		answered += (uint64_t)n;
	}
	while (answered < sent) {
		int n = answers(fd, sh, 1);

		if (n < 0)
			goto gone;
		answered += (uint64_t)n;
	}
	close(fd);
	return 0;
gone:
	atomic_store(&sh->gone, 1);
	if (fd >= 0)
		close(fd);
	return 1;
}

/* The stream for @p ms: bursts of keys *seq, *seq + 1, ...; the number
 * pushed in *pushed.  0, or -1 when the dataplane stopped taking them. */
static int stream(struct shmr_endpoint *ep, struct shmr_pid router,
		  const struct perf_opts *o, struct shmr_out *out,
		  uint64_t *keys, uint64_t *seq, unsigned ms, uint64_t *pushed,
		  uint64_t *took_ns)
{
	struct perf_stall st = { 0 };
	uint64_t t0 = perf_now_ns(), end = t0 + (uint64_t)ms * 1000000u;
	uint64_t now = t0, start = *seq, full = 0;
	unsigned idle = 0, bursts = 0;

	while (now < end) {
		for (unsigned k = 0; k < o->burst; k++) {
			keys[k] = *seq + k;
			out[k].key = *seq + k;
		}
		if (perf_send_all(ep, out, o->burst, &st, &idle, &full,
				  *seq) < 0)
			return -1;
		*seq += o->burst;
#ifdef PERF_FAULT_CHURN /* perf-churn-lost: one key never sent */
		if (bursts == 100 && start == 0)
			(*seq)++;
#endif
		if ((++bursts & 15) == 0)
			now = perf_now_ns();
	}
	now = perf_now_ns();
	*pushed = *seq - start;
	*took_ns = now - t0;
	return 0;
}

static void json_phase(const struct perf_opts *o, unsigned rep,
		       const char *run, uint64_t pushed, uint64_t ns,
		       uint64_t changes)
{
	struct json_object *j = perf_json_record("churn", "run");

	perf_json_str(j, "run", run);
	perf_json_setup(j, o, 1);
	perf_json_u64(j, "rep", rep);
	perf_json_u64(j, "rate_asked", o->rate);
	perf_json_u64(j, "phase_ms", o->phase_ms);
	perf_json_u64(j, "pushed", pushed);
	perf_json_num(j, "duration_s", (double)ns / 1e9);
	perf_json_num(j, "msgs_per_s", ns ? (double)pushed * 1e9 / ns : 0);
	perf_json_u64(j, "changes_applied", changes);
	perf_json_num(j, "changes_per_s", ns ? (double)changes * 1e9 / ns : 0);
	perf_json_emit(j);
}

/* The phases, pair by pair; fills quiet[], busy[] (msgs/s) and the
 * churn phases' changes and time.  0 or -1. */
static int phases(struct shmr_endpoint *ep, struct shmr_pid router,
		  const struct perf_opts *o, struct churn_shared *sh,
		  double *quiet, double *busy, uint64_t *seq,
		  uint64_t *changes, uint64_t *on_ns)
{
	struct shmr_out *out = calloc(o->burst, sizeof(*out));
	uint64_t *keys = calloc(o->burst, sizeof(*keys));
	int ret = -1;

	if (!out || !keys)
		goto done;
	for (unsigned k = 0; k < o->burst; k++) {
		out[k].to = router;
		out[k].data = &keys[k];
		out[k].len = sizeof(keys[k]);
		out[k].type = 1;
	}
	printf("%-4s %-6s %9s %10s %12s\n", "rep", "phase", "M msg/s",
	       "pushed", "changes/s");
	for (unsigned i = 0; i < o->reps; i++) {
		for (unsigned h = 0; h < 2; h++) {
			/* quiet first in even pairs, churn first in odd */
			int on = (h ^ (i & 1)) != 0;
			uint64_t pushed, ns, a0, a1;
			char rep[16];

			a0 = atomic_load(&sh->applied);
			atomic_store_explicit(&sh->phase,
					      on ? CHURN_ON : CHURN_QUIET,
					      memory_order_release);
			if (stream(ep, router, o, out, keys, seq, o->phase_ms,
				   &pushed, &ns) < 0)
				goto done;
			a1 = atomic_load(&sh->applied);
			atomic_store_explicit(&sh->phase, CHURN_QUIET,
					      memory_order_release);
			(on ? busy : quiet)[i] = (double)pushed * 1e9 / ns;
			if (on) {
				*changes += a1 - a0;
				*on_ns += ns;
			}
			snprintf(rep, sizeof(rep), "%u", i + 1);
			printf("%-4s %-6s %9.2f %10llu %12.0f\n", rep,
			       on ? "churn" : "quiet",
			       (double)pushed * 1e3 / ns,
			       (unsigned long long)pushed,
			       (double)(a1 - a0) * 1e9 / ns);
			json_phase(o, i + 1, on ? "churn" : "quiet", pushed, ns,
				   a1 - a0);
			if (atomic_load(&sh->gone)) {
				fprintf(stderr, "shmr-perf churn: the changer "
						"lost the control socket\n");
				goto done;
			}
		}
	}
	ret = 0;
done:
	free(out);
	free(keys);
	return ret;
}

static void summary(const struct perf_opts *o, const struct perf_ratio *t,
		    const double *quiet, const double *busy, double applied,
		    uint64_t failed, const char *err,
		    const struct perf_result *r)
{
	double dip = t->pairs ? (1 - t->median) * 100 : 0;
	int met = o->rate >= GOAL_RATE && applied >= 0.95 * o->rate &&
		  dip <= GOAL_DIP;
	struct json_object *j = perf_json_record("churn", "summary");

	printf("median: quiet %.2f M msg/s, churn %.2f M msg/s\n",
	       perf_median(quiet, o->reps) / 1e6,
	       perf_median(busy, o->reps) / 1e6);
	perf_ratio_print("throughput churn / quiet", t);
	printf("\n");
	if (perf_ratio_warn(t))
		printf("warning: the %u pairs spread %.1f %% (over %.0f %%): "
		       "the machine was busy (uptime); run again with more "
		       "--reps before trusting the dip\n",
		       t->pairs, t->spread * 100,
		       PERF_RATIO_SPREAD_WARN * 100);
	printf("churn: %.0f changes/s applied, throughput dip %.1f %%\n",
	       applied, dip);
	printf("goal (dip <= %.0f %% at %d changes/s, asked %u/s): %s\n",
	       GOAL_DIP, GOAL_RATE, o->rate, met ? "PASS" : "BELOW");
	if (applied < 0.95 * o->rate)
		printf("note: the control plane applied %.0f of the %u "
		       "changes/s asked\n", applied, o->rate);
	if (failed)
		printf("note: %llu changes were refused; the first: %s\n",
		       (unsigned long long)failed, err);
	printf("sinks: sent %llu, received %llu, gaps %llu, reordered "
	       "%llu: %s\n",
	       (unsigned long long)r->sent, (unsigned long long)r->received,
	       (unsigned long long)r->gaps, (unsigned long long)r->reorders,
	       perf_result_ok(r) ? "none lost or misrouted"
				 : "LOST OR MISROUTED");
	perf_json_setup(j, o, 1);
	perf_json_u64(j, "reps", o->reps);
	perf_json_u64(j, "rate_asked", o->rate);
	perf_json_u64(j, "phase_ms", o->phase_ms);
	perf_json_num(j, "changes_per_s_applied", applied);
	perf_json_u64(j, "changes_refused", failed);
	perf_json_ratio(j, "throughput_vs_quiet", t);
	perf_json_num(j, "dip_percent", dip);
	perf_json_num(j, "dip_goal_percent", GOAL_DIP);
	perf_json_u64(j, "goal_rate", GOAL_RATE);
	perf_json_bool(j, "goal_met", met);
	perf_json_num(j, "quiet_msgs_per_s", perf_median(quiet, o->reps));
	perf_json_num(j, "churn_msgs_per_s", perf_median(busy, o->reps));
	perf_json_counts(j, r);
	perf_json_emit(j);
}

int perf_churn_main(const struct perf_opts *o)
{
	static double quiet[PERF_REPS_MAX], busy[PERF_REPS_MAX];
	struct shmr_domain *d = NULL;
	struct shmr_endpoint *ep = NULL;
	struct churn_shared *sh;
	struct shmr_pid router;
	struct perf_result r;
	struct perf_ratio t;
	struct perf_ans ans;
	struct perf_app a;
	uint64_t seq = 0, changes = 0, on_ns = 0;
	pid_t ch = -1;
	int rc, ret = PERF_EXIT_FAIL;

	memset(&r, 0, sizeof(r));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("shmr-perf churn: mmap");
		return PERF_EXIT_FAIL;
	}
	printf("shmr-perf churn: %u route changes/s asked (AddRoutee/"
	       "RemoveRoutee of group \"churn\" on the control socket, up "
	       "to %u in flight); stream: slot %u B, burst %u, %u hash "
	       "route%s, %s poll, %u lcore%s; %u pairs of %u ms phases; "
	       "cpus: client %d, dataplane %d, sinks %d\n",
	       o->rate, WINDOW, o->slot, o->burst, o->routes,
	       o->routes == 1 ? "" : "s", o->poll_busy ? "busy" : "adaptive",
	       o->lcores, o->lcores == 1 ? "" : "s", o->reps, o->phase_ms,
	       o->cpu_client, o->cpu_hub, o->cpu_sink);
	rc = perf_app_start(&a, o);
	if (rc < 0) {
		munmap(sh, sizeof(*sh));
		return rc == -PERF_EXIT_SKIP ? PERF_EXIT_SKIP : PERF_EXIT_FAIL;
	}
	fflush(NULL);
	ch = fork();
	if (ch == 0)
		_exit(changer(a.sock, sh, o->rate));
	if (ch < 0) {
		perror("shmr-perf churn: fork");
		goto out;
	}
	if (perf_app_client(&a, o, "churn", &d, &ep, &router) < 0)
		goto out;
	/* Each sink resets its tally of us and proves it is up. */
	for (unsigned j = 0; j < o->routes; j++) {
		if (perf_sink_call(ep, router, j, PERF_OP_EXPECT, UINT64_MAX,
				   &ans) < 0)
			goto out;
		if (ans.a != j) {
			fprintf(stderr, "shmr-perf churn: key %u reached route "
					"s%llu\n",
				j, (unsigned long long)ans.a);
			goto out;
		}
	}
	if (phases(ep, router, o, sh, quiet, busy, &seq, &changes, &on_ns) < 0)
		goto out;
	/* Every sink's tally of the whole run against what we sent it. */
	r.sent = seq;
	if (perf_sink_collect(ep, router, o->routes, seq, &r, NULL) < 0)
		goto out;
	perf_ratio_pairs(busy, quiet, o->reps, &t);
	summary(o, &t, quiet, busy, on_ns ? (double)changes * 1e9 / on_ns : 0,
		atomic_load(&sh->failed), sh->err, &r);
	ret = perf_result_ok(&r) ? PERF_EXIT_OK : PERF_EXIT_FAIL;
	if (o->rate && changes == 0) {
		printf("shmr-perf churn: no change was applied\n");
		ret = PERF_EXIT_FAIL;
	}
out:
	if (ch > 0) {
		int status;

		atomic_store_explicit(&sh->phase, CHURN_EXIT,
				      memory_order_release);
		waitpid(ch, &status, 0);
	}
	perf_app_end(&a, o, d, ep);
	munmap(sh, sizeof(*sh));
	return ret;
}
