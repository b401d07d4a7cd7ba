/*
 * Adoption of a running domain.
 *
 * The control plane may die at any instruction; nothing dies with it
 * (spawn.c), so when the next one starts with the same configuration the
 * domain is usually still there: the dataplane forwarding with its last
 * table, the workers serving, the clients sending.  The protocol:
 *
 *   1. Exclusion.  The caller holds <run_dir>/<domain>.lock (flock): no
 *      other control plane of this domain runs, so the predecessor is
 *      dead and its side of every lane is ours to repair.
 *   2. Probe.  The state file (state.c) names the dataplane by pid and
 *      start time.  Only a live process with both matching is adopted; a
 *      dead one means a new domain (what its lanes held is lost with its
 *      memory), and the workers it names that still run are stopped.
 *   3. Memory.  The dataplane keeps the domain's two memfds open (its
 *      --domain-fd and --lanes-fd); pidfd_getfd(2) gives us the same
 *      files (procs.c), and we open the first again read-only for peers.  The
 *      mapping must pass shmr_layout_check() (magic, layout version, ready
 *      word, size) and match the configuration: name, slot and lane
 *      sizes, lcores, poll mode.  Hugepage backing is whatever it was.
 *   4. Model.  Rebuilt from the domain, never from the state file alone:
 *      the endpoint table gives every slot's generation, kind and owner
 *      pid (a freed slot is reusable once the lcores have applied the
 *      current version); the spec gives the routers (which must be the
 *      configuration's, in order), their routes with inbox PIDs and
 *      states, routee lists, stopped flags and the registry.  Each route's
 *      spec (program, args, cpus) and restart counter come from the state
 *      file, else from the configuration; a route neither knows is kept
 *      but disabled, and said so.  A spec the predecessor was writing
 *      when it died (odd seqcount) is closed and republished.
 *   5. Processes.  The dataplane and each worker are held by a pidfd (not
 *      our children: their exit is seen, their status is not).  A worker
 *      is found by the state file's pid + start time, else by its
 *      environment (SHMR_SOCKET and SHMR_ENDPOINT of the route: a worker
 *      started just before the predecessor died, before it was written
 *      down), never by a bare pid.  Whether it had attached (CLAIMed its
 *      inbox: `running`, else `starting`) died with the predecessor's
 *      connections, and is read from the process: shmr_attach_env() maps
 *      the domain before its CLAIM, so a worker whose /proc/PID/maps
 *      holds no mapping of the domain's memfds has not attached (a
 *      program that never calls it stays `starting`, as before the
 *      restart).  Unreadable maps keep the old answer: attached.  A
 *      worker that is gone is handled as a
 *      death now: its lanes are repaired (the burst it held comes back,
 *      flagged), a pending operation completes, the route restarts into
 *      its slot with its queue intact.  A live worker with a pending
 *      disable, replace or remove is asked again to stop (or to drain).
 *   6. Clients.  A client endpoint whose owner (the table's pid, guarded
 *      by the start time in the state file) lives is kept, owned by that
 *      pid (model.h) and watched by its pidfd (server.c); ATTACH binds it
 *      to the new connection.  One whose owner is gone is freed.
 *
 * Nothing read from the domain or the file is trusted: every name, slot,
 * generation, state and count is checked, and anything inconsistent is
 * repaired (freed, disabled, restarted) and reported in one line, never
 * used blindly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <shmr/domain.h>
#include <shmr/proto.h>

#include "adopt.h"
#include "admin.h"
#include "control_internal.h"
#include "cpus.h"
#include "procs.h"

/* Is the process the state names (pid + start time) alive? */
static int named_alive(const struct shmr_ctl_state_proc *p)
{
	return p->pid > 0 && p->start != 0 &&
	       shmr_ctl_proc_start(p->pid) == p->start;
}

/* SIGKILL @p p if it is still the process named; 1 when it was. */
static int stop_named(const struct shmr_ctl_state_proc *p)
{
	int fd, hit = 0;

	if (p->pid <= 0 || p->start == 0)
		return 0;
	fd = shmr_ctl_pidfd_open(p->pid);
	if (fd < 0)
		return 0;
	if (shmr_ctl_proc_start(p->pid) == p->start) {
		hit = shmr_ctl_proc_signal_group(fd, p->pid, SIGKILL) == 0;
		/* Bounded: a SIGKILLed process goes at once. */
		for (int i = 0; hit && i < 100 && !shmr_ctl_pidfd_exited(fd);
		     i++)
			usleep(10000);
	}
	close(fd);
	return hit;
}

