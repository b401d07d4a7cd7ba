/*
 * What tests/stress/test_scribble.c and shmr-scribble-worker say to each
 * other: the round a test asks for (a call's payload), and the report the
 * worker leaves in its --state file (replaced whole, by rename) once the
 * round's writes are done and before it acts (exits, kills itself or
 * stays).  Also the bystander's (--sequence) answer to a call.
 */
#ifndef SHMR_SCRIBBLE_H
#define SHMR_SCRIBBLE_H

#include <stdint.h>

#define SCRIB_MAGIC 0x53435242u /* "SCRB" */

/* struct scrib_round.mode */
enum scrib_mode {
	/* Random writes to what the worker may write (its lanes' ring
	 * headers, slots, raw bad slots, its bell and busy line, the lcore
	 * bells), and one same-value write to a region only the daemons
	 * write; then the action the seed picks. */
	SCRIB_MODE_LANES = 1,
	/* Only same-value writes, each to a word of a region only the
	 * daemons write (header geometry, endpoint table, spec, registry,
	 * lcore counters); every one must fault.  The worker stays. */
	SCRIB_MODE_READONLY = 2,
};

/* struct scrib_report.action: what the worker does after its report. */
enum scrib_action {
	SCRIB_STAY = 0, /* keeps receiving and sending */
	SCRIB_EXIT = 1, /* _exit(7) */
	SCRIB_KILL = 2, /* SIGKILL to itself */
};

struct scrib_round {
	uint32_t magic;
	uint32_t round;
	uint64_t seed;
	uint32_t mode; /* enum scrib_mode */
	uint32_t pad;
};

struct scrib_report {
	uint32_t magic;
	uint32_t round;
	uint32_t action;   /* enum scrib_action */
	uint32_t mode;
	uint64_t landed;   /* writes to writable targets that took */
	uint64_t faulted;  /* writes to writable targets that faulted */
	uint64_t raw_slots; /* bad slots put into its own outbound lanes */
	uint64_t ro_tries; /* same-value writes to daemons-only regions */
	uint64_t ro_landed;
	uint64_t ro_faulted;
	char first_ro_landed[48]; /* what the first landed one was */
};

/* The bystander's (--sequence) answer to any call. */
struct scrib_seq_stats {
	uint64_t count;        /* sends of the expected type received */
	uint64_t next;         /* the key it expects next */
	uint64_t out_of_order; /* sends whose key was not `next` */
	uint64_t calls;
};

/* Answers are one default slot's payload (128 - 48 bytes) at most. */
_Static_assert(sizeof(struct scrib_seq_stats) <= 80, "fits a slot");
_Static_assert(sizeof(struct scrib_round) <= 80, "fits a slot");

#endif
