/*
 * The configuration loader: what an operator sees.  A good file gives the
 * structs the control plane acts on; a bad one gives exactly one line
 * "file:line: field: what is wrong", and these tests pin the line and the
 * field for every class of mistake.
 *
 * Built with SHMR_DEFAULT_CONF_PATH (config/default.conf) and
 * SHMR_CONFIG_EXAMPLES_DIR (config/examples) from the source tree.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_config.h"

/* A valid router on one line, to put the mistake under test elsewhere. */
#define ROUTER_OK \
	"{ name = \"r\"; behaviour = \"type\"; types = ( { type = 1; route = \"a\"; } ); }"

/* A loaded configuration and what it holds. */
static void conf_free(struct shmr_config *c)
{
	if (c)
		shmr_config_free(c);
	free(c);
}

static struct shmr_config *conf_new(void)
{
	struct shmr_config *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	return c;
}

/* Parse @p text as "t.conf": it must fail with -EINVAL and an error that
 * starts with @p prefix ("t.conf:LINE: field: ") and contains @p what. */
static void expect_err(const char *text, const char *prefix, const char *what)
{
	struct shmr_config *c = conf_new();
	char err[SHMR_CONFIG_ERR_MAX] = "unset";
	int rc = shmr_config_load_string(text, "t.conf", c, err, sizeof(err));

	if (rc != -EINVAL || strncmp(err, prefix, strlen(prefix)) != 0 ||
	    (what && !strstr(err, what)) || strchr(err, '\n'))
		fail_msg("for the text:\n%s\n got rc %d, \"%s\"\n wanted -EINVAL, "
			 "\"%s...%s...\"", text, rc, err, prefix,
			 what ? what : "");
	conf_free(c);
}

static struct shmr_config *expect_ok(const char *text)
{
	struct shmr_config *c = conf_new();
	char err[512] = "";
	int rc = shmr_config_load_string(text, "t.conf", c, err, sizeof(err));

	if (rc != 0)
		fail_msg("for the text:\n%s\n got rc %d, \"%s\"", text, rc, err);
	return c;
}

/* A growing text buffer for generated configurations. */
struct text {
	char *s;
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	t->s = realloc(t->s, t->len + (size_t)n + 1);
	assert_non_null(t->s);
	memcpy(t->s + t->len, s, (size_t)n + 1);
	t->len += (size_t)n;
	free(s);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	struct text t = { 0 };
	char buf[4096];
	size_t n;

	assert_non_null(f);
	add(&t, "%s", "");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		add(&t, "%.*s", (int)n, buf);
	fclose(f);
	return t.s;
}

/* ---- the default configuration ---------------------------------------- */

static void test_default_parses(void **state)
{
	static const char *const names[] = { "payments", "shipments", "reports" };
	struct shmr_config *c = conf_new();
	const struct shmr_conf_router *r;
	char err[512] = "";

	assert_int_equal(shmr_config_load_string(shmr_config_default_text(),
						 "<default>", c, err,
						 sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(c->source, "<default>");
	assert_string_equal(c->domain, "shmr-demo");
	assert_string_equal(c->run_dir, "/run/shmr");
	assert_int_equal(c->slot_size, SHMR_SLOT_DEFAULT);
	assert_int_equal(c->lane_size, SHMR_LANE_DEFAULT);
	assert_int_equal(c->lcores, 1);
	assert_int_equal(c->max_endpoints, SHMR_ENDPOINTS_DEFAULT);
	assert_int_equal(c->max_names, SHMR_NAMES_DEFAULT);
	assert_int_equal(c->max_types, SHMR_TYPES_DEFAULT);
	assert_int_equal(c->poll_mode, SHMR_POLL_ADAPTIVE);
	assert_string_equal(c->dataplane_cpus, "");
	assert_string_equal(c->socket_group, "");
	assert_int_equal(c->stop_grace_ms, 2000);
	assert_int_equal(c->restart_backoff_max_ms, 5000);
	assert_int_equal(c->routers[0].fail_when_full, 0);

	assert_int_equal(c->nrouters, 1);
	r = &c->routers[0];
	assert_string_equal(r->name, "events");
	assert_int_equal(r->behaviour, SHMR_BEH_TYPE);
	assert_int_equal(r->nroutes, 3);
	assert_int_equal(r->ntypes, 3);
	for (unsigned i = 0; i < 3; i++) {
		const struct shmr_conf_route *rt = &r->routes[i];

		assert_int_equal(r->types[i].type, i + 1);
		assert_string_equal(r->types[i].route, names[i]);
		assert_string_equal(rt->name, names[i]);
		assert_string_equal(rt->program, "shmr-echo-worker");
		assert_int_equal(rt->nargs, 2);
		assert_string_equal(rt->args[0], "--tag");
		assert_string_equal(rt->args[1], names[i]);
		assert_string_equal(rt->cpus, "");
		assert_true(rt->line > r->line);
	}
	conf_free(c);
}

/* The embedded text is the file in the source tree, byte for byte. */
static void test_default_is_the_file(void **state)
{
	char *file = read_all(SHMR_DEFAULT_CONF_PATH);

	assert_string_equal(shmr_config_default_text(), file);
	free(file);
}

/* Settings left out take their documented defaults. */
static void test_defaults_of_omitted_settings(void **state)
{
	struct shmr_config *c = expect_ok("routers = ( " ROUTER_OK " );\n");

	assert_string_equal(c->source, "t.conf");
	assert_string_equal(c->domain, "shmr");
	assert_string_equal(c->run_dir, "/run/shmr");
	assert_int_equal(c->slot_size, 128);
	assert_int_equal(c->lane_size, 1024);
	assert_int_equal(c->lcores, 1);
	assert_int_equal(c->poll_mode, SHMR_POLL_ADAPTIVE);
	assert_int_equal(c->stop_grace_ms, 2000);
	assert_int_equal(c->nrouters, 1);
	assert_int_equal(c->routers[0].nroutes, 0); /* a free router */
	conf_free(c);
}

/* ---- syntax ------------------------------------------------------------- */

static void test_syntax_error(void **state)
{
	expect_err("domain = \"a\";\n"
		   "slot_size 128;\n"
		   "lane_size = 1024;\n",
		   "t.conf:2: syntax: ", "syntax error");
	expect_err("domain = \"a\";\n"
		   "domain = \"b\";\n",
		   "t.conf:2: syntax: ", "duplicate setting name");
	expect_err("routers = (\n"
		   "  { name = \"unterminated; }\n",
		   "t.conf:", "syntax: ");
}

/* ---- unknown settings and wrong types ----------------------------------- */

static void test_unknown_keys(void **state)
{
	expect_err("domain = \"a\";\n"
		   "dataplane_cpu = \"1\";\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: dataplane_cpu: unknown setting", "dataplane_cpus");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    route = ( );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:4: routers.[0].route: unknown setting", "routes");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = (\n"
		   "      { name = \"a\"; program = \"w\"; },\n"
		   "      { name = \"b\"; program = \"w\";\n"
		   "        cpu = \"0\"; }\n"
		   "    );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:7: routers.[0].routes.[1].cpu: unknown setting",
		   "cpus");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; },\n"
		   "              { type = 2; rout = \"b\"; } );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:4: routers.[0].types.[1].rout: unknown setting", NULL);
	/* The list names every setting the group may hold, the last one
	 * too: the top level's is the longest (it was cut at 255 bytes). */
	expect_err("domain = \"a\";\n"
		   "bogus = 1;\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: bogus: unknown setting (expected one of: domain, "
		   "run_dir, ",
		   "eal_args, log_level, metrics_listen, arena)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\"; bogus = 1;\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:2: routers.[0].bogus: unknown setting (expected one "
		   "of: name, ",
		   ")");
}

