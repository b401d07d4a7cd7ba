/*
 * shmr-large-worker: a route worker for the payload arena's tests
 * (tests/integration/test_large.c).  Every payload is read with
 * shmr_msg_payload(), inline or in the arena, and given back byte for
 * byte to its sender:
 *
 *   a call   is answered with the same bytes: inline when they fit a
 *            slot, else in a buffer of its own (shmr_reply_buf())
 *   a send   is sent back to its sender: an arena payload without a copy
 *            (shmr_buf_keep(), then shmr_send_buf() of the kept buffer),
 *            an inline one inline
 *
 * A payload that is not sound (shmr_msg_payload() gives NULL) gets status
 * -EBADMSG (a call) or is counted on stderr (a send).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <shmr/shmr.h>

#include "large_buf.h"

static void pause_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}


static int answer(struct shmr_endpoint *ep, size_t inline_max,
		  const struct shmr_msg *m)
{
	size_t len;
	const void *p = shmr_msg_payload(ep, m, &len);
	struct shmr_buf b;
	int rc;

	if (!p)
		return shmr_reply(ep, m, -EBADMSG, NULL, 0);
	if (len <= inline_max)
		return shmr_reply(ep, m, 0, p, len);
	rc = large_alloc_wait(ep, len, &b);
	if (rc < 0)
		return shmr_reply(ep, m, rc, NULL, 0);
	memcpy(b.data, p, len);
	while ((rc = shmr_reply_buf(ep, m, 0, &b, len)) == -EAGAIN)
		pause_ms(1);
	if (rc < 0)
		shmr_buf_release(ep, &b);
	return rc;
}

static int send_back(struct shmr_endpoint *ep, const struct shmr_msg *m)
{
	size_t len;
	const void *p = shmr_msg_payload(ep, m, &len);
	struct shmr_buf b;
	int rc;

	if (!p)
		return -EBADMSG;
	if (!(m->flags & SHMR_F_ARENA)) {
		while ((rc = shmr_send(ep, m->from, m->type, m->key, p, len)) ==
		       -EAGAIN)
			pause_ms(1);
		return rc;
	}
	rc = shmr_buf_keep(ep, m, &b);
	if (rc < 0)
		return rc;
	while ((rc = shmr_send_buf(ep, m->from, m->type, m->key, &b, len)) ==
	       -EAGAIN)
		pause_ms(1);
	if (rc < 0)
		shmr_buf_release(ep, &b);
	return rc;
}

int main(void)
{
	struct shmr_domain *d;
	struct shmr_endpoint *ep;
	size_t inline_max;
	int rc = shmr_attach_env(&d, &ep);

	if (rc < 0) {
		fprintf(stderr, "shmr-large-worker: %s\n", shmr_strerror(rc));
		return 1;
	}
	inline_max = shmr_payload_max(d);
	while (!shmr_stopping()) {
		const struct shmr_msg *msgs[32];
		int n = shmr_recv_burst(ep, msgs, 32, 1000);

		if (n == -EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < n; i++) {
			rc = msgs[i]->kind == SHMR_KIND_CALL
				     ? answer(ep, inline_max, msgs[i])
				     : send_back(ep, msgs[i]);
			if (rc < 0)
				fprintf(stderr, "shmr-large-worker: %s\n",
					shmr_strerror(rc));
		}
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}
