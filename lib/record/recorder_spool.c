/* SPDX-License-Identifier: MIT */
/*
 * recorder_spool.c - the recorder's side of its spool: the metadata and the
 * writer of a spool file, flushing what the rings hold into it, and the
 * counters: the summary of the recording, and the trailer of a file (what
 * it holds, when the recording is in several).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "recorder.h"
#include "spool/spool_writer.h"

int rec_new_writer(struct prof_recorder *rec, const struct prof_sink *sink)
{
	struct prof_recorder_opts *o = &rec->opts;
	struct utsname u;
	char host[256] = "";
	struct prof_meta m = {
		.sz = sizeof(m),
		.argc = o->argc, .argv = o->argv,
		.npids = 1, .pids = &(int32_t){ rec->target },
		.wall_start_ns = clock_ns(CLOCK_REALTIME), .mono_start_ns = rec->file_start_ns,
		.event = rec->sum.event, .freq_hz = o->freq_hz, .stack_bytes = o->stack_bytes,
		.hostname = host, .page_size = (uint64_t)sysconf(_SC_PAGESIZE),
		.prof_version = PROF_VERSION,
		.flags = (o->no_inherit ? 0 : PROF_META_INHERIT) |
			 (rec->on_exec ? 0 : PROF_META_ATTACHED) | (rec->kernel ? PROF_META_KERNEL : 0) |
			 (rec->file.locked ? PROF_META_LOCKED : 0) |
			 (o->off_cpu ? PROF_META_OFFCPU : 0) | (rec->system ? PROF_META_SYSTEM : 0),
	};
	int32_t pids[64];
	size_t i;

	if (o->npids) {
		for (i = 0; i < o->npids && i < 64; i++)
			pids[i] = o->pids[i];
		m.pids = pids;
		m.npids = i;
	}

	if (uname(&u) == 0) {
		m.kernel_release = u.release;
		m.arch = u.machine;
	}
	gethostname(host, sizeof(host) - 1);
	if ((o->argc && rec->on_exec) || rec->system)
		m.npids = 0;	/* a launched command is named by its command line */
	if (sink)
		return prof_spool_writer_open_sink(sink, &m, NULL, &rec->w);
	return spool_writer_open_fd(rec->file.fd, rec->file.path, &m, NULL, &rec->w);
}

int rec_process_all(struct prof_recorder *rec)
{
	int r = rec->error ? rec->error : rec_drain_rings(rec);

	if (r >= 0)
		r = rec_process_until(rec, UINT64_MAX);
	if (r >= 0 && rec->need_reconcile)
		r = rec_reconcile(rec);
	return r;
}

int prof_recorder_flush(struct prof_recorder *rec)
{
	int r = rec_process_all(rec);

	return r < 0 ? r : prof_spool_writer_flush(rec->w);
}

void rec_summary(const struct prof_recorder *rec, struct prof_recording_summary *ret)
{
	*ret = rec->sum;
	ret->sz = sizeof(*ret);
	ret->kernel_enabled = rec->kernel;
	ret->processes = rec->pt.processes_seen;
	ret->threads = rec->pt.threads_seen;
	ret->spool_bytes = rec->spool_bytes_before + (rec->w ? prof_spool_writer_bytes(rec->w) : 0);
	ret->files = rec->files + (rec->w != NULL);
	ret->spool_path = rec->file.path;
	ret->duration_ns = clock_ns(CLOCK_MONOTONIC) - rec->start_ns;
	ret->unwind_tables = rec->uw.spaces.tables.files;
	ret->unwind_table_bytes = rec->uw.spaces.tables.bytes;
	ret->unwind_table_peak_bytes = rec->uw.spaces.tables.peak_bytes;
	ret->unwind_table_flushes = rec->uw.spaces.tables.flushes;
	ret->unwind_cache_hits = rec->uw.cache_hits;
	ret->unwind_cache_misses = rec->uw.cache_misses;
	ret->unwind_check_samples = rec->uw.check_samples;
	ret->unwind_check_same = rec->uw.check_same;
	ret->unwind_check_same_frames = rec->uw.check_same_frames;
	ret->unwind_check_entry = rec->uw.check_entry;
	ret->unwind_check_further = rec->uw.check_further;
	ret->offcpu_intervals = rec->offcpu.stats.intervals;
	memcpy(ret->offcpu_ns, rec->offcpu.stats.ns, sizeof(rec->offcpu.stats.ns));
	ret->offcpu_unsampled = rec->offcpu.stats.unsampled;
	ret->offcpu_truncated = rec->offcpu.stats.truncated;
	ret->cpus = rec->system ? (uint32_t)rec->ncpus : 0;
	ret->synthesis_ns = rec->synthesis_ns;
	ret->synthesis_cpu_ns = rec->synthesis_cpu_ns;
	ret->unwind_memo_frames = rec->uw.memo_frames;
	ret->python_frames = rec->py.frames;
	ret->python_stale = rec->py.stale;
	ret->python_unread = rec->py.unread;
	ret->java_frames = rec->jframes.named;
	ret->java_unnamed = rec->jframes.unnamed;
	ret->synthesis_processes = rec->synthesis_processes;
}

