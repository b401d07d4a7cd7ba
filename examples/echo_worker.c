/*
 * shmr-echo-worker: the smallest useful route worker, and the example a
 * worker author starts from.  It builds against the installed library only:
 *
 *     cc echo_worker.c $(pkg-config --cflags --libs shmr) -o shmr-echo-worker
 *
 * Started by shmr-control as a route's program, it finds its endpoint in the
 * environment (shmr_attach_env).  Started by hand with --domain and --name,
 * it opens an endpoint of its own and registers the name, so routers reach
 * it through the registry.
 *
 * Calls are answered with "<tag>:" followed by the request's payload, read
 * with shmr_msg_payload() wherever it lies (in the slot, or in an arena
 * buffer sent with shmr_call_buf()): inline when the answer fits a slot,
 * else in an arena buffer of its own (or, when the domain has none to
 * give, the allocation's error as the call's status).  Sends are counted,
 * and with --ack acknowledged: a send back to the sender with the same
 * type and key and one byte, 1 when the message was redelivered
 * after a worker of this route died holding it (what `shmr-perf load
 * --tally` counts).  SIGTERM (or Ctrl-C when run by hand) ends it after the
 * current burst.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/shmr.h>

/* Ctrl-C when run by hand; a lock-free atomic is async-signal-safe. */
static _Atomic int interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* --help: stdout, status 0; a bad argument: stderr, status 2. */
static int usage(FILE *f)
{
	fprintf(f, "usage: shmr-echo-worker [--tag TAG] [--ack] "
		   "[--domain DOMAIN --name NAME]\n"
		   "       shmr-echo-worker --version | --help\n");
	return f == stdout ? 0 : 2;
}

/*
 * --ack: the acks not sent yet.  An ack that finds the lane to the
 * dataplane full waits here while the worker goes on receiving: spinning
 * on it instead could hold the dataplane up, which may be waiting for
 * room in this worker's inbox before it drains that lane.
 */
#define ACKS_MAX 8192
static struct ack {
	struct shmr_pid to;
	uint32_t type;
	uint64_t key;
	unsigned char again; /* 1: redelivered after a worker died */
} pend[ACKS_MAX];
static unsigned head, npend;

/* Send what waits, oldest first, until the lane is full (or, with
 * @p all, until everything went).  Returns how many went. */
static unsigned ack_flush(struct shmr_endpoint *ep, int all)
{
	unsigned sent = 0;

	while (npend) {
		struct ack *a = &pend[head];
		int rc = shmr_send(ep, a->to, a->type, a->key, &a->again, 1);

		if (rc == -EAGAIN && !all)
			break;
		if (rc == -EAGAIN)
			continue;
		/* Sent, or the sender is gone (nobody to tell). */
		head = (head + 1) % ACKS_MAX;
		npend--;
		sent++;
	}
	return sent;
}

static void ack_add(struct shmr_endpoint *ep, const struct shmr_msg *m)
{
	struct ack *a;

	if (npend == ACKS_MAX)
		ack_flush(ep, 1);
	a = &pend[(head + npend) % ACKS_MAX];
	a->to = m->from;
	a->type = m->type;
	a->key = m->key;
	a->again = m->flags & SHMR_F_REDELIVERED ? 1 : 0;
	npend++;
}

/* Retry a reply while the lane to the dataplane is full: that happens
 * only under overload, and dropping the answer would leave the caller
 * waiting out its timeout. */
static int reply_inline(struct shmr_endpoint *ep, const struct shmr_msg *m,
			int status, const void *data, size_t len)
{
	int rc;

	while ((rc = shmr_reply(ep, m, status, data, len)) == -EAGAIN)
		;
	return rc;
}

/*
 * Answer call @p m with "<tag>:" and its payload.  The payload comes from
 * shmr_msg_payload(): m->data is the payload only for an inline one (an
 * arena payload's slot holds the buffer's reference).  @p out holds
 * @p max bytes, a slot's payload: an answer that fits goes inline, a
 * longer one in a buffer of the arena, which shmr_reply_buf() hands to
 * the caller (ours again, to release, only if the reply failed).
 */
