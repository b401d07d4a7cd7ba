/*
 * The pure routing logics (see logic.h).
 *
 * The picks are arithmetic on values the caller read; they hold no state
 * of their own, so the same code serves every lcore and every router.
 *
 * The consistent-hash ring.  Each routee owns `vnodes` points on a 32-bit
 * circle, at rte_jhash("<name>#<v>"); a key belongs to the routee of the
 * first point at or after the key's hash, wrapping at the top.  The
 * "pekko" modes place points and keys as Pekko's ConsistentHash does
 * (its MurmurHash of the node's name mixed with v = 1..vnodes; keys by
 * arrayHash or stringHash), and keep Pekko's signed order by flipping
 * each value's top bit, so the same sorted array, search and index serve
 * every mode.  What makes it consistent:
 *   - A point depends only on its routee's name and v, never on the other
 *     routees or their order, so adding a routee adds its points and moves
 *     exactly the keys that now fall just before one of them, all to it;
 *     keys between two old routees stay where they are.  Removing it takes
 *     the same points away and restores the old mapping exactly.
 *   - Equal points (two 32-bit hashes colliding: likely somewhere in a ring
 *     of thousands of points) are ordered by routee name, not by list
 *     position, so a collision resolves the same way whatever the order
 *     of the list and whoever else is in it.  The lookup takes the first
 *     of equal points, the smaller name.
 * The ring lives in caller memory as one sorted array, built once on the
 * update thread and immutable afterwards: a lookup is a binary search with
 * no writes, safe from any number of lcores at once.  An optional index
 * (a bucket per 2^-bits of the circle, each holding its first point)
 * turns that search into one load and a step or two: the dataplane's
 * lookup, about 2.5 times faster for 160 points.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_jhash.h>

#include "logic.h"

int shmr_logic_rr_pick(uint64_t *counter, uint32_t n)
{
	if (n == 0)
		return -SHMR_E_NO_ROUTEES;
	return (int)((*counter)++ % n);
}

int shmr_logic_random_pick(uint64_t r, uint32_t n)
{
	uint64_t hi = r >> 32, lo = r & 0xffffffffu;

	if (n == 0)
		return -SHMR_E_NO_ROUTEES;
	/* floor(r * n / 2^64) without a 128-bit type: hi * n < 2^64 and the
	 * carry from lo * n is under 2^32, so the sum cannot overflow. */
	return (int)((hi * n + ((lo * n) >> 32)) >> 32);
}

int shmr_logic_smallest_mailbox_pick(const struct shmr_logic_load *load,
				     uint32_t n)
{
	uint32_t best = 0, i;
	int busy_empty = -1;

	if (n == 0)
		return -SHMR_E_NO_ROUTEES;
	for (i = 0; i < n; i++) {
		uint32_t d = load[i].depth;

		if (d == 0) {
			if (!load[i].busy)
				return (int)i;
			if (busy_empty < 0)
				busy_empty = (int)i;
		} else if (d < load[best].depth) {
			best = i;
		}
	}
	/* best may still be index 0 with depth 0 (busy): then busy_empty
	 * is 0 as well, so the answer is the same. */
	return busy_empty >= 0 ? busy_empty : (int)best;
}

size_t shmr_logic_chash_size(uint32_t nroutees, uint32_t vnodes)
{
	if (nroutees > SHMR_LOGIC_CHASH_MAX_ROUTEES || vnodes == 0 ||
	    vnodes > SHMR_LOGIC_CHASH_VNODES_MAX)
		return 0;
	return sizeof(struct shmr_logic_chash) +
	       (size_t)nroutees * vnodes *
		       sizeof(struct shmr_logic_chash_point);
}

/* Sort by point, then by name rank (held in .routee while sorting). */
static int point_cmp(const void *a, const void *b)
{
	const struct shmr_logic_chash_point *x = a, *y = b;

	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return (x->routee > y->routee) - (x->routee < y->routee);
}

