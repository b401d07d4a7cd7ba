/*
 * The daemons' log lines (issue 14): every line of shmr-control and of
 * the dataplane it starts has a level, and a UTC timestamp, or under
 * systemd's journal (JOURNAL_STREAM naming their stderr) the <N>
 * priority prefix instead; --log-level and log_level set the threshold,
 * for both daemons.  shmr-control runs here as a process of the test's
 * own, its stderr in a file, so that the test reads every line it wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <poll.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_ring.h>

#include <shmr/domain.h>

#include "shmr_test_app.h"

enum journal { NO_JOURNAL, JOURNAL_IS_STDERR, JOURNAL_ELSEWHERE };

struct run {
	char dir[64], conf[128], log[128], domain[32];
	char text[32768];
};

/*
 * Take the route's worker's own lines out of @p text.  The daemons hand
 * it their stderr, but its lines are not theirs: CI once saw a worker
 * that started as the SIGTERM came say "shmr-test-worker: no such
 * domain".
 */
static void drop_worker_lines(char *text)
{
	static const char worker[] = "shmr-test-worker: ";
	char *out = text;

	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		n += p[n] == '\n';
		if (strncmp(p, worker, sizeof(worker) - 1) != 0) {
			memmove(out, p, n);
			out += n;
		}
		p += n;
	}
	*out = '\0';
}

/*
 * Run shmr-control on a one-route domain (@p extra_conf added to its
 * configuration) with the options @p opts (NULL-terminated), its stdout
 * and stderr in r->log, until it is ready; then SIGTERM it, wait for its
 * exit (0) and read the log, less the worker's lines, into r->text.
 */
static void run_control(struct run *r, const char *extra_conf,
			const char *const *opts, enum journal j)
{
	static int seq;
	char conf[1024];
	int ready[2], fd, st;
	char byte = 0;
	pid_t pid;

	snprintf(r->dir, sizeof(r->dir), "/tmp/shmr-test-logs-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->domain, sizeof(r->domain), "tl%d-%d", (int)getpid(), seq++);
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	snprintf(conf, sizeof(conf),
		 "domain = \"%s\";\nrun_dir = \"%s\";\nlcores = 1;\n%s\n"
		 "routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
		 "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; "
		 "} ); } );\n",
		 r->domain, r->dir, extra_conf);
	snprintf(r->conf, sizeof(r->conf), "%s",
		 shmr_test_write_conf(r->dir, "app.conf", conf));
	fd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[16], rfd[16], js[64];
		struct stat sb;
		int n = 0;

		fstat(fd, &sb);
		if (j == JOURNAL_IS_STDERR)
			snprintf(js, sizeof(js), "%ju:%ju", (uintmax_t)sb.st_dev,
				 (uintmax_t)sb.st_ino);
		else
			snprintf(js, sizeof(js), "%ju:%ju", (uintmax_t)sb.st_dev,
				 (uintmax_t)sb.st_ino + 1);
		if (j == NO_JOURNAL)
			unsetenv("JOURNAL_STREAM");
		else
			setenv("JOURNAL_STREAM", js, 1);
		dup2(fd, 1);
		dup2(fd, 2);
		close(ready[0]);
		snprintf(rfd, sizeof(rfd), "%d", ready[1]);
		argv[n++] = getenv("SHMR_CONTROL");
		argv[n++] = "-c";
		argv[n++] = r->conf;
		argv[n++] = "--ready-fd";
		argv[n++] = rfd;
		for (int i = 0; opts && opts[i] && n < 15; i++)
			argv[n++] = (char *)opts[i];
		argv[n] = NULL;
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	close(ready[1]);
	/* Liveness bound only: it is ready long before. */
	struct pollfd pfd = { .fd = ready[0], .events = POLLIN };

	assert_int_equal(poll(&pfd, 1, 60000), 1);
	assert_int_equal(read(ready[0], &byte, 1), 1);
	assert_int_equal(byte, 'R');
	close(ready[0]);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);

	FILE *f = fopen(r->log, "r");
	size_t len;

	assert_non_null(f);
	len = fread(r->text, 1, sizeof(r->text) - 1, f);
	r->text[len] = '\0';
	fclose(f);
	print_message("--- log ---\n%s-----------\n", r->text);
	drop_worker_lines(r->text);
	unlink(r->log);
	unlink(r->conf);
	rmdir(r->dir);
}

