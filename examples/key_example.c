/*
 * An example behaviour object that reuses a built-in routing logic
 * instead of routing itself (ABI 2): consistent-hash over a pool of three,
 * keyed by the first 8 bytes of each message's payload rather than by the
 * message's key field.
 *
 * A router that names it needs no behaviour and no pool size:
 *
 *     routers = ( { name = "accounts";
 *                   dso = "/usr/local/lib/shmr/libshmr-example-key.so";
 *                   pool = { program = "my-worker"; }; } );
 *
 * runs consistent-hash (the object's `logic`) over a pool of 3 (its
 * `pool_size`) with 50 virtual nodes per routee (its `virtual_nodes`),
 * and every message with the same first 8 payload bytes reaches the same
 * routee, whatever its key field says; the pool has Pekko's optimal-size
 * exploring resizer (its `resizer`).  Anything the configuration gives
 * wins: `behaviour = "round-robin"; pool = { size = 2; ... }` runs
 * round-robin over two (a logic other than consistent-hash does not use
 * message_key).
 *
 * message_key() runs on the routing lcores for every message: the same
 * rules as route_message (no blocking, no allocation, no syscalls; the
 * message is a read-only copy).
 */
#include <string.h>

#include <shmr/behaviour.h>

/* The payload's first 8 bytes, as the sender's memory held them (native
 * byte order); a shorter payload is padded with zero bytes. */
static uint64_t payload_key(void *state, const struct shmr_msg *msg)
{
	uint64_t key = 0;

	(void)state;
	memcpy(&key, msg->data,
	       msg->len < sizeof(key) ? msg->len : sizeof(key));
	return key;
}

const struct shmr_behaviour shmr_behaviour = {
	.abi = SHMR_BEHAVIOUR_ABI,
	.message_key = payload_key,
	.logic = "consistent-hash",
	.pool_size = 3,
	.virtual_nodes = 50,
	.resizer = "optimal",
};