/* lookup3's mix and final, as rte_jhash has them. */
#define JH_ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))
#define JH_MIX(a, b, c)                                                   \
	do {                                                              \
		a -= c; a ^= JH_ROT(c, 4);  c += b;                       \
		b -= a; b ^= JH_ROT(a, 6);  a += c;                       \
		c -= b; c ^= JH_ROT(b, 8);  b += a;                       \
		a -= c; a ^= JH_ROT(c, 16); c += b;                       \
		b -= a; b ^= JH_ROT(a, 19); a += c;                       \
		c -= b; c ^= JH_ROT(b, 4);  b += a;                       \
	} while (0)
#define JH_FINAL(a, b, c)                                                 \
	do {                                                              \
		c ^= b; c -= JH_ROT(b, 14);                               \
		a ^= c; a -= JH_ROT(c, 11);                               \
		b ^= a; b -= JH_ROT(a, 25);                               \
		c ^= b; c -= JH_ROT(b, 16);                               \
		a ^= c; a -= JH_ROT(c, 4);                                \
		b ^= a; b -= JH_ROT(a, 14);                               \
		c ^= b; c -= JH_ROT(b, 24);                               \
	} while (0)

/* A little-endian 32-bit word of the (up to 4) bytes at @p p. */
static inline uint32_t jh_word(const unsigned char *p, size_t n)
{
	uint32_t w = 0;

	for (size_t i = 0; i < n && i < 4; i++)
		w |= (uint32_t)p[i] << (8 * i);
	return w;
}

uint32_t shmr_logic_jhash(const void *key, size_t n, uint32_t seed)
{
	const unsigned char *k = key;
	uint32_t a, b, c;

	a = b = c = 0xdeadbeefu + (uint32_t)n + seed;
	if (n == 0)
		return c;
	for (; n > 12; n -= 12, k += 12) {
		a += jh_word(k, 4);
		b += jh_word(k + 4, 4);
		c += jh_word(k + 8, 4);
		JH_MIX(a, b, c);
	}
	/* The last 1 to 12 bytes, zero-padded: rte_jhash's masked words,
	 * without reading past the key. */
	a += jh_word(k, n);
	b += n > 4 ? jh_word(k + 4, n - 4) : 0;
	c += n > 8 ? jh_word(k + 8, n - 8) : 0;
	JH_FINAL(a, b, c);
	return c;
}

/* Pekko's MurmurHash (org.apache.pekko.routing.MurmurHash, the Scala 2.9
 * MurmurHash 3 variant with two magic streams), in unsigned arithmetic:
 * Java's Int wraps as uint32_t does, and >>> is the unsigned shift. */
#define PK_VISIBLE_MAGIC 0x971e137bu
#define PK_HIDDEN_MAGIC_A 0x95543787u
#define PK_HIDDEN_MAGIC_B 0x2ad7eb25u
#define PK_VISIBLE_MIXER 0x52dce729u
#define PK_HIDDEN_MIXER_A 0x7b7d159cu
#define PK_HIDDEN_MIXER_B 0x6bce6396u
#define PK_FINAL_MIXER_1 0x85ebca6bu
#define PK_FINAL_MIXER_2 0xc2b2ae35u
#define PK_SEED_STRING 0xf7ca7fd2u
#define PK_SEED_ARRAY 0x3c074a61u

static inline uint32_t pk_extend(uint32_t h, uint32_t v, uint32_t a,
				 uint32_t b)
{
	uint32_t x = v * a;

	x = (x << 11) | (x >> 21);
	return (h ^ (x * b)) * 3u + PK_VISIBLE_MIXER;
}

static inline uint32_t pk_finalize(uint32_t h)
{
	h ^= h >> 16;
	h *= PK_FINAL_MIXER_1;
	h ^= h >> 13;
	h *= PK_FINAL_MIXER_2;
	h ^= h >> 16;
	return h;
}

