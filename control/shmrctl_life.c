/*
 * shmrctl's lifecycle commands: route, add, remove, disable, enable,
 * respawn, replace (and their --drain).
 *
 * Waiting for the worker.  The control plane answers ADD (and ENABLE of
 * a disabled route, RESPAWN, REPLACE) once it has started the worker's
 * process: before that process's main ran, let alone attached.  So add,
 * enable, respawn and replace do not return then: they look at the route
 * (ROUTE) every 10 ms until its worker has attached (CLAIMed the route's
 * inbox: the route shows `running`; before that, `starting`), bounded by
 * --wait SEC.  The route's `restarts` and state tell a worker that exited
 * before it attached (a bad program, a crash in main): the control plane
 * restarts it (counted) or leaves the route dead, and either is a failure
 * here, at once, not after the bound.  A route that was replaced waits
 * while the old worker is stopping (`pending_replace`: the control plane
 * bounds that by stop_grace_ms, then SIGKILL), then for the new one.
 * Each failure to attach exits with EXIT_NOT_ATTACHED: the request was
 * done (the route stays, and is restarted as any other), only its worker
 * is not up.  --no-wait, or --wait 0, returns as soon as the control plane
 * answered, as shmrctl did before.
 *
 * The control plane may die while we look (ROUTE is a read: sent again
 * while it restarts, up to --wait).  The request was answered as done, so
 * "no domain" (exit 1, as if nothing had happened) would be wrong: while
 * waiting for the worker that is EXIT_NOT_ATTACHED too (done, its worker
 * not seen attached), and between the steps of replace --drain, a change
 * already made, the outcome is unknown (exit 3, as for any request the
 * control plane's death caught).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <shmr/shmr.h>

#include "shmrctl_cli.h"

#define EXIT_NOT_ATTACHED 4
#define LOOK_EVERY_US (10 * 1000)

/* What ROUTE says of a route. */
struct route_seen {
	char state[32];
	unsigned long long restarts;
};

/* A lifecycle request: "OK", or die with the error's text (exit 1): the
 * control plane's message (a refusal says what and why), else the
 * code's. */
static void life_request(const char *req)
{
	int rc = shmr_proto_conn_request(&shmr_cli_conn, req, shmr_cli_ans, sizeof(shmr_cli_ans), NULL);
	char *p;
	long code;

	if (rc == 0)
		return;
	if (strncmp(shmr_cli_ans, "ERR ", 4) == 0) {
		code = strtol(shmr_cli_ans + 4, &p, 10);
		while (*p == ' ')
			p++;
		if (*p)
			shmr_cli_die(p);
		shmr_cli_die(code > 0 && code < SHMR_E_LAST ? shmr_strerror((int)code)
						  : "error");
	}
	shmr_cli_request_failed(rc);
}

/* The worker did not attach: say so, exit EXIT_NOT_ATTACHED. */
static _Noreturn void not_attached(const char *router, const char *name,
				   const char *why)
{
	fprintf(stderr, "shmrctl: route %s/%s: %s\n", router, name, why);
	exit(EXIT_NOT_ATTACHED);
}

/* What a look at the route follows, for a control plane lost meanwhile. */
enum after { AFTER_NOTHING, AFTER_CHANGE, AFTER_START };

/* ROUTE @p router @p name into @p s: 0, or -1 when the control plane
 * answered an error (no such route now).  No answer at all exits as
 * @p after says (the top of this file). */
static int route_look(const char *router, const char *name,
		      struct route_seen *s, enum after after)
{
	const char *const words[] = { router, name };
	char req[128];
	const char *p, *q;
	int rc;

	if (shmr_proto_encode(req, sizeof(req), "ROUTE", words, 2) < 0)
		shmr_cli_die("request too long");
	rc = shmr_proto_conn_request(&shmr_cli_conn, req, shmr_cli_ans, sizeof(shmr_cli_ans), NULL);
	if (rc < 0 && strncmp(shmr_cli_ans, "ERR ", 4) == 0)
		return -1;
	if (rc < 0 && after == AFTER_START)
		not_attached(router, name,
			     "done, but the control plane went away while "
			     "its worker started: whether it attached is "
			     "unknown (see `shmrctl route` once the control "
			     "plane is back)");
	if (rc < 0 && after == AFTER_CHANGE)
		shmr_cli_request_failed(-SHMR_E_CONTROL_LOST);
	if (rc < 0)
		shmr_cli_request_failed(rc);
	p = strstr(shmr_cli_ans, " state=");
	q = strstr(shmr_cli_ans, " restarts=");
	if (!p || sscanf(p + 7, "%31s", s->state) != 1 || !q ||
	    sscanf(q + 10, "%llu", &s->restarts) != 1)
		shmr_cli_die("unexpected ROUTE answer");
	return 0;
}

