/*
 * What <shmr/shmr.h> promises, and the examples a worker author starts
 * from, held to it against the real appliance (shmr-control, the
 * dataplane, examples/echo_worker.c as route workers):
 *
 *   echo     the example echo worker answers a call whose payload is in
 *            the arena (shmr_call_buf()) with "<tag>:" and the payload,
 *            not the slot's reference: inline when that fits a slot, else
 *            in a buffer of its own; every buffer free afterwards
 *   client   the example client, answered with more than its reply
 *            buffer holds, prints what was copied and says the reply was
 *            cut (shmr_call() returns the whole length)
 *   keep     a second shmr_buf_keep() of one shared (broadcast) message
 *            is -EINVAL and copies nothing, for the receiver that copied
 *            the buffer and for the one that took it over
 *   drain    once shmr_route_drain() has returned, every call routed to
 *            the route gets -SHMR_E_DISABLED: the call waits until the
 *            dataplane routes by the new table (again and again, as the
 *            route is enabled and drained)
 *   errors   the codes the header lists: every bad registry, router or
 *            route name is -SHMR_E_NAME (control and non-ASCII bytes
 *            included), unregistering another endpoint's name
 *            -SHMR_E_PERM, a size over every arena class -SHMR_E_TOO_BIG
 *            (its text names the arena), a cpu list naming cpus the
 *            machine lacks the start's -EINVAL and one that is no list
 *            -SHMR_E_PROTO
 *
 * Waits are bounded retries on real conditions, never fixed sleeps, and
 * nothing is asserted about time.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/arena.h>
#include <shmr/domain.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "arena_checks.h"

#define CALL_MS 10000
#define WAIT_MS 10000
#define TAG "echo" /* the echo worker's tag: its route's name */

/* A slot of 128 bytes holds 80 of payload, so an answer goes inline or
 * in a buffer by its size.  bc broadcasts to two endpoints of ours. */
static const char conf[] =
	"slot_size = 128;\n"
	"arena = { classes = [ \"256:8\", \"1K:4\" ]; };\n"
	"routers = (\n"
	"  { name = \"ev\"; behaviour = \"type\";\n"
	"    types = ( { type = 1; route = \"echo\"; },\n"
	"              { type = 3; route = \"d\"; } );\n"
	"    routes = ( { name = \"echo\"; program = \"shmr-echo-worker\"; },\n"
	"               { name = \"d\"; program = \"shmr-echo-worker\"; } ); },\n"
	"  { name = \"bc\"; behaviour = \"broadcast\";\n"
	"    routees = [ \"k1\", \"k2\" ]; }\n"
	");\n";

struct ctx {
	struct shmr_test_client c;
	struct shmr_arena_view v;
	struct shmr_pid ev;
};

static int group_setup(void **state)
{
	struct ctx *x = client_ctx_start(sizeof(*x), "contracts", conf, 0);

	shmr_arena_view_init(&x->v, x->c.base);
	x->ev = client_lookup(&x->c, "ev");
	*state = x;
	return 0;
}

static int group_teardown(void **state)
{
	client_ctx_stop(*state);
	return 0;
}

/* A call of @p len bytes (in a buffer when @p in_buf) to the echo route:
 * the answer is TAG ":" and those bytes. */
static void echo_call(struct ctx *x, size_t len, int in_buf)
{
	unsigned char want[1100], got[1100];
	size_t tl = strlen(TAG);
	int rc;

	assert_true(tl + 1 + len <= sizeof(want));
	memcpy(want, TAG ":", tl + 1);
	arena_fill(want + tl + 1, len, (unsigned)len);
	if (in_buf) {
		struct shmr_buf b;

		assert_int_equal(shmr_buf_alloc(x->c.ep, len, &b), 0);
		memcpy(b.data, want + tl + 1, len);
		rc = shmr_call_buf(x->c.ep, x->ev, 1, 0, &b, len, got,
				   sizeof(got), CALL_MS);
	} else {
		rc = shmr_call(x->c.ep, x->ev, 1, 0, want + tl + 1, len, got,
			       sizeof(got), CALL_MS);
	}
	if (rc != (int)(tl + 1 + len))
		fail_msg("%zu bytes%s: answer of %d (%s)", len,
			 in_buf ? " in a buffer" : "", rc,
			 rc < 0 ? shmr_strerror(rc) : "bytes");
	if (memcmp(got, want, tl + 1 + len) != 0)
		fail_msg("%zu bytes%s: the answer is not \"" TAG
			 ":\" and the payload",
			 len, in_buf ? " in a buffer" : "");
}

