/*
 * The dead-letter file format (control/dlq.c): records written by
 * shmr_ctl_dlq_append() read back whole, in order, with the failed name;
 * a flipped byte or a cut file is reported at the record it hits, and the
 * records before it are still listed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "dlq.h"

#define SS 128u

union slot {
	struct shmr_msg m;
	unsigned char b[SHMR_SLOT_MAX];
};

/* A MessageRouteFailed as the dataplane hands it over. */
static void failed_slot(union slot *s, uint32_t type, uint64_t key,
			const char *payload, const char *name, int32_t reason)
{
	memset(s, 0xee, sizeof(*s)); /* bytes past the record must not matter */
	memset(&s->m, 0, SHMR_HDR_SIZE);
	s->m.kind = SHMR_KIND_SEND;
	s->m.flags = SHMR_F_ROUTE_FAILED;
	s->m.type = type;
	s->m.key = key;
	s->m.from = (struct shmr_pid){ 5, 2 };
	s->m.to = (struct shmr_pid){ 0, 1 };
	s->m.status = reason;
	s->m.len = (uint32_t)strlen(payload);
	memcpy(s->m.data, payload, s->m.len);
	if (name) {
		s->m.flags |= SHMR_F_ROUTE_NAME;
		strcpy((char *)s->m.data + s->m.len, name);
	}
}

/* Three records in a memfd; returns its bytes (malloc'd), *size. */
static unsigned char *three(size_t *size)
{
	int fd = memfd_create("dlq", 0);
	union slot s;
	unsigned char *buf;

	assert_true(fd >= 0);
	failed_slot(&s, 7, 42, "hello", "later", -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(shmr_ctl_dlq_append(fd, &s.m, SS), 0);
	failed_slot(&s, 8, 1, "", NULL, -SHMR_E_DISABLED);
	assert_int_equal(shmr_ctl_dlq_append(fd, &s.m, SS), 0);
	failed_slot(&s, 9, 2, "xyz", "busy", -SHMR_E_BUSY);
	assert_int_equal(shmr_ctl_dlq_append(fd, &s.m, SS), 0);
	*size = (size_t)lseek(fd, 0, SEEK_END);
	buf = malloc(*size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, *size, 0), (ssize_t)*size);
	close(fd);
	return buf;
}

static void records_read_back(void **state)
{
	size_t size, off = 0;
	unsigned char *buf = three(&size);
	union slot s;
	uint32_t slen;
	char name[SHMR_NAME_MAX];
	int rc;
	(void)state;

	rc = shmr_ctl_dlq_next(buf, size, off, &s.m, &slen);
	/* Length-prefixed: header, payload, name and its NUL only. */
	assert_int_equal(rc, 8 + SHMR_HDR_SIZE + 5 + 6);
	assert_int_equal(s.m.type, 7);
	assert_int_equal(s.m.key, 42);
	assert_int_equal(s.m.from.slot, 5);
	assert_int_equal(s.m.from.gen, 2);
	assert_int_equal(s.m.status, -SHMR_E_PROCESS_UNKNOWN);
	assert_int_equal(s.m.len, 5);
	assert_memory_equal(s.m.data, "hello", 5);
	shmr_ctl_dlq_name(&s.m, slen, name);
	assert_string_equal(name, "later");
	off += (size_t)rc;
	rc = shmr_ctl_dlq_next(buf, size, off, &s.m, &slen);
	assert_int_equal(rc, 8 + SHMR_HDR_SIZE);
	shmr_ctl_dlq_name(&s.m, slen, name);
	assert_string_equal(name, "?");
	assert_int_equal(s.m.status, -SHMR_E_DISABLED);
	off += (size_t)rc;
	rc = shmr_ctl_dlq_next(buf, size, off, &s.m, &slen);
	assert_true(rc > 0);
	off += (size_t)rc;
	assert_int_equal(off, size);
	assert_int_equal(shmr_ctl_dlq_next(buf, size, off, &s.m, &slen), 0);
	assert_int_equal(shmr_ctl_dlq_count(buf, size), 3);
	free(buf);
}

/* A letter whose payload was in an arena buffer: the slot (its payload
 * the reference, the name after it) and the bytes, one record to every
 * reader; a cut or flipped payload is a corrupted record; a letter whose
 * buffer was not sound is kept without payload. */
