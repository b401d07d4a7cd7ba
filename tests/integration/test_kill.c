/*
 * Pekko's Kill for routees, through the real appliance: SHMR_TYPE_KILL
 * sent to a routee (straight to its inbox), or to every routee of a
 * router inside a Broadcast envelope, kills the routee's process (the
 * control plane does it; the program never sees the message), and the
 * router's supervision restarts it into its slot, its inbox kept.
 *
 *   Kill to a routee     a worker held at a gate with messages queued
 *                        behind it: its process is replaced (os_pid
 *                        changes, restarts 1), every queued message
 *                        reaches the successor exactly once, the Kill
 *                        never reaches a program
 *   Broadcast(Kill)      a pool of 3: each routee's process is replaced
 *                        once (restarts 1 each), none receives the Kill,
 *                        and the pool keeps routing
 *
 * Waits are bounded retries on real conditions, never fixed sleeps.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/domain.h>
#include <shmr/proto.h>

#include "shmr_test_app.h"
#include "client_checks.h"
#include "test_worker.h"

#define WAIT_MS 30000

#define NKEYS 10u   /* keys recorded by the workers */
#define KILL_KEY 5u /* the Kill's own key: a worker that saw it records it */

struct ctx {
	struct shmr_test_client cl; /* domain mapped here */
	char ans[SHMR_PROTO_MAX];
	const char *router, *gate, *rec;
	unsigned n;
	const char *names[3];
	long long old_pid[3];
	struct shmr_pid busy_pid;
};

_Static_assert(offsetof(struct ctx, cl) == 0, "client_ctx_start()");

