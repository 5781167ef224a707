/* SPDX-License-Identifier: MIT */
/*
 * push_http.c - the HTTP client of prof push: libcurl, the client every
 * distribution keeps current (TLS, proxies, timeouts), loaded with dlopen()
 * when a pusher is made, not linked: it brings ~30 libraries and ~8 ms of
 * CPU into every process that links it, and a recorder that does not push
 * must not pay for them.  One easy handle per client, so that the
 * connection stays open from one POST to the next.  Only what a POST needs;
 * redirects are not followed (a profile names files and command lines: it
 * goes only where it was sent).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CURL_DISABLE_TYPECHECK	/* calls go through the pointers below */
#include <curl/curl.h>

#include "internal.h"
#include "push_http.h"

/* libcurl's functions, as dlsym() found them. */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_reset)(CURL *h);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	char error[256];	/* why loading failed; "" once loaded */
} curl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

/* The sonames of libcurl 7.16 and later, by TLS library: any will do. */
static const char *const curl_sonames[] = {
	"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl-nss.so.4",
};

static void curl_load(void)
{
	void *h = NULL;
	size_t i;

	for (i = 0; !h && i < ARRAY_SIZE(curl_sonames); i++)
		h = dlopen(curl_sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(curl.error, sizeof(curl.error), "cannot load libcurl: %s (install "
			 "libcurl4)", dlerror());
		return;
	}
	*(void **)&curl.global_init = dlsym(h, "curl_global_init");
	*(void **)&curl.easy_setopt = dlsym(h, "curl_easy_setopt");
	*(void **)&curl.easy_perform = dlsym(h, "curl_easy_perform");
	*(void **)&curl.easy_getinfo = dlsym(h, "curl_easy_getinfo");
	*(void **)&curl.easy_reset = dlsym(h, "curl_easy_reset");
	*(void **)&curl.easy_cleanup = dlsym(h, "curl_easy_cleanup");
	*(void **)&curl.easy_strerror = dlsym(h, "curl_easy_strerror");
	*(void **)&curl.slist_append = dlsym(h, "curl_slist_append");
	*(void **)&curl.slist_free_all = dlsym(h, "curl_slist_free_all");
	if (curl.global_init && curl.easy_setopt && curl.easy_perform && curl.easy_getinfo &&
	    curl.easy_reset && curl.easy_cleanup && curl.easy_strerror && curl.slist_append &&
	    curl.slist_free_all && curl.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
		*(void **)&curl.easy_init = dlsym(h, "curl_easy_init");
	if (!curl.easy_init)
		snprintf(curl.error, sizeof(curl.error), "cannot load libcurl: it lacks its "
			 "functions, or failed to start");
}

struct http_client {
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	char answer[512];	/* the start of the answer's body, for a message */
	size_t answer_len;
};

int http_client_new(struct http_client **ret)
{
	struct http_client *c;

	pthread_once(&curl_once, curl_load);
	if (!curl.easy_init)
		return error_setx(-ENOTSUP, "%s", curl.error);
	c = calloc(1, sizeof(*c));
	if (!c)
		return error_setx(-ENOMEM, "out of memory");
	c->h = curl.easy_init();
	if (!c->h) {
		free(c);
		return error_setx(-ENOMEM, "cannot make an HTTP client (curl_easy_init)");
	}
	*ret = c;
	return 0;
}

void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	curl.easy_cleanup(c->h);
	free(c);
}

/* The answer's body: its first bytes kept, the rest read and dropped. */
static size_t on_answer(char *data, size_t size, size_t n, void *ctx)
{
	struct http_client *c = ctx;
	size_t len = size * n, room = sizeof(c->answer) - 1 - c->answer_len;

	memcpy(c->answer + c->answer_len, data, len < room ? len : room);
	c->answer_len += len < room ? len : room;
	c->answer[c->answer_len] = '\0';
	return len;
}

/* The first line of the answer, printable, for a message. */
static const char *answer_line(struct http_client *c)
{
	char *p;

	c->answer[strcspn(c->answer, "\r\n")] = '\0';
	for (p = c->answer; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return c->answer;
}

/* The errno of a failed transfer, and its message. */
static int transfer_error(struct http_client *c, CURLcode code, uint32_t timeout_ms)
{
	const char *why = c->errbuf[0] ? c->errbuf : curl.easy_strerror(code);

	switch (code) {
	case CURLE_COULDNT_CONNECT:
		return error_setx(-ECONNREFUSED, "cannot connect: %s", why);
	case CURLE_OPERATION_TIMEDOUT:
		return error_setx(-ETIMEDOUT, "no answer within %u ms", timeout_ms);
	case CURLE_GOT_NOTHING:
		return error_setx(-ECONNRESET, "the server closed the connection without an "
				  "answer");
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return error_setx(-ECONNRESET, "the connection failed: %s", why);
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return error_setx(-EHOSTUNREACH, "%s", why);
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		return error_setx(-EINVAL, "%s", why);
	case CURLE_OUT_OF_MEMORY:
		return error_setx(-ENOMEM, "out of memory");
	default:
		return error_setx(-EIO, "%s", why);
	}
}

/* The options of one POST, on a handle reset to its defaults. */
static void set_request(struct http_client *c, const struct http_post *rq,
			struct curl_slist *headers)
{
	CURL *h = c->h;

	curl.easy_setopt(h, CURLOPT_URL, rq->url);
	/* only the web's two: a URL is the operator's, but file:// has no business here */
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);	/* a thread's: no SIGALRM for DNS */
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	curl.easy_setopt(h, CURLOPT_POST, 1L);
	curl.easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
	curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "prof/" PROF_VERSION);
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)rq->timeout_ms);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)rq->timeout_ms);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_answer);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, c);
	/* a lost connection is found at the next request, not by a TCP timeout */
	curl.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
}

int http_post(struct http_client *c, const struct http_post *rq, uint32_t *ret_status)
{
	struct curl_slist *headers = NULL, *l;
	char line[256];
	long status = 0;
	CURLcode code;
	size_t i;
	int r = 0;

	*ret_status = 0;
	snprintf(line, sizeof(line), "Content-Type: %s", rq->content_type);
	headers = curl.slist_append(headers, line);
	/* libcurl would wait a second for "100 Continue" before a big body */
	l = headers ? curl.slist_append(headers, "Expect:") : NULL;
	for (i = 0; l && i < rq->nheaders; i++)
		l = curl.slist_append(headers, rq->headers[i]);
	if (!l) {
		curl.slist_free_all(headers);
		return error_setx(-ENOMEM, "out of memory");
	}
	curl.easy_reset(c->h);	/* keeps the connection, forgets the options */
	c->errbuf[0] = '\0';
	c->answer_len = 0;
	c->answer[0] = '\0';
	set_request(c, rq, headers);
	code = curl.easy_perform(c->h);
	if (code == CURLE_OK)
		curl.easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
	if (code != CURLE_OK)
		r = transfer_error(c, code, rq->timeout_ms);
	else if (status < 200 || status > 299)
		r = error_setx(-EREMOTEIO, "the server answered HTTP %ld%s%s", status,
			       c->answer[0] ? ": " : "", answer_line(c));
	curl.slist_free_all(headers);
	*ret_status = status > 0 && status < 1000 ? (uint32_t)status : 0;
	return r;
}
