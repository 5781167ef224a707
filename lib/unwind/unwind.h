/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - unwinding a sampled user stack from its registers and stack
 * copy.  Two engines: the compiled one (unwind_walk.c: rules from the
 * per-file tables of unwind_table.c, frame pointers where there is no
 * CFI, every register for the rare row it cannot encode: unwind_full.c),
 * and libdwfl alone
 * (unwind_dwfl.c), the fallback and the oracle.  PROF_UNWIND=dwfl picks
 * the second; PROF_UNWIND=check runs both on every sample and counts where
 * they differ; PROF_UNWIND_CAPTURE=FILE also writes each sample's
 * registers and stack, with its process's modules, for bench/unwind.
 */
#ifndef PROF_UNWIND_H
#define PROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind_table.h"

#define UNWIND_MAX_FRAMES 512

enum unwind_engine {
	UNWIND_COMPILED = 0,
	UNWIND_DWFL,		/* libdwfl alone */
	UNWIND_CHECK,		/* both, compared; the compiled engine's result is kept */
};

/*
 * 128 KiB of entries.  On a make -j2 build it answers 76% of lookups, and
 * 32,768 entries 80%; but the bigger one's hits come from memory that cc1
 * evicts between batches, the smaller one's more often from the CPU's own
 * caches: in six sets of alternating runs the recorder took 0.0 to 0.7 us
 * a sample less (0.3 on average), for ~1,800 more table lookups in a
 * recording, and 384 KiB less memory.
 */
#define RULE_CACHE_SIZE 8192

/*
 * A rule of a file's table, by the file-relative address it holds at and
 * the table's id: rule_cache_key().  16 bytes, four to a cache line: the
 * cache is read for every frame a walk takes, mostly a miss of the CPU's
 * caches, and half the bytes are twice as many of its entries in them.
 */
struct rule_cache_entry {
	uint64_t key;		/* 0: empty */
	struct urule rule;
};
_Static_assert(sizeof(struct rule_cache_entry) == 16, "a rule cache entry is 16 bytes");

/* Addresses and table ids past these are not cached (a file's addresses never are). */
#define RULE_CACHE_SVMA_BITS 40
#define RULE_CACHE_ID_BITS 24

static inline uint64_t rule_cache_key(uint64_t svma, uint32_t id)
{
	if (svma >> RULE_CACHE_SVMA_BITS || id >> RULE_CACHE_ID_BITS)
		return 0;
	return svma | (uint64_t)id << RULE_CACHE_SVMA_BITS;
}

/* What the address spaces of a recording share for unwinding. */
struct unwinder {
	enum unwind_engine engine;
	struct as_shared spaces;	/* the address spaces' files and tables */
	struct rule_cache_entry *cache;	/* RULE_CACHE_SIZE, or NULL (not yet used) */
	uint64_t cache_hits, cache_misses;
	/* each thread's last walk (walk_memo.c): WALK_MEMOS slots, or NULL; a spare */
	struct walk_memo **memos, *memo_spare;
	uint64_t memo_frames;	/* frames taken from a thread's last walk */
	/* PROF_UNWIND=check */
	uint64_t check_samples, check_same;
	uint64_t check_same_frames;	/* the same frames, but not the same completeness */
	uint64_t check_entry;		/* libdwfl lost the caller of a leaf frame */
	uint64_t check_further;		/* libdwfl stopped where the compiled walk went on
					 * to a complete stack */
	uint64_t check_diff[UNWIND_ERROR_COUNT];	/* differing samples, by the compiled
							 * engine's cause (0: complete) */
	FILE *check_log;	/* PROF_UNWIND_CHECK_LOG: each difference, or NULL */
	/* PROF_UNWIND_CAPTURE */
	FILE *capture;
	uint64_t captured;
};

/*
 * Set UW up from the environment (PROF_UNWIND...).  0, or -errno (a capture
 * file).  The address spaces it unwinds are made with &UW->spaces, and
 * released before it is.
 */
int unwinder_init(struct unwinder *uw);
void unwinder_release(struct unwinder *uw);

struct unwind_result {
	uint64_t pc[UNWIND_MAX_FRAMES];	/* lookup pcs, leaf first (return addresses - 1) */
	size_t n;
	/*
	 * With have_fp (the compiled engine's walks), each frame's rbp as the
	 * walk had it, 0 unknown: where a runtime's frame keeps what it runs
	 * (a JVM interpreter frame its Method*)
	 */
	bool have_fp;
	uint64_t fp[UNWIND_MAX_FRAMES];
	int cause;			/* 0 complete, else enum prof_unwind_error */
	uint32_t fallback[FALLBACK_COUNT];	/* frames by how they were unwound */
};

