/*
 * A domain configured past the old compile-time limits (issue 16: limits
 * from configuration), on the real daemons: max_names = 300 (the old
 * registry held 128 entries, routers' names included).  Every name
 * registered is found by shmr_lookup() and routed to by the dataplane
 * (a type router whose targets are registry names past the 128th
 * entry), and the registry is full at exactly max_names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shmr_test_app.h"

#define NAMES 300 /* max_names below */

/* The router's targets: registry names registered 10th, 200th and
 * 299th (the last one that fits with the router's own name). */
#define CONF                                                                 \
	"lcores = 1;\nmax_names = 300;\n"                                    \
	"routers = ( { name = \"reg\"; behaviour = \"type\";\n"              \
	"  types = ( { type = 1; route = \"n10\"; },\n"                      \
	"            { type = 2; route = \"n200\"; },\n"                     \
	"            { type = 3; route = \"n298\"; } );\n"                   \
	"  routes = ( ); } );\n"

/* A message of @p type through the router reaches @p rx, as sent. */
static void routed(struct shmr_test_client *c, struct shmr_endpoint *rx,
		   struct shmr_pid router, uint32_t type, uint64_t key)
{
	const struct shmr_msg *m[4];
	int n;

	while (shmr_send(c->ep, router, type, key, &key, sizeof(key)) ==
	       -EAGAIN)
		;
	n = shmr_recv_burst(rx, m, 4, 10000);
	assert_int_equal(n, 1);
	assert_int_equal(m[0]->type, type);
	assert_int_equal(m[0]->key, key);
}

static void names_past_128(void **state)
{
	struct shmr_test_client c;
	struct shmr_endpoint *rx;
	struct shmr_pid router, me, got;
	char name[SHMR_NAME_MAX];
	int rc;

	(void)state;
	assert_int_equal(shmr_test_client_start(&c, "biglim", CONF, -1), 0);
	assert_int_equal(shmr_lookup(c.d, "reg", &router), 0);
	assert_int_equal(shmr_endpoint_open(c.d, &rx), 0);
	me = shmr_endpoint_pid(rx);
	/* The router's name is one entry: 299 more fit, the 300th not. */
	for (int i = 0; i < NAMES - 1; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		rc = shmr_register(rx, name);
		if (rc != 0)
			fail_msg("register %s (entry %d): %s", name, i + 2,
				 shmr_strerror(rc));
	}
	assert_int_equal(shmr_register(rx, "one_too_many"), -ENOSPC);
	for (int i = 0; i < NAMES - 1; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(shmr_lookup(c.d, name, &got), 0);
		assert_int_equal(got.slot, me.slot);
		assert_int_equal(got.gen, me.gen);
	}
	assert_int_equal(shmr_lookup(c.d, "one_too_many", &got),
			 -SHMR_E_PROCESS_UNKNOWN);
	routed(&c, rx, router, 1, 10);
	routed(&c, rx, router, 2, 200);
	routed(&c, rx, router, 3, 298);
	shmr_endpoint_close(rx);
	assert_int_equal(shmr_test_client_stop(&c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_past_128),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