static void payload_records(void **state)
{
	static unsigned char big[100000];
	int fd = memfd_create("dlq", 0);
	const unsigned char *p;
	unsigned char *buf;
	union slot s;
	uint32_t slen, plen;
	size_t size;
	char name[SHMR_NAME_MAX], out[512];
	unsigned count;
	int rc, corrupt;
	(void)state;

	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7 + 3);
	failed_slot(&s, 7, 42, "0123456789abcdef", "later",
		    -SHMR_E_PROCESS_UNKNOWN);
	s.m.flags |= SHMR_F_ARENA;
	assert_int_equal(shmr_ctl_dlq_append_payload(fd, &s.m, SS, big,
						     sizeof(big)),
			 0);
	assert_int_equal(shmr_ctl_dlq_append_payload(fd, &s.m, SS, NULL, 0), 0);
	size = (size_t)lseek(fd, 0, SEEK_END);
	buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, size, 0), (ssize_t)size);
	close(fd);

	rc = shmr_ctl_dlq_next_payload(buf, size, 0, &s.m, &slen, &p, &plen);
	assert_int_equal(rc, 16 + SHMR_HDR_SIZE + 16 + 6 + (int)sizeof(big));
	assert_true(s.m.flags & SHMR_F_ARENA);
	assert_int_equal(plen, sizeof(big));
	assert_memory_equal(p, big, sizeof(big));
	shmr_ctl_dlq_name(&s.m, slen, name);
	assert_string_equal(name, "later");
	rc = shmr_ctl_dlq_next_payload(buf, size, (size_t)rc, &s.m, &slen, &p,
				       &plen);
	assert_int_equal(rc, 8 + SHMR_HDR_SIZE);
	assert_null(p);
	assert_int_equal(s.m.len, 0);
	assert_int_equal(s.m.flags & SHMR_F_ARENA, 0);
	assert_int_equal(shmr_ctl_dlq_count(buf, size), 2);
	assert_true(shmr_ctl_dlq_format(buf, size, out, sizeof(out), &count,
					&corrupt) > 0);
	assert_int_equal(count, 2);
	assert_int_equal(corrupt, 0);
	assert_non_null(strstr(out, "len=100000\n"));
	/* Cut inside the payload, or one of its bytes flipped. */
	assert_int_equal(shmr_ctl_dlq_next(buf, 16 + SHMR_HDR_SIZE + 22 + 500,
					   0, &s.m, &slen),
			 -SHMR_E_PROTO);
	buf[8 + SHMR_HDR_SIZE + 22 + 8 + 1234] ^= 1;
	assert_int_equal(shmr_ctl_dlq_next(buf, size, 0, &s.m, &slen),
			 -SHMR_E_PROTO);
	free(buf);
}

static void list_format(void **state)
{
	size_t size;
	unsigned char *buf = three(&size);
	char out[1024];
	unsigned count;
	int corrupt, n;
	(void)state;

	n = shmr_ctl_dlq_format(buf, size, out, sizeof(out), &count, &corrupt);
	assert_true(n > 0);
	assert_int_equal(count, 3);
	assert_int_equal(corrupt, 0);
	assert_string_equal(
		out,
		"0 reason=SHMR_E_PROCESS_UNKNOWN name=later type=7 key=42 "
		"from=5:2 len=5\n"
		"1 reason=SHMR_E_DISABLED name=? type=8 key=1 from=5:2 len=0\n"
		"2 reason=SHMR_E_BUSY name=busy type=9 key=2 from=5:2 len=3\n");
	assert_int_equal(shmr_ctl_dlq_format(buf, size, out, 40, &count,
					     &corrupt),
			 -ENOSPC);
	free(buf);
}

/* A part of the list: from an index on, as many whole lines as fit, and
 * where it goes on. */
static void list_parts(void **state)
{
	size_t size;
	unsigned char *buf = three(&size);
	char out[1024];
	unsigned next;
	int corrupt, more, n;
	(void)state;

	/* Room for the first line only: it, and "more" at 1. */
	n = shmr_ctl_dlq_format_from(buf, size, 0, out, 90, &next, &corrupt,
				     &more);
	assert_int_equal(n, (int)strlen(out));
	assert_string_equal(out, "0 reason=SHMR_E_PROCESS_UNKNOWN name=later "
				 "type=7 key=42 from=5:2 len=5\n");
	assert_int_equal(next, 1);
	assert_int_equal(more, 1);
	assert_int_equal(corrupt, 0);
	/* From 1: the other two, the list done. */
	n = shmr_ctl_dlq_format_from(buf, size, 1, out, sizeof(out), &next,
				     &corrupt, &more);
	assert_true(n > 0);
	assert_string_equal(out, "1 reason=SHMR_E_DISABLED name=? type=8 "
				 "key=1 from=5:2 len=0\n"
				 "2 reason=SHMR_E_BUSY name=busy type=9 "
				 "key=2 from=5:2 len=3\n");
	assert_int_equal(next, 3);
	assert_int_equal(more, 0);
	/* Past the end: nothing, done. */
	n = shmr_ctl_dlq_format_from(buf, size, 7, out, sizeof(out), &next,
				     &corrupt, &more);
	assert_int_equal(n, 0);
	assert_int_equal(next, 3);
	assert_int_equal(more, 0);
	/* Not even one line fits. */
	assert_int_equal(shmr_ctl_dlq_format_from(buf, size, 2, out, 20, &next,
						  &corrupt, &more),
			 -ENOSPC);
	free(buf);
}

