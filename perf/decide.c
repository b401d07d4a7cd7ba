/*
 * `shmr-perf decide`: the routing decision alone, per logic, in this
 * process: the dataplane's own table and decision code (dp_core) over
 * --routes routees in a domain in heap memory, no other process, no ring
 * traffic.  What a routing lcore spends deciding one message, apart from
 * moving it (the logics run's end-to-end figures include that, and the
 * sinks).
 *
 * Keys are 0, 1, 2, ...  smallest-mailbox is timed twice: every routee
 * idle and empty (the first one wins at once), and every inbox holding
 * one message (every routee read, the worst case); its lanes are real
 * rings of this domain, filled once.  consistent-hash is also timed with
 * its key from a 16-byte payload (hash_key), by shmrouter's hash and by
 * Pekko's (hash_mode "pekko").  broadcast's decision only names the
 * router (the copies are forward_bcast.c's business), so it is left out.
 *
 * Then the forwarding round itself (variant "forward-round"), which the
 * decision is a part of: a client's lane holding 512 slots, keys 0, 1,
 * ..., forwarded by shmr_dp_poll_once_rcu() through hash router "perf"
 * into --routes inboxes, and again into one (variant "forward-round-1",
 * the single-route case); ns per slot, the median over 4000 rounds, so
 * that what else runs on the machine shows only in the slow rounds.
 * Validation, staging per destination, the copies and the counters are
 * in it; the other processes' side (the sender filling its lane, the
 * workers taking theirs, the cache lines moving between them) is not:
 * the inboxes are emptied between rounds, untimed.  Its baseline, timed
 * in the same repetition: the bare fan-out's forwarding (perf_bare.h)
 * spreading the same slots over the same inboxes by key, with none of
 * the router's work (variant "bare-fanout-round"); the ratio printed is
 * the median of the per-repetition ratios, as every ratio of shmr-perf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/lane_copy.h>

#include "dataplane_internal.h"
#include "decide.h"
#include "forward.h"
#include "lcore.h"
#include "table.h"
#include "perf_bare.h"
#include "perf_dp.h"
#include "perf_internal.h"

#define DECISIONS 10000000u

/* The domain of perf_heap_domain() (perf_dp.h). */
#define dom perf_dom

static int dom_init(struct dom *d, const struct perf_opts *o)
{
	return perf_heap_domain(d, o, 1, "perf-decide");
}

int perf_heap_domain(struct perf_dom *d, const struct perf_opts *o,
		     uint32_t nlcores, const char *name)
{
	/* The default max_routes (32): room for --routes' most. */
	struct shmr_geometry g = { o->slot, o->lane, nlcores, SHMR_POLL_BUSY,
				   0, o->max_endpoints, 0, 0, 0, 0 };
	struct shmr_domain_hdr plan;
	int64_t size = shmr_layout_plan(&g, &plan);

	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > PERF_HEAP_DOMAIN_MAX)
		return -E2BIG;
	d->base = aligned_alloc(4096, ((size_t)size + 4095) & ~(size_t)4095);
	if (!d->base)
		return -ENOMEM;
	memset(d->base, 0, (size_t)size);
	if (shmr_layout_init(d->base, &g, name) < 0)
		return -EINVAL;
	return shmr_dp_env_init(&d->env, d->base, (size_t)size);
}

/* The key of a consistent-hash run: the key field (keylen 0), or the
 * first keylen bytes of the payload, hashed by mode. */
struct key_conf {
	uint32_t keylen, mode;
};

/* Router "perf" at endpoint 0 over routes s0.. at endpoints 1.., with
 * behaviour @p beh (hash: over the same names, in order). */
static void spec(struct dom *d, uint32_t beh, unsigned n, uint32_t vnodes,
		 struct key_conf kc)
{
	struct shmr_spec *s = shmr_spec_of(d->base);
	struct shmr_spec_router *r = &s->routers[0];
	struct shmr_spec_route *q = shmr_routes_of(d->base, 0);
	char (*hash)[SHMR_NAME_MAX] = shmr_hash_of(d->base, 0);

