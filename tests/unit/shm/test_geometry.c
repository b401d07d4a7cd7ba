/*
 * The geometry rule (<shmr/geometry.h>) is written without DPDK, so that
 * the configuration loader checks a geometry without it.  This test links
 * DPDK and holds the two together: every slot and lane size the rule
 * accepts is one rte_ring accepts (rte_ring_get_memsize_elem() gives a
 * size), so a configuration that loads is one the control plane can lay
 * out.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <shmr/domain.h>
#include <shmr/geometry.h>

static void accepted_is_ring_size(void **state)
{
	unsigned accepted = 0;

	(void)state;
	for (uint32_t slot = 0; slot <= SHMR_SLOT_MAX + 64; slot += 4) {
		for (uint32_t shift = 0; shift <= 18; shift++) {
			const uint32_t lanes[] = { 1u << shift,
						   (1u << shift) + 1,
						   (1u << shift) - 1 };

			for (unsigned k = 0; k < 3; k++) {
				struct shmr_geometry g = {
					slot, lanes[k], 1, SHMR_POLL_ADAPTIVE,
					0, 0, 0, 0, 0
				};
				struct shmr_domain_hdr h;
				ssize_t ring;

				if (shmr_geometry_check(&g, NULL) < 0)
					continue;
				accepted++;
				ring = rte_ring_get_memsize_elem(slot,
								 lanes[k]);
				if (ring <= 0)
					fail_msg("slot %u lane %u: accepted, "
						 "but rte_ring says %zd",
						 slot, lanes[k], ring);
				assert_true(shmr_layout_plan(&g, &h) > 0);
				assert_true(h.lane_stride >= (uint64_t)ring);
			}
		}
	}
	/* 505 slot sizes (64..4096 by 8) times 11 lane sizes (64..65536). */
	assert_int_equal(accepted, 505 * 11);
}

static void lcores_and_poll_mode(void **state)
{
	struct shmr_geometry g = { SHMR_SLOT_DEFAULT, SHMR_LANE_DEFAULT, 1,
				   SHMR_POLL_ADAPTIVE, 0, 0, 0, 0, 0 };
	const char *why = NULL;

	(void)state;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	assert_null(why);
	g.nlcores = SHMR_MAX_LCORES + 1;
	assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
	assert_string_equal(why, "lcores must be from 1 to 32");
	g.nlcores = SHMR_MAX_LCORES;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	/* max_endpoints: 0 is the default; 16 to 16384. */
	g.max_endpoints = SHMR_MAX_ENDPOINTS + 1;
	assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
	assert_string_equal(why, "max_endpoints must be from 16 to 16384");
	g.max_endpoints = SHMR_MIN_ENDPOINTS - 1;
	assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
	g.max_endpoints = SHMR_MAX_ENDPOINTS;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	g.max_endpoints = 0;
	assert_int_equal(shmr_geometry_endpoints(&g), SHMR_ENDPOINTS_DEFAULT);
	g.poll_mode = SHMR_POLL_BUSY + 1;
	assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
	assert_string_equal(why, "poll_mode must be adaptive or busy");
}

/* max_names and max_types: ranges, and the regions the plan gives them
 * (the registry at names_off, the type maps at types_off), each as large
 * as its limit asks and no larger. */