static void test_wrong_types(void **state)
{
	expect_err("slot_size = \"128\";\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: slot_size: expected an integer, found a string",
		   NULL);
	expect_err("\n"
		   "domain = 5;\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: domain: expected a string", NULL);
	expect_err("lcores = 1.5;\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: lcores: expected an integer, found a float", NULL);
	expect_err("routers = { name = \"r\"; };\n",
		   "t.conf:1: routers: expected a list", NULL);
	expect_err("routers = ( \"r\" );\n",
		   "t.conf:1: routers.[0]: expected a group", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = ( { name = \"a\"; program = \"w\";\n"
		   "                 args = \"--tag a\"; } );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:5: routers.[0].routes.[0].args: expected an array", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = ( { name = \"a\"; program = \"w\";\n"
		   "                 args = ( \"--n\", 5 ); } );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:5: routers.[0].routes.[0].args.[1]: expected a string",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = \"1\"; route = \"a\"; } );\n"
		   "  }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types.[0].type: expected an integer",
		   NULL);
}

/* ---- names -------------------------------------------------------------- */

static void test_bad_names(void **state)
{
	expect_err("domain = \"\";\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: domain: empty name", NULL);
	expect_err("domain = \"a/b\";\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: domain: ", "character outside");
	/* A quoted value never splits the error over two lines. */
	expect_err("domain = \"a\\nb\";\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: domain: name \"a?b\" has a character outside", NULL);
	expect_err("domain = \"0123456789012345678901234567890123\";\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: domain: ", "too long");
	expect_err("routers = (\n"
		   "  { behaviour = \"type\";\n"
		   "    name = \"my router\";\n"
		   "    types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].name: name \"my router\" has a character outside",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = (\n"
		   "      { name = \"\"; program = \"w\"; }\n"
		   "    ); }\n"
		   ");\n",
		   "t.conf:5: routers.[0].routes.[0].name: empty name", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    routes = ( { name = \"a\"; program = \"w\"; } );\n"
		   "    types = ( { type = 1; route = \"a\"; },\n"
		   "              { type = 2; route = \"\"; } ); }\n"
		   ");\n",
		   "t.conf:5: routers.[0].types.[1].route: empty name", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\";\n"
		   "    hash = [ \"a\",\n"
		   "             \"b c\" ]; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].hash.[1]: name \"b c\" has a character outside",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = (\n"
		   "      { program = \"w\"; }\n"
		   "    ); }\n"
		   ");\n",
		   "t.conf:5: routers.[0].routes.[0].name: required setting is missing",
		   NULL);
}

static void test_duplicates(void **state)
{
	expect_err("routers = (\n"
		   "  { name = \"events\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"payments\"; } );\n"
		   "    routes = (\n"
		   "      { name = \"payments\"; program = \"w\"; },\n"
		   "      { name = \"payments\"; program = \"w\"; }\n"
		   "    ); }\n"
		   ");\n",
		   "t.conf:6: routers.[0].routes.[1].name: duplicate route name \"payments\"",
		   "line 5");
	expect_err("routers = (\n"
		   "  " ROUTER_OK ",\n"
		   "  { name = \"s\"; behaviour = \"hash\"; hash = [ \"a\" ]; },\n"
		   "  { behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    name = \"r\"; }\n"
		   ");\n",
		   "t.conf:5: routers.[2].name: duplicate router name \"r\"",
		   "line 2");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = (\n"
		   "      { type = 7; route = \"a\"; },\n"
		   "      { type = 8; route = \"b\"; },\n"
		   "      { type = 7; route = \"c\"; }\n"
		   "    ); }\n"
		   ");\n",
		   "t.conf:6: routers.[0].types.[2].type: duplicate type 7",
		   "line 4");
}

/* What looks like a clash but is legal. */
static void test_legal_overlaps(void **state)
{
	struct shmr_config *c;

	/* A router named like another router's route; route names reused
	 * across routers; a type naming a registry name, not a route. */
	c = expect_ok("routers = (\n"
		      "  { name = \"a\"; behaviour = \"type\";\n"
		      "    types = ( { type = 1; route = \"b\"; },\n"
		      "              { type = 2; route = \"registered-elsewhere\"; } );\n"
		      "    routes = ( { name = \"b\"; program = \"w\"; } ); },\n"
		      "  { name = \"b\"; behaviour = \"hash\";\n"
		      "    hash = [ \"b\", \"b\", \"x\" ];\n"
		      "    routes = ( { name = \"b\"; program = \"w\"; } ); }\n"
		      ");\n");
	assert_int_equal(c->nrouters, 2);
	assert_string_equal(c->routers[0].types[1].route,
			    "registered-elsewhere");
	assert_int_equal(c->routers[1].nhash, 3);
	assert_int_equal(c->routers[0].line, 2);
	assert_int_equal(c->routers[1].line, 6);
	assert_int_equal(c->routers[1].routes[0].line, 8);
	conf_free(c);
}

/* ---- types and behaviours ----------------------------------------------- */

static void test_type_numbers(void **state)
{
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 0; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types.[0].type: 0 is out of range", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; },\n"
		   "              { type = -4; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:4: routers.[0].types.[1].type: -4 is out of range",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types.[0].type: required setting is missing",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types.[0].route: required setting is missing",
		   NULL);
	/* The largest type number is fine. */
	conf_free(expect_ok("routers = ( { name = \"r\"; behaviour = \"type\";\n"
		       "  types = ( { type = 4294967295L; route = \"a\"; } ); } );\n"));
}

static void test_behaviour_needs(void **state)
{
	expect_err("routers = (\n"
		   "  { name = \"r\";\n"
		   "    behaviour = \"round-robbin\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].behaviour: unknown behaviour \"round-robbin\"",
		   "\"smallest-mailbox\", \"broadcast\", \"consistent-hash\", "
		   "\"scatter-gather\", \"tail-chopping\" or \"balancing\"");
	expect_err("routers = (\n"
		   "  { name = \"r\"; }\n"
		   ");\n",
		   "t.conf:2: routers.[0].behaviour: required setting is missing",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\"; }\n"
		   ");\n",
		   "t.conf:2: routers.[0].types: required setting is missing",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types: ", "at least one");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; }\n"
		   ");\n",
		   "t.conf:2: routers.[0].hash: required setting is missing", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\";\n"
		   "    hash = [ ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].hash: ", "at least one");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"dso\";\n"
		   "    dso_arg = \"x\"; }\n"
		   ");\n",
		   "t.conf:2: routers.[0].dso: required setting is missing", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"dso\";\n"
		   "    dso = \"\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].dso: empty path", NULL);
	/* A setting of another behaviour is a mistake, not ignored. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types: not used by behaviour \"hash\"",
		   NULL);
}

/* ---- the routing logics -------------------------------------------------- */

static const struct {
	const char *name;
	uint32_t behaviour;
} logic_names[] = {
	{ "round-robin", SHMR_BEH_ROUND_ROBIN },
	{ "random", SHMR_BEH_RANDOM },
	{ "smallest-mailbox", SHMR_BEH_SMALLEST_MAILBOX },
	{ "broadcast", SHMR_BEH_BROADCAST },
	{ "consistent-hash", SHMR_BEH_CONSISTENT_HASH },
};

/* Each logic by name; without routees it routes over its own routes
 * (nhash 0); with them, over the names given, in order. */
static void test_logics_parse(void **state)
{
	struct shmr_config *c;
	struct text t;
	(void)state;

	for (unsigned i = 0; i < 5; i++) {
		int chash = logic_names[i].behaviour == SHMR_BEH_CONSISTENT_HASH;

		t = (struct text){ 0 };
		add(&t, "routers = (\n"
			"  { name = \"own\"; behaviour = \"%s\";\n"
			"    routes = ( { name = \"a\"; program = \"w\"; },\n"
			"               { name = \"b\"; program = \"w\"; } ); },\n"
			"  { name = \"group\"; behaviour = \"%s\";\n"
			"    routees = [ \"b\", \"reg:1\", \"a\" ];\n"
			"    routes = ( { name = \"a\"; program = \"w\"; } ); }\n"
			");\n",
		    logic_names[i].name, logic_names[i].name);
		c = expect_ok(t.s);
		free(t.s);
		assert_int_equal(c->nrouters, 2);
		assert_int_equal(c->routers[0].behaviour,
				 logic_names[i].behaviour);
		assert_int_equal(c->routers[0].nhash, 0);
		assert_int_equal(c->routers[0].nroutes, 2);
		assert_int_equal(c->routers[0].vnodes,
				 chash ? SHMR_CHASH_VNODES_DEFAULT : 0);
		assert_int_equal(c->routers[1].behaviour,
				 logic_names[i].behaviour);
		assert_int_equal(c->routers[1].nhash, 3);
		assert_string_equal(c->routers[1].hash[0], "b");
		assert_string_equal(c->routers[1].hash[1], "reg:1");
		assert_string_equal(c->routers[1].hash[2], "a");
		conf_free(c);
	}

	/* virtual_nodes: honoured, at both ends of its range. */
	c = expect_ok("routers = (\n"
		      "  { name = \"one\"; behaviour = \"consistent-hash\";\n"
		      "    virtual_nodes = 1; },\n"
		      "  { name = \"most\"; behaviour = \"consistent-hash\";\n"
		      "    virtual_nodes = 1024; routees = [ \"x\" ]; }\n"
		      ");\n");
	assert_int_equal(c->routers[0].vnodes, 1);
	assert_int_equal(c->routers[0].nroutes, 0);
	assert_int_equal(c->routers[1].vnodes, 1024);
	conf_free(c);

	/* Calls by type beside sends by a logic; the admin-path settings are
	 * every router's. */
	c = expect_ok("routers = (\n"
		      "  { name = \"r\"; behaviour = \"round-robin\";\n"
		      "    call_types = ( { type = 1; route = \"view\"; } );\n"
		      "    mailbox_full = \"fail\"; }\n"
		      ");\n");
	assert_int_equal(c->routers[0].ncall_types, 1);
	assert_int_equal(c->routers[0].fail_when_full, 1);
	conf_free(c);
}

/* Every bad value of the logics' settings, and every setting in the wrong
 * behaviour, gives one line naming the file, line and field. */
static void test_logics_errors(void **state)
{
	struct text t = { 0 };
	(void)state;

	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"consistent-hash\";\n"
		   "    virtual_nodes = 0; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].virtual_nodes: ",
		   "0 is out of range (1 to 1024)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"consistent-hash\";\n"
		   "    virtual_nodes = 1025; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].virtual_nodes: ",
		   "1025 is out of range (1 to 1024)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"consistent-hash\";\n"
		   "    virtual_nodes = -3; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].virtual_nodes: ", "out of range");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"consistent-hash\";\n"
		   "    virtual_nodes = \"10\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].virtual_nodes: expected an integer",
		   NULL);
	/* virtual_nodes belongs to consistent-hash alone. */
	for (unsigned i = 0; i < 4; i++) {
		char want[128];

		t = (struct text){ 0 };
		add(&t, "routers = (\n"
			"  { name = \"r\"; behaviour = \"%s\";\n"
			"    virtual_nodes = 10; }\n"
			");\n",
		    logic_names[i].name);
		snprintf(want, sizeof(want),
			 "t.conf:3: routers.[0].virtual_nodes: not used by "
			 "behaviour \"%s\"",
			 logic_names[i].name);
		expect_err(t.s, want, NULL);
		free(t.s);
	}
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    virtual_nodes = 10; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].virtual_nodes: not used by behaviour \"hash\"",
		   NULL);

	/* routees */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"round-robin\";\n"
		   "    routees = [ ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees: ", "at least one name");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"broadcast\";\n"
		   "    routees = [ \"a\",\n"
		   "                \"a\" ]; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].routees.[1]: duplicate routee name \"a\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"random\";\n"
		   "    routees = [ \"a b\" ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees.[0]: ", "outside");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"random\";\n"
		   "    routees = [ \"\" ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees.[0]: empty name", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"smallest-mailbox\";\n"
		   "    routees = ( \"a\", 7 ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees.[1]: expected a string", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"smallest-mailbox\";\n"
		   "    routees = \"a\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees: expected an array", NULL);
	/* One routee more than a router holds: the 33rd on line 36 (libconfig
	 * dates an array element by the token after it, so "]" stays on the
	 * element's line). */
	t = (struct text){ 0 };
	add(&t, "routers = (\n  { name = \"r\"; behaviour = \"round-robin\";\n"
		"    routees = [\n");
	for (unsigned i = 0; i <= SHMR_ROUTES_DEFAULT; i++)
		add(&t, "      \"w%u\"%s\n", i,
		    i < SHMR_ROUTES_DEFAULT ? "," : " ]; }");
	add(&t, ");\n");
	expect_err(t.s, "t.conf:36: routers.[0].routees.[32]: 33 routees, "
		   "more than max_routes (32)", NULL);
	free(t.s);
	/* routees belongs to the logics. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routees = [ \"a\" ]; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].routees: not used by behaviour \"type\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    routees = [ \"a\" ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees: not used by behaviour \"hash\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"dso\"; dso = \"/x.so\";\n"
		   "    routees = [ \"a\" ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].routees: not used by behaviour \"dso\"",
		   NULL);
	/* Another behaviour's settings in a logic. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"round-robin\";\n"
		   "    hash = [ \"a\" ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].hash: not used by behaviour \"round-robin\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"broadcast\";\n"
		   "    types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types: not used by behaviour \"broadcast\"",
		   NULL);
	/* A logic may name a dso (test_dso_defaults); its argument alone
	 * is a mistake. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"consistent-hash\";\n"
		   "    dso_arg = \"x\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].dso_arg: needs dso = ", NULL);
	/* The names are exact. */
	expect_err("routers = (\n"
		   "  { name = \"r\";\n"
		   "    behaviour = \"Round-Robin\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].behaviour: unknown behaviour \"Round-Robin\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\";\n"
		   "    behaviour = \"consistent_hash\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].behaviour: unknown behaviour \"consistent_hash\"",
		   NULL);
}

