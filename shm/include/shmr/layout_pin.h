/*
 * The shared-memory layout pinned (included by <shmr/layout.h>, not for
 * direct inclusion): for each struct that attach maps, its size and
 * alignment, then each field's offset and size, in bytes, as layout
 * version 5 has them.  Any change to one of them fails to compile in every
 * part that includes the layout.  Then bump SHMR_LAYOUT_VERSION_DIGITS (an
 * old peer's ATTACH then fails with SHMR_E_VERSION instead of reading the
 * wrong bytes) and write the new values here: the first assert below
 * insists on both.
 *
 * The numbers are literal on purpose: a limit such as SHMR_MAX_ENDPOINTS
 * changes the layout as surely as a new field does.
 */
#ifndef SHMR_LAYOUT_PIN_H
#define SHMR_LAYOUT_PIN_H

#ifndef SHMR_LAYOUT_H
#error "include <shmr/layout.h>, which includes this file"
#endif

static_assert(SHMR_LAYOUT_VERSION == 5u,
	      "a new layout version: pin its sizes and offsets here");

#define SHMR_LAYOUT_SIZE(s, size, align)                                   \
	static_assert(sizeof(struct s) == (size) &&                        \
			      alignof(struct s) == (align),                \
		      "struct " #s " changed: bump SHMR_LAYOUT_VERSION")
#define SHMR_LAYOUT_PIN(s, f, off, size)                                   \
	static_assert(offsetof(struct s, f) == (off) &&                    \
			      sizeof(((struct s *)0)->f) == (size),        \
		      "struct " #s "." #f " moved: bump SHMR_LAYOUT_VERSION")
/* A flexible array member has an offset, no size. */
#define SHMR_LAYOUT_OFFSET(s, f, off)                                      \
	static_assert(offsetof(struct s, f) == (off),                      \
		      "struct " #s "." #f " moved: bump SHMR_LAYOUT_VERSION")

SHMR_LAYOUT_SIZE(shmr_pid, 8, 4);
SHMR_LAYOUT_PIN(shmr_pid, slot, 0, 4);
SHMR_LAYOUT_PIN(shmr_pid, gen, 4, 4);

SHMR_LAYOUT_SIZE(shmr_msg, 48, 8);
SHMR_LAYOUT_PIN(shmr_msg, kind, 0, 1);
SHMR_LAYOUT_PIN(shmr_msg, flags, 1, 1);
SHMR_LAYOUT_PIN(shmr_msg, priority, 2, 1);
SHMR_LAYOUT_PIN(shmr_msg, hops, 3, 1);
SHMR_LAYOUT_PIN(shmr_msg, type, 4, 4);
SHMR_LAYOUT_PIN(shmr_msg, from, 8, 8);
SHMR_LAYOUT_PIN(shmr_msg, to, 16, 8);
SHMR_LAYOUT_PIN(shmr_msg, ref, 24, 8);
SHMR_LAYOUT_PIN(shmr_msg, key, 32, 8);
SHMR_LAYOUT_PIN(shmr_msg, len, 40, 4);
SHMR_LAYOUT_PIN(shmr_msg, status, 44, 4);
SHMR_LAYOUT_OFFSET(shmr_msg, data, 48);

SHMR_LAYOUT_SIZE(shmr_bell, 64, 64);
SHMR_LAYOUT_PIN(shmr_bell, seq, 0, 4);
SHMR_LAYOUT_PIN(shmr_bell, sleepers, 4, 4);

SHMR_LAYOUT_SIZE(shmr_ep_shared, 256, 64);
SHMR_LAYOUT_PIN(shmr_ep_shared, state, 0, 4);
SHMR_LAYOUT_PIN(shmr_ep_shared, gen, 4, 4);
SHMR_LAYOUT_PIN(shmr_ep_shared, kind, 8, 4);
SHMR_LAYOUT_PIN(shmr_ep_shared, os_pid, 12, 4);
SHMR_LAYOUT_PIN(shmr_ep_shared, name, 16, 32);
SHMR_LAYOUT_PIN(shmr_ep_shared, bell, 64, 64);
SHMR_LAYOUT_PIN(shmr_ep_shared, quarantined, 128, 4);
SHMR_LAYOUT_PIN(shmr_ep_shared, pad0, 132, 4);
SHMR_LAYOUT_PIN(shmr_ep_shared, bad_slots, 136, 8);
SHMR_LAYOUT_PIN(shmr_ep_shared, busy, 192, 4);

SHMR_LAYOUT_SIZE(shmr_spec_route, 48, 4);
SHMR_LAYOUT_PIN(shmr_spec_route, name, 0, 32);
SHMR_LAYOUT_PIN(shmr_spec_route, pid, 32, 8);
SHMR_LAYOUT_PIN(shmr_spec_route, state, 40, 4);
SHMR_LAYOUT_PIN(shmr_spec_route, pad, 44, 4);

SHMR_LAYOUT_SIZE(shmr_spec_type, 36, 4);
SHMR_LAYOUT_PIN(shmr_spec_type, type, 0, 4);
SHMR_LAYOUT_PIN(shmr_spec_type, target, 4, 32);

SHMR_LAYOUT_SIZE(shmr_spec_router, 7564, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, name, 0, 32);
SHMR_LAYOUT_PIN(shmr_spec_router, pid, 32, 8);
SHMR_LAYOUT_PIN(shmr_spec_router, behaviour, 40, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, flags, 44, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, nroutes, 48, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, ntypes, 52, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, nhash, 56, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, dso, 60, 160);
SHMR_LAYOUT_PIN(shmr_spec_router, dso_arg, 220, 160);
SHMR_LAYOUT_PIN(shmr_spec_router, routes, 380, 1536);
SHMR_LAYOUT_PIN(shmr_spec_router, types, 1916, 2304);
SHMR_LAYOUT_PIN(shmr_spec_router, hash, 4220, 1024);
SHMR_LAYOUT_PIN(shmr_spec_router, ncall_types, 5244, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, call_types, 5248, 2304);
SHMR_LAYOUT_PIN(shmr_spec_router, vnodes, 7552, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, within_ms, 7556, 4);
SHMR_LAYOUT_PIN(shmr_spec_router, interval_ms, 7560, 4);

SHMR_LAYOUT_SIZE(shmr_spec_reg, 40, 4);
SHMR_LAYOUT_PIN(shmr_spec_reg, name, 0, 32);
SHMR_LAYOUT_PIN(shmr_spec_reg, pid, 32, 8);

SHMR_LAYOUT_SIZE(shmr_spec, 66176, 64);
SHMR_LAYOUT_PIN(shmr_spec, seq, 0, 8);
SHMR_LAYOUT_PIN(shmr_spec, version, 8, 8);
SHMR_LAYOUT_PIN(shmr_spec, nrouters, 16, 4);
SHMR_LAYOUT_PIN(shmr_spec, nreg, 20, 4);
SHMR_LAYOUT_PIN(shmr_spec, nactive, 24, 4);
SHMR_LAYOUT_PIN(shmr_spec, pad, 28, 4);
SHMR_LAYOUT_PIN(shmr_spec, active, 32, 512);
SHMR_LAYOUT_PIN(shmr_spec, routers, 544, 60512);
SHMR_LAYOUT_PIN(shmr_spec, registry, 61056, 5120);

SHMR_LAYOUT_SIZE(shmr_lcore_stats, 4224, 64);
SHMR_LAYOUT_PIN(shmr_lcore_stats, polls, 0, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, rx, 8, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, forwarded, 16, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, discarded, 24, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, failed, 32, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, bad, 40, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, sleeps, 48, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, table_version, 56, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, admin, 64, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, admin_dropped, 72, 8);
SHMR_LAYOUT_PIN(shmr_lcore_stats, router_forwarded, 80, 1024);
SHMR_LAYOUT_PIN(shmr_lcore_stats, router_discarded, 1104, 1024);
SHMR_LAYOUT_PIN(shmr_lcore_stats, router_failed, 2128, 1024);
SHMR_LAYOUT_PIN(shmr_lcore_stats, ep_delivered, 3152, 1024);

SHMR_LAYOUT_SIZE(shmr_domain_hdr, 512, 64);
SHMR_LAYOUT_PIN(shmr_domain_hdr, magic, 0, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, layout_version, 8, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, ready, 12, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, size, 16, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, name, 24, 32);
SHMR_LAYOUT_PIN(shmr_domain_hdr, slot_size, 56, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, lane_size, 60, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, nlcores, 64, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, max_endpoints, 68, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, poll_mode, 72, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, spin_polls, 76, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, lane_stride, 80, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, ep_off, 88, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, spec_off, 96, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, counters_off, 104, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, ctl_off, 112, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, lanes_off, 120, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, control_pid, 128, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, dataplane_pid, 132, 4);
SHMR_LAYOUT_PIN(shmr_domain_hdr, dataplane_starts, 136, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, admin_pid, 144, 8);
SHMR_LAYOUT_PIN(shmr_domain_hdr, lcore_bell, 192, 256);
SHMR_LAYOUT_PIN(shmr_domain_hdr, ctl_bell, 448, 64);
#undef SHMR_LAYOUT_SIZE
#undef SHMR_LAYOUT_PIN
#undef SHMR_LAYOUT_OFFSET

#endif
