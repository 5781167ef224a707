/* SPDX-License-Identifier: MIT */
/*
 * unwind_table.h - compiled unwind tables: the CFI of each mapped file
 * (.eh_frame, else .debug_frame), read through libdw once and kept as
 * compact rules, one file's table shared by every process that maps it.
 * On x86-64 nearly every CFI row says "CFA = rsp or rbp + N, the return
 * address at CFA - 8, rbp unchanged or saved at CFA + K": such a row is a
 * rule of a few bytes, and walking a frame with it is a few loads.  What
 * does not fit (CFA expressions, signal frames) is marked for libdwfl.
 */
#ifndef PROF_UNWIND_TABLE_H
#define PROF_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi_program.h"
#include "urule.h"

struct utable;

/* Every table of a recording, by file, with what they cost. */
struct utables {
	struct utable **v;
	size_t n, cap;
	uint64_t bytes;		/* rows and indexes held now */
	uint64_t rows_bytes;	/* of which compiled rows */
	uint64_t max_bytes;	/* past this in rows, they are dropped (and compiled again) */
	uint64_t peak_bytes;
	uint64_t flushes;	/* times the rows were dropped for max_bytes */
	uint64_t files;		/* tables opened in all */
	uint64_t fdes_compiled;	/* FDEs compiled in all (again after a flush) */
	uint64_t rows_compiled;
	struct cfi_rows scratch;	/* an FDE's rows as its program gives them, kept
					 * from one FDE compiled to the next */
};

void utables_init(struct utables *ts);
void utables_release(struct utables *ts);

/*
 * A file, as a table knows it: where to read it, its name for messages,
 * and what tells it apart from another (its build-id, else its device,
 * inode, size and mtime).
 */
struct utable_file {
	const char *path;
	const char *name;
	const uint8_t *build_id;
	uint8_t build_id_len;
	uint32_t dev_major, dev_minor;
	uint64_t inode, size;
	int64_t mtime_ns;
};

/*
 * The table of file F, one more reference to it in *RET: the table another
 * process's mapping of the same file opened, or a new one.  A table no
 * mapping uses is kept for ten seconds (make -j runs one cc1 after
 * another), then freed; at once when the tables pass max_bytes.  0;
 * -ENOENT when the file has no CFI at all (frame pointers are then the only
 * way through it); -ENOMEM; or another -errno for CFI that a table cannot
 * index (no .eh_frame_hdr, a compressed section it cannot read): libdwfl
 * reads that.
 */
int utables_get(struct utables *ts, const struct utable_file *f, struct utable **ret);

/* A number no other table of TS had or will have. */
uint32_t utable_id(const struct utable *t);

/*
 * The file's CFI as libdw reads it (.eh_frame's, or .debug_frame's), or
 * NULL (a Go program's table without CFI): the table's, kept with it.
 */
struct Dwarf_CFI_s *utable_cfi(const struct utable *t);

/* Drop a reference; the last frees the table.  NULL is fine. */
void utables_put(struct utables *ts, struct utable *t);

/*
 * The rule at SVMA (an address of the file's own, not of a process), its
 * function's rows compiled on first use.  UCFA_NONE where no FDE covers
 * SVMA.
 */
struct urule utable_rule(struct utables *ts, struct utable *t, uint64_t svma);

/* What utable_cross_check() found. */
struct utable_cross {
	uint64_t fdes, refused;	/* FDEs in all; whose program cfi_program.c refused */
	uint64_t rows, addrs;	/* rows it made; addresses held against libdw */
	uint64_t differ;	/* addresses whose rules differ */
	uint64_t first_svma;	/* the first of them, and its two rules */
	struct urule ours, theirs;
};

/*
 * For the tests: run every FDE of PATH's .eh_frame here (cfi_program.c)
 * and hold each row's rule, at its first, middle and last address,
 * against the rule decoded from libdw's answer there (EVERY: at each of
 * its addresses).  0; -ENOTSUP for a
 * file without an indexed .eh_frame; the errors of utables_get().
 */
int utable_cross_check(const char *path, bool every, struct utable_cross *c);

#endif /* PROF_UNWIND_TABLE_H */
