/*
 * Parser of control-socket requests (see shmr/proto.h).  Every byte comes
 * from another process and is untrusted: the packet is bounded, must be
 * printable ASCII words separated by single spaces, every number a plain
 * decimal uint32 and every name [A-Za-z0-9_.:-]{1,31}.  Anything else gets
 * an error code and a message, never undefined behaviour.
 */
#include <string.h>

#include <hwloc.h>

#include <shmr/proto.h>

#include "cpus.h"
#include "request.h"

#define MAX_WORDS (5 + SHMR_CONF_ARGS_MAX + 1) /* ADD is the longest */

struct verb_info {
	const char *word;
	uint32_t verb;
	unsigned min_args, max_args;
};

static const struct verb_info verbs[] = {
	{ "ATTACH", SHMR_REQ_ATTACH, 1, 1 },
	{ "OPEN", SHMR_REQ_OPEN, 0, 0 },
	{ "CLAIM", SHMR_REQ_CLAIM, 2, 2 },
	{ "CLOSE", SHMR_REQ_CLOSE, 2, 2 },
	{ "REGISTER", SHMR_REQ_REGISTER, 3, 3 },
	{ "UNREGISTER", SHMR_REQ_UNREGISTER, 3, 3 },
	{ "ROUTES", SHMR_REQ_ROUTES, 1, 1 },
	{ "INSPECT", SHMR_REQ_INSPECT, 1, 3 },
	{ "STATUS", SHMR_REQ_STATUS, 0, 0 },
	{ "STOP", SHMR_REQ_STOP, 0, 0 },
	{ "ROUTE", SHMR_REQ_ROUTE, 2, 2 },
	{ "ADD", SHMR_REQ_ADD, 4, 4 + SHMR_CONF_ARGS_MAX },
	{ "REMOVE", SHMR_REQ_REMOVE, 2, 2 },
	{ "DISABLE", SHMR_REQ_DISABLE, 2, 2 },
	{ "ENABLE", SHMR_REQ_ENABLE, 2, 2 },
	{ "REPLACE", SHMR_REQ_REPLACE, 3, 3 + SHMR_CONF_ARGS_MAX },
	{ "RESPAWN", SHMR_REQ_RESPAWN, 2, 2 },
	{ "DLQ_LIST", SHMR_REQ_DLQ_LIST, 1, 2 },
	{ "DLQ_REPLAY", SHMR_REQ_DLQ_REPLAY, 1, 1 },
	{ "DRAIN", SHMR_REQ_DRAIN, 2, 2 },
	{ "ROUTEES", SHMR_REQ_ROUTEES, 1, 1 },
	{ "ROUTEE_ADD", SHMR_REQ_ROUTEE_ADD, 2, 2 },
	{ "ROUTEE_REMOVE", SHMR_REQ_ROUTEE_REMOVE, 2, 2 },
	{ "POOL_ADJUST", SHMR_REQ_POOL_ADJUST, 2, 2 },
	{ "KILL", SHMR_REQ_KILL, 1, 1 },
	{ "POISON", SHMR_REQ_POISON, 1, 1 },
	{ "RETIRE", SHMR_REQ_RETIRE, 2, 2 },
	{ "METRICS", SHMR_REQ_METRICS, 0, 1 },
};

int shmr_ctl_name_valid(const char *s)
{
	return shmr_proto_name_ok(s);
}

/* A word: [p, p + n).  Plain decimal, no sign, no leading zeros beyond
 * "0", at most UINT32_MAX. */
