/*
 * A client of the real shmr-control when the control plane dies: what
 * libshmr and shmrctl guarantee (the contract in shm/proto.c's essay and
 * at struct shmr_domain in shmr.h).
 *
 *   - A request made while the control plane is down returns after the
 *     bounded reconnect time (SHMR_RECONNECT_MS, small here), with a clear
 *     error; reads of the domain (shmr_lookup()) need no control plane.
 *   - A request in flight when the control plane is killed returns
 *     SHMR_E_CONTROL_LOST at once when it changes something; it never
 *     hangs.
 *   - shmrctl waits for a restarting control plane: a read caught by the
 *     death, or made while it is down, succeeds once it is back; a change
 *     caught by the death exits 3 with one line.
 *   - SHMR_RECONNECT_MS=0 turns reconnecting off.
 *
 * A request is caught "in flight" deterministically: the control plane is
 * stopped (SIGSTOP), the request sent (its connection is queued, its
 * packet waits unread), the sender seen blocked in recvmsg, and only then
 * the control plane killed (SIGKILL).  The restart is a new shmr-control
 * on the same configuration and run directory, as systemd's Restart=
 * would start it.  Whether the restarted control plane adopts the domain
 * is not this test's business: a request after the restart is allowed to
 * succeed (adopted) or to fail with SHMR_E_NO_DOMAIN (a new domain, never
 * taken for ours), never to hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto_client.h>

#include "shmr_test_app.h"

#define CONF                                                                   \
	"stop_grace_ms = 1000;\n"                                              \
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"             \
	"  types = ( { type = 1; route = \"work\"; } );\n"                     \
	"  routes = ( { name = \"work\"; program = \"shmr-test-worker\"; } );"  \
	" } );\n"

struct rig {
	struct shmr_test_client c;
	int alive;     /* c.app.control runs */
};

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void rig_start(struct rig *r, const char *tag, const char *reconnect)
{
	memset(r, 0, sizeof(*r));
	setenv(SHMR_ENV_RECONNECT_MS, reconnect, 1); /* read at attach */
	assert_int_equal(shmr_test_client_start(&r->c, tag, CONF, -1), 0);
	r->alive = 1;
}

/* kill -9 the control plane and wait until it has exited (its dataplane
 * and worker go on: the restarted one adopts them). */
static void kill_control(struct rig *r)
{
	assert_true(r->alive);
	assert_int_equal(shmr_test_app_kill_control(&r->c.app), 0);
	r->alive = 0;
}

/* A new shmr-control on the same configuration and run directory. */
static void restart_control(struct rig *r)
{
	assert_false(r->alive);
	assert_int_equal(shmr_test_app_restart_control(&r->c.app, 1), 0);
	r->alive = 1;
}

/* Close the client, stop the control plane (one runs: a dataplane and
 * workers that outlived a dead one are its to stop), leave nothing. */
static void rig_stop(struct rig *r)
{
	if (!r->alive)
		restart_control(r);
	shmr_endpoint_close(r->c.ep);
	shmr_detach(r->c.d);
	assert_int_equal(shmr_test_app_stop(&r->c.app), 0);
	unsetenv(SHMR_ENV_RECONNECT_MS);
}

/* ---- a request in flight ------------------------------------------------ */

/* Non-zero once thread @p tid of this process is blocked in recvmsg (the
 * answer it waits for); -1 when that cannot be read here. */
static int in_recvmsg(pid_t pid, pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == SYS_recvmsg;
}

/* Wait (bounded) until @p tid is blocked in recvmsg: the request went
 * out.  Where the kernel does not say, give it a moment. */
static void wait_in_recvmsg(pid_t pid, pid_t tid)
{
	for (int i = 0; i < 500; i++) { /* liveness bound: 5 s */
		int k = in_recvmsg(pid, tid);

		if (k == 1)
			return;
		if (k < 0) {
			usleep(300000);
			return;
		}
		usleep(10000);
	}
	fail_msg("the request never went out");
}

struct flight {
	struct shmr_endpoint *ep;
	_Atomic pid_t tid;
	int rc;
};

static void *register_late(void *arg)
{
	struct flight *f = arg;

	atomic_store(&f->tid, (pid_t)syscall(SYS_gettid));
	f->rc = shmr_register(f->ep, "late");
	return NULL;
}

