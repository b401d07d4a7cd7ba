/*
 * The trust boundary (issue 11), against the real daemons: what a peer
 * that maps the domain read-write, or a client that names a PID that
 * cannot exist, must not be able to do to the appliance.
 *
 *   - A worker that scribbles its own lanes' geometry and indices (and
 *     the header's nlcores) and dies: shmr-control survives, repairs or
 *     reinitialises the lanes, restarts the route; a bystander route
 *     keeps answering and the new worker receives.
 *   - An odd spec sequence word left by a peer: a new client's lookup
 *     fails within the bound instead of spinning; the control plane's
 *     next publication makes the spec readable again.
 *   - A call to a slot out of range, or to a free slot, fails at once with
 *     SHMR_E_PROCESS_UNKNOWN instead of waiting for its timeout.
 *   - What only the daemons write (header, endpoint table, spec, counters,
 *     control lane) a client cannot: its store faults, its mapping cannot
 *     be made writable, and a client of another user cannot open the
 *     file again for writing.  Its lanes it can write.
 *
 * The scribbling tests write the daemons' part too, through a mapping
 * only root gets (shmr_test_map()'s writable one): defence in depth, the
 * control plane trusts its own copy of the geometry even so.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>

#include <shmr/domain.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CONF                                                                   \
	"lcores = 2;\npoll_mode = \"adaptive\";\n"                             \
	"routers = ( { name = \"r\"; behaviour = \"type\";\n"                 \
	"  types = ( { type = 1; route = \"victim\"; },\n"                     \
	"            { type = 2; route = \"bystander\"; } );\n"               \
	"  routes = (\n"                                                       \
	"    { name = \"victim\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"1\"]; },\n" \
	"    { name = \"bystander\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"2\"]; } );\n" \
	"} );\n"

/* What "at once" means here, against a call timeout of CALL_MS. */
#define CALL_MS 10000
#define AT_ONCE_MS 2000

struct ctx {
	struct shmr_test_client c;
	struct shmr_pid router;
};

static int group_setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));

	if (!x || shmr_test_client_start(&x->c, "trust", CONF, 1) < 0)
		return -1;
	if (shmr_lookup(x->c.d, "r", &x->router) < 0)
		return -1;
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *x = *state;
	int left = shmr_test_client_stop(&x->c);

	free(x);
	return left == 0 ? 0 : -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int stats_call(struct ctx *x, uint32_t type, struct shmr_test_stats *st)
{
	return shmr_call(x->c.ep, x->router, type, 0, "stats", 5, st,
			 sizeof(*st), CALL_MS);
}

static long long inspect(struct ctx *x, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	if (shmr_test_ctl(&x->c.app, "INSPECT r", ans, sizeof(ans)) < 0)
		return -1;
	return shmr_test_value(ans, key);
}

/* Hole 5: a call to slot 9999 (no such slot) or to a free slot. */
static void test_call_unknown_slot_fails_at_once(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid nosuch = { 9999, 1 };
	struct shmr_pid free_slot = { 0, 1 };
	char buf[8];
	int64_t t0;

	/* A slot nobody holds (the endpoint table, as published). */
	while (atomic_load(&shmr_ep_at(x->c.base, free_slot.slot)->state) !=
	       SHMR_EP_FREE)
		free_slot.slot++;
	assert_true(free_slot.slot < SHMR_MAX_ENDPOINTS);

	t0 = now_ms();
	assert_int_equal(shmr_call(x->c.ep, nosuch, 1, 0, "x", 1, buf,
				   sizeof(buf), CALL_MS),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_true(now_ms() - t0 < AT_ONCE_MS);
	t0 = now_ms();
	assert_int_equal(shmr_call(x->c.ep, free_slot, 1, 0, "x", 1, buf,
				   sizeof(buf), CALL_MS),
			 -SHMR_E_PROCESS_UNKNOWN);
	assert_true(now_ms() - t0 < AT_ONCE_MS);
}

/* A fresh client, in a child: attach, look up "r", and with @p open an
 * endpoint first (an OPEN publishes a new spec).  Exit status: 0 found,
 * 1 -SHMR_E_TIMEOUT (as wanted while the spec is unreadable), 2 could not
 * attach or open, 3 another error. */
static int child_lookup(const struct ctx *x, int open)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep = NULL;
	struct shmr_pid p;
	int rc;

	if (shmr_attach_path(x->c.app.sock, &d) < 0)
		return 2;
	if (open && shmr_endpoint_open(d, &ep) < 0)
		return 2;
	rc = shmr_lookup(d, "r", &p);
	if (ep)
		shmr_endpoint_close(ep);
	shmr_detach(d);
	if (rc == 0)
		return 0;
	return rc == -SHMR_E_TIMEOUT ? 1 : 3;
}

