/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - the recorder's API and lifecycle: creating it (launched or
 * attached), polling, flushing, liveness, finishing.  Its parts: events
 * and rings in recorder_events.c, records in recorder_records.c, running
 * processes in recorder_attach.c.
 *
 * One event per online CPU for the target, with inheritance, each mapping
 * its own ring: a per-task event with inherit cannot be mmapped, and per-CPU
 * events follow every thread and child wherever they run.  Rings deliver
 * out of order across CPUs, so records pass through the sorter and leave it
 * only once the watermark (the start of the previous drain) passes them.
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
#include "spool/spool_writer.h"

static int check_opts(struct prof_recorder_opts *o)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t max = 0;

	if (prof_max_sample_rate(&max) < 0)
		max = 100000;
	if (o->freq_max)
		o->freq_hz = max;
	if (o->freq_hz == 0)
		o->freq_hz = PROF_DEFAULT_FREQ;
	/* a CPU sample then weighs its period in time, as an interval does */
	if (o->off_cpu && o->event == PROF_EVENT_DEFAULT)
		o->event = PROF_EVENT_CPU_CLOCK;
	/*
	 * The ring holds a sample's whole stack copy, used or not: above a few
	 * kHz a half-size copy keeps twice the samples in the same ring.
	 */
	if (o->stack_bytes == 0)
		o->stack_bytes = o->freq_hz > PROF_FULL_STACK_MAX_FREQ ? PROF_HIGH_FREQ_STACK
								  : PROF_DEFAULT_STACK;
	o->stack_bytes = (o->stack_bytes + 7) & ~7u;
	if (o->stack_bytes > PROF_MAX_STACK)
		return error_setx(-EINVAL, "stack size %u is above the kernel's maximum of %u bytes",
				  o->stack_bytes, PROF_MAX_STACK);
	if (o->freq_hz > max)
		return error_setx(-EINVAL, "sampling frequency %llu Hz is above the kernel's maximum "
				  "of %llu Hz (kernel.perf_event_max_sample_rate)",
				  (unsigned long long)o->freq_hz, (unsigned long long)max);
	if (o->mmap_pages & (o->mmap_pages - 1))
		return error_setx(-EINVAL, "mmap pages must be a power of two, not %u",
				  o->mmap_pages);
	/*
	 * The kernel writes a sample whole or drops it: a ring smaller than
	 * one, its stack copy and the registers around it, loses them all.
	 */
	if (o->mmap_pages && (size_t)o->mmap_pages * page < sample_max_bytes(o->stack_bytes)) {
		size_t need = 1;

		while (need * page < sample_max_bytes(o->stack_bytes))
			need *= 2;
		return error_setx(-EINVAL, "a ring of %u pages cannot hold one sample of a %u-byte "
				  "stack copy: take %zu pages or more, or a smaller stack size",
				  o->mmap_pages, o->stack_bytes, need);
	}
	return 0;
}

/* PID 0: the whole machine (prof_recorder_open_system()). */
static int recorder_new(pid_t pid, const char *path, const struct prof_sink *sink,
			enum prof_attach_mode mode, const struct prof_recorder_opts *opts,
			struct prof_recorder **ret)
{
	struct prof_recorder *rec;
	char *switch_path = NULL;
	bool system = pid == 0;
	int r;

	struct held_process held = { 0 };

