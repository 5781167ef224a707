/* SPDX-License-Identifier: MIT */
/*
 * recorder_records.c - the records of the rings, in timestamp order:
 * samples are parsed (perf_sample.c), unwound and interned into the spool;
 * mmap, comm, fork and exit update the process table; losses are counted,
 * and a loss that may have hidden side-band records is made good from
 * /proc.  A record too short or malformed for its fields is counted and
 * skipped, never taken for another.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "internal.h"
#include "perf_ring.h"
#include "perf_sample.h"
#include "proc.h"
#include "process.h"
#include "recorder.h"
#include "sorter.h"
#include "spool/spool_writer.h"
#include "unwind/regs_x86_64.h"
#include "unwind/unwind.h"

int rec_malformed(struct prof_recorder *rec, const struct perf_event_header *h)
{
	if (!rec->malformed_records) {
		rec->malformed_type = h->type;
		rec->malformed_size = h->size;
	}
	if (rec->malformed_records++ < 10)
		pr_debug("a perf record (type %u, %u bytes) is too short or malformed for its "
			 "fields: skipped", (unsigned)h->type, (unsigned)h->size);
	return 0;
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

/* The spool frame of user pc PC of PROC, not interned yet: its module's id taken. */
static int user_frame(struct prof_recorder *rec, struct proc *proc, uint64_t pc,
		      struct prof_frame *f)
{
	struct as_module *m = as_find(&proc->as, pc);
	int64_t id;

	*f = (struct prof_frame){ .sz = sizeof(*f), .kind = PROF_FRAME_ANON, .ref = proc->spool_id,
				  .addr = pc };
	if (m) {
		id = rec_frame_module(rec, proc, m);
		if (id < 0)
			return (int)id;
		*f = PROF_INIT(prof_frame, .kind = PROF_FRAME_USER, .ref = (uint32_t)id,
					  .addr = pc - m->start + m->pgoff);
	}
	return 0;
}

/*
 * The stack node of U's user frames, root first: a truncated stack's
 * marker, then the frames from the outermost in.  A thread's samples
 * mostly share their outer frames with its previous one: those nodes are
 * taken from the thread's memo (while its process's mappings stay as they
 * were).  The nodes of the frames that changed come from the path cache,
 * their lookups all in flight at once; only from the first it does not
 * hold are the frames looked up in the spool's maps, two lookups each,
 * each waiting on the one before, that miss the CPU's caches on a big
 * recording.
 */
static int64_t intern_user_stack(struct prof_recorder *rec, struct thr *t, struct proc *proc,
				 const struct unwind_result *u)
{
	struct stack_memo *m = rec->memo[t->spool_id % STACK_MEMOS];
	struct prof_frame *frames = rec->path_frames;
	uint32_t *ids = rec->path_frame_ids, next;
	struct path_key k;
	int64_t node = 0, frame;
	size_t i, j, same = 0;
	uint32_t hit;
	int r;

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
	/* keyed by what the spool's nodes are, frames, so that processes share them */
	k = same ? m->key[same - 1] : path_key_seed(0, (uint64_t)u->cause);
	for (i = same; i < u->n; i++) {
		r = user_frame(rec, proc, u->pc[u->n - 1 - i], &frames[i]);
		if (r < 0) {
			m->n = 0;
			return r;
		}
		k = m->key[i] = path_key_step(path_key_step(k, (uint64_t)frames[i].kind << 32 |
								 frames[i].ref), frames[i].addr);
		path_cache_prefetch(&rec->paths, k);
	}
	if (same)
		node = m->node[same - 1];
	for (i = same; i < u->n && (hit = path_cache_find(&rec->paths, m->key[i])); i++) {
		node = hit;
		m->pc[i] = u->pc[u->n - 1 - i];
		m->node[i] = hit;
	}
	if (i == 0 && u->cause) {
		frame = prof_spool_writer_intern_frame(rec->w, &PROF_INIT(prof_frame, 
			.kind = PROF_FRAME_TRUNCATED, .addr = (uint64_t)u->cause));
		node = frame < 0 ? frame : prof_spool_writer_intern_stack(rec->w, 0, (uint32_t)frame);
		if (node < 0) {
			m->n = 0;
			return node;
		}
	}
	/*
	 * The rest is looked up in the spool's maps: the frames first, their
	 * lookups all on their way at once, then the nodes, whose slots are
	 * fetched ahead as they will be if new (a new node's children are).
	 */
	for (j = i; j < u->n; j++)
		spool_writer_prefetch_frame(rec->w, &frames[j]);
	for (j = i; j < u->n; j++) {
		frame = prof_spool_writer_intern_frame(rec->w, &frames[j]);
		if (frame < 0) {
			m->n = 0;
			return frame;
		}
		ids[j] = (uint32_t)frame;
	}
	for (j = i + 1, next = spool_writer_next_stack(rec->w); j < u->n; j++)
		spool_writer_prefetch_stack(rec->w, next++, ids[j]);
	for (; i < u->n; i++) {
		node = prof_spool_writer_intern_stack(rec->w, (uint32_t)node, ids[i]);
		if (node < 0) {
			m->n = 0;
			return node;
		}
		m->pc[i] = u->pc[u->n - 1 - i];
		m->node[i] = (uint32_t)node;
		path_cache_put(&rec->paths, m->key[i], (uint32_t)node);
	}
	m->n = u->n;
	return node;
}

