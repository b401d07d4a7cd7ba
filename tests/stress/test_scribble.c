/*
 * The scribbler (issue 11): a route worker, started by the control plane
 * from the configuration like any other, that in ROUNDS rounds writes
 * random values into everything it can write (its lanes' ring headers and
 * slots, raw bad slots into its outbound lanes, its bell and busy line,
 * the lcore bells; one write to a daemons-only region each round) and then
 * stays, _exit()s or SIGKILLs itself (shmr-scribble-worker,
 * tests/workers/scribble_worker.c).  After every round:
 *
 *   - shmr-control and shmr-dataplane are the same processes, alive (the
 *     dataplane was never restarted);
 *   - a bystander route, to which a thread streams numbered messages all
 *     along, has received every one sent so far, in order;
 *   - a new client process attaches, opens an endpoint, looks up the
 *     bystander's router and calls it;
 *   - the scribbler answers its next round: a new worker when it exited,
 *     or the one that stayed (the test kills one that no longer answers,
 *     as an operator would, and the control plane repairs its lanes).
 *
 * At the end the counters show the scribbling was seen (bad slots,
 * quarantines, lanes initialised again).  The seed is printed;
 * SHMR_SCRIBBLE_SEED=N replays it, SHMR_SCRIBBLE_ROUNDS=N changes the
 * count.
 *
 * Also here: shmr_send_burst() refuses a PID whose slot cannot exist, a
 * peer that breaks the admin endpoint's inbound lanes costs the control
 * plane no CPU (the lane is reset, counted), and a dead worker that moved
 * the dataplane's side of its lanes leaves its route usable.  With the argument
 * "readonly", only the read-only case: a round of same-value writes to
 * every daemons-only region, each of which must fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>

#include <shmr/domain.h>
#include <shmr/proto.h>

#include "scribble.h"
#include "shmr_test_app.h"

#define ROUNDS_DEFAULT 100
/* Generous liveness bounds (never a pass/fail timing). */
#define ROUND_CALL_MS 500   /* a scribbler that answers nothing by then is
			     * killed and its successor asked again */
#define LIVE_MS 20000

#define CONF_FMT                                                               \
	"lcores = 2;\npoll_mode = \"adaptive\";\n"                             \
	"routers = (\n"                                                        \
	" { name = \"s\"; behaviour = \"type\";\n"                             \
	"   types = ( { type = 1; route = \"scribbler\"; } );\n"               \
	"   routes = ( { name = \"scribbler\"; program = \"shmr-scribble-worker\";\n" \
	"                args = [\"--scribble\", \"%s\", \"--router\", \"s\"]; } ); },\n" \
	" { name = \"b\"; behaviour = \"type\";\n"                             \
	"   types = ( { type = 2; route = \"bystander\"; } );\n"               \
	"   routes = ( { name = \"bystander\"; program = \"shmr-scribble-worker\";\n" \
	"                args = [\"--sequence\"]; } ); } );\n"

struct ctx {
	struct shmr_test_client c;
	struct shmr_pid rs, rb; /* routers s (scribbler) and b (bystander) */
	struct shmr_pid inbox;  /* the scribbler route's endpoint */
	char dir[64], state[128];
	pid_t control, dataplane;
	long long dp_starts;
	uint64_t seed;
	/* The streamer thread, on an endpoint of its own. */
	struct shmr_endpoint *sep;
	pthread_t streamer;
	_Atomic(uint64_t) sent;
	_Atomic(int) stop;
	int streaming;
};

static uint64_t mix(uint64_t seed, uint64_t round)
{
	uint64_t z = seed + round * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long status_value(struct ctx *x, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&x->c.app, "STATUS", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

static long long scribbler_pid(struct ctx *x)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&x->c.app, "INSPECT s", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, "shmr:route:scribbler:os_pid");
}

/* Numbered messages to the bystander, all along, with backpressure. */
static void *stream(void *arg)
{
	struct ctx *x = arg;
	uint64_t key = 0;

	while (!atomic_load(&x->stop)) {
		for (int i = 0; i < 32 && !atomic_load(&x->stop); i++) {
			int rc = shmr_send(x->sep, x->rb, 2, key, &key,
					   sizeof(key));

			if (rc == -EAGAIN) {
				usleep(500);
				i--;
				continue;
			}
			if (rc < 0) {
				fprintf(stderr, "streamer: send %" PRIu64
					": %s\n", key, shmr_strerror(rc));
				return NULL;
			}
			/* Release: the send before the count the main
			 * thread checks against (no memory is read on it,
			 * but the count must not run ahead). */
			atomic_store_explicit(&x->sent, ++key,
					      memory_order_release);
		}
		usleep(2000);
	}
	return NULL;
}

