/* SPDX-License-Identifier: MIT */
/*
 * internal.h - helpers shared by every lib/ module: error detail, logging,
 * small allocation helpers.  Never included by cmd/.
 */
#ifndef PROF_INTERNAL_H
#define PROF_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "prof.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PROF_PRINTF(f, a) __attribute__((format(printf, f, a)))

/*
 * Store "<fmt>" + ": strerror(-err)" as this thread's error message and
 * return ERR.  The innermost failure wins: call sites that only pass an
 * error up do not call it again.
 */
int error_set(int err, const char *fmt, ...) PROF_PRINTF(2, 3);

/* Like error_set() without the strerror suffix (the text says it all). */
int error_setx(int err, const char *fmt, ...) PROF_PRINTF(2, 3);

void log_msg(enum prof_log_level level, const char *fmt, ...) PROF_PRINTF(2, 3);
#define pr_warn(...) log_msg(PROF_LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(PROF_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(PROF_LOG_DEBUG, __VA_ARGS__)

/*
 * Grow *ARR (of *CAP elements of SIZE bytes) to hold at least NEED
 * elements.  0 or -ENOMEM (with the message set); *ARR is kept on failure.
 */
int grow_array(void **arr, size_t *cap, size_t need, size_t size);

/* grow_array(), the new elements zeroed. */
int grow_array_zeroed(void **arr, size_t *cap, size_t need, size_t size);

/*
 * calloc() of a block about to be written all over (a hash table being
 * filled): a big one has its pages mapped at once, not fault by fault.
 */
void *calloc_written(size_t n, size_t size);

/* qsort()'s comparison of two uint64_t, ascending. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Add C's counts to SUM, or with SIGN -1 take them off: every counter but
 * processes, threads and the end times, which do not add up.
 */
void counters_add(struct prof_counters *sum, const struct prof_counters *c, int sign);

/*
 * Whether a recording of metadata M can be weighed by W: 0, or -EINVAL with
 * the message saying why not.  prof_spool_check_weight() (report/) for the
 * report, and the live view (tail/, which may not use report/) both ask.
 */
int meta_check_weight(const struct prof_meta *m, enum prof_weight w);

/* The time of CLOCK now, in ns. */
static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ST's modification time, in ns: with device, inode and size, a file's version. */
static inline int64_t stat_mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/*
 * Copy the caller's sized options OPTS (NULL: none; its first field is
 * its size in bytes) into DST, SIZE bytes, whose sz it sets to SIZE:
 * fields the caller's struct lacks are zero (their defaults), fields it
 * has beyond SIZE must be zero.  0, or -EINVAL naming WHAT (DST is then
 * zeroed or partly copied: do not use it).
 */
int opts_copy(void *dst, size_t size, const void *opts, const char *what);

/*
 * opts_copy() of a struct the caller must give (a record to write, a
 * sink): NULL is -EINVAL too.
 */
int sized_in(void *dst, size_t size, const void *src, const char *what);

/*
 * Fill the caller's sized struct DST (its sz set by the caller) from SRC,
 * the library's own of SIZE bytes: as much as both know, the bytes of a
 * larger DST beyond SIZE zeroed, DST's sz kept.  0, or -EINVAL naming WHAT
 * (DST unset, or its sz not set: DST is then untouched).
 */
int sized_out(void *dst, const void *src, size_t size, const char *what);

/* Declare NAME, a struct TYPE of the API with its sz set (for the library's own use). */
#define SIZED(TYPE, NAME) struct TYPE NAME = { .sz = sizeof(struct TYPE) }

/*
 * The number of values of each public enum (its last + 1), for the
 * library's own tables: prof.h keeps no such count, so that a value added
 * changes no caller's array.
 */
#define UNWIND_ERROR_COUNT (PROF_UNWIND_OTHER + 1)
#define FALLBACK_COUNT (PROF_FALLBACK_DWFL + 1)
#define OFFCPU_STATE_COUNT (PROF_OFFCPU_STATE_RUNNABLE + 1)
#define OFFCPU_END_COUNT (PROF_OFFCPU_END_RECORDING + 1)
#define LOST_KIND_COUNT (PROF_LOST_SWITCH_RECORDS + 1)
#define WEIGHT_COUNT (PROF_WEIGHT_WALL + 1)
#define GROUP_COUNT (PROF_GROUP_PROCESS + 1)
#define REPORT_FORMAT_COUNT (PROF_REPORT_SVG + 1)
#define TAIL_STATE_COUNT (PROF_TAIL_STATE_ABANDONED + 1)
#define TAIL_FORMAT_COUNT (PROF_TAIL_FORMAT_JSON + 1)
_Static_assert(UNWIND_ERROR_COUNT <= PROF_SLOTS && FALLBACK_COUNT <= PROF_SLOTS &&
		       OFFCPU_STATE_COUNT <= PROF_SLOTS && LOST_KIND_COUNT <= PROF_SLOTS,
	       "a counter array by kind has PROF_SLOTS entries");

/*
 * The index of NAME in NAMES (N entries, NULL ones skipped), or -EINVAL
 * with the message "'NAME' is not a WHAT; the PLURAL are: ..." listing
 * them: what every prof_*_parse() function does.
 */
int name_parse(const char *const *names, size_t n, const char *name, const char *what,
	       const char *plural);

/* NAME, the answer of a prof_*_name() function, or "unknown" when it knew no name. */
static inline const char *name_or_unknown(const char *name)
{
	return name ? name : "unknown";
}

/* strdup that sets the error message on failure. */
char *xstrdup(const char *s);

#endif /* PROF_INTERNAL_H */
