/*
 * The reply collector (see collect.h for the model and its invariants).
 *
 * Memory, all in the caller's block: the entries, the timer heap (entry
 * indices), the free stack (entry indices) and, per entry, room for one
 * call (tail-chopping keeps the call it resends).  Nothing is allocated
 * after init, and no function but init touches more than O(log n) of it.
 *
 * An entry's next event is the earlier of its deadline and, for
 * tail-chopping with routees left untried, its next send; a send that the
 * caller could not make waits until after the tick that failed it
 * (retry_at), without moving the send grid.  The heap orders live entries
 * by (event time, start sequence); every change of an entry's event time
 * re-sifts it, and every freed entry leaves the heap at once, so the top
 * is always the next thing to do.
 */
#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "collect.h"
#include "logic.h"

#define NOT_IN_HEAP UINT32_MAX

struct shmr_dp_collect_entry {
	uint64_t due;       /* next event: min(deadline, next send) */
	uint64_t seq;       /* start order */
	uint64_t deadline;  /* timed out at every now >= deadline */
	uint64_t next_send; /* TAIL: grid time of the next send */
	uint64_t retry_at;  /* TAIL: a failed send waits until then */
	uint64_t interval;
	uint64_t tried;     /* routees sent to (bit i: routee i) */
	uint64_t ref;       /* the caller's */
	uint64_t key;       /* the call's (its timeout reply keeps it) */
	struct shmr_pid caller, router;
	uint32_t type;
	uint32_t gen;       /* bumped at each start; never 0 when live */
	uint32_t heap_pos;  /* NOT_IN_HEAP: free */
	uint8_t kind;
	uint8_t nroutees;
	uint8_t pad[2];
};

static_assert(sizeof(struct shmr_dp_collect_entry) % 8 == 0,
	      "entries keep the 8-byte alignment of what follows");
/* A router's routees fit the tried mask: the configuration and the
 * control plane hold a collecting router to SHMR_COLLECT_ROUTEES_MAX
 * (shmr_config_routes_max()); one past it would fail its calls. */
static_assert(SHMR_COLLECT_ROUTEES_MAX <= SHMR_DP_COLLECT_MAX_ROUTEES,
	      "a collecting router's routees fit the tried mask");

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

size_t shmr_dp_collect_mem_size(uint32_t capacity, uint32_t slot_size)
{
	if (capacity == 0 || capacity > SHMR_DP_COLLECT_CAP_MAX ||
	    (capacity & (capacity - 1)) != 0 || slot_size < SHMR_HDR_SIZE ||
	    slot_size > SHMR_SLOT_MAX)
		return 0;
	return (size_t)capacity *
	       (sizeof(struct shmr_dp_collect_entry) + 2 * sizeof(uint32_t) +
		(((size_t)slot_size + 7) & ~(size_t)7));
}

int shmr_dp_collect_init(struct shmr_dp_collector *c, void *mem, size_t size,
			 uint32_t capacity, uint32_t slot_size,
			 uint32_t owner)
{
	size_t need = shmr_dp_collect_mem_size(capacity, slot_size);
	unsigned char *p = mem;

	if (!c || !mem || need == 0 || owner > 0xff ||
	    ((uintptr_t)mem & 7) != 0)
		return -EINVAL;
	if (size < need)
		return -ENOSPC;
	memset(c, 0, sizeof(*c));
	c->cap = capacity;
	c->slot_size = slot_size;
	c->stride = (slot_size + 7) & ~7u;
	c->owner = owner;
	c->ent = (struct shmr_dp_collect_entry *)p;
	p += (size_t)capacity * sizeof(*c->ent);
	c->heap = (uint32_t *)p;
	p += (size_t)capacity * sizeof(uint32_t);
	c->free_idx = (uint32_t *)p;
	p += (size_t)capacity * sizeof(uint32_t);
	c->slots = p;
	memset(c->ent, 0, (size_t)capacity * sizeof(*c->ent));
	for (uint32_t i = 0; i < capacity; i++) {
		c->ent[i].heap_pos = NOT_IN_HEAP;
		/* Popped from the top: entry 0 is used first. */
		c->free_idx[i] = capacity - 1 - i;
	}
	c->nfree = capacity;
	return 0;
}

/* ---- the timer heap ------------------------------------------------- */

static inline int earlier(const struct shmr_dp_collector *c, uint32_t a,
			  uint32_t b)
{
	const struct shmr_dp_collect_entry *x = &c->ent[a], *y = &c->ent[b];

	return x->due < y->due || (x->due == y->due && x->seq < y->seq);
}

static inline void heap_set(struct shmr_dp_collector *c, uint32_t pos,
			    uint32_t idx)
{
	c->heap[pos] = idx;
	c->ent[idx].heap_pos = pos;
}

static void sift_up(struct shmr_dp_collector *c, uint32_t pos)
{
	uint32_t idx = c->heap[pos];

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (!earlier(c, idx, c->heap[parent]))
			break;
		heap_set(c, pos, c->heap[parent]);
		pos = parent;
	}
	heap_set(c, pos, idx);
}

