/*
 * shmrctl's METRICS: the Prometheus text of a domain, which with
 * thousands of client endpoints is more than one answer of the control
 * socket holds (SHMR_PROTO_MAX).  Asked as "METRICS fd", the control plane
 * answers such a text as "OK FD N" with a sealed memfd of N bytes
 * (control/metrics.h); everything about it is checked before it is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shmrctl_cli.h"

/* The most METRICS text taken from a memfd: the control plane's own
 * bound (SHMR_CTL_METRICS_MAX in metrics.h). */
#define METRICS_FD_MAX (64ull << 20)

char *shmr_cli_metrics_text(void)
{
	const char *body;
	unsigned long long n;
	struct stat st;
	char *text, *end;
	size_t done = 0;
	int fd = -1;

	shmr_cli_connect();
	body = shmr_cli_request_fd("METRICS fd", &fd);
	if (strncmp(shmr_cli_ans, "OK FD ", 6) != 0) {
		if (fd >= 0)
			close(fd);
		text = strdup(body);
		if (!text)
			shmr_cli_die(strerror(ENOMEM));
		return text;
	}
	errno = 0;
	n = strtoull(shmr_cli_ans + 6, &end, 10);
	if (errno || end == shmr_cli_ans + 6 || (*end && *end != '\n') ||
	    n > METRICS_FD_MAX || fd < 0 || fstat(fd, &st) < 0 ||
	    (unsigned long long)st.st_size != n)
		shmr_cli_die("METRICS: a malformed answer (its descriptor or "
			     "its size)");
	text = malloc((size_t)n + 1);
	if (!text)
		shmr_cli_die(strerror(ENOMEM));
	while (done < n) {
		ssize_t r = pread(fd, text + done, (size_t)n - done,
				  (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			shmr_cli_die("METRICS: its descriptor ended early");
		done += (size_t)r;
	}
	close(fd);
	text[n] = '\0';
	return text;
}

