/* SPDX-License-Identifier: MIT */
/*
 * jit_rules.h - the unwind rules of a process's JIT code, by address: the
 * CFI a JIT wrote for its code (a jitdump's unwinding records), compiled
 * as a file's is.  Code that keeps no frame pointer (a trampoline, code
 * that uses rbp as a register) is walked by these; other anonymous code by
 * frame pointers, as before.
 */
#ifndef PROF_JIT_RULES_H
#define PROF_JIT_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "cfi_program.h"
#include "urule.h"

/* A process holds at most this many rows: a JIT's hostile or runaway CFI is bounded */
#define JIT_RULES_MAX (1u << 20)

struct jit_rule {
	uint64_t lo, hi;	/* [lo, hi), process addresses */
	struct urule r;
};

struct jit_rules {
	struct jit_rule *v;	/* sorted, not overlapping */
	size_t n, cap;
	uint32_t gen;		/* changes with every change of the rows */
};

void jit_rules_release(struct jit_rules *j);

/*
 * Code was loaded at [LO, HI): the rows of what was there before go, ROWS
 * (N of them, clipped to the range; none: frame pointers walk it) come in.
 * 0, or -ENOMEM (the range then has no rows).
 */
int jit_rules_load(struct jit_rules *j, uint64_t lo, uint64_t hi, const struct cfi_row *rows,
		   size_t n);

/* The rule at PC, or NULL. */
const struct urule *jit_rules_find(const struct jit_rules *j, uint64_t pc);

/* DST, empty, gets SRC's rows (a fork).  0 or -ENOMEM. */
int jit_rules_copy(struct jit_rules *dst, const struct jit_rules *src);

#endif /* PROF_JIT_RULES_H */