static void sift_down(struct shmr_dp_collector *c, uint32_t pos)
{
	uint32_t idx = c->heap[pos];

	for (;;) {
		uint32_t l = 2 * pos + 1, r = l + 1, m;

		if (l >= c->nlive)
			break;
		m = r < c->nlive && earlier(c, c->heap[r], c->heap[l]) ? r : l;
		if (!earlier(c, c->heap[m], idx))
			break;
		heap_set(c, pos, c->heap[m]);
		pos = m;
	}
	heap_set(c, pos, idx);
}

/* Take live entry @p idx out of the heap and put it on the free stack. */
static void entry_free(struct shmr_dp_collector *c, uint32_t idx)
{
	uint32_t pos = c->ent[idx].heap_pos;
	uint32_t last = c->heap[--c->nlive];

	c->ent[idx].heap_pos = NOT_IN_HEAP;
	if (last != idx) {
		heap_set(c, pos, last);
		/* The moved entry may belong above or below its new place. */
		if (pos > 0 && earlier(c, last, c->heap[(pos - 1) / 2]))
			sift_up(c, pos);
		else
			sift_down(c, pos);
	}
	c->free_idx[c->nfree++] = idx;
}

/* ---- one entry ------------------------------------------------------ */

static inline uint64_t all_routees(uint32_t n)
{
	return n >= 64 ? UINT64_MAX : (1ull << n) - 1;
}

/* The entry's next event time, from its deadline and send schedule. */
static uint64_t entry_due(const struct shmr_dp_collect_entry *e)
{
	uint64_t send = UINT64_MAX;

	if (e->kind == SHMR_DP_COLLECT_TAIL &&
	    e->tried != all_routees(e->nroutees))
		send = e->next_send > e->retry_at ? e->next_send : e->retry_at;
	return send < e->deadline ? send : e->deadline;
}

static inline struct shmr_msg *entry_slot(const struct shmr_dp_collector *c,
					  uint32_t idx)
{
	return (struct shmr_msg *)(c->slots + (size_t)idx * c->stride);
}

/*
 * The routee to try next: uniform among those not tried, one random value.
 * The k-th untried routee in list order, k = floor(r * untried / 2^64).
 */
static uint32_t pick_untried(uint64_t tried, uint32_t n, uint64_t r)
{
	uint64_t left = all_routees(n) & ~tried;
	int k = shmr_logic_random_pick(r, (uint32_t)__builtin_popcountll(left));

	while (k-- > 0)
		left &= left - 1; /* drop the lowest untried */
	return (uint32_t)__builtin_ctzll(left);
}

/* The live entry @p ref names, or NULL. */
static struct shmr_dp_collect_entry *lookup(const struct shmr_dp_collector *c,
					    uint64_t ref)
{
	uint32_t idx = shmr_dp_collect_ref_index(ref);
	struct shmr_dp_collect_entry *e;

	if (shmr_dp_collect_ref_owner(ref) != c->owner || idx >= c->cap)
		return NULL;
	e = &c->ent[idx];
	/* A free entry, or one started again since: not this call's. */
	if (e->heap_pos == NOT_IN_HEAP ||
	    e->gen != shmr_dp_collect_ref_gen(ref))
		return NULL;
	return e;
}

/* Write the caller's SHMR_E_TIMEOUT for entry @p e into @p m. */
static void timeout_reply(const struct shmr_dp_collect_entry *e,
			  struct shmr_msg *m)
{
	memset(m, 0, SHMR_HDR_SIZE);
	m->kind = SHMR_KIND_REPLY;
	m->priority = SHMR_PRIO_NORMAL;
	m->type = e->type;
	m->from = e->router;
	m->to = e->caller;
	m->ref = e->ref;
	m->key = e->key;
	m->status = -SHMR_E_TIMEOUT;
}

/* ---- the API ------------------------------------------------------- */