/* call_types: calls by type beside sends by key (hash) or by the send map
 * (type); refused by a dso router, checked like types. */
static void test_call_types(void **state)
{
	struct shmr_config *c;
	const struct shmr_conf_router *r;
	(void)state;

	c = expect_ok("routers = (\n"
		      "  { name = \"orders\"; behaviour = \"hash\";\n"
		      "    hash = [ \"w:0\", \"w:1\" ];\n"
		      "    call_types = ( { type = 1; route = \"view\"; },\n"
		      "                   { type = 2; route = \"stats\"; } ); },\n"
		      "  { name = \"t\"; behaviour = \"type\";\n"
		      "    types = ( { type = 1; route = \"a\"; } );\n"
		      "    call_types = ( { type = 1; route = \"b\"; } ); },\n"
		      "  { name = \"plain\"; behaviour = \"type\";\n"
		      "    types = ( { type = 1; route = \"a\"; } ); }\n"
		      ");\n");
	r = &c->routers[0];
	assert_int_equal(r->nhash, 2);
	assert_int_equal(r->ncall_types, 2);
	assert_int_equal(r->call_types[0].type, 1);
	assert_string_equal(r->call_types[0].route, "view");
	assert_int_equal(r->call_types[1].type, 2);
	assert_string_equal(r->call_types[1].route, "stats");
	r = &c->routers[1];
	assert_int_equal(r->ntypes, 1);
	assert_int_equal(r->ncall_types, 1);
	assert_string_equal(r->types[0].route, "a");
	assert_string_equal(r->call_types[0].route, "b");
	assert_int_equal(c->routers[2].ncall_types, 0);
	conf_free(c);

	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"dso\"; dso = \"/x.so\";\n"
		   "    call_types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].call_types: not used by behaviour \"dso\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    call_types = ( ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].call_types: ", "at least one");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    call_types = ( { type = 4; route = \"a\"; },\n"
		   "                   { type = 4; route = \"b\"; } ); }\n"
		   ");\n",
		   "t.conf:4: routers.[0].call_types.[1].type: duplicate type 4",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    call_types = ( { type = 0; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].call_types.[0].type: ", "out of range");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    call_types = ( { type = 1; route = \"a b\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].call_types.[0].route: ", "outside");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    call_types = [ 1, 2 ]; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].call_types: expected a list", NULL);
}

/* Defaults as Pekko's: a scatter-gather or tail-chopping router that
 * leaves its timing out waits 5000 ms for a reply, and tail-chopping tries
 * the next routee after 10 ms (never later than within_ms). */
static void test_timing_defaults(void **state)
{
	/* Each router's timing as written, and what it comes to. */
	static const struct {
		const char *beh, *timing;
		uint32_t within, interval;
	} want[] = {
		{ "scatter-gather", "", 5000, 0 },
		{ "tail-chopping", "", 5000, 10 },
		{ "tail-chopping", "within_ms = 300;", 300, 10 },
		{ "tail-chopping", "within_ms = 4;", 4, 4 },
		{ "tail-chopping", "interval_ms = 250;", 5000, 250 },
		{ "round-robin", "", 0, 0 },
	};
	char text[1024] = "routers = (\n";
	struct shmr_config *c;
	(void)state;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s{ name = \"r%zu\"; behaviour = \"%s\"; %s"
			 " routees = [ \"a\" ]; }\n",
			 i ? "," : "", i, want[i].beh, want[i].timing);
	strcat(text, ");\n");
	c = expect_ok(text);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (c->routers[i].within_ms != want[i].within ||
		    c->routers[i].interval_ms != want[i].interval)
			fail_msg("%s with \"%s\": within_ms %u, interval_ms "
				 "%u; wanted %u, %u",
				 want[i].beh, want[i].timing,
				 c->routers[i].within_ms,
				 c->routers[i].interval_ms, want[i].within,
				 want[i].interval);
	}
	conf_free(c);

	/* An interval past the default within_ms names the default. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"tail-chopping\";\n"
		   "    interval_ms = 5001; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].interval_ms: ",
		   "5001 is longer than within_ms (5000, the default)");
}

/* Scatter-gather and tail-chopping: within_ms (and interval_ms) in
 * range; balancing: a pool only.  Each mistake is one line naming
 * the file, line and field. */
static void test_collect_and_balancing(void **state)
{
	struct shmr_config *c;
	(void)state;

	c = expect_ok("routers = (\n"
		      "  { name = \"sg\"; behaviour = \"scatter-gather\";\n"
		      "    within_ms = 250; routees = [ \"a\", \"b\" ]; },\n"
		      "  { name = \"tc\"; behaviour = \"tail-chopping\";\n"
		      "    within_ms = 3600000; interval_ms = 3600000;\n"
		      "    routes = ( { name = \"x\"; program = \"w\"; } ); },\n"
		      "  { name = \"tc1\"; behaviour = \"tail-chopping\";\n"
		      "    within_ms = 1; interval_ms = 1; },\n"
		      "  { name = \"bal\"; behaviour = \"balancing\";\n"
		      "    pool = { size = 3; program = \"w\"; }; }\n"
		      ");\n");
	assert_int_equal(c->routers[0].behaviour, SHMR_BEH_SCATTER_GATHER);
	assert_int_equal(c->routers[0].within_ms, 250);
	assert_int_equal(c->routers[0].interval_ms, 0);
	assert_int_equal(c->routers[0].nhash, 2);
	assert_int_equal(c->routers[1].behaviour, SHMR_BEH_TAIL_CHOPPING);
	assert_int_equal(c->routers[1].within_ms, 3600000);
	assert_int_equal(c->routers[1].interval_ms, 3600000);
	assert_int_equal(c->routers[1].nroutes, 1);
	assert_int_equal(c->routers[2].within_ms, 1);
	assert_int_equal(c->routers[2].interval_ms, 1);
	assert_int_equal(c->routers[3].behaviour, SHMR_BEH_BALANCING);
	assert_int_equal(c->routers[3].nroutes, 3);
	assert_string_equal(c->routers[3].routes[2].name, "bal:2");
	assert_int_equal(c->routers[3].within_ms, 0);
	conf_free(c);

	/* within_ms (left out: Pekko's default, test_timing_defaults) */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"scatter-gather\";\n"
		   "    within_ms = 0; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].within_ms: ",
		   "0 is out of range (1 to 3600000)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"scatter-gather\";\n"
		   "    within_ms = 3600001; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].within_ms: ",
		   "3600001 is out of range (1 to 3600000)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"scatter-gather\";\n"
		   "    within_ms = \"1s\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].within_ms: expected an integer", NULL);
	/* interval_ms */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"tail-chopping\";\n"
		   "    within_ms = 100;\n"
		   "    interval_ms = 101; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].interval_ms: ",
		   "101 is longer than within_ms (100)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"tail-chopping\";\n"
		   "    within_ms = 100;\n"
		   "    interval_ms = 0; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].interval_ms: ",
		   "0 is out of range (1 to 100)");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"scatter-gather\";\n"
		   "    within_ms = 100;\n"
		   "    interval_ms = 10; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].interval_ms: not used by behaviour \"scatter-gather\"",
		   NULL);
	/* ... and neither belongs to another behaviour. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"round-robin\";\n"
		   "    within_ms = 100; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].within_ms: not used by behaviour \"round-robin\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"random\";\n"
		   "    interval_ms = 100; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].interval_ms: not used by behaviour \"random\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    within_ms = 100; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].within_ms: not used by behaviour \"type\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    interval_ms = 100; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].interval_ms: not used by behaviour \"hash\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"dso\"; dso = \"/x.so\";\n"
		   "    within_ms = 100; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].within_ms: not used by behaviour \"dso\"",
		   NULL);
	/* They route their calls themselves. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"scatter-gather\";\n"
		   "    within_ms = 100;\n"
		   "    call_types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:4: routers.[0].call_types: not used by behaviour \"scatter-gather\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"balancing\";\n"
		   "    pool = { size = 2; program = \"w\"; };\n"
		   "    call_types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:4: routers.[0].call_types: not used by behaviour \"balancing\"",
		   NULL);
	/* balancing: a pool, never a group. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"balancing\";\n"
		   "    routes = ( { name = \"a\"; program = \"w\"; } ); }\n"
		   ");\n",
		   "t.conf:2: routers.[0].pool: ", "needs a pool");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"balancing\";\n"
		   "    pool = { size = 2; program = \"w\"; };\n"
		   "    routees = [ \"a\" ]; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].routees: not used by behaviour \"balancing\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"balancing\";\n"
		   "    pool = { size = 2; program = \"w\"; };\n"
		   "    within_ms = 10; }\n"
		   ");\n",
		   "t.conf:4: routers.[0].within_ms: not used by behaviour \"balancing\"",
		   NULL);
}

/* A pool with a resizer starts within its bounds: size 0 is allowed (an
 * empty pool with lower_bound 0), and a size below lower_bound is raised
 * to it (the default lower_bound is 1). */
