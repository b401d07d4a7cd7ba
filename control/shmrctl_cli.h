/*
 * What shmrctl's source files share (shmrctl.c: options, the socket and
 * the request; shmrctl_read.c: the read verbs; shmrctl_inspect.c:
 * inspect's parts; shmrctl_top.c: top; shmrctl_life.c: the route
 * lifecycle).
 * Internal to shmrctl: not for direct inclusion elsewhere.
 */
#ifndef SHMR_CONTROL_SHMRCTL_CLI_H
#define SHMR_CONTROL_SHMRCTL_CLI_H

#include <time.h>

#include <shmr/proto_client.h>

/** The last answer, whole ("OK ..." first line included). */
extern char shmr_cli_ans[SHMR_PROTO_MAX + 1];

/** The connection to the control plane, once shmr_cli_connect() made
 *  it. */
extern struct shmr_proto_conn shmr_cli_conn;
/** --wait SEC in ms: how long shmrctl waits for the appliance (a control
 *  plane restarting, a worker attaching); 0: not at all. */
extern int shmr_cli_wait_ms;

/** Print "shmrctl: @p why" (when not NULL) and the usage line; exit 2. */
_Noreturn void shmr_cli_usage(const char *why);
/** Print "shmrctl: @p msg"; exit 1. */
_Noreturn void shmr_cli_die(const char *msg);
/** Connect to the control socket (waiting up to --wait), or die. */
void shmr_cli_connect(void);
/** Close the connection shmr_cli_connect() opened. */
void shmr_cli_close(void);
/**
 * Send @p req and return the answer's body (after "OK" and its newline).
 * Errors: an error answer prints its message and exits 1; a transport
 *         failure exits 1 (no domain) or 3 (a change's outcome unknown).
 */
const char *shmr_cli_request(const char *req);
/* As shmr_cli_request(), with the descriptor passed along with the
 * answer in *@p fd (-1: none; the caller closes it). */
const char *shmr_cli_request_fd(const char *req, int *fd);
/* METRICS asked with "fd" on a connection it opens: the text, from the
 * answer or from the sealed memfd of an "OK FD N" answer (N bytes, at
 * most 64 MiB; anything else exits 1).  Malloc'd (shmrctl_fetch.c). */
char *shmr_cli_metrics_text(void);

/** A request's transport failure @p rc (no answer): say what, exit 1
 *  (no domain) or 3 (a change's outcome unknown). */
_Noreturn void shmr_cli_request_failed(int rc);

/** Seconds (a decimal, 0 to a year) into @p out; 0, or -1. */
int shmr_cli_parse_seconds(const char *s, double *out);

/** --duration's value: seconds, more than 0 (0 would read as "at once"
 *  or as "forever"; leaving it out is forever).  A usage error else. */
double shmr_cli_parse_duration(const char *s);

/** The next wake-up of a sampling loop: @p next (CLOCK_MONOTONIC,
 *  absolute) moves on by @p interval seconds, but never past @p end
 *  (NULL: no end).  Returns 1 when this wake-up is the last (it is @p end):
 *  a --duration shorter than an interval, or not a multiple of it, ends
 *  on time, not up to an interval late. */
int shmr_cli_tick(struct timespec *next, double interval,
		  const struct timespec *end);

/** @p t moved on by @p sec seconds. */
void shmr_cli_ts_add(struct timespec *t, double sec);

/**
 * The read verbs: routes, route, inspect, status, routees, dlq, metrics,
 * watch, top.
 * @p argv[@p i] is the first word after @p cmd.
 * Returns: the exit status, or -1 when @p cmd is none of them.
 */
int shmr_cli_read(const char *cmd, int argc, char **argv, int i);

/**
 * INSPECT @p router's answer body, whole (shmrctl_inspect.c): asked part
 * by part and merged, as text "key value" lines or (@p json) one JSON
 * object.  Malloc'ed: the caller frees it.
 * Errors: an error answer, or a part that is not one, prints one line and
 *         exits 1 (shmr_cli_request()).
 */
char *shmr_cli_inspect_body(const char *router, int json);

/**
 * The lifecycle commands (shmrctl_life.c): add, remove, disable, enable,
 * respawn, replace, with their options; @p optind_ indexes the first word
 * after the command.
 * Returns: 0 when @p cmd is not one of them; else 1 once it succeeded
 *          (a failure exits: 1, 2 bad arguments, 3 outcome unknown, 4 the
 *          worker did not attach).
 */
int shmr_cli_lifecycle(const char *cmd, int argc, char **argv, int optind_);

/** shmrctl top [ROUTER...] [--interval SEC] [--duration SEC]
 *  (shmrctl_top.c).  Returns the exit status. */
int shmr_cli_top(int argc, char **argv, int i);

#endif
