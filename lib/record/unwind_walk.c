/* SPDX-License-Identifier: MIT */
/*
 * unwind_walk.c - the compiled unwinder: a walk that knows only rip, rsp
 * and rbp, and takes each frame's rule from a small cache in front of the
 * per-file tables (unwind_table.c).
 *
 * Per frame: the module of the pc, its file's table, and the rule of the
 * file-relative pc from a cache in front of the tables, keyed by table and
 * address, so that the seventieth cc1 of a make -j finds its rules there
 * as the first left them.  A pc no CFI covers, in anonymous code (a JIT's)
 * or in a file without CFI (hand-written assembly), is walked by frame
 * pointers, strictly: rbp must lie at or above rsp, every read inside the
 * stack copy, the stack must grow, and the return address must land in
 * code; the sampled frame, if that fails, as a leaf without a frame, its
 * return address at rsp.  A row the rules cannot encode goes to libdwfl
 * for that frame alone.  A walk is complete when it reaches a frame whose
 * return address is undefined (glibc's _start and clone3 say so in their
 * CFI), the program's entry function, or the end of a frame-pointer chain
 * (rbp 0, as _start leaves it).
 */
#include <string.h>

#include "addr_space.h"
#include "internal.h"
#include "unwind.h"

enum walk_kind {
	WALK_RULE,		/* a compiled rule */
	WALK_FP_ANON,		/* no module: anonymous code, frame pointers */
	WALK_FP_NO_CFI,		/* a module without CFI for the pc: frame pointers */
	WALK_DWFL,		/* libdwfl, for this frame */
};

/* Stop the walk: 1 complete, or -cause. */
#define DONE 1

static int lookup(struct unwinder *uw, struct addr_space *as, uint64_t pc,
		  struct as_module **last, uint32_t *kind, struct urule *rule)
{
	struct rule_cache_entry *e;
	struct as_module *m = *last;
	struct utable *t;
	uint64_t svma;
	uint32_t id;
	int r;

	/* most callers are in the module of the frame before */
	if (!m || pc < m->start || pc >= m->end)
		m = *last = as_find(as, pc);
	*rule = (struct urule){ .cfa = UCFA_NONE };
	if (!m) {
		*kind = WALK_FP_ANON;
		return 0;
	}
	if (!m->elf_ok || !m->open_path) {
		*kind = WALK_FP_NO_CFI;	/* nothing to read it with, libdwfl neither */
		return 0;
	}
	r = as_table(as, m, &t);
	if (r < 0)
		return r;
	if (!t) {
		*kind = m->no_cfi ? WALK_FP_NO_CFI : WALK_DWFL;
		return 0;
	}
	svma = pc - m->bias;
	id = utable_id(t);
	e = &uw->cache[(svma ^ (svma >> 13) ^ (uint64_t)id * 0x9e3779b1u) % RULE_CACHE_SIZE];
	if (e->svma == svma && e->table == id) {
		uw->cache_hits++;
		*rule = e->rule;
	} else {
		uw->cache_misses++;
		*rule = utable_rule(&as->shared->tables, t, svma);
		*e = (struct rule_cache_entry){ .svma = svma, .table = id, .rule = *rule };
	}
	*kind = rule->cfa == UCFA_NONE	     ? WALK_FP_NO_CFI
		: rule->cfa == UCFA_FALLBACK ? WALK_DWFL
					     : WALK_RULE;
	return 0;
}

/* The word at ADDR from the stack copy: 0, or -cause. */
static int read_word(const struct addr_space *as, uint64_t addr, uint64_t *v)
{
	if (addr >= as->sp && addr - as->sp <= as->stack_size &&
	    as->stack_size - (addr - as->sp) >= 8) {
		memcpy(v, as->stack + (addr - as->sp), 8);
		return 0;
	}
	/* above the copy, within a plausible stack: the copy was too small */
	if (addr >= as->sp && addr - as->sp < (64u << 20))
		return -PROF_UNWIND_STACK_COPY;
	return -PROF_UNWIND_OTHER;
}

struct regs {
	uint64_t ip, sp, bp;
	bool bp_ok;
	bool exact;		/* ip is where the frame is, not a return address */
};

/* A frame by its compiled rule: 0, DONE, or -cause. */
static int rule_step(const struct addr_space *as, const struct urule *rule, struct regs *r)
{
	uint64_t cfa, ra, bp = r->bp;
	int e;

	switch (rule->cfa) {
	case UCFA_END:
		return DONE;
	case UCFA_RSP:
		cfa = r->sp + (uint64_t)(int64_t)rule->cfa_off;
		break;
	case UCFA_RBP:
		if (!r->bp_ok)
			return -PROF_UNWIND_OTHER;
		cfa = r->bp + (uint64_t)(int64_t)rule->cfa_off;
		break;
	case UCFA_PLT:
		cfa = r->sp + 8 + ((r->ip & 15) >= (uint64_t)rule->cfa_off ? 8 : 0);
		break;
	default:
		return -PROF_UNWIND_OTHER;
	}
	if (cfa < r->sp + 8)
		return -PROF_UNWIND_OTHER;	/* the stack would not grow */
	if ((e = read_word(as, cfa - 8, &ra)) < 0)
		return e;
	/*
	 * An epilogue that popped rbp: its slot is below sp, out of the copy,
	 * and rbp holds its value.  libdwfl takes rbp as lost there instead,
	 * and ends the walk at the first frame that needs it.
	 */
	if (urule_bp_popped(rule))
		;
	else if (rule->bp == UBP_AT)
		r->bp_ok = read_word(as, cfa + (uint64_t)(int64_t)rule->bp_off, &bp) == 0;
	else if (rule->bp == UBP_UNDEF)
		r->bp_ok = false;
	r->bp = bp;
	r->sp = cfa;
	r->ip = ra;
	r->exact = false;
	return ra ? 0 : DONE;	/* a zero return address ends a stack, as libdwfl takes it */
}

