/* SPDX-License-Identifier: MIT */
/*
 * addr_space.h - one address space per process: its executable mappings
 * (modules, each with its file and, once a sample needs it, its compiled
 * unwind table), the anonymous executable ranges (JIT code), and the
 * libdwfl session of the libdwfl unwinder, made only when it is used.
 */
#ifndef PROF_ADDR_SPACE_H
#define PROF_ADDR_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "jit_rules.h"
#include "prof.h"
#include "unwind_table.h"

struct as_module {
	uint64_t start, end, pgoff;
	uint64_t bias;		/* load bias: runtime address - ELF vaddr */
	char *path;		/* as the process named it */
	char *open_path;	/* where we can read it (may be /proc/PID/map_files/...) */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint32_t spool_id;	/* the recorder's module id */
	uint32_t frame_module_id;	/* the module its frames name (pt_frame_module_id()) */
	uint8_t build_id_len;
	uint8_t build_id[PROF_BUILD_ID_MAX];
	bool elf_ok;		/* open_path is an ELF file we could read */
	bool vdso;
	bool replaced;		/* deleted or replaced: read through map_files */
	/* the compiled unwinder's view of the file, looked up on first use */
	bool table_tried;
	bool no_cfi;		/* the file has no CFI: frame pointers only */
	struct utable *table;	/* a reference, or NULL (no table: see no_cfi) */
};

/* An anonymous executable range: JIT code, trampolines. */
struct as_range {
	uint64_t start, end;
};

struct elf_facts;

/* A file held open by the address spaces of a recording (see as_shared). */
struct as_held {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	int fd;
	uint8_t build_id_len;
	uint8_t build_id[PROF_BUILD_ID_MAX];
};

/*
 * A stat(2) of a path, kept for a moment: a machine's thousands of
 * processes map the same few files, whose paths would each be looked up
 * twice for every mapping.
 */
#define AS_STAT_MEMO 64
struct as_stat_memo {
	uint64_t path_hash;	/* 0: empty */
	uint64_t when_ns;	/* CLOCK_MONOTONIC of the stat */
	int err;		/* its errno, or 0 */
	uint64_t ino, size;
	int64_t mtime_ns;
	uint32_t dev_major, dev_minor;
};

/*
 * What the address spaces of a recording share: the compiled unwind
 * tables of the files they map, what those files' ELF headers say, and
 * the generations handed out.
 */
struct as_shared {
	struct utables tables;
	struct as_stat_memo stats[AS_STAT_MEMO];
	struct elf_facts *facts;	/* ELF_FACTS_MAX of them, or NULL (not yet used) */
	size_t nfacts, next_fact;	/* filled; the one replaced next when full */
	uint32_t gens;
	/*
	 * Files found only through a process's /proc entries (another mount
	 * namespace, a deleted file), held open: a later process of the same
	 * file may be gone before its mmap is read.  Never closed before the
	 * end (their /proc/self/fd paths are in modules); AS_HELD_MAX at most.
	 */
	struct as_held *held;
	size_t nheld;
};

void as_shared_init(struct as_shared *s);
void as_shared_release(struct as_shared *s);

struct Dwfl;

#define AS_ANCESTORS 4

struct addr_space {
	pid_t pid;
	/*
	 * Its parent, grandparent...  (0: unknown): where a file of a process
	 * already gone is looked for, in their mount namespace.
	 */
	pid_t ancestors[AS_ANCESTORS];
	struct as_shared *shared;	/* what it shares with the others; NULL: nothing */
	uint32_t gen;		/* changes with every change of the modules */
	uint32_t anon_gen;	/* changes with every change of the anonymous ranges */
	uint32_t captured_gen, captured_anon_gen;	/* as last written to a capture */
	struct as_module *mods;	/* sorted by start, never overlapping */
	size_t nmods, cap;
	struct as_range *anon;	/* sorted, merged */
	size_t nanon, anon_cap;
	struct jit_rules jit;	/* the CFI its JIT wrote for its code (a jitdump's) */
	struct Dwfl *dwfl;
	bool dwfl_stale;	/* rebuild before the next use */
	/* the sample being unwound, for the libdwfl callbacks */
	pid_t tid;
	const uint64_t *regs;	/* SAMPLE_REGS_COUNT, by enum sample_reg */
	const uint8_t *stack;
	uint64_t stack_size, sp;
	bool read_past_copy;	/* a read above sp beyond the copy */
	bool read_failed;	/* any read libdwfl could not be served */
	bool thread_given;
	/* a one-frame step (unwind_dwfl.c): registers of the frame to unwind */
	bool step;
	uint64_t step_pc, step_sp, step_bp;
	bool step_bp_ok;
};

