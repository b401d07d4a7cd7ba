/*
 * Roles on the control socket (issue 11, hole 3), with real users and
 * groups that the test makes (groupadd/useradd at the start, userdel/
 * groupdel at the end, whatever happened) and the real daemons:
 *
 *   - a stranger (in neither group) is refused at connect;
 *   - a socket_group member may read (status, routes, route, inspect,
 *     dlq list) and use the appliance through libshmr (attach, open,
 *     register, lookup, send, call), and every verb that changes it is
 *     refused with the reason, as one line (shmrctl exit 1): add,
 *     replace, remove, disable, enable, respawn, kill, dlq replay, stop;
 *     `add R x /usr/bin/touch FILE` runs nothing; the router's Kill and
 *     PoisonPill sent as messages are refused too (GetRoutees is not);
 *   - an admin_group member may change it (add, remove);
 *   - a program the configuration does not list is refused to everyone,
 *     root included, however its path is spelt ("../");
 *   - a member's connection over max_connections_per_user is refused with
 *     the reason while the owner still gets in; its endpoints and names
 *     over max_endpoints_per_user too;
 *   - a connection that does not attach and does not complete a request
 *     within idle_timeout_ms is closed, while an attached client (whose
 *     connection is its lifelong link) stays served.
 *
 * The clients run as those users: fork, setgroups/setgid/setuid, then
 * shmrctl (exec) or libshmr (in the child).  Needs root: skipped (77)
 * otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CAP 4          /* max_connections_per_user */
#define IDLE_MS 3000   /* idle_timeout_ms */
#define WAIT_MS 30000  /* liveness bounds */

struct who {
	char name[32];
	uid_t uid;
	gid_t gid;
};

/* The users and groups this run made (names carry our pid: the suite's
 * other tests and runs never share them). */
static char grp_users[32], grp_admins[32];
static struct who member, admin, stranger;
static int made_users, made_groups;

static struct shmr_test_app app;
static pid_t child; /* the client child running now, for on_term() */
static char worker_path[512]; /* shmr-test-worker, absolute */
static char touch_file[300];

static int run_quiet(char *const argv[])
{
	char out[1024];

	return shmr_test_run(argv, out, sizeof(out));
}

static void cleanup_accounts(void)
{
	const struct who *u[] = { &member, &admin, &stranger };

	for (int i = 0; i < made_users; i++) {
		/* -f: even while a process of it still runs (a client
		 * child that a failed test left behind). */
		char *argv[] = { "userdel", "-f", (char *)u[i]->name, NULL };

		run_quiet(argv);
	}
	made_users = 0;
	if (made_groups >= 2) {
		char *argv[] = { "groupdel", grp_admins, NULL };

		run_quiet(argv);
	}
	if (made_groups >= 1) {
		char *argv[] = { "groupdel", grp_users, NULL };

		run_quiet(argv);
	}
	made_groups = 0;
}

static int make_user(struct who *u, const char *name, const char *groups)
{
	struct passwd *pw;

	snprintf(u->name, sizeof(u->name), "%s", name);
	{
		char *with[] = { "useradd", "-M", "-N", "-s", "/bin/false",
				 "-G", (char *)groups, u->name, NULL };
		char *without[] = { "useradd", "-M", "-N", "-s", "/bin/false",
				    u->name, NULL };

		if (run_quiet(groups ? with : without) != 0)
			return -1;
	}
	made_users++;
	pw = getpwnam(u->name);
	if (!pw)
		return -1;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	return 0;
}

static int make_accounts(void)
{
	char both[80], n[32];
	int id = (int)getpid();

	snprintf(grp_users, sizeof(grp_users), "shmrtu%d", id);
	snprintf(grp_admins, sizeof(grp_admins), "shmrta%d", id);
	{
		char *argv[] = { "groupadd", grp_users, NULL };

		if (run_quiet(argv) != 0)
			return -1;
		made_groups = 1;
	}
	{
		char *argv[] = { "groupadd", grp_admins, NULL };

		if (run_quiet(argv) != 0)
			return -1;
		made_groups = 2;
	}
	snprintf(both, sizeof(both), "%s,%s", grp_users, grp_admins);
	snprintf(n, sizeof(n), "shmrm%d", id);
	if (make_user(&member, n, grp_users) < 0)
		return -1;
	snprintf(n, sizeof(n), "shmra%d", id);
	if (make_user(&admin, n, both) < 0)
		return -1;
	snprintf(n, sizeof(n), "shmrs%d", id);
	return make_user(&stranger, n, NULL);
}

