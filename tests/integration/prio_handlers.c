/*
 * A router's admin-path handlers for test_priority.c: they write down the
 * order in which the control plane hands them admin messages, and hold
 * the control plane's loop on the first one until the test releases it.
 *
 * handlers_arg is a directory D.  Each admin send or call appends a line
 * to D/log: "send " or "call " and its payload.  The first one of either
 * creates D/held and then waits (checking every millisecond, at most 60
 * seconds) until D/release exists, so whatever is sent to the router
 * meanwhile queues on the admin path.  Calls are answered "ok".  A
 * MessageRouteFailed is written down as "failed " and its payload (it is
 * not kept as a dead letter).
 *
 * Only the public <shmr/handler.h>: it is loaded as any handlers object.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmr/handler.h>

struct prio_state {
	char dir[200];
	int held; /* the first message was held */
};

static int prio_init(struct shmr_admin *a, const char *arg)
{
	struct prio_state *st = calloc(1, sizeof(*st));

	if (!st || !arg || strlen(arg) >= sizeof(st->dir)) {
		free(st);
		return -1;
	}
	strcpy(st->dir, arg);
	a->state = st;
	return 0;
}

static void prio_fini(struct shmr_admin *a)
{
	free(a->state);
}

/* One line, "WHAT PAYLOAD\n", appended to D/log; then the first one
 * waits for D/release. */
static int record(struct shmr_admin *a, const char *what,
		  const struct shmr_msg *m)
{
	struct prio_state *st = a->state;
	char path[256], line[128];
	int fd, n;

	snprintf(path, sizeof(path), "%s/log", st->dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	n = snprintf(line, sizeof(line), "%s %.*s\n", what,
		     (int)(m->len < 100 ? m->len : 100),
		     (const char *)m->data);
	if (write(fd, line, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	close(fd);
	if (st->held)
		return 0;
	st->held = 1;
	snprintf(path, sizeof(path), "%s/held", st->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/release", st->dir);
	for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
		usleep(1000);
	return 0;
}

static int prio_message(struct shmr_admin *a, const struct shmr_msg *m)
{
	return record(a, m->flags & SHMR_F_ROUTE_FAILED ? "failed" : "send",
		      m);
}

static int prio_call(struct shmr_admin *a, const struct shmr_msg *call)
{
	if (record(a, "call", call) < 0)
		return -1;
	return a->ops->reply(a, call, 0, "ok", 2);
}

const struct shmr_handlers shmr_handlers = {
	.abi = SHMR_HANDLERS_ABI,
	.init = prio_init,
	.fini = prio_fini,
	.handle_message = prio_message,
	.handle_call = prio_call,
};
