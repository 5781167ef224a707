/* SPDX-License-Identifier: MIT */
/*
 * prof/serve.h - serving a recording that goes on over HTTP, as Go's
 * net/http/pprof serves a program's CPU profile: the pull endpoint that
 * Parca's scrape configs and Grafana Alloy's pyroscope.scrape read.  The
 * conventions of the whole API are at the top of <prof/prof.h>.
 */
#ifndef LIBPROF_SERVE_H
#define LIBPROF_SERVE_H

#include <prof/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A server of a recording's recent past.  The caller records (the whole
 * machine, processes) into the files the server names, going on in a new
 * file every PROF_SERVE_SWITCH_NS (prof_serve_recorder_opts()), and calls
 * prof_serve_tick() after each prof_recorder_poll(); the server answers
 * from those files, on threads of its own:
 *
 *   GET /debug/pprof/profile?seconds=N  the next N seconds (default 30), as
 *       Go answers it: the request waits N seconds, then gets what was
 *       recorded in them, a gzip'd profile.proto (prof_report_pprof());
 *   GET /debug/pprof/last?seconds=N  the last N seconds, at once;
 *   both take weight=cpu|off-cpu|wall (off-cpu and wall of a recording
 *       with off_cpu), and a window without samples is an empty profile;
 *   GET /debug/pprof/  an index of these.
 *
 * Only GET and HEAD (405 otherwise); another path is 404, a bad parameter
 * 400, each with a one-line reason in text/plain.  The server bounds what
 * a client can take: connections (at most max_connections, half of them
 * from one address), a request's headers (32 KiB), the time to send one
 * (10 s, however slowly it trickles in) and to take a response (60 s),
 * seconds (max_seconds, keep_seconds), and one profile is built at a
 * time.  The HTTP library, libmicrohttpd, is loaded when a server starts,
 * so that a program that never serves never loads it.  A server is used by
 * one thread, the recording loop's (prof_serve_tick(), prof_serve_stats());
 * the threads that answer requests are its own.
 */
struct prof_serve;

#define PROF_SERVE_DEFAULT_LISTEN "127.0.0.1:6060"
#define PROF_SERVE_DEFAULT_MAX_SECONDS 300
#define PROF_SERVE_DEFAULT_KEEP_SECONDS 300
#define PROF_SERVE_DEFAULT_CONNECTIONS 16
/* How long each of the recording's files covers (switch_ns). */
#define PROF_SERVE_SWITCH_NS 10000000000ull

struct prof_serve_opts {
	size_t sz;			/* sizeof(struct prof_serve_opts) */
	const char *listen;		/* "ADDR:PORT" (ADDR an IPv4 address or a host
					 * name), "[IPv6]:PORT" or "unix:PATH"; PORT 0
					 * takes a free one; NULL:
					 * PROF_SERVE_DEFAULT_LISTEN */
	const char *dir;		/* the directory of the recording's files (which
					 * must exist); NULL: a new one of the server's
					 * own in $TMPDIR or /tmp, removed by
					 * prof_serve_free() */
	uint32_t max_seconds;		/* the most seconds a request for the next
					 * seconds may ask for; 0: the default */
	uint32_t keep_seconds;		/* how far back the last seconds reach: the
					 * files older than that are removed; 0: the
					 * default */
	uint32_t max_connections;	/* 0: the default */
	bool debuginfo;			/* profiles with the functions inlined at
					 * each address and source lines, from the
					 * DWARF of the modules' debug info: about
					 * twice a profile's CPU and memory */
};

/*
 * Listen on OPTS' address and start answering (requests that come before
 * the recording has files wait for it, or fail with 503).  The address is
 * bound here, so that one in use fails at once; a unix socket left by a
 * server that is gone is replaced, and removed by prof_serve_free().
 * Returns: 0 and *ret; -EINVAL (options, an address that does not parse);
 * -EADDRINUSE, -EACCES and the other errors of socket(2), bind(2) and
 * listen(2) (the message names the address); -EEXIST (a unix socket's
 * path is another kind of file); -ENOTSUP (libmicrohttpd.so.12 cannot be
 * loaded); -EIO (libmicrohttpd did not start); -ENOMEM; the errors of
 * making the directory, or of a given one (-ENOENT, -ENOTDIR, -EACCES).
 */
int prof_serve_new(const struct prof_serve_opts *opts, struct prof_serve **ret);

/*
 * The spool path of the recording S serves, to record into: its files
 * are PATH.<YYYYmmddHHMMSSmmm>, in the server's directory.  Lent for S's
 * lifetime.
 */
const char *prof_serve_spool_path(const struct prof_serve *s);

/*
 * Set the switching of OPTS (switch_ns, switch_max_files) that the
 * recording S serves needs: files PROF_SERVE_SWITCH_NS long, as many kept
 * as the longest window served needs and no more.
 */
void prof_serve_recorder_opts(const struct prof_serve *s, struct prof_recorder_opts *opts);

/*
 * Where S answers, for people: "http://127.0.0.1:6060/debug/pprof/", or
 * "unix:PATH" for a unix socket.  Lent for S's lifetime.
 */
const char *prof_serve_url(const struct prof_serve *s);

/*
 * What the requests of S need from the recording REC, done on the
 * caller's thread after a prof_recorder_poll() of REC: when a request
 * waits for what was recorded up to a time that has passed, REC goes on
 * in a new file (prof_recorder_switch_output()), so that the ones that
 * hold its window are finished, the names of their frames written, and
 * the request is told; files older than S keeps are removed; connections
 * past their time are cut.  It never waits for a client.
 * Returns: 0; the errors of prof_recorder_switch_output() (REC can write
 * no more).
 */
int prof_serve_tick(struct prof_serve *s, struct prof_recorder *rec);

/* What a server did. */
struct prof_serve_stats {
	size_t sz;			/* sizeof(struct prof_serve_stats) */
	uint64_t requests;		/* answered, whatever the answer */
	uint64_t profiles;		/* of those, profiles sent (200) */
	uint64_t profile_bytes;		/* their bytes */
	uint64_t refused;		/* answered 4xx: a bad request */
	uint64_t failed;		/* answered 5xx: the recording could not serve it */
	uint64_t cut;			/* connections cut for taking too long */
};

/*
 * The counts of S so far into *RET (whose sz the caller set).
 * Returns: 0; -EINVAL (RET's sz not set).
 */
int prof_serve_stats(const struct prof_serve *s, struct prof_serve_stats *ret);

/*
 * Stop S (NULL: nothing): requests that wait are answered 503, those
 * being answered finish; then remove its unix socket, the recording's
 * files and the directory it made, and free it.  Call it once the
 * recording is closed.
 */
void prof_serve_free(struct prof_serve *s);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_SERVE_H */