	shmr_spec_write_begin(s);
	memset(r, 0, sizeof(*r));
	s->nrouters = 1;
	s->nactive = 0;
	shmr_name_copy(r->name, "perf");
	r->pid = (struct shmr_pid){ 0, 1 };
	r->behaviour = beh;
	r->vnodes = vnodes;
	r->hash_key = kc.keylen ? SHMR_HASH_KEY_PAYLOAD : SHMR_HASH_KEY_FIELD;
	r->key_length = kc.keylen;
	r->hash_mode = kc.mode;
	for (unsigned j = 0; j < n; j++) {
		struct shmr_spec_route *rt = &q[r->nroutes++];

		snprintf(rt->name, sizeof(rt->name), "s%u", j);
		rt->pid = (struct shmr_pid){ j + 1, 1 };
		rt->state = SHMR_ROUTE_RUNNING;
		shmr_active_of(d->base)[s->nactive++] = j + 1;
		if (beh == SHMR_BEH_HASH)
			memcpy(hash[r->nhash++], rt->name, SHMR_NAME_MAX);
	}
	s->version++;
	shmr_spec_write_end(s);
}

static void endpoints(struct dom *d, unsigned n)
{
	for (uint32_t e = 0; e <= n; e++) {
		struct shmr_ep_shared *ep = shmr_ep_at(d->base, e);

		ep->gen = 1;
		ep->kind = e ? SHMR_EPK_ROUTE : SHMR_EPK_ROUTER;
		atomic_store(&ep->state, SHMR_EP_ACTIVE);
	}
}

/* ns per decision of router 0 for DECISIONS keys (0, 1, ... in the key
 * field, and as the payload's first 8 bytes of @p keylen, the rest
 * fixed); -1 on failure. */
static double time_decisions(struct dom *d, uint32_t keylen)
{
	struct shmr_dp_table *t = NULL;
	struct shmr_dp_pick pk;
	struct shmr_dp_decision dec;
	union {
		struct shmr_msg m;
		unsigned char b[SHMR_HDR_SIZE + 64];
	} u;
	struct shmr_msg *m = &u.m;
	uint64_t sum = 0, t0, t1;

	if (keylen > 64 || shmr_dp_pick_init(&pk, d->env.max_routers) < 0)
		return -1;
	if (shmr_dp_table_build(&d->env, &t) < 0) {
		shmr_dp_pick_fini(&pk);
		return -1;
	}
	memset(&u, 0, sizeof(u));
	m->kind = SHMR_KIND_SEND;
	m->to = (struct shmr_pid){ 0, 1 };
	m->len = keylen;
	memset(m->data, 'k', keylen);
	t0 = perf_now_ns();
	for (uint64_t i = 0; i < DECISIONS; i++) {
		m->key = i;
		memcpy(m->data, &i, keylen < 8 ? keylen : 8);
		shmr_dp_decide_rcu(t, &pk, 0, m, &dec);
		sum += dec.slot; /* keeps the work */
	}
	t1 = perf_now_ns();
	shmr_dp_table_free(t);
	shmr_dp_pick_fini(&pk);
	if (dec.verdict != SHMR_DP_DELIVER || sum == 0)
		return -1;
	return (double)(t1 - t0) / DECISIONS;
}

#define ROUNDS 4000u
#define ROUND_SLOTS 512u

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The bare fan-out's buffers out into the inboxes of endpoints 1..n;
 * put counts what went in (the round fails unless it is every slot). */
struct round_fan {
	struct perf_fan fan;
	struct dom *d;
	unsigned put;
};

static void round_fan_out(struct perf_fan *fan, unsigned dst)
{
	struct round_fan *rf = (struct round_fan *)fan;

	/* The inboxes were emptied before the round: room for all of it. */
	rf->put += shmr_lane_put(shmr_lane_at(rf->d->base, dst + 1, 0),
				 fan->stage +
					 (size_t)dst * fan->burst * fan->slot,
				 fan->slot, fan->cnt[dst]);
}

