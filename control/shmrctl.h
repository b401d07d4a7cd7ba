/*
 * What shmrctl's files share (shmrctl.c: the connection, the requests and
 * how a failure is reported).  Part of the shmrctl program only: not for
 * inclusion anywhere else.
 */
#ifndef SHMR_CONTROL_SHMRCTL_H
#define SHMR_CONTROL_SHMRCTL_H

#include <shmr/proto.h>
#include <shmr/proto_client.h>

/* The last answer (request()'s and life_request()'s buffer). */
extern char ans[SHMR_PROTO_MAX + 1];
/* The connection to the control plane, once connect_or_die() made it. */
extern struct shmr_proto_conn conn;
/* --wait SEC in ms: how long shmrctl waits for the appliance (a
 * control plane restarting, a worker attaching); 0: not at all. */
extern int wait_ms;

/** Print "shmrctl: @p why" (when not NULL) and the usage line; exit 2. */
_Noreturn void usage(const char *why);
/** Print "shmrctl: @p msg"; exit 1. */
_Noreturn void die(const char *msg);
/** Connect @c conn (waiting up to --wait for a restarting control
 *  plane), or say why not and exit 1. */
void connect_or_die(void);
/** A request's transport failure @p rc (no answer): say what, exit. */
_Noreturn void request_failed(int rc);
/** One request; an error answer is printed and exits 1.
 *  Returns: the body (after "OK" and its newline). */
const char *request(const char *req);

/**
 * The lifecycle commands (shmrctl_life.c): route, add, remove, disable,
 * enable, respawn, replace, with their options; @p optind_ indexes the
 * first word after the command.
 * Returns: 0 when @p cmd is not one of them; else 1 once it succeeded
 *          (a failure exits: 1, 2 bad arguments, 3 outcome unknown).
 */
int lifecycle(const char *cmd, int argc, char **argv, int optind_);

#endif
