#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmr/layout.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"

/*
 * Appliances started and not yet stopped.  A failed CMocka assertion jumps
 * out of the test, past its shmr_test_app_stop(); the exit handler stops
 * what is left, so a failing test fails fast instead of leaving daemons
 * that hold the test runner's pipes open.  Copies, not pointers: the
 * test's own struct may have lived on a stack that is gone.
 */
#define LIVE_MAX 8
static struct shmr_test_app live[LIVE_MAX];
static int exit_handler_set;

static void live_add(const struct shmr_test_app *app)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i].control == 0) {
			live[i] = *app;
			return;
		}
}

static void live_remove(pid_t control)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i].control == control)
			memset(&live[i], 0, sizeof(live[i]));
}

void shmr_test_app_set_control(struct shmr_test_app *app, pid_t control)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i].dir[0] && strcmp(live[i].dir, app->dir) == 0)
			live[i].control = control;
	app->control = control;
}

static void stop_leftovers(void)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i].control > 0) {
			struct shmr_test_app copy = live[i];
			shmr_test_app_stop(&copy);
		}
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

/*
 * Start shmr-control on @p app's configuration and run directory and wait
 * for its ready byte (a liveness bound only: start-up, adoption included,
 * takes well under a second).  @p app->control is the new pid, also
 * while it is coming up, so that a failure can still stop it.
 */
