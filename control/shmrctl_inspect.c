/*
 * shmrctl inspect's answer, whole whatever its size: asked part by part
 * (INSPECT ROUTER [json] from=N; each answer "OK NEXT TOTAL" and as many
 * whole items as fit in one SHMR_PROTO_MAX packet, format.c) and merged:
 * the parts' JSON objects into one, their text lines one after another.
 * Everything in an answer is untrusted: a part that does not advance, an
 * item count over what a domain can hold, or more parts than items end it
 * with a one-line error.  Each part is read by its own request, so the
 * figures of two parts may be a moment apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <shmr/layout.h>
#include <shmr/proto.h>

#include "shmrctl_cli.h"

/* The most items an INSPECT can have: the router, its routes, the
 * lcores and every other endpoint slot (format.h). */
#define ITEMS_MAX (1u + SHMR_MAX_ROUTES + SHMR_MAX_LCORES + SHMR_MAX_ENDPOINTS)

/* The text answer as it grows: a memory stream (open_memstream()), and
 * the keys of its lines (a json-c object used as a set), so that a line
 * is checked in constant time, not against the whole text (which made a
 * 7,000-line answer take minutes under AddressSanitizer). */
struct text_acc {
	FILE *out;
	struct json_object *keys;
};

/* Append @p body's "key value" lines to @p a, less those whose key it
 * has (an extra key shown again with the last part). */
static void add_lines(struct text_acc *a, const char *body)
{
	const char *line = body;

	while (*line) {
		size_t n = strcspn(line, "\n"), kl = strcspn(line, " \n");
		char key[160];
		int dup = 0;

		if (n > 0 && kl < sizeof(key)) {
			memcpy(key, line, kl);
			key[kl] = '\0';
			dup = json_object_object_get_ex(a->keys, key, NULL);
			if (!dup &&
			    json_object_object_add(a->keys, key, NULL) < 0)
				shmr_cli_die("out of memory");
		}
		if (!dup && n > 0 &&
		    (fwrite(line, 1, n, a->out) != n || fputc('\n', a->out) < 0))
			shmr_cli_die("out of memory");
		line += n + (line[n] == '\n');
	}
}

char *shmr_cli_inspect_body(const char *router, int json)
{
	const char *words[3] = { router, "json", NULL };
	unsigned nw = json ? 3u : 2u, next = 0, total = 1, parts = 0;
	struct json_object *all = json ? json_object_new_object() : NULL;
	struct text_acc acc = { NULL, NULL };
	char from[24], req[160], *text = NULL;
	size_t len = 0;

	if (!json) {
		acc.keys = json_object_new_object();
		acc.out = open_memstream(&text, &len);
	}
	if ((json && !all) || (!json && (!acc.keys || !acc.out)))
		shmr_cli_die("out of memory");
	shmr_cli_connect();
	while (next < total) {
		const char *body;
		unsigned n, t;

		snprintf(from, sizeof(from), "from=%u", next);
		words[nw - 1] = from;
		if (shmr_proto_encode(req, sizeof(req), "INSPECT", words, nw) < 0)
			shmr_cli_usage("request too long");
		body = shmr_cli_request(req);
		if (sscanf(shmr_cli_ans, "OK %u %u", &n, &t) != 2 ||
		    t > ITEMS_MAX || n > t || (n <= next && n < t) ||
		    ++parts > ITEMS_MAX + 1)
			shmr_cli_die("inspect: the control plane's answer "
				     "is not a part of INSPECT");
		next = n;
		total = t;
		if (json) {
			struct json_object *o = json_tokener_parse(body);

			if (!o || !json_object_is_type(o, json_type_object))
				shmr_cli_die("inspect: a part is not a JSON "
					     "object");
			json_object_object_foreach(o, k, v)
				json_object_object_add(all, k,
						       json_object_get(v));
			json_object_put(o);
		} else {
			add_lines(&acc, body);
		}
	}
	if (json) {
		const char *s = json_object_to_json_string_ext(
			all, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
				     JSON_C_TO_STRING_NOSLASHESCAPE);
		size_t n = s ? strlen(s) : 0;

		text = s ? malloc(n + 2) : NULL;
		if (!text)
			shmr_cli_die("out of memory");
		memcpy(text, s, n);
		memcpy(text + n, "\n", 2);
		json_object_put(all);
	} else {
		if (fclose(acc.out) != 0)
			shmr_cli_die("out of memory");
		json_object_put(acc.keys);
	}
	return text ? text : strdup("");
}
