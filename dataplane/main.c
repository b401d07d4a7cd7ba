/*
 * shmr-dataplane: the appliance's fast path, a DPDK EAL application.
 *
 *   shmr-dataplane --domain-fd N --lanes-fd M [--cpus LIST]
 *                  [--log-level L] [-- EAL-OPTION...]
 *   shmr-dataplane --version | --help
 *
 * Started by shmr-control with the domain's memfd open on fd N.  It maps
 * the domain, starts EAL with one lcore per routing lcore of the domain
 * (lcore i on the i-th cpu of LIST, round-robin; default: the cpus this
 * process may run on), builds the routing table, and runs:
 *   - routing lcores 0..nlcores-1 (the main lcore is 0): poll, route,
 *     forward; liburcu QSBR readers of the table;
 *   - one update thread (a pthread, not an lcore): waits on the control
 *     lane, rebuilds and publishes the table, frees the old one after a
 *     grace period; re-reads the spec every 100 ms in case a control-lane
 *     message was lost with the control plane.
 * It stops cleanly (status 0) on SIGTERM, SIGINT or SHMR_CTL_SHUTDOWN, and
 * on nothing else: it never watches its parent, so it keeps forwarding
 * with its last table while no control plane runs, and it keeps the
 * domain's descriptor open so that the next control plane can adopt it.
 *
 * Exit status: 0 clean stop, 1 runtime failure, 2 bad usage.
 *
 * Shutdown: whoever decides to stop sets `stopping` (seq_cst) and rings
 * every lcore bell and the control bell.  A sleeper re-checks `stopping`
 * after announcing itself on its bell (B1), so either it sees the flag or
 * the ringer sees it asleep and wakes it (B2): no stop is ever missed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_log.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <urcu-qsbr.h>

#include <shmr/cpulist.h>
#include <shmr/logline.h>
#include <shmr/proto.h>
#include <shmr/version.h>

#include "dataplane_internal.h"
#include "forward.h"
#include "lcore.h"
#include "rcu.h"
#include "table.h"
#include "telemetry.h"

#define PROG "shmr-dataplane"
#define IDLE_SLEEP_MS 100   /* longest sleep of an idle lcore */
#define BLOCKED_SLEEP_MS 1  /* while a target lane is full */
#define SPEC_POLL_MS 100    /* update thread: re-read the spec */
#define SPEC_RETRY_MS 10    /* ... after a build that could not finish */
/* Rebuilds at most this often (ns): the changes that come in between
 * wait for the next one, which takes them all (see rebuild_paced()). */
#define REBUILD_GAP_NS 1000000ull
#define START_BUILD_TRIES 500
#define EAL_EXTRA_MAX 16    /* EAL options after "--" (eal_args) */

struct lcore_ctx {
	struct shmr_dp_lcore lc;
};

static struct shmr_dp_env g_env;
static struct shmr_dp_current g_current;
static struct lcore_ctx g_lcores[SHMR_MAX_LCORES];
static atomic_int g_stopping;
static int g_log_level = SHMR_DP_LOG_INFO;

/* ---- logging ----------------------------------------------------------- */

/* shmr/logline.h's line (time and level, or the journal's priority),
 * one write(2) each, so lines of different threads never interleave. */
static void log_line(void *ctx, int level, const char *line)
{
	(void)ctx;
	if (level > g_log_level)
		return;
	shmr_log_write(level, 1, PROG, line);
}

static void say(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_line(NULL, level, line);
}

/* EAL's own lines (rte_log) as ours, at the level EAL gave them: its
 * stream is a cookie FILE whose writes end here (rte_vlog() flushes each
 * message, on the thread that logged it). */
static ssize_t eal_log_write(void *cookie, const char *buf, size_t n)
{
	char line[512];
	size_t k = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
	int lv = rte_log_cur_msg_loglevel();
	int err = RTE_LOG_ERR, warn = RTE_LOG_WARNING, dbg = RTE_LOG_DEBUG;

	(void)cookie;
	memcpy(line, buf, k);
	while (k && line[k - 1] == '\n')
		k--;
	line[k] = '\0';
	log_line(NULL,
		 lv <= err    ? SHMR_DP_LOG_ERROR
		 : lv == warn ? SHMR_DP_LOG_WARNING
		 : lv < dbg   ? SHMR_DP_LOG_INFO
			      : SHMR_DP_LOG_DEBUG,
		 line);
	return (ssize_t)n;
}

