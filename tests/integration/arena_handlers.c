/*
 * A router's admin-path handlers for test_arena_paths.c: they read a
 * high/max-priority message's payload through ops->payload, whether it
 * came inline or in an arena buffer.
 *
 * handlers_arg is a directory D.  An admin send's payload is written to
 * D/got (whole: written to D/got.tmp, then renamed), with its length as
 * the handler saw it.  A send of type HOLD_TYPE (9) instead creates
 * D/held and then waits (at most 60 s, for the test to kill the control
 * plane in the middle of the hook).  An admin call is answered with 16 bytes: the
 * payload's length and its FNV-1a hash, both uint64_t in host order.  A
 * payload the op cannot give (a buffer that does not check) is answered
 * with -SHMR_E_NOT_ALLOWED, or not written.
 *
 * Only the public <shmr/handler.h>: it is loaded as any handlers object.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmr/handler.h>

#define HOLD_TYPE 9u

/* a->state: the directory, a copy of handlers_arg. */
static int ah_init(struct shmr_admin *a, const char *arg)
{
	if (!arg || !a->ops->payload || strlen(arg) > 200)
		return -1;
	a->state = strdup(arg);
	return a->state ? 0 : -1;
}

static void ah_fini(struct shmr_admin *a)
{
	free(a->state);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int ah_message(struct shmr_admin *a, const struct shmr_msg *m)
{
	const char *dir = a->state;
	char tmp[256], path[256];
	size_t len;
	const unsigned char *p = a->ops->payload(a, m, &len);
	int fd, rc;

	if (!p || (m->flags & SHMR_F_ROUTE_FAILED))
		return 0;
	if (m->type == HOLD_TYPE) {
		snprintf(path, sizeof(path), "%s/held", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		for (int i = 0; i < 60000; i++)
			usleep(1000);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s/got.tmp", dir);
	snprintf(path, sizeof(path), "%s/got", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	rc = write_all(fd, p, len);
	close(fd);
	if (rc == 0)
		(void)rename(tmp, path);
	return 0;
}

static int ah_call(struct shmr_admin *a, const struct shmr_msg *call)
{
	size_t len;
	const unsigned char *p = a->ops->payload(a, call, &len);
	uint64_t out[2] = { 0, 14695981039346656037ull };

	if (!p)
		return a->ops->reply(a, call, -SHMR_E_NOT_ALLOWED, NULL, 0);
	out[0] = len;
	for (size_t i = 0; i < len; i++)
		out[1] = (out[1] ^ p[i]) * 1099511628211ull;
	return a->ops->reply(a, call, 0, out, sizeof(out));
}

const struct shmr_handlers shmr_handlers = {
	.abi = SHMR_HANDLERS_ABI,
	.init = ah_init,
	.fini = ah_fini,
	.handle_message = ah_message,
	.handle_call = ah_call,
};
