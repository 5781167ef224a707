/* SPDX-License-Identifier: MIT */
/*
 * jit_names.h - the names of a process's JIT code as they were when each
 * sample was taken.  A JIT reuses the addresses of the code it frees: read
 * at the end, a jitdump names an address by its last load, the function
 * there when the process exited, not the one a sample ran.  Read as the
 * file grows, its loads and moves make a map of the code there now (and,
 * for a few seconds, of the code it replaced: a sample is processed a
 * little after it was taken); a frame in named code gets an address of its
 * load's own (from PROF_JIT_FRAME_BASE), so that two functions that had
 * one address stay two frames, each named at the end by its load.
 */
#ifndef PROF_JIT_NAMES_H
#define PROF_JIT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jitdump.h"
#include "strmap.h"

struct addr_space;
struct unwind_result;

/* Code replaced this long ago can no longer be what a sample ran */
#define JIT_HISTORY_NS 5000000000ull

struct jit_load {
	uint64_t start, end;	/* its process addresses */
	uint64_t time_ns;	/* when it was loaded (CLOCK_MONOTONIC; 0: unknown) */
	uint64_t gone_ns;	/* when other code replaced it (UINT64_MAX: it is there) */
	uint64_t synth;		/* its frames' addresses: synth + (pc - start) */
	uint32_t name;		/* 1 + index in names */
	bool used;		/* a frame names it: in used */
};

struct jit_names {
	struct jit_load *live;	/* the code there now: sorted, not overlapping */
	size_t nlive, live_cap;
	struct jit_load *old;	/* what it replaced, oldest first */
	size_t nold, old_cap;
	char **names;		/* distinct names, interned */
	size_t nnames, names_cap;
	struct strmap name_ids;
	struct jit_sym *used;	/* the loads frames named, as their synthetic ranges */
	size_t nused, used_cap;
	uint64_t next_synth;
	uint64_t loads;		/* loads and moves applied */
};

void jit_names_release(struct jit_names *j);

/*
 * Code NAME was loaded at [LO, HI) at TIME_NS: the code it overlaps is
 * gone from then.  0 or -ENOMEM.
 */
int jit_names_load(struct jit_names *j, uint64_t lo, uint64_t hi, uint64_t time_ns,
		   const char *name);

/* The code loaded at FROM moved to [TO, TO + SIZE) at TIME_NS.  0 or -ENOMEM. */
int jit_names_move(struct jit_names *j, uint64_t from, uint64_t to, uint64_t size,
		   uint64_t time_ns);

/*
 * Give each frame of U (a sample taken at TIME_NS in the process of AS)
 * that lies in code J knew then, outside AS's files, its load's address.
 * 0 or -ENOMEM.
 */
int jit_names_frames(struct jit_names *j, struct addr_space *as, struct unwind_result *u,
		     uint64_t time_ns);

/* The names of the loads frames were given (sorted by address, as capture wants them). */
const struct jit_sym *jit_names_used(struct jit_names *j, size_t *n);

/* Drop what only later samples could need (the process is gone): the used names stay. */
void jit_names_forget_code(struct jit_names *j);

#endif /* PROF_JIT_NAMES_H */
