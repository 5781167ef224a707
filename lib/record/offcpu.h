/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - off-CPU intervals as the records of a recording come, in
 * time order: a thread's switch-out (its sample gives the stack, the
 * switch record just after it the state) is paired with what ends it (its
 * switch-in, or else anything that shows it ran, its exit, the end of the
 * recording), and the interval goes to the spool when it ends.  It needs
 * nothing of perf: the recorder hands it what the records say.
 */
#ifndef PROF_OFFCPU_H
#define PROF_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* A thread's open interval: off since START, or not (START 0). */
struct offcpu_open {
	uint64_t start;
	uint32_t stack, user_stack;	/* of the switch-out sample, without the state frame */
	uint32_t cpu;
	uint8_t state;			/* 0 until the switch record says */
	bool sampled;			/* the switch-out sample came */
	bool truncated;			/* its unwind stopped early */
};

struct offcpu_stats {
	uint64_t intervals;		/* written */
	uint64_t ns[OFFCPU_STATE_COUNT];	/* their time, by state; [0] unused */
	uint64_t unsampled;		/* of those, without a stack */
	uint64_t truncated;		/* of those, with a stack cut short */
	uint64_t dropped;		/* with no state: the switch record was lost */
};

struct offcpu {
	struct prof_spool_writer *w;
	struct offcpu_open *threads;	/* by thread spool id */
	size_t cap;
	uint32_t state_frame[OFFCPU_STATE_COUNT];	/* spool frame ids; 0: not yet */
	struct offcpu_stats stats;
};

void offcpu_init(struct offcpu *oc, struct prof_spool_writer *w);
void offcpu_release(struct offcpu *oc);

/*
 * The switch-out sample of THREAD at TIME on CPU: STACK is its stack (the
 * kernel's frames on top, if any), USER_STACK the same without them.  An
 * interval still open ends here: the thread ran since.  0 or -errno.
 */
int offcpu_sampled(struct offcpu *oc, uint32_t thread, uint64_t time, uint32_t cpu,
		   uint32_t stack, uint32_t user_stack, bool truncated);

/*
 * The switch-out record of THREAD: PREEMPTED (still runnable) or blocked.
 * It follows the thread's switch-out sample; without one (lost), the
 * interval starts here, without a stack.  0 or -errno.
 */
int offcpu_switched_out(struct offcpu *oc, uint32_t thread, uint64_t time, uint32_t cpu,
			bool preempted);

/* THREAD's interval, if one is open, ends at TIME for reason END.  0 or -errno. */
int offcpu_end(struct offcpu *oc, uint32_t thread, uint64_t time, enum prof_offcpu_end end);

/*
 * Take over OPEN, an interval of a thread that goes on in a new spool file
 * as THREAD (its stacks interned there).  0 or -ENOMEM.
 */
int offcpu_carry(struct offcpu *oc, uint32_t thread, const struct offcpu_open *open);

/* Every interval still open ends at TIME: the recording ends.  0 or -errno. */
int offcpu_end_all(struct offcpu *oc, uint64_t time);

#endif /* PROF_OFFCPU_H */
