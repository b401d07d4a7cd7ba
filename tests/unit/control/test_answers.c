/*
 * Held answers (control/answers.c) on a real SOCK_SEQPACKET pair: what
 * is held goes out in order, one packet an answer, only when sent; an
 * answer for another connection, past the count or past the bytes is
 * not held (the caller sends it after what is); a peer that is gone
 * fails the send.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "answers.h"

static struct shmr_ctl_answers a;

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
}

/* The next packet on @p fd, or "" when none is there. */
static const char *next(int fd)
{
	static char buf[SHMR_CTL_ANSWERS_BYTES + 1];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_in_order_when_sent(void **state)
{
	int sv[2];
	char text[16];

	(void)state;
	pair(sv);
	shmr_ctl_answers_init(&a);
	assert_int_equal(shmr_ctl_answers_put(&a, sv[0], "OK", 2), 0);
	a.fd = sv[0];
	for (int i = 0; i < 5; i++) {
		int n = snprintf(text, sizeof(text), "OK %d", i);

		assert_int_equal(shmr_ctl_answers_put(&a, sv[0], text,
						      (size_t)n),
				 1);
	}
	/* Another connection's answer is not held. */
	assert_int_equal(shmr_ctl_answers_put(&a, sv[1], "OK", 2), 0);
	assert_string_equal(next(sv[1]), "");
	assert_int_equal(shmr_ctl_answers_send(&a), 0);
	for (int i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "OK %d", i);
		assert_string_equal(next(sv[1]), text);
	}
	assert_string_equal(next(sv[1]), "");
	/* Nothing held: nothing sent. */
	assert_int_equal(shmr_ctl_answers_send(&a), 0);
	assert_string_equal(next(sv[1]), "");
	close(sv[0]);
	close(sv[1]);
}

static void test_bounds(void **state)
{
	static char big[SHMR_CTL_ANSWERS_BYTES];
	int sv[2];

	(void)state;
	pair(sv);
	shmr_ctl_answers_init(&a);
	a.fd = sv[0];
	for (unsigned i = 0; i < SHMR_CTL_ANSWERS_MAX; i++)
		assert_int_equal(shmr_ctl_answers_put(&a, sv[0], "OK", 2), 1);
	assert_int_equal(shmr_ctl_answers_put(&a, sv[0], "OK", 2), 0);
	assert_int_equal(shmr_ctl_answers_send(&a), 0);
	for (unsigned i = 0; i < SHMR_CTL_ANSWERS_MAX; i++)
		assert_string_equal(next(sv[1]), "OK");

	memset(big, 'x', sizeof(big));
	assert_int_equal(shmr_ctl_answers_put(&a, sv[0], "OK", 2), 1);
	/* Past the bytes left: not held; all of them: held. */
	assert_int_equal(shmr_ctl_answers_put(&a, sv[0], big, sizeof(big)),
			 0);
	assert_int_equal(shmr_ctl_answers_send(&a), 0);
	assert_int_equal(shmr_ctl_answers_put(&a, sv[0], big, sizeof(big)),
			 1);
	assert_int_equal(shmr_ctl_answers_send(&a), 0);
	assert_string_equal(next(sv[1]), "OK");
	assert_int_equal(strlen(next(sv[1])), sizeof(big));
	close(sv[0]);
	close(sv[1]);
}

static void test_peer_gone(void **state)
{
	int sv[2];

	(void)state;
	pair(sv);
	close(sv[1]);
	shmr_ctl_answers_init(&a);
	a.fd = sv[0];
	assert_int_equal(shmr_ctl_answers_put(&a, sv[0], "OK", 2), 1);
	assert_int_equal(shmr_ctl_answers_send(&a), -1);
	/* What was held is gone with it. */
	assert_int_equal(a.n, 0);
	close(sv[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_when_sent),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_peer_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
