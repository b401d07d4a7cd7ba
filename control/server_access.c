/*
 * Who may do what on the control socket (the other half of server.c):
 * a connection's role from its credentials and groups, the verb table,
 * the per-user shares of connections, endpoints and names, and the
 * program allow-list at ADD and REPLACE.  Roles: the owner (our euid),
 * root and admin_group may do everything; socket_group's other members
 * may use and read the appliance; anyone else is refused.  The operator's
 * table is in docs/operator-guide.md ("Who may do what").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shmr/proto.h>

#include "control_internal.h"
#include "programs.h"
#include "request.h"
#include "server.h"
#include "server_internal.h"

/* Entries of conns[] that only the owner and root may take. */
#define RESERVED_CONNS 8

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59 /* Linux >= 4.13; older headers lack it */
#endif

/* Every verb: its name as shmrctl spells it, and whether it changes the
 * appliance (then only SHMR_CTL_ROLE_ADMIN may send it).  A verb missing
 * here is refused to everyone but an admin (admin = 1 is the default
 * that fails safe). */
static const struct {
	const char *word;
	int user; /* 1: socket_group members may send it */
} verbs[] = {
	[SHMR_REQ_ATTACH] = { "attach", 1 },
	[SHMR_REQ_OPEN] = { "open", 1 },
	[SHMR_REQ_CLAIM] = { "claim", 1 },
	[SHMR_REQ_CLOSE] = { "close", 1 },
	[SHMR_REQ_REGISTER] = { "register", 1 },
	[SHMR_REQ_UNREGISTER] = { "unregister", 1 },
	[SHMR_REQ_RETIRE] = { "retire", 1 }, /* its own route only */
	[SHMR_REQ_ROUTES] = { "routes", 1 },
	[SHMR_REQ_INSPECT] = { "inspect", 1 },
	[SHMR_REQ_STATUS] = { "status", 1 },
	[SHMR_REQ_ROUTE] = { "route", 1 },
	[SHMR_REQ_ROUTEES] = { "routees", 1 },
	[SHMR_REQ_DLQ_LIST] = { "dlq list", 1 },
	[SHMR_REQ_STOP] = { "stop", 0 },
	[SHMR_REQ_ADD] = { "add", 0 },
	[SHMR_REQ_REMOVE] = { "remove", 0 },
	[SHMR_REQ_DISABLE] = { "disable", 0 },
	[SHMR_REQ_ENABLE] = { "enable", 0 },
	[SHMR_REQ_REPLACE] = { "replace", 0 },
	[SHMR_REQ_RESPAWN] = { "respawn", 0 },
	[SHMR_REQ_DLQ_REPLAY] = { "dlq replay", 0 },
	[SHMR_REQ_DRAIN] = { "disable --drain", 0 },
	[SHMR_REQ_ROUTEE_ADD] = { "routee add", 0 },
	[SHMR_REQ_ROUTEE_REMOVE] = { "routee remove", 0 },
	[SHMR_REQ_POOL_ADJUST] = { "pool", 0 },
	[SHMR_REQ_KILL] = { "kill", 0 },
	[SHMR_REQ_POISON] = { "poison", 0 },
	[SHMR_REQ_METRICS] = { "metrics", 1 },
};

/* Is @p gid among the supplementary groups of process @p pid? */
static int proc_in_group(pid_t pid, gid_t gid)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == gid)
				found = 1;
		}
		break;
	}
	fclose(f);
	return found;
}

/* Is @p gid among the groups socket @p fd's peer connected with?  1, 0,
 * or -1 when the kernel cannot say (no SO_PEERGROUPS). */
static int peer_in_group(int fd, gid_t gid)
{
	gid_t small[64], *g = small;
	socklen_t len = sizeof(small);
	int found = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0) {
		if (errno != ERANGE)
			return -1;
		/* len is what it needs (at most NGROUPS_MAX gids). */
		g = malloc(len);
		if (!g || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) <
				  0) {
			free(g);
			return -1;
		}
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (g[i] == gid)
			found = 1;
	if (g != small)
		free(g);
	return found;
}

static int in_group(int fd, const struct ucred *cr, gid_t gid)
{
	int rc;

	if (cr->gid == gid)
		return 1;
	rc = peer_in_group(fd, gid);
	return rc >= 0 ? rc : proc_in_group(cr->pid, gid);
}

static int is_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static int peer_role(const struct shmr_ctl_server *srv, int fd,
		     const struct ucred *cr)
{
	if (is_owner(cr->uid))
		return SHMR_CTL_ROLE_ADMIN;
	if (srv->have_admin && in_group(fd, cr, srv->admin))
		return SHMR_CTL_ROLE_ADMIN;
	if (srv->have_group && in_group(fd, cr, srv->group))
		return SHMR_CTL_ROLE_USER;
	return SHMR_CTL_ROLE_NONE;
}

/* The connections of @p uid: all of them, and those kept only to be
 * refused. */
