/*
 * The client's side of a control plane that dies: which requests are sent
 * again on a new connection and which return SHMR_E_CONTROL_LOST
 * (shm/proto.c's essay).  No daemon: a socketpair plays the connection
 * that dies (a thread reads the request, then closes, as a control plane
 * killed mid-request), and a thread on a listening socket plays the
 * control plane that came back, answering "OK <request>" and noting each
 * connection and request.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/proto_client.h>

/* ---- the control plane that came back ---------------------------------- */

struct server {
	char dir[64], path[128];
	int lfd;
	pthread_t th;
	pthread_mutex_t lock;
	int accepts;
	char log[1024]; /* the requests, one per line */
};

static void *serve(void *arg)
{
	struct server *s = arg;
	char buf[256], ans[300];
	int fd;
	ssize_t n;

	while ((fd = accept(s->lfd, NULL, NULL)) >= 0) {
		pthread_mutex_lock(&s->lock);
		s->accepts++;
		pthread_mutex_unlock(&s->lock);
		while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
			buf[n] = '\0';
			pthread_mutex_lock(&s->lock);
			strncat(s->log, buf,
				sizeof(s->log) - strlen(s->log) - 2);
			strcat(s->log, "\n");
			pthread_mutex_unlock(&s->lock);
			snprintf(ans, sizeof(ans), "OK %s", buf);
			send(fd, ans, strlen(ans), MSG_NOSIGNAL);
		}
		close(fd);
	}
	return NULL;
}

static void server_path(struct server *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->dir, "/tmp/shmr-conn-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/d.sock", s->dir);
	s->lfd = -1;
	pthread_mutex_init(&s->lock, NULL);
}

static void server_listen(struct server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, s->path);
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s->lfd, 8), 0);
	assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	if (s->lfd >= 0) {
		shutdown(s->lfd, SHUT_RDWR); /* accept() returns */
		pthread_join(s->th, NULL);
		close(s->lfd);
	}
	unlink(s->path);
	rmdir(s->dir);
}

static int server_accepts(struct server *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->accepts;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* ---- the connection that dies ------------------------------------------ */

/* Read one request, then die (close, the request read and unanswered). */
static void *die_after_read(void *arg)
{
	int fd = *(int *)arg;
	char buf[256];

	(void)recv(fd, buf, sizeof(buf), 0);
	close(fd);
	return NULL;
}

struct dying {
	int client, peer;
	pthread_t th;
	int threaded;
};

/* A connection whose control plane dies with the first request read
 * (@p before_send: already dead, nothing will be read). */
static void dying_make(struct dying *k, int before_send)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				    sv),
			 0);
	k->client = sv[0];
	k->peer = sv[1];
	k->threaded = !before_send;
	if (before_send)
		close(k->peer);
	else
		assert_int_equal(pthread_create(&k->th, NULL, die_after_read,
						&k->peer),
				 0);
}

static void dying_join(struct dying *k)
{
	if (k->threaded)
		pthread_join(k->th, NULL);
}

static int hellos;

/* libshmr's part on a new connection, played: ATTACH, expect OK. */
static int hello_attach(void *arg, int fd)
{
	char ans[64];

	(void)arg;
	hellos++;
	return shmr_proto_request(fd, "ATTACH 1", ans, sizeof(ans), NULL);
}

