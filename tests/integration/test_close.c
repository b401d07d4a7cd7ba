/*
 * Close loses nothing (issue 11, hole 4): what shmr_send() accepted is
 * delivered, however the sender goes away right after.
 *
 * For every routing logic, and for a send straight to a route's inbox,
 * N client processes attach, open an endpoint, wait at a common barrier,
 * send K numbered messages each (key = a number unique in the test) and
 * then, in three rounds on the same appliance (so the second and third
 * rounds reuse the slots the first freed):
 *   close   shmr_endpoint_close() at once, then exit;
 *   exit    _exit() at once, without closing (the kernel closes the
 *           control socket);
 *   kill    SIGKILL at once, right after the last shmr_send() returned:
 *           accepted means in the outbound lane, so the dataplane must
 *           still take it.
 * The routes are shmr-test-worker --record: each key's receive count in
 * a file.  After each round every key is there exactly once (on every
 * routee for broadcast and scatter-gather): none lost, none twice, and
 * the control plane counted nothing dropped (close_dropped in STATUS).
 *
 * And the bounds, with the dataplane stopped (SIGSTOP): a close gives up
 * after SHMR_CLOSE_WAIT_MS and returns how many it left; the control plane
 * keeps polling them, so once the dataplane goes on they arrive.  A client
 * that exits stays polled (STATUS draining) until the control plane's own
 * bound, and what the dataplane then never took is counted in
 * close_dropped: delivered + dropped = sent; the dropped ones are the
 * router's dead letters, and a replay delivers them.
 *
 * Waits are bounded retries on the record files, never fixed sleeps;
 * the bounds are liveness bounds only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 20000
#define MAX_CLIENTS 100u
#define MAX_RECS 3u

enum mode { M_CLOSE, M_EXIT, M_KILL, M_NMODES };
static const char *const mode_name[] = { "close", "exit", "kill" };

struct ctx {
	struct shmr_test_client cl;
	const char *what;
	char rec[MAX_RECS][128];
	unsigned char *map[MAX_RECS];
	unsigned nrec;   /* record files (one per routee, or one shared) */
	int every;       /* 1: every routee gets every key (broadcast) */
	uint64_t nkeys;  /* keys in each file */
	uint64_t lo, hi; /* this round's keys */
	uint64_t seen, twice;
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

/* ---- the senders ------------------------------------------------------ */

/*
 * One sending client, in a child process: attach, open, look up @p target
 * (a name, or @p direct when the name is NULL), wait for the barrier (EOF
 * on @p gate), send keys [base, base + k), then go as @p mode says.  Never
 * returns.  Exit status 0, or 1 with one line on stderr.
 */
static void sender(const char *sock, const char *target,
		   struct shmr_pid direct, int gate, uint64_t base,
		   unsigned k, enum mode mode)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid to = direct;
	char c;
	int rc = shmr_attach_path(sock, &d);

	if (rc == 0)
		rc = shmr_endpoint_open(d, &ep);
	if (rc == 0 && target)
		rc = shmr_lookup(d, target, &to);
	if (rc < 0) {
		fprintf(stderr, "sender %" PRIu64 ": %s\n", base,
			shmr_strerror(rc));
		_exit(1);
	}
	while (read(gate, &c, 1) < 0 && errno == EINTR)
		;
	for (uint64_t i = base; i < base + k; i++) {
		while ((rc = shmr_send(ep, to, 1, i, &i, sizeof(i))) ==
		       -EAGAIN)
			sched_yield();
		if (rc < 0) {
			fprintf(stderr, "sender %" PRIu64 ": send: %s\n", i,
				shmr_strerror(rc));
			_exit(1);
		}
	}
	if (mode == M_KILL)
		raise(SIGKILL);
	if (mode == M_EXIT)
		_exit(0);
	rc = shmr_endpoint_close(ep);
	if (rc != 0) {
		fprintf(stderr, "sender %" PRIu64 ": close left %d\n", base,
			rc);
		_exit(1);
	}
	shmr_detach(d);
	_exit(0);
}

