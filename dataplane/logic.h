/*
 * The pure parts of the built-in routing logics (issue 4): round-robin,
 * random, smallest-mailbox scoring and the consistent-hash ring.
 * Internal, not for direct inclusion outside dataplane/ (its unit tests
 * excepted).
 *
 * Nothing here touches shared memory, a process or a clock: the caller
 * reads the routee count, the inbox depths and busy flags, the random
 * value, and owns every counter and every byte of ring memory.  The pick
 * and lookup functions are wait-free (no allocation, no syscall, no lock)
 * and so may run on a routing lcore inside its RCU read-side section.
 * Building a ring runs on the update thread.
 *
 * Every pick returns a routee index in [0, n) or -SHMR_E_NO_ROUTEES; the
 * index is a position in the caller's routee list (ordered by creation).
 */
#ifndef SHMR_DATAPLANE_LOGIC_H
#define SHMR_DATAPLANE_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/layout.h>
#include <shmr/shmr.h>

/* Routees one consistent-hash ring may hold (a router's route limit). */
#define SHMR_LOGIC_CHASH_MAX_ROUTEES SHMR_MAX_ROUTES
/* Pekko's default virtual-nodes-factor (its reference.conf). */
#define SHMR_LOGIC_CHASH_VNODES_DEFAULT 10u
/* Most virtual nodes per routee: 32 x 1024 points are 256 KiB of ring. */
#define SHMR_LOGIC_CHASH_VNODES_MAX 1024u
/* rte_jhash initval of every ring point and key hash.  Changing it moves
 * every key: it is part of the ring's definition. */
#define SHMR_LOGIC_CHASH_SEED 0x73686d72u /* "shmr" */
/* A smallest-mailbox depth the caller could not read: ranks last. */
#define SHMR_LOGIC_DEPTH_UNKNOWN UINT32_MAX

/**
 * Round-robin: return *@p counter % @p n and advance *@p counter.
 *
 * Context:     any thread.  n <= INT32_MAX.
 * Concurrency: wait-free; *counter is the caller's and is not atomic (one
 *              counter per lcore, or the caller serialises).
 * Returns:     a routee index, or -SHMR_E_NO_ROUTEES when n == 0 (then
 *              *counter is left as it was).
 */
int shmr_logic_rr_pick(uint64_t *counter, uint32_t n);

/**
 * Random: map a uniformly random 64-bit @p r to an index in [0, n) as
 * floor(r * n / 2^64) (the high half of the 96-bit product, computed
 * exactly).  Each index receives floor(2^64 / n) or that plus one of the
 * 2^64 values of r, so its probability is off from 1/n by less than
 * 2^-64 absolute (under 2^-32 relative for any n < 2^32); no rejection,
 * hence one random value per pick.
 *
 * Context:     any thread.  n <= INT32_MAX.
 * Concurrency: wait-free; pure.
 * Returns:     a routee index, or -SHMR_E_NO_ROUTEES when n == 0.
 */
int shmr_logic_random_pick(uint64_t r, uint32_t n);

/** One routee's load, as the caller read it for smallest-mailbox. */
struct shmr_logic_load {
	uint32_t depth; /**< messages queued in its inbox, or _DEPTH_UNKNOWN */
	uint8_t busy;   /**< nonzero: its worker is handling a message */
};

/**
 * Smallest-mailbox, in Pekko's order: the first idle routee with an empty
 * inbox wins at once; else the first busy routee with an empty inbox;
 * else the least queued (busy or not), ties to the lower index.
 *
 * Context:     any thread.  n <= INT32_MAX.
 * Concurrency: wait-free; reads load[0..n-1] once each, stops early at an
 *              idle empty routee.
 * Returns:     a routee index, or -SHMR_E_NO_ROUTEES when n == 0.
 */
int shmr_logic_smallest_mailbox_pick(const struct shmr_logic_load *load,
				     uint32_t n);

/** One ring point: a virtual node of routee @p routee at @p point. */
struct shmr_logic_chash_point {
	uint32_t point;
	uint32_t routee;
};

/**
 * A consistent-hash ring, built in caller memory by shmr_logic_chash_build()
 * and immutable afterwards.  Points are sorted by point; equal points
 * (hash collisions) are ordered by routee name, so the ring is a function
 * of the set of names and the vnode count, not of their order.
 */
struct shmr_logic_chash {
	uint32_t nroutees;
	uint32_t vnodes;
	uint32_t npoints; /**< nroutees * vnodes */
	uint32_t mode;    /**< enum shmr_hash_mode: how points and keys hash */
	struct shmr_logic_chash_point points[];
};