/* Every line of @p text matches @p pattern (POSIX ERE); at least one. */
static void every_line_matches(const char *text, const char *pattern)
{
	regex_t re;
	char line[2048];
	int lines = 0;

	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (regexec(&re, line, 0, NULL, 0) != 0)
			fail_msg("line \"%s\" does not match %s", line, pattern);
		lines++;
		p += n + (p[n] == '\n');
	}
	regfree(&re);
	assert_true(lines > 0);
}

#define STAMPED                                                            \
	"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z " \
	"(error|warning|info|debug) shmr-(control|dataplane): "

/* Both daemons said they are up, each line beginning with @p pre and the
 * daemon's name. */
static void both_up(const struct run *r, const char *pre)
{
	char want[128];

	snprintf(want, sizeof(want), "%sshmr-control: domain %s up", pre,
		 r->domain);
	assert_non_null(strstr(r->text, want));
	snprintf(want, sizeof(want), "%sshmr-dataplane: domain %s,", pre,
		 r->domain);
	assert_non_null(strstr(r->text, want));
}

/* Default: time, level, daemon on every line of both daemons. */
static void test_lines_have_time_and_level(void **state)
{
	struct run *r = malloc(sizeof(*r));

	(void)state;
	run_control(r, "", NULL, NO_JOURNAL);
	every_line_matches(r->text, STAMPED);
	both_up(r, " info ");
	/* The default threshold is info. */
	assert_null(strstr(r->text, " debug shmr-"));
	free(r);
}

/* JOURNAL_STREAM naming their stderr: "<N>" instead of time and level
 * (journald adds its own time); naming another file: as without it. */
static void test_journal_prefix(void **state)
{
	struct run *r = malloc(sizeof(*r));

	(void)state;
	run_control(r, "", NULL, JOURNAL_IS_STDERR);
	every_line_matches(r->text, "^<[3467]>shmr-(control|dataplane): ");
	both_up(r, "<6>");

	run_control(r, "", NULL, JOURNAL_ELSEWHERE);
	every_line_matches(r->text, STAMPED);
	free(r);
}

/* The threshold: --log-level for both daemons, the configuration's
 * log_level when no option says otherwise. */
static void test_threshold(void **state)
{
	struct run *r = malloc(sizeof(*r));
	const char *debug[] = { "--log-level", "debug", NULL };
	const char *error[] = { "--log-level=error", NULL };
	const char *info[] = { "--log-level", "info", NULL };

	(void)state;
	/* debug: the dataplane's table publications show. */
	run_control(r, "", debug, NO_JOURNAL);
	every_line_matches(r->text, STAMPED);
	assert_non_null(strstr(r->text, " debug shmr-dataplane: table version"));

	/* error: a clean run says nothing at all. */
	run_control(r, "", error, NO_JOURNAL);
	assert_string_equal(r->text, "");

	/* log_level = "warning" from the file: no info line either. */
	run_control(r, "log_level = \"warning\";", NULL, NO_JOURNAL);
	assert_string_equal(r->text, "");

	/* log_level = "debug", but --log-level info wins. */
	run_control(r, "log_level = \"debug\";", info, NO_JOURNAL);
	every_line_matches(r->text, STAMPED);
	assert_null(strstr(r->text, " debug shmr-"));
	assert_non_null(strstr(r->text, " info shmr-control: "));
	free(r);
}

/* A level that is none: refused, naming the option or the setting. */
static void test_bad_level(void **state)
{
	char dir[] = "/tmp/shmr-test-loglevel-XXXXXX", out[4096];
	const char *conf;

	(void)state;
	assert_non_null(mkdtemp(dir));
	conf = shmr_test_write_conf(dir, "ok.conf", "domain = \"tlbad\";\n");
	assert_int_equal(shmr_test_run_control(conf, dir, "--log-level=loud",
					       out, sizeof(out)),
			 2);
	assert_non_null(
		strstr(out, "--log-level: not error, warning, info or debug"));
	unlink(conf);
	conf = shmr_test_write_conf(dir, "bad.conf",
				    "domain = \"tlbad\";\nlog_level = \"loud\";\n");
	assert_int_equal(shmr_test_run_control(conf, dir, "--check", out,
					       sizeof(out)),
			 2);
	assert_non_null(strstr(
		out, "bad.conf:2: log_level: \"loud\" is not error, warning, info or debug"));
	unlink(conf);
	rmdir(dir);
}

