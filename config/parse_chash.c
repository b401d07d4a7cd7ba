/*
 * A consistent-hash router's key and ring (see docs/logics/
 * consistent-hash.md):
 *
 *   hash_key    = "key"                      the key field (the default)
 *               | "payload"                  the whole payload
 *               | { offset = N; length = N; } part of it (length left
 *                                            out: to the payload's end)
 *   hash_mode   = "shmr" (default) | "pekko" | "pekko-string"
 *   node_prefix = "pekko://sys@host:port/user/"   before each routee name
 *
 * The key's bytes must lie in a payload the domain can carry (slot_size);
 * a message with a shorter payload is hashed over the bytes it has, which
 * the dataplane does (decide.c), not this file.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "config_internal.h"

static const char *const chash_keys[] = { "hash_key", "hash_mode",
					  "node_prefix", NULL };

const char *const *shmr_conf_chash_keys(void)
{
	return chash_keys;
}

/* hash_key = { offset = N; length = N; } into @p rt. */
static int key_range(struct pctx *p, const config_setting_t *s,
		     const struct fpath *f, uint32_t payload_max,
		     struct shmr_conf_router *rt)
{
	static const char *const keys[] = { "offset", "length", NULL };
	config_setting_t *w;
	int rc;

	if (payload_max == 0)
		return shmr_conf_fail(p, s, 0, f->s,
				      "slot_size leaves no payload to take a key from");
	if ((rc = shmr_conf_check_keys(p, s, f, keys)) < 0 ||
	    (rc = shmr_conf_get_u32(p, s, f, "offset", 0, payload_max - 1,
				    &rt->key_offset, NULL)) < 0)
		return rc;
	rc = shmr_conf_get_u32(p, s, f, "length", 1,
			       payload_max - rt->key_offset, &rt->key_length,
			       &w);
	if (rc < 0)
		return rc;
	if (rc == 0 && !config_setting_get_member(s, "offset"))
		return shmr_conf_fail(p, s, 0, f->s,
				      "give offset, length or both (or hash_key = \"payload\" for all of it)");
	rt->hash_key = SHMR_HASH_KEY_PAYLOAD;
	return 0;
}

int shmr_conf_chash_parse(struct pctx *p, const config_setting_t *g,
			  const struct fpath *path, uint32_t slot_size,
			  struct shmr_conf_router *rt)
{
	uint32_t payload_max = slot_size > SHMR_HDR_SIZE
				       ? slot_size - SHMR_HDR_SIZE
				       : 0;
	config_setting_t *s = config_setting_get_member(g, "hash_key");
	config_setting_t *m;
	struct fpath f;
	const char *v;
	int rc;

	shmr_conf_fp_key(&f, path, "hash_key");
	if (s && rt->dso[0])
		return shmr_conf_fail(p, s, 0, f.s,
				      "not with a dso: its message_key chooses the key");
	if (s && config_setting_type(s) == CONFIG_TYPE_GROUP) {
		if ((rc = key_range(p, s, &f, payload_max, rt)) < 0)
			return rc;
	} else if (s) {
		rc = shmr_conf_member(p, g, path, "hash_key",
				      CONFIG_TYPE_STRING, &s);
		if (rc < 0)
			return rc;
		v = config_setting_get_string(s);
		if (strcmp(v, "payload") == 0)
			rt->hash_key = SHMR_HASH_KEY_PAYLOAD;
		else if (strcmp(v, "key") != 0)
			return shmr_conf_fail(p, s, 0, f.s,
					      "unknown key source \"%s\" (expected \"key\", \"payload\" or { offset = N; length = N; })",
					      v);
	}

	rc = shmr_conf_member(p, g, path, "hash_mode", CONFIG_TYPE_STRING, &m);
	if (rc < 0)
		return rc;
	shmr_conf_fp_key(&f, path, "hash_mode");
	v = rc ? config_setting_get_string(m) : "shmr";
	if (strcmp(v, "shmr") == 0)
		rt->hash_mode = SHMR_HASH_MODE_SHMR;
	else if (strcmp(v, "pekko") == 0)
		rt->hash_mode = SHMR_HASH_MODE_PEKKO;
	else if (strcmp(v, "pekko-string") == 0)
		rt->hash_mode = SHMR_HASH_MODE_PEKKO_STRING;
	else
		return shmr_conf_fail(p, m, 0, f.s,
				      "unknown hash mode \"%s\" (expected \"shmr\", \"pekko\" or \"pekko-string\")",
				      v);
	if (rt->hash_mode == SHMR_HASH_MODE_PEKKO_STRING &&
	    rt->hash_key != SHMR_HASH_KEY_PAYLOAD)
		return shmr_conf_fail(p, m, 0, f.s,
				      "\"pekko-string\" hashes text: it needs hash_key = \"payload\" or { offset = N; length = N; }");

	rc = shmr_conf_get_str(p, g, path, "node_prefix", rt->node_prefix,
			       sizeof(rt->node_prefix), &s);
	if (rc <= 0)
		return rc;
	/* Pekko hashes the node's name as Java chars: only ASCII is the
	 * same text on both sides. */
	for (const char *c = rt->node_prefix; *c; c++)
		if (*c < 0x20 || *c > 0x7e) {
			shmr_conf_fp_key(&f, path, "node_prefix");
			return shmr_conf_fail(p, s, 0, f.s,
					      "byte %u is not printable ASCII (an actor path is; percent-encode the rest)",
					      (unsigned)(c - rt->node_prefix));
		}
	return 0;
}
