/*
 * Validation in one place (config/validate.c): the messages of the cpu-list
 * rule, of shmr_config_validate() (the lines shmr-control prints, as it
 * printed them when it checked these itself) and of shmr_config_load(),
 * the daemon's one entry point.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shmr_config.h"

#define ONE_ROUTE                                                          \
	"routers = ( { name = \"r\"; behaviour = \"type\";\n"              \
	"  types = ( { type = 1; route = \"a\"; } );\n"                    \
	"  routes = ( { name = \"a\"; program = \"w\"; cpus = \"%s\"; } ); } );\n"

static struct shmr_config *conf_new(void)
{
	struct shmr_config *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	return c;
}

/* The message for a route's cpus = @p list. */
static void cpus_err(const char *list, const char *want)
{
	struct shmr_config *c = conf_new();
	char text[512], err[512] = "";

	snprintf(text, sizeof(text), ONE_ROUTE, list);
	assert_int_equal(shmr_config_load_string(text, "t.conf", c, err,
						 sizeof(err)),
			 -EINVAL);
	if (!strstr(err, want))
		fail_msg("cpus \"%s\": \"%s\", want \"%s\"", list, err, want);
	free(c);
}

/* A range's numbers are checked before its order, and a bad number
 * before what follows the range. */
static void cpu_list_messages(void **state)
{
	(void)state;
	cpus_err("1024", "cpu list \"1024\" names a cpu above 1023");
	cpus_err("0-5000", "names a cpu above 1023");
	cpus_err("2000-1", "names a cpu above 1023");
	cpus_err("2000,x", "names a cpu above 1023");
	cpus_err("99999999999999999999", "names a cpu above 1023");
	cpus_err("3-1", "cpu list \"3-1\" has a reversed range 3-1");
	cpus_err("1-2x", "bad cpu list \"1-2x\" (expected N, N-M");
	cpus_err("99999-x", "bad cpu list");
	cpus_err("0,", "bad cpu list");
}

static void validate_messages(void **state)
{
	struct shmr_config *c = conf_new();
	char text[512], err[512];

	(void)state;
	snprintf(text, sizeof(text), ONE_ROUTE, "1");
	assert_int_equal(shmr_config_load_string(text, "t.conf", c, err,
						 sizeof(err)),
			 0);
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	assert_string_equal(err, "");

	c->slot_size = 100;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf: domain: slot_size must be a "
				 "multiple of 8 from 64 to 4096");
	c->slot_size = 256;
	strcpy(c->domain, "a b");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf: domain: bad domain name 'a b'");
	strcpy(c->domain, "shmr");
	strcpy(c->dataplane_cpus, "0-");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "t.conf: dataplane_cpus: bad cpu list '0-'");
	strcpy(c->dataplane_cpus, "");
	strcpy(c->routers[0].routes[0].cpus, "2000");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: cpus: bad cpu list '2000'");
	free(c);
}

static void load_entry_point(void **state)
{
	struct shmr_config *c = conf_new();
	char err[512];

	(void)state;
	/* NULL: the embedded default. */
	assert_int_equal(shmr_config_load(NULL, c, err, sizeof(err)), 0);
	assert_string_equal(c->source, "<default>");
	assert_string_equal(err, "");
	assert_int_equal(shmr_config_load("/nonexistent/shmr.conf", c, err,
					  sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/shmr.conf: cannot read: "
				 "No such file or directory");
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_list_messages),
		cmocka_unit_test(validate_messages),
		cmocka_unit_test(load_entry_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
