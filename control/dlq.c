/*
 * The dead-letter file of a router: <run_dir>/<domain>.<router>.dlq, one
 * record per MessageRouteFailed the default admin handler kept.
 *
 * Record (host byte order; the file never leaves the machine):
 *   u32 len    bytes of the slot that follow, SHMR_HDR_SIZE..SHMR_SLOT_MAX
 *   u32 check  FNV-1a 32 of those bytes
 *   len bytes  the slot as the dataplane handed it over: struct shmr_msg
 *              (flags SHMR_F_ROUTE_FAILED, status = the reason, to = the
 *              router), its payload and, with SHMR_F_ROUTE_NAME, the name
 *              the router chose, NUL-terminated, right after the payload.
 * A dead letter whose payload was in an arena buffer (SHMR_F_ARENA: the
 * slot's payload is the reference) is followed by its payload, copied
 * when the letter is written (the buffer is given back right after):
 *   u32 plen | SHMR_DLQ_PAYLOAD   bytes that follow, at most
 *                                 SHMR_DLQ_PAYLOAD_MAX
 *   u32 check  FNV-1a 32 of them
 *   plen bytes the payload
 * and the two are one record to every reader (a slot flagged SHMR_F_ARENA
 * without its payload after it is a corrupted record).
 * Records are appended with one write() each; no fsync per record (a crash
 * may lose or truncate the last ones, which the reader reports).
 *
 * Pure: buffers and descriptors only; unit-tested in tests/unit/control.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dlq.h"

uint32_t shmr_ctl_dlq_check(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

/* Bytes of @p m worth keeping: header, payload, and the name if any. */
static size_t slot_used(const struct shmr_msg *m, size_t slot_size)
{
	size_t n = SHMR_HDR_SIZE + m->len;

	if (n > slot_size)
		return slot_size;
	if (m->flags & SHMR_F_ROUTE_NAME) {
		const unsigned char *end = memchr(m->data + m->len, 0,
						  slot_size - n);

		n = end ? (size_t)(end - (const unsigned char *)m) + 1
			: slot_size;
	}
	return n;
}

/* One writev() of @p n pieces, all of them or an error. */
static int write_all(int fd, struct iovec *iov, int n, size_t total)
{
	ssize_t w;

	do
		w = writev(fd, iov, n);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	if ((size_t)w != total)
		return -ENOSPC;
	return 0;
}

int shmr_ctl_dlq_append_payload(int fd, const struct shmr_msg *m,
				size_t slot_size, const void *payload,
				uint32_t plen)
{
	union {
		struct shmr_msg m;
		unsigned char b[SHMR_SLOT_MAX];
	} bare;
	uint32_t len, check, ph[2];
	unsigned char rh[8];
	struct iovec iov[4];

	if (slot_size < SHMR_HDR_SIZE || slot_size > SHMR_SLOT_MAX)
		return -EINVAL;
	if ((m->flags & SHMR_F_ARENA) &&
	    (!payload || plen > SHMR_DLQ_PAYLOAD_MAX)) {
		/* The buffer was not sound: the letter without a payload
		 * (and without the name, which followed the reference). */
		memcpy(&bare.m, m, SHMR_HDR_SIZE);
		bare.m.flags = (uint8_t)(m->flags &
					 ~(SHMR_F_ARENA | SHMR_F_ROUTE_NAME));
		bare.m.len = 0;
		m = &bare.m;
		payload = NULL;
	}
	len = (uint32_t)slot_used(m, slot_size);
	check = shmr_ctl_dlq_check(m, len);
	memcpy(rh, &len, 4);
	memcpy(rh + 4, &check, 4);
	iov[0] = (struct iovec){ rh, 8 };
	iov[1] = (struct iovec){ (void *)m, len };
	if (!(m->flags & SHMR_F_ARENA))
		return write_all(fd, iov, 2, 8 + (size_t)len);
	ph[0] = plen | SHMR_DLQ_PAYLOAD;
	ph[1] = shmr_ctl_dlq_check(payload, plen);
	iov[2] = (struct iovec){ ph, 8 };
	iov[3] = (struct iovec){ (void *)payload, plen };
	return write_all(fd, iov, 4, 16 + (size_t)len + plen);
}