static void eal_log_redirect(void)
{
	FILE *f = fopencookie(NULL, "w",
			      (cookie_io_functions_t){ .write = eal_log_write });

	if (f)
		rte_openlog_stream(f);
}

/* ---- stopping ---------------------------------------------------------- */

static void request_stop(void)
{
	struct shmr_domain_hdr *h = shmr_hdr(g_env.base);

	atomic_store(&g_stopping, 1);
	if (!g_env.base)
		return;
	/* shmr_bell_ring(): fence B2, then a futex wake if anyone sleeps.
	 * Only atomics and a syscall: safe in a signal handler. */
	for (uint32_t i = 0; i < g_env.nlcores; i++)
		shmr_bell_ring(shmr_dp_lcore_bell(&g_env, i));
	shmr_bell_ring(&h->ctl_bell);
}

static void on_signal(int sig)
{
	(void)sig;
	request_stop();
}

static int stopping(void)
{
	return atomic_load(&g_stopping);
}

/* ---- the routing lcores ------------------------------------------------ */

static int lcore_main(void *arg)
{
	struct shmr_dp_lcore *lc = &((struct lcore_ctx *)arg)->lc;
	struct shmr_bell *bell = shmr_dp_lcore_bell(&g_env, lc->index);
	int adaptive = g_env.poll_mode == SHMR_POLL_ADAPTIVE;
	uint32_t empty = 0;
	uint64_t adopted = UINT64_MAX;

	rcu_register_thread();
	while (!stopping()) {
		struct shmr_dp_table *t = shmr_dp_table_get_rcu(&g_current);
		unsigned n;
		uint32_t seen;

		if (t->version != adopted) {
			adopted = t->version;
			/* Release: everything this lcore did with older
			 * tables happens before the control plane's acquire
			 * load of table_version (its partner), so it may
			 * reuse what they named. */
			atomic_store_explicit(&lc->stats->table_version,
					      adopted, memory_order_release);
		}
		n = shmr_dp_poll_once_rcu(lc, t);
		shmr_dp_quiescent();
		if (n) {
			empty = 0;
			continue;
		}
		if (!adaptive || ++empty < g_env.spin_polls) {
			rte_pause();
			continue;
		}

		/* Sleep: announce ourselves on the bell (B1), then look
		 * once more at every lane (and the stop flag); whoever
		 * enqueues after that rings us awake. */
		t = shmr_dp_table_get_rcu(&g_current);
		seen = shmr_bell_prepare(bell);
		if (stopping() || shmr_dp_has_work_rcu(lc, t)) {
			shmr_bell_cancel(bell);
			empty = 0;
			continue;
		}
		/* Bounded by the collector's next timer (a scatter-gather or
		 * tail-chopping call in flight), and short while a balancing
		 * queue waits for a routee to free up. */
		int timeout = shmr_dp_sleep_ms(
			lc, lc->nblocked ? BLOCKED_SLEEP_MS : IDLE_SLEEP_MS);

		if (timeout == 0) {
			shmr_bell_cancel(bell);
			continue;
		}
		shmr_dp_count(&lc->stats->sleeps, 1);
		shmr_dp_offline();
		shmr_bell_sleep(bell, seen, timeout);
		shmr_dp_online();
		/* Woken by a ring: spin again.  Timed out: look once, and
		 * sleep again at once if still idle. */
		if (atomic_load_explicit(&bell->seq, memory_order_relaxed) !=
		    seen) {
			empty = 0;
			shmr_dp_count(&lc->stats->wakeups, 1);
		} else
			empty = g_env.spin_polls - 1;
	}
	/* The bells a last full round still owes (forward_poll.c). */
	shmr_dp_ring_bells(lc);
	rcu_unregister_thread();
	return 0;
}

/* ---- the update thread ------------------------------------------------- */

