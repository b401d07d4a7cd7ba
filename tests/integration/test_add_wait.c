/*
 * shmrctl add (enable, replace) returns once the route's worker has
 * attached, not when its process is started (issue 12, "shmrctl add
 * returns when the process is started"), against the real appliance:
 *
 *   - at add's return the worker's main has run up to its attach (a file
 *     it makes right before attaching is there) and the route is running;
 *     so for replace of a live worker and enable of a disabled route;
 *   - add --no-wait returns while the worker is held before its attach,
 *     and the route shows `starting` until it attaches;
 *   - a program that exits 1 before attaching: add fails at once (exit 4,
 *     a line naming the route and saying why), and so does a replace to
 *     such a program;
 *   - a worker that does not attach within --wait: add fails (exit 4), it
 *     does not hang.
 *
 * Workers are shmr-test-worker with its --pre-attach-* options (a slow
 * main, a gate before the attach, an exit instead of it).  No test
 * depends on timing: a worker slowed before its attach only makes the
 * old shmrctl (returning at the start) fail more surely.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>

#include "shmr_test_app.h"

#define WAIT_MS 20000

struct ctx {
	struct shmr_test_client cl;
	char dir[128]; /* the test's files: marks, gates */
	char out[4096]; /* the last shmrctl's stdout and stderr */
	const char *want_route, *want_state;
};

static struct ctx *start(const char *tag)
{
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	assert_int_equal(
		shmr_test_client_start(
			&c->cl, tag,
			"stop_grace_ms = 2000;\n"
			"routers = ( { name = \"events\"; behaviour = \"type\";\n"
			"  types = ( { type = 1; route = \"w\"; } );\n"
			"  routes = ( { name = \"base\";\n"
			"               program = \"shmr-test-worker\"; } );\n"
			"} );\n",
			-1),
		0);
	snprintf(c->dir, sizeof(c->dir), "/tmp/shmr-addwait-%d",
		 (int)getpid());
	assert_true(mkdir(c->dir, 0700) == 0 || errno == EEXIST);
	return c;
}

static void stop(struct ctx *c)
{
	char cmd[200];

	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->dir);
	assert_int_equal(system(cmd), 0);
	free(c);
}

/* shmrctl -s SOCK WORDS... (NULL-terminated): its exit status; its
 * output in c->out. */
static int ctl(struct ctx *c, ...)
{
	char *argv[40] = { getenv("SHMRCTL"), "-s", c->cl.app.sock };
	unsigned n = 3;
	va_list ap;

	va_start(ap, c);
	while ((argv[n] = va_arg(ap, char *)) != NULL)
		assert_true(++n < sizeof(argv) / sizeof(argv[0]));
	va_end(ap);
	return shmr_test_run(argv, c->out, sizeof(c->out));
}

/* The state of route @p name of events, as `shmrctl route --json` gives
 * it; "none" when there is no such route. */
static const char *state_of(struct ctx *c, const char *name)
{
	static char st[32];
	const char *p;

	if (ctl(c, "route", "events", name, "--json", NULL) != 0)
		return "none";
	p = strstr(c->out, "\"state\": \"");
	assert_non_null(p);
	assert_int_equal(sscanf(p + 10, "%31[^\"]", st), 1);
	return st;
}

static int in_state(void *arg)
{
	struct ctx *c = arg;

	return strcmp(state_of(c, c->want_route), c->want_state) == 0;
}

