/* SPDX-License-Identifier: MIT */
/*
 * prof/base.h - what every part of libprof's API shares: the version,
 * errors and logging, and the sized structs.  The conventions of the whole
 * API are at the top of <prof/prof.h>.
 */
#ifndef LIBPROF_BASE_H
#define LIBPROF_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROF_VERSION "0.1.0"

/*
 * Declare NAME, a struct TYPE (a prof_ struct that begins with sz) with sz
 * set to its size, every other byte zero, and the fields given, as
 * libbpf's LIBBPF_OPTS() does:
 *
 *	PROF_OPTS(prof_filter_opts, fo, .pids = "42", .no_kernel = true);
 *	r = prof_filter_new(&fo, &f);
 *
 * For an option struct, and for any other struct the library reads or
 * fills (a status, a summary, a record).
 */
#define PROF_OPTS(TYPE, NAME, ...)                                                         \
	struct TYPE NAME = ({                                                              \
		memset(&NAME, 0, sizeof(struct TYPE));                                     \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };                   \
	})

/* A struct TYPE with sz set and the fields given, as a value (a compound literal). */
#define PROF_INIT(TYPE, ...) ((struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ })

/*
 * The entries of a counter array indexed by an enum's values (lost events
 * by kind, unwind errors by cause...): more than the enum has, so that a
 * value added later changes no struct's size.
 */
#define PROF_SLOTS 16

/* ---- errors and logging ------------------------------------------------ */

/*
 * The message left by the last failing call on this thread, e.g.
 * "cannot open spool 'x': No such file or directory".  Never NULL; empty
 * when nothing failed.  Valid until the next libprof call on this thread.
 */
const char *prof_errmsg(void);

/* Forget the last error message (after recovering from an error). */
void prof_errmsg_clear(void);

enum prof_log_level {
	PROF_LOG_WARN,		/* a recovered problem, worded "..., skipping" */
	PROF_LOG_INFO,
	PROF_LOG_DEBUG,
};

typedef void (*prof_log_fn)(enum prof_log_level level, const char *msg, void *ctx);

/*
 * Route the library's log lines (no trailing newline) to FN, or drop them
 * when FN is NULL (the default).  Messages above MAX_LEVEL are not even
 * formatted.  Not thread-safe: call it before using the library.
 */
void prof_set_log_fn(prof_log_fn fn, enum prof_log_level max_level, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_BASE_H */
