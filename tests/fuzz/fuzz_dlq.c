/*
 * libFuzzer target: the dead-letter record decoder (control/dlq.c), a
 * dead-letter file image in, records listed and counted out.
 *
 * The first input byte is the harness's: with its low bit set, the check
 * word of every record the lengths delimit is recomputed before decoding,
 * so the fuzzer reaches the slot decoding behind the checksum (which it
 * could not guess); with it clear, the image is decoded as it is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rewrite the check word of each record of @p buf that fits. */
static void fix_checks(unsigned char *buf, size_t size)
{
	size_t off = 0;

	while (size - off >= 8) {
		uint32_t len, check;

		memcpy(&len, buf + off, 4);
		if (len > size - off - 8)
			return;
		check = shmr_ctl_dlq_check(buf + off + 8, len);
		memcpy(buf + off + 4, &check, 4);
		off += 8 + (size_t)len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[4096];
	unsigned count;
	int corrupt, n;
	unsigned char *buf;
	long c;

	if (size < 1)
		return 0;
	buf = malloc(size - 1 ? size - 1 : 1); /* exact size, for ASan */
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	if (data[0] & 1)
		fix_checks(buf, size - 1);
	c = shmr_ctl_dlq_count(buf, size - 1);
	n = shmr_ctl_dlq_format(buf, size - 1, out, sizeof(out), &count,
				&corrupt);
	/* Listing and counting agree whenever the list fitted. */
	if (n >= 0 && (long)count != c)
		abort();
	if (n >= 0 && (size_t)n >= sizeof(out))
		abort();
	free(buf);
	return 0;
}
