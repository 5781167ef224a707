/* SPDX-License-Identifier: MIT */
/*
 * symtab.h - a sorted table of named address ranges, for looking up which
 * symbol holds an address.  Entries carry a 64-bit key, so one table can
 * hold several address spaces (the spool's symbol scopes); ELF tables use
 * key 0.  Private to lib/.
 */
#ifndef PROF_SYMTAB_H
#define PROF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct symtab_entry {
	uint64_t key;
	uint64_t start;
	uint64_t end;		/* exclusive; after symtab_finish() */
	const char *name;	/* lent by whoever added it */
	uint32_t rank;		/* among entries at one start, the highest wins */
	uint32_t sized;		/* had a size: end is its own, not the next start */
};

struct symtab {
	struct symtab_entry *v;
	size_t n, cap;
};

/*
 * Add a symbol of SIZE bytes at START (NAME is not copied).  A symbol of
 * size 0 reaches to the next symbol of its key, but not past LIMIT.  Ranges
 * that would wrap end at UINT64_MAX.  0 or -ENOMEM.
 */
int symtab_add(struct symtab *t, uint64_t key, uint64_t start, uint64_t size, uint64_t limit,
	       const char *name, uint32_t rank);

/* Sort, keep the best of the entries sharing a start, and settle the ends. */
void symtab_finish(struct symtab *t);

/* The symbol of KEY holding ADDR, or NULL.  Only after symtab_finish(). */
const struct symtab_entry *symtab_lookup(const struct symtab *t, uint64_t key, uint64_t addr);

/*
 * symtab_lookup(), and in *UNTIL an address above ADDR below which every
 * address from ADDR up has the same answer: a caller that looks up sorted
 * addresses looks up each symbol, and each gap between symbols, once.
 */
const struct symtab_entry *symtab_lookup_until(const struct symtab *t, uint64_t key,
					       uint64_t addr, uint64_t *until);

void symtab_release(struct symtab *t);

#endif /* PROF_SYMTAB_H */
