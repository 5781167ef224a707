/* SPDX-License-Identifier: MIT */
/*
 * regs_x86_64.h - the two numberings of x86-64's registers the unwinder
 * meets: perf's, in which a sample carries the user registers (the bits
 * of sample_regs_user, asm/perf_regs.h), and DWARF's, in which CFI and
 * libdw name them (the System V x86-64 psABI).  They differ (perf has
 * BX second, DWARF DX), so a register is always named by the numbering
 * it is in, never by a bare number.
 */
#ifndef PROF_REGS_X86_64_H
#define PROF_REGS_X86_64_H

#include <stddef.h>
#include <stdint.h>

#include <asm/perf_regs.h>

/* The user registers a sample asks for: every general-purpose one, and the ip. */
#define SAMPLE_REGS_MASK                                                                    \
	((1ull << PERF_REG_X86_AX) | (1ull << PERF_REG_X86_BX) | (1ull << PERF_REG_X86_CX) | \
	 (1ull << PERF_REG_X86_DX) | (1ull << PERF_REG_X86_SI) | (1ull << PERF_REG_X86_DI) | \
	 (1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP) | \
	 (1ull << PERF_REG_X86_R8) | (1ull << PERF_REG_X86_R9) | (1ull << PERF_REG_X86_R10) | \
	 (1ull << PERF_REG_X86_R11) | (1ull << PERF_REG_X86_R12) |                          \
	 (1ull << PERF_REG_X86_R13) | (1ull << PERF_REG_X86_R14) | (1ull << PERF_REG_X86_R15))

/*
 * Where each register is in a sample's registers: the kernel writes them
 * in the order of their bits in SAMPLE_REGS_MASK, so AX..IP keep perf's
 * numbers and R8..R15 follow IP (perf's flags and segment registers, 9
 * to 15, are not asked for).
 */
enum sample_reg {
	SAMPLE_REG_AX = PERF_REG_X86_AX,
	SAMPLE_REG_BX = PERF_REG_X86_BX,
	SAMPLE_REG_CX = PERF_REG_X86_CX,
	SAMPLE_REG_DX = PERF_REG_X86_DX,
	SAMPLE_REG_SI = PERF_REG_X86_SI,
	SAMPLE_REG_DI = PERF_REG_X86_DI,
	SAMPLE_REG_BP = PERF_REG_X86_BP,
	SAMPLE_REG_SP = PERF_REG_X86_SP,
	SAMPLE_REG_IP = PERF_REG_X86_IP,
	SAMPLE_REG_R8,
	SAMPLE_REG_R9,
	SAMPLE_REG_R10,
	SAMPLE_REG_R11,
	SAMPLE_REG_R12,
	SAMPLE_REG_R13,
	SAMPLE_REG_R14,
	SAMPLE_REG_R15,
	SAMPLE_REGS_COUNT
};

_Static_assert(__builtin_popcountll(SAMPLE_REGS_MASK) == SAMPLE_REGS_COUNT,
	       "a sample carries one word per bit of SAMPLE_REGS_MASK");
_Static_assert(SAMPLE_REG_IP + 1 == SAMPLE_REG_R8 && PERF_REG_X86_IP < PERF_REG_X86_R8,
	       "R8..R15 follow IP in a sample");

/* DWARF's x86-64 register numbers (psABI, "DWARF Register Number Mapping"). */
enum dwarf_reg {
	DWARF_REG_AX = 0,
	DWARF_REG_DX = 1,
	DWARF_REG_CX = 2,
	DWARF_REG_BX = 3,
	DWARF_REG_SI = 4,
	DWARF_REG_DI = 5,
	DWARF_REG_BP = 6,
	DWARF_REG_SP = 7,
	DWARF_REG_R8 = 8,
	DWARF_REG_R9,
	DWARF_REG_R10,
	DWARF_REG_R11,
	DWARF_REG_R12,
	DWARF_REG_R13,
	DWARF_REG_R14,
	DWARF_REG_R15,
	DWARF_REG_RA = 16,	/* the return address: the caller's ip */
	DWARF_REGS_COUNT	/* the registers libdwfl's x86-64 frames hold */
};

/* A sample's registers (SAMPLE) by DWARF's numbers, into DWARF. */
static inline void regs_to_dwarf(const uint64_t *sample, uint64_t *dwarf)
{
	static const uint8_t from_sample[DWARF_REGS_COUNT] = {
		[DWARF_REG_AX] = SAMPLE_REG_AX, [DWARF_REG_DX] = SAMPLE_REG_DX,
		[DWARF_REG_CX] = SAMPLE_REG_CX, [DWARF_REG_BX] = SAMPLE_REG_BX,
		[DWARF_REG_SI] = SAMPLE_REG_SI, [DWARF_REG_DI] = SAMPLE_REG_DI,
		[DWARF_REG_BP] = SAMPLE_REG_BP, [DWARF_REG_SP] = SAMPLE_REG_SP,
		[DWARF_REG_R8] = SAMPLE_REG_R8, [DWARF_REG_R9] = SAMPLE_REG_R9,
		[DWARF_REG_R10] = SAMPLE_REG_R10, [DWARF_REG_R11] = SAMPLE_REG_R11,
		[DWARF_REG_R12] = SAMPLE_REG_R12, [DWARF_REG_R13] = SAMPLE_REG_R13,
		[DWARF_REG_R14] = SAMPLE_REG_R14, [DWARF_REG_R15] = SAMPLE_REG_R15,
		[DWARF_REG_RA] = SAMPLE_REG_IP,
	};
	size_t i;

	for (i = 0; i < DWARF_REGS_COUNT; i++)
		dwarf[i] = sample[from_sample[i]];
}

#endif /* PROF_REGS_X86_64_H */
