/* SPDX-License-Identifier: MIT */
/*
 * serve_http.c - prof serve's HTTP side.  libmicrohttpd (GNU's embeddable
 * server) parses HTTP and holds the limits a server a network can reach
 * needs: the connections at once, and from one address, the bytes of a
 * request's headers (431 past them), a client silent too long.  It is
 * loaded with dlopen() when a server starts, so that record and report
 * never load it (nor the gnutls it brings).  A thread per connection, so
 * that a request can wait the seconds it asked for; the listening thread
 * sleeps in poll() while no client talks.  What libmicrohttpd does not
 * bound, this file does: a request that trickles in (a byte a second) or a
 * response taken as slowly is cut at its deadline by the recording loop's
 * tick (http_sweep(), which only shuts a socket down); the path (404), the
 * method (405) and the parameters (400) are checked before anything waits.
 * Every answer that is not a profile is one line of text/plain, with
 * X-Go-Pprof set as Go's net/http/pprof sets it, so that go tool pprof
 * shows it as the error.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "internal.h"
#include "serve_build.h"
#include "serve_http.h"
#include "serve_state.h"

#define MHD_SONAME "libmicrohttpd.so.12"
/* The bytes of a request's line and headers, and what MHD needs to parse them. */
#define REQUEST_MEMORY (32u << 10)
/* A request must come whole this long after its connection (or the last answer). */
#define REQUEST_TIMEOUT_NS 10000000000ull
/* And its answer be taken in this long. */
#define SEND_TIMEOUT_NS 60000000000ull
/* MHD's own: a client that sends or takes nothing for this long is dropped. */
#define IDLE_TIMEOUT_S 10
/* How long a request waits for the loop to finish the files it needs, and for its turn to build. */
#define PUBLISH_WAIT_NS 5000000000ull
#define BUILD_WAIT_NS 30000000000ull
/* Go's net/http/pprof's seconds when none are given. */
#define DEFAULT_SECONDS 30u
#define NS_PER_S 1000000000ull

static struct {
	pthread_once_t once;
	char error[256];
	struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback,
					   void *, MHD_AccessHandlerCallback, void *, ...);
	void (*stop_daemon)(struct MHD_Daemon *);
	const char *(*lookup_value)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
	const union MHD_ConnectionInfo *(*connection_info)(struct MHD_Connection *,
							   enum MHD_ConnectionInfoType, ...);
	struct MHD_Response *(*response_from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
	enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int,
					  struct MHD_Response *);
	void (*destroy_response)(struct MHD_Response *);
} mhd = { .once = PTHREAD_ONCE_INIT };

static void mhd_load(void)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(mhd.error, sizeof(mhd.error), "%s", dlerror());
		return;
	}
	*(void **)&mhd.stop_daemon = dlsym(h, "MHD_stop_daemon");
	*(void **)&mhd.lookup_value = dlsym(h, "MHD_lookup_connection_value");
	*(void **)&mhd.connection_info = dlsym(h, "MHD_get_connection_info");
	*(void **)&mhd.response_from_buffer = dlsym(h, "MHD_create_response_from_buffer");
	*(void **)&mhd.add_header = dlsym(h, "MHD_add_response_header");
	*(void **)&mhd.queue_response = dlsym(h, "MHD_queue_response");
	*(void **)&mhd.destroy_response = dlsym(h, "MHD_destroy_response");
	if (mhd.stop_daemon && mhd.lookup_value && mhd.connection_info &&
	    mhd.response_from_buffer && mhd.add_header && mhd.queue_response &&
	    mhd.destroy_response)
		*(void **)&mhd.start_daemon = dlsym(h, "MHD_start_daemon");
	if (!mhd.start_daemon)
		snprintf(mhd.error, sizeof(mhd.error), "%s lacks its functions", MHD_SONAME);
}

/* ---- connections and their deadlines -------------------------------------- */

