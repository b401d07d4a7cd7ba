/*
 * An example custom routing behaviour: how a worker author writes the
 * routing decision of a router in C and has shmr-dataplane load it.
 *
 * What it does: messages whose type is below a threshold (100 unless
 * dso_arg says otherwise) go to the route "payments"; every other message
 * goes by the parity of its key, even keys to "shipments" and odd keys to
 * "reports".  Calls are routed the same way.
 *
 * Build it as a shared object that includes only <shmr/behaviour.h>:
 *
 *     cc -shared -fPIC -o libmy-behaviour.so my_behaviour.c \
 *        $(pkg-config --cflags shmr)
 *
 * and name it in the router's configuration:
 *
 *     routers = ( { name = "events"; behaviour = "dso";
 *                   dso = "/usr/local/lib/libmy-behaviour.so";
 *                   dso_arg = "100";
 *                   routes = ( ... payments, shipments, reports ... ); } );
 *
 * The rules a behaviour lives by (see <shmr/behaviour.h>):
 *   - Export one symbol, `shmr_behaviour`, with .abi = SHMR_BEHAVIOUR_ABI.
 *     The dataplane refuses an object built for another ABI.
 *   - init() runs on the dataplane's update thread each time the router's
 *     table is rebuilt, with the configured dso_arg; it may allocate.
 *     Return a negative errno to refuse: the router then discards.
 *     fini() frees what init() made once no lcore can use it any more.
 *   - route_message() and route_call() run on the routing lcores, for
 *     every message, possibly on several lcores at once with the same
 *     state: no blocking, no sleeping, no allocation, no syscalls, and
 *     treat the state as read-only.
 *   - Return a route name (the router's own routes are looked up first,
 *     then the domain's registry) or NULL / "" to discard the message (a
 *     discarded call is answered with SHMR_E_DISCARDED).  The string must
 *     outlive the call: a literal, or memory inside the state.
 *   - The message is a read-only copy; msg->from and msg->ref are the
 *     original sender's and are delivered unchanged to the chosen worker,
 *     which answers the caller directly.
 */
#include <errno.h>
#include <stdlib.h>

#include <shmr/behaviour.h>

struct example_state {
	uint32_t threshold; /* types below it are payments */
};

static int example_init(const char *arg, void **state)
{
	struct example_state *st = malloc(sizeof(*st));
	unsigned long v = 100;
	char *end;

	if (!st)
		return -ENOMEM;
	if (arg && arg[0] != '\0') {
		v = strtoul(arg, &end, 10);
		if (*end != '\0' || v > UINT32_MAX) {
			free(st);
			return -EINVAL;
		}
	}
	st->threshold = (uint32_t)v;
	*state = st;
	return 0;
}

static void example_fini(void *state)
{
	free(state);
}

static const char *example_route(void *state, const struct shmr_msg *msg)
{
	const struct example_state *st = state;

	if (msg->type < st->threshold)
		return "payments";
	return msg->key % 2 == 0 ? "shipments" : "reports";
}

const struct shmr_behaviour shmr_behaviour = {
	.abi = SHMR_BEHAVIOUR_ABI,
	.init = example_init,
	.fini = example_fini,
	.route_message = example_route,
	.route_call = example_route,
};
