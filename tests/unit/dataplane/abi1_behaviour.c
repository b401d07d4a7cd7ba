/*
 * A behaviour object as an ABI 1 build left it: the struct ends at
 * route_call, and its abi field says 1.  Built from this test-local copy
 * of the old layout (not <shmr/behaviour.h>'s struct) so that nothing
 * past route_call exists in the object.  Every message goes to "r1".
 */
#include <stdint.h>

#include <shmr/shmr.h>

struct abi1_behaviour {
	uint32_t abi;
	int (*init)(const char *arg, void **state);
	void (*fini)(void *state);
	const char *(*route_message)(void *state, const struct shmr_msg *msg);
	const char *(*route_call)(void *state, const struct shmr_msg *msg);
};

static const char *to_r1(void *state, const struct shmr_msg *msg)
{
	(void)state;
	(void)msg;
	return "r1";
}

const struct abi1_behaviour shmr_behaviour = {
	.abi = 1,
	.route_message = to_r1,
	.route_call = to_r1,
};
