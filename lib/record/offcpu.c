/* SPDX-License-Identifier: MIT */
/*
 * offcpu.c - off-CPU intervals from switch-out samples and switch records.
 * The kernel takes the context-switch event's sample just before it writes
 * the switch-out record, so a thread's sample comes first (with the user
 * registers and stack of where it left), then the record (with the
 * PREEMPT bit: runnable or blocked, and the time the thread leaves), then,
 * when it runs again, the switch-in record.  A lost record leaves a gap
 * that the next sign of the thread running closes: a CPU sample, or its
 * next switch-out.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "offcpu.h"

void offcpu_init(struct offcpu *oc, struct prof_spool_writer *w)
{
	memset(oc, 0, sizeof(*oc));
	oc->w = w;
}

void offcpu_release(struct offcpu *oc)
{
	free(oc->threads);
	oc->threads = NULL;
	oc->cap = 0;
}

static struct offcpu_open *slot(struct offcpu *oc, uint32_t thread)
{
	size_t old = oc->cap;
	void *v = oc->threads;

	if (thread >= oc->cap) {
		if (grow_array(&v, &oc->cap, (size_t)thread + 1, sizeof(*oc->threads)) < 0)
			return NULL;
		oc->threads = v;
		memset(oc->threads + old, 0, (oc->cap - old) * sizeof(*oc->threads));
	}
	return &oc->threads[thread];
}

/* The stack STACK with the frame of STATE as its leaf. */
static int64_t with_state(struct offcpu *oc, uint32_t stack, uint8_t state)
{
	int64_t id;

	if (!oc->state_frame[state]) {
		id = prof_spool_writer_intern_frame(oc->w, &PROF_INIT(prof_frame,
			.kind = PROF_FRAME_STATE, .addr = state));
		if (id < 0)
			return id;
		oc->state_frame[state] = (uint32_t)id;
	}
	return prof_spool_writer_intern_stack(oc->w, stack, oc->state_frame[state]);
}

static int close_interval(struct offcpu *oc, uint32_t thread, struct offcpu_open *o,
			  uint64_t time, enum prof_offcpu_end end)
{
	int64_t stack, user_stack;
	uint64_t duration = time > o->start ? time - o->start : 0;
	int r;

	if (!o->start)
		return 0;
	if (!o->state) {
		/* the switch record was lost: blocked or runnable, nobody knows */
		oc->stats.dropped++;
		o->start = 0;
		return 0;
	}
	stack = with_state(oc, o->stack, o->state);
	user_stack = stack < 0 || o->user_stack == o->stack ? stack
							  : with_state(oc, o->user_stack, o->state);
	if (user_stack < 0)
		return (int)user_stack;
	r = prof_spool_writer_add_offcpu(oc->w, &PROF_INIT(prof_offcpu,
		.time_ns = o->start, .duration_ns = duration, .thread = thread,
		.stack = (uint32_t)stack, .user_stack = (uint32_t)user_stack, .cpu = o->cpu,
		.state = o->state, .end = (uint8_t)end));
	if (r < 0)
		return r;
	oc->stats.intervals++;
	oc->stats.ns[o->state] += duration;
	oc->stats.unsampled += !o->sampled;
	oc->stats.truncated += o->truncated;
	o->start = 0;
	return 0;
}

int offcpu_sampled(struct offcpu *oc, uint32_t thread, uint64_t time, uint32_t cpu,
		   uint32_t stack, uint32_t user_stack, bool truncated)
{
	struct offcpu_open *o = slot(oc, thread);
	int r;

	if (!o)
		return error_setx(-ENOMEM, "out of memory");
	/* it switched out again: it ran since, whatever record of that was lost */
	r = close_interval(oc, thread, o, time, PROF_OFFCPU_END_RAN);
	if (r < 0)
		return r;
	*o = (struct offcpu_open){ .start = time ? time : 1, .stack = stack,
				   .user_stack = user_stack, .cpu = cpu, .sampled = true,
				   .truncated = truncated };
	return 0;
}

int offcpu_switched_out(struct offcpu *oc, uint32_t thread, uint64_t time, uint32_t cpu,
			bool preempted)
{
	struct offcpu_open *o = slot(oc, thread);
	int r;

	if (!o)
		return error_setx(-ENOMEM, "out of memory");
	if (!o->start || o->state) {
		/* no sample before it: lost; the interval has no stack but its state */
		r = close_interval(oc, thread, o, time, PROF_OFFCPU_END_RAN);
		if (r < 0)
			return r;
		*o = (struct offcpu_open){ .start = time ? time : 1, .cpu = cpu };
	}
	o->state = preempted ? PROF_OFFCPU_STATE_RUNNABLE : PROF_OFFCPU_STATE_BLOCKED;
	/*
	 * The interval starts here, not at the sample: between the two the
	 * kernel copied the thread's stack into the ring, on the CPU, in the
	 * thread's own CPU time (where its CPU samples count it).
	 */
	if (time > o->start)
		o->start = time;
	return 0;
}

int offcpu_end(struct offcpu *oc, uint32_t thread, uint64_t time, enum prof_offcpu_end end)
{
	if (thread >= oc->cap || !oc->threads[thread].start)
		return 0;
	return close_interval(oc, thread, &oc->threads[thread], time, end);
}

int offcpu_carry(struct offcpu *oc, uint32_t thread, const struct offcpu_open *open)
{
	struct offcpu_open *o = slot(oc, thread);

	if (!o)
		return error_setx(-ENOMEM, "out of memory");
	*o = *open;
	return 0;
}

int offcpu_end_all(struct offcpu *oc, uint64_t time)
{
	size_t i;
	int r;

	for (i = 0; i < oc->cap; i++) {
		r = offcpu_end(oc, (uint32_t)i, time, PROF_OFFCPU_END_RECORDING);
		if (r < 0)
			return r;
	}
	return 0;
}
