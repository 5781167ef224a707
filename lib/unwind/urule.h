/* SPDX-License-Identifier: MIT */
/*
 * urule.h - a compiled unwind rule: how one row of a function's CFI takes
 * a frame to its caller, in the few bytes the walk reads.  Made by the
 * tables (unwind_table.c) from libdw's answers or from a program run here
 * (cfi_program.c), read by the walk (unwind_walk.c).
 */
#ifndef PROF_URULE_H
#define PROF_URULE_H

#include <stdbool.h>
#include <stdint.h>

/* Where the caller's stack pointer (the CFA) is. */
enum urule_cfa {
	UCFA_NONE = 0,		/* no CFI covers the pc */
	UCFA_RSP,		/* CFA = rsp + cfa_off */
	UCFA_RBP,		/* CFA = rbp + cfa_off */
	UCFA_PLT,		/* a PLT entry: CFA = rsp + 8, + 8 if (rip & 15) >= cfa_off */
	UCFA_END,		/* the return address is undefined: the outermost frame */
	UCFA_FALLBACK,		/* a row these rules do not encode: libdwfl unwinds it */
};

/* Where the caller's rbp is. */
enum urule_bp {
	UBP_SAME = 0,		/* unchanged */
	UBP_AT,			/* saved at CFA + bp_off */
	UBP_UNDEF,		/* lost */
};

enum {
	URULE_ENTRY = 1 << 0,	/* in the program's entry function (_start): a stack that
				 * reaches it is complete */
	URULE_SIGNAL = 1 << 1,	/* a signal frame (with UCFA_FALLBACK) */
};

/*
 * 8 bytes: the rule cache's entries (unwind.h) and a table's rows are
 * twice this, four to a cache line, and the walk misses on them.
 */
struct urule {
	uint8_t cfa : 4;	/* enum urule_cfa */
	uint8_t bp : 4;		/* enum urule_bp */
	uint8_t flags;		/* URULE_* */
	int16_t bp_off;
	int32_t cfa_off;
};
_Static_assert(sizeof(struct urule) == 8, "a rule is 8 bytes");

/*
 * Whether R names rbp's slot below sp, as an epilogue's rows do after the
 * pop (compilers do not say DW_CFA_restore there): the pop put that slot's
 * value in rbp, which is the caller's already.  (A save into the red zone
 * would look the same; compilers push callee-saved registers, GCC's
 * mov-based prologue is off in its generic tuning.)
 */
static inline bool urule_bp_popped(const struct urule *r)
{
	return r->cfa == UCFA_RSP && r->bp == UBP_AT && (int64_t)r->cfa_off + r->bp_off < 0;
}

#endif /* PROF_URULE_H */