/* Run child_lookup(@p open); its exit status, or -1 when it had not finished
 * after @p ms (killed). */
static int lookup_in_child(const struct ctx *x, int open, int ms)
{
	int status;
	pid_t pid = fork(), w = 0;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_lookup(x, open));
	for (int i = 0; i < ms / 10 && w == 0; i++) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == 0)
			usleep(10000);
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

/* Hole 2: one store to the spec's sequence word. */
static void test_odd_spec_seq_bounded(void **state)
{
	struct ctx *x = *state;
	struct shmr_spec *s = shmr_spec_of(x->c.base);
	struct shmr_test_stats st;
	uint64_t seq;
	int64_t t0;

	assert_int_equal(lookup_in_child(x, 1, 15000), 0);
	seq = atomic_load(&s->seq);
	atomic_store(&s->seq, seq | 1);

	/* A new client: an error within the bound, not a hang. */
	t0 = now_ms();
	assert_int_equal(lookup_in_child(x, 0, 15000), 1);
	assert_true(now_ms() - t0 < 10000);
	/* An old client keeps working. */
	assert_int_equal(stats_call(x, 2, &st), (int)sizeof(st));

	/* The control plane owns the spec: its next publication (a name
	 * registered) just writes, and the spec is readable again. */
	assert_int_equal(shmr_register(x->c.ep, "trust-reg"), 0);
	assert_int_equal(atomic_load(&s->seq) & 1, 0);
	assert_int_equal(lookup_in_child(x, 1, 15000), 0);
	assert_int_equal(shmr_test_ctl(&x->c.app, "STATUS", (char[4096]){ 0 },
				       4096),
			 0);
}

struct restarted {
	struct ctx *x;
	long long old;
};

static int victim_restarted(void *arg)
{
	struct restarted *r = arg;
	long long now = inspect(r->x, "shmr:route:victim:os_pid");

	return now > 0 && now != r->old;
}

