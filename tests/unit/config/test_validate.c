/*
 * Validation in one place (config/validate.c): the messages of the cpu-list
 * rule, of shmr_config_validate() (the lines shmr-control prints, as it
 * printed them when it checked these itself) and of shmr_config_load(),
 * the daemon's one entry point.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shmr_config.h"

#define ONE_ROUTE                                                          \
	"routers = ( { name = \"r\"; behaviour = \"type\";\n"              \
	"  types = ( { type = 1; route = \"a\"; } );\n"                    \
	"  routes = ( { name = \"a\"; program = \"w\"; cpus = \"%s\"; } ); } );\n"

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

/* The message for a route's cpus = @p list. */
static void cpus_err(const char *list, const char *want)
{
	struct shmr_config *c = conf_new();
	char text[512], err[512] = "";

	snprintf(text, sizeof(text), ONE_ROUTE, list);
	assert_int_equal(shmr_config_load_string(text, "t.conf", c, err,
						 sizeof(err)),
			 -EINVAL);
	if (!strstr(err, want))
		fail_msg("cpus \"%s\": \"%s\", want \"%s\"", list, err, want);
	conf_free(c);
}

/* A range's numbers are checked before its order, and a bad number
 * before what follows the range. */
static void cpu_list_messages(void **state)
{
	(void)state;
	cpus_err("1024", "cpu list \"1024\" names a cpu above 1023");
	cpus_err("0-5000", "names a cpu above 1023");
	cpus_err("2000-1", "names a cpu above 1023");
	cpus_err("2000,x", "names a cpu above 1023");
	cpus_err("99999999999999999999", "names a cpu above 1023");
	cpus_err("3-1", "cpu list \"3-1\" has a reversed range 3-1");
	cpus_err("1-2x", "bad cpu list \"1-2x\" (expected N, N-M");
	cpus_err("99999-x", "bad cpu list");
	cpus_err("0,", "bad cpu list");
}

static void validate_messages(void **state)
{
	struct shmr_config *c = conf_new();
	char text[512], err[512];

	(void)state;
	snprintf(text, sizeof(text), ONE_ROUTE, "1");
	assert_int_equal(shmr_config_load_string(text, "t.conf", c, err,
						 sizeof(err)),
			 0);
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	assert_string_equal(err, "");

	c->slot_size = 100;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf: domain: slot_size must be a "
				 "multiple of 8 from 64 to 4096");
	c->slot_size = 256;
	strcpy(c->domain, "a b");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf: domain: bad domain name 'a b'");
	strcpy(c->domain, "shmr");
	strcpy(c->dataplane_cpus, "0-");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "t.conf: dataplane_cpus: bad cpu list '0-'");
	strcpy(c->dataplane_cpus, "");
	strcpy(c->routers[0].routes[0].cpus, "2000");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: cpus: bad cpu list '2000'");
	conf_free(c);
}

/* @p text parsed as "t.conf" (it must parse), not validated. */
static struct shmr_config *loaded(const char *text)
{
	struct shmr_config *c = conf_new();
	char err[512];

	assert_int_equal(shmr_config_load_string(text, "t.conf", c, err,
						 sizeof(err)),
			 0);
	return c;
}

/* What the parser cannot see: a scatter-gather pool of 65 under
 * max_routes 100 (its tried set holds 64), and a hand-built router past
 * max_routes, routes or routee list; max_routes itself in range. */
static void routes_past_max_routes(void **state)
{
	static const char text[] =
		"max_routes = 100;\n"
		"routers = ( { name = \"sg\"; behaviour = \"scatter-gather\";\n"
		"  pool = { size = 65; program = \"w\"; }; } );\n";
	struct shmr_config *c = loaded(text);
	char err[512];

	(void)state;
	assert_int_equal(c->routers[0].nroutes, 65);
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: routers.[0].pool.size: 65 routes, "
				 "more than the routees of a collecting router "
				 "(64)");
	c->routers[0].behaviour = SHMR_BEH_ROUND_ROBIN;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	c->routers[0].pool.size = 0;
	c->max_routes = 64;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: routers.[0].routes.[64]: 65 "
				 "routes, more than max_routes (64)");
	c->routers[0].nroutes = 64;
	c->routers[0].nhash = 65;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:2: routers.[0].routees: 65 names, "
				 "more than max_routes (64)");
	c->routers[0].nhash = 0;
	c->max_routes = SHMR_MAX_ROUTES + 1;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf: domain: max_routes must be from 1 "
				 "to 128");
	conf_free(c);
}

