/*
 * The Prometheus listener (issue 14): with metrics_listen set, the running
 * appliance serves /metrics over real HTTP (fetched here with python3's
 * urllib and parsed with prometheus_client, as a scraper would), and the
 * listener, a network surface, answers everything else as the brief says:
 * 404 and 405, MHD's 400 and 431 for what is not a request or does not
 * fit, a cap on connections, and it binds only the configured address.
 * After each abuse the control plane still answers on its socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include <shmr/shmr.h>

#include "shmr_test_app.h"
#include "test_worker.h"

#define CALLS 5

static struct shmr_test_client g_cl;
static unsigned g_port;

static int group_setup(void **state)
{
	char conf[1024];
	struct shmr_pid router;
	struct shmr_test_stats st;
	int i = 0;

	g_port = shmr_test_free_port();
	snprintf(conf, sizeof(conf),
		 "lcores = 1;\n"
		 "metrics_listen = \"127.0.0.1:%u\";\n"
		 "routers = ( { name = \"front\"; behaviour = \"round-robin\";\n"
		 "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; "
		 "} ); } );\n",
		 g_port);
	if (!g_port || shmr_test_client_start(&g_cl, "http", conf, -1) < 0)
		return -1;
	if (shmr_lookup(g_cl.d, "front", &router) == 0)
		while (i < CALLS &&
		       shmr_call(g_cl.ep, router, 1, 0, "stats", 5, &st,
				 sizeof(st), 30000) == (int)sizeof(st))
			i++;
	*state = &g_cl;
	return i == CALLS ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	return shmr_test_client_stop(&g_cl) == 0 ? 0 : -1;
}

/* The control plane still answers on its socket. */
static void control_alive(void)
{
	char ans[4096];

	assert_int_equal(shmr_test_ctl(&g_cl.app, "STATUS", ans, sizeof(ans)),
			 0);
}

static int connect_to(const char *addr)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	a.sin_port = htons((uint16_t)g_port);
	assert_int_equal(inet_pton(AF_INET, addr, &a.sin_addr), 1);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(s);
		return -e;
	}
	return s;
}

/* Send @p req (@p len bytes) on a new connection and read the answer
 * until the server closes it or it is complete (liveness bound 10 s);
 * returns the status code, 0 when the server closed without one. */
static int exchange(const char *req, size_t len, char *ans, size_t cap)
{
	int s = connect_to("127.0.0.1"), status = 0;
	size_t got = 0;
	ssize_t n;

	assert_true(s >= 0);
	/* The server may answer and close before it read everything. */
	(void)!send(s, req, len, MSG_NOSIGNAL);
	shutdown(s, SHUT_WR);
	for (;;) {
		struct pollfd p = { .fd = s, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 10000), 1);
		n = recv(s, ans + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == cap - 1)
			break;
	}
	ans[got] = '\0';
	close(s);
	sscanf(ans, "HTTP/1.%*d %d", &status);
	return status;
}

static int request(const char *req, char *ans, size_t cap)
{
	return exchange(req, strlen(req), ans, cap);
}

/* GET /metrics with urllib, parsed by prometheus_client: the route's
 * counters are the calls this test made. */
static void test_scrape(void **state)
{
	char script[2048], out[65536];

	(void)state;
	snprintf(script, sizeof(script),
		 "import urllib.request\n"
		 "from prometheus_client.parser import text_string_to_metric_families as p\n"
		 "r = urllib.request.urlopen('http://127.0.0.1:%u/metrics', timeout=10)\n"
		 "assert r.status == 200, r.status\n"
		 "assert r.headers['Content-Type'].startswith('text/plain; version=0.0.4'), r.headers['Content-Type']\n"
		 "v = {}\n"
		 "for f in p(r.read().decode()):\n"
		 "    for s in f.samples:\n"
		 "        v[(s.name, tuple(sorted(s.labels.items())))] = s.value\n"
		 "print('forwarded', int(v[('shmr_route_forwarded_total', (('route', 'a'), ('router', 'front')))]))\n"
		 "print('router', int(v[('shmr_router_forwarded_total', (('router', 'front'),))]))\n",
		 g_port);
	/* The python3 that has prometheus_client (meson found it). */
	char *argv[] = { getenv("SHMR_PYTHON"), "-c", script, NULL };

	assert_non_null(argv[0]);

	assert_int_equal(shmr_test_run(argv, out, sizeof(out)), 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "forwarded 5\n"));
	assert_non_null(strstr(out, "router 5\n"));
}

