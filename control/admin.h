/*
 * The admin endpoint (admin.c): the control plane's own endpoint, where
 * the dataplane puts the routers' admin-path slots; its bell thread, the
 * loop's side of its lanes, its replies, and the admin path's rate-limited
 * log lines.  Internal to shmr-control: not for direct inclusion outside
 * control/.
 */
#ifndef SHMR_CONTROL_ADMIN_H
#define SHMR_CONTROL_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include <shmr/shmr.h>

#include "control_internal.h"
#include "domain.h"
#include "model.h"

/* The kinds of admin_log lines, each limited on its own. */
enum {
	SHMR_CTL_ALOG_FAILED = 0, /* a MessageRouteFailed */
	SHMR_CTL_ALOG_SEND = 1,   /* another admin-path send */
	SHMR_CTL_ALOG_REPLY = 2,  /* a reply lost */
	SHMR_CTL_ALOG_LANE = 3,   /* an inbound lane reset */
};

/* The most replies held for the lcores at once (an older one is sent
 * when a newer one would not fit), and how long one waits at most: the
 * lcores apply a version within a millisecond; a dataplane that is gone
 * or stuck must not keep a caller's answer. */
#define SHMR_CTL_ADMIN_HELD_MAX 64u
#define SHMR_CTL_ADMIN_HELD_MS 1000u
/* How often the loop looks whether the lcores applied it, while replies
 * are held (nothing rings it when they do). */
#define SHMR_CTL_ADMIN_HELD_POLL_US 200L

struct shmr_ctl_admin {
	/* Given by the daemon (shmr_ctl_admin_init()) */
	struct shmr_ctl_loop *loop;
	struct shmr_ctl_domain *d;
	struct shmr_ctl_model *m;
	/* Its own */
	struct shmr_pid pid; /* the admin endpoint */
	int kick, done;      /* eventfds: thread -> loop, loop -> thread */
	uint64_t log_next[4], log_suppressed[4];
	/* The staging store (admin.c): slots taken from the inbound lanes,
	 * waiting their turn; allocated by shmr_ctl_admin_start(). */
	unsigned char *stage;   /* stage_cap slots of slot_size bytes */
	uint32_t stage_cap;     /* SHMR_CTL_ADMIN_STAGE_MAX at most */
	uint32_t *free_idx;     /* the free slots of the store (a stack) */
	uint32_t nfree;
	uint32_t *fifo[2];      /* SHMR_CTL_ADMIN_Q_*: store indices */
	uint32_t fifo_head[2], fifo_n[2];
	/* The slot _next() handed out last, its header and arena reference
	 * (a dead letter's buffer): given back at the next _next() or at
	 * _end(), once the loop is done with it. */
	uint64_t out_ref[(SHMR_HDR_SIZE + 16) / 8];
	int out_held;
	/* Replies held until the routing lcores have applied a spec version
	 * (shmr_ctl_admin_reply_applied()): a ring of SHMR_CTL_ADMIN_HELD_MAX
	 * slots, allocated with the staging store. */
	unsigned char *held;    /* SHMR_CTL_ADMIN_HELD_MAX slots of slot_size */
	uint64_t held_version[SHMR_CTL_ADMIN_HELD_MAX];
	uint64_t held_due[SHMR_CTL_ADMIN_HELD_MAX]; /* ms: sent anyway then */
	uint32_t held_head, held_n;
	uint64_t held_late; /* sent before the lcores applied their version
			     * (time up, or room made), logged */
};

/* The staging FIFOs, in the order they are served. */
enum {
	SHMR_CTL_ADMIN_Q_MAX = 0,  /* max priority */
	SHMR_CTL_ADMIN_Q_REST = 1, /* everything else, in arrival order */
};

/* The most slots the store holds (it holds every inbound lane's capacity
 * when that is less): how far a max-priority slot can overtake. */
#define SHMR_CTL_ADMIN_STAGE_MAX 4096u

/** Not open yet; works on @p d and @p m. */
void shmr_ctl_admin_init(struct shmr_ctl_admin *a, struct shmr_ctl_loop *loop,
			 struct shmr_ctl_domain *d, struct shmr_ctl_model *m);
/** Allocate the admin endpoint and publish it (hdr.admin_pid).
 *  Context: start-up, after the domain is created.
 *  Errors: -SHMR_E_NO_ENDPOINT. */