static int start(struct ctx *x, int stream_too)
{
	char conf[2048];
	const char *env = getenv("SHMR_SCRIBBLE_SEED");

	snprintf(x->dir, sizeof(x->dir), "/tmp/shmr-scribble-XXXXXX");
	if (!mkdtemp(x->dir))
		return -1;
	snprintf(x->state, sizeof(x->state), "%s/state", x->dir);
	snprintf(conf, sizeof(conf), CONF_FMT, x->state);
	if (shmr_test_client_start(&x->c, "scribble", conf, 0) < 0)
		return -1;
	if (shmr_lookup(x->c.d, "s", &x->rs) < 0 ||
	    shmr_lookup(x->c.d, "b", &x->rb) < 0 ||
	    shmr_test_route_pid(&x->c.app, "s", "scribbler", &x->inbox) < 0)
		return -1;
	x->control = x->c.app.control;
	x->dataplane = (pid_t)status_value(x, "dataplane_pid");
	x->dp_starts = status_value(x, "dataplane_starts");
	if (x->dataplane <= 0 || x->dp_starts < 1)
		return -1;
	x->seed = env ? strtoull(env, NULL, 0)
		      : (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	fprintf(stderr, "scribble: seed %" PRIu64
		" (SHMR_SCRIBBLE_SEED=%" PRIu64 " replays it)\n",
		x->seed, x->seed);
	if (!stream_too)
		return 0;
	if (shmr_endpoint_open(x->c.d, &x->sep) < 0 ||
	    pthread_create(&x->streamer, NULL, stream, x) != 0)
		return -1;
	x->streaming = 1;
	return 0;
}

static int group_setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	if (!x || start(x, 1) < 0)
		return -1;
	*state = x;
	return 0;
}

static int group_setup_readonly(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	if (!x || start(x, 0) < 0)
		return -1;
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *x = *state;
	int left;

	if (x->streaming) {
		atomic_store(&x->stop, 1);
		pthread_join(x->streamer, NULL);
		shmr_endpoint_close(x->sep);
	}
	left = shmr_test_client_stop(&x->c);
	unlink(x->state);
	rmdir(x->dir);
	free(x);
	return left == 0 ? 0 : -1;
}

/* The last report the scribbler left; 0, or -1 when there is none. */
static int report_read(const struct ctx *x, struct scrib_report *r)
{
	int fd = open(x->state, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, r, sizeof(*r));
	close(fd);
	return n == (ssize_t)sizeof(*r) && r->magic == SCRIB_MAGIC ? 0 : -1;
}

/* ---- what must hold after every round -------------------------------- */

/* Say what broke, with the seed that replays it, and fail. */
#define CHECK(x, round, cond, ...)                                             \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "scribble: round %u (seed %" PRIu64    \
				"): ", (round), (x)->seed);                    \
			fprintf(stderr, __VA_ARGS__);                          \
			fprintf(stderr, "\n");                                 \
			fail_msg("%s", #cond);                                 \
		}                                                              \
	} while (0)

static void daemons_same(struct ctx *x, unsigned round)
{
	int status;
	pid_t w = waitpid(x->control, &status, WNOHANG);

	if (w == x->control)
		shmr_test_app_set_control(&x->c.app, 0);
	CHECK(x, round, w == 0, "shmr-control %d is gone (%s %d)",
	      (int)x->control,
	      w == x->control && WIFSIGNALED(status) ? "signal" : "status",
	      w == x->control ? (WIFSIGNALED(status) ? WTERMSIG(status)
						     : WEXITSTATUS(status))
			      : -1);
	CHECK(x, round, shmr_test_pid_alive(x->dataplane),
	      "shmr-dataplane %d is gone", (int)x->dataplane);
	CHECK(x, round, status_value(x, "dataplane_starts") == x->dp_starts,
	      "the dataplane was restarted (%lld starts)",
	      status_value(x, "dataplane_starts"));
}

struct caught_up {
	struct ctx *x;
	uint64_t want;
	struct scrib_seq_stats st;
};

