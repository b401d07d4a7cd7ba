/*
 * The two arena paths that refused buffers before (issue 15), against the
 * real appliance: shmr-control, the dataplane (two routing lcores) and
 * shmr-large-worker routes (tests/workers/large_worker.c), which answer
 * every call with its payload, byte for byte, in a buffer of their own
 * when it does not fit a slot.
 *
 *   lcores   a reply in a buffer polled by another routing lcore than the
 *            one whose collector owns the call (scatter-gather and
 *            tail-chopping) reaches its caller: calls from an endpoint on
 *            each lcore, through routers whose routees sit on either, at
 *            sizes inline and in every class; every reply byte for byte;
 *            each lcore's rx counter shows it polled replies beyond the
 *            calls it took (so replies crossed both ways); afterwards
 *            every buffer is free again
 *   admin    max- and high-priority sends and calls to a router with a
 *            1 MiB arena buffer reach its admin-path handlers
 *            (arena_handlers.c), which read the payload in place
 *            (ops->payload): the send's bytes, written out by the
 *            handler, are the payload byte for byte, a call is answered
 *            with the payload's length and hash; afterwards every buffer
 *            is free again (the control plane gave each back once the
 *            handler returned), and a router's own message (GetRoutees)
 *            in a buffer is still refused
 *   killed   the control plane killed -9 while a handler reads a buffer:
 *            the message dies with the handler (the admin path loses what
 *            its control plane held), and the new control plane's reclaim
 *            of the old one's admin endpoint frees its buffer, though its
 *            sender lives on: no slot refers to it and the sender is not
 *            sending it; the admin path then works again, payload and all
 *   closed   a caller closed with its reply, in its worker's buffer, unread
 *            in its lane: the buffer goes back, the worker living on
 *
 * Waits are bounded retries on real conditions, never fixed sleeps, and
 * nothing is asserted about time.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/arena.h>
#include <shmr/domain.h>
#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "arena_checks.h"
#include "large_buf.h"
#include "test_worker.h"

#define CALL_MS 10000
#define BIG (1u << 20) /* the largest class */
#define NLCORES 2u

/* Routes by name so the test knows where each routee sits (endpoint slot
 * modulo the lcores: the dataplane's poll lists).  Tail-chopping's
 * interval is its deadline: no later try, the first routee's reply is
 * the one. */
static const char conf[] =
	"lcores = 2;\n"
	"arena = { classes = [ \"4K:16\", \"64K:16\", \"1M:16\" ]; };\n"
	"routers = (\n"
	"  { name = \"sg1\"; behaviour = \"scatter-gather\"; within_ms = 5000;\n"
	"    routes = ( { name = \"w\"; program = \"shmr-large-worker\"; } ); },\n"
	"  { name = \"sg2\"; behaviour = \"scatter-gather\"; within_ms = 5000;\n"
	"    routes = ( { name = \"a\"; program = \"shmr-large-worker\"; },\n"
	"               { name = \"b\"; program = \"shmr-large-worker\"; } ); },\n"
	"  { name = \"tc1\"; behaviour = \"tail-chopping\"; within_ms = 5000;\n"
	"    interval_ms = 5000;\n"
	"    routes = ( { name = \"w\"; program = \"shmr-large-worker\"; } ); },\n"
	"  { name = \"tc2\"; behaviour = \"tail-chopping\"; within_ms = 5000;\n"
	"    interval_ms = 5000;\n"
	"    routes = ( { name = \"a\"; program = \"shmr-large-worker\"; },\n"
	"               { name = \"b\"; program = \"shmr-large-worker\"; } ); }\n"
	");\n";

static const char *const routers[] = { "sg1", "sg2", "tc1", "tc2" };

struct ctx {
	struct shmr_test_client c;
	struct shmr_arena_view v;
	unsigned char *want, *got;
	/* A caller endpoint polled by each lcore (ours), and those we
	 * opened to find them. */
	struct shmr_endpoint *caller[NLCORES];
	struct shmr_endpoint *opened[8];
	unsigned nopened;
};

