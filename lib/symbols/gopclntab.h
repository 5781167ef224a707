/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.h - the function table of a Go program, .gopclntab: what Go's
 * runtime names its own frames with, and so what a release build, linked
 * with -ldflags="-s -w" and without .symtab, .dynsym or DWARF, still has.
 * Each function's entry, end and name; the layouts of Go 1.16 and 1.17
 * (magic 0xfffffffa) and of 1.18 on (0xfffffff0, 0xfffffff1), as Go's
 * runtime/symtab.go and debug/gosym read them.  The section is untrusted:
 * every offset is checked before it is read.  Private to lib/.
 */
#ifndef PROF_GOPCLNTAB_H
#define PROF_GOPCLNTAB_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gopclntab {
	const uint8_t *p;	/* the section's bytes, in the file's mapping */
	size_t size;
	uint64_t text;		/* the address function entries are offsets from (1.18 on) */
	uint64_t nfunc;
	uint8_t ptrsize;
	bool entry_off;		/* 1.18 on: 32-bit entries, offsets from text */
	size_t funcnames, functab, pcln, pctab;	/* offsets into p */
	size_t cutab, filetab;	/* the compilation units' file indexes, the file names */
	uint8_t quantum;	/* of instruction addresses, 1 on x86 */
};

/* A pc-value table of one function, read in order. */
struct gopclntab_pcvalue {
	const uint8_t *p, *end;
	uint64_t pc;
	int64_t val;
	uint8_t quantum;
	bool first;
};

/*
 * The .gopclntab of ELF into *RET: 0, -ENOENT when it has none, -ENOTSUP
 * for a layout of Go before 1.16, -EBADMSG for one that does not hold
 * together.
 */
int gopclntab_open(Elf *elf, struct gopclntab *ret);

/*
 * Function I (below g->nfunc): [*START, *END) in the file's addresses and
 * its name, which lives as long as the file's mapping.  False when the
 * entry is damaged.
 */
bool gopclntab_func(const struct gopclntab *g, uint64_t i, uint64_t *start, uint64_t *end,
		    const char **name);

/*
 * Start reading function I's SP table (pcsp: how far below the entry's
 * stack pointer it stands at each pc, which is what unwinding a frame
 * without frame pointer or CFI needs): false when it has none.
 */
bool gopclntab_sp_table(const struct gopclntab *g, uint64_t i, struct gopclntab_pcvalue *it);

/* The function that holds address PC, into *I: false when none does. */
bool gopclntab_find(const struct gopclntab *g, uint64_t pc, uint64_t *i);

/*
 * The source file and line of address PC in function I (Go's own
 * funcline: its pcfile and pcln tables, the file through its compilation
 * unit's file table): false where the tables do not say.  *FILE lives as
 * long as the file's mapping.
 */
bool gopclntab_line(const struct gopclntab *g, uint64_t i, uint64_t pc, const char **file,
		    uint32_t *line);

/* The next range [*LO, *HI) of the table and its value: false at its end or where damaged. */
bool gopclntab_pcvalue_next(struct gopclntab_pcvalue *it, uint64_t *lo, uint64_t *hi,
			    int64_t *val);

#endif /* PROF_GOPCLNTAB_H */
