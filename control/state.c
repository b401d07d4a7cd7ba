/*
 * The state file: what a restarted control plane cannot read out of the
 * domain.  The domain holds the spec (routers, routes with their inbox
 * PIDs and states, the registry), the endpoint table (each slot's
 * generation, kind and owner pid), the counters and the lanes; the
 * configuration holds what was configured.  What neither holds is here:
 *   - the dataplane's pid and start time, and the numbers of the domain's
 *     two descriptors in it (where the memory is found again);
 *   - each route's spec (program, args, cpus: a route added at run time, or
 *     replaced, is in no configuration), its restart counter, whether a
 *     pending disable/remove drains first, and its worker's pid + start;
 *   - each client endpoint owner's start time (the guard against a reused
 *     pid: the domain has the pid only).
 *
 * Text, one record a line, versioned by its first line, ended by "end" (a
 * file without it is refused); fields are separated by spaces, strings
 * escaped (%XX for a space, '%', '=', a control or non-ASCII byte; "=" is
 * the empty string).  Written whole to <path>.tmp and renamed over the
 * old one whenever the model is published, so a reader finds the old file
 * or the new one.  A reader trusts nothing in it: adopt.c checks every
 * pid against its start time and every route against the domain.
 *
 *   shmr-control-state 2
 *   domain NAME
 *   control PID START
 *   dataplane PID START FD LANES_FD SIZE
 *   spec VERSION
 *   route ROUTER NAME RESTARTS DRAIN WPID WSTART CPUS PROGRAM NARGS ARG...
 *   client SLOT GEN PID START
 *   end
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_internal.h"
#include "procs.h"
#include "state.h"

int shmr_ctl_state_init(struct shmr_ctl_state_file *f, const char *run_dir,
			const char *domain)
{
	int n;

	memset(f, 0, sizeof(*f));
	n = snprintf(f->path, sizeof(f->path), "%s/%s.state", run_dir, domain);
	return n < 0 || (size_t)n >= sizeof(f->path) - 4 ? -ENAMETOOLONG : 0;
}

static void put_str(FILE *o, const char *s)
{
	fputc(' ', o);
	if (!*s) {
		fputc('=', o);
		return;
	}
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= ' ' || ch >= 0x7f || ch == '%' || ch == '=')
			fprintf(o, "%%%02X", ch);
		else
			fputc(ch, o);
	}
}

/* Decode token @p t into @p dst (@p cap bytes); -1 when it does not fit
 * or is malformed. */
static int get_str(const char *t, char *dst, size_t cap)
{
	size_t n = 0;

	if (!t)
		return -1;
	if (strcmp(t, "=") == 0) {
		dst[0] = '\0';
		return 0;
	}
	for (; *t; t++) {
		char c = *t;

		if (c == '%') {
			unsigned v;

			if (sscanf(t + 1, "%2x", &v) != 1 || !t[1] || !t[2])
				return -1;
			c = (char)v;
			t += 2;
		}
		if (c == '\0' || n + 1 >= cap)
			return -1;
		dst[n++] = c;
	}
	dst[n] = '\0';
	return 0;
}

/* The start time of client endpoint @p slot's owner, read from /proc the
 * first time the endpoint {slot, gen} is seen (just after its OPEN was
 * published), remembered after that. */
static uint64_t client_start(struct shmr_ctl_state_file *f, uint32_t slot,
			     uint32_t gen, int32_t pid)
{
	struct shmr_ctl_state_client *c = &f->seen[slot];

	if (c->gen != gen || c->owner.pid != pid) {
		c->gen = gen;
		c->owner.pid = pid;
		c->owner.start = shmr_ctl_proc_start(pid);
	}
	return c->owner.start;
}

/* Write @p n bytes of @p buf to @p fd whole.  0 or -errno. */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, buf, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