static int group_setup(void **state)
{
	struct ctx *x = client_ctx_start(sizeof(*x), "arenapaths", conf, 0);

	shmr_arena_view_init(&x->v, x->c.base);
	assert_int_equal(shmr_hdr(x->c.base)->nlcores, NLCORES);
	x->want = malloc(BIG);
	x->got = malloc(BIG);
	assert_non_null(x->want);
	assert_non_null(x->got);
	/* The client's endpoint, then more until each lcore polls one. */
	x->caller[shmr_endpoint_pid(x->c.ep).slot % NLCORES] = x->c.ep;
	while (!x->caller[0] || !x->caller[1]) {
		struct shmr_endpoint *ep;

		assert_true(x->nopened < 8);
		assert_int_equal(shmr_endpoint_open(x->c.d, &ep), 0);
		x->opened[x->nopened++] = ep;
		if (!x->caller[shmr_endpoint_pid(ep).slot % NLCORES])
			x->caller[shmr_endpoint_pid(ep).slot % NLCORES] = ep;
	}
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *x = *state;

	for (unsigned i = 0; i < x->nopened; i++)
		assert_int_equal(shmr_endpoint_close(x->opened[i]), 0);
	free(x->want);
	free(x->got);
	client_ctx_stop(x);
	return 0;
}

/* Slots lcore @p l took from outbound lanes so far. */
static uint64_t rx_of(const struct ctx *x, uint32_t l)
{
	/* Relaxed: a counter, read after the calls it counts returned. */
	return atomic_load_explicit(&shmr_stats_of(x->c.base, l)->rx,
				    memory_order_relaxed);
}

/* One call of @p len bytes from @p ep through @p router, byte for byte
 * back. */
static void call_size(struct ctx *x, struct shmr_endpoint *ep,
		      const char *router, size_t len, unsigned seed)
{
	struct shmr_pid to = client_lookup(&x->c, router);
	struct shmr_buf b;
	int rc;

	assert_int_equal(large_alloc_wait(ep, len, &b), 0);
	arena_fill(x->want, len, seed);
	memcpy(b.data, x->want, len);
	rc = shmr_call_buf(ep, to, 1, seed, &b, len, x->got, BIG, CALL_MS);
	if (rc != (int)len)
		fail_msg("%s from endpoint %u (lcore %u): %zu bytes: call "
			 "returned %d (%s)",
			 router, shmr_endpoint_pid(ep).slot,
			 shmr_endpoint_pid(ep).slot % NLCORES, len, rc,
			 rc < 0 ? shmr_strerror(rc) : "short");
	if (memcmp(x->got, x->want, len) != 0)
		fail_msg("%s: %zu bytes: the reply differs", router, len);
}

struct rx_want {
	const struct ctx *x;
	uint64_t at_least[NLCORES];
};

static int rx_reached(void *arg)
{
	const struct rx_want *w = arg;

	for (uint32_t l = 0; l < NLCORES; l++)
		if (rx_of(w->x, l) < w->at_least[l])
			return 0;
	return 1;
}

