/*
 * The routes' sojourn histograms as Prometheus text
 * (control/metrics.c): known sojourns injected through the unit
 * API (shmr/hist.h) give exactly the cumulative `le` buckets, +Inf, _sum
 * and _count they must, labels escaped, and a buffer too small leaves
 * -ENOSPC, not a half line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <shmr/hist.h>

#include "sojourn_metrics.h"

static char buf[16384];

static void has_line(const char *body, const char *line)
{
	char want[300];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strncmp(body, want + 1, strlen(want + 1)) != 0 &&
	    !strstr(body, want))
		fail_msg("no line \"%s\" in:\n%s", line, body);
}

static void known_sojourns(void **state)
{
	static struct shmr_hist h;
	static uint64_t counts[SHMR_HIST_BUCKETS];
	struct shmr_hist_summary s;
	size_t len = 0;
	unsigned lines = 0;

	(void)state;
	shmr_hist_reset(&h);
	for (int i = 0; i < 990; i++)
		shmr_hist_record(&h, 1000);     /* 1 us */
	for (int i = 0; i < 10; i++)
		shmr_hist_record(&h, 100000);   /* 100 us */
	shmr_hist_record(&h, 131072);           /* exactly 2^17 ns */
	shmr_hist_read(&h, counts, &s);
	assert_int_equal(shmr_ctl_sojourn_metrics_head(buf, sizeof(buf), &len),
			 0);
	assert_int_equal(shmr_ctl_sojourn_metrics_route(buf, sizeof(buf), &len,
							"orders", "w\"0", &s),
			 0);
	assert_int_equal(len, strlen(buf));
	has_line(buf, "# TYPE shmr_route_sojourn_seconds histogram");
	/* Below 1 us's bucket nothing; 2^11 ns = 2.048 us holds the 990. */
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"1.28e-07\"} 0");
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"5.12e-07\"} 0");
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"2.048e-06\"} 990");
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"3.2768e-05\"} 990");
	/* 2^17 ns: the 100 us ones; the one of exactly 2^17 from the next
	 * edge up. */
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"0.000131072\"} 1000");
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"0.000524288\"} 1001");
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"34.359738368\"} 1001");
	has_line(buf, "shmr_route_sojourn_seconds_bucket{router=\"orders\","
		      "route=\"w\\\"0\",le=\"+Inf\"} 1001");
	has_line(buf, "shmr_route_sojourn_seconds_sum{router=\"orders\","
		      "route=\"w\\\"0\"} 0.002121072");
	has_line(buf, "shmr_route_sojourn_seconds_count{router=\"orders\","
		      "route=\"w\\\"0\"} 1001");
	for (const char *p = buf; (p = strchr(p, '\n')); p++)
		lines++;
	/* HELP, TYPE, 15 edges, +Inf, sum, count. */
	assert_int_equal(lines, 2 + SHMR_HIST_EDGES + 3);
}

static void too_small(void **state)
{
	struct shmr_hist_summary s = { 0 };
	size_t len = 5;

	(void)state;
	memcpy(buf, "abcd\n", 6);
	assert_int_equal(shmr_ctl_sojourn_metrics_route(buf, 64, &len, "r",
							"q", &s),
			 -ENOSPC);
	assert_int_equal(len, 5);
	assert_string_equal(buf, "abcd\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_sojourns),
		cmocka_unit_test(too_small),
	};

	return cmocka_run_group_tests_name("sojourn_metrics", tests, NULL,
					   NULL);
}
