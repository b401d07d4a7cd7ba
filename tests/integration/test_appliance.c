/*
 * The real appliance end to end: shmr-control, shmr-dataplane and three
 * shmr-test-worker routes on a private domain; this process is the client.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/proto_client.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CONF                                                                   \
	"lcores = 1;\npoll_mode = \"adaptive\";\n"                             \
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"            \
	"  types = ( { type = 1; route = \"a\"; }, { type = 2; route = \"b\"; },\n" \
	"            { type = 3; route = \"c\"; }, { type = 9; route = \"nosuch\"; },\n"                                  \
	"            { type = 5; route = \"ext\"; } );\n" \
	"  routes = (\n"                                                       \
	"    { name = \"a\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"1\"]; },\n" \
	"    { name = \"b\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"2\"]; },\n" \
	"    { name = \"c\"; program = \"shmr-test-worker\"; args = [\"--expect-type\", \"3\"]; } );\n" \
	"} );\n"

struct ctx {
	struct shmr_test_app app;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid router;
};

static int group_setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (shmr_test_app_start(&c->app, "appl", CONF) < 0)
		return -1;
	if (shmr_attach_path(c->app.sock, &c->d) < 0 ||
	    shmr_endpoint_open(c->d, &c->ep) < 0 ||
	    shmr_lookup(c->d, "events", &c->router) < 0)
		return -1;
	*state = c;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;

	shmr_endpoint_close(c->ep);
	shmr_detach(c->d);
	/* Nothing the appliance started may outlive its control plane. */
	int left = shmr_test_app_stop(&c->app);
	free(c);
	return left == 0 ? 0 : -1;
}

static struct shmr_test_stats stats_of(struct ctx *c, uint32_t type)
{
	struct shmr_test_stats st;
	int rc = shmr_call(c->ep, c->router, type, 0, "stats", 5, &st,
			   sizeof(st), 30000);

	assert_int_equal(rc, (int)sizeof(st));
	return st;
}

static long long inspect(struct ctx *c, const char *key)
{
	char ans[SHMR_PROTO_MAX];

	assert_int_equal(shmr_test_ctl(&c->app, "INSPECT events", ans,
				       sizeof(ans)),
			 0);
	return shmr_test_value(ans, key);
}

static void send_all(struct ctx *c, uint32_t type, uint64_t key)
{
	int rc;

	while ((rc = shmr_send(c->ep, c->router, type, key, &key,
			       sizeof(key))) == -EAGAIN)
		;
	assert_int_equal(rc, 0);
}

/* 1,000,000 messages by type reach exactly the right workers, From kept. */
static void test_million_by_type(void **state)
{
	struct ctx *c = *state;
	const uint64_t total = 1000000;
	struct shmr_out burst[32];
	uint64_t sent = 0, before[4];
	struct shmr_pid me = shmr_endpoint_pid(c->ep);

	for (uint32_t t = 1; t <= 3; t++)
		before[t] = stats_of(c, t).count;
	while (sent < total) {
		unsigned n = total - sent < 32 ? (unsigned)(total - sent) : 32;
		for (unsigned i = 0; i < n; i++)
			burst[i] = (struct shmr_out){
				.to = c->router,
				.type = (uint32_t)((sent + i) % 3) + 1,
				.key = sent + i,
				.data = NULL,
				.len = 0,
			};
		int rc = shmr_send_burst(c->ep, burst, n);
		assert_true(rc >= 0);
		sent += (uint64_t)rc;
	}
	/* A call travels the same lanes behind the sends: when it is
	 * answered, every send before it has been handled. */
	for (uint32_t t = 1; t <= 3; t++) {
		struct shmr_test_stats st = stats_of(c, t);
		uint64_t expect = total / 3 + (t <= total % 3 ? 1 : 0);

		assert_int_equal(st.count - before[t], expect);
		assert_int_equal(st.misrouted, 0);
		assert_int_equal(st.from_mismatch, 0);
		assert_int_equal(st.redelivered, 0);
		assert_int_equal(st.first_from.slot, me.slot);
		assert_int_equal(st.first_from.gen, me.gen);
	}
	assert_true(inspect(c, "shmr:forwarded") >= (long long)total);
}