static void test_replies_cross_lcores(void **state)
{
	static const size_t sizes[] = { 100, 3000, 4097, 65536, 65537, BIG };
	struct ctx *x = *state;
	struct rx_want w = { x, { 0 } };
	unsigned seed = 1, calls[NLCORES] = { 0 };
	uint32_t routee_lcores = 0;

	/* Where the routees sit: on both lcores, so both poll replies. */
	routee_lcores |= 1u << client_route_pid(&x->c, "sg1", "w").slot % NLCORES;
	routee_lcores |= 1u << client_route_pid(&x->c, "sg2", "a").slot % NLCORES;
	routee_lcores |= 1u << client_route_pid(&x->c, "sg2", "b").slot % NLCORES;
	routee_lcores |= 1u << client_route_pid(&x->c, "tc1", "w").slot % NLCORES;
	routee_lcores |= 1u << client_route_pid(&x->c, "tc2", "a").slot % NLCORES;
	routee_lcores |= 1u << client_route_pid(&x->c, "tc2", "b").slot % NLCORES;
	assert_int_equal(routee_lcores, 3);

	for (uint32_t l = 0; l < NLCORES; l++)
		w.at_least[l] = rx_of(x, l);
	/* Each caller's calls go through its own lcore's collector, so
	 * the replies of every routee on the other lcore cross. */
	for (unsigned rep = 0; rep < 4; rep++)
		for (uint32_t l = 0; l < NLCORES; l++)
			for (size_t r = 0; r < sizeof(routers) / sizeof(*routers);
			     r++)
				for (size_t s = 0;
				     s < sizeof(sizes) / sizeof(*sizes); s++) {
					call_size(x, x->caller[l], routers[r],
						  sizes[s], seed++);
					calls[l]++;
				}
	/* Each lcore took its caller's calls and, beyond them, replies
	 * (at least one reply per call goes to each routee's lcore, and
	 * the routees sit on both). */
	for (uint32_t l = 0; l < NLCORES; l++)
		w.at_least[l] += calls[l] + 1;
	if (!shmr_test_wait(rx_reached, &w, 10000))
		fail_msg("rx: lcore 0 %llu, lcore 1 %llu, wanted %llu, %llu",
			 (unsigned long long)rx_of(x, 0),
			 (unsigned long long)rx_of(x, 1),
			 (unsigned long long)w.at_least[0],
			 (unsigned long long)w.at_least[1]);
	/* Nothing was refused for the crossing: no router failed a call. */
	for (size_t r = 0; r < sizeof(routers) / sizeof(*routers); r++) {
		char ans[SHMR_PROTO_MAX];

		assert_int_equal(client_inspect(&x->c, routers[r], ans,
						sizeof(ans), "shmr:failed"),
				 0);
	}
	/* The callers' last replies go at their next receive: one small
	 * inline call each lets them go. */
	for (uint32_t l = 0; l < NLCORES; l++)
		call_size(x, x->caller[l], "tc1", 10, seed++);
	arena_assert_free(&x->v);
}

/* ---- the admin path ------------------------------------------------ */

struct actx {
	struct shmr_test_client c;
	struct shmr_arena_view v;
	char dir[64], got[96];
	unsigned char *want, *back;
};

/* "gw": a worker that answers in buffers and holds its first burst at a
 * gate (a named pipe in the test's directory) until the test opens it. */
static const char admin_conf[] =
	"arena = { classes = [ \"4K:16\", \"1M:4\" ]; };\n"
	"routers = ( { name = \"adm\"; behaviour = \"round-robin\";\n"
	"  handlers = \"%s\"; handlers_arg = \"%s\";\n"
	"  routes = ( { name = \"w\"; program = \"shmr-large-worker\"; } ); },\n"
	"  { name = \"gw\"; behaviour = \"round-robin\";\n"
	"  routes = ( { name = \"g\"; program = \"shmr-test-worker\";\n"
	"    args = [ \"--reply-buf\", \"1\", \"--gate\", \"%s/gate\",\n"
	"             \"--gate-count\", \"1\" ]; } ); } );\n";

/* The gate of route "g" (admin_conf). */
static char x_gate_path[96];

static int admin_setup(void **state)
{
	char dir[] = "/tmp/shmr-arenaadm-XXXXXX", conf[1024];
	struct actx *x;

	assert_non_null(mkdtemp(dir));
	snprintf(x_gate_path, sizeof(x_gate_path), "%s/gate", dir);
	assert_int_equal(mkfifo(x_gate_path, 0600), 0);
	snprintf(conf, sizeof(conf), admin_conf, getenv("SHMR_ARENA_HANDLERS"),
		 dir, dir);
	x = client_ctx_start(sizeof(*x), "arenaadm", conf, 0);
	memcpy(x->dir, dir, sizeof(dir));
	snprintf(x->got, sizeof(x->got), "%s/got", dir);
	shmr_arena_view_init(&x->v, x->c.base);
	/* What we send, then what the handler wrote back. */
	x->want = malloc(2 * (size_t)BIG);
	assert_non_null(x->want);
	x->back = x->want + BIG;
	*state = x;
	return 0;
}