static void count_uid(const struct shmr_ctl_server *srv, uid_t uid,
		      unsigned *all, unsigned *refusing, unsigned *free_left)
{
	*all = *refusing = *free_left = 0;
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++) {
		const struct shmr_ctl_conn *k = &srv->conns[i];

		if (k->fd < 0) {
			++*free_left;
			continue;
		}
		if (k->uid != uid)
			continue;
		++*all;
		if (k->refuse_code)
			++*refusing;
	}
}

/*
 * Set up conns[@p idx] for @p fd: its role, and whether it is kept only
 * to be told why it is refused.  0, or -1 to close it at once (a uid
 * that already has a refusal pending, or the table's reserve).
 */
int shmr_ctl_srv_conn_admit(struct shmr_ctl_server *srv, unsigned idx, int fd,
		      const struct ucred *cr)
{
	struct shmr_ctl_conn *k = &srv->conns[idx];
	uint32_t cap = srv->dep.cfg->max_connections_per_user;
	unsigned all, refusing, free_left;

	/* Before conns[idx] is taken: what was there already. */
	count_uid(srv, cr->uid, &all, &refusing, &free_left);
	*k = (struct shmr_ctl_conn){
		.fd = fd, .id = ++srv->next_conn_id, .pid = cr->pid,
		.uid = cr->uid, .gid = cr->gid,
		.role = peer_role(srv, fd, cr),
		.idle_deadline_ms =
			shmr_ctl_now_ms() + srv->dep.cfg->idle_timeout_ms,
	};
	if (is_owner(cr->uid))
		return 0;
	if (free_left <= RESERVED_CONNS || (all >= cap && refusing > 0)) {
		srv->conns_refused++;
		shmr_ctl_srv_refusal_log(srv,
			    "connection of process %d (uid %u) closed: %s",
			    (int)cr->pid, (unsigned)cr->uid,
			    free_left <= RESERVED_CONNS
				    ? "the rest of the table is the owner's"
				    : "over max_connections_per_user");
		return -1;
	}
	if (k->role == SHMR_CTL_ROLE_NONE) {
		k->refuse_code = SHMR_E_PERM;
		snprintf(k->refusal, sizeof(k->refusal), "permission denied");
	} else if (all >= cap) {
		srv->conns_refused++;
		k->refuse_code = SHMR_E_NOT_ALLOWED;
		snprintf(k->refusal, sizeof(k->refusal),
			 "too many connections of uid %u "
			 "(max_connections_per_user = %" PRIu32 ")",
			 (unsigned)cr->uid, cap);
		shmr_ctl_srv_refusal_log(srv, "connection of process %d refused: %s",
			    (int)cr->pid, k->refusal);
	}
	return 0;
}

/* The role of the process behind client endpoint slot @p sl: its
 * connection's; for one owned by pid (adopted, not attached again), what
 * its credentials in /proc give; for one its process closed or left (a
 * management message it sent before is read after), its opener's, kept
 * in the slot until the slot is taken again. */
static int slot_role(const struct shmr_ctl_server *srv,
		     const struct shmr_ctl_slot *sl)
{
	char path[64];
	struct stat st;

	if (sl->owner == 0)
		return (int)sl->role;
	if (!(sl->owner & SHMR_CTL_OWNER_PID)) {
		for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
			if (srv->conns[i].fd >= 0 &&
			    srv->conns[i].id == sl->owner)
				return srv->conns[i].role;
		return (int)sl->role;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)sl->os_pid);
	if (stat(path, &st) < 0)
		return SHMR_CTL_ROLE_NONE;
	if (is_owner(st.st_uid) ||
	    (srv->have_admin && proc_in_group(sl->os_pid, srv->admin)))
		return SHMR_CTL_ROLE_ADMIN;
	return SHMR_CTL_ROLE_USER;
}

int shmr_ctl_server_msg_allowed(struct shmr_ctl_server *srv, unsigned r,
				const struct shmr_msg *m)
{
	const struct shmr_ctl_slot *sl;

	if (m->type == SHMR_TYPE_GET_ROUTEES)
		return 1;
	/* The dataplane checked m->from against the lane it came on.  Its
	 * slot may be closed by now (a sender that exits right after its
	 * send): its generation is the last owner's until the slot is
	 * taken again, so that owner is still who sent it. */
	sl = shmr_ctl_alloc_lookup_last(&srv->dep.m->alloc, m->from);
	/* Not a client's: a router (the dataplane) or a route's inbox (a
	 * worker this control plane started). */
	if (sl && (sl->kind != SHMR_EPK_CLIENT ||
		   slot_role(srv, sl) == SHMR_CTL_ROLE_ADMIN))
		return 1;
	srv->requests_refused++;
	shmr_ctl_srv_refusal_log(srv,
		    "router %s: management message type 0x%" PRIx32
		    " from %u:%u (process %d) refused: needs the owner, root "
		    "or admin_group",
		    srv->dep.m->routers[r].conf->name, m->type, m->from.slot,
		    m->from.gen, sl ? (int)sl->os_pid : 0);
	return 0;
}

