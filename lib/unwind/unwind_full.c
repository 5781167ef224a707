/* SPDX-License-Identifier: MIT */
/*
 * unwind_full.c - a frame the compiled rules cannot encode, stepped with
 * every register known.  The compiled walk (unwind_walk.c) knows rip, rsp
 * and rbp; a few frames need more: ld.so's _dl_runtime_resolve keeps its
 * CFA in rbx (every process with lazy binding samples it as it starts),
 * GCC's stack realignment reads it through an expression, a signal frame
 * restores its registers from the context on the stack.  For those the
 * frames below are walked again from the sample's registers, each by its
 * file's CFI as libdw reads it (dwarf_cfi_addrframe() on the table's own
 * Dwarf_CFI) and run here on the stack copy, so that what each callee
 * saved (rbx) is known where the frame reads it.
 *
 * libdwfl did these frames before, but its session for a process opens
 * and maps every file the process maps (cc1 and nine libraries, 33 MiB
 * mapped and unmapped again) before the first step: on a make -j2, one
 * process in ten, ~0.1 ms each, and under -a each new process that
 * samples its resolver.  The tables already hold each file's CFI.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind.h"

/* Deeper is refused: the CFI of compilers and assemblers needs a few slots. */
#define EVAL_STACK 32

/* A frame with every register: DWARF's numbers, RA its ip. */
struct full_state {
	uint64_t v[DWARF_REGS_COUNT];
	uint32_t known;		/* bit R: v[R] is known */
	bool exact;		/* v[RA] is where the frame is, not a return address */
};

static bool reg_get(const struct full_state *s, uint64_t r, uint64_t *v)
{
	if (r >= DWARF_REGS_COUNT || !(s->known >> r & 1))
		return false;
	*v = s->v[r];
	return true;
}

static uint64_t binop(uint8_t atom, uint64_t a, uint64_t b)
{
	switch (atom) {
	case DW_OP_plus: return a + b;
	case DW_OP_minus: return a - b;
	case DW_OP_mul: return a * b;
	case DW_OP_and: return a & b;
	case DW_OP_or: return a | b;
	case DW_OP_xor: return a ^ b;
	case DW_OP_shl: return b < 64 ? a << b : 0;
	case DW_OP_shr: return b < 64 ? a >> b : 0;
	case DW_OP_shra: return (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
	case DW_OP_eq: return (int64_t)a == (int64_t)b;
	case DW_OP_ne: return (int64_t)a != (int64_t)b;
	case DW_OP_lt: return (int64_t)a < (int64_t)b;
	case DW_OP_le: return (int64_t)a <= (int64_t)b;
	case DW_OP_gt: return (int64_t)a > (int64_t)b;
	default: return (int64_t)a >= (int64_t)b;	/* DW_OP_ge */
	}
}

/*
 * Run OPS, a DWARF expression as libdw gives a CFA or a register's rule,
 * on S: the value into *OUT.  CFA, for a register's rule: the frame's CFA,
 * which libdw's rules push with DW_OP_call_frame_cfa, their result then an
 * address to read (saved at CFA + n) unless DW_OP_stack_value follows.
 * Branches and the operators CFI does not use are refused.
 */
static bool eval(const struct addr_space *as, const struct full_state *s, const Dwarf_Op *ops,
		 size_t nops, const uint64_t *cfa, uint64_t *out, enum prof_unwind_error *cause)
{
	uint64_t st[EVAL_STACK], a;
	bool location = false;
	size_t n = 0, i;

	*cause = PROF_UNWIND_OTHER;
	for (i = 0; i < nops; i++) {
		uint8_t atom = ops[i].atom;
		uint64_t x = ops[i].number;

		if (n == EVAL_STACK)
			return false;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			st[n++] = atom - DW_OP_lit0;
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (!reg_get(s, atom - DW_OP_breg0, &a))
				return false;
			st[n++] = a + x;
			continue;
		}
		/* a register's value (libdw's form of a DW_CFA_register rule: vfork's return address) */
		if ((atom >= DW_OP_reg0 && atom <= DW_OP_reg31) || atom == DW_OP_regx) {
			if (!reg_get(s, atom == DW_OP_regx ? x : (uint64_t)(atom - DW_OP_reg0), &a))
				return false;
			st[n++] = a;
			continue;
		}
		switch (atom) {
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			st[n++] = x;
			break;
		case DW_OP_bregx:
			if (!reg_get(s, x, &a))
				return false;
			st[n++] = a + ops[i].number2;
			break;
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return false;	/* the CFA's own expression */
			st[n++] = *cfa;
			location = true;
			break;
		case DW_OP_stack_value:
			location = false;
			break;
		case DW_OP_nop:
			break;
		case DW_OP_dup:		/* the top again: DW_OP_pick 0 */
		case DW_OP_over:	/* the one below it: DW_OP_pick 1 */
		case DW_OP_pick:
			x = atom == DW_OP_dup ? 0 : atom == DW_OP_over ? 1 : x;
			if (x >= n)
				return false;
			st[n] = st[n - 1 - x];
			n++;
			break;
		case DW_OP_drop:
			if (n < 1)
				return false;
			n--;
			break;
		case DW_OP_swap:
			if (n < 2)
				return false;
			a = st[n - 1];
			st[n - 1] = st[n - 2];
			st[n - 2] = a;
			break;
		case DW_OP_deref:
			if (n < 1 || !unwind_read_stack(as, st[n - 1], &st[n - 1], cause))
				return false;
			break;
		case DW_OP_plus_uconst:
			if (n < 1)
				return false;
			st[n - 1] += x;
			break;
		case DW_OP_neg:
		case DW_OP_not:
			if (n < 1)
				return false;
			st[n - 1] = atom == DW_OP_neg ? -st[n - 1] : ~st[n - 1];
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and: case DW_OP_or:
		case DW_OP_xor: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: case DW_OP_eq:
		case DW_OP_ne: case DW_OP_lt: case DW_OP_le: case DW_OP_gt: case DW_OP_ge:
			if (n < 2)
				return false;
			n--;
			st[n - 1] = binop(atom, st[n - 1], st[n]);
			break;
		default:
			return false;
		}
	}
	if (n < 1)
		return false;
	if (location)
		return unwind_read_stack(as, st[n - 1], out, cause);
	*out = st[n - 1];
	return true;
}

