/* SPDX-License-Identifier: MIT */
/*
 * recorder_attach.c - running processes joining a recording: held still
 * while their events open and their maps and threads are read, then
 * released; their existing descendants; threads no event covers.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "capture.h"
#include "internal.h"
#include "perf_ring.h"
#include "proc.h"
#include "process.h"
#include "recorder.h"
#include "sorter.h"
#include "unwind/unwind.h"

int rec_keep_held(struct prof_recorder *rec, struct held_process *h)
{
	struct held_process *p = realloc(rec->held, (rec->nheld + 1) * sizeof(*p));

	if (!p) {
		release_process(h);
		return error_setx(-ENOMEM, "out of memory");
	}
	rec->held = p;
	rec->held[rec->nheld++] = *h;
	memset(h, 0, sizeof(*h));
	return 0;
}

int rec_open_held_events(struct prof_recorder *rec, const struct held_process *h, bool enable)
{
	size_t i;
	int r;

	for (i = 0; i < h->n; i++) {
		r = rec_open_task_events(rec, h->threads[i].tid, false, enable);
		if (r < 0)
			return r;
	}
	return 0;
}

/* While H is still: its process, threads (with names) and mappings. */
int rec_snapshot_held(struct prof_recorder *rec, const struct held_process *h)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct proc *p;
	struct thr *t;
	size_t i;
	int r;

	r = pt_process(&rec->pt, h->pid, now, true, &p);
	for (i = 0; i < h->n && r >= 0; i++)
		r = pt_thread(&rec->pt, h->pid, h->threads[i].tid, now, &t);
	return r;
}

int prof_recorder_attach_process(struct prof_recorder *rec, pid_t pid,
				 enum prof_attach_mode mode, enum prof_attach_outcome *ret)
{
	struct held_process h;
	struct proc *p = pt_find_process(&rec->pt, pid);
	int r;

	if (mode != PROF_ATTACH_MODE_STOP)
		return error_setx(-EINVAL, "a process joins a recording by stopping it while "
				  "attaching");
	if (p && !p->exited && kill(pid, 0) == 0) {
		*ret = PROF_ATTACH_OUTCOME_ALREADY;
		return 0;
	}
	r = hold_process(pid, &h);
	if (r == -ESRCH) {
		prof_errmsg_clear();
		*ret = PROF_ATTACH_OUTCOME_EXITED;
		return 0;
	}
	if (r < 0)
		return r;
	r = rec_keep_held(rec, &h);
	if (r >= 0)
		r = rec_open_held_events(rec, &rec->held[rec->nheld - 1], rec->enabled);
	if (r >= 0)
		r = rec_watch_exit(rec, pid);
	if (r >= 0)
		r = rec_snapshot_held(rec, &rec->held[rec->nheld - 1]);
	if (rec->enabled) {
		release_process(&rec->held[rec->nheld - 1]);
		rec->nheld--;
	}
	if (r >= 0 && rec->opts.children)
		r = rec_attach_descendants(rec, pid);
	if (r < 0)
		return r;
	*ret = PROF_ATTACH_OUTCOME_ATTACHED;
	return 0;
}

/* The children PID has now, and theirs: each attached (those gone are skipped). */
int rec_attach_descendants(struct prof_recorder *rec, pid_t pid)
{
	enum prof_attach_outcome outcome;
	bool children = rec->opts.children;
	pid_t *kids;
	int n, i, r = 0;

	n = proc_descendants(pid, &kids);
	if (n < 0)
		return n == -ESRCH ? 0 : error_set(n, "cannot list the children of pid %d", (int)pid);
	rec->opts.children = false;	/* the list holds them all already */
	for (i = 0; i < n && r >= 0; i++)
		r = prof_recorder_attach_process(rec, kids[i], PROF_ATTACH_MODE_STOP,
						 &outcome);
	rec->opts.children = children;
	free(kids);
	return r;
}

int prof_recorder_refresh_threads(struct prof_recorder *rec, pid_t pid,
				  enum prof_refresh_outcome *ret)
{
	struct proc *p = pt_find_process(&rec->pt, pid);
	pid_t *tids;
	int n, i, r = 0;

	if (!p)
		return error_setx(-EINVAL, "pid %d is not part of this recording", (int)pid);
	n = proc_tasks(pid, &tids);
	if (n == -ESRCH || p->exited) {
		if (n >= 0)
			free(tids);
		*ret = PROF_REFRESH_OUTCOME_EXITED;
		return 0;
	}
	if (n < 0)
		return error_set(n, "cannot list the threads of pid %d", (int)pid);
	/* a thread the recording never heard of has no event, inherited or own */
	for (i = 0; i < n && r >= 0; i++) {
		struct thr *t;

		if (pt_find_thread(&rec->pt, tids[i]))
			continue;
		r = rec_open_task_events(rec, tids[i], false, rec->enabled);
		if (r == -ESRCH) {
			prof_errmsg_clear();
			r = 0;
			continue;
		}
		if (r >= 0)
			r = pt_thread(&rec->pt, pid, tids[i], clock_ns(CLOCK_MONOTONIC), &t);
	}
	free(tids);
	if (r < 0)
		return r;
	*ret = PROF_REFRESH_OUTCOME_DONE;
	return 0;
}