/* Answer @p req with SHMR_E_NOT_ALLOWED and @p why; counted, logged. */
static int refuse(struct shmr_ctl_server *srv, const struct shmr_ctl_conn *k,
		  const char *why)
{
	srv->requests_refused++;
	shmr_ctl_srv_refusal_log(srv, "refused from process %d (uid %u): %s", (int)k->pid,
		    (unsigned)k->uid, why);
	return shmr_ctl_srv_send_err(k->fd, SHMR_E_NOT_ALLOWED, "%s", why);
}

/* May @p k send @p req?  0, or the refusal's answer (see verbs[]). */
int shmr_ctl_srv_role_check(struct shmr_ctl_server *srv,
		      const struct shmr_ctl_conn *k,
		      const struct shmr_ctl_req *req, int *refused)
{
	const char *word = req->verb < sizeof(verbs) / sizeof(verbs[0]) &&
					   verbs[req->verb].word
				   ? verbs[req->verb].word
				   : "request";
	char why[200];

	*refused = 0;
	if (k->role == SHMR_CTL_ROLE_ADMIN ||
	    (req->verb < sizeof(verbs) / sizeof(verbs[0]) &&
	     verbs[req->verb].user))
		return 0;
	*refused = 1;
	if (srv->have_admin)
		snprintf(why, sizeof(why),
			 "%s: needs the owner (uid %u), root or admin_group "
			 "'%s'",
			 word, (unsigned)geteuid(), srv->dep.cfg->admin_group);
	else
		snprintf(why, sizeof(why),
			 "%s: needs the owner (uid %u) or root (no "
			 "admin_group is configured)",
			 word, (unsigned)geteuid());
	return refuse(srv, k, why);
}

/* ADD, REPLACE: @p req's spec with its program checked against the
 * configuration (programs.c) into @p spec; 0, or *refused and the
 * refusal's answer. */
int shmr_ctl_srv_program_check(struct shmr_ctl_server *srv,
			 const struct shmr_ctl_conn *k,
			 const struct shmr_ctl_req *req,
			 struct shmr_conf_route *spec, int *refused)
{
	char why[SHMR_CONF_PATH_MAX + 96];

	*refused = 0;
	*spec = req->spec;
	if (shmr_ctl_program_allowed(srv->dep.cfg, req->spec.program,
				     spec->program,
				     sizeof(spec->program)) == 0)
		return 0;
	*refused = 1;
	snprintf(why, sizeof(why),
		 "%s: program %s is not in the configuration's programs",
		 verbs[req->verb].word, req->spec.program);
	return refuse(srv, k, why);
}

/* The uid of connection id @p owner; -1 when it is not a live one. */
static long long uid_of_conn(const struct shmr_ctl_server *srv,
			     uint64_t owner)
{
	for (unsigned i = 0; i < SHMR_CTL_MAX_CONNS; i++)
		if (srv->conns[i].fd >= 0 && srv->conns[i].id == owner)
			return srv->conns[i].uid;
	return -1;
}

/*
 * OPEN, REGISTER: a user other than the owner and root holds at most
 * max_endpoints_per_user client endpoints, and as many names, so that
 * one user cannot take the domain's endpoint slots or its registry from
 * the others.  0, or *refused and the refusal's answer.
 */
int shmr_ctl_srv_share_check(struct shmr_ctl_server *srv,
		       const struct shmr_ctl_conn *k,
		       const struct shmr_ctl_req *req, int *refused)
{
	const struct shmr_ctl_model *m = srv->dep.m;
	uint32_t cap = srv->dep.cfg->max_endpoints_per_user;
	unsigned held = 0;
	char why[200];

	*refused = 0;
	if (is_owner(k->uid))
		return 0;
	if (req->verb == SHMR_REQ_OPEN) {
		for (uint32_t i = 0; i < m->alloc.nslots; i++) {
			const struct shmr_ctl_slot *sl = &m->alloc.slots[i];

			held += sl->state == SHMR_CTL_SLOT_USED &&
				sl->kind == SHMR_EPK_CLIENT &&
				uid_of_conn(srv, sl->owner) ==
					(long long)k->uid;
		}
	} else {
		for (unsigned i = 0; i < m->nnames; i++)
			held += uid_of_conn(srv, m->names[i].owner) ==
				(long long)k->uid;
	}
	if (held < cap)
		return 0;
	*refused = 1;
	snprintf(why, sizeof(why),
		 "%s: uid %u holds %u %s (max_endpoints_per_user = %" PRIu32
		 ")",
		 verbs[req->verb].word, (unsigned)k->uid, held,
		 req->verb == SHMR_REQ_OPEN ? "endpoints" : "names", cap);
	return refuse(srv, k, why);
}