static unsigned stop_workers(const struct shmr_ctl_state *st)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->nroutes; i++)
		n += (unsigned)stop_named(&st->routes[i].worker);
	return n;
}

int shmr_ctl_adopt_probe(struct shmr_ctl_adopt *a,
			 const struct shmr_ctl_state_file *f)
{
	struct shmr_ctl_state *st = &a->st;
	char why[160];
	/* Every route the configuration's routers may hold. */
	int rc = shmr_ctl_state_read(f, st,
				     a->cfg->nrouters *
					     shmr_config_routes(a->cfg),
				     why, sizeof(why));
	unsigned n;

	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		shmr_ctl_warn("state file %s: %s: ignored; starting a new "
			      "domain", f->path,
			      rc == -EINVAL ? why : strerror(-rc));
		return 0;
	}
	if (strcmp(st->domain, a->cfg->domain) != 0) {
		shmr_ctl_warn("state file %s is of domain %s, not %s: ignored; "
			      "starting a new domain", f->path, st->domain,
			      a->cfg->domain);
		return 0;
	}
	if (named_alive(&st->dataplane))
		return 1;
	n = stop_workers(st);
	shmr_ctl_warn("domain %s: the previous dataplane (process %d) is "
		      "gone: starting a new domain (what its lanes held is "
		      "lost); %u worker(s) of it stopped",
		      a->cfg->domain, (int)st->dataplane.pid, n);
	return 0;
}