static void load_entry_point(void **state)
{
	struct shmr_config *c = conf_new();
	char err[512];

	(void)state;
	/* NULL: the embedded default. */
	assert_int_equal(shmr_config_load(NULL, c, err, sizeof(err)), 0);
	assert_string_equal(c->source, "<default>");
	assert_string_equal(err, "");
	assert_int_equal(shmr_config_load("/nonexistent/shmr.conf", c, err,
					  sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/shmr.conf: cannot read: "
				 "No such file or directory");
	conf_free(c);
}

/* A pool's resizer out of Pekko's ranges: the line shmr-control printed
 * when it checked the ranges itself. */
static void resizer_ranges(void **state)
{
	static const char *const text =
		"routers = ( { name = \"w\"; behaviour = \"round-robin\";\n"
		"  pool = { size = 1; program = \"w\"; };\n"
		"  resizer = { rampup_rate = -1.0; }; } );\n";
	struct shmr_config *c = loaded(text);
	char err[512];

	(void)state;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: routers.[0].resizer.rampup_rate: "
				 "out of range (see docs/pools.md)");
	shmr_config_resizer_unset(&c->routers[0].resizer,
				  SHMR_RESIZER_OPTIMAL, 3);
	c->routers[0].resizer.chance_of_ramping_down_when_full = 1.5;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: routers.[0].optimal_resizer."
				 "chance_of_ramping_down_when_full: out of "
				 "range (see docs/pools.md)");
	c->routers[0].resizer.chance_of_ramping_down_when_full = 1.0;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	conf_free(c);
}

/* Routers and routes take the domain's endpoint slots, routers first, and
 * the admin endpoint one more: the first pool or route that does not fit
 * is named. */
static void endpoint_slots(void **state)
{
	struct shmr_config *c = conf_new();
	char text[8192], err[512];
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "max_endpoints = 128; routers = (\n");
	for (unsigned i = 0; i < 4; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "{ name = \"p%u\"; behaviour = "
				      "\"round-robin\";\n  pool = { size = 32; "
				      "program = \"w\"; }; },\n",
				      i);
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "{ name = \"r\"; behaviour = \"round-robin\";\n"
			      "  routes = ( { name = \"a\"; program = \"w\"; "
			      "} ); } );\n");
	assert_true(n < sizeof(text));
	assert_int_equal(shmr_config_load_string(text, "t.conf", c, err,
						 sizeof(err)),
			 0);
	/* 5 routers and 4 * 32 + 1 routes: p3's pool is the first not to
	 * fit (5 + 3 * 32 + 32 > 128). */
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:9: routers.[3].pool.size: more "
				 "routers and routes than endpoint slots (the "
				 "domain has 128, one of them the admin "
				 "endpoint's)");
	/* Without p3's routees, r has room for 128 - 1 - 5 - 3 * 32 = 26
	 * routes (the admin endpoint takes one); its 27th is named. */
	c->routers[3].nroutes = 0;
	c->routers[3].pool.size = 0;
	c->routers[4].nroutes = 26;
	for (unsigned k = 1; k < 26; k++) {
		c->routers[4].routes[k] = c->routers[4].routes[0];
		snprintf(c->routers[4].routes[k].name, SHMR_NAME_MAX, "a%u", k);
	}
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	c->routers[4].nroutes++;
	c->routers[4].routes[26] = c->routers[4].routes[0];
	snprintf(c->routers[4].routes[26].name, SHMR_NAME_MAX, "a26");
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:11: routers.[4].routes.[26]: more "
				 "routers and routes than endpoint slots (the "
				 "domain has 128, one of them the admin "
				 "endpoint's)");
	conf_free(c);
}

/* The auditor's file: one router and 15 routees fill max_endpoints = 16
 * exactly, which left no slot for the admin endpoint at start (exit 1);
 * 14 routees fit.  More routers than slots are named too (max_routers
 * may exceed max_endpoints). */
