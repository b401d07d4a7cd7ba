/*
 * A consistent-hash router's key and ring settings (hash_key, hash_mode,
 * node_prefix; config/parse_chash.c): what a good file gives, and the one
 * "file:line: field: what" line of each mistake.
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

/* A loaded configuration and what it holds. */
static void conf_free(struct shmr_config *c)
{
	if (c)
		shmr_config_free(c);
	free(c);
}

static struct shmr_config *load(const char *text, int want_rc, char *err,
				size_t errlen)
{
	struct shmr_config *c = calloc(1, sizeof(*c));
	int rc;

	assert_non_null(c);
	rc = shmr_config_load_string(text, "t.conf", c, err, errlen);
	if (rc != want_rc)
		fail_msg("for the text:\n%s\n got rc %d, \"%s\"", text, rc, err);
	return c;
}

static void expect_err(const char *text, const char *prefix, const char *what)
{
	char err[512] = "unset";

	conf_free(load(text, -EINVAL, err, sizeof(err)));
	if (strncmp(err, prefix, strlen(prefix)) != 0 ||
	    (what && !strstr(err, what)) || strchr(err, '\n'))
		fail_msg("for the text:\n%s\n got \"%s\"\n wanted \"%s...%s...\"",
			 text, err, prefix, what ? what : "");
}

static struct shmr_config *expect_ok(const char *text)
{
	char err[512] = "";

	return load(text, 0, err, sizeof(err));
}

#define CH(body)                                                          \
	"routers = (\n"                                                   \
	"  { name = \"r\"; behaviour = \"consistent-hash\";\n" body " }\n" \
	");\n"

/* @p text loads, and its router has these settings. */
static void expect_chash(const char *text, uint32_t key, uint32_t off,
			 uint32_t len, uint32_t mode, const char *prefix)
{
	struct shmr_config *c = expect_ok(text);

	assert_int_equal(c->routers[0].hash_key, key);
	assert_int_equal(c->routers[0].key_offset, off);
	assert_int_equal(c->routers[0].key_length, len);
	assert_int_equal(c->routers[0].hash_mode, mode);
	assert_string_equal(c->routers[0].node_prefix, prefix);
	conf_free(c);
}

static void test_settings(void **state)
{
	(void)state;
	expect_chash(CH("    routees = [ \"a\" ];"), SHMR_HASH_KEY_FIELD, 0, 0,
		     SHMR_HASH_MODE_SHMR, "");
	expect_chash(CH("    hash_key = \"payload\"; hash_mode = \"pekko\";\n"
			"    node_prefix = \"pekko://orders@10.0.0.5:7355/user/w/\";"),
		     SHMR_HASH_KEY_PAYLOAD, 0, 0, SHMR_HASH_MODE_PEKKO,
		     "pekko://orders@10.0.0.5:7355/user/w/");
	expect_chash(CH("    hash_key = { offset = 8; length = 16; };\n"
			"    hash_mode = \"pekko-string\";"),
		     SHMR_HASH_KEY_PAYLOAD, 8, 16, SHMR_HASH_MODE_PEKKO_STRING,
		     "");
	/* Offset alone: to the payload's end. */
	expect_chash(CH("    hash_key = { offset = 4; };"), SHMR_HASH_KEY_PAYLOAD,
		     4, 0, SHMR_HASH_MODE_SHMR, "");
	/* The last payload byte (slot_size 256: 208 payload bytes). */
	expect_chash("slot_size = 256;\n"
		     CH("    hash_key = { offset = 207; length = 1; };"),
		     SHMR_HASH_KEY_PAYLOAD, 207, 1, SHMR_HASH_MODE_SHMR, "");
}

static void test_errors(void **state)
{
	(void)state;
	expect_err(CH("    hash_key = \"body\";"), "t.conf:3: routers.[0].hash_key: ",
		   "unknown key source \"body\"");
	expect_err(CH("    hash_key = 3;"), "t.conf:3: routers.[0].hash_key: ",
		   "expected a string");
	expect_err(CH("    hash_key = { };"), "t.conf:3: routers.[0].hash_key: ",
		   "give offset, length or both");
	expect_err(CH("    hash_key = { offset = 1; size = 2; };"),
		   "t.conf:3: routers.[0].hash_key", "size");
	expect_err("slot_size = 256;\n" CH("    hash_key = { offset = 208; };"),
		   "t.conf:4: routers.[0].hash_key.offset: ",
		   "out of range (0 to 207)");
	expect_err("slot_size = 256;\n"
		   CH("    hash_key = { offset = 200; length = 9; };"),
		   "t.conf:4: routers.[0].hash_key.length: ",
		   "out of range (1 to 8)");
	expect_err(CH("    hash_mode = \"murmur\";"),
		   "t.conf:3: routers.[0].hash_mode: ",
		   "unknown hash mode \"murmur\"");
	expect_err(CH("    hash_mode = \"pekko-string\";"),
		   "t.conf:3: routers.[0].hash_mode: ",
		   "needs hash_key = \"payload\"");
	expect_err(CH("    node_prefix = \"caf\xc3\xa9/\";"),
		   "t.conf:3: routers.[0].node_prefix: ",
		   "byte 3 is not printable ASCII");
	expect_err(CH("    dso = \"/x/lib.so\"; hash_key = \"payload\";"),
		   "t.conf:3: routers.[0].hash_key: ",
		   "not with a dso");
	/* Only consistent-hash has them. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"round-robin\";\n"
		   "    hash_mode = \"pekko\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].hash_mode: ",
		   "not used by behaviour \"round-robin\"");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    hash_key = \"payload\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].hash_key: ",
		   "not used by behaviour \"hash\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
