/*
 * Formatting (format.c): ROUTES, INSPECT, STATUS.  Internal to the control
 * plane: not for direct inclusion outside control/ and tests/unit/control/.
 */
#ifndef SHMR_CONTROL_FORMAT_H
#define SHMR_CONTROL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/layout.h>

#include "model.h"

/* One routing lcore's counters (the LCORE lines of counters.def), as
 * shmr_ctl_counters_read() loaded them. */
struct shmr_ctl_lcore_counters {
#define SHMR_CTR(scope, name, kind, unit, help, value) \
	SHMR_CTR_FIELD_##scope(name)
#define SHMR_CTR_FIELD_ROUTER(name)
#define SHMR_CTR_FIELD_ROUTE(name)
#define SHMR_CTR_FIELD_LCORE(name) uint64_t name;
#define SHMR_CTR_FIELD_ENDPOINT(name)
#define SHMR_CTR_FIELD_ARENA(name)
#include <shmr/counters.def>
#undef SHMR_CTR
#undef SHMR_CTR_FIELD_ROUTER
#undef SHMR_CTR_FIELD_ROUTE
#undef SHMR_CTR_FIELD_LCORE
#undef SHMR_CTR_FIELD_ENDPOINT
#undef SHMR_CTR_FIELD_ARENA
};

/* One arena size class's figures, as shmr_ctl_arena_counters_read()
 * (arena.h) loaded them: each ARENA line of counters.def names its field. */
struct shmr_ctl_arena_counters {
	char cls[16]; /* the class's label: "64K", "1M", or its bytes */
	uint64_t buffers, free, in_use, reclaimed, alloc_failures;
};

/* Counters read from the domain, by endpoint slot (summed over lcores). */
struct shmr_ctl_counters {
	uint64_t forwarded[SHMR_MAX_ENDPOINTS]; /* router_forwarded */
	uint64_t discarded[SHMR_MAX_ENDPOINTS];
	uint64_t failed[SHMR_MAX_ENDPOINTS];
	uint64_t delivered[SHMR_MAX_ENDPOINTS]; /* ep_delivered */
	uint64_t queued[SHMR_MAX_ENDPOINTS];    /* waiting in its inbound lanes,
						 * not yet received */
	uint64_t in_hand[SHMR_MAX_ENDPOINTS];   /* received by its worker, not
						 * yet finished */
	uint64_t inbox_full[SHMR_MAX_ENDPOINTS]; /* ep_full */
	uint64_t lane_full[SHMR_MAX_ENDPOINTS];  /* its owner's sends that
						  * found a lane full */
	uint64_t bad_slots[SHMR_MAX_ENDPOINTS];
	uint64_t quarantined[SHMR_MAX_ENDPOINTS]; /* 1 or 0 */
	uint64_t dlq_size[SHMR_MAX_ENDPOINTS];  /* by router slot: records in
						 * its dead-letter file (set
						 * by the daemon for INSPECT) */
	uint32_t nlcores;
	uint32_t inbox_slots; /* what a route's inbox holds: nlcores lanes of
			      * lane_size - 1 slots (the configured size) */
	struct shmr_ctl_lcore_counters lcore[SHMR_MAX_LCORES];
	/* The clients' endpoints in use (the ENDPOINT lines), by slot. */
	uint32_t nclients;
	struct shmr_ctl_client {
		struct shmr_pid pid;
		char name[SHMR_NAME_MAX]; /* the first it registered, the
					   * slot's own ("shmr:admin"), or "" */
	} client[SHMR_MAX_ENDPOINTS];
	/* The receiver's sojourn histogram of each slot, summarised
	 * (shmr/hist.h): hints, as any peer can write the block. */
	struct shmr_hist_summary sojourn[SHMR_MAX_ENDPOINTS];
	/* The payload arena's classes (the ARENA lines); 0 without one. */
	uint32_t narena;
	struct shmr_ctl_arena_counters arena[SHMR_ARENA_MAX_CLASSES];
};

/* A router's figures summed over its routes (counters.def's "agg"). */
struct shmr_ctl_router_agg {
	uint64_t active, disabled, pending, queued, restarts;
};

/** The sums of @p r's routes. */
void shmr_ctl_router_agg(const struct shmr_ctl_router *r,
			 const struct shmr_ctl_counters *c,
			 struct shmr_ctl_router_agg *out);

/* Keys a router's handle_inspect hook added (see behaviour.h). */
#define SHMR_CTL_KV_EXTRA_MAX 64
struct shmr_ctl_kv_pair {
	char key[96];
	char value[160];
	int used; /* emitted (as an override or on its own) */
};
struct shmr_ctl_kv_extra {
	unsigned n;
	struct shmr_ctl_kv_pair p[SHMR_CTL_KV_EXTRA_MAX];
};

struct json_object;

/* Key/value writer: "key value" lines, or one JSON object (built with
 * json-c: strings, numbers as JSON numbers, booleans as booleans).  With
 * @c extra set, a key added that one of the extras names takes the
 * extra's value (a string), and the extras left are added by
 * shmr_ctl_kv_end(). */
struct shmr_ctl_kv {
	char *buf;
	size_t cap, len;
	int json;
	unsigned n;
	int overflow;
	struct shmr_ctl_kv_extra *extra; /* NULL: none */
	struct json_object *obj;         /* json: the object being built */
};

