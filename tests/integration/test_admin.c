/*
 * The admin path against the real daemons: high and max priority to a
 * router reach the control plane, never a worker; a send that fails
 * routing is kept as a dead letter that `shmrctl dlq list` shows and
 * `shmrctl dlq replay` delivers once the name resolves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CONF                                                                   \
	"routers = ( { name = \"events\"; behaviour = \"type\";\n"             \
	"  types = ( { type = 1; route = \"work\"; },\n"                        \
	"            { type = 2; route = \"later\"; },\n"                      \
	"            { type = 4; route = \"never\"; } );\n"                     \
	"  routes = ( { name = \"work\"; program = \"shmr-test-worker\";\n"     \
	"               args = [ \"--expect-type\", \"1\" ]; } ); } );\n"

struct ctx {
	struct shmr_test_client cl;
	struct shmr_pid router;
	char out[8192];
	unsigned want; /* dlq_size_is() */
};

/* shmrctl dlq SUB events; "list" as the control plane answers it (its
 * "INDEX reason=R name=N ..." lines: shmrctl prints them as a table, see
 * test_json), exit status 1 at a corrupted record as shmrctl's. */
static int ctl(struct ctx *c, const char *sub)
{
	char *argv[] = { getenv("SHMRCTL"), "-s", c->cl.app.sock, "dlq",
			 (char *)sub, "events", NULL };
	static char ans[65536 + 1]; /* SHMR_PROTO_MAX */
	const char *body;

	if (strcmp(sub, "list") != 0)
		return shmr_test_run(argv, c->out, sizeof(c->out));
	if (shmr_test_ctl(&c->cl.app, "DLQ_LIST events", ans, sizeof(ans)) < 0)
		return 1;
	body = strchr(ans, '\n');
	snprintf(c->out, sizeof(c->out), "%s", body ? body + 1 : "");
	return strncmp(ans, "OK ", 3) != 0 || !strstr(ans, " ok\n");
}

/* `dlq list` shows a record. */
static int listed(void *arg)
{
	struct ctx *c = arg;

	return ctl(c, "list") == 0 && strchr(c->out, '\n') != NULL;
}

/* What the worker of route "work" has counted (a normal call). */
static struct shmr_test_stats work_stats(struct ctx *c)
{
	struct shmr_test_stats st;

	memset(&st, 0, sizeof(st));
	assert_int_equal(shmr_call(c->cl.ep, c->router, 1, 0, "?", 1, &st,
				   sizeof(st), 30000),
			 (int)sizeof(st));
	return st;
}

static void start_conf(struct ctx *c, const char *tag, const char *conf)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(shmr_test_client_start(&c->cl, tag, conf, -1), 0);
	assert_int_equal(shmr_lookup(c->cl.d, "events", &c->router), 0);
	(void)work_stats(c); /* the worker is up */
}

static void start(struct ctx *c, const char *tag)
{
	start_conf(c, tag, CONF);
}

static void stop(struct ctx *c)
{
	assert_int_equal(shmr_test_client_stop(&c->cl), 0);
}

/* A send to an unknown name is a dead letter with its reason; once the
 * name is registered, replay delivers the original message there and
 * empties the file. */
