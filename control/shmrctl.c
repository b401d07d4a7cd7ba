/*
 * shmrctl: the operator's CLI over the control socket of shmr-control.
 *
 *   shmrctl [-c FILE] [-d DOMAIN] [-s SOCKET] [--wait SEC] COMMAND
 *     routes ROUTER [--json]             one row per route
 *     route ROUTER NAME [--json]         that route's row
 *     add [--no-wait] ROUTER NAME PROGRAM [ARG...] [--cpus LIST]
 *     remove|disable ROUTER NAME
 *     enable|respawn [--no-wait] ROUTER NAME
 *     replace [--drain] [--no-wait] ROUTER NAME PROGRAM [ARG...]
 *     disable --drain ROUTER NAME        the route lifecycle (see
 *                                        shmr/proto.h, shmrctl_life.c);
 *                                        an error answer prints
 *                                        "shmrctl: <what>", exit 1; add,
 *                                        enable, respawn and replace
 *                                        return once the worker attached
 *                                        (the route shows `running`;
 *                                        before, `starting`), within
 *                                        --wait, else exit 4
 *     inspect ROUTER [--json]            the router's counters
 *     status [--json]                    the domain
 *     metrics [--json]                   every counter, Prometheus text
 *     stop                               stop the appliance; returns once
 *                                        the control plane has exited
 *     dlq list ROUTER [--json]           dead letters (MessageRouteFailed
 *                                        kept by the admin handler), one
 *                                        row each; a corrupted record
 *                                        ends the list, exit 1
 *     routees ROUTER [--json] | routee add|remove ROUTER NAME | pool ROUTER +N|-N
 *     | kill ROUTER | poison ROUTER      the router's management messages
 *                                        (see SHMR_TYPE_* in shmr/shmr.h)
 *     dlq replay ROUTER                  send them to the router again;
 *                                        prints "resent N left M"
 *     top [ROUTER...] [--interval SEC] [--duration SEC]
 *                                        routers, routes and lcores,
 *                                        redrawn in place (shmrctl_top.c)
 *     watch ROUTER [--interval SEC] [--duration SEC]
 *                                        a header line "route msgs/s total",
 *                                        then msgs/s per route, once per
 *                                        interval
 *
 * Unless -s names the socket, it is <run dir>/DOMAIN.sock, found as
 * shmr-control found it (see find_socket()): DOMAIN is -d, else
 * $SHMR_DOMAIN, else the `domain` of the configuration shmr-control runs
 * without -c (-c FILE here, else $SHMR_CONFIG, else
 * $sysconfdir/shmr/shmr.conf when it exists, else the embedded default:
 * shmr-demo); the run dir is that configuration's run_dir when it sets
 * one and DOMAIN is its domain, else $SHMR_RUN_DIR, else /run/shmr.
 *
 * A control plane restarting (its socket refusing; absent for more than a
 * quarter of a second means no domain) is waited for, up to --wait SEC
 * (default 5; 0: not at all; it bounds the wait for a worker to attach
 * too), and so is one that
 * dies during a request that only reads (routes, route, inspect, status,
 * metrics, watch, top, routees, dlq list): that request is sent again once
 * it is back.
 * Any other request caught by the death has an unknown outcome: exit 3.
 *
 * The read verbs (shmrctl_read.c) print an aligned table with a header,
 * or with --json one JSON document (docs/shmrctl-json.md).
 *
 * shmrctl --version prints "shmrctl VERSION"; --help the usage and the
 * commands.
 *
 * Exit statuses: 0 success (watch: also after --duration or SIGINT);
 * 1 the control plane answered an error, or there is no domain, or it did
 * not come back within --wait ("shmrctl: no domain NAME at PATH (is
 * shmr-control running?)"); 2 bad arguments (a usage line on stderr);
 * 3 the control plane went away during a request that changes something
 * ("shmrctl: control plane went away during the request; its outcome is
 * unknown"): look (route, routes) before trying again; 4 add, enable,
 * respawn or replace was done but its worker did not attach: it exited
 * first, or was still starting after --wait ("shmrctl: route R/N: its
 * worker ...").
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <shmr/layout.h>
#include <shmr/proto_client.h>
#include <shmr/shmr.h>

#include "shmr_config.h"
#include "shmrctl_cli.h"

#define WAIT_S_DEFAULT 5
#define EXIT_LOST 3

static const char usage_line[] =
	"usage: shmrctl [-c FILE] [-d DOMAIN] [-s SOCKET] [--wait SEC] "
	"{routes ROUTER [--json] | "
	"inspect ROUTER "
	"[--json] | status [--json] | stop | watch ROUTER [--interval SEC] "
	"[--duration SEC] | top [ROUTER...] [--interval SEC] [--duration SEC] | "
	"route ROUTER NAME [--json] | add [--no-wait] ROUTER NAME PROGRAM "
	"[ARG...] [--cpus LIST] | remove|disable ROUTER NAME | "
	"enable|respawn [--no-wait] ROUTER NAME | disable --drain ROUTER NAME | "
	"replace [--drain] [--no-wait] ROUTER NAME PROGRAM [ARG...] | dlq list ROUTER [--json] | dlq replay ROUTER | "
	"routees ROUTER [--json] | routee add|remove "
	"ROUTER NAME | pool ROUTER +N|-N | kill ROUTER | poison ROUTER | "
	"metrics [--json]}\n";

char shmr_cli_ans[SHMR_PROTO_MAX + 1];
static const char *domain;
static char sock_path[256];
struct shmr_proto_conn shmr_cli_conn = { .fd = -1 };
int shmr_cli_wait_ms = WAIT_S_DEFAULT * 1000;

_Noreturn void shmr_cli_usage(const char *why)
{
	if (why)
		fprintf(stderr, "shmrctl: %s\n", why);
	fputs(usage_line, stderr);
	exit(2);
}

static void help(void)
{
	printf("%s", usage_line);
	printf("\n"
	       "  routes ROUTER        a table, one row per route: NAME PID "
	       "OS_PID STATE\n"
	       "                       RESTARTS DELIVERED QUEUED CPUS, and how "
	       "long messages\n"
	       "                       waited: SOJOURN_COUNT SOJOURN_P50_NS "
	       "_P99_NS _P999_NS _MAX_NS\n"
	       "    --json             (any read verb) one JSON document "
	       "instead, typed\n"
	       "                       fields (docs/shmrctl-json.md)\n"
	       "  inspect ROUTER       the router's \"shmr:\" counters, FIELD "
	       "VALUE rows\n"
	       "    --json             as one JSON object (numbers as numbers)\n"
	       "  route ROUTER NAME    that route's row, as routes shows it\n"
	       "  metrics              every counter, Prometheus text format\n"
	       "  add ROUTER NAME PROGRAM [ARG...] [--cpus LIST]\n"
	       "                       add an owned route and start its "
	       "worker; returns once\n"
	       "                       the worker attached (state running; "
	       "before: starting)\n"
	       "    --no-wait          right after add, enable, respawn or "
	       "replace: return once\n"
	       "                       the worker is started, not attached\n"
	       "  remove|disable|enable|respawn ROUTER NAME\n"
	       "                       the route lifecycle; remove, disable "
	       "and replace of\n"
	       "                       a live worker complete when it exits\n"
	       "  replace ROUTER NAME PROGRAM [ARG...]\n"
	       "                       new program and args for the route\n"
	       "  disable --drain ROUTER NAME\n"
	       "                       refuse new messages, let the worker "
	       "finish its inbox,\n"
	       "                       then stop it\n"
	       "  replace --drain ROUTER NAME PROGRAM [ARG...]\n"
	       "                       disable --drain, wait for the exit, "
	       "replace, enable\n"
	       "  dlq list ROUTER      dead letters: INDEX REASON NAME TYPE "
	       "KEY FROM LEN\n"
	       "                       (exit 1 at a corrupted record)\n"
	       "  dlq replay ROUTER    re-send them to the router; sent ones "
	       "leave the file\n"
	       "  routees ROUTER       its routees, one per row, in "
	       "creation order (GetRoutees)\n"
	       "  routee add|remove ROUTER NAME\n"
	       "                       AddRoutee / RemoveRoutee (a pool's own "
	       "routee finishes\n"
	       "                       its queue first)\n"
	       "  pool ROUTER +N|-N    AdjustPoolSize; prints the new size\n"
	       "  kill ROUTER          Kill: the pool restarts (or the router "
	       "stops: on_kill)\n"
	       "  poison ROUTER        PoisonPill: stop the router and its "
	       "pool\n"
	       "  status               the domain (FIELD VALUE rows): size, "
	       "hugepages,\n"
	       "                       dataplane, endpoints, ...\n"
	       "  stop                 stop the appliance; returns when the "
	       "control plane is gone\n"
	       "  watch ROUTER         a header \"route msgs/s total\", then "
	       "each interval one\n"
	       "                       line per route \"NAME MSGS/S TOTAL\" "
	       "and \"total MSGS/S TOTAL\"\n"
	       "    --interval SEC     default 1\n"
	       "    --duration SEC     stop once SEC seconds (more than 0) have "
	       "passed, with a\n"
	       "                       last sample then (default: until "
	       "SIGINT)\n"
	       "  top [ROUTER...]      routers, routes (msgs/s, queued, "
	       "restarts) and lcores,\n"
	       "                       redrawn each interval (q quits); "
	       "piped: a table each\n"
	       "                       interval (--interval, --duration as "
	       "for watch)\n"
	       "\n"
	       "  -c FILE              the configuration shmr-control runs "
	       "(default\n"
	       "                       $SHMR_CONFIG, else %s\n"
	       "                       when it exists, else the embedded "
	       "default): its domain\n"
	       "                       and run_dir\n"
	       "  -d DOMAIN            default $SHMR_DOMAIN, else the "
	       "configuration's domain\n"
	       "  -s SOCKET            the control socket (default "
	       "RUN_DIR/DOMAIN.sock: the\n"
	       "                       configuration's run_dir for its domain, "
	       "else\n"
	       "                       $SHMR_RUN_DIR, else /run/shmr)\n"
	       "  --wait SEC           wait up to SEC seconds (default %d; 0: "
	       "not at all) for a\n"
	       "                       control plane that is restarting (a "
	       "read caught by its\n"
	       "                       death is sent again once it is back), "
	       "and for a worker\n"
	       "                       to attach\n"
	       "  --version            print \"shmrctl VERSION\" and exit\n"
	       "\n"
	       "Exit status: 0 success; 1 error from the control plane, or no "
	       "domain (none\n"
	       "came within --wait); 2 bad arguments; 3 the control plane went "
	       "away during a\n"
	       "request that changes something: its outcome is unknown (look "
	       "with route or\n"
	       "routes before trying again); 4 add, enable, respawn or "
	       "replace was done, but\n"
	       "its worker did not attach (it exited first, or not within "
	       "--wait).\n",
	       shmr_config_sysconf_path(), WAIT_S_DEFAULT);
}

_Noreturn void shmr_cli_die(const char *msg)
{
	fprintf(stderr, "shmrctl: %s\n", msg);
	exit(1);
}

static _Noreturn void no_domain(void)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "no domain %s at %s (is shmr-control running?)", domain,
		 sock_path);
	shmr_cli_die(msg);
}

/* A request caught by the control plane's death that changes something:
 * it may or may not have been done. */
