/* SPDX-License-Identifier: MIT */
/*
 * push_encode.c - the bytes of a push: which endpoint a URL names, the
 * labels (Prometheus names; values every protocol can carry), and each
 * protocol's request, as the servers' own code reads it: Pyroscope's
 * /ingest query (its name parsed by pkg/og/storage/segment/key.go: the
 * application name of letters, digits and _ . - /, tags up to ',' or '}'),
 * its push.v1 Push request in Connect's JSON (api/push/v1/push.proto), and
 * Parca's WriteRawRequest in grpc-gateway's JSON (profilestore.proto: the
 * field raw_profile is "rawProfile", bytes are base64).  No I/O here.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "push_encode.h"
#include "report/report.h"

static const char *const protocol_names[] = {
	[PROF_PUSH_PROTOCOL_AUTO] = "auto",
	[PROF_PUSH_PROTOCOL_INGEST] = "ingest",
	[PROF_PUSH_PROTOCOL_PUSH] = "push",
	[PROF_PUSH_PROTOCOL_PARCA] = "parca",
};

const char *prof_push_protocol_name(unsigned protocol)
{
	return protocol < ARRAY_SIZE(protocol_names) ? protocol_names[protocol] : NULL;
}

int prof_push_protocol_parse(const char *name)
{
	return name_parse(protocol_names, ARRAY_SIZE(protocol_names), name, "push protocol",
			  "protocols");
}

/* The endpoints' paths: each protocol's, as a server's URL gets it appended. */
static const char *const endpoint_paths[] = {
	[PROF_PUSH_PROTOCOL_INGEST] = "/ingest",
	[PROF_PUSH_PROTOCOL_PUSH] = "/push.v1.PusherService/Push",
	[PROF_PUSH_PROTOCOL_PARCA] = "/api/profiles/writeraw",
};

/* Parca's own port: a server URL on it is Parca's. */
#define PARCA_PORT 7070

/* A URL in parts, each pointing into it. */
struct url_parts {
	const char *scheme_end;		/* after "://" */
	const char *host, *host_end;	/* without userinfo */
	const char *path, *path_end;	/* "" when none */
	const char *query;		/* after '?', NULL when none */
	unsigned port;
};

static int split_url(const char *url, struct url_parts *u)
{
	const char *a, *end, *at, *colon;
	bool https;

	*u = (struct url_parts){ 0 };
	https = !strncasecmp(url, "https://", 8);
	if (!https && strncasecmp(url, "http://", 7))
		return error_setx(-EINVAL, "push URL '%s' does not begin with http:// or https://",
				  url);
	a = u->scheme_end = url + (https ? 8 : 7);
	end = a + strcspn(a, "/?#");
	for (at = NULL; (colon = memchr(a, '@', (size_t)(end - a))); a = colon + 1)
		at = colon;
	u->host = at ? at + 1 : u->scheme_end;
	u->host_end = end;
	u->port = https ? 443 : 80;
	/* [v6]:port or host:port */
	colon = *u->host == '[' ? memchr(u->host, ']', (size_t)(end - u->host)) : u->host;
	colon = colon ? memchr(colon, ':', (size_t)(end - colon)) : NULL;
	if (colon) {
		char *e;
		unsigned long port = strtoul(colon + 1, &e, 10);

		if (e != end || colon + 1 == end || port == 0 || port > 65535)
			return error_setx(-EINVAL, "push URL '%s' has no valid port", url);
		u->port = (unsigned)port;
		u->host_end = colon;
	}
	if (u->host == u->host_end)
		return error_setx(-EINVAL, "push URL '%s' names no host", url);
	if (strchr(end, '#'))
		return error_setx(-EINVAL, "push URL '%s' has a #fragment, which HTTP never sends",
				  url);
	u->path = end;
	u->path_end = end + strcspn(end, "?");
	u->query = *u->path_end == '?' ? u->path_end + 1 : NULL;
	return 0;
}

