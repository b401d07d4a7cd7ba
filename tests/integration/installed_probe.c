/*
 * A C program built by test_pkgconfig.sh against the installed tree only:
 * prints the version of the libshmr it runs with (shmr_version()) and
 * attaches to DOMAIN, printing its slot payload.  Exit 1 when the library
 * is not the version of the header it was built with, or the attach fails.
 *
 * usage: installed-probe DOMAIN
 */
#include <stdio.h>
#include <string.h>

#include <shmr/shmr.h>

int main(int argc, char **argv)
{
	struct shmr_domain *d;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: installed-probe DOMAIN\n");
		return 2;
	}
	printf("libshmr %s, built against %s\n", shmr_version(),
	       SHMR_VERSION_TEXT);
	if (strcmp(shmr_version(), SHMR_VERSION_TEXT) != 0)
		return 1;
	rc = shmr_attach(argv[1], &d);
	if (rc < 0) {
		fprintf(stderr, "installed-probe: attach %s: %s\n", argv[1],
			shmr_strerror(rc));
		return 1;
	}
	printf("attached to %s: %zu-byte payloads\n", argv[1],
	       shmr_payload_max(d));
	shmr_detach(d);
	return 0;
}