void shmr_ctl_adopt_abandon(struct shmr_ctl_adopt *a)
{
	unsigned n = stop_workers(&a->st);
	int dp = stop_named(&a->st.dataplane);

	shmr_ctl_warn("domain %s: the running domain is stopped (%s, %u "
		      "worker(s)); starting a new one",
		      a->cfg->domain, dp ? "its dataplane" : "no dataplane",
		      n);
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

/* Descriptor @p num of the dataplane (@p pidfd), or -1 after saying why. */
static int take_fd(const struct shmr_ctl_state *st, int pidfd, int num,
		   char *why, size_t cap)
{
	int fd = num < 0 ? -EBADF
			 : shmr_ctl_pidfd_getfd(pidfd, st->dataplane.pid, num);

	if (fd < 0)
		snprintf(why, cap, "cannot take descriptor %d of dataplane "
			 "%d: %s", num, (int)st->dataplane.pid, strerror(-fd));
	return fd;
}

static int map_memory(struct shmr_ctl_adopt *a, char *why, size_t cap)
{
	const struct shmr_config *cfg = a->cfg;
	const struct shmr_ctl_state *st = &a->st;
	struct shmr_geometry g;
	struct shmr_domain_hdr plan;
	const struct shmr_domain_hdr *h;
	int64_t size;
	struct stat sb, lb;
	int pidfd, fd, lfd = -1, rc;
	void *base;

	shmr_config_geometry(cfg, &g);
	size = shmr_layout_plan_arena(&g, &cfg->arena, &plan);
	if (size < 0)
		abort(); /* the configuration was validated */
	pidfd = shmr_ctl_pidfd_open(st->dataplane.pid);
	if (pidfd < 0) {
		snprintf(why, cap, "dataplane %d: %s", (int)st->dataplane.pid,
			 strerror(-pidfd));
		return -1;
	}
	fd = take_fd(st, pidfd, st->dp_fd, why, cap);
	if (fd >= 0)
		lfd = take_fd(st, pidfd, st->dp_lanes_fd, why, cap);
	close(pidfd);
	if (fd < 0 || lfd < 0)
		goto fail;
	if (fstat(fd, &sb) < 0 || fstat(lfd, &lb) < 0) {
		snprintf(why, cap, "descriptors %d, %d of dataplane %d: %s",
			 st->dp_fd, st->dp_lanes_fd, (int)st->dataplane.pid,
			 strerror(errno));
		goto fail;
	}
	if ((uint64_t)sb.st_size != plan.peer_off ||
	    (uint64_t)lb.st_size != (uint64_t)size - plan.peer_off) {
		snprintf(why, cap, "the domain is %lld + %lld bytes, the "
			 "configuration's geometry makes %lld + %lld",
			 (long long)sb.st_size, (long long)lb.st_size,
			 (long long)plan.peer_off,
			 (long long)((uint64_t)size - plan.peer_off));
		rc = SHMR_CTL_ADOPT_MISMATCH;
		goto out;
	}
	rc = shmr_domain_map(fd, lfd, plan.peer_off, (uint64_t)size, 1, &base);
	if (rc < 0) {
		snprintf(why, cap, "mmap: %s", strerror(-rc));
		goto fail;
	}
	h = base;
	rc = shmr_layout_check(base, (size_t)size);
	if (rc == 0 && (strncmp(h->name, cfg->domain, SHMR_NAME_MAX) != 0 ||
			h->slot_size != plan.slot_size ||
			h->lane_size != plan.lane_size ||
			h->nlcores != plan.nlcores ||
			h->max_names != plan.max_names ||
			h->names_off != plan.names_off ||
			h->max_types != plan.max_types ||
			h->max_routers != plan.max_routers ||
			h->types_off != plan.types_off ||
			h->max_routes != plan.max_routes ||
			h->routes_off != plan.routes_off ||
			h->active_off != plan.active_off ||
			h->poll_mode != plan.poll_mode ||
			h->lanes_off != plan.lanes_off ||
			h->arena_nclasses != plan.arena_nclasses ||
			memcmp(h->arena, plan.arena, sizeof(plan.arena)) != 0))
		rc = -EINVAL;
	if (rc < 0) {
		snprintf(why, cap, "descriptor %d of dataplane %d is not this "
			 "domain as configured (%s)", st->dp_fd,
			 (int)st->dataplane.pid,
			 rc == -EINVAL ? "name or geometry"
				       : shmr_strerror(rc));
		shmr_domain_unmap(base, (uint64_t)size);
		rc = rc == -EINVAL ? SHMR_CTL_ADOPT_MISMATCH : -1;
		goto out;
	}
	a->d->memfd = fd;
	a->d->lanes_fd = lfd;
	a->d->base = base;
	/* Our copy of the geometry: the configuration's plan, which the
	 * header was just checked against. */
	a->d->geo = plan;
	memcpy(a->d->geo.name, h->name, SHMR_NAME_MAX);
	/* Not in the plan: the TSC's rate, measured when the domain was
	 * created, which every process attached since stamps by.  Kept when
	 * it is a rate a TSC can have (a peer may have written the word),
	 * else measured again; the header's own word is then healed to it
	 * (shmr_ctl_domain_heal()).  Left 0, it stopped every sojourn
	 * figure of what attached after the adoption, and the heal called
	 * the word overwritten. */
	a->d->geo.tsc_hz = 0;
	if (cfg->sojourn) {
		uint64_t hz = h->tsc_hz;

		if (hz < SHMR_TSC_HZ_MIN || hz > SHMR_TSC_HZ_MAX)
			hz = shmr_tsc_calibrate(20);
		a->d->geo.tsc_hz = hz;
	}
	a->d->size = (uint64_t)size;
	/* A hugetlb memfd reports the huge page as its block size. */
	a->d->hugepages = sb.st_blksize > 4096;
	rc = shmr_ctl_domain_open_ro(a->d);
	if (rc == 0)
		rc = shmr_ctl_domain_bufs(a->d);
	if (rc < 0) {
		snprintf(why, cap, "cannot open the domain read-only for "
			 "peers: %s", strerror(-rc));
		shmr_ctl_domain_close(a->d);
		return -1;
	}
	return 0;
fail:
	rc = -1;
out:
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return rc;
}

/* The predecessor's half-done writes: a spec it was writing (odd seq),
 * an enqueue on the control lane. */
static void repair_writer(struct shmr_ctl_adopt *a)
{
	struct shmr_spec *spec = shmr_ctl_dom_spec(a->d);
	uint64_t seq = atomic_load_explicit(&spec->seq, memory_order_relaxed);

	if (seq & 1) {
		shmr_ctl_warn("the previous control plane died writing spec "
			      "version %" PRIu64 ": republished",
			      spec->version);
		/* Even again; the contents are rewritten by the next
		 * publication (the model is dirty).  Release: pairs with the
		 * readers' acquire [S3], as S2. */
		atomic_store_explicit(&spec->seq, seq + 1,
				      memory_order_release);
	}
	(void)shmr_lane_repair_producer(shmr_ctl_dom_ctl_lane(a->d),
					a->d->geo.lane_size);
	/* Relaxed: an informational word for tools. */
	atomic_store_explicit(&shmr_hdr(a->d->base)->control_pid, getpid(),
			      memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* Model                                                               */
/* ------------------------------------------------------------------ */

static int name_ok(const char *s)
{
	size_t n = strnlen(s, SHMR_NAME_MAX);

	return n > 0 && n < SHMR_NAME_MAX;
}

/* The allocator from the endpoint table. */
static void model_slots(struct shmr_ctl_model *m, void *base,
			uint64_t version)
{
	struct shmr_ctl_alloc *al = &m->alloc;

	/* The header's, which shmr_layout_check() bounded. */
	shmr_ctl_alloc_init(al, shmr_hdr(base)->max_endpoints);
	for (uint32_t i = 0; i < al->nslots; i++) {
		const struct shmr_ep_shared *ep = shmr_ep_at(base, i);
		struct shmr_ctl_slot *s = &al->slots[i];
		/* Relaxed: the writer is dead; nothing else writes it. */
		uint32_t state = atomic_load_explicit(
			(_Atomic(uint32_t) *)&ep->state, memory_order_relaxed);
		int used = state == SHMR_EP_ACTIVE ||
			   state == SHMR_EP_QUARANTINED;

		s->gen = ep->gen;
		if (used && (ep->gen == 0 || ep->kind < SHMR_EPK_CLIENT ||
			     ep->kind > SHMR_EPK_ROUTER)) {
			shmr_ctl_warn("endpoint slot %u: bad generation or "
				      "kind in the domain: freed", i);
			used = 0;
		}
		if (used) {
			s->state = SHMR_CTL_SLOT_USED;
			s->kind = ep->kind;
			s->os_pid = ep->os_pid;
			memcpy(s->name, ep->name, SHMR_NAME_MAX);
			s->name[SHMR_NAME_MAX - 1] = '\0';
			al->nused++;
		} else if (s->gen != 0) {
			/* Reusable once every lcore has applied the version
			 * that is current now. */
			s->state = SHMR_CTL_SLOT_DEFERRED;
			s->freed_version = version;
		}
	}
}

static int slot_is(struct shmr_ctl_model *m, struct shmr_pid pid,
		   uint32_t kind)
{
	struct shmr_ctl_slot *s = shmr_ctl_alloc_lookup(&m->alloc, pid);

	return s && s->kind == kind;
}

static const struct shmr_conf_route *
conf_route(const struct shmr_conf_router *cr, const char *name)
{
	for (unsigned k = 0; k < cr->nroutes; k++)
		if (strcmp(cr->routes[k].name, name) == 0)
			return &cr->routes[k];
	return NULL;
}

/* Router @p i's routes from spec router @p sr. */
static void model_routes(struct shmr_ctl_adopt *a, unsigned i,
			 const struct shmr_spec_router *sr)
{
	struct shmr_ctl_model *m = a->m;
	struct shmr_ctl_router *r = &m->routers[i];
	const struct shmr_spec_route *routes = shmr_ctl_dom_routes(a->d, i);
	/* Held below our geometry's max_routes (the region's stride, at
	 * most SHMR_MAX_ROUTES, the room of r->routes). */
	unsigned n = shmr_spec_nroutes(sr, a->d->geo.max_routes);

	r->nroutes = 0;
	memset(r->routes, 0, sizeof(r->routes));
	for (unsigned k = 0; k < n; k++) {
		const struct shmr_spec_route *sq = &routes[k];
		struct shmr_ctl_route *q = &r->routes[r->nroutes];
		const struct shmr_ctl_state_route *qs;
		const struct shmr_conf_route *cq;

		if (!name_ok(sq->name) ||
		    !slot_is(m, sq->pid, SHMR_EPK_ROUTE) ||
		    sq->state > SHMR_ROUTE_REPLACE_WAIT) {
			shmr_ctl_warn("router %s: route %u of the domain is "
				      "not sound: dropped", r->conf->name, k);
			if (shmr_ctl_alloc_lookup(&m->alloc, sq->pid))
				shmr_ctl_alloc_put(&m->alloc, sq->pid,
						   m->version + 1);
			continue;
		}
		memset(q, 0, sizeof(*q));
		q->pid = sq->pid;
		q->state = sq->state;
		qs = shmr_ctl_state_route(&a->st, r->conf->name, sq->name);
		cq = conf_route(r->conf, sq->name);
		if (qs) {
			q->spec = qs->spec;
			q->restarts = qs->restarts;
		} else if (cq) {
			q->spec = *cq;
		} else {
			shmr_ctl_warn("route %s/%s: in the domain, but neither "
				      "in the state file nor in the "
				      "configuration: disabled (REPLACE gives "
				      "it a program)",
				      r->conf->name, sq->name);
			q->state = SHMR_ROUTE_DISABLED;
		}
		memcpy(q->spec.name, sq->name, SHMR_NAME_MAX);
		q->spec.name[SHMR_NAME_MAX - 1] = '\0';
		q->conf = &q->spec;
		/* The worker is adopted (or found dead) later. */
		m->alloc.slots[q->pid.slot].os_pid = 0;
		r->nroutes++;
	}
	for (unsigned k = 0; k < r->conf->nroutes; k++)
		if (shmr_ctl_model_route_index(r, r->conf->routes[k].name) < 0)
			shmr_ctl_log("route %s/%s: in the configuration, not "
				     "in the running domain (removed at run "
				     "time): not added",
				     r->conf->name, r->conf->routes[k].name);
}

static int model_routers(struct shmr_ctl_adopt *a, const struct shmr_spec *sp,
			 char *why, size_t cap)
{
	struct shmr_ctl_model *m = a->m;

	/* The count and the names matched (routers_match()). */
	for (unsigned i = 0; i < m->nrouters; i++) {
		const struct shmr_spec_router *sr = &sp->routers[i];
		struct shmr_ctl_router *r = &m->routers[i];

		if (!slot_is(m, sr->pid, SHMR_EPK_ROUTER)) {
			snprintf(why, cap, "router %s's endpoint %u.%u in the "
				 "domain is not a router's", r->conf->name,
				 sr->pid.slot, sr->pid.gen);
			return -1;
		}
		r->pid = sr->pid;
		r->stopped = (sr->flags & SHMR_RF_STOPPED) != 0;
		if (shmr_ctl_is_logic(r->conf->behaviour)) {
			char (*hash)[SHMR_NAME_MAX] = shmr_ctl_dom_hash(a->d, i);
			unsigned nh = shmr_spec_nhash(sr, a->d->geo.max_routes);

			r->listed = nh > 0;
			r->nroutees = 0;
			for (unsigned k = 0; k < nh; k++)
				if (name_ok(hash[k]))
					memcpy(r->routees[r->nroutees++],
					       hash[k], SHMR_NAME_MAX);
		}
		model_routes(a, i, sr);
	}
	return 0;
}

/* Registry entry @p g, owned by process @p pid. */
static void add_name(struct shmr_ctl_model *m, const struct shmr_spec_reg *g,
		     int32_t pid)
{
	struct shmr_ctl_name *n = &m->names[m->nnames++];

	memcpy(n->name, g->name, SHMR_NAME_MAX);
	n->name[SHMR_NAME_MAX - 1] = '\0';
	n->pid = g->pid;
	n->owner = shmr_ctl_owner_of_pid(pid);
}

/* Registered names and client endpoints: owned by their process's pid. */
static void model_owners(struct shmr_ctl_model *m,
			 const struct shmr_ctl_domain *d,
			 const struct shmr_spec *sp, uint32_t admin_slot)
{
	unsigned nreg = sp->nreg > d->geo.max_names ? d->geo.max_names
						    : sp->nreg;

	m->nnames = 0;
	for (unsigned i = m->nrouters; i < nreg; i++) {
		const struct shmr_spec_reg *g = &shmr_ctl_dom_names(d)[i];
		struct shmr_ctl_slot *s =
			shmr_ctl_alloc_lookup(&m->alloc, g->pid);
		int32_t pid;

		if (!name_ok(g->name) || !s ||
		    (s->kind != SHMR_EPK_CLIENT && s->kind != SHMR_EPK_ROUTE))
			continue;
		pid = s->os_pid;
		/* A route inbox's names come with its worker (route_names). */
		if (s->kind == SHMR_EPK_ROUTE || pid <= 0 ||
		    m->nrouters + m->nnames >= shmr_ctl_model_max_names(m))
			continue;
		add_name(m, g, pid);
	}
	for (uint32_t i = 0; i < m->alloc.nslots; i++) {
		struct shmr_ctl_slot *s = &m->alloc.slots[i];

		if (s->state != SHMR_CTL_SLOT_USED ||
		    s->kind != SHMR_EPK_CLIENT || i == admin_slot)
			continue;
		if (s->os_pid <= 0) {
			/* Closed, still draining when our predecessor died:
			 * it drains on (drain.c). */
			shmr_ctl_model_retire(m,
					      (struct shmr_pid){ i, s->gen });
			continue;
		}
		s->owner = shmr_ctl_owner_of_pid(s->os_pid);
	}
}

/* A route inbox's names, owned by its worker @p pid (once adopted). */
static void route_names(struct shmr_ctl_model *m,
			const struct shmr_ctl_domain *d, struct shmr_pid inbox,
			int32_t pid)
{
	const struct shmr_spec *sp = shmr_ctl_dom_spec(d);
	unsigned nreg = sp->nreg > d->geo.max_names ? d->geo.max_names
						    : sp->nreg;

	for (unsigned i = m->nrouters; i < nreg; i++) {
		const struct shmr_spec_reg *g = &shmr_ctl_dom_names(d)[i];

		if (g->pid.slot != inbox.slot || g->pid.gen != inbox.gen ||
		    !name_ok(g->name) ||
		    m->nrouters + m->nnames >= shmr_ctl_model_max_names(m))
			continue;
		add_name(m, g, pid);
	}
}

/* Is the running domain's router list the configuration's?  Only reads
 * the spec: nothing is written before the domain is known to be ours. */
static int routers_match(const struct shmr_ctl_adopt *a,
			 const struct shmr_spec *sp, char *why, size_t cap)
{
	const struct shmr_config *cfg = a->cfg;

	if (sp->nrouters != cfg->nrouters) {
		snprintf(why, cap, "the domain has %u router(s), the "
			 "configuration %u", sp->nrouters, cfg->nrouters);
		return SHMR_CTL_ADOPT_MISMATCH;
	}
	for (unsigned i = 0; i < cfg->nrouters; i++)
		if (strncmp(sp->routers[i].name, cfg->routers[i].name,
			    SHMR_NAME_MAX) != 0) {
			snprintf(why, cap, "router %u of the domain is not "
				 "the configuration's %s", i,
				 cfg->routers[i].name);
			return SHMR_CTL_ADOPT_MISMATCH;
		}
	return 0;
}

int shmr_ctl_adopt_domain(struct shmr_ctl_adopt *a,
			  struct shmr_ctl_admin *admin)
{
	struct shmr_ctl_model *m = a->m;
	const struct shmr_spec *sp;
	char why[200];
	uint64_t v;
	int rc;

	rc = map_memory(a, why, sizeof(why));
	if (rc == 0) {
		/* Read only, until the routers are known to be ours. */
		sp = shmr_spec_of(a->d->base);
		rc = routers_match(a, sp, why, sizeof(why));
	}
	if (rc < 0) {
		shmr_ctl_err("domain %s: cannot adopt: %s", a->cfg->domain,
			      why);
		return rc;
	}
	repair_writer(a);
	sp = shmr_ctl_dom_spec(a->d);
	m->version = sp->version;
	model_slots(m, a->d->base, sp->version);
	if (model_routers(a, sp, why, sizeof(why)) < 0) {
		shmr_ctl_err("domain %s: cannot adopt: %s", a->cfg->domain,
			      why);
		return -1;
	}
	/* Acquire: pairs with the release store in shmr_ctl_admin_open(). */
	v = atomic_load_explicit(&shmr_hdr(a->d->base)->admin_pid,
				 memory_order_acquire);
	model_owners(m, a->d, sp, (uint32_t)v);
	if (shmr_ctl_admin_adopt(admin) < 0) {
		shmr_ctl_err("domain %s: cannot adopt: no admin endpoint in "
			      "the domain", a->cfg->domain);
		return -1;
	}
	m->dirty = 1;
	return 0;
}

void shmr_ctl_adopt_pins(struct shmr_ctl_adopt *a)
{
	struct shmr_ctl_model *m = a->m;

	for (unsigned i = 0; i < m->nrouters; i++)
		for (unsigned k = 0; k < m->routers[i].nroutes; k++) {
			struct shmr_ctl_route *q = &m->routers[i].routes[k];
			hwloc_bitmap_t *set = &a->pin->cpus[i][k];

			if (!*set)
				*set = hwloc_bitmap_alloc();
			if (!*set)
				abort();
			if (shmr_ctl_cpus_parse(q->conf->cpus, *set) < 0) {
				shmr_ctl_warn("route %s: cpus %s: not a cpu "
					      "list: unpinned",
					      q->conf->name, q->conf->cpus);
				q->spec.cpus[0] = '\0';
				hwloc_bitmap_zero(*set);
			}
		}
}

/* ------------------------------------------------------------------ */
/* Processes                                                           */
/* ------------------------------------------------------------------ */

/*
 * Workers by their environment: for each route inbox slot, the process
 * whose SHMR_SOCKET is our socket and whose SHMR_ENDPOINT is that slot's
 * PID (a worker started just before the predecessor died, before it was
 * written down).  found[slot] = {pid, start}, gen in gens[slot].
 */
static void scan_workers(const char *sock_path,
			 struct shmr_ctl_state_proc found[SHMR_MAX_ENDPOINTS],
			 uint32_t gens[SHMR_MAX_ENDPOINTS])
{
	static char env[65536];
	char want[160];
	DIR *dir = opendir("/proc");
	struct dirent *e;

	if (!dir)
		return;
	snprintf(want, sizeof(want), "%s=%s", SHMR_ENV_SOCKET, sock_path);
	while ((e = readdir(dir))) {
		long pid = strtol(e->d_name, NULL, 10);
		char path[64];
		unsigned slot, gen;
		int fd, have_sock = 0, have_ep = 0;
		ssize_t n;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, env, sizeof(env) - 1);
		close(fd);
		if (n <= 0)
			continue;
		env[n] = '\0';
		for (char *p = env; p < env + n; p += strlen(p) + 1) {
			if (strcmp(p, want) == 0)
				have_sock = 1;
			else if (sscanf(p, SHMR_ENV_ENDPOINT "=%u:%u", &slot,
					&gen) == 2 &&
				 slot < SHMR_MAX_ENDPOINTS)
				have_ep = 1;
		}
		if (have_sock && have_ep) {
			found[slot] = (struct shmr_ctl_state_proc){
				(int32_t)pid, shmr_ctl_proc_start((pid_t)pid)
			};
			gens[slot] = gen;
		}
	}
	closedir(dir);
}

/* Does process @p pid map one of the domain's memfds (@p d)?  1 yes, 0
 * no, -1 when its maps cannot be read.  By device and inode, what
 * /proc/PID/maps names each mapping's file by: never by its name. */
static int maps_domain(const struct shmr_ctl_domain *d, int32_t pid)
{
	int fds[] = { d->memfd, d->lanes_fd };
	struct stat st[2];
	unsigned nst = 0, major, minor;
	unsigned long long ino;
	char path[64], line[512];
	int hit = 0;
	FILE *f;

	for (unsigned i = 0; i < 2; i++)
		if (fds[i] >= 0 && fstat(fds[i], &st[nst]) == 0)
			nst++;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = nst ? fopen(path, "re") : NULL;
	if (!f)
		return -1;
	while (!hit && fgets(line, sizeof(line), f)) {
		/* Lines longer than the buffer go on in the next read;
		 * their tail does not parse. */
		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &major, &minor,
			   &ino) != 3 || ino == 0)
			continue;
		for (unsigned i = 0; i < nst; i++)
			if (st[i].st_ino == (ino_t)ino &&
			    major(st[i].st_dev) == major &&
			    minor(st[i].st_dev) == minor)
				hit = 1;
	}
	fclose(f);
	return hit;
}