/* Hole 1: a worker that corrupts its lanes and the header, then dies. */
static void test_scribbled_lanes_then_exit(void **state)
{
	struct ctx *x = *state;
	struct shmr_domain_hdr *h = shmr_hdr(x->c.base);
	uint32_t nlc = h->nlcores;
	struct shmr_test_stats st;
	struct shmr_pid victim;
	struct restarted r = { x, 0 };
	pid_t control = x->c.app.control;
	int restarted, status;
	char ans[SHMR_PROTO_MAX];

	assert_int_equal(stats_call(x, 1, &st), (int)sizeof(st));
	assert_int_equal(stats_call(x, 2, &st), (int)sizeof(st));
	assert_int_equal(shmr_test_route_pid(&x->c.app, "r", "victim",
					     &victim),
			 0);
	r.old = inspect(x, "shmr:route:victim:os_pid");
	assert_true(r.old > 0);

	/* What the worker can write: every lane of its slot (geometry and
	 * indices); and, through root's writable mapping (a worker's faults,
	 * test_daemon_memory_read_only), the header's nlcores.  Lane 0 keeps
	 * its geometry but gets an unfinished "burst" of a billion slots
	 * (its repair is bounded by the real capacity); the others also
	 * get the other side's index and a geometry that points far
	 * outside the domain (they are initialised again). */
	for (uint32_t i = 0; i < SHMR_LANES_PER_EP(nlc); i++) {
		struct rte_ring *l = shmr_lane_at(x->c.base, victim.slot, i);

		l->cons.head = l->cons.tail + 0x40000000u;
		if (i == 0)
			continue;
		l->prod.head = l->prod.tail + 0x40000000u;
		l->mask = 0xffffffffu;
		l->capacity = 0x7fffffffu;
		l->size = 0x80000000u;
	}
	h->nlcores = 100000;
	assert_int_equal(kill((pid_t)r.old, SIGKILL), 0);

	/* The control plane survives and restarts the route. */
	restarted = shmr_test_wait(victim_restarted, &r, 20000);
	if (waitpid(control, &status, WNOHANG) == control) {
		fprintf(stderr, "shmr-control gone: %s %d\n",
			WIFSIGNALED(status) ? "signal" : "exit",
			WIFSIGNALED(status) ? WTERMSIG(status)
					    : WEXITSTATUS(status));
		shmr_test_app_set_control(&x->c.app, 0);
		fail();
	}
	assert_true(restarted);
	/* The header is the control plane's: it wrote its geometry back.
	 * Every lane but lane 0 was initialised again, and counted. */
	assert_int_equal(h->nlcores, nlc);
	assert_int_equal(shmr_test_ctl(&x->c.app, "STATUS", ans, sizeof(ans)),
			 0);
	assert_int_equal(shmr_test_value(ans, "lanes_reinit"),
			 SHMR_LANES_PER_EP(nlc) - 1);
	/* The bystander kept delivering, the new worker receives. */
	assert_int_equal(stats_call(x, 2, &st), (int)sizeof(st));
	assert_int_equal(stats_call(x, 1, &st), (int)sizeof(st));
	assert_int_equal(st.count, 0);
	assert_int_equal(shmr_send(x->c.ep, x->router, 1, 7, "m", 1), 0);
	assert_int_equal(stats_call(x, 1, &st), (int)sizeof(st));
	assert_int_equal(st.count, 1);
	assert_int_equal(st.misrouted, 0);
	/* And a new client can attach, open and look up. */
	assert_int_equal(lookup_in_child(x, 1, 15000), 0);
}

/* Does a store of one byte at @p addr (its own value back) fault?  In a
 * child: 1 it was killed by SIGSEGV, 0 the store landed, -1 otherwise. */
static int store_faults(const void *addr)
{
	_Atomic(uint8_t) *p = (_Atomic(uint8_t) *)(uintptr_t)addr;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* Relaxed, no partner: a probe of the mapping's permission,
		 * not a message; the store writes back what was read (an
		 * atomic access, so the compiler keeps both). */
		uint8_t v = atomic_load_explicit(p, memory_order_relaxed);

		/* CMocka catches SIGSEGV to report a crash: not here. */
		signal(SIGSEGV, SIG_DFL);
		atomic_store_explicit(p, v, memory_order_relaxed);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Mappings of @p domain's two files in this process, by permissions. */
struct maps {
	int dom_ro, dom_rw, lanes_rw;
};

static int maps_count(const char *domain, struct maps *c)
{
	char line[512], want_dom[96], want_lanes[96];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	memset(c, 0, sizeof(*c));
	/* "(deleted)" follows the name: compare with the space. */
	snprintf(want_dom, sizeof(want_dom), "memfd:%s ", domain);
	snprintf(want_lanes, sizeof(want_lanes), "memfd:%s.lanes ", domain);
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		const char *m = strstr(line, "memfd:");

		if (!m || sscanf(line, "%*s %7s", perms) != 1)
			continue;
		if (strncmp(m, want_dom, strlen(want_dom)) == 0) {
			if (strcmp(perms, "r--s") == 0)
				c->dom_ro++;
			else
				c->dom_rw++;
		} else if (strncmp(m, want_lanes, strlen(want_lanes)) == 0) {
			c->lanes_rw += strcmp(perms, "rw-s") == 0;
		}
	}
	fclose(f);
	return 0;
}

