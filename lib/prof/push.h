/* SPDX-License-Identifier: MIT */
/*
 * prof/push.h - sending a recording to a continuous-profiling server: each
 * spool file as one gzip'd pprof profile, with labels, over the HTTP API of
 * Pyroscope or Parca.  A pusher sends the files it is given; a push queue
 * follows a recording that switches files (switch_* of the recorder) and
 * sends each file once it is finished, retrying while the server is away.
 * The conventions of the whole API are at the top of <prof/prof.h>.
 *
 * The HTTP client is libcurl, loaded (dlopen(3), libcurl.so.4) by the first
 * pusher or queue made, not linked: a program that never pushes does not
 * load it nor the ~30 libraries it brings.
 *
 * What a profile carries.  The samples of the file (CPU samples; the
 * off-CPU intervals of a recording made with off_cpu are not sent), as
 * prof_report_pprof() writes them, and the labels of its series:
 *   __name__      process_cpu (Pyroscope's and Parca's name of a CPU profile;
 *                 in Pyroscope's ingest it is the ".cpu" of the name)
 *   service_name  the service: the option's, else the recorded command's
 *                 name (its argv[0] without the directory), the comm of the
 *                 first process attached, or the host's name for the whole
 *                 machine
 *   host          the recording host's name (its metadata)
 *   pid, comm     for a recording of one process (a command, or one pid
 *                 attached): its pid and comm
 *   NAME          each label of the options
 * Values are made printable ASCII without any of space , { } = " \ (each
 * such byte becomes '_'), so that every protocol carries the same labels;
 * a service name keeps to Pyroscope's letters, digits and _ . - /.
 *
 * The ledger.  Each file sent is listed (its name, the wall time its
 * recording began, the endpoint) in the hidden file .BASE.pushed beside it,
 * BASE being its name less the .<YYYYmmddHHMMSSmmm> of a file of a
 * switched recording: a pusher skips a file the ledger lists as sent to
 * the same endpoint, so that a recording's files reach each server once,
 * whoever sends them (a queue, a later queue on the same path after a
 * restart, a pusher).  A file is sent at least once: a sender killed
 * between the server's answer and the ledger's line sends it again.
 */
#ifndef LIBPROF_PUSH_H
#define LIBPROF_PUSH_H

#include <prof/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a profile is sent: one POST per file. */
enum prof_push_protocol {
	PROF_PUSH_PROTOCOL_AUTO = 0,	/* from the URL (prof_pusher_new()) */
	PROF_PUSH_PROTOCOL_INGEST,	/* Pyroscope's /ingest: the profile as the body,
					 * name=SERVICE.cpu{LABELS}, from, until (Unix
					 * seconds), format=pprof, sampleRate (the
					 * recording's rate in Hz), spyName=prof in the
					 * query */
	PROF_PUSH_PROTOCOL_PUSH,	/* Pyroscope's /push.v1.PusherService/Push, in
					 * Connect's JSON: {"series": [{"labels": [{name,
					 * value}...], "samples": [{"ID": UUID,
					 * "rawProfile": BASE64}]}]} */
	PROF_PUSH_PROTOCOL_PARCA,	/* Parca's /api/profiles/writeraw (WriteRaw in
					 * grpc-gateway's JSON): {"series": [{"labels":
					 * {"labels": [{name, value}...]}, "samples":
					 * [{"rawProfile": BASE64}]}], "normalized":
					 * false} */
};

/* The name of a protocol ("auto", "ingest", "push", "parca"), or NULL. */
const char *prof_push_protocol_name(unsigned protocol);

/* Returns: the protocol named NAME; -EINVAL (the message lists the names). */
int prof_push_protocol_parse(const char *name);

#define PROF_PUSH_TIMEOUT_MS 10000u	/* the default of timeout_ms */

