/* SPDX-License-Identifier: MIT */
/*
 * attach.c - the attach window.  PTRACE_SEIZE + PTRACE_INTERRUPT stop a
 * thread without sending it a signal, so the target's own job control and
 * signal handling never see prof; the threads are detached again right
 * after the perf events are enabled, so prof does not stay a tracer.
 * Threads are listed again after each round of stopping until no new one
 * appears: a thread created meanwhile is caught too.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "attach.h"
#include "internal.h"
#include "proc.h"

static int ptrace_gate_error(pid_t pid)
{
	uint64_t scope = 0;

	/* without Yama (no such file), the usual rules alone refused it */
	if (proc_read_u64("/proc/sys/kernel/yama/ptrace_scope", &scope) == 0 && scope > 0)
		return error_setx(-EPERM, "not permitted to attach to pid %d: ptrace is restricted "
				  "(kernel.yama.ptrace_scope is %llu; run as root or lower it)",
				  (int)pid, (unsigned long long)scope);
	return error_setx(-EPERM, "not permitted to attach to pid %d: ptrace refused (the "
			  "process is not yours, or is set non-dumpable; run as root)", (int)pid);
}

/* Seize and stop one thread.  1 stopped, 0 already gone, < 0 error. */
static int hold_thread(pid_t tid, struct held_thread *t)
{
	int status;

	t->tid = tid;
	t->pending_sig = 0;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		int e = errno;

		ptrace(PTRACE_DETACH, tid, 0, 0);
		return e == ESRCH ? 0 : -e;
	}
	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return errno == ECHILD ? 0 : -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return 0;
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 16 == PTRACE_EVENT_STOP)
			return 1;
		/* a signal arrived first: it is stopped too; the detach delivers it */
		if (WSTOPSIG(status) != SIGTRAP)
			t->pending_sig = WSTOPSIG(status);
		return 1;
	}
}

void release_process(struct held_process *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		ptrace(PTRACE_DETACH, h->threads[i].tid, 0, h->threads[i].pending_sig);
	free(h->threads);
	h->threads = NULL;
	h->n = h->cap = 0;
}

static bool holds(const struct held_process *h, pid_t tid)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (h->threads[i].tid == tid)
			return true;
	return false;
}

int hold_process(pid_t pid, struct held_process *ret)
{
	struct held_process h = { .pid = pid };
	int round, n, i, r = 0;
	pid_t *tids;

	for (round = 0; round < 100; round++) {
		bool added = false;

		n = proc_tasks(pid, &tids);
		if (n < 0) {
			r = n == -ESRCH ? error_setx(-ESRCH, "no process with pid %d", (int)pid)
					: error_set(n, "cannot list the threads of pid %d", (int)pid);
			break;
		}
		for (i = 0; i < n && r >= 0; i++) {
			void *p = h.threads;

			if (holds(&h, tids[i]))
				continue;
			r = grow_array(&p, &h.cap, h.n + 1, sizeof(*h.threads));
			h.threads = p;
			if (r < 0)
				break;
			r = hold_thread(tids[i], &h.threads[h.n]);
			if (r == -EPERM)
				r = ptrace_gate_error(pid);
			else if (r < 0)
				r = error_set(r, "cannot stop thread %d of pid %d", (int)tids[i],
					      (int)pid);
			if (r > 0) {
				h.n++;
				added = true;
			}
		}
		free(tids);
		if (r < 0 || !added)
			break;
	}
	if (r >= 0 && h.n == 0)
		r = error_setx(-ESRCH, "pid %d exited while prof was attaching", (int)pid);
	if (r < 0) {
		release_process(&h);
		return r;
	}
	*ret = h;
	return 0;
}