/*
 * Read PROC's mappings again at TIME, unless they were read in the last
 * MAPS_REFRESH_INTERVAL_NS: 1 when read, 0, or -errno.
 */
static int refresh_maps(struct prof_recorder *rec, struct proc *proc, uint64_t time)
{
	int r;

	if (time - proc->maps_refreshed_ns <= MAPS_REFRESH_INTERVAL_NS)
		return 0;
	proc->maps_refreshed_ns = time;
	r = pt_refresh_maps(&rec->pt, proc, time);
	return r < 0 ? r : 1;
}

/*
 * The user stack of sample S of PROC, unwound into rec->unwound.  A pc in
 * no known module, or a return address into code not known (JIT code made
 * executable by mprotect, which makes no record), may mean that the
 * mappings moved on without a record: they are read again first, or the
 * sample is unwound again after.
 */
static int unwind_user(struct prof_recorder *rec, struct proc *proc, const struct perf_sample *s)
{
	struct unwind_result *u = &rec->unwound;
	size_t i;
	int r = 0;

	if (s->regs_abi != PERF_SAMPLE_REGS_ABI_64) {
		u->n = 1;
		u->pc[0] = s->ip;
		u->cause = PROF_UNWIND_NO_REGS;
		return 0;
	}
	if (!as_find(&proc->as, s->regs[SAMPLE_REG_IP]))
		r = refresh_maps(rec, proc, s->time);
	if (r >= 0)
		r = unwind_sample(&rec->uw, &proc->as, (pid_t)s->tid, s->regs, s->stack,
				  s->stack_dyn, u);
	if (r >= 0 && u->cause == PROF_UNWIND_UNMAPPED && (r = refresh_maps(rec, proc, s->time)) > 0)
		r = unwind_sample(&rec->uw, &proc->as, (pid_t)s->tid, s->regs, s->stack,
				  s->stack_dyn, u);
	if (r == -ENOMEM)
		return error_setx(r, "out of memory");
	if (r < 0)
		return r;
	for (i = 1; i < FALLBACK_COUNT; i++)
		rec->sum.fallback_frames[i] += u->fallback[i];
	rec->sum.frames += u->n;
	return 0;
}

/*
 * The kernel frames of sample S into rec->frames, leaf first, as its
 * callchain gives them.  How many, or -errno.
 */
static int64_t intern_kernel_frames(struct prof_recorder *rec, const struct perf_sample *s)
{
	size_t i, n = 0;
	int64_t id;

	for (i = 0; s->chain && i < s->nchain && n < UNWIND_MAX_FRAMES / 2; i++) {
		uint64_t ip;

		memcpy(&ip, s->chain + i * 8, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip != (uint64_t)PERF_CONTEXT_KERNEL)
				break;	/* user, guest or hypervisor parts: not ours */
			continue;
		}
		/* the first entry (after its context) is where it was, the others return addresses */
		id = prof_spool_writer_intern_frame(rec->w, &PROF_INIT(prof_frame, 
			.kind = PROF_FRAME_KERNEL, .addr = i == 1 ? ip : ip - 1));
		if (id < 0)
			return id;
		rec->frames[n++] = (uint32_t)id;
	}
	return (int64_t)n;
}