static struct serve_conn *conn_slot(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = mhd.connection_info(c,
								MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* The connection of slot K is being answered (BUSY), or is not and has until DEADLINE_NS. */
static void conn_set(struct prof_serve *s, struct serve_conn *k, bool busy, uint64_t deadline_ns)
{
	if (!k)
		return;
	pthread_mutex_lock(&s->conns_lock);
	k->busy = busy;
	k->deadline_ns = deadline_ns;
	pthread_mutex_unlock(&s->conns_lock);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct prof_serve *s = cls;
	const union MHD_ConnectionInfo *fd;
	size_t i;

	pthread_mutex_lock(&s->conns_lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = mhd.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (i = 0; fd && i < s->nconns && s->conns[i].conn; i++)
			;
		if (fd && i < s->nconns) {
			s->conns[i] = (struct serve_conn){
				.conn = c, .fd = fd->connect_fd,
				.deadline_ns = clock_ns(CLOCK_MONOTONIC) + REQUEST_TIMEOUT_NS };
			*socket_context = &s->conns[i];
		}
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		/* before MHD closes the socket: the sweep never shuts down another's */
		((struct serve_conn *)*socket_context)->conn = NULL;
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&s->conns_lock);
}

/* A request was answered: the next one on the connection must come in time. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	(void)req;
	(void)toe;
	conn_set(cls, conn_slot(c), false, clock_ns(CLOCK_MONOTONIC) + REQUEST_TIMEOUT_NS);
}

uint64_t http_sweep(struct prof_serve *s, uint64_t now_ns)
{
	uint64_t cut = 0;
	size_t i;

	pthread_mutex_lock(&s->conns_lock);
	for (i = 0; i < s->nconns; i++) {
		struct serve_conn *k = &s->conns[i];

		if (!k->conn || k->busy || k->cut || now_ns < k->deadline_ns)
			continue;
		/* its thread sees the end of the stream and closes it */
		shutdown(k->fd, SHUT_RDWR);
		k->cut = true;
		cut++;
		pr_info("cut a connection past its deadline: a request that did not come "
			"whole, or an answer not taken, in time");
	}
	pthread_mutex_unlock(&s->conns_lock);
	return cut;
}

/* Whether the client of the socket at CTX left (a request waiting seconds need not go on). */
static bool client_gone(void *ctx)
{
	char c;
	ssize_t n = recv(*(const int *)ctx, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/* ---- answers -------------------------------------------------------------- */

/*
 * Queue the answer STATUS with BODY of LEN bytes (freed by MHD if FREE)
 * as CONTENT_TYPE, and count it.
 */
static enum MHD_Result reply(struct prof_serve *s, struct MHD_Connection *c, unsigned status,
			     const char *content_type, void *body, size_t len, bool free_body)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = mhd.response_from_buffer(len, body, free_body ? MHD_RESPMEM_MUST_FREE
							     : MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		if (free_body)
			free(body);
		return MHD_NO;
	}
	mhd.add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	mhd.add_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_OK && !strcmp(content_type, "application/octet-stream")) {
		mhd.add_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
			       "attachment; filename=\"profile\"");
	} else if (status >= 400) {
		mhd.add_header(resp, "X-Go-Pprof", "1");
		if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
			mhd.add_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	}
	r = mhd.queue_response(c, status, resp);
	mhd.destroy_response(resp);
	serve_count(&s->stats.requests, 1);
	if (status >= 500)
		serve_count(&s->stats.failed, 1);
	else if (status >= 400)
		serve_count(&s->stats.refused, 1);
	return r;
}

/* A one-line answer of STATUS, its reason in text/plain. */
static enum MHD_Result reply_error(struct prof_serve *s, struct MHD_Connection *c,
				   unsigned status, const char *fmt, ...) PROF_PRINTF(4, 5);

static enum MHD_Result reply_error(struct prof_serve *s, struct MHD_Connection *c,
				   unsigned status, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	line[n] = '\0';
	pr_info("answered %u: %.*s", status, n - 1, line);
	return reply(s, c, status, "text/plain; charset=utf-8", line, (size_t)n, false);
}