static int spawn_control(struct shmr_test_app *app, int quiet)
{
	char ready = 0, fdbuf[16];
	struct pollfd p;
	int pfd[2], ok;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	app->control = fork();
	if (app->control == 0) {
		int fd = dup(pfd[1]); /* without CLOEXEC */

		snprintf(fdbuf, sizeof(fdbuf), "%d", fd);
		execl(env_or("SHMR_CONTROL", "shmr-control"), "shmr-control",
		      "-c", app->conf, "--run-dir", app->dir, "--ready-fd",
		      fdbuf, quiet ? "--quiet" : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	ok = app->control > 0 && poll(&p, 1, 30000) == 1 &&
	     read(pfd[0], &ready, 1) == 1 && ready == 'R';
	close(pfd[0]);
	return ok ? 0 : -1;
}

int shmr_test_app_kill_control(struct shmr_test_app *app)
{
	pid_t pid = app->control;
	int st;

	if (pid <= 0 || kill(pid, SIGKILL) < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	shmr_test_app_set_control(app, 0);
	return 0;
}

int shmr_test_app_restart_control(struct shmr_test_app *app, int quiet)
{
	int rc = spawn_control(app, quiet);

	shmr_test_app_set_control(app, app->control);
	return rc;
}

int shmr_test_app_start(struct shmr_test_app *app, const char *tag,
			const char *conf_body)
{
	FILE *f;

	memset(app, 0, sizeof(*app));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(app->dir, sizeof(app->dir), "/tmp/shmr-test-%s-XXXXXX", tag);
	if (!mkdtemp(app->dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(app->domain, sizeof(app->domain), "t%d-%.16s", (int)getpid(),
		 tag);
	snprintf(app->conf, sizeof(app->conf), "%s/app.conf", app->dir);
	snprintf(app->sock, sizeof(app->sock), "%s/%s.sock", app->dir,
		 app->domain);
	f = fopen(app->conf, "w");
	if (!f)
		return -1;
	fprintf(f, "domain = \"%s\";\nrun_dir = \"%s\";\n%s\n", app->domain,
		app->dir, conf_body);
	fclose(f);

	if (spawn_control(app, 0) < 0) {
		fprintf(stderr, "test: appliance %s did not come up\n",
			app->domain);
		shmr_test_app_stop(app);
		return -1;
	}
	setenv(SHMR_ENV_RUN_DIR, app->dir, 1);
	if (!exit_handler_set) {
		atexit(stop_leftovers);
		exit_handler_set = 1;
	}
	live_add(app);
	return 0;
}

/* "  domain = ..." or "run_dir = ...": a line the test replaces. */
static int placement_line(const char *line)
{
	static const char *const keys[] = { "domain", "run_dir" };

	while (*line == ' ' || *line == '\t')
		line++;
	for (unsigned i = 0; i < 2; i++) {
		size_t n = strlen(keys[i]);
		const char *p = line + n;

		if (strncmp(line, keys[i], n) != 0)
			continue;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '=' || *p == ':')
			return 1;
	}
	return 0;
}

int shmr_test_app_start_file(struct shmr_test_app *app, const char *tag,
			     const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], *body = NULL;
	size_t len = 0;
	int rc;

	if (!f) {
		fprintf(stderr, "test: cannot read %s\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		char *b;

		if (placement_line(line))
			continue;
		b = realloc(body, len + n + 1);
		if (!b) {
			free(body);
			fclose(f);
			return -1;
		}
		body = b;
		memcpy(body + len, line, n + 1);
		len += n;
	}
	fclose(f);
	rc = shmr_test_app_start(app, tag, body ? body : "");
	free(body);
	return rc;
}

/* Children of ours (reparented orphans included) still alive. */
static int reap_all(int sig)
{
	int n = 0, status;
	pid_t pid;
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], buf[512];
	pid_t self = getpid();

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		long p = strtol(e->d_name, NULL, 10);
		FILE *f;
		if (p <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			char *rp = strrchr(buf, ')');
			char st;
			long ppid;
			if (rp && sscanf(rp + 2, "%c %ld", &st, &ppid) == 2 &&
			    ppid == self && st != 'Z') {
				n++;
				if (sig)
					kill((pid_t)p, sig);
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * The EAL runtime directory of the domain's dataplane (dpdk/shmr-DOMAIN
 * under $RUNTIME_DIRECTORY, else /var/run for root, else
 * $XDG_RUNTIME_DIR or /tmp, as EAL picks it), and the control plane's
 * host-wide lock file beside it (shmr-DOMAIN.lock), once every process is
 * gone: a dataplane or control plane that exits removes its own, but one
 * a test killed with SIGKILL cannot, and the suite leaves nothing behind.
 */
static void remove_eal_dir(const struct shmr_test_app *app)
{
	const char *base = shmr_proto_eal_base();
	char path[512], cmd[600], prefix[64];

	if (!app->domain[0])
		return;
	shmr_proto_eal_prefix(prefix, sizeof(prefix), app->domain);
	snprintf(path, sizeof(path), "%s/%s.lock", base, prefix);
	(void)unlink(path);
	snprintf(path, sizeof(path), "%s/dpdk/%s", base, prefix);
	if (access(path, F_OK) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "test: could not remove %s\n", path);
}

int shmr_test_app_stop(struct shmr_test_app *app)
{
	int status, left = 0;
	char cmd[600];

	if (app->control > 0) {
		live_remove(app->control);
		kill(app->control, SIGTERM);
		/* Liveness bound: the control plane stops its workers (grace
		 * 2 s by default) and the dataplane, then exits. */
		for (int i = 0; i < 300; i++) {
			if (waitpid(app->control, &status, WNOHANG) ==
			    app->control) {
				app->control = 0;
				break;
			}
			usleep(50000);
		}
		if (app->control > 0) {
			fprintf(stderr, "test: shmr-control did not stop\n");
			kill(app->control, SIGKILL);
			waitpid(app->control, &status, 0);
			left++;
		}
	}
	/* Everything it started must be gone already. */
	for (int i = 0; i < 20 && reap_all(0) > 0; i++)
		usleep(50000);
	left += reap_all(SIGKILL);
	while (waitpid(-1, &status, WNOHANG) > 0)
		;
	remove_eal_dir(app);
	if (app->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", app->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "test: could not remove %s\n", app->dir);
	}
	return left;
}

int shmr_test_ctl(const struct shmr_test_app *app, const char *req, char *ans,
		  size_t cap)
{
	int fd = shmr_proto_connect(app->sock), rc;

	if (fd < 0)
		return fd;
	rc = shmr_proto_request(fd, req, ans, cap, NULL);
	close(fd);
	return rc;
}

const char *shmr_test_write_conf(const char *dir, const char *name,
				 const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		abort();
	}
	return path;
}

int shmr_test_run_control(const char *conf, const char *run_dir,
			  const char *extra, char *out, size_t cap)
{
	char *argv[] = { getenv("SHMR_CONTROL"), "-c", (char *)conf,
			 "--run-dir", (char *)run_dir, (char *)extra, NULL };

	return shmr_test_run(argv, out, cap);
}

int shmr_test_map_sock(int sock, int writable, void **base, size_t *size)
{
	struct shmr_proto_attached a;
	int rc = shmr_proto_attach(sock, &a);

	if (rc < 0)
		return rc;
	if (writable) {
		char path[64];
		int rw;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", a.domain_fd);
		rw = open(path, O_RDWR | O_CLOEXEC);
		if (rw < 0) {
			rc = -errno;
			shmr_proto_attached_close(&a);
			return rc;
		}
		close(a.domain_fd);
		a.domain_fd = rw;
	}
	rc = shmr_proto_attached_map(&a, writable, base, size);
	shmr_proto_attached_close(&a);
	return rc;
}

int shmr_test_map(const struct shmr_test_app *app, int writable, void **base,
		  size_t *size)
{
	int sock = shmr_proto_connect(app->sock), rc;

	if (sock < 0)
		return sock;
	rc = shmr_test_map_sock(sock, writable, base, size);
	close(sock);
	return rc;
}

/* shmr_test_client_start() and _start_file(): the appliance from a
 * configuration body or from a file. */
static int client_start(struct shmr_test_client *c, const char *tag,
			const char *body, const char *path, int map)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if ((path ? shmr_test_app_start_file(&c->app, tag, path)
		  : shmr_test_app_start(&c->app, tag, body)) < 0)
		return -1;
	rc = shmr_attach_path(c->app.sock, &c->d);
	if (rc == 0)
		rc = shmr_endpoint_open(c->d, &c->ep);
	if (rc == 0 && map >= 0)
		rc = shmr_test_map(&c->app, map, &c->base, &c->size);
	if (rc < 0) {
		fprintf(stderr, "test client %s: %s\n", tag, shmr_strerror(rc));
		shmr_test_client_stop(c);
		return -1;
	}
	return 0;
}

int shmr_test_client_start(struct shmr_test_client *c, const char *tag,
			   const char *conf_body, int map)
{
	return client_start(c, tag, conf_body, NULL, map);
}

int shmr_test_client_start_file(struct shmr_test_client *c, const char *tag,
				const char *path, int map)
{
	return client_start(c, tag, NULL, path, map);
}

int shmr_test_example_path(const char *file, char *out, size_t cap)
{
	const char *env = getenv("SHMR_EXAMPLES_DIR");
	char src[PATH_MAX], *slash;

	if (env && *env)
		return snprintf(out, cap, "%s/%s", env, file) < (int)cap ? 0
									  : -1;
	/* tests/lib/this.c -> the tree's root (meson compiles with paths
	 * relative to the build directory). */
	snprintf(src, sizeof(src), "%s", __FILE__);
	for (int up = 0; up < 3; up++) {
		slash = strrchr(src, '/');
		if (!slash) {
			snprintf(src, sizeof(src), ".");
			break;
		}
		*slash = '\0';
	}
	return snprintf(out, cap, "%s/config/examples/%s", src, file) <
		       (int)cap
		       ? 0
		       : -1;
}

int shmr_test_client_stop(struct shmr_test_client *c)
{
	if (c->base)
		munmap(c->base, c->size);
	if (c->ep)
		shmr_endpoint_close(c->ep);
	if (c->d)
		shmr_detach(c->d);
	return shmr_test_app_stop(&c->app);
}

int shmr_test_route_pid(const struct shmr_test_app *app, const char *router,
			const char *route, struct shmr_pid *pid)
{
	char req[128], ans[4096];
	unsigned slot, gen;
	const char *p;
	int rc;

	snprintf(req, sizeof(req), "ROUTE %s %s", router, route);
	rc = shmr_test_ctl(app, req, ans, sizeof(ans));
	if (rc < 0)
		return rc;
	p = strstr(ans, " pid=");
	if (!p || sscanf(p, " pid=%u:%u", &slot, &gen) != 2)
		return -SHMR_E_NO_ROUTE;
	*pid = (struct shmr_pid){ slot, gen };
	return 0;
}

int shmr_test_pid_alive(pid_t pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	int live = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		live = rp[2] != 'Z' && rp[2] != 'X';
	fclose(f);
	return live;
}

unsigned shmr_test_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	unsigned port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(s, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

long long shmr_test_value(const char *ans, const char *key)
{
	size_t kl = strlen(key);
	const char *p = ans;

	while (p && *p) {
		if (strncmp(p, key, kl) == 0 && (p[kl] == ' ' || p[kl] == '\t'))
			return strtoll(p + kl + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int shmr_test_run(char *const argv[], char *out, size_t cap)
{
	int pfd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (cap > 1 && (n = read(pfd[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	if (cap)
		out[len] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int shmr_test_wait(int (*pred)(void *), void *arg, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (pred(arg))
			return 1;
		usleep(1000);
	}
	return pred(arg);
}

unsigned char *shmr_test_record_new(const char *tag, unsigned n, char *path,
				    size_t cap)
{
	void *rec;
	int fd;

	snprintf(path, cap, "/tmp/shmr-rec-%s-%d", tag, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 2 * (off_t)n) < 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rec = mmap(NULL, 2 * (size_t)n, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	close(fd);
	if (rec == MAP_FAILED) {
		perror(path);
		return NULL;
	}
	return rec;
}