/*
 * The stack node of sample S of T, its user stack in rec->unwound: the
 * user frames, root first, and the kernel's on top, the leaf last.  Its
 * id and *RET_USER the user part's, or -errno.
 */
static int64_t intern_stack(struct prof_recorder *rec, struct thr *t, const struct perf_sample *s,
			    int64_t *ret_user)
{
	int64_t n = intern_kernel_frames(rec, s), id;

	if (n < 0)
		return n;
	id = *ret_user = intern_user_stack(rec, t, t->proc, &rec->unwound);
	while (id >= 0 && n--)
		id = prof_spool_writer_intern_stack(rec->w, (uint32_t)id, rec->frames[n]);
	return id;
}

/* A sample the kernel delivered: of a switch ring (SWITCHED), or a sampling one. */
static void count_delivered(struct prof_recorder *rec, bool switched)
{
	if (switched)
		rec->sum.switch_events++;
	else
		rec->sum.sample_events++;
}

/*
 * A sample: of the sampling event, or with SWITCHED a switch-out sample
 * of the context-switch event (the start of an off-CPU interval).
 */
static int handle_sample(struct prof_recorder *rec, const struct perf_event_header *h,
			 bool switched)
{
	struct unwind_result *u = &rec->unwound;
	struct perf_sample s;
	int64_t id, user_id;
	struct thr *t;
	int r;

	/* delivered, and counted so, even malformed (a held one's time alone was read) */
	count_delivered(rec, switched);
	if (perf_sample_parse(&rec->layout, h, &s) < 0)
		return rec_malformed(rec, h);
	if (s.pid == 0 && s.tid == 0 && !switched)
		rec->sum.idle_samples++;	/* the machine's idle time, counted only */
	if (s.pid == 0 || s.tid == 0 || (int32_t)s.pid < 0)
		return 0;	/* the idle task or a sample without a task */
	if (rec->system && (pid_t)s.pid == rec->self) {
		rec->sum.self_samples += !switched;
		return 0;	/* the recorder leaves itself out */
	}
	r = pt_thread(&rec->pt, (pid_t)s.pid, (pid_t)s.tid, s.time, &t);
	/* a sample between an exec and its image's first mapping (in the kernel) */
	if (r >= 0 && t->proc->exe_pending)
		r = pt_settle_exec(&rec->pt, t->proc, NULL);
	if (r >= 0)
		r = unwind_user(rec, t->proc, &s);
	/* CPython 3.11: its eval loops' frames become the Python functions they ran */
	if (r >= 0)
		r = py_expand(&rec->py, t->proc, &s, u);
	/* a JVM's interpreter frames: the methods they ran */
	if (r >= 0)
		r = jvm_frames_expand(&rec->jframes, t->proc, &s, u);
	/* and JIT code compiled since its last perf map: the map asked again */
	if (r >= 0)
		jvm_set_sampled(&rec->jvms, t->proc, u, s.time);
	/* JIT code: named by the load that was there at the sample */
	if (r >= 0)
		r = pt_jit_frames(t->proc, u, s.time);
	if (r < 0)
		return r;
	if (u->cause && !switched) {
		rec->sum.truncated_stacks++;
		rec->sum.unwind_errors[u->cause]++;
	}
	id = intern_stack(rec, t, &s, &user_id);
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
	r = prof_spool_writer_add_sample(rec->w, &PROF_INIT(prof_sample, 
		.time_ns = s.time, .thread = t->spool_id, .stack = (uint32_t)id,
		.period = s.period, .cpu = s.cpu));
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
		return prof_spool_writer_add_lost(rec->w, &PROF_INIT(prof_lost, 
			.time_ns = time, .kind = kind, .count = count));
	}
	/* any record may be among them: an mmap, a fork, an exit, a rename */
	rec->need_reconcile |= kind == PROF_LOST_RECORDS;
	rec->sum.lifecycle_gaps += kind == PROF_LOST_RECORDS;
	return prof_spool_writer_add_lost(rec->w, &PROF_INIT(prof_lost, .time_ns = time, .kind = kind,
								.count = count));
}

