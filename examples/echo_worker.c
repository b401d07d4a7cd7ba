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
 * Calls are answered with "<tag>:" followed by the request's payload; sends
 * are counted.  SIGTERM (or Ctrl-C when run by hand) ends it after the
 * current burst.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
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
	fprintf(f, "usage: shmr-echo-worker [--tag TAG] "
		   "[--domain DOMAIN --name NAME]\n"
		   "       shmr-echo-worker --version | --help\n");
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	const char *tag = getenv("SHMR_ROUTE"), *domain = NULL, *name = NULL;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	unsigned long sends = 0, calls = 0;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0)
			return usage(stdout);
		if (strcmp(argv[i], "--version") == 0) {
			printf("shmr-echo-worker %s\n", SHMR_VERSION_TEXT);
			return 0;
		}
		if (i + 1 < argc && strcmp(argv[i], "--tag") == 0)
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

	while (!shmr_stopping() && !interrupted) {
		const struct shmr_msg *msgs[32];
		int n = shmr_recv_burst(ep, msgs, 32, 1000);

		if (n == -EINTR)
			break;
		for (int i = 0; i < n; i++) {
			const struct shmr_msg *m = msgs[i];
			char out[256];
			size_t tl = strlen(tag), cap = shmr_payload_max(d);

			if (m->kind != SHMR_KIND_CALL) {
				sends++;
				continue;
			}
			calls++;
			if (cap > sizeof(out))
				cap = sizeof(out);
			if (tl + 1 > cap)
				tl = cap - 1;
			memcpy(out, tag, tl);
			out[tl] = ':';
			size_t pl = m->len < cap - tl - 1 ? m->len : cap - tl - 1;
			memcpy(out + tl + 1, m->data, pl);
			/* The lane to the dataplane is full only under overload:
			 * retry until it has room rather than drop the answer. */
			while (shmr_reply(ep, m, 0, out, tl + 1 + pl) == -EAGAIN)
				;
		}
	}
	fprintf(stderr, "shmr-echo-worker %s: %lu sends, %lu calls\n", tag,
		sends, calls);
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}
