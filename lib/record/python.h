/* SPDX-License-Identifier: MIT */
/*
 * python.h - the Python functions a CPython 3.11 process was running when
 * it was sampled, put in place of the interpreter's eval-loop frames.
 */
#ifndef PROF_PYTHON_H
#define PROF_PYTHON_H

#include <stdint.h>
#include <sys/types.h>

#include "intern.h"
#include "jitdump.h"

struct proc;
struct perf_sample;
struct unwind_result;
struct py_proc;

struct py_set {
	struct py_proc **v;	/* every CPython process seen, in order */
	size_t n, cap;
	uint64_t frames;	/* Python frames put into stacks */
	uint64_t stale;		/* frames that failed validation: not shown */
	uint64_t unread;	/* eval-loop frames whose Python frames were not found */
};

void py_set_init(struct py_set *s);
void py_set_release(struct py_set *s);

/*
 * Replace in U, the unwound user stack of sample S of P, each frame of
 * _PyEval_EvalFrameDefault by the Python frames its loop was running (as
 * anonymous frames at addresses that py_names() names).  0, or -ENOMEM.
 */
int py_expand(struct py_set *s, struct proc *p, const struct perf_sample *smp,
	      struct unwind_result *u);

/* The names of the Python frames of process PID (started at START_NS), or NULL. */
const struct jit_sym *py_names(const struct py_set *s, pid_t pid, size_t *n);

#endif /* PROF_PYTHON_H */
