/*
 * A restart on a message that fails (issue 12, Ergo's lazy restart whose
 * spawn fails), against the real appliance.
 *
 * Router "events" (type behaviour): type 1 -> route "w", whose program is a
 * wrapper script the test can make unexecutable (the start then fails with
 * EACCES), type 2 -> "base".  The first worker of w is held at a gate (a
 * FIFO nobody opens) before it handles anything, so what is sent to w
 * before its kill -9 stays queued in w's inbox.  Then, with the program
 * gone:
 *   - a call to w gets the start error at once (well before its timeout);
 *   - a send to w becomes a MessageRouteFailed with that reason: a dead
 *     letter in `shmrctl dlq list`;
 *   - both count in the router's `failed` (inspect);
 *   - what was queued before stays in the inbox: once the program is back,
 *     a start (respawn) delivers it, each message once; the dead letters
 *     are delivered by `dlq replay`, once too.
 * The worker keeps a per-key receive count in a file that outlives it
 * (shmr-test-worker --record), which is how "nothing lost, nothing twice"
 * is checked.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define WAIT_MS 20000
#define CALL_MS 10000 /* a call's own timeout */
#define NREC 32       /* keys the worker records */
#define QUEUED 5      /* sent before the kill: keys 0..4 */
#define LETTERS 3     /* sent while the start fails: keys 10..12 */

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char prog[256], mark[280], gate[280], recf[280];
	unsigned char *rec; /* the worker's record file, mapped */
	struct shmr_test_stats st;
	long long want;
	char out[8192];
};

static void wrapper(struct ctx *c, int executable)
{
	FILE *f = fopen(c->prog, "w");

	assert_non_null(f);
	/* The first worker waits at the gate; its replacements do not. */
	fprintf(f,
		"#!/bin/sh\n"
		"if [ ! -e '%s' ]; then\n"
		"  : > '%s'\n"
		"  exec shmr-test-worker --record '%s' --gate '%s'\n"
		"fi\n"
		"exec shmr-test-worker --record '%s'\n",
		c->mark, c->mark, c->recf, c->gate, c->recf);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(c->prog, executable ? 0755 : 0644), 0);
}

static long long ctl_value(struct ctx *c, const char *req, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&c->cl.app, req, ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

/* Route w's os_pid and state from ROUTE; -1 when there is no answer. */
static long long route_info(struct ctx *c, char *state, size_t cap)
{
	char ans[SHMR_PROTO_MAX];
	const char *p;

	snprintf(state, cap, "none");
	if (shmr_test_ctl(&c->cl.app, "ROUTE events w", ans, sizeof(ans)) < 0)
		return -1;
	p = strstr(ans, " state=");
	if (p)
		sscanf(p + 7, "%31s", state);
	p = strstr(ans, " os_pid=");
	return p ? atoll(p + 8) : -1;
}

static int w_running(void *arg)
{
	char st[32];

	return route_info(arg, st, sizeof(st)) > 0 &&
	       strcmp(st, "running") == 0;
}

static int w_dead(void *arg)
{
	char st[32];

	return route_info(arg, st, sizeof(st)) == 0 &&
	       strcmp(st, "dead") == 0;
}

static int forwarded_enough(void *arg)
{
	struct ctx *c = arg;

	return ctl_value(c, "INSPECT events", "shmr:forwarded") >= c->want;
}

static int failed_enough(void *arg)
{
	struct ctx *c = arg;

	return ctl_value(c, "INSPECT events", "shmr:failed") >= c->want;
}

static int call_w(struct ctx *c, int timeout_ms)
{
	memset(&c->st, 0, sizeof(c->st));
	return shmr_call(c->cl.ep, c->router, 1, 0, "x", 1, &c->st,
			 sizeof(c->st), timeout_ms);
}


/* shmrctl, as an operator runs it: its exit status, output in c->out. */
static int shmrctl(struct ctx *c, const char *a0, const char *a1,
		   const char *a2, const char *a3)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock, (char *)a0,
			 (char *)a1, (char *)a2, (char *)a3, NULL };

	return shmr_test_run(argv, c->out, sizeof(c->out));
}

/* Dead letters of router events: how often @p needle is in
 * `shmrctl dlq list events --json` (one object per letter). */
