/* SPDX-License-Identifier: MIT */
/*
 * serve.c - prof serve's API (prof/serve.h): a server put together (its
 * socket, the directory of the recording's files, libmicrohttpd's
 * daemon), the recording loop's part in it, and taking it down.  The loop
 * calls prof_serve_tick() between polls: it notes the files the recorder
 * goes on in, goes on in a new one itself when a request waits for the
 * files that hold its window to be finished (at most once a second, so
 * that no client can make the recorder switch files faster; a finished
 * file carries the names of its frames, kernel and JIT ones too, which
 * only the end of a file writes), removes the files older than any window
 * served, and cuts connections past their deadline.  None of it waits for
 * a client.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "serve_http.h"
#include "serve_state.h"

/* The least time between two files begun for requests. */
#define SWITCH_GAP_NS 1000000000ull
#define MAX_SECONDS_LIMIT 86400u
#define MAX_CONNECTIONS_LIMIT 1024u

static int check_opts(struct prof_serve_opts *o, const struct prof_serve_opts *opts)
{
	int r = opts_copy(o, sizeof(*o), opts, "serve");

	if (r < 0)
		return r;
	if (o->max_seconds > MAX_SECONDS_LIMIT || o->keep_seconds > MAX_SECONDS_LIMIT)
		return error_setx(-EINVAL, "a server serves at most %u seconds", MAX_SECONDS_LIMIT);
	if (o->max_connections > MAX_CONNECTIONS_LIMIT)
		return error_setx(-EINVAL, "a server takes at most %u connections",
				  MAX_CONNECTIONS_LIMIT);
	if (!o->listen)
		o->listen = PROF_SERVE_DEFAULT_LISTEN;
	if (!o->max_seconds)
		o->max_seconds = PROF_SERVE_DEFAULT_MAX_SECONDS;
	if (!o->keep_seconds)
		o->keep_seconds = PROF_SERVE_DEFAULT_KEEP_SECONDS;
	if (!o->max_connections)
		o->max_connections = PROF_SERVE_DEFAULT_CONNECTIONS;
	return 0;
}

int prof_serve_new(const struct prof_serve_opts *opts, struct prof_serve **ret)
{
	struct prof_serve *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return error_setx(-ENOMEM, "out of memory");
	s->sock.fd = -1;
	sync_init(&s->sync);
	pthread_mutex_init(&s->conns_lock, NULL);
	s->stats.sz = sizeof(s->stats);
	r = check_opts(&s->opts, opts);
	/* the address first: one in use fails before anything else is made */
	if (r == 0)
		r = listen_open(s->opts.listen, &s->sock);
	s->opts.listen = NULL;	/* the caller's, and used */
	/* (files not made are zero: their release does nothing) */
	if (r == 0)
		r = files_init(&s->files, s->opts.dir);
	s->opts.dir = NULL;
	if (r == 0)
		r = http_start(s);
	if (r < 0) {
		prof_serve_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

const char *prof_serve_spool_path(const struct prof_serve *s)
{
	return s->files.base;
}

const char *prof_serve_url(const struct prof_serve *s)
{
	return s->sock.url;
}

/* The longest window served, in seconds: what the files must cover. */
static uint64_t window_s(const struct prof_serve *s)
{
	return s->opts.keep_seconds > s->opts.max_seconds ? s->opts.keep_seconds
							  : s->opts.max_seconds;
}

/* The most files the window can need: one every 10 s, and one a second for requests. */
static uint32_t max_files(const struct prof_serve *s)
{
	return (uint32_t)(window_s(s) + window_s(s) * 1000000000u / PROF_SERVE_SWITCH_NS + 4);
}

void prof_serve_recorder_opts(const struct prof_serve *s, struct prof_recorder_opts *opts)
{
	opts->switch_ns = PROF_SERVE_SWITCH_NS;
	opts->switch_max_files = max_files(s);
}

int prof_serve_tick(struct prof_serve *s, struct prof_recorder *rec)
{
	SIZED(prof_recording_summary, sum);
	uint64_t now = clock_ns(CLOCK_MONOTONIC), window = window_s(s) * 1000000000u, at;
	int r = 0;

	/* a file the recorder went on in during its poll began after the last tick */
	if (prof_recorder_summary(rec, &sum) == 0 && sum.spool_path)
		r = files_note(&s->files, sum.spool_path, s->last_tick_ns);
	if (r == 0 && sync_due(&s->sync, now, SWITCH_GAP_NS)) {
		at = clock_ns(CLOCK_MONOTONIC);
		r = prof_recorder_switch_output(rec);
		if (r == 0 && prof_recorder_summary(rec, &sum) == 0 && sum.spool_path)
			r = files_note(&s->files, sum.spool_path, at);
		if (r == 0)
			sync_publish(&s->sync, at);
	}
	files_prune(&s->files, now > window ? now - window : 0, max_files(s));
	serve_count(&s->stats.cut, http_sweep(s, now));
	s->last_tick_ns = clock_ns(CLOCK_MONOTONIC);
	return r;
}

int prof_serve_stats(const struct prof_serve *s, struct prof_serve_stats *ret)
{
	struct prof_serve_stats now = { .sz = sizeof(now) };

	now.requests = __atomic_load_n(&s->stats.requests, __ATOMIC_RELAXED);
	now.profiles = __atomic_load_n(&s->stats.profiles, __ATOMIC_RELAXED);
	now.profile_bytes = __atomic_load_n(&s->stats.profile_bytes, __ATOMIC_RELAXED);
	now.refused = __atomic_load_n(&s->stats.refused, __ATOMIC_RELAXED);
	now.failed = __atomic_load_n(&s->stats.failed, __ATOMIC_RELAXED);
	now.cut = __atomic_load_n(&s->stats.cut, __ATOMIC_RELAXED);
	return sized_out(ret, &now, sizeof(now), "serve stats");
}

void prof_serve_free(struct prof_serve *s)
{
	if (!s)
		return;
	/* the waits end first, so that the daemon's threads can be joined */
	sync_stop(&s->sync);
	http_stop(s);
	files_release(&s->files);
	listen_release(&s->sock);
	pthread_mutex_destroy(&s->conns_lock);
	sync_release(&s->sync);
	free(s);
}