/* SHARED may be NULL: no ELF facts kept, no compiled tables (libdwfl only). */
void as_init(struct addr_space *as, pid_t pid, struct as_shared *shared);
void as_release(struct addr_space *as);

/*
 * Describe a new executable mapping of AS's process (reads its ELF file
 * for the load bias and build-id, once per file for all address spaces
 * that share AS's facts).  Fills M; the caller then adds it.  0, or -errno when
 * even the description fails (out of memory); an unreadable file is not
 * an error: the module is kept with elf_ok false.
 */
int as_describe(struct addr_space *as, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t maj,
		uint32_t min, uint64_t inode, const char *path, struct as_module *m);

/*
 * The same for a mapping known by the build-id of its file (BUILD_ID,
 * LEN > 0 bytes: an mmap2 record with PERF_RECORD_MISC_MMAP_BUILD_ID) in
 * place of its device and inode: a file is trusted only with that
 * build-id, and M gets the device and inode of the file found.  Found
 * nowhere, M has no file to read (elf_ok false) and carries the build-id.
 */
int as_describe_build_id(struct addr_space *as, uint64_t start, uint64_t end, uint64_t pgoff,
			 const uint8_t *build_id, uint8_t len, const char *path,
			 struct as_module *m);

/*
 * Insert M (taking its strings).  Modules it overlaps are removed; their
 * spool ids are appended to RETIRED (at most *NRETIRED in, count out).
 * 0 or -ENOMEM.
 */
int as_add(struct addr_space *as, struct as_module *m, uint32_t *retired, size_t *nretired);

/* Note the anonymous executable range [START, END).  0 or -ENOMEM. */
int as_add_anon(struct addr_space *as, uint64_t start, uint64_t end);

/* The module holding ADDR, or NULL. */
struct as_module *as_find(struct addr_space *as, uint64_t addr);

/* Whether ADDR is code: in a module or an anonymous executable range. */
bool as_is_code(struct addr_space *as, uint64_t addr);

/* Look up the table of M's file, once: 0, or -ENOMEM (not remembered). */
int as_find_table(struct addr_space *as, struct as_module *m);

/*
 * The compiled unwind table of M, opened on first use: 0 and *RET, NULL
 * when M has none (M->no_cfi then says whether its file has no CFI at
 * all); or -ENOMEM, which is not remembered: the next call tries again.
 * Inline: it is on every frame's path, and after the first use a load.
 */
static inline int as_table(struct addr_space *as, struct as_module *m, struct utable **ret)
{
	int r = m->table_tried ? 0 : as_find_table(as, m);

	*ret = m->table;
	return r;
}

/*
 * The word at ADDR of the sample's stack copy (as->stack from as->sp), or
 * false: ADDR is not inside it.  Inline: every step of a walk reads one.
 */
static inline bool as_stack_word(const struct addr_space *as, uint64_t addr, uint64_t *v)
{
	if (addr >= as->sp && addr - as->sp <= as->stack_size &&
	    as->stack_size - (addr - as->sp) >= 8) {
		memcpy(v, as->stack + (addr - as->sp), 8);
		return true;
	}
	return false;
}

/* PARENT's process is the parent of AS's (its ancestors, AS's after it). */
void as_set_parent(struct addr_space *as, const struct addr_space *parent);

/*
 * Look again for the files of the modules that have none (now that the
 * ancestors are known: a process seen before the record of its fork).
 */
void as_find_files(struct addr_space *as);

/* Copy SRC's modules into the empty DST (a fork).  0 or -ENOMEM. */
int as_clone(struct addr_space *dst, const struct addr_space *src);

/* Drop every module (an exec), appending their spool ids as as_add does. */
void as_clear(struct addr_space *as, uint32_t *retired, size_t *nretired);

/* The libdwfl session of AS, made or brought up to date; false if it cannot be. */
bool as_dwfl(struct addr_space *as);

#endif /* PROF_ADDR_SPACE_H */