/* The protocol whose endpoint the path [P, END) ends with, else AUTO. */
static enum prof_push_protocol path_protocol(const char *p, const char *end)
{
	static const struct {
		const char *suffix;
		enum prof_push_protocol protocol;
	} known[] = {
		{ "/ingest", PROF_PUSH_PROTOCOL_INGEST },
		{ "/push.v1.PusherService/Push", PROF_PUSH_PROTOCOL_PUSH },
		{ "/profiles/writeraw", PROF_PUSH_PROTOCOL_PARCA },
	};
	size_t i, n;

	while (end > p && end[-1] == '/')
		end--;
	for (i = 0; i < ARRAY_SIZE(known); i++) {
		n = strlen(known[i].suffix);
		if ((size_t)(end - p) >= n && !memcmp(end - n, known[i].suffix, n))
			return known[i].protocol;
	}
	return PROF_PUSH_PROTOCOL_AUTO;
}

int push_resolve(const char *url, enum prof_push_protocol want, char **ret_endpoint,
		 enum prof_push_protocol *ret_protocol)
{
	enum prof_push_protocol at;
	struct url_parts u;
	const char *path_end;
	char *s;
	int r;

	if (!url || !*url)
		return error_setx(-EINVAL, "no push URL");
	if ((unsigned)want > PROF_PUSH_PROTOCOL_PARCA)
		return error_setx(-EINVAL, "unknown push protocol %u", (unsigned)want);
	r = split_url(url, &u);
	if (r < 0)
		return r;
	at = path_protocol(u.path, u.path_end);
	if (at != PROF_PUSH_PROTOCOL_AUTO) {
		if (want != PROF_PUSH_PROTOCOL_AUTO && want != at)
			return error_setx(-EINVAL, "push URL '%s' is an endpoint of the %s "
					  "protocol, not of %s", url, prof_push_protocol_name(at),
					  prof_push_protocol_name(want));
		s = xstrdup(url);
		if (!s)
			return -ENOMEM;
		*ret_endpoint = s;
		*ret_protocol = at;
		return 0;
	}
	/* a server's URL: the protocol's path after its own, less a trailing '/' */
	if (want == PROF_PUSH_PROTOCOL_AUTO)
		want = u.port == PARCA_PORT ? PROF_PUSH_PROTOCOL_PARCA : PROF_PUSH_PROTOCOL_INGEST;
	for (path_end = u.path_end; path_end > u.path && path_end[-1] == '/'; path_end--)
		;
	if (asprintf(&s, "%.*s%s%s%s", (int)(path_end - url), url, endpoint_paths[want],
		     u.query ? "?" : "", u.query ? u.query : "") < 0)
		return error_setx(-ENOMEM, "out of memory");
	*ret_endpoint = s;
	*ret_protocol = want;
	return 0;
}

char *push_url_display(const char *url)
{
	struct url_parts u;
	char *s;

	if (split_url(url, &u) < 0 || u.host == u.scheme_end)
		return strdup(url);
	if (asprintf(&s, "%.*s%s", (int)(u.scheme_end - url), url, u.host) < 0)
		return NULL;
	return s;
}

/* ---- labels ----------------------------------------------------------- */

int push_labels_set(struct push_labels *ls, const char *name, const char *value)
{
	char *v = xstrdup(value), *n;
	size_t i;
	void *arr;
	int r;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < ls->n && strcmp(ls->v[i].name, name) < 0; i++)
		;
	if (i < ls->n && !strcmp(ls->v[i].name, name)) {
		free(ls->v[i].value);
		ls->v[i].value = v;
		return 0;
	}
	arr = ls->v;
	r = grow_array(&arr, &ls->cap, ls->n + 1, sizeof(*ls->v));
	ls->v = arr;
	n = r < 0 ? NULL : xstrdup(name);
	if (!n) {
		free(v);
		return -ENOMEM;
	}
	memmove(ls->v + i + 1, ls->v + i, (ls->n - i) * sizeof(*ls->v));
	ls->v[i] = (struct push_label){ .name = n, .value = v };
	ls->n++;
	return 0;
}

const char *push_labels_get(const struct push_labels *ls, const char *name)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (!strcmp(ls->v[i].name, name))
			return ls->v[i].value;
	return NULL;
}

void push_labels_release(struct push_labels *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->v[i].name);
		free(ls->v[i].value);
	}
	free(ls->v);
	*ls = (struct push_labels){ 0 };
}

