/* SPDX-License-Identifier: MIT */
/*
 * recorder_records.c - the records of the rings, in timestamp order:
 * samples are unwound and interned into the spool; mmap, comm, fork and
 * exit update the process table; losses are counted, and a loss that may
 * have hidden side-band records is made good from /proc.
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
#include "unwind/regs_x86_64.h"
#include "sorter.h"
#include "unwind/unwind.h"

static uint64_t record_time(const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;
	uint64_t t;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size < 32)
			return 0;
		memcpy(&t, p + 24, sizeof(t));	/* header, ip, pid/tid, then time */
		return t;
	}
	if (h->size < sizeof(*h) + 24)
		return 0;
	memcpy(&t, p + h->size - 16, sizeof(t));
	return t;
}

int64_t rec_frame_module(struct prof_recorder *rec, struct proc *p, struct as_module *m)
{
	bool first = false;
	int64_t id = pt_frame_module_id(&rec->pt, p, m, &first);
	int r;

	if (id <= 0 || !first)
		return id;
	r = capture_module(&rec->capture, (uint32_t)id, m);
	return r < 0 ? r : id;
}

/* The spool frame of user pc PC of PROC. */
static int64_t user_frame(struct prof_recorder *rec, struct proc *proc, uint64_t pc)
{
	struct as_module *m = as_find(&proc->as, pc);
	struct prof_frame f = { .kind = PROF_FRAME_ANON, .ref = proc->spool_id, .addr = pc };
	int64_t id;

	if (m) {
		id = rec_frame_module(rec, proc, m);
		if (id < 0)
			return id;
		f = (struct prof_frame){ .kind = PROF_FRAME_USER, .ref = (uint32_t)id,
					 .addr = pc - m->start + m->pgoff };
	}
	return prof_spool_writer_intern_frame(rec->w, &f);
}

/*
 * The stack node of U's user frames, root first: a truncated stack's
 * marker, then the frames from the outermost in.  A thread's samples
 * mostly share their outer frames with its previous one: those nodes are
 * taken from the thread's memo (while its process's mappings stay as they
 * were), so only the frames that changed are looked up in the spool's
 * maps, two lookups each, that miss the CPU's caches on a big recording.
 */
static int64_t intern_user_stack(struct prof_recorder *rec, struct thr *t, struct proc *proc,
				 const struct unwind_result *u)
{
	struct stack_memo *m = rec->memo[t->spool_id % STACK_MEMOS];
	int64_t node = 0, frame;
	size_t i, same = 0;

	if (!m) {
		m = rec->memo[t->spool_id % STACK_MEMOS] = calloc(1, sizeof(*m));
		if (!m)
			return error_setx(-ENOMEM, "out of memory");
	}
	if (m->thread != t->spool_id || m->gen != proc->as.gen || m->cause != u->cause) {
		m->thread = t->spool_id;
		m->gen = proc->as.gen;
		m->cause = u->cause;
		m->n = 0;
	}
	while (same < m->n && same < u->n && m->pc[same] == u->pc[u->n - 1 - same])
		same++;
	if (same) {
		node = m->node[same - 1];
	} else if (u->cause) {
		frame = prof_spool_writer_intern_frame(rec->w, &(struct prof_frame){
			.kind = PROF_FRAME_TRUNCATED, .addr = (uint64_t)u->cause });
		node = frame < 0 ? frame : prof_spool_writer_intern_stack(rec->w, 0, (uint32_t)frame);
		if (node < 0)
			return node;
	}
	for (i = same; i < u->n; i++) {
		uint64_t pc = u->pc[u->n - 1 - i];

		frame = user_frame(rec, proc, pc);
		node = frame < 0 ? frame : prof_spool_writer_intern_stack(rec->w, (uint32_t)node,
									  (uint32_t)frame);
		if (node < 0) {
			m->n = 0;
			return node;
		}
		m->pc[i] = pc;
		m->node[i] = (uint32_t)node;
	}
	m->n = u->n;
	return node;
}

/*
 * A sample: of the sampling event, or with SWITCHED a switch-out sample
 * of the context-switch event (the start of an off-CPU interval).
 */
