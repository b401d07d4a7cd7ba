/*
 * The payload arena's figures seen from outside (issue 15, "Visible"),
 * against the real appliance: a holder process allocates every buffer of
 * the 64K class and one of the 1M class, fails a sixth allocation, and is
 * killed with kill -9 holding them.  The figures that caused must show,
 * per class, in `shmrctl inspect --json`, in `shmrctl metrics` and in
 * /metrics fetched over real HTTP (checked against the registry by
 * check_counters.py, with a real Prometheus parser; telemetry leaves the
 * arena out, as the registry says), in `shmrctl metrics --json` and in
 * `shmrctl top` in an 80x24 tmux pane:
 * in use and free while it holds them, then reclaimed once the control
 * plane took them back, and the allocation failure all along.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/shmr.h>

#include "shmr_test_app.h"
#include "tmux_pane.h"

#define ROUTER "viz"

static const char conf_fmt[] =
	"lcores = 1;\n"
	"metrics_listen = \"127.0.0.1:%u\";\n"
	"arena = { classes = [ \"64K:4\", \"1M:2\" ]; };\n"
	"routers = ( { name = \"" ROUTER "\"; behaviour = \"round-robin\";\n"
	"  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; } ); } );\n";

struct ctx {
	struct shmr_test_client cl;
	unsigned port;
	pid_t holder;
	char me[32];
};

static long long inspect(struct ctx *c, const char *key)
{
	static char ans[1 << 17];

	assert_int_equal(shmr_test_ctl(&c->cl.app, "INSPECT " ROUTER, ans,
				       sizeof(ans)),
			 0);
	return shmr_test_value(ans, key);
}

/* The holder: its own endpoint; every 64K buffer, a failed fifth, one
 * 1M buffer; then it writes its endpoint's PID ("SLOT:GEN\n", or "n\n"
 * when something failed) to @p fd and waits to be killed. */
static void holder(const char *sock, int fd)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_buf b;
	char msg[32] = "n\n";
	int ok = shmr_attach_path(sock, &d) == 0 &&
		 shmr_endpoint_open(d, &ep) == 0;

	for (int i = 0; ok && i < 4; i++)
		ok = shmr_buf_alloc(ep, 64 * 1024, &b) == 0;
	ok = ok && shmr_buf_alloc(ep, 64 * 1024, &b) == -SHMR_E_NO_BUFFER;
	ok = ok && shmr_buf_alloc(ep, 1u << 20, &b) == 0;
	if (ok) {
		struct shmr_pid p = shmr_endpoint_pid(ep);

		snprintf(msg, sizeof(msg), "%u:%u\n", p.slot, p.gen);
	}
	(void)!write(fd, msg, strlen(msg));
	for (;;)
		pause();
}

static int group_setup(void **state)
{
	static struct ctx ctx;
	struct ctx *c = &ctx;
	struct shmr_pid p;
	char conf[1024];

	c->port = shmr_test_free_port();
	snprintf(conf, sizeof(conf), conf_fmt, c->port);
	if (!c->port || shmr_test_client_start(&c->cl, "arenaviz", conf, -1) < 0)
		return -1;
	p = shmr_endpoint_pid(c->cl.ep);
	snprintf(c->me, sizeof(c->me), "%u:%u", p.slot, p.gen);
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;

	return shmr_test_client_stop(&c->cl) == 0 ? 0 : -1;
}

/* `shmrctl -s SOCK @p verb [@p arg] [--json]` into @p path; it must
 * succeed. */
static void shmrctl_json_to(struct ctx *c, const char *path, char *verb,
			    char *arg, int json)
{
	static char out[1 << 18];
	char *argv[7] = { getenv("SHMRCTL"), "-s", c->cl.app.sock, verb };
	unsigned n = 4;
	FILE *f;

	if (arg)
		argv[n++] = arg;
	if (json)
		argv[n++] = "--json";
	argv[n] = NULL;
	assert_non_null(argv[0]);
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(out, f);
	fclose(f);
}

