/* SPDX-License-Identifier: MIT */
/*
 * spool_merge.h - what a follower of several files read as one
 * (prof_spool_open_many()) needs beyond prof.h: which file is the last,
 * the one that may still grow.  Its offsets and sizes (prof_spool_status())
 * are those of the files put end to end, in the order they are read.
 */
#ifndef PROF_SPOOL_MERGE_H
#define PROF_SPOOL_MERGE_H

#include "prof.h"

/* The path of the last file of SP, a spool of several files. */
const char *spool_merge_last_path(const struct prof_spool *sp);

#endif /* PROF_SPOOL_MERGE_H */