static struct shmr_lcore_stats *g_st;
static uint64_t g_rx_want;

static int rx_reached(void *arg)
{
	(void)arg;
	return atomic_load_explicit(&g_st->rx, memory_order_relaxed) >=
	       g_rx_want;
}

/* Send @p n messages to @p to and wait until the lcore took them all. */
static void send_and_wait(struct shmr_test_client *c, struct shmr_pid to,
			  unsigned n)
{
	g_rx_want = atomic_load_explicit(&g_st->rx, memory_order_relaxed) + n;
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(shmr_send(c->ep, to, 1, 0, "x", 1), 0);
	assert_true(shmr_test_wait(rx_reached, NULL, 10000));
}

/* Our stderr back from the file @p fd (the daemons' lines, which they
 * inherited it for), and the file's text into @p text; the file goes. */
static void take_log(int fd, int saved, const char *log, char *text,
		     size_t cap)
{
	FILE *f;
	size_t len;

	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	len = fread(text, 1, cap - 1, f);
	text[len] = '\0';
	fclose(f);
	unlink(log);
	print_message("--- log ---\n%s-----------\n", text);
}

/* An endpoint whose inbound lane a peer corrupted is logged once as
 * quarantined; the messages sent to it afterwards, even more than a
 * second later (past the per-second rate limit), are only counted. */
static void test_quarantine_logged_once(void **state)
{
	struct shmr_test_client c;
	struct shmr_endpoint *victim;
	struct shmr_pid v;
	struct rte_ring *in;
	char log[] = "/tmp/shmr-test-logs-q-XXXXXX", text[65536], *p;
	int fd = mkstemp(log), saved = dup(2), lines = 0;
	uint32_t mask;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	/* The appliance's daemons inherit our stderr: the file. */
	dup2(fd, 2);
	assert_int_equal(shmr_test_client_start(
				 &c, "quarantine",
				 "lcores = 1;\n"
				 "routers = ( { name = \"r\"; behaviour = "
				 "\"round-robin\";\n  routes = ( { name = \"a\"; "
				 "program = \"shmr-test-worker\"; } ); } );\n",
				 0),
			 0);
	g_st = shmr_stats_of(c.base, 0);
	assert_int_equal(shmr_endpoint_open(c.d, &victim), 0);
	v = shmr_endpoint_pid(victim);
	in = shmr_lane_at(c.base, v.slot, 0);
	mask = in->mask;
	in->mask = 0xffffffffu; /* what a scribbling peer might do */
	send_and_wait(&c, v, 20);
	sleep(2);
	send_and_wait(&c, v, 20);
	in->mask = mask;
	shmr_endpoint_close(victim);
	assert_int_equal(shmr_test_client_stop(&c), 0);
	take_log(fd, saved, log, text, sizeof(text));
	for (p = text; (p = strstr(p, "quarantined")); p++)
		lines++;
	assert_int_equal(lines, 1);
	assert_null(strstr(text, "more like it"));
}

/* Parse "N more routee change(s) ... AddRoutee A, RemoveRoutee R,
 * AdjustPoolSize P" lines of @p text; the sum of their N into *n, and
 * each line's N must be A + R + P.  Returns how many there were. */
static int held_lines(const char *text, long *n, long *adds, long *removes)
{
	static const char key[] = " more routee change(s) in the second before";
	int lines = 0;

	*n = *adds = *removes = 0;
	for (const char *p = text; (p = strstr(p, key)); p++) {
		const char *b = p;
		long k, a, r, j;

		while (b > text && b[-1] != ' ')
			b--;
		assert_int_equal(sscanf(b, "%ld more routee change(s) in the "
					   "second before, not logged one by "
					   "one: AddRoutee %ld, RemoveRoutee "
					   "%ld, AdjustPoolSize %ld",
					&k, &a, &r, &j),
				 4);
		assert_int_equal(k, a + r + j);
		*n += k;
		*adds += a;
		*removes += r;
		lines++;
	}
	return lines;
}

