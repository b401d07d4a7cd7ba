/*
 * Held answers (answers.h): copied into one buffer as they are made and
 * sent with sendmmsg(2) once their wake-up is over.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "answers.h"

void shmr_ctl_answers_init(struct shmr_ctl_answers *a)
{
	a->fd = -1;
	a->n = 0;
	a->used = 0;
}

int shmr_ctl_answers_put(struct shmr_ctl_answers *a, int fd, const char *buf,
			 size_t len)
{
	if (a->fd < 0 || fd != a->fd || a->n == SHMR_CTL_ANSWERS_MAX ||
	    len > sizeof(a->buf) - a->used)
		return 0;
	memcpy(a->buf + a->used, buf, len);
	a->off[a->n] = (uint32_t)a->used;
	a->len[a->n] = (uint32_t)len;
	a->used += len;
	a->n++;
	return 1;
}

int shmr_ctl_answers_send(struct shmr_ctl_answers *a)
{
	struct mmsghdr mm[SHMR_CTL_ANSWERS_MAX];
	struct iovec iov[SHMR_CTL_ANSWERS_MAX];
	unsigned done = 0;
	int rc = 0;

	for (unsigned i = 0; i < a->n; i++) {
		iov[i] = (struct iovec){ a->buf + a->off[i], a->len[i] };
		mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
						       .msg_iovlen = 1 } };
	}
	while (done < a->n) {
		int k = sendmmsg(a->fd, mm + done, a->n - done,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = -1;
			break;
		}
		/* A packet is sent whole or not at all (SOCK_SEQPACKET). */
		for (int i = 0; i < k; i++)
			if (mm[done + (unsigned)i].msg_len !=
			    a->len[done + (unsigned)i])
				rc = -1;
		if (rc < 0)
			break;
		done += (unsigned)k;
	}
	a->n = 0;
	a->used = 0;
	return rc;
}