static _Noreturn void lost(void)
{
	fprintf(stderr, "shmrctl: control plane went away during the "
			"request; its outcome is unknown\n");
	exit(EXIT_LOST);
}

/* Connect @c shmr_cli_conn, waiting up to --wait for a control plane that is
 * restarting; its requests wait as long for it to come back. */
void shmr_cli_connect(void)
{
	int fd;
	char msg[512];

	if (shmr_cli_conn.fd >= 0)
		return; /* connected (a request reconnects if it must) */
	fd = shmr_proto_connect_wait(sock_path, shmr_cli_wait_ms);
	if (fd >= 0 && shmr_proto_conn_init(&shmr_cli_conn, sock_path, fd, shmr_cli_wait_ms,
					    NULL, NULL) == 0)
		return;
	if (fd >= 0)
		snprintf(msg, sizeof(msg), "-s: path too long");
	else if (fd == -SHMR_E_NO_DOMAIN)
		snprintf(msg, sizeof(msg),
			 "no domain %s at %s (is shmr-control running?)",
			 domain, sock_path);
	else if (fd == -SHMR_E_PERM)
		snprintf(msg, sizeof(msg), "permission denied at %s",
			 sock_path);
	else
		snprintf(msg, sizeof(msg), "cannot connect to %s: %s",
			 sock_path, fd > -SHMR_E_BASE ? strerror(-fd)
						      : "protocol error");
	shmr_cli_die(msg);
}

