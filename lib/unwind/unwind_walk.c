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
 * return address at rsp.  A row the rules cannot encode is stepped with
 * every register known (unwind_full.c), or by libdwfl where that cannot.
 * A walk is complete when it reaches a frame whose return address is
 * undefined (glibc's _start and clone3 say so in their CFI), the
 * program's entry function, or the end of a frame-pointer chain (rbp 0,
 * as _start leaves it).
 */
#include <string.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind.h"
#include "walk_memo.h"

/* How a frame is walked. */
enum walk_kind {
	WALK_RULE,		/* a compiled rule */
	WALK_FP_ANON,		/* no module: anonymous code, frame pointers */
	WALK_FP_NO_CFI,		/* a module without CFI for the pc: frame pointers */
	WALK_DWFL,		/* every register (unwind_full.c), or libdwfl, for this frame */
	WALK_NO_MEMORY,		/* no memory for the module's table: the walk stops */
};

/* How frame PC is walked, and its rule (UCFA_NONE but for WALK_RULE and the ENTRY flag). */
static enum walk_kind lookup(struct unwinder *uw, struct addr_space *as, uint64_t pc,
			     struct as_module **last, struct urule *rule)
{
	struct rule_cache_entry *e;
	struct as_module *m = *last;
	struct utable *t;
	uint64_t svma, key;

	/* most callers are in the module of the frame before */
	if (!m || pc < m->start || pc >= m->end)
		m = *last = as_find(as, pc);
	*rule = (struct urule){ .cfa = UCFA_NONE };
	if (!m) {
		/* JIT code: by the CFI its JIT wrote, where it wrote some */
		const struct urule *jr = as->jit.n ? jit_rules_find(&as->jit, pc) : NULL;

		if (jr && (jr->cfa == UCFA_RSP || jr->cfa == UCFA_RBP || jr->cfa == UCFA_END)) {
			*rule = *jr;
			rule->flags = 0;	/* no entry function, no signal frame */
			return WALK_RULE;
		}
		return WALK_FP_ANON;
	}
	if (!m->elf_ok || !m->open_path)
		return WALK_FP_NO_CFI;	/* nothing to read it with, libdwfl neither */
	if (as_table(as, m, &t) < 0)
		return WALK_NO_MEMORY;
	if (!t)
		return m->no_cfi ? WALK_FP_NO_CFI : WALK_DWFL;
	svma = pc - m->bias;
	key = rule_cache_key(svma, utable_id(t));
	e = &uw->cache[(key ^ (key >> 13) ^ (key >> RULE_CACHE_SVMA_BITS) * 0x9e3779b1u) %
		       RULE_CACHE_SIZE];
	if (key && e->key == key) {
		uw->cache_hits++;
		*rule = e->rule;
	} else {
		uw->cache_misses++;
		*rule = utable_rule(&as->shared->tables, t, svma);
		if (key)
			*e = (struct rule_cache_entry){ .key = key, .rule = *rule };
	}
	return rule->cfa == UCFA_NONE	  ? WALK_FP_NO_CFI
	       : rule->cfa == UCFA_FALLBACK ? WALK_DWFL
					    : WALK_RULE;
}

static enum unwind_step stopped(enum prof_unwind_error *cause, enum prof_unwind_error why)
{
	*cause = why;
	return UNWIND_STEP_STOPPED;
}

/* A frame by its compiled rule; what it read in MF. */
static enum unwind_step rule_step(const struct addr_space *as, const struct urule *rule,
				  struct unwind_frame *f, enum prof_unwind_error *cause,
				  struct memo_frame *mf)
{
	uint64_t cfa, ra, bp = f->bp;
	enum prof_unwind_error ignored;

	switch (rule->cfa) {
	case UCFA_END:
		return UNWIND_STEP_END;
	case UCFA_RSP:
		cfa = f->sp + (uint64_t)(int64_t)rule->cfa_off;
		break;
	case UCFA_RBP:
		if (!f->bp_ok)
			return stopped(cause, PROF_UNWIND_OTHER);
		cfa = f->bp + (uint64_t)(int64_t)rule->cfa_off;
		break;
	case UCFA_PLT:
		cfa = f->sp + 8 + ((f->ip & 15) >= (uint64_t)rule->cfa_off ? 8 : 0);
		break;
	default:
		return stopped(cause, PROF_UNWIND_OTHER);
	}
	if (cfa < f->sp + 8)
		return stopped(cause, PROF_UNWIND_OTHER);	/* the stack would not grow */
	if (!unwind_read_stack(as, cfa - 8, &ra, cause))
		return UNWIND_STEP_STOPPED;
	mf->ra_at = cfa - 8;
	mf->ra = ra;
	/*
	 * An epilogue that popped rbp names its slot below sp, out of the copy,
	 * and rbp holds what it held: the caller's rbp, kept as it is.  (libdwfl
	 * takes rbp as lost there instead, and ends the walk at the first frame
	 * that needs it.)
	 */
	if (rule->bp == UBP_AT && !urule_bp_popped(rule)) {
		mf->bp_at = cfa + (uint64_t)(int64_t)rule->bp_off;
		f->bp_ok = unwind_read_stack(as, mf->bp_at, &bp, &ignored);
		mf->bp_read = f->bp_ok ? MEMO_READ_OK : MEMO_READ_OUT;
		mf->bp = bp;
	} else if (rule->bp == UBP_UNDEF)
		f->bp_ok = false;
	f->bp = bp;
	f->sp = cfa;
	f->ip = ra;
	f->exact = false;
	/* a zero return address ends a stack, as libdwfl takes it */
	return ra ? UNWIND_STEP_CALLER : UNWIND_STEP_END;
}