static int hello_refuse(void *arg, int fd)
{
	(void)arg;
	(void)fd;
	hellos++;
	return -SHMR_E_NO_DOMAIN; /* e.g. a new domain, not ours */
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* ---- tests -------------------------------------------------------------- */

static void test_repeatable_are_the_reads(void **state)
{
	static const char *const reads[] = {
		"ATTACH 7",	    "STATUS",	     "ROUTES events",
		"ROUTE events a",   "INSPECT events", "INSPECT events json",
		"ROUTEES events",   "DLQ_LIST events", "METRICS",
	};
	static const char *const writes[] = {
		"OPEN",		       "CLOSE 3 1",	   "CLAIM 3 1",
		"REGISTER me 3 1",     "UNREGISTER me 3 1", "RETIRE 3 1",
		"ADD r a - prog",      "REMOVE r a",	   "DISABLE r a",
		"ENABLE r a",	       "REPLACE r a prog", "RESPAWN r a",
		"DRAIN r a",	       "ROUTEE_ADD r a",   "ROUTEE_REMOVE r a",
		"POOL_ADJUST r +1",    "KILL r",	   "POISON r",
		"DLQ_REPLAY r",	       "STOP",		   "BOGUS",
		"STATUSX",	       "ROUTESX r",	   "",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		assert_true(shmr_proto_repeatable(reads[i]));
	for (unsigned i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
		assert_false(shmr_proto_repeatable(writes[i]));
}

static void test_request_tells_lost_before_from_after(void **state)
{
	struct dying k;
	char ans[64];

	(void)state;
	/* Gone before the send: nothing went out. */
	dying_make(&k, 1);
	assert_int_equal(shmr_proto_request(k.client, "OPEN", ans,
					    sizeof(ans), NULL),
			 -EPIPE);
	close(k.client);
	/* Read, then gone: the outcome is unknown. */
	dying_make(&k, 0);
	assert_int_equal(shmr_proto_request(k.client, "OPEN", ans,
					    sizeof(ans), NULL),
			 -SHMR_E_CONTROL_LOST);
	dying_join(&k);
	close(k.client);
}

/* One connection whose control plane dies (see dying_make()), and where
 * one comes back (@p listening) or none does. */
struct rig {
	struct shmr_proto_conn c;
	struct server s;
	struct dying k;
};

static void rig_up(struct rig *r, int listening, int before_send,
		   int reconnect_ms, int (*hello)(void *, int))
{
	server_path(&r->s);
	if (listening)
		server_listen(&r->s);
	dying_make(&r->k, before_send);
	hellos = 0;
	assert_int_equal(shmr_proto_conn_init(&r->c, r->s.path, r->k.client,
					      reconnect_ms, hello, NULL),
			 0);
}

static void rig_down(struct rig *r)
{
	dying_join(&r->k);
	shmr_proto_conn_close(&r->c);
	server_stop(&r->s);
}

static int rig_request(struct rig *r, const char *req, char *ans, size_t cap)
{
	return shmr_proto_conn_request(&r->c, req, ans, cap, NULL);
}

static void test_read_caught_by_the_death_is_sent_again(void **state)
{
	struct rig r;
	char ans[64];

	(void)state;
	rig_up(&r, 1, 0, 2000, hello_attach);
	assert_int_equal(rig_request(&r, "STATUS", ans, sizeof(ans)), 0);
	assert_string_equal(ans, "OK STATUS");
	assert_int_equal(hellos, 1);
	assert_int_equal(server_accepts(&r.s), 1);
	assert_string_equal(r.s.log, "ATTACH 1\nSTATUS\n");
	rig_down(&r);
}

static void test_write_caught_by_the_death_is_lost(void **state)
{
	struct timespec t0;
	struct rig r;
	char ans[64];

	(void)state;
	rig_up(&r, 1, 0, 2000, hello_attach);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rig_request(&r, "DISABLE r a", ans, sizeof(ans)),
			 -SHMR_E_CONTROL_LOST);
	/* At once, and never sent to the new control plane. */
	assert_true(ms_since(&t0) < 1000);
	assert_int_equal(server_accepts(&r.s), 0);
	assert_int_equal(hellos, 0);
	assert_int_equal(r.c.fd, -1);
	/* The next request reconnects first. */
	assert_int_equal(rig_request(&r, "OPEN", ans, sizeof(ans)), 0);
	assert_string_equal(ans, "OK OPEN");
	assert_string_equal(r.s.log, "ATTACH 1\nOPEN\n");
	rig_down(&r);
}

static void test_write_on_a_dead_connection_is_sent_once(void **state)
{
	struct rig r;
	char ans[64];

	(void)state;
	rig_up(&r, 1, 1, 2000, hello_attach);
	assert_int_equal(rig_request(&r, "REGISTER me 3 1", ans, sizeof(ans)),
			 0);
	assert_int_equal(hellos, 1);
	assert_string_equal(r.s.log, "ATTACH 1\nREGISTER me 3 1\n");
	rig_down(&r);
}

static void test_reconnect_off(void **state)
{
	struct rig r;
	char ans[64];

	(void)state;
	for (int before = 0; before < 2; before++) {
		rig_up(&r, 1, before, 0, hello_attach);
		/* A read caught by the death: not sent again either. */
		assert_int_equal(rig_request(&r, "STATUS", ans, sizeof(ans)),
				 -SHMR_E_NO_DOMAIN);
		assert_int_equal(rig_request(&r, "OPEN", ans, sizeof(ans)),
				 -SHMR_E_NO_DOMAIN);
		assert_int_equal(server_accepts(&r.s), 0);
		assert_int_equal(hellos, 0);
		rig_down(&r);
	}
}

static void test_no_control_plane_is_bounded(void **state)
{
	struct timespec t0;
	struct rig r;
	char ans[64];
	long ms;

	(void)state;
	rig_up(&r, 0, 1, 200, hello_attach); /* nobody listens there */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rig_request(&r, "STATUS", ans, sizeof(ans)),
			 -SHMR_E_NO_DOMAIN);
	ms = ms_since(&t0);
	assert_true(ms >= 190);
	assert_true(ms < 5000); /* a liveness bound on a shared machine */
	assert_string_equal(ans, "");
	rig_down(&r);
}

static void test_hello_refusal_is_returned(void **state)
{
	struct rig r;
	char ans[64];

	(void)state;
	rig_up(&r, 1, 1, 2000, hello_refuse);
	assert_int_equal(rig_request(&r, "STATUS", ans, sizeof(ans)),
			 -SHMR_E_NO_DOMAIN);
	assert_int_equal(hellos, 1);
	assert_int_equal(r.c.fd, -1);
	assert_string_equal(r.s.log, ""); /* the request never went out */
	rig_down(&r);
}

static void *listen_later(void *arg)
{
	struct timespec d = { 0, 150 * 1000000L };

	nanosleep(&d, NULL);
	server_listen(arg);
	return NULL;
}

static void test_connect_waits_for_the_restart(void **state)
{
	struct server s;
	pthread_t th;
	int fd;

	(void)state;
	server_path(&s);
	assert_int_equal(shmr_proto_connect_wait(s.path, 0),
			 -SHMR_E_NO_DOMAIN);
	assert_int_equal(pthread_create(&th, NULL, listen_later, &s), 0);
	fd = shmr_proto_connect_wait(s.path, 5000);
	pthread_join(th, NULL);
	assert_true(fd >= 0);
	close(fd);
	server_stop(&s);
}

static void test_reconnect_ms_from_the_environment(void **state)
{
	static const char *const bad[] = { "", "x", "-1", "5ms", "3600001",
					   "99999999999999999999" };

	(void)state;
	unsetenv(SHMR_ENV_RECONNECT_MS);
	assert_int_equal(shmr_proto_reconnect_ms(),
			 SHMR_PROTO_RECONNECT_MS_DEFAULT);
	assert_int_equal(SHMR_PROTO_RECONNECT_MS_DEFAULT, 10000);
	setenv(SHMR_ENV_RECONNECT_MS, "0", 1);
	assert_int_equal(shmr_proto_reconnect_ms(), 0);
	setenv(SHMR_ENV_RECONNECT_MS, "250", 1);
	assert_int_equal(shmr_proto_reconnect_ms(), 250);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(SHMR_ENV_RECONNECT_MS, bad[i], 1);
		assert_int_equal(shmr_proto_reconnect_ms(),
				 SHMR_PROTO_RECONNECT_MS_DEFAULT);
	}
	unsetenv(SHMR_ENV_RECONNECT_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeatable_are_the_reads),
		cmocka_unit_test(test_request_tells_lost_before_from_after),
		cmocka_unit_test(test_read_caught_by_the_death_is_sent_again),
		cmocka_unit_test(test_write_caught_by_the_death_is_lost),
		cmocka_unit_test(test_write_on_a_dead_connection_is_sent_once),
		cmocka_unit_test(test_reconnect_off),
		cmocka_unit_test(test_no_control_plane_is_bounded),
		cmocka_unit_test(test_hello_refusal_is_returned),
		cmocka_unit_test(test_connect_waits_for_the_restart),
		cmocka_unit_test(test_reconnect_ms_from_the_environment),
	};

	return cmocka_run_group_tests_name("proto_conn", tests, NULL, NULL);
}