/* A byte no protocol's value may hold as it is (Pyroscope's ingest is the strictest). */
static bool value_byte_bad(unsigned char c)
{
	return c <= ' ' || c >= 0x7f || strchr(",{}=\"\\", c);
}

static bool service_byte_ok(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-' || c == '/';
}

char *push_clean_value(const char *value, bool service)
{
	char *s = strdup(value), *p;

	for (p = s; p && *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (service ? !service_byte_ok(c) : value_byte_bad(c))
			*p = '_';
	}
	return s;
}

int push_label_parse(struct push_labels *ls, const char *label)
{
	const char *eq = strchr(label, '='), *p;
	size_t len = eq ? (size_t)(eq - label) : 0;
	char name[128];

	if (!eq || !len)
		return error_setx(-EINVAL, "label '%s' is not NAME=VALUE", label);
	if (len >= sizeof(name))
		return error_setx(-EINVAL, "label '%s': the name is longer than %zu bytes", label,
				  sizeof(name) - 1);
	memcpy(name, label, len);
	name[len] = '\0';
	for (p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (!(isalpha(c) || c == '_' || (p > name && isdigit(c))))
			return error_setx(-EINVAL, "label '%s': '%s' is not a label name (letters, "
					  "digits and _, not beginning with a digit)", label, name);
	}
	if (!strncmp(name, "__", 2))
		return error_setx(-EINVAL, "label '%s': names beginning with __ are the server's",
				  label);
	if (!strcmp(name, "service_name"))
		return error_setx(-EINVAL, "label '%s': the service name is an option of its own",
				  label);
	if (!eq[1])
		return error_setx(-EINVAL, "label '%s' has no value", label);
	for (p = eq + 1; *p; p++)
		if (value_byte_bad((unsigned char)*p))
			return error_setx(-EINVAL, "label '%s': a value is printable ASCII without "
					  "space , { } = \" \\", label);
	return push_labels_set(ls, name, eq + 1);
}

int push_service_check(const char *service)
{
	const char *p;

	if (!*service)
		return error_setx(-EINVAL, "the service name is empty");
	for (p = service; *p; p++)
		if (!service_byte_ok((unsigned char)*p))
			return error_setx(-EINVAL, "service name '%s': only letters, digits and "
					  "_ . - / (Pyroscope's application names)", service);
	return 0;
}

/* ---- requests --------------------------------------------------------- */

/* S percent-encoded as a query value: all but RFC 3986's unreserved bytes. */
static void put_query_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || strchr("-._~", c))
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

static void put_base64(FILE *f, const uint8_t *p, size_t n)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char out[4];

	for (; n >= 3; p += 3, n -= 3) {
		out[0] = digits[p[0] >> 2];
		out[1] = digits[(p[0] & 3) << 4 | p[1] >> 4];
		out[2] = digits[(p[1] & 15) << 2 | p[2] >> 6];
		out[3] = digits[p[2] & 63];
		fwrite(out, 1, 4, f);
	}
	if (n) {
		out[0] = digits[p[0] >> 2];
		out[1] = digits[(p[0] & 3) << 4 | (n > 1 ? p[1] >> 4 : 0)];
		out[2] = n > 1 ? digits[(p[1] & 15) << 2] : '=';
		out[3] = '=';
		fwrite(out, 1, 4, f);
	}
}

/*
 * The profile's ID, a UUID (version 4's layout) hashed from its bytes, so
 * that a profile sent again after a lost answer has the ID it had.
 */
static void put_uuid(FILE *f, const struct push_profile *p)
{
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x6c62272e07bb0142ull };
	const uint8_t *b = p->pprof;
	uint8_t u[16];
	size_t i, k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < p->len; i++)
			h[k] = (h[k] ^ b[i]) * 0x100000001b3ull;
		h[k] ^= p->from_ns + k;
		h[k] *= 0x100000001b3ull;
	}
	for (i = 0; i < 16; i++)
		u[i] = (uint8_t)(h[i / 8] >> (8 * (i % 8)));
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	for (i = 0; i < 16; i++)
		fprintf(f, "%02x%s", u[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
}

static void put_json_labels(FILE *f, const struct push_labels *ls)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < ls->n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		report_put_json_str(f, ls->v[i].name);
		fputs(",\"value\":", f);
		report_put_json_str(f, ls->v[i].value);
		fputc('}', f);
	}
	fputc(']', f);
}

