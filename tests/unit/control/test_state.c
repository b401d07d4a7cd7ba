/*
 * The control plane's state file (control/state.c): what is written is
 * read back (specs with spaces, '%', '=' and empty arguments; the
 * dataplane; workers; client owners), and a file that is not whole or not
 * ours is refused, never half used.  Also the model's owners by pid
 * (shmr_ctl_model_rebind_owner()).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "procs.h"
#include "state.h"

static char dir[] = "/tmp/shmr-unit-state-XXXXXX";

/* Routes a state read has room for: the default routers and routes. */
#define ST_ROUTES (SHMR_ROUTERS_DEFAULT * SHMR_ROUTES_DEFAULT)

static struct shmr_config *make_config(void)
{
	struct shmr_config *c = calloc(1, sizeof(*c));
	struct shmr_conf_router *r;
	struct shmr_conf_route *q;

	assert_non_null(c);
	assert_int_equal(shmr_config_routers_alloc(c, SHMR_ROUTERS_DEFAULT), 0);

	strcpy(c->domain, "unit");
	c->slot_size = 128;
	c->lane_size = 64;
	c->lcores = 1;
	r = &c->routers[c->nrouters++];
	strcpy(r->name, "events");
	r->behaviour = SHMR_BEH_TYPE;
	q = &r->routes[r->nroutes++];
	strcpy(q->name, "a");
	strcpy(q->program, "/opt/my worker/bin%1");
	q->nargs = 3;
	strcpy(q->args[0], "--x=1");
	strcpy(q->args[1], "");
	strcpy(q->args[2], "two words");
	strcpy(q->cpus, "0-1");
	q = &r->routes[r->nroutes++];
	strcpy(q->name, "b");
	strcpy(q->program, "worker");
	return c;
}

static void write_file(const struct shmr_ctl_state_file *f, const char *text)
{
	FILE *o = fopen(f->path, "w");

	assert_non_null(o);
	fputs(text, o);
	fclose(o);
}

static void round_trip(void **state)
{
	static struct shmr_ctl_model m;
	static struct shmr_ctl_spawner sp;
	static struct shmr_ctl_state st;
	static struct shmr_ctl_state_file f;
	struct shmr_config *cfg = make_config();
	const struct shmr_ctl_state_route *q;
	const struct shmr_ctl_state_client *cl;
	struct shmr_pid pid;
	char why[128];
	int reused;
	(void)state;

	assert_int_equal(shmr_ctl_model_init(&m, cfg), 0);
	m.version = 7;
	m.routers[0].routes[0].restarts = 3;
	memset(&sp, 0, sizeof(sp));
	/* The process table's rows (spawn.c is not linked here). */
	sp.workers = calloc(m.nrouters, sizeof(*sp.workers));
	assert_non_null(sp.workers);
	sp.dp.pid = getpid();
	sp.dp.start = shmr_ctl_proc_start(getpid());
	sp.dp_fd = 5;
	sp.dp_lanes_fd = 6;
	sp.workers[0][0].pid = getpid();
	sp.workers[0][0].start = 42;
	sp.workers[0][0].drain_at_ms = 1;
	assert_int_equal(shmr_ctl_model_open(&m, 9, getpid(), 0, &pid,
					     &reused),
			 0);
	assert_int_equal(shmr_ctl_state_init(&f, dir, "unit"), 0);
	assert_int_equal(shmr_ctl_state_save(&f, &m, &sp, 1u << 21, 0), 0);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)), 0);
	assert_string_equal(st.domain, "unit");
	assert_int_equal(st.dataplane.pid, getpid());
	assert_true(st.dataplane.start != 0);
	assert_int_equal(st.dataplane.start, shmr_ctl_proc_start(getpid()));
	assert_int_equal(st.dp_fd, 5);
	assert_int_equal(st.dp_lanes_fd, 6);
	assert_int_equal(st.size, 1u << 21);
	assert_int_equal(st.spec_version, 7);
	assert_int_equal(st.nroutes, 2);
	q = shmr_ctl_state_route(&st, "events", "a");
	assert_non_null(q);
	assert_string_equal(q->spec.program, "/opt/my worker/bin%1");
	assert_int_equal(q->spec.nargs, 3);
	assert_string_equal(q->spec.args[0], "--x=1");
	assert_string_equal(q->spec.args[1], "");
	assert_string_equal(q->spec.args[2], "two words");
	assert_string_equal(q->spec.cpus, "0-1");
	assert_int_equal(q->restarts, 3);
	assert_int_equal(q->drain, 1);
	assert_int_equal(q->worker.pid, getpid());
	assert_int_equal(q->worker.start, 42);
	q = shmr_ctl_state_route(&st, "events", "b");
	assert_non_null(q);
	assert_int_equal(q->worker.pid, 0);
	assert_null(shmr_ctl_state_route(&st, "events", "c"));
	cl = shmr_ctl_state_client(&st, pid.slot, pid.gen);
	assert_non_null(cl);
	assert_int_equal(cl->owner.pid, getpid());
	assert_int_equal(cl->owner.start, shmr_ctl_proc_start(getpid()));
	/* Written once per publication: unchanged version, no write. */
	write_file(&f, "garbage\n");
	assert_int_equal(shmr_ctl_state_save(&f, &m, &sp, 1u << 21, 0), 0);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)),
			 -EINVAL);
	assert_int_equal(shmr_ctl_state_save(&f, &m, &sp, 1u << 21, 1), 0);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)), 0);
	/* A publication that changed nothing the file says but the spec's
	 * version (a group's routee): not written again ... */
	m.version = 8;
	write_file(&f, "garbage\n");
	assert_int_equal(shmr_ctl_state_save(&f, &m, &sp, 1u << 21, 0), 0);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)),
			 -EINVAL);
	assert_int_equal(shmr_ctl_state_save(&f, &m, &sp, 1u << 21, 1), 0);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)), 0);
	assert_int_equal(st.spec_version, 8);
	/* ... one that changed a line is (a worker restarted), with the
	 * version it came with. */
	m.version = 9;
	m.routers[0].routes[0].restarts = 4;
	write_file(&f, "garbage\n");
	assert_int_equal(shmr_ctl_state_save(&f, &m, &sp, 1u << 21, 0), 0);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)), 0);
	assert_int_equal(st.spec_version, 9);
	assert_int_equal(shmr_ctl_state_route(&st, "events", "a")->restarts,
			 4);
	shmr_ctl_state_remove(&f);
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)),
			 -ENOENT);
	shmr_ctl_state_free(&st);
	free(sp.workers);
	shmr_ctl_model_fini(&m);
	shmr_config_free(cfg);
	free(cfg);
}