static int handle_sample(struct prof_recorder *rec, const uint8_t *p, size_t size,
			 bool switched)
{
	const uint8_t *end = p + size;
	struct {
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} s;
	uint64_t regs[SAMPLE_REGS_COUNT], stack_size = 0, dyn_size = 0, abi = 0, nchain = 0;
	const uint8_t *stack = NULL, *chain = NULL;
	struct unwind_result *u = &rec->unwound;
	struct thr *t;
	struct proc *proc;
	size_t i, n = 0;
	int64_t id, user_id;
	int r;

	p += sizeof(struct perf_event_header);
	if (end - p < 40)
		return 0;
	memcpy(&s, p, 40);
	p += 40;
	if (switched)
		rec->sum.switch_events++;
	if (rec->kernel) {
		/* kernel callchain: nr, then nr entries with context markers */
		if (end - p < 8)
			return 0;
		memcpy(&nchain, p, 8);
		p += 8;
		if (nchain > (uint64_t)(end - p) / 8)
			return 0;
		chain = p;
		p += nchain * 8;
	}
	if (end - p < 8)
		return 0;
	memcpy(&abi, p, 8);
	p += 8;
	if (!switched)
		rec->sum.sample_events++;
	if (s.pid == 0 || s.tid == 0 || (int32_t)s.pid < 0)
		return 0;	/* the idle task or a sample without a task */
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		if ((size_t)(end - p) < sizeof(regs))
			return 0;
		memcpy(regs, p, sizeof(regs));
		p += sizeof(regs);
	}
	if (end - p >= 8) {
		memcpy(&stack_size, p, 8);
		p += 8;
		if (stack_size && (uint64_t)(end - p) >= stack_size + 8) {
			stack = p;
			memcpy(&dyn_size, p + stack_size, 8);
			if (dyn_size > stack_size)
				dyn_size = stack_size;
		}
	}
	r = pt_thread(&rec->pt, (pid_t)s.pid, (pid_t)s.tid, s.time, &t);
	if (r < 0)
		return r;
	proc = t->proc;
	/* kernel frames first (the leaf side), as the callchain gives them */
	for (i = 0; chain && i < nchain && n < UNWIND_MAX_FRAMES / 2; i++) {
		uint64_t ip;
		bool first;

		memcpy(&ip, chain + i * 8, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip != (uint64_t)PERF_CONTEXT_KERNEL)
				break;	/* user, guest or hypervisor parts: not ours */
			continue;
		}
		/* the first kernel entry is where it was; the others return addresses */
		first = i == 1;
		id = prof_spool_writer_intern_frame(rec->w, &(struct prof_frame){
			.kind = PROF_FRAME_KERNEL, .addr = first ? ip : ip - 1 });
		if (id < 0)
			return (int)id;
		rec->frames[n++] = (uint32_t)id;
	}
	if (abi != PERF_SAMPLE_REGS_ABI_64) {
		u->n = 1;
		u->pc[0] = s.ip;
		u->cause = PROF_UNWIND_NO_REGS;
	} else {
		/* a pc in no known module: the maps may have moved on without us */
		if (!as_find(&proc->as, regs[SAMPLE_REG_IP]) && s.time - proc->maps_refreshed_ns > 50000000u) {
			proc->maps_refreshed_ns = s.time;
			r = pt_refresh_maps(&rec->pt, proc, s.time);
			if (r < 0)
				return r;
		}
		r = unwind_sample(&rec->uw, &proc->as, (pid_t)s.tid, regs, stack, dyn_size, u);
		if (r < 0)
			return error_setx(r, "out of memory");
		/* a return address into code we do not know: JIT code mprotect'ed executable */
		if (u->cause == PROF_UNWIND_UNMAPPED && s.time - proc->maps_refreshed_ns > 50000000u) {
			proc->maps_refreshed_ns = s.time;
			r = pt_refresh_maps(&rec->pt, proc, s.time);
			if (r < 0)
				return r;
			r = unwind_sample(&rec->uw, &proc->as, (pid_t)s.tid, regs, stack, dyn_size, u);
			if (r < 0)
				return error_setx(r, "out of memory");
		}
		for (i = 1; i < PROF_FALLBACK__COUNT; i++)
			rec->sum.fallback_frames[i] += u->fallback[i];
		rec->sum.frames += u->n;
	}
	if (u->cause && !switched) {
		rec->sum.truncated_stacks++;
		rec->sum.unwind_errors[u->cause]++;
	}
	id = user_id = intern_user_stack(rec, t, proc, u);
	/* the kernel's frames on top, the leaf last */
	while (id >= 0 && n--)
		id = prof_spool_writer_intern_stack(rec->w, (uint32_t)id, rec->frames[n]);
	if (id < 0)
		return (int)id;
	if (switched)
		return offcpu_sampled(&rec->offcpu, t->spool_id, s.time, s.cpu, (uint32_t)id,
				      (uint32_t)user_id, u->cause != 0);
	/* running: an interval of its still open lost its switch-in */
	if (rec->opts.off_cpu) {
		r = offcpu_end(&rec->offcpu, t->spool_id, s.time, PROF_OFFCPU_END_RAN);
		if (r < 0)
			return r;
	}
	r = prof_spool_writer_add_sample(rec->w, &(struct prof_sample){
		.time_ns = s.time, .thread = t->spool_id, .stack = (uint32_t)id,
		.period = s.period, .cpu = s.cpu });
	if (r < 0)
		return r;
	rec->sum.samples++;
	return 0;
}

