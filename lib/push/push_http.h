/* SPDX-License-Identifier: MIT */
/*
 * push_http.h - one HTTP POST at a time, through libcurl loaded on first
 * use (push_http.c).
 */
#ifndef PROF_PUSH_HTTP_H
#define PROF_PUSH_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct http_client;

/* Returns: 0 and *ret, a client with its connection cache; -ENOTSUP (no libcurl); -ENOMEM. */
int http_client_new(struct http_client **ret);

/* Free C (NULL: nothing), closing its connections. */
void http_client_free(struct http_client *c);

struct http_post {
	const char *url;
	const char *content_type;
	const char *const *headers;	/* more "Name: value" lines, NHEADERS of them */
	size_t nheaders;
	const void *body;
	size_t len;
	uint32_t timeout_ms;		/* the whole request, connecting included */
};

/*
 * POST RQ.  *RET_STATUS: the HTTP status of the answer, 0 when none came.
 * Returns: 0 for a 2xx answer; -EREMOTEIO for another status (the message
 * has it and the first line of the answer's body); -ECONNREFUSED,
 * -ETIMEDOUT, -ECONNRESET, -EHOSTUNREACH, -EINVAL (a URL libcurl refuses),
 * -EIO (another failure of the request: libcurl's words in the message);
 * -ENOMEM.
 */
int http_post(struct http_client *c, const struct http_post *rq, uint32_t *ret_status);

#endif /* PROF_PUSH_HTTP_H */