/* A frame by its frame pointer: 0, DONE, or -cause. */
static int fp_step(struct addr_space *as, struct regs *r)
{
	uint64_t nbp, ra;
	int e;

	if (!r->bp_ok)
		return -PROF_UNWIND_NO_CFI;
	if (r->bp == 0)
		return DONE;	/* the end of the chain: _start leaves rbp 0 */
	if (r->bp < r->sp || r->bp > UINT64_MAX - 16)
		return -PROF_UNWIND_NO_CFI;	/* rbp holds no frame of this stack */
	if ((e = read_word(as, r->bp, &nbp)) < 0 || (e = read_word(as, r->bp + 8, &ra)) < 0)
		return e;
	if (ra == 0)
		return DONE;
	if (!as_is_code(as, ra - 1))
		return -PROF_UNWIND_NO_CFI;	/* not a return address: no frame there */
	r->sp = r->bp + 16;
	r->bp = nbp;
	r->ip = ra;
	r->exact = false;
	return 0;
}

/*
 * The sampled frame, when frame pointers fail it: a leaf that keeps no
 * frame (a JIT's small loop, hand-written assembly) still has its return
 * address at rsp.  Taken only if it lands in code.  0 or -cause.
 */
static int leaf_step(struct addr_space *as, struct regs *r)
{
	uint64_t ra;
	int e = read_word(as, r->sp, &ra);

	if (e < 0)
		return e;
	if (!ra || !as_is_code(as, ra - 1))
		return -PROF_UNWIND_NO_CFI;
	r->sp += 8;
	r->ip = ra;
	r->exact = false;
	return 0;
}

static int dwfl_step(struct addr_space *as, struct regs *r, bool first, uint64_t pc)
{
	uint64_t ra, sp, bp;
	bool exact, bp_ok;
	int e;

	e = unwind_dwfl_step(as, first, pc, r->sp, r->bp, r->bp_ok, &ra, &exact, &sp, &bp, &bp_ok);
	if (e)
		return e > 0 ? DONE : e;
	if (sp < r->sp)
		return -PROF_UNWIND_OTHER;
	*r = (struct regs){ .ip = ra, .sp = sp, .bp = bp, .bp_ok = bp_ok, .exact = exact };
	return ra ? 0 : DONE;
}

int unwind_walk(struct unwinder *uw, struct addr_space *as, struct unwind_result *res)
{
	struct regs r = { .ip = as->regs[8], .sp = as->regs[7], .bp = as->regs[6], .bp_ok = true,
			  .exact = true };
	struct as_module *last = NULL;
	struct urule rule;
	uint32_t kind;
	uint64_t pc;
	int e = 0;

	for (;;) {
		if (res->n == UNWIND_MAX_FRAMES) {
			res->cause = PROF_UNWIND_DEPTH;
			return 0;
		}
		pc = r.exact ? r.ip : r.ip - 1;	/* a return address: look up the call */
		res->pc[res->n++] = pc;
		e = lookup(uw, as, pc, &last, &kind, &rule);
		if (e < 0) {
			res->cause = PROF_UNWIND_OTHER;
			return e;
		}
		if (rule.flags & URULE_ENTRY)
			return 0;	/* the program's entry: nothing calls it */
		switch (kind) {
		case WALK_RULE:
			e = rule_step(as, &rule, &r);
			break;
		case WALK_FP_ANON:
			/* a return address in nothing known is no frame: stop there */
			if (res->n > 1 && !as_is_code(as, pc)) {
				res->cause = PROF_UNWIND_UNMAPPED;
				return 0;
			}
			res->fallback[PROF_FALLBACK_FP_ANON]++;
			e = fp_step(as, &r);
			if (e < 0 && res->n == 1)
				e = leaf_step(as, &r);
			if (e == -PROF_UNWIND_NO_CFI)
				e = -PROF_UNWIND_UNMAPPED;
			break;
		case WALK_FP_NO_CFI:
			res->fallback[PROF_FALLBACK_FP_NO_CFI]++;
			e = fp_step(as, &r);
			if (e < 0 && res->n == 1)
				e = leaf_step(as, &r);
			break;
		default:
			res->fallback[PROF_FALLBACK_DWFL]++;
			e = dwfl_step(as, &r, res->n == 1, pc);
			if (e != 0 && res->n > 1) {
				/*
				 * Inside the walk libdwfl knows only rip, rsp and
				 * rbp: a frame whose CFA needs another register
				 * (ld.so's _dl_runtime_resolve realigns the stack
				 * through rbx) cannot be done alone.  Then libdwfl
				 * does the whole sample, every register known.
				 */
				memset(res, 0, sizeof(*res));
				unwind_dwfl(as, res);
				res->fallback[PROF_FALLBACK_DWFL] = (uint32_t)res->n;
				return 0;
			}
			break;
		}
		if (e == DONE)
			return 0;
		if (e < 0) {
			res->cause = -e;
			return 0;
		}
	}
}
