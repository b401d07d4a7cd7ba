/*
 * A domain against the host's memory (control/memfit.c): /proc/meminfo's
 * figures read, and the rule: a domain fits on free hugepages or on the
 * memory the hugepages leave, else one line says how much it needs and
 * what the host has.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "memfit.h"

#define MIB (1024ull * 1024ull)

static void meminfo_figures(void **state)
{
	char path[] = "/tmp/shmr-meminfo-XXXXXX";
	struct shmr_ctl_meminfo mi;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "MemTotal:        4096000 kB\nMemFree:  10 kB\n"
		   "HugePages_Total:     512\nHugePages_Free:      256\n"
		   "Hugepagesize:       2048 kB\n");
	fclose(f);
	assert_int_equal(shmr_ctl_meminfo_read(path, &mi), 0);
	assert_int_equal(mi.total, 4096000ull * 1024);
	assert_int_equal(mi.huge_total, 1024 * MIB);
	assert_int_equal(mi.huge_free, 512 * MIB);
	f = fopen(path, "w");
	fprintf(f, "MemFree: 10 kB\n");
	fclose(f);
	assert_int_equal(shmr_ctl_meminfo_read(path, &mi), -EINVAL);
	unlink(path);
	assert_true(shmr_ctl_meminfo_read(path, &mi) < 0);
}

static void fits_or_says_why(void **state)
{
	/* 4 GiB, 1 GiB of it hugepages, 512 MiB of those free. */
	struct shmr_ctl_meminfo mi = { 4096 * MIB, 1024 * MIB, 512 * MIB };
	char buf[256];

	(void)state;
	assert_null(shmr_ctl_memfit_why(512 * MIB, &mi, buf, sizeof(buf)));
	assert_null(shmr_ctl_memfit_why(3072 * MIB, &mi, buf, sizeof(buf)));
	/* More than the memory the hugepages leave, and than them. */
	assert_string_equal(
		shmr_ctl_memfit_why(3073 * MIB, &mi, buf, sizeof(buf)),
		"the domain needs 3073.0 MiB (docs/operator-guide.md, \"Domain "
		"memory\"), more than this host has: 512.0 MiB of free "
		"hugepages, 3072.0 MiB of memory besides the hugepages");
	/* All of it hugepages, all free: they hold it. */
	mi = (struct shmr_ctl_meminfo){ 4096 * MIB, 4096 * MIB, 4096 * MIB };
	assert_null(shmr_ctl_memfit_why(4000 * MIB, &mi, buf, sizeof(buf)));
	mi.huge_free = 0;
	assert_non_null(shmr_ctl_memfit_why(1, &mi, buf, sizeof(buf)));
}

/* A 4 GiB host without hugepages, as a meminfo file at @p path. */
static void small_host(char *path)
{
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "MemTotal:        4194304 kB\n");
	fclose(f);
}

/* The one line for @p text (as "am.conf") on small_host(): it must start
 * with @p want. */
static void refused_as(const char *meminfo, const char *text,
		       const char *want)
{
	struct shmr_config *c = calloc(1, sizeof(*c));
	char err[SHMR_CONFIG_ERR_MAX] = "";

	assert_non_null(c);
	assert_int_equal(shmr_config_load_string(text, "am.conf", c, err,
						 sizeof(err)),
			 0);
	assert_int_equal(shmr_ctl_memfit_check(c, meminfo, err, sizeof(err)),
			 -ENOMEM);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("got \"%s\", wanted \"%s...\"", err, want);
	shmr_config_free(c);
	free(c);
}

#define ONE_ROUTER                                                         \
	"routers = ( { name = \"r\"; behaviour = \"type\";\n"              \
	"  types = ( { type = 1; route = \"a\"; } ); } );\n"

/* The setting named is the one that sizes the domain most: the arena's
 * classes when the arena is the larger part (64 GiB of buffers against
 * a few MiB of lanes), not a geometry setting the file happens to set,
 * nor the file alone; a geometry that outweighs a small arena is named
 * as before. */
static void names_what_sizes_it(void **state)
{
	char path[] = "/tmp/shmr-meminfo-XXXXXX";

	(void)state;
	small_host(path);
	refused_as(path,
		   "domain = \"h5a\";\nlane_size = 1024;\n"
		   "arena = { classes = [ \"64M:1024\" ]; };\n" ONE_ROUTER,
		   "am.conf:3: arena.classes: the domain needs 64.");
	refused_as(path,
		   "domain = \"h5a\";\n"
		   "arena = { classes = [ \"64M:1024\" ]; };\n" ONE_ROUTER,
		   "am.conf:2: arena.classes: the domain needs 64.");
	refused_as(path,
		   "domain = \"h5a\";\nslot_size = 4096;\nlane_size = 65536;\n"
		   "max_endpoints = 4096;\n"
		   "arena = { classes = [ \"64K:16\" ]; };\n" ONE_ROUTER,
		   "am.conf:4: max_endpoints: the domain needs ");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(meminfo_figures),
		cmocka_unit_test(fits_or_says_why),
		cmocka_unit_test(names_what_sizes_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
