/*
 * The domain as shmr-control holds it: created once at start-up (a memfd,
 * hugetlb first, sealed against resizing), then written by publication
 * (the protocol is in control.c's header comment: one spec version per
 * change of the model, written under the spec seqcount, then announced on
 * the control lane) and read for the lcores' versions and counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/lane.h>
#include <shmr/proto.h>

#include "arena.h"
#include "control_internal.h"
#include "counters_figs.h"
#include "domain.h"

/* One part: a memfd of @p size, sealed against resizing. */
static int part_create(const char *name, unsigned flags, uint64_t size)
{
	int fd = memfd_create(name, flags);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	/* Peers map it too: nobody may shrink it under them (SIGBUS). */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	return fd;
}

static int map_domain(struct shmr_ctl_domain *d, const char *name,
		      unsigned flags)
{
	char lname[SHMR_NAME_MAX + 8];
	int rc;

	snprintf(lname, sizeof(lname), "%s.lanes", name);
	d->memfd = part_create(name, flags, d->geo.peer_off);
	if (d->memfd < 0)
		return d->memfd;
	d->lanes_fd = part_create(lname, flags, d->size - d->geo.peer_off);
	rc = d->lanes_fd < 0 ? d->lanes_fd
			     : shmr_domain_map(d->memfd, d->lanes_fd,
					       d->geo.peer_off, d->size, 1,
					       &d->base);
	if (rc < 0) {
		close(d->memfd);
		if (d->lanes_fd >= 0)
			close(d->lanes_fd);
		d->memfd = d->lanes_fd = -1;
		d->base = NULL;
	}
	return rc;
}

