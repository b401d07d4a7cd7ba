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
					0, 0, 0, 0, 0, 0
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
				   SHMR_POLL_ADAPTIVE, 0, 0, 0, 0, 0, 0 };
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
				   SHMR_POLL_ADAPTIVE, 0, 0, 0, 0, 0, 0 };
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

/* A spec copy takes what is used and nothing more: the counts and the
 * first nrouters routers; the active list, the first nactive endpoints
 * of its region (what a change costs). */
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
	assert_int_equal(shmr_spec_active_used(3, 1024), 3 * sizeof(uint32_t));
	/* Counts past the arrays are bounded: nrouters by the reader's
	 * max_routers (the room both have), nactive by its max_endpoints,
	 * whatever the spec says. */
	src->nrouters = 1000;
	shmr_spec_copy(dst, src, 0, SPEC_R);
	assert_memory_equal(dst->routers, src->routers,
			    SPEC_R * sizeof(src->routers[0]));
	assert_int_equal(shmr_spec_active_used(UINT32_MAX, 1024),
			 1024 * sizeof(uint32_t));
	free(src);
	free(dst);
}

/* max_endpoints sizes the active list: its region holds max_endpoints
 * entries, between the spec and the registry. */
static void endpoints_size_the_active_list(void **state)
{
	struct shmr_geometry g = { .slot_size = SHMR_SLOT_DEFAULT,
				   .lane_size = 64, .nlcores = 1,
				   .max_endpoints = SHMR_MIN_ENDPOINTS };
	struct shmr_domain_hdr few, most;

	(void)state;
	assert_true(shmr_layout_plan(&g, &few) > 0);
	g.max_endpoints = SHMR_MAX_ENDPOINTS;
	assert_true(shmr_layout_plan(&g, &most) > 0);
	assert_true(few.active_off >= few.spec_off +
					      shmr_spec_size(few.max_routers));
	assert_true(few.names_off - few.active_off >=
		    SHMR_MIN_ENDPOINTS * sizeof(uint32_t));
	assert_true(most.names_off - most.active_off >=
		    SHMR_MAX_ENDPOINTS * sizeof(uint32_t));
	/* 16 endpoints: one page, not the 64 KiB 16384 take. */
	assert_int_equal(few.names_off - few.active_off, 4096);
	assert_int_equal(most.names_off - most.active_off, 65536);
}

/* max_routes sizes the route region: 1 to SHMR_MAX_ROUTES, 0 the
 * default; the domain grows with it (max_routers blocks of max_routes
 * routes and names) and nothing else does. */
static void routes_size_the_region(void **state)
{
	struct shmr_geometry g = { SHMR_SLOT_DEFAULT, SHMR_LANE_DEFAULT, 1,
				   SHMR_POLL_ADAPTIVE, 0, 0, 0, 0,
				   SHMR_MAX_ROUTERS, 0 };
	struct shmr_domain_hdr h, one, most;
	const char *why = NULL;

	(void)state;
	assert_true(shmr_layout_plan(&g, &h) > 0);
	assert_int_equal(h.max_routes, SHMR_ROUTES_DEFAULT);
	assert_true(h.routes_off >= h.types_off +
				       shmr_spec_types_size(h.max_types,
							    h.max_routers));
	assert_true(h.counters_off - h.routes_off >=
		    shmr_spec_routes_size(SHMR_ROUTES_DEFAULT,
					  SHMR_MAX_ROUTERS));
	g.max_routes = 1;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	assert_true(shmr_layout_plan(&g, &one) > 0);
	assert_int_equal(one.max_routes, 1);
	g.max_routes = SHMR_MAX_ROUTES;
	assert_int_equal(shmr_geometry_check(&g, &why), 0);
	assert_true(shmr_layout_plan(&g, &most) > 0);
	assert_int_equal(most.max_routes, SHMR_MAX_ROUTES);
	assert_true(most.counters_off - most.routes_off >=
		    shmr_spec_routes_size(SHMR_MAX_ROUTES, SHMR_MAX_ROUTERS));
	/* The spec itself is the same size whatever max_routes says: one
	 * route a router makes a smaller domain than 128, by the region. */
	assert_int_equal(one.names_off - one.spec_off,
			 most.names_off - most.spec_off);
	assert_true(most.counters_off - one.counters_off >=
		    shmr_spec_routes_size(SHMR_MAX_ROUTES, SHMR_MAX_ROUTERS) -
			    shmr_spec_routes_size(1, SHMR_MAX_ROUTERS));
	g.max_routes = SHMR_MAX_ROUTES + 1;
	assert_int_equal(shmr_geometry_check(&g, &why), -EINVAL);
	assert_string_equal(why, "max_routes must be from 1 to 128");
	assert_true(shmr_layout_plan(&g, &h) < 0);
}