/* Run @p n senders of @p k keys each from @p base on, all at once. */
static void senders(struct ctx *c, const char *target, struct shmr_pid direct,
		    unsigned n, unsigned k, uint64_t base, enum mode mode)
{
	pid_t pids[MAX_CLIENTS];
	int gate[2];

	assert_true(n <= MAX_CLIENTS);
	assert_int_equal(pipe(gate), 0);
	for (unsigned i = 0; i < n; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(gate[1]);
			sender(c->cl.app.sock, target, direct, gate[0],
			       base + (uint64_t)i * k, k, mode);
		}
	}
	/* Everybody attached or on the way: the barrier opens at EOF. */
	close(gate[0]);
	close(gate[1]);
	for (unsigned i = 0; i < n; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		if (mode == M_KILL)
			assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		else
			assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

/* ---- the records ------------------------------------------------------ */

static void records_make(struct ctx *c, unsigned nrec, uint64_t nkeys)
{
	c->nrec = nrec;
	c->nkeys = nkeys;
	for (unsigned j = 0; j < nrec; j++) {
		char what[32];
		int fd;

		snprintf(what, sizeof(what), "close-rec%u", j);
		client_make_record(c->rec[j], sizeof(c->rec[j]), what, nkeys);
		fd = open(c->rec[j], O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		c->map[j] = mmap(NULL, 2 * nkeys, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		assert_true(c->map[j] != MAP_FAILED);
	}
}

/* Count this round's keys: seen (each key once, or on every file), and
 * seen more than once. */
static void records_count(struct ctx *c)
{
	c->seen = c->twice = 0;
	for (uint64_t k = c->lo; k < c->hi; k++) {
		unsigned total = 0, files = 0;

		for (unsigned j = 0; j < c->nrec; j++) {
			unsigned char n = atomic_load_explicit(
				(_Atomic unsigned char *)&c->map[j][k],
				memory_order_relaxed);

			total += n;
			files += n == 1;
			if (n > 1)
				c->twice++;
		}
		if (c->every ? files == c->nrec : total >= 1)
			c->seen++;
		if (!c->every && total > 1)
			c->twice++;
	}
}

static int all_seen(void *arg)
{
	struct ctx *c = arg;

	records_count(c);
	return c->seen == c->hi - c->lo;
}

static void records_free(struct ctx *c)
{
	for (unsigned j = 0; j < c->nrec; j++) {
		munmap(c->map[j], 2 * c->nkeys);
		unlink(c->rec[j]);
	}
}

/* The case running: stopped by teardown() when a check failed. */
static struct ctx *cur;
static pid_t stopped_dp; /* a dataplane left stopped by a failed check */

static struct ctx *case_start(const struct ctx *rec, const char *tag,
			      const char *what, const char *body)
{
	struct ctx *c = client_ctx_start(sizeof(*c), tag, body, -1);

	memcpy(c->rec, rec->rec, sizeof(rec->rec));
	memcpy(c->map, rec->map, sizeof(rec->map));
	c->nrec = rec->nrec;
	c->nkeys = rec->nkeys;
	c->what = what;
	cur = c;
	return c;
}

static void case_stop(struct ctx *c)
{
	cur = NULL;
	records_free(c);
	client_ctx_stop(c);
}

static int teardown(void **state)
{
	(void)state;
	if (stopped_dp > 0)
		kill(stopped_dp, SIGCONT);
	stopped_dp = 0;
	if (cur) {
		records_free(cur);
		shmr_test_client_stop(&cur->cl);
		free(cur);
		cur = NULL;
	}
	return 0;
}

static long long status_value(struct ctx *c, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	assert_int_equal(shmr_test_ctl(&c->cl.app, "STATUS", ans, sizeof(ans)),
			 0);
	return shmr_test_value(ans, key);
}

/* ---- the cases -------------------------------------------------------- */

/*
 * The three rounds against router @p target (or route @p route's inbox of
 * router @p target when @p route is set): @p n senders of @p k each.
 */
static void rounds(struct ctx *c, const char *target, const char *route,
		   unsigned n, unsigned k)
{
	struct shmr_pid direct = { 0, 0 };

	if (route)
		direct = client_route_pid(&c->cl, target, route);
	for (int mode = 0; mode < M_NMODES; mode++) {
		c->lo = (uint64_t)mode * n * k;
		c->hi = c->lo + (uint64_t)n * k;
		assert_true(c->hi <= c->nkeys);
		senders(c, route ? NULL : target, direct, n, k, c->lo,
			(enum mode)mode);
		if (!shmr_test_wait(all_seen, c, WAIT_MS))
			fail_msg("%s, %s: %" PRIu64 " of %" PRIu64
				 " messages lost (%" PRIu64 " twice)",
				 c->what, mode_name[mode],
				 (c->hi - c->lo) - c->seen, c->hi - c->lo,
				 c->twice);
		if (c->twice)
			fail_msg("%s, %s: %" PRIu64 " delivered twice",
				 c->what, mode_name[mode], c->twice);
	}
	assert_int_equal(status_value(c, "close_dropped"), 0);
}

/* Routes r0..r{nr-1}, each recording into its own file (@p shared == 0)
 * or all into file 0. */
static void routes_conf(const struct ctx *c, unsigned nr, int shared,
			char *out, size_t cap)
{
	size_t at = 0;

	for (unsigned j = 0; j < nr; j++)
		at += (size_t)snprintf(out + at, cap - at,
				       "%s{ name = \"r%u\"; program = "
				       "\"shmr-test-worker\"; args = [ "
				       "\"--record\", \"%s\" ]; }",
				       j ? ", " : "", j,
				       c->rec[shared ? 0 : j]);
}

/* One routing logic's case: router "t" of @p behaviour over r0..r2. */
struct logic_case {
	const char *what, *behaviour, *extra;
	int every;         /* every routee gets every key */
	const char *route; /* send to this route's inbox, not the router */
};

#define N 20u
#define K 50u

static const struct logic_case cases[] = {
	{ "round-robin", "round-robin", "", 0, NULL },
	{ "random", "random", "", 0, NULL },
	{ "smallest-mailbox", "smallest-mailbox", "", 0, NULL },
	{ "broadcast", "broadcast", "", 1, NULL },
	{ "consistent-hash", "consistent-hash", "", 0, NULL },
	{ "scatter-gather", "scatter-gather", "within_ms = 1000;", 1, NULL },
	{ "tail-chopping", "tail-chopping",
	  "within_ms = 1000; interval_ms = 50;", 0, NULL },
	{ "type", "type", "types = ( { type = 1; route = \"r1\"; } );", 0,
	  NULL },
	{ "hash", "hash", "hash = [ \"r0\", \"r1\", \"r2\" ];", 0, NULL },
	{ "direct", "round-robin", "", 0, "r2" },
};

static void test_logic(void **state)
{
	const struct logic_case *lc = *state;
	char routes[2048], body[4096];
	struct ctx rec, *c;

	memset(&rec, 0, sizeof(rec));
	records_make(&rec, MAX_RECS, (uint64_t)M_NMODES * N * K);
	routes_conf(&rec, MAX_RECS, 0, routes, sizeof(routes));
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"t\"; behaviour = \"%s\";\n"
		 "  %s\n"
		 "  routes = ( %s ); } );\n",
		 lc->behaviour, lc->extra, routes);
	c = case_start(&rec, lc->what, lc->what, body);
	c->every = lc->every;
	rounds(c, "t", lc->route, N, K);
	case_stop(c);
}

/*
 * The case: a balancing pool of four, 100 clients at once, 10
 * messages each.  It was 50 each: a routee gets its next message when its
 * inbox is empty, so on a two-core VM the pool hands out about 2,400
 * messages a second (5,000 took 2.2 s on 2026-12-05), the lanes are
 * taken in turn, and the last clients' lanes saw nothing taken for the
 * 2 s after which a close gives up (SHMR_CLOSE_WAIT_MS) and the control
 * plane drops what a gone client left: the test measured the machine's
 * speed against those bounds (it failed on an unchanged tree too), not a
 * loss.  The bounds have their own tests below.
 */
#define K_BAL 10u
static void test_balancing_pool(void **state)
{
	char body[2048];
	struct ctx rec, *c;
	(void)state;

	memset(&rec, 0, sizeof(rec));
	records_make(&rec, 1, (uint64_t)M_NMODES * MAX_CLIENTS * K_BAL);
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"t\"; behaviour = \"balancing\";\n"
		 "  pool = { size = 4; program = \"shmr-test-worker\";\n"
		 "    args = [ \"--record\", \"%s\" ]; }; } );\n",
		 rec.rec[0]);
	c = case_start(&rec, "balancing", "balancing pool", body);
	rounds(c, "t", NULL, MAX_CLIENTS, K_BAL);
	case_stop(c);
}

/* ---- the bound -------------------------------------------------------- */

/* Is process @p arg stopped?  "State:\tT (stopped)" in its status. */
static int dataplane_stopped(void *arg)
{
	char path[64], line[256];
	int stopped = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)(intptr_t)arg);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "State:", 6) == 0)
			stopped = strchr(line, 'T') != NULL;
	fclose(f);
	return stopped;
}