	if (system)
		mode = PROF_ATTACH_MODE_STOP;	/* nothing is held: every event enables at once */
	else if (pid <= 0)
		return error_setx(-EINVAL, "invalid pid %d", (int)pid);
	if (mode != PROF_ATTACH_MODE_ON_EXEC && mode != PROF_ATTACH_MODE_STOP)
		return error_setx(-EINVAL, "unknown attach mode %d", (int)mode);
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return error_setx(-ENOMEM, "out of memory");
	r = opts_copy(&rec->opts, sizeof(rec->opts), opts, "recorder");
	if (r < 0) {
		free(rec);
		return r;
	}
	rec->target = pid;
	rec->on_exec = mode == PROF_ATTACH_MODE_ON_EXEC;
	rec->kernel = rec->opts.include_kernel;
	rec->epfd = -1;
	rec->file.fd = -1;
	rec->cgroup_fd = -1;
	sorter_init(&rec->sorter);
	path_cache_init(&rec->paths);
	pt_init(&rec->pt, NULL);
	jvm_set_init(&rec->jvms);
	py_set_init(&rec->py);
	jvm_frames_init(&rec->jframes);
	r = unwinder_init(&rec->uw);
	if (r == 0)
		r = capture_init(&rec->capture);
	/* the machine's busy share is counted in samples of the idle task: a clock event */
	if (r == 0 && system && rec->opts.event == PROF_EVENT_DEFAULT)
		rec->opts.event = PROF_EVENT_CPU_CLOCK;
	if (r == 0 && system)
		r = rec_system_prepare(rec);
	else if (r == 0 && (rec->opts.cpus || rec->opts.cgroup))
		r = error_setx(-EINVAL, "a CPU list or a cgroup is for recording the whole machine");
	if (r == 0)
		r = check_opts(&rec->opts);
	if (r < 0)
		goto out_free;
	rec->sum.freq_hz = rec->opts.freq_hz;
	rec->sum.stack_bytes = rec->opts.stack_bytes;
	rec->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rec->epfd < 0) {
		r = error_set(-errno, "cannot create an epoll instance");
		goto out_free;
	}
	r = rec_init_rings(rec);
	if (r < 0)
		goto out_free;
	if (system) {
		r = rec_open_task_events(rec, -1, false, false);
	} else if (rec->on_exec) {
		r = rec_open_task_events(rec, pid, true, false);
	} else {
		/* the threads stay still from before the events open until enable() */
		r = hold_process(pid, &held);
		if (r >= 0)
			r = rec_keep_held(rec, &held);
		if (r >= 0)
			r = rec_open_held_events(rec, &rec->held[rec->nheld - 1], false);
	}
	if (r >= 0 && !system)
		r = rec_watch_exit(rec, pid);
	if (r < 0)
		goto out_free;
	rec->start_ns = rec->file_start_ns = clock_ns(CLOCK_MONOTONIC);
	rec->prev_drain_ns = 0;
	rec->last_block_ns = rec->start_ns;
	if (rec->opts.unnamed && (!path || sink)) {
		r = error_setx(-EINVAL, "an unnamed spool needs a directory, not a sink");
		goto out_free;
	}
	if (rec->opts.switch_bytes || rec->opts.switch_ns || rec->opts.switch_signal) {
		/* a recording in files named after PATH: the first one's name now */
		r = !path ? error_setx(-EINVAL, "a recording that switches files needs a spool "
						 "path, not a sink")
			  : rec_switch_init(rec, path);
		if (r == 0 && !rec->opts.unnamed && !(switch_path = rec_switch_first_name(rec)))
			r = error_setx(-ENOMEM, "out of memory");
		if (r < 0)
			goto out_free;
		if (switch_path)
			path = switch_path;
	}
	/* the file is made last: nothing that fails before it leaves one */
	if (rec->opts.unnamed)
		r = spool_file_create_unnamed(&rec->file, path);
	else
		r = path ? spool_file_create(&rec->file, path) : 0;
	if (r == 0)
		r = rec_new_writer(rec, sink);
	if (r < 0)
		goto out_free;
	pt_set_writer(&rec->pt, rec->w);
	offcpu_init(&rec->offcpu, rec->w);
	rec->pt.no_children = rec->opts.no_inherit;
	rec->pt.spaces = &rec->uw.spaces;
	if (system) {
		r = rec_system_synthesize(rec);
		if (r < 0)
			goto out_free;
	} else if (!rec->on_exec) {
		r = rec_snapshot_held(rec, &rec->held[0]);
		if (r >= 0 && rec->opts.children)
			r = rec_attach_descendants(rec, pid);
		if (r < 0)
			goto out_free;
	}
	rec_summary(rec, &rec->file_base);
	free(switch_path);
	*ret = rec;
	return 0;
out_free:
	free(switch_path);
	release_process(&held);
	prof_recorder_free(rec);
	return r;
}