/* os_pid= and restarts= of `ROUTE router route`; -1 when absent. */
static long long route_value(struct ctx *c, const char *route,
			     const char *key)
{
	char req[128];
	const char *p;

	snprintf(req, sizeof(req), "ROUTE %s %s", c->router, route);
	if (shmr_test_ctl(&c->cl.app, req, c->ans, sizeof(c->ans)) < 0)
		return -1;
	p = strstr(c->ans, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* Every route's worker is a new process (and running). */
static int all_replaced(void *arg)
{
	struct ctx *c = arg;

	for (unsigned i = 0; i < c->n; i++) {
		long long pid = route_value(c, c->names[i], " os_pid=");

		if (pid <= 0 || pid == c->old_pid[i] ||
		    !strstr(c->ans, "state=running"))
			return 0;
	}
	return 1;
}

static int is_busy(void *arg)
{
	struct ctx *c = arg;

	return client_busy(&c->cl, c->busy_pid) != 0;
}

/* Release whoever waits at the gate until every key but the Kill's has
 * been recorded. */
static int wait_recorded(struct ctx *c)
{
	struct client_record_wait w = { c->gate, c->rec, NKEYS, KILL_KEY };

	return shmr_test_wait(client_gate_recorded, &w, WAIT_MS);
}

/* A round-robin router "work" whose routes are @p head, the workers'
 * arguments, then @p tail: shmr-test-worker recording into @p rec, gated
 * at @p gate for its first @p gate_count bursts (both files made here). */
static struct ctx *begin(const char *tag, char *gate, char *rec,
			 const char *head, unsigned gate_count,
			 const char *tail)
{
	char body[1024];
	struct ctx *c;

	client_make_gate_record(tag, gate, rec, 128, NKEYS);
	snprintf(body, sizeof(body),
		 "routers = ( { name = \"work\"; behaviour = \"round-robin\";\n"
		 "  %s program = \"shmr-test-worker\";\n"
		 "    args = [ \"--record\", \"%s\", \"--gate\", \"%s\",\n"
		 "             \"--gate-count\", \"%u\" ]; %s } );\n",
		 head, rec, gate, gate_count, tail);
	c = client_ctx_start(sizeof(*c), tag, body, 1);
	c->router = "work";
	c->gate = gate;
	c->rec = rec;
	return c;
}

/* Every key but the Kill's was received exactly once, the Kill's never;
 * then stop the appliance and remove the files. */
static void finish(struct ctx *c)
{
	unsigned char counts[2 * NKEYS];

	client_read_record(c->rec, counts, NKEYS);
	for (unsigned k = 0; k < NKEYS; k++)
		if (counts[k] != (k == KILL_KEY ? 0 : 1))
			fail_msg("key %u received %u times", k, counts[k]);
	unlink(c->gate);
	unlink(c->rec);
	client_ctx_stop(c);
}

static void send_key(struct ctx *c, struct shmr_pid to, uint32_t type,
		     uint64_t k)
{
	client_send_key(&c->cl, to, type, k);
}

/*
 * A route's worker takes key 0 and waits at a gate; keys 1..4 queue
 * behind it, then a Kill sent straight to its inbox, then keys 6..9.
 * The process is replaced without the gate ever opening (so the old
 * program cannot have seen the Kill), and once the gate opens the
 * successor handles every key exactly once: key 0 (taken but not
 * released by the killed worker) and all that was queued.  The Kill's
 * key is never recorded.
 */
static void test_kill_to_a_routee(void **state)
{
	char gate[128], rec[128];
	struct shmr_pid work, w;
	struct ctx *c;
	(void)state;

	c = begin("kill", gate, rec, "routes = ( { name = \"w\";", 1, "} );");
	c->n = 1;
	c->names[0] = "w";
	work = client_lookup(&c->cl, "work");
	w = client_route_pid(&c->cl, "work", "w");
	c->old_pid[0] = route_value(c, "w", " os_pid=");
	assert_true(c->old_pid[0] > 0);

	send_key(c, work, 1, 0);
	c->busy_pid = w;
	assert_true(shmr_test_wait(is_busy, c, WAIT_MS));
	for (uint64_t k = 1; k < KILL_KEY; k++)
		send_key(c, work, 1, k);
	send_key(c, w, SHMR_TYPE_KILL, KILL_KEY);
	for (uint64_t k = KILL_KEY + 1; k < NKEYS; k++)
		send_key(c, work, 1, k);

	if (!shmr_test_wait(all_replaced, c, WAIT_MS))
		fail_msg("route w's worker %lld was not replaced: %s",
			 c->old_pid[0], c->ans);
	assert_int_equal(route_value(c, "w", " restarts="), 1);
	assert_true(wait_recorded(c));
	finish(c);
}

/*
 * Broadcast(Kill) to a pool of three: every routee's process is replaced,
 * each exactly once, no program records the Kill's key, and the pool
 * routes again afterwards (each routee records what it is sent).
 */
static void test_broadcast_kill_kills_every_routee_once(void **state)
{
	static const char *names[3] = { "work:0", "work:1", "work:2" };
	char gate[128], rec[128];
	struct shmr_pid work;
	struct ctx *c;
	int rc, tries = 0;
	(void)state;

	c = begin("bkill", gate, rec, "pool = { size = 3;", 0, "};");
	c->n = 3;
	work = client_lookup(&c->cl, "work");
	for (unsigned i = 0; i < 3; i++) {
		c->names[i] = names[i];
		c->old_pid[i] = route_value(c, names[i], " os_pid=");
		assert_true(c->old_pid[i] > 0);
	}
	while ((rc = shmr_send_broadcast(c->cl.ep, work, SHMR_TYPE_KILL,
					 KILL_KEY, NULL, 0)) == -EAGAIN) {
		assert_true(++tries < 1000000);
		usleep(100);
	}
	assert_int_equal(rc, 0);
	if (!shmr_test_wait(all_replaced, c, WAIT_MS))
		fail_msg("not every routee was replaced: %s", c->ans);
	for (unsigned i = 0; i < 3; i++)
		if (route_value(c, names[i], " restarts=") != 1)
			fail_msg("%s: %s (wanted restarts=1)", names[i],
				 c->ans);
	/* The pool routes again: every key reaches a routee. */
	for (uint64_t k = 0; k < NKEYS; k++)
		if (k != KILL_KEY)
			send_key(c, work, 1, k);
	assert_true(wait_recorded(c));
	finish(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill_to_a_routee),
		cmocka_unit_test(test_broadcast_kill_kills_every_routee_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
