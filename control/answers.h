/*
 * A connection's answers, held for the rest of one wake-up and sent with
 * one sendmmsg(2).  Not for direct inclusion outside control/.
 *
 * The control socket is SOCK_SEQPACKET: every answer is a packet of its
 * own, and a client that pipelines (shmrctl's churn, `shmr-perf churn`, a
 * script feeding requests) has many in at once.  Handling them one by one
 * cost a sendmsg, a wake-up of the client and a publication of the spec
 * per request.  Held answers go out together after the wake-up's one
 * publication (server.c), so an "OK" still means "the change is in the
 * published spec", and in the order their requests came.
 */
#ifndef SHMR_CONTROL_ANSWERS_H
#define SHMR_CONTROL_ANSWERS_H

#include <stddef.h>
#include <stdint.h>

#define SHMR_CTL_ANSWERS_MAX 32u          /* answers held at once */
#define SHMR_CTL_ANSWERS_BYTES 16384u     /* their bytes, together */

struct shmr_ctl_answers {
	int fd;        /* whose answers are held; -1: none is being held */
	unsigned n;    /* answers held */
	size_t used;   /* bytes of buf used */
	uint32_t off[SHMR_CTL_ANSWERS_MAX], len[SHMR_CTL_ANSWERS_MAX];
	char buf[SHMR_CTL_ANSWERS_BYTES];
};

/** Hold nothing yet (fd -1). */
void shmr_ctl_answers_init(struct shmr_ctl_answers *a);

/**
 * Hold @p len bytes of @p buf as the next answer on @p fd.
 *
 * Returns: 1 held; 0 not held (another fd, holding is off, or no room
 * left: the caller sends the rest held first, shmr_ctl_answers_send(),
 * then this answer itself, keeping the order).
 */
int shmr_ctl_answers_put(struct shmr_ctl_answers *a, int fd, const char *buf,
			 size_t len);

/**
 * Send what is held, in order, as one sendmmsg(2) (more only when
 * interrupted), and hold nothing after.
 *
 * Context:     the control plane's thread.
 * Returns:     0 all sent; -1 the peer did not take them all (a full
 *              socket buffer or a closed peer: the caller closes the
 *              connection, as for a failed single answer).
 */
int shmr_ctl_answers_send(struct shmr_ctl_answers *a);

#endif