int shmr_ctl_admin_open(struct shmr_ctl_admin *a);
/**
 * Adoption: take over the admin endpoint a previous control plane
 * published (hdr.admin_pid), already in the model rebuilt from the domain.
 * Its side of the lanes is repaired (a burst it had taken is handed back,
 * flagged; an enqueue it had not finished is dropped).
 * Errors: -SHMR_E_NO_ENDPOINT (no admin endpoint in the domain).
 */
int shmr_ctl_admin_adopt(struct shmr_ctl_admin *a);
/** Allocate the staging store (shmr_ctl_admin_stage_alloc()), start the
 *  bell thread and watch its eventfd.
 *  Context: start-up, once, after _open() or _adopt().
 *  Errors: -ENOMEM, -errno. */
int shmr_ctl_admin_start(struct shmr_ctl_admin *a);
/** The staging store alone, sized from the domain's geometry (what
 *  _start() does first; a unit test calls it without the thread).
 *  Context: start-up, once.  Errors: -ENOMEM. */
int shmr_ctl_admin_stage_alloc(struct shmr_ctl_admin *a);
/** Free the staging store (what it held is dropped).  The daemon never
 *  needs it (the store lives until exit).  Context: the loop. */
void shmr_ctl_admin_stage_free(struct shmr_ctl_admin *a);

/**
 * The admin endpoint has slots (SHMR_CTL_TAG_ADMIN): take them all, as
 *   if (shmr_ctl_admin_begin(a) == 0) {
 *           while (shmr_ctl_admin_next(a, slot)) ...;
 *           shmr_ctl_admin_end(a);
 *   }
 * begin() fails when there was no kick to take; next() first stages what
 * the inbound lanes hold (as much as the store takes), then copies one
 * slot (SHMR_SLOT_MAX bytes, aligned for struct shmr_msg) into @p m and
 * returns 1: the oldest max-priority slot staged, else the oldest other
 * one; 0 when the store and the lanes are empty.  So a max-priority slot
 * is handled before every other slot staged with it, even one that came
 * first, and each priority keeps its arrival order.  end() lets the bell
 * thread re-arm.
 * Context: the loop (the lanes' only consumer).
 */
int shmr_ctl_admin_begin(struct shmr_ctl_admin *a);
int shmr_ctl_admin_next(struct shmr_ctl_admin *a, struct shmr_msg *m);
void shmr_ctl_admin_end(struct shmr_ctl_admin *a);

/** Enqueue one slot on the admin endpoint's outbound lane and ring the
 *  lcore's bell.  Errors: -EAGAIN (the lane is full). */
int shmr_ctl_admin_put(struct shmr_ctl_admin *a, const struct shmr_msg *m);
/** Answer the call @p req (status, @p n bytes of @p data) from the admin
 *  endpoint.  Errors: -SHMR_E_TOO_BIG, -EAGAIN (its lane is full). */
int shmr_ctl_admin_reply(struct shmr_ctl_admin *a, const struct shmr_msg *req,
			 int32_t status, const void *data, size_t n);
/**
 * Answer the call @p req as shmr_ctl_admin_reply() does, once every
 * routing lcore has applied spec version @p version (now if they have):
 * what the answer says of a router (its routees, a pool's new size) is
 * then what the caller's next message is routed by (Pekko's order: a
 * router handles its management messages between the messages it routes).
 * Held in order with the replies held before it, at most
 * SHMR_CTL_ADMIN_HELD_MS; the loop sends them (shmr_ctl_admin_flush()).
 * Errors: as shmr_ctl_admin_reply(), when sent now.
 */
int shmr_ctl_admin_reply_applied(struct shmr_ctl_admin *a,
				 const struct shmr_msg *req, int32_t status,
				 const void *data, size_t n, uint64_t version);
/**
 * Send the held replies whose version the lcores have applied, or whose
 * time is up at @p now (shmr_ctl_now_ms(); counted in held_late and
 * logged), in the order they were held; with @p all, every one (the loop
 * stops).  Returns how many are still held (held_n: while there are, the
 * loop looks again in SHMR_CTL_ADMIN_HELD_POLL_US).
 * Context: the loop.
 */
unsigned shmr_ctl_admin_flush(struct shmr_ctl_admin *a, uint64_t now,
			      int all);
/** A text reply (NULL: none), cut to the slot. */
void shmr_ctl_admin_reply_text(struct shmr_ctl_admin *a,
			       const struct shmr_msg *req, int32_t status,
			       const char *text);
/** Rate-limited log line: at most one a second per @p kind
 *  (SHMR_CTL_ALOG_*), with a count of those suppressed. */
void shmr_ctl_admin_log(struct shmr_ctl_admin *a, unsigned kind,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