int shmr_ctl_domain_open_ro(struct shmr_ctl_domain *d)
{
	char path[64];

	/* Only the daemons (our user) open the files again; a peer's
	 * descriptor stays read-only whatever it tries through /proc. */
	if (fchmod(d->memfd, 0600) < 0 || fchmod(d->lanes_fd, 0600) < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", d->memfd);
	d->peer_ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	return d->peer_ro_fd < 0 ? -errno : 0;
}

void shmr_ctl_domain_close(struct shmr_ctl_domain *d)
{
	if (d->base)
		shmr_domain_unmap(d->base, d->size);
	if (d->memfd >= 0)
		close(d->memfd);
	if (d->lanes_fd >= 0)
		close(d->lanes_fd);
	if (d->peer_ro_fd >= 0)
		close(d->peer_ro_fd);
	d->base = NULL;
	d->memfd = d->lanes_fd = d->peer_ro_fd = -1;
	free(d->spec_buf);
	d->spec_buf = NULL;
	free(d->types_buf);
	d->types_buf = NULL;
	free(d->routes_buf);
	d->routes_buf = NULL;
	free(d->active_buf);
	d->active_buf = NULL;
}

int shmr_ctl_domain_bufs(struct shmr_ctl_domain *d)
{
	free(d->spec_buf);
	free(d->types_buf);
	free(d->routes_buf);
	free(d->active_buf);
	d->spec_buf = calloc(1, shmr_spec_size(d->geo.max_routers));
	d->active_buf = calloc(d->geo.max_endpoints, sizeof(uint32_t));
	d->types_buf = calloc(1, shmr_spec_types_size(d->geo.max_types,
						      d->geo.max_routers));
	d->routes_buf = calloc(1, shmr_spec_routes_size(d->geo.max_routes,
							d->geo.max_routers));
	return d->spec_buf && d->active_buf && d->types_buf && d->routes_buf
		       ? 0
		       : -ENOMEM;
}

int shmr_ctl_domain_create(struct shmr_ctl_domain *d,
			   const struct shmr_config *cfg)
{
	struct shmr_geometry g;
	int64_t size;
	int rc;

	shmr_config_geometry(cfg, &g);
	size = shmr_layout_plan_arena(&g, &cfg->arena, &d->geo);
	if (size < 0)
		return (int)size;
	d->size = (uint64_t)size;
	/* hugetlb first: the mapping fails (ENOMEM) when there are not
	 * enough free hugepages to reserve, not the memfd. */
	rc = map_domain(d, cfg->domain,
			MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (rc == 0) {
		d->hugepages = 1;
	} else {
		shmr_ctl_log("no free hugepages; domain uses 4 KiB pages");
		rc = map_domain(d, cfg->domain,
				MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (rc < 0)
			return rc;
	}
	rc = shmr_layout_init_arena(d->base, &g, &cfg->arena, cfg->domain);
	if (rc == 0)
		rc = shmr_ctl_domain_open_ro(d);
	if (rc == 0)
		rc = shmr_ctl_domain_bufs(d);
	if (rc < 0)
		return rc;
	/* The TSC's rate, once per domain, for every process's sojourn
	 * stamps (20 ms: the rate to about 0.01 %; the clock reads at both
	 * ends take well under a microsecond).  After the ready word, but
	 * before anyone can attach: nobody is answered on the socket yet,
	 * and that answer (a syscall) orders it; the dataplane does not
	 * read it. */
	if (cfg->sojourn) {
		shmr_hdr(d->base)->tsc_hz = shmr_tsc_calibrate(20);
		if (shmr_hdr(d->base)->tsc_hz == 0)
			shmr_ctl_warn("the TSC's rate could not be measured: "
				      "no sojourn figures");
	}
	/* Our copy of the geometry: what we laid out, before any peer. */
	memcpy(&d->geo, d->base, sizeof(d->geo));
	/* Relaxed: an informational word for tools; the ready word [R0]
	 * already published the domain. */
	atomic_store_explicit(&shmr_hdr(d->base)->control_pid, getpid(),
			      memory_order_relaxed);
	return 0;
}

int shmr_ctl_lane_send(struct shmr_ctl_domain *d, uint32_t type,
		       uint64_t key)
{
	struct shmr_domain_hdr *h = shmr_hdr(d->base);
	uint64_t slot[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *m = (struct shmr_msg *)slot;
	struct rte_ring *lane = shmr_ctl_dom_ctl_lane(d);

	/* Only we produce and only the dataplane consumes it, but it lies
	 * in memory peers could write: checked as any lane we produce. */
	if (!shmr_lane_valid_sp(lane, d->geo.lane_size))
		return -ENOBUFS;
	memset(slot, 0, d->geo.slot_size);
	m->kind = SHMR_KIND_SEND;
	m->type = type;
	m->key = key;
	if (rte_ring_enqueue_burst_elem(lane, slot, d->geo.slot_size, 1,
					NULL) != 1)
		return -ENOBUFS;
	shmr_bell_ring(&h->ctl_bell);
	return 0;
}

uint64_t shmr_ctl_seen_version(const struct shmr_ctl_domain *d)
{
	uint64_t min = UINT64_MAX;

	for (uint32_t i = 0; i < d->geo.nlcores; i++) {
		/* Acquire: pairs with the lcore's release store of the
		 * version it applied; it no longer touches what that version
		 * dropped. */
		uint64_t v = atomic_load_explicit(
			&shmr_ctl_dom_stats(d, i)->table_version,
			memory_order_acquire);
		if (v < min)
			min = v;
	}
	return min;
}

static void lane_reinit(struct shmr_ctl_domain *d, uint32_t slot,
			uint32_t idx)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "ep%u.%u", slot, idx);
	if (shmr_lane_init(shmr_ctl_dom_lane(d, slot, idx), name,
			   d->geo.lane_size) < 0)
		abort(); /* the same geometry worked at init */
}

/* The header's geometry as we laid it out: a peer may have written it
 * (attach checks it, so a new client could not attach).  Only the words
 * that are constant after creation; the ready word, pids and bells are
 * left alone. */
static void header_heal(struct shmr_ctl_domain *d)
{
	struct shmr_domain_hdr *h = shmr_hdr(d->base);
	const struct shmr_domain_hdr *g = &d->geo;

	if (h->magic == g->magic && h->layout_version == g->layout_version &&
	    h->size == g->size && h->slot_size == g->slot_size &&
	    h->lane_size == g->lane_size && h->nlcores == g->nlcores &&
	    h->max_endpoints == g->max_endpoints &&
	    h->max_names == g->max_names && h->names_off == g->names_off &&
	    h->max_types == g->max_types && h->types_off == g->types_off &&
	    h->max_routers == g->max_routers &&
	    h->max_routes == g->max_routes && h->routes_off == g->routes_off &&
	    h->active_off == g->active_off &&
	    h->poll_mode == g->poll_mode && h->spin_polls == g->spin_polls &&
	    h->lane_stride == g->lane_stride && h->ep_off == g->ep_off &&
	    h->spec_off == g->spec_off && h->counters_off == g->counters_off &&
	    h->ctl_off == g->ctl_off && h->lanes_off == g->lanes_off &&
	    h->peer_off == g->peer_off && h->bells_off == g->bells_off &&
	    h->eppeer_off == g->eppeer_off && h->hist_off == g->hist_off &&
	    h->tsc_hz == g->tsc_hz &&
	    h->arena_nclasses == g->arena_nclasses &&
	    h->arena_off == g->arena_off && h->arena_size == g->arena_size &&
	    memcmp(h->arena, g->arena, sizeof(g->arena)) == 0 &&
	    memcmp(h->name, g->name, SHMR_NAME_MAX) == 0)
		return;
	shmr_ctl_warn("the domain header's geometry was overwritten by a "
		      "peer: written back");
	h->magic = g->magic;
	h->layout_version = g->layout_version;
	h->size = g->size;
	memcpy(h->name, g->name, SHMR_NAME_MAX);
	h->slot_size = g->slot_size;
	h->lane_size = g->lane_size;
	h->nlcores = g->nlcores;
	h->max_endpoints = g->max_endpoints;
	h->max_names = g->max_names;
	h->names_off = g->names_off;
	h->max_types = g->max_types;
	h->types_off = g->types_off;
	h->max_routers = g->max_routers;
	h->max_routes = g->max_routes;
	h->routes_off = g->routes_off;
	h->active_off = g->active_off;
	h->poll_mode = g->poll_mode;
	h->spin_polls = g->spin_polls;
	h->lane_stride = g->lane_stride;
	h->ep_off = g->ep_off;
	h->spec_off = g->spec_off;
	h->counters_off = g->counters_off;
	h->ctl_off = g->ctl_off;
	h->lanes_off = g->lanes_off;
	h->peer_off = g->peer_off;
	h->bells_off = g->bells_off;
	h->eppeer_off = g->eppeer_off;
	h->hist_off = g->hist_off;
	h->tsc_hz = g->tsc_hz;
	h->arena_nclasses = g->arena_nclasses;
	h->arena_off = g->arena_off;
	h->arena_size = g->arena_size;
	memcpy(h->arena, g->arena, sizeof(g->arena));
}

/* How long the dataplane's side of a dead process's lane may take to come
 * to rest (one burst, or one enqueue: microseconds, unless it is
 * descheduled), before we take the dead process to have written it. */
#define LIVE_REST_WAIT_MS 100

/*
 * Is the live side (the dataplane's) of lane @p r at rest: no enqueue half
 * done on an inbound lane (@p in), no burst held on an outbound one?  The
 * dataplane never leaves its side otherwise between two bursts, and
 * refuses a lane found so (its lane checks), so one that stays so was
 * written by the dead process: shmr_lane_sound_for_repair() allows it (a
 * burst in progress), the repairs leave it, and the endpoint would stay
 * quarantined under its next process.  Waits up to LIVE_REST_WAIT_MS.
 */
static int live_side_at_rest(const struct rte_ring *r, int in)
{
	for (unsigned i = 0;; i++) {
		/* Relaxed: nothing is read on their account. */
		const struct rte_ring_headtail *ht = in ? &r->prod : &r->cons;

		if (__atomic_load_n(&ht->head, __ATOMIC_RELAXED) ==
		    __atomic_load_n(&ht->tail, __ATOMIC_RELAXED))
			return 1;
		if (i >= LIVE_REST_WAIT_MS)
			return 0;
		usleep(1000);
	}
}

unsigned shmr_ctl_slot_take_over(struct shmr_ctl_domain *d, uint32_t slot)
{
	uint32_t nl = d->geo.nlcores, ls = d->geo.lane_size;
	unsigned back = 0, reinit = 0;

	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(nl); i++) {
		struct rte_ring *r = shmr_ctl_dom_lane(d, slot, i);
		int in = i < nl; /* it consumed [0, nl), produced the rest */

		if (!shmr_lane_sound_for_repair(r, ls, in) ||
		    !live_side_at_rest(r, in)) {
			lane_reinit(d, slot, i);
			reinit++;
		} else if (in) {
			back += shmr_lane_repair_consumer(r, d->geo.slot_size,
							  ls);
		} else {
			(void)shmr_lane_repair_producer(r, ls);
		}
	}
	if (reinit) {
		d->lanes_reinit += reinit;
		shmr_ctl_warn("endpoint %u: %u lane(s) left unsound by its "
			      "process: initialised again (what they held is "
			      "lost)",
			      slot, reinit);
	}
	header_heal(d);
	return back;
}

void shmr_ctl_slot_reinit(struct shmr_ctl_domain *d, uint32_t slot)
{
	struct shmr_ep_peer *ep = shmr_ctl_dom_ep_peer(d, slot);

	/* What its lanes still refer to is never received now, and what its
	 * last holder kept is nobody's: both go back to the arena before the
	 * new holder can allocate. */
	(void)shmr_ctl_arena_drop_lanes(d, slot);
	(void)shmr_ctl_arena_reclaim(d, slot);
	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(d->geo.nlcores); i++)
		lane_reinit(d, slot, i);
	/* A sleeper of the dead owner never withdrew.  Relaxed: nobody
	 * uses the slot until OPEN is answered, a syscall round trip that
	 * orders it. */
	atomic_store_explicit(&ep->bell.sleepers, 0, memory_order_relaxed);
}