static int handle_lost(struct prof_recorder *rec, uint8_t kind, uint64_t count, uint64_t time,
		       bool switches)
{
	rec->sum.lost_events += count;
	if (switches) {
		/* a switch ring carries switch records and samples, nothing of the lifecycle */
		kind = kind == PROF_LOST_SAMPLES ? PROF_LOST_SWITCH_SAMPLES
						 : PROF_LOST_SWITCH_RECORDS;
		if (kind == PROF_LOST_SWITCH_SAMPLES)
			rec->sum.lost_switch_samples += count;
		else
			rec->sum.lost_switch_records += count;
		return prof_spool_writer_add_lost(rec->w, &(struct prof_lost){
			.time_ns = time, .kind = kind, .count = count });
	}
	/* any record may be among them: an mmap, a fork, an exit, a rename */
	rec->need_reconcile |= kind == PROF_LOST_RECORDS;
	rec->sum.lifecycle_gaps += kind == PROF_LOST_RECORDS;
	return prof_spool_writer_add_lost(rec->w, &(struct prof_lost){ .time_ns = time, .kind = kind,
								.count = count });
}

/* A switch record: pid, tid, then the rest of the sample_id (time, cpu). */
static int handle_switch(struct prof_recorder *rec, const struct perf_event_header *h,
			 const uint8_t *p, size_t body, uint64_t time)
{
	uint32_t id[4];
	struct thr *t;
	int r;

	if (body < 16)
		return 0;
	memcpy(id, p, 8);
	memcpy(&id[2], p + 16, 4);	/* after the time: the cpu */
	if ((int32_t)id[0] <= 0 || (int32_t)id[1] <= 0)
		return 0;
	r = pt_thread(&rec->pt, (pid_t)id[0], (pid_t)id[1], time, &t);
	if (r < 0)
		return r;
	if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT))
		return offcpu_end(&rec->offcpu, t->spool_id, time, PROF_OFFCPU_END_SWITCH_IN);
	return offcpu_switched_out(&rec->offcpu, t->spool_id, time, body >= 24 ? id[2] : 0,
				   h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
}

/* TID exits at TIME: an interval of its that is open ends there. */
static int end_offcpu_at_exit(struct prof_recorder *rec, pid_t tid, uint64_t time)
{
	struct thr *t = rec->opts.off_cpu ? pt_find_thread(&rec->pt, tid) : NULL;

	return t ? offcpu_end(&rec->offcpu, t->spool_id, time, PROF_OFFCPU_END_EXIT) : 0;
}