/* HEAD: the headers of GET, no body; other paths 404, other methods 405
 * (with Allow), both with the daemon unharmed. */
static void test_paths_and_methods(void **state)
{
	static const char *const methods[] = { "POST", "PUT", "DELETE",
					       "OPTIONS", "PATCH" };
	char ans[65536], req[256];

	(void)state;
	assert_int_equal(request("HEAD /metrics HTTP/1.1\r\nHost: x\r\n"
				 "Connection: close\r\n\r\n",
				 ans, sizeof(ans)),
			 200);
	assert_non_null(strstr(ans, "text/plain; version=0.0.4"));
	assert_null(strstr(ans, "shmr_"));
	assert_int_equal(request("GET /metrics HTTP/1.0\r\n\r\n", ans,
				 sizeof(ans)),
			 200);
	assert_non_null(strstr(ans, "# TYPE shmr_route_forwarded_total counter"));
	assert_int_equal(request("GET / HTTP/1.0\r\n\r\n", ans, sizeof(ans)),
			 404);
	assert_int_equal(request("GET /metrics/x HTTP/1.0\r\n\r\n", ans,
				 sizeof(ans)),
			 404);
	assert_int_equal(request("GET /../etc/passwd HTTP/1.0\r\n\r\n", ans,
				 sizeof(ans)),
			 404);
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		snprintf(req, sizeof(req),
			 "%s /metrics HTTP/1.1\r\nHost: x\r\n"
			 "Content-Length: 0\r\nConnection: close\r\n\r\n",
			 methods[i]);
		assert_int_equal(request(req, ans, sizeof(ans)), 405);
		assert_non_null(strstr(ans, "Allow: GET, HEAD"));
	}
	control_alive();
}

/* What is not HTTP, or does not fit: MHD's own error answers (or a
 * closed connection), never a crash or a hang. */
static void test_malformed_and_oversized(void **state)
{
	static const char *const bad[] = {
		"GARBAGE\r\n\r\n",
		"GET /metrics HTTP/1.1\r\n\r\n", /* 1.1 without Host */
		"GET /metrics HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
		"\x01\x02\x03\xff\xfe\r\n\r\n",
	};
	char ans[65536];
	char *big = malloc(1 << 17);
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = request(bad[i], ans, sizeof(ans));

		print_message("bad request %zu -> %d\n", i, st);
		assert_true(st == 400 || st == 0);
	}
	/* 100 KiB of headers: over the connection's 16 KiB. */
	n = (size_t)snprintf(big, 1 << 17, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
	while (n < 100 * 1024)
		n += (size_t)snprintf(big + n, (1 << 17) - n,
				      "X-Filler: %0100d\r\n", 0);
	n += (size_t)snprintf(big + n, (1 << 17) - n, "\r\n");
	assert_int_equal(exchange(big, n, ans, sizeof(ans)), 431);
	/* A 100 KiB path. */
	n = (size_t)snprintf(big, 1 << 17, "GET /");
	memset(big + n, 'a', 100 * 1024);
	n += 100 * 1024;
	n += (size_t)snprintf(big + n, (1 << 17) - n, " HTTP/1.0\r\n\r\n");
	{
		int st = exchange(big, n, ans, sizeof(ans));

		print_message("100 KiB path -> %d\n", st);
		assert_true(st == 414 || st == 431);
	}
	free(big);
	assert_int_equal(request("GET /metrics HTTP/1.0\r\n\r\n", ans,
				 sizeof(ans)),
			 200);
	control_alive();
}

/* 40 connections held open, sending nothing: over the cap they are
 * closed at once; the control socket keeps answering meanwhile (the
 * listener never blocks the loop), and once they go, a scrape works. */