uint32_t shmr_logic_pekko_array_hash(const void *bytes, size_t n)
{
	const signed char *b = bytes;
	uint32_t h = ((uint32_t)n * PK_SEED_ARRAY) ^ PK_VISIBLE_MAGIC;
	uint32_t c = PK_HIDDEN_MAGIC_A, k = PK_HIDDEN_MAGIC_B;

	for (size_t j = 0; j < n; j++) {
		/* a(j).## of a Byte: the value sign-extended to an Int */
		h = pk_extend(h, (uint32_t)(int32_t)b[j], c, k);
		c = c * 5u + PK_HIDDEN_MIXER_A;
		k = k * 5u + PK_HIDDEN_MIXER_B;
	}
	return pk_finalize(h);
}

/*
 * UTF-8 read as the UTF-16 units of the Java String that new String(bytes,
 * UTF_8) makes: one sequence at a time; well-formed UTF-8 gives its chars
 * (a code point above U+FFFF its surrogate pair); an ill-formed sequence
 * gives one U+FFFD for its maximal subpart, as Java's decoder does, which
 * also takes ED A0..BF as a prefix and a whole encoded surrogate (ED
 * A0..BF 80..BF) as one U+FFFD (checked against OpenJDK 17 over every
 * sequence of up to three bytes).
 */
struct u8_reader {
	const unsigned char *s;
	size_t n, i;
	uint32_t low; /* a pair's second unit, still to give; 0: none */
};

