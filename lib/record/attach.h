/* SPDX-License-Identifier: MIT */
/*
 * attach.h - holding every thread of a running process still for the
 * attach window (ptrace seize + interrupt: no signal the target could
 * see), and letting it go again, with any signal that arrived meanwhile.
 */
#ifndef PROF_ATTACH_H
#define PROF_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

struct held_thread {
	pid_t tid;
	int pending_sig;	/* a signal that stopped it during the window, re-sent */
};

struct held_process {
	pid_t pid;
	struct held_thread *threads;
	size_t n, cap;
};

/*
 * Stop every thread of PID, including threads created while stopping.
 * 0, or -ESRCH (gone, also during the window), -EPERM (ptrace refused; the
 * message names the gate), -errno.  On failure nothing is left stopped.
 */
int hold_process(pid_t pid, struct held_process *ret);

/* Let every thread go (PTRACE_DETACH), re-sending pending signals. */
void release_process(struct held_process *h);

#endif /* PROF_ATTACH_H */
