/* SPDX-License-Identifier: MIT */
/*
 * unwind_dwfl.c - unwinding with libdwfl: every frame of a sample (the
 * libdwfl engine, and the oracle the compiled engine is checked against),
 * or one frame the compiled tables cannot encode (a CFA expression, a
 * signal frame), handed back to the compiled walker.  libdwfl runs each
 * frame's CFI program from its function's start and allocates as it goes:
 * exact, and ~0.5 us a frame.
 */
#include <elfutils/libdwfl.h>
#include <string.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind.h"

/* Why did a libdwfl walk stop before the outermost frame?  From the most telling evidence. */
static enum prof_unwind_error stop_cause(struct addr_space *as, uint64_t last_pc)
{
	struct as_module *last = as_find(as, last_pc);

	if (as->read_past_copy)
		return PROF_UNWIND_STACK_COPY;
	if (!last)
		return PROF_UNWIND_UNMAPPED;
	if (!last->elf_ok || dwfl_errno() == 0 || strstr(dwfl_errmsg(-1), "DWARF") ||
	    strstr(dwfl_errmsg(-1), "CFI"))
		return PROF_UNWIND_NO_CFI;
	return PROF_UNWIND_OTHER;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_result *res = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!activation)
		pc--;	/* a return address: look up the call, not what follows it */
	if (res->n == UNWIND_MAX_FRAMES) {
		res->cause = PROF_UNWIND_DEPTH;
		return DWARF_CB_ABORT;
	}
	res->pc[res->n++] = pc;
	return DWARF_CB_OK;
}

void unwind_dwfl(struct addr_space *as, struct unwind_result *res)
{
	int r;

	if (!as_dwfl(as)) {
		res->pc[res->n++] = as->regs[SAMPLE_REG_IP];
		res->cause = PROF_UNWIND_OTHER;
		return;
	}
	as->read_past_copy = false;
	as->read_failed = false;
	as->thread_given = false;
	as->step = false;
	r = dwfl_getthread_frames(as->dwfl, as->tid, frame_cb, res);
	if (res->n == 0)
		res->pc[res->n++] = as->regs[SAMPLE_REG_IP];
	if (res->cause)
		return;
	/*
	 * libdwfl ends a walk "normally" when a return address cannot be read:
	 * only a walk that never missed a read reached a real outermost frame.
	 */
	if (r == 0 && !as->read_failed)
		return;
	res->cause = stop_cause(as, res->pc[res->n - 1]);
}

/* ---- one frame, for the compiled walker ---------------------------------- */

struct step {
	int frames;
	uint64_t ra, sp, bp;
	bool activation, bp_ok, got;
};

static int step_cb(Dwfl_Frame *state, void *arg)
{
	struct step *st = arg;
	Dwarf_Addr pc;
	Dwarf_Word v;

	if (st->frames++ == 0)
		return DWARF_CB_OK;	/* the frame we gave it */
	if (!dwfl_frame_pc(state, &pc, &st->activation) ||
	    dwfl_frame_reg(state, DWARF_REG_SP, &v) != 0)
		return DWARF_CB_ABORT;
	st->ra = pc;
	st->sp = v;
	st->bp_ok = dwfl_frame_reg(state, DWARF_REG_BP, &v) == 0;
	st->bp = st->bp_ok ? v : 0;
	st->got = true;
	return DWARF_CB_ABORT;
}

enum unwind_step unwind_dwfl_step(struct addr_space *as, bool first, uint64_t pc,
				  struct unwind_frame *f, enum prof_unwind_error *cause)
{
	struct step st = { 0 };
	int r;

	if (!as_dwfl(as)) {
		*cause = PROF_UNWIND_OTHER;
		return UNWIND_STEP_STOPPED;
	}
	/* the sample stays as the walker set it: its copy, its sp */
	as->read_past_copy = false;
	as->read_failed = false;
	as->thread_given = false;
	as->step = !first;
	as->step_pc = pc;
	as->step_sp = f->sp;
	as->step_bp = f->bp;
	as->step_bp_ok = f->bp_ok;
	r = dwfl_getthread_frames(as->dwfl, as->tid, step_cb, &st);
	as->step = false;
	if (st.got) {
		*f = (struct unwind_frame){ .ip = st.ra, .sp = st.sp, .bp = st.bp,
					    .bp_ok = st.bp_ok, .exact = st.activation };
		return UNWIND_STEP_CALLER;
	}
	if (r == 0 && !as->read_failed)
		return UNWIND_STEP_END;	/* libdwfl found the outermost frame */
	*cause = stop_cause(as, pc);
	return UNWIND_STEP_STOPPED;
}
