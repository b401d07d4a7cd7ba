/*
 * Consistent hashing by bytes (issue 12): the key taken from the payload
 * (all of it, or an offset and length, a short payload hashing the bytes
 * it has), and the "pekko" and "pekko-string" ring modes checked against
 * vectors computed from Pekko's published algorithm by an independent
 * implementation (pekko_vectors.py, which wrote pekko_vectors.h).  The
 * "shmr" mode's ring is checked against its documented definition
 * (docs/logics/consistent-hash.md), so an outside tool can predict it.
 */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rte_jhash.h>

#include "dp_test.h"
#include "logic.h"
#include "pekko_vectors.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NR 4u

static void test_pekko_murmur_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(pk_hash_vecs); i++) {
		const struct pk_bytes_vec *v = &pk_hash_vecs[i];

		assert_int_equal(v->fn == 'a'
					 ? shmr_logic_pekko_array_hash(v->b, v->n)
					 : shmr_logic_pekko_string_hash(v->b, v->n),
				 v->hash);
	}
	for (size_t i = 0; i < N(pk_vnode_vecs); i++)
		assert_int_equal(shmr_logic_pekko_vnode_hash(
					 pk_vnode_vecs[i].node,
					 pk_vnode_vecs[i].vnode),
				 pk_vnode_vecs[i].hash);
}

static struct shmr_logic_chash *ring_new(uint32_t mode, const char *prefix,
					 struct shmr_logic_chash_index **ix)
{
	size_t size = shmr_logic_chash_size(NR, PK_RING_VNODES);
	size_t isz = shmr_logic_chash_index_size(NR * PK_RING_VNODES);
	struct shmr_logic_chash *r = aligned_alloc(8, (size + isz + 7) & ~7ul);

	assert_non_null(r);
	assert_int_equal(shmr_logic_chash_build_mode(r, size, pk_ring_routees,
						     NR, PK_RING_VNODES, mode,
						     prefix),
			 NR * PK_RING_VNODES);
	*ix = (void *)((char *)r + ((size + 7) & ~7ul));
	assert_true(shmr_logic_chash_index_build(*ix, isz, r) > 0);
	return r;
}

/* The ring of the vectors' four routees owns each key as Pekko's does. */
static void test_pekko_ring_vectors(void **state)
{
	struct shmr_logic_chash_index *ix, *ixs;
	struct shmr_logic_chash *rb = ring_new(SHMR_HASH_MODE_PEKKO,
					       PK_RING_PREFIX, &ix);
	struct shmr_logic_chash *rs = ring_new(SHMR_HASH_MODE_PEKKO_STRING,
					       PK_RING_PREFIX, &ixs);
	unsigned differ = 0;
	(void)state;

	for (size_t i = 0; i < N(pk_ring_vecs); i++) {
		const char *k = pk_ring_vecs[i].key;
		uint32_t hb = shmr_logic_chash_bytes_hash(rb, k, strlen(k));
		uint32_t hs = shmr_logic_chash_bytes_hash(rs, k, strlen(k));

		assert_int_equal(shmr_logic_chash_lookup_hash(rb, hb),
				 pk_ring_vecs[i].owner_bytes);
		assert_int_equal(shmr_logic_chash_lookup_indexed(rb, ix, hb),
				 pk_ring_vecs[i].owner_bytes);
		assert_int_equal(shmr_logic_chash_lookup_indexed(rs, ixs, hs),
				 pk_ring_vecs[i].owner_string);
		differ += pk_ring_vecs[i].owner_bytes !=
			  pk_ring_vecs[i].owner_string;
	}
	/* The two modes are different functions (a String key is not its
	 * bytes to Pekko): the vectors tell them apart. */
	assert_true(differ > 0);
	free(rb);
	free(rs);
}

/* "shmr": routee i's points at rte_jhash("<prefix><name>#<v>") for v in
 * [0, vnodes), keys at rte_jhash of their bytes, seed 0x73686d72. */