/* One route r0 recording keys 0..9, behind round-robin router "t". */
static struct ctx *stopped_case(const char *tag, const char *what)
{
	char routes[1024], body[2048];
	struct ctx rec;

	memset(&rec, 0, sizeof(rec));
	records_make(&rec, 1, 10);
	routes_conf(&rec, 1, 1, routes, sizeof(routes));
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"t\"; behaviour = \"round-robin\";\n"
		 "  routes = ( %s ); } );\n",
		 routes);
	return case_start(&rec, tag, what, body);
}

/* Stop @p c's dataplane (SIGSTOP), and wait until it is. */
static pid_t dataplane_stop(struct ctx *c)
{
	pid_t dp = (pid_t)status_value(c, "dataplane_pid");

	assert_true(dp > 0);
	assert_int_equal(kill(dp, SIGSTOP), 0);
	stopped_dp = dp;
	assert_true(shmr_test_wait(dataplane_stopped, (void *)(intptr_t)dp,
				   WAIT_MS));
	return dp;
}

static void dataplane_cont(pid_t dp)
{
	assert_int_equal(kill(dp, SIGCONT), 0);
	stopped_dp = 0;
}

/*
 * With the dataplane stopped, a close waits SHMR_CLOSE_WAIT_MS (200 ms
 * here) and returns the number it left; nothing is dropped: the control
 * plane keeps the endpoint polled, and the dataplane, let go on within
 * the control plane's bound, delivers them all.
 */