/*
 * Unwind one sample of thread TID of AS with UW.  Always fills RES (at
 * least the sampled ip, when there are registers).  0, or -ENOMEM (RES then
 * holds what was unwound before memory ran out).
 */
int unwind_sample(struct unwinder *uw, struct addr_space *as, pid_t tid, const uint64_t *regs,
		  const uint8_t *stack, uint64_t stack_size, struct unwind_result *res);

/* ---- the engines ---- */

/*
 * The engines take the sample from AS: tid, regs, stack, stack_size and sp
 * (the copy's start), set by unwind_sample().  RES starts empty.
 */

/* libdwfl alone, every frame (unwind_dwfl.c). */
void unwind_dwfl(struct addr_space *as, struct unwind_result *res);

/*
 * The word at ADDR from the sample's stack copy, or false and *CAUSE: the
 * copy was too small (ADDR above it, within a plausible stack), or ADDR is
 * no stack address.
 */
static inline bool unwind_read_stack(const struct addr_space *as, uint64_t addr, uint64_t *v,
				     enum prof_unwind_error *cause)
{
	if (as_stack_word(as, addr, v))
		return true;
	*cause = addr >= as->sp && addr - as->sp < (64u << 20) ? PROF_UNWIND_STACK_COPY
							       : PROF_UNWIND_OTHER;
	return false;
}

/* A frame, as the compiled walk knows it: rip, rsp and rbp. */
struct unwind_frame {
	uint64_t ip, sp, bp;
	bool bp_ok;		/* bp is known */
	bool exact;		/* ip is where the frame is (the sampled frame, or after a
				 * signal frame), not a return address */
};

/* What a step from a frame to its caller found. */
enum unwind_step {
	UNWIND_STEP_CALLER,	/* the caller: the frame now holds its registers */
	UNWIND_STEP_END,	/* the outermost frame: the stack is complete */
	UNWIND_STEP_STOPPED,	/* no caller: the cause says why */
};

/*
 * One frame by libdwfl, for the compiled walker: from frame F at PC (the
 * first of the sample: FIRST, every register of the sample known; else
 * only F's sp and bp) to its caller, into F.  On UNWIND_STEP_STOPPED,
 * *CAUSE says why.
 */
enum unwind_step unwind_dwfl_step(struct addr_space *as, bool first, uint64_t pc,
				  struct unwind_frame *f, enum prof_unwind_error *cause);

/*
 * Frame F, the UPTO'th of the sample (0: the sampled one), whose CFI the
 * compiled rules cannot encode, to its caller with every register known
 * (unwind_full.c): the frames below it walked again by libdw's reading of
 * their CFI.  1 with *ST (and F, its caller's registers, on
 * UNWIND_STEP_CALLER; *CAUSE on UNWIND_STEP_STOPPED); 0 when a frame on
 * the way has no CFI libdw reads, or is not where the compiled walk was:
 * libdwfl's then.
 */
int unwind_full_step(struct addr_space *as, size_t upto, struct unwind_frame *f,
		     enum unwind_step *st, enum prof_unwind_error *cause);

/* The compiled engine (unwind_walk.c): 0, or -ENOMEM. */
int unwind_walk(struct unwinder *uw, struct addr_space *as, struct unwind_result *res);

/* Free what the compiled engine keeps of UW's walks (each thread's last). */
void unwind_walk_release(struct unwinder *uw);

/* Write the sample to the capture file (unwind_capture.c). */
void unwind_capture_sample(struct unwinder *uw, struct addr_space *as, pid_t tid,
			   const uint64_t *regs, const uint8_t *stack, uint64_t stack_size);

/* A capture read back: the address spaces as they were, and the samples taken in them. */
struct unwind_capture_space {
	uint32_t pid;
	struct addr_space as;
};

struct unwind_capture_sample {
	size_t space;		/* in spaces: its pid's space as it was at the sample */
	uint32_t tid;
	uint64_t regs[SAMPLE_REGS_COUNT];
	uint64_t stack_size;
	uint8_t *stack;
};

struct unwind_capture {
	struct unwind_capture_space **spaces;
	size_t nspaces, spaces_cap;
	struct unwind_capture_sample *samples;
	size_t nsamples, samples_cap;
};

/*
 * Read the capture at PATH into *RET, its address spaces made with SHARED
 * (their files are read by their paths: they must be the files the
 * samples ran in still).  0, or -errno with the message set: the file
 * cannot be read, -EBADMSG for what is not a capture or ends inside a
 * record, -ENOMEM.  Release *RET before SHARED.
 */
int unwind_capture_read(const char *path, struct as_shared *shared, struct unwind_capture *ret);
void unwind_capture_release(struct unwind_capture *c);

#endif /* PROF_UNWIND_H */