struct prof_push_opts {
	size_t sz;			/* sizeof(struct prof_push_opts) */
	const char *url;		/* http:// or https://, an endpoint or a server */
	enum prof_push_protocol protocol;
	const char *service;		/* service_name; NULL: from each recording */
	const char *const *labels;	/* NAME=VALUE each: NAME a Prometheus label name
					 * not beginning "__" nor service_name (the
					 * service has its own field), VALUE not empty,
					 * printable ASCII without space , { } = " \;
					 * one given twice, or one of the labels above,
					 * takes the last value given */
	size_t nlabels;
	uint32_t timeout_ms;		/* the most one POST may take, connecting
					 * included; 0: PROF_PUSH_TIMEOUT_MS */
	/* a push queue's */
	uint32_t max_files;		/* the most files of the recording kept on disk,
					 * the one being written included: a file sent is
					 * removed, and past the bound the oldest unsent
					 * file is dropped (removed unsent); 0: every file
					 * is kept, sent or not */
	uint32_t retry_min_ms;		/* the wait after a failed POST, doubling after
					 * each failure in a row; 0: 1000 */
	uint32_t retry_max_ms;		/* the most that wait grows to; 0: 60000 */
};

/*
 * Whether OPTS make a pusher: the URL parses, names an endpoint of its
 * protocol (when given) and the labels and service are valid; libcurl is
 * not loaded.  *RET_ENDPOINT (if not NULL): the URL the profiles go to, to
 * be freed by the caller; *RET_PROTOCOL (if not NULL): the protocol.
 * Returns: 0; -EINVAL (the message says what is wrong); -ENOMEM.
 */
int prof_push_check(const struct prof_push_opts *opts, char **ret_endpoint,
		    enum prof_push_protocol *ret_protocol);

/*
 * A pusher: one server, one HTTP connection kept between its POSTs.
 */
struct prof_pusher;

/*
 * A pusher of OPTS, loading libcurl.  The URL is an endpoint or a server.
 * A URL whose path ends in /ingest is Pyroscope's ingest, one ending in
 * /push.v1.PusherService/Push Pyroscope's push, one ending in
 * /profiles/writeraw (/api/profiles/writeraw on a Parca server) Parca's.
 * Any other URL is a server's, the protocol's path appended to it: the
 * protocol of OPTS, else Parca's on port 7070 (Parca's own) and
 * Pyroscope's ingest on any other.  A protocol given that another
 * endpoint's path contradicts is an error.  A query in the URL is kept
 * (ingest's parameters are added to it); userinfo (http://USER:PASS@host)
 * is sent as basic authentication; proxies are libcurl's (http_proxy,
 * https_proxy, no_proxy).
 * Returns: 0 and *ret; those of prof_push_check(); -ENOTSUP (libcurl
 * cannot be loaded).
 */
int prof_pusher_new(const struct prof_push_opts *opts, struct prof_pusher **ret);

/* The URL profiles go to (lent for the pusher's lifetime), and how. */
const char *prof_pusher_endpoint(const struct prof_pusher *p);
enum prof_push_protocol prof_pusher_protocol(const struct prof_pusher *p);

/* What one prof_pusher_push_file() did. */
struct prof_push_result {
	size_t sz;			/* sizeof(struct prof_push_result) */
	bool sent;			/* a server accepted the profile */
	bool skipped;			/* the ledger lists the file as sent already */
	uint64_t samples;		/* in the profile (0: the file holds none, and
					 * nothing was sent: a server takes no empty
					 * profile) */
	uint64_t bytes;			/* the request's body */
	uint32_t status;		/* the HTTP status of the answer; 0: none came */
	uint64_t from_ns, until_ns;	/* the wall time the file covers (CLOCK_REALTIME):
					 * its start, and its end (the trailer's, else
					 * the file's last change) */
	uint64_t elapsed_ns;		/* the POST, from connecting to the answer */
};