/* libshmr's own mappings of the domain, in a child that attaches: what
 * the attach added to /proc/self/maps is one read-only mapping of the
 * daemons' part and one read-write of the lanes. */
static int child_maps(const struct ctx *x, const char *domain)
{
	struct shmr_domain *d;
	struct maps before, after;

	if (maps_count(domain, &before) < 0)
		return 10;
	if (shmr_attach_path(x->c.app.sock, &d) < 0)
		return 11;
	if (maps_count(domain, &after) < 0)
		return 10;
	shmr_detach(d);
	if (after.dom_ro == before.dom_ro + 1 &&
	    after.dom_rw == before.dom_rw &&
	    after.lanes_rw == before.lanes_rw + 1)
		return 0;
	fprintf(stderr, "attach mapped %s: %d read-only, %d writable, %d "
		"lanes\n", domain, after.dom_ro - before.dom_ro,
		after.dom_rw - before.dom_rw, after.lanes_rw - before.lanes_rw);
	return 12;
}

/* A client of another user (nobody) that kept ATTACH's descriptors: it
 * cannot map the daemons' part writable nor open it again for writing. */
static int child_other_user(const struct ctx *x)
{
	struct shmr_proto_attached a;
	char path[64];
	int sock = shmr_proto_connect(x->c.app.sock), fd;

	if (sock < 0 || shmr_proto_attach(sock, &a) < 0)
		return 20;
	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return 21;
	if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, a.domain_fd,
		 0) != MAP_FAILED || errno != EACCES)
		return 22;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", a.domain_fd);
	fd = open(path, O_RDWR);
	if (fd >= 0 || errno != EACCES)
		return 23;
	/* The lanes it may write: that descriptor maps read-write. */
	if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, a.lanes_fd,
		 0) == MAP_FAILED)
		return 24;
	return 0;
}

