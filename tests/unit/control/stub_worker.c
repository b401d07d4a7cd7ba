/*
 * A stand-in route worker for the control plane's own tests, speaking the
 * control protocol directly: ATTACH, CLAIM the endpoint named in its
 * environment, REGISTER the name given as argv[1] (if any), then wait for
 * SIGTERM and exit 0.  A failed step exits 3.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmr/proto_client.h>

int main(int argc, char **argv)
{
	const char *sock = getenv(SHMR_ENV_SOCKET);
	const char *ep = getenv(SHMR_ENV_ENDPOINT);
	char req[128], ans[256];
	unsigned slot, gen;
	sigset_t set;
	int fd, sig, pfd = -1;

	if (!sock || !ep || sscanf(ep, "%u:%u", &slot, &gen) != 2)
		return 3;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = shmr_proto_connect(sock);
	if (fd < 0)
		return 3;
	if (shmr_proto_request(fd, "ATTACH 1", ans, sizeof(ans), &pfd) < 0)
		return 3;
	close(pfd);
	snprintf(req, sizeof(req), "CLAIM %u %u", slot, gen);
	if (shmr_proto_request(fd, req, ans, sizeof(ans), NULL) < 0)
		return 3;
	if (argc > 1) {
		snprintf(req, sizeof(req), "REGISTER %s %u %u", argv[1], slot,
			 gen);
		if (shmr_proto_request(fd, req, ans, sizeof(ans), NULL) < 0)
			return 3;
	}
	sigwait(&set, &sig);
	return 0;
}
