/*
 * Dead-letter records (dlq.c; the file format in its header comment).
 * Internal to the control plane: not for direct inclusion outside control/
 * and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_DLQ_H
#define SHMR_CONTROL_DLQ_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/layout.h>
#include <shmr/shmr.h>

/** FNV-1a 32 of @p n bytes: a record's check word. */
uint32_t shmr_ctl_dlq_check(const void *p, size_t n);

/**
 * Append the MessageRouteFailed slot @p m (of a domain with @p slot_size
 * byte slots) to the open file @p fd as one record, in one write().
 * Context: blocking I/O.  Errors: -errno, -ENOSPC (short write),
 *          -EINVAL (slot size out of range).
 */
int shmr_ctl_dlq_append(int fd, const struct shmr_msg *m, size_t slot_size);

/* A payload record's mark (dlq.c's format), and its largest length. */
#define SHMR_DLQ_PAYLOAD 0x80000000u
#define SHMR_DLQ_PAYLOAD_MAX (1u << 30)

/**
 * As shmr_ctl_dlq_append(), for a slot flagged SHMR_F_ARENA: its payload,
 * @p plen bytes at @p payload (read from its buffer), is written after
 * it, in the same write.  A NULL @p payload (the buffer was not sound)
 * writes the letter without payload, flag or name.  Other slots: as
 * shmr_ctl_dlq_append() (@p payload unused).
 * Context: blocking I/O.  Errors: as shmr_ctl_dlq_append().
 */
int shmr_ctl_dlq_append_payload(int fd, const struct shmr_msg *m,
				size_t slot_size, const void *payload,
				uint32_t plen);

/**
 * Read the record at @p off of a file image @p buf of @p size bytes into
 * @p slot (SHMR_SLOT_MAX bytes, aligned for struct shmr_msg).
 * Returns: the record's size (> 0; the next one starts there), 0 at the
 *          end, -SHMR_E_PROTO for a truncated or corrupted record (bad
 *          length, check word, or payload length).
 */
int shmr_ctl_dlq_next(const unsigned char *buf, size_t size, size_t off,
		      struct shmr_msg *slot, uint32_t *slen);

/**
 * As shmr_ctl_dlq_next(), and for a letter whose payload was in an arena
 * buffer (@p slot flagged SHMR_F_ARENA) that payload: @p *payload points
 * into @p buf, @p *plen bytes (NULL and 0 for other letters).
 * Returns: as shmr_ctl_dlq_next() (the size covers both parts).
 */
int shmr_ctl_dlq_next_payload(const unsigned char *buf, size_t size,
			      size_t off, struct shmr_msg *slot,
			      uint32_t *slen, const unsigned char **payload,
			      uint32_t *plen);

/** The name the router chose (SHMR_F_ROUTE_NAME), or "?" without one. */
void shmr_ctl_dlq_name(const struct shmr_msg *slot, uint32_t slen,
		       char out[SHMR_NAME_MAX]);

/** "SHMR_E_PROCESS_UNKNOWN", ... for a record's status; "SHMR_E_OTHER". */
const char *shmr_ctl_dlq_reason(int32_t status);

/**
 * DLQ_LIST body: one line per record, "<index> reason=<R> name=<N>
 * type=T key=K from=S:G len=L"; stops at the first bad record (*corrupt
 * = 1).  Returns the length, or -ENOSPC.
 */
int shmr_ctl_dlq_format(const unsigned char *buf, size_t size, char *out,
			size_t cap, unsigned *count, int *corrupt);

/**
 * As shmr_ctl_dlq_format(), a part of it: the records from index @p from
 * on, as many whole lines as fit in @p cap (*more = 1 when one did not:
 * the list goes on at *next).  *next: the index after the last record
 * listed.  Returns the length, or -ENOSPC when not even one line fits.
 */
int shmr_ctl_dlq_format_from(const unsigned char *buf, size_t size,
			     unsigned from, char *out, size_t cap,
			     unsigned *next, int *corrupt, int *more);

/** Sound records at the start of @p buf. */
long shmr_ctl_dlq_count(const unsigned char *buf, size_t size);

#endif
