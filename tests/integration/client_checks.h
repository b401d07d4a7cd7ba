/*
 * Lookups for integration tests that hold a struct shmr_test_client: each
 * fails the test (CMocka) when the name or route is not there.  Include
 * after <cmocka.h>.
 */
#ifndef SHMR_CLIENT_CHECKS_H
#define SHMR_CLIENT_CHECKS_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shmr/domain.h>

#include "shmr_test_app.h"
#include "test_worker.h"

/* A test's context of @p size bytes, zeroed, whose first member is a
 * struct shmr_test_client, started as shmr_test_client_start() does. */
static inline void *client_ctx_start(size_t size, const char *tag,
				     const char *conf_body, int map)
{
	struct shmr_test_client *cl = calloc(1, size);

	assert_non_null(cl);
	assert_int_equal(shmr_test_client_start(cl, tag, conf_body, map), 0);
	return cl;
}

/* Stop what client_ctx_start() started (nothing may be left behind) and
 * free the context. */
static inline void client_ctx_stop(void *ctx)
{
	assert_int_equal(shmr_test_client_stop(ctx), 0);
	free(ctx);
}

/* The PID that @p name resolves to in the domain's registry. */
static inline struct shmr_pid client_lookup(struct shmr_test_client *cl,
					    const char *name)
{
	struct shmr_pid pid;

	assert_int_equal(shmr_lookup(cl->d, name, &pid), 0);
	return pid;
}

/* The inbox endpoint of route @p route of @p router ("pid=SLOT:GEN" of its
 * ROUTE line). */
static inline struct shmr_pid client_route_pid(struct shmr_test_client *cl,
					       const char *router,
					       const char *route)
{
	struct shmr_pid pid;

	assert_int_equal(shmr_test_route_pid(&cl->app, router, route, &pid),
			 0);
	return pid;
}

/* A call's bound: liveness only, never a figure. */
#define CLIENT_CALL_MS 10000

/* Value @p key of `INSPECT @p router`; the whole answer is left in @p ans.
 * -1 when the key is absent. */
static inline long long client_inspect(struct shmr_test_client *cl,
				       const char *router, char *ans,
				       size_t cap, const char *key)
{
	char req[64];

	snprintf(req, sizeof(req), "INSPECT %s", router);
	assert_int_equal(shmr_test_ctl(&cl->app, req, ans, cap), 0);
	return shmr_test_value(ans, key);
}

/* GetRoutees as a call at normal priority: @p names gets the answer,
 * NUL-terminated.  Its length, or the call's error. */
static inline int client_routees(struct shmr_test_client *cl,
				 const char *router, char *names, size_t cap)
{
	int rc = shmr_call(cl->ep, client_lookup(cl, router),
			   SHMR_TYPE_GET_ROUTEES, 0, NULL, 0, names, cap - 1,
			   CLIENT_CALL_MS);

	names[rc < 0 ? 0 : rc] = '\0';
	return rc;
}

/* A shmr-test-worker's stats, asked directly (by PID: not routed).
 * 0, the call's error, or -EPROTO for an answer of the wrong size. */
static inline int client_stats(struct shmr_test_client *cl,
			       struct shmr_pid pid, struct shmr_test_stats *st)
{
	int rc = shmr_call(cl->ep, pid, 0, 0, "s", 1, st, sizeof(*st),
			   CLIENT_CALL_MS);

	return rc == (int)sizeof(*st) ? 0 : rc < 0 ? rc : -EPROTO;
}

/* Endpoint @p pid's busy flag, read from the domain as mapped here
 * (shmr_test_client_start() with map >= 0).  Relaxed: a hint. */
static inline uint32_t client_busy(const struct shmr_test_client *cl,
				   struct shmr_pid pid)
{
	return atomic_load_explicit(&shmr_ep_peer_at(cl->base, pid.slot)->busy,
				    memory_order_relaxed);
}