static int admin_teardown(void **state)
{
	struct actx *x = *state;
	char tmp[128];

	unlink(x->got);
	snprintf(tmp, sizeof(tmp), "%s.tmp", x->got);
	unlink(tmp);
	unlink(x_gate_path);
	rmdir(x->dir);
	free(x->want);
	client_ctx_stop(x);
	return 0;
}

static int got_written(void *arg)
{
	return access(((struct actx *)arg)->got, F_OK) == 0;
}

/* What the handler wrote for the last send: its length, the bytes in
 * x->back. */
static size_t read_got(struct actx *x)
{
	FILE *f = fopen(x->got, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(x->back, 1, BIG, f);
	fclose(f);
	return n;
}

static uint64_t fnv(const unsigned char *p, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void test_admin_payload_in_buffer(void **state)
{
	static const enum shmr_priority prios[] = { SHMR_PRIO_MAX,
						    SHMR_PRIO_HIGH };
	static const size_t sizes[] = { BIG, 3000, BIG - 1 };
	struct actx *x = *state;
	struct shmr_pid adm = client_lookup(&x->c, "adm");
	unsigned seed = 7;

	for (size_t p = 0; p < sizeof(prios) / sizeof(*prios); p++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
			size_t len = sizes[s];
			uint64_t ans[2];
			struct shmr_buf b;
			int rc;

			/* A send: the handler writes what it read. */
			unlink(x->got);
			assert_int_equal(large_alloc_wait(x->c.ep, len, &b), 0);
			arena_fill(x->want, len, seed);
			memcpy(b.data, x->want, len);
			assert_int_equal(shmr_send_buf_prio(x->c.ep, adm,
							    prios[p], 7, seed,
							    &b, len),
					 0);
			if (!shmr_test_wait(got_written, x, 10000))
				fail_msg("priority %d, %zu bytes: the handler "
					 "never saw the payload",
					 (int)prios[p], len);
			assert_int_equal(read_got(x), len);
			if (memcmp(x->back, x->want, len) != 0)
				fail_msg("priority %d, %zu bytes: the handler "
					 "read other bytes",
					 (int)prios[p], len);
			seed++;
			/* A call: answered with the length and hash. */
			assert_int_equal(large_alloc_wait(x->c.ep, len, &b), 0);
			arena_fill(x->want, len, seed);
			memcpy(b.data, x->want, len);
			rc = shmr_call_buf_prio(x->c.ep, adm, prios[p], 7, seed,
						&b, len, ans, sizeof(ans),
						CALL_MS);
			if (rc != (int)sizeof(ans))
				fail_msg("priority %d, %zu bytes: call "
					 "returned %d (%s)",
					 (int)prios[p], len, rc,
					 rc < 0 ? shmr_strerror(rc) : "short");
			assert_int_equal(ans[0], len);
			assert_true(ans[1] == fnv(x->want, len));
			seed++;
		}
	}
	/* The router's own messages still refuse a buffer. */
	{
		struct shmr_buf b;
		char names[256];

		assert_int_equal(large_alloc_wait(x->c.ep, 8, &b), 0);
		memcpy(b.data, "routees", 8);
		assert_int_equal(shmr_call_buf(x->c.ep, adm,
					       SHMR_TYPE_GET_ROUTEES, 0, &b, 8,
					       names, sizeof(names), CALL_MS),
				 -SHMR_E_NOT_ALLOWED);
	}
	/* Every buffer back: the control plane gave each back after its
	 * handler returned, once (a second give-back would find the word
	 * changed; a missing one would leave it in use). */
	arena_assert_free(&x->v);
}

static int held_written(void *arg)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/held", ((struct actx *)arg)->dir);
	return access(path, F_OK) == 0;
}