static void test_shmr_ring_as_documented(void **state)
{
	struct shmr_logic_chash_index *ix;
	struct shmr_logic_chash *r = ring_new(SHMR_HASH_MODE_SHMR, "app/",
					      &ix);
	(void)state;

	assert_int_equal(SHMR_LOGIC_CHASH_SEED, 0x73686d72u);
	for (uint32_t i = 0; i < NR; i++)
		for (uint32_t v = 0; v < PK_RING_VNODES; v++) {
			char b[64];
			int n = snprintf(b, sizeof(b), "app/%s#%u",
					 pk_ring_routees[i], v);
			uint32_t pt = rte_jhash(b, (uint32_t)n, 0x73686d72u);

			/* The point's own hash lands on its routee (no two
			 * routees share a point in this ring). */
			assert_int_equal(shmr_logic_chash_lookup_hash(r, pt),
					 (int)i);
		}
	{
		/* rte_jhash reads whole words: give it room past the key. */
		char k[16] = "user-7";

		assert_int_equal(shmr_logic_chash_bytes_hash(r, "user-7", 6),
				 rte_jhash(k, 6, 0x73686d72u));
	}
	/* The key field is its 8 bytes, least significant first. */
	assert_int_equal(shmr_logic_chash_key_hash_ring(r, 0x0807060504030201ull),
			 rte_jhash("\x01\x02\x03\x04\x05\x06\x07\x08", 8,
				   0x73686d72u));
	assert_int_equal(shmr_logic_chash_key_hash_ring(r, 42),
			 shmr_logic_chash_key_hash(42));
	/* A bad mode or an overlong prefix builds nothing. */
	{
		char big[SHMR_DSO_PATH_MAX + 1];
		size_t size = shmr_logic_chash_size(NR, 1);
		void *m = aligned_alloc(8, (size + 7) & ~7ul);

		memset(big, 'p', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(shmr_logic_chash_build_mode(
					 m, size, pk_ring_routees, NR, 1, 3, NULL),
				 -EINVAL);
		assert_int_equal(shmr_logic_chash_build_mode(
					 m, size, pk_ring_routees, NR, 1,
					 SHMR_HASH_MODE_PEKKO, big),
				 -EINVAL);
		free(m);
	}
	free(r);
}

/* shmr_logic_jhash() is rte_jhash, for every length of a block or two and
 * every alignment, without reading past the key (the ASan build would
 * say: the key ends a heap block).  rte_jhash itself is given an aligned
 * copy with room after it. */
static void test_jhash_is_rte_jhash(void **state)
{
	unsigned char pad[64];
	alignas(8) unsigned char ref[64];
	(void)state;

	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = (unsigned char)(i * 151 + 7);
	for (size_t off = 0; off < 4; off++)
		for (size_t n = 0; n <= 40; n++) {
			unsigned char *exact = malloc(n ? n : 1);
			uint32_t want;

			assert_non_null(exact);
			memcpy(exact, pad + off, n);
			memcpy(ref, pad + off, n);
			want = rte_jhash(ref, (uint32_t)n, 0x73686d72u);
			assert_int_equal(shmr_logic_jhash(exact, n, 0x73686d72u),
					 want);
			assert_int_equal(shmr_logic_jhash(pad + off, n,
							  0x73686d72u),
					 want);
			assert_int_equal(shmr_logic_jhash(exact, n, 1),
					 rte_jhash(ref, (uint32_t)n, 1));
			free(exact);
		}
}

/* The routee owning key @p k (@p n bytes) on a ring of @p names, of hash
 * @p mode and node names @p prefix + name. */
static const char *ring_owner(const char *const *names, uint32_t nn,
			      uint32_t vnodes, uint32_t mode,
			      const char *prefix, const void *k, size_t n)
{
	size_t size = shmr_logic_chash_size(nn, vnodes);
	struct shmr_logic_chash *r = aligned_alloc(8, (size + 7) & ~7ul);
	int i;

	assert_non_null(r);
	assert_true(shmr_logic_chash_build_mode(r, size, names, nn, vnodes,
						mode, prefix) > 0);
	i = shmr_logic_chash_lookup_hash(r,
					 shmr_logic_chash_bytes_hash(r, k, n));
	free(r);
	return names[i];
}

/* The worked example of docs/logics/consistent-hash.md ("The ring,
 * exactly"): its Python predicts what the dataplane's ring does. */
static void test_docs_prediction(void **state)
{
	static const char *const s[] = { "s0", "s1", "s2" };
	static const char *const o[] = { "o0", "o1", "o2" };
	static const char *const w[] = { "w0", "w1", "w2", "w3" };
	const char *pk = "pekko://orders@10.0.0.5:7355//user/w/";
	const unsigned char k42[8] = { 42 };
	const uint32_t shmr = SHMR_HASH_MODE_SHMR, pekko = SHMR_HASH_MODE_PEKKO;
	(void)state;

	assert_string_equal(ring_owner(s, 3, 100, shmr, "", k42, 8), "s0");
	assert_string_equal(ring_owner(o, 3, 10, shmr, "", "order-000123", 12),
			    "o0");
	assert_string_equal(ring_owner(o, 3, 10, shmr, "", "order-000124", 12),
			    "o2");
	assert_string_equal(ring_owner(w, 4, 10, pekko, pk, "user-7", 6), "w3");
	assert_string_equal(ring_owner(w, 4, 10, pekko, pk, "order-000123", 12),
			    "w0");
}

/* ---- through the table and the decision ------------------------------ */

/* Consistent-hash router "k" over w0..w3 with these key settings. */
static unsigned spec_router(struct dp_fix *f, uint32_t hash_key,
			    uint32_t off, uint32_t len, uint32_t mode,
			    const char *prefix)
{
	unsigned ri;
	struct shmr_spec_router *r = dp_fix_router(f, SHMR_BEH_CONSISTENT_HASH, &ri);

	r->vnodes = PK_RING_VNODES;
	r->hash_key = hash_key;
	r->key_offset = off;
	r->key_length = len;
	r->hash_mode = mode;
	snprintf(r->node_prefix, sizeof(r->node_prefix), "%s", prefix);
	for (unsigned i = 0; i < NR; i++)
		dp_route(&f->d, ri, pk_ring_routees[i], f->r[i],
			 SHMR_ROUTE_RUNNING);
	dp_fix_build(f);
	return ri;
}

/* The name owning @p n key bytes at @p k on router @p ri's ring. */
static const char *owner(struct dp_fix *f, unsigned ri, const void *k,
			 size_t n)
{
	const struct shmr_dp_router *r = &f->t->routers[ri];

	return r->routees[shmr_logic_chash_lookup_hash(
				  r->ring,
				  shmr_logic_chash_bytes_hash(r->ring, k, n))]
		.tgt.name;
}

/* hash_key = { offset = 4; length = 6; }: the six bytes decide, whatever
 * surrounds them and whatever the key field says. */
static void test_payload_range_decides(void **state)
{
	struct dp_fix *f = *state;
	unsigned ri = spec_router(f, SHMR_HASH_KEY_PAYLOAD, 4, 6,
				  SHMR_HASH_MODE_SHMR, "");
	unsigned seen = 0;

	for (unsigned a = 0; a < 64; a++) {
		char id[8], msg[32];
		const char *want;

		snprintf(id, sizeof(id), "id%04u", a);
		want = owner(f, ri, id, 6);
		seen |= 1u << (want[1] - '0');
		for (unsigned v = 0; v < 5; v++) {
			/* "HDR<v>" + id + a tail that varies */
			int n = snprintf(msg, sizeof(msg), "HDR%u%s|tail%u", v,
					 id, v * 37 + a);

			assert_string_equal(dp_fix_pick(f, ri, v * 7919 + a, msg,
						 (uint32_t)n, (uint32_t)n),
					    want);
		}
	}
	/* The keys spread over more than one routee. */
	assert_true(__builtin_popcount(seen) > 1);
}

/* A payload shorter than the range hashes the bytes it has; one that
 * ends before the offset hashes the empty key; a len field past the
 * slot is read no further than the slot. */
static void test_short_payload_bytes_present(void **state)
{
	struct dp_fix *f = *state;
	unsigned ri = spec_router(f, SHMR_HASH_KEY_PAYLOAD, 4, 6,
				  SHMR_HASH_MODE_SHMR, "");
	unsigned char slotful[DP_SS - SHMR_HDR_SIZE];

	assert_string_equal(dp_fix_pick(f, ri, 1, "HDR0id", 6, 6),
			    owner(f, ri, "id", 2));
	assert_string_equal(dp_fix_pick(f, ri, 2, "HDR", 3, 3), owner(f, ri, "", 0));
	assert_string_equal(dp_fix_pick(f, ri, 3, "", 0, 0), owner(f, ri, "", 0));

	/* The whole payload (length 0: to its end). */
	ri = spec_router(f, SHMR_HASH_KEY_PAYLOAD, 0, 0, SHMR_HASH_MODE_SHMR,
			 "");
	assert_string_equal(dp_fix_pick(f, ri, 4, "order-000123", 12, 12),
			    owner(f, ri, "order-000123", 12));
	for (size_t i = 0; i < sizeof(slotful); i++)
		slotful[i] = (unsigned char)(i * 13 + 1);
	/* A len of 100000 is read as the slot's 80 payload bytes. */
	assert_string_equal(dp_fix_pick(f, ri, 5, slotful, sizeof(slotful), 100000),
			    owner(f, ri, slotful, sizeof(slotful)));
	/* A key that ends the slot at an odd length: its hash reads no byte
	 * past the slot (the ASan build checks; the slot ends the buffer). */
	ri = spec_router(f, SHMR_HASH_KEY_PAYLOAD, 1, 0, SHMR_HASH_MODE_SHMR,
			 "");
	assert_string_equal(dp_fix_pick(f, ri, 6, slotful, sizeof(slotful),
					sizeof(slotful)),
			    owner(f, ri, slotful + 1, sizeof(slotful) - 1));
}

/* "pekko" and "pekko-string" routers through the table: the vectors'
 * owners. */
static void test_pekko_router_vectors(void **state)
{
	static const uint32_t modes[] = { SHMR_HASH_MODE_PEKKO,
					  SHMR_HASH_MODE_PEKKO_STRING };
	struct dp_fix *f = *state;

	for (unsigned m = 0; m < N(modes); m++) {
		unsigned ri = spec_router(f, SHMR_HASH_KEY_PAYLOAD, 0, 0,
					  modes[m], PK_RING_PREFIX);

		for (size_t i = 0; i < N(pk_ring_vecs); i++) {
			const char *k = pk_ring_vecs[i].key;
			uint32_t n = (uint32_t)strlen(k);
			int o = m ? pk_ring_vecs[i].owner_string
				  : pk_ring_vecs[i].owner_bytes;

			assert_string_equal(dp_fix_pick(f, ri, i, k, n, n),
					    pk_ring_routees[o]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pekko_murmur_vectors),
		cmocka_unit_test(test_pekko_ring_vectors),
		cmocka_unit_test(test_shmr_ring_as_documented),
		cmocka_unit_test(test_jhash_is_rte_jhash),
		cmocka_unit_test(test_docs_prediction),
		cmocka_unit_test_setup_teardown(test_payload_range_decides,
						dp_fix_setup, dp_fix_teardown),
		cmocka_unit_test_setup_teardown(test_short_payload_bytes_present,
						dp_fix_setup, dp_fix_teardown),
		cmocka_unit_test_setup_teardown(test_pekko_router_vectors,
						dp_fix_setup, dp_fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
