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
 * The stream runs in phases of --phase-ms, three kinds in turn, --reps
 * times (the order turns by one every rep, so a drift in the machine's
 * load counts against none): quiet; churn, where a second process, the
 * changer (forked before we pin), sends the control socket
 * ROUTEE_ADD churn churn.<k> and ROUTEE_REMOVE churn churn.<k> in turn,
 * paced to N a second, with up to WINDOW requests in flight (each batch
 * that is due in one sendmmsg(2), the answers read with recvmmsg(2)); and
 * bare, the same requests to a bare echo that answers each "OK" and does
 * nothing else (bare_echo(), forked before we pin, as the control plane
 * is not pinned either).  Each change is one change of the domain's
 * routing table, published as a new spec, and rebuilt by the dataplane
 * as any other route change (a route added or removed, a type map
 * changed) is.  A change counts as applied when its "OK" answer is in.
 *
 * The figures: each phase's throughput is what the client got into its
 * lane over the phase (the lane holds --lane slots, nothing next to a
 * phase's millions), and the dip is 1 minus the median of the per-rep
 * ratios churn / quiet (perf_ratio_pairs(): each churn phase against the
 * quiet phase of its rep); the bare dip the same for bare / quiet: what
 * taking and answering the requests costs the stream on this machine
 * with no control plane work at all, the floor of the churn dip.  The
 * applied rate is every answered change over the churn phases' time.  The goal (a dip of at most 5 % at 100,000
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
#define SHMR_CTL_REQ_BYTES 512 /* a request, at most (control/request.h) */

/* Shared between the client and the changer (MAP_SHARED). */
struct churn_shared {
	_Atomic int phase;   /* CHURN_* */
	_Atomic uint64_t applied; /* changes answered OK */
	_Atomic uint64_t failed;  /* changes answered ERR */
	_Atomic int gone;    /* the changer lost its connection */
	char err[160];       /* the first ERR answer */
};

enum { CHURN_QUIET, CHURN_ON, CHURN_BARE, CHURN_EXIT };

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

/* Read the answers that are in (at least one with @p wait), as few
 * recvmmsg(2) calls as it takes; returns how many, or -1 when the
 * connection is gone. */
static int answers(int fd, struct churn_shared *sh, int wait)
{
	static char buf[WINDOW][128];
	struct mmsghdr mm[WINDOW];
	struct iovec iov[WINDOW];
	int got = 0;

	for (;;) {
		int n;

		for (unsigned i = 0; i < WINDOW; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) - 1 };
			mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
							       .msg_iovlen = 1 } };
		}
		n = recvmmsg(fd, mm, WINDOW,
			     wait && !got ? MSG_WAITFORONE : MSG_DONTWAIT,
			     NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return got;
		if (n <= 0)
			return -1;
		for (int i = 0; i < n; i++) {
			char *b = buf[i];

			if (mm[i].msg_len == 0)
				return -1;
			b[mm[i].msg_len] = '\0';
			if (strncmp(b, "OK", 2) == 0) {
				atomic_fetch_add_explicit(&sh->applied, 1,
							  memory_order_relaxed);
			} else if (atomic_fetch_add_explicit(
					   &sh->failed, 1,
					   memory_order_relaxed) == 0) {
				snprintf(sh->err, sizeof(sh->err), "%.*s",
					 (int)strcspn(b, "\n"), b);
			}
		}
		got += n;
		if (n < (int)WINDOW)
			return got;
	}
}

/* The bare echo: answers every request on @p fd with "OK" and does
 * nothing else, reading and answering as many at once as are in (one
 * recvmmsg(2) and one sendmmsg(2) a wake-up).  What a change costs the
 * machine when no control plane works on it: the floor of any that takes
 * its changes on a socket.  Returns when the changer's end is closed. */
static int bare_echo(int fd)
{
	static char buf[WINDOW][SHMR_CTL_REQ_BYTES];
	struct mmsghdr in[WINDOW], out[WINDOW];
	struct iovec iov[WINDOW], ok = { (void *)"OK", 2 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		int n;

		for (unsigned i = 0; i < WINDOW; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			in[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
							       .msg_iovlen = 1 } };
			out[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &ok,
								.msg_iovlen = 1 } };
		}
		n = recvmmsg(fd, in, WINDOW, MSG_WAITFORONE, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || in[0].msg_len == 0)
			return 0;
		for (int done = 0; done < n;) {
			int k = sendmmsg(fd, out + done, (unsigned)(n - done),
					 MSG_NOSIGNAL);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return 0;
			done += k;
		}
	}
}