/* V, a client's value, as a reason may show it: printable, and not too long. */
static const char *shown(const char *v, char *buf, size_t len)
{
	size_t i;

	for (i = 0; v[i] && i + 4 < len; i++)
		buf[i] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
	if (v[i]) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

/*
 * The seconds=N of a request: DEFAULT (at most MAX) when there is none,
 * else a whole number from 1 to MAX, which is MAX_WHAT.  0 and *RET, or
 * -EINVAL with the reason in MSG.
 */
static int parse_seconds(const char *v, unsigned dflt, unsigned max, const char *max_what,
			 unsigned *ret, char *msg, size_t len)
{
	char buf[48], *end;
	unsigned long n;

	if (!v) {
		*ret = dflt < max ? dflt : max;
		return 0;
	}
	if (!*v || strspn(v, "0123456789") != strlen(v)) {
		double d = strtod(v, &end);

		/* "-3", "1.5": numbers, but not of seconds; "abc": none */
		snprintf(msg, len, "seconds: %s: %s",
			 !*v || *end ? "not a number" : d < 1 ? "must be at least 1"
							      : "not a whole number",
			 shown(v, buf, sizeof(buf)));
		return -EINVAL;
	}
	errno = 0;
	n = strtoul(v, &end, 10);
	if (n == 0 && !errno) {
		snprintf(msg, len, "seconds: must be at least 1: %s", shown(v, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (errno || n > max) {
		snprintf(msg, len, "seconds: %s is more than %s, %u", shown(v, buf, sizeof(buf)),
			 max_what, max);
		return -EINVAL;
	}
	*ret = (unsigned)n;
	return 0;
}

static enum MHD_Result answer_index(struct prof_serve *s, struct MHD_Connection *c)
{
	char *page;
	int n;

	n = asprintf(&page,
		"<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n"
		"/debug/pprof/ of prof serve<br>\n<br>\nProfiles served:\n<ul>\n"
		"<li><a href=\"profile?seconds=%u\">profile</a>: the CPU profile of the next "
		"seconds=N seconds (%u when not given, at most %u), sent when they are over, as "
		"Go's net/http/pprof sends it</li>\n"
		"<li><a href=\"last?seconds=%u\">last</a>: the CPU profile of the last seconds=N "
		"seconds (at most %u), sent at once</li>\n"
		"</ul>\nBoth take weight=cpu (the default), or off-cpu or wall (by time) from a "
		"recording with off-CPU intervals.  Each is a gzip'd profile.proto, for go tool "
		"pprof.\n</body>\n</html>\n",
		DEFAULT_SECONDS, DEFAULT_SECONDS, s->opts.max_seconds, DEFAULT_SECONDS,
		s->opts.keep_seconds);
	if (n < 0)
		return MHD_NO;
	return reply(s, c, MHD_HTTP_OK, "text/html; charset=utf-8", page, (size_t)n, true);
}

/* Answer the request for the profile of window W (after the waits), building it. */
static enum MHD_Result send_profile(struct prof_serve *s, struct MHD_Connection *c,
				   const struct build_window *w)
{
	uint64_t samples = 0;
	char *buf = NULL;
	size_t len = 0;
	int r;

	r = sync_build_begin(&s->sync, clock_ns(CLOCK_MONOTONIC) + BUILD_WAIT_NS);
	if (r == SYNC_STOPPING)
		return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE, "prof serve is stopping");
	if (r < 0)
		return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "busy building other profiles; try again later");
	r = build_profile(&s->files, w, &buf, &len, &samples);
	sync_build_end(&s->sync);
	if (r == -EINVAL)
		return reply_error(s, c, MHD_HTTP_BAD_REQUEST, "weight=%s: %s",
				   prof_weight_name(w->weight), prof_errmsg());
	if (r == -ENOENT)
		return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", prof_errmsg());
	if (r < 0)
		return reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "cannot build the profile: %s", prof_errmsg());
	pr_info("answered 200: a profile of %.3f s, %" PRIu64 " %s, %zu bytes",
		(double)(w->to_ns - w->from_ns) / 1e9, samples,
		w->weight == PROF_WEIGHT_CPU ? "samples" : "samples and intervals", len);
	serve_count(&s->stats.profiles, 1);
	serve_count(&s->stats.profile_bytes, len);
	return reply(s, c, MHD_HTTP_OK, "application/octet-stream", buf, len, true);
}

/*
 * /debug/pprof/profile (the next seconds, LAST false) and /debug/pprof/last
 * (the last ones): the parameters, the waits, the profile.
 */
static enum MHD_Result answer_profile(struct prof_serve *s, struct MHD_Connection *c,
				      struct serve_conn *k, bool last, bool head)
{
	const char *sec = mhd.lookup_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	const char *weight = mhd.lookup_value(c, MHD_GET_ARGUMENT_KIND, "weight");
	struct build_window w = { .weight = PROF_WEIGHT_CPU, .dwarf = s->opts.debuginfo };
	uint64_t now, span;
	unsigned seconds;
	char msg[256], buf[48];
	int r;

	if (parse_seconds(sec, DEFAULT_SECONDS, last ? s->opts.keep_seconds : s->opts.max_seconds,
			  last ? "this server keeps" : "this server's most", &seconds, msg,
			  sizeof(msg)) < 0)
		return reply_error(s, c, MHD_HTTP_BAD_REQUEST, "%s", msg);
	if (weight) {
		r = prof_weight_parse(weight);
		if (r < 0)
			return reply_error(s, c, MHD_HTTP_BAD_REQUEST, "weight: '%s' is not a "
					   "weight; the weights are: cpu, off-cpu, wall",
					   shown(weight, buf, sizeof(buf)));
		w.weight = (enum prof_weight)r;
	}
	/* refused now, not after the seconds it asked for */
	if (w.weight != PROF_WEIGHT_CPU && build_check_weight(&s->files, w.weight) < 0)
		return reply_error(s, c, MHD_HTTP_BAD_REQUEST, "weight=%s: %s",
				   prof_weight_name(w.weight), prof_errmsg());
	if (head)
		return reply(s, c, MHD_HTTP_OK, "application/octet-stream", "", 0, false);
	now = clock_ns(CLOCK_MONOTONIC);
	span = (uint64_t)seconds * NS_PER_S;
	if (last) {
		w.to_ns = now;
		w.from_ns = now > span ? now - span : 0;
	} else {
		w.from_ns = now;
		w.to_ns = now + span;
		r = sync_sleep_until(&s->sync, w.to_ns, client_gone, k ? &k->fd : NULL);
		if (r == SYNC_GONE) {
			pr_info("a client that asked for %u seconds left before they were over",
				seconds);
			return MHD_NO;
		}
		if (r < 0)
			return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE,
					   "prof serve is stopping");
	}
	r = sync_wait_published(&s->sync, w.to_ns, clock_ns(CLOCK_MONOTONIC) + PUBLISH_WAIT_NS);
	if (r == SYNC_STOPPING)
		return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE, "prof serve is stopping");
	if (r < 0)
		return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "the recording did not catch up in time");
	return send_profile(s, c, &w);
}