static int bystander_caught_up(void *arg)
{
	struct caught_up *c = arg;

	if (shmr_call(c->x->c.ep, c->x->rb, 2, 0, "stats", 5, &c->st,
		      sizeof(c->st), 2000) != (int)sizeof(c->st))
		return 0;
	return c->st.count >= c->want || c->st.out_of_order;
}

static void bystander_whole(struct ctx *x, unsigned round)
{
	struct caught_up c = { .x = x, .want = atomic_load_explicit(&x->sent,
						       memory_order_acquire) };

	CHECK(x, round, shmr_test_wait(bystander_caught_up, &c, LIVE_MS),
	      "the bystander has %" PRIu64 " of the %" PRIu64
	      " messages sent before the check",
	      c.st.count, c.want);
	CHECK(x, round, c.st.out_of_order == 0 && c.st.next == c.st.count,
	      "the bystander's stream has a gap or is out of order: %" PRIu64
	      " received, next key %" PRIu64 ", %" PRIu64 " out of order",
	      c.st.count, c.st.next, c.st.out_of_order);
}

/* In a new process: attach, open, look up "b", call it.  Exit status 0,
 * or which step failed (1 attach, 2 open, 3 lookup, 4 call). */
static int fresh_client(const struct ctx *x)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_scrib_ans {
		struct scrib_seq_stats st;
	} a;
	struct shmr_pid b;

	if (shmr_attach_path(x->c.app.sock, &d) < 0)
		return 1;
	if (shmr_endpoint_open(d, &ep) < 0)
		return 2;
	if (shmr_lookup(d, "b", &b) < 0)
		return 3;
	if (shmr_call(ep, b, 2, 0, "stats", 5, &a, sizeof(a), 5000) !=
	    (int)sizeof(a))
		return 4;
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}

struct child {
	pid_t pid;
	int status;
};

static int child_done(void *arg)
{
	struct child *c = arg;

	return waitpid(c->pid, &c->status, WNOHANG) == c->pid;
}

static void fresh_client_works(struct ctx *x, unsigned round)
{
	static const char *const step[] = { "", "attach", "open", "lookup",
					    "call" };
	struct child c = { fork(), -1 };
	int done;

	assert_true(c.pid >= 0);
	if (c.pid == 0)
		_exit(fresh_client(x));
	done = shmr_test_wait(child_done, &c, LIVE_MS);
	if (!done) {
		kill(c.pid, SIGKILL);
		waitpid(c.pid, &c.status, 0);
	}
	CHECK(x, round, done, "a new client hung (killed after %d ms)",
	      LIVE_MS);
	CHECK(x, round, WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0,
	      "a new client could not %s",
	      WIFEXITED(c.status) && WEXITSTATUS(c.status) < 5
		      ? step[WEXITSTATUS(c.status)]
		      : "finish (it crashed)");
}

/* What a failure needs to be understood: the scribbler inbox's lanes. */
static void dump_inbox(const struct ctx *x)
{
	uint32_t nl = shmr_hdr(x->c.base)->nlcores;
	const struct shmr_ep_peer *pe = shmr_ep_peer_at(x->c.base, x->inbox.slot);

	fprintf(stderr, "scribble: inbox %u: quarantined %u, bell seq %u "
		"sleepers %u, busy %u\n",
		x->inbox.slot,
		atomic_load(&shmr_ep_at(x->c.base, x->inbox.slot)->quarantined),
		atomic_load(&pe->bell.seq), atomic_load(&pe->bell.sleepers),
		atomic_load(&pe->busy));
	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(nl); i++) {
		const struct rte_ring *r =
			shmr_lane_at(x->c.base, x->inbox.slot, i);

		fprintf(stderr, "  lane %u: size %u mask %u cap %u sync %u/%u "
			"prod %u/%u cons %u/%u\n",
			i, r->size, r->mask, r->capacity, r->prod.sync_type,
			r->cons.sync_type, r->prod.head, r->prod.tail,
			r->cons.head, r->cons.tail);
	}
}

struct respawned {
	struct ctx *x;
	long long old;
};

static int scribbler_respawned(void *arg)
{
	struct respawned *r = arg;
	long long now = scribbler_pid(r->x);

	return now > 0 && now != r->old;
}

struct round_wait {
	struct ctx *x;
	struct scrib_report *rep;
	uint32_t round;
};

/* The scribbler's report says it did round w->round. */
static int report_of_round(void *arg)
{
	struct round_wait *w = arg;

	return report_read(w->x, w->rep) == 0 && w->rep->round == w->round;
}