/* Wait for every answer in flight on @p fd.  0, or -1: connection gone. */
static int drain(int fd, struct churn_shared *sh, uint64_t sent,
		 uint64_t *answered)
{
	while (*answered < sent) {
		int n = answers(fd, sh, 1);

		if (n < 0)
			return -1;
		*answered += (uint64_t)n;
	}
	return 0;
}

/*
 * The changer: while the phase is CHURN_ON (to the control plane) or
 * CHURN_BARE (to the bare echo), keep the number of changes sent in the
 * phase at rate x the time since it began (no catching up on another
 * phase's shortfall), at most WINDOW unanswered, each batch of due
 * requests in one sendmmsg(2).
 */
static int changer(const char *sock, int bare_fd, struct churn_shared *sh,
		   unsigned rate)
{
	static char req[WINDOW][64];
	struct mmsghdr mm[WINDOW];
	struct iovec iov[WINDOW];
	uint64_t sent = 0, answered = 0, since = 0, sent0 = 0;
	unsigned k = 0;
	int fd = ctl_connect(sock), cur = -1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fd < 0) {
		atomic_store(&sh->gone, 1);
		return 1;
	}
	for (;;) {
		int phase = atomic_load_explicit(&sh->phase,
						 memory_order_acquire);
		int use = phase == CHURN_ON ? fd
			  : phase == CHURN_BARE ? bare_fd : -1;
		uint64_t now = perf_now_ns(), due;
		int n;

		if (phase == CHURN_EXIT)
			break;
		/* What went to the other side is answered first. */
		if (use != cur && cur >= 0 && drain(cur, sh, sent, &answered) < 0)
			goto gone;
		if (use != cur) {
			/* A phase begins: its own schedule. */
			since = now;
			sent0 = sent;
		}
		cur = use;
		if (use < 0) {
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			continue;
		}
		due = sent0 + (uint64_t)((double)(now - since) * rate / 1e9);
		if (sent < due && sent - answered < WINDOW) {
			uint64_t room = WINDOW - (sent - answered);
			unsigned nb = (unsigned)(due - sent < room ? due - sent
								  : room);

			for (unsigned i = 0; i < nb; i++) {
				unsigned name = (k + i) / 2 % NAMES;
				int len = snprintf(req[i], sizeof(req[i]),
						   "%s churn churn.%u",
						   (k + i) % 2 ? "ROUTEE_REMOVE"
							       : "ROUTEE_ADD",
						   name);

				iov[i] = (struct iovec){ req[i], (size_t)len };
				mm[i] = (struct mmsghdr){
					.msg_hdr = { .msg_iov = &iov[i],
						     .msg_iovlen = 1 } };
			}
			n = sendmmsg(use, mm, nb, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				/* Closed for being idle (idle_timeout_ms):
				 * nothing was lost with it. */
				if (use == fd && sent == answered &&
				    (fd = ctl_reopen(fd, sock)) >= 0) {
					cur = -1;
					continue;
				}
				goto gone;
			}
			k += (unsigned)n;
			sent += (uint64_t)n;
			continue;
		}
		if (sent == answered) {
			/* Nothing in flight, nothing due: sleep until the
			 * next change is (at most 1 ms), never spin: the
			 * changer's own cpu time must not be the dip. */
			uint64_t next = rate ? (uint64_t)((double)(sent - sent0 +
								   1) *
							  1e9 / rate)
					     : UINT64_MAX;
			uint64_t at = now - since, nap = 1000000;

			if (next > at && next - at < nap)
				nap = next - at;
			nanosleep(&(struct timespec){ 0, (long)nap }, NULL);
			continue;
		}
		/* Wait (blocked) for answers, as many as are in. */
		n = answers(use, sh, 1);
		if (n < 0)
			goto gone;
		answered += (uint64_t)n;
	}
	if (cur >= 0 && drain(cur, sh, sent, &answered) < 0)
		goto gone;
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

/* What one kind of phase came to: msgs/s per rep, and over its phases
 * the changes answered and the time. */
struct churn_kind {
	double *rate;
	uint64_t changes, ns;
};

/* The phases, three a rep (quiet, churn to the control plane, churn to
 * the bare echo; the order turns by one every rep, so a drift in the
 * machine's load counts against none); fills k[CHURN_QUIET],
 * k[CHURN_ON] and k[CHURN_BARE].  0 or -1. */