int prof_recorder_attach(pid_t pid, const char *spool_path, enum prof_attach_mode mode,
			 const struct prof_recorder_opts *opts, struct prof_recorder **ret)
{
	if (!spool_path)
		return error_setx(-EINVAL, "no spool path");
	return recorder_new(pid, spool_path, NULL, mode, opts, ret);
}

int prof_recorder_open_system(const char *spool_path, const struct prof_recorder_opts *opts,
			      struct prof_recorder **ret)
{
	if (!spool_path)
		return error_setx(-EINVAL, "no spool path");
	return recorder_new(0, spool_path, NULL, PROF_ATTACH_MODE_STOP, opts, ret);
}

int prof_recorder_attach_sink(pid_t pid, const struct prof_sink *sink,
			      enum prof_attach_mode mode, const struct prof_recorder_opts *opts,
			      struct prof_recorder **ret)
{
	if (!sink)
		return error_setx(-EINVAL, "no spool sink");
	return recorder_new(pid, NULL, sink, mode, opts, ret);
}

/*
 * Sampling starts (or has started): the spool goes to its path, so that
 * from now on a killed recorder leaves what it wrote there.
 */
static int publish(struct prof_recorder *rec)
{
	int r;

	if (rec->file.fd < 0 || rec->file.published)
		return 0;
	r = spool_file_publish(&rec->file);
	if (r == 0)
		r = rec_switch_published(rec);
	if (r < 0 && !rec->error)
		rec->error = r;
	return r;
}