static void test_echo_answers_arena_payload(void **state)
{
	struct ctx *x = *state;

	/* Inline both ways; in a buffer, answered inline (65 bytes fit
	 * the slot's 80) and in buffers of each class. */
	echo_call(x, 2, 0);
	echo_call(x, 60, 1);
	echo_call(x, 200, 1);
	echo_call(x, 1000, 1);
	arena_assert_free(&x->v);
}

static int name_found(void *arg)
{
	struct ctx *x = arg;
	struct shmr_pid p;

	return shmr_lookup(x->c.d, "long", &p) == 0;
}

/* An answer of 306 bytes (a tag of 300) to shmr-example-client, whose
 * buffer holds 255: it prints those and says the answer was cut. */
static void test_client_says_reply_cut(void **state)
{
	struct ctx *x = *state;
	char tag[301], out[4096];
	char *argv[] = { "shmr-example-client", "--domain", x->c.app.domain,
			 "--router", "long", "--count", "0", NULL };
	pid_t pid;
	int status;

	memset(tag, 't', 300);
	tag[300] = '\0';
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("shmr-echo-worker", "shmr-echo-worker", "--domain",
		       x->c.app.domain, "--name", "long", "--tag", tag,
		       (char *)NULL);
		_exit(127);
	}
	assert_true(shmr_test_wait(name_found, x, WAIT_MS));
	status = shmr_test_run(argv, out, sizeof(out));
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	if (status != 0 ||
	    !strstr(out, "(cut: the first 255 of its 306 bytes)") ||
	    !strstr(out, "call answered \"tttt"))
		fail_msg("shmr-example-client exited %d:\n%s", status, out);
	arena_assert_free(&x->v);
}

/* Keep @p m twice on @p ep: the first keep is a buffer of its bytes, the
 * second -EINVAL with no buffer more in use. */
static void keep_twice(struct ctx *x, struct shmr_endpoint *ep,
		       const struct shmr_msg *m, const unsigned char *want,
		       struct shmr_buf *kept)
{
	struct shmr_buf again;
	uint32_t used;

	assert_int_equal(shmr_buf_keep(ep, m, kept), 0);
	assert_memory_equal(kept->data, want, 100);
	used = shmr_arena_in_use_all(&x->v);
	assert_int_equal(shmr_buf_keep(ep, m, &again), -EINVAL);
	assert_null(again.data);
	assert_int_equal(shmr_arena_in_use_all(&x->v), used);
}

static void test_keep_twice_refused(void **state)
{
	struct ctx *x = *state;
	struct shmr_endpoint *k[2];
	struct shmr_buf b, kept[2];
	const struct shmr_msg *m;
	unsigned char want[100];
	struct shmr_pid bc = client_lookup(&x->c, "bc");

	for (int i = 0; i < 2; i++) {
		assert_int_equal(shmr_endpoint_open(x->c.d, &k[i]), 0);
		assert_int_equal(shmr_register(k[i], i ? "k2" : "k1"), 0);
	}
	arena_fill(want, sizeof(want), 77);
	assert_int_equal(shmr_buf_alloc(x->c.ep, sizeof(want), &b), 0);
	memcpy(b.data, want, sizeof(want));
	assert_int_equal(shmr_send_buf(x->c.ep, bc, 2, 7, &b, sizeof(want)),
			 0);
	/* Both copies share the one buffer: each receiver keeps a copy of
	 * its own (the other still holds a reference). */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(shmr_recv_burst(k[i], &m, 1, CALL_MS), 1);
		assert_true(m->flags & SHMR_F_ARENA);
		keep_twice(x, k[i], m, want, &kept[i]);
	}
	/* The shared buffer and one copy each, nothing more. */
	assert_int_equal(shmr_arena_in_use_all(&x->v), 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(shmr_buf_release(k[i], &kept[i]), 0);
		assert_int_equal(shmr_recv_burst(k[i], &m, 1, 0), 0);
	}
	arena_assert_free(&x->v);

	/* A sole copy is taken over, not copied: kept once only too. */
	assert_int_equal(shmr_buf_alloc(x->c.ep, sizeof(want), &b), 0);
	memcpy(b.data, want, sizeof(want));
	assert_int_equal(shmr_send_buf(x->c.ep, bc, 2, 8, &b, sizeof(want)),
			 0);
	assert_int_equal(shmr_recv_burst(k[0], &m, 1, CALL_MS), 1);
	assert_int_equal(shmr_recv_burst(k[0], &m, 1, 0), 0); /* given back */
	assert_int_equal(shmr_recv_burst(k[1], &m, 1, CALL_MS), 1);
	keep_twice(x, k[1], m, want, &kept[1]);
	assert_int_equal(shmr_arena_in_use_all(&x->v), 1);
	assert_int_equal(shmr_buf_release(k[1], &kept[1]), 0);
	assert_int_equal(shmr_recv_burst(k[1], &m, 1, 0), 0);
	arena_assert_free(&x->v);
	for (int i = 0; i < 2; i++)
		assert_int_equal(shmr_endpoint_close(k[i]), 0);
}

