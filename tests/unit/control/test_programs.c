/*
 * What ADD and REPLACE may start (control/programs.c), on a scratch
 * directory: the configured string as it is; another spelling of a
 * configured program ("..", ".", a symlink, a name found in PATH) as its
 * canonical path; anything else refused, a listed directory's "../"
 * included.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/shmr.h>

#include "programs.h"
#include "shmr_config.h"

static char dir[64], canon_dir[PATH_MAX];

static void touch_exec(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("#!/bin/sh\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	(void)state;

	snprintf(dir, sizeof(dir), "/tmp/shmr-programs-XXXXXX");
	if (!mkdtemp(dir) || !realpath(dir, canon_dir))
		return -1;
	snprintf(p, sizeof(p), "%s/bin", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bin/listed", dir);
	touch_exec(p);
	snprintf(p, sizeof(p), "%s/bin/worker", dir);
	touch_exec(p);
	snprintf(p, sizeof(p), "%s/other", dir);
	touch_exec(p);
	snprintf(p, sizeof(p), "%s/bin/link", dir);
	if (symlink("listed", p) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* One router with a route running "worker" (found in PATH), and
 * programs = ( "<dir>/bin/listed" ). */
static void conf(struct shmr_config *c)
{
	shmr_config_free(c);
	memset(c, 0, sizeof(*c));
	assert_int_equal(shmr_config_routers_alloc(c, 1), 0);
	c->nrouters = 1;
	c->routers[0].nroutes = 1;
	snprintf(c->routers[0].routes[0].program,
		 sizeof(c->routers[0].routes[0].program), "worker");
	c->nprograms = 1;
	snprintf(c->programs[0], sizeof(c->programs[0]), "%s/bin/listed",
		 dir);
}

static void test_programs_allowed_and_refused(void **state)
{
	static struct shmr_config c;
	char req[PATH_MAX], out[SHMR_CONF_PATH_MAX], want[PATH_MAX + 32];
	char path[PATH_MAX];
	(void)state;

	conf(&c);
	snprintf(path, sizeof(path), "%s/bin", dir);
	setenv("PATH", path, 1);

	/* The configured strings, as they are. */
	assert_int_equal(shmr_ctl_program_allowed(&c, "worker", out,
						  sizeof(out)),
			 0);
	assert_string_equal(out, "worker");
	assert_int_equal(shmr_ctl_program_allowed(&c, c.programs[0], out,
						  sizeof(out)),
			 0);
	assert_string_equal(out, c.programs[0]);

	/* Other spellings: the canonical path is what runs.  Then the
	 * refused: another file, "../" out of a listed directory, a program
	 * that does not exist, the empty string. */
	static const struct {
		const char *req; /* a leading '@' stands for dir */
		const char *runs; /* under canon_dir; NULL: refused */
	} cases[] = {
		{ "@/bin/../bin/./listed", "/bin/listed" },
		{ "@/bin/link", "/bin/listed" },
		{ "listed", "/bin/listed" },
		{ "@/bin/worker", "/bin/worker" },
		{ "@/other", NULL },
		{ "@/bin/../other", NULL },
		{ "/usr/bin/touch", NULL },
		{ "other", NULL },
		{ "@/bin/missing", NULL },
		{ "", NULL },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		if (cases[i].req[0] == '@')
			snprintf(req, sizeof(req), "%s%s", dir,
				 cases[i].req + 1);
		else
			snprintf(req, sizeof(req), "%s", cases[i].req);
		rc = shmr_ctl_program_allowed(&c, req, out, sizeof(out));
		if (!cases[i].runs) {
			assert_int_equal(rc, -SHMR_E_NOT_ALLOWED);
			continue;
		}
		assert_int_equal(rc, 0);
		snprintf(want, sizeof(want), "%s%s", canon_dir, cases[i].runs);
		assert_string_equal(out, want);
	}
	/* Nothing configured at all: nothing allowed. */
	shmr_config_free(&c);
	memset(&c, 0, sizeof(c));
	assert_int_equal(shmr_ctl_program_allowed(&c, "worker", out,
						  sizeof(out)),
			 -SHMR_E_NOT_ALLOWED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_programs_allowed_and_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
