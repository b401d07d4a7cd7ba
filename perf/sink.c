/*
 * shmr-perf-sink: the route worker of `shmr-perf router`.
 *
 * Counts the sends it receives per sender and checks each sender's order by
 * the key: every key must be the previous one plus the stride (the number
 * of routes the sender spreads over).  A key that skips forward is a gap, a
 * key at or below the previous one a reorder.  With --stride 0 (a routing
 * logic may pick any sink for any key) only reorders are counted, and the
 * time after each burst that held a send is kept for PERF_OP_LAST.  Calls
 * are questions about those counts (perf_proto.h), answered with
 * shmr_reply().  --register NAME registers NAME for the route's endpoint,
 * so the harness can ask this sink directly, whatever the router picks;
 * a "*" at its end stands for the route's index (the routees of a pool,
 * "perf:3", share one argument list).
 *
 *     shmr-perf-sink [--stride N] [--burst N] [--register NAME]
 *
 * It waits for work like the bare consumer (spin briefly, then yield the
 * core); after a longer idle spell it blocks in shmr_recv_burst() so an
 * idle sink costs nothing.  SIGTERM ends it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/shmr.h>

#include "perf_internal.h"
#include "perf_proto.h"

#define SENDERS 128u        /* endpoint slots tracked one by one */
#define IDLE_BLOCK_NS 20000000ull /* 20 ms idle: block instead */
#define BLOCK_MS 100

struct sender {
	uint32_t gen;
	int seen; /* a key has been seen since the last reset */
	uint64_t count, last, gaps, reorders;
	uint64_t expect, done_ns;
	uint64_t last_ns; /* --stride 0: after its last burst with a send */
};

static struct sender senders[SENDERS + 1]; /* last: slots out of range */
static uint64_t total, redelivered;

static struct sender *sender_of(struct shmr_pid p)
{
	struct sender *s = &senders[p.slot < SENDERS ? p.slot : SENDERS];

	if (s->gen != p.gen) {
		/* A new owner of that slot: start afresh. */
		memset(s, 0, sizeof(*s));
		s->gen = p.gen;
	}
	return s;
}

/* The same sender: slot and generation compared as one word. */
static inline uint64_t pid_word(struct shmr_pid p)
{
	return (uint64_t)p.slot | (uint64_t)p.gen << 32;
}

/*
 * Count the run of sends from one sender that starts at msgs[@p i] and
 * check its order by the key: a key at or below the sender's last is a
 * reorder, one that is not the last plus @p stride (when not 0) a gap.
 * The run's words are locals (registers, as the bare consumer's are),
 * written back to its sender once.  Returns the index after the run: the
 * first message that is a call or another sender's.
 */
static int count_run(const struct shmr_msg **msgs, int i, int n,
		     uint64_t stride)
{
	const struct shmr_msg *m = msgs[i];
	uint64_t who = pid_word(m->from);
	struct sender *s = sender_of(m->from);
	uint64_t last = s->last, gaps = 0, reorders = 0, redel = 0;
	int seen = s->seen, from = i;

	for (; i < n; i++) {
		uint64_t k;

		m = msgs[i];
		if (m->kind == SHMR_KIND_CALL || pid_word(m->from) != who)
			break;
		k = m->key;
		redel += (m->flags & SHMR_F_REDELIVERED) != 0;
		if (__builtin_expect(!seen, 0)) {
			seen = 1;
			last = k;
			continue;
		}
		if (__builtin_expect(k <= last, 0)) {
			reorders++;
			continue;
		}
		gaps += stride && k != last + stride;
		last = k;
	}
	s->seen = seen;
	s->last = last;
	s->gaps += gaps;
	s->reorders += reorders;
	total += (uint64_t)(i - from);
	redelivered += redel;
	/* The burst that brings the count to what was expected. */
	if (s->count < s->expect && s->count + (uint64_t)(i - from) >= s->expect)
		s->done_ns = perf_now_ns();
	s->count += (uint64_t)(i - from);
	return i;
}