/*
 * Fifty changes pipelined on one control connection (as a script or
 * `shmr-perf churn` sends them): each is answered, in order (the five
 * malformed ones with ERR where they stand), each valid one is applied
 * (the group's routees at the end are what the sequence leaves), and the
 * log says at most ten of them a second one by one and counts the rest
 * in one line when the second is over: the 45 changes add up.
 */
static void test_change_lines_counted(void **state)
{
	enum { N = 50 };
	static char req[N][64];
	struct mmsghdr mm[N];
	struct iovec iov[N];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct shmr_test_app app;
	char log[] = "/tmp/shmr-test-logs-c-XXXXXX", text[65536], ans[4096];
	int fd = mkstemp(log), saved = dup(2), sock, lines = 0, sent = 0;
	long held, adds, removes;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, 2);
	assert_int_equal(shmr_test_app_start(
				 &app, "changes",
				 "routers = ( { name = \"g\"; behaviour = "
				 "\"round-robin\";\n  routees = [ \"n.base\" ]; "
				 "keep_when_empty = true; } );\n"),
			 0);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(sock >= 0);
	assert_true(strlen(app.sock) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, app.sock, strlen(app.sock) + 1);
	assert_int_equal(connect(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	for (int i = 0; i < N; i++) {
		int n = i % 10 == 9
				? snprintf(req[i], sizeof(req[i]),
					   "ROUTEE_ADD g bad/name")
				: snprintf(req[i], sizeof(req[i]), "%s g n.%d",
					   i % 2 ? "ROUTEE_REMOVE"
						 : "ROUTEE_ADD",
					   i / 2);

		iov[i] = (struct iovec){ req[i], (size_t)n };
		mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
						       .msg_iovlen = 1 } };
	}
	while (sent < N) {
		int k = sendmmsg(sock, mm + sent, (unsigned)(N - sent), 0);

		assert_true(k > 0);
		sent += k;
	}
	for (int i = 0; i < N; i++) {
		ssize_t n = recv(sock, ans, sizeof(ans) - 1, 0);

		assert_true(n > 0);
		ans[n] = '\0';
		if (strncmp(ans, i % 10 == 9 ? "ERR" : "OK", i % 10 == 9 ? 3 : 2))
			fail_msg("answer %d: \"%s\"", i, ans);
	}
	close(sock);
	/* What stays: the configured routee and each n.K whose removal was
	 * the malformed request. */
	assert_int_equal(shmr_test_ctl(&app, "ROUTEES g", ans, sizeof(ans)), 0);
	print_message("routees: %s\n", ans);
	for (int k = 4; k < N / 2; k += 5) {
		char name[16];

		snprintf(name, sizeof(name), "n.%d\n", k);
		assert_non_null(strstr(ans, name));
	}
	assert_null(strstr(ans, "n.0\n"));
	assert_null(strstr(ans, "n.3\n"));
	/* The count is logged once its second is over. */
	usleep(1500 * 1000);
	assert_int_equal(shmr_test_app_stop(&app), 0);
	take_log(fd, saved, log, text, sizeof(text));
	for (const char *p = text; (p = strstr(p, "router g: ")); p++)
		if (strncmp(p + 10, "AddRoutee ", 10) == 0 ||
		    strncmp(p + 10, "RemoveRoutee ", 13) == 0)
			lines++;
	assert_true(held_lines(text, &held, &adds, &removes) >= 1);
	/* 25 adds and 20 removes were valid; ten a second are logged. */
	assert_int_equal(lines + held, 45);
	assert_true(lines >= 10);
	assert_true(adds <= 25 && removes <= 20 && adds + removes == held);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_have_time_and_level),
		cmocka_unit_test(test_journal_prefix),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_bad_level),
		cmocka_unit_test(test_quarantine_logged_once),
		cmocka_unit_test(test_change_lines_counted),
	};

	/* The daemons' orphans, if any, come back to us. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
