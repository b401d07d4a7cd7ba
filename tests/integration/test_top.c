/*
 * shmrctl top against the real daemons: in an 80x24 terminal (tmux, as
 * over ssh) it shows every router and route of the appliance and their
 * lcore, and `q` ends it with exit status 0; piped, it prints one
 * aligned table per interval instead of drawing.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_test_app.h"
#include "tmux_pane.h"

#define CONF                                                                   \
	"routers = (\n"                                                        \
	"  { name = \"events\"; behaviour = \"type\";\n"                       \
	"    types = ( { type = 1; route = \"alpha\"; } );\n"                  \
	"    routes = ( { name = \"alpha\"; program = \"shmr-test-worker\"; },\n" \
	"               { name = \"bravo\"; program = \"shmr-test-worker\"; } ); },\n" \
	"  { name = \"pool\"; behaviour = \"round-robin\";\n"                  \
	"    pool = { size = 2; program = \"shmr-test-worker\"; }; } );\n"

static const char *const shown[] = { "events", "  alpha", "  bravo", "pool",
				     "  pool:0", "  pool:1", "LCORE" };

struct ctx {
	struct shmr_test_app app;
	struct tmux_pane pane;
	char out[65536];
};

/* Every row of @p shown at the start of a line of c->out. */
static int all_shown(struct ctx *c)
{
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		char want[64];

		snprintf(want, sizeof(want), "\n%s ", shown[i]);
		if (!strstr(c->out, want))
			return 0;
	}
	return 1;
}

static int screen_complete(void *arg)
{
	struct ctx *c = arg;

	if (tmux_pane_capture(&c->pane) != 0)
		return 0;
	memcpy(c->out, c->pane.out, sizeof(c->out));
	return all_shown(c);
}

static void test_top_in_a_terminal_shows_every_route_and_q_quits(void **state)
{
	struct ctx c;
	(void)state;

	memset(&c, 0, sizeof(c));
	assert_int_equal(shmr_test_app_start(&c.app, "top", CONF), 0);
	assert_int_equal(tmux_pane_start_top(&c.pane, &c.app), 0);
	/* Liveness bound only: the first frame comes at once. */
	if (!tmux_pane_wait(screen_complete, &c, 30)) {
		tmux_pane_capture(&c.pane);
		fail_msg("top's screen lacks a route:\n%s", c.pane.out);
	}
	/* It fits: 24 lines, none wider than 80; q quits with 0. */
	tmux_pane_fits_and_quits(&c.pane);
	assert_int_equal(shmr_test_app_stop(&c.app), 0);
}

/* Piped: one aligned table per interval, every route in each, until
 * SIGINT, which ends it with exit status 0. */
static void test_top_piped_prints_a_table_per_interval(void **state)
{
	struct ctx c;
	unsigned tables = 0;
	size_t len = 0;
	int pfd[2], status;
	struct timespec t0, t;
	pid_t pid;
	(void)state;

	memset(&c, 0, sizeof(c));
	assert_int_equal(shmr_test_app_start(&c.app, "toppipe", CONF), 0);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(getenv("SHMRCTL"), "shmrctl", "-s", c.app.sock, "top",
		      "--interval", "0.2", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	close(pfd[1]);
	/* Read until the second table is complete (its LCORE rows follow
	 * its header); a liveness bound only. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (tables < 3 && len + 1 < sizeof(c.out)) {
		ssize_t n = read(pfd[0], c.out + len, sizeof(c.out) - 1 - len);

		assert_true(n > 0);
		len += (size_t)n;
		c.out[len] = '\0';
		tables = 0;
		for (const char *p = c.out; (p = strstr(p, "ROUTER/ROUTE "));
		     p++)
			tables++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		assert_true(t.tv_sec - t0.tv_sec < 60);
	}
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(pfd[0]);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The first two tables, each with every route. */
	{
		char *third = strstr(strstr(strstr(c.out, "ROUTER/ROUTE ") + 1,
					    "ROUTER/ROUTE ") + 1,
				     "ROUTER/ROUTE ");
		char *second;

		*third = '\0';
		second = strstr(strstr(c.out, "ROUTER/ROUTE ") + 1,
				"ROUTER/ROUTE ");
		assert_true(all_shown(&c));
		memmove(c.out, second - 1, strlen(second - 1) + 1);
		assert_true(all_shown(&c));
	}
	/* No terminal control sequences. */
	assert_null(strchr(c.out, '\033'));
	/* The routes' sojourn p99 has its column (the domain stamps). */
	assert_non_null(strstr(c.out, " QUEUED RESTART"));
	assert_non_null(strstr(c.out, " P99 US\n"));
	assert_int_equal(shmr_test_app_stop(&c.app), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_in_a_terminal_shows_every_route_and_q_quits),
		cmocka_unit_test(test_top_piped_prints_a_table_per_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