static void test_resizer_pool_starts_within_bounds(void **state)
{
	static const struct {
		const char *pool_size, *resizer;
		unsigned size, nroutes;
		int empty;
	} want[] = {
		{ "0", "resizer = { lower_bound = 0; }", 0, 0, 1 },
		{ "0", "resizer = { upper_bound = 4; }", 1, 1, 0 },
		{ "1", "optimal_resizer = { lower_bound = 3; }", 3, 3, 0 },
		{ "5", "resizer = { lower_bound = 2; }", 5, 5, 0 },
	};
	char text[512];
	(void)state;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct shmr_config *c;

		snprintf(text, sizeof(text),
			 "routers = ( { name = \"w\"; behaviour = \"random\";\n"
			 "  pool = { size = %s; program = \"p\"; }; %s; } );\n",
			 want[i].pool_size, want[i].resizer);
		c = expect_ok(text);
		if (c->routers[0].pool.size != want[i].size ||
		    c->routers[0].nroutes != want[i].nroutes ||
		    c->routers[0].pool.empty != want[i].empty)
			fail_msg("size %s, %s: pool.size %u, nroutes %u, "
				 "empty %d",
				 want[i].pool_size, want[i].resizer,
				 c->routers[0].pool.size, c->routers[0].nroutes,
				 c->routers[0].pool.empty);
		conf_free(c);
	}
}

/* keep_when_empty: a boolean, for a group only. */
static void test_keep_when_empty(void **state)
{
	static const char *const groups[] = { "true", "false" };
	char text[256];
	(void)state;

	expect_err("routers = ( { name = \"g\"; behaviour = \"random\";\n"
		   "  routees = [ \"a\" ]; keep_when_empty = 1; } );\n",
		   "t.conf:2: routers.[0].keep_when_empty: expected a boolean",
		   NULL);
	expect_err("routers = ( { name = \"p\"; behaviour = \"random\";\n"
		   "  pool = { size = 1; program = \"w\"; };\n"
		   "  keep_when_empty = true; } );\n",
		   "t.conf:3: routers.[0].keep_when_empty: only for a group",
		   NULL);
	for (int k = 0; k < 2; k++) {
		struct shmr_config *g;

		snprintf(text, sizeof(text),
			 "routers = ( { name = \"g\"; behaviour = \"random\";"
			 " routees = [ \"a\" ]; keep_when_empty = %s; } );\n",
			 groups[k]);
		g = expect_ok(text);
		assert_int_equal(g->routers[0].keep_when_empty, k == 0);
		conf_free(g);
	}
}

/* A balancing pool with a resizer is refused, naming the resizer and why
 * (Pekko's BalancingPool turns its resizer off), for either resizer. */
static void test_balancing_pool_resizer_refused(void **state)
{
	static const char *const kind[] = { "resizer", "optimal_resizer" };
	char text[512], prefix[64];
	(void)state;

	for (unsigned k = 0; k < 2; k++) {
		snprintf(text, sizeof(text),
			 "routers = (\n"
			 "  { name = \"r\"; behaviour = \"balancing\";\n"
			 "    pool = { size = 2; program = \"w\"; };\n"
			 "    %s = { upper_bound = 4; }; }\n"
			 ");\n",
			 kind[k]);
		snprintf(prefix, sizeof(prefix), "t.conf:4: routers.[0].%s: ",
			 kind[k]);
		expect_err(text, prefix, "a balancing pool has no resizer");
	}
}

/* ---- routes ------------------------------------------------------------- */

/*
 * A behaviour shared object supplies defaults only: a router may leave out
 * its behaviour (the dso's logic), its pool's size (the dso's pool_size)
 * and consistent-hash's virtual_nodes (the dso's), and the parser records
 * that they are left out for the control plane to fill in; what the file
 * gives is kept.  A logic may name a dso (consistent-hash's key function).
 */
static void test_dso_defaults(void **state)
{
	struct shmr_config *c;
	const struct shmr_conf_router *r;
	unsigned bad = 99;

	(void)state;
	/* Only a dso and a pool with no size. */
	c = expect_ok("routers = (\n"
		      "  { name = \"k\"; dso = \"/x/key.so\"; dso_arg = \"a\";\n"
		      "    pool = { program = \"w\"; args = [ \"-v\" ]; };\n"
		      "    resizer = { upper_bound = 5; }; }\n"
		      ");\n");
	r = &c->routers[0];
	assert_int_equal(r->behaviour, SHMR_CONF_BEH_FROM_DSO);
	assert_string_equal(r->dso, "/x/key.so");
	assert_string_equal(r->dso_arg, "a");
	assert_int_equal(r->pool.size, 0);
	assert_int_equal(r->pool.size_from_dso, 1);
	assert_int_equal(r->pool.line, 3);
	assert_string_equal(r->pool.tmpl.program, "w");
	assert_int_equal(r->nroutes, 0);
	assert_int_equal(r->vnodes, 0);
	assert_int_equal(r->resizer.kind, SHMR_RESIZER_DEFAULT);
	/* Handlers default to the object only once it is known to be a
	 * "dso" router (the control plane's business). */
	assert_string_equal(r->handlers, "");
	/* What the control plane does with the object's pool_size: the
	 * parser's own expansion. */
	assert_int_equal(shmr_config_pool_expand(&c->routers[0], 3, &bad), 0);
	assert_int_equal(r->pool.size, 3);
	assert_int_equal(r->nroutes, 3);
	assert_string_equal(r->routes[0].name, "k:0");
	assert_string_equal(r->routes[2].name, "k:2");
	assert_string_equal(r->routes[2].program, "w");
	assert_string_equal(r->routes[2].args[0], "-v");
	assert_int_equal(r->routes[2].line, 3);
	assert_int_equal(shmr_config_pool_expand(&c->routers[0], 0, NULL),
			 -EINVAL);
	assert_int_equal(shmr_config_pool_expand(&c->routers[0],
						 SHMR_MAX_ROUTES + 1, NULL),
			 -EINVAL);
	conf_free(c);

	/* A name too long for "name:10" fails at index 10. */
	c = expect_ok("routers = (\n"
		      "  { name = \"abcdefghijklmnopqrstuvwxyz012\"; dso = \"/x.so\";\n"
		      "    pool = { program = \"w\"; }; }\n"
		      ");\n");
	assert_int_equal(shmr_config_pool_expand(&c->routers[0], 12, &bad),
			 -ENAMETOOLONG);
	assert_int_equal(bad, 10);
	assert_int_equal(c->routers[0].nroutes, 0);
	conf_free(c);

	/* The file wins: behaviour, size and virtual_nodes given. */
	c = expect_ok("routers = (\n"
		      "  { name = \"a\"; behaviour = \"round-robin\";\n"
		      "    dso = \"/x.so\";\n"
		      "    pool = { size = 2; program = \"w\"; }; },\n"
		      "  { name = \"b\"; behaviour = \"consistent-hash\";\n"
		      "    dso = \"/x.so\"; virtual_nodes = 7;\n"
		      "    routes = ( { name = \"x\"; program = \"w\"; } ); },\n"
		      "  { name = \"c\"; behaviour = \"consistent-hash\";\n"
		      "    dso = \"/x.so\";\n"
		      "    pool = { program = \"w\"; }; },\n"
		      "  { name = \"d\"; behaviour = \"consistent-hash\";\n"
		      "    routes = ( { name = \"x\"; program = \"w\"; } ); }\n"
		      ");\n");
	assert_int_equal(c->routers[0].behaviour, SHMR_BEH_ROUND_ROBIN);
	assert_int_equal(c->routers[0].pool.size, 2);
	assert_int_equal(c->routers[0].pool.size_from_dso, 0);
	assert_int_equal(c->routers[0].nroutes, 2);
	assert_string_equal(c->routers[0].routes[1].name, "a:1");
	assert_string_equal(c->routers[0].dso, "/x.so");
	assert_string_equal(c->routers[0].handlers, "");
	assert_int_equal(c->routers[1].vnodes, 7);
	/* Left out with a dso: 0 until the object is read; without one,
	 * the default at once. */
	assert_int_equal(c->routers[2].vnodes, 0);
	assert_int_equal(c->routers[2].pool.size_from_dso, 1);
	assert_int_equal(c->routers[3].vnodes, SHMR_CHASH_VNODES_DEFAULT);
	conf_free(c);

	/* A "dso" router as before: handlers default to its object. */
	c = expect_ok("routers = (\n"
		      "  { name = \"d\"; behaviour = \"dso\"; dso = \"/x.so\"; }\n"
		      ");\n");
	assert_int_equal(c->routers[0].behaviour, SHMR_BEH_DSO);
	assert_string_equal(c->routers[0].handlers, "/x.so");
	conf_free(c);

	assert_int_equal(shmr_config_logic_kind("consistent-hash"),
			 SHMR_BEH_CONSISTENT_HASH);
	assert_int_equal(shmr_config_logic_kind("balancing"),
			 SHMR_BEH_BALANCING);
	assert_int_equal(shmr_config_logic_kind("dso"), 0);
	assert_int_equal(shmr_config_logic_kind("Random"), 0);
	assert_int_equal(shmr_config_logic_kind(NULL), 0);

	/* Errors: each one line naming the field. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; dso_arg = \"x\"; }\n"
		   ");\n",
		   "t.conf:2: routers.[0].behaviour: required setting is missing",
		   "or a dso that names one");
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"random\";\n"
		   "    pool = { program = \"w\"; }; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].pool.size: required setting is missing",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; dso = \"/x.so\";\n"
		   "    types = ( { type = 1; route = \"a\"; } ); }\n"
		   ");\n",
		   "t.conf:3: routers.[0].types: not used by behaviour \"dso\"",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; dso = \"\"; }\n"
		   ");\n",
		   "t.conf:2: routers.[0].dso: empty path", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; dso = \"/x.so\";\n"
		   "    virtual_nodes = 0; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].virtual_nodes: 0 is out of range", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; dso = \"/x.so\"; within_ms = 10;\n"
		   "    interval_ms = 11; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].interval_ms: 11 is out of range", NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; dso = \"/x.so\";\n"
		   "    pool = { size = 0; program = \"w\"; }; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].pool.size: 0 needs a resizer", NULL);
	/* type, hash and dso routers name no pool, with a dso or not. */
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"dso\"; dso = \"/x.so\";\n"
		   "    pool = { program = \"w\"; }; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].pool: a pool needs a routing logic",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		   "    dso = \"/x.so\"; }\n"
		   ");\n",
		   "t.conf:3: routers.[0].dso: not used by behaviour \"hash\"",
		   NULL);
}