/*
 * Bursts of sends arrive as they were sent: every header field and every
 * payload byte, for each payload length the send writes its own way (none,
 * a few bytes, the 8 and 16 of a key or two, and a full slot), over enough
 * bursts of an odd size that the sender's and the receiver's lanes wrap
 * inside a burst.
 */
#define WHOLE_BURST 31
#define WHOLE_ROUNDS 80 /* 2480 sends: each lane (1024 slots) wraps */
static void test_burst_sends_arrive_whole(void **state)
{
	struct ctx *x = *state;
	static const uint32_t lens[] = { 0, 3, 8, 12, 16, 8, 80 };
	static unsigned char pay[WHOLE_BURST][80];
	struct shmr_out out[WHOLE_BURST];
	const struct shmr_msg *m[WHOLE_BURST];
	struct shmr_pid me = shmr_endpoint_pid(x->c.ep), to;
	struct shmr_endpoint *k;
	uint64_t seq = 0;

	assert_int_equal(shmr_payload_max(x->c.d), 80);
	assert_int_equal(shmr_endpoint_open(x->c.d, &k), 0);
	to = shmr_endpoint_pid(k);
	for (int r = 0; r < WHOLE_ROUNDS; r++) {
		unsigned got = 0;

		for (unsigned i = 0; i < WHOLE_BURST; i++) {
			uint64_t s = seq + i;
			uint32_t len = lens[s % 7];

			for (uint32_t b = 0; b < len; b++)
				pay[i][b] = (unsigned char)(s * 7 + b);
			out[i] = (struct shmr_out){ to, (uint32_t)(s % 5) + 1,
						    s * 0x9e3779b97f4a7c15ull,
						    pay[i], len };
		}
		assert_int_equal(shmr_send_burst(x->c.ep, out, WHOLE_BURST),
				 WHOLE_BURST);
		while (got < WHOLE_BURST) {
			int n = shmr_recv_burst(k, m, WHOLE_BURST - got,
						CALL_MS);

			assert_true(n > 0);
			for (int j = 0; j < n; j++, got++) {
				uint64_t s = seq + got;
				uint32_t len = lens[s % 7];

				if (m[j]->kind != SHMR_KIND_SEND ||
				    m[j]->type != (uint32_t)(s % 5) + 1 ||
				    m[j]->key != s * 0x9e3779b97f4a7c15ull ||
				    m[j]->len != len || m[j]->status != 0 ||
				    m[j]->priority != SHMR_PRIO_NORMAL ||
				    m[j]->from.slot != me.slot ||
				    m[j]->from.gen != me.gen ||
				    m[j]->to.slot != to.slot ||
				    m[j]->to.gen != to.gen ||
				    (m[j]->flags & ~SHMR_F_STAMPED) != 0)
					fail_msg("send %llu (%u bytes): kind %u "
						 "type %u key %llx len %u "
						 "status %d flags %#x from %u.%u",
						 (unsigned long long)s, len,
						 m[j]->kind, m[j]->type,
						 (unsigned long long)m[j]->key,
						 m[j]->len, m[j]->status,
						 m[j]->flags, m[j]->from.slot,
						 m[j]->from.gen);
				for (uint32_t b = 0; b < len; b++)
					if (m[j]->data[b] !=
					    (unsigned char)(s * 7 + b))
						fail_msg("send %llu: byte %u of "
							 "%u differs",
							 (unsigned long long)s,
							 b, len);
			}
		}
		seq += WHOLE_BURST;
	}
	assert_int_equal(shmr_recv_burst(k, m, 1, 0), 0);
	assert_int_equal(shmr_endpoint_close(k), 0);
}