/* A transport failure of a request (no answer): say what, and exit. */
_Noreturn void shmr_cli_request_failed(int rc)
{
	if (rc == -SHMR_E_CONTROL_LOST)
		lost();
	if (rc == -SHMR_E_NO_DOMAIN)
		no_domain();
	if (rc == -SHMR_E_PROTO)
		shmr_cli_die("the control plane closed the connection");
	shmr_cli_die(rc > -SHMR_E_BASE ? strerror(-rc) : "protocol error");
}

/* One request; on an error answer, print its message and exit 1.
 * Returns the body (after "OK" and its newline). */
const char *shmr_cli_request(const char *req)
{
	return shmr_cli_request_fd(req, NULL);
}

const char *shmr_cli_request_fd(const char *req, int *fd)
{
	int rc = shmr_proto_conn_request(&shmr_cli_conn, req, shmr_cli_ans,
					 sizeof(shmr_cli_ans), fd);
	char *p;

	if (rc == 0) {
		p = strchr(shmr_cli_ans, '\n');
		return p ? p + 1 : "";
	}
	if (strncmp(shmr_cli_ans, "ERR ", 4) == 0) {
		p = shmr_cli_ans + 4;
		while (*p >= '0' && *p <= '9')
			p++;
		while (*p == ' ')
			p++;
		shmr_cli_die(*p ? p : "error");
	}
	shmr_cli_request_failed(rc);
	return NULL;
}

