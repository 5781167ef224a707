/* SPDX-License-Identifier: MIT */
/*
 * spool_decode.c - decoding of the records inside a block, for the reader.
 * Every field is bounds-checked and every reference checked against what is
 * defined; in a dry run nothing is allocated, so a block is validated whole
 * before any of it is applied.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spool_format.h"
#include "spool_reader.h"

static bool get_u(struct cursor *c, uint64_t *v)
{
	if (spool_get_uvarint(&c->p, c->end, v))
		return true;
	c->err = "bad or truncated varint";
	return false;
}

static bool get_u32(struct cursor *c, uint32_t *v)
{
	uint64_t x;

	if (!get_u(c, &x))
		return false;
	if (x > UINT32_MAX) {
		c->err = "value out of 32-bit range";
		return false;
	}
	*v = (uint32_t)x;
	return true;
}

static bool get_s(struct cursor *c, int64_t *v)
{
	uint64_t x;

	if (!get_u(c, &x))
		return false;
	*v = spool_unzigzag(x);
	return true;
}

static bool get_s32(struct cursor *c, int32_t *v)
{
	int64_t x;

	if (!get_s(c, &x))
		return false;
	if (x < INT32_MIN || x > INT32_MAX) {
		c->err = "value out of 32-bit range";
		return false;
	}
	*v = (int32_t)x;
	return true;
}

static bool get_bytes(struct cursor *c, const uint8_t **p, size_t *len)
{
	uint64_t n;

	if (!get_u(c, &n))
		return false;
	if (n > (uint64_t)(c->end - c->p)) {
		c->err = "string runs past its record";
		return false;
	}
	*p = c->p;
	*len = (size_t)n;
	c->p += n;
	return true;
}

static bool get_str(struct cursor *c, const uint8_t **p, size_t *len)
{
	if (!get_bytes(c, p, len))
		return false;
	if (memchr(*p, 0, *len)) {
		c->err = "string with a NUL byte";
		return false;
	}
	return true;
}

/* A copy of a string known to be valid; NULL (error set) on ENOMEM. */
static char *str_dup(const uint8_t *p, size_t len)
{
	char *s = malloc(len + 1);

	if (!s) {
		error_setx(-ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static void free_str(const char *s)
{
	free((char *)s);
}

static bool ref_ok(struct cursor *c, uint32_t ref, uint32_t count, bool zero_ok,
		   const char *err)
{
	if ((ref == 0 && zero_ok) || (ref >= 1 && ref <= count))
		return true;
	c->err = err;
	return false;
}

/* A time field: the clock moves on by its delta (modulo 2^64, as prof-spool(5) says). */
static bool get_time(struct prof_spool *sp, struct cursor *c, const struct spool_counts *n,
		     bool apply, uint64_t *ret)
{
	int64_t d;

	if (!get_s(c, &d))
		return false;
	if (apply) {
		sp->clock += (uint64_t)d;
		*ret = sp->clock * n->time_unit_ns;
	}
	return true;
}

/* A string field of META: its bytes and length. */
struct meta_str {
	const uint8_t *p;
	size_t len;
};

static bool get_meta_str(struct cursor *c, struct meta_str *s)
{
	return get_str(c, &s->p, &s->len);
}

static char *meta_str_dup(const struct meta_str *s)
{
	return str_dup(s->p, s->len);
}

static int decode_meta(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
		       bool apply)
{
	struct prof_meta *m = &sp->meta;
	struct meta_str arg, event, hostname, kernel_release, arch, prof_version;
	uint64_t wall_start, mono_start, unit, freq, period, stack_bytes, page_size;
	uint64_t argc, npids, i;
	uint32_t flags;
	int32_t pid;

	if (!get_u32(c, &flags) || !get_u(c, &argc))
		return -EBADMSG;
	/* each argument costs at least one byte: argc is bounded by the record */
	if (argc > (uint64_t)(c->end - c->p)) {
		c->err = "argument count larger than the record";
		return -EBADMSG;
	}
	if (apply) {
		sp->argv = calloc(argc + 1, sizeof(*sp->argv));
		if (!sp->argv)
			return error_setx(-ENOMEM, "out of memory");
	}
	for (i = 0; i < argc; i++) {
		if (!get_meta_str(c, &arg))
			return -EBADMSG;
		if (apply && !(sp->argv[i] = meta_str_dup(&arg)))
			return -ENOMEM;
	}
	if (!get_u(c, &npids))
		return -EBADMSG;
	if (npids > (uint64_t)(c->end - c->p)) {
		c->err = "pid count larger than the record";
		return -EBADMSG;
	}
	if (apply) {
		sp->pids = calloc(npids + 1, sizeof(*sp->pids));
		if (!sp->pids)
			return error_setx(-ENOMEM, "out of memory");
	}
	for (i = 0; i < npids; i++) {
		if (!get_s32(c, &pid))
			return -EBADMSG;
		if (apply)
			sp->pids[i] = (int32_t)pid;
	}
	if (!get_u(c, &wall_start) || !get_u(c, &mono_start) || !get_u(c, &unit) ||
	    !get_meta_str(c, &event) || !get_u(c, &freq) || !get_u(c, &period) ||
	    !get_u(c, &stack_bytes) || !get_meta_str(c, &hostname) ||
	    !get_meta_str(c, &kernel_release) || !get_meta_str(c, &arch) ||
	    !get_u(c, &page_size) || !get_meta_str(c, &prof_version))
		return -EBADMSG;
	if (unit == 0 || unit > 1000000000u) {
		c->err = "time unit outside 1 ns .. 1 s";
		return -EBADMSG;
	}
	/* the records after it in its block are checked with it before it is applied */
	n->time_unit_ns = unit;
	if (!apply)
		return 0;
	m->flags = flags;
	m->time_unit_ns = unit;
	m->argc = argc;
	m->argv = (const char *const *)sp->argv;
	m->npids = npids;
	m->pids = sp->pids;
	m->wall_start_ns = wall_start;
	m->mono_start_ns = mono_start;
	m->freq_hz = freq;
	m->period = period;
	m->stack_bytes = stack_bytes;
	m->page_size = page_size;
	if (!(m->event = meta_str_dup(&event)) || !(m->hostname = meta_str_dup(&hostname)) ||
	    !(m->kernel_release = meta_str_dup(&kernel_release)) ||
	    !(m->arch = meta_str_dup(&arch)) || !(m->prof_version = meta_str_dup(&prof_version)))
		return -ENOMEM;
	sp->clock = m->mono_start_ns / unit;
	return 0;
}

/* An exec or exit: every module of PROCESS is retired, each once in all. */
void spool_retire_modules_of(struct prof_spool *sp, uint32_t process)
{
	uint32_t id;

	if (process >= sp->live_last_cap)
		return;
	for (id = sp->live_last[process]; id; id = sp->live_prev[id])
		sp->modules[id - 1].retired = true;
	sp->live_last[process] = 0;
}

static int decode_process(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			  bool apply, struct prof_record *ev)
{
	struct prof_process p = { .sz = sizeof(p) };
	const uint8_t *s1, *s2;
	size_t l1, l2;
	uint64_t t = 0;

	if (!get_time(sp, c, n, apply, &t) || !get_s32(c, &p.pid) || !get_s32(c, &p.ppid) ||
	    !get_u(c, &p.start_time_ns) || !get_str(c, &s1, &l1) || !get_str(c, &s2, &l2))
		return -EBADMSG;
	if (!apply) {
		n->processes++;
		return 0;
	}
	if (TABLE_RESERVE(sp, processes, n->processes + 1) < 0)
		return -ENOMEM;
	n->processes++;
	p.id = n->processes;
	p.time_ns = t;
	p.comm = str_dup(s1, l1);
	p.exe = str_dup(s2, l2);
	sp->processes[p.id - 1] = p;
	if (!p.comm || !p.exe)
		return -ENOMEM;
	ev->process = &sp->processes[p.id - 1];
	ev->id = p.id;
	ev->time_ns = t;
	ev->type = PROF_RECORD_PROCESS;
	return 0;
}

static int decode_thread(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			 bool apply, struct prof_record *ev)
{
	struct prof_thread th = { .sz = sizeof(th) };
	const uint8_t *s;
	size_t l;
	uint64_t t = 0;

	if (!get_time(sp, c, n, apply, &t) || !get_u32(c, &th.process) ||
	    !ref_ok(c, th.process, n->processes, false, "thread of an undefined process") ||
	    !get_s32(c, &th.tid) || !get_str(c, &s, &l))
		return -EBADMSG;
	if (!apply) {
		n->threads++;
		return 0;
	}
	if (TABLE_RESERVE(sp, threads, n->threads + 1) < 0)
		return -ENOMEM;
	n->threads++;
	th.id = n->threads;
	th.time_ns = t;
	th.name = str_dup(s, l);
	sp->threads[th.id - 1] = th;
	if (!th.name)
		return -ENOMEM;
	ev->thread = &sp->threads[th.id - 1];
	ev->id = th.id;
	ev->time_ns = t;
	ev->type = PROF_RECORD_THREAD;
	return 0;
}

/* THREAD_NAME, EXEC, PROCESS_EXIT, THREAD_EXIT, MODULE_RETIRE: time, ref, strings. */
static int decode_change(struct prof_spool *sp, struct cursor *c, enum spool_tag tag,
			 struct spool_counts *n, bool apply, struct prof_record *ev)
{
	bool on_thread = tag == SPOOL_TAG_THREAD_NAME || tag == SPOOL_TAG_THREAD_EXIT;
	uint32_t count = on_thread ? n->threads
			 : tag == SPOOL_TAG_MODULE_RETIRE ? n->modules : n->processes;
	const uint8_t *s1 = NULL, *s2 = NULL;
	size_t l1 = 0, l2 = 0;
	uint64_t t = 0;
	uint32_t ref;

	if (!get_time(sp, c, n, apply, &t) || !get_u32(c, &ref) ||
	    !ref_ok(c, ref, count, false, "event for an undefined id"))
		return -EBADMSG;
	if ((tag == SPOOL_TAG_THREAD_NAME || tag == SPOOL_TAG_EXEC) && !get_str(c, &s1, &l1))
		return -EBADMSG;
	if (tag == SPOOL_TAG_EXEC && !get_str(c, &s2, &l2))
		return -EBADMSG;
	if (!apply)
		return 0;
	ev->id = ref;
	ev->time_ns = t;
	switch (tag) {
	case SPOOL_TAG_THREAD_NAME: {
		struct prof_thread *th = &sp->threads[ref - 1];
		char *name = str_dup(s1, l1);

		if (!name)
			return -ENOMEM;
		free_str(th->name);
		th->name = name;
		ev->thread = th;
		ev->type = PROF_RECORD_THREAD_NAME;
		break;
	}
	case SPOOL_TAG_THREAD_EXIT:
		sp->threads[ref - 1].exited = true;
		ev->thread = &sp->threads[ref - 1];
		ev->type = PROF_RECORD_THREAD_EXIT;
		break;
	case SPOOL_TAG_EXEC: {
		struct prof_process *p = &sp->processes[ref - 1];
		char *comm = str_dup(s1, l1), *exe = str_dup(s2, l2);

		if (!comm || !exe) {
			free(comm);
			free(exe);
			return -ENOMEM;
		}
		free_str(p->comm);
		free_str(p->exe);
		p->comm = comm;
		p->exe = exe;
		/* the old image is gone: none of its modules may resolve a later frame */
		spool_retire_modules_of(sp, ref);
		ev->process = p;
		ev->type = PROF_RECORD_EXEC;
		break;
	}
	case SPOOL_TAG_PROCESS_EXIT:
		sp->processes[ref - 1].exited = true;
		spool_retire_modules_of(sp, ref);
		ev->process = &sp->processes[ref - 1];
		ev->type = PROF_RECORD_PROCESS_EXIT;
		break;
	default:
		sp->modules[ref - 1].retired = true;
		ev->module = &sp->modules[ref - 1];
		ev->type = PROF_RECORD_MODULE_RETIRE;
	}
	return 0;
}

static int decode_module(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			 bool apply, struct prof_record *ev)
{
	struct prof_module m = { .sz = sizeof(m) };
	const uint8_t *bid, *path;
	size_t bid_len, path_len;
	uint64_t t = 0, size;
	void *v;
	int r;

	if (!get_time(sp, c, n, apply, &t) || !get_u32(c, &m.process) ||
	    !ref_ok(c, m.process, n->processes, true, "module of an undefined process") ||
	    !get_u(c, &m.start) || !get_u(c, &size) || !get_u(c, &m.pgoff) ||
	    !get_u32(c, &m.flags) || !get_u32(c, &m.dev_major) || !get_u32(c, &m.dev_minor) ||
	    !get_u(c, &m.inode) || !get_bytes(c, &bid, &bid_len) || !get_str(c, &path, &path_len))
		return -EBADMSG;
	if (size == 0 || m.start + size < m.start) {
		c->err = "module with an empty or wrapping range";
		return -EBADMSG;
	}
	if (bid_len > PROF_BUILD_ID_MAX) {
		c->err = "build-id longer than 64 bytes";
		return -EBADMSG;
	}
	if (!apply) {
		n->modules++;
		return 0;
	}
	if (TABLE_RESERVE(sp, modules, n->modules + 1) < 0)
		return -ENOMEM;
	v = sp->live_prev;
	r = grow_array_zeroed(&v, &sp->live_prev_cap, (size_t)n->modules + 2, sizeof(uint32_t));
	sp->live_prev = v;
	v = sp->live_last;
	if (r == 0)
		r = grow_array_zeroed(&v, &sp->live_last_cap, (size_t)m.process + 1,
				      sizeof(uint32_t));
	sp->live_last = v;
	if (r < 0)
		return r;
	n->modules++;
	sp->live_prev[n->modules] = sp->live_last[m.process];
	sp->live_last[m.process] = n->modules;
	m.id = n->modules;
	m.time_ns = t;
	m.end = m.start + size;
	m.build_id_len = (uint8_t)bid_len;
	memcpy(m.build_id, bid, bid_len);
	m.path = str_dup(path, path_len);
	sp->modules[m.id - 1] = m;
	if (!m.path)
		return -ENOMEM;
	ev->module = &sp->modules[m.id - 1];
	ev->id = m.id;
	ev->time_ns = t;
	ev->type = PROF_RECORD_MODULE;
	return 0;
}

static int decode_frame(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			bool apply, struct prof_record *ev)
{
	struct prof_frame f = { .sz = sizeof(f) };
	uint64_t kind;
	bool delta = sp->major >= SPOOL_VERSION_MAJOR_DELTA;
	int64_t d;
	bool ok;

	if (!get_u(c, &kind) || !get_u32(c, &f.ref))
		return -EBADMSG;
	if (delta) {
		/* the stored address, less the frame before's when it has this kind and ref */
		if (!get_s(c, &d))
			return -EBADMSG;
		f.addr = (uint64_t)d;
		if (apply && kind <= PROF_FRAME_ANON && n->frames) {
			const struct prof_frame *b = &sp->frames[n->frames - 1];

			if (b->kind == kind && b->ref == f.ref)
				f.addr += b->kind == PROF_FRAME_KERNEL ? ~b->addr : b->addr;
		}
	} else if (!get_u(c, &f.addr)) {
		return -EBADMSG;
	}
	switch (kind) {
	case PROF_FRAME_USER:
		ok = ref_ok(c, f.ref, n->modules, false, "frame of an undefined module");
		break;
	case PROF_FRAME_ANON:
		ok = ref_ok(c, f.ref, n->processes, false, "frame of an undefined process");
		break;
	case PROF_FRAME_STATE:
		if (sp->major < SPOOL_VERSION_MAJOR_OFFCPU || !f.addr ||
		    f.addr >= OFFCPU_STATE_COUNT) {
			c->err = "bad state frame";
			ok = false;
			break;
		}
		/* fall through */
	case PROF_FRAME_KERNEL:
	case PROF_FRAME_TRUNCATED:
		ok = ref_ok(c, f.ref, 0, true, "kernel or marker frame with a reference");
		break;
	default:
		c->err = "unknown frame kind";
		ok = false;
	}
	if (!ok)
		return -EBADMSG;
	if (!apply) {
		n->frames++;
		return 0;
	}
	if (TABLE_RESERVE(sp, frames, n->frames + 1) < 0)
		return -ENOMEM;
	n->frames++;
	f.id = n->frames;
	f.kind = (uint8_t)kind;
	if (kind == PROF_FRAME_KERNEL)
		f.addr = ~f.addr;
	sp->frames[f.id - 1] = f;
	ev->frame = &sp->frames[f.id - 1];
	ev->id = f.id;
	ev->type = PROF_RECORD_FRAME;
	return 0;
}

static int decode_stack(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			bool apply, struct prof_record *ev)
{
	struct prof_stack_node s;
	uint64_t x;

	if (sp->major < SPOOL_VERSION_MAJOR_DELTA) {
		if (!get_u32(c, &s.parent) || !get_u32(c, &s.frame))
			return -EBADMSG;
	} else {
		/*
		 * The frame counted back from the newest, doubled, plus 1 when
		 * the parent follows, counted back from the node's own id;
		 * without it the parent is the node just before.
		 */
		s.parent = 1;
		if (!get_u(c, &x) || ((x & 1) && !get_u32(c, &s.parent)))
			return -EBADMSG;
		s.parent = s.parent && s.parent <= n->stacks + 1 ? n->stacks + 1 - s.parent
								   : UINT32_MAX;
		s.frame = (x >> 1) < n->frames ? n->frames - (uint32_t)(x >> 1) : 0;
	}
	if (!ref_ok(c, s.parent, n->stacks, true, "stack node with an undefined parent") ||
	    !ref_ok(c, s.frame, n->frames, false, "stack node with an undefined frame"))
		return -EBADMSG;
	if (!apply) {
		n->stacks++;
		return 0;
	}
	if (TABLE_RESERVE(sp, stacks, n->stacks + 1) < 0)
		return -ENOMEM;
	n->stacks++;
	sp->stacks[n->stacks - 1] = s;
	ev->stack = &sp->stacks[n->stacks - 1];
	ev->id = n->stacks;
	ev->type = PROF_RECORD_STACK;
	return 0;
}

static int decode_sample(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			 bool apply, struct prof_record *ev)
{
	struct prof_sample *s = &sp->sample;
	struct prof_sample tmp;
	int64_t dperiod;

	if (!apply)
		s = &tmp;
	if (!get_time(sp, c, n, apply, &s->time_ns) || !get_u32(c, &s->thread) ||
	    !ref_ok(c, s->thread, n->threads, false, "sample of an undefined thread") ||
	    !get_u32(c, &s->stack))
		return -EBADMSG;
	/* version 3: 0 the newest node, else the id + 1 (n->stacks < UINT32_MAX) */
	if (sp->major >= SPOOL_VERSION_MAJOR_DELTA)
		s->stack = !s->stack ? (n->stacks ? n->stacks : UINT32_MAX) : s->stack - 1;
	if (!ref_ok(c, s->stack, n->stacks, true, "sample of an undefined stack") ||
	    !get_s(c, &dperiod) || !get_u32(c, &s->cpu))
		return -EBADMSG;
	if (!apply)
		return 0;
	sp->last_period += (uint64_t)dperiod;
	s->period = sp->last_period;
	sp->nsamples++;
	ev->sample = s;
	ev->id = s->stack;
	ev->time_ns = s->time_ns;
	ev->type = PROF_RECORD_SAMPLE;
	return 0;
}

static int decode_offcpu(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			 bool apply, struct prof_record *ev)
{
	struct prof_offcpu *o = &sp->offcpu;
	struct prof_offcpu tmp;
	uint64_t units, state, end;

	if (!apply)
		o = &tmp;
	if (sp->major < SPOOL_VERSION_MAJOR_OFFCPU) {
		c->err = "off-CPU record in a version 1 spool";
		return -EBADMSG;
	}
	if (!get_time(sp, c, n, apply, &o->time_ns) || !get_u32(c, &o->thread) ||
	    !ref_ok(c, o->thread, n->threads, false, "off-CPU interval of an undefined thread") ||
	    !get_u32(c, &o->stack) ||
	    !ref_ok(c, o->stack, n->stacks, true, "off-CPU interval of an undefined stack") ||
	    !get_u32(c, &o->user_stack) ||
	    !ref_ok(c, o->user_stack, n->stacks, true, "off-CPU interval of an undefined stack") ||
	    !get_u(c, &units) || !get_u32(c, &o->cpu) || !get_u(c, &state) || !get_u(c, &end))
		return -EBADMSG;
	/*
	 * A state splits off-CPU time (blocked, runnable): one this reader does
	 * not know would be time in no part, so it is invalid.  What ended an
	 * interval only describes it: a newer writer's cause reads as unknown
	 * (prof-spool(5)), up to the byte it is kept in.
	 */
	if (!state || state >= OFFCPU_STATE_COUNT || !end || end > UINT8_MAX) {
		c->err = "bad off-CPU state or end";
		return -EBADMSG;
	}
	/* META, the first record, set a unit of at least 1 */
	if (units > UINT64_MAX / n->time_unit_ns) {
		c->err = "off-CPU duration out of range";
		return -EBADMSG;
	}
	if (!apply)
		return 0;
	o->duration_ns = units * n->time_unit_ns;
	if (!o->user_stack)
		o->user_stack = o->stack;
	o->state = (uint8_t)state;
	o->end = (uint8_t)end;
	sp->noffcpu++;
	ev->offcpu = o;
	ev->id = o->stack;
	ev->time_ns = o->time_ns;
	ev->type = PROF_RECORD_OFFCPU;
	return 0;
}

static int decode_lost(struct prof_spool *sp, struct cursor *c, const struct spool_counts *n,
		       bool apply, struct prof_record *ev)
{
	uint64_t t = 0, kind, count;

	if (!get_time(sp, c, n, apply, &t) || !get_u(c, &kind) || !get_u(c, &count))
		return -EBADMSG;
	/* a lost kind only names what was lost: a newer writer's reads as unknown */
	if (kind == 0 || kind > UINT8_MAX) {
		c->err = "bad lost-event kind";
		return -EBADMSG;
	}
	if (!apply)
		return 0;
	sp->lost = (struct prof_lost){ .sz = sizeof(sp->lost), .time_ns = t, .kind = (uint8_t)kind,
				       .count = count };
	ev->lost = &sp->lost;
	ev->time_ns = t;
	ev->type = PROF_RECORD_LOST;
	return 0;
}

static int decode_symbol(struct prof_spool *sp, struct cursor *c, struct spool_counts *n,
			 bool apply, struct prof_record *ev)
{
	struct prof_symbol s = { .sz = sizeof(s) };
	const uint8_t *name = NULL;
	size_t len = 0;
	uint64_t scope, ref = 0;
	bool delta = sp->major >= SPOOL_VERSION_MAJOR_DELTA;
	int64_t d;
	bool ok;

	if (!get_u(c, &scope) || !get_u32(c, &s.scope_id))
		return -EBADMSG;
	if (!delta) {
		if (!get_u(c, &s.start) || !get_u(c, &s.size) || !get_str(c, &name, &len))
			return -EBADMSG;
	} else {
		/* the start less the symbol before's of this scope; a name whole or a number */
		if (!get_s(c, &d) || !get_u(c, &s.size) || !get_u(c, &ref))
			return -EBADMSG;
		if (ref > n->names) {
			c->err = "symbol with an undefined name";
			return -EBADMSG;
		}
		if (!ref && !get_str(c, &name, &len))
			return -EBADMSG;
		s.start = (uint64_t)d;
		if (apply && n->symbols) {
			const struct prof_symbol *b = &sp->symbols[n->symbols - 1];

			if (b->scope == scope && b->scope_id == s.scope_id)
				s.start += b->start;
		}
	}
	switch (scope) {
	case PROF_SYMBOL_KERNEL:
		ok = ref_ok(c, s.scope_id, 0, true, "kernel symbol with a scope id");
		break;
	case PROF_SYMBOL_PROCESS:
		ok = ref_ok(c, s.scope_id, n->processes, false, "symbol of an undefined process");
		break;
	case PROF_SYMBOL_MODULE:
		ok = ref_ok(c, s.scope_id, n->modules, false, "symbol of an undefined module");
		break;
	default:
		c->err = "unknown symbol scope";
		ok = false;
	}
	if (!ok)
		return -EBADMSG;
	if (!apply) {
		n->symbols++;
		n->names += delta && !ref;
		return 0;
	}
	if (TABLE_RESERVE(sp, symbols, n->symbols + 1) < 0)
		return -ENOMEM;
	if (delta && !ref) {
		if (TABLE_RESERVE(sp, name_syms, n->names + 1) < 0)
			return -ENOMEM;
		sp->name_syms[n->names++] = n->symbols;
	}
	n->symbols++;
	s.scope = (uint8_t)scope;
	if (ref) {
		name = (const uint8_t *)sp->symbols[sp->name_syms[ref - 1]].name;
		/* NULL only when its copy failed, which that read reported */
		if (!name)
			return -ENOMEM;
		len = strlen((const char *)name);
	}
	s.name = str_dup(name, len);
	sp->symbols[n->symbols - 1] = s;
	if (!s.name)
		return -ENOMEM;
	ev->symbol = &sp->symbols[n->symbols - 1];
	ev->id = n->symbols;
	ev->type = PROF_RECORD_SYMBOL;
	return 0;
}

static int decode_trailer(struct prof_spool *sp, struct cursor *c, bool apply,
			  struct prof_record *ev)
{
	struct prof_counters *k = &sp->counters;
	uint64_t key, v;

	while (c->p < c->end) {
		if (!get_u(c, &key) || !get_u(c, &v))
			return -EBADMSG;
		if (!apply)
			continue;
		switch (key) {
		case SPOOL_CNT_SAMPLES: k->samples = v; break;
		case SPOOL_CNT_SAMPLE_EVENTS: k->sample_events = v; break;
		case SPOOL_CNT_EMPTY_STACKS: k->empty_stacks = v; break;
		case SPOOL_CNT_TRUNCATED_STACKS: k->truncated_stacks = v; break;
		case SPOOL_CNT_PROCESSES: k->processes = v; break;
		case SPOOL_CNT_THREADS: k->threads = v; break;
		case SPOOL_CNT_LIFECYCLE_GAPS: k->lifecycle_gaps = v; break;
		case SPOOL_CNT_RECONCILIATIONS: k->reconciliations = v; break;
		case SPOOL_CNT_MONO_END: k->mono_end_ns = v; break;
		case SPOOL_CNT_WALL_END: k->wall_end_ns = v; break;
		case SPOOL_CNT_FRAMES: k->frames = v; break;
		case SPOOL_CNT_OFFCPU_INTERVALS: k->offcpu_intervals = v; break;
		case SPOOL_CNT_OFFCPU_NS: k->offcpu_ns = v; break;
		case SPOOL_CNT_OFFCPU_UNSAMPLED: k->offcpu_unsampled = v; break;
		case SPOOL_CNT_SWITCH_EVENTS: k->switch_events = v; break;
		case SPOOL_CNT_OFFCPU_TRUNCATED: k->offcpu_truncated = v; break;
		case SPOOL_CNT_IDLE_SAMPLES: k->idle_samples = v; break;
		case SPOOL_CNT_CPUS: k->cpus = v; break;
		case SPOOL_CNT_PYTHON_FRAMES: k->python_frames = v; break;
		case SPOOL_CNT_PYTHON_STALE: k->python_stale = v; break;
		case SPOOL_CNT_PYTHON_UNREAD: k->python_unread = v; break;
		case SPOOL_CNT_JIT_MAP_NAMES: k->jit_map_names = v; break;
		case SPOOL_CNT_JITDUMP_NAMES: k->jitdump_names = v; break;
		default:
			if (key > SPOOL_CNT_LOST_BASE && key < SPOOL_CNT_LOST_BASE + LOST_KIND_COUNT)
				k->lost[key - SPOOL_CNT_LOST_BASE] = v;
			else if (key > SPOOL_CNT_UNWIND_BASE &&
				 key < SPOOL_CNT_UNWIND_BASE + UNWIND_ERROR_COUNT)
				k->unwind_errors[key - SPOOL_CNT_UNWIND_BASE] = v;
			else if (key > SPOOL_CNT_FALLBACK_BASE &&
				 key < SPOOL_CNT_FALLBACK_BASE + FALLBACK_COUNT)
				k->fallback_frames[key - SPOOL_CNT_FALLBACK_BASE] = v;
			/* other keys come from a newer writer: ignored */
		}
	}
	if (!apply)
		return 0;
	ev->counters = k;
	ev->type = PROF_RECORD_TRAILER;
	return 0;
}

static int decode_one(struct prof_spool *sp, struct cursor *c, enum spool_tag tag,
		      struct spool_counts *n, bool apply, struct prof_record *ev)
{
	return tag == SPOOL_TAG_FRAME ? decode_frame(sp, c, n, apply, ev)
				      : decode_stack(sp, c, n, apply, ev);
}

/*
 * A FRAME or STACK record.  In version 3 its body is one or more of them,
 * filling it: the dry run checks them all, applying hands out the first
 * and leaves the rest for decode_batch_next().
 */
static int decode_several(struct prof_spool *sp, struct cursor *c, enum spool_tag tag,
			  struct spool_counts *n, bool apply, struct prof_record *ev)
{
	int r = decode_one(sp, c, tag, n, apply, ev);

	if (r < 0 || sp->major < SPOOL_VERSION_MAJOR_DELTA)
		return r;
	if (apply) {
		sp->batch_p = c->p;
		sp->batch_end = c->end;
		sp->batch_tag = (uint8_t)tag;
		return 0;
	}
	while (c->p < c->end && r == 0)
		r = decode_one(sp, c, tag, n, false, ev);
	return r;
}

int decode_batch_next(struct prof_spool *sp, struct prof_record *ev, const char **err)
{
	struct cursor c = { .p = sp->batch_p, .end = sp->batch_end };
	int r;

	memset(ev, 0, sizeof(*ev));
	r = decode_one(sp, &c, (enum spool_tag)sp->batch_tag, &sp->n, true, ev);
	sp->batch_p = c.p;
	*err = c.err ? c.err : "invalid";
	return r;
}

int decode_record(struct prof_spool *sp, struct cursor *c, struct spool_counts *n, bool apply,
		  struct prof_record *ev)
{
	struct cursor body;
	uint64_t tag, len;
	int r;

	if (!get_u(c, &tag) || !get_u(c, &len))
		return -EBADMSG;
	if (len > (uint64_t)(c->end - c->p)) {
		c->err = "record runs past its block";
		return -EBADMSG;
	}
	body = (struct cursor){ .p = c->p, .end = c->p + len };
	c->p += len;
	if (n->trailer) {
		c->err = "record after the trailer";
		return -EBADMSG;
	}
	if ((n->records == 0) != (tag == SPOOL_TAG_META)) {
		c->err = n->records ? "a second META record" : "the first record is not META";
		return -EBADMSG;
	}
	n->records++;
	memset(ev, 0, sizeof(*ev));
	switch (tag) {
	case SPOOL_TAG_META:
		r = decode_meta(sp, &body, n, apply);
		break;
	case SPOOL_TAG_PROCESS:
		r = decode_process(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_THREAD:
		r = decode_thread(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_THREAD_NAME:
	case SPOOL_TAG_EXEC:
	case SPOOL_TAG_PROCESS_EXIT:
	case SPOOL_TAG_THREAD_EXIT:
	case SPOOL_TAG_MODULE_RETIRE:
		r = decode_change(sp, &body, (enum spool_tag)tag, n, apply, ev);
		break;
	case SPOOL_TAG_MODULE:
		r = decode_module(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_FRAME:
	case SPOOL_TAG_STACK:
		r = decode_several(sp, &body, (enum spool_tag)tag, n, apply, ev);
		break;
	case SPOOL_TAG_SAMPLE:
		r = decode_sample(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_LOST:
		r = decode_lost(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_OFFCPU:
		r = decode_offcpu(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_SYMBOL:
		r = decode_symbol(sp, &body, n, apply, ev);
		break;
	case SPOOL_TAG_TRAILER:
		r = decode_trailer(sp, &body, apply, ev);
		n->trailer = true;
		break;
	default:
		if (tag >= SPOOL_TAG_OPTIONAL)
			return 0;
		c->err = "unknown record kind";
		return -EBADMSG;
	}
	if (r == -EBADMSG)
		c->err = body.err;
	return r;
}
