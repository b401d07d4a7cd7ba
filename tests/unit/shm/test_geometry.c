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
					0, 0, 0, 0
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
				   SHMR_POLL_ADAPTIVE, 0, 0, 0, 0 };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepted_is_ring_size),
		cmocka_unit_test(lcores_and_poll_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