static void test_route_fields(void **state)
{
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = (\n"
		   "      { name = \"a\"; }\n"
		   "    ); }\n"
		   ");\n",
		   "t.conf:5: routers.[0].routes.[0].program: required setting is missing",
		   NULL);
	expect_err("routers = (\n"
		   "  { name = \"r\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"a\"; } );\n"
		   "    routes = (\n"
		   "      { name = \"a\";\n"
		   "        program = \"\"; }\n"
		   "    ); }\n"
		   ");\n",
		   "t.conf:6: routers.[0].routes.[0].program: empty program", NULL);
}

static void test_cpu_lists(void **state)
{
	static const char *const bad[] = {
		"a", "0-", "-1", "1,,2", "1,", "0 1", "3-1", "2000", "0-99999",
	};
	static const char *const good[] = { "", "0", "1", "0-1", "0,2-3,7" };
	char text[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "routers = (\n"
			 "  { name = \"r\"; behaviour = \"type\";\n"
			 "    types = ( { type = 1; route = \"a\"; } );\n"
			 "    routes = ( { name = \"a\"; program = \"w\";\n"
			 "                 cpus = \"%s\"; } ); }\n"
			 ");\n", bad[i]);
		expect_err(text, "t.conf:5: routers.[0].routes.[0].cpus: ",
			   "cpu list");
		snprintf(text, sizeof(text),
			 "routers = ( " ROUTER_OK " );\n"
			 "dataplane_cpus = \"%s\";\n", bad[i]);
		expect_err(text, "t.conf:2: dataplane_cpus: ", "cpu list");
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct shmr_config *c;

		snprintf(text, sizeof(text),
			 "dataplane_cpus = \"%s\";\n"
			 "routers = ( { name = \"r\"; behaviour = \"type\";\n"
			 "  types = ( { type = 1; route = \"a\"; } );\n"
			 "  routes = ( { name = \"a\"; program = \"w\"; cpus = \"%s\"; } ); } );\n",
			 good[i], good[i]);
		c = expect_ok(text);
		assert_string_equal(c->dataplane_cpus, good[i]);
		assert_string_equal(c->routers[0].routes[0].cpus, good[i]);
		conf_free(c);
	}
}

/* ---- top-level values --------------------------------------------------- */

static void test_geometry_and_values(void **state)
{
	expect_err("slot_size = 100;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: slot_size: ", "multiple of 8");
	expect_err("\nlane_size = 1000;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:2: lane_size: ", "power of two");
	expect_err("lcores = 33;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: lcores: ", "1 to 32");
	expect_err("lcores = -1;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: lcores: ", "out of range");
	/* The limits: max_endpoints from 16 to 16384 (default 1024),
	 * lcores up to 32; an error names the file and line. */
	expect_err("routers = ( " ROUTER_OK " );\n\nmax_endpoints = 16385;\n",
		   "t.conf:3: max_endpoints: max_endpoints must be from 16 to "
		   "16384", NULL);
	expect_err("max_endpoints = 15;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_endpoints: ", "from 16 to 16384");
	expect_err("max_endpoints = 0;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_endpoints: ", "from 16 to 16384");
	expect_err("max_endpoints = -1;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_endpoints: ", "out of range");
	/* max_names: the registry, 16 to 16384 (default 128). */
	expect_err("routers = ( " ROUTER_OK " );\n\nmax_names = 16385;\n",
		   "t.conf:3: max_names: max_names must be from 16 to 16384",
		   NULL);
	expect_err("max_names = 15;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_names: ", "from 16 to 16384");
	expect_err("max_names = 0;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_names: ", "from 16 to 16384");
	expect_err("routers = ( " ROUTER_OK " );\npoll_mode = \"fast\";\n",
		   "t.conf:2: poll_mode: unknown poll mode \"fast\"", NULL);
	expect_err("run_dir = \"run/shmr\";\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: run_dir: ", "absolute");
	expect_err("stop_grace_ms = -1;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: stop_grace_ms: -1 is out of range", NULL);
	expect_err("socket_group = \"a:b\";\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: socket_group: ", "group name");
	expect_err("restart_backoff_ms = 500;\nrestart_backoff_max_ms = 100;\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: restart_backoff_max_ms: 100 is below "
		   "restart_backoff_ms (500)", NULL);
	/* restart_backoff_ms alone, above the default maximum: the file's
	 * setting is named, at its line, not the maximum it left out. */
	expect_err("domain = \"h5b\";\nrestart_backoff_ms = 6000;\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: restart_backoff_ms: 6000 is above "
		   "restart_backoff_max_ms (5000, the default; set it too)",
		   NULL);
	{
		struct shmr_config *b = expect_ok(
			"restart_backoff_ms = 6000;\n"
			"restart_backoff_max_ms = 6000;\n"
			"routers = ( " ROUTER_OK " );\n");

		assert_int_equal(b->restart_backoff_ms, 6000);
		conf_free(b);
	}
	expect_err("routers = ( { name = \"r\"; behaviour = \"type\";\n"
		   "types = ( { type = 1; route = \"a\"; } );\n"
		   "handlers = \"\"; } );\n",
		   "t.conf:3: routers.[0].handlers: empty path", NULL);
	expect_err("restart_backoff_ms = -5;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: restart_backoff_ms: -5 is out of range", NULL);
	expect_err("routers = ( { name = \"r\"; behaviour = \"type\";\n"
		   "types = ( { type = 1; route = \"a\"; } );\n"
		   "mailbox_full = \"drop\"; } );\n",
		   "t.conf:3: routers.[0].mailbox_full: unknown choice "
		   "\"drop\"", NULL);

	struct shmr_config *c = expect_ok(
		"domain = \"d.1:x-y_z\"; run_dir = \"/tmp/x\";\n"
		"slot_size = 4096; lane_size = 64; lcores = 32;\n"
		"max_endpoints = 16384; max_names = 16384;\n"
		"poll_mode = \"busy\"; socket_group = \"shmr-users\";\n"
		"stop_grace_ms = 0; restart_backoff_ms = 50;\n"
		"routers = ( { name = \"r\"; behaviour = \"type\";\n"
		"  types = ( { type = 1; route = \"a\"; } );\n"
		"  mailbox_full = \"fail\"; } );\n");
	assert_string_equal(c->domain, "d.1:x-y_z");
	assert_string_equal(c->run_dir, "/tmp/x");
	assert_int_equal(c->slot_size, 4096);
	assert_int_equal(c->lane_size, 64);
	assert_int_equal(c->lcores, 32);
	assert_int_equal(c->max_endpoints, 16384);
	assert_int_equal(c->max_names, 16384);
	assert_int_equal(c->poll_mode, SHMR_POLL_BUSY);
	assert_string_equal(c->socket_group, "shmr-users");
	assert_int_equal(c->stop_grace_ms, 0);
	assert_int_equal(c->restart_backoff_ms, 50);
	assert_int_equal(c->restart_backoff_max_ms, 5000);
	assert_int_equal(c->routers[0].fail_when_full, 1);
	conf_free(c);
}

/* The control socket's roles and limits: admin_group (needs
 * socket_group), programs (absolute, unique), max_connections_per_user,
 * idle_timeout_ms; each wrong value one line naming it. */
static void test_access_settings(void **state)
{
	(void)state;

	expect_err("admin_group = \"a:b\";\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: admin_group: ", "group name");
	expect_err("admin_group = \"ops\";\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: admin_group: needs socket_group", NULL);
	expect_err("programs = ( \"bin/w\" );\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: programs.[0]: \"bin/w\" is not an absolute path",
		   NULL);
	expect_err("programs = [ \"/a\", \"/a\" ];\nrouters = ( " ROUTER_OK
		   " );\n",
		   "t.conf:1: programs.[1]: \"/a\" is listed twice", NULL);
	expect_err("programs = ( 1 );\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: programs.[0]: expected a string", NULL);
	expect_err("max_connections_per_user = 0;\nrouters = ( " ROUTER_OK
		   " );\n",
		   "t.conf:1: max_connections_per_user: 0 is out of range",
		   NULL);
	expect_err("max_connections_per_user = 257;\nrouters = ( " ROUTER_OK
		   " );\n",
		   "t.conf:1: max_connections_per_user: 257 is out of range",
		   NULL);
	expect_err("max_endpoints_per_user = 16385;\nrouters = ( " ROUTER_OK
		   " );\n",
		   "t.conf:1: max_endpoints_per_user: 16385 is out of range",
		   NULL);
	expect_err("idle_timeout_ms = 10;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: idle_timeout_ms: 10 is out of range", NULL);

	struct shmr_config *c = expect_ok(
		"socket_group = \"shmr-users\"; admin_group = \"shmr-ops\";\n"
		"programs = ( \"/opt/w/bin/a\", \"/usr/local/bin/b\" );\n"
		"max_connections_per_user = 8; idle_timeout_ms = 500;\n"
		"max_endpoints_per_user = 3;\n"
		"routers = ( " ROUTER_OK " );\n");
	assert_string_equal(c->admin_group, "shmr-ops");
	assert_int_equal(c->nprograms, 2);
	assert_string_equal(c->programs[0], "/opt/w/bin/a");
	assert_string_equal(c->programs[1], "/usr/local/bin/b");
	assert_int_equal(c->max_connections_per_user, 8);
	assert_int_equal(c->idle_timeout_ms, 500);
	assert_int_equal(c->max_endpoints_per_user, 3);
	conf_free(c);

	c = expect_ok("routers = ( " ROUTER_OK " );\n");
	assert_string_equal(c->admin_group, "");
	assert_int_equal(c->nprograms, 0);
	assert_int_equal(c->max_connections_per_user, 32);
	assert_int_equal(c->idle_timeout_ms, 10000);
	assert_int_equal(c->max_endpoints_per_user, 32);
	conf_free(c);
}

/* pool = { ... }: expanded into "<router>:<i>" routes of one program;
 * resizer/optimal_resizer only on a pool, one of them; on_kill. */