/* A fresh path /tmp/shmr-<test program>-<pid>-@p what (removed if there). */
static inline void client_tmp_path(char *path, size_t cap, const char *what)
{
	snprintf(path, cap, "/tmp/shmr-%s-%d-%s",
		 program_invocation_short_name, (int)getpid(), what);
	unlink(path);
}

/* A FIFO there: the gate a shmr-test-worker --gate waits on. */
static inline void client_make_fifo(char *path, size_t cap, const char *what)
{
	client_tmp_path(path, cap, what);
	assert_int_equal(mkfifo(path, 0600), 0);
}

/* A zeroed file of 2 x @p n bytes there: a shmr-test-worker --record. */
static inline void client_make_record(char *path, size_t cap,
				      const char *what, size_t n)
{
	int fd;

	client_tmp_path(path, cap, what);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(2 * n)), 0);
	close(fd);
}

/* Route @p router's GetRoutees answer is @p want ("a\nb\n"), within
 * @p ms; fails the test with what it was otherwise. */
struct client_routees_wait {
	struct shmr_test_client *cl;
	const char *router, *want;
	char names[1024];
};

static inline int client_routees_are(void *arg)
{
	struct client_routees_wait *w = arg;

	return client_routees(w->cl, w->router, w->names,
			      sizeof(w->names)) >= 0 &&
	       strcmp(w->names, w->want) == 0;
}

static inline void client_wait_routees(struct shmr_test_client *cl,
				       const char *router, const char *want,
				       int ms)
{
	struct client_routees_wait w = { cl, router, want, "" };

	if (!shmr_test_wait(client_routees_are, &w, ms))
		fail_msg("routees \"%s\", wanted \"%s\"", w.names, want);
}

/* A send of type @p type, key and payload @p k, retried while the lanes
 * are full (bounded); any other error fails the test. */
static inline void client_send_key(struct shmr_test_client *cl,
				   struct shmr_pid to, uint32_t type,
				   uint64_t k)
{
	int rc, tries = 0;

	while ((rc = shmr_send(cl->ep, to, type, k, &k, sizeof(k))) ==
	       -EAGAIN) {
		assert_true(++tries < 1000000);
		usleep(100);
	}
	assert_int_equal(rc, 0);
}

/* A gate FIFO "@p tag-gate" and a record file "@p tag-rec" of @p n keys
 * (paths of @p cap bytes each), for shmr-test-worker --gate and
 * --record. */
static inline void client_make_gate_record(const char *tag, char *gate,
					   char *rec, size_t cap, size_t n)
{
	char what[64];

	snprintf(what, sizeof(what), "%s-gate", tag);
	client_make_fifo(gate, cap, what);
	snprintf(what, sizeof(what), "%s-rec", tag);
	client_make_record(rec, cap, what, n);
}

/* The 2 x @p n bytes of a shmr-test-worker --record file. */
static inline void client_read_record(const char *path, unsigned char *counts,
				      size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, counts, 2 * n), (ssize_t)(2 * n));
	close(fd);
}

/* Release every shmr-test-worker waiting at gate @p fifo now (none
 * waiting: nothing). */
static inline void client_poke_gate(const char *fifo)
{
	int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

/* What shmr_test_wait(client_gate_recorded, ...) waits for: every key
 * below @p n but @p skip (-1: none) recorded in @p rec, releasing the
 * workers at gate @p gate at each look. */
struct client_record_wait {
	const char *gate, *rec;
	unsigned n;
	long skip;
};

/* Record files are at most this many keys. */
#define CLIENT_RECORD_MAX 64u

static inline int client_gate_recorded(void *arg)
{
	const struct client_record_wait *w = arg;
	unsigned char counts[2 * CLIENT_RECORD_MAX];

	assert_true(w->n <= CLIENT_RECORD_MAX);
	client_poke_gate(w->gate);
	client_read_record(w->rec, counts, w->n);
	for (unsigned k = 0; k < w->n; k++)
		if ((long)k != w->skip && counts[k] == 0)
			return 0;
	return 1;
}

#endif