int shmr_dp_collect_start(struct shmr_dp_collector *c, struct shmr_msg *call,
			  const struct shmr_dp_collect_args *a, uint64_t now,
			  uint32_t *first)
{
	struct shmr_dp_collect_entry *e;
	uint32_t idx;

	if (call->kind != SHMR_KIND_CALL ||
	    (a->kind != SHMR_DP_COLLECT_SCATTER &&
	     a->kind != SHMR_DP_COLLECT_TAIL) ||
	    a->within_ns == 0 ||
	    (a->kind == SHMR_DP_COLLECT_TAIL && a->interval_ns == 0) ||
	    a->nroutees > SHMR_DP_COLLECT_MAX_ROUTEES ||
	    call->len > c->slot_size - SHMR_HDR_SIZE)
		return -EINVAL;
	if (a->nroutees == 0)
		return -SHMR_E_NO_ROUTEES;
	if (c->nfree == 0) {
		c->st.full++;
		return -ENOSPC;
	}
	idx = c->free_idx[--c->nfree];
	e = &c->ent[idx];
	e->gen = e->gen + 1 ? e->gen + 1 : 1;
	e->seq = c->seq++;
	e->deadline = add_sat(now, a->within_ns);
	e->kind = (uint8_t)a->kind;
	e->nroutees = (uint8_t)a->nroutees;
	e->interval = a->interval_ns;
	e->retry_at = 0;
	e->caller = call->from;
	e->router = call->to;
	e->ref = call->ref;
	e->key = call->key;
	e->type = call->type;

	call->from = call->to;
	call->ref = (uint64_t)e->gen << 32 | (uint64_t)c->owner << 24 | idx;
	if (a->kind == SHMR_DP_COLLECT_TAIL) {
		uint32_t pick = pick_untried(0, a->nroutees, a->rnd);

		e->tried = 1ull << pick;
		e->next_send = add_sat(now, a->interval_ns);
		memcpy(entry_slot(c, idx), call, shmr_msg_bytes(call, c->slot_size));
		*first = pick;
	} else {
		e->tried = all_routees(a->nroutees);
		e->next_send = UINT64_MAX;
		*first = 0;
	}
	e->due = entry_due(e);
	heap_set(c, c->nlive++, idx);
	sift_up(c, c->nlive - 1);
	c->st.started++;
	return 0;
}

int shmr_dp_collect_cancel(struct shmr_dp_collector *c, uint64_t ref)
{
	struct shmr_dp_collect_entry *e = lookup(c, ref);

	if (!e)
		return -ENOENT;
	entry_free(c, shmr_dp_collect_ref_index(ref));
	c->st.cancelled++;
	return 0;
}

const struct shmr_msg *shmr_dp_collect_kept(const struct shmr_dp_collector *c,
					    uint64_t ref)
{
	const struct shmr_dp_collect_entry *e = lookup(c, ref);

	if (!e || e->kind != SHMR_DP_COLLECT_TAIL)
		return NULL;
	return entry_slot(c, shmr_dp_collect_ref_index(ref));
}

int shmr_dp_collect_caller(const struct shmr_dp_collector *c, uint64_t ref,
			   struct shmr_pid *caller)
{
	const struct shmr_dp_collect_entry *e = lookup(c, ref);

	if (!e)
		return -ENOENT;
	*caller = e->caller;
	return 0;
}

int shmr_dp_collect_on_reply(struct shmr_dp_collector *c,
			     struct shmr_msg *reply, uint64_t now)
{
	struct shmr_dp_collect_entry *e = reply->kind == SHMR_KIND_REPLY
						  ? lookup(c, reply->ref)
						  : NULL;

	if (!e) {
		c->st.dropped++;
		return SHMR_DP_COLLECT_DROP;
	}
	entry_free(c, shmr_dp_collect_ref_index(reply->ref));
	if (now >= e->deadline) {
		/* Timed out already: the same answer tick() would give. */
		timeout_reply(e, reply);
		c->st.dropped++;
		c->st.timeouts++;
		return SHMR_DP_COLLECT_TIMEOUT;
	}
	reply->to = e->caller;
	reply->ref = e->ref;
	c->st.delivered++;
	return SHMR_DP_COLLECT_DELIVER;
}

unsigned shmr_dp_collect_tick(struct shmr_dp_collector *c, uint64_t now,
			      const struct shmr_dp_collect_ops *ops)
{
	unsigned events = 0;

	/* One event per round, then the heap is put right, so events come
	 * in (time, start order) across entries. */
	while (c->nlive > 0 && c->ent[c->heap[0]].due <= now) {
		uint32_t idx = c->heap[0];
		struct shmr_dp_collect_entry *e = &c->ent[idx];
		uint32_t pick;

		events++;
		if (e->due == e->deadline) {
			uint64_t buf[SHMR_HDR_SIZE / sizeof(uint64_t)];
			struct shmr_msg *m = (struct shmr_msg *)buf;

			/* A send due at the deadline itself is not made:
			 * the call is over at deadline. */
			timeout_reply(e, m);
			if (ops->release && e->kind == SHMR_DP_COLLECT_TAIL)
				ops->release(ops->ctx, entry_slot(c, idx));
			entry_free(c, idx);
			c->st.timeouts++;
			ops->expire(ops->ctx, m);
			continue;
		}
		/* A send, due at e->due < deadline. */
		pick = pick_untried(e->tried, e->nroutees,
				    ops->random(ops->ctx));
		if (ops->send(ops->ctx, pick, entry_slot(c, idx)) < 0) {
			e->retry_at = add_sat(now, 1);
			c->st.retries++;
		} else {
			e->tried |= 1ull << pick;
			e->next_send = add_sat(e->next_send, e->interval);
			e->retry_at = 0;
			c->st.sends++;
		}
		e->due = entry_due(e);
		sift_down(c, 0);
	}
	return events;
}

uint64_t shmr_dp_collect_next_due(const struct shmr_dp_collector *c)
{
	return c->nlive ? c->ent[c->heap[0]].due : UINT64_MAX;
}
