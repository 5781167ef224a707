/* SPDX-License-Identifier: MIT */
/*
 * spool_reader.h - the reader's state, shared by spool_read.c (files and
 * blocks) and spool_decode.c (records).  Private to lib/.
 */
#ifndef PROF_SPOOL_READER_H
#define PROF_SPOOL_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "prof.h"

/*
 * How many definitions of each kind exist, and what else of the records
 * read so far a record's checks need; the dry run advances a copy, so that
 * it checks a block's records against what the block itself defines (or
 * META sets) before them, none of which is applied yet.
 */
struct spool_counts {
	uint32_t processes, threads, modules, frames, stacks, symbols;
	uint32_t names;		/* version 3: the symbol names given whole */
	uint64_t records;
	uint64_t time_unit_ns;	/* META's: 1 to 1e9 once it is read (META comes first) */
	bool trailer;
};

struct spool_merge;

struct prof_spool {
	int fd;				/* -1 for a merged spool */
	char *name;
	uint64_t offset;	/* start of the next block */
	uint64_t file_size;
	uint64_t blocks;
	enum prof_spool_state state;
	char reason[256];

	uint8_t *stored;	/* payload as stored */
	size_t stored_cap;
	uint8_t *image;		/* an encoding-2 payload inflated: its columns */
	size_t image_cap;
	uint8_t *raw;		/* records of the current block */
	size_t raw_cap, raw_len, pos;

	struct prof_meta meta;
	char **argv;
	int32_t *pids;

	struct spool_counts n;	/* what has been applied */
	struct prof_process *processes;
	size_t processes_cap;
	struct prof_thread *threads;
	size_t threads_cap;
	struct prof_module *modules;
	size_t modules_cap;
	/*
	 * Each process's modules not yet retired with it, as a list: so that
	 * an exec or exit retires its own, not a scan of every module.
	 */
	uint32_t *live_last;		/* by process id: its newest such module id; 0 none */
	size_t live_last_cap;
	uint32_t *live_prev;		/* by module id: the one before it in its list */
	size_t live_prev_cap;
	struct prof_frame *frames;
	size_t frames_cap;
	struct prof_stack_node *stacks;
	size_t stacks_cap;
	struct prof_symbol *symbols;
	size_t symbols_cap;
	uint32_t *name_syms;	/* by name number - 1: the symbol that gave it whole */
	size_t name_syms_cap;
	/*
	 * Version 3: the FRAMEs or STACKs of one record not yet handed out,
	 * inside raw (a record of several, checked whole by the dry run).
	 */
	const uint8_t *batch_p, *batch_end;
	uint8_t batch_tag;

	uint64_t clock;		/* in time units */
	uint64_t last_period;
	uint64_t nsamples;
	uint64_t noffcpu;
	uint8_t major;		/* the format version: 2 and 3 may hold off-CPU records */
	struct prof_sample sample;
	struct prof_offcpu offcpu;
	/*
	 * Several files read as one (spool_merge.c): the tables above hold the
	 * merged definitions, the files are read by readers of their own.
	 */
	struct spool_merge *merge;
	/* its operations, set by spool_merge.c (so that this file never calls it) */
	int (*merge_next)(struct prof_spool *sp, struct prof_record *ret);
	const struct prof_spool *(*merge_current)(const struct prof_spool *sp);
	void (*merge_free)(struct spool_merge *g);
	struct prof_lost lost;
	struct prof_counters counters;
};

/* A reader with nothing read yet (fd -1), or NULL when out of memory. */
struct prof_spool *spool_reader_alloc(void);

/* Make room for N entries in table TAB of SP: 0 or -ENOMEM. */
#define TABLE_RESERVE(sp, tab, n)                                                          \
	({                                                                                 \
		void *p_ = (sp)->tab;                                                      \
		int r_ = grow_array(&p_, &(sp)->tab##_cap, (n), sizeof(*(sp)->tab));       \
		(sp)->tab = p_;                                                            \
		r_;                                                                        \
	})

/* Retire the modules of PROCESS not yet retired (an exec, an exit). */
void spool_retire_modules_of(struct prof_spool *sp, uint32_t process);

/* A read position inside a block's records. */
struct cursor {
	const uint8_t *p, *end;
	const char *err;	/* what was wrong, for the stop reason */
};

/*
 * Decode one record from C.  With APPLY false it only checks and advances
 * N; with APPLY true it also updates the tables and fills EV (type 0 for a
 * record that produces no event).  -EBADMSG with c->err set, or -ENOMEM.
 * Every check is made in both passes, before anything is applied: a record
 * that passed the dry run can fail to apply only for want of memory.
 */
int decode_record(struct prof_spool *sp, struct cursor *c, struct spool_counts *n, bool apply,
		  struct prof_record *ev);

/* The next FRAME or STACK of the record of several being read (sp->batch_p < batch_end), applied. */
int decode_batch_next(struct prof_spool *sp, struct prof_record *ev, const char **err);

#endif /* PROF_SPOOL_READER_H */