int shmr_ctl_state_save(struct shmr_ctl_state_file *f,
			const struct shmr_ctl_model *m,
			const struct shmr_ctl_spawner *sp, uint64_t size,
			int force)
{
	char tmp[PATH_MAX + 8], spec[40];
	char *text = NULL;
	size_t len = 0, cut;
	FILE *o;
	int fd, err, n;

	if (!force && f->written == m->version)
		return 0;
	/* The file's text, less its spec line (at cut), in memory first:
	 * compared with the last one written before anything is. */
	o = open_memstream(&text, &len);
	if (!o)
		return -errno;
	fprintf(o, "shmr-control-state %u\n", SHMR_CTL_STATE_VERSION);
	fprintf(o, "domain");
	put_str(o, m->cfg->domain);
	/* Ours never changes: read once, not at every save (a churn of
	 * changes saves thousands of times a second). */
	if (!f->self_start)
		f->self_start = shmr_ctl_proc_start(getpid());
	fprintf(o, "\ncontrol %d %" PRIu64 "\n", (int)getpid(),
		f->self_start);
	fprintf(o, "dataplane %d %" PRIu64 " %d %d %" PRIu64 "\n",
		(int)sp->dp.pid, sp->dp.start, sp->dp_fd, sp->dp_lanes_fd,
		size);
	fflush(o);
	cut = len;
	for (unsigned i = 0; i < m->nrouters; i++) {
		const struct shmr_ctl_router *r = &m->routers[i];

		for (unsigned k = 0; k < r->nroutes; k++) {
			const struct shmr_ctl_route *q = &r->routes[k];
			const struct shmr_ctl_proc *p = &sp->workers[i][k];

			fprintf(o, "route");
			put_str(o, r->conf->name);
			put_str(o, q->conf->name);
			fprintf(o, " %" PRIu64 " %d %d %" PRIu64, q->restarts,
				p->drain_at_ms != 0, (int)p->pid, p->start);
			put_str(o, q->conf->cpus);
			put_str(o, q->conf->program);
			fprintf(o, " %u", q->conf->nargs);
			for (unsigned a = 0; a < q->conf->nargs &&
					     a < SHMR_CONF_ARGS_MAX; a++)
				put_str(o, q->conf->args[a]);
			fputc('\n', o);
		}
	}
	for (uint32_t s = 0; s < m->alloc.nslots; s++) {
		const struct shmr_ctl_slot *sl = &m->alloc.slots[s];

		/* Not the admin endpoint: it is ours. */
		if (sl->state != SHMR_CTL_SLOT_USED ||
		    sl->kind != SHMR_EPK_CLIENT || sl->os_pid <= 0 ||
		    strcmp(sl->name, "shmr:admin") == 0)
			continue;
		fprintf(o, "client %" PRIu32 " %" PRIu32 " %d %" PRIu64 "\n",
			s, sl->gen, (int)sl->os_pid,
			client_start(f, s, sl->gen, sl->os_pid));
	}
	fprintf(o, "end\n");
	if (fclose(o) != 0 || !text) {
		free(text);
		return -ENOMEM;
	}
	if (!force && f->last && len == f->last_len &&
	    memcmp(text, f->last, len) == 0) {
		/* Only the spec version moved. */
		free(text);
		f->written = m->version;
		return 0;
	}
	n = snprintf(spec, sizeof(spec), "spec %" PRIu64 "\n", m->version);
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		free(text);
		return err;
	}
	err = write_all(fd, text, cut);
	if (!err)
		err = write_all(fd, spec, (size_t)n);
	if (!err)
		err = write_all(fd, text + cut, len - cut);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, f->path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		free(text);
		return err;
	}
	free(f->last);
	f->last = text;
	f->last_len = len;
	f->written = m->version;
	return 0;
}

void shmr_ctl_state_remove(struct shmr_ctl_state_file *f)
{
	(void)unlink(f->path);
	free(f->last);
	f->last = NULL;
	f->last_len = 0;
	f->written = 0;
}

/* Split @p line (modified) into at most @p max space-separated tokens. */
static unsigned split(char *line, char **tok, unsigned max)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \n", &save); t && n < max;
	     t = strtok_r(NULL, " \n", &save))
		tok[n++] = t;
	return n;
}