/* A frame by its frame pointer. */
static enum unwind_step fp_step(struct addr_space *as, struct unwind_frame *f,
				enum prof_unwind_error *cause)
{
	uint64_t nbp, ra;

	if (!f->bp_ok)
		return stopped(cause, PROF_UNWIND_NO_CFI);
	if (f->bp == 0)
		return UNWIND_STEP_END;	/* the end of the chain: _start leaves rbp 0 */
	if (f->bp < f->sp || f->bp > UINT64_MAX - 16)
		return stopped(cause, PROF_UNWIND_NO_CFI);	/* rbp holds no frame of this stack */
	if (!unwind_read_stack(as, f->bp, &nbp, cause) ||
	    !unwind_read_stack(as, f->bp + 8, &ra, cause))
		return UNWIND_STEP_STOPPED;
	if (ra == 0)
		return UNWIND_STEP_END;
	if (!as_is_code(as, ra - 1))
		return stopped(cause, PROF_UNWIND_NO_CFI);	/* not a return address: no frame */
	f->sp = f->bp + 16;
	f->bp = nbp;
	f->ip = ra;
	f->exact = false;
	return UNWIND_STEP_CALLER;
}

/*
 * The sampled frame, when frame pointers fail it: a leaf that keeps no
 * frame (a JIT's small loop, hand-written assembly) still has its return
 * address at rsp.  Taken only if it lands in code.
 */
static enum unwind_step leaf_step(struct addr_space *as, struct unwind_frame *f,
				  enum prof_unwind_error *cause)
{
	uint64_t ra;

	if (!unwind_read_stack(as, f->sp, &ra, cause))
		return UNWIND_STEP_STOPPED;
	if (!ra || !as_is_code(as, ra - 1))
		return stopped(cause, PROF_UNWIND_NO_CFI);
	f->sp += 8;
	f->ip = ra;
	f->exact = false;
	return UNWIND_STEP_CALLER;
}

/* A frame by libdwfl alone. */
static enum unwind_step dwfl_step(struct addr_space *as, struct unwind_frame *f, bool first,
				  uint64_t pc, enum prof_unwind_error *cause)
{
	struct unwind_frame caller = *f;
	enum unwind_step st = unwind_dwfl_step(as, first, pc, &caller, cause);

	if (st != UNWIND_STEP_CALLER)
		return st;
	if (caller.sp < f->sp)
		return stopped(cause, PROF_UNWIND_OTHER);
	*f = caller;
	return caller.ip ? UNWIND_STEP_CALLER : UNWIND_STEP_END;
}

/* Frame pointers from F, or for the sampled frame (FIRST) its return address at rsp. */
static enum unwind_step fp_or_leaf_step(struct addr_space *as, struct unwind_frame *f, bool first,
					enum prof_unwind_error *cause)
{
	enum unwind_step st = fp_step(as, f, cause);

	return st == UNWIND_STEP_STOPPED && first ? leaf_step(as, f, cause) : st;
}

/*
 * Take the frames of MEMO (the thread's last walk) from the one with F's
 * registers on, while their steps read what they read then: appended to
 * RES and to NOW (this walk's memo), and F moved to the first frame
 * whose step must be taken here.  *J: where in MEMO the search is.
 */
static void replay(struct unwinder *uw, const struct walk_memo *memo, size_t *j,
		   struct walk_memo *now, const struct addr_space *as, struct unwind_frame *f,
		   struct unwind_result *res)
{
	const struct memo_frame *m;
	size_t k;

	while (*j < memo->n && memo->f[*j].in.sp < f->sp)
		(*j)++;
	if (*j == memo->n)
		return;
	m = &memo->f[*j];
	if (m->in.sp != f->sp || m->in.ip != f->ip || m->in.bp != f->bp ||
	    m->in.bp_ok != f->bp_ok || m->in.exact != f->exact)
		return;
	for (k = *j; k + 1 < memo->n && res->n < UNWIND_MAX_FRAMES - 1 && now->n < MEMO_FRAMES - 1 &&
		     walk_memo_holds(as, &memo->f[k]);
	     k++) {
		res->fp[res->n] = memo->f[k].in.bp_ok ? memo->f[k].in.bp : 0;
		res->pc[res->n++] = memo->f[k].pc;
		now->f[now->n++] = memo->f[k];
	}
	/* the memo's last frame is taken here: k stops before it */
	if (k > *j && k < memo->n) {
		uw->memo_frames += k - *j;
		*f = memo->f[k].in;
		*j = k;
	}
}