/* The scribbler's round @p rq: asked, and its report in @p rep.  Returns
 * 1 when the worker died before it could report (it broke its own lanes
 * and libshmr read them), else 0.  *@p killed counts our kills. */
static int ask_round(struct ctx *x, const struct scrib_round *rq,
		     struct scrib_report *rep, unsigned *killed)
{
	uint32_t ack = 0;
	long long pid = scribbler_pid(x);
	int rc = shmr_call(x->c.ep, x->rs, 1, 0, rq, sizeof(*rq), &ack,
			   sizeof(ack), ROUND_CALL_MS);
	int64_t t0;

	if (rc != (int)sizeof(ack)) {
		/* The worker that stayed broke its lanes (quarantined, or
		 * its own receive fails): an operator would kill it.  Its
		 * successor gets repaired lanes and must answer. */
		struct respawned r = { x, pid };

		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
		(*killed)++;
		CHECK(x, rq->round, shmr_test_wait(scribbler_respawned, &r,
						   LIVE_MS),
		      "the scribbler was not started again after a kill");
		pid = scribbler_pid(x);
		rc = shmr_call(x->c.ep, x->rs, 1, 0, rq, sizeof(*rq), &ack,
			       sizeof(ack), LIVE_MS);
		/* The call the killed one had taken is redelivered to its
		 * successor, which may do the round with it and break its
		 * lanes before it answers ours: done is done.  Our call can
		 * fail as soon as those writes quarantine its inbox, before
		 * the successor has written its report: waited for (a
		 * liveness bound). */
		if (rc != (int)sizeof(ack)) {
			struct round_wait w = { x, rep, rq->round };

			if (shmr_test_wait(report_of_round, &w, LIVE_MS))
				return 0;
		}
		if (rc != (int)sizeof(ack))
			dump_inbox(x);
		CHECK(x, rq->round, rc == (int)sizeof(ack) && ack == rq->round,
		      "a new scribbler did not answer its round: %s",
		      rc < 0 ? shmr_strerror(rc) : "a short answer");
	}
	CHECK(x, rq->round, ack == rq->round, "the scribbler acked round %u",
	      ack);
	for (t0 = now_ms(); now_ms() - t0 < LIVE_MS; usleep(1000)) {
		if (report_read(x, rep) == 0 && rep->round == rq->round)
			return 0;
		if (!shmr_test_pid_alive((pid_t)pid))
			break;
	}
	if (report_read(x, rep) == 0 && rep->round == rq->round)
		return 0;
	CHECK(x, rq->round, !shmr_test_pid_alive((pid_t)pid),
	      "the scribbler neither reported nor died");
	return 1;
}

/* ---- the cases -------------------------------------------------------- */

/* Known hole (a): a burst naming a slot that cannot exist was enqueued
 * (and dropped by the dataplane as a bad target) instead of refused. */