static void test_close_gives_up_but_keeps(void **state)
{
	struct ctx *c = stopped_case("giveup", "close gives up");
	struct shmr_endpoint *ep;
	struct shmr_pid to = client_lookup(&c->cl, "t");
	pid_t dp;
	(void)state;

	assert_int_equal(shmr_endpoint_open(c->cl.d, &ep), 0);
	dp = dataplane_stop(c);
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(shmr_send(ep, to, 1, i, &i, sizeof(i)), 0);
	setenv("SHMR_CLOSE_WAIT_MS", "200", 1);
	assert_int_equal(shmr_endpoint_close(ep), 10);
	unsetenv("SHMR_CLOSE_WAIT_MS");
	dataplane_cont(dp);
	c->lo = 0;
	c->hi = 10;
	if (!shmr_test_wait(all_seen, c, WAIT_MS))
		fail_msg("%" PRIu64 " of 10 lost after a close gave up",
			 10 - c->seen);
	assert_int_equal(c->twice, 0);
	assert_int_equal(status_value(c, "close_dropped"), 0);
	case_stop(c);
}

static int status_is(struct ctx *c, const char *key, long long want)
{
	return status_value(c, key) == want;
}

static int none_draining(void *arg)
{
	return status_is(arg, "draining", 0);
}

