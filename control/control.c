/*
 * shmr-control: the authority of a shmrouter domain.
 *
 *   shmr-control [-c FILE] [--run-dir DIR] [--ready-fd N] [--dataplane PATH]
 *                [--check] [--quiet]
 *
 * Exit statuses:
 *   0  clean stop (SIGINT, SIGTERM or a STOP request), or --check passed;
 *   1  runtime failure: the run dir, domain or socket could not be made,
 *      another control plane is live on the socket, or a worker or the
 *      dataplane failed to start at init (the dataplane also fails if it
 *      exits, or takes no routing table within 30 s) (whatever was started is stopped
 *      first: nothing is left running);
 *   2  bad configuration or bad arguments: one line on stderr,
 *      "shmr-control: FILE:LINE: field: message" or a usage line.
 *
 * Start-up, in order: parse and check the configuration; resolve the run
 * dir (--run-dir, else the configuration's run_dir when it is not the
 * built-in default, else $SHMR_RUN_DIR, else /run/shmr); bind the socket
 * (refusing when a live control answers on it); create the domain (memfd,
 * hugetlb when there are free hugepages); publish spec version 1; start the
 * dataplane and wait (at most 30 s) until every routing lcore reports that
 * version; start every route's worker, each pinned (a route with cpus ""
 * to a PU of its own, see plan_cpus()).  Initialisation is atomic: if any
 * start fails, everything started is stopped and the exit status is 1.
 * Only then is "R" written to --ready-fd.
 *
 * Then the control plane sleeps in epoll_wait: a signalfd (SIGINT, SIGTERM,
 * SIGCHLD), the listening socket and its connections, one pidfd per child,
 * and a timerfd armed only while a restart is backing off.  An idle
 * appliance wakes it for nothing.
 *
 * Route lifecycle: ADD, REMOVE, DISABLE, ENABLE, REPLACE and RESPAWN on the
 * socket run lifecycle.c's state machine, with spawn.c's process
 * operations: a worker asked to stop gets SIGTERM, SIGKILL after
 * stop_grace_ms (on the timerfd), and the pending operation completes when
 * its pidfd reports the exit.
 *
 * Publication: every change of the model (a worker up or down, a client
 * endpoint opened or freed, a name registered or dropped, a route's
 * lifecycle) is published as
 * one new spec version: the endpoint table and the spec are written inside
 * the spec seqcount, then a SHMR_CTL_SPEC slot (key = version) goes on the
 * control lane and its bell rings.  The dataplane's update thread rebuilds
 * its table from the spec and each lcore reports the version it applied,
 * which is what lets a freed slot be reused (see alloc.c).
 *
 * Known limitation: children are started with PR_SET_PDEATHSIG(SIGKILL),
 * so a control plane killed with SIGKILL takes its dataplane and workers
 * with it rather than leaving them orphaned forever.  The architecture
 * wants the dataplane to keep forwarding while the control plane is down
 * and a new control plane to adopt the domain; that adoption is future
 * work, and until it exists orphans could never be managed again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/proto.h>

#include "control_internal.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define DATAPLANE_START_MS 30000u /* to take its first routing table */

static struct shmr_ctl ctl; /* large: keep it off the stack */

static const char usage_line[] =
	"usage: shmr-control [-c FILE] [--run-dir DIR] [--ready-fd N] "
	"[--dataplane PATH] [--check] [--quiet]\n";