static unsigned letters(struct ctx *c, const char *needle)
{
	unsigned n = 0;

	if (shmrctl(c, "dlq", "list", "events", "--json") != 0)
		return 0;
	for (const char *p = c->out; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static int three_letters(void *arg)
{
	return letters(arg, "\"reason\": \"EACCES\"") >= LETTERS;
}

/* Every key in [from, from + n) received at least once. */
static int received(struct ctx *c, unsigned from, unsigned n)
{
	for (unsigned k = from; k < from + n; k++)
		if (__atomic_load_n(&c->rec[k], __ATOMIC_RELAXED) == 0)
			return 0;
	return 1;
}

static int queued_received(void *arg)
{
	return received(arg, 0, QUEUED);
}

static int letters_received(void *arg)
{
	return received(arg, 10, LETTERS);
}

static long long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000LL +
	       (b.tv_nsec - a->tv_nsec) / 1000000;
}

static void test_restart_on_message_that_fails(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char conf[2048], st[32];
	struct timespec t0;
	long long pid;
	int fd, rc;
	(void)state;

	assert_non_null(c);
	/* Outside the run directory: the configuration names the program
	 * before the appliance starts. */
	snprintf(c->prog, sizeof(c->prog), "/tmp/shmr-test-rfail-%d.sh",
		 (int)getpid());
	snprintf(c->mark, sizeof(c->mark), "%s.started", c->prog);
	snprintf(c->gate, sizeof(c->gate), "%s.gate", c->prog);
	snprintf(c->recf, sizeof(c->recf), "%s.rec", c->prog);
	unlink(c->mark);
	unlink(c->gate);
	assert_int_equal(mkfifo(c->gate, 0600), 0);
	fd = open(c->recf, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * NREC), 0);
	c->rec = mmap(NULL, 2 * NREC, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(c->rec != MAP_FAILED);
	close(fd);
	wrapper(c, 1);

	snprintf(conf, sizeof(conf),
		 "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"w\"; },\n"
		 "            { type = 2; route = \"base\"; } );\n"
		 "  routes = ( { name = \"w\"; program = \"%s\"; },\n"
		 "             { name = \"base\";\n"
		 "               program = \"shmr-test-worker\"; } );\n"
		 "} );\n",
		 c->prog);
	assert_int_equal(shmr_test_client_start(&c->cl, "rfail", conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	assert_true(shmr_test_wait(w_running, c, WAIT_MS));
	pid = route_info(c, st, sizeof(st));

	/* Queued for w, and held there: its worker waits at the gate. */
	for (unsigned k = 0; k < QUEUED; k++)
		assert_int_equal(shmr_send(c->cl.ep, c->router, 1, k, "q", 1),
				 0);
	c->want = QUEUED;
	assert_true(shmr_test_wait(forwarded_enough, c, WAIT_MS));

	/* The program gone, the worker killed: the restart fails. */
	wrapper(c, 0);
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	assert_true(shmr_test_wait(w_dead, c, WAIT_MS));
	/* Short calls until the dataplane has applied the spec of the failed
	 * start: then a call gets the start error instead of queueing (the
	 * ones before are queued, and answered after the respawn). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((rc = call_w(c, 200)) != -EACCES && ms_since(&t0) < WAIT_MS)
		;
	assert_int_equal(rc, -EACCES);

	/* A call gets the start error at once, not after its timeout (the
	 * bound is generous: a liveness bound, not a measurement). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(call_w(c, CALL_MS), -EACCES);
	assert_true(ms_since(&t0) < CALL_MS / 2);

	/* A send becomes a MessageRouteFailed with that reason: a dead
	 * letter.  The call and the sends count in failed. */
	for (unsigned k = 10; k < 10 + LETTERS; k++)
		assert_int_equal(shmr_send(c->cl.ep, c->router, 1, k, "d", 1),
				 0);
	assert_true(shmr_test_wait(three_letters, c, WAIT_MS));
	assert_int_equal(letters(c, "\"reason\": "), LETTERS);
	assert_int_equal(letters(c, "\"name\": \"w\""), LETTERS);
	/* failed: the probe that saw the error first, the call, the sends
	 * (the probes before it were queued, not failed). */
	c->want = 1 + 1 + LETTERS;
	assert_true(shmr_test_wait(failed_enough, c, WAIT_MS));
	assert_int_equal(ctl_value(c, "INSPECT events", "shmr:failed"),
			 c->want);
	assert_int_equal(route_info(c, st, sizeof(st)), 0);
	assert_string_equal(st, "dead");
	for (unsigned k = 0; k < NREC; k++)
		assert_int_equal(c->rec[k], 0); /* nothing handled yet */

	/* The program back: a start delivers what was queued, each once. */
	wrapper(c, 1);
	assert_int_equal(shmrctl(c, "respawn", "events", "w", NULL), 0);
	assert_true(shmr_test_wait(w_running, c, WAIT_MS));
	assert_true(shmr_test_wait(queued_received, c, WAIT_MS));
	rc = call_w(c, CALL_MS);
	assert_int_equal(rc, (int)sizeof(c->st));
	assert_int_equal(c->st.count, QUEUED); /* nothing twice */
	for (unsigned k = 0; k < NREC; k++)
		assert_int_equal(c->rec[k], k < QUEUED ? 1 : 0);

	/* And the dead letters, once replayed, once each. */
	assert_int_equal(shmrctl(c, "dlq", "replay", "events", NULL), 0);
	assert_true(shmr_test_wait(letters_received, c, WAIT_MS));
	rc = call_w(c, CALL_MS);
	assert_int_equal(rc, (int)sizeof(c->st));
	assert_int_equal(c->st.count, QUEUED + LETTERS);
	for (unsigned k = 0; k < NREC; k++)
		assert_int_equal(c->rec[k],
				 k < QUEUED || (k >= 10 && k < 10 + LETTERS));
	assert_int_equal(letters(c, "\"reason\": "), 0);

	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	munmap(c->rec, 2 * NREC);
	unlink(c->prog);
	unlink(c->mark);
	unlink(c->gate);
	unlink(c->recf);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_on_message_that_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
