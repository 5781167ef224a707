/* SPDX-License-Identifier: MIT */
/*
 * push_encode.h - what a push sends, byte for byte (push_encode.c): the
 * endpoint a URL names, labels, and each protocol's request.
 */
#ifndef PROF_PUSH_ENCODE_H
#define PROF_PUSH_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "prof.h"

/*
 * The endpoint of URL for protocol WANT (PROF_PUSH_PROTOCOL_AUTO: the
 * URL's), as prof_pusher_new() describes: *RET_ENDPOINT (malloc'd) and
 * *RET_PROTOCOL.
 * Returns: 0; -EINVAL (the message says why); -ENOMEM.
 */
int push_resolve(const char *url, enum prof_push_protocol want, char **ret_endpoint,
		 enum prof_push_protocol *ret_protocol);

/* URL without its userinfo (a password), for messages: malloc'd, or NULL. */
char *push_url_display(const char *url);

/* A label set: names unique, sorted as Prometheus sorts them. */
struct push_label {
	char *name;
	char *value;
};

struct push_labels {
	struct push_label *v;
	size_t n, cap;
};

/* Set NAME to VALUE (copied; the value as given). Returns: 0; -ENOMEM. */
int push_labels_set(struct push_labels *ls, const char *name, const char *value);

/* VALUE of NAME, or NULL. */
const char *push_labels_get(const struct push_labels *ls, const char *name);

void push_labels_release(struct push_labels *ls);

/*
 * A label as the options give it, "NAME=VALUE": into LS.
 * Returns: 0; -EINVAL (the message names what is wrong); -ENOMEM.
 */
int push_label_parse(struct push_labels *ls, const char *label);

/* Whether SERVICE is a service name as given: Pyroscope's letters. Returns: 0; -EINVAL. */
int push_service_check(const char *service);

/*
 * A value made to fit every protocol (malloc'd, or NULL): each byte that
 * is not printable ASCII, or is a space , { } = " \, becomes '_';
 * SERVICE: each byte but letters, digits and _ . - / does.
 */
char *push_clean_value(const char *value, bool service);

/* One profile to send. */
struct push_profile {
	const void *pprof;		/* gzip'd profile.proto */
	size_t len;
	const struct push_labels *labels; /* __name__ and service_name among them */
	uint64_t from_ns, until_ns;	/* wall time */
	uint64_t rate_hz;		/* 0: unknown */
};

/* A request, as push_request_build() made it. */
struct push_request {
	char *url;
	const void *body;		/* OWNED, or the profile itself (ingest) */
	size_t len;
	char *owned;
	const char *content_type;
	const char *headers[1];		/* more header lines */
	size_t nheaders;
};

/*
 * The request that sends P to ENDPOINT by PROTOCOL.
 * Returns: 0 and *ret (push_request_release() frees it); -ENOMEM.
 */
int push_request_build(enum prof_push_protocol protocol, const char *endpoint,
		       const struct push_profile *p, struct push_request *ret);

void push_request_release(struct push_request *rq);

#endif /* PROF_PUSH_ENCODE_H */
