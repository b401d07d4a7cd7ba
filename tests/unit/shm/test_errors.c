/*
 * Every SHMR_E_* code has its own message, so a log line or shmrctl's
 * output names what went wrong; negative and positive codes read the
 * same, errno values keep the C library's text, and anything else is
 * "unknown error" rather than a crash.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <shmr/shmr.h>

static void test_every_code_has_its_own_message(void **state)
{
	(void)state;

	for (int e = SHMR_E_BASE + 1; e < SHMR_E_LAST; e++) {
		const char *m = shmr_strerror(-e);

		assert_non_null(m);
		assert_true(strlen(m) > 3);
		assert_string_not_equal(m, "unknown error");
		assert_string_equal(m, shmr_strerror(e));
		for (int f = SHMR_E_BASE + 1; f < e; f++)
			assert_string_not_equal(m, shmr_strerror(-f));
	}
	assert_string_equal(shmr_strerror(0), "success");
	assert_string_equal(shmr_strerror(-EAGAIN), strerror(EAGAIN));
	assert_string_equal(shmr_strerror(-SHMR_E_LAST), "unknown error");
	assert_string_equal(shmr_strerror(-SHMR_E_BASE), "unknown error");
	/* A status a peer wrote can be anything (no overflow under UBSan). */
	assert_string_equal(shmr_strerror(INT_MIN), "unknown error");
	assert_string_equal(shmr_strerror(INT_MAX), "unknown error");
	assert_string_equal(shmr_strerror(-SHMR_E_MAILBOX_FULL),
			    "target inbox full");
	/* shmr_buf_alloc()'s answer for a size no arena class holds: the
	 * text may not speak of the slot alone. */
	assert_non_null(strstr(shmr_strerror(-SHMR_E_TOO_BIG), "arena"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_code_has_its_own_message),
	};
	return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