/* Route @p k of router @p r: adopt its worker, or handle its death. */
static void adopt_route(struct shmr_ctl_adopt *a, unsigned r, unsigned k,
			const struct shmr_ctl_state_proc *found,
			const uint32_t *gens)
{
	struct shmr_ctl_model *m = a->m;
	struct shmr_ctl_route *q = &m->routers[r].routes[k];
	const struct shmr_ctl_state_route *qs =
		shmr_ctl_state_route(&a->st, m->routers[r].conf->name,
				     q->conf->name);
	struct shmr_ctl_state_proc w = { 0, 0 };
	uint32_t state = q->state;

	if (qs && qs->worker.pid > 0)
		w = qs->worker;
	else if (found[q->pid.slot].pid > 0 && gens[q->pid.slot] == q->pid.gen)
		w = found[q->pid.slot];
	if (w.pid > 0 &&
	    shmr_ctl_spawn_adopt_worker(a->sp, r, k, w.pid, w.start) == 0) {
		a->workers++;
		/* Its claim, held by its pid until it attaches again (or
		 * none: `starting` until its first CLAIM). */
		q->claimed_by = maps_domain(a->d, w.pid) == 0
					? 0
					: shmr_ctl_owner_of_pid(w.pid);
		route_names(m, a->d, q->pid, w.pid);
		/* A pending operation: ask again (the SIGTERM may have been
		 * sent, its grace timer was the predecessor's). */
		if (state == SHMR_ROUTE_PENDING_DISABLE ||
		    state == SHMR_ROUTE_PENDING_REPLACE ||
		    state == SHMR_ROUTE_PENDING_REMOVE) {
			shmr_ctl_log("route %s: resuming its %s",
				     q->conf->name,
				     shmr_ctl_route_state_name(state));
			if (qs && qs->drain)
				shmr_ctl_life_daemon_ops.drain(a->sp, r, k);
			else
				shmr_ctl_life_daemon_ops.stop(a->sp, r, k);
		}
		return;
	}
	if (w.pid > 0 || state == SHMR_ROUTE_RUNNING ||
	    state == SHMR_ROUTE_PENDING_DISABLE ||
	    state == SHMR_ROUTE_PENDING_REPLACE ||
	    state == SHMR_ROUTE_PENDING_REMOVE) {
		/* It died while no control plane ran. */
		shmr_ctl_spawn_worker_lost(a->sp, r, k, w.pid);
		return;
	}
	if (state == SHMR_ROUTE_DEAD || state == SHMR_ROUTE_REPLACE_WAIT)
		shmr_ctl_spawn_restart(a->sp, r, k);
}