/* The walk of unwind_walk(), its frames kept in NOW (NULL: none kept). */
static int walk(struct unwinder *uw, struct addr_space *as, struct unwind_result *res,
		const struct walk_memo *memo, struct walk_memo *now)
{
	struct unwind_frame f = {
		.ip = as->regs[SAMPLE_REG_IP], .sp = as->regs[SAMPLE_REG_SP],
		.bp = as->regs[SAMPLE_REG_BP], .bp_ok = true, .exact = true,
	};
	enum prof_unwind_error cause = PROF_UNWIND_OTHER;
	struct as_module *last = NULL;
	enum walk_kind kind;
	enum unwind_step st = UNWIND_STEP_STOPPED;
	struct memo_frame scratch, *mf;
	struct urule rule;
	size_t j = 0;
	uint64_t pc;

	res->have_fp = true;
	for (;;) {
		if (memo && now)
			replay(uw, memo, &j, now, as, &f, res);
		if (res->n == UNWIND_MAX_FRAMES) {
			res->cause = PROF_UNWIND_DEPTH;
			return 0;
		}
		pc = f.exact ? f.ip : f.ip - 1;	/* a return address: look up the call */
		res->fp[res->n] = f.bp_ok ? f.bp : 0;
		res->pc[res->n++] = pc;
		/* the frame, kept for the next walk; the cap's last one is taken again there */
		mf = now && now->n < MEMO_FRAMES ? &now->f[now->n++] : &scratch;
		*mf = (struct memo_frame){ .in = f, .pc = pc };
		kind = lookup(uw, as, pc, &last, &rule);
		if (rule.flags & URULE_ENTRY)
			return 0;	/* the program's entry: nothing calls it */
		switch (kind) {
		case WALK_NO_MEMORY:
			res->cause = PROF_UNWIND_OTHER;
			return -ENOMEM;
		case WALK_RULE:
			st = rule_step(as, &rule, &f, &cause, mf);
			mf->replay = st == UNWIND_STEP_CALLER && now && now->n < MEMO_FRAMES;
			break;
		case WALK_FP_ANON:
			/* a return address in nothing known is no frame: stop there */
			if (res->n > 1 && !as_is_code(as, pc)) {
				res->cause = PROF_UNWIND_UNMAPPED;
				return 0;
			}
			res->fallback[PROF_FALLBACK_FP_ANON]++;
			st = fp_or_leaf_step(as, &f, res->n == 1, &cause);
			if (st == UNWIND_STEP_STOPPED && cause == PROF_UNWIND_NO_CFI)
				cause = PROF_UNWIND_UNMAPPED;
			break;
		case WALK_FP_NO_CFI:
			res->fallback[PROF_FALLBACK_FP_NO_CFI]++;
			st = fp_or_leaf_step(as, &f, res->n == 1, &cause);
			break;
		case WALK_DWFL:
			/*
			 * A signal trampoline is not called: the kernel makes the
			 * handler return to its first instruction, which is its
			 * frame's address (its CFI starts a byte early, so that the
			 * lookup of pc - 1 finds it all the same), as libdwfl has it.
			 */
			if ((rule.flags & URULE_SIGNAL) && !f.exact)
				res->pc[res->n - 1] = pc = f.ip;
			res->fallback[PROF_FALLBACK_DWFL]++;
			if (unwind_full_step(as, res->n - 1, &f, &st, &cause))
				break;
			st = dwfl_step(as, &f, res->n == 1, pc, &cause);
			if (st != UNWIND_STEP_CALLER && res->n > 1) {
				/*
				 * Inside the walk libdwfl knows only rip, rsp and
				 * rbp: a frame whose CFA needs another register
				 * (ld.so's _dl_runtime_resolve realigns the stack
				 * through rbx) cannot be done alone.  Then libdwfl
				 * does the whole sample, every register known.
				 */
				memset(res, 0, sizeof(*res));
				if (now)
					now->n = 0;	/* no step of it to take again */
				unwind_dwfl(as, res);
				res->fallback[PROF_FALLBACK_DWFL] = (uint32_t)res->n;
				return 0;
			}
			break;
		}
		if (st == UNWIND_STEP_END)
			return 0;
		if (st == UNWIND_STEP_STOPPED) {
			res->cause = cause;
			return 0;
		}
	}
}

int unwind_walk(struct unwinder *uw, struct addr_space *as, struct unwind_result *res)
{
	const struct walk_memo *memo = walk_memo_of(uw, as);
	struct walk_memo *now = walk_memo_begin(uw, as);
	int r = walk(uw, as, res, memo, now);

	if (now && r == 0 && now->n)
		walk_memo_keep(uw, now);
	return r;
}

void unwind_walk_release(struct unwinder *uw)
{
	walk_memo_release(uw);
}