/* 10,000 calls come back from the right worker, which saw our From/Ref. */
static void test_ten_thousand_calls(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid me = shmr_endpoint_pid(c->ep);
	const char *tags[] = { "a", "b", "c" };
	uint64_t last_ref = 0;

	for (int i = 0; i < 10000; i++) {
		struct shmr_test_stats st;
		int rc = shmr_call(c->ep, c->router, (uint32_t)(i % 3) + 1, i,
				   &i, sizeof(i), &st, sizeof(st), 30000);

		assert_int_equal(rc, (int)sizeof(st));
		assert_string_equal(st.tag, tags[i % 3]);
		assert_int_equal(st.last_call_from.slot, me.slot);
		assert_int_equal(st.last_call_from.gen, me.gen);
		/* Each call carries a fresh ref, preserved to the worker. */
		assert_true(st.last_ref != 0 && st.last_ref != last_ref);
		last_ref = st.last_ref;
	}
}

static int failed_reached(void *arg)
{
	struct ctx *c = ((void **)arg)[0];
	long long want = *(long long *)((void **)arg)[1];
	return inspect(c, "shmr:failed") >= want;
}

/* A name that resolves to nothing fails: the caller gets the reason, a
 * send is counted as failed. */
static void test_unknown_route(void **state)
{
	struct ctx *c = *state;
	char buf[8];
	long long failed = inspect(c, "shmr:failed"), want;
	void *arg[2] = { c, &want };

	assert_int_equal(shmr_call(c->ep, c->router, 9, 0, "x", 1, buf,
				   sizeof(buf), 10000),
			 -SHMR_E_PROCESS_UNKNOWN);
	send_all(c, 9, 1);
	want = failed + 2;
	assert_true(shmr_test_wait(failed_reached, arg, 10000));
}

/* A name that is not a route resolves through the domain's registry: an
 * endpoint that registered it receives, with the original sender kept. */
static void test_registry_fallback(void **state)
{
	struct ctx *c = *state;
	struct shmr_endpoint *ext;
	const struct shmr_msg *m[8];
	struct shmr_pid me = shmr_endpoint_pid(c->ep);
	int n = 0;

	assert_int_equal(shmr_endpoint_open(c->d, &ext), 0);
	assert_int_equal(shmr_register(ext, "ext"), 0);
	assert_int_equal(shmr_register(ext, "ext"), -SHMR_E_ROUTE_DUPLICATE);
	/* shmr_register returns once the dataplane routes to the name. */
	send_all(c, 5, 77);
	n = shmr_recv_burst(ext, m, 8, 10000);
	assert_int_equal(n, 1);
	assert_int_equal(m[0]->type, 5);
	assert_int_equal(m[0]->key, 77);
	assert_int_equal(m[0]->from.slot, me.slot);
	assert_int_equal(m[0]->from.gen, me.gen);
	struct shmr_pid looked;
	assert_int_equal(shmr_lookup(c->d, "ext", &looked), 0);
	assert_int_equal(looked.slot, shmr_endpoint_pid(ext).slot);

	/* Names of a closed endpoint are dropped. */
	shmr_endpoint_close(ext);
	assert_int_equal(shmr_lookup(c->d, "ext", &looked),
			 -SHMR_E_PROCESS_UNKNOWN);
}

/* Messages that arrive while an endpoint waits in a call are kept, in
 * order, for its next receive (the worker guide's promise). */
static void test_messages_during_call_kept(void **state)
{
	struct ctx *c = *state;
	struct shmr_endpoint *b;
	const struct shmr_msg *m[8];
	struct shmr_test_stats st;
	struct shmr_pid bp;
	int n, got = 0;

	assert_int_equal(shmr_endpoint_open(c->d, &b), 0);
	bp = shmr_endpoint_pid(b);
	/* Direct sends, A -> B, queued before B's call is answered. */
	for (uint64_t k = 0; k < 3; k++)
		while (shmr_send(c->ep, bp, 7, k, &k, sizeof(k)) == -EAGAIN)
			;
	/* The call goes through the router to worker "a"; the sends to B
	 * cross the same lcore first, so they arrive during the call. */
	assert_int_equal(shmr_call(b, c->router, 1, 0, "stats", 5, &st,
				   sizeof(st), 30000),
			 (int)sizeof(st));
	assert_string_equal(st.tag, "a");
	while (got < 3) {
		n = shmr_recv_burst(b, m, 8, 10000);
		assert_true(n > 0);
		for (int i = 0; i < n; i++, got++) {
			assert_int_equal(m[i]->type, 7);
			assert_int_equal(m[i]->key, (uint64_t)got);
		}
	}
	assert_int_equal(shmr_recv_burst(b, m, 8, 0), 0);
	shmr_endpoint_close(b);
}

/* A type the decision does not know is discarded: calls say so. */
static void test_discard(void **state)
{
	struct ctx *c = *state;
	char buf[8];
	long long before = inspect(c, "shmr:discarded");

	assert_int_equal(shmr_call(c->ep, c->router, 42, 0, "x", 1, buf,
				   sizeof(buf), 10000),
			 -SHMR_E_DISCARDED);
	send_all(c, 42, 1);
	/* The call below is answered after the send was handled. */
	(void)stats_of(c, 1);
	assert_int_equal(inspect(c, "shmr:discarded"), before + 2);
}

