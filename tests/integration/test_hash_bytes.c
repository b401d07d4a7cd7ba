/*
 * Consistent hashing by bytes (issue 12), through the real appliance
 * (shmr-control, the dataplane, shmr-test-worker routes that answer a
 * call with their route name), checked from outside as a user would:
 *
 *   payload key   hash_key = { offset = 4; length = 8; }: calls carrying
 *                 the same account id in those bytes reach the same
 *                 worker whatever the bytes around it and the key field
 *                 say; the ids spread over more than one worker
 *   pekko mode    hash_mode = "pekko" with node_prefix: each key reaches
 *                 the worker that Pekko's ConsistentHash gives it, per
 *                 the vectors computed from Pekko's algorithm
 *                 (tests/unit/dataplane/pekko_vectors.py)
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
#include "client_checks.h"
#include "test_worker.h"

#include "../unit/dataplane/pekko_vectors.h"

#define CALL_MS 5000
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A call through @p router carrying @p payload; the answering worker's
 * route name in @p tag. */
static void call_tag(struct shmr_test_client *cl, const char *router,
		     uint64_t key, const char *payload, char tag[16])
{
	struct shmr_test_stats st;
	int rc = shmr_call(cl->ep, client_lookup(cl, router), 1, key, payload,
			   strlen(payload), &st, sizeof(st), CALL_MS);

	assert_int_equal(rc, (int)sizeof(st));
	st.tag[sizeof(st.tag) - 1] = '\0';
	snprintf(tag, 16, "%s", st.tag);
}

static void test_payload_key(void **state)
{
	struct shmr_test_client *cl = client_ctx_start(
		sizeof(*cl), "hashpay",
		"routers = (\n"
		"  { name = \"acct\"; behaviour = \"consistent-hash\";\n"
		"    hash_key = { offset = 4; length = 8; };\n"
		"    routes = (\n"
		"      { name = \"a0\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"a1\"; program = \"shmr-test-worker\"; },\n"
		"      { name = \"a2\"; program = \"shmr-test-worker\"; } ); }\n"
		");\n",
		0);
	unsigned seen = 0;
	(void)state;

	for (unsigned id = 0; id < 24; id++) {
		char first[16], tag[16], msg[64];

		for (unsigned v = 0; v < 4; v++) {
			/* "HDR<v>", the id's 8 bytes, a tail that varies */
			snprintf(msg, sizeof(msg), "HDR%uacct%04u|t%u", v, id,
				 v * 31 + id);
			call_tag(cl, "acct", v * 7919 + id * 13, msg,
				 v ? tag : first);
			if (v)
				assert_string_equal(tag, first);
		}
		assert_true(first[0] == 'a' && first[1] >= '0' &&
			    first[1] <= '2');
		seen |= 1u << (first[1] - '0');
	}
	assert_true(__builtin_popcount(seen) > 1);
	client_ctx_stop(cl);
}

static void test_pekko_mode(void **state)
{
	char body[1024];
	struct shmr_test_client *cl;
	(void)state;

	snprintf(body, sizeof(body),
		 "routers = (\n"
		 "  { name = \"orders\"; behaviour = \"consistent-hash\";\n"
		 "    hash_key = \"payload\"; hash_mode = \"pekko\";\n"
		 "    node_prefix = \"%s\"; virtual_nodes = %d;\n"
		 "    routes = (\n"
		 "      { name = \"%s\"; program = \"shmr-test-worker\"; },\n"
		 "      { name = \"%s\"; program = \"shmr-test-worker\"; },\n"
		 "      { name = \"%s\"; program = \"shmr-test-worker\"; },\n"
		 "      { name = \"%s\"; program = \"shmr-test-worker\"; } ); }\n"
		 ");\n",
		 PK_RING_PREFIX, PK_RING_VNODES, pk_ring_routees[0],
		 pk_ring_routees[1], pk_ring_routees[2], pk_ring_routees[3]);
	cl = client_ctx_start(sizeof(*cl), "hashpk", body, 0);
	for (size_t i = 0; i < N(pk_ring_vecs); i++) {
		char tag[16];

		call_tag(cl, "orders", i, pk_ring_vecs[i].key, tag);
		if (strcmp(tag, pk_ring_routees[pk_ring_vecs[i].owner_bytes]))
			fail_msg("key \"%s\": answered by %s, Pekko's ring "
				 "gives %s",
				 pk_ring_vecs[i].key, tag,
				 pk_ring_routees[pk_ring_vecs[i].owner_bytes]);
	}
	client_ctx_stop(cl);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload_key),
		cmocka_unit_test(test_pekko_mode),
	};

	return cmocka_run_group_tests_name("hash_bytes", tests, NULL, NULL);
}