/* Slot @p s's dataplane counters, summed over the lcores.  Relaxed
 * loads: statistics, each word written by one lcore; no other memory is
 * read on their account. */
static void slot_raw(const struct shmr_ctl_domain *d, uint32_t s,
		     struct shmr_ctl_slot_base *out)
{
	*out = (struct shmr_ctl_slot_base){ 0 };
	for (uint32_t l = 0; l < d->geo.nlcores; l++) {
		struct shmr_ep_ctr *st = shmr_ctl_dom_ep_ctr(d, l, s);

		out->forwarded += atomic_load_explicit(&st->router_forwarded,
						       memory_order_relaxed);
		out->discarded += atomic_load_explicit(&st->router_discarded,
						       memory_order_relaxed);
		out->failed += atomic_load_explicit(&st->router_failed,
						    memory_order_relaxed);
		out->delivered += atomic_load_explicit(&st->ep_delivered,
						       memory_order_relaxed);
		out->inbox_full += atomic_load_explicit(&st->ep_full,
							memory_order_relaxed);
	}
	/* The dataplane's line of the endpoint slot. */
	out->bad_slots = atomic_load_explicit(&shmr_ctl_dom_ep(d, s)->bad_slots,
					      memory_order_relaxed);
}

static uint64_t since(uint64_t now, uint64_t base)
{
	return now >= base ? now - base : 0;
}

