/*
 * Close loses nothing: a client's outbound lanes are taken to the end.
 *
 * A message shmr_send() accepted sits in the sender's outbound lane until
 * an lcore forwards it; the lcores poll a slot only while the spec lists
 * it.  A client that closes waits (bounded) for its lanes to drain first
 * (shm/client.c), but one that exits or is killed right after sending
 * cannot, and one whose close gave up did not.  So a client slot that is
 * closed or whose connection goes is not freed at once: the model keeps
 * it in the spec without owner or names (drain POLL, model.c), and this
 * file frees it once both its outbound lanes are empty (cons.tail ==
 * prod.tail: the dataplane releases a slot only after it handled it).
 *
 * Bounded: once the dataplane has taken none of them for
 * SHMR_CTL_DRAIN_MS (it is stopped, or the target inbox stays full) the
 * slot is given up.  The bound is on a stall, so a dataplane that is slow
 * but taking (a loaded machine) loses nothing; the whole wait is at most
 * a lane's capacity of bounds.  A given-up slot is freed but not reused
 * (drain COUNT) until every lcore has applied the spec that dropped it:
 * only then does nobody take from its lanes, and what is left there is
 * exactly what was dropped.  It is counted in close_dropped (STATUS) and
 * logged, never silently lost, and what of it was sent to a router is
 * dead-lettered there (`shmrctl dlq list`, `dlq replay`); the lanes are
 * initialised again when the slot is reused.
 *
 * Nothing in the lanes is trusted: a lane whose geometry or tails are
 * not sound (shmr_lane_unconsumed() < 0) cannot be judged, is not waited
 * for (the dataplane quarantines it) and counts as unknown: logged.
 *
 * An idle appliance is not woken: the loop's timer is armed only while
 * something drains, every millisecond for the first 20 ms (a dataplane at
 * work empties a lane in microseconds) after the last progress, then
 * every 20 ms.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <shmr/domain.h>


#include "arena.h"
#include "control_internal.h"
#include "dlq.h"
#include "drain.h"

#define DRAIN_FAST_MS 20u
#define DRAIN_SLOW_TICK_MS 20u
#define COUNT_TICK_MS 100u

/* Messages in slot @p slot's outbound lanes the dataplane has not
 * finished with; -1 when a lane cannot be judged. */
static int64_t out_left(const struct shmr_ctl_domain *d, uint32_t slot)
{
	uint32_t nl = d->geo.nlcores, ls = d->geo.lane_size;
	int64_t a = shmr_lane_unconsumed(
		shmr_ctl_dom_lane(d, slot, SHMR_LANE_OUT(nl)), ls);
	int64_t b = shmr_lane_unconsumed(
		shmr_ctl_dom_lane(d, slot, SHMR_LANE_OUT_HIGH(nl)), ls);

	return a < 0 || b < 0 ? -1 : a + b;
}

/* Router @p m sends to, or -1. */
static int router_of(const struct shmr_ctl_model *m, struct shmr_pid to)
{
	for (unsigned r = 0; r < m->nrouters; r++)
		if (m->routers[r].pid.slot == to.slot &&
		    m->routers[r].pid.gen == to.gen)
			return (int)r;
	return -1;
}

unsigned shmr_ctl_drain_dead_letter(const struct shmr_ctl_domain *d,
				    const struct shmr_ctl_model *m,
				    struct shmr_ctl_dlq_files *dlq,
				    const struct rte_ring *r, int64_t left,
				    int router, int32_t status)
{
	uint64_t buf[SHMR_SLOT_MAX / sizeof(uint64_t)];
	struct shmr_msg *msg = (struct shmr_msg *)buf;
	uint32_t ss = d->geo.slot_size, mask = d->geo.lane_size - 1;
	const unsigned char *slots = (const unsigned char *)(r + 1);
	uint32_t ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	unsigned written = 0;

	for (int64_t k = 0; k < left; k++) {
		const void *p;
		uint32_t plen = 0;
		int ri, fd;

		memcpy(buf, slots + (size_t)((ct + (uint32_t)k) & mask) * ss,
		       ss);
		ri = router >= 0 ? router : router_of(m, msg->to);
		if (ri < 0 || msg->len > ss - SHMR_HDR_SIZE)
			continue;
		msg->flags = (uint8_t)((msg->flags & ~SHMR_F_ROUTE_NAME) |
				       SHMR_F_ROUTE_FAILED);
		msg->status = status;
		fd = shmr_ctl_dlq_fd(dlq, (unsigned)ri);
		/* A payload in an arena buffer goes into the file (the
		 * buffer is freed with the lane's slots afterwards). */
		p = (msg->flags & SHMR_F_ARENA)
			    ? shmr_ctl_arena_payload(d, msg, &plen)
			    : NULL;
		if (fd >= 0 &&
		    shmr_ctl_dlq_append_payload(fd, msg, ss, p, plen) == 0)
			written++;
	}
	return written;
}

