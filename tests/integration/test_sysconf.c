/*
 * The configuration in its place: shmr-control given no -c runs the
 * installed $sysconfdir/shmr/shmr.conf when it exists (here named by
 * $SHMR_CONFIG, the documented override of that path), else the embedded
 * default, and says which in its first log line; shmrctl given no -d finds
 * the same configuration's domain, and its run_dir, so the two agree
 * without a word from the operator.
 *
 * usage: test_sysconf SYSCONF_PATH (the path meson compiled in)
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_test_app.h"

static const char *sysconf_path;

static int run2(const char *a0, const char *a1, const char *a2,
		const char *a3, char *out, size_t cap)
{
	char *argv[] = { (char *)a0, (char *)a1, (char *)a2, (char *)a3,
			 NULL };

	return shmr_test_run(argv, out, cap);
}

/* The path compiled in is $sysconfdir/shmr/shmr.conf, and --help says
 * it. */
static void test_help_names_the_installed_path(void **state)
{
	char out[8192];
	size_t n = strlen(sysconf_path);
	(void)state;

	assert_true(n > strlen("/shmr/shmr.conf"));
	assert_string_equal(sysconf_path + n - strlen("/shmr/shmr.conf"),
			    "/shmr/shmr.conf");
	assert_int_equal(run2(getenv("SHMR_CONTROL"), "--help", NULL, NULL,
			      out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, sysconf_path));
	assert_int_equal(run2(getenv("SHMRCTL"), "--help", NULL, NULL, out,
			      sizeof(out)),
			 0);
	assert_non_null(strstr(out, sysconf_path));
}

/* Start shmr-control with no -c and no --run-dir: what it finds is all
 * it has.  Its stderr goes to @p log; returns once it is ready. */