/*
 * Send the spool file PATH as one profile (nothing when the ledger lists it
 * as sent to this endpoint, or it holds no sample), and list it in the
 * ledger once a server accepted it (a 2xx answer).  A file still being
 * written (prof_spool_has_writer()) is refused.  *RET (if not NULL, its sz
 * set by the caller): what was done, also on a failure once the file was
 * read (its status, for a server's refusal).
 * Returns: 0; -EBUSY (a recorder still writes the file); the errors of
 * prof_spool_open() and prof_report_pprof(); -ECONNREFUSED, -ETIMEDOUT,
 * -ECONNRESET, -EHOSTUNREACH, -EIO (the request failed: the message says
 * how); -EREMOTEIO (the server answered with a status other than 2xx: the
 * message has the status and the first line of its answer); -ENOMEM.
 */
int prof_pusher_push_file(struct prof_pusher *p, const char *path, struct prof_push_result *ret);

/* Free P (NULL: nothing), closing its connection. */
void prof_pusher_free(struct prof_pusher *p);

/*
 * A push queue: a thread that follows the files of the recording at
 * SPOOL_PATH (SPOOL_PATH.<YYYYmmddHHMMSSmmm>, as a recorder with switch_*
 * names them) and sends each, once finished (no recorder holds it: see
 * prof_spool_has_writer()), oldest first, through a pusher of its own.
 * It looks for new files every 200 ms.  Files there before it started,
 * left by a recording that ended or was killed, are sent as well, except
 * those the ledger lists.  A POST that fails for want of the server (no
 * connection, a timeout, a 5xx, 408 or 429 status) is retried, after
 * retry_min_ms doubling up to retry_max_ms, the recording going on; one the
 * server refuses (another 4xx), or a file that cannot be read, is left on
 * disk, counted as failed, and the queue goes on with the next.  With
 * max_files, a file sent is removed, and an unsent file is dropped when
 * there are more than max_files (see prof_push_opts).  What happens is
 * logged: each file sent at PROF_LOG_INFO, the first failure of a series
 * and each file dropped or refused at PROF_LOG_WARN, the retries at
 * PROF_LOG_INFO.  The recorder of such a recording must keep every file
 * (switch_max_files 0): the queue removes them, once sent.
 */
struct prof_push_queue;

/*
 * Start a queue of OPTS for the recording at SPOOL_PATH: its thread runs
 * until prof_push_queue_close().
 * Returns: 0 and *ret; those of prof_pusher_new(); -EINVAL (no SPOOL_PATH,
 * or one that names a directory); -errno of stat(2) of its directory, or
 * of pthread_create(3).
 */
int prof_push_queue_open(const struct prof_push_opts *opts, const char *spool_path,
			 struct prof_push_queue **ret);

/* What a queue did, all in all. */
struct prof_push_stats {
	size_t sz;			/* sizeof(struct prof_push_stats) */
	uint64_t pushed;		/* files a server accepted */
	uint64_t retries;		/* POSTs that failed and were tried again */
	uint64_t dropped;		/* files removed unsent, to keep max_files */
	uint64_t failed;		/* files refused by the server or unreadable (left) */
	uint64_t empty;			/* files without a sample: nothing to send */
	uint64_t skipped;		/* files the ledger listed as sent already */
	uint64_t unsent;		/* finished files left unsent when it stopped */
	uint64_t bytes;			/* the bodies of the requests accepted */
	uint64_t samples;		/* the samples in them */
	uint64_t max_delay_ns;		/* the longest a file waited, from its end (its
					 * mtime) until a server accepted it */
	char last_error[256];		/* the last failure's message; "" if none */
};

/*
 * The recording is over (its recorder closed): send what is left, the
 * last file too, at once and oldest first, for at most TIMEOUT_MS more,
 * stopping at the first failure for want of the server (so that a server
 * away does not hold the caller up), then end the thread and free Q (NULL:
 * nothing).  Files left unsent stay on disk, for a later queue or pusher.
 * The counts go to *RET (if not NULL, its sz set by the caller) in every
 * case.
 * Returns: 0 when nothing finished was left unsent; -ETIMEDOUT (files
 * left: the message says how many, and the last failure); -EINVAL (RET's
 * sz not set; Q is closed all the same).
 */
int prof_push_queue_close(struct prof_push_queue *q, uint32_t timeout_ms,
			  struct prof_push_stats *ret);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_PUSH_H */