/**
 * Bytes a ring of @p nroutees routees with @p vnodes virtual nodes each
 * needs (header included).
 *
 * Context: any thread.
 * Returns: the size, or 0 when nroutees > SHMR_LOGIC_CHASH_MAX_ROUTEES or
 *          vnodes is 0 or above SHMR_LOGIC_CHASH_VNODES_MAX.
 */
size_t shmr_logic_chash_size(uint32_t nroutees, uint32_t vnodes);

/**
 * Build a ring in @p mem: for each routee i and each v in [0, vnodes), a
 * point at rte_jhash("<names[i]>#<v>", SHMR_LOGIC_CHASH_SEED).  nroutees
 * may be 0 (every lookup then returns -SHMR_E_NO_ROUTEES).
 *
 * Context:     the update thread; may allocate (qsort), not on the fast
 *              path.
 * Concurrency: writes all of mem; publish it to lcores afterwards (RCU).
 * Ownership:   mem is the caller's and must be aligned for struct
 *              shmr_logic_chash; names are only read during the call.  On
 *              error mem is not written.
 * Errors:      -EINVAL (NULL argument, misaligned mem, nroutees or vnodes
 *              out of range, a name empty, not shorter than SHMR_NAME_MAX
 *              or repeated), -ENOSPC (size < shmr_logic_chash_size()).
 * Returns:     the number of points (nroutees * vnodes).
 */
int shmr_logic_chash_build(void *mem, size_t size, const char *const *names,
			   uint32_t nroutees, uint32_t vnodes);

/**
 * As shmr_logic_chash_build(), with the ring's hash @p mode (enum
 * shmr_hash_mode) and a @p prefix put before every name (NULL or "": none;
 * shorter than SHMR_DSO_PATH_MAX).  The node name of routee i is N =
 * prefix + names[i]:
 *   SHMR_HASH_MODE_SHMR: points at rte_jhash("N#<v>", SHMR_LOGIC_CHASH_SEED)
 *     for v in [0, vnodes); keys at rte_jhash of their bytes, same seed.
 *   SHMR_HASH_MODE_PEKKO, _PEKKO_STRING: Pekko's ConsistentHash: points
 *     at concatenateNodeHash(stringHash(N), v) for v in [1, vnodes], keys
 *     at arrayHash (their bytes as Array[Byte]) or stringHash (their
 *     bytes as the UTF-8 of a String); Pekko's signed order, kept by
 *     storing each point and key hash with its top bit flipped.  Equal
 *     points go to the lowest N, as Pekko's do.
 *
 * Context, Concurrency, Ownership: as shmr_logic_chash_build().
 * Errors:      those of shmr_logic_chash_build(), and -EINVAL for an
 *              unknown mode or a prefix of SHMR_DSO_PATH_MAX bytes or more.
 * Returns:     the number of points (nroutees * vnodes).
 */
int shmr_logic_chash_build_mode(void *mem, size_t size,
				const char *const *names, uint32_t nroutees,
				uint32_t vnodes, uint32_t mode,
				const char *prefix);

/**
 * The ring hash of a key: rte_jhash of its 8 bytes, least significant
 * first (so the same on every host), with SHMR_LOGIC_CHASH_SEED (a ring
 * of SHMR_HASH_MODE_SHMR's hash).
 *
 * Context: any thread.  Concurrency: wait-free; pure.
 */
uint32_t shmr_logic_chash_key_hash(uint64_t key);

/**
 * The hash @p ring places the key of @p n bytes at @p key at, by its mode
 * (see shmr_logic_chash_build_mode()); n may be 0 (the empty key).
 *
 * Context:     any thread, a routing lcore included.
 * Concurrency: wait-free; reads the n bytes once each, no allocation.
 */
uint32_t shmr_logic_chash_bytes_hash(const struct shmr_logic_chash *ring,
				     const void *key, size_t n);

/** As shmr_logic_chash_bytes_hash() of @p key's 8 bytes, least
 *  significant first. */
uint32_t shmr_logic_chash_key_hash_ring(const struct shmr_logic_chash *ring,
					uint64_t key);

/**
 * rte_jhash(@p key, @p n, @p seed) as a little-endian host computes it
 * (Bob Jenkins' lookup3 hashlittle), reading the @p n bytes and no more:
 * rte_jhash reads whole 32-bit words, up to 3 bytes past the key.
 *
 * Context: any thread, a routing lcore included.
 * Concurrency: wait-free; pure.
 */