void shmr_cli_close(void)
{
	shmr_proto_conn_close(&shmr_cli_conn);
}

int shmr_cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 86400.0 * 365)
		return -1;
	*out = v;
	return 0;
}

double shmr_cli_parse_duration(const char *s)
{
	double v;

	if (shmr_cli_parse_seconds(s, &v) < 0 || v <= 0)
		shmr_cli_usage("--duration: seconds, more than 0");
	return v;
}

void shmr_cli_ts_add(struct timespec *t, double sec)
{
	long long ns = (long long)(sec * 1e9);

	t->tv_sec += (time_t)(ns / 1000000000LL);
	t->tv_nsec += (long)(ns % 1000000000LL);
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

int shmr_cli_tick(struct timespec *next, double interval,
		  const struct timespec *end)
{
	shmr_cli_ts_add(next, interval);
	if (!end || next->tv_sec < end->tv_sec ||
	    (next->tv_sec == end->tv_sec && next->tv_nsec < end->tv_nsec))
		return 0;
	*next = *end;
	return 1;
}

/*
 * The router's management commands: routees ROUTER, routee add|remove
 * ROUTER NAME, pool ROUTER +N|-N, kill ROUTER, poison ROUTER.  Returns 0
 * when @p cmd is not one of them.
 */
static int manage(const char *cmd, int argc, char **argv, int i)
{
	const char *verb = NULL, *router, *extra = NULL;
	char req[160];
	int nargs = 1;

	if (strcmp(cmd, "kill") == 0) {
		verb = "KILL";
	} else if (strcmp(cmd, "poison") == 0) {
		verb = "POISON";
	} else if (strcmp(cmd, "pool") == 0) {
		verb = "POOL_ADJUST";
		nargs = 2;
	} else if (strcmp(cmd, "routee") == 0) {
		if (i >= argc || (strcmp(argv[i], "add") &&
				  strcmp(argv[i], "remove")))
			shmr_cli_usage("routee: add|remove ROUTER NAME");
		verb = argv[i++][0] == 'a' ? "ROUTEE_ADD" : "ROUTEE_REMOVE";
		nargs = 2;
	} else {
		return 0;
	}
	if (argc - i != nargs)
		shmr_cli_usage(nargs == 1 ? "expected ROUTER"
				 : strcmp(verb, "POOL_ADJUST") == 0
					   ? "pool: ROUTER +N|-N"
					   : "routee: add|remove ROUTER NAME");
	router = argv[i];
	if (!shmr_proto_word_ok(router, SHMR_NAME_MAX))
		shmr_cli_usage("bad ROUTER name");
	if (nargs == 2) {
		extra = argv[i + 1];
		if (!shmr_proto_word_ok(extra, SHMR_NAME_MAX))
			shmr_cli_usage("bad NAME or change");
		if (strcmp(verb, "POOL_ADJUST") == 0 &&
		    ((extra[0] != '+' && extra[0] != '-') || !extra[1] ||
		     strspn(extra + 1, "0123456789") != strlen(extra + 1)))
			shmr_cli_usage("pool: the change is +N or -N");
		/* The control plane refuses a change larger than a router
		 * can hold as a protocol error (exit 1, no usage line): an
		 * argument out of range is the caller's, said here. */
		if (strcmp(verb, "POOL_ADJUST") == 0) {
			unsigned long v;
			char why[64];

			errno = 0;
			v = strtoul(extra + 1, NULL, 10);
			if (errno || v > SHMR_MAX_ROUTES) {
				snprintf(why, sizeof(why),
					 "pool: N is at most %u",
					 SHMR_MAX_ROUTES);
				shmr_cli_usage(why);
			}
		}
	}
	if (shmr_proto_encode(req, sizeof(req), verb,
			      (const char *const[]){ router, extra },
			      (unsigned)nargs) < 0)
		shmr_cli_usage("request too long");
	shmr_cli_connect();
	fputs(shmr_cli_request(req), stdout);
	if (strcmp(verb, "POOL_ADJUST") == 0)
		putchar('\n');
	shmr_cli_close();
	return 1;
}

/* The domain a socket path names, as shmr-control names its sockets
 * (DIR/DOMAIN.sock): for messages only. */
static const char *sock_name(const char *path)
{
	static char name[SHMR_NAME_MAX];
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 5 && strcmp(b + n - 5, ".sock") == 0)
		n -= 5;
	snprintf(name, sizeof(name), "%.*s", (int)n, b);
	return name;
}