int prof_recorder_enable(struct prof_recorder *rec)
{
	size_t i;
	int r = publish(rec);

	if (!rec->on_exec)	/* launched: the kernel enables them at the exec, not before */
		for (i = 0; i < rec->nfds && r == 0; i++)
			if (ioctl(rec->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
				r = error_set(-errno, "cannot enable the perf events");
	rec->enabled = true;
	/* the attach window ends here, even when enabling failed */
	for (i = 0; i < rec->nheld; i++)
		release_process(&rec->held[i]);
	rec->nheld = 0;
	return r;
}

/* ---- record handling ---------------------------------------------------- */

/*
 * Move what the rings hold into the sorter, and hand on what the
 * watermark (the start of the previous drain) passed: by then every ring
 * has delivered what happened before it.  Then the periodic work: /proc
 * after a loss, a block closed, a new file, the exited forgotten.
 */
int prof_recorder_poll(struct prof_recorder *rec, int timeout_ms, struct prof_poll_summary *ret)
{
	struct epoll_event evs[64];
	uint64_t samples = rec->sum.samples, lost = rec->sum.lost_events, drain_start;
	int r;

	if (rec->error)
		return rec->error;
	r = publish(rec);	/* launched: the command runs, its events enabled at exec */
	if (r < 0)
		return r;
	if (!sorter_len(&rec->sorter) && timeout_ms != 0) {
		int wait = rec_poll_timeout(rec, timeout_ms);

		if (wait != 0 && epoll_wait(rec->epfd, evs, 64, wait) < 0 && errno != EINTR)
			return error_set(-errno, "cannot wait for perf events");
	}
	drain_start = clock_ns(CLOCK_MONOTONIC);
	rec->ring_had_data = false;
	r = rec_drain_rings(rec);
	/* the CFI a JIT wrote for its code before the samples in it are unwound */
	if (r >= 0)
		r = pt_read_jitdumps(&rec->pt);
	if (r >= 0)
		r = rec_process_until(rec, rec->prev_drain_ns);
	rec->prev_drain_ns = drain_start;
	if (r >= 0 && rec->need_reconcile &&
	    drain_start - rec->last_reconcile_ns >= RECONCILE_INTERVAL_NS) {
		/* what is queued happened before "now": apply it, then look at /proc */
		r = rec_process_until(rec, UINT64_MAX);
		if (r >= 0)
			r = rec_reconcile(rec);
	}
	if (r >= 0 && drain_start - rec->last_block_ns >= BLOCK_INTERVAL_NS) {
		rec->last_block_ns = drain_start;
		r = prof_spool_writer_flush(rec->w);
	}
	if (r >= 0 && rec_switch_due(rec, drain_start))
		r = prof_recorder_switch_output(rec);
	/* a JVM's compiled methods are named by the perf map it writes when asked */
	if (r >= 0 && drain_start - rec->last_jvm_ns >= JVM_POLL_NS) {
		rec->last_jvm_ns = drain_start;
		jvm_set_poll(&rec->jvms, &rec->pt, drain_start);
	}
	/* what exited a while ago cannot be named by a record any more: forget it */
	if (r >= 0 && drain_start - rec->last_collect_ns >= COLLECT_INTERVAL_NS) {
		rec->last_collect_ns = drain_start;
		r = pt_collect(&rec->pt, drain_start, COLLECT_INTERVAL_NS);
	}
	if (ret) {
		struct prof_poll_summary ps = {
			.sz = sizeof(ps),
			.samples = rec->sum.samples - samples,
			.lost_events = rec->sum.lost_events - lost,
		};
		int e = sized_out(ret, &ps, sizeof(ps), "poll summary");

		r = r < 0 ? r : e;
	}
	return r < 0 ? r : 0;
}

bool prof_recorder_has_pending_events(const struct prof_recorder *rec)
{
	return sorter_len(&rec->sorter) > 0 || rec->ring_had_data;
}

/*
 * Reconcile: a process whose exit record never came but is gone.  The
 * recorder's loop asks after every poll: reading /proc/PID/stat of each
 * live process each time was a quarter of the recorder's CPU on a
 * single-process recording, so a reaped process is seen within
 * REAPED_INTERVAL_NS and a zombie within LIVENESS_INTERVAL_NS.
 */
static int reconcile_liveness(struct prof_recorder *rec)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	bool sweep = now - rec->last_liveness_ns >= LIVENESS_INTERVAL_NS;
	size_t i;
	int r;

	if (!sweep && now - rec->last_reaped_ns < REAPED_INTERVAL_NS)
		return 0;
	rec->last_reaped_ns = now;
	if (sweep)
		rec->last_liveness_ns = now;
	for (i = 0; i < rec->pt.nprocs; i++) {
		struct proc *p = rec->pt.procs[i];

		if (p->exited || !(sweep ? proc_gone(p->pid) : proc_reaped(p->pid)))
			continue;
		/*
		 * Its exit record may still be queued: take it first.  Not a
		 * block of the spool for each: under a make -j each process
		 * that exited cut the block short, and deflate's next started
		 * without the context (a make -j2 wrote 24 blocks of 13 KiB)
		 */
		r = rec_process_all(rec);
		if (r < 0)
			return r;
		if (!p->exited) {
			r = rec_end_offcpu_of_process(rec, p, now);
			if (r >= 0)
				r = pt_process_exit(&rec->pt, p, now);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int prof_recorder_process_is_active(struct prof_recorder *rec, pid_t pid, bool *ret)
{
	struct proc *p = pt_find_process(&rec->pt, pid);

	*ret = p && !p->exited && !proc_gone(pid);
	return 0;
}

int prof_recorder_has_active_processes_except(struct prof_recorder *rec, pid_t pid, bool *ret)
{
	size_t i;
	int r = reconcile_liveness(rec);

	if (r < 0)
		return r;
	*ret = false;
	for (i = 0; i < rec->pt.nprocs; i++)
		if (!rec->pt.procs[i]->exited && rec->pt.procs[i]->pid != pid)
			*ret = true;
	return 0;
}

int prof_recorder_active_process_count(struct prof_recorder *rec, size_t *ret)
{
	int r = reconcile_liveness(rec);

	if (r < 0)
		return r;
	*ret = rec->pt.live_processes;
	return 0;
}

static void keep_error(int *first, char *msg, size_t len, int r)
{
	size_t n;

	if (r >= 0)
		return;
	if (*first == 0) {
		*first = r;
		snprintf(msg, len, "%s", prof_errmsg());
		return;
	}
	if (strstr(msg, prof_errmsg()))
		return;	/* a writer that failed fails the same way each time after */
	n = strlen(msg);
	if (n + 8 < len)
		snprintf(msg + n, len - n, "; then: %s", prof_errmsg());
}

int prof_recorder_close(struct prof_recorder *rec, struct prof_recording_summary *ret)
{
	struct prof_counters c = { .sz = sizeof(c) };
	SIZED(prof_recording_summary, s);
	char msg[1024] = "";
	uint64_t stop_ns;
	size_t i;
	int r = 0;

	if (!rec)
		return 0;
	for (i = 0; i < rec->nfds; i++)
		if (ioctl(rec->fds[i], PERF_EVENT_IOC_DISABLE, 0) < 0)
			keep_error(&r, msg, sizeof(msg),
				   error_set(-errno, "cannot disable the perf events"));
	stop_ns = clock_ns(CLOCK_MONOTONIC);
	keep_error(&r, msg, sizeof(msg), prof_recorder_flush(rec));
	/* threads still off their CPU: their intervals end with the recording */
	if (rec->opts.off_cpu && !rec->error)
		keep_error(&r, msg, sizeof(msg), offcpu_end_all(&rec->offcpu, stop_ns));
	if (rec->malformed_records)
		pr_warn("%llu perf records were too short or malformed for their fields, and were "
			"skipped (the first: type %u, %u bytes)",
			(unsigned long long)rec->malformed_records, (unsigned)rec->malformed_type,
			(unsigned)rec->malformed_size);
	rec_summary(rec, &s);
	rec_counters(&s, &c);
	if (rec->switch_base)
		rec_file_counters(rec, &c);
	c.mono_end_ns = clock_ns(CLOCK_MONOTONIC);
	c.wall_end_ns = clock_ns(CLOCK_REALTIME);
	/* the names the spool carries, so it reports later and elsewhere */
	keep_error(&r, msg, sizeof(msg), rec_capture_names(rec, rec->w));
	c.jit_map_names = rec->capture.map_names;
	c.jitdump_names = rec->capture.jitdump_names;
	/* a trailer is written even after an error: the spool says what it holds */
	keep_error(&r, msg, sizeof(msg), prof_spool_writer_finish(rec->w, &c));
	/* what the file holds, which after a write error is less than was taken */
	s.spool_bytes = rec->spool_bytes_before + prof_spool_writer_bytes(rec->w);
	s.samples = rec->samples_written_before + spool_writer_samples_written(rec->w);
	keep_error(&r, msg, sizeof(msg), publish(rec));
	keep_error(&r, msg, sizeof(msg), prof_spool_writer_close(rec->w));
	rec->w = NULL;
	if (ret)
		keep_error(&r, msg, sizeof(msg),
			   sized_out(ret, &s, sizeof(s), "recording summary"));
	prof_recorder_free(rec);
	if (r < 0)
		error_setx(r, "%s", msg);
	return r;
}

void prof_recorder_free(struct prof_recorder *rec)
{
	size_t i;

	if (!rec)
		return;
	if (rec->tail.tail)
		rec->tail.orphan(rec->tail.tail);	/* the tail lives on, on its own */
	for (i = 0; i < rec->nheld; i++)
		release_process(&rec->held[i]);
	free(rec->held);
	rec_close_rings(rec);
	free(rec->cpu_list);
	if (rec->cgroup_fd >= 0)
		close(rec->cgroup_fd);
	if (rec->epfd >= 0)
		close(rec->epfd);
	for (i = 0; i < rec->nexit_fds; i++)
		close(rec->exit_fds[i]);
	free(rec->exit_fds);
	sorter_release(&rec->sorter);
	pt_release(&rec->pt);	/* its modules' tables first, then the unwinder that holds them */
	for (i = 0; i < STACK_MEMOS; i++)
		free(rec->memo[i]);
	path_cache_release(&rec->paths);
	unwinder_release(&rec->uw);
	capture_release(&rec->capture);
	jvm_set_release(&rec->jvms);	/* after the last capture: it removes the maps it caused */
	py_set_release(&rec->py);
	jvm_frames_release(&rec->jframes);
	offcpu_release(&rec->offcpu);
	rec_switch_release(rec);
	prof_spool_writer_close(rec->w);
	spool_file_close(&rec->file);	/* the lock goes with it */
	free(rec);
}

