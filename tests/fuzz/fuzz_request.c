/*
 * libFuzzer target: the control socket's request parser
 * (control/request.c), one packet of untrusted bytes in.  Its contract:
 * 0 and a parsed request, or a negative code with a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shmr_ctl_req req;
	const char *why = NULL;
	char *buf;
	int rc;

	/* An exact-size copy, so ASan sees a read past the packet. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	rc = shmr_ctl_req_parse(buf, size, &req, &why);
	if (rc < 0 && !why)
		abort(); /* every refusal says why */
	if (rc == 0) {
		/* Whatever parsed is a terminated, valid name. */
		if (memchr(req.name, 0, sizeof(req.name)) == NULL ||
		    memchr(req.route, 0, sizeof(req.route)) == NULL)
			abort();
	}
	free(buf);
	return 0;
}
