/* What shmr-test-worker answers to any call. */
#ifndef SHMR_TEST_WORKER_H
#define SHMR_TEST_WORKER_H

#include <stdint.h>

#include <shmr/shmr.h>

struct shmr_test_stats {
	uint64_t count;         /* sends received */
	uint64_t misrouted;     /* sends whose type was not --expect-type */
	uint64_t from_mismatch; /* sends whose From differs from the first */
	uint64_t redelivered;   /* sends flagged SHMR_F_REDELIVERED */
	uint64_t calls;
	uint64_t last_ref;      /* the ref of this call, as the worker saw it */
	struct shmr_pid first_from;
	struct shmr_pid last_call_from;
	struct shmr_pid self;
	char tag[8];            /* route name (truncated) */
};

/* A reply must fit the default 128-byte slot's 80-byte payload. */
_Static_assert(sizeof(struct shmr_test_stats) <= 80, "stats fit a slot");

#endif