int shmr_ctl_dlq_append(int fd, const struct shmr_msg *m, size_t slot_size)
{
	return shmr_ctl_dlq_append_payload(fd, m, slot_size, NULL, 0);
}

int shmr_ctl_dlq_next_payload(const unsigned char *buf, size_t size,
			      size_t off, struct shmr_msg *slot,
			      uint32_t *slen, const unsigned char **payload,
			      uint32_t *plen)
{
	uint32_t len, check, pl, pc;
	size_t at;

	*payload = NULL;
	*plen = 0;
	if (off >= size)
		return 0;
	if (size - off < 8)
		return -SHMR_E_PROTO;
	memcpy(&len, buf + off, 4);
	memcpy(&check, buf + off + 4, 4);
	if (len < SHMR_HDR_SIZE || len > SHMR_SLOT_MAX || size - off - 8 < len)
		return -SHMR_E_PROTO;
	if (shmr_ctl_dlq_check(buf + off + 8, len) != check)
		return -SHMR_E_PROTO;
	memcpy(slot, buf + off + 8, len);
	if (slot->len > len - SHMR_HDR_SIZE)
		return -SHMR_E_PROTO;
	*slen = len;
	if (!(slot->flags & SHMR_F_ARENA))
		return (int)(8 + len);
	at = off + 8 + len;
	if (size - at < 8)
		return -SHMR_E_PROTO;
	memcpy(&pl, buf + at, 4);
	memcpy(&pc, buf + at + 4, 4);
	if (!(pl & SHMR_DLQ_PAYLOAD))
		return -SHMR_E_PROTO;
	pl &= ~SHMR_DLQ_PAYLOAD;
	if (pl > SHMR_DLQ_PAYLOAD_MAX || size - at - 8 < pl ||
	    shmr_ctl_dlq_check(buf + at + 8, pl) != pc)
		return -SHMR_E_PROTO;
	*payload = buf + at + 8;
	*plen = pl;
	return (int)(16 + len + pl);
}

int shmr_ctl_dlq_next(const unsigned char *buf, size_t size, size_t off,
		      struct shmr_msg *slot, uint32_t *slen)
{
	const unsigned char *p;
	uint32_t n;

	return shmr_ctl_dlq_next_payload(buf, size, off, slot, slen, &p, &n);
}

void shmr_ctl_dlq_name(const struct shmr_msg *slot, uint32_t slen,
		       char out[SHMR_NAME_MAX])
{
	size_t at = SHMR_HDR_SIZE + (size_t)slot->len;
	const char *p = (const char *)slot + at;
	size_t n;

	out[0] = '?';
	out[1] = '\0';
	if (!(slot->flags & SHMR_F_ROUTE_NAME) || at >= slen)
		return;
	n = strnlen(p, slen - at);
	if (n == 0 || n >= SHMR_NAME_MAX || n == slen - at)
		return;
	memcpy(out, p, n + 1);
}

