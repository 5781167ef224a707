/* SPDX-License-Identifier: MIT */
/*
 * walk_memo.h - each thread's last walk, for the next to take its outer
 * frames from.  A thread sampled again is mostly in the same callers: the
 * frames from main down to the loop it runs have not moved.  Where a walk
 * reaches a frame with the registers a frame of the last walk had, the
 * steps from there are the same steps, if the words they read (each
 * caller's return address and saved rbp) still hold the same values in
 * the new sample's stack copy: a step is a function of the registers, the
 * rule of the pc (the same file's, while the mappings stay as they were)
 * and those words.  Checking a word is one load from the stack copy, hot
 * in the cache; looking up a rule is a miss of it.
 */
#ifndef PROF_WALK_MEMO_H
#define PROF_WALK_MEMO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind.h"

/* Frames kept of a walk, from its leaf: the outer ones of a deeper walk are walked */
#define MEMO_FRAMES 256
/* Threads remembered, by tid: a slot is the last thread's that took it */
#define WALK_MEMOS 64

enum memo_read {
	MEMO_READ_NONE = 0,
	MEMO_READ_OK,		/* read from the copy: value */
	MEMO_READ_OUT,		/* out of the copy */
};

/* A frame of a walk, and what its step read. */
struct memo_frame {
	struct unwind_frame in;	/* its registers */
	uint64_t pc;		/* its lookup pc (unwind_result's) */
	uint64_t ra_at, ra;	/* its return address, and where it was */
	uint64_t bp_at, bp;	/* the caller's rbp, and where it was (bp_read) */
	uint8_t bp_read;	/* enum memo_read */
	bool replay;		/* a compiled rule's step to the caller: one to take again */
};

struct walk_memo {
	const struct addr_space *as;	/* whose, while its mappings are of generation gen */
	uint32_t gen;
	uint32_t jit_gen;	/* and its JIT code's rules of this one */
	pid_t tid;
	size_t n;
	struct memo_frame f[MEMO_FRAMES];
};

/* The last walk of AS's sampled thread (as->tid), or NULL. */
struct walk_memo *walk_memo_of(struct unwinder *uw, const struct addr_space *as);

/* A memo to record a walk of AS in, emptied, or NULL (no memory). */
struct walk_memo *walk_memo_begin(struct unwinder *uw, const struct addr_space *as);

/* Keep M, from walk_memo_begin(), as the thread's last walk. */
void walk_memo_keep(struct unwinder *uw, struct walk_memo *m);

/* Whether frame F's step, taken on AS's sample, reads what it read before. */
bool walk_memo_holds(const struct addr_space *as, const struct memo_frame *f);

/* Free the memos. */
void walk_memo_release(struct unwinder *uw);

#endif /* PROF_WALK_MEMO_H */