static void test_admin_control_killed_in_handler(void **state)
{
	struct actx *x = *state;
	struct shmr_pid adm = client_lookup(&x->c, "adm");
	struct shmr_endpoint *snd;
	struct shmr_buf b;
	uint64_t ans[2];

	arena_assert_free(&x->v);
	assert_int_equal(shmr_endpoint_open(x->c.d, &snd), 0);
	assert_int_equal(large_alloc_wait(snd, BIG, &b), 0);
	arena_fill(b.data, BIG, 99);
	/* Type 9: the handler holds the control plane inside the hook. */
	assert_int_equal(shmr_send_buf_prio(snd, adm, SHMR_PRIO_MAX, 9, 0, &b,
					    BIG),
			 0);
	if (!shmr_test_wait(held_written, x, 10000))
		fail_msg("the handler never got the held message");
	assert_int_equal(shmr_test_app_kill_control(&x->c.app), 0);
	assert_int_equal(shmr_test_app_restart_control(&x->c.app, 0), 0);
	/* Freed at the adoption (no leak while its sender lives on). */
	arena_assert_free(&x->v);
	/* The admin path works again, payload and all. */
	assert_int_equal(large_alloc_wait(x->c.ep, BIG, &b), 0);
	arena_fill(x->want, BIG, 100);
	memcpy(b.data, x->want, BIG);
	assert_int_equal(shmr_call_buf_prio(x->c.ep, adm, SHMR_PRIO_MAX, 7, 0,
					    &b, BIG, ans, sizeof(ans),
					    CALL_MS),
			 (int)sizeof(ans));
	assert_int_equal(ans[0], BIG);
	assert_true(ans[1] == fnv(x->want, BIG));
	assert_int_equal(shmr_endpoint_close(snd), 0);
	arena_assert_free(&x->v);
}

struct lane_wait {
	struct actx *x;
	struct shmr_pid pid;
};

/* Endpoint w->pid's inbound lanes hold a slot nobody has read. */
static int reply_waiting(void *arg)
{
	struct lane_wait *w = arg;
	struct shmr_domain_hdr *h = shmr_hdr(w->x->c.base);

	for (uint32_t l = 0; l < h->nlcores; l++)
		if (shmr_lane_unconsumed(shmr_lane_at(w->x->c.base, w->pid.slot,
						      l),
					 h->lane_size) > 0)
			return 1;
	return 0;
}

/* A caller gone before its reply (in a buffer) came: nobody will read
 * the reply, and its buffer, its worker's, must not stay in use while
 * the worker lives on. */
static void test_reply_to_closed_caller(void **state)
{
	struct actx *x = *state;
	struct shmr_pid gw = client_lookup(&x->c, "gw");
	struct shmr_endpoint *caller;
	struct shmr_test_stats st;
	struct lane_wait w;
	int fd;

	arena_assert_free(&x->v);
	assert_int_equal(shmr_endpoint_open(x->c.d, &caller), 0);
	w = (struct lane_wait){ x, shmr_endpoint_pid(caller) };
	/* The worker holds the call at its gate past the caller's wait. */
	assert_int_equal(shmr_call(caller, gw, 1, 0, "x", 1, &st, sizeof(st),
				   200),
			 -SHMR_E_TIMEOUT);
	fd = open(x_gate_path, O_WRONLY);
	assert_true(fd >= 0);
	close(fd);
	if (!shmr_test_wait(reply_waiting, &w, 10000))
		fail_msg("the reply never reached the caller's lane");
	assert_int_equal(shmr_arena_in_use_all(&x->v), 1);
	assert_int_equal(shmr_endpoint_close(caller), 0);
	arena_assert_free(&x->v);
}

int main(void)
{
	const struct CMUnitTest lcores[] = {
		cmocka_unit_test(test_replies_cross_lcores),
	};
	const struct CMUnitTest admin[] = {
		cmocka_unit_test(test_admin_payload_in_buffer),
		cmocka_unit_test(test_admin_control_killed_in_handler),
		cmocka_unit_test(test_reply_to_closed_caller),
	};
	int failed = cmocka_run_group_tests_name("lcores", lcores, group_setup,
						 group_teardown);

	return failed + cmocka_run_group_tests_name("admin", admin,
						    admin_setup,
						    admin_teardown);
}