const char *shmr_ctl_dlq_reason(int32_t status)
{
	/* Every code: a dead letter's status is whatever failed it (a
	 * pool with no routees, a route gone, a full inbox, ...). */
	static const char *const names[] = {
#define NAME(e) [e - SHMR_E_BASE] = #e
		NAME(SHMR_E_NO_DOMAIN),       NAME(SHMR_E_PERM),
		NAME(SHMR_E_VERSION),         NAME(SHMR_E_PROTO),
		NAME(SHMR_E_TIMEOUT),         NAME(SHMR_E_TOO_BIG),
		NAME(SHMR_E_NAME),            NAME(SHMR_E_NO_ENDPOINT),
		NAME(SHMR_E_PROCESS_UNKNOWN), NAME(SHMR_E_NO_ROUTE),
		NAME(SHMR_E_DISCARDED),       NAME(SHMR_E_DISABLED),
		NAME(SHMR_E_BUSY),            NAME(SHMR_E_MAILBOX_FULL),
		NAME(SHMR_E_ROUTE_DUPLICATE), NAME(SHMR_E_ROUTE_RUNNING),
		NAME(SHMR_E_NOT_ALLOWED),     NAME(SHMR_E_NO_ENV),
		NAME(SHMR_E_NO_ROUTEES),      NAME(SHMR_E_CONTROL_LOST),
		NAME(SHMR_E_NO_BUFFER),
#undef NAME
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) ==
			       SHMR_E_LAST - SHMR_E_BASE,
		       "a name for every SHMR_E_ code");
	/* In 64 bits: the status is whatever the file holds, and -INT32_MIN
	 * or -INT32_MAX - SHMR_E_BASE overflow an int (found by fuzz_dlq). */
	int64_t e = -(int64_t)status - SHMR_E_BASE;

	if (e > 0 && e < (int64_t)(sizeof(names) / sizeof(names[0])) &&
	    names[e])
		return names[e];
	/* A route's start error (a restart that failed): -errno. */
	if (status < 0 && status > -SHMR_E_BASE) {
		const char *n = strerrorname_np(-status);

		if (n)
			return n;
	}
	return "SHMR_E_OTHER";
}

int shmr_ctl_dlq_format_from(const unsigned char *buf, size_t size,
			     unsigned from, char *out, size_t cap,
			     unsigned *next, int *corrupt, int *more)
{
	union {
		struct shmr_msg m;
		unsigned char b[SHMR_SLOT_MAX];
	} slot;
	size_t off = 0, len = 0;
	const unsigned char *payload;
	uint32_t slen, plen;
	int rc;

	*next = 0;
	*corrupt = 0;
	*more = 0;
	if (cap)
		out[0] = '\0';
	while ((rc = shmr_ctl_dlq_next_payload(buf, size, off, &slot.m, &slen,
					       &payload, &plen)) > 0) {
		char name[SHMR_NAME_MAX];
		int n;

		if (*next >= from) {
			shmr_ctl_dlq_name(&slot.m, slen, name);
			n = snprintf(out + len, cap - len,
				     "%u reason=%s name=%s type=%" PRIu32
				     " key=%" PRIu64 " from=%" PRIu32
				     ":%" PRIu32 " len=%" PRIu32 "\n",
				     *next, shmr_ctl_dlq_reason(slot.m.status),
				     name, slot.m.type, slot.m.key,
				     slot.m.from.slot, slot.m.from.gen,
				     payload ? plen : slot.m.len);
			if (n < 0 || (size_t)n >= cap - len) {
				/* Full: the line that did not fit is cut. */
				if (cap)
					out[len] = '\0';
				if (len == 0)
					return -ENOSPC;
				*more = 1;
				return (int)len;
			}
			len += (size_t)n;
		}
		off += (size_t)rc;
		(*next)++;
	}
	if (rc < 0)
		*corrupt = 1;
	return (int)len;
}

int shmr_ctl_dlq_format(const unsigned char *buf, size_t size, char *out,
			size_t cap, unsigned *count, int *corrupt)
{
	int more, n = shmr_ctl_dlq_format_from(buf, size, 0, out, cap, count,
					       corrupt, &more);

	return n >= 0 && more ? -ENOSPC : n;
}

long shmr_ctl_dlq_count(const unsigned char *buf, size_t size)
{
	union {
		struct shmr_msg m;
		unsigned char b[SHMR_SLOT_MAX];
	} slot;
	size_t off = 0;
	uint32_t slen;
	long n = 0;
	int rc;

	while ((rc = shmr_ctl_dlq_next(buf, size, off, &slot.m, &slen)) > 0) {
		off += (size_t)rc;
		n++;
	}
	return n;
}