static void names_and_types(void **state)
{
	struct shmr_geometry g = { .slot_size = SHMR_SLOT_DEFAULT,
				   .lane_size = 64, .nlcores = 1 };
	struct shmr_domain_hdr h;
	const char *why = NULL;

	/* Each value just outside its range, with the reason. */
	static const struct {
		uint32_t names, types;
		const char *why;
	} bad[] = {
		{ SHMR_MAX_NAMES + 1, 0, "max_names must be from 16 to 16384" },
		{ SHMR_MIN_NAMES - 1, 0, "max_names must be from 16 to 16384" },
		{ 0, SHMR_MAX_TYPES + 1, "max_types must be from 1 to 1024" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		g.max_names = bad[i].names;
		g.max_types = bad[i].types;
		assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
		assert_string_equal(why, bad[i].why);
	}
	g.max_names = SHMR_MAX_NAMES;
	g.max_types = SHMR_MAX_TYPES;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	assert_true(shmr_layout_plan(&g, &h) > 0);
	assert_int_equal(h.max_names, SHMR_MAX_NAMES);
	assert_int_equal(h.max_types, SHMR_MAX_TYPES);
	assert_true(h.types_off - h.names_off >=
		    (uint64_t)SHMR_MAX_NAMES * sizeof(struct shmr_spec_reg));
	assert_true(h.counters_off - h.types_off >=
		    shmr_spec_types_size(SHMR_MAX_TYPES, SHMR_ROUTERS_DEFAULT));
	/* 0 is the default (128 names, 64 entries a map). */
	g.max_names = g.max_types = 0;
	assert_true(shmr_layout_plan(&g, &h) > 0);
	assert_int_equal(h.max_names, SHMR_NAMES_DEFAULT);
	assert_int_equal(h.max_types, SHMR_TYPES_DEFAULT);
	assert_int_equal(h.types_off - h.names_off,
			 (SHMR_NAMES_DEFAULT * sizeof(struct shmr_spec_reg) +
			  4095) / 4096 * 4096);
}

/* max_routers sizes the spec and the type maps: 1 to SHMR_MAX_ROUTERS,
 * 0 the default. */
static void routers_size_the_spec(void **state)
{
	struct shmr_geometry g = { SHMR_SLOT_DEFAULT, SHMR_LANE_DEFAULT, 1,
				   SHMR_POLL_ADAPTIVE, 0, 0, 0, 0, 0 };
	struct shmr_domain_hdr h;
	const char *why = NULL;

	(void)state;
	assert_true(shmr_layout_plan(&g, &h) > 0);
	assert_int_equal(h.max_routers, SHMR_ROUTERS_DEFAULT);
	assert_true(h.names_off - h.spec_off >=
		    shmr_spec_size(SHMR_ROUTERS_DEFAULT));
	g.max_routers = SHMR_MAX_ROUTERS;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	assert_true(shmr_layout_plan(&g, &h) > 0);
	assert_int_equal(h.max_routers, SHMR_MAX_ROUTERS);
	assert_true(h.names_off - h.spec_off >=
		    shmr_spec_size(SHMR_MAX_ROUTERS));
	assert_true(h.counters_off - h.types_off >=
		    shmr_spec_types_size(SHMR_TYPES_DEFAULT,
					 SHMR_MAX_ROUTERS));
	g.max_routers = SHMR_MAX_ROUTERS + 1;
	assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
	assert_non_null(strstr(why, "max_routers"));
	assert_true(shmr_layout_plan(&g, &h) < 0);
}

/* Specs with room for @p nr routers, @p src of 0x11, @p dst of 0xee. */
#define SPEC_R 4u
static void specs_new(struct shmr_spec **src, struct shmr_spec **dst)
{
	*src = malloc(shmr_spec_size(SPEC_R));
	*dst = malloc(shmr_spec_size(SPEC_R));
	assert_non_null(*src);
	assert_non_null(*dst);
	memset(*src, 0x11, shmr_spec_size(SPEC_R));
	memset(*dst, 0xee, shmr_spec_size(SPEC_R));
}

/* A spec copy takes what is used and nothing more: the counts, the first
 * nrouters routers, the first nactive endpoints (what a change costs). */
static void spec_copy_used(void **state)
{
	struct shmr_spec *src, *dst;

	(void)state;
	specs_new(&src, &dst);
	src->nrouters = 2;
	src->nactive = 3;
	shmr_spec_copy(dst, src, 0, SPEC_R);
	assert_int_equal(dst->nrouters, 2);
	assert_int_equal(dst->nactive, 3);
	assert_memory_equal(dst->routers, src->routers,
			    2 * sizeof(src->routers[0]));
	assert_int_equal(((unsigned char *)&dst->routers[2])[0], 0xee);
	assert_int_equal(dst->active[2], src->active[2]);
	assert_int_equal(dst->active[3], 0xeeeeeeeeu);
	/* Counts past the arrays are bounded: nrouters by the reader's
	 * max_routers (the room both have), whatever the spec says. */
	src->nrouters = 1000;
	src->nactive = UINT32_MAX;
	shmr_spec_copy(dst, src, 0, SPEC_R);
	assert_memory_equal(dst->active, src->active, sizeof(src->active));
	assert_memory_equal(dst->routers, src->routers,
			    SPEC_R * sizeof(src->routers[0]));
	free(src);
	free(dst);
}

/* A router's copy takes its fields, its first nroutes routes and its
 * first nhash names, of the SHMR_MAX_ROUTES it has room for; counts past
 * them are bounded. */
static void spec_copy_routes_used(void **state)
{
	struct shmr_spec *src, *dst;
	struct shmr_spec_router *sr, *dr;

	(void)state;
	specs_new(&src, &dst);
	sr = &src->routers[0];
	dr = &dst->routers[0];
	src->nrouters = 1;
	src->nactive = 0;
	sr->nroutes = 100;
	sr->nhash = 40;
	shmr_spec_copy(dst, src, 0, SPEC_R);
	assert_int_equal(dr->nroutes, 100);
	assert_int_equal(dr->nhash, 40);
	assert_memory_equal(dr->routes, sr->routes, 100 * sizeof(sr->routes[0]));
	assert_int_equal(((unsigned char *)&dr->routes[100])[0], 0xee);
	assert_memory_equal(dr->hash, sr->hash, 40 * sizeof(sr->hash[0]));
	assert_int_equal((unsigned char)dr->hash[40][0], 0xee);
	/* The fields after the arrays are copied. */
	assert_int_equal(dr->ncall_types, sr->ncall_types);
	assert_memory_equal(dr->node_prefix, sr->node_prefix,
			    sizeof(sr->node_prefix));
	/* Forged counts: no more than the room. */
	sr->nroutes = UINT32_MAX;
	sr->nhash = SHMR_MAX_ROUTES + 1;
	shmr_spec_copy(dst, src, 0, SPEC_R);
	assert_memory_equal(dr->routes, sr->routes, sizeof(sr->routes));
	assert_memory_equal(dr->hash, sr->hash, sizeof(sr->hash));
	assert_int_equal(((unsigned char *)&dst->routers[1])[0], 0xee);
	free(src);
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepted_is_ring_size),
		cmocka_unit_test(routers_size_the_spec),
		cmocka_unit_test(lcores_and_poll_mode),
		cmocka_unit_test(names_and_types),
		cmocka_unit_test(spec_copy_used),
		cmocka_unit_test(spec_copy_routes_used),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