static void sync_endpoints(struct shmr_ctl_domain *d,
			   const struct shmr_ctl_model *m)
{
	const struct shmr_ctl_alloc *a = &m->alloc;

	for (uint32_t i = 0; i < a->nslots && i < d->geo.max_endpoints; i++) {
		const struct shmr_ctl_slot *s = &a->slots[i];
		struct shmr_ep_shared *ep = shmr_ctl_dom_ep(d, i);
		uint32_t state = s->state == SHMR_CTL_SLOT_USED ? SHMR_EP_ACTIVE
							       : SHMR_EP_FREE;
		int32_t os_pid = s->state == SHMR_CTL_SLOT_USED ? s->os_pid : 0;

		/* A new owner's sojourns start from nothing.  Nobody
		 * records into the slot's histogram now: the last owner is
		 * gone (the slot is reused only then) and the new one has
		 * not been answered yet (relaxed: that answer, a syscall,
		 * orders it). */
		if (ep->gen != s->gen && s->state == SHMR_CTL_SLOT_USED)
			shmr_hist_reset(shmr_ctl_dom_hist(d, i));
		if (ep->gen == s->gen && ep->kind == s->kind &&
		    ep->os_pid == os_pid &&
		    /* relaxed: we are the only writer */
		    atomic_load_explicit(&ep->state, memory_order_relaxed) ==
			    state &&
		    memcmp(ep->name, s->name, SHMR_NAME_MAX) == 0)
			continue;
		if (ep->gen != s->gen && s->state == SHMR_CTL_SLOT_USED) {
			/* A new owner: its counters start at 0.  The
			 * dataplane counts nothing for the slot now (it was
			 * reused only once every lcore had dropped it, and
			 * the spec naming its owner is written below), so the
			 * sums are the last owner's final ones.  Its own
			 * lane_full too: its new owner has not been answered
			 * yet (relaxed: that answer, a syscall, orders it). */
			slot_raw(d, i, &d->ctr_base[i]);
			shmr_ctl_figs_slot_handed(d, i);
			atomic_store_explicit(
				&shmr_ctl_dom_ep_peer(d, i)->lane_full, 0,
				memory_order_relaxed);
		}
		ep->gen = s->gen;
		ep->kind = s->kind;
		ep->os_pid = os_pid;
		memcpy(ep->name, s->name, SHMR_NAME_MAX);
		/* Release: gen/kind/os_pid/name before the state (pairs with
		 * a reader's acquire load of state). */
		atomic_store_explicit(&ep->state, state, memory_order_release);
	}
}