/* A switch record: its sample_id says whose it is (pid, tid), when and where (cpu). */
static int handle_switch(struct prof_recorder *rec, const struct perf_event_header *h)
{
	struct perf_sample_id id;
	struct thr *t;
	int r;

	if (perf_sample_id_parse(&rec->layout, h, &id) < 0)
		return rec_malformed(rec, h);
	if ((int32_t)id.pid <= 0 || (int32_t)id.tid <= 0)
		return 0;	/* the idle task */
	r = pt_thread(&rec->pt, (pid_t)id.pid, (pid_t)id.tid, id.time, &t);
	if (r < 0)
		return r;
	if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT))
		return offcpu_end(&rec->offcpu, t->spool_id, id.time, PROF_OFFCPU_END_SWITCH_IN);
	return offcpu_switched_out(&rec->offcpu, t->spool_id, id.time, id.cpu,
				   h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
}

/* TID exits at TIME: an interval of its that is open ends there. */
static int end_offcpu_at_exit(struct prof_recorder *rec, pid_t tid, uint64_t time)
{
	struct thr *t = rec->opts.off_cpu ? pt_find_thread(&rec->pt, tid) : NULL;

	return t ? offcpu_end(&rec->offcpu, t->spool_id, time, PROF_OFFCPU_END_EXIT) : 0;
}

/*
 * The NUL-terminated name after a body's fixed part of N bytes, into OUT
 * (LEN bytes, cut to fit); false when BODY (BODY_LEN bytes) holds none.
 */
static bool body_name(const uint8_t *body, size_t body_len, size_t n, char *out, size_t len)
{
	size_t k;

	if (body_len <= n)
		return false;
	k = strnlen((const char *)body + n, body_len - n);
	if (k == body_len - n)
		return false;
	snprintf(out, len, "%.*s", (int)k, (const char *)body + n);
	return true;
}

static int handle_mmap2(struct prof_recorder *rec, const struct perf_event_header *h,
			const uint8_t *p, size_t body, uint64_t time)
{
	struct perf_mmap2_build_id_body b;
	struct perf_mmap2_body m;
	char path[PATH_MAX];

	if (body < sizeof(m) || !body_name(p, body, sizeof(m), path, sizeof(path)))
		return rec_malformed(rec, h);
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		/*
		 * The build-id of the file, in place of its device and inode: it
		 * names the file when the process is gone before this is read (a
		 * file at the path is trusted only with that build-id)
		 */
		memcpy(&b, p, sizeof(b));
		if (!b.build_id_size || b.build_id_size > sizeof(b.build_id))
			return rec_malformed(rec, h);
		return pt_mmap(&rec->pt, (pid_t)b.pid, b.addr, b.len, b.pgoff, 0, 0, 0, b.build_id,
			       b.build_id_size, path, time);
	}
	memcpy(&m, p, sizeof(m));
	return pt_mmap(&rec->pt, (pid_t)m.pid, m.addr, m.len, m.pgoff, m.maj, m.min, m.ino, NULL, 0,
		       path, time);
}

/*
 * Whether a side-band record of the whole machine is the recorder's own:
 * every body starts with the pid, but a switch's (none) and a fork's,
 * whose parent may be the recorder (the command it launches) are told by
 * their sample_id or the child.
 */
static bool is_self(const struct prof_recorder *rec, const struct perf_event_header *h)
{
	struct perf_sample_id id;
	const uint8_t *body;
	uint32_t pid;
	size_t len;

	if (h->type == PERF_RECORD_SWITCH || h->type == PERF_RECORD_SWITCH_CPU_WIDE)
		return perf_sample_id_parse(&rec->layout, h, &id) == 0 &&
		       (pid_t)id.pid == rec->self;
	if (h->type != PERF_RECORD_MMAP2 && h->type != PERF_RECORD_COMM &&
	    h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT)
		return false;
	body = perf_record_body(&rec->layout, h, &len);
	if (!body || len < 4)
		return false;	/* malformed: counted as such later */
	memcpy(&pid, body, 4);
	return (pid_t)pid == rec->self;
}