static int in_child(int (*fn)(const struct ctx *, const char *),
		    const struct ctx *x, const char *arg)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		_exit(fn(x, arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static int other_user_fn(const struct ctx *x, const char *unused)
{
	(void)unused;
	return child_other_user(x);
}

/* The daemons' part is read-only for peers (issue 11). */
static void test_daemon_memory_read_only(void **state)
{
	struct ctx *x = *state;
	struct shmr_pid me = shmr_endpoint_pid(x->c.ep);
	size_t size;
	void *base;
	int sock;

	/* A peer's view, as ATTACH hands it to every client. */
	sock = shmr_proto_connect(x->c.app.sock);
	assert_true(sock >= 0);
	assert_int_equal(shmr_test_map_sock(sock, 0, &base, &size), 0);
	close(sock);
	struct shmr_domain_hdr *h = shmr_hdr(base);
	struct rte_ring *out = shmr_lane_at(base, me.slot,
					    SHMR_LANE_OUT(h->nlcores));

	assert_int_equal(store_faults(&h->magic), 1);
	assert_int_equal(store_faults(&h->nlcores), 1);
	assert_int_equal(
		store_faults(&shmr_ep_at(base, me.slot)->state),
		1);
	assert_int_equal(store_faults(&shmr_spec_of(base)->seq),
			 1);
	assert_int_equal(
		store_faults(&shmr_names_of(base)[0]),
		1);
	assert_int_equal(
		store_faults(&shmr_stats_of(base, 0)->forwarded),
		1);
	assert_int_equal(store_faults(shmr_ctl_lane(base)),
			 1);
	/* Nor can the mapping be made writable. */
	assert_int_equal(mprotect(base, 4096, PROT_READ | PROT_WRITE), -1);
	assert_int_equal(errno, EACCES);
	/* What it must write, it can: its lanes, its bell and busy line,
	 * the lcores' bells. */
	assert_int_equal(store_faults(&out->prod) /* its head word */, 0);
	assert_int_equal(
		store_faults(&shmr_ep_peer_at(base, me.slot)->busy),
		0);
	assert_int_equal(store_faults(shmr_lcore_bell(base, 0)),
			 0);
	/* libshmr maps it so itself; another user cannot undo it. */
	assert_int_equal(in_child(child_maps, x, h->name), 0);
	assert_int_equal(in_child(other_user_fn, x, NULL), 0);
	shmr_domain_unmap(base, size);
	/* And the appliance still routes. */
	struct shmr_test_stats st;
	assert_int_equal(stats_call(x, 2, &st), (int)sizeof(st));
}

/* Receive on @p ep in a child; its exit status: the number of messages
 * received whose payload is @p want (at most 100), 200 + an error. */
static int recv_in_child(struct shmr_endpoint *ep, const char *want)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		const struct shmr_msg *msgs[16];
		int good = 0, n;

		signal(SIGSEGV, SIG_DFL);
		while ((n = shmr_recv_burst(ep, msgs, 16, 300)) > 0)
			for (int i = 0; i < n; i++)
				good += msgs[i]->len == strlen(want) &&
					memcmp(msgs[i]->data, want,
					       msgs[i]->len) == 0;
		_exit(n < 0 ? 200 + (-n % 50) : good);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 300 + WTERMSIG(status);
}

/* A peer can write any endpoint's lanes (one file holds them all): what
 * it puts into another client's inbound lane, or does to its geometry,
 * must not crash that client or give it a slot it cannot trust. */
static void test_client_survives_scribbled_inbound(void **state)
{
	struct ctx *x = *state;
	struct shmr_endpoint *victim;
	struct shmr_pid v;
	unsigned char slot[SHMR_SLOT_MAX];
	struct shmr_msg *m = (struct shmr_msg *)slot;
	struct shmr_domain_hdr *h = shmr_hdr(x->c.base);
	struct rte_ring *in;
	uint32_t mask, size, head, tail;

	assert_int_equal(shmr_endpoint_open(x->c.d, &victim), 0);
	v = shmr_endpoint_pid(victim);
	in = shmr_lane_at(x->c.base, v.slot, 0);

	/* A slot of no kind, and one longer than a slot, put straight into
	 * its inbound lane, then a real message: it gets the real one. */
	memset(slot, 0, sizeof(slot));
	m->kind = 77;
	m->to = v;
	assert_int_equal(rte_ring_enqueue_burst_elem(in, slot, h->slot_size,
						     1, NULL),
			 1);
	m->kind = SHMR_KIND_SEND;
	m->len = 100000;
	assert_int_equal(rte_ring_enqueue_burst_elem(in, slot, h->slot_size,
						     1, NULL),
			 1);
	assert_int_equal(shmr_send(x->c.ep, v, 1, 0, "real", 4), 0);
	assert_int_equal(recv_in_child(victim, "real"), 1);

	/* Its inbound lane's geometry and indices written: a receive finds
	 * nothing it can use, and does not crash. */
	mask = in->mask;
	size = in->size;
	head = in->cons.head;
	tail = in->prod.tail;
	in->cons.head = in->cons.tail = 0x7ffffff0u;
	in->prod.head = in->prod.tail = 0x7ffffff8u;
	in->mask = 0xffffffffu;
	in->size = 0x80000000u;
	assert_int_equal(recv_in_child(victim, "real"), 0);
	in->mask = mask;
	in->size = size;
	in->cons.head = in->cons.tail = head;
	in->prod.head = in->prod.tail = tail;
	shmr_endpoint_close(victim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_survives_scribbled_inbound),
		cmocka_unit_test(test_daemon_memory_read_only),
		cmocka_unit_test(test_call_unknown_slot_fails_at_once),
		cmocka_unit_test(test_odd_spec_seq_bounded),
		cmocka_unit_test(test_scribbled_lanes_then_exit),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