/* Route regions of @p MR routes a router, SPEC_R routers: @p src of 0x11,
 * @p dst of 0xee. */
#define MR 48u
static void regions_new(unsigned char **src, unsigned char **dst)
{
	size_t n = shmr_spec_routes_size(MR, SPEC_R);

	*src = malloc(n);
	*dst = malloc(n);
	assert_non_null(*src);
	assert_non_null(*dst);
	memset(*src, 0x11, n);
	memset(*dst, 0xee, n);
}

/* A router's routes and names: the copy takes its first nroutes routes
 * and its first nhash names, in its own block of the region; counts past
 * max_routes are bounded by it, and no other router's block is written. */
static void spec_copy_routes_used(void **state)
{
	unsigned char *src, *dst;
	struct shmr_spec_router r = { .nroutes = 30, .nhash = 20 };
	struct shmr_spec_route *sq, *dq;
	char(*sh)[SHMR_NAME_MAX], (*dh)[SHMR_NAME_MAX];
	const size_t stride = shmr_spec_routes_stride(MR);

	(void)state;
	regions_new(&src, &dst);
	assert_int_equal(stride, MR * (sizeof(struct shmr_spec_route) +
				       SHMR_NAME_MAX));
	sq = shmr_spec_routes_at(src, MR, 1);
	dq = shmr_spec_routes_at(dst, MR, 1);
	sh = shmr_spec_hash_at(src, MR, 1);
	dh = shmr_spec_hash_at(dst, MR, 1);
	/* Router 1's block: its routes, then its names, past router 0's. */
	assert_ptr_equal((unsigned char *)sq, src + stride);
	assert_ptr_equal((unsigned char *)sh,
			 src + stride + MR * sizeof(struct shmr_spec_route));
	shmr_spec_routes_copy(dst, src, MR, 1, &r);
	assert_memory_equal(dq, sq, 30 * sizeof(*sq));
	assert_int_equal(((unsigned char *)&dq[30])[0], 0xee);
	assert_memory_equal(dh, sh, 20 * sizeof(*sh));
	assert_int_equal((unsigned char)dh[20][0], 0xee);
	assert_int_equal(dst[stride - 1], 0xee); /* router 0's block */
	/* Forged counts: no more than max_routes, router 2's block as it
	 * was. */
	r.nroutes = UINT32_MAX;
	r.nhash = MR + 1;
	shmr_spec_routes_copy(dst, src, MR, 1, &r);
	assert_memory_equal(dq, sq, MR * sizeof(*sq));
	assert_memory_equal(dh, sh, MR * sizeof(*sh));
	assert_int_equal(dst[2 * stride], 0xee);
	assert_int_equal(dst[stride - 1], 0xee);
	free(src);
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepted_is_ring_size),
		cmocka_unit_test(routers_size_the_spec),
		cmocka_unit_test(routes_size_the_region),
		cmocka_unit_test(lcores_and_poll_mode),
		cmocka_unit_test(names_and_types),
		cmocka_unit_test(spec_copy_used),
		cmocka_unit_test(endpoints_size_the_active_list),
		cmocka_unit_test(spec_copy_routes_used),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
