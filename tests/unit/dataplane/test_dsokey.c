/*
 * A consistent-hash router that names a behaviour object hashes the
 * object's message_key (ABI 2) instead of the message's key field
 * (examples/key_example.c: the payload's first 8 bytes); an ABI 1 object
 * still loads, as a "dso" router and as a consistent-hash router's dso
 * (which then hashes msg->key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dp_test.h"

#define NR 3u


static const char *const rname[NR] = { "r0", "r1", "r2" };

/* Router "k" of @p behaviour over r0..r2, naming @p dso ("" for none). */
static unsigned spec_router(struct dp_fix *f, uint32_t behaviour,
			    const char *dso, uint32_t vnodes)
{
	unsigned ri;
	struct shmr_spec_router *r = dp_fix_router(f, behaviour, &ri);

	snprintf(r->dso, sizeof(r->dso), "%s", dso);
	r->vnodes = vnodes;
	for (unsigned i = 0; i < NR; i++)
		dp_route(&f->d, ri, rname[i], f->r[i], SHMR_ROUTE_RUNNING);
	dp_fix_build(f);
	return ri;
}

/* The routee name router @p ri picks for a send with @p key and a
 * payload whose first 8 bytes are @p pkey. */
static const char *pick(struct dp_fix *f, unsigned ri, uint64_t key,
			uint64_t pkey)
{
	return dp_fix_pick(f, ri, key, &pkey, sizeof(pkey), sizeof(pkey));
}

static const char *need(const char *var)
{
	const char *p = getenv(var);

	if (!p || !*p)
		skip();
	return p;
}

/* The pick follows the payload's key, not msg->key. */
static void test_key_from_payload(void **state)
{
	struct dp_fix *f = *state;
	const char *path = need("SHMR_EXAMPLE_KEY");
	unsigned ri = spec_router(f, SHMR_BEH_CONSISTENT_HASH, path, 50);
	const struct shmr_dp_router *r = &f->t->routers[ri];
	unsigned differ = 0;

	assert_non_null(r->ops);
	assert_non_null(r->key.key);
	assert_int_equal(r->ring->vnodes, 50);
	for (uint64_t pkey = 0; pkey < 300; pkey++) {
		const char *want =
			r->routees[shmr_logic_chash_lookup(r->ring, pkey)]
				.tgt.name;

		/* Whatever the key field says. */
		for (uint64_t key = 0; key < 5; key++)
			assert_string_equal(pick(f, ri, key * 7919 + pkey * 3,
						 pkey),
					    want);
		/* And not what msg->key alone would choose. */
		differ += strcmp(want,
				 r->routees[shmr_logic_chash_lookup(
						    r->ring, pkey * 3 + 1)]
					 .tgt.name) != 0;
	}
	assert_true(differ > 0);

	/* Without the object, the same router hashes msg->key. */
	ri = spec_router(f, SHMR_BEH_CONSISTENT_HASH, "", 50);
	r = &f->t->routers[ri];
	assert_null(r->ops);
	assert_null(r->key.key);
	for (uint64_t key = 0; key < 300; key++)
		assert_string_equal(
			pick(f, ri, key, key * 31 + 5),
			r->routees[shmr_logic_chash_lookup(r->ring, key)]
				.tgt.name);

	/* Routing itself is not what it does: as a "dso" router it does
	 * not load (no route_message, no route_call). */
	ri = spec_router(f, SHMR_BEH_DSO, path, 0);
	assert_null(f->t->routers[ri].ops);
}

/* An object that cannot be loaded leaves msg->key. */
static void test_missing_object(void **state)
{
	struct dp_fix *f = *state;
	unsigned ri = spec_router(f, SHMR_BEH_CONSISTENT_HASH,
				  "/nonexistent/libnothing.so", 0);
	const struct shmr_dp_router *r = &f->t->routers[ri];

	assert_null(r->ops);
	assert_null(r->key.key);
	assert_int_equal(r->ring->vnodes, SHMR_CHASH_VNODES_DEFAULT);
	for (uint64_t key = 0; key < 100; key++)
		assert_string_equal(
			pick(f, ri, key, ~key),
			r->routees[shmr_logic_chash_lookup(r->ring, key)]
				.tgt.name);
}

/* ABI 1 objects still load: routing by route_message, and as a
 * consistent-hash router's dso with no key function. */
static void test_abi1_loads(void **state)
{
	struct dp_fix *f = *state;
	const char *path = need("SHMR_TEST_ABI1");
	unsigned ri = spec_router(f, SHMR_BEH_DSO, path, 0);
	const struct shmr_dp_router *r = &f->t->routers[ri];

	assert_non_null(r->ops);
	assert_int_equal(r->ops->abi, 1);
	assert_null(r->key.key);
	for (uint64_t key = 0; key < 10; key++)
		assert_string_equal(pick(f, ri, key, key), "r1");

	ri = spec_router(f, SHMR_BEH_CONSISTENT_HASH, path, 0);
	r = &f->t->routers[ri];
	assert_non_null(r->ops);
	assert_null(r->key.key);
	for (uint64_t key = 0; key < 100; key++)
		assert_string_equal(
			pick(f, ri, key, ~key),
			r->routees[shmr_logic_chash_lookup(r->ring, key)]
				.tgt.name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_key_from_payload, dp_fix_setup,
						dp_fix_teardown),
		cmocka_unit_test_setup_teardown(test_missing_object, dp_fix_setup,
						dp_fix_teardown),
		cmocka_unit_test_setup_teardown(test_abi1_loads, dp_fix_setup,
						dp_fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