static void test_dead_letter_listed_and_replayed(void **state)
{
	struct ctx c;
	struct shmr_endpoint *later;
	const struct shmr_msg *m[4];
	char want[128];
	int n;
	(void)state;

	start(&c, "dlq");
	assert_int_equal(shmr_send(c.cl.ep, c.router, 2, 77, "hello", 5), 0);
	assert_true(shmr_test_wait(listed, &c, 30000));
	snprintf(want, sizeof(want),
		 "0 reason=SHMR_E_PROCESS_UNKNOWN name=later type=2 key=77 "
		 "from=%u:%u len=5\n",
		 shmr_endpoint_pid(c.cl.ep).slot,
		 shmr_endpoint_pid(c.cl.ep).gen);
	assert_string_equal(c.out, want);
	{
		char ans[4096];

		assert_int_equal(shmr_test_ctl(&c.cl.app, "INSPECT events", ans,
					       sizeof(ans)),
				 0);
		assert_int_equal(shmr_test_value(ans, "shmr:dlq_size"), 1);
		assert_int_equal(shmr_test_value(ans, "shmr:failed"), 1);
	}

	assert_int_equal(shmr_endpoint_open(c.cl.d, &later), 0);
	assert_int_equal(shmr_register(later, "later"), 0);
	assert_int_equal(ctl(&c, "replay"), 0);
	assert_string_equal(c.out, "resent 1 left 0\n");
	n = shmr_recv_burst(later, m, 4, 30000);
	assert_int_equal(n, 1);
	assert_int_equal(m[0]->kind, SHMR_KIND_SEND);
	assert_int_equal(m[0]->type, 2);
	assert_int_equal(m[0]->key, 77);
	assert_int_equal(m[0]->len, 5);
	assert_memory_equal(m[0]->data, "hello", 5);
	assert_int_equal(m[0]->flags & SHMR_F_ROUTE_FAILED, 0);
	assert_int_equal(ctl(&c, "list"), 0);
	assert_string_equal(c.out, "");

	/* A torn record (a crash mid-append) is reported: exit 1. */
	assert_int_equal(shmr_send(c.cl.ep, c.router, 4, 5, "x", 1), 0);
	assert_true(shmr_test_wait(listed, &c, 30000));
	{
		char path[600];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.events.dlq", c.cl.app.dir,
			 c.cl.app.domain);
		f = fopen(path, "a");
		assert_non_null(f);
		fputs("\x40\0\0", f);
		fclose(f);
	}
	assert_int_equal(ctl(&c, "list"), 1);
	assert_non_null(strstr(c.out, "0 reason=SHMR_E_PROCESS_UNKNOWN "
				      "name=never type=4 key=5"));
	{
		char *argv[] = { getenv("SHMRCTL"), "-s", c.cl.app.sock,
				 "dlq", "list", "events", NULL };

		assert_int_equal(shmr_test_run(argv, c.out, sizeof(c.out)), 1);
		assert_non_null(strstr(c.out, "SHMR_E_PROCESS_UNKNOWN"));
		assert_non_null(
			strstr(c.out, "record 1: corrupted or truncated"));
	}

	shmr_endpoint_close(later);
	stop(&c);
}

static int dlq_size_is(void *arg)
{
	struct ctx *c = arg;
	char ans[4096];

	return shmr_test_ctl(&c->cl.app, "INSPECT events", ans, sizeof(ans)) ==
		       0 &&
	       shmr_test_value(ans, "shmr:dlq_size") == (long long)c->want;
}

/* More dead letters than one answer holds (about 950 lines): shmrctl dlq
 * list asks part by part and lists every one. */
static void test_dlq_list_of_many(void **state)
{
	static char out[512 * 1024];
	char *argv[] = { getenv("SHMRCTL"), "-s", NULL, "dlq", "list",
			 "events", NULL };
	struct ctx c;
	unsigned lines = 0;
	(void)state;

	start(&c, "dlqmany");
	argv[2] = c.cl.app.sock;
	/* In batches the admin endpoint's lane holds. */
	for (c.want = 0; c.want < 1500;) {
		for (unsigned k = 0; k < 300; k++, c.want++)
			while (shmr_send(c.cl.ep, c.router, 4, c.want, "x",
					 1) == -EAGAIN)
				;
		assert_true(shmr_test_wait(dlq_size_is, &c, 30000));
	}
	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	for (const char *p = out; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, 1 + 1500); /* the header, then each */
	assert_non_null(strstr(out, "\n1499 "));
	assert_non_null(strstr(out, " 1499 ")); /* its key */
	stop(&c);
}

/* A high-priority call "stats" is answered by the control plane with the
 * router's counters; an unknown admin command is refused; neither reaches
 * the worker, and neither does a high-priority send. */
static void test_admin_call_and_send(void **state)
{
	struct ctx c;
	struct shmr_test_stats st;
	char reply[80];
	int rc;
	(void)state;

	start(&c, "adm");
	assert_int_equal(shmr_send(c.cl.ep, c.router, 1, 0, "x", 1), 0);
	memset(reply, 0, sizeof(reply));
	rc = shmr_call_prio(c.cl.ep, c.router, SHMR_PRIO_HIGH, 1, 0, "stats", 5,
			    reply, sizeof(reply) - 1, 30000);
	assert_true(rc > 0);
	/* Two calls and a send were routed to the worker before. */
	assert_non_null(strstr(reply, "forwarded="));
	assert_non_null(strstr(reply, "failed=0"));
	assert_int_equal(shmr_call_prio(c.cl.ep, c.router, SHMR_PRIO_MAX, 1, 0,
					 "reboot", 6, reply, sizeof(reply),
					 30000),
			 -SHMR_E_NOT_ALLOWED);

	assert_int_equal(shmr_send_prio(c.cl.ep, c.router, SHMR_PRIO_HIGH, 1, 0,
					"admin", 5),
			 0);
	assert_int_equal(shmr_send_prio(c.cl.ep, c.router, SHMR_PRIO_MAX, 1, 0,
					"admin", 5),
			 0);
	/* The high lane is served before the normal one: had the worker
	 * been given them, it would have counted them before this call. */
	st = work_stats(&c);
	assert_int_equal(st.count, 1);
	assert_int_equal(st.misrouted, 0);
	/* ... and the control plane counted them. */
	memset(reply, 0, sizeof(reply));
	assert_true(shmr_call_prio(c.cl.ep, c.router, SHMR_PRIO_HIGH, 1, 0,
				   "stats", 5, reply, sizeof(reply) - 1,
				   30000) > 0);
	assert_non_null(strstr(reply, " admin=2"));
	stop(&c);
}