/* A flipped byte in the second record: the first is listed, then stop. */
static void corrupt_detected(void **state)
{
	size_t size, first;
	unsigned char *buf = three(&size);
	union slot s;
	uint32_t slen;
	char out[1024];
	unsigned count;
	int corrupt;
	(void)state;

	first = (size_t)shmr_ctl_dlq_next(buf, size, 0, &s.m, &slen);
	buf[first + 8 + 12] ^= 0x10; /* inside the second slot's key */
	assert_int_equal(shmr_ctl_dlq_next(buf, size, first, &s.m, &slen),
			 -SHMR_E_PROTO);
	assert_true(shmr_ctl_dlq_format(buf, size, out, sizeof(out), &count,
					&corrupt) > 0);
	assert_int_equal(count, 1);
	assert_int_equal(corrupt, 1);
	assert_non_null(strstr(out, "0 reason=SHMR_E_PROCESS_UNKNOWN"));
	assert_null(strstr(out, "\n1 "));
	assert_int_equal(shmr_ctl_dlq_count(buf, size), 1);

	/* A length word that is absurd. */
	buf[first + 8 + 12] ^= 0x10;
	buf[first + 1] = 0x7f;
	assert_int_equal(shmr_ctl_dlq_next(buf, size, first, &s.m, &slen),
			 -SHMR_E_PROTO);
	free(buf);
}

/* A file cut anywhere inside a record: that record is reported. */
static void truncation_detected(void **state)
{
	size_t size, first;
	unsigned char *buf = three(&size);
	union slot s;
	uint32_t slen;
	char out[1024];
	unsigned count;
	int corrupt;
	(void)state;

	first = (size_t)shmr_ctl_dlq_next(buf, size, 0, &s.m, &slen);
	for (size_t cut = first + 1; cut < first + 8 + SHMR_HDR_SIZE; cut++) {
		assert_int_equal(shmr_ctl_dlq_next(buf, cut, first, &s.m,
						   &slen),
				 -SHMR_E_PROTO);
		assert_true(shmr_ctl_dlq_format(buf, cut, out, sizeof(out),
						&count, &corrupt) > 0);
		assert_int_equal(count, 1);
		assert_int_equal(corrupt, 1);
	}
	/* Cut exactly between records: a shorter, sound file. */
	assert_true(shmr_ctl_dlq_format(buf, first, out, sizeof(out), &count,
					&corrupt) > 0);
	assert_int_equal(count, 1);
	assert_int_equal(corrupt, 0);
	free(buf);
}

/* A payload length larger than the record is corruption, even with a
 * matching check word (a writer bug, not a disk error). */
static void payload_length_checked(void **state)
{
	unsigned char buf[8 + SHMR_HDR_SIZE];
	union slot s;
	uint32_t len = SHMR_HDR_SIZE, check, slen;
	(void)state;

	memset(&s, 0, sizeof(s));
	s.m.len = 1;
	check = shmr_ctl_dlq_check(&s.m, len);
	memcpy(buf, &len, 4);
	memcpy(buf + 4, &check, 4);
	memcpy(buf + 8, &s.m, len);
	assert_int_equal(shmr_ctl_dlq_next(buf, sizeof(buf), 0, &s.m, &slen),
			 -SHMR_E_PROTO);
}

/* A reason is named: an SHMR_E_* code, or an errno (a route's start
 * error, when a restart failed); anything else is SHMR_E_OTHER. */
static void reasons_named(void **state)
{
	(void)state;
	assert_string_equal(shmr_ctl_dlq_reason(-SHMR_E_BUSY), "SHMR_E_BUSY");
	/* A pool or group with no routees dead-letters its sends. */
	assert_string_equal(shmr_ctl_dlq_reason(-SHMR_E_NO_ROUTEES),
			    "SHMR_E_NO_ROUTEES");
	/* Every code has its own name. */
	for (int e = SHMR_E_BASE + 1; e < SHMR_E_LAST; e++) {
		const char *n = shmr_ctl_dlq_reason(-e);

		assert_true(strncmp(n, "SHMR_E_", 7) == 0);
		assert_string_not_equal(n, "SHMR_E_OTHER");
	}
	assert_string_equal(shmr_ctl_dlq_reason(-EACCES), "EACCES");
	assert_string_equal(shmr_ctl_dlq_reason(-ENOENT), "ENOENT");
	assert_string_equal(shmr_ctl_dlq_reason(0), "SHMR_E_OTHER");
	assert_string_equal(shmr_ctl_dlq_reason(5), "SHMR_E_OTHER");
	assert_string_equal(shmr_ctl_dlq_reason(-999), "SHMR_E_OTHER");
	assert_string_equal(shmr_ctl_dlq_reason(INT32_MIN), "SHMR_E_OTHER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_read_back),
		cmocka_unit_test(payload_records),
		cmocka_unit_test(list_format),
		cmocka_unit_test(list_parts),
		cmocka_unit_test(corrupt_detected),
		cmocka_unit_test(truncation_detected),
		cmocka_unit_test(payload_length_checked),
		cmocka_unit_test(reasons_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