static void endpoint_slots_admin(void **state)
{
	static const char text[] =
		"domain = \"h5c\"; max_endpoints = 16;\n"
		"routers = ( { name = \"rr\"; behaviour = \"round-robin\";\n"
		"  pool = { size = 15; program = \"shmr-echo-worker\"; }; } );\n";
	struct shmr_config *c = loaded(text);
	char err[512];

	(void)state;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:3: routers.[0].pool.size: more "
				 "routers and routes than endpoint slots (the "
				 "domain has 16, one of them the admin "
				 "endpoint's)");
	c->routers[0].nroutes = c->routers[0].pool.size = 14;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	conf_free(c);

	c = conf_new();
	{
		char t[4096];
		size_t n = 0;

		n += (size_t)snprintf(t + n, sizeof(t) - n,
				      "max_endpoints = 16; max_routers = 16;\n"
				      "routers = (\n");
		for (unsigned i = 0; i < 16; i++)
			n += (size_t)snprintf(t + n, sizeof(t) - n,
					      "{ name = \"t%u\"; behaviour = "
					      "\"type\"; types = ( { type = 1; "
					      "route = \"x\"; } ); }%s\n",
					      i, i < 15 ? "," : " );");
		assert_true(n < sizeof(t));
		assert_int_equal(shmr_config_load_string(t, "t.conf", c, err,
							 sizeof(err)),
				 0);
	}
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:18: routers.[15]: more routers than "
				 "endpoint slots (the domain has 16, one of "
				 "them the admin endpoint's)");
	c->nrouters = 15;
	assert_int_equal(shmr_config_validate(c, err, sizeof(err)), 0);
	conf_free(c);
}

/* @p text into @p dir/@p name. */
static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Errors found after the parse name the file a setting came from: an
 * @include'd file's route, pool or router is named in that file, at its
 * line there, as the parser names a mistake it finds in it (the main
 * file's name with the included file's line pointed at the wrong text). */