static void test_pools_and_resizers(void **state)
{
	struct shmr_config *c;
	(void)state;

	c = expect_ok("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		      "  pool = { size = 3; program = \"p\"; args = [ \"-x\" ];"
		      " cpus = \"0\"; };\n"
		      "  resizer = { upper_bound = 6; rampup_rate = 0.5; };\n"
		      "  on_kill = \"stop\"; } );\n");
	assert_int_equal(c->routers[0].pool.size, 3);
	assert_int_equal(c->routers[0].nroutes, 3);
	assert_string_equal(c->routers[0].routes[0].name, "w:0");
	assert_string_equal(c->routers[0].routes[2].name, "w:2");
	assert_string_equal(c->routers[0].routes[2].program, "p");
	assert_string_equal(c->routers[0].routes[2].args[0], "-x");
	assert_string_equal(c->routers[0].routes[1].cpus, "0");
	assert_int_equal(c->routers[0].resizer.kind, SHMR_RESIZER_DEFAULT);
	assert_int_equal(c->routers[0].resizer.upper_bound, 6);
	assert_true(c->routers[0].resizer.rampup_rate == 0.5);
	assert_true(c->routers[0].resizer.lower_bound == INT_MIN); /* unset */
	assert_int_equal(c->routers[0].on_kill_stop, 1);
	conf_free(c);
	c = expect_ok("routers = ( { name = \"w\"; behaviour = \"random\";\n"
		      "  pool = { size = 1; program = \"p\"; };\n"
		      "  optimal_resizer = { action_interval_ms = 100; }; } );\n");
	assert_int_equal(c->routers[0].resizer.kind, SHMR_RESIZER_OPTIMAL);
	assert_int_equal(c->routers[0].resizer.action_interval_ms, 100);
	conf_free(c);

	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 0; program = \"p\"; }; } );\n",
		   "t.conf:2: routers.[0].pool.size: 0 needs a resizer", NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; }; } );\n",
		   "t.conf:2: routers.[0].pool.program: required setting is missing",
		   NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; program = \"p\"; };\n"
		   "  routes = ( { name = \"a\"; program = \"p\"; } ); } );\n",
		   "t.conf:3: routers.[0].routes: a router with a pool has no routes",
		   NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"type\";\n"
		   "  types = ( { type = 1; route = \"a\"; } );\n"
		   "  pool = { size = 2; program = \"p\"; }; } );\n",
		   "t.conf:3: routers.[0].pool: a pool needs a routing logic", NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  routees = [ \"a\" ];\n"
		   "  resizer = { upper_bound = 3; }; } );\n",
		   "t.conf:3: routers.[0].resizer: only a pool", NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; program = \"p\"; };\n"
		   "  resizer = { upper_bound = 3; };\n"
		   "  optimal_resizer = { upper_bound = 3; }; } );\n",
		   "t.conf:4: routers.[0].optimal_resizer: a pool has one resizer",
		   NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; program = \"p\"; };\n"
		   "  resizer = { rampup = 3; }; } );\n",
		   "t.conf:3: routers.[0].resizer.rampup: unknown setting", NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; program = \"p\"; };\n"
		   "  resizer = { rampup_rate = \"fast\"; }; } );\n",
		   "t.conf:3: routers.[0].resizer.rampup_rate: expected a number",
		   NULL);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; program = \"p\"; };\n"
		   "  on_kill = \"ignore\"; } );\n",
		   "t.conf:3: routers.[0].on_kill: unknown choice", NULL);
}

/* supervisor = "restart" | "stop" | "all-for-one" | "escalate": restart
 * by default; a bad value, or one on a group that starts no routees,
 * is a file:line error. */
static void test_supervisor(void **state)
{
	static const char *const names[] = { "restart", "stop", "all-for-one",
					     "escalate" };
	char text[256];
	struct shmr_config *c;
	(void)state;

	c = expect_ok("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		      "  pool = { size = 2; program = \"p\"; }; } );\n");
	assert_int_equal(c->routers[0].supervisor, SHMR_SUPERVISOR_RESTART);
	conf_free(c);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(text, sizeof(text),
			 "routers = ( { name = \"w\"; behaviour = \"random\";\n"
			 "  pool = { size = 2; program = \"p\"; };\n"
			 "  supervisor = \"%s\"; } );\n",
			 names[i]);
		c = expect_ok(text);
		assert_int_equal(c->routers[0].supervisor, i);
		assert_string_equal(
			shmr_config_supervisor_name(c->routers[0].supervisor),
			names[i]);
		conf_free(c);
	}
	c = expect_ok("routers = ( { name = \"t\"; behaviour = \"type\";\n"
		      "  types = ( { type = 1; route = \"a\"; } );\n"
		      "  routes = ( { name = \"a\"; program = \"p\"; } );\n"
		      "  supervisor = \"stop\"; } );\n");
	assert_int_equal(c->routers[0].supervisor, SHMR_SUPERVISOR_STOP);
	conf_free(c);
	expect_err("routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 2; program = \"p\"; };\n"
		   "  supervisor = \"resume\"; } );\n",
		   "t.conf:3: routers.[0].supervisor: unknown supervisor \"resume\" "
		   "(expected \"restart\", \"stop\", \"all-for-one\" or "
		   "\"escalate\")",
		   NULL);
	expect_err("routers = ( { name = \"g\"; behaviour = \"random\";\n"
		   "  routees = [ \"a\", \"b\" ];\n"
		   "  supervisor = \"stop\"; } );\n",
		   "t.conf:3: routers.[0].supervisor: the router starts no routees",
		   NULL);
}

static void test_needs_a_router(void **state)
{
	expect_err("domain = \"a\";\n", "t.conf:1: routers: required setting is missing",
		   NULL);
	expect_err("domain = \"a\";\nrouters = ( );\n",
		   "t.conf:2: routers: at least one router", NULL);
}

/* ---- limits from layout.h ------------------------------------------------ */

/* @p head, then one router "r" (@p beh on the line of its name) of @p n
 * routes "w0".. from line 4 of @p head's lines on, one a line. */
static struct text routes_text(const char *head, const char *beh, unsigned n)
{
	struct text t = { 0 };

	add(&t, "%srouters = (\n  { name = \"r\"; %s\n    routes = (\n", head,
	    beh);
	for (unsigned i = 0; i < n; i++)
		add(&t, "      { name = \"w%u\"; program = \"w\"; }%s\n", i,
		    i + 1 < n ? "," : "");
	add(&t, "    ); }\n);\n");
	return t;
}

/* @p pre, then @p n hash routers "r1".."rN", one a line (router i on
 * line lines(pre) + 1 + i). */
static struct text routers_text(const char *pre, unsigned n)
{
	struct text t = { 0 };

	add(&t, "%srouters = (\n", pre);
	for (unsigned i = 0; i < n; i++)
		add(&t, "  { name = \"r%u\"; behaviour = \"hash\"; hash = [ \"a\" ]; }%s\n",
		    i + 1, i + 1 < n ? "," : "");
	add(&t, ");\n");
	return t;
}

/* arena = { classes = [ "SIZE:COUNT", ... ] }: a size's suffix is a
 * shift, and a size that the shift would carry past 64 bits wrapped into
 * a small one the geometry accepts ("17592186044417M" is 2^64 + 1M). */
static void test_arena_classes(void **state)
{
	struct shmr_config *c;

	(void)state;
	c = expect_ok("arena = { classes = [ \"64K:4\", \"1M:2\" ]; };\n"
		      "routers = ( " ROUTER_OK " );\n");
	assert_int_equal(c->arena.nclasses, 2);
	assert_int_equal(c->arena.cls[0].size, 64u << 10);
	assert_int_equal(c->arena.cls[1].size, 1u << 20);
	assert_int_equal(c->arena.cls[1].count, 2);
	conf_free(c);
	c = expect_ok("arena = { classes = [ \"64M:1\" ]; };\n"
		      "routers = ( " ROUTER_OK " );\n");
	assert_int_equal(c->arena.cls[0].size, 64u << 20);
	conf_free(c);
	expect_err("\narena = { classes = [ \"17592186044417M:3\" ]; };\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: arena.classes.[0]: \"17592186044417M:3\": a "
		   "class's size must be a power of two from 64 bytes to 64M",
		   NULL);
	expect_err("arena = { classes = [ \"64K:1\",\n"
		   "  \"18014398509481985K:2\" ]; };\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:2: arena.classes.[1]: \"18014398509481985K:2\": ",
		   "power of two");
	expect_err("arena = { classes = [ \"4294967297:1\" ]; };\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: arena.classes.[0]: ", "power of two");
	expect_err("arena = { classes = [ \"4G:1\" ]; };\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: arena.classes.[0]: ", "power of two");
	expect_err("arena = { classes = [ \"128M:1\" ]; };\n"
		   "routers = ( " ROUTER_OK " );\n",
		   "t.conf:1: arena.classes.[0]: ", "power of two");
}