static int handle_record(struct prof_recorder *rec, const struct sorted_rec *sr)
{
	const struct perf_event_header *h = (const void *)sorted_data(sr);
	bool switches = (size_t)sr->cpu >= rec->ncpus;	/* from a switch ring */
	struct perf_lost_samples_body ls;
	struct perf_comm_body c;
	struct perf_task_body t;
	struct perf_lost_body l;
	const uint8_t *p;
	char comm[17];
	size_t body;
	int r;

	if (h->type == PERF_RECORD_SAMPLE)
		return handle_sample(rec, h, switches);
	if (rec->system && is_self(rec, h))
		return 0;	/* the recorder's own mappings, threads, switches */
	/*
	 * A CPU's events (the whole machine) say SWITCH_CPU_WIDE, with the
	 * other task in the body; whose switch it is, is the sample_id's, as
	 * for a task's
	 */
	if (h->type == PERF_RECORD_SWITCH || h->type == PERF_RECORD_SWITCH_CPU_WIDE)
		return handle_switch(rec, h);
	p = perf_record_body(&rec->layout, h, &body);
	if (!p)
		return rec_malformed(rec, h);
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return handle_mmap2(rec, h, p, body, sr->time);
	case PERF_RECORD_COMM:
		if (body < sizeof(c) || !body_name(p, body, sizeof(c), comm, sizeof(comm)))
			return rec_malformed(rec, h);
		memcpy(&c, p, sizeof(c));
		return pt_comm(&rec->pt, (pid_t)c.pid, (pid_t)c.tid, comm,
			       h->misc & PERF_RECORD_MISC_COMM_EXEC, sr->time);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (body < sizeof(t))
			return rec_malformed(rec, h);
		memcpy(&t, p, sizeof(t));
		if (h->type == PERF_RECORD_FORK && rec->system && (pid_t)t.ppid == rec->self) {
			struct thr *th;	/* the recorder's child: it is not, itself, recorded */

			return pt_thread(&rec->pt, (pid_t)t.pid, (pid_t)t.tid, sr->time, &th);
		}
		if (h->type == PERF_RECORD_FORK)
			return pt_fork(&rec->pt, (pid_t)t.pid, (pid_t)t.ppid, (pid_t)t.tid, sr->time);
		r = end_offcpu_at_exit(rec, (pid_t)t.tid, sr->time);
		return r < 0 ? r : pt_exit(&rec->pt, (pid_t)t.pid, (pid_t)t.tid, sr->time);
	case PERF_RECORD_LOST:
		if (body < sizeof(l))
			return rec_malformed(rec, h);
		memcpy(&l, p, sizeof(l));
		return handle_lost(rec, PROF_LOST_RECORDS, l.lost, sr->time, switches);
	case PERF_RECORD_LOST_SAMPLES:
		if (body < sizeof(ls))
			return rec_malformed(rec, h);
		memcpy(&ls, p, sizeof(ls));
		return handle_lost(rec, PROF_LOST_SAMPLES, ls.lost, sr->time, switches);
	default:
		return 0;
	}
}

/*
 * Copy record H of ring RING into the sorter, by its time: a sample's
 * (its stack copy cut to what it holds, so that the sorter keeps a few KiB
 * a sample, not the whole copy), else its sample_id's.  A record that
 * cannot be parsed so far is counted and skipped here.
 */
static int push_record(struct prof_recorder *rec, const struct perf_event_header *h, int ring)
{
	struct perf_sample_id id;
	struct perf_sample s;
	uint64_t time;
	uint8_t *out;
	int64_t ticket;

	if (h->type != PERF_RECORD_SAMPLE) {
		if (perf_sample_id_parse(&rec->layout, h, &id) < 0)
			return rec_malformed(rec, h);
		return sorter_push(&rec->sorter, id.time, ring, h, h->size);
	}
	/*
	 * Unwound where it lies, if it may stay there: no copy of the stack,
	 * and of its fields only the time read here (handle_sample() parses
	 * the rest, and counts a malformed one)
	 */
	if (perf_sample_time(&rec->layout, h, &time) == 0 &&
	    (ticket = perf_ring_hold(&rec->rings[ring], h)) >= 0) {
		if (sorter_add_ref(&rec->sorter, time, ring, h, h->size, (uint64_t)ticket) == 0)
			return 0;
		perf_ring_done(&rec->rings[ring], (uint64_t)ticket);
		return -ENOMEM;
	}
	if (perf_sample_parse(&rec->layout, h, &s) < 0) {
		/* delivered all the same: the count of samples says so */
		count_delivered(rec, (size_t)ring >= rec->ncpus);
		return rec_malformed(rec, h);
	}
	out = sorter_add(&rec->sorter, s.time, ring, perf_sample_trimmed_size(h, &s));
	if (!out)
		return -ENOMEM;
	perf_sample_trim(h, &s, out);
	return 0;
}

