/*
 * shmr-control's start-up before the configuration is applied: its usage
 * text, and where things are (the run directory and socket, the
 * dataplane's binary).  Part of control.c's main(), on its own so that
 * the daemon's file stays its event loop and wiring.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shmr/proto.h>

#include "shmr_config.h"
#include "control_internal.h"
#include "startup.h"

const char shmr_ctl_usage_line[] =
	"usage: shmr-control [-c FILE] [--run-dir DIR] [--ready-fd N] "
	"[--dataplane PATH] [--check] [--quiet] [--log-level L]\n";

void shmr_ctl_usage_full(void)
{
	printf("%s", shmr_ctl_usage_line);
	printf("\n"
	       "Create a shmrouter domain, start its dataplane and route "
	       "workers, and serve\n"
	       "its control socket <run_dir>/<domain>.sock until SIGINT, "
	       "SIGTERM or STOP.\n"
	       "\n"
	       "  -c, --config FILE   configuration (default: $SHMR_CONFIG, "
	       "else\n"
	       "                      %s, when that file exists;\n"
	       "                      else the embedded default)\n"
	       "  --run-dir DIR       socket directory (default: run_dir of "
	       "the configuration,\n"
	       "                      else $SHMR_RUN_DIR, else "
	       SHMR_RUN_DIR_DEFAULT ")\n"
	       "  --ready-fd N        write \"R\" to fd N and close it once "
	       "everything is up\n"
	       "  --dataplane PATH    the shmr-dataplane binary (default: next "
	       "to this one,\n"
	       "                      then ../dataplane/, then PATH)\n"
	       "  --check             parse the configuration, print \"FILE: "
	       "ok\", exit\n"
	       "  --quiet             warnings and errors only (--log-level warning)\n"
	       "  --log-level L       error, warning, info (default) or debug;"
	       "\n"
	       "                      the dataplane gets the same (default: "
	       "log_level\n"
	       "                      of the configuration)\n"
	       "  -h, --help          this text\n"
	       "  --version           print \"shmr-control VERSION\" and exit\n"
	       "\n"
	       "Exit status: 0 clean stop; 1 runtime failure (e.g. a worker "
	       "could not start:\n"
	       "nothing is left running); 2 bad configuration or bad "
	       "arguments,\nor the domain runs with another configuration "
	       "(left running).\n",
	       shmr_config_sysconf_path());
}

_Noreturn void shmr_ctl_usage_error(const char *why)
{
	if (why)
		fprintf(stderr, "shmr-control: %s\n", why);
	fputs(shmr_ctl_usage_line, stderr);
	exit(SHMR_CTL_EXIT_USAGE);
}

int shmr_ctl_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int shmr_ctl_run_dir_resolve(const struct shmr_config *cfg, const char *opt,
			     char *run_dir, size_t rcap, char *sock_path,
			     size_t scap)
{
	const char *dir = opt;
	const char *env = getenv(SHMR_ENV_RUN_DIR);
	int n;

	/* The configuration's run_dir counts only when the file set it:
	 * the parser fills in the built-in default otherwise. */
	if (!dir && cfg->run_dir[0] &&
	    strcmp(cfg->run_dir, SHMR_RUN_DIR_DEFAULT) != 0)
		dir = cfg->run_dir;
	if (!dir && env && *env)
		dir = env;
	if (!dir)
		dir = SHMR_RUN_DIR_DEFAULT;
	n = snprintf(run_dir, rcap, "%s", dir);
	if (n < 0 || (size_t)n >= rcap)
		return -ENAMETOOLONG;
	n = snprintf(sock_path, scap, "%s/%s.sock", dir, cfg->domain);
	if (n < 0 || (size_t)n >= scap)
		return -ENAMETOOLONG;
	return 0;
}

static int executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

void shmr_ctl_dataplane_resolve(const char *opt, char *out, size_t cap)
{
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (opt) {
		snprintf(out, cap, "%s", opt);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		dir = dirname(self);
		snprintf(out, cap,
			 "%s/shmr-dataplane", dir);
		if (executable(out))
			return;
		snprintf(out, cap,
			 "%s/../dataplane/shmr-dataplane", dir);
		if (executable(out))
			return;
	}
	snprintf(out, cap, "shmr-dataplane");
}

/* --log-level NAME: the threshold, or the usage error (exit 2). */
void shmr_ctl_log_level_opt(const char *name)
{
	if (shmr_ctl_log_level_set(name) < 0)
		shmr_ctl_usage_error("--log-level: not error, warning, info or debug");
}