static void wait_state(struct ctx *c, const char *route, const char *state)
{
	c->want_route = route;
	c->want_state = state;
	assert_true(shmr_test_wait(in_state, c, WAIT_MS));
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* A gate (a named pipe) for a worker's --pre-attach-gate. */
static const char *make_gate(struct ctx *c)
{
	static char gate[200];

	snprintf(gate, sizeof(gate), "%s/gate", c->dir);
	assert_int_equal(mkfifo(gate, 0600), 0);
	return gate;
}

/* Route w's worker is held at @p gate, so w shows `starting`; release it
 * (open(2) blocks until it opens the gate for reading, as it blocks
 * until we open it) and w becomes `running`. */
static void release_w(struct ctx *c, const char *gate)
{
	int fd;

	assert_string_equal(state_of(c, "w"), "starting");
	fd = open(gate, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	wait_state(c, "w", "running");
}

/* The worker of @p route has attached: what its main did right before
 * its attach (@p mark) is done, and the route is running. */
static void assert_attached(struct ctx *c, const char *route,
			    const char *mark)
{
	assert_true(exists(mark));
	assert_string_equal(state_of(c, route), "running");
}

/* shmrctl VERB events ROUTE with a worker whose main is slow (300 ms
 * before it attaches, then it makes a mark and attaches): at VERB's
 * return it has attached.  A VERB that returned at the start would come
 * back long before.  Returns the mark's path. */
static const char *slow_worker_waited(struct ctx *c, const char *verb,
				      const char *route)
{
	static char mark[200];

	snprintf(mark, sizeof(mark), "%s/attached-%s", c->dir, route);
	assert_int_equal(ctl(c, verb, "events", route, "shmr-test-worker",
			     "--pre-attach-ms", "300", "--pre-attach-touch",
			     mark, NULL),
			 0);
	assert_attached(c, route, mark);
	return mark;
}

/* add returns once the worker attached. */
static void test_add_returns_once_attached(void **state)
{
	struct ctx *c = start("addwait");
	(void)state;

	(void)slow_worker_waited(c, "add", "w");
	stop(c);
}

/* replace of a live worker returns once the new one attached (the old
 * one stopped first); enable of a disabled route once its worker did. */
static void test_replace_and_enable_wait(void **state)
{
	struct ctx *c = start("addwaitre");
	const char *mark;
	(void)state;

	mark = slow_worker_waited(c, "replace", "base");
	assert_int_equal(ctl(c, "disable", "events", "base", NULL), 0);
	wait_state(c, "base", "disabled");
	assert_int_equal(unlink(mark), 0);
	assert_int_equal(ctl(c, "enable", "events", "base", NULL), 0);
	assert_attached(c, "base", mark);
	stop(c);
}

/* --no-wait: add returns while the worker is held before its attach
 * (it could not have attached), and the route shows `starting` in
 * `route` and `routes` until the worker attaches. */
static void test_no_wait_returns_at_start(void **state)
{
	struct ctx *c = start("addnowait");
	const char *gate = make_gate(c);
	(void)state;

	assert_int_equal(ctl(c, "add", "--no-wait", "events", "w",
			     "shmr-test-worker", "--pre-attach-gate", gate,
			     NULL),
			 0);
	assert_int_equal(ctl(c, "routes", "events", "--json", NULL), 0);
	assert_non_null(strstr(c->out, "\"name\": \"w\""));
	assert_non_null(strstr(strstr(c->out, "\"name\": \"w\""),
			       "\"state\": \"starting\""));
	release_w(c, gate);
	stop(c);
}

/* A program that exits 1 before it attaches: add fails at once with a
 * line that names the route and says what happened, exit status 4 (the
 * route was added: it stays, restarted as any other); so does a replace
 * to such a program. */
static void test_exit_before_attach_fails(void **state)
{
	struct ctx *c = start("addexit");
	(void)state;

	assert_int_equal(ctl(c, "add", "events", "w", "shmr-test-worker",
			     "--pre-attach-exit", "1", NULL),
			 4);
	assert_non_null(strstr(c->out, "shmrctl: route events/w: its worker "
				       "exited before it attached"));
	assert_ptr_equal(strchr(c->out, '\n'), c->out + strlen(c->out) - 1);
	assert_string_not_equal(state_of(c, "w"), "none");

	assert_int_equal(ctl(c, "replace", "events", "base",
			     "shmr-test-worker", "--pre-attach-exit", "3",
			     NULL),
			 4);
	assert_non_null(strstr(c->out, "shmrctl: route events/base: its "
				       "worker exited before it attached"));
	stop(c);
}

/* A worker that does not attach within --wait: add gives up with exit
 * status 4 and says so, rather than hang; the worker is still starting
 * (and attaches once let go). */
static void test_not_attached_within_wait(void **state)
{
	struct ctx *c = start("addslow");
	const char *gate = make_gate(c);
	(void)state;

	assert_int_equal(ctl(c, "--wait", "1", "add", "events", "w",
			     "shmr-test-worker", "--pre-attach-gate", gate,
			     NULL),
			 4);
	assert_non_null(strstr(c->out, "shmrctl: route events/w: its worker "
				       "has not attached within --wait 1 s"));
	release_w(c, gate);
	stop(c);
}

/* The control plane dies (kill -9) while add waits for a worker held
 * before its attach: the add was done, so shmrctl says so and exits 4
 * (not 1, "no domain", as if nothing had been added).  The restarted
 * control plane adopts the route and its worker. */
static void test_control_lost_while_waiting(void **state)
{
	struct ctx *c = start("addlost");
	const char *gate = make_gate(c);
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock, "--wait",
			 "1", "add", "events", "w", "shmr-test-worker",
			 "--pre-attach-gate", (char *)gate, NULL };
	int pfd[2], status, fd;
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	(void)state;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	/* Added and started; shmrctl now looks at it every 10 ms. */
	wait_state(c, "w", "starting");
	assert_int_equal(shmr_test_app_kill_control(&c->cl.app), 0);
	while ((n = read(pfd[0], c->out + len, sizeof(c->out) - 1 - len)) > 0)
		len += (size_t)n;
	c->out[len] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 4);
	assert_non_null(strstr(c->out, "shmrctl: route events/w: done, but "
				       "the control plane went away"));
	assert_ptr_equal(strchr(c->out, '\n'), c->out + strlen(c->out) - 1);

	assert_int_equal(shmr_test_app_restart_control(&c->cl.app, 1), 0);
	assert_string_not_equal(state_of(c, "w"), "none");
	fd = open(gate, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	wait_state(c, "w", "running");
	stop(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_returns_once_attached),
		cmocka_unit_test(test_replace_and_enable_wait),
		cmocka_unit_test(test_no_wait_returns_at_start),
		cmocka_unit_test(test_exit_before_attach_fails),
		cmocka_unit_test(test_not_attached_within_wait),
		cmocka_unit_test(test_control_lost_while_waiting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