static void route_seen(const char *router, const char *name,
		       struct route_seen *s, enum after after)
{
	if (route_look(router, name, s, after) < 0)
		shmr_cli_die(strchr(shmr_cli_ans + 4, ' ') ? strchr(shmr_cli_ans + 4, ' ') + 1 : "error");
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until the worker of route @p router/@p name that the request just
 * started has attached; @p restarts0 is the route's restarts before the
 * request (see the top of this file).
 */
static void wait_attached(const char *router, const char *name,
			  unsigned long long restarts0)
{
	int64_t deadline = mono_ms() + shmr_cli_wait_ms;
	struct route_seen s;
	char why[160];

	for (;;) {
		if (route_look(router, name, &s, AFTER_START) < 0)
			not_attached(router, name,
				     "it went away while its worker started");
		if (s.restarts > restarts0 || strcmp(s.state, "dead") == 0)
			not_attached(router, name,
				     "its worker exited before it attached "
				     "(the control plane's log has its exit "
				     "status; the route stays and is "
				     "restarted: see `shmrctl route`)");
		if (strcmp(s.state, "replace_wait") == 0)
			not_attached(router, name,
				     "its new program did not start (the old "
				     "one has stopped; the route waits for a "
				     "start: see the control plane's log)");
		if (strcmp(s.state, "running") == 0)
			return;
		if (strcmp(s.state, "pending_replace") == 0) {
			/* The old worker stopping: the bound is the
			 * new one's. */
			deadline = mono_ms() + shmr_cli_wait_ms;
		} else if (strcmp(s.state, "starting") != 0) {
			snprintf(why, sizeof(why),
				 "it is %s now: it changed while its worker "
				 "started",
				 s.state);
			not_attached(router, name, why);
		}
		if (mono_ms() >= deadline) {
			snprintf(why, sizeof(why),
				 "its worker has not attached within --wait "
				 "%g s (it is still starting: see `shmrctl "
				 "route`)",
				 shmr_cli_wait_ms / 1000.0);
			not_attached(router, name, why);
		}
		usleep(LOOK_EVERY_US);
	}
}

/*
 * replace --drain: disable the route letting its worker finish what is
 * queued (DRAIN), wait until it has exited, replace the program, enable
 * it again (and, unless @p no_wait, wait for the new worker to attach).
 * A route disabled before is only replaced (and stays so).
 * No message is handled by both programs, none by the new one that was
 * queued for the old one, and the two never run side by side; what is
 * sent meanwhile fails with SHMR_E_DISABLED (kept as dead letters).
 */
static void replace_drained(const char *router, const char *name,
			    const char *replace_req, int no_wait)
{
	const char *const words[] = { router, name };
	char req[128];
	struct route_seen s;
	int was_disabled;

	route_seen(router, name, &s, AFTER_NOTHING);
	was_disabled = strcmp(s.state, "disabled") == 0;
	if (!was_disabled) {
		if (shmr_proto_encode(req, sizeof(req), "DRAIN", words, 2) < 0)
			shmr_cli_die("request too long");
		life_request(req);
		for (;;) {
			route_seen(router, name, &s, AFTER_CHANGE);
			if (strcmp(s.state, "disabled") == 0)
				break;
			if (strcmp(s.state, "pending_disable") != 0)
				shmr_cli_die("the route changed while draining");
			usleep(20 * 1000);
		}
	}
	life_request(replace_req);
	if (was_disabled) {
		printf("replaced %s (it stays disabled)\n", name);
		return;
	}
	if (shmr_proto_encode(req, sizeof(req), "ENABLE", words, 2) < 0)
		shmr_cli_die("request too long");
	life_request(req);
	if (!no_wait)
		wait_attached(router, name, s.restarts);
	printf("drained, replaced and enabled %s\n", name);
}

int shmr_cli_lifecycle(const char *cmd, int argc, char **argv, int optind_)
{
	static const char *const simple[][2] = {
		{ "remove", "REMOVE" },   { "disable", "DISABLE" },
		{ "enable", "ENABLE" },   { "respawn", "RESPAWN" },
	};
	const char *verb = NULL, *router, *name, *cpus = "-";
	/* PROGRAM and its ARGs; one more than allowed, so the encoder names
	 * the first fault as the words come. */
	const char *words[2 + SHMR_PROTO_ARGS_MAX];
	struct shmr_proto_route_req r = { 0 };
	struct route_seen before = { .state = "" };
	enum shmr_proto_bad bad;
	char req[SHMR_PROTO_MAX];
	int add = strcmp(cmd, "add") == 0;
	int replace = strcmp(cmd, "replace") == 0;
	int i = optind_, nargs = 0, drain = 0, no_wait = 0, starts;

	for (unsigned j = 0; j < sizeof(simple) / sizeof(simple[0]); j++)
		if (strcmp(cmd, simple[j][0]) == 0)
			verb = simple[j][1];
	if (!verb && !add && !replace)
		return 0;
	/* The commands that start a worker wait for it to attach. */
	starts = add || replace || strcmp(cmd, "enable") == 0 ||
		 strcmp(cmd, "respawn") == 0;
	/* --drain and --no-wait right after the command (a replace's later
	 * words are the program's own arguments). */
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--drain") == 0) {
			if (strcmp(cmd, "disable") != 0 && !replace)
				shmr_cli_usage("--drain: only with disable or "
				      "replace");
			drain = 1;
			if (!replace)
				verb = "DRAIN";
		} else if (strcmp(argv[i], "--no-wait") == 0) {
			if (!starts)
				shmr_cli_usage("--no-wait: only with add, enable, "
				      "respawn or replace");
			no_wait = 1;
		} else {
			shmr_cli_usage("unknown option");
		}
	}
	if (argc - i < 2)
		shmr_cli_usage("missing ROUTER or NAME");
	router = argv[i++];
	name = argv[i++];
	if (!shmr_proto_word_ok(router, SHMR_NAME_MAX) ||
	    !shmr_proto_word_ok(name, SHMR_NAME_MAX))
		shmr_cli_usage("bad ROUTER or NAME");
	r.router = router;
	r.route = name;
	if (verb) {
		if (i < argc)
			shmr_cli_usage("unexpected argument");
		r.verb = verb;
	} else {
		if (i >= argc)
			shmr_cli_usage("missing PROGRAM");
		r.verb = add ? "ADD" : "REPLACE";
		/* --cpus may come anywhere after NAME (add only). */
		for (int j = i; j < argc; j++)
			if (add && strcmp(argv[j], "--cpus") == 0) {
				if (j + 1 >= argc ||
				    !shmr_proto_word_ok(argv[j + 1],
							SHMR_PROTO_CPUS_MAX))
					shmr_cli_usage("--cpus: a cpu list");
				cpus = argv[j + 1];
			}
		if (add)
			r.cpus = cpus;
		for (; i < argc && nargs < (int)(sizeof(words) /
						 sizeof(words[0]));
		     i++) {
			if (add && strcmp(argv[i], "--cpus") == 0) {
				i++;
				continue;
			}
			words[nargs++] = argv[i];
		}
		if (nargs == 0)
			shmr_cli_usage("missing PROGRAM");
		r.program = words[0];
		r.args = words + 1;
		r.nargs = (unsigned)nargs - 1;
	}
	if (shmr_proto_route_encode(req, sizeof(req), &r, &bad) < 0) {
		switch (bad) {
		case SHMR_PROTO_BAD_NAME:
			shmr_cli_usage("bad ROUTER or NAME");
			break;
		case SHMR_PROTO_BAD_CPUS:
			shmr_cli_usage("--cpus: a cpu list");
			break;
		case SHMR_PROTO_BAD_WORD:
			shmr_cli_usage("bad PROGRAM or ARG (empty, too long, or with a "
			      "space)");
			break;
		case SHMR_PROTO_BAD_NARGS:
			shmr_cli_usage("more than 16 ARGs");
			break;
		default:
			shmr_cli_usage("request too long (at most 512 bytes)");
		}
	}
	if (shmr_cli_wait_ms == 0)
		no_wait = 1;
	shmr_cli_connect();
	if (strcmp(cmd, "route") == 0) {
		fputs(shmr_cli_request(req), stdout);
	} else if (replace && drain) {
		replace_drained(router, name, req, no_wait);
	} else {
		/* A new route has no restarts; another one's count before
		 * the request tells a restart after it.  Only a disabled
		 * route is started by enable, and a replace of one starts
		 * nothing. */
		int was_disabled;

		if (starts && !add && !no_wait)
			route_seen(router, name, &before, AFTER_NOTHING);
		was_disabled = strcmp(before.state, "disabled") == 0;
		life_request(req);
		if (starts && !no_wait &&
		    (strcmp(cmd, "enable") == 0 ? was_disabled
						: !was_disabled))
			wait_attached(router, name, before.restarts);
	}
	shmr_proto_conn_close(&shmr_cli_conn);
	return 1;
}