static int u8_unit(struct u8_reader *r, uint32_t *u)
{
	uint32_t b, cp, lo = 0x80, hi = 0xbf;
	unsigned need, j;

	if (r->low) {
		*u = r->low;
		r->low = 0;
		return 1;
	}
	if (r->i >= r->n)
		return 0;
	b = r->s[r->i];
	if (b < 0x80) {
		r->i++;
		*u = b;
		return 1;
	}
	if (b >= 0xc2 && b <= 0xdf) {
		need = 1;
		cp = b & 0x1f;
	} else if (b >= 0xe0 && b <= 0xef) {
		need = 2;
		cp = b & 0x0f;
		lo = b == 0xe0 ? 0xa0 : 0x80;
	} else if (b >= 0xf0 && b <= 0xf4) {
		need = 3;
		cp = b & 0x07;
		lo = b == 0xf0 ? 0x90 : 0x80;
		hi = b == 0xf4 ? 0x8f : 0xbf;
	} else {
		r->i++;
		*u = 0xfffd;
		return 1;
	}
	for (j = 1; j <= need && r->i + j < r->n; j++) {
		uint32_t c = r->s[r->i + j];

		if (c < lo || c > hi)
			break;
		cp = (cp << 6) | (c & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	r->i += j; /* the sequence, or its maximal subpart */
	if (j <= need || (cp >= 0xd800 && cp <= 0xdfff)) {
		*u = 0xfffd;
		return 1;
	}
	if (cp < 0x10000) {
		*u = cp;
		return 1;
	}
	cp -= 0x10000;
	*u = 0xd800 + (cp >> 10);
	r->low = 0xdc00 + (cp & 0x3ff);
	return 1;
}

uint32_t shmr_logic_pekko_string_hash(const void *utf8, size_t n)
{
	struct u8_reader r = { utf8, n, 0, 0 };
	uint32_t units = 0, u, v, h;
	uint32_t c = PK_HIDDEN_MAGIC_A, k = PK_HIDDEN_MAGIC_B;

	while (u8_unit(&r, &u)) /* s.length: counted first */
		units++;
	h = (units * PK_SEED_STRING) ^ PK_VISIBLE_MAGIC;
	r = (struct u8_reader){ utf8, n, 0, 0 };
	/* Two chars an Int, the odd last one alone. */
	while (u8_unit(&r, &u)) {
		if (!u8_unit(&r, &v)) {
			h = pk_extend(h, u, c, k);
			break;
		}
		h = pk_extend(h, (u << 16) + v, c, k);
		c = c * 5u + PK_HIDDEN_MIXER_A;
		k = k * 5u + PK_HIDDEN_MIXER_B;
	}
	return pk_finalize(h);
}

uint32_t shmr_logic_pekko_vnode_hash(uint32_t node_hash, uint32_t vnode)
{
	/* ConsistentHash.concatenateNodeHash */
	return pk_finalize(pk_extend(node_hash ^ PK_VISIBLE_MAGIC, vnode,
				     PK_HIDDEN_MAGIC_A, PK_HIDDEN_MAGIC_B));
}

/* Pekko orders its ring as signed Ints; flipping the top bit maps that
 * order onto the unsigned one of this ring, keys and points alike. */
#define PK_SIGNED_ORDER 0x80000000u

int shmr_logic_chash_build(void *mem, size_t size, const char *const *names,
			   uint32_t nroutees, uint32_t vnodes)
{
	return shmr_logic_chash_build_mode(mem, size, names, nroutees, vnodes,
					   SHMR_HASH_MODE_SHMR, NULL);
}

int shmr_logic_chash_build_mode(void *mem, size_t size,
				const char *const *names, uint32_t nroutees,
				uint32_t vnodes, uint32_t mode,
				const char *prefix)
{
	/* rank[i]: how many names sort before names[i]; by_rank inverts it. */
	uint32_t rank[SHMR_LOGIC_CHASH_MAX_ROUTEES];
	uint32_t by_rank[SHMR_LOGIC_CHASH_MAX_ROUTEES];
	struct shmr_logic_chash *ring = mem;
	size_t need = shmr_logic_chash_size(nroutees, vnodes);
	size_t plen = prefix ? strnlen(prefix, SHMR_DSO_PATH_MAX) : 0;
	uint32_t i, j, v, k = 0;

	if (!mem || need == 0 || (nroutees > 0 && !names) ||
	    (uintptr_t)mem % alignof(struct shmr_logic_chash) != 0 ||
	    mode > SHMR_HASH_MODE_PEKKO_STRING || plen >= SHMR_DSO_PATH_MAX)
		return -EINVAL;
	for (i = 0; i < nroutees; i++) {
		size_t len = names[i] ? strnlen(names[i], SHMR_NAME_MAX) : 0;

		if (len == 0 || len >= SHMR_NAME_MAX)
			return -EINVAL;
	}
	/* With one prefix before every name, the names' order is the full
	 * node names' order. */
	for (i = 0; i < nroutees; i++) {
		rank[i] = 0;
		for (j = 0; j < nroutees; j++) {
			int c = strcmp(names[j], names[i]);

			if (c == 0 && j != i)
				return -EINVAL;
			rank[i] += c < 0;
		}
		by_rank[rank[i]] = i;
	}
	if (size < need)
		return -ENOSPC;

	for (i = 0; i < nroutees; i++) {
		/* prefix + name + '#' + up to 10 digits */
		char buf[SHMR_DSO_PATH_MAX + SHMR_NAME_MAX + 12];
		int len;
		uint32_t node = 0;

		if (mode != SHMR_HASH_MODE_SHMR) {
			/* Pekko: the node's toString hashed once, its
			 * virtual nodes 1..factor mixed into that. */
			len = snprintf(buf, sizeof(buf), "%.*s%s", (int)plen,
				       plen ? prefix : "", names[i]);
			node = shmr_logic_pekko_string_hash(buf, (size_t)len);
		}
		for (v = 0; v < vnodes; v++) {
			if (mode == SHMR_HASH_MODE_SHMR) {
				len = snprintf(buf, sizeof(buf), "%.*s%s#%u",
					       (int)plen, plen ? prefix : "",
					       names[i], v);
				ring->points[k].point = rte_jhash(
					buf, (uint32_t)len,
					SHMR_LOGIC_CHASH_SEED);
			} else {
				ring->points[k].point =
					shmr_logic_pekko_vnode_hash(node,
								    v + 1) ^
					PK_SIGNED_ORDER;
			}
			ring->points[k].routee = rank[i];
			k++;
		}
	}
	qsort(ring->points, k, sizeof(ring->points[0]), point_cmp);
	for (i = 0; i < k; i++)
		ring->points[i].routee = by_rank[ring->points[i].routee];
	ring->nroutees = nroutees;
	ring->vnodes = vnodes;
	ring->npoints = k;
	ring->mode = mode;
	return (int)k;
}

uint32_t shmr_logic_chash_bytes_hash(const struct shmr_logic_chash *ring,
				     const void *key, size_t n)
{
	switch (ring->mode) {
	case SHMR_HASH_MODE_PEKKO:
		return shmr_logic_pekko_array_hash(key, n) ^ PK_SIGNED_ORDER;
	case SHMR_HASH_MODE_PEKKO_STRING:
		return shmr_logic_pekko_string_hash(key, n) ^ PK_SIGNED_ORDER;
	default:
		/* Not rte_jhash itself: it reads whole words, up to 3 bytes
		 * past the key (past the slot, for a key that ends it). */
		return shmr_logic_jhash(key, n, SHMR_LOGIC_CHASH_SEED);
	}
}

uint32_t shmr_logic_chash_key_hash_ring(const struct shmr_logic_chash *ring,
					uint64_t key)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(key >> (8 * i));
	return shmr_logic_chash_bytes_hash(ring, b, sizeof(b));
}

uint32_t shmr_logic_chash_key_hash(uint64_t key)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(key >> (8 * i));
	return rte_jhash(b, sizeof(b), SHMR_LOGIC_CHASH_SEED);
}

