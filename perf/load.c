/*
 * `shmr-perf load`: the demo load generator.  Attaches to a running
 * appliance and sends messages to a router, round-robin over a list of
 * types, at about --rate messages a second, until --duration seconds pass
 * or SIGINT/SIGTERM arrives; then prints how many it sent.
 *
 * --tally (workers run with `shmr-echo-worker --ack`): every send's key is
 * its sequence number, and each ack the workers send back marks that key
 * received (a bitmap); acks flagged redelivered are counted.  At the end
 * the acks still on their way are waited for (until every send is acked,
 * or none came for 2 s), and one line says "tally: sent N received N
 * redelivered N lost N": lost are sends no worker ever acked, which a
 * worker killed with kill -9 must not cause (its inbox and the burst it
 * held go to its successor).
 *
 * Pacing: the clock is read once per burst; when ahead of the schedule the
 * generator sleeps until the next burst is due, so a demo at a modest rate
 * does not keep a core busy for nothing.  A full lane also makes it sleep
 * briefly: this is a load generator, not a benchmark.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/shmr.h>

#include "perf_internal.h"

#define LOAD_TYPES_MAX 64
#define LOAD_BURST_MAX 32u

static _Atomic int load_stop; /* lock-free: async-signal-safe */

static void on_signal(int sig)
{
	(void)sig;
	atomic_store_explicit(&load_stop, 1, memory_order_relaxed);
}

static int load_usage(void)
{
	fprintf(stderr, "usage: shmr-perf load [--domain D] [--run-dir DIR] "
			"[--router NAME] [--types 1,2,3] [--rate N] "
			"[--duration SEC] [--tally] [--json]\n");
	return PERF_EXIT_USAGE;
}