static void usage_full(void)
{
	printf("%s", usage_line);
	printf("\n"
	       "Create a shmrouter domain, start its dataplane and route "
	       "workers, and serve\n"
	       "its control socket <run_dir>/<domain>.sock until SIGINT, "
	       "SIGTERM or STOP.\n"
	       "\n"
	       "  -c, --config FILE   configuration (default: the embedded "
	       "default)\n"
	       "  --run-dir DIR       socket directory (default: run_dir of "
	       "the configuration,\n"
	       "                      else $SHMR_RUN_DIR, else "
	       SHMR_RUN_DIR_DEFAULT ")\n"
	       "  --ready-fd N        write \"R\" to fd N and close it once "
	       "everything is up\n"
	       "  --dataplane PATH    the shmr-dataplane binary (default: next "
	       "to this one,\n"
	       "                      then ../dataplane/, then PATH)\n"
	       "  --check             parse the configuration, print \"FILE: "
	       "ok\", exit\n"
	       "  --quiet             log errors only\n"
	       "  -h, --help          this text\n"
	       "\n"
	       "Exit status: 0 clean stop; 1 runtime failure (e.g. a worker "
	       "could not start:\n"
	       "nothing is left running); 2 bad configuration or bad "
	       "arguments.\n");
}

static void usage_error(const char *why)
{
	if (why)
		fprintf(stderr, "shmr-control: %s\n", why);
	fputs(usage_line, stderr);
	exit(EXIT_USAGE);
}

void shmr_ctl_log(const struct shmr_ctl *c, const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	if (c->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "shmr-control: %s\n", line);
}

void shmr_ctl_warn(const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "shmr-control: %s\n", line);
}

uint64_t shmr_ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------------ */
/* Domain                                                              */
/* ------------------------------------------------------------------ */

static int map_domain(struct shmr_ctl *c, unsigned flags)
{
	int fd = memfd_create(c->cfg.domain, flags);
	void *p;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)c->size) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	p = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;
		close(fd);
		return -err;
	}
	/* Peers map it too: nobody may shrink it under them (SIGBUS). */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	c->memfd = fd;
	c->base = p;
	return 0;
}

