/* SPDX-License-Identifier: MIT */
/*
 * spool_writer.h - what lib/ may ask the spool writer beyond prof.h: a
 * writer into a descriptor it does not own, what reached the file, and the
 * frames it has interned, for the names captured at the end of a recording.
 */
#ifndef PROF_SPOOL_WRITER_H
#define PROF_SPOOL_WRITER_H

#include "prof.h"

/*
 * A writer into FD, which stays the caller's to close (after the writer),
 * its errors naming the spool NAME.  0 or -errno, as prof_spool_writer_open_sink().
 */
int spool_writer_open_fd(int fd, const char *name, const struct prof_meta *meta,
			 const struct prof_spool_writer_opts *opts, struct prof_spool_writer **ret);

/* The samples in the blocks written whole so far: what the file holds. */
uint64_t spool_writer_samples_written(const struct prof_spool_writer *w);

/* Call FN for every frame interned so far, in no particular order.  Stops at FN's error. */
int spool_writer_each_frame(const struct prof_spool_writer *w,
			    int (*fn)(const struct prof_frame *f, void *ctx), void *ctx);

/* The same for every stack node, with its id. */
int spool_writer_each_stack(const struct prof_spool_writer *w,
			    int (*fn)(uint32_t id, const struct prof_stack_node *n, void *ctx),
			    void *ctx);

/*
 * Start loading what interning frame F, or the stack node (PARENT, FRAME),
 * will read: the frames of a stack do not depend on each other, nor do a
 * new stack's nodes, whose ids follow spool_writer_next_stack(), so their
 * lookups can all be on their way to memory at once.
 */
void spool_writer_prefetch_frame(const struct prof_spool_writer *w, const struct prof_frame *f);
void spool_writer_prefetch_stack(const struct prof_spool_writer *w, uint32_t parent,
				 uint32_t frame);
/* The id the next new stack node gets. */
uint32_t spool_writer_next_stack(const struct prof_spool_writer *w);

/* How many of a kind of definition the writer gave ids to (0 for a value that is no kind). */
enum spool_count_kind {
	SPOOL_COUNT_PROCESSES,
	SPOOL_COUNT_MODULES,
};
uint32_t spool_writer_count(const struct prof_spool_writer *w, enum spool_count_kind kind);

#endif /* PROF_SPOOL_WRITER_H */