static void on_call(struct shmr_endpoint *ep, const struct shmr_msg *m,
		    uint64_t route)
{
	struct sender *s = sender_of(m->from);
	struct perf_req req = { 0 };
	struct perf_ans ans = { 0 };
	unsigned idle = 0;
	int status = 0;

	size_t len;
	/* Inline, or in the arena (shmr-perf large's calls). */
	const void *q = shmr_msg_payload(ep, m, &len);

	if (q)
		memcpy(&req, q, len < sizeof(req) ? len : sizeof(req));
	switch (req.op) {
	case PERF_OP_PING:
		ans.a = route;
		break;
	case PERF_OP_EXPECT:
		memset(s, 0, sizeof(*s));
		s->gen = m->from.gen;
		s->expect = req.arg;
		ans.a = route;
		break;
	case PERF_OP_COUNT:
		ans.a = s->count;
		ans.b = s->done_ns;
		break;
	case PERF_OP_ERRORS:
		ans.a = s->gaps;
		ans.b = s->reorders;
		break;
	case PERF_OP_TOTAL:
		ans.a = total;
		ans.b = redelivered;
		break;
	case PERF_OP_LAST:
		ans.a = s->count;
		ans.b = s->last_ns;
		break;
	default:
		status = -EINVAL;
	}
	/* Full only under overload: wait for room rather than drop it. */
	while (shmr_reply(ep, m, status, &ans, status ? 0 : sizeof(ans)) ==
	       -EAGAIN)
		perf_backoff(&idle, PERF_SPIN_SHARED);
}

/* --help: stdout, status 0; a bad argument: stderr, status 2. */
static int usage(FILE *f)
{
	fprintf(f, "usage: shmr-perf-sink [--stride N] [--burst N] "
		   "[--register NAME]\n"
		   "       shmr-perf-sink --version | --help\n");
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	const char *rname = getenv("SHMR_ROUTE"), *reg = NULL;
	char regbuf[64];
	unsigned long stride = 1, burst = 32;
	uint64_t route = 0, idle_since = 0;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	const struct shmr_msg *msgs[256];
	unsigned idle = 0, empties = 0;
	int rc;

	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long *dst;

		if (strcmp(argv[i], "--help") == 0)
			return usage(stdout);
		if (strcmp(argv[i], "--version") == 0) {
			printf("shmr-perf-sink %s\n", SHMR_VERSION_TEXT);
			return 0;
		}
		if (i + 1 >= argc)
			return usage(stderr);
		if (strcmp(argv[i], "--register") == 0) {
			reg = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "--stride") == 0)
			dst = &stride;
		else if (strcmp(argv[i], "--burst") == 0)
			dst = &burst;
		else
			return usage(stderr);
		*dst = strtoul(argv[++i], &end, 10);
		if (*end || (*dst == 0 && dst != &stride))
			return usage(stderr);
	}
	if (burst > 256)
		burst = 256;
	/* Routes are called s<index> by shmr-perf, a pool's perf:<index>. */
	if (rname && rname[0] == 's')
		route = strtoull(rname + 1, NULL, 10);
	else if (rname && strchr(rname, ':'))
		route = strtoull(strchr(rname, ':') + 1, NULL, 10);
	if (reg && reg[0] && reg[strlen(reg) - 1] == '*') {
		snprintf(regbuf, sizeof(regbuf), "%.*s%llu",
			 (int)strlen(reg) - 1, reg, (unsigned long long)route);
		reg = regbuf;
	}

	rc = shmr_attach_env(&d, &ep);
	if (rc < 0) {
		fprintf(stderr, "shmr-perf-sink: %s\n", shmr_strerror(rc));
		return 1;
	}
	if (reg && (rc = shmr_register(ep, reg)) < 0) {
		fprintf(stderr, "shmr-perf-sink: register %s: %s\n", reg,
			shmr_strerror(rc));
		return 1;
	}
	while (!shmr_stopping()) {
		int n = shmr_recv_burst(ep, msgs, (unsigned)burst, 0);

		if (n < 0) {
			if (n == -EINTR)
				break;
			fprintf(stderr, "shmr-perf-sink: receive: %s\n",
				shmr_strerror(n));
			break;
		}
		if (n == 0) {
			/* Look at the clock once per 1024 empty polls. */
			if ((++empties & 1023) == 0) {
				uint64_t now = perf_now_ns();

				if (!idle_since)
					idle_since = now;
				else if (now - idle_since > IDLE_BLOCK_NS) {
					n = shmr_recv_burst(ep, msgs,
							    (unsigned)burst,
							    BLOCK_MS);
					if (n == -EINTR)
						break;
					if (n < 0)
						n = 0;
				}
			}
			if (n == 0) {
				perf_backoff(&idle, PERF_SPIN_SHARED);
				continue;
			}
		}
		idle = 0;
		empties = 0;
		idle_since = 0;
		const struct shmr_msg *last_send = NULL;

		for (int i = 0; i < n;) {
			if (msgs[i]->kind == SHMR_KIND_CALL) {
				/* It may ask for the counts: the sends
				 * before it are in them. */
				on_call(ep, msgs[i], route);
				i++;
				continue;
			}
			i = count_run(msgs, i, n, stride);
			last_send = msgs[i - 1];
		}
		/* Once per burst, and only when the harness cannot know the
		 * count to expect: the clock stays off the measured path of
		 * the stride runs. */
		if (last_send && stride == 0)
			sender_of(last_send->from)->last_ns = perf_now_ns();
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}