void shmr_ctl_kv_begin(struct shmr_ctl_kv *kv, char *buf, size_t cap,
		       int json);
void shmr_ctl_kv_add(struct shmr_ctl_kv *kv, const char *key,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** Add @p key: string @p s, of any length (shmr_ctl_kv_add() holds a
 *  value to 511 bytes). */
void shmr_ctl_kv_add_str(struct shmr_ctl_kv *kv, const char *key,
			 const char *s);
/** A PID in the domain: "SLOT:GEN", or with json the object
 * {"slot": SLOT, "gen": GEN} every --json output gives a PID as. */
void shmr_ctl_kv_add_pid(struct shmr_ctl_kv *kv, const char *key,
			 struct shmr_pid pid);
/** A number (a JSON number with json). */
void shmr_ctl_kv_add_u64(struct shmr_ctl_kv *kv, const char *key,
			 uint64_t v);
void shmr_ctl_kv_add_i64(struct shmr_ctl_kv *kv, const char *key,
			 int64_t v);
/** "true" or "false" (a JSON boolean with json). */
void shmr_ctl_kv_add_bool(struct shmr_ctl_kv *kv, const char *key, int v);
/** Close the object (and free what json built); returns the length, or
 * -ENOSPC when it overflowed, -ENOMEM when json-c could not allocate. */
int shmr_ctl_kv_end(struct shmr_ctl_kv *kv);

/** "type", "hash", "dso" or "unknown". */
const char *shmr_ctl_behaviour_name(uint32_t behaviour);
/** "running", "dead", "disabled", "pending_disable", ... */
const char *shmr_ctl_route_state_name(uint32_t state);
/**
 * The state a route shows (ROUTE, ROUTES, INSPECT): its state's name,
 * except that a running route whose worker has not attached yet (not
 * CLAIMed the inbox: its main may not have run) is "starting".  The
 * dataplane sees no such state: it routes to the inbox either way.
 */
const char *shmr_ctl_route_shown_state(const struct shmr_ctl_route *q);

/**
 * ROUTES body: one line per route, "NAME pid=<slot>:<gen> os_pid=N state=S
 * restarts=N delivered=N queued=N cpus=LIST sojourn_count=N
 * sojourn_p50_ns=N sojourn_p99_ns=N sojourn_p999_ns=N sojourn_max_ns=N"
 * (LIST as /proc shows Cpus_allowed_list, "any" when unpinned; the
 * sojourns of the messages its workers received, shmr/hist.h).
 * Returns the length, or -ENOSPC.
 */
int shmr_ctl_format_routes(const struct shmr_ctl_router *r,
			   const struct shmr_ctl_counters *c, char *buf,
			   size_t cap);

/** One ROUTES line, for ROUTE.  Returns the length, or -ENOSPC. */
int shmr_ctl_format_route(const struct shmr_ctl_route *q,
			  const struct shmr_ctl_counters *c, char *buf,
			  size_t cap);

/**
 * INSPECT body, keys prefixed "shmr:" (see control.c's header comment),
 * with @p extra (a handle_inspect hook's keys, or NULL) merged on top: an
 * extra key equal to a built-in one ("shmr:..." only) replaces its value,
 * the others follow the built-in keys.
 * Returns the length, or -ENOSPC.
 */
int shmr_ctl_format_inspect(const struct shmr_ctl_router *r,
			    const struct shmr_ctl_counters *c,
			    struct shmr_ctl_kv_extra *extra, int json,
			    char *buf, size_t cap);

/** The items of @p r's INSPECT, in order: 0 the router's own keys, then
 * one per route, per routing lcore, per client endpoint and per payload
 * arena class. */
unsigned shmr_ctl_inspect_items(const struct shmr_ctl_router *r,
				const struct shmr_ctl_counters *c);

/**
 * INSPECT's items [@p from, @p from + @p count) only (clamped to the
 * items there are), as shmr_ctl_format_inspect() writes them: a part of
 * an answer too big for one (SHMR_PROTO_MAX), which the reader asks for
 * part by part and merges.  @p extra's keys override the part's keys; the
 * extras left follow the last item only.
 * Returns the length, or -ENOSPC (the part does not fit: ask fewer
 * items), -ENOMEM.
 */
int shmr_ctl_format_inspect_part(const struct shmr_ctl_router *r,
				 const struct shmr_ctl_counters *c,
				 struct shmr_ctl_kv_extra *extra, int json,
				 unsigned from, unsigned count, char *buf,
				 size_t cap);

/**
 * INSPECT ROUTER [json] from=N's whole answer: "OK NEXT TOTAL\n" and the
 * items from @p from on, as many whole ones as fit in @p cap, at most 256
 * (halved until they fit); the reader asks from=NEXT until NEXT is TOTAL.  Each part is
 * formatted from @p c as the caller read it for its own request.
 * Returns the length, or -ENOSPC (one item alone does not fit), -ENOMEM.
 */
int shmr_ctl_format_inspect_paged(const struct shmr_ctl_router *r,
				  const struct shmr_ctl_counters *c,
				  struct shmr_ctl_kv_extra *extra, int json,
				  unsigned from, char *buf, size_t cap);

#endif