/* The python3 with prometheus_client runs @p script; a failure fails the
 * test, with what it said. */
static void python_ok(const char *what, char *script)
{
	static char out[1 << 16];
	char *argv[] = { getenv("SHMR_PYTHON"), "-c", script, NULL };

	assert_non_null(argv[0]);
	if (shmr_test_run(argv, out, sizeof(out)) != 0)
		fail_msg("%s: %s", what, out);
}

/* inspect --json and `shmrctl metrics` into files, then
 * check_counters.py: every registry line in them, in GET /metrics over
 * HTTP and (the domain's lines) in telemetry, and @p expect (KEY=N words)
 * in each; the client endpoints are @p eps.  And `shmrctl metrics --json`
 * has the arena's samples as `shmrctl metrics` has them, labelled class. */
static void check(struct ctx *c, const char *eps, const char *expect)
{
	char js[320], pm[320], mj[320], cmd[4096], script[2048];
	const char *py = getenv("SHMR_CHECK_COUNTERS"),
		   *def = getenv("SHMR_COUNTERS_DEF"),
		   *docs = getenv("SHMR_OBSERVABILITY_MD"),
		   *python = getenv("SHMR_PYTHON");

	assert_non_null(py);
	assert_non_null(def);
	assert_non_null(docs);
	assert_non_null(python);
	snprintf(js, sizeof(js), "%s/inspect.json", c->cl.app.dir);
	snprintf(pm, sizeof(pm), "%s/metrics.txt", c->cl.app.dir);
	snprintf(mj, sizeof(mj), "%s/metrics.json", c->cl.app.dir);
	shmrctl_json_to(c, js, "inspect", ROUTER, 1);
	shmrctl_json_to(c, pm, "metrics", NULL, 0);
	shmrctl_json_to(c, mj, "metrics", NULL, 1);
	snprintf(script, sizeof(script),
		 "import json\n"
		 "from prometheus_client.parser import "
		 "text_string_to_metric_families as parse\n"
		 "j = {(s['name'], s['labels'].get('class')): s['value'] "
		 "for s in json.load(open('%s')) "
		 "if s['name'].startswith('shmr_arena_')}\n"
		 "h = {(s.name, s.labels.get('class')): s.value "
		 "for f in parse(open('%s').read()) for s in f.samples "
		 "if s.name.startswith('shmr_arena_')}\n"
		 "assert j and j == h, (j, h)\n",
		 mj, pm);
	python_ok("metrics --json", script);
	snprintf(cmd, sizeof(cmd),
		 "'%s' '%s' '%s' '%s' '%s' '%s' http://127.0.0.1:%u/metrics "
		 "'shmr-%s' " ROUTER " a 1 %s %s",
		 python, py, def, docs, js, pm, c->port, c->cl.app.domain, eps,
		 expect);
	assert_int_equal(system(cmd), 0);
}

/* top's screen has the arena's header and @p row (a class's line, its
 * columns one space apart however wide). */
struct top_want {
	struct tmux_pane *pane;
	const char *rows[2];
};

static int squeezed_has(const char *screen, const char *row)
{
	static char sq[65536];
	size_t n = 0;

	for (const char *s = screen; *s && n + 1 < sizeof(sq); s++)
		if (!(*s == ' ' && n > 0 && sq[n - 1] == ' '))
			sq[n++] = *s;
	sq[n] = '\0';
	return strstr(sq, row) != NULL;
}

static int top_shows(void *arg)
{
	struct top_want *w = arg;

	if (tmux_pane_capture(w->pane) != 0 ||
	    !squeezed_has(w->pane->out,
			  "\nARENA BUFFERS FREE IN USE RECLAIMED ALLOC FAILED\n"))
		return 0;
	for (unsigned i = 0; i < 2; i++)
		if (!squeezed_has(w->pane->out, w->rows[i]))
			return 0;
	return 1;
}

