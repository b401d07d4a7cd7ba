/*
 * libshmr-example-handlers.so: a router's admin-path handlers, loaded by
 * shmr-control (router setting handlers = "path.so"), built on the public
 * <shmr/handler.h> only.  It is a circuit breaker, the reference's
 * "automatic circuit breaking" pattern:
 *
 *   - every MessageRouteFailed is kept as a dead letter (the default) and
 *     counted per route; after `trip` failures in a row (handlers_arg
 *     "trip=N", default 3) the route is disabled, so what follows fails at
 *     once with SHMR_E_DISABLED instead of piling up;
 *   - the admin call "reset NAME" closes the breaker again (enable);
 *   - the admin call "tripped" answers how many routes it has disabled.
 *
 * Two more commands show what handlers can do, and the tests use them:
 *   - the call "defer" is answered only when an admin send "release"
 *     arrives (a deferred reply); the send "fail" and the call "stop" make
 *     the handler fail, which stops the router.
 * `shmrctl inspect` shows breaker:tripped and breaker:deferred, and the
 * router's shmr:type as "circuit-breaker".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmr/handler.h>

#define ROUTES 32

struct breaker {
	unsigned trip;
	unsigned tripped;
	struct {
		char name[SHMR_NAME_MAX];
		unsigned fails;
	} r[ROUTES];
	int deferred;           /* a "defer" call waits */
	struct shmr_msg waiting; /* its header */
};

static int is(const struct shmr_msg *m, const char *word)
{
	size_t n = strlen(word);

	return m->len == n && memcmp(m->data, word, n) == 0;
}

static unsigned *fails_of(struct breaker *b, const char *name)
{
	for (unsigned i = 0; i < ROUTES; i++)
		if (strcmp(b->r[i].name, name) == 0)
			return &b->r[i].fails;
	for (unsigned i = 0; i < ROUTES; i++)
		if (!b->r[i].name[0]) {
			snprintf(b->r[i].name, SHMR_NAME_MAX, "%s", name);
			return &b->r[i].fails;
		}
	return NULL;
}

static int init(struct shmr_admin *a, const char *arg)
{
	struct breaker *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->trip = 3;
	if (arg && strncmp(arg, "trip=", 5) == 0)
		b->trip = (unsigned)strtoul(arg + 5, NULL, 10);
	if (b->trip == 0) {
		free(b);
		return -EINVAL;
	}
	a->state = b;
	return 0;
}

static void fini(struct shmr_admin *a)
{
	free(a->state);
}

static int handle_message(struct shmr_admin *a, const struct shmr_msg *m)
{
	struct breaker *b = a->state;

	if (m->flags & SHMR_F_ROUTE_FAILED) {
		char name[SHMR_NAME_MAX];
		unsigned *fails;

		a->ops->default_message(a, m); /* keep the dead letter */
		if (m->status == -SHMR_E_DISABLED)
			return 0; /* open already */
		a->ops->failed_name(a, m, name);
		fails = fails_of(b, name);
		if (fails && ++*fails == b->trip &&
		    a->ops->route_disable(a, name) == 0)
			b->tripped++;
		return 0;
	}
	if (is(m, "fail"))
		return -EIO;
	if (is(m, "release") && b->deferred) {
		b->deferred = 0;
		/* A full admin lane loses the answer: the caller times out. */
		(void)a->ops->reply(a, &b->waiting, 0, "released", 8);
		return 0;
	}
	return a->ops->default_message(a, m);
}

static int handle_call(struct shmr_admin *a, const struct shmr_msg *m)
{
	struct breaker *b = a->state;
	char text[32];

	if (is(m, "defer")) {
		b->waiting = *m;
		b->deferred = 1;
		return 0;
	}
	if (is(m, "stop"))
		return -ECANCELED;
	if (is(m, "tripped")) {
		int n = snprintf(text, sizeof(text), "%u", b->tripped);

		(void)a->ops->reply(a, m, 0, text, (size_t)n);
		return 0;
	}
	if (m->len > 6 && memcmp(m->data, "reset ", 6) == 0 &&
	    m->len - 6 < SHMR_NAME_MAX) {
		char name[SHMR_NAME_MAX];
		unsigned *fails;
		int rc;

		memcpy(name, m->data + 6, m->len - 6);
		name[m->len - 6] = '\0';
		rc = a->ops->route_enable(a, name);
		fails = fails_of(b, name);
		if (rc == 0 && fails)
			*fails = 0;
		(void)a->ops->reply(a, m, rc, NULL, 0);
		return 0;
	}
	return a->ops->default_call(a, m);
}

static int handle_inspect(struct shmr_admin *a)
{
	struct breaker *b = a->state;
	char v[16];

	snprintf(v, sizeof(v), "%u", b->tripped);
	a->ops->inspect_add(a, "breaker:tripped", v);
	a->ops->inspect_add(a, "breaker:deferred", b->deferred ? "1" : "0");
	a->ops->inspect_add(a, "shmr:type", "circuit-breaker");
	return 0;
}

const struct shmr_handlers shmr_handlers = {
	.abi = SHMR_HANDLERS_ABI,
	.init = init,
	.fini = fini,
	.handle_message = handle_message,
	.handle_call = handle_call,
	.handle_inspect = handle_inspect,
};