static int create_domain(struct shmr_ctl *c)
{
	struct shmr_geometry g = { c->cfg.slot_size, c->cfg.lane_size,
				   c->cfg.lcores, c->cfg.poll_mode, 0 };
	struct shmr_domain_hdr plan;
	int64_t size = shmr_layout_plan(&g, &plan);
	int rc;

	if (size < 0)
		return (int)size;
	c->size = (uint64_t)size;
	/* hugetlb first: the mapping fails (ENOMEM) when there are not
	 * enough free hugepages to reserve, not the memfd. */
	rc = map_domain(c, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (rc == 0) {
		c->hugepages = 1;
	} else {
		shmr_ctl_log(c, "no free hugepages; domain uses 4 KiB pages");
		rc = map_domain(c, MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (rc < 0)
			return rc;
	}
	rc = shmr_layout_init(c->base, &g, c->cfg.domain);
	if (rc < 0)
		return rc;
	/* Relaxed: an informational word for tools; the ready word [R0]
	 * already published the domain. */
	atomic_store_explicit(&shmr_hdr(c->base)->control_pid, getpid(),
			      memory_order_relaxed);
	return 0;
}

int shmr_ctl_lane_send(struct shmr_ctl *c, uint32_t type, uint64_t key)
{
	struct shmr_domain_hdr *h = shmr_hdr(c->base);
	uint64_t slot[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *m = (struct shmr_msg *)slot;

	memset(slot, 0, h->slot_size);
	m->kind = SHMR_KIND_SEND;
	m->type = type;
	m->key = key;
	if (rte_ring_enqueue_burst_elem(shmr_ctl_lane(c->base), slot,
					h->slot_size, 1, NULL) != 1)
		return -ENOBUFS;
	shmr_bell_ring(&h->ctl_bell);
	return 0;
}

uint64_t shmr_ctl_seen_version(const struct shmr_ctl *c)
{
	const struct shmr_domain_hdr *h = shmr_hdr(c->base);
	uint64_t min = UINT64_MAX;

	for (uint32_t i = 0; i < h->nlcores; i++) {
		/* Acquire: pairs with the lcore's release store of the
		 * version it applied; it no longer touches what that version
		 * dropped. */
		uint64_t v = atomic_load_explicit(
			&shmr_stats_of(c->base, i)->table_version,
			memory_order_acquire);
		if (v < min)
			min = v;
	}
	return min;
}

void shmr_ctl_slot_reinit(struct shmr_ctl *c, uint32_t slot)
{
	struct shmr_domain_hdr *h = shmr_hdr(c->base);
	struct shmr_ep_shared *ep = shmr_ep_at(c->base, slot);
	char name[RTE_RING_NAMESIZE];

	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(h->nlcores); i++) {
		snprintf(name, sizeof(name), "ep%u.%u", slot, i);
		if (shmr_lane_init(shmr_lane_at(c->base, slot, i), name,
				   h->lane_size) < 0)
			abort(); /* the same geometry worked at init */
	}
	/* A sleeper of the dead owner never withdrew.  Relaxed: nobody
	 * uses the slot until OPEN is answered, a syscall round trip that
	 * orders it. */
	atomic_store_explicit(&ep->bell.sleepers, 0, memory_order_relaxed);
}

static void sync_endpoints(struct shmr_ctl *c)
{
	const struct shmr_ctl_alloc *a = &c->model.alloc;

	for (uint32_t i = 0; i < SHMR_MAX_ENDPOINTS; i++) {
		const struct shmr_ctl_slot *s = &a->slots[i];
		struct shmr_ep_shared *ep = shmr_ep_at(c->base, i);
		uint32_t state = s->state == SHMR_CTL_SLOT_USED ? SHMR_EP_ACTIVE
							       : SHMR_EP_FREE;
		int32_t os_pid = s->state == SHMR_CTL_SLOT_USED ? s->os_pid : 0;

		if (ep->gen == s->gen && ep->kind == s->kind &&
		    ep->os_pid == os_pid &&
		    /* relaxed: we are the only writer */
		    atomic_load_explicit(&ep->state, memory_order_relaxed) ==
			    state &&
		    memcmp(ep->name, s->name, SHMR_NAME_MAX) == 0)
			continue;
		ep->gen = s->gen;
		ep->kind = s->kind;
		ep->os_pid = os_pid;
		memcpy(ep->name, s->name, SHMR_NAME_MAX);
		/* Release: gen/kind/os_pid/name before the state (pairs with
		 * a reader's acquire load of state). */
		atomic_store_explicit(&ep->state, state, memory_order_release);
	}
}

void shmr_ctl_publish(struct shmr_ctl *c)
{
	struct shmr_spec *spec;
	const size_t off = offsetof(struct shmr_spec, version);

	if (!c->model.dirty || !c->base)
		return;
	c->model.version++;
	shmr_ctl_model_spec_build(&c->model, &c->spec_buf);
	spec = shmr_spec_of(c->base);
	shmr_spec_write_begin(spec);
	sync_endpoints(c);
	memcpy((char *)spec + off, (const char *)&c->spec_buf + off,
	       sizeof(*spec) - off);
	shmr_spec_write_end(spec);
	c->model.dirty = 0;
	/* A full lane means the dataplane has notices pending; it reads the
	 * newest spec when it takes any of them. */
	(void)shmr_ctl_lane_send(c, SHMR_CTL_SPEC, c->model.version);
}

void shmr_ctl_counters_read(const struct shmr_ctl *c,
			    struct shmr_ctl_counters *out)
{
	const struct shmr_domain_hdr *h = shmr_hdr(c->base);
	const struct shmr_ctl_alloc *a = &c->model.alloc;

	/* Relaxed loads: statistics, each word written by one lcore; no
	 * other memory is read on their account. */
	memset(out, 0, sizeof(*out));
	for (uint32_t s = 0; s < SHMR_MAX_ENDPOINTS; s++) {
		if (a->slots[s].state != SHMR_CTL_SLOT_USED)
			continue;
		for (uint32_t l = 0; l < h->nlcores; l++) {
			struct shmr_lcore_stats *st =
				shmr_stats_of(c->base, l);

			out->forwarded[s] += atomic_load_explicit(
				&st->router_forwarded[s], memory_order_relaxed);
			out->discarded[s] += atomic_load_explicit(
				&st->router_discarded[s], memory_order_relaxed);
			out->failed[s] += atomic_load_explicit(
				&st->router_failed[s], memory_order_relaxed);
			out->delivered[s] += atomic_load_explicit(
				&st->ep_delivered[s], memory_order_relaxed);
			if (a->slots[s].kind != SHMR_EPK_ROUTER)
				out->queued[s] += rte_ring_count(
					shmr_lane_at(c->base, s, l));
		}
	}
}

/* ------------------------------------------------------------------ */
/* Start-up                                                            */
/* ------------------------------------------------------------------ */

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int resolve_run_dir(struct shmr_ctl *c, const char *opt)
{
	const char *dir = opt;
	const char *env = getenv(SHMR_ENV_RUN_DIR);
	int n;

	/* The configuration's run_dir counts only when the file set it:
	 * the parser fills in the built-in default otherwise. */
	if (!dir && c->cfg.run_dir[0] &&
	    strcmp(c->cfg.run_dir, SHMR_RUN_DIR_DEFAULT) != 0)
		dir = c->cfg.run_dir;
	if (!dir && env && *env)
		dir = env;
	if (!dir)
		dir = SHMR_RUN_DIR_DEFAULT;
	n = snprintf(c->run_dir, sizeof(c->run_dir), "%s", dir);
	if (n < 0 || (size_t)n >= sizeof(c->run_dir))
		return -ENAMETOOLONG;
	n = snprintf(c->sock_path, sizeof(c->sock_path), "%s/%s.sock", dir,
		     c->cfg.domain);
	if (n < 0 || (size_t)n >= sizeof(c->sock_path))
		return -ENAMETOOLONG;
	return 0;
}

static int executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static void resolve_dataplane(struct shmr_ctl *c, const char *opt)
{
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (opt) {
		snprintf(c->dataplane, sizeof(c->dataplane), "%s", opt);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		dir = dirname(self);
		snprintf(c->dataplane, sizeof(c->dataplane),
			 "%s/shmr-dataplane", dir);
		if (executable(c->dataplane))
			return;
		snprintf(c->dataplane, sizeof(c->dataplane),
			 "%s/../dataplane/shmr-dataplane", dir);
		if (executable(c->dataplane))
			return;
	}
	snprintf(c->dataplane, sizeof(c->dataplane), "shmr-dataplane");
}

/* What the daemon builds from a configuration that shmr_config_load()
 * validated: the resizers, the model, the routes' cpu sets, the socket's
 * group.  A failure is a configuration error (exit 2). */
static void check_config(struct shmr_ctl *c)
{
	const struct shmr_config *cfg = &c->cfg;
	int rc;

	for (unsigned i = 0; i < cfg->nrouters; i++) {
		const struct shmr_conf_resizer *z = &cfg->routers[i].resizer;
		struct shmr_ctl_resizer_cfg d;
		struct shmr_ctl_optimal_cfg o;
		const char *field = "?";

		if (shmr_ctl_resizer_from_conf(z, &d, &o, &field) < 0) {
			char key[64];

			/* Pekko's key, as this configuration spells it. */
			snprintf(key, sizeof(key), "%s", field);
			for (char *k = key; *k; k++)
				if (*k == '-')
					*k = '_';
			field = key;
			shmr_ctl_warn("%s:%d: routers.[%u].%s.%s: out of "
				      "range (see docs/pools.md)",
				      cfg->source, z->line, i,
				      z->kind == SHMR_RESIZER_DEFAULT
					      ? "resizer"
					      : "optimal_resizer",
				      field);
			exit(EXIT_USAGE);
		}
	}
	rc = shmr_ctl_model_init(&c->model, cfg);
	if (rc < 0) {
		shmr_ctl_warn("%s: routers: %s", cfg->source,
			      rc == -SHMR_E_NAME
				      ? "bad or duplicate router or route name"
				      : "more routers and routes than endpoint "
					"slots");
		exit(EXIT_USAGE);
	}
	for (unsigned i = 0; i < cfg->nrouters; i++) {
		for (unsigned k = 0; k < cfg->routers[i].nroutes; k++) {
			const struct shmr_conf_route *q =
				&cfg->routers[i].routes[k];

			c->cpus[i][k] = hwloc_bitmap_alloc();
			if (!c->cpus[i][k])
				abort();
			/* The list passed shmr_config_validate(). */
			if (shmr_ctl_cpus_parse(q->cpus, c->cpus[i][k]) < 0)
				abort();
		}
	}
	if (cfg->socket_group[0]) {
		struct group *gr = getgrnam(cfg->socket_group);

		if (!gr) {
			shmr_ctl_warn("%s: socket_group: no group '%s'",
				      cfg->source, cfg->socket_group);
			exit(EXIT_USAGE);
		}
		c->have_group = 1;
		c->group = gr->gr_gid;
	}
}

/* Parse, defaults from behaviour objects, validation: config/'s one entry
 * point; a failure is a configuration error (exit 2). */
static void load_config(struct shmr_ctl *c, const char *path)
{
	char err[512];

	if (shmr_config_load(path, &c->cfg, err, sizeof(err)) < 0) {
		shmr_ctl_warn("%s", err);
		exit(EXIT_USAGE);
	}
}

/*
 * Default pinning (the choice itself is cpus.c's): fix the dataplane's
 * routing PUs and give every route whose cpus are "" one PU of its own,
 * then write each route's set as ROUTES and INSPECT show it.  The PUs we
 * may use are our own binding within what the topology allows: the
 * dataplane inherits it, and a worker pinned outside it would fail.
 * Returns 0, or -1 after printing why.
 */
static int plan_cpus(struct shmr_ctl *c)
{
	const struct shmr_config *cfg = &c->cfg;
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
	hwloc_bitmap_t lcores = hwloc_bitmap_alloc();
	unsigned nth = 0;
	int rc = 0, n;

	if (!allowed || !lcores)
		abort();
	if (hwloc_get_cpubind(c->topo, allowed, HWLOC_CPUBIND_PROCESS) < 0)
		hwloc_bitmap_fill(allowed);
	hwloc_bitmap_and(allowed, allowed,
			 hwloc_topology_get_allowed_cpuset(c->topo));
	if (hwloc_bitmap_iszero(allowed)) {
		shmr_ctl_warn("no cpu to run on: the hwloc topology allows "
			      "none of this process's cpus");
		rc = -1;
		goto out;
	}
	if (shmr_ctl_cpus_lcores(cfg->dataplane_cpus, allowed,
				 shmr_hdr(c->base)->nlcores, lcores) < 0)
		abort(); /* the list passed check_config() */
	if (cfg->dataplane_cpus[0])
		n = snprintf(c->dp_cpus, sizeof(c->dp_cpus), "%s",
			     cfg->dataplane_cpus);
	else
		n = hwloc_bitmap_list_snprintf(c->dp_cpus, sizeof(c->dp_cpus),
					       lcores);
	if (n < 0 || (size_t)n >= sizeof(c->dp_cpus))
		abort(); /* at most SHMR_MAX_LCORES numbers below 4096 */
	for (unsigned i = 0; i < c->model.nrouters; i++) {
		struct shmr_ctl_router *r = &c->model.routers[i];

		for (unsigned k = 0; k < r->nroutes; k++) {
			struct shmr_ctl_route *q = &r->routes[k];

			if (q->conf->cpus[0] == '\0') {
				int pu = shmr_ctl_cpus_pick(allowed, lcores,
							    nth++);

				if (pu < 0)
					abort(); /* allowed is not empty */
				hwloc_bitmap_only(c->cpus[i][k], (unsigned)pu);
			}
			n = hwloc_bitmap_list_snprintf(q->cpus, sizeof(q->cpus),
						       c->cpus[i][k]);
			if (n < 0 || (size_t)n >= sizeof(q->cpus))
				snprintf(q->cpus, sizeof(q->cpus), "%s",
					 q->conf->cpus);
		}
	}
	shmr_ctl_log(c, "dataplane lcores on cpus %s", c->dp_cpus);
	/* Kept: a route added later is pinned the same way. */
	c->allowed = allowed;
	c->lcores = lcores;
	return 0;
out:
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(lcores);
	return rc;
}

static void fatal_init(struct shmr_ctl *c)
{
	c->quiet = 1; /* the one line that says why is printed already */
	shmr_ctl_stop_children(c);
	shmr_ctl_server_close_listener(c);
	exit(EXIT_RUNTIME);
}

/*
 * Start-up only: wait until every routing lcore reports the published spec
 * version (stats.table_version), so that "ready" means the dataplane routes
 * with our table.  Nothing rings the control plane for this, so it checks
 * every few milliseconds, bounded; the idle appliance never polls.
 * Returns 0, or -1 after printing why (the dataplane died, or is too slow).
 */
static int wait_dataplane_ready(struct shmr_ctl *c)
{
	uint64_t deadline = shmr_ctl_now_ms() + DATAPLANE_START_MS;
	struct pollfd pfd = { .fd = c->dp.pidfd, .events = POLLIN };
	int status;

	while (shmr_ctl_seen_version(c) < c->model.version) {
		if (waitpid(c->dp.pid, &status, WNOHANG) == c->dp.pid) {
			c->dp.pid = 0;
			shmr_ctl_warn("dataplane %s %s %d during start-up",
				      c->dataplane,
				      WIFEXITED(status) ? "exited with status"
							: "was killed by signal",
				      WIFEXITED(status) ? WEXITSTATUS(status)
							: WTERMSIG(status));
			return -1;
		}
		if (shmr_ctl_now_ms() >= deadline) {
			shmr_ctl_warn("dataplane %s did not take the routing "
				      "table within %u s",
				      c->dataplane, DATAPLANE_START_MS / 1000);
			return -1;
		}
		(void)poll(&pfd, 1, 5);
	}
	return 0;
}

static int setup_loop(struct shmr_ctl *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	c->timerfd = timerfd_create(CLOCK_MONOTONIC,
				    TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->epfd < 0 || c->sigfd < 0 || c->timerfd < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_SIGNAL << 32;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->sigfd, &ev) < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_TIMER << 32;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->timerfd, &ev) < 0)
		return -errno;
	ev.data.u64 = (uint64_t)SHMR_CTL_TAG_LISTEN << 32;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->lfd, &ev) < 0)
		return -errno;
	return 0;
}

