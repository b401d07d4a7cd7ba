/*
 * What shmr-perf asks shmr-perf-sink, and what the sink answers.  Both fit
 * the payload of the smallest slot (64 - 48 = 16 bytes).  Not installed.
 *
 * A call carries struct perf_req; the reply carries struct perf_ans.  Sends
 * carry the sender's sequence in the key: the sink checks, per sender, that
 * each key is the last one plus the stride it was started with (stride 0:
 * only that keys grow, for routing logics that may pick any sink).
 */
#ifndef SHMR_PERF_PROTO_H
#define SHMR_PERF_PROTO_H

#include <assert.h>
#include <stdint.h>

enum perf_op {
	PERF_OP_PING = 1,   /* ans: {route index, 0} */
	PERF_OP_EXPECT = 2, /* arg: sends to expect from the caller; resets
			     * its counters. ans: {route index, 0} */
	PERF_OP_COUNT = 3,  /* ans: {received from caller, ns (CLOCK_MONOTONIC)
			     * when the expected count was reached, else 0} */
	PERF_OP_ERRORS = 4, /* ans: {gaps, reorders} from the caller */
	PERF_OP_TOTAL = 5,  /* ans: {sends from anyone, redelivered} */
	PERF_OP_LAST = 6,   /* ans: {received from caller, ns (CLOCK_MONOTONIC)
			     * after the last burst holding a send; kept by a
			     * sink started with --stride 0 only} */
};

struct perf_req {
	uint32_t op;
	uint32_t pad;
	uint64_t arg;
};

struct perf_ans {
	uint64_t a;
	uint64_t b;
};

static_assert(sizeof(struct perf_req) == 16, "fits a 64-byte slot");
static_assert(sizeof(struct perf_ans) == 16, "fits a 64-byte slot");

#endif
