/*
 * The public headers' test.  That each header compiles alone as C11 and as
 * C++ is checked when this program is built (see meson.build: the
 * one-line units linked in).  Run, it checks that each version is defined
 * in one place and read the same everywhere: <shmr/version.h> says the
 * project's version, and the layout version's text is its number.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include <shmr/behaviour.h>
#include <shmr/handler.h>
#include <shmr/layout.h>
#include <shmr/shmr.h>
#include <shmr/version.h>

static void test_library_version(void **state)
{
	char text[32];
	(void)state;

	assert_string_equal(SHMR_VERSION_TEXT, SHMR_TEST_PROJECT_VERSION);
	snprintf(text, sizeof(text), "%d.%d.%d", SHMR_VERSION_MAJOR,
		 SHMR_VERSION_MINOR, SHMR_VERSION_PATCH);
	assert_string_equal(text, SHMR_VERSION_TEXT);
}

static void test_layout_version(void **state)
{
	char text[16];
	(void)state;

	snprintf(text, sizeof(text), "%u", SHMR_LAYOUT_VERSION);
	assert_string_equal(text, SHMR_LAYOUT_VERSION_TEXT);
}

static void test_abi_versions(void **state)
{
	(void)state;

	/* What the loaders accept (dataplane/, control/) is read from these
	 * two macros; they exist and are positive. */
	assert_true(SHMR_BEHAVIOUR_ABI >= 1);
	assert_true(SHMR_HANDLERS_ABI >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_version),
		cmocka_unit_test(test_layout_version),
		cmocka_unit_test(test_abi_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