static int parse_u64(const char *t, uint64_t *v)
{
	char *end;

	if (!t || !*t)
		return -1;
	errno = 0;
	*v = strtoull(t, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_route(struct shmr_ctl_state *st, char **tok, unsigned n)
{
	struct shmr_ctl_state_route *q;
	uint64_t v, drain, wpid, nargs;

	if (st->nroutes >= st->max_routes || n < 10)
		return -1;
	q = &st->routes[st->nroutes];
	memset(q, 0, sizeof(*q));
	if (get_str(tok[1], q->router, sizeof(q->router)) < 0 ||
	    get_str(tok[2], q->spec.name, sizeof(q->spec.name)) < 0 ||
	    parse_u64(tok[3], &q->restarts) < 0 ||
	    parse_u64(tok[4], &drain) < 0 || parse_u64(tok[5], &wpid) < 0 ||
	    parse_u64(tok[6], &v) < 0 || wpid > INT32_MAX ||
	    get_str(tok[7], q->spec.cpus, sizeof(q->spec.cpus)) < 0 ||
	    get_str(tok[8], q->spec.program, sizeof(q->spec.program)) < 0 ||
	    parse_u64(tok[9], &nargs) < 0 || nargs > SHMR_CONF_ARGS_MAX ||
	    n != 10 + nargs)
		return -1;
	q->drain = drain != 0;
	q->worker = (struct shmr_ctl_state_proc){ (int32_t)wpid, v };
	q->spec.nargs = (unsigned)nargs;
	for (unsigned a = 0; a < nargs; a++)
		if (get_str(tok[10 + a], q->spec.args[a],
			    sizeof(q->spec.args[a])) < 0)
			return -1;
	st->nroutes++;
	return 0;
}

static int parse_line(struct shmr_ctl_state *st, char *line, int *ended)
{
	char *tok[12 + SHMR_CONF_ARGS_MAX];
	unsigned n = split(line, tok, 12 + SHMR_CONF_ARGS_MAX);
	uint64_t a, b, c, d, e;

	if (n == 0)
		return 0;
	if (strcmp(tok[0], "domain") == 0 && n == 2)
		return get_str(tok[1], st->domain, sizeof(st->domain));
	if (strcmp(tok[0], "control") == 0 && n == 3 &&
	    parse_u64(tok[1], &a) == 0 && parse_u64(tok[2], &b) == 0 &&
	    a <= INT32_MAX) {
		st->control = (struct shmr_ctl_state_proc){ (int32_t)a, b };
		return 0;
	}
	if (strcmp(tok[0], "dataplane") == 0 && n == 6 &&
	    parse_u64(tok[1], &a) == 0 && parse_u64(tok[2], &b) == 0 &&
	    parse_u64(tok[3], &c) == 0 && parse_u64(tok[4], &e) == 0 &&
	    parse_u64(tok[5], &d) == 0 && a <= INT32_MAX && c <= INT32_MAX &&
	    e <= INT32_MAX) {
		st->dataplane = (struct shmr_ctl_state_proc){ (int32_t)a, b };
		st->dp_fd = (int)c;
		st->dp_lanes_fd = (int)e;
		st->size = d;
		return 0;
	}
	if (strcmp(tok[0], "spec") == 0 && n == 2)
		return parse_u64(tok[1], &st->spec_version);
	if (strcmp(tok[0], "route") == 0)
		return parse_route(st, tok, n);
	if (strcmp(tok[0], "client") == 0 && n == 5 &&
	    parse_u64(tok[1], &a) == 0 && parse_u64(tok[2], &b) == 0 &&
	    parse_u64(tok[3], &c) == 0 && parse_u64(tok[4], &d) == 0 &&
	    a < SHMR_MAX_ENDPOINTS && b <= UINT32_MAX && c <= INT32_MAX &&
	    st->nclients < SHMR_MAX_ENDPOINTS) {
		st->clients[st->nclients++] = (struct shmr_ctl_state_client){
			(uint32_t)a, (uint32_t)b, { (int32_t)c, d }
		};
		return 0;
	}
	if (strcmp(tok[0], "end") == 0 && n == 1) {
		*ended = 1;
		return 0;
	}
	return -1;
}

void shmr_ctl_state_free(struct shmr_ctl_state *st)
{
	free(st->routes);
	st->routes = NULL;
	st->nroutes = st->max_routes = 0;
}

int shmr_ctl_state_read(const struct shmr_ctl_state_file *f,
			struct shmr_ctl_state *st, unsigned max_routes,
			char *why, size_t cap)
{
	FILE *in;
	char *line = NULL;
	size_t lcap = 0;
	unsigned version = 0, lineno = 1;
	int ended = 0, rc = 0;

	shmr_ctl_state_free(st);
	memset(st, 0, sizeof(*st));
	st->dp_fd = st->dp_lanes_fd = -1;
	st->routes = calloc(max_routes ? max_routes : 1, sizeof(*st->routes));
	if (!st->routes)
		return -ENOMEM;
	st->max_routes = max_routes;
	in = fopen(f->path, "re");
	if (!in)
		return errno == ENOENT ? -ENOENT : -errno;
	if (getline(&line, &lcap, in) < 0 ||
	    sscanf(line, "shmr-control-state %u", &version) != 1) {
		snprintf(why, cap, "not a state file");
		rc = -EINVAL;
	} else if (version != SHMR_CTL_STATE_VERSION) {
		snprintf(why, cap, "state version %u, this control plane "
			 "reads %u", version, SHMR_CTL_STATE_VERSION);
		rc = -EINVAL;
	}
	while (rc == 0 && !ended && getline(&line, &lcap, in) >= 0) {
		lineno++;
		if (parse_line(st, line, &ended) < 0) {
			snprintf(why, cap, "line %u is malformed", lineno);
			rc = -EINVAL;
		}
	}
	if (rc == 0 && !ended) {
		snprintf(why, cap, "truncated (no end line)");
		rc = -EINVAL;
	}
	free(line);
	fclose(in);
	return rc;
}

const struct shmr_ctl_state_route *
shmr_ctl_state_route(const struct shmr_ctl_state *st, const char *router,
		     const char *name)
{
	for (unsigned i = 0; i < st->nroutes; i++)
		if (strcmp(st->routes[i].router, router) == 0 &&
		    strcmp(st->routes[i].spec.name, name) == 0)
			return &st->routes[i];
	return NULL;
}

const struct shmr_ctl_state_client *
shmr_ctl_state_client(const struct shmr_ctl_state *st, uint32_t slot,
		      uint32_t gen)
{
	for (unsigned i = 0; i < st->nclients; i++)
		if (st->clients[i].slot == slot && st->clients[i].gen == gen)
			return &st->clients[i];
	return NULL;
}
