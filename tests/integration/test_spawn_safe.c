/*
 * Hole 6 of issue 11: shmr-control has threads (the admin path's among
 * them), so a child it forks may only make async-signal-safe calls until
 * it execs; setenv(), malloc() or hwloc's binders there can deadlock on a
 * lock another thread held at the fork.
 *
 * The real control plane runs with spawn_shim.so preloaded (argv[1]): the
 * shim writes the name of every environment setter, allocator call and
 * hwloc binder that a forked child makes before exec to a log file.  The
 * test starts workers (at start-up, and again after one is killed, when
 * the admin thread surely runs) and checks what an operator would: the
 * log is empty, the workers run and answer, each is pinned to the cpus
 * ROUTE shows for it (a configured list, and one the control plane chose),
 * and each has the environment it is promised: its own SHMR_ROUTE and
 * SHMR_ENDPOINT (not the control plane's stale ones) and everything else
 * the control plane inherited.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CALL_MS 10000
#define WAIT_MS 20000

static const char *shim_path;

struct ctx {
	struct shmr_test_client c;
	struct shmr_pid router;
	char log[300];
	int pinned_cpu; /* route a's configured cpu: one this test may use */
	long long old_a; /* route a's worker before it was killed */
};

/* The first cpu this process may run on (the control plane inherits our
 * binding, and a worker pinned outside it could not start). */
static int first_allowed_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return -1;
}

static int group_setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));
	char conf[1024];
	int rc;

	if (!x || !shim_path)
		return -1;
	x->pinned_cpu = first_allowed_cpu();
	if (x->pinned_cpu < 0)
		return -1;
	snprintf(conf, sizeof(conf),
		 "lcores = 1;\n"
		 "routers = ( { name = \"r\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"a\"; },\n"
		 "            { type = 2; route = \"b\"; } );\n"
		 "  routes = (\n"
		 "    { name = \"a\"; program = \"shmr-test-worker\";"
		 " args = [\"--expect-type\", \"1\"]; cpus = \"%d\"; },\n"
		 "    { name = \"b\"; program = \"shmr-test-worker\";"
		 " args = [\"--expect-type\", \"2\"]; cpus = \"\"; } );\n"
		 "} );\n",
		 x->pinned_cpu);
	snprintf(x->log, sizeof(x->log), "/tmp/shmr-spawn-shim-%d.log",
		 (int)getpid());
	unlink(x->log);
	/* The control plane's environment (it inherits ours): the shim, a
	 * variable every worker must inherit, and stale SHMR_* values a
	 * worker's own must replace. */
	setenv("LD_PRELOAD", shim_path, 1);
	setenv("SHMR_SPAWN_SHIM_LOG", x->log, 1);
	setenv("SHMR_SPAWN_INHERITED", "kept", 1);
	setenv("SHMR_ROUTE", "stale", 1);
	setenv("SHMR_ENDPOINT", "9999:9", 1);
	{
		/* Under ASan the preloaded shim comes before its runtime. */
		const char *a = getenv("ASAN_OPTIONS");
		char opts[512];

		snprintf(opts, sizeof(opts), "%s%sverify_asan_link_order=0",
			 a ? a : "", a && *a ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
	}
	rc = shmr_test_client_start(&x->c, "spawnsafe", conf, -1);
	unsetenv("LD_PRELOAD");
	unsetenv("SHMR_ROUTE");
	unsetenv("SHMR_ENDPOINT");
	if (rc < 0 || shmr_lookup(x->c.d, "r", &x->router) < 0)
		return -1;
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *x = *state;
	int left = shmr_test_client_stop(&x->c);

	unlink(x->log);
	free(x);
	return left == 0 ? 0 : -1;
}

/* What the shim logged: "" when no child broke the rule. */
static void shim_log(const struct ctx *x, char *buf, size_t cap)
{
	int fd = open(x->log, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	buf[0] = '\0';
	if (fd < 0) {
		assert_int_equal(errno, ENOENT);
		return;
	}
	n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

static void assert_no_unsafe_calls(const struct ctx *x)
{
	char log[1024];

	shim_log(x, log, sizeof(log));
	if (log[0])
		fail_msg("a child of shmr-control called, between fork and "
			 "exec:\n%s",
			 log);
}

/* Route @p name's os_pid and cpus (ROUTE r NAME). */
static long long route_of(struct ctx *x, const char *name, char *cpus,
			  size_t cap)
{
	char req[64], ans[SHMR_PROTO_MAX];
	const char *p;

	snprintf(req, sizeof(req), "ROUTE r %s", name);
	assert_int_equal(shmr_test_ctl(&x->c.app, req, ans, sizeof(ans)), 0);
	p = strstr(ans, " cpus=");
	assert_non_null(p);
	snprintf(cpus, cap, "%.*s", (int)strcspn(p + 6, " \n"), p + 6);
	p = strstr(ans, " os_pid=");
	assert_non_null(p);
	return atoll(p + 8);
}

/* A cpu list ("0", "2-3", "0,2-5") as a set. */
static void parse_list(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		assert_true(end != s && a >= 0 && a < CPU_SETSIZE);
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			assert_true(end != s && b >= a && b < CPU_SETSIZE);
		}
		for (long i = a; i <= b; i++)
			CPU_SET((int)i, set);
		s = *end == ',' ? end + 1 : end;
	}
}