/* How step() ended. */
enum full_step {
	FULL_CALLER,		/* *CALLER holds the caller */
	FULL_END,		/* the return address is undefined: the outermost frame */
	FULL_STOPPED,		/* no caller: *CAUSE says why */
	FULL_NO_CFI,		/* no CFI here that libdw reads */
};

/* S to its caller by the CFI of its pc, as libdwfl steps a frame. */
static enum full_step step(struct addr_space *as, const struct full_state *s,
			   struct full_state *caller, enum prof_unwind_error *cause)
{
	/* a return address: the call is before it, and may end its function */
	uint64_t pc = s->exact ? s->v[DWARF_REG_RA] : s->v[DWARF_REG_RA] - 1, cfa, v;
	struct as_module *m = as_find(as, pc);
	enum prof_unwind_error ra_cause = PROF_UNWIND_OTHER, ignored;
	enum full_step ret = FULL_STOPPED;
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *fr = NULL;
	Dwarf_CFI *cfi;
	struct utable *t;
	size_t nops;
	bool signal;
	unsigned r;

	if (!m || as_table(as, m, &t) < 0 || !t || !(cfi = utable_cfi(t)) ||
	    dwarf_cfi_addrframe(cfi, pc - m->bias, &fr) != 0)
		return FULL_NO_CFI;
	*cause = PROF_UNWIND_OTHER;
	if (dwarf_frame_info(fr, NULL, NULL, &signal) != DWARF_REG_RA ||
	    dwarf_frame_cfa(fr, &ops, &nops) != 0 || !nops ||
	    !eval(as, s, ops, nops, NULL, &cfa, cause))
		goto out;
	/* the caller of a signal frame is where the signal came: its ip is exact */
	*caller = (struct full_state){ .exact = signal };
	for (r = 0; r < DWARF_REGS_COUNT; r++) {
		if (dwarf_frame_register(fr, (int)r, mem, &ops, &nops) != 0)
			continue;
		if (!nops) {
			/* undefined (ops is MEM), or the same value as in S (ops NULL) */
			if (ops || !reg_get(s, r, &v))
				continue;
		} else if (!eval(as, s, ops, nops, &cfa, &v,
				 r == DWARF_REG_RA ? &ra_cause : &ignored)) {
			if (r == DWARF_REG_RA) {
				*cause = ra_cause;
				goto out;	/* not undefined: not read */
			}
			continue;
		}
		caller->v[r] = v;
		caller->known |= 1u << r;
	}
	/* the CFA is the caller's stack pointer, where no rule says otherwise */
	if (!(caller->known >> DWARF_REG_SP & 1)) {
		caller->v[DWARF_REG_SP] = cfa;
		caller->known |= 1u << DWARF_REG_SP;
	}
	if (!(caller->known >> DWARF_REG_RA & 1) || !caller->v[DWARF_REG_RA])
		ret = FULL_END;
	else if (caller->v[DWARF_REG_SP] < s->v[DWARF_REG_SP] && !signal)
		*cause = PROF_UNWIND_OTHER;	/* a stack that grows down unwinds up */
	else
		ret = FULL_CALLER;
out:
	free(fr);
	return ret;
}

int unwind_full_step(struct addr_space *as, size_t upto, struct unwind_frame *f,
		     enum unwind_step *st, enum prof_unwind_error *cause)
{
	struct full_state s = { .known = (1u << DWARF_REGS_COUNT) - 1, .exact = true }, c;
	enum full_step k;
	size_t i;

	regs_to_dwarf(as->regs, s.v);
	/* the frames below F again, as the compiled walk took them, every register kept */
	for (i = 0; i < upto; i++) {
		if (step(as, &s, &c, cause) != FULL_CALLER)
			return 0;
		s = c;
	}
	/* not where the compiled walk is: this is not its walk */
	if (s.v[DWARF_REG_RA] != f->ip || s.v[DWARF_REG_SP] != f->sp || s.exact != f->exact)
		return 0;
	k = step(as, &s, &c, cause);
	if (k == FULL_NO_CFI)
		return 0;
	*st = k == FULL_CALLER ? UNWIND_STEP_CALLER : k == FULL_END ? UNWIND_STEP_END
								   : UNWIND_STEP_STOPPED;
	if (k == FULL_CALLER)
		*f = (struct unwind_frame){
			.ip = c.v[DWARF_REG_RA], .sp = c.v[DWARF_REG_SP],
			.bp = c.known >> DWARF_REG_BP & 1 ? c.v[DWARF_REG_BP] : 0,
			.bp_ok = c.known >> DWARF_REG_BP & 1, .exact = c.exact,
		};
	return 1;
}