static void test_many_connections(void **state)
{
	int s[40], closed = 0;
	char ans[65536], c;

	(void)state;
	for (int i = 0; i < 40; i++)
		s[i] = connect_to("127.0.0.1");
	control_alive();
	for (int i = 0; i < 40; i++) {
		struct pollfd p = { .fd = s[i], .events = POLLIN };

		/* Closed by the server (EOF) within a liveness bound, or
		 * still open and silent. */
		if (s[i] >= 0 && poll(&p, 1, i < 8 ? 200 : 2000) == 1 &&
		    recv(s[i], &c, 1, 0) <= 0)
			closed++;
	}
	print_message("%d of 40 idle connections closed by the server\n",
		      closed);
	assert_true(closed >= 40 - 16);
	for (int i = 0; i < 40; i++)
		if (s[i] >= 0)
			close(s[i]);
	/* The server sees the closes on its next pass: a connection made
	 * before that may still find the address's slots taken (liveness
	 * bound: 5 s). */
	int st = 0;

	for (int tries = 0; tries < 50 && st != 200; tries++) {
		st = request("GET /metrics HTTP/1.0\r\n\r\n", ans, sizeof(ans));
		if (st != 200)
			usleep(100000);
	}
	assert_int_equal(st, 200);
	control_alive();
}

/* Bound to 127.0.0.1 only: the same port on another loopback address
 * (and on the wildcard's other addresses) refuses. */
static void test_binds_only_configured_address(void **state)
{
	(void)state;
	assert_int_equal(connect_to("127.0.0.2"), -ECONNREFUSED);
}

/* --check refuses what is not a numeric ADDRESS:PORT, naming it. */
static void test_listen_checked(void **state)
{
	static const char *const bad[] = { "9464", "127.0.0.1", "127.0.0.1:0",
					   "127.0.0.1:70000", "localhost:9464",
					   "[::1]9464", "127.0.0.1:94x4",
					   ":9464" };
	char dir[] = "/tmp/shmr-test-httpcheck-XXXXXX", out[4096], text[256],
	     want[256];
	const char *conf;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "domain = \"hc\";\nmetrics_listen = \"%s\";\n", bad[i]);
		conf = shmr_test_write_conf(dir, "bad.conf", text);
		assert_int_equal(shmr_test_run_control(conf, dir, "--check", out,
						       sizeof(out)),
				 2);
		snprintf(want, sizeof(want),
			 "bad.conf:2: metrics_listen: \"%s\" is not ADDRESS:PORT",
			 bad[i]);
		assert_non_null(strstr(out, want));
	}
	conf = shmr_test_write_conf(
		dir, "ok.conf",
		"domain = \"hc\";\nmetrics_listen = \"[::1]:9464\";\n"
		"routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
		"  routes = ( { name = \"a\"; program = \"w\"; } ); } );\n");
	assert_int_equal(shmr_test_run_control(conf, dir, "--check", out,
					       sizeof(out)),
			 0);
	unlink(conf);
	snprintf(text, sizeof(text), "%s/bad.conf", dir);
	unlink(text);
	rmdir(dir);
}

/* A second domain on the same address: start-up fails (status 1) with
 * one line naming metrics_listen and why; the first one is unharmed. */
static void test_address_in_use(void **state)
{
	char dir[] = "/tmp/shmr-test-httpbusy-XXXXXX", out[8192], text[512],
	     want[128];
	const char *conf;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(text, sizeof(text),
		 "domain = \"th%d\";\nlcores = 1;\n"
		 "metrics_listen = \"127.0.0.1:%u\";\n"
		 "routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
		 "  routes = ( { name = \"a\"; program = \"shmr-test-worker\"; "
		 "} ); } );\n",
		 (int)getpid(), g_port);
	conf = shmr_test_write_conf(dir, "busy.conf", text);
	assert_int_equal(shmr_test_run_control(conf, dir, NULL, out, sizeof(out)),
			 1);
	print_message("%s", out);
	snprintf(want, sizeof(want),
		 "metrics_listen 127.0.0.1:%u: cannot listen: Address already in use",
		 g_port);
	assert_non_null(strstr(out, want));
	unlink(conf);
	rmdir(dir);
	control_alive();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape),
		cmocka_unit_test(test_paths_and_methods),
		cmocka_unit_test(test_malformed_and_oversized),
		cmocka_unit_test(test_many_connections),
		cmocka_unit_test(test_binds_only_configured_address),
		cmocka_unit_test(test_listen_checked),
		cmocka_unit_test(test_address_in_use),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
