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
	char tmux_sock[300], tmux_conf[300], rc_file[300];
	char out[65536];
};

/* tmux -S SOCK -f CONF ARGS... (NULL-terminated, up to 12); its exit
 * status, output in c->out. */
static int tmux(struct ctx *c, ...)
{
	char *argv[20] = { "tmux", "-S", c->tmux_sock, "-f", c->tmux_conf };
	unsigned n = 5;
	va_list ap;

	va_start(ap, c);
	while (n < 18 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return shmr_test_run(argv, c->out, sizeof(c->out));
}

/* tmux new-session: its output to /dev/null, since the tmux server it
 * starts keeps what it inherited open (a pipe would never end).  Its
 * exit status. */
static int tmux_start(struct ctx *c, const char *cmd)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("tmux", "tmux", "-S", c->tmux_sock, "-f", c->tmux_conf,
		       "new-session", "-d", "-s", "top", "-x", "80", "-y",
		       "24", cmd, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

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

	return tmux(c, "capture-pane", "-p", "-t", "top", NULL) == 0 &&
	       all_shown(c);
}

/* top has exited: the shell around it wrote its exit status.  (tmux
 * 3.3a does not always record a dead pane's status, so the shell in the
 * pane reports it.) */
static int top_exited(void *arg)
{
	struct ctx *c = arg;
	FILE *f = fopen(c->rc_file, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(c->out, 1, sizeof(c->out) - 1, f);
	fclose(f);
	c->out[n] = '\0';
	return strchr(c->out, '\n') != NULL;
}

/* Until @p pred, for at most @p seconds of wall time (each try runs
 * tmux: shmr_test_wait's count of 1 ms tries would be far longer). */
static int wait_for(int (*pred)(void *), struct ctx *c, int seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (pred(c))
			return 1;
		usleep(50 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < seconds);
	return pred(c);
}

static void test_top_in_a_terminal_shows_every_route_and_q_quits(void **state)
{
	struct ctx c;
	char cmd[2048];
	FILE *f;
	(void)state;

	memset(&c, 0, sizeof(c));
	assert_int_equal(shmr_test_app_start(&c.app, "top", CONF), 0);
	snprintf(c.tmux_sock, sizeof(c.tmux_sock), "%s/tmux.sock", c.app.dir);
	snprintf(c.tmux_conf, sizeof(c.tmux_conf), "%s/tmux.conf", c.app.dir);
	/* The pane stays after top exits (its last screen can be read). */
	f = fopen(c.tmux_conf, "w");
	assert_non_null(f);
	fputs("set -g remain-on-exit on\n", f);
	fclose(f);
	setenv("TERM", "xterm", 0);
	snprintf(c.rc_file, sizeof(c.rc_file), "%s/top.rc", c.app.dir);
	snprintf(cmd, sizeof(cmd),
		 "%s -s %s top; echo $? > %s.tmp && mv %s.tmp %s",
		 getenv("SHMRCTL"), c.app.sock, c.rc_file, c.rc_file,
		 c.rc_file);
	assert_int_equal(tmux_start(&c, cmd), 0);
	/* Liveness bound only: the first frame comes at once. */
	if (!wait_for(screen_complete, &c, 30)) {
		tmux(&c, "capture-pane", "-p", "-t", "top", NULL);
		fail_msg("top's screen lacks a route:\n%s", c.out);
	}
	/* It fits: 24 lines, none wider than 80. */
	for (const char *l = c.out; *l;) {
		size_t w = strcspn(l, "\n");

		assert_true(w <= 80);
		l += w + (l[w] == '\n');
	}
	assert_int_equal(tmux(&c, "send-keys", "-t", "top", "q", NULL), 0);
	assert_true(wait_for(top_exited, &c, 30));
	assert_string_equal(c.out, "0\n");
	tmux(&c, "kill-server", NULL);
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