/* The routers' type maps, routes and names, as many entries as each uses
 * (the model's maps are shmr_ctl_model_max_types() apart, the domain's
 * geo.max_types, its routes shmr_ctl_model_routes_room() and
 * geo.max_routes: the same configuration's, checked equal by
 * shmr_ctl_publish()). */
static void maps_publish(struct shmr_ctl_domain *d,
			  const struct shmr_ctl_model *m)
{
	uint32_t mt = shmr_ctl_model_max_types(m), dt = d->geo.max_types;
	/* Ours, built from the model (shmr_ctl_publish() holds it). */
	uint32_t nr = d->spec_buf->nrouters;

	for (uint32_t i = 0; i < nr; i++) {
		const struct shmr_spec_router *r = &d->spec_buf->routers[i];
		uint32_t n[2] = { r->ntypes, r->ncall_types };

		for (int c = 0; c < 2; c++) {
			uint32_t k = n[c] < mt ? n[c] : mt;

			memcpy(shmr_ctl_dom_types(d, i, c),
			       shmr_spec_types_at(d->types_buf, mt, i, c),
			       (size_t)(k < dt ? k : dt) *
				       sizeof(struct shmr_spec_type));
		}
		shmr_spec_routes_copy((char *)d->base + d->geo.routes_off,
				      d->routes_buf, d->geo.max_routes, i, r);
	}
}

void shmr_ctl_publish(struct shmr_ctl_domain *d, struct shmr_ctl_model *m)
{
	struct shmr_spec *spec;
	const size_t off = offsetof(struct shmr_spec, version);

	if (!d->base)
		return;
	if (!m->dirty) {
		/* A restart or redelivery that changed no spec. */
		shmr_ctl_figs_sync(d, m);
		return;
	}
	/* The model and our geometry are one configuration's (created
	 * with it, or adopted only when it matches): spec_buf and types_buf
	 * hold the model's routers and maps.  Otherwise a broken
	 * invariant. */
	if (m->nrouters > d->geo.max_routers ||
	    m->alloc.nslots > d->geo.max_endpoints ||
	    shmr_ctl_model_max_types(m) != d->geo.max_types ||
	    shmr_ctl_model_routes_room(m) != d->geo.max_routes) {
		shmr_ctl_log("%s:%d: model of %u routers, %u endpoints, %u "
			     "types, %u routes, domain of %u, %u, %u, %u",
			     __FILE__, __LINE__, m->nrouters, m->alloc.nslots,
			     shmr_ctl_model_max_types(m),
			     shmr_ctl_model_routes_room(m), d->geo.max_routers,
			     d->geo.max_endpoints, d->geo.max_types,
			     d->geo.max_routes);
		abort();
	}
	m->version++;
	shmr_ctl_model_spec_build(m, &(const struct shmr_ctl_spec_bufs){
					     .spec = d->spec_buf,
					     .active = d->active_buf,
					     .names = d->names_buf,
					     .types = d->types_buf,
					     .routes = d->routes_buf });
	spec = shmr_ctl_dom_spec(d);
	shmr_spec_write_begin(spec);
	sync_endpoints(d, m);
	shmr_ctl_figs_sync(d, m);
	shmr_spec_copy(spec, d->spec_buf, off, d->geo.max_routers);
	memcpy(shmr_ctl_dom_active(d), d->active_buf,
	       shmr_spec_active_used(d->spec_buf->nactive,
				     d->geo.max_endpoints));
	memcpy(shmr_ctl_dom_names(d), d->names_buf,
	       shmr_spec_names_used(d->spec_buf->nreg, d->geo.max_names));
	maps_publish(d, m);
	shmr_spec_write_end(spec);
	m->dirty = 0;
	/* A full lane means the dataplane has notices pending; it reads the
	 * newest spec when it takes any of them. */
	(void)shmr_ctl_lane_send(d, SHMR_CTL_SPEC, m->version);
}

/* Client slot @p s, with the first name it registered (or the slot's
 * own: "shmr:admin" for the control plane's admin endpoint). */
static void client_add(const struct shmr_ctl_model *m, uint32_t s,
		       struct shmr_ctl_counters *out)
{
	struct shmr_ctl_client *cl = &out->client[out->nclients++];