static void test_limits(void **state)
{
	struct text t = { 0 };
	struct shmr_config *c;

	/* One router more than max_routers (default 8): line 1 + 9. */
	t = routers_text("", SHMR_ROUTERS_DEFAULT + 1);
	expect_err(t.s, "t.conf:10: routers.[8]: 9 routers, more than "
		   "max_routers (8)", NULL);
	free(t.s);
	t = routers_text("", SHMR_ROUTERS_DEFAULT);
	c = expect_ok(t.s);
	assert_int_equal(shmr_config_routers(c), SHMR_ROUTERS_DEFAULT);
	assert_int_equal(c->nrouters, SHMR_ROUTERS_DEFAULT);
	conf_free(c);
	free(t.s);
	/* max_routers = 1: one router, not two (the second on line 3). */
	t = routers_text("max_routers = 1;\n", 1);
	c = expect_ok(t.s);
	assert_int_equal(c->max_routers, 1);
	conf_free(c);
	free(t.s);
	t = routers_text("max_routers = 1;\n", 2);
	expect_err(t.s, "t.conf:4: routers.[1]: 2 routers, more than "
		   "max_routers (1)", NULL);
	free(t.s);
	/* The most: SHMR_MAX_ROUTERS routers fit, one more does not. */
	{
		char pre[32], want[96];

		snprintf(pre, sizeof(pre), "max_routers = %u;\n",
			 SHMR_MAX_ROUTERS);
		t = routers_text(pre, SHMR_MAX_ROUTERS);
		c = expect_ok(t.s);
		assert_int_equal(c->max_routers, SHMR_MAX_ROUTERS);
		assert_int_equal(c->nrouters, SHMR_MAX_ROUTERS);
		snprintf(want, sizeof(want), "r%u", SHMR_MAX_ROUTERS);
		assert_string_equal(c->routers[SHMR_MAX_ROUTERS - 1].name,
				    want);
		conf_free(c);
		free(t.s);
		t = routers_text(pre, SHMR_MAX_ROUTERS + 1);
		snprintf(want, sizeof(want),
			 "t.conf:%u: routers.[%u]: %u routers, more than "
			 "max_routers (%u)", SHMR_MAX_ROUTERS + 3,
			 SHMR_MAX_ROUTERS, SHMR_MAX_ROUTERS + 1,
			 SHMR_MAX_ROUTERS);
		expect_err(t.s, want, NULL);
		free(t.s);
		snprintf(pre, sizeof(pre), "max_routers = %u;\n",
			 SHMR_MAX_ROUTERS + 1);
		snprintf(want, sizeof(want),
			 "t.conf:1: max_routers: %u is out of range (1 to %u)",
			 SHMR_MAX_ROUTERS + 1, SHMR_MAX_ROUTERS);
		t = routers_text(pre, 1);
		expect_err(t.s, want, NULL);
		free(t.s);
	}
	expect_err("routers = ( " ROUTER_OK " );\nmax_routers = 0;\n",
		   "t.conf:2: max_routers: 0 is out of range", NULL);
	expect_err("max_routers = -1;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_routers: ", NULL);

	/* One route too many: max_routes (default 32), named with the line
	 * of the first route past it: routes start on line 4, the 33rd on
	 * line 36. */
	t = routes_text("", "behaviour = \"hash\"; hash = [ \"a\" ];",
			SHMR_ROUTES_DEFAULT + 1);
	expect_err(t.s, "t.conf:36: routers.[0].routes.[32]: 33 routes, more "
		   "than max_routes (32)", NULL);
	free(t.s);
	/* max_routes = 100: 100 routes fit, 101 do not (the 101st on line
	 * 105); a scatter-gather router holds 64 at most (its tried mask);
	 * 1 to 128. */
	t = routes_text("max_routes = 100;\n", "behaviour = \"round-robin\";",
			100);
	c = expect_ok(t.s);
	assert_int_equal(c->max_routes, 100);
	assert_int_equal(c->routers[0].nroutes, 100);
	conf_free(c);
	free(t.s);
	t = routes_text("max_routes = 100;\n", "behaviour = \"round-robin\";",
			101);
	expect_err(t.s, "t.conf:105: routers.[0].routes.[100]: 101 routes, "
		   "more than max_routes (100)", NULL);
	free(t.s);
	t = routes_text("max_routes = 100;\n",
			"behaviour = \"scatter-gather\";",
			SHMR_COLLECT_ROUTEES_MAX + 1);
	expect_err(t.s, "t.conf:69: routers.[0].routes.[64]: 65 routes, more "
		   "than the routees of a collecting router (64)", NULL);
	free(t.s);
	expect_err("max_routes = 129;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_routes: 129 is out of range (1 to 128)", NULL);
	expect_err("routers = ( " ROUTER_OK " );\nmax_routes = 0;\n",
		   "t.conf:2: max_routes: 0 is out of range (1 to 128)", NULL);

	/* One type too many: max_types (default 64), named with the line
	 * of the first entry past it. */
	t = (struct text){ 0 };
	add(&t, "routers = (\n  { name = \"r\"; behaviour = \"type\";\n    types = (\n");
	for (unsigned i = 0; i <= SHMR_TYPES_DEFAULT; i++)
		add(&t, "      { type = %u; route = \"a\"; }%s\n", i + 1,
		    i < SHMR_TYPES_DEFAULT ? "," : "");
	add(&t, "    ); }\n);\n");
	expect_err(t.s, "t.conf:68: routers.[0].types.[64]: 65 types entries, "
		   "more than max_types (64)", NULL);
	free(t.s);
	/* max_types = 100: 100 entries of each map fit, 101 do not; 1 to
	 * 1024. */
	for (unsigned n = 100; n <= 101; n++) {
		t = (struct text){ 0 };
		add(&t, "max_types = 100;\nrouters = (\n  { name = \"r\"; "
			"behaviour = \"hash\"; hash = [ \"a\" ];\n"
			"    call_types = (\n");
		for (unsigned i = 0; i < n; i++)
			add(&t, "      { type = %u; route = \"a\"; }%s\n", i + 1,
			    i + 1 < n ? "," : "");
		add(&t, "    ); }\n);\n");
		if (n == 100) {
			struct shmr_config *c = expect_ok(t.s);

			assert_int_equal(c->max_types, 100);
			assert_int_equal(c->routers[0].ncall_types, 100);
			conf_free(c);
		} else {
			expect_err(t.s, "t.conf:105: routers.[0].call_types.[100]: "
				   "101 call_types entries, more than "
				   "max_types (100)", NULL);
		}
		free(t.s);
	}
	expect_err("max_types = 1025;\nrouters = ( " ROUTER_OK " );\n",
		   "t.conf:1: max_types: max_types must be from 1 to 1024",
		   NULL);
	expect_err("routers = ( " ROUTER_OK " );\nmax_types = 0;\n",
		   "t.conf:2: max_types: ", "from 1 to 1024");

	/* One hash entry too many, all on line 3. */
	t = (struct text){ 0 };
	add(&t, "routers = (\n  { name = \"r\"; behaviour = \"hash\";\n    hash = [");
	for (unsigned i = 0; i <= SHMR_ROUTES_DEFAULT; i++)
		add(&t, "%s\"s%u\"", i ? ", " : " ", i);
	add(&t, " ]; }\n);\n");
	expect_err(t.s, "t.conf:3: routers.[0].hash.[32]: 33 hash entries, "
		   "more than max_routes (32)", NULL);
	free(t.s);

	/* One argument too many, then one argument too long. */
	t = (struct text){ 0 };
	add(&t, "routers = ( " ROUTER_OK ",\n  { name = \"s\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		"    routes = ( { name = \"a\"; program = \"w\";\n      args = [");
	for (unsigned i = 0; i <= SHMR_CONF_ARGS_MAX; i++)
		add(&t, "%s\"%u\"", i ? ", " : " ", i);
	add(&t, " ]; } ); }\n);\n");
	expect_err(t.s, "t.conf:4: routers.[1].routes.[0].args.[16]: too many arguments (at most 16)",
		   NULL);
	free(t.s);

	t = (struct text){ 0 };
	add(&t, "routers = ( " ROUTER_OK ",\n  { name = \"s\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		"    routes = ( { name = \"a\"; program = \"w\";\n      args = [ \"ok\", \"%0*d\" ]; } ); }\n);\n",
	    SHMR_CONF_ARG_MAX, 0);
	expect_err(t.s, "t.conf:4: routers.[1].routes.[0].args.[1]: too long: 128 characters (at most 127)",
		   NULL);
	free(t.s);

	t = (struct text){ 0 };
	add(&t, "routers = ( { name = \"s\"; behaviour = \"hash\"; hash = [ \"a\" ];\n"
		"    routes = ( { name = \"a\";\n program = \"/%0*d\"; } ); }\n);\n",
	    SHMR_CONF_PATH_MAX, 0);
	expect_err(t.s, "t.conf:3: routers.[0].routes.[0].program: too long", NULL);
	free(t.s);

	/* Exactly at every limit is fine. */
	t = (struct text){ 0 };
	add(&t, "routers = (\n");
	for (unsigned i = 0; i < SHMR_ROUTERS_DEFAULT; i++) {
		add(&t, "  { name = \"r%u\"; behaviour = \"type\"; types = (", i);
		for (unsigned k = 0; k < SHMR_TYPES_DEFAULT; k++)
			add(&t, "%s{ type = %u; route = \"w%u\"; }", k ? ", " : " ",
			    k + 1, k % SHMR_ROUTES_DEFAULT);
		add(&t, " );\n    routes = (");
		for (unsigned k = 0; k < SHMR_ROUTES_DEFAULT; k++) {
			add(&t, "%s{ name = \"w%u\"; program = \"w\"; args = [", k ? ", " : " ", k);
			for (unsigned a = 0; a < SHMR_CONF_ARGS_MAX; a++)
				add(&t, "%s\"%u\"", a ? ", " : " ", a);
			add(&t, " ]; }");
		}
		add(&t, " ); }%s\n", i + 1 < SHMR_ROUTERS_DEFAULT ? "," : "");
	}
	add(&t, ");\n");
	c = expect_ok(t.s);
	assert_int_equal(c->nrouters, SHMR_ROUTERS_DEFAULT);
	assert_int_equal(c->routers[7].nroutes, SHMR_ROUTES_DEFAULT);
	assert_int_equal(c->routers[7].ntypes, SHMR_TYPES_DEFAULT);
	assert_int_equal(c->routers[7].routes[31].nargs, SHMR_CONF_ARGS_MAX);
	assert_string_equal(c->routers[7].routes[31].args[15], "15");
	conf_free(c);
	free(t.s);
}

/* ---- files -------------------------------------------------------------- */

static void test_missing_file(void **state)
{
	struct shmr_config *c = conf_new();
	char err[512];

	assert_int_equal(shmr_config_load_file("/nonexistent/shmr/app.conf", c,
					       err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/shmr/app.conf: cannot read: "
				 "No such file or directory");
	assert_int_equal(shmr_config_load_file("/", c, err, sizeof(err)),
			 -EISDIR);
	assert_string_equal(err, "/: cannot read: Is a directory");
	conf_free(c);
}

/* A temporary directory with one file in it. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_full_file(void **state)
{
	char dir[] = "/tmp/shmr-config-test-XXXXXX", path[PATH_MAX],
	     real[PATH_MAX], want[PATH_MAX + 64], err[512] = "";
	struct shmr_config *c = conf_new();
	const struct shmr_conf_router *r;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/app.conf", dir);
	write_file(path,
		   "# every setting, three behaviours\n"
		   "domain = \"full\";\n"
		   "run_dir = \"/tmp/shmr-run\";\n"
		   "slot_size = 256; lane_size = 2048; lcores = 2;\n"
		   "poll_mode = \"busy\";\n"
		   "dataplane_cpus = \"1\";\n"
		   "socket_group = \"adm\";\n"
		   "stop_grace_ms = 500;\n"
		   "routers = (\n"
		   "  { name = \"events\"; behaviour = \"type\";\n"
		   "    types = ( { type = 1; route = \"payments\"; },\n"
		   "              { type = 9; route = \"audit\"; } );\n"
		   "    routes = (\n"
		   "      { name = \"payments\"; program = \"/usr/bin/w\";\n"
		   "        args = [ \"--tag\", \"payments\" ]; cpus = \"0\"; }\n"
		   "    ); },\n"
		   "  { name = \"shards\"; behaviour = \"hash\";\n"
		   "    handlers = \"h.so\"; handlers_arg = \"trip=2\";\n"
		   "    hash = [ \"shard:0\", \"shard:1\" ];\n"
		   "    routes = ( { name = \"shard:0\"; program = \"w\"; },\n"
		   "               { name = \"shard:1\"; program = \"w\"; } ); },\n"
		   "  { name = \"custom\"; behaviour = \"dso\";\n"
		   "    dso = \"lib/beh.so\"; dso_arg = \"a=1\"; },\n"
		   "  { name = \"abs\"; behaviour = \"dso\"; dso = \"/opt/beh.so\"; }\n"
		   ");\n");
	assert_int_equal(shmr_config_load_file(path, c, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(c->source, path);
	assert_string_equal(c->domain, "full");
	assert_string_equal(c->run_dir, "/tmp/shmr-run");
	assert_int_equal(c->slot_size, 256);
	assert_int_equal(c->lane_size, 2048);
	assert_int_equal(c->lcores, 2);
	assert_int_equal(c->poll_mode, SHMR_POLL_BUSY);
	assert_string_equal(c->dataplane_cpus, "1");
	assert_string_equal(c->socket_group, "adm");
	assert_int_equal(c->stop_grace_ms, 500);
	assert_int_equal(c->nrouters, 4);

	r = &c->routers[0];
	assert_int_equal(r->line, 10);
	assert_int_equal(r->ntypes, 2);
	assert_int_equal(r->types[1].type, 9);
	assert_string_equal(r->types[1].route, "audit");
	assert_int_equal(r->nroutes, 1);
	assert_string_equal(r->routes[0].program, "/usr/bin/w");
	assert_string_equal(r->routes[0].cpus, "0");
	assert_int_equal(r->routes[0].line, 14);

	r = &c->routers[1];
	assert_int_equal(r->behaviour, SHMR_BEH_HASH);
	assert_int_equal(r->nhash, 2);
	assert_string_equal(r->hash[1], "shard:1");
	assert_int_equal(r->nroutes, 2);
	/* handlers: resolved like a dso; a dso router's default to its dso */
	assert_non_null(realpath(dir, real));
	snprintf(want, sizeof(want), "%s/h.so", real);
	assert_string_equal(r->handlers, want);
	assert_string_equal(r->handlers_arg, "trip=2");
	assert_string_equal(c->routers[0].handlers, "");
	assert_string_equal(c->routers[3].handlers, "/opt/beh.so");

	/* A relative dso is resolved against the file's directory. */
	r = &c->routers[2];
	assert_int_equal(r->behaviour, SHMR_BEH_DSO);
	assert_non_null(realpath(dir, real));
	snprintf(want, sizeof(want), "%s/lib/beh.so", real);
	assert_string_equal(r->dso, want);
	assert_string_equal(r->dso_arg, "a=1");
	assert_int_equal(r->nroutes, 0);
	assert_string_equal(c->routers[3].dso, "/opt/beh.so");
	assert_string_equal(c->routers[3].dso_arg, "");

	/* An error in a file names the file as it was given. */
	write_file(path, "routers = (\n"
			 "  { name = \"r\"; behaviour = \"dso\";\n"
			 "    dso = 7; }\n"
			 ");\n");
	assert_int_equal(shmr_config_load_file(path, c, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:3: routers.[0].dso: expected a string",
		 path);
	assert_memory_equal(err, want, strlen(want));

	write_file(path, "routers = (\n  { name = \"r\"; behaviour = ; }\n);\n");
	assert_int_equal(shmr_config_load_file(path, c, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:2: syntax: ", path);
	assert_memory_equal(err, want, strlen(want));

	/* An @include'd file resolves against the including file's directory
	 * and names itself in errors. */
	snprintf(want, sizeof(want), "%s/inc.conf", dir);
	write_file(want, "# included\n\nlcores = 33;\n");
	write_file(path, "@include \"inc.conf\"\n"
			 "routers = ( " ROUTER_OK " );\n");
	assert_int_equal(shmr_config_load_file(path, c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(unlink(want), 0);
	snprintf(want, sizeof(want), "%s/inc.conf:3: lcores: ", real);
	assert_memory_equal(err, want, strlen(want));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	conf_free(c);
}

/* From a string, a relative dso stays as written: there is no directory. */
static void test_string_dso_as_given(void **state)
{
	struct shmr_config *c = expect_ok(
		"routers = ( { name = \"r\"; behaviour = \"dso\"; dso = \"x/b.so\"; } );\n");

	assert_string_equal(c->routers[0].dso, "x/b.so");
	conf_free(c);
}

/* ---- the examples in config/examples ------------------------------------ */

static struct shmr_config *load_example(const char *name)
{
	struct shmr_config *c = conf_new();
	char path[PATH_MAX], err[512] = "";

	snprintf(path, sizeof(path), "%s/%s", SHMR_CONFIG_EXAMPLES_DIR, name);
	if (shmr_config_load_file(path, c, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return c;
}

static void test_example_hash(void **state)
{
	struct shmr_config *c = load_example("hash.conf");
	const struct shmr_conf_router *r = &c->routers[0];
	char want[SHMR_NAME_MAX];

	assert_int_equal(c->nrouters, 1);
	assert_int_equal(r->behaviour, SHMR_BEH_HASH);
	assert_int_equal(r->nhash, 4);
	assert_int_equal(r->nroutes, 4);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(want, sizeof(want), "shard:%u", i);
		assert_string_equal(r->hash[i], want);
		assert_string_equal(r->routes[i].name, want);
		assert_string_equal(r->routes[i].program, "shmr-echo-worker");
	}
	conf_free(c);
}

static void test_example_dso(void **state)
{
	struct shmr_config *c = load_example("dso.conf");
	const struct shmr_conf_router *r = &c->routers[0];
	char real[PATH_MAX], want[PATH_MAX + 64];

	assert_int_equal(c->nrouters, 1);
	assert_int_equal(r->behaviour, SHMR_BEH_DSO);
	assert_non_null(realpath(SHMR_CONFIG_EXAMPLES_DIR, real));
	snprintf(want, sizeof(want), "%s/libshmr-example-behaviour.so", real);
	assert_string_equal(r->dso, want);
	assert_string_equal(r->dso_arg, "100");
	assert_int_equal(r->nroutes, 3);
	conf_free(c);
}

/* Every use-case example parses; the CQRS one routes calls by type. */
static void test_examples_use_cases(void **state)
{
	static const char *const files[] = {
		"content.conf", "shard-pools.conf", "cqrs.conf",
		"router-of-routers.conf", "circuit-breaker.conf",
		"hot-deploy.conf", "mixed.conf",
	};
	struct shmr_config *c;
	(void)state;

	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		conf_free(load_example(files[i]));
	c = load_example("cqrs.conf");
	assert_int_equal(c->routers[0].behaviour, SHMR_BEH_HASH);
	assert_int_equal(c->routers[0].nhash, 4);
	assert_int_equal(c->routers[0].ncall_types, 3);
	conf_free(c);
	c = load_example("shard-pools.conf");
	assert_int_equal(c->routers[0].nroutes, 0); /* a free router */
	conf_free(c);
	c = load_example("router-of-routers.conf");
	assert_int_equal(c->nrouters, 3);
	assert_string_equal(c->routers[0].types[2].route, "billing");
	conf_free(c);
}

/* One example per routing logic; each parses to what its comment says. */
static void test_examples_logics(void **state)
{
	static const struct {
		const char *file;
		uint32_t behaviour;
		unsigned nroutes, nroutees, vnodes;
	} ex[] = {
		{ "round-robin.conf", SHMR_BEH_ROUND_ROBIN, 3, 0, 0 },
		{ "random.conf", SHMR_BEH_RANDOM, 2, 3, 0 },
		{ "smallest-mailbox.conf", SHMR_BEH_SMALLEST_MAILBOX, 3, 0, 0 },
		{ "broadcast.conf", SHMR_BEH_BROADCAST, 3, 0, 0 },
		{ "consistent-hash.conf", SHMR_BEH_CONSISTENT_HASH, 3, 0, 100 },
		{ "scatter-gather.conf", SHMR_BEH_SCATTER_GATHER, 3, 0, 0 },
		{ "tail-chopping.conf", SHMR_BEH_TAIL_CHOPPING, 3, 0, 0 },
		{ "balancing.conf", SHMR_BEH_BALANCING, 4, 0, 0 },
	};
	(void)state;

	for (unsigned i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct shmr_config *c = load_example(ex[i].file);

		assert_int_equal(c->nrouters, 1);
		assert_int_equal(c->routers[0].behaviour, ex[i].behaviour);
		assert_int_equal(c->routers[0].nroutes, ex[i].nroutes);
		assert_int_equal(c->routers[0].nhash, ex[i].nroutees);
		assert_int_equal(c->routers[0].vnodes, ex[i].vnodes);
		for (unsigned j = 0; j < c->routers[0].nroutes; j++)
			assert_string_equal(c->routers[0].routes[j].program,
					    "shmr-echo-worker");
		conf_free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_parses),
		cmocka_unit_test(test_default_is_the_file),
		cmocka_unit_test(test_defaults_of_omitted_settings),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_dso_defaults),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_legal_overlaps),
		cmocka_unit_test(test_type_numbers),
		cmocka_unit_test(test_behaviour_needs),
		cmocka_unit_test(test_call_types),
		cmocka_unit_test(test_logics_parse),
		cmocka_unit_test(test_logics_errors),
		cmocka_unit_test(test_timing_defaults),
		cmocka_unit_test(test_collect_and_balancing),
		cmocka_unit_test(test_balancing_pool_resizer_refused),
		cmocka_unit_test(test_keep_when_empty),
		cmocka_unit_test(test_resizer_pool_starts_within_bounds),
		cmocka_unit_test(test_route_fields),
		cmocka_unit_test(test_cpu_lists),
		cmocka_unit_test(test_geometry_and_values),
		cmocka_unit_test(test_needs_a_router),
		cmocka_unit_test(test_access_settings),
		cmocka_unit_test(test_pools_and_resizers),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_arena_classes),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_string_dso_as_given),
		cmocka_unit_test(test_example_hash),
		cmocka_unit_test(test_example_dso),
		cmocka_unit_test(test_examples_use_cases),
		cmocka_unit_test(test_examples_logics),
		cmocka_unit_test(test_supervisor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
