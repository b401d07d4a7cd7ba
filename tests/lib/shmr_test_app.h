/*
 * Starting and stopping a private appliance for integration tests.
 *
 * Each test gets its own run directory (socket, config) and domain name, so
 * tests never see each other's appliance.  Start waits on shmr-control's
 * --ready-fd, never on a sleep.  Stop sends SIGTERM and then checks that
 * every process the appliance started is gone: the test process is a child
 * subreaper, so orphans come back to it and are counted.
 *
 * Binaries come from the environment meson sets: SHMR_CONTROL (path of
 * shmr-control), SHMRCTL, and PATH containing the worker programs.
 */
#ifndef SHMR_TEST_APP_H
#define SHMR_TEST_APP_H

#include <stddef.h>
#include <sys/types.h>

#include <shmr/shmr.h>

struct shmr_test_app {
	pid_t control;
	char dir[256];
	char conf[300];
	char sock[300];
	char domain[SHMR_NAME_MAX];
};

/**
 * Write @p conf_body (routers etc.; the domain, run_dir and geometry lines
 * are prepended) and start shmr-control on it.
 * Returns: 0 when up; -1 (with a message on stderr) otherwise.
 */
int shmr_test_app_start(struct shmr_test_app *app, const char *tag,
			const char *conf_body);

/**
 * As shmr_test_app_start(), from the configuration file at @p path (an
 * operator's example): its own `domain` and `run_dir` lines are dropped so
 * that the test's private ones apply; everything else is used as written.
 * Returns: 0 when up; -1 (with a message on stderr) otherwise.
 */
int shmr_test_app_start_file(struct shmr_test_app *app, const char *tag,
			     const char *path);

/**
 * Stop the appliance and reap everything it started.
 * Returns: the number of processes that had to be killed after the
 *          control plane's own shutdown (0 when it cleaned up after itself).
 */
int shmr_test_app_stop(struct shmr_test_app *app);

/** @p app's control plane is now process @p control (0: none; it was
 *  killed and reaped, or started again, as the adoption tests do). */
void shmr_test_app_set_control(struct shmr_test_app *app, pid_t control);

/** kill -9 @p app's control plane and reap it (its dataplane and workers
 *  go on: a restarted control plane adopts them).  0, or -1. */
int shmr_test_app_kill_control(struct shmr_test_app *app);

/** Start shmr-control again on @p app's configuration and run directory
 *  (as systemd's Restart= would, after the last one was killed), with
 *  --quiet if @p quiet, and wait for its ready byte; the harness tracks
 *  the new pid.  0, or -1 if it did not come up. */
int shmr_test_app_restart_control(struct shmr_test_app *app, int quiet);

/** One admin request; 0 or the negated error.  @p ans gets the answer. */
int shmr_test_ctl(const struct shmr_test_app *app, const char *req, char *ans,
		  size_t cap);

/** Value of "key value" line @p key in an admin answer; -1 if absent. */
long long shmr_test_value(const char *ans, const char *key);

/** A TCP port on 127.0.0.1 that nobody listens on now (the kernel's
 *  pick for port 0), for a configuration's metrics_listen; 0 if none. */
unsigned shmr_test_free_port(void);

/** Is @p pid a live process (not gone, not a zombie)?  Any process, ours
 *  or not (/proc/PID/stat). */
int shmr_test_pid_alive(pid_t pid);

/** Write @p text to @p dir/@p name; the path, in a static buffer.
 *  Aborts the process on failure (a test cannot go on without it). */
const char *shmr_test_write_conf(const char *dir, const char *name,
				 const char *text);

/** Run $SHMR_CONTROL -c @p conf --run-dir @p run_dir [@p extra], as
 *  shmr_test_run(): its exit status, output in @p out. */
int shmr_test_run_control(const char *conf, const char *run_dir,
			  const char *extra, char *out, size_t cap);

/**
 * Map @p app's domain ourselves, as a peer with its own view: the lanes
 * part read-write, the daemons' part read-only as ATTACH hands it to
 * peers; or, when @p writable, read-write too, by opening that part again
 * through /proc (what only the daemons' user or root can do: the test
 * runs as root, playing a peer that the read-only mapping does not stop,
 * to check what the daemons validate anyway).
 * Returns: 0, or -errno / -SHMR_E_*.
 */
int shmr_test_map(const struct shmr_test_app *app, int writable, void **base,
		  size_t *size);

/** As shmr_test_map(), on a connected control socket @p sock (ATTACHed
 *  on it; left open). */
int shmr_test_map_sock(int sock, int writable, void **base, size_t *size);

/* The appliance with this process as a client of it. */
struct shmr_test_client {
	struct shmr_test_app app;
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	void *base; /* the domain as mapped here (shmr_test_map()), or NULL */
	size_t size;
};

/**
 * Start the appliance on @p conf_body (as shmr_test_app_start()), attach
 * to it, open an endpoint and, when @p map is 0 (read-only) or 1
 * (read-write), map its domain here too; -1: no mapping.
 * Returns: 0, or -1 with a message on stderr (what was started is
 *          stopped again).
 */
int shmr_test_client_start(struct shmr_test_client *c, const char *tag,
			   const char *conf_body, int map);

/** As shmr_test_client_start(), from the configuration file at @p path
 *  (as shmr_test_app_start_file()). */
int shmr_test_client_start_file(struct shmr_test_client *c, const char *tag,
				const char *path, int map);

/**
 * Undo shmr_test_client_start().
 * Returns: shmr_test_app_stop()'s count (0: the appliance cleaned up
 *          after itself).
 */
int shmr_test_client_stop(struct shmr_test_client *c);

/** The path of example configuration @p file: $SHMR_EXAMPLES_DIR/@p file,
 *  else config/examples/@p file of this source tree.  0, or -1 when it
 *  does not fit in @p cap. */
int shmr_test_example_path(const char *file, char *out, size_t cap);

/** The inbox PID of route @p route of @p router (ROUTE's pid=SLOT:GEN).
 *  0, or -SHMR_E_NO_ROUTE / the request's error. */
int shmr_test_route_pid(const struct shmr_test_app *app, const char *router,
			const char *route, struct shmr_pid *pid);

/** Run a command with stdout+stderr captured; returns its exit status. */
int shmr_test_run(char *const argv[], char *out, size_t cap);

/** Wait until @p pred(arg) is true, checking every ms, at most @p ms total. */
int shmr_test_wait(int (*pred)(void *), void *arg, int ms);

/**
 * A new record file for shmr-test-worker's --record FILE: 2 * @p n bytes
 * of zeros (per key k < @p n, its receives and a redelivered mark) at
 * /tmp/shmr-rec-@p tag-PID, its path written to @p path.
 * Returns: the file mapped shared (read-write), or NULL (a message on
 *          stderr).  munmap(2 * @p n) and unlink it when done.
 */
unsigned char *shmr_test_record_new(const char *tag, unsigned n, char *path,
				    size_t cap);

#endif