/* A slot with a bad length or kind is counted and dropped; the dataplane
 * keeps forwarding. */
static void test_bad_slots_dropped(void **state)
{
	struct ctx *c = *state;
	struct shmr_pid me = shmr_endpoint_pid(c->ep);
	unsigned char slot[SHMR_SLOT_MAX];
	struct shmr_msg *m = (struct shmr_msg *)slot;
	size_t size;
	int sock;
	void *base;
	uint64_t bad = 0;

	/* Map the domain ourselves, as a buggy peer with its own view (the
	 * lanes are all it can write). */
	sock = shmr_proto_connect(c->app.sock);
	assert_true(sock >= 0);
	assert_int_equal(shmr_test_map_sock(sock, 0, &base, &size), 0);
	struct shmr_domain_hdr *h = shmr_hdr(base);
	struct rte_ring *out = shmr_lane_at(base, me.slot,
					    SHMR_LANE_OUT(h->nlcores));
	for (uint32_t l = 0; l < h->nlcores; l++)
		bad += shmr_stats_of(base, l)->bad;

	memset(slot, 0, sizeof(slot));
	m->kind = SHMR_KIND_SEND;
	m->from = me;
	m->to = c->router;
	m->type = 1;
	m->len = h->slot_size; /* longer than the payload can be */
	assert_int_equal(rte_ring_enqueue_burst_elem(out, slot, h->slot_size,
						     1, NULL),
			 1);
	m->len = 0;
	m->kind = 77; /* no such kind */
	assert_int_equal(rte_ring_enqueue_burst_elem(out, slot, h->slot_size,
						     1, NULL),
			 1);
	shmr_bell_ring(shmr_lcore_bell(base, me.slot % h->nlcores));

	/* Still forwarding, and both were counted. */
	(void)stats_of(c, 2);
	uint64_t now = 0;
	for (uint32_t l = 0; l < h->nlcores; l++)
		now += shmr_stats_of(base, l)->bad;
	assert_int_equal(now, bad + 2);
	shmr_domain_unmap(base, size);
	close(sock);
}

/* Attaching to a missing domain, or without permission, is a clear error. */
static void test_attach_errors(void **state)
{
	struct ctx *c = *state;
	struct shmr_domain *d;
	int status;
	pid_t pid;

	assert_int_equal(shmr_attach("no-such-domain", &d), -SHMR_E_NO_DOMAIN);
	assert_null(d);
	assert_string_equal(shmr_strerror(-SHMR_E_NO_DOMAIN),
			    "no such domain (is shmr-control running?)");
	pid = fork();
	if (pid == 0) {
		/* An unprivileged user: the socket is mode 0600. */
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(99);
		int rc = shmr_attach_path(c->app.sock, &d);
		_exit(rc == -SHMR_E_PERM ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The operator's view: shmrctl shows the table and the counters. */
static void test_shmrctl(void **state)
{
	struct ctx *c = *state;
	const char *ctl = getenv("SHMRCTL");
	char out[16384];

	assert_non_null(ctl);
	char *routes[] = { (char *)ctl, "-s", c->app.sock, "routes", "events",
			   NULL };
	assert_int_equal(shmr_test_run(routes, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "a "));
	assert_non_null(strstr(out, "b "));
	assert_non_null(strstr(out, "c "));
	char *json[] = { (char *)ctl, "-s", c->app.sock, "inspect", "events",
			 "--json", NULL };
	assert_int_equal(shmr_test_run(json, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"shmr:forwarded\""));
	assert_non_null(strstr(out, "\"shmr:routes_total\""));
	char *bad[] = { (char *)ctl, "-s", c->app.sock, "frobnicate", NULL };
	assert_int_equal(shmr_test_run(bad, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "usage"));
	char *unknown[] = { (char *)ctl, "-s", c->app.sock, "routes", "nope",
			    NULL };
	assert_int_equal(shmr_test_run(unknown, out, sizeof(out)), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_million_by_type),
		cmocka_unit_test(test_ten_thousand_calls),
		cmocka_unit_test(test_unknown_route),
		cmocka_unit_test(test_registry_fallback),
		cmocka_unit_test(test_messages_during_call_kept),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_bad_slots_dropped),
		cmocka_unit_test(test_attach_errors),
		cmocka_unit_test(test_shmrctl),
	};
	return cmocka_run_group_tests_name("appliance", tests, group_setup,
					   group_teardown);
}