/*
 * The socket when -s does not name it, as shmr-control (started without
 * --run-dir) put it: see the top of this file.  The configuration is
 * always read (parsed, not validated: only `domain` and `run_dir` are
 * used), since its run_dir applies to its domain however that was named;
 * one that cannot be read or parsed is an error (exit 2), never skipped.
 */
static void find_socket(const char *conf, const char *dom_opt)
{
	static struct shmr_config cfg; /* large */
	static char dom[SHMR_NAME_MAX];
	const char *env = getenv("SHMR_DOMAIN"), *dir = NULL;
	char err[SHMR_CONFIG_ERR_MAX];
	int rc, n;

	domain = dom_opt ? dom_opt : env && *env ? env : NULL;
	if (!conf)
		conf = shmr_config_default_file(NULL);
	if (conf)
		rc = shmr_config_load_file(conf, &cfg, err, sizeof(err));
	else
		rc = shmr_config_load_string(shmr_config_default_text(),
					     "<default>", &cfg, err,
					     sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "shmrctl: %s (the configuration gives the "
				"domain; or give -d DOMAIN and -s SOCKET)\n",
			err);
		exit(2);
	}
	shmr_config_free(&cfg); /* its domain and run_dir are all we read */
	if (!domain) {
		snprintf(dom, sizeof(dom), "%s", cfg.domain);
		domain = dom;
	}
	/* The parser fills in the built-in run_dir when the file sets
	 * none: only one it set counts, as in shmr-control. */
	if (strcmp(domain, cfg.domain) == 0 &&
	    strcmp(cfg.run_dir, SHMR_RUN_DIR_DEFAULT) != 0)
		dir = cfg.run_dir;
	if (!dir) {
		rc = shmr_proto_sock_path(domain, sock_path, sizeof(sock_path));
		if (rc == -ENAMETOOLONG)
			shmr_cli_usage("socket path too long");
		if (rc < 0)
			shmr_cli_usage("bad DOMAIN name");
		return;
	}
	if (!shmr_proto_word_ok(domain, SHMR_NAME_MAX))
		shmr_cli_usage("bad DOMAIN name");
	n = snprintf(sock_path, sizeof(sock_path), "%s/%s.sock", dir, domain);
	if (n < 0 || (size_t)n >= sizeof(sock_path))
		shmr_cli_usage("socket path too long");
}

