/*
 * The trust boundary (issue 11), against the real daemons: what a peer
 * that maps the domain read-write, or a client that names a PID that
 * cannot exist, must not be able to do to the appliance.
 *
 *   - A call to a slot out of range, or to a free slot, fails at once with
 *     SHMR_E_PROCESS_UNKNOWN instead of waiting for its timeout.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>

#include <shmr/domain.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CONF                                                                   \
	"lcores = 2;\npoll_mode = \"adaptive\";\n"                             \
	"routers = ( { name = \"r\"; behaviour = \"type\";\n"                 \
	"  types = ( { type = 1; route = \"victim\"; },\n"                     \
	"            { type = 2; route = \"bystander\"; } );\n"               \
	"  routes = (\n"                                                       \
	"    { name = \"victim\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"1\"]; },\n" \
	"    { name = \"bystander\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"2\"]; } );\n" \
	"} );\n"

/* What "at once" means here, against a call timeout of CALL_MS. */
#define CALL_MS 10000
#define AT_ONCE_MS 2000

struct ctx {
	struct shmr_test_client c;
	struct shmr_pid router;
};

static int group_setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	if (!x || shmr_test_client_start(&x->c, "trust", CONF, 1) < 0)
		return -1;
	if (shmr_lookup(x->c.d, "r", &x->router) < 0)
		return -1;
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *x = *state;
	int left = shmr_test_client_stop(&x->c);

	free(x);
	return left == 0 ? 0 : -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Hole 5: a call to slot 9999 (no such slot) or to a free slot. */
static void test_call_unknown_slot_fails_at_once(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid nosuch = { 9999, 1 };
	struct shmr_pid free_slot = { 0, 1 };
	char buf[8];
	int64_t t0;

	/* A slot nobody holds (the endpoint table, as published). */
	while (atomic_load(&shmr_ep_at(x->c.base, free_slot.slot)->state) !=
	       SHMR_EP_FREE)
		free_slot.slot++;
	assert_true(free_slot.slot < SHMR_MAX_ENDPOINTS);

	t0 = now_ms();
	assert_int_equal(shmr_call(x->c.ep, nosuch, 1, 0, "x", 1, buf,
				   sizeof(buf), CALL_MS),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_true(now_ms() - t0 < AT_ONCE_MS);
	t0 = now_ms();
	assert_int_equal(shmr_call(x->c.ep, free_slot, 1, 0, "x", 1, buf,
				   sizeof(buf), CALL_MS),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_true(now_ms() - t0 < AT_ONCE_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_unknown_slot_fails_at_once),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