/* Client endpoints: kept for live owners (watched), freed otherwise. */
static void adopt_clients(struct shmr_ctl_adopt *a, uint32_t admin_slot)
{
	struct shmr_ctl_model *m = a->m;

	for (uint32_t i = 0; i < m->alloc.nslots; i++) {
		struct shmr_ctl_slot *s = &m->alloc.slots[i];
		const struct shmr_ctl_state_client *sc;
		uint64_t start;
		int32_t pid = s->os_pid;
		int fd, watched = 0, freed;

		if (s->state != SHMR_CTL_SLOT_USED ||
		    s->kind != SHMR_EPK_CLIENT || i == admin_slot ||
		    s->owner != shmr_ctl_owner_of_pid(pid))
			continue;
		for (unsigned j = 0; j < SHMR_CTL_MAX_OWNERS; j++)
			if (a->srv->owners[j].pidfd >= 0 &&
			    a->srv->owners[j].pid == pid)
				watched = 1;
		if (watched)
			continue;
		sc = shmr_ctl_state_client(&a->st, i, s->gen);
		start = sc && sc->owner.pid == pid ? sc->owner.start : 0;
		fd = shmr_ctl_pidfd_open(pid);
		if (fd >= 0 && start == 0) {
			/* Opened just before the predecessor died: the pid
			 * alone, said so. */
			start = shmr_ctl_proc_start(pid);
			shmr_ctl_log("endpoint %u: owner %d not in the state "
				     "file: kept by its pid", i, (int)pid);
		}
		if (fd >= 0 && start != 0 &&
		    shmr_ctl_proc_start(pid) == start &&
		    shmr_ctl_server_watch(a->srv, pid, fd) == 0)
			continue;
		if (fd >= 0)
			close(fd);
		freed = shmr_ctl_model_drop_owner(m,
						  shmr_ctl_owner_of_pid(pid));
		shmr_ctl_log("process %d gone: %d endpoint(s) freed", (int)pid,
			     freed);
	}
}

