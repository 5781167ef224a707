/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - one address space per process: its executable mappings and a
 * libdwfl session kept across samples (CFI stays parsed), and the DWARF
 * unwinding of one sample from its user registers and stack copy.
 */
#ifndef PROF_UNWIND_H
#define PROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf_ring.h"

#define UNWIND_MAX_FRAMES 512

struct as_module {
	uint64_t start, end, pgoff;
	uint64_t bias;		/* load bias: runtime address - ELF vaddr */
	char *path;		/* as the process named it */
	char *open_path;	/* where we can read it (may be /proc/PID/map_files/...) */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint32_t spool_id;	/* the recorder's module id */
	uint8_t build_id_len;
	uint8_t build_id[64];
	bool elf_ok;		/* open_path is an ELF file we could read */
	bool vdso;
	bool replaced;		/* deleted or replaced: read through map_files */
};

struct Dwfl;

struct addr_space {
	pid_t pid;
	struct as_module *mods;	/* sorted by start, never overlapping */
	size_t nmods, cap;
	struct Dwfl *dwfl;
	bool dwfl_stale;	/* rebuild before the next unwind */
	/* the sample being unwound, for the libdwfl callbacks */
	pid_t tid;
	const uint64_t *regs;	/* PERF_REGS_COUNT, in perf's order */
	const uint8_t *stack;
	uint64_t stack_size, sp;
	bool read_past_copy;	/* a read above sp beyond the copy */
	bool read_failed;	/* any read libdwfl could not be served */
	bool thread_given;
};

void as_init(struct addr_space *as, pid_t pid);
void as_release(struct addr_space *as);

/*
 * Describe a new executable mapping (reads its ELF file for the load bias
 * and build-id).  Fills M; the caller then adds it.  0, or -errno when even
 * the description fails (out of memory); an unreadable file is not an
 * error: the module is kept with elf_ok false.
 */
int as_describe(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t maj,
		uint32_t min, uint64_t inode, const char *path, struct as_module *m);

/*
 * Insert M (taking its strings).  Modules it overlaps are removed; their
 * spool ids are appended to RETIRED (at most *NRETIRED in, count out).
 * 0 or -ENOMEM.
 */
int as_add(struct addr_space *as, struct as_module *m, uint32_t *retired, size_t *nretired);

/* The module holding ADDR, or NULL. */
struct as_module *as_find(struct addr_space *as, uint64_t addr);

/* Copy SRC's modules into the empty DST (a fork).  0 or -ENOMEM. */
int as_clone(struct addr_space *dst, const struct addr_space *src);

/* Drop every module (an exec), appending their spool ids as as_add does. */
void as_clear(struct addr_space *as, uint32_t *retired, size_t *nretired);

struct unwind_result {
	uint64_t pc[UNWIND_MAX_FRAMES];	/* lookup pcs, leaf first (return addresses - 1) */
	size_t n;
	int cause;			/* 0 complete, else enum prof_unwind_error */
};

/* Unwind one sample.  Always fills RES (at least the sampled ip). */
void unwind_sample(struct addr_space *as, pid_t tid, const uint64_t *regs, const uint8_t *stack,
		   uint64_t stack_size, struct unwind_result *res);

#endif /* PROF_UNWIND_H */