	cl->pid = (struct shmr_pid){ s, m->alloc.slots[s].gen };
	for (unsigned i = 0; i < m->nnames; i++) {
		if (m->names[i].pid.slot == s &&
		    m->names[i].pid.gen == cl->pid.gen) {
			memcpy(cl->name, m->names[i].name, SHMR_NAME_MAX);
			return;
		}
	}
	memcpy(cl->name, m->alloc.slots[s].name, SHMR_NAME_MAX);
	cl->name[SHMR_NAME_MAX - 1] = '\0';
}

void shmr_ctl_counters_read(const struct shmr_ctl_domain *d,
			    const struct shmr_ctl_model *m,
			    struct shmr_ctl_counters *out)
{
	const struct shmr_ctl_alloc *a = &m->alloc;

	/* Relaxed loads: statistics, each word written by one lcore; no
	 * other memory is read on their account.  Per-slot figures are
	 * since the slot's current owner got it (ctr_base). */
	memset(out, 0, sizeof(*out));
	out->nlcores = d->geo.nlcores < SHMR_MAX_LCORES ? d->geo.nlcores
							: SHMR_MAX_LCORES;
	out->inbox_slots = d->geo.nlcores * (d->geo.lane_size - 1);
	for (uint32_t l = 0; l < out->nlcores; l++) {
		struct shmr_lcore_stats *st = shmr_ctl_dom_stats(d, l);

#define SHMR_CTR(scope, name, kind, unit, help, value) \
	SHMR_CTR_READ_##scope(name, value)
#define SHMR_CTR_READ_ROUTER(name, value)
#define SHMR_CTR_READ_ROUTE(name, value)
#define SHMR_CTR_READ_ENDPOINT(name, value)
#define SHMR_CTR_READ_ARENA(name, value)
#define SHMR_CTR_READ_LCORE(name, field) \
	out->lcore[l].name =              \
		atomic_load_explicit(&st->field, memory_order_relaxed);
#include <shmr/counters.def>
#undef SHMR_CTR_READ_ROUTER
#undef SHMR_CTR_READ_ROUTE
#undef SHMR_CTR_READ_LCORE
#undef SHMR_CTR_READ_ENDPOINT
#undef SHMR_CTR_READ_ARENA
#undef SHMR_CTR
	}
	for (uint32_t s = 0; s < a->nslots && s < d->geo.max_endpoints; s++) {
		if (a->slots[s].state != SHMR_CTL_SLOT_USED)
			continue;
		const struct shmr_ctl_slot_base *b = &d->ctr_base[s];
		struct shmr_ctl_slot_base now;

		if (a->slots[s].kind == SHMR_EPK_CLIENT)
			client_add(m, s, out);

		slot_raw(d, s, &now);
		out->forwarded[s] = since(now.forwarded, b->forwarded);
		out->discarded[s] = since(now.discarded, b->discarded);
		out->failed[s] = since(now.failed, b->failed);
		out->delivered[s] = since(now.delivered, b->delivered);
		out->inbox_full[s] = since(now.inbox_full, b->inbox_full);
		out->bad_slots[s] = since(now.bad_slots, b->bad_slots);
		for (uint32_t l = 0; l < d->geo.nlcores; l++) {
			if (a->slots[s].kind != SHMR_EPK_ROUTER)
				shmr_lane_depths(shmr_ctl_dom_lane(d, s, l),
						 d->geo.lane_size,
						 &out->queued[s],
						 &out->in_hand[s]);
		}
		/* Written by the dataplane (ep_shared's second line) and by
		 * the slot's owner (its peer line: a hint, any peer can
		 * write it).  Relaxed: statistics, no partner. */
		out->quarantined[s] = atomic_load_explicit(
					      &shmr_ctl_dom_ep(d, s)->quarantined,
					      memory_order_relaxed) != 0;
		out->lane_full[s] =
			atomic_load_explicit(&shmr_ctl_dom_ep_peer(d, s)->lane_full,
					     memory_order_relaxed);
		if (a->slots[s].kind != SHMR_EPK_ROUTER) {
			uint64_t counts[SHMR_HIST_BUCKETS];

			shmr_hist_read(shmr_ctl_dom_hist(d, s), counts,
				       &out->sojourn[s]);
		}
	}
	out->narena = shmr_ctl_arena_counters_read(d, out->arena);
}
