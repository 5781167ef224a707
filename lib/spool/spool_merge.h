/* SPDX-License-Identifier: MIT */
/*
 * spool_merge.h - what a follower of several files read as one
 * (prof_spool_open_many()) needs beyond prof.h: which file is the last,
 * the one that may still grow, and the files recorded after it.  Its
 * offsets and sizes (prof_spool_status()) are those of the files put end
 * to end, in the order they are read.
 */
#ifndef PROF_SPOOL_MERGE_H
#define PROF_SPOOL_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "prof.h"

/* The path of the last file of SP, a spool of several files. */
const char *spool_merge_last_path(const struct prof_spool *sp);

/* The sizes of the files of SP before its last, put end to end. */
uint64_t spool_merge_size_before_last(const struct prof_spool *sp);

/*
 * PATHS (N >= 1) read as one spool, as prof_spool_open_many() does; with
 * FOLLOW, when the last file's trailer is read and the file is one of a
 * recording split by --switch-output, the next file recorded is opened and
 * read on (the trailer is handed out only when there is none).
 */
int spool_merge_open(const char *const *paths, size_t n, bool follow, struct prof_spool **ret);

/*
 * PATH's length without its ".<YYYYmmddHHMMSSmmm>" if it is named as a file
 * of a recording split by --switch-output (FILE.<stamp>), else 0.
 */
size_t spool_series_base_len(const char *path);

/*
 * The file of BASE's series (BASE.<stamp>) recorded first after AFTER (a
 * file of the series; NULL: the first of all), or with NEWEST the last of
 * all, in *RET (to free): 1, 0 when there is none, or -errno.
 */
int spool_series_find(const char *base, const char *after, bool newest, char **ret);

#endif /* PROF_SPOOL_MERGE_H */
