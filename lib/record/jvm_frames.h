/* SPDX-License-Identifier: MIT */
/*
 * jvm_frames.h - the Java methods a HotSpot JVM's interpreter was running
 * when it was sampled, named in place of its interpreter frames (which a
 * perf map names "Interpreter", all alike).
 */
#ifndef PROF_JVM_FRAMES_H
#define PROF_JVM_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jitdump.h"

struct proc;
struct perf_sample;
struct unwind_result;
struct jvm_proc;

struct jvm_frames {
	struct jvm_proc **v;	/* every JVM seen, in order */
	size_t n, cap;
	uint64_t named;		/* interpreter frames named */
	uint64_t unnamed;	/* interpreter frames whose Method* could not be read */
};

void jvm_frames_init(struct jvm_frames *s);
void jvm_frames_release(struct jvm_frames *s);

/*
 * Give each interpreter frame of U (the unwound user stack of sample SMP
 * of the JVM P) the address of the method it ran, which jvm_frames_names()
 * names.  0, or -ENOMEM.
 */
int jvm_frames_expand(struct jvm_frames *s, struct proc *p, const struct perf_sample *smp,
		      struct unwind_result *u);

/* The names of the methods of process PID's interpreter frames, by address; NULL if none. */
const struct jit_sym *jvm_frames_names(const struct jvm_frames *s, pid_t pid, size_t *n);

#endif /* PROF_JVM_FRAMES_H */