/* In a child: become @p u, its supplementary groups included. */
static void become(const struct who *u)
{
	gid_t groups[64];
	int n = 64;

	if (getgrouplist(u->name, u->gid, groups, &n) < 0 ||
	    setgroups((size_t)n, groups) < 0 || setgid(u->gid) < 0 ||
	    setuid(u->uid) < 0) {
		perror("become");
		_exit(120);
	}
}

/* shmrctl -s SOCK ARGS... as @p u (NULL: as ourselves, the owner);
 * stdout+stderr in @p out; returns its exit status. */
static int ctl_as(const struct who *u, char *out, size_t cap, ...)
{
	char *argv[24];
	int n = 0, fds[2];
	size_t len = 0;
	va_list ap;
	pid_t pid;
	int st;

	argv[n++] = getenv("SHMRCTL");
	argv[n++] = "-s";
	argv[n++] = app.sock;
	argv[n++] = "--wait";
	argv[n++] = "0";
	va_start(ap, cap);
	while (n < 23 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(pipe(fds), 0);
	pid = child = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		if (u)
			become(u);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t k = read(fds[0], out + len, cap - 1 - len);

		if (k <= 0)
			break;
		len += (size_t)k;
		if (len == cap - 1)
			break;
	}
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Run @p fn in a child as @p u; its exit status (0: all went well; else
 * the step that failed, printed by the child). */
static int as_user(const struct who *u, int (*fn)(void *), void *arg)
{
	pid_t pid = child = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		become(u);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Find @p prog in PATH: its absolute path into @p out. */
static int which(const char *prog, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	char buf[4096], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path ? path : "");
	for (char *d = strtok_r(buf, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/%s", d, prog);
		if (access(out, X_OK) == 0 && out[0] == '/')
			return 0;
	}
	return -1;
}

static int group_setup(void **state)
{
	char conf[2048];
	(void)state;

	if (which("shmr-test-worker", worker_path, sizeof(worker_path)) < 0) {
		fprintf(stderr, "test_roles: shmr-test-worker not in PATH\n");
		return -1;
	}
	if (make_accounts() < 0) {
		fprintf(stderr, "test_roles: could not make users/groups\n");
		return -1;
	}
	snprintf(touch_file, sizeof(touch_file), "/tmp/shmr-roles-%d.touched",
		 (int)getpid());
	unlink(touch_file);
	snprintf(conf, sizeof(conf),
		 "socket_group = \"%s\";\nadmin_group = \"%s\";\n"
		 "max_connections_per_user = %d;\nidle_timeout_ms = %d;\n"
		 "max_endpoints_per_user = %d;\n"
		 /* a program only ever added at run time */
		 "programs = ( \"/bin/true\" );\n"
		 "routers = ( { name = \"r\"; behaviour = \"type\";\n"
		 "  types = ( { type = 1; route = \"w\"; },\n"
		 "            { type = 2; route = \"x\"; } );\n"
		 "  routes = ( { name = \"w\"; program = \"shmr-test-worker\";"
		 " args = [ \"--expect-type\", \"1\" ]; } );\n"
		 "} );\n",
		 grp_users, grp_admins, CAP, IDLE_MS, CAP);
	if (shmr_test_app_start(&app, "roles", conf) < 0)
		return -1;
	/* The run directory is mkdtemp's 0700: let the users reach the
	 * socket, whose own mode (0660, socket_group) is what is tested. */
	if (chmod(app.dir, 0755) < 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	int left = shmr_test_app_stop(&app);
	(void)state;

	cleanup_accounts();
	unlink(touch_file);
	return left == 0 ? 0 : -1;
}

/* The one line shmrctl prints for a refusal of @p verb to a member. */
static void want_role_refusal(const char *out, const char *verb)
{
	char want[300];

	snprintf(want, sizeof(want),
		 "shmrctl: %s: needs the owner (uid 0), root or admin_group "
		 "'%s'\n",
		 verb, grp_admins);
	assert_string_equal(out, want);
}

static long long status_value(const char *key)
{
	char ans[SHMR_PROTO_MAX];

	assert_int_equal(shmr_test_ctl(&app, "STATUS", ans, sizeof(ans)), 0);
	return shmr_test_value(ans + 3, key);
}

/* Route @p route's live worker (ROUTE's os_pid), -1 if no such route. */
static long long worker_of(const char *route)
{
	char ans[SHMR_PROTO_MAX], req[64];
	const char *p;

	snprintf(req, sizeof(req), "ROUTE r %s", route);
	if (shmr_test_ctl(&app, req, ans, sizeof(ans)) < 0)
		return -1;
	p = strstr(ans, " os_pid=");
	return p ? atoll(p + 8) : -1;
}

/* ------------------------------------------------------------------ */

static void test_stranger_is_refused(void **state)
{
	char out[4096];
	(void)state;

	assert_int_equal(ctl_as(&stranger, out, sizeof(out), "status", NULL),
			 1);
	assert_non_null(strstr(out, "permission denied"));
	assert_int_equal(ctl_as(&stranger, out, sizeof(out), "add", "r", "x",
				"/usr/bin/touch", touch_file, NULL),
			 1);
	assert_int_equal(access(touch_file, F_OK), -1);
}

static void test_member_may_read(void **state)
{
	char out[8192];
	(void)state;

	assert_int_equal(ctl_as(&member, out, sizeof(out), "status", NULL), 0);
	assert_non_null(strstr(out, "\ndomain "));
	assert_int_equal(ctl_as(&member, out, sizeof(out), "routes", "r",
				NULL),
			 0);
	assert_non_null(strstr(out, "\nw "));
	assert_int_equal(ctl_as(&member, out, sizeof(out), "route", "r", "w",
				NULL),
			 0);
	assert_non_null(strstr(out, " running "));
	assert_int_equal(ctl_as(&member, out, sizeof(out), "inspect", "r",
				NULL),
			 0);
	assert_int_equal(ctl_as(&member, out, sizeof(out), "dlq", "list", "r",
				NULL),
			 0);
}

/* As a member, through libshmr: attach, open, register, look up, send,
 * call; route mutators refused.  0, or the step that failed. */
static int member_uses(void *arg)
{
	struct shmr_test_stats st;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid r;
	int rc;
	(void)arg;

	if ((rc = shmr_attach_path(app.sock, &d)) < 0) {
		fprintf(stderr, "attach: %s\n", shmr_strerror(rc));
		return 1;
	}
	if ((rc = shmr_endpoint_open(d, &ep)) < 0) {
		fprintf(stderr, "open: %s\n", shmr_strerror(rc));
		return 2;
	}
	if ((rc = shmr_register(ep, "member-inbox")) < 0) {
		fprintf(stderr, "register: %s\n", shmr_strerror(rc));
		return 3;
	}
	if (shmr_lookup(d, "r", &r) < 0)
		return 4;
	if ((rc = shmr_send(ep, r, 1, 0, "x", 1)) < 0) {
		fprintf(stderr, "send: %s\n", shmr_strerror(rc));
		return 5;
	}
	rc = shmr_call(ep, r, 1, 0, "x", 1, &st, sizeof(st), 10000);
	if (rc != (int)sizeof(st)) {
		fprintf(stderr, "call: %d %s\n", rc, shmr_strerror(rc));
		return 6;
	}
	rc = shmr_route_add(d, "r", "x", "shmr-test-worker", NULL, 0, NULL);
	if (rc != -SHMR_E_NOT_ALLOWED) {
		fprintf(stderr, "route_add: %d\n", rc);
		return 7;
	}
	if (shmr_route_remove(d, "r", "w") != -SHMR_E_NOT_ALLOWED)
		return 8;
	/* The router's management messages: reading its routees is
	 * allowed, stopping or restarting it is not. */
	{
		char ans[256];

		rc = shmr_call_prio(ep, r, SHMR_PRIO_HIGH,
				    SHMR_TYPE_GET_ROUTEES, 0, NULL, 0, ans,
				    sizeof(ans), 10000);
		if (rc < 0) {
			fprintf(stderr, "GetRoutees: %s\n", shmr_strerror(rc));
			return 9;
		}
		rc = shmr_call_prio(ep, r, SHMR_PRIO_HIGH, SHMR_TYPE_KILL, 0,
				    NULL, 0, ans, sizeof(ans), 10000);
		if (rc != -SHMR_E_NOT_ALLOWED) {
			fprintf(stderr, "Kill: %d\n", rc);
			return 10;
		}
		rc = shmr_call_prio(ep, r, SHMR_PRIO_HIGH,
				    SHMR_TYPE_POISON_PILL, 0, NULL, 0, ans,
				    sizeof(ans), 10000);
		if (rc != -SHMR_E_NOT_ALLOWED) {
			fprintf(stderr, "PoisonPill: %d\n", rc);
			return 11;
		}
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}

static void test_member_may_use_the_appliance(void **state)
{
	long long before = worker_of("w");
	char ans[SHMR_PROTO_MAX];
	(void)state;

	assert_true(before > 0);
	assert_int_equal(as_user(&member, member_uses, NULL), 0);
	/* Its refused Kill and PoisonPill did nothing: the router runs,
	 * its worker is the same process. */
	assert_int_equal(shmr_test_ctl(&app, "ROUTE r w", ans, sizeof(ans)),
			 0);
	assert_non_null(strstr(ans, "state=running"));
	assert_int_equal(worker_of("w"), before);
}

static void test_member_may_not_change_it(void **state)
{
	char out[4096];
	long long refused = status_value("requests_refused");
	long long pid, before = worker_of("w");
	(void)state;

	assert_true(before > 0);
	/* The reported hole: a member ran a program as the control
	 * plane's user. */
	assert_int_equal(ctl_as(&member, out, sizeof(out), "add", "r", "t",
				"/usr/bin/touch", touch_file, NULL),
			 1);
	want_role_refusal(out, "add");
	assert_int_equal(access(touch_file, F_OK), -1);
	assert_int_equal(worker_of("t"), -1);
	assert_int_equal(ctl_as(&member, out, sizeof(out), "add", "r", "x",
				"shmr-test-worker", NULL),
			 1);
	want_role_refusal(out, "add");
	/* Every other verb that changes the appliance: shmrctl's words,
	 * and the verb the refusal names. */
	static const struct {
		const char *verb, *a, *b, *c, *d;
	} others[] = {
		{ "replace", "replace", "r", "w", "shmr-test-worker" },
		{ "remove", "remove", "r", "w", NULL },
		{ "disable", "disable", "r", "w", NULL },
		{ "disable --drain", "disable", "--drain", "r", "w" },
		{ "enable", "enable", "r", "w", NULL },
		{ "respawn", "respawn", "r", "w", NULL },
		{ "routee add", "routee", "add", "r", "w" },
		{ "routee remove", "routee", "remove", "r", "w" },
		{ "pool", "pool", "r", "+1", NULL },
		{ "kill", "kill", "r", NULL, NULL },
		{ "poison", "poison", "r", NULL, NULL },
		{ "dlq replay", "dlq", "replay", "r", NULL },
		{ "stop", "stop", NULL, NULL, NULL },
	};
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		assert_int_equal(ctl_as(&member, out, sizeof(out), others[i].a,
					others[i].b, others[i].c, others[i].d,
					NULL),
				 1);
		want_role_refusal(out, others[i].verb);
	}

	/* Nothing happened: same worker, no route x, appliance up,
	 * refusals counted. */
	assert_int_equal(worker_of("w"), before);
	assert_int_equal(worker_of("x"), -1);
	assert_true(shmr_test_pid_alive(app.control));
	pid = status_value("requests_refused");
	assert_true(pid - refused >= 15);
}

static void test_admin_group_may_change_it(void **state)
{
	char out[4096];
	struct shmr_pid x;
	(void)state;

	assert_int_equal(ctl_as(&admin, out, sizeof(out), "add", "r", "x",
				"shmr-test-worker", "--expect-type", "2", NULL),
			 0);
	assert_int_equal(shmr_test_route_pid(&app, "r", "x", &x), 0);
	assert_int_equal(ctl_as(&admin, out, sizeof(out), "remove", "r", "x",
				NULL),
			 0);
}

static void test_unlisted_program_refused_to_everyone(void **state)
{
	char out[4096], trick[1200], dir[512], same[1200];
	(void)state;

	/* Root, the owner, and an admin alike. */
	assert_int_equal(ctl_as(NULL, out, sizeof(out), "add", "r", "x",
				"/usr/bin/touch", touch_file, NULL),
			 1);
	assert_string_equal(out, "shmrctl: add: program /usr/bin/touch is not "
				 "in the configuration's programs\n");
	assert_int_equal(ctl_as(&admin, out, sizeof(out), "replace", "r", "w",
				"/usr/bin/touch", touch_file, NULL),
			 1);
	assert_string_equal(out, "shmrctl: replace: program /usr/bin/touch "
				 "is not in the configuration's programs\n");
	/* A listed directory's "../" leads elsewhere: refused. */
	snprintf(dir, sizeof(dir), "%s", worker_path);
	*strrchr(dir, '/') = '\0';
	snprintf(trick, sizeof(trick), "%s/../../../../../../../usr/bin/touch",
		 dir);
	assert_int_equal(ctl_as(NULL, out, sizeof(out), "add", "r", "x", trick,
				touch_file, NULL),
			 1);
	assert_non_null(strstr(out, "is not in the configuration's programs"));
	assert_int_equal(access(touch_file, F_OK), -1);
	/* Another spelling of a configured program is that program. */
	snprintf(same, sizeof(same), "%s/../workers/./shmr-test-worker", dir);
	assert_int_equal(ctl_as(NULL, out, sizeof(out), "add", "r", "x", same,
				"--expect-type", "2", NULL),
			 0);
	assert_int_equal(ctl_as(NULL, out, sizeof(out), "remove", "r", "x",
				NULL),
			 0);
	/* The allow-list's own entry (it exits at once: removed again). */
	assert_int_equal(ctl_as(NULL, out, sizeof(out), "add", "r", "y",
				"/bin/true", NULL),
			 0);
	assert_int_equal(ctl_as(NULL, out, sizeof(out), "remove", "r", "y",
				NULL),
			 0);
}

/* As a member: CAP connections, each served; one more is refused with
 * why; then (told by the parent through @p arg's pipes) all closed, and
 * a new one is served again. */
struct cap_pipes {
	int ready[2], go[2];
};

static int member_fills_cap(void *arg)
{
	struct cap_pipes *p = arg;
	char ans[SHMR_PROTO_MAX], want[200], b = 'x';
	int fds[CAP + 1], rc;

	for (int i = 0; i < CAP; i++) {
		/* The member's earlier connections (shmrctl's) may still
		 * be closing: their ends reach the control plane in its own
		 * time (a bounded retry). */
		for (int tries = 0;; tries++) {
			fds[i] = shmr_proto_connect(app.sock);
			rc = fds[i] < 0 ? fds[i]
					: shmr_proto_request(fds[i], "STATUS",
							     ans, sizeof(ans),
							     NULL);
			if (rc == 0)
				break;
			if (fds[i] >= 0)
				close(fds[i]);
			if (tries == 300) {
				fprintf(stderr, "connection %d not served: "
						"%s\n",
					i, ans);
				return 1;
			}
			usleep(100 * 1000);
		}
	}
	fds[CAP] = shmr_proto_connect(app.sock);
	if (fds[CAP] < 0)
		return 2;
	rc = shmr_proto_request(fds[CAP], "STATUS", ans, sizeof(ans), NULL);
	snprintf(want, sizeof(want),
		 "ERR %d too many connections of uid %u "
		 "(max_connections_per_user = %d)",
		 SHMR_E_NOT_ALLOWED, (unsigned)getuid(), CAP);
	if (rc != -SHMR_E_NOT_ALLOWED || strcmp(ans, want) != 0) {
		fprintf(stderr, "over the cap: %d \"%s\"\n", rc, ans);
		return 3;
	}
	/* The parent checks that the owner still gets in. */
	if (write(p->ready[1], &b, 1) != 1 || read(p->go[0], &b, 1) != 1)
		return 4;
	for (int i = 0; i <= CAP; i++)
		close(fds[i]);
	/* The control plane sees the closes in its own time (bounded). */
	for (int tries = 0; tries < 300; tries++) {
		int fd = shmr_proto_connect(app.sock);

		rc = fd < 0 ? fd
			    : shmr_proto_request(fd, "STATUS", ans,
						 sizeof(ans), NULL);
		if (fd >= 0)
			close(fd);
		if (rc == 0)
			return 0;
		usleep(100 * 1000);
	}
	return 5;
}

static void test_connections_capped_per_user(void **state)
{
	struct cap_pipes p;
	long long refused = status_value("connections_refused");
	char ans[SHMR_PROTO_MAX], b = 'g';
	pid_t pid;
	int st;
	(void)state;

	assert_int_equal(pipe(p.ready), 0);
	assert_int_equal(pipe(p.go), 0);
	pid = child = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		become(&member);
		_exit(member_fills_cap(&p));
	}
	close(p.ready[1]);
	close(p.go[0]);
	if (read(p.ready[0], &b, 1) == 1) {
		/* The member is at its cap: the owner gets in. */
		assert_int_equal(shmr_test_ctl(&app, "STATUS", ans,
					       sizeof(ans)),
				 0);
		assert_true(shmr_test_value(ans + 3, "connections_refused") >
			    refused);
		assert_int_equal(write(p.go[1], &b, 1), 1);
	}
	close(p.ready[0]);
	close(p.go[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* As a member: CAP endpoints and CAP names, then one more of each is
 * refused; a freed endpoint can be opened again.  0, or the step. */
static int member_fills_endpoints(void *arg)
{
	struct shmr_endpoint *eps[CAP + 1];
	struct shmr_domain *d;
	char name[32];
	int rc;
	(void)arg;

	if (shmr_attach_path(app.sock, &d) < 0)
		return 1;
	for (int i = 0; i < CAP; i++)
		if ((rc = shmr_endpoint_open(d, &eps[i])) < 0) {
			fprintf(stderr, "open %d: %s\n", i, shmr_strerror(rc));
			return 2;
		}
	rc = shmr_endpoint_open(d, &eps[CAP]);
	if (rc != -SHMR_E_NOT_ALLOWED) {
		fprintf(stderr, "open over the share: %d\n", rc);
		return 3;
	}
	for (int i = 0; i <= CAP; i++) {
		snprintf(name, sizeof(name), "member-%d", i);
		rc = shmr_register(eps[0], name);
		if (i < CAP && rc < 0) {
			fprintf(stderr, "register %d: %s\n", i,
				shmr_strerror(rc));
			return 4;
		}
		if (i == CAP && rc != -SHMR_E_NOT_ALLOWED) {
			fprintf(stderr, "register over the share: %d\n", rc);
			return 5;
		}
	}
	shmr_endpoint_close(eps[CAP - 1]);
	if ((rc = shmr_endpoint_open(d, &eps[CAP - 1])) < 0) {
		fprintf(stderr, "open after a close: %s\n", shmr_strerror(rc));
		return 6;
	}
	for (int i = 0; i < CAP; i++)
		shmr_endpoint_close(eps[i]);
	shmr_detach(d);
	return 0;
}

/* One user cannot take the domain's endpoints or registry: its share is
 * max_endpoints_per_user (the owner is not limited). */
static void test_endpoints_and_names_capped_per_user(void **state)
{
	struct shmr_domain *d;
	struct shmr_endpoint *eps[CAP + 1];
	(void)state;

	assert_int_equal(as_user(&member, member_fills_endpoints, NULL), 0);
	/* The owner opens more than a user's share. */
	assert_int_equal(shmr_attach_path(app.sock, &d), 0);
	for (int i = 0; i <= CAP; i++)
		assert_int_equal(shmr_endpoint_open(d, &eps[i]), 0);
	for (int i = 0; i <= CAP; i++)
		shmr_endpoint_close(eps[i]);
	shmr_detach(d);
}

/* As a member: an attached client that, once told (after the idle
 * timeout closed another connection), still gets its requests served on
 * its connection. */
static int member_stays_attached(void *arg)
{
	int *pipes = arg; /* ready[1], go[0] */
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	char b = 'r';
	int rc;

	if (shmr_attach_path(app.sock, &d) < 0 ||
	    shmr_endpoint_open(d, &ep) < 0)
		return 1;
	if (write(pipes[0], &b, 1) != 1 || read(pipes[1], &b, 1) != 1)
		return 2;
	/* Served on the same connection: its endpoint is still its own
	 * (a dropped connection would have freed it). */
	rc = shmr_register(ep, "still-here");
	if (rc < 0) {
		fprintf(stderr, "register after the idle timeout: %s\n",
			shmr_strerror(rc));
		return 3;
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}

/* Is the connection @p fd closed by the control plane (EOF)? */
static int closed_by_peer(void *arg)
{
	int fd = *(int *)arg;
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDHUP };
	char buf[64];

	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	if (pfd.revents & (POLLRDHUP | POLLHUP))
		return 1;
	return recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 0;
}

static void test_idle_connections_time_out(void **state)
{
	long long idle = status_value("idle_closed");
	char ans[SHMR_PROTO_MAX], b = 'g';
	int ready[2], go[2], pipes[2], silent, stalled, st;
	pid_t pid;
	(void)state;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = child = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		pipes[0] = ready[1];
		pipes[1] = go[0];
		become(&member);
		_exit(member_stays_attached(pipes));
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &b, 1), 1);

	/* One connection that never sends, one that sends a request and
	 * then stalls. */
	silent = shmr_proto_connect(app.sock);
	assert_true(silent >= 0);
	stalled = shmr_proto_connect(app.sock);
	assert_true(stalled >= 0);
	assert_int_equal(shmr_proto_request(stalled, "STATUS", ans,
					    sizeof(ans), NULL),
			 0);
	assert_true(shmr_test_wait(closed_by_peer, &silent, WAIT_MS));
	assert_true(shmr_test_wait(closed_by_peer, &stalled, WAIT_MS));
	close(silent);
	close(stalled);
	assert_true(status_value("idle_closed") - idle >= 2);

	/* The attached client, idle all along, is still served. */
	assert_int_equal(write(go[1], &b, 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(ready[0]);
	close(go[1]);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Stopped from outside (meson's timeout): the client child and the
 * appliance go, then the accounts. */
static void on_term(int sig)
{
	(void)sig;
	if (child > 0)
		kill(child, SIGKILL);
	if (app.control > 0)
		shmr_test_app_stop(&app);
	cleanup_accounts();
	_exit(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stranger_is_refused),
		cmocka_unit_test(test_member_may_read),
		cmocka_unit_test(test_member_may_use_the_appliance),
		cmocka_unit_test(test_member_may_not_change_it),
		cmocka_unit_test(test_admin_group_may_change_it),
		cmocka_unit_test(test_unlisted_program_refused_to_everyone),
		cmocka_unit_test(test_connections_capped_per_user),
		cmocka_unit_test(test_endpoints_and_names_capped_per_user),
		cmocka_unit_test(test_idle_connections_time_out),
	};
	int rc;

	if (geteuid() != 0) {
		fprintf(stderr, "test_roles: skipped: needs root (it makes "
				"users and groups with useradd/groupadd)\n");
		return 77;
	}
	{
		char path[512];

		if (which("useradd", path, sizeof(path)) < 0 ||
		    which("groupadd", path, sizeof(path)) < 0) {
			fprintf(stderr, "test_roles: skipped: no useradd or "
					"groupadd in PATH\n");
			return 77;
		}
	}
	/* Accounts go even if a test fails, or meson's timeout stops us. */
	atexit(cleanup_accounts);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	cleanup_accounts();
	return rc;
}