void shmr_ctl_adopt_processes(struct shmr_ctl_adopt *a)
{
	static struct shmr_ctl_state_proc found[SHMR_MAX_ENDPOINTS];
	static uint32_t gens[SHMR_MAX_ENDPOINTS];
	struct shmr_ctl_model *m = a->m;
	uint64_t v = atomic_load_explicit(
		&shmr_hdr(a->d->base)->admin_pid, memory_order_acquire);
	int rc;

	rc = shmr_ctl_spawn_adopt_dataplane(a->sp, a->st.dataplane.pid,
					    a->st.dataplane.start);
	if (rc == 0) {
		a->sp->dp_fd = a->st.dp_fd;
		a->sp->dp_lanes_fd = a->st.dp_lanes_fd;
	} else {
		shmr_ctl_err("dataplane %d gone during the adoption",
			      (int)a->st.dataplane.pid);
		shmr_ctl_spawn_dataplane_lost(a->sp, a->st.dataplane.pid);
	}
	memset(found, 0, sizeof(found));
	scan_workers(a->sock_path, found, gens);
	/* Backwards: a completed remove moves the routes after it. */
	for (unsigned i = 0; i < m->nrouters; i++)
		for (unsigned k = m->routers[i].nroutes; k-- > 0;)
			adopt_route(a, i, k, found, gens);
	adopt_clients(a, (uint32_t)v);
	m->dirty = 1;
}