static void refused(void **state)
{
	static const char *const bad[] = {
		"",
		"shmr-control-state 3\ndomain unit\nend\n",
		"shmr-control-state 2\ndomain unit\n", /* no end */
		"shmr-control-state 2\ndomain unit\nwhat 1\nend\n",
		"shmr-control-state 2\ndataplane 1 2 3\nend\n",
		/* NARGS says 2, one follows */
		"shmr-control-state 2\nroute r a 0 0 0 0 = prog 2 x\nend\n",
		"shmr-control-state 2\nroute r a 0 0 0 0 = pr%4 0\nend\n",
		"shmr-control-state 2\nclient 16384 1 2 3\nend\n",
		"shmr-control-state 2\ncontrol 99999999999 1\nend\n",
	};
	static struct shmr_ctl_state st;
	static struct shmr_ctl_state_file f;
	char why[128];
	(void)state;

	assert_int_equal(shmr_ctl_state_init(&f, dir, "bad"), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(&f, bad[i]);
		why[0] = '\0';
		assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)),
				 -EINVAL);
		assert_true(why[0] != '\0');
	}
	write_file(&f, "shmr-control-state 2\ndomain unit\n"
		       "route r a 1 0 0 0 = prog 0\nend\ntrailing junk\n");
	assert_int_equal(shmr_ctl_state_read(&f, &st, ST_ROUTES, why,
					     sizeof(why)), 0);
	assert_int_equal(st.nroutes, 1);
	/* No more routes than the room asked for. */
	write_file(&f, "shmr-control-state 2\ndomain unit\n"
		       "route r a 1 0 0 0 = prog 0\n"
		       "route r b 1 0 0 0 = prog 0\nend\n");
	assert_int_equal(shmr_ctl_state_read(&f, &st, 1, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(shmr_ctl_state_read(&f, &st, 2, why, sizeof(why)),
			 0);
	assert_int_equal(st.nroutes, 2);
	shmr_ctl_state_free(&st);
	shmr_ctl_state_remove(&f);
}

static void owners_by_pid(void **state)
{
	static struct shmr_ctl_model m;
	struct shmr_config *cfg = make_config();
	uint64_t by_pid = shmr_ctl_owner_of_pid(1234);
	struct shmr_pid a, b;
	int reused;
	(void)state;

	assert_true(by_pid & SHMR_CTL_OWNER_PID);
	assert_int_equal(shmr_ctl_model_init(&m, cfg), 0);
	assert_int_equal(shmr_ctl_model_open(&m, by_pid, 1234, 0, &a, &reused),
			 0);
	assert_int_equal(shmr_ctl_model_open(&m, by_pid, 1234, 0, &b, &reused),
			 0);
	assert_int_equal(shmr_ctl_model_register(&m, by_pid, "svc", a), 0);
	/* The process attached again on connection 77. */
	assert_int_equal(shmr_ctl_model_rebind_owner(&m, by_pid, 77), 2);
	assert_int_equal(shmr_ctl_model_rebind_owner(&m, by_pid, 78), 0);
	/* From now on they go with the connection, names included. */
	assert_int_equal(shmr_ctl_model_drop_owner(&m, by_pid), 0);
	assert_int_equal(shmr_ctl_model_drop_owner(&m, 77), 2);
	assert_int_equal(m.nnames, 0);
	shmr_ctl_model_fini(&m);
	shmr_config_free(cfg);
	free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(refused),
		cmocka_unit_test(owners_by_pid),
	};
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests_name("control_state", tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