static int parse_types(const char *s, uint32_t *types, unsigned *n)
{
	*n = 0;
	while (*s) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (end == s || errno || v > UINT32_MAX ||
		    *n == LOAD_TYPES_MAX || (*end && *end != ','))
			return -1;
		types[(*n)++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -1;
}

struct tally {
	uint8_t *seen; /* bit per key */
	uint64_t cap_bits, received, redelivered, acks;
	uint64_t last_ack_ns;
};

/* Take the acks waiting at @p ep (none waited for).  A key at or past
 * @p limit was never sent: a worker's mistake, not counted. */
static void tally_take(struct shmr_endpoint *ep, struct tally *t,
		       uint64_t limit)
{
	const struct shmr_msg *m[64];
	int n;

	while ((n = shmr_recv_burst(ep, m, 64, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			uint64_t k = m[i]->key;

			if (m[i]->kind != SHMR_KIND_SEND || m[i]->len != 1 ||
			    k >= limit)
				continue;
			t->acks++;
			if (m[i]->data[0] == 1)
				t->redelivered++;
			while (k >= t->cap_bits) {
				uint64_t cap = t->cap_bits ? t->cap_bits * 2
							   : 1u << 20;
				uint8_t *p = realloc(t->seen, cap / 8);

				if (!p)
					return;
				memset(p + t->cap_bits / 8, 0,
				       (cap - t->cap_bits) / 8);
				t->seen = p;
				t->cap_bits = cap;
			}
			if (!(t->seen[k / 8] & (1u << (k % 8)))) {
				t->seen[k / 8] |= (uint8_t)(1u << (k % 8));
				t->received++;
			}
		}
		t->last_ack_ns = perf_now_ns();
	}
}

static void nap_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			       (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL); /* EINTR: the caller checks load_stop */
}

int perf_load_main(int argc, char **argv)
{
	const char *domain = "shmr-demo", *router_name = "events";
	uint32_t types[LOAD_TYPES_MAX] = { 1, 2, 3 };
	unsigned ntypes = 3, ti = 0;
	double rate = 200000, duration = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct shmr_out out[LOAD_BURST_MAX];
	uint64_t keys[LOAD_BURST_MAX];
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid to;
	uint64_t sent = 0, full = 0, t0, now, end_ns;
	unsigned burst;
	int rc, json = 0, tally_on = 0;
	struct tally tally = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			load_usage();
			return PERF_EXIT_OK;
		}
		if (strcmp(a, "--json") == 0) {
			json = 1;
			continue;
		}
		if (strcmp(a, "--tally") == 0) {
			tally_on = 1;
			continue;
		}
		if (i + 1 >= argc)
			return load_usage();
		if (strcmp(a, "--domain") == 0) {
			domain = argv[++i];
		} else if (strcmp(a, "--run-dir") == 0) {
			setenv("SHMR_RUN_DIR", argv[++i], 1);
		} else if (strcmp(a, "--router") == 0) {
			router_name = argv[++i];
		} else if (strcmp(a, "--types") == 0) {
			if (parse_types(argv[++i], types, &ntypes) < 0)
				return load_usage();
		} else if (strcmp(a, "--rate") == 0) {
			rate = strtod(argv[++i], &end);
			if (*end || !(rate >= 1 && rate <= 1e9))
				return load_usage();
		} else if (strcmp(a, "--duration") == 0) {
			duration = strtod(argv[++i], &end);
			if (*end || !(duration >= 0 && duration <= 1e7))
				return load_usage();
		} else {
			return load_usage();
		}
	}

	if (json && perf_json_open() < 0) {
		perror("shmr-perf load: --json");
		return PERF_EXIT_FAIL;
	}
	rc = shmr_attach(domain, &d);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf load: attach %s: %s\n", domain,
			shmr_strerror(rc));
		return PERF_EXIT_FAIL;
	}
	rc = shmr_endpoint_open(d, &ep);
	if (rc == 0)
		rc = shmr_lookup(d, router_name, &to);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf load: %s: %s\n", router_name,
			shmr_strerror(rc));
		if (ep)
			shmr_endpoint_close(ep);
		shmr_detach(d);
		return PERF_EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* About a thousand bursts a second at most: pacing stays smooth at
	 * low rates and costs nothing at high ones. */
	burst = (unsigned)(rate / 1000);
	burst = burst < 1 ? 1 : burst > LOAD_BURST_MAX ? LOAD_BURST_MAX : burst;
	for (unsigned k = 0; k < burst; k++) {
		out[k].to = to;
		out[k].data = &keys[k];
		out[k].len = sizeof(keys[k]);
	}
	t0 = perf_now_ns();
	end_ns = duration > 0 ? t0 + (uint64_t)(duration * 1e9) : UINT64_MAX;
	while (!atomic_load_explicit(&load_stop, memory_order_relaxed)) {
		uint64_t due;
		unsigned done = 0;

		now = perf_now_ns();
		if (now >= end_ns)
			break;
		if (tally_on)
			tally_take(ep, &tally, sent);
		/* Messages the schedule allows by now. */
		due = (uint64_t)((double)(now - t0) * rate / 1e9);
		if (sent >= due) {
			uint64_t next = t0 + (uint64_t)((double)(sent + burst) *
							1e9 / rate);
			nap_ns(next > now ? next - now : 1000);
			continue;
		}
		for (unsigned k = 0; k < burst; k++) {
			keys[k] = sent + k;
			out[k].key = sent + k;
			out[k].type = types[ti];
			if (++ti == ntypes)
				ti = 0;
		}
		while (done < burst &&
		       !atomic_load_explicit(&load_stop, memory_order_relaxed)) {
			rc = shmr_send_burst(ep, out + done, burst - done);
			if (rc < 0) {
				fprintf(stderr, "shmr-perf load: send: %s\n",
					shmr_strerror(rc));
				atomic_store(&load_stop, 1);
				break;
			}
			if (rc == 0) {
				/* The appliance is behind: let it catch up
				 * (and take the acks that may be holding
				 * its workers up). */
				full++;
				if (tally_on)
					tally_take(ep, &tally, sent + burst);
				nap_ns(100000);
			}
			done += (unsigned)rc;
		}
		sent += done;
	}
	now = perf_now_ns();
	if (tally_on) {
		/* The acks on their way: until all are in, or none came for
		 * 2 s (a liveness bound, not a measurement). */
		tally.last_ack_ns = perf_now_ns();
		while (tally.received < sent &&
		       perf_now_ns() - tally.last_ack_ns < 2000000000ull) {
			tally_take(ep, &tally, sent);
			nap_ns(1000000);
		}
	}
	printf("shmr-perf load: sent %llu messages to %s in %.1f s "
	       "(%.0f msg/s; lane full %llu times)\n",
	       (unsigned long long)sent, router_name, (double)(now - t0) / 1e9,
	       now > t0 ? (double)sent * 1e9 / (double)(now - t0) : 0.0,
	       (unsigned long long)full);
	if (tally_on)
		printf("shmr-perf load: tally: sent %llu received %llu "
		       "redelivered %llu lost %llu\n",
		       (unsigned long long)sent,
		       (unsigned long long)tally.received,
		       (unsigned long long)tally.redelivered,
		       (unsigned long long)(sent - tally.received));
	if (perf_json) {
		struct json_object *j = perf_json_record("load", "run");

		perf_json_str(j, "domain", domain);
		perf_json_str(j, "router", router_name);
		perf_json_num(j, "rate_asked_msgs_per_s", rate);
		perf_json_u64(j, "sent", sent);
		perf_json_num(j, "duration_s", (double)(now - t0) / 1e9);
		perf_json_num(j, "msgs_per_s",
			      now > t0 ? (double)sent * 1e9 / (double)(now - t0)
				       : 0.0);
		perf_json_u64(j, "lane_full", full);
		if (tally_on) {
			perf_json_u64(j, "received", tally.received);
			perf_json_u64(j, "redelivered", tally.redelivered);
			perf_json_u64(j, "lost", sent - tally.received);
		}
		perf_json_emit(j);
	}
	free(tally.seen);
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return tally_on && tally.received < sent ? PERF_EXIT_FAIL : PERF_EXIT_OK;
}