/* A held sample's size and copy out of its ring, its stack copy cut to what it holds. */
static size_t held_size(const void *rec, void *layout)
{
	const struct perf_event_header *h = rec;
	struct perf_sample s;

	return perf_sample_parse(layout, h, &s) == 0 ? perf_sample_trimmed_size(h, &s) : h->size;
}

static void held_copy(void *out, const void *rec, void *layout)
{
	const struct perf_event_header *h = rec;
	struct perf_sample s;

	if (perf_sample_parse(layout, h, &s) == 0)
		perf_sample_trim(h, &s, out);
	else
		memcpy(out, h, h->size);
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
		/*
		 * Records held in place take room the kernel may need: a ring
		 * that fills (the recorder fell behind: half of the room past
		 * the watermark is gone) gets it all back, its held records
		 * copied out as they were before.
		 */
		if (ring->held_n &&
		    perf_ring_used(ring) > ring->wakeup + (ring->data_size - ring->wakeup) / 2) {
			r = sorter_own(&rec->sorter, (int)i, held_size, held_copy, &rec->layout);
			if (r < 0)
				return r;
			perf_ring_unhold(ring);
		}
		while (r >= 0 && (h = perf_ring_next(ring)))
			r = push_record(rec, h, (int)i);
		perf_ring_end(ring);
		if (r < 0)
			return r;
	}
	return 0;
}

/* How much of the next held sample is fetched ahead: its fields, and the stack's head. */
#define PREFETCH_BYTES 4096

int rec_process_until(struct prof_recorder *rec, uint64_t watermark)
{
	const struct sorted_rec *sr;
	size_t i;
	int r = 0;

	while ((sr = sorter_pop(&rec->sorter, watermark))) {
		const struct sorted_rec *next = sorter_peek(&rec->sorter);

		/*
		 * The next sample's stack, where the kernel wrote it (another
		 * CPU's cache, or memory), is on its way while this one is
		 * unwound: the head of the stack is what the walk reads first.
		 */
		if (next && next->ref && next->time <= watermark) {
			size_t off, n = next->len < PREFETCH_BYTES ? next->len : PREFETCH_BYTES;

			for (off = 0; off < n; off += 64)
				__builtin_prefetch(next->ref + off);
			/* and the copy's used size, at the record's end: pages away */
			if (next->len > PREFETCH_BYTES)
				__builtin_prefetch(next->ref + next->len - 8);
		}
		r = handle_record(rec, sr);
		if (sr->ref)
			perf_ring_done(&rec->rings[sr->cpu], sr->ticket);
		if (r < 0)
			break;
	}
	/* what was held in place and is done with: the kernel may write there again */
	for (i = 0; i < rec->nrings; i++)
		if (rec->rings[i].base)
			perf_ring_end(&rec->rings[i]);
	if (r < 0 && !rec->error)
		rec->error = r;
	return r;
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
/* Past this many processes a loss reads no process's maps or threads (see below). */
#define RECONCILE_SWEEP_MAX 64

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
		/* many: whether the pid is there at all, not whether it is a zombie */
		if (rec->pt.nprocs > RECONCILE_SWEEP_MAX ? kill(p->pid, 0) < 0 && errno == ESRCH
							 : proc_gone(p->pid)) {
			r = rec_end_offcpu_of_process(rec, p, now);
			if (r >= 0)
				r = pt_process_exit(&rec->pt, p, now);
			continue;
		}
		/*
		 * The whole machine, or a command's thousands of children (a
		 * fork storm loses records the most): a sample's own pc reads
		 * its process's maps again when they lack it, and its thread is
		 * made as it is seen.  A sweep of all their maps after each loss
		 * would cost more than the loss: 2,000 processes' maps read
		 * take the recorder a third of a second, in which the rings
		 * overflow again, and the next sweep follows.
		 */
		if (rec->system || rec->pt.nprocs > RECONCILE_SWEEP_MAX)
			continue;
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
