/* SPDX-License-Identifier: MIT */
/*
 * spool_writer.h - what lib/ may ask the spool writer beyond prof.h: the
 * frames it has interned, for the names captured at the end of a recording.
 */
#ifndef PROF_SPOOL_WRITER_H
#define PROF_SPOOL_WRITER_H

#include "prof.h"

/* Call FN for every frame interned so far, in no particular order.  Stops at FN's error. */
int spool_writer_each_frame(const struct prof_spool_writer *w,
			    int (*fn)(const struct prof_frame *f, void *ctx), void *ctx);

#endif /* PROF_SPOOL_WRITER_H */