/* Pyroscope's ingest: the name SERVICE.cpu{TAGS}, the times, the profile as the body. */
static void put_ingest_url(FILE *f, const char *endpoint, const struct push_profile *p)
{
	const struct push_labels *ls = p->labels;
	const char *service = push_labels_get(ls, "service_name");
	char *name, sep = '{';
	size_t i, len;
	FILE *n = open_memstream(&name, &len);

	fputs(endpoint, f);
	fputs(strchr(endpoint, '?') ? "&name=" : "?name=", f);
	if (!n)
		return;
	fprintf(n, "%s.cpu", service ? service : "");
	for (i = 0; i < ls->n; i++) {
		if (!strcmp(ls->v[i].name, "__name__") || !strcmp(ls->v[i].name, "service_name"))
			continue;
		fprintf(n, "%c%s=%s", sep, ls->v[i].name, ls->v[i].value);
		sep = ',';
	}
	fputs(sep == '{' ? "{}" : "}", n);
	if (fclose(n) == 0) {
		put_query_value(f, name);
		free(name);
	}
	/* whole seconds that hold the file's time */
	fprintf(f, "&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof", p->from_ns / 1000000000u,
		(p->until_ns + 999999999u) / 1000000000u);
	if (p->rate_hz)
		fprintf(f, "&sampleRate=%" PRIu64, p->rate_hz);
	fputs("&spyName=prof", f);
}

static void put_push_body(FILE *f, const struct push_profile *p)
{
	fputs("{\"series\":[{\"labels\":", f);
	put_json_labels(f, p->labels);
	fputs(",\"samples\":[{\"ID\":\"", f);
	put_uuid(f, p);
	fputs("\",\"rawProfile\":\"", f);
	put_base64(f, p->pprof, p->len);
	fputs("\"}]}]}", f);
}

static void put_parca_body(FILE *f, const struct push_profile *p)
{
	fputs("{\"series\":[{\"labels\":{\"labels\":", f);
	put_json_labels(f, p->labels);
	fputs("},\"samples\":[{\"rawProfile\":\"", f);
	put_base64(f, p->pprof, p->len);
	/* the addresses are the process's, with each mapping's start and offset */
	fputs("\"}]}],\"normalized\":false}", f);
}

int push_request_build(enum prof_push_protocol protocol, const char *endpoint,
		       const struct push_profile *p, struct push_request *ret)
{
	struct push_request rq = { .body = p->pprof, .len = p->len };
	size_t url_len;
	FILE *u, *b = NULL;
	int r = 0;

	u = open_memstream(&rq.url, &url_len);
	if (!u)
		return error_setx(-ENOMEM, "out of memory");
	if (protocol == PROF_PUSH_PROTOCOL_INGEST) {
		put_ingest_url(u, endpoint, p);
		rq.content_type = "application/octet-stream";
	} else {
		fputs(endpoint, u);
		b = open_memstream(&rq.owned, &rq.len);
		if (b && protocol == PROF_PUSH_PROTOCOL_PUSH)
			put_push_body(b, p);
		else if (b)
			put_parca_body(b, p);
		rq.content_type = "application/json";
		if (protocol == PROF_PUSH_PROTOCOL_PUSH)
			rq.headers[rq.nheaders++] = "Connect-Protocol-Version: 1";
	}
	if (fclose(u) != 0)
		r = -ENOMEM;
	if (protocol != PROF_PUSH_PROTOCOL_INGEST && (!b || fclose(b) != 0))
		r = -ENOMEM;
	if (r < 0) {
		push_request_release(&rq);
		return error_setx(-ENOMEM, "out of memory");
	}
	rq.body = rq.owned ? rq.owned : p->pprof;
	*ret = rq;
	return 0;
}

void push_request_release(struct push_request *rq)
{
	free(rq->url);
	free(rq->owned);
	*rq = (struct push_request){ 0 };
}