static int one_draining(void *arg)
{
	return status_is(arg, "draining", 1);
}

/* Delivered and counted as dropped make up all ten, once counted. */
static int all_accounted(void *arg)
{
	struct ctx *c = arg;
	long long dropped = status_value(c, "close_dropped");

	records_count(c);
	return dropped >= 0 && c->seen + (uint64_t)dropped == c->hi - c->lo;
}

/*
 * A client that exits right after sending, while the dataplane is
 * stopped: the control plane keeps its slot polled (draining 1), gives up
 * after its bound, and once the dataplane goes on, what it never took is
 * counted in close_dropped: delivered + dropped = sent, nothing silent;
 * the dropped ones are dead letters of the router they were sent to, and
 * `dlq replay` delivers them.
 */
static void test_gone_client_given_up_is_counted(void **state)
{
	struct ctx *c = stopped_case("counted", "a gone client given up");
	pid_t dp;
	(void)state;

	dp = dataplane_stop(c);
	c->lo = 0;
	c->hi = 10;
	senders(c, "t", (struct shmr_pid){ 0, 0 }, 1, 10, 0, M_EXIT);
	assert_true(shmr_test_wait(one_draining, c, WAIT_MS));
	/* The control plane's bound (2 s) passes with the dataplane still
	 * stopped. */
	assert_true(shmr_test_wait(none_draining, c, WAIT_MS));
	dataplane_cont(dp);
	if (!shmr_test_wait(all_accounted, c, WAIT_MS))
		fail_msg("%" PRIu64 " delivered, %lld counted dropped, of 10",
			 c->seen, status_value(c, "close_dropped"));
	assert_int_equal(c->twice, 0);
	/* Each one dropped was sent to router t: it is t's dead letter, with
	 * the reason, and `dlq replay` sends it again. */
	{
		char ans[SHMR_PROTO_MAX];
		long long dropped = status_value(c, "close_dropped");
		unsigned count = 0;
		char *p = ans;

		assert_int_equal(shmr_test_ctl(&c->cl.app, "DLQ_LIST t", ans,
					       sizeof(ans)),
				 0);
		while ((p = strstr(p, "reason=SHMR_E_TIMEOUT"))) {
			count++;
			p++;
		}
		assert_int_equal(count, dropped);
		if (dropped > 0) {
			assert_int_equal(shmr_test_ctl(&c->cl.app,
						       "DLQ_REPLAY t", ans,
						       sizeof(ans)),
					 0);
			if (!shmr_test_wait(all_seen, c, WAIT_MS))
				fail_msg("%" PRIu64 " of 10 after the replay",
					 c->seen);
		}
	}
	case_stop(c);
}

#define LOGIC(i)                                                         \
	{ .name = cases[i].what, .test_func = test_logic,                \
	  .teardown_func = teardown, .initial_state = (void *)&cases[i] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_balancing_pool, teardown),
		LOGIC(0), LOGIC(1), LOGIC(2), LOGIC(3), LOGIC(4),
		LOGIC(5), LOGIC(6), LOGIC(7), LOGIC(8), LOGIC(9),
		cmocka_unit_test_teardown(test_close_gives_up_but_keeps, teardown),
		cmocka_unit_test_teardown(test_gone_client_given_up_is_counted,
					  teardown),
	};

	_Static_assert(sizeof(cases) / sizeof(cases[0]) == 10, "LOGIC()");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
