/*
 * What shmr-large-worker and test_large.c share: an allocation that waits
 * out an empty arena class (its receivers release buffers).  Test code
 * only; a bound of about 10 s.
 */
#ifndef SHMR_LARGE_BUF_H
#define SHMR_LARGE_BUF_H

#include <time.h>

#include <shmr/shmr.h>

static inline int large_alloc_wait(struct shmr_endpoint *ep, size_t len,
				   struct shmr_buf *b)
{
	int rc = -SHMR_E_NO_BUFFER;

	for (int i = 0; i < 10000 && rc == -SHMR_E_NO_BUFFER; i++) {
		struct timespec ts = { 0, 1000000 };

		rc = shmr_buf_alloc(ep, len, b);
		if (rc == -SHMR_E_NO_BUFFER)
			nanosleep(&ts, NULL);
	}
	return rc;
}

#endif