int prof_recorder_summary(const struct prof_recorder *rec, struct prof_recording_summary *ret)
{
	SIZED(prof_recording_summary, s);

	rec_summary(rec, &s);
	return sized_out(ret, &s, sizeof(s), "recording summary");
}

void rec_counters(const struct prof_recording_summary *s, struct prof_counters *c)
{
	c->samples = s->samples;
	c->sample_events = s->sample_events;
	c->lost[PROF_LOST_RECORDS] = s->lost_events;
	c->truncated_stacks = s->truncated_stacks;
	c->empty_stacks = s->empty_stacks;
	memcpy(c->unwind_errors, s->unwind_errors, sizeof(c->unwind_errors));
	c->frames = s->frames;
	memcpy(c->fallback_frames, s->fallback_frames, sizeof(c->fallback_frames));
	c->processes = s->processes;
	c->threads = s->threads;
	c->lifecycle_gaps = s->lifecycle_gaps;
	c->reconciliations = s->reconciliations;
	c->lost[PROF_LOST_RECORDS] -= s->lost_switch_samples + s->lost_switch_records;
	c->lost[PROF_LOST_SWITCH_SAMPLES] = s->lost_switch_samples;
	c->lost[PROF_LOST_SWITCH_RECORDS] = s->lost_switch_records;
	c->switch_events = s->switch_events;
	c->offcpu_intervals = s->offcpu_intervals;
	c->offcpu_ns = s->offcpu_ns[PROF_OFFCPU_STATE_BLOCKED] + s->offcpu_ns[PROF_OFFCPU_STATE_RUNNABLE];
	c->offcpu_unsampled = s->offcpu_unsampled;
	c->offcpu_truncated = s->offcpu_truncated;
	c->idle_samples = s->idle_samples;
	c->cpus = s->cpus;
	c->python_frames = s->python_frames;
	c->python_stale = s->python_stale;
	c->python_unread = s->python_unread;
}

void rec_file_counters(const struct prof_recorder *rec, struct prof_counters *c)
{
	struct prof_counters base = { .sz = sizeof(base) };

	rec_counters(&rec->file_base, &base);
	counters_add(c, &base, -1);
}

int rec_capture_names(struct prof_recorder *rec, struct prof_spool_writer *w)
{
	const struct proc_table *pt = &rec->pt;
	struct capture_process *v = malloc((pt->nprocs + pt->ngone + 1) * sizeof(*v));
	size_t n = 0, i;
	int r;

	if (!v)
		return error_setx(-ENOMEM, "out of memory");
	/* the JVMs' perf maps as they are now, for the methods compiled since they were asked */
	jvm_set_refresh(&rec->jvms, pt, JVM_REFRESH_MS);
	/* the processes the file's frames can name: those it holds, and those collected */
	for (i = 0; i < pt->nprocs; i++) {
		const struct proc *p = pt->procs[i];

		if (p->spool_id)
			v[n++] = (struct capture_process){ .id = p->spool_id, .pid = p->pid,
							   .jitdump = pt_jitdump(pt, p->pid) };
	}
	for (i = 0; i < pt->ngone; i++)
		v[n++] = (struct capture_process){ .id = pt->gone[i].spool_id,
						   .pid = pt->gone[i].pid,
						   .jitdump = pt_jitdump(pt, pt->gone[i].pid) };
	for (i = 0; i < n; i++) {
		v[i].py = py_names(&rec->py, v[i].pid, &v[i].npy);
		v[i].jit = pt_jit_names(&rec->pt, v[i].pid, &v[i].njit);
		v[i].java = jvm_frames_names(&rec->jframes, v[i].pid, &v[i].njava);
	}
	r = capture_names(&rec->capture, w, v, n);
	free(v);
	return r;
}