static int handle_record(struct prof_recorder *rec, const struct sorted_rec *sr)
{
	const struct perf_event_header *h = (const void *)sr->data;
	const uint8_t *p = sr->data + sizeof(*h);
	size_t body = h->size - sizeof(*h);
	bool switches = (size_t)sr->cpu >= rec->ncpus;	/* from a switch ring */
	uint32_t u32[4];
	uint64_t u64[4];
	int r;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return handle_sample(rec, sr->data, h->size, switches);
	case PERF_RECORD_SWITCH:
		return handle_switch(rec, h, p, body, sr->time);
	case PERF_RECORD_MMAP2: {
		/* pid tid addr len pgoff maj min ino ino_gen prot flags filename */
		uint32_t maj, min, prot;
		uint64_t ino;
		char path[PATH_MAX];

		if (body < 64 + 1 || (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			return 0;
		memcpy(u32, p, 8);
		memcpy(u64, p + 8, 24);
		memcpy(&maj, p + 32, 4);
		memcpy(&min, p + 36, 4);
		memcpy(&ino, p + 40, 8);
		memcpy(&prot, p + 56, 4);
		snprintf(path, sizeof(path), "%.*s", (int)(body - 64), (const char *)p + 64);
		(void)prot;
		return pt_mmap(&rec->pt, (pid_t)u32[0], u64[0], u64[1], u64[2], maj, min, ino,
			       path, sr->time);
	}
	case PERF_RECORD_COMM: {
		char comm[17];

		if (body < 9)
			return 0;
		memcpy(u32, p, 8);
		snprintf(comm, sizeof(comm), "%.*s", (int)(body - 8), (const char *)p + 8);
		return pt_comm(&rec->pt, (pid_t)u32[0], (pid_t)u32[1], comm,
			       h->misc & PERF_RECORD_MISC_COMM_EXEC, sr->time);
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* pid ppid tid ptid time */
		if (body < 16)
			return 0;
		memcpy(u32, p, 16);
		if (h->type == PERF_RECORD_FORK)
			return pt_fork(&rec->pt, (pid_t)u32[0], (pid_t)u32[1], (pid_t)u32[2],
				       sr->time);
		r = end_offcpu_at_exit(rec, (pid_t)u32[2], sr->time);
		return r < 0 ? r : pt_exit(&rec->pt, (pid_t)u32[0], (pid_t)u32[2], sr->time);
	case PERF_RECORD_LOST:
		if (body < 16)
			return 0;
		memcpy(u64, p, 16);
		return handle_lost(rec, PROF_LOST_RECORDS, u64[1], sr->time, switches);
	case PERF_RECORD_LOST_SAMPLES:
		if (body < 8)
			return 0;
		memcpy(u64, p, 8);
		return handle_lost(rec, PROF_LOST_SAMPLES, u64[0], sr->time, switches);
	default:
		return 0;
	}
}

/*
 * A sample carries the whole stack copy it asked for (32 KiB by default),
 * of which only dyn_size bytes hold stack: keep those, so that the sorter
 * holds a few KiB, not 32, per sample.  The trimmed record says stack
 * size = dyn_size.  Its length, or 0 to keep the record as it is; *OFF is
 * where the stack starts, *DYN its size.
 */
static size_t trimmed_size(const struct prof_recorder *rec, const struct perf_event_header *h,
			   size_t *ret_off, uint64_t *ret_dyn)
{
	const uint8_t *p = (const uint8_t *)h, *end = p + h->size;
	size_t off = sizeof(*h) + 40;	/* ip, pid/tid, time, cpu/res, period */
	uint64_t nr, abi, size, dyn;

	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	if (rec->kernel) {
		if (off + 8 > h->size)
			return 0;
		memcpy(&nr, p + off, 8);
		if (nr > (h->size - off - 8) / 8)
			return 0;
		off += 8 + nr * 8;
	}
	if (off + 8 > h->size)
		return 0;
	memcpy(&abi, p + off, 8);
	off += 8 + (abi != PERF_SAMPLE_REGS_ABI_NONE ? SAMPLE_REGS_COUNT * 8 : 0);
	if (off + 8 > h->size)
		return 0;
	memcpy(&size, p + off, 8);
	off += 8;
	if (!size || size > (uint64_t)(end - (p + off)) || (uint64_t)(end - (p + off)) - size < 8)
		return 0;
	memcpy(&dyn, p + off + size, 8);
	if (dyn >= size)
		return 0;
	*ret_off = off;
	*ret_dyn = dyn;
	return off + dyn + 8;
}

/* Copy sample H into the sorter, its stack cut to what it holds. */
static int push_sample(struct prof_recorder *rec, const struct perf_event_header *h, int ring)
{
	uint64_t dyn = 0;
	size_t off = 0, n = trimmed_size(rec, h, &off, &dyn);
	struct perf_event_header th = *h;
	uint8_t *out;

	if (!n)
		return sorter_push(&rec->sorter, record_time(h), ring, h, h->size);
	out = sorter_add(&rec->sorter, record_time(h), ring, n);
	if (!out)
		return -ENOMEM;
	memcpy(out, h, off + dyn);
	memcpy(out + off - 8, &dyn, 8);		/* the stack's size: what it holds */
	memcpy(out + off + dyn, &dyn, 8);
	th.size = (uint16_t)n;
	memcpy(out, &th, sizeof(th));
	return 0;
}

/* Move every ring's records into the sorter. */
int rec_drain_rings(struct prof_recorder *rec)
{
	size_t i;
	int r = 0;

	/* a record's ring, not its CPU, goes with it: its kind follows from the ring */
	for (i = 0; i < rec->nrings; i++) {
		struct perf_ring *ring = &rec->rings[i];
		const struct perf_event_header *h;

		if (!ring->base || !perf_ring_begin(ring))
			continue;
		rec->ring_had_data = true;
		while (r >= 0 && (h = perf_ring_next(ring)))
			r = h->type == PERF_RECORD_SAMPLE
				    ? push_sample(rec, h, (int)i)
				    : sorter_push(&rec->sorter, record_time(h), (int)i, h, h->size);
		perf_ring_end(ring);
		if (r < 0)
			return r;
	}
	return 0;
}

int rec_process_until(struct prof_recorder *rec, uint64_t watermark)
{
	const struct sorted_rec *sr;
	int r;

	while ((sr = sorter_pop(&rec->sorter, watermark))) {
		r = handle_record(rec, sr);
		if (r < 0) {
			if (!rec->error)
				rec->error = r;
			return r;
		}
	}
	return 0;
}

/* P is found gone at TIME: the intervals of its threads that are open end there. */
int rec_end_offcpu_of_process(struct prof_recorder *rec, struct proc *p, uint64_t time)
{
	size_t i;
	int r;

	for (i = p->first_thread; rec->opts.off_cpu && i < rec->pt.nthrs; i++) {
		if (rec->pt.thrs[i].proc != p)
			continue;
		r = offcpu_end(&rec->offcpu, rec->pt.thrs[i].spool_id, time, PROF_OFFCPU_END_EXIT);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * After a loss, what the lost side-band records would have said is read
 * from /proc instead: new mappings, exits, threads and their names.  New
 * threads and children need no events: inheritance already samples them.
 */
int rec_reconcile(struct prof_recorder *rec)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	size_t i;
	int r = 0;

	rec->need_reconcile = false;
	rec->last_reconcile_ns = now;
	rec->sum.reconciliations++;
	for (i = 0; i < rec->pt.nprocs && r >= 0; i++) {
		struct proc *p = rec->pt.procs[i];
		pid_t *tids;
		int n, k;

		if (p->exited)
			continue;
		if (proc_gone(p->pid)) {
			r = rec_end_offcpu_of_process(rec, p, now);
			if (r >= 0)
				r = pt_process_exit(&rec->pt, p, now);
			continue;
		}
		r = pt_refresh_maps(&rec->pt, p, now);
		n = r < 0 ? 0 : proc_tasks(p->pid, &tids);
		for (k = 0; k < n && r >= 0; k++) {
			struct thr *t;

			r = pt_thread(&rec->pt, p->pid, tids[k], now, &t);
		}
		if (n > 0)
			free(tids);
	}
	return r;
}
