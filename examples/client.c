/*
 * shmr-example-client: sends messages and one call through a router, the
 * way an application talks to the appliance.  Builds against the installed
 * library only:
 *
 *     cc client.c $(pkg-config --cflags --libs shmr) -o shmr-example-client
 *
 * With the default configuration, types 1, 2 and 3 go to the routes
 * payments, shipments and reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/shmr.h>

/* --help: stdout, status 0; a bad argument: stderr, status 2. */
static int usage(FILE *f)
{
	fprintf(f, "usage: shmr-example-client [--domain DOMAIN] "
		   "[--router NAME] [--count N] [--type T]\n"
		   "       shmr-example-client --version | --help\n");
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	const char *domain = "shmr-demo", *router = "events";
	unsigned long count = 10, type = 1;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	struct shmr_pid to;
	char reply[256];
	int rc;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (strcmp(argv[i], "--help") == 0)
			return usage(stdout);
		if (strcmp(argv[i], "--version") == 0) {
			printf("shmr-example-client %s\n", SHMR_VERSION_TEXT);
			return 0;
		}
		if (i + 1 >= argc)
			return usage(stderr);
		if (strcmp(argv[i], "--domain") == 0)
			domain = argv[++i];
		else if (strcmp(argv[i], "--router") == 0)
			router = argv[++i];
		else if (strcmp(argv[i], "--count") == 0) {
			count = strtoul(argv[++i], &end, 10);
			if (*end)
				return usage(stderr);
		} else if (strcmp(argv[i], "--type") == 0) {
			type = strtoul(argv[++i], &end, 10);
			if (*end || type > UINT32_MAX)
				return usage(stderr);
		} else
			return usage(stderr);
	}

	if ((rc = shmr_attach(domain, &d)) < 0) {
		fprintf(stderr, "shmr-example-client: attach %s: %s\n", domain,
			shmr_strerror(rc));
		return 1;
	}
	if ((rc = shmr_endpoint_open(d, &ep)) < 0 ||
	    (rc = shmr_lookup(d, router, &to)) < 0) {
		fprintf(stderr, "shmr-example-client: %s: %s\n", router,
			shmr_strerror(rc));
		shmr_detach(d);
		return 1;
	}
	for (unsigned long i = 0; i < count; i++) {
		/* -EAGAIN: the lane is full; the dataplane drains it. */
		while ((rc = shmr_send(ep, to, (uint32_t)type, i, &i,
				       sizeof(i))) == -EAGAIN)
			;
	}
	rc = shmr_call(ep, to, (uint32_t)type, 0, "hello", 5, reply,
		       sizeof(reply) - 1, 5000);
	if (rc < 0) {
		fprintf(stderr, "shmr-example-client: call: %s\n",
			shmr_strerror(rc));
	} else {
		/* rc is the reply's whole length; only what fit in reply
		 * was copied (a reply may be as long as an arena buffer). */
		size_t got = (size_t)rc < sizeof(reply) - 1 ? (size_t)rc
							    : sizeof(reply) - 1;

		reply[got] = '\0';
		printf("sent %lu messages of type %lu; call answered \"%s\"",
		       count, type, reply);
		if (got < (size_t)rc)
			printf(" (cut: the first %zu of its %d bytes)", got,
			       rc);
		printf("\n");
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return rc < 0 ? 1 : 0;
}