static int answer(struct shmr_endpoint *ep, const struct shmr_msg *m,
		  const char *tag, unsigned char *out, size_t max)
{
	size_t tl = strlen(tag), pl, n;
	const unsigned char *p = shmr_msg_payload(ep, m, &pl);
	struct shmr_buf b;
	int rc;

	/* A reference that is not sound (a forged slot): nothing to echo. */
	if (!p)
		return reply_inline(ep, m, -EBADMSG, NULL, 0);
	n = tl + 1 + pl;
	if (n <= max) {
		memcpy(out, tag, tl);
		out[tl] = ':';
		memcpy(out + tl + 1, p, pl);
		return reply_inline(ep, m, 0, out, n);
	}
	/* No arena, or none of its buffers free now: the caller gets the
	 * reason instead of a cut answer. */
	rc = shmr_buf_alloc(ep, n, &b);
	if (rc < 0)
		return reply_inline(ep, m, rc, NULL, 0);
	memcpy(b.data, tag, tl);
	((unsigned char *)b.data)[tl] = ':';
	memcpy((unsigned char *)b.data + tl + 1, p, pl);
	while ((rc = shmr_reply_buf(ep, m, 0, &b, n)) == -EAGAIN)
		;
	if (rc < 0)
		shmr_buf_release(ep, &b);
	return rc;
}

int main(int argc, char **argv)
{
	const char *tag = getenv("SHMR_ROUTE"), *domain = NULL, *name = NULL;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	unsigned long sends = 0, calls = 0;
	unsigned char *out;
	size_t max;
	int rc, ack = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0)
			return usage(stdout);
		if (strcmp(argv[i], "--version") == 0) {
			printf("shmr-echo-worker %s\n", SHMR_VERSION_TEXT);
			return 0;
		}
		if (strcmp(argv[i], "--ack") == 0)
			ack = 1;
		else if (i + 1 < argc && strcmp(argv[i], "--tag") == 0)
			tag = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--domain") == 0)
			domain = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--name") == 0)
			name = argv[++i];
		else
			return usage(stderr);
	}
	if (!domain != !name)
		return usage(stderr);
	if (!tag)
		tag = name ? name : "echo";

	if (domain) {
		signal(SIGINT, on_int);
		rc = shmr_attach(domain, &d);
		if (rc == 0 && (rc = shmr_endpoint_open(d, &ep)) == 0)
			rc = shmr_register(ep, name);
	} else {
		rc = shmr_attach_env(&d, &ep);
	}
	if (rc < 0) {
		fprintf(stderr, "shmr-echo-worker: %s\n", shmr_strerror(rc));
		return 1;
	}
	/* An inline answer is at most a slot's payload. */
	max = shmr_payload_max(d);
	out = malloc(max);
	if (!out) {
		fprintf(stderr, "shmr-echo-worker: %s\n", strerror(ENOMEM));
		return 1;
	}

	while (!shmr_stopping() && !interrupted) {
		const struct shmr_msg *msgs[32];
		/* With acks waiting for room, come back soon to send them. */
		int n = shmr_recv_burst(ep, msgs, 32, npend ? 1 : 1000);

		if (n == -EINTR)
			break;
		for (int i = 0; i < n; i++) {
			const struct shmr_msg *m = msgs[i];

			if (m->kind != SHMR_KIND_CALL) {
				sends++;
				if (ack)
					ack_add(ep, m);
				continue;
			}
			calls++;
			(void)answer(ep, m, tag, out, max);
		}
		ack_flush(ep, 0);
	}
	while (npend && ack_flush(ep, 0) > 0)
		;
	fprintf(stderr, "shmr-echo-worker %s: %lu sends, %lu calls\n", tag,
		sends, calls);
	free(out);
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}