int shmr_logic_chash_lookup_hash(const struct shmr_logic_chash *ring,
				 uint32_t hash)
{
	uint32_t lo = 0, hi = ring->npoints;

	if (hi == 0)
		return -SHMR_E_NO_ROUTEES;
	/* The first point >= hash (lower bound). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ring->points[mid].point < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ring->npoints)
		lo = 0; /* past the top point: wrap to the first */
	return (int)ring->points[lo].routee;
}

size_t shmr_logic_chash_index_size(uint32_t npoints)
{
	uint32_t bits = 0;

	while ((1u << bits) < npoints && bits < SHMR_LOGIC_CHASH_INDEX_BITS_MAX)
		bits++;
	return sizeof(struct shmr_logic_chash_index) +
	       ((size_t)1 << bits) * sizeof(uint32_t);
}

int shmr_logic_chash_index_build(void *mem, size_t size,
				 const struct shmr_logic_chash *ring)
{
	struct shmr_logic_chash_index *ix = mem;
	uint32_t bits = 0, i = 0;

	if (!mem || !ring ||
	    (uintptr_t)mem % alignof(struct shmr_logic_chash_index) != 0)
		return -EINVAL;
	if (size < shmr_logic_chash_index_size(ring->npoints))
		return -ENOSPC;
	while ((1u << bits) < ring->npoints &&
	       bits < SHMR_LOGIC_CHASH_INDEX_BITS_MAX)
		bits++;
	ix->shift = 32 - bits;
	ix->nbuckets = 1u << bits;
	/* One pass: both the buckets' starts and the points ascend. */
	for (uint32_t b = 0; b < ix->nbuckets; b++) {
		uint64_t start = (uint64_t)b << ix->shift;

		while (i < ring->npoints && ring->points[i].point < start)
			i++;
		ix->first[b] = i;
	}
	return (int)ix->nbuckets;
}

int shmr_logic_chash_lookup_indexed(const struct shmr_logic_chash *ring,
				    const struct shmr_logic_chash_index *ix,
				    uint32_t hash)
{
	uint32_t n = ring->npoints, i;

	if (n == 0)
		return -SHMR_E_NO_ROUTEES;
	/* 64-bit shift: with one bucket the shift is 32. */
	i = ix->first[(uint64_t)hash >> ix->shift];
	/* The first point >= hash: from its bucket's first, a few steps. */
	while (i < n && ring->points[i].point < hash)
		i++;
	if (i == n)
		i = 0; /* past the top point: wrap to the first */
	return (int)ring->points[i].routee;
}

int shmr_logic_chash_lookup(const struct shmr_logic_chash *ring, uint64_t key)
{
	return shmr_logic_chash_lookup_hash(
		ring, shmr_logic_chash_key_hash_ring(ring, key));
}