static int rebuild(uint64_t *last_fail_version)
{
	struct shmr_dp_table *t, *old;
	int rc;

	rc = shmr_dp_table_build(&g_env, &t);
	if (rc < 0) {
		uint64_t v = shmr_dp_spec(&g_env)->version;

		if (*last_fail_version != v)
			say(SHMR_DP_LOG_WARNING,
			    "table not rebuilt (%s): forwarding with "
			    "version %" PRIu64 " meanwhile",
			    rc == -EAGAIN ? "the spec stays mid-write"
					   : strerror(-rc),
			    shmr_dp_table_current(&g_current)->version);
		*last_fail_version = v;
		return rc;
	}
	old = shmr_dp_table_publish(&g_current, t);
	say(SHMR_DP_LOG_DEBUG, "table version %" PRIu64 " published",
	    t->version);
	shmr_dp_table_free(old);
	/* Sleeping lcores adopt the new version now rather than at their
	 * next timeout, so the control plane's wait on table_version is
	 * short.  A syscall only for an lcore that sleeps. */
	for (uint32_t i = 0; i < g_env.nlcores; i++)
		shmr_bell_ring(shmr_dp_lcore_bell(&g_env, i));
	*last_fail_version = UINT64_MAX;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/*
 * rebuild(), no sooner than REBUILD_GAP_NS after the last one began.  A
 * rebuild allocates and fills a whole table and waits out a grace
 * period; changes published in quick succession (a script, a resizer, a
 * churn of routees: thousands a second) each cost one when taken one by
 * one, and the update thread's cpu and the table's fill came out of the
 * cores that forward.  The wait is only for a change that follows
 * another within the gap: a lone change is rebuilt at once, and the one
 * after the wait reads the newest spec, so it takes every change that
 * came during it.
 */
static int rebuild_paced(uint64_t *last_fail, uint64_t *last_ns)
{
	uint64_t now = mono_ns();

	if (*last_ns && now - *last_ns < REBUILD_GAP_NS) {
		uint64_t left = REBUILD_GAP_NS - (now - *last_ns);

		nanosleep(&(struct timespec){ 0, (long)left }, NULL);
		now = mono_ns();
	}
	*last_ns = now;
	return rebuild(last_fail);
}

static void *update_main(void *arg)
{
	struct shmr_domain_hdr *h = shmr_hdr(g_env.base);
	struct rte_ring *ctl = shmr_dp_ctl_lane(&g_env);
	struct shmr_spec *spec = shmr_dp_spec(&g_env);
	uint32_t ss = g_env.slot_size;
	unsigned char *buf = malloc((size_t)8 * ss);
	uint64_t last_fail = UINT64_MAX, last_ns = 0;
	int ctl_reported = 0, timeout = SPEC_POLL_MS;

	(void)arg;
	if (!buf) {
		say(SHMR_DP_LOG_ERROR, "update thread: out of memory");
		request_stop();
		return NULL;
	}
	while (!stopping()) {
		unsigned n;
		uint32_t seen;

		if (shmr_lane_valid_sc(ctl, g_env.lane_size)) {
			unsigned dropped = 0, bad_kind = 0, bad_type = 0;

			while ((n = rte_ring_dequeue_burst_elem(ctl, buf, ss, 8,
								NULL)) > 0) {
				for (unsigned i = 0; i < n; i++) {
					const struct shmr_msg *m =
						(const void *)(buf +
							       (size_t)i * ss);

					if (m->kind != SHMR_KIND_SEND) {
						dropped++;
						bad_kind = m->kind;
						bad_type = m->type;
					} else if (m->type == SHMR_CTL_SPEC) {
						/* the spec's seq says */
					} else if (m->type ==
						   SHMR_CTL_SHUTDOWN) {
						say(SHMR_DP_LOG_INFO,
						    "shutdown requested by "
						    "the control plane");
						request_stop();
					} else {
						dropped++;
						bad_kind = m->kind;
						bad_type = m->type;
					}
				}
			}
			/* One line per wake-up, however many there were. */
			if (dropped)
				say(SHMR_DP_LOG_WARNING,
				    "control lane: %u unknown message(s) "
				    "dropped (last: kind %u type %u)",
				    dropped, bad_kind, bad_type);
			ctl_reported = 0;
		} else if (!ctl_reported) {
			say(SHMR_DP_LOG_ERROR,
			    "control lane corrupted: ignoring it, re-reading "
			    "the spec every %d ms",
			    SPEC_POLL_MS);
			ctl_reported = 1;
		}
		if (stopping())
			break;

		/* Rebuild when the spec moved since the table was built,
		 * with a message or without one (a message lost with a
		 * control plane that died); a message for a spec the last
		 * rebuild already read (it came during rebuild_paced()'s
		 * wait) needs none. */
		if (atomic_load_explicit(&spec->seq, memory_order_relaxed) !=
		    shmr_dp_table_current(&g_current)->seq)
			timeout = rebuild_paced(&last_fail, &last_ns) < 0
					  ? SPEC_RETRY_MS
					  : SPEC_POLL_MS;

		seen = shmr_bell_prepare(&h->ctl_bell);
		if (stopping() || shmr_lane_pending_sc(ctl)) {
			shmr_bell_cancel(&h->ctl_bell);
			continue;
		}
		shmr_bell_sleep(&h->ctl_bell, seen, timeout);
	}
	free(buf);
	return NULL;
}

/* ---- start-up ---------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --domain-fd N --lanes-fd M [--cpus LIST] "
		"[--log-level L] [-- EAL-OPTION...]\n"
		"  --domain-fd N   the domain's first memfd (the daemons' part),"
		"\n"
		"                  inherited from shmr-control\n"
		"  --lanes-fd M    its second memfd (the lanes part), inherited "
		"too\n"
		"  --cpus LIST     cpus for the routing lcores, e.g. 0,2-3 "
		"(round-robin;\n"
		"                  default: the cpus this process may use)\n"
		"  --log-level L   error, warning, info (default) or debug\n"
		"  --version       print \"" PROG " VERSION\" and exit\n");
}

/* The lcores' cpus so far, for parse_cpus(). */
struct cpus_out {
	int *cpus;
	int n, max;
};

static int add_cpus(unsigned lo, unsigned hi, void *arg)
{
	struct cpus_out *o = arg;

	if (hi >= CPU_SETSIZE)
		return -ERANGE;
	for (unsigned c = lo; c <= hi; c++) {
		if (o->n == o->max)
			return -ENOSPC;
		o->cpus[o->n++] = (int)c;
	}
	return 0;
}

/* Parse "0,2-3" into @p cpus (shmr's one cpu-list parser, and no cpu a
 * cpu_set_t cannot hold); returns the count or -1. */
static int parse_cpus(const char *s, int *cpus, int max)
{
	struct cpus_out o = { cpus, 0, max };

	return shmr_cpulist_parse(s, add_cpus, &o, NULL) < 0 ? -1 : o.n;
}

static int parse_level(const char *s)
{
	static const char *const names[] = { NULL, "error", "warning",
					     "info", "debug" };
	char *end;
	long v;

	if (strcmp(s, "warn") == 0)
		return SHMR_DP_LOG_WARNING;
	for (int i = 1; i <= SHMR_DP_LOG_DEBUG; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	v = strtol(s, &end, 10);
	if (*s && !*end && v >= SHMR_DP_LOG_ERROR && v <= SHMR_DP_LOG_DEBUG)
		return (int)v;
	return -1;
}

/*
 * Take over our sides of every lane from a dataplane that may have died:
 * an unfinished burst on an outbound (or the control) lane is handed back
 * flagged as redelivered, a half-done enqueue on an inbound lane is
 * dropped.  Only lanes whose geometry is sound are touched (a lane that
 * is not is quarantined by its first burst's check, as ever).
 */
static void repair_own_sides(void)
{
	unsigned back = 0, dropped = 0;

	for (uint32_t s = 0; s < g_env.max_endpoints; s++) {
		for (uint32_t i = 0; i < SHMR_LANES_PER_EP(g_env.nlcores);
		     i++) {
			struct rte_ring *r = shmr_dp_lane(&g_env, s, i);

			if (!shmr_lane_geometry_valid(r, g_env.lane_size))
				continue;
			if (i < g_env.nlcores)
				dropped += (unsigned)shmr_lane_repair_producer(
					r, g_env.lane_size);
			else
				back += shmr_lane_repair_consumer(
					r, g_env.slot_size, g_env.lane_size);
		}
	}
	struct rte_ring *ctl = shmr_dp_ctl_lane(&g_env);

	if (shmr_lane_geometry_valid(ctl, g_env.lane_size))
		back += shmr_lane_repair_consumer(ctl, g_env.slot_size,
						  g_env.lane_size);
	if (back || dropped)
		say(SHMR_DP_LOG_WARNING,
		    "took over from a previous dataplane: %u slot(s) to "
		    "redeliver, %u half-done enqueue(s) dropped",
		    back, dropped);
}

/* "--file-prefix=shmr-<domain>": our own EAL runtime directory
 * (shmr_proto_eal_prefix()). */
static char *file_prefix(char *buf, size_t len)
{
	char prefix[64];

	snprintf(buf, len, "--file-prefix=%s",
		 shmr_proto_eal_prefix(prefix, sizeof(prefix), g_env.name));
	return buf;
}

/* Remove the (empty) runtime directory EAL made, and its parent if nobody
 * else uses it; on success @p runtime_dir becomes "". */
static void remove_runtime_dir(char *runtime_dir)
{
	char parent[PATH_MAX];
	char *slash;

	if (!runtime_dir[0] || rmdir(runtime_dir) < 0)
		return;
	snprintf(parent, sizeof(parent), "%s", runtime_dir);
	runtime_dir[0] = '\0';
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		rmdir(parent); /* fails harmlessly when not empty */
	}
}

/* rte_eal_cleanup(), then whatever of the runtime directory is left: the
 * telemetry sockets too (EAL unlinks them only at exit(3), after us). */
static void eal_done(char *runtime_dir)
{
	char sock[PATH_MAX + 32];

	rte_eal_cleanup();
	if (runtime_dir[0]) {
		snprintf(sock, sizeof(sock), "%s/dpdk_telemetry.v2",
			 runtime_dir);
		unlink(sock);
		snprintf(sock, sizeof(sock), "%s/telemetry", runtime_dir);
		unlink(sock);
	}
	remove_runtime_dir(runtime_dir);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "domain-fd", required_argument, NULL, 'd' },
		{ "lanes-fd", required_argument, NULL, 'L' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int fd = -1, lanes_fd = -1, ncpus = 0, cpus[CPU_SETSIZE], opt, rc;
	const char *cpu_list = NULL;
	cpu_set_t all;
	struct stat sb, lb;
	void *base;
	pthread_t updater;
	pthread_attr_t attr;
	struct sigaction sa;
	char lcores_arg[1024], prefix_arg[80], runtime_dir[PATH_MAX];
	char *eal_argv[16 + EAL_EXTRA_MAX];
	int eal_argc = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		long v;

		switch (opt) {
		case 'd':
		case 'L':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end || v < 0 || v > INT_MAX) {
				fprintf(stderr, PROG ": bad --%s %s\n",
					opt == 'd' ? "domain-fd" : "lanes-fd",
					optarg);
				return 2;
			}
			if (opt == 'd')
				fd = (int)v;
			else
				lanes_fd = (int)v;
			break;
		case 'c':
			cpu_list = optarg;
			break;
		case 'l':
			g_log_level = parse_level(optarg);
			if (g_log_level < 0) {
				fprintf(stderr, PROG ": bad --log-level %s\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(PROG " %s\n", SHMR_VERSION_TEXT);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* After "--": the operator's EAL options (eal_args), after ours. */
	int extra = argc - optind;

	if (fd < 0 || lanes_fd < 0 ||
	    (extra && strcmp(argv[optind - 1], "--") != 0) ||
	    extra > EAL_EXTRA_MAX) {
		usage(stderr);
		return 2;
	}

	/* Before any thread: whether stderr is the journal is decided
	 * once (shmr/logline.h). */
	shmr_log_journal();
	eal_log_redirect();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	/* The domain: its two parts, back to back (layout.h). */
	if (fstat(fd, &sb) < 0 || fstat(lanes_fd, &lb) < 0) {
		say(SHMR_DP_LOG_ERROR, "--domain-fd %d / --lanes-fd %d: %s",
			fd, lanes_fd, strerror(errno));
		return 2;
	}
	uint64_t map_size = (uint64_t)sb.st_size + (uint64_t)lb.st_size;

	rc = shmr_domain_map(fd, lanes_fd, (uint64_t)sb.st_size, map_size, 1,
			     &base);
	if (rc < 0) {
		say(SHMR_DP_LOG_ERROR, "cannot map the domain: %s",
			strerror(-rc));
		return 1;
	}
	/* The descriptors stay open for as long as we run: a control plane
	 * that comes back after its predecessor died takes the domain from
	 * us with pidfd_getfd(2) (control/adopt.c), and without them the
	 * memory would be reachable by nobody but its mappers. */
	rc = shmr_dp_env_init(&g_env, base, (size_t)map_size);
	if (rc == 0 && shmr_hdr(base)->peer_off != (uint64_t)sb.st_size)
		rc = -SHMR_E_PROTO; /* the two descriptors do not match */
	if (rc < 0) {
		say(SHMR_DP_LOG_ERROR, "not a usable domain: %s",
			shmr_strerror(rc));
		shmr_domain_unmap(base, map_size);
		return 1;
	}
	g_env.log = log_line;

	/* CPUs: the lcores' (from --cpus or our affinity); the update
	 * thread keeps the whole affinity we were started with. */
	if (sched_getaffinity(0, sizeof(all), &all) < 0) {
		say(SHMR_DP_LOG_ERROR, "sched_getaffinity: %s",
			strerror(errno));
		return 1;
	}
	if (cpu_list) {
		ncpus = parse_cpus(cpu_list, cpus, CPU_SETSIZE);
		if (ncpus <= 0) {
			say(SHMR_DP_LOG_ERROR, "bad --cpus %s", cpu_list);
			return 2;
		}
	} else {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &all))
				cpus[ncpus++] = c;
	}
	size_t off = 0;

	off += (size_t)snprintf(lcores_arg, sizeof(lcores_arg), "--lcores=");
	for (uint32_t i = 0; i < g_env.nlcores; i++)
		off += (size_t)snprintf(lcores_arg + off,
					sizeof(lcores_arg) - off, "%s%u@%d",
					i ? "," : "", i, cpus[i % ncpus]);

	/* EAL: no hugepages, no shared config; telemetry on (its socket is
	 * the one file in the runtime directory, telemetry.c). */
	eal_argv[eal_argc++] = (char *)PROG;
	eal_argv[eal_argc++] = lcores_arg;
	eal_argv[eal_argc++] = (char *)"--no-huge";
	eal_argv[eal_argc++] = (char *)"--no-shconf";
	eal_argv[eal_argc++] = (char *)"--no-pci";
	eal_argv[eal_argc++] = (char *)"-m";
	eal_argv[eal_argc++] = (char *)"64";
	eal_argv[eal_argc++] = (char *)"--log-level=lib.eal:error";
	/* Not its notice that no legacy (v1) socket is made. */
	eal_argv[eal_argc++] = (char *)"--log-level=lib.telemetry:error";
	eal_argv[eal_argc++] = file_prefix(prefix_arg, sizeof(prefix_arg));
	for (int i = 0; i < extra; i++)
		eal_argv[eal_argc++] = argv[optind + i];
	eal_argv[eal_argc] = NULL;
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		say(SHMR_DP_LOG_ERROR, "EAL initialisation failed: %s",
			rte_strerror(rte_errno));
		munmap(base, g_env.map_size);
		return 1;
	}
	/* EAL makes its runtime directory even with --no-shconf.  With
	 * telemetry off (--no-telemetry in eal_args) it is empty: remove
	 * it now, so a dataplane killed with -9 leaves nothing behind;
	 * otherwise it holds the telemetry socket and stays (a successor
	 * with the same prefix replaces a stale socket), and the exit path
	 * removes it. */
	snprintf(runtime_dir, sizeof(runtime_dir), "%s",
		 rte_eal_get_runtime_dir());
	remove_runtime_dir(runtime_dir);
	if (rte_lcore_count() != g_env.nlcores) {
		say(SHMR_DP_LOG_ERROR, "EAL gave %u lcores, need %u",
			rte_lcore_count(), g_env.nlcores);
		eal_done(runtime_dir);
		return 1;
	}

	rc = shmr_dp_telemetry_register(&g_env);
	if (rc < 0)
		say(SHMR_DP_LOG_WARNING, "telemetry commands not registered: %s",
		    strerror(-rc));

	repair_own_sides();

	/* The first table, before any lcore starts. */
	struct shmr_dp_table *first = NULL;

	for (int i = 0; i < START_BUILD_TRIES && !stopping(); i++) {
		rc = shmr_dp_table_build(&g_env, &first);
		if (rc != -EAGAIN)
			break;
		usleep(10000);
	}
	if (!first) {
		if (!stopping())
			say(SHMR_DP_LOG_ERROR, "no routing table: %s",
			    rc == -EAGAIN ? "the spec stays mid-write"
					  : strerror(-rc));
		eal_done(runtime_dir);
		munmap(base, g_env.map_size);
		return stopping() ? 0 : 1;
	}
	shmr_dp_table_publish(&g_current, first);
	atomic_store(&shmr_hdr(base)->dataplane_pid, (int32_t)getpid());
	say(SHMR_DP_LOG_INFO, "domain %s, %u lcores, poll mode %s",
	    g_env.name, g_env.nlcores,
	    g_env.poll_mode == SHMR_POLL_BUSY ? "busy" : "adaptive");

	for (uint32_t i = 0; i < g_env.nlcores; i++) {
		rc = shmr_dp_lcore_init(&g_lcores[i].lc, &g_env, i);
		if (rc < 0) {
			say(SHMR_DP_LOG_ERROR, "lcore %u: %s", i,
			    strerror(-rc));
			eal_done(runtime_dir);
			return 1;
		}
	}

	{
		struct shmr_dp_lcore *lcs[SHMR_MAX_LCORES];

		for (uint32_t i = 0; i < g_env.nlcores; i++)
			lcs[i] = &g_lcores[i].lc;
		rc = shmr_dp_lcores_link(lcs, g_env.nlcores);
		if (rc < 0) {
			say(SHMR_DP_LOG_ERROR, "lcore rings: %s",
			    strerror(-rc));
			eal_done(runtime_dir);
			return 1;
		}
	}

	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(all), &all);
	rc = pthread_create(&updater, &attr, update_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		say(SHMR_DP_LOG_ERROR, "update thread: %s", strerror(rc));
		eal_done(runtime_dir);
		return 1;
	}
	pthread_setname_np(updater, "dp-update");

	/* Routing lcore i is EAL lcore i (--lcores above); 0 is us. */
	unsigned id;

	RTE_LCORE_FOREACH_WORKER(id) {
		rc = rte_eal_remote_launch(lcore_main, &g_lcores[id], id);
		if (rc < 0) {
			say(SHMR_DP_LOG_ERROR, "lcore %u: launch failed", id);
			request_stop();
		}
	}
	lcore_main(&g_lcores[rte_lcore_id()]);
	rte_eal_mp_wait_lcore();
	request_stop();
	pthread_join(updater, NULL);

	/* No reader is left: the last table can go without a grace
	 * period. */
	shmr_dp_table_free(shmr_dp_table_current(&g_current));
	for (uint32_t i = 0; i < g_env.nlcores; i++)
		shmr_dp_lcore_fini(&g_lcores[i].lc);
	int32_t me = (int32_t)getpid();

	atomic_compare_exchange_strong(&shmr_hdr(base)->dataplane_pid, &me,
				       0);
	eal_done(runtime_dir);
	munmap(base, g_env.map_size);
	say(SHMR_DP_LOG_INFO, "stopped");
	return 0;
}