/* /proc/PID/status's Cpus_allowed_list. */
static void allowed_of(long long pid, cpu_set_t *set)
{
	char path[64], buf[4096];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lld/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	p = strstr(buf, "Cpus_allowed_list:");
	assert_non_null(p);
	p += strlen("Cpus_allowed_list:");
	while (*p == ' ' || *p == '\t')
		p++;
	parse_list(p, set);
}

/* The value of @p name in /proc/PID/environ, and how often it occurs. */
static int environ_of(long long pid, const char *name, char *val, size_t cap)
{
	static char buf[65536];
	char path[64];
	size_t nl = strlen(name), len = 0;
	int fd, count = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%lld/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	val[0] = '\0';
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
		if (strncmp(buf + i, name, nl) == 0 && buf[i + nl] == '=') {
			if (count++ == 0)
				snprintf(val, cap, "%s", buf + i + nl + 1);
		}
	return count;
}

/* Route @p name's worker runs, answers, is pinned to the cpus ROUTE shows
 * for it (@p want_cpus when not NULL) and has its own environment. */
static long long check_worker(struct ctx *x, const char *name,
			      uint32_t type, const char *want_cpus)
{
	struct shmr_test_stats st;
	struct shmr_pid inbox;
	char cpus[64], val[64], ep[32];
	cpu_set_t want, got;
	long long pid = route_of(x, name, cpus, sizeof(cpus));

	assert_true(pid > 0);
	assert_true(shmr_test_pid_alive((pid_t)pid));
	assert_int_equal(shmr_call(x->c.ep, x->router, type, 0, "stats", 5,
				   &st, sizeof(st), CALL_MS),
			 (int)sizeof(st));
	assert_string_equal(st.tag, name);

	if (want_cpus)
		assert_string_equal(cpus, want_cpus);
	assert_string_not_equal(cpus, "any");
	parse_list(cpus, &want);
	allowed_of(pid, &got);
	if (!CPU_EQUAL(&want, &got))
		fail_msg("route %s: worker %lld runs on other cpus than %s",
			 name, pid, cpus);

	assert_int_equal(shmr_test_route_pid(&x->c.app, "r", name, &inbox), 0);
	snprintf(ep, sizeof(ep), "%" PRIu32 ":%" PRIu32, inbox.slot,
		 inbox.gen);
	assert_int_equal(environ_of(pid, "SHMR_ROUTE", val, sizeof(val)), 1);
	assert_string_equal(val, name);
	assert_int_equal(environ_of(pid, "SHMR_ENDPOINT", val, sizeof(val)),
			 1);
	assert_string_equal(val, ep);
	assert_int_equal(environ_of(pid, "SHMR_ROUTER", val, sizeof(val)), 1);
	assert_string_equal(val, "r");
	assert_int_equal(environ_of(pid, "SHMR_SOCKET", val, sizeof(val)), 1);
	assert_int_equal(environ_of(pid, "SHMR_DOMAIN", val, sizeof(val)), 1);
	assert_string_equal(val, x->c.app.domain);
	assert_int_equal(environ_of(pid, "SHMR_SPAWN_INHERITED", val,
				    sizeof(val)),
			 1);
	assert_string_equal(val, "kept");
	return pid;
}

/* The premise: the shim is in the control plane (else an empty log
 * proves nothing), and the control plane has threads. */
static void assert_premise(const struct ctx *x)
{
	char path[64], line[512];
	int found = 0, threads = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)x->c.app.control);
	f = fopen(path, "re");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "spawn_shim") != NULL;
	fclose(f);
	assert_true(found);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)x->c.app.control);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &threads) == 1)
			break;
	fclose(f);
	assert_true(threads >= 2);
}

static void test_start_up_children_are_async_signal_safe(void **state)
{
	struct ctx *x = *state;
	char want[16], ans[SHMR_PROTO_MAX];

	assert_premise(x);
	snprintf(want, sizeof(want), "%d", x->pinned_cpu);
	check_worker(x, "a", 1, want);
	check_worker(x, "b", 2, NULL);
	/* The dataplane is a child too (started with --domain-fd). */
	assert_int_equal(shmr_test_ctl(&x->c.app, "STATUS", ans, sizeof(ans)),
			 0);
	assert_true(shmr_test_pid_alive(
		(pid_t)shmr_test_value(ans, "dataplane_pid")));
	assert_no_unsafe_calls(x);
}

/* Route a has a worker other than x->old_a. */
static int a_restarted(void *arg)
{
	struct ctx *x = arg;
	char cpus[64];
	long long pid = route_of(x, "a", cpus, sizeof(cpus));

	return pid > 0 && pid != x->old_a;
}

/* A restart forks while the admin thread and everything else run. */
static void test_restarted_worker_is_async_signal_safe(void **state)
{
	struct ctx *x = *state;
	char cpus[64], want[16];

	snprintf(want, sizeof(want), "%d", x->pinned_cpu);
	unlink(x->log); /* what this restart's child does, alone */
	x->old_a = route_of(x, "a", cpus, sizeof(cpus));
	assert_true(x->old_a > 0);
	assert_int_equal(kill((pid_t)x->old_a, SIGKILL), 0);
	assert_true(shmr_test_wait(a_restarted, x, WAIT_MS));
	check_worker(x, "a", 1, want);
	assert_no_unsafe_calls(x);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_up_children_are_async_signal_safe),
		cmocka_unit_test(test_restarted_worker_is_async_signal_safe),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s SPAWN_SHIM.so\n", argv[0]);
		return 2;
	}
	shim_path = argv[1];
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