uint32_t shmr_logic_jhash(const void *key, size_t n, uint32_t seed);

/**
 * Pekko's MurmurHash.arrayHash of an Array[Byte] of @p n bytes (each byte
 * signed, as Java's), stringHash of the String whose UTF-8 is the @p n
 * bytes at @p utf8 (its UTF-16 chars, as Java decodes well-formed UTF-8;
 * an ill-formed sequence's maximal subpart is one U+FFFD), and
 * ConsistentHash's concatenateNodeHash(node_hash, vnode); as uint32_t
 * bit patterns of the Java Ints.
 *
 * Context: any thread.  Concurrency: wait-free; pure.
 */
uint32_t shmr_logic_pekko_array_hash(const void *bytes, size_t n);
uint32_t shmr_logic_pekko_string_hash(const void *utf8, size_t n);
uint32_t shmr_logic_pekko_vnode_hash(uint32_t node_hash, uint32_t vnode);

/**
 * The routee owning @p key (its 8 bytes hashed by the ring's mode, as
 * shmr_logic_chash_key_hash_ring()): the first point at or after its hash,
 * clockwise, wrapping past the top to the first point.
 *
 * Context:     a routing lcore inside its RCU read-side section, or any
 *              thread that keeps @p ring alive.
 * Concurrency: wait-free; O(log npoints) reads of an immutable ring.
 * Returns:     a routee index, or -SHMR_E_NO_ROUTEES for an empty ring.
 */
int shmr_logic_chash_lookup(const struct shmr_logic_chash *ring,
			    uint64_t key);

/** As shmr_logic_chash_lookup(), from a hash already computed. */
int shmr_logic_chash_lookup_hash(const struct shmr_logic_chash *ring,
				 uint32_t hash);

/**
 * An index over a ring that makes a lookup O(1) instead of a binary
 * search: the circle is cut into 2^bits equal buckets (at least as many as
 * points, at most 2^SHMR_LOGIC_CHASH_INDEX_BITS_MAX), and first[b] is the
 * position of the first point at or after bucket b's start.  A lookup
 * starts there and steps over the few points of its bucket below the
 * hash.  Built from a ring and immutable afterwards, like the ring.
 */
struct shmr_logic_chash_index {
	uint32_t shift;    /**< 32 - bits: bucket of h is h >> shift */
	uint32_t nbuckets; /**< 2^bits */
	uint32_t first[];
};

#define SHMR_LOGIC_CHASH_INDEX_BITS_MAX 16u

/**
 * Bytes an index over a ring of @p npoints points needs (header included).
 * Context: any thread.
 */
size_t shmr_logic_chash_index_size(uint32_t npoints);

/**
 * Build the index of @p ring in @p mem.
 *
 * Context:     the update thread, after shmr_logic_chash_build().
 * Concurrency: writes all of mem; publish it with the ring.
 * Ownership:   mem is the caller's, aligned for the struct; @p ring is
 *              only read.
 * Errors:      -EINVAL (NULL or misaligned), -ENOSPC (size below
 *              shmr_logic_chash_index_size(ring->npoints)).
 * Returns:     the number of buckets.
 */
int shmr_logic_chash_index_build(void *mem, size_t size,
				 const struct shmr_logic_chash *ring);

/**
 * As shmr_logic_chash_lookup_hash(), through @p ix (built from @p ring):
 * the same answer for every hash.
 *
 * Context:     as shmr_logic_chash_lookup().
 * Concurrency: wait-free; reads of an immutable ring and index.
 * Returns:     a routee index, or -SHMR_E_NO_ROUTEES for an empty ring.
 */
int shmr_logic_chash_lookup_indexed(const struct shmr_logic_chash *ring,
				    const struct shmr_logic_chash_index *ix,
				    uint32_t hash);

/**
 * Where a consistent-hash router gets a message's key: a behaviour's key
 * function when it has one, else the message's key field.  The dataplane
 * installs a router's dso message_key (behaviour ABI 2) here.
 */
struct shmr_logic_key_fn {
	/**
	 * The key of @p msg.
	 * Context: a routing lcore; must be wait-free, like route_message.
	 */
	uint64_t (*key)(void *state, const struct shmr_msg *msg);
	void *state;
};

/** The consistent-hash key of @p msg: @p fn's key, or msg->key. */
static inline uint64_t shmr_logic_msg_key(const struct shmr_logic_key_fn *fn,
					  const struct shmr_msg *msg)
{
	return fn && fn->key ? fn->key(fn->state, msg) : msg->key;
}

#endif /* SHMR_DATAPLANE_LOGIC_H */