static void test_send_burst_refuses_unknown_slot(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid self = shmr_endpoint_pid(x->c.ep);
	const struct rte_ring *out = shmr_lane_at(
		x->c.base, self.slot, SHMR_LANE_OUT(shmr_hdr(x->c.base)->nlcores));
	struct shmr_out msgs[2] = {
		{ .to = x->rs, .type = 7, .data = "a", .len = 1 },
		{ .to = { 9999, 1 }, .type = 7, .data = "b", .len = 1 },
	};
	uint32_t before = out->prod.tail;

	assert_int_equal(shmr_send_burst(x->c.ep, msgs, 2),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(out->prod.tail, before); /* none of it sent */
	msgs[1].to = (struct shmr_pid){ SHMR_MAX_ENDPOINTS, 1 };
	assert_int_equal(shmr_send_burst(x->c.ep, &msgs[1], 1),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(shmr_send_burst(x->c.ep, msgs, 1), 1);
}

/* CPU time (user + system, clock ticks) of process @p pid so far. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

/* Known hole (b): a peer that moves the admin endpoint's inbound lane
 * indices (a producer tail far past the consumer) made the control
 * plane's admin thread kick its loop, which skipped the lane, in a loop:
 * a core at 100%.  Now the lane is reset (counted in lanes_reinit) and the
 * control plane idles; the admin path still answers. */
static void test_admin_lane_scribbled(void **state)
{
	struct ctx *x = *state;
	struct shmr_domain_hdr *ro = shmr_hdr(x->c.base);
	uint64_t v = atomic_load(&ro->admin_pid);
	struct shmr_pid admin = { (uint32_t)v, (uint32_t)(v >> 32) };
	long long t0, t1, hz = sysconf(_SC_CLK_TCK);
	long long reinit = status_value(x, "lanes_reinit");
	char reply[80];
	void *base;
	size_t size;
	struct rte_ring *l;

	assert_int_equal(shmr_test_map(&x->c.app, 1, &base, &size), 0);
	l = shmr_lane_at(base, admin.slot, 0);
	l->prod.tail += 0x40000000u;
	l = shmr_lane_at(base, admin.slot, 1);
	l->cons.tail -= 3;
	/* Wake its thread, as any peer can (and as the dataplane does when
	 * it puts something there). */
	shmr_bell_ring(&shmr_ep_peer_at(base, admin.slot)->bell);
	usleep(200000);
	t0 = cpu_ticks(x->control);
	usleep(1000000);
	t1 = cpu_ticks(x->control);
	fprintf(stderr, "scribble: shmr-control used %lld of %lld ticks in a "
		"second with broken admin lanes\n", t1 - t0, hz);
	/* Generous: an idle control plane uses next to nothing; the loop
	 * took a whole core. */
	assert_true(t0 >= 0 && t1 - t0 < hz / 4);
	/* Both lanes were reset, and counted. */
	assert_int_equal(status_value(x, "lanes_reinit"), reinit + 2);
	/* The admin path answers again (the default handlers answer a
	 * high-priority "stats" call to a router with its counters). */
	for (int i = 0; i < 4; i++)
		assert_true(shmr_call_prio(x->c.ep, x->rs, SHMR_PRIO_HIGH, 1,
					   0, "stats", 5, reply, sizeof(reply),
					   5000) > 0);
	munmap(base, size);
}

/* Found by the scribbler (seed 1796130770373672): a worker that moves the
 * dataplane's side of its lanes (a burst "held" on its outbound lanes, an
 * enqueue "half done" on its inbound ones) and dies.  The repair took
 * those for work in progress and left them, so every later worker of the
 * route was quarantined or refused.  Now they are initialised again, and
 * the next worker answers. */
static void test_dataplane_side_left_by_dead_worker(void **state)
{
	struct ctx *x = *state;
	uint32_t nl = shmr_hdr(x->c.base)->nlcores;
	struct respawned r = { x, scribbler_pid(x) };
	long long reinit = status_value(x, "lanes_reinit");
	uint64_t got;
	void *base;
	size_t size;

	assert_true(r.old > 0);
	assert_int_equal(shmr_call(x->c.ep, x->rs, 1, 0, "x", 1, &got,
				   sizeof(got), LIVE_MS),
			 (int)sizeof(got));
	assert_int_equal(shmr_test_map(&x->c.app, 1, &base, &size), 0);
	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(nl); i++) {
		struct rte_ring *l = shmr_lane_at(base, x->inbox.slot, i);

		if (i < nl)
			l->prod.head += 1;
		else
			l->cons.head += 1;
	}
	munmap(base, size);
	assert_int_equal(kill((pid_t)r.old, SIGKILL), 0);
	assert_true(shmr_test_wait(scribbler_respawned, &r, LIVE_MS));
	assert_int_equal(shmr_call(x->c.ep, x->rs, 1, 0, "x", 1, &got,
				   sizeof(got), 5000),
			 (int)sizeof(got));
	assert_int_equal(status_value(x, "lanes_reinit"),
			 reinit + SHMR_LANES_PER_EP(nl));
}

static void test_scribble_rounds(void **state)
{
	struct ctx *x = *state;
	const char *env = getenv("SHMR_SCRIBBLE_ROUNDS");
	unsigned rounds = env ? (unsigned)atoi(env) : ROUNDS_DEFAULT;
	unsigned killed = 0, died = 0, quarantined = 0, n[3] = { 0 };
	uint64_t landed = 0, faulted = 0, raw = 0, ro_tries = 0, bad = 0;
	long long reinit;
	int64_t t0 = now_ms(), ph[3] = { 0 };
	struct respawned r = { x, 0 };

	for (unsigned round = 1; round <= rounds; round++) {
		struct scrib_round rq = { SCRIB_MAGIC, round,
					  mix(x->seed, round), SCRIB_MODE_LANES,
					  0 };
		struct scrib_report rep;
		int64_t t = now_ms();

		r.old = scribbler_pid(x);
		if (ask_round(x, &rq, &rep, &killed)) {
			died++;
		} else {
			n[rep.action]++;
			landed += rep.landed;
			faulted += rep.faulted;
			raw += rep.raw_slots;
			ro_tries += rep.ro_tries;
		}
		if (died || rep.action != SCRIB_STAY) {
			r.old = scribbler_pid(x);
			/* Its pid may still be the dead one's for a moment. */
			if (r.old > 0 && !shmr_test_pid_alive((pid_t)r.old))
				CHECK(x, round,
				      shmr_test_wait(scribbler_respawned, &r,
						     LIVE_MS),
				      "the scribbler was not restarted");
		}
		ph[0] += now_ms() - t;
		t = now_ms();
		daemons_same(x, round);
		bystander_whole(x, round);
		ph[1] += now_ms() - t;
		t = now_ms();
		fresh_client_works(x, round);
		ph[2] += now_ms() - t;
		/* The scribbler's inbox (the route's endpoint, the same
		 * slot for every worker): quarantined now?  Relaxed: a flag
		 * for display. */
		if (atomic_load_explicit(
			    &shmr_ep_at(x->c.base, x->inbox.slot)->quarantined,
			    memory_order_relaxed))
			quarantined++;
		died = 0;
	}
	for (uint32_t l = 0; l < shmr_hdr(x->c.base)->nlcores; l++)
		bad += atomic_load_explicit(&shmr_stats_of(x->c.base, l)->bad,
					    memory_order_relaxed);
	reinit = status_value(x, "lanes_reinit");
	fprintf(stderr,
		"scribble: %u rounds in %" PRId64 " ms (seed %" PRIu64
		"): %u stayed, %u exited, %u killed themselves, %u died of "
		"their own lanes, %u killed by the test; %" PRIu64
		" writes landed, %" PRIu64 " faulted, %" PRIu64
		" raw bad slots, %" PRIu64 " daemons-only tries; seen: %" PRIu64
		" bad slots, %u rounds ended quarantined, %lld lanes "
		"initialised again; %" PRIu64 " streamed; ms in rounds %" PRId64
		", checks %" PRId64 ", new clients %" PRId64 "\n",
		rounds, now_ms() - t0, x->seed, n[SCRIB_STAY], n[SCRIB_EXIT],
		n[SCRIB_KILL], died, killed, landed, faulted, raw, ro_tries,
		bad, quarantined, reinit, atomic_load(&x->sent), ph[0], ph[1],
		ph[2]);
	if (rounds >= 50) {
		/* The scribbling was seen (a shorter replay may not). */
		assert_true(bad > 0);
		assert_true(quarantined > 0 || killed > 0);
		assert_true(reinit > 0);
	}
}

/* Every same-value write to a daemons-only region faults (they are
 * mapped read-only in workers). */
static void test_scribble_readonly(void **state)
{
	struct ctx *x = *state;
	struct scrib_round rq = { SCRIB_MAGIC, 1, mix(x->seed, 0),
				  SCRIB_MODE_READONLY, 0 };
	struct scrib_report rep;
	unsigned killed = 0;

	assert_int_equal(ask_round(x, &rq, &rep, &killed), 0);
	fprintf(stderr, "scribble: %" PRIu64 " writes to daemons-only "
		"regions: %" PRIu64 " faulted, %" PRIu64 " landed%s%s\n",
		rep.ro_tries, rep.ro_faulted, rep.ro_landed,
		rep.ro_landed ? ", the first on " : "",
		rep.ro_landed ? rep.first_ro_landed : "");
	assert_true(rep.ro_tries > 0);
	assert_int_equal(rep.ro_landed, 0);
	assert_int_equal(rep.ro_faulted, rep.ro_tries);
	daemons_same(x, 1);
	fresh_client_works(x, 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest main_tests[] = {
		cmocka_unit_test(test_send_burst_refuses_unknown_slot),
		cmocka_unit_test(test_admin_lane_scribbled),
		cmocka_unit_test(test_dataplane_side_left_by_dead_worker),
		cmocka_unit_test(test_scribble_rounds),
	};
	const struct CMUnitTest ro_tests[] = {
		cmocka_unit_test(test_scribble_readonly),
	};

	if (argc > 1 && strcmp(argv[1], "readonly") == 0)
		return cmocka_run_group_tests(ro_tests, group_setup_readonly,
					      group_teardown);
	return cmocka_run_group_tests(main_tests, group_setup, group_teardown);
}