/* top in 80x24 until it shows @p row64 and @p row1m (liveness bound);
 * it fits, and q quits it. */
static void top_check(struct ctx *c, const char *row64, const char *row1m)
{
	struct tmux_pane pane;
	struct top_want w = { &pane, { row64, row1m } };

	assert_int_equal(tmux_pane_start_top(&pane, &c->cl.app), 0);
	if (!tmux_pane_wait(top_shows, &w, 30)) {
		tmux_pane_capture(&pane);
		fail_msg("top's screen lacks '%s' or '%s':\n%s", row64, row1m,
			 pane.out);
	}
	print_message("%s", pane.out);
	tmux_pane_fits_and_quits(&pane);
}

static int reclaimed(void *arg)
{
	struct ctx *c = arg;

	return inspect(c, "shmr:arena:64K:reclaimed") == 4 &&
	       inspect(c, "shmr:arena:1M:reclaimed") == 1;
}

static void test_kill9_holder_shows_everywhere(void **state)
{
	struct ctx *c = *state;
	char expect[1024], eps[80], pid[32];
	int fd[2], st;
	ssize_t n;

	/* Nothing held yet. */
	assert_int_equal(inspect(c, "shmr:arena:64K:buffers"), 4);
	assert_int_equal(inspect(c, "shmr:arena:64K:free"), 4);
	assert_int_equal(inspect(c, "shmr:arena:1M:in_use"), 0);

	assert_int_equal(pipe(fd), 0);
	c->holder = fork();
	assert_true(c->holder >= 0);
	if (c->holder == 0) {
		close(fd[0]);
		holder(c->cl.app.sock, fd[1]);
	}
	close(fd[1]);
	n = read(fd[0], pid, sizeof(pid) - 1);
	close(fd[0]);
	assert_true(n > 0);
	pid[n] = '\0';
	if (pid[0] == 'n' || !strchr(pid, '\n'))
		fail_msg("the holder could not take its buffers: %s", pid);
	*strchr(pid, '\n') = '\0';

	/* Held: the class is empty, one failure; the holder's endpoint is
	 * a client too. */
	snprintf(eps, sizeof(eps), "%s,%s", c->me, pid);
	check(c, eps,
	      "shmr:arena:64K:buffers=4 shmr:arena:64K:in_use=4 "
	      "shmr:arena:64K:free=0 shmr:arena:64K:alloc_failures=1 "
	      "shmr:arena:64K:reclaimed=0 shmr:arena:1M:buffers=2 "
	      "shmr:arena:1M:in_use=1 shmr:arena:1M:free=1 "
	      "shmr:arena:1M:alloc_failures=0 shmr:arena:1M:reclaimed=0");
	top_check(c, "\n64K 4 0 4 0 1\n", "\n1M 2 1 1 0 0\n");

	/* kill -9: the control plane takes them back. */
	assert_int_equal(kill(c->holder, SIGKILL), 0);
	assert_int_equal(waitpid(c->holder, &st, 0), c->holder);
	assert_true(WIFSIGNALED(st));
	if (!shmr_test_wait(reclaimed, c, 20000))
		fail_msg("64K reclaimed %lld, 1M reclaimed %lld",
			 inspect(c, "shmr:arena:64K:reclaimed"),
			 inspect(c, "shmr:arena:1M:reclaimed"));
	snprintf(expect, sizeof(expect),
		 "shmr:arena:64K:in_use=0 shmr:arena:64K:free=4 "
		 "shmr:arena:64K:reclaimed=4 shmr:arena:64K:alloc_failures=1 "
		 "shmr:arena:1M:in_use=0 shmr:arena:1M:free=2 "
		 "shmr:arena:1M:reclaimed=1 shmr:arena:1M:alloc_failures=0");
	check(c, c->me, expect);
	top_check(c, "\n64K 4 4 0 4 1\n", "\n1M 2 2 0 1 0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill9_holder_shows_everywhere),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