/* The request's answer, by its path. */
static enum MHD_Result answer(struct prof_serve *s, struct MHD_Connection *c, const char *url,
			      bool head)
{
	struct serve_conn *k = conn_slot(c);
	enum MHD_Result r;

	conn_set(s, k, true, 0);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		r = answer_index(s, c);
	else if (!strcmp(url, "/debug/pprof/profile"))
		r = answer_profile(s, c, k, false, head);
	else if (!strcmp(url, "/debug/pprof/last"))
		r = answer_profile(s, c, k, true, head);
	else
		r = reply_error(s, c, MHD_HTTP_NOT_FOUND, "not found: prof serve answers "
				"/debug/pprof/, /debug/pprof/profile and /debug/pprof/last");
	conn_set(s, k, false, clock_ns(CLOCK_MONOTONIC) + SEND_TIMEOUT_NS);
	return r;
}

/* Whether the request has a body: a GET or HEAD does not. */
static bool has_body(struct MHD_Connection *c)
{
	const char *len = mhd.lookup_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strcmp(len, "0")) ||
	       mhd.lookup_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/*
 * MHD calls this once the headers are in (*REQ NULL), then once the body
 * is (there is none: anything but a bare GET or HEAD is answered at the
 * first call, which tells MHD not to read a body, and to close after).
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **req)
{
	static int seen;
	struct prof_serve *s = cls;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
	enum MHD_Result r;

	(void)version;
	(void)upload_data;
	if (!*req) {
		*req = &seen;
		if (!head && strcmp(method, MHD_HTTP_METHOD_GET))
			r = reply_error(s, c, MHD_HTTP_METHOD_NOT_ALLOWED,
					"method not allowed: prof serve answers GET and HEAD");
		else if (has_body(c))
			r = reply_error(s, c, MHD_HTTP_BAD_REQUEST,
					"a GET or HEAD request has no body");
		else
			return MHD_YES;
		conn_set(s, conn_slot(c), false, clock_ns(CLOCK_MONOTONIC) + SEND_TIMEOUT_NS);
		return r;
	}
	if (*upload_size)
		return MHD_NO;	/* a body after all */
	return answer(s, c, url, head);
}

/* MHD's messages (a client's bad request, mostly): the debug log's. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	pr_debug("libmicrohttpd: %s", line);
}

int http_start(struct prof_serve *s)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG | (s->sock.ipv6 ? MHD_USE_IPv6 : 0);
	unsigned max = s->opts.max_connections;
	sigset_t all, old;

	pthread_once(&mhd.once, mhd_load);
	if (!mhd.start_daemon)
		return error_setx(-ENOTSUP, "cannot serve: cannot load %s: %s (apt-get install "
				  "libmicrohttpd12)", MHD_SONAME, mhd.error);
	/* a slot per connection MHD lets in, and some for those it is closing */
	s->nconns = max + 8;
	s->conns = calloc(s->nconns, sizeof(*s->conns));
	if (!s->conns)
		return error_setx(-ENOMEM, "out of memory");
	/* the caller's signals (^C, SIGTERM) for its own thread: its threads inherit these */
	sigemptyset(&all);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGHUP);
	sigaddset(&all, SIGQUIT);
	sigaddset(&all, SIGUSR1);
	sigaddset(&all, SIGUSR2);
	sigaddset(&all, SIGCHLD);
	sigaddset(&all, SIGALRM);
	sigaddset(&all, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	s->daemon = mhd.start_daemon(flags, 0, NULL, NULL, on_request, s,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->sock.fd,
		MHD_OPTION_CONNECTION_LIMIT, max,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, max > 1 ? max / 2 : 1u,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
		MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* the daemon's, closed by it (even by a start that failed, at times) */
	s->sock.fd = -1;
	if (!s->daemon)
		return error_setx(-EIO, "cannot serve on %s: libmicrohttpd did not start "
				  "(its reason is logged at debug level)", s->sock.url);
	return 0;
}

void http_stop(struct prof_serve *s)
{
	if (s->daemon)
		mhd.stop_daemon(s->daemon);
	s->daemon = NULL;
	free(s->conns);
	s->conns = NULL;
	s->nconns = 0;
}
