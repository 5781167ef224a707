/* SPDX-License-Identifier: MIT */
/*
 * prof.h - the public API of libprof, the library behind the prof profiler:
 * all of it, one header per part.  Installed as <prof/prof.h>; a program
 * that needs one part may include just that one:
 *
 *   <prof/base.h>       the version, errors and logging, sized structs
 *   <prof/spool.h>      the data model, the spool writer and reader
 *   <prof/symbolize.h>  naming frames: functions, inline chains, lines
 *   <prof/report.h>     profiles, filters and the report formats
 *   <prof/record.h>     launching, attaching, recording with perf events
 *   <prof/tail.h>       following a spool while it is written; the live view
 *   <prof/push.h>       sending a recording's files to Pyroscope or Parca
 *   <prof/serve.h>      serving a recording over HTTP, as Go's net/http/pprof
 *
 * Conventions:
 *   - fallible functions return >= 0 on success and a negative errno on
 *     failure, each saying which in a "Returns:" line; prof_errmsg() then
 *     describes the innermost failure;
 *   - out-parameters (ret, ret_*) come last and are written only on success;
 *   - every destructor accepts NULL;
 *   - the library never prints: it logs through prof_set_log_fn(); its
 *     messages speak of what the API offers, not of prof's command line.
 *
 * Sizes.  Every struct that a caller allocates and the library reads or
 * fills begins with size_t sz, set by the caller to the struct's sizeof as
 * the caller's headers declare it (PROF_OPTS() and PROF_INIT() set it): the
 * options, the data model the spool writer reads, the statuses, summaries
 * and records the library fills.  A struct grows only at its end, so a
 * program built against older headers (a smaller struct) gets the defaults
 * of the fields added since, or only the fields it knows filled in; one
 * built against newer headers (a larger struct) is accepted when the fields
 * this library does not know are zero (else -EINVAL), and gets them zeroed
 * when the library fills it.  So that each can grow, no struct is embedded
 * in another, no array in a struct is sized by an enum (counters by kind
 * have PROF_SLOTS entries), and an array the library lends holds pointers.
 * A struct the library lends carries the library's own sz.
 *
 * Names.  Each handle is a struct prof_<object> and the functions that take
 * it first are prof_<object>_<verb>: prof_spool_* read a spool (struct
 * prof_spool), prof_spool_writer_* write one, prof_symbolizer_*,
 * prof_profile_*, prof_filter_*, prof_report_*, prof_launched_*,
 * prof_recorder_*, prof_tail_*, prof_tail_view_*, prof_viewer_* (the html
 * viewer), prof_pusher_* and prof_push_queue_* do what they say.  A record
 * is an entry of a spool (struct prof_record); an event is a perf event
 * (enum prof_event_kind); a sink takes bytes (struct prof_sink).  The verbs
 * keep one meaning each: _new makes a heap object and _free frees it; _open
 * makes one that holds a file, a process or perf events, and _close writes
 * what it still must, closes and frees it (freed even when it fails; a _free
 * beside a _close abandons without writing); _finish writes a spool's
 * trailer and keeps the handle; _add_ defines or appends; _intern_ gives the
 * id of an equal thing if there is one.  The values of each enum begin with
 * PROF_ and a word or two of its name, a prefix no other enum's values begin
 * with (enum prof_tail_state:
 * PROF_TAIL_STATE_RUNNING; enum prof_frame_kind: PROF_FRAME_USER).  A name
 * function, prof_*_name(), returns NULL for a value it does not know; a
 * parse function, prof_*_parse(), -EINVAL for a name.
 *
 * Threads.  Each handle (recorder, launched command, spool writer, spool
 * reader, profile, filter, symbolizer, tail, tail view) is used by one
 * thread at a time: calls on the same handle must not overlap, and what a
 * handle lends (records, strings, batches) is read on the thread that uses
 * it, until the call named next to it.  Different handles may be used on
 * different threads at once, with no lock of the caller's, also when they
 * read the same spool file.  prof_errmsg() and prof_errmsg_clear() are per
 * thread.  prof_set_log_fn() is called before any thread uses the library;
 * the log function may then be called on every thread that calls it.  A
 * recorder and its own tail (prof_recorder_tail()) are two handles: the
 * tail, and a symbolizer of it, may be polled on one thread while the
 * recorder polls on another, but prof_recorder_tail(), prof_tail_free() of
 * that tail and prof_recorder_close() or prof_recorder_free() must not
 * run at the same time.  The pure helpers (names of kinds, states and
 * formats, prof_max_sample_rate(), prof_counters_lost_total()) are safe
 * anywhere.  A push queue is a thread of its own, which calls the log
 * function; its handle is used by the thread that opened it.
 */
#ifndef LIBPROF_PROF_H
#define LIBPROF_PROF_H

#include <prof/base.h>
#include <prof/spool.h>
#include <prof/symbolize.h>
#include <prof/report.h>
#include <prof/record.h>
#include <prof/tail.h>
#include <prof/push.h>
#include <prof/serve.h>

#endif /* LIBPROF_PROF_H */