/* How long stop waits for the control plane to exit once it closed its
 * socket (its workers and dataplane are stopped by then: the rest is
 * its own teardown, milliseconds). */
#define STOP_EXIT_MS 30000

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "wait", required_argument, NULL, 'w' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL, *cmd, *conf = NULL, *dom_opt = NULL;
	double wait_s;
	int opt, rc, gone = -1;
	ssize_t n;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:c:d:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			conf = optarg;
			break;
		case 'd':
			dom_opt = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'h':
			help();
			return 0;
		case 'V':
			printf("shmrctl %s\n", SHMR_VERSION_TEXT);
			return 0;
		case 'w':
			if (shmr_cli_parse_seconds(optarg, &wait_s) < 0 ||
			    wait_s > 3600)
				shmr_cli_usage("--wait: seconds, 0 to 3600");
			shmr_cli_wait_ms = (int)(wait_s * 1000);
			break;
		case ':':
			shmr_cli_usage("missing argument");
			break;
		default:
			shmr_cli_usage("unknown option");
		}
	}
	if (optind >= argc)
		shmr_cli_usage("no command");
	cmd = argv[optind++];
	if (sock) {
		/* An empty path names no socket: the caller's mistake, not
		 * a domain that is not running. */
		if (!sock[0])
			shmr_cli_usage("-s: an empty socket path");
		if (strlen(sock) >= sizeof(sock_path))
			shmr_cli_usage("-s: path too long");
		strcpy(sock_path, sock);
		domain = dom_opt ? dom_opt : sock_name(sock);
	} else {
		find_socket(conf, dom_opt);
	}
	if (shmr_cli_lifecycle(cmd, argc, argv, optind))
		return 0;
	if (manage(cmd, argc, argv, optind))
		return 0;
	rc = shmr_cli_read(cmd, argc, argv, optind);
	if (rc >= 0)
		return rc;
	if (strcmp(cmd, "stop") != 0)
		shmr_cli_usage("unknown command");
	if (optind < argc)
		shmr_cli_usage("unexpected argument");
	shmr_cli_connect();
	/* Who serves the socket (the kernel's word, from its listen()): we
	 * wait for that process to be gone, not only for the socket. */
	{
		struct ucred cr;
		socklen_t len = sizeof(cr);

		if (getsockopt(shmr_cli_conn.fd, SOL_SOCKET, SO_PEERCRED, &cr,
			       &len) == 0 && cr.pid > 0)
			gone = (int)syscall(SYS_pidfd_open, cr.pid, 0);
	}
	shmr_cli_request("STOP");
	/* The control plane closes us when it exits. */
	do
		n = recv(shmr_cli_conn.fd, shmr_cli_ans, sizeof(shmr_cli_ans), 0);
	while (n > 0 || (n < 0 && errno == EINTR));
	shmr_cli_close();
	/* It closes its connections before the last of its teardown, and
	 * its locks go with the process: a start right after us would find
	 * the domain still served.  The pidfd turns readable once it has
	 * exited (a zombie counts). */
	if (gone >= 0) {
		struct pollfd pf = { .fd = gone, .events = POLLIN };
		int rc;

		do
			rc = poll(&pf, 1, STOP_EXIT_MS);
		while (rc < 0 && errno == EINTR);
		close(gone);
		if (rc == 0) {
			fprintf(stderr,
				"shmrctl: the control plane closed its socket "
				"but had not exited %d s later\n",
				STOP_EXIT_MS / 1000);
			return 1;
		}
	}
	return 0;
}