static int parse_u32(const char *p, size_t n, uint32_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 10 || (n > 1 && p[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_name(const char *p, size_t n, char out[SHMR_NAME_MAX])
{
	char tmp[SHMR_NAME_MAX];

	if (n == 0 || n >= SHMR_NAME_MAX)
		return -1;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	if (!shmr_ctl_name_valid(tmp))
		return -1;
	memset(out, 0, SHMR_NAME_MAX);
	memcpy(out, tmp, n + 1);
	return 0;
}

static int parse_pid(const char *ps, size_t pn, const char *gs, size_t gn,
		     struct shmr_pid *out, const char **why)
{
	if (parse_u32(ps, pn, &out->slot) < 0 ||
	    parse_u32(gs, gn, &out->gen) < 0) {
		*why = "bad number";
		return -SHMR_E_PROTO;
	}
	if (out->slot >= SHMR_MAX_ENDPOINTS || out->gen == 0) {
		*why = "no such endpoint";
		return -SHMR_E_NO_ENDPOINT;
	}
	return 0;
}

/* A cpu list word: "-" (the control plane picks) or a valid list. */
static int parse_cpus(const char *p, size_t n, char out[SHMR_CONF_CPUS_MAX])
{
	hwloc_bitmap_t set;
	int rc;

	if (n == 1 && p[0] == '-') {
		out[0] = '\0';
		return 0;
	}
	if (n >= SHMR_CONF_CPUS_MAX)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	set = hwloc_bitmap_alloc();
	if (!set)
		return -1;
	rc = shmr_ctl_cpus_parse(out, set);
	hwloc_bitmap_free(set);
	return rc < 0 ? -1 : 0;
}

/* PROGRAM [ARG...] from words w[0..n). */
static int parse_program(const char *const *w, const size_t *wl, unsigned n,
			 struct shmr_conf_route *spec, const char **why)
{
	if (n == 0 || n - 1 > SHMR_CONF_ARGS_MAX) {
		*why = "wrong number of arguments";
		return -SHMR_E_PROTO;
	}
	if (wl[0] >= SHMR_CONF_PATH_MAX) {
		*why = "program path too long";
		return -SHMR_E_PROTO;
	}
	memcpy(spec->program, w[0], wl[0]);
	spec->program[wl[0]] = '\0';
	spec->nargs = n - 1;
	for (unsigned i = 1; i < n; i++) {
		if (wl[i] >= SHMR_CONF_ARG_MAX) {
			*why = "argument too long";
			return -SHMR_E_PROTO;
		}
		memcpy(spec->args[i - 1], w[i], wl[i]);
		spec->args[i - 1][wl[i]] = '\0';
	}
	return 0;
}

/* "+N" or "-N", N decimal, |N| <= SHMR_MAX_ROUTES. */
static int parse_delta(const char *w, size_t n, int32_t *out)
{
	uint32_t v;

	if (n < 2 || (w[0] != '+' && w[0] != '-') ||
	    parse_u32(w + 1, n - 1, &v) < 0 || v > SHMR_MAX_ROUTES)
		return -1;
	*out = w[0] == '-' ? -(int32_t)v : (int32_t)v;
	return 0;
}

int shmr_ctl_req_parse(const char *buf, size_t len, struct shmr_ctl_req *out,
		       const char **why)
{
	const char *w[MAX_WORDS];
	size_t wl[MAX_WORDS];
	unsigned nw = 0;
	const struct verb_info *vi = NULL;
	size_t i, start;
	const char *dummy;

	if (!why)
		why = &dummy;
	memset(out, 0, sizeof(*out));
	if (len > SHMR_CTL_REQ_MAX) {
		*why = "request too long";
		return -SHMR_E_TOO_BIG;
	}
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 0) {
		*why = "empty request";
		return -SHMR_E_PROTO;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)buf[i] < 0x20 ||
		    (unsigned char)buf[i] > 0x7e) {
			*why = "bad byte in request";
			return -SHMR_E_PROTO;
		}
	}
	/* Split on single spaces; an empty word (leading, trailing or
	 * doubled space) is malformed. */
	start = 0;
	for (i = 0; i <= len; i++) {
		if (i < len && buf[i] != ' ')
			continue;
		if (i == start) {
			*why = "empty word in request";
			return -SHMR_E_PROTO;
		}
		if (nw == MAX_WORDS) {
			*why = "too many words";
			return -SHMR_E_PROTO;
		}
		w[nw] = buf + start;
		wl[nw++] = i - start;
		start = i + 1;
	}
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strlen(verbs[i].word) == wl[0] &&
		    memcmp(verbs[i].word, w[0], wl[0]) == 0) {
			vi = &verbs[i];
			break;
		}
	}
	if (!vi) {
		*why = "unknown request";
		return -SHMR_E_PROTO;
	}
	if (nw - 1 < vi->min_args || nw - 1 > vi->max_args) {
		*why = "wrong number of arguments";
		return -SHMR_E_PROTO;
	}
	out->verb = vi->verb;
	switch (vi->verb) {
	case SHMR_REQ_POOL_ADJUST:
		if (parse_name(w[1], wl[1], out->name) < 0) {
			*why = "bad name";
			return -SHMR_E_NAME;
		}
		if (parse_delta(w[2], wl[2], &out->delta) < 0) {
			*why = "bad pool size change (+N or -N)";
			return -SHMR_E_PROTO;
		}
		break;
	case SHMR_REQ_ATTACH:
		if (parse_u32(w[1], wl[1], &out->version) < 0) {
			*why = "bad number";
			return -SHMR_E_PROTO;
		}
		if (out->version != SHMR_LAYOUT_VERSION) {
			*why = "layout version mismatch";
			return -SHMR_E_VERSION;
		}
		break;
	case SHMR_REQ_CLAIM:
	case SHMR_REQ_CLOSE:
	case SHMR_REQ_RETIRE:
		return parse_pid(w[1], wl[1], w[2], wl[2], &out->pid, why);
	case SHMR_REQ_REGISTER:
	case SHMR_REQ_UNREGISTER:
		if (parse_name(w[1], wl[1], out->name) < 0) {
			*why = "bad name";
			return -SHMR_E_NAME;
		}
		return parse_pid(w[2], wl[2], w[3], wl[3], &out->pid, why);
	case SHMR_REQ_METRICS:
		/* "fd": the asker takes an answer too large for one packet
		 * as a sealed memfd (metrics.h). */
		if (nw == 2) {
			if (wl[1] != 2 || memcmp(w[1], "fd", 2) != 0) {
				*why = "unknown option";
				return -SHMR_E_PROTO;
			}
			out->fd_ok = 1;
		}
		break;
	case SHMR_REQ_INSPECT:
		/* Options, each once: "json", "from=N" (a part: items from
		 * N on, as many as fit). */
		for (unsigned k = 2; k < nw; k++) {
			if (wl[k] == 4 && memcmp(w[k], "json", 4) == 0 &&
			    !out->json) {
				out->json = 1;
			} else if (wl[k] > 5 && memcmp(w[k], "from=", 5) == 0 &&
				   !out->paged &&
				   parse_u32(w[k] + 5, wl[k] - 5,
					     &out->from) == 0) {
				out->paged = 1;
			} else {
				*why = "unknown option";
				return -SHMR_E_PROTO;
			}
		}
		/* fallthrough */
	case SHMR_REQ_DLQ_LIST:
		/* "from=N": a part, the records from index N on (INSPECT
		 * comes here from above, its options read). */
		if (out->verb == SHMR_REQ_DLQ_LIST && nw == 3) {
			if (wl[2] > 5 && memcmp(w[2], "from=", 5) == 0 &&
			    parse_u32(w[2] + 5, wl[2] - 5, &out->from) == 0) {
				out->paged = 1;
			} else {
				*why = "unknown option";
				return -SHMR_E_PROTO;
			}
		}
		/* fallthrough */
	case SHMR_REQ_ROUTEES:
	case SHMR_REQ_KILL:
	case SHMR_REQ_POISON:
	case SHMR_REQ_ROUTES:
	case SHMR_REQ_DLQ_REPLAY:
		if (parse_name(w[1], wl[1], out->name) < 0) {
			*why = "bad name";
			return -SHMR_E_NAME;
		}
		break;
	case SHMR_REQ_ROUTE:
	case SHMR_REQ_ADD:
	case SHMR_REQ_REMOVE:
	case SHMR_REQ_ROUTEE_ADD:
	case SHMR_REQ_ROUTEE_REMOVE:
	case SHMR_REQ_DISABLE:
	case SHMR_REQ_DRAIN:
	case SHMR_REQ_ENABLE:
	case SHMR_REQ_REPLACE:
	case SHMR_REQ_RESPAWN:
		if (parse_name(w[1], wl[1], out->name) < 0 ||
		    parse_name(w[2], wl[2], out->route) < 0) {
			*why = "bad name";
			return -SHMR_E_NAME;
		}
		memcpy(out->spec.name, out->route, SHMR_NAME_MAX);
		if (vi->verb == SHMR_REQ_ADD) {
			if (parse_cpus(w[3], wl[3], out->spec.cpus) < 0) {
				*why = "bad cpu list";
				return -SHMR_E_PROTO;
			}
			return parse_program(w + 4, wl + 4, nw - 4, &out->spec,
					     why);
		}
		if (vi->verb == SHMR_REQ_REPLACE)
			return parse_program(w + 3, wl + 3, nw - 3, &out->spec,
					     why);
		break;
	default:
		break;
	}
	return 0;
}