/* shmrctl ARGS... in the background, its output to @p out; its pid. */
static pid_t shmrctl_start(struct rig *r, const char *out,
			   const char *const *args)
{
	char *argv[16];
	int n = 0, fd;
	pid_t pid;

	argv[n++] = getenv("SHMRCTL");
	argv[n++] = "-s";
	argv[n++] = r->c.app.sock;
	while (*args && n < 15)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Its exit status (bounded wait: a hang fails the test). */
static int shmrctl_wait(pid_t pid, int ms)
{
	int st;

	for (int i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fail_msg("shmrctl hung");
	return -1;
}

static const char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* ---- tests -------------------------------------------------------------- */

/* (a) While the control plane is down: lookups answer from the domain; a
 * control-socket request returns SHMR_E_NO_DOMAIN after the reconnect
 * bound; shmrctl says "no domain" after --wait. */
static void down_requests_are_bounded(void **state)
{
	struct rig r;
	struct shmr_pid me, found;
	struct timespec t0;
	char out[600], *argv[8];
	long ms;

	(void)state;
	rig_start(&r, "rc-down", "400");
	assert_int_equal(shmr_register(r.c.ep, "me"), 0);
	me = shmr_endpoint_pid(r.c.ep);
	kill_control(&r);

	assert_int_equal(shmr_lookup(r.c.d, "me", &found), 0);
	assert_int_equal(found.slot, me.slot);
	assert_int_equal(found.gen, me.gen);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(shmr_register(r.c.ep, "other"), -SHMR_E_NO_DOMAIN);
	ms = ms_since(&t0);
	assert_true(ms >= 390);
	assert_true(ms < 5000); /* liveness bound on a shared machine */

	argv[0] = getenv("SHMRCTL");
	argv[1] = "-s";
	argv[2] = r.c.app.sock;
	argv[3] = "--wait";
	argv[4] = "0.4";
	argv[5] = "status";
	argv[6] = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 1);
	ms = ms_since(&t0);
	assert_non_null(strstr(out, "no domain"));
	assert_true(ms >= 390);
	assert_true(ms < 5000);
	rig_stop(&r);
}

/* (b) A change in flight when the control plane is killed returns
 * SHMR_E_CONTROL_LOST at once (never sent again, never a hang); the next
 * request after a restart reconnects and returns, whatever the new
 * control plane serves. */
static void in_flight_change_is_lost(void **state)
{
	struct flight f = { 0 };
	struct timespec t0;
	struct rig r;
	pthread_t th;
	int rc;

	(void)state;
	rig_start(&r, "rc-flight", "3000");
	f.ep = r.c.ep;
	assert_int_equal(kill(r.c.app.control, SIGSTOP), 0);
	assert_int_equal(pthread_create(&th, NULL, register_late, &f), 0);
	while (!atomic_load(&f.tid))
		usleep(1000);
	wait_in_recvmsg(getpid(), atomic_load(&f.tid));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill_control(&r);
	pthread_join(th, NULL);
	assert_int_equal(f.rc, -SHMR_E_CONTROL_LOST);
	assert_true(ms_since(&t0) < 3000); /* not the reconnect bound */

	restart_control(&r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = shmr_register(r.c.ep, "after");
	assert_true(rc == 0 || rc == -SHMR_E_NO_DOMAIN);
	assert_true(ms_since(&t0) < 5000);
	rig_stop(&r);
}

/* (c) shmrctl and a restarting control plane: a read caught by the
 * death, and one made while it is down, succeed once it is back; a change
 * caught by the death exits 3 at once with its one line. */
static void shmrctl_waits_for_the_restart(void **state)
{
	static const char *const status[] = { "--wait", "30", "status",
					      NULL };
	static const char *const change[] = { "--wait", "30", "kill",
					      "events", NULL };
	struct timespec t0;
	char out[400];
	struct rig r;
	pid_t ctl;

	(void)state;
	rig_start(&r, "rc-ctl", "3000");
	snprintf(out, sizeof(out), "%s/ctl.out", r.c.app.dir);

	/* A read in flight. */
	assert_int_equal(kill(r.c.app.control, SIGSTOP), 0);
	ctl = shmrctl_start(&r, out, status);
	wait_in_recvmsg(ctl, ctl);
	kill_control(&r);
	restart_control(&r);
	assert_int_equal(shmrctl_wait(ctl, 30000), 0);
	assert_non_null(strstr(slurp(out), "dataplane_pid"));

	/* A read made while it is down. */
	kill_control(&r);
	ctl = shmrctl_start(&r, out, status);
	usleep(200000); /* not needed for correctness: let it wait a bit */
	restart_control(&r);
	assert_int_equal(shmrctl_wait(ctl, 30000), 0);
	assert_non_null(strstr(slurp(out), "dataplane_pid"));

	/* A change in flight. */
	assert_int_equal(kill(r.c.app.control, SIGSTOP), 0);
	ctl = shmrctl_start(&r, out, change);
	wait_in_recvmsg(ctl, ctl);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill_control(&r);
	assert_int_equal(shmrctl_wait(ctl, 30000), 3);
	assert_true(ms_since(&t0) < 10000); /* not --wait 30 */
	assert_string_equal(slurp(out),
			    "shmrctl: control plane went away during the "
			    "request; its outcome is unknown\n");
	rig_stop(&r);
}

/* (d) SHMR_RECONNECT_MS=0: a request on the dead connection fails at
 * once, and still does with a control plane back at the path. */
static void reconnect_off(void **state)
{
	struct timespec t0;
	struct rig r;

	(void)state;
	rig_start(&r, "rc-off", "0");
	kill_control(&r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(shmr_register(r.c.ep, "x"), -SHMR_E_NO_DOMAIN);
	assert_true(ms_since(&t0) < 1000);
	restart_control(&r);
	assert_int_equal(shmr_register(r.c.ep, "x"), -SHMR_E_NO_DOMAIN);
	assert_int_equal(shmr_route_disable(r.c.d, "events", "work"),
			 -SHMR_E_NO_DOMAIN);
	rig_stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(down_requests_are_bounded),
		cmocka_unit_test(in_flight_change_is_lost),
		cmocka_unit_test(shmrctl_waits_for_the_restart),
		cmocka_unit_test(reconnect_off),
	};

	return cmocka_run_group_tests_name("reconnect", tests, NULL, NULL);
}