struct enable_wait {
	struct ctx *x;
	int rc;
};

/* Enable d once its drained worker has gone (until then: busy). */
static int enabled(void *arg)
{
	struct enable_wait *w = arg;

	w->rc = shmr_route_enable(w->x->c.d, "ev", "d");
	return w->rc != -SHMR_E_BUSY;
}

static void test_drain_refuses_at_once(void **state)
{
	struct ctx *x = *state;
	char got[64];

	for (int i = 0; i < 8; i++) {
		struct enable_wait w = { x, 0 };

		assert_true(shmr_test_wait(enabled, &w, WAIT_MS));
		assert_int_equal(w.rc, 0);
		assert_int_equal(shmr_call(x->c.ep, x->ev, 3, 0, "c", 1, got,
					   sizeof(got), CALL_MS),
				 3);
		assert_memory_equal(got, "d:c", 3);
		assert_int_equal(shmr_route_drain(x->c.d, "ev", "d"), 0);
		for (int j = 0; j < 3; j++) {
			int rc = shmr_call(x->c.ep, x->ev, 3, 0, "c", 1, got,
					   sizeof(got), CALL_MS);

			if (rc != -SHMR_E_DISABLED)
				fail_msg("round %d, call %d after the drain: "
					 "%d (%s)",
					 i, j, rc,
					 rc < 0 ? shmr_strerror(rc)
						: "answered");
		}
	}
}

static void test_error_codes(void **state)
{
	struct ctx *x = *state;
	static const char *const bad[] = { "a*b", "a\rb", "a\001b",
					   "\xc3\xa9t\xc3\xa9", "a b", "",
					   "a/b" };
	struct shmr_endpoint *other;
	struct shmr_buf b;
	int rc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = shmr_register(x->c.ep, bad[i]);
		if (rc != -SHMR_E_NAME)
			fail_msg("register of bad name %zu: %d (%s)", i, rc,
				 shmr_strerror(rc));
		assert_int_equal(shmr_unregister(x->c.ep, bad[i]),
				 -SHMR_E_NAME);
	}

	assert_int_equal(shmr_endpoint_open(x->c.d, &other), 0);
	assert_int_equal(shmr_register(x->c.ep, "mine"), 0);
	assert_int_equal(shmr_unregister(other, "mine"), -SHMR_E_PERM);
	assert_int_equal(shmr_unregister(x->c.ep, "mine"), 0);
	assert_int_equal(shmr_endpoint_close(other), 0);

	/* The route calls' names too (shmr.h: [A-Za-z0-9_.:-]{1,31}). */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = shmr_route_disable(x->c.d, "ev", bad[i]);
		if (rc != -SHMR_E_NAME)
			fail_msg("disable of bad route name %zu: %d (%s)", i,
				 rc, shmr_strerror(rc));
		assert_int_equal(shmr_route_enable(x->c.d, bad[i], "echo"),
				 -SHMR_E_NAME);
	}

	rc = shmr_buf_alloc(x->c.ep, 2000, &b);
	assert_int_equal(rc, -SHMR_E_TOO_BIG);
	assert_null(b.data);
	assert_non_null(strstr(shmr_strerror(rc), "arena"));

	/* A list of cpus no machine has: the worker cannot be pinned. */
	assert_int_equal(shmr_route_add(x->c.d, "ev", "p1", "shmr-echo-worker",
					NULL, 0, "4095"),
			 -EINVAL);
	assert_int_equal(shmr_route_add(x->c.d, "ev", "p2", "shmr-echo-worker",
					NULL, 0, "garbage"),
			 -SHMR_E_PROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_answers_arena_payload),
		cmocka_unit_test(test_client_says_reply_cut),
		cmocka_unit_test(test_keep_twice_refused),
		cmocka_unit_test(test_drain_refuses_at_once),
		cmocka_unit_test(test_error_codes),
		cmocka_unit_test(test_burst_sends_arrive_whole),
	};
	return cmocka_run_group_tests_name("lib_contracts", tests, group_setup,
					   group_teardown);
}
