/* SPDX-License-Identifier: MIT */
/*
 * tail_state.h - the tail's state, shared by tail.c (following a file) and
 * recorder_tail.c (the tail of a recorder: its temporary file, and
 * discarding what was read).  Private to lib/.
 */
#ifndef PROF_TAIL_STATE_H
#define PROF_TAIL_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "prof.h"
#include "strmap.h"

struct image_set;

/* A file a recorder went on in (prof_recorder_switch_output()). */
struct tail_next {
	int fd;				/* our descriptor of it */
	struct image_set *images;	/* the files its modules map (a reference) */
};

struct prof_tail {
	struct prof_tail_opts opts;
	char *path;			/* what was asked for */
	char *opened;			/* the file followed; NULL while waiting */
	int fd;				/* our descriptor of it (the reader dups its own) */
	int wfd;			/* recorder tails: writable, to punch holes; else -1 */
	int ino;			/* inotify instance watching fd, or -1 */
	bool several;			/* sp reads several files as one (spool_merge.h) */
	struct prof_spool *sp;
	/* recorder tails (recorder_tail.c): */
	struct prof_recorder *rec;	/* the recorder this tail belongs to, while it lives */
	struct image_set *images;	/* its recorder's files (a reference), or NULL */
	void (*release)(struct prof_tail *t);	/* on free: unlink from rec, drop images */
	/*
	 * When its file is read to its end and its recorder went on in
	 * another: follow that one (stats.spools counts it).  1 when it
	 * moved, 0 when there is none (yet), or -errno.  NULL: a file's tail.
	 */
	int (*move_on)(struct prof_tail *t);
	struct tail_next *next;		/* the files the recorder went on in, not read
					 * yet, oldest first */
	size_t nnext, next_cap;

	enum prof_tail_state state;
	char reason[320];
	uint64_t skip_until;		/* from_end: skip the samples of blocks ending here or
					 * before */
	uint64_t size_base;		/* several files: the sizes of those before the last */
	uint64_t max_size;		/* the largest size the file had */
	uint64_t polled_size;		/* its size at the previous poll */
	uint64_t meta_end;		/* end of the metadata block: never discarded */
	uint64_t block_end;		/* end of the block being read */
	uint64_t seen_blocks;		/* blocks the reader had loaded at the last event */
	uint64_t consumed;		/* every block before this offset was handed out whole */
	uint64_t discarded;		/* holes were punched up to here */

	struct prof_tail_sample *batch;
	size_t batch_cap;
	const struct prof_tail_sample **batch_ptrs;	/* what a batch lends: &batch[i] */
	size_t batch_ptrs_cap;
	struct prof_tail_stats stats;

	/* thread names, interned: they are lent with every sample */
	struct strmap name_ids;
	char **names;			/* by id - 1 */
	size_t nnames, names_cap;
	const char **comm_of;		/* by thread id: its comm now; NULL: look it up */
	size_t comm_of_cap;
};

/*
 * Make T follow the file open at FD (which it takes), named NAME.  0, or
 * the errors of prof_spool_open_fd(); -ENODATA when the file has no
 * complete metadata yet (FD is then closed, and T still waits).
 */
int tail_attach_fd(struct prof_tail *t, int fd, const char *name);

/*
 * For a view of T that saw spool count *SEEN (stats.spools): whether T
 * reads another spool since, its ids all new.  Then *SEEN is updated and
 * S (a symbolizer of T, or NULL) names the new spool's frames
 * (symbolizer_follow()); the view forgets what it knew by id.
 * 1 when it changed, 0 when not, or -errno.
 */
int tail_follow(struct prof_tail *t, uint32_t *seen, struct prof_symbolizer *s);

/* An empty tail that waits, for PATH (may be NULL); 0 or -ENOMEM. */
int tail_new(const char *path, const struct prof_tail_opts *opts, struct prof_tail **ret);

#endif /* PROF_TAIL_STATE_H */
