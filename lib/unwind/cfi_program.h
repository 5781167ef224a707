/* SPDX-License-Identifier: MIT */
/*
 * cfi_program.h - an x86-64 .eh_frame FDE's CFI program run once, start
 * to end, into all of its rows.  libdw's dwarf_cfi_addrframe() runs the
 * program from the FDE's start up to one address and answers for that
 * address alone: a table that asked it for every row would pay the square
 * of a function's rows, and each call searches libdw's FDE tree.  This
 * runs only what x86-64 compilers and assemblers write; anything else
 * (an augmentation it does not know, DW_CFA_set_loc, a malformed entry)
 * is refused whole, and the table asks libdw as before.
 */
#ifndef PROF_CFI_PROGRAM_H
#define PROF_CFI_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "urule.h"

/* A file's bytes as mapped, and how its addresses relate to them. */
struct cfi_image {
	const uint8_t *data;	/* the whole file (elf_rawfile()) */
	size_t size;
	uint64_t vaddr_delta;	/* a byte's address - its offset, in the segment of .eh_frame */
};

/* One row: the rule of [lo, hi), addresses of the file's own. */
struct cfi_row {
	uint64_t lo, hi;
	struct urule r;
};

struct cfi_rows {
	struct cfi_row *v;
	size_t n, cap;
	uint64_t pc_begin, pc_end;	/* the FDE's range */
};

void cfi_rows_release(struct cfi_rows *rows);

/*
 * Run the FDE at file offset OFF of IMG into ROWS (emptied first), in
 * address order, covering [pc_begin, pc_end) without gaps; rows of one rule
 * side by side are merged.  The rules are what unwind_table.c's decode()
 * makes of libdw's answer for the same address.  0; -ENOTSUP for CFI run
 * only by libdw; -EINVAL for an entry that is not a well-formed FDE;
 * -ENOMEM.
 */
int cfi_fde_rows(const struct cfi_image *img, uint64_t off, struct cfi_rows *rows);

#endif /* PROF_CFI_PROGRAM_H */
