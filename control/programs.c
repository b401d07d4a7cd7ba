/*
 * The programs ADD and REPLACE may start (see programs.h).
 *
 * Why: the control plane runs its workers as its own user (often root),
 * so a program named on the control socket is code run with that user's
 * rights.  Only what the operator wrote in the configuration may run:
 * the routes' programs, and the `programs` allow-list for programs that
 * are only ever added at run time.  This holds for every caller, the
 * owner included: a mistyped or injected path never runs.
 *
 * Comparison is on canonical paths, resolved the way exec resolves them
 * (a name without '/' through PATH, as execvp does), then realpath():
 * symlinks, "." and ".." cannot make a listed prefix lead to another
 * file.  What runs is then that canonical path, not the request's
 * spelling, so what was compared is what is started.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmr/shmr.h>

#include "programs.h"

/* @p prog as exec would find it, canonical, into @p out (PATH_MAX).
 * 0 or -errno. */
static int canonical(const char *prog, char *out)
{
	const char *path, *p;

	if (!prog[0])
		return -ENOENT;
	if (strchr(prog, '/'))
		return realpath(prog, out) ? 0 : -errno;
	path = getenv("PATH");
	if (!path || !*path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		char cand[PATH_MAX];
		int n;

		/* An empty element is the current directory, as for execvp. */
		n = end == p ? snprintf(cand, sizeof(cand), "%s", prog)
			     : snprintf(cand, sizeof(cand), "%.*s/%s",
					(int)(end - p), p, prog);
		if (n > 0 && (size_t)n < sizeof(cand) &&
		    access(cand, X_OK) == 0 && realpath(cand, out))
			return 0;
		if (!*end)
			return -ENOENT;
		p = end;
	}
}

/* Calls @p fn on every program @p cfg names; stops at a nonzero answer. */
static int each_program(const struct shmr_config *cfg,
			int (*fn)(const char *prog, void *arg), void *arg)
{
	int rc;

	for (unsigned i = 0; i < cfg->nprograms; i++)
		if ((rc = fn(cfg->programs[i], arg)) != 0)
			return rc;
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		const struct shmr_conf_router *rt = &cfg->routers[i];

		if (rt->pool.tmpl.program[0] &&
		    (rc = fn(rt->pool.tmpl.program, arg)) != 0)
			return rc;
		for (unsigned k = 0; k < rt->nroutes; k++)
			if ((rc = fn(rt->routes[k].program, arg)) != 0)
				return rc;
	}
	return 0;
}

static int same_string(const char *prog, void *arg)
{
	return strcmp(prog, (const char *)arg) == 0;
}

static int same_file(const char *prog, void *arg)
{
	char c[PATH_MAX];

	return canonical(prog, c) == 0 && strcmp(c, (const char *)arg) == 0;
}

int shmr_ctl_program_allowed(const struct shmr_config *cfg,
			     const char *program, char *out, size_t cap)
{
	char c[PATH_MAX];

	if (each_program(cfg, same_string, (void *)program)) {
		if (strlen(program) >= cap)
			return -SHMR_E_NOT_ALLOWED;
		strcpy(out, program);
		return 0;
	}
	if (canonical(program, c) < 0 || strlen(c) >= cap ||
	    !each_program(cfg, same_file, c))
		return -SHMR_E_NOT_ALLOWED;
	strcpy(out, c);
	return 0;
}
