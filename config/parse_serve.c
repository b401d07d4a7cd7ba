/*
 * The top-level settings of how the appliance is seen and run from
 * outside: eal_args (passed through to the dataplane's EAL), log_level
 * (both daemons' threshold) and metrics_listen (the Prometheus listener's
 * address).  Each is checked here, so that --check refuses what the
 * daemons would refuse later, with the setting's line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

/*
 * EAL options the dataplane sets itself (main.c) or that would stop it
 * (--help and --version print and exit): an operator's copy would
 * contradict the domain's geometry, its runtime directory or its memory.
 */
static const char *const eal_owned[] = {
	"--lcores", "--file-prefix", "--no-shconf", "--no-huge",
	"--proc-type", "--main-lcore", "--master-lcore", "--in-memory",
	"--help", "--version", "--no-pci", NULL
};

/* One eal_args entry: "--option" or "--option=value", one word. */
static int eal_arg_elem(struct pctx *p, const config_setting_t *s,
			const char *field, const char *val, unsigned i,
			void *arg)
{
	struct shmr_config *c = arg;
	size_t klen = strcspn(val, "=");
	int rc;

	if (strncmp(val, "--", 2) != 0 || klen <= 2)
		return shmr_conf_fail(p, s, 0, field,
				      "\"%s\" is not an EAL long option (--NAME or --NAME=VALUE, one per entry)",
				      val);
	for (const char *ch = val; *ch; ch++)
		if (*ch == ' ' || *ch == '\t' || (unsigned char)*ch < 0x20)
			return shmr_conf_fail(p, s, 0, field,
					      "\"%s\" has a space or control character (one option per entry)",
					      val);
	for (const char *const *o = eal_owned; *o; o++)
		if (strlen(*o) == klen && strncmp(val, *o, klen) == 0)
			return shmr_conf_fail(p, s, 0, field,
					      "%s is set by shmr-dataplane itself (lcores, file prefix, memory: from the domain)",
					      *o);
	rc = shmr_conf_copy_str(p, s, field, val, c->eal_args[i],
				sizeof(c->eal_args[i]));
	if (rc == 0)
		c->neal_args = i + 1;
	return rc;
}

int shmr_conf_level_parse(const char *s)
{
	static const char *const names[] = { "", "error", "warning", "info",
					     "debug" };

	if (strcmp(s, "warn") == 0)
		return SHMR_CONF_LOG_WARNING;
	for (int i = SHMR_CONF_LOG_ERROR; i <= SHMR_CONF_LOG_DEBUG; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -EINVAL;
}

int shmr_conf_listen_parse(const char *s, char host[64], unsigned *port)
{
	const char *colon;
	char *end;
	unsigned long v;
	size_t hl;
	unsigned char addr[16];

	if (s[0] == '[') { /* "[::1]:9464" */
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		hl = (size_t)(close - s - 1);
		if (hl == 0 || hl >= 64)
			return -EINVAL;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET6, host, addr) != 1)
			return -EINVAL;
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
		if (hl == 0 || hl >= 64)
			return -EINVAL;
		memcpy(host, s, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET, host, addr) != 1)
			return -EINVAL;
	}
	if (colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

int shmr_conf_serve_parse(struct pctx *p, const config_setting_t *root,
			  struct shmr_config *c)
{
	config_setting_t *s;
	struct fpath f;
	char level[16], host[64];
	unsigned port;
	int rc;

	rc = shmr_conf_member(p, root, NULL, "eal_args", CONFIG_TYPE_ARRAY, &s);
	if (rc < 0)
		return rc;
	if (rc) {
		shmr_conf_fp_key(&f, NULL, "eal_args");
		rc = shmr_conf_str_list(p, s, &f, SHMR_CONF_EAL_ARGS_MAX,
					"EAL arguments", eal_arg_elem, c);
		if (rc < 0)
			return rc;
	}
	rc = shmr_conf_get_str(p, root, NULL, "log_level", level, sizeof(level),
			       &s);
	if (rc < 0)
		return rc;
	if (rc) {
		c->log_level = shmr_conf_level_parse(level);
		if (c->log_level < 0)
			return shmr_conf_fail(p, s, 0, "log_level",
					      "\"%s\" is not error, warning, info or debug",
					      level);
	}
	rc = shmr_conf_get_str(p, root, NULL, "metrics_listen",
			       c->metrics_listen, sizeof(c->metrics_listen),
			       &s);
	if (rc < 0)
		return rc;
	if (rc && shmr_conf_listen_parse(c->metrics_listen, host, &port) < 0)
		return shmr_conf_fail(p, s, 0, "metrics_listen",
				      "\"%s\" is not ADDRESS:PORT (a numeric IPv4 address, or [IPv6], and a port 1 to 65535)",
				      c->metrics_listen);
	return 0;
}