/*
 * ns per slot of a forwarding round of router 0 (hash) over routes 1..n,
 * the slots from client endpoint @p client (keys 0, 1, ...): the median
 * of ROUNDS rounds of ROUND_SLOTS; -1 on failure.  With @p bare, the bare
 * fan-out's forwarding of the same slots into the same inboxes instead.
 */
static double time_rounds(struct dom *d, const struct perf_opts *o,
			  unsigned n, uint32_t client, int bare)
{
	struct round_fan rf = {
		.fan = { .routes = n, .burst = SHMR_DP_BURST, .slot = o->slot,
			 .key_off = offsetof(struct shmr_msg, key),
			 .flush = round_fan_out },
		.d = d,
	};
	static uint64_t ns[ROUNDS];
	static struct shmr_dp_lcore lc;
	struct shmr_dp_table *t = NULL;
	struct rte_ring *out = shmr_lane_at(d->base, client, SHMR_LANE_OUT(1));
	unsigned char *slot = calloc(ROUND_SLOTS, o->slot);
	uint64_t key = 0;
	double med = -1;

	if (n > PERF_FAN_MAX)
		goto out;
	rf.fan.stage = calloc((size_t)n * SHMR_DP_BURST, o->slot);
	if (!slot || !rf.fan.stage || o->lane <= ROUND_SLOTS ||
	    shmr_dp_table_build(&d->env, &t) < 0 ||
	    shmr_dp_lcore_init(&lc, &d->env, 0) < 0)
		goto out;
	for (unsigned r = 0; r < ROUNDS; r++) {
		unsigned got = 0, spins = 0;
		uint64_t t0;

		for (unsigned j = 0; j < ROUND_SLOTS; j++) {
			struct shmr_msg *m =
				(struct shmr_msg *)(slot + (size_t)j * o->slot);

			memset(m, 0, SHMR_HDR_SIZE);
			m->kind = SHMR_KIND_SEND;
			m->from = (struct shmr_pid){ client, 1 };
			m->to = (struct shmr_pid){ 0, 1 };
			m->type = 1;
			m->key = key++;
		}
		if (rte_ring_enqueue_bulk_elem(out, slot, o->slot, ROUND_SLOTS,
					       NULL) != ROUND_SLOTS)
			goto out;
		t0 = perf_now_ns();
		if (bare) {
			rf.put = 0;
			while (perf_fan_take(&rf.fan, out) != 0)
				;
			perf_fan_flush_all(&rf.fan);
			got = rf.put;
		} else {
			while (got < ROUND_SLOTS && spins++ < 1000000u)
				got += shmr_dp_poll_once_rcu(&lc, t);
		}
		ns[r] = perf_now_ns() - t0;
		if (got != ROUND_SLOTS)
			goto out;
		for (uint32_t j = 1; j <= n; j++) {
			struct rte_ring *in = shmr_lane_at(d->base, j, 0);

			while (rte_ring_dequeue_burst_elem(in, slot, o->slot,
							   ROUND_SLOTS, NULL))
				;
		}
	}
	qsort(ns, ROUNDS, sizeof(ns[0]), cmp_u64);
	med = (double)ns[ROUNDS / 2] / ROUND_SLOTS;
out:
	if (lc.env)
		shmr_dp_lcore_fini(&lc);
	memset(&lc, 0, sizeof(lc));
	shmr_dp_table_free(t);
	free(rf.fan.stage);
	free(slot);
	return med;
}

/* One message in every routee's inbound lane (or none). */
static void load(struct dom *d, const struct perf_opts *o, unsigned n,
		 int on)
{
	unsigned char slot[SHMR_SLOT_MAX];

	memset(slot, 0, sizeof(slot));
	for (uint32_t j = 1; j <= n; j++) {
		struct rte_ring *r = shmr_lane_at(d->base, j, 0);

		if (on)
			rte_ring_enqueue_burst_elem(r, slot, o->slot, 1, NULL);
		else
			rte_ring_dequeue_burst_elem(r, slot, o->slot, 1, NULL);
	}
}