static uint64_t sooner(uint64_t next, uint64_t at)
{
	return next == 0 || at < next ? at : next;
}

uint64_t shmr_ctl_drain_poll(struct shmr_ctl_domain *d,
			     struct shmr_ctl_model *m,
			     struct shmr_ctl_dlq_files *dlq, uint64_t now)
{
	uint64_t next = 0, seen = 0;
	int seen_read = 0;

	if (!d->base)
		return 0;
	for (uint32_t i = 0; i < m->alloc.nslots; i++) {
		struct shmr_ctl_slot *s = &m->alloc.slots[i];
		struct shmr_pid pid = { i, s->gen };
		int64_t left;

		if (s->drain == SHMR_CTL_DRAIN_POLL) {
			left = out_left(d, i);
			if (left <= 0) {
				if (left < 0)
					shmr_ctl_warn("endpoint %u (closed): an "
						      "outbound lane is "
						      "corrupted: what it held "
						      "is lost",
						      i);
				shmr_ctl_model_drain_end(m, pid);
				next = sooner(next, now + COUNT_TICK_MS);
				continue;
			}
			/* The bound is on stalling, not on the whole: a
			 * dataplane that keeps taking (a busy machine) is
			 * waited for; at most a lane's worth of bounds. */
			if (!s->drain_since || left < s->drain_left) {
				s->drain_since = now;
				s->drain_left = left;
			}
			if (now - s->drain_since >= SHMR_CTL_DRAIN_MS) {
				shmr_ctl_warn("endpoint %u (closed): the "
					      "dataplane took none of its "
					      "last %" PRId64 " message(s) in "
					      "%u ms: giving up",
					      i, left, SHMR_CTL_DRAIN_MS);
				shmr_ctl_model_drain_end(m, pid);
				next = sooner(next, now + COUNT_TICK_MS);
				continue;
			}
			next = sooner(next,
				      now + (now - s->drain_since < DRAIN_FAST_MS
						     ? 1
						     : DRAIN_SLOW_TICK_MS));
		} else if (s->drain == SHMR_CTL_DRAIN_COUNT) {
			if (!seen_read) {
				seen = shmr_ctl_seen_version(d);
				seen_read = 1;
			}
			if (seen < s->freed_version) {
				next = sooner(next, now + COUNT_TICK_MS);
				continue;
			}
			/* No lcore polls it now: what is left stays. */
			left = out_left(d, i);
			if (left > 0) {
				uint32_t nl = d->geo.nlcores;
				unsigned dl = 0;

				for (uint32_t l = SHMR_LANE_OUT(nl);
				     dlq && l <= SHMR_LANE_OUT_HIGH(nl); l++) {
					const struct rte_ring *r =
						shmr_ctl_dom_lane(d, i, l);

					dl += shmr_ctl_drain_dead_letter(
						d, m, dlq, r,
						shmr_lane_unconsumed(
							r, d->geo.lane_size),
						-1, -SHMR_E_TIMEOUT);
				}
				shmr_ctl_warn("endpoint %u (closed): %" PRId64
					      " message(s) it sent were never "
					      "taken by the dataplane: dropped "
					      "(counted in close_dropped; %u "
					      "dead-lettered to their routers)",
					      i, left, dl);
			} else if (left < 0) {
				shmr_ctl_warn("endpoint %u (closed): an "
					      "outbound lane is corrupted: "
					      "what it held is lost (not "
					      "counted)",
					      i);
			}
			/* What was left is dropped: so are its buffers,
			 * and what the endpoint held unsent. */
			if (left > 0) {
				uint32_t nl = d->geo.nlcores;

				for (uint32_t l = SHMR_LANE_OUT(nl);
				     l <= SHMR_LANE_OUT_HIGH(nl); l++)
					shmr_ctl_arena_drop_lane(
						d, shmr_ctl_dom_lane(d, i, l));
			}
			/* And what was sent to it that it never read (a
			 * reply to a caller killed first): nobody will. */
			(void)shmr_ctl_arena_drop_inbound(d, i);
			(void)shmr_ctl_arena_reclaim(d, i);
			shmr_ctl_model_drain_counted(m, i,
						     left > 0 ? (uint64_t)left
							      : 0);
		}
	}
	/* Shared buffers a death left counted too high (arena.h). */
	{
		uint64_t at = shmr_ctl_arena_recheck(d, now);

		return at ? sooner(next, at) : next;
	}
}
