/*
 * The control plane's figures of each endpoint slot, in the domain
 * (struct shmr_ep_figs, the endpoint table's third line): the bases the
 * counters are taken from (a reused slot starts at 0, domain.c's
 * ctr_base) and each route's restarts and redeliveries, which only the
 * control plane sees.  With them the dataplane's telemetry computes every
 * registry counter the way shmr_ctl_counters_read() does.
 *
 * The control plane is the line's only writer; it stores a word only
 * when its value changed, so that a quiet appliance writes nothing.
 * Relaxed stores: statistics, read relaxed by the telemetry (no partner);
 * the bases are stored inside the seqcount write that publishes the
 * slot's new generation (shmr_ctl_publish()), which orders them for a
 * reader that checks its seqcount read.
 */
#include <stdatomic.h>

#include "counters_figs.h"
#include "domain.h"

static void put(_Atomic(uint64_t) *w, uint64_t v)
{
	if (atomic_load_explicit(w, memory_order_relaxed) != v)
		atomic_store_explicit(w, v, memory_order_relaxed);
}

void shmr_ctl_figs_slot_handed(struct shmr_ctl_domain *d, uint32_t s)
{
	struct shmr_ep_figs *f = &shmr_ctl_dom_ep(d, s)->figs;
	const struct shmr_ctl_slot_base *b = &d->ctr_base[s];

	put(&f->base_forwarded, b->forwarded);
	put(&f->base_discarded, b->discarded);
	put(&f->base_failed, b->failed);
	put(&f->base_delivered, b->delivered);
	put(&f->base_inbox_full, b->inbox_full);
	put(&f->base_bad_slots, b->bad_slots);
	/* A route's own (shmr_ctl_figs_sync() sets them for a route). */
	put(&f->restarts, 0);
	put(&f->redelivered, 0);
}

void shmr_ctl_figs_sync(struct shmr_ctl_domain *d,
			const struct shmr_ctl_model *m)
{
	/* The domain this process last wrote every slot's line of: once
	 * more for a new one (created, or adopted with the lines the last
	 * control plane wrote, which counted from other bases). */
	static const void *all_done;

	if (!d->base)
		return;
	if (all_done != d->base) {
		for (uint32_t s = 0; s < d->geo.max_endpoints; s++)
			shmr_ctl_figs_slot_handed(d, s);
		all_done = d->base;
	}
	for (unsigned i = 0; i < m->nrouters; i++) {
		const struct shmr_ctl_router *r = &m->routers[i];

		for (unsigned k = 0; k < r->nroutes; k++) {
			const struct shmr_ctl_route *q = &r->routes[k];
			struct shmr_ep_figs *f;

			if (q->pid.slot >= d->geo.max_endpoints)
				continue;
			f = &shmr_ctl_dom_ep(d, q->pid.slot)->figs;
			put(&f->restarts, q->restarts);
			put(&f->redelivered, q->redelivered);
		}
	}
}