/* --json: one decision run's record, or with @p rep 0 its median's, with
 * the bare fan-out round's ratio to the router's when @p vs is given. */
static void json_decide_vs(const struct perf_opts *o, unsigned rep,
			   const char *logic, const char *variant,
			   uint64_t decisions, double ns,
			   const struct perf_ratio *vs)
{
	struct json_object *j = perf_json_record("decide",
						 rep ? "run" : "median");

	perf_json_str(j, "logic", logic);
	if (variant)
		perf_json_str(j, "variant", variant);
	perf_json_u64(j, "routes", o->routes);
	perf_json_u64(j, "decisions", decisions);
	perf_json_u64(j, rep ? "rep" : "reps", rep ? rep : o->reps);
	perf_json_num(j, "ns_per_decision", ns);
	if (vs) {
		perf_json_num(j, "bare_vs_router", vs->median);
		perf_json_num(j, "bare_vs_router_min", vs->min);
		perf_json_num(j, "bare_vs_router_max", vs->max);
	}
	perf_json_emit(j);
}

static void json_decide(const struct perf_opts *o, unsigned rep,
			const char *logic, const char *variant,
			uint64_t decisions, double ns)
{
	json_decide_vs(o, rep, logic, variant, decisions, ns, NULL);
}

int perf_decide_main(const struct perf_opts *o)
{
	static const struct {
		const char *name;
		uint32_t beh;
		int loaded;
		const char *variant; /* NULL: none */
		struct key_conf kc;
	} runs[] = {
		{ "hash", SHMR_BEH_HASH, 0, NULL, { 0, 0 } },
		{ "round-robin", SHMR_BEH_ROUND_ROBIN, 0, NULL, { 0, 0 } },
		{ "random", SHMR_BEH_RANDOM, 0, NULL, { 0, 0 } },
		{ "smallest-mailbox", SHMR_BEH_SMALLEST_MAILBOX, 0, "first-idle",
		  { 0, 0 } },
		{ "smallest-mailbox", SHMR_BEH_SMALLEST_MAILBOX, 1, "all-queued",
		  { 0, 0 } },
		{ "consistent-hash", SHMR_BEH_CONSISTENT_HASH, 0, NULL, { 0, 0 } },
		{ "consistent-hash", SHMR_BEH_CONSISTENT_HASH, 0, "payload-16",
		  { 16, SHMR_HASH_MODE_SHMR } },
		{ "consistent-hash", SHMR_BEH_CONSISTENT_HASH, 0,
		  "pekko-payload-16", { 16, SHMR_HASH_MODE_PEKKO } },
	};
	double ns[sizeof(runs) / sizeof(runs[0])][PERF_REPS_MAX];
	/* The forwarding rounds: over --routes, over one, and the bare
	 * fan-out's over --routes. */
	double rns[3][PERF_REPS_MAX];
	const unsigned rroutes[3] = { o->routes, 1, o->routes };
	const char *const rvariant[3] = { "forward-round", "forward-round-1",
					  "bare-fanout-round" };
	struct perf_ratio vs_bare;
	uint32_t client = o->routes + 1;
	struct dom d;
	int rc;

	if (o->routes + 2 > SHMR_MAX_ENDPOINTS || o->routes > PERF_FAN_MAX) {
		fprintf(stderr, "shmr-perf decide: --routes: 1 to %u\n",
			PERF_FAN_MAX);
		return PERF_EXIT_USAGE;
	}
	rc = dom_init(&d, o);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf decide: domain: %s\n",
			strerror(-rc));
		return PERF_EXIT_FAIL;
	}
	endpoints(&d, o->routes + 1);
	shmr_ep_at(d.base, client)->kind = SHMR_EPK_CLIENT;
	if (perf_pin(o->cpu_hub) < 0)
		fprintf(stderr, "shmr-perf decide: not pinned to cpu %d\n",
			o->cpu_hub);
	printf("shmr-perf decide: %u routees, %u decisions per run, keys "
	       "0, 1, ...; cpu %d (the dataplane's)\n",
	       o->routes, DECISIONS, o->cpu_hub);
	for (unsigned i = 0; i < o->reps; i++) {
		for (unsigned k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
			spec(&d, runs[k].beh, o->routes, o->vnodes, runs[k].kc);
			if (runs[k].loaded)
				load(&d, o, o->routes, 1);
			ns[k][i] = time_decisions(&d, runs[k].kc.keylen);
			if (runs[k].loaded)
				load(&d, o, o->routes, 0);
			if (ns[k][i] < 0) {
				fprintf(stderr, "shmr-perf decide: %s failed\n",
					runs[k].name);
				free(d.base);
				return PERF_EXIT_FAIL;
			}
			json_decide(o, i + 1, runs[k].name, runs[k].variant,
				    DECISIONS, ns[k][i]);
		}
		for (unsigned k = 0; k < 3; k++) {
			struct shmr_spec *sp = shmr_spec_of(d.base);

			spec(&d, SHMR_BEH_HASH, rroutes[k], o->vnodes,
			     runs[0].kc);
			shmr_spec_write_begin(sp);
			shmr_active_of(d.base)[sp->nactive++] = client;
			sp->version++;
			shmr_spec_write_end(sp);
			rns[k][i] = time_rounds(&d, o, rroutes[k], client,
						k == 2);
			if (rns[k][i] < 0) {
				fprintf(stderr, "shmr-perf decide: %s failed\n",
					rvariant[k]);
				free(d.base);
				return PERF_EXIT_FAIL;
			}
			json_decide(o, i + 1, k == 2 ? "bare-fanout" : "hash",
				    rvariant[k],
				    (uint64_t)ROUNDS * ROUND_SLOTS, rns[k][i]);
		}
		if (perf_json) /* the text has only the medians */
			printf("shmr-perf decide: repetition %u of %u done\n",
			       i + 1, o->reps);
	}
	printf("%-34s %10s\n", "logic", "ns/decision (median)");
	for (unsigned k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		double med = perf_median(ns[k], o->reps);
		char what[64];

		snprintf(what, sizeof(what), "%s%s%s%s", runs[k].name,
			 runs[k].variant ? " (" : "",
			 runs[k].variant ? runs[k].variant : "",
			 runs[k].variant ? ")" : "");
		printf("%-34s %10.1f\n", what, med);
		json_decide(o, 0, runs[k].name, runs[k].variant, DECISIONS,
			    med);
	}
	/* Time a slot: the bare one's over the router's, the higher the
	 * better, as the throughput ratios of the other modes. */
	perf_ratio_pairs(rns[2], rns[0], o->reps, &vs_bare);
	printf("%-34s %10s\n", "forwarding round, hash", "ns/slot (median)");
	for (unsigned k = 0; k < 3; k++) {
		double med = perf_median(rns[k], o->reps);
		char what[64];

		snprintf(what, sizeof(what), "%sover %u route%s",
			 k == 2 ? "bare fan-out " : "", rroutes[k],
			 rroutes[k] == 1 ? "" : "s");
		printf("%-34s %10.1f\n", what, med);
		json_decide_vs(o, 0, k == 2 ? "bare-fanout" : "hash",
			       rvariant[k], (uint64_t)ROUNDS * ROUND_SLOTS,
			       med, k == 2 ? &vs_bare : NULL);
	}
	printf("round over %u routes, bare fan-out / router: %.3f, median of "
	       "%u pairs (range %.3f..%.3f, spread %.1f %%)\n",
	       o->routes, vs_bare.median, vs_bare.pairs, vs_bare.min,
	       vs_bare.max, vs_bare.spread * 100);
	free(d.base);
	return PERF_EXIT_OK;
}