/* `dlq list` shows at least want_lines records. */
static unsigned want_lines;

static int listed_n(void *arg)
{
	struct ctx *c = arg;
	unsigned n = 0;

	if (ctl(c, "list") != 0)
		return 0;
	for (const char *p = c->out; (p = strchr(p, '\n')); p++)
		n++;
	return n >= want_lines;
}

static int call_fits(void *arg)
{
	struct ctx *c = arg;
	struct shmr_test_stats st;

	return shmr_call(c->cl.ep, c->router, 1, 0, "?", 1, &st, sizeof(st),
			 30000) == (int)sizeof(st);
}

/* mailbox_full = "fail": while the worker is stopped (SIGSTOP) its inbox
 * fills; what the router routes there beyond that fails with
 * SHMR_E_MAILBOX_FULL, as dead letters for sends and as the error for a
 * call, and the sender is never held back.  Nothing that fitted is lost:
 * once the worker runs again it gets exactly those. */
static void test_mailbox_full_fails_instead_of_waiting(void **state)
{
	struct ctx c;
	struct shmr_test_stats st0, st;
	char ans[4096], reply[8];
	const char *p;
	pid_t pid;
	(void)state;

	start_conf(&c, "full",
		   "lane_size = 64;\n"
		   "routers = ( { name = \"events\"; behaviour = \"type\";\n"
		   "  mailbox_full = \"fail\";\n"
		   "  types = ( { type = 1; route = \"work\"; } );\n"
		   "  routes = ( { name = \"work\";\n"
		   "               program = \"shmr-test-worker\"; } ); } );\n");
	st0 = work_stats(&c);
	assert_int_equal(shmr_test_ctl(&c.cl.app, "ROUTE events work", ans,
				       sizeof(ans)),
			 0);
	p = strstr(ans, " os_pid=");
	assert_non_null(p);
	pid = (pid_t)atoi(p + 8);
	assert_true(pid > 0);

	assert_int_equal(kill(pid, SIGSTOP), 0);
	/* One lcore, so one inbound lane of 63 slots.  Our own outbound lane
	 * is as small: -EAGAIN there only means the dataplane has not taken
	 * the last ones yet. */
	for (unsigned i = 0; i < 70; i++) {
		int rc;

		while ((rc = shmr_send(c.cl.ep, c.router, 1, i, "m", 1)) ==
		       -EAGAIN)
			usleep(100);
		assert_int_equal(rc, 0);
	}
	want_lines = 7;
	assert_true(shmr_test_wait(listed_n, &c, 30000));
	assert_non_null(strstr(c.out, "reason=SHMR_E_MAILBOX_FULL name=work "
				      "type=1 key=63 "));
	assert_non_null(strstr(c.out, "key=69 "));
	assert_int_equal(shmr_call(c.cl.ep, c.router, 1, 0, "?", 1, reply,
				   sizeof(reply), 30000),
			 -SHMR_E_MAILBOX_FULL);
	assert_int_equal(shmr_test_ctl(&c.cl.app, "INSPECT events", ans,
				       sizeof(ans)),
			 0);
	assert_int_equal(shmr_test_value(ans, "shmr:failed"), 8);
	assert_int_equal(shmr_test_value(ans, "shmr:dlq_size"), 7);

	/* Calls fail until the worker has made room: retried, bounded. */
	assert_int_equal(kill(pid, SIGCONT), 0);
	assert_true(shmr_test_wait(call_fits, &c, 30000));
	st = work_stats(&c);
	assert_int_equal(st.count - st0.count, 63);
	stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dead_letter_listed_and_replayed),
		cmocka_unit_test(test_dlq_list_of_many),
		cmocka_unit_test(test_admin_call_and_send),
		cmocka_unit_test(test_mailbox_full_fails_instead_of_waiting),
	};
	return cmocka_run_group_tests_name("admin", tests, NULL, NULL);
}