static void start_plain(struct shmr_test_app *app, const char *log)
{
	struct pollfd p;
	char ready = 0, fdbuf[16];
	int pfd[2];

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	app->control = fork();
	assert_true(app->control >= 0);
	if (app->control == 0) {
		int fd = dup(pfd[1]), lf = open(log, O_WRONLY | O_CREAT, 0600);

		dup2(lf, 2);
		snprintf(fdbuf, sizeof(fdbuf), "%d", fd);
		execl(getenv("SHMR_CONTROL"), "shmr-control", "--ready-fd",
		      fdbuf, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	/* Liveness bound only. */
	assert_int_equal(poll(&p, 1, 30000), 1);
	assert_int_equal(read(pfd[0], &ready, 1), 1);
	assert_int_equal(ready, 'R');
	close(pfd[0]);
}

static void test_installed_file_is_read_and_shmrctl_agrees(void **state)
{
	struct shmr_test_app app = { 0 };
	char conf[400], log[400], out[8192], want[600], domain[32];
	FILE *f;
	(void)state;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(app.dir, sizeof(app.dir), "/tmp/shmr-sysconf-XXXXXX");
	assert_non_null(mkdtemp(app.dir));
	snprintf(domain, sizeof(domain), "sysconf%d", (int)getpid());
	snprintf(conf, sizeof(conf), "%s/shmr.conf", app.dir);
	snprintf(log, sizeof(log), "%s/control.log", app.dir);
	f = fopen(conf, "w");
	assert_non_null(f);
	/* run_dir set in the file: shmrctl must see it too. */
	fprintf(f,
		"domain = \"%s\";\nrun_dir = \"%s/run\";\n"
		"routers = ( { name = \"events\"; behaviour = \"hash\";\n"
		"  hash = [\"a\"];\n"
		"  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; "
		"} ); } );\n",
		domain, app.dir);
	fclose(f);
	setenv("SHMR_CONFIG", conf, 1);
	unsetenv("SHMR_DOMAIN");
	unsetenv("SHMR_RUN_DIR");

	/* --check reads it, no -c given. */
	assert_int_equal(run2(getenv("SHMR_CONTROL"), "--check", NULL, NULL,
			      out, sizeof(out)),
			 0);
	snprintf(want, sizeof(want), "%s: ok\n", conf);
	assert_string_equal(out, want);

	start_plain(&app, log);
	f = fopen(log, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, sizeof(out), f));
	fclose(f);
	/* After the line's time and level (docs/observability.md). */
	snprintf(want, sizeof(want), " info shmr-control: configuration %s\n",
		 conf);
	assert_true(strlen(out) >= strlen(want));
	assert_string_equal(out + strlen(out) - strlen(want), want);
	snprintf(app.sock, sizeof(app.sock), "%s/run/%s.sock", app.dir,
		 domain);
	assert_int_equal(access(app.sock, F_OK), 0);

	/* shmrctl with nothing but the same configuration: its domain and
	 * its run_dir. */
	assert_int_equal(run2(getenv("SHMRCTL"), "status", NULL, NULL, out,
			      sizeof(out)),
			 0);
	/* Its table row "domain    NAME". */
	assert_non_null(strstr(out, "\ndomain "));
	snprintf(want, sizeof(want), " %s\n", domain);
	assert_non_null(strstr(out, want));
	/* -d naming that domain: still that run_dir. */
	assert_int_equal(run2(getenv("SHMRCTL"), "-d", domain, "status", out,
			      sizeof(out)),
			 0);
	assert_non_null(strstr(out, want));
	/* ... and -c naming the file, without $SHMR_CONFIG. */
	unsetenv("SHMR_CONFIG");
	assert_int_equal(run2(getenv("SHMRCTL"), "-c", conf, "status", out,
			      sizeof(out)),
			 0);
	assert_non_null(strstr(out, want));
	setenv("SHMR_CONFIG", conf, 1);
	assert_int_equal(run2(getenv("SHMRCTL"), "routes", "events", NULL, out,
			      sizeof(out)),
			 0);
	assert_non_null(strstr(out, "\na "));
	assert_int_equal(shmr_test_app_stop(&app), 0);
	unsetenv("SHMR_CONFIG");
}

/* No file: the embedded default, for both; they agree on its domain. */
static void test_absent_file_is_the_embedded_default(void **state)
{
	char out[8192], empty[] = "/tmp/shmr-sysconf-none-XXXXXX", want[300];
	(void)state;

	assert_non_null(mkdtemp(empty));
	setenv("SHMR_CONFIG", "/nonexistent/shmr/shmr.conf", 1);
	unsetenv("SHMR_DOMAIN");
	setenv("SHMR_RUN_DIR", empty, 1);
	assert_int_equal(run2(getenv("SHMR_CONTROL"), "--check", NULL, NULL,
			      out, sizeof(out)),
			 0);
	assert_string_equal(out, "<default>: ok\n");
	/* config/default.conf's domain, which shmr-control would serve. */
	assert_int_equal(run2(getenv("SHMRCTL"), "--wait", "0", "status", out,
			      sizeof(out)),
			 1);
	snprintf(want, sizeof(want),
		 "shmrctl: no domain shmr-demo at %s/shmr-demo.sock", empty);
	assert_non_null(strstr(out, want));
	rmdir(empty);
	unsetenv("SHMR_RUN_DIR");
	unsetenv("SHMR_CONFIG");
}

/* A file that is there but cannot be read or parsed is an error naming
 * it, never skipped for the default. */
static void test_bad_file_is_an_error(void **state)
{
	char dir[] = "/tmp/shmr-sysconf-bad-XXXXXX", conf[300], out[8192],
	     want[400];
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	/* A directory where the file should be. */
	setenv("SHMR_CONFIG", dir, 1);
	assert_int_equal(run2(getenv("SHMR_CONTROL"), "--check", NULL, NULL,
			      out, sizeof(out)),
			 2);
	snprintf(want, sizeof(want), "shmr-control: %s: cannot read", dir);
	assert_non_null(strstr(out, want));
	snprintf(conf, sizeof(conf), "%s/shmr.conf", dir);
	f = fopen(conf, "w");
	assert_non_null(f);
	fputs("domain = \"x\";\nlcores = ;\n", f);
	fclose(f);
	setenv("SHMR_CONFIG", conf, 1);
	assert_int_equal(run2(getenv("SHMRCTL"), "status", NULL, NULL, out,
			      sizeof(out)),
			 2);
	snprintf(want, sizeof(want), "shmrctl: %s:2:", conf);
	assert_non_null(strstr(out, want));
	/* One line. */
	assert_true(strchr(out, '\n') == out + strlen(out) - 1);
	unlink(conf);
	rmdir(dir);
	unsetenv("SHMR_CONFIG");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_names_the_installed_path),
		cmocka_unit_test(test_installed_file_is_read_and_shmrctl_agrees),
		cmocka_unit_test(test_absent_file_is_the_embedded_default),
		cmocka_unit_test(test_bad_file_is_an_error),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_sysconf SYSCONF_PATH\n");
		return 2;
	}
	sysconf_path = argv[1];
	return cmocka_run_group_tests_name("sysconf", tests, NULL, NULL);
}