static void included_files_named(void **state)
{
	char dir[] = "/tmp/h5-inc-XXXXXX", path[512], want[1024];
	struct shmr_config *c = conf_new();
	char err[SHMR_CONFIG_ERR_MAX];
	char routes[2048];
	size_t n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/inc", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	/* 15 routes, one a line from line 2: with the router and the admin
	 * endpoint, routes.[14] (line 16 of r16.inc) is one slot too many. */
	n += (size_t)snprintf(routes, sizeof(routes), "routes = (\n");
	for (unsigned k = 0; k < 15; k++)
		n += (size_t)snprintf(routes + n, sizeof(routes) - n,
				      "  { name = \"a%u\"; program = \"w\"; }%s\n",
				      k, k < 14 ? "," : " );");
	assert_true(n < sizeof(routes));
	write_file(dir, "inc/r16.inc", routes);
	write_file(dir, "inc7.conf",
		   "domain = \"h5i\";\n"
		   "max_endpoints = 16;\n"
		   "routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
		   "  @include \"inc/r16.inc\"\n"
		   "} );\n");
	snprintf(path, sizeof(path), "%s/inc7.conf", dir);
	assert_int_equal(shmr_config_load(path, c, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/inc/r16.inc:16: routers.[0].routes.[14]: more routers "
		 "and routes than endpoint slots (the domain has 16, one of "
		 "them the admin endpoint's)",
		 dir);
	assert_string_equal(err, want);

	/* A pool past a collecting router's routees (routes_fit()), in an
	 * included file at its line 2. */
	write_file(dir, "inc/sg.inc",
		   "behaviour = \"scatter-gather\";\n"
		   "pool = { size = 65; program = \"w\"; };\n");
	write_file(dir, "inc7.conf",
		   "max_routes = 100;\n"
		   "routers = ( { name = \"sg\";\n"
		   "  @include \"inc/sg.inc\"\n"
		   "} );\n");
	assert_int_equal(shmr_config_load(path, c, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "%s/inc/sg.inc:2: routers.[0].pool.size: 65 routes, more "
		 "than the routees of a collecting router (64)",
		 dir);
	assert_string_equal(err, want);

	/* A router's dso that cannot be loaded (dso_defaults.c), the
	 * router declared in an included file; and the main file's own
	 * settings still name the main file. */
	write_file(dir, "inc/d.inc",
		   "\n{ name = \"d\"; dso = \"nonexist.so\"; }\n");
	write_file(dir, "inc7.conf",
		   "routers = (\n"
		   "  @include \"inc/d.inc\"\n"
		   ");\n");
	assert_int_equal(shmr_config_load(path, c, err, sizeof(err)),
			 -ENOENT);
	snprintf(want, sizeof(want), "%s/inc/d.inc:2: routers.[0].dso: ",
		 dir);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("\"%s\", wanted \"%s...\"", err, want);
	write_file(dir, "inc7.conf",
		   "max_endpoints = 16;\n"
		   "routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
		   "  pool = { size = 15; program = \"w\"; }; } );\n");
	assert_int_equal(shmr_config_load(path, c, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:3: routers.[0].pool.size: ", path);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("\"%s\", wanted \"%s...\"", err, want);
	conf_free(c);
	for (const char *const *f = (const char *const[]){
		     "inc/r16.inc", "inc/sg.inc", "inc/d.inc", "inc7.conf",
		     "inc", NULL };
	     *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *f);
		assert_int_equal(remove(path), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* shmr_config_load() of @p text (as @p dir/d.conf): @p rc and an error
 * that starts with "@p dir/d.conf:" and then @p want. */
static void load_refused(const char *dir, const char *text, int rc,
			 const char *want)
{
	struct shmr_config *c = conf_new();
	char path[512], prefix[1024], err[SHMR_CONFIG_ERR_MAX] = "";

	write_file(dir, "d.conf", text);
	snprintf(path, sizeof(path), "%s/d.conf", dir);
	snprintf(prefix, sizeof(prefix), "%s:%s", path, want);
	if (shmr_config_load(path, c, err, sizeof(err)) != rc ||
	    strncmp(err, prefix, strlen(prefix)) != 0 || strchr(err, '\n'))
		fail_msg("for\n%s\ngot \"%s\", wanted %d, \"%s...\"", text,
			 err, rc, prefix);
	conf_free(c);
	assert_int_equal(unlink(path), 0);
}

/* A router's object that cannot be loaded is refused at load (--check
 * and the start), naming the setting, even when the router leaves the
 * object nothing to fill in: a consistent-hash router that gives its
 * virtual_nodes, a "dso" router (whose handlers are its dso: they failed
 * at start, exit 1, naming no setting), a handlers object of its own. */
static void missing_objects(void **state)
{
	char dir[] = "/tmp/h5-dso-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	load_refused(dir,
		     "domain = \"h5d\";\n"
		     "routers = ( { name = \"ch\"; behaviour = "
		     "\"consistent-hash\";\n"
		     "  dso = \"nonexist.so\"; virtual_nodes = 4;\n"
		     "  routes = ( { name = \"a\"; program = \"w\"; } ); } );\n",
		     -ENOENT, "2: routers.[0].dso: cannot load: ");
	load_refused(dir,
		     "domain = \"h5d\";\n"
		     "routers = ( { name = \"ok\"; behaviour = \"round-robin\";\n"
		     "  routes = ( { name = \"a\"; program = \"w\"; } ); },\n"
		     "  { name = \"d\"; behaviour = \"dso\";\n"
		     "  dso = \"nonexist.so\"; } );\n",
		     -ENOENT, "4: routers.[1].dso: cannot load: ");
	load_refused(dir,
		     "routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"
		     "  handlers = \"nonexist-handlers.so\";\n"
		     "  routes = ( { name = \"a\"; program = \"w\"; } ); } );\n",
		     -ENOENT, "1: routers.[0].handlers: cannot load: ");
	assert_int_equal(rmdir(dir), 0);
}

/* shmr_config_cpus_fit() of @p text (parsed as "t.conf") on @p host:
 * @p want ("" for fits). */
static void cpus_on(const cpu_set_t *host, const char *text,
		    const char *want)
{
	struct shmr_config *c = loaded(text);
	char err[512] = "unset";

	assert_int_equal(shmr_config_cpus_fit(c, host, err, sizeof(err)),
			 want[0] ? -EINVAL : 0);
	assert_string_equal(err, want);
	conf_free(c);
}

#define CPUS_ROUTER                                                        \
	"routers = ( { name = \"r\"; behaviour = \"round-robin\";\n"       \
	"  routes = ( { name = \"a\"; program = \"w\"; },\n"                \
	"    { name = \"b\"; program = \"w\"; cpus = \"%s\"; } ); } );\n"

/* The cpus a configuration names against those the host lets the
 * control plane (and what it starts) run on: dataplane_cpus = "7" on a
 * 2-cpu host passed --check and the start failed in the EAL (its usage
 * text, exit 1).  The setting is named at its line, and the host's set
 * with it; a pool's routees are named by its cpus. */
static void cpus_against_host(void **state)
{
	char text[1024], want[256];
	cpu_set_t host, two;
	unsigned hi = 0, lo = CPU_SETSIZE;

	(void)state;
	CPU_ZERO(&two);
	CPU_SET(0, &two);
	CPU_SET(1, &two);
	snprintf(text, sizeof(text),
		 "domain = \"h5p\";\n\ndataplane_cpus = \"7\";\n" CPUS_ROUTER,
		 "");
	cpus_on(&two, text,
		"t.conf:3: dataplane_cpus: cpu 7 is not one this host lets "
		"shmr-control run on (it has 0-1)");
	snprintf(text, sizeof(text), "dataplane_cpus = \"1\";\n" CPUS_ROUTER,
		 "0-1");
	cpus_on(&two, text, "");
	snprintf(text, sizeof(text), CPUS_ROUTER, "0,2");
	cpus_on(&two, text,
		"t.conf:3: routers.[0].routes.[1].cpus: cpu 2 is not one this "
		"host lets shmr-control run on (it has 0-1)");
	CPU_SET(2, &two);
	CPU_SET(4, &two);
	snprintf(text, sizeof(text), CPUS_ROUTER, "3");
	cpus_on(&two, text,
		"t.conf:3: routers.[0].routes.[1].cpus: cpu 3 is not one this "
		"host lets shmr-control run on (it has 0-2,4)");
	cpus_on(&two,
		"routers = ( { name = \"p\"; behaviour = \"round-robin\";\n"
		"  pool = { size = 3; program = \"w\";\n"
		"    cpus = \"0-5\"; }; } );\n",
		"t.conf:2: routers.[0].pool.cpus: cpu 3 is not one this host "
		"lets shmr-control run on (it has 0-2,4)");

	/* This host, read now: one past its highest cpu is refused, its
	 * lowest is not. */
	assert_int_equal(sched_getaffinity(0, sizeof(host), &host), 0);
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &host)) {
			hi = c;
			if (lo == CPU_SETSIZE)
				lo = c;
		}
	if (hi + 1 < CPU_SETSIZE) {
		snprintf(text, sizeof(text),
			 "dataplane_cpus = \"%u\";\n" CPUS_ROUTER, hi + 1, "");
		snprintf(want, sizeof(want),
			 "t.conf:1: dataplane_cpus: cpu %u is not one this "
			 "host lets shmr-control run on (it has ",
			 hi + 1);
		{
			struct shmr_config *c = loaded(text);
			char err[512];

			assert_int_equal(shmr_config_cpus_fit(c, &host, err,
							      sizeof(err)),
					 -EINVAL);
			if (strncmp(err, want, strlen(want)) != 0)
				fail_msg("\"%s\", wanted \"%s...\"", err,
					 want);
			conf_free(c);
		}
	}
	snprintf(text, sizeof(text), "dataplane_cpus = \"%u\";\n" CPUS_ROUTER,
		 lo, "");
	cpus_on(&host, text, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_list_messages),
		cmocka_unit_test(validate_messages),
		cmocka_unit_test(routes_past_max_routes),
		cmocka_unit_test(load_entry_point),
		cmocka_unit_test(resizer_ranges),
		cmocka_unit_test(endpoint_slots),
		cmocka_unit_test(endpoint_slots_admin),
		cmocka_unit_test(included_files_named),
		cmocka_unit_test(missing_objects),
		cmocka_unit_test(cpus_against_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
