/*
 * libFuzzer target: the dataplane's per-slot classification, driven the
 * way an lcore drives it: slots in an endpoint's outbound lane, then
 * shmr_dp_forward_burst_rcu() over them (dataplane/forward.c through the
 * dp_core library), on a heap domain without EAL as the dataplane's unit
 * tests build it (tests/unit/dataplane/dp_test.h).
 *
 * Input: byte 0 is the harness's (bit 0: stamp each slot's From with the
 * sender's own pid, so the fuzzer gets past the spoofing check; bit 1:
 * the high-priority outbound lane; bit 2: the control plane's admin
 * endpoint published, so failures are handed to it).  The rest is cut
 * into slots of the domain's slot size (the last one zero-padded), at most
 * DP_FUZZ_SLOTS of them.  Each input gets a freshly initialised domain
 * (one allocation, reused: 6 MiB allocated and freed per input would cost
 * most of the time under ASan), table and lcore, so no state carries from
 * one input to the next and a crash file replays alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_test.h"

#define DP_FUZZ_SLOTS 32u
#define DP_FUZZ_LC 1u /* the lcore under test: polls odd slots */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	struct dp_dom d;
	struct shmr_dp_lcore lc;
	struct shmr_dp_table *t;
	struct shmr_pid a;
};

/* Six logics: with the type and hash routers, the eight routers a spec
 * holds.  Round robin and random, the simplest picks, are left out. */
static const uint32_t fz_logics[] = {
	SHMR_BEH_BROADCAST,	  SHMR_BEH_SMALLEST_MAILBOX,
	SHMR_BEH_CONSISTENT_HASH, SHMR_BEH_SCATTER_GATHER,
	SHMR_BEH_TAIL_CHOPPING,	  SHMR_BEH_BALANCING,
};

/* A small spec: one router of each decision the slot can reach without a
 * behaviour object: type (slot 2), hash (4), and the routing logics of
 * fz_logics (6, 8, ... 16). */
static void fz_spec(struct fz *f, int admin)
{
	struct dp_dom *d = &f->d;
	struct shmr_pid work, b, c, adm;
	unsigned ri;

	dp_spec_begin(d);
	f->a = dp_ep(d, 3, 1, SHMR_EPK_CLIENT);
	work = dp_ep(d, 5, 2, SHMR_EPK_ROUTE);
	b = dp_ep(d, 7, 1, SHMR_EPK_CLIENT);
	c = dp_ep(d, 9, 1, SHMR_EPK_ROUTE);
	adm = dp_ep(d, 11, 1, SHMR_EPK_CLIENT);
	ri = dp_router(d, "events", dp_ep(d, 2, 1, SHMR_EPK_ROUTER),
		       SHMR_BEH_TYPE);
	dp_route(d, ri, "work", work, SHMR_ROUTE_RUNNING);
	dp_route(d, ri, "off", b, SHMR_ROUTE_DISABLED);
	dp_type(d, ri, 1, "work");
	dp_type(d, ri, 2, "off");
	dp_type(d, ri, 3, "nosuch");
	ri = dp_router(d, "shards", dp_ep(d, 4, 1, SHMR_EPK_ROUTER),
		       SHMR_BEH_HASH);
	dp_route(d, ri, "s0", work, SHMR_ROUTE_RUNNING);
	dp_route(d, ri, "s1", c, SHMR_ROUTE_DEAD);
	dp_hash(d, ri, "s0");
	dp_hash(d, ri, "s1");
	dp_hash(d, ri, "reg");
	/* The routing logics over the same two routees, at slots 6.. */
	for (unsigned i = 0; i < sizeof(fz_logics) / sizeof(fz_logics[0]);
	     i++) {
		char name[16];

		snprintf(name, sizeof(name), "logic%u", i);
		ri = dp_router(d, name,
			       dp_ep(d, 6 + 2 * i, 1, SHMR_EPK_ROUTER),
			       fz_logics[i]);
		dp_spec(d)->routers[ri].vnodes = SHMR_CHASH_VNODES_DEFAULT;
		dp_spec(d)->routers[ri].within_ms = 100;
		dp_spec(d)->routers[ri].interval_ms = 10;
		dp_route(d, ri, "w", work, SHMR_ROUTE_RUNNING);
		dp_route(d, ri, "c", c, SHMR_ROUTE_RUNNING);
	}
	dp_reg(d, "reg", b);
	dp_spec_end(d);
	if (admin)
		atomic_store(&shmr_hdr(d->base)->admin_pid,
			     (uint64_t)adm.slot | (uint64_t)adm.gen << 32);
}

/* dp_dom_init() into the one buffer, zeroed and laid out again. */
static int fz_dom_init(struct dp_dom *d)
{
	static void *base;
	static size_t size;
	struct shmr_geometry g = { DP_SS, 64, 2, SHMR_POLL_ADAPTIVE, 0, 0,
				   0, 0, 0, 0 };
	struct shmr_domain_hdr plan;

	if (!base) {
		int64_t n = shmr_layout_plan(&g, &plan);

		if (n < 0)
			return -1;
		size = (size_t)n;
		base = aligned_alloc(4096, size);
		if (!base)
			return -1;
	}
	d->base = base;
	d->size = size;
	memset(base, 0, size);
	if (shmr_layout_init(base, &g, "unit") < 0)
		return -1;
	return shmr_dp_env_init(&d->env, base, size);
}

/* The poll entry of endpoint @p slot (its lcore's list of table @p t). */
static struct shmr_dp_poll *fz_poll_of(struct shmr_dp_table *t, uint32_t slot)
{
	struct shmr_dp_poll_list *l = &t->lists[slot % t->nlcores];

	for (uint32_t i = 0; i < l->n; i++)
		if (l->e[i].slot == slot)
			return &l->e[i];
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f; /* zeroed again below: no state carries */
	unsigned char slot[DP_SS];
	struct rte_ring *src;
	size_t off;
	unsigned n, round;

	if (size < 1)
		return 0;
	memset(&f, 0, sizeof(f));
	if (fz_dom_init(&f.d) < 0)
		abort();
	fz_spec(&f, data[0] & 4);
	if (shmr_dp_table_build(&f.d.env, &f.t) < 0 ||
	    shmr_dp_lcore_init(&f.lc, &f.d.env, DP_FUZZ_LC) < 0)
		abort();
	src = dp_lane(&f.d, f.a,
		      data[0] & 2 ? SHMR_LANE_OUT_HIGH(f.d.env.nlcores)
				  : SHMR_LANE_OUT(f.d.env.nlcores));
	for (off = 1, n = 0; off < size && n < DP_FUZZ_SLOTS;
	     off += DP_SS, n++) {
		size_t k = size - off < DP_SS ? size - off : DP_SS;

		memset(slot, 0, sizeof(slot));
		memcpy(slot, data + off, k);
		if (data[0] & 1)
			((struct shmr_msg *)slot)->from = f.a;
		if (rte_ring_enqueue_burst_elem(src, slot, DP_SS, 1, NULL) !=
		    1)
			break;
	}
	/* A few rounds, as the poll loop would give them (a full target
	 * lane leaves the rest in the source). */
	for (round = 0; round < 4 && rte_ring_count(src); round++)
		(void)shmr_dp_forward_burst_rcu(
			&f.lc, f.t, fz_poll_of(f.t, f.a.slot), src);
	shmr_dp_lcore_fini(&f.lc);
	shmr_dp_table_free(f.t);
	return 0;
}
