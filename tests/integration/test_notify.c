/*
 * shmr-control speaks sd_notify(3) as systemd hears it: the test binds a
 * unix datagram socket, names it in NOTIFY_SOCKET (as systemd does for a
 * Type=notify unit) and reads what arrives, with the sender's credentials
 * (SO_PASSCRED: systemd's NotifyAccess=main keeps only the main pid's):
 *   - STATUS=starting domain NAME, then READY=1 and STATUS=domain NAME
 *     up: ... once the domain is up, from shmr-control itself, and
 *     nothing from its dataplane or workers;
 *   - STOPPING=1 with a STATUS= line at SIGTERM;
 *   - after a kill -9, the restarted control plane says it is adopting,
 *     then READY=1 again;
 *   - with WATCHDOG_USEC set, WATCHDOG=1 keeps coming from the event
 *     loop; without it, never.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_test_app.h"

#define BODY                                                                  \
	"routers = ( { name = \"events\"; behaviour = \"hash\";\n"            \
	"  hash = [\"a\", \"b\"];\n"                                          \
	"  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; },\n"   \
	"             { name = \"b\"; program = \"shmr-test-worker\"; } ); } );\n"

static char dir[] = "/tmp/shmr-notify-XXXXXX";
static int sock = -1;

struct note {
	char text[1024];
	pid_t pid;
};

/* The next datagram, within @p ms (a liveness bound); 0, or -1 if none
 * came. */
static int next_note(struct note *n, int ms)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} c;
	struct iovec iov = { n->text, sizeof(n->text) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	struct pollfd p = { .fd = sock, .events = POLLIN };
	ssize_t len;

	if (poll(&p, 1, ms) != 1)
		return -1;
	len = recvmsg(sock, &mh, MSG_DONTWAIT);
	if (len < 0)
		return -1;
	n->text[len] = '\0';
	n->pid = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h;
	     h = CMSG_NXTHDR(&mh, h))
		if (h->cmsg_level == SOL_SOCKET &&
		    h->cmsg_type == SCM_CREDENTIALS) {
			struct ucred u;

			memcpy(&u, CMSG_DATA(h), sizeof(u));
			n->pid = u.pid;
		}
	return 0;
}

/* Is @p line one of the datagram's newline-separated assignments? */
static int has_line(const struct note *n, const char *line)
{
	size_t k = strlen(line);

	for (const char *p = n->text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == k && memcmp(p, line, k) == 0)
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* Read until a datagram holds @p line (5 s each: liveness); every one on
 * the way must come from @p pid and must not be READY, STOPPING or a
 * WATCHDOG unless @p line is.  The one found is left in @p n. */
static void expect(struct note *n, pid_t pid, const char *line)
{
	for (;;) {
		if (next_note(n, 5000) < 0)
			fail_msg("no \"%s\" came to NOTIFY_SOCKET", line);
		if (n->pid != pid)
			fail_msg("\"%s\" came from pid %d, not shmr-control "
				 "(%d)",
				 n->text, (int)n->pid, (int)pid);
		if (has_line(n, line))
			return;
		if (has_line(n, "READY=1") || has_line(n, "STOPPING=1") ||
		    has_line(n, "WATCHDOG=1"))
			fail_msg("\"%s\" before \"%s\"", n->text, line);
	}
}

/* Nothing is waiting on the socket. */
static void expect_nothing_queued(void)
{
	struct note n;

	if (next_note(&n, 0) == 0)
		fail_msg("unexpected \"%s\" from pid %d", n.text, (int)n.pid);
}

static void test_ready_status_stopping(void **state)
{
	struct shmr_test_app app;
	struct note n;
	char want[128];
	pid_t control;
	(void)state;

	unsetenv("WATCHDOG_USEC");
	assert_int_equal(shmr_test_app_start(&app, "notify", BODY), 0);
	control = app.control;
	/* Sent before the ready byte: already here. */
	snprintf(want, sizeof(want), "STATUS=starting domain %s", app.domain);
	expect(&n, control, want);
	expect(&n, control, "READY=1");
	snprintf(want, sizeof(want),
		 "STATUS=domain %s up: 1 router(s), 2 worker(s)", app.domain);
	assert_true(has_line(&n, want));
	/* No watchdog was asked for, and the workers and the dataplane
	 * (which inherit NOTIFY_SOCKET) say nothing. */
	assert_int_equal(next_note(&n, 300), -1);

	assert_int_equal(shmr_test_app_stop(&app), 0);
	expect(&n, control, "STOPPING=1");
	snprintf(want, sizeof(want), "STATUS=stopping domain %s", app.domain);
	assert_true(has_line(&n, want));
	expect_nothing_queued();
}

static void test_adopting_then_ready(void **state)
{
	struct shmr_test_app app;
	struct note n;
	char want[128];
	(void)state;

	unsetenv("WATCHDOG_USEC");
	assert_int_equal(shmr_test_app_start(&app, "notadopt", BODY), 0);
	expect(&n, app.control, "READY=1");
	assert_int_equal(shmr_test_app_kill_control(&app), 0);
	assert_int_equal(shmr_test_app_restart_control(&app, 0), 0);
	snprintf(want, sizeof(want), "STATUS=adopting domain %s", app.domain);
	expect(&n, app.control, want);
	expect(&n, app.control, "READY=1");
	snprintf(want, sizeof(want), "domain %s up (adopted)", app.domain);
	/* How many workers it adopted depends on how far they were when
	 * their control plane was killed (adopt.c): not this test's. */
	if (!strstr(n.text, want) || !strstr(n.text, " worker(s)"))
		fail_msg("READY after adoption: \"%s\"", n.text);
	(void)shmr_test_app_stop(&app);
	expect(&n, n.pid, "STOPPING=1");
}

static void test_watchdog(void **state)
{
	struct shmr_test_app app;
	struct note n;
	pid_t control;
	(void)state;

	/* 200 ms: a ping every 100 ms or so; three prove it repeats. */
	setenv("WATCHDOG_USEC", "200000", 1);
	unsetenv("WATCHDOG_PID");
	assert_int_equal(shmr_test_app_start(&app, "notwd", BODY), 0);
	unsetenv("WATCHDOG_USEC");
	control = app.control;
	expect(&n, control, "READY=1");
	for (int i = 0; i < 3; i++) {
		if (next_note(&n, 5000) < 0)
			fail_msg("WATCHDOG=1 number %d did not come", i + 1);
		assert_int_equal(n.pid, control);
		assert_true(has_line(&n, "WATCHDOG=1"));
	}
	assert_int_equal(shmr_test_app_stop(&app), 0);
	expect(&n, control, "STOPPING=1");
	/* None after STOPPING=1: the loop is gone. */
	expect_nothing_queued();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ready_status_stopping),
		cmocka_unit_test(test_adopting_then_ready),
		cmocka_unit_test(test_watchdog),
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1, rc;
	char cmd[300];

	if (!mkdtemp(dir))
		return 1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		perror("notify socket");
		return 1;
	}
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	rc = cmocka_run_group_tests_name("notify", tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