static int phases(struct shmr_endpoint *ep, struct shmr_pid router,
		  const struct perf_opts *o, struct churn_shared *sh,
		  struct churn_kind *k, uint64_t *seq)
{
	static const char *const name[] = { [CHURN_QUIET] = "quiet",
					     [CHURN_ON] = "churn",
					     [CHURN_BARE] = "bare" };
	struct shmr_out *out = calloc(o->burst, sizeof(*out));
	uint64_t *keys = calloc(o->burst, sizeof(*keys));
	int ret = -1;

	if (!out || !keys)
		goto done;
	for (unsigned j = 0; j < o->burst; j++) {
		out[j].to = router;
		out[j].data = &keys[j];
		out[j].len = sizeof(keys[j]);
		out[j].type = 1;
	}
	printf("%-4s %-6s %9s %10s %12s\n", "rep", "phase", "M msg/s",
	       "pushed", "changes/s");
	for (unsigned i = 0; i < o->reps; i++) {
		for (unsigned h = 0; h < 3; h++) {
			int kind = (int)((h + i) % 3); /* CHURN_QUIET..BARE */
			uint64_t pushed, ns, a0, a1;
			char rep[16];

			a0 = atomic_load(&sh->applied);
			atomic_store_explicit(&sh->phase, kind,
					      memory_order_release);
			if (stream(ep, router, o, out, keys, seq, o->phase_ms,
				   &pushed, &ns) < 0)
				goto done;
			a1 = atomic_load(&sh->applied);
			atomic_store_explicit(&sh->phase, CHURN_QUIET,
					      memory_order_release);
			k[kind].rate[i] = (double)pushed * 1e9 / ns;
			k[kind].changes += a1 - a0;
			k[kind].ns += ns;
			snprintf(rep, sizeof(rep), "%u", i + 1);
			printf("%-4s %-6s %9.2f %10llu %12.0f\n", rep,
			       name[kind], (double)pushed * 1e3 / ns,
			       (unsigned long long)pushed,
			       (double)(a1 - a0) * 1e9 / ns);
			json_phase(o, i + 1, name[kind], pushed, ns, a1 - a0);
			if (atomic_load(&sh->gone)) {
				fprintf(stderr, "shmr-perf churn: the changer "
						"lost its socket\n");
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

static double per_s(const struct churn_kind *k)
{
	return k->ns ? (double)k->changes * 1e9 / (double)k->ns : 0;
}

static void summary(const struct perf_opts *o, const struct perf_ratio *t,
		    const struct perf_ratio *tb, const struct churn_kind *k,
		    uint64_t failed, const char *err,
		    const struct perf_result *r)
{
	double dip = t->pairs ? (1 - t->median) * 100 : 0;
	double bdip = tb->pairs ? (1 - tb->median) * 100 : 0;
	double applied = per_s(&k[CHURN_ON]), echoed = per_s(&k[CHURN_BARE]);
	int met = o->rate >= GOAL_RATE && applied >= 0.95 * o->rate &&
		  dip <= GOAL_DIP;
	struct json_object *j = perf_json_record("churn", "summary");

	printf("median: quiet %.2f M msg/s, churn %.2f M msg/s, bare %.2f M "
	       "msg/s\n",
	       perf_median(k[CHURN_QUIET].rate, o->reps) / 1e6,
	       perf_median(k[CHURN_ON].rate, o->reps) / 1e6,
	       perf_median(k[CHURN_BARE].rate, o->reps) / 1e6);
	perf_ratio_print("throughput churn / quiet", t);
	printf("\n");
	perf_ratio_print("throughput bare / quiet", tb);
	printf("\n");
	if (perf_ratio_warn(t) || perf_ratio_warn(tb))
		printf("warning: the %u pairs spread %.1f %% and %.1f %% "
		       "(over %.0f %%): the machine was busy (uptime); run "
		       "again with more --reps before trusting the dip\n",
		       t->pairs, t->spread * 100, tb->spread * 100,
		       PERF_RATIO_SPREAD_WARN * 100);
	printf("bare: %.0f changes/s answered by an echo that does no work, "
	       "throughput dip %.1f %%\n", echoed, bdip);
	printf("churn: %.0f changes/s applied, throughput dip %.1f %%\n",
	       applied, dip);
	printf("goal (dip <= %.0f %% at %d changes/s, asked %u/s): %s\n",
	       GOAL_DIP, GOAL_RATE, o->rate, met ? "PASS" : "BELOW");
	if (o->rate >= GOAL_RATE && bdip > GOAL_DIP)
		printf("note: the bare echo alone dips the stream %.1f %% at "
		       "this rate here: no control plane that takes its "
		       "changes on a socket meets the goal on this machine "
		       "(its cores all run the stream)\n", bdip);
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
	perf_json_num(j, "bare_changes_per_s", echoed);
	perf_json_ratio(j, "bare_throughput_vs_quiet", tb);
	perf_json_num(j, "bare_dip_percent", bdip);
	perf_json_num(j, "dip_goal_percent", GOAL_DIP);
	perf_json_u64(j, "goal_rate", GOAL_RATE);
	perf_json_bool(j, "goal_met", met);
	perf_json_num(j, "quiet_msgs_per_s",
		      perf_median(k[CHURN_QUIET].rate, o->reps));
	perf_json_num(j, "churn_msgs_per_s",
		      perf_median(k[CHURN_ON].rate, o->reps));
	perf_json_num(j, "bare_msgs_per_s",
		      perf_median(k[CHURN_BARE].rate, o->reps));
	perf_json_counts(j, r);
	perf_json_emit(j);
}

int perf_churn_main(const struct perf_opts *o)
{
	static double rates[3][PERF_REPS_MAX];
	struct churn_kind k[3] = { { rates[0], 0, 0 }, { rates[1], 0, 0 },
				   { rates[2], 0, 0 } };
	struct shmr_domain *d = NULL;
	struct shmr_endpoint *ep = NULL;
	struct churn_shared *sh;
	struct shmr_pid router;
	struct perf_result r;
	struct perf_ratio t, tb;
	struct perf_ans ans;
	struct perf_app a;
	uint64_t seq = 0;
	pid_t ch = -1, echo = -1, parent = getpid();
	int rc, ret = PERF_EXIT_FAIL, sv[2] = { -1, -1 };

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
	       "route%s, %s poll, %u lcore%s; %u reps of three %u ms phases "
	       "(quiet, churn, bare); "
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
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("shmr-perf churn: socketpair");
		goto out;
	}
	echo = fork();
	if (echo == 0) {
		perf_child_init(parent, SIGKILL);
		close(sv[0]);
		_exit(bare_echo(sv[1]));
	}
	if (echo > 0)
		perf_track_pid(echo, SIGKILL);
	ch = echo < 0 ? -1 : fork();
	if (ch == 0) {
		perf_child_init(parent, SIGKILL);
		close(sv[1]);
		_exit(changer(a.sock, sv[0], sh, o->rate));
	}
	if (ch > 0)
		perf_track_pid(ch, SIGKILL);
	if (echo < 0 || ch < 0) {
		perror("shmr-perf churn: fork");
		goto out;
	}
	close(sv[0]);
	close(sv[1]);
	sv[0] = sv[1] = -1;
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
	if (phases(ep, router, o, sh, k, &seq) < 0)
		goto out;
	/* Every sink's tally of the whole run against what we sent it. */
	r.sent = seq;
	if (perf_sink_collect(ep, router, o->routes, seq, &r, NULL) < 0)
		goto out;
	perf_ratio_pairs(k[CHURN_ON].rate, k[CHURN_QUIET].rate, o->reps, &t);
	perf_ratio_pairs(k[CHURN_BARE].rate, k[CHURN_QUIET].rate, o->reps,
			 &tb);
	summary(o, &t, &tb, k, atomic_load(&sh->failed), sh->err, &r);
	ret = perf_result_ok(&r) ? PERF_EXIT_OK : PERF_EXIT_FAIL;
	if (o->rate && k[CHURN_ON].changes == 0) {
		printf("shmr-perf churn: no change was applied\n");
		ret = PERF_EXIT_FAIL;
	}
out:
	if (ch > 0) {
		int status;

		atomic_store_explicit(&sh->phase, CHURN_EXIT,
				      memory_order_release);
		waitpid(ch, &status, 0);
		perf_untrack_pid(ch);
	}
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (echo > 0) {
		int status;

		/* Its end of the pair closed with the changer: it returns. */
		waitpid(echo, &status, 0);
		perf_untrack_pid(echo);
	}
	perf_app_end(&a, o, d, ep);
	munmap(sh, sizeof(*sh));
	return ret;
}