static void on_signal(struct shmr_ctl *c)
{
	struct signalfd_siginfo si;

	while (read(c->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			shmr_ctl_reap(c);
		} else if (!c->stop_requested) {
			shmr_ctl_log(c, "%s: stopping",
				     si.ssi_signo == SIGINT ? "SIGINT"
							    : "SIGTERM");
			c->stop_requested = 1;
		}
	}
}

static int run_loop(struct shmr_ctl *c)
{
	struct epoll_event evs[64];

	while (!c->stop_requested) {
		int n = epoll_wait(c->epfd, evs, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			shmr_ctl_warn("epoll_wait: %s", strerror(errno));
			return EXIT_RUNTIME;
		}
		for (int i = 0; i < n; i++) {
			uint32_t tag = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t idx = (uint32_t)evs[i].data.u64;

			switch (tag) {
			case SHMR_CTL_TAG_SIGNAL:
				on_signal(c);
				break;
			case SHMR_CTL_TAG_LISTEN:
				shmr_ctl_server_accept(c);
				break;
			case SHMR_CTL_TAG_TIMER:
				shmr_ctl_retry_due(c);
				break;
			case SHMR_CTL_TAG_CONN:
				shmr_ctl_server_event(c, idx, evs[i].events);
				break;
			case SHMR_CTL_TAG_CHILD:
				shmr_ctl_reap(c);
				break;
			case SHMR_CTL_TAG_ADMIN:
				shmr_ctl_admin_event(c);
				break;
			default:
				break;
			}
			shmr_ctl_publish(c);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "dataplane", required_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct shmr_ctl *c = &ctl;
	const char *conf = NULL, *run_dir = NULL, *dataplane = NULL;
	int check = 0, ready_fd = -1, opt, rc;
	char *end;
	long v;

	memset(c, 0, sizeof(*c));
	c->life = (struct shmr_ctl_life){ &c->model, &shmr_ctl_life_daemon_ops,
					  c };
	c->memfd = c->epfd = c->sigfd = c->timerfd = c->lfd = -1;
	c->admin_kick = c->admin_done = -1;
	c->dp.pidfd = -1;
	for (unsigned i = 0; i < SHMR_MAX_ROUTERS; i++)
		for (unsigned k = 0; k < SHMR_MAX_ROUTES; k++)
			c->workers[i][k].pidfd = -1;
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
		c->conns[i].fd = -1;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			conf = optarg;
			break;
		case 'r':
			if (!*optarg)
				usage_error("--run-dir: empty");
			run_dir = optarg;
			break;
		case 'f':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 ||
			    v > INT32_MAX || fcntl((int)v, F_GETFD) < 0)
				usage_error("--ready-fd: not an open descriptor");
			ready_fd = (int)v;
			break;
		case 'd':
			dataplane = optarg;
			break;
		case 'k':
			check = 1;
			break;
		case 'q':
			c->quiet = 1;
			break;
		case 'h':
			usage_full();
			return 0;
		case ':':
			fprintf(stderr, "shmr-control: %s: missing argument\n",
				argv[optind - 1]);
			usage_error(NULL);
			break;
		default:
			fprintf(stderr, "shmr-control: unknown option %s\n",
				argv[optind - 1]);
			usage_error(NULL);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument");
	/* Children must not hold the ready pipe: its reader waits for EOF
	 * after an init failure. */
	if (ready_fd >= 0)
		(void)fcntl(ready_fd, F_SETFD, FD_CLOEXEC);

	load_config(c, conf);
	check_config(c);
	if (check) {
		printf("%s: ok\n", c->cfg.source[0] ? c->cfg.source
						    : (conf ? conf
							    : "<default>"));
		return 0;
	}

	/* A closed ready pipe must not kill us; children get SIG_DFL back. */
	signal(SIGPIPE, SIG_IGN);
	if (resolve_run_dir(c, run_dir) < 0) {
		shmr_ctl_warn("run dir or socket path too long");
		return EXIT_RUNTIME;
	}
	resolve_dataplane(c, dataplane);
	rc = mkdir_p(c->run_dir, 0755);
	if (rc < 0) {
		shmr_ctl_warn("cannot create run dir %s: %s", c->run_dir,
			      strerror(-rc));
		return EXIT_RUNTIME;
	}
	/* Absolute, so that a worker that changes directory still finds
	 * SHMR_SOCKET. */
	{
		char abs[PATH_MAX];

		errno = 0;
		if (!realpath(c->run_dir, abs) || resolve_run_dir(c, abs) < 0) {
			shmr_ctl_warn("run dir %s: %s", c->run_dir,
				      errno ? strerror(errno) : "too long");
			return EXIT_RUNTIME;
		}
	}
	rc = shmr_ctl_server_open(c);
	if (rc == -EADDRINUSE) {
		shmr_ctl_warn("domain %s is already served at %s",
			      c->cfg.domain, c->sock_path);
		return EXIT_RUNTIME;
	} else if (rc < 0) {
		shmr_ctl_warn("cannot listen on %s: %s", c->sock_path,
			      strerror(-rc));
		return EXIT_RUNTIME;
	}
	rc = create_domain(c);
	if (rc < 0) {
		shmr_ctl_warn("cannot create domain %s: %s", c->cfg.domain,
			      rc <= -SHMR_E_BASE ? "layout" : strerror(-rc));
		shmr_ctl_server_close_listener(c);
		return EXIT_RUNTIME;
	}
	rc = shmr_ctl_admin_open(c);
	if (rc < 0) {
		shmr_ctl_warn("cannot allocate the admin endpoint: %s",
			      shmr_strerror(rc));
		shmr_ctl_server_close_listener(c);
		return EXIT_RUNTIME;
	}
	shmr_ctl_publish(c);
	if (hwloc_topology_init(&c->topo) < 0 ||
	    hwloc_topology_load(c->topo) < 0) {
		shmr_ctl_warn("cannot load the hwloc topology");
		shmr_ctl_server_close_listener(c);
		return EXIT_RUNTIME;
	}
	if (plan_cpus(c) < 0) {
		shmr_ctl_server_close_listener(c);
		return EXIT_RUNTIME;
	}
	if (shmr_ctl_handlers_load(c) < 0) {
		shmr_ctl_handlers_unload(c);
		shmr_ctl_server_close_listener(c);
		return EXIT_RUNTIME;
	}
	rc = setup_loop(c);
	if (rc == 0)
		rc = shmr_ctl_admin_start(c);
	if (rc < 0) {
		shmr_ctl_warn("event loop: %s", strerror(-rc));
		shmr_ctl_server_close_listener(c);
		return EXIT_RUNTIME;
	}

	rc = shmr_ctl_spawn_dataplane(c);
	if (rc < 0) {
		shmr_ctl_warn("cannot start dataplane %s: %s", c->dataplane,
			      strerror(-rc));
		fatal_init(c);
	}
	if (wait_dataplane_ready(c) < 0)
		fatal_init(c);
	for (unsigned i = 0; i < c->model.nrouters; i++) {
		struct shmr_ctl_router *r = &c->model.routers[i];

		for (unsigned k = 0; k < r->nroutes; k++) {
			const char *what = NULL;

			rc = shmr_ctl_spawn_worker(c, i, k, &what);
			if (rc < 0 && what)
				shmr_ctl_warn("route %s: cannot pin to cpus "
					      "%s: %s",
					      r->routes[k].conf->name,
					      r->routes[k].cpus,
					      strerror(-rc));
			else if (rc < 0)
				shmr_ctl_warn("route %s: cannot start %s: %s",
					      r->routes[k].conf->name,
					      r->routes[k].conf->program,
					      strerror(-rc));
			if (rc < 0) {
				fatal_init(c);
			}
		}
	}
	shmr_ctl_publish(c);
	shmr_ctl_log(c, "domain %s up: %u router(s), socket %s, %s pages",
		     c->cfg.domain, c->model.nrouters, c->sock_path,
		     c->hugepages ? "huge" : "4 KiB");
	if (ready_fd >= 0) {
		ssize_t w;

		do
			w = write(ready_fd, "R", 1);
		while (w < 0 && errno == EINTR);
		close(ready_fd);
	}

	/* The pools' resizers, if any, look from now on (the first tick
	 * finds out whether there are any). */
	c->rng_state = (uint64_t)getpid() ^ shmr_ctl_now_ms();
	c->resize_at_ms = shmr_ctl_now_ms() + 1;
	shmr_ctl_arm_timer(c);
	rc = run_loop(c);
	c->stopping = 1;
	shmr_ctl_server_close_listener(c);
	shmr_ctl_stop_children(c);
	shmr_ctl_server_close_all(c);
	shmr_ctl_handlers_unload(c);
	shmr_ctl_log(c, "domain %s stopped", c->cfg.domain);
	return rc;
}
