/* SPDX-License-Identifier: MIT */
/*
 * output_gecko.c - the samples in the Firefox Profiler's Gecko format,
 * version 24: the one its own `perf script` importer emits, which every
 * later version of the profiler upgrades (its processed format changes
 * from release to release; this one does not).  A thread object per
 * thread, grouped into processes by pid; each with its own string, frame
 * and stack tables (a stack is [prefix, frame], a prefix before its use)
 * and its samples [stack, time in ms since meta.startTime, CPU delta in
 * us], sorted by time.  Off-CPU intervals (record --off-cpu) become
 * samples of the stack the thread left with, one a millisecond of the
 * wait (at most MAX_OFFCPU_SAMPLES an interval) and no CPU delta, as
 * samply writes them: the timeline shows the wait, the call tree what
 * waited.  Kernel frames have a category of their own.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "intern.h"
#include "report.h"
#include "strmap.h"

#define OFFCPU_SAMPLE_NS 1000000ull	/* an off-CPU sample a millisecond of the wait */
#define MAX_OFFCPU_SAMPLES 1000		/* of one interval, spaced evenly beyond a second */

enum { CAT_USER, CAT_KERNEL, CAT_OFFCPU, CAT_OTHER };

static const char *const categories[][2] = {
	[CAT_USER] = { "User", "yellow" },
	[CAT_KERNEL] = { "Kernel", "orange" },
	[CAT_OFFCPU] = { "Off-CPU", "blue" },
	[CAT_OTHER] = { "Other", "grey" },
};

struct g_sample {
	uint32_t stack;		/* the thread's stack index + 1; 0: empty */
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t cpu_ns;	/* CPU time since the thread's last sample */
};

struct g_frame {
	uint32_t name;		/* string index */
	uint32_t line;		/* 0 unknown */
	uint8_t cat;
};

struct g_stack {
	uint32_t prefix;	/* stack index + 1; 0: none */
	uint32_t frame;		/* frame index */
};

/* One thread's tables. */
struct g_thread {
	uint32_t id;			/* spool thread id */
	struct g_sample *samples;
	size_t nsamples, samples_cap;
	struct g_frame *frames;
	size_t nframes, frames_cap;
	struct g_stack *stacks;
	size_t nstacks, stacks_cap;
	struct strtab strings;
	struct intern_map frame_ids;	/* (spool frame, inline depth) -> frame index + 1 */
	struct intern_map stack_ids;	/* (prefix + 1, frame) -> stack index + 1 */
	struct intern_map node_ids;	/* spool stack node -> stack index + 1 */
	uint64_t first_ns, last_ns;
};

struct gecko {
	struct prof_spool *sp;
	struct prof_symbolizer *sym;
	struct g_thread **threads;	/* by spool thread id: NULL none yet */
	size_t threads_cap;
	uint32_t *order;		/* the thread ids seen, in order */
	size_t norder, order_cap;
	uint32_t *path;			/* scratch: a stack's nodes, leaf first */
	size_t path_cap;
};

static void thread_free(struct g_thread *t)
{
	if (!t)
		return;
	free(t->samples);
	free(t->frames);
	free(t->stacks);
	strtab_release(&t->strings);
	intern_release(&t->frame_ids);
	intern_release(&t->stack_ids);
	intern_release(&t->node_ids);
	free(t);
}

static struct g_thread *thread_of(struct gecko *g, uint32_t id)
{
	struct g_thread *t;
	void *v;

	if (id < g->threads_cap && g->threads[id])
		return g->threads[id];
	v = g->threads;
	if (grow_array_zeroed(&v, &g->threads_cap, (size_t)id + 1, sizeof(*g->threads)) < 0)
		return NULL;
	g->threads = v;
	v = g->order;
	if (grow_array(&v, &g->order_cap, g->norder + 1, sizeof(*g->order)) < 0)
		return NULL;
	g->order = v;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	intern_init(&t->frame_ids);
	intern_init(&t->stack_ids);
	intern_init(&t->node_ids);
	g->threads[id] = t;
	g->order[g->norder++] = id;
	return t;
}

/* Add FR to T's frames as the one of key (A, B): its index, or -ENOMEM. */
static int64_t add_frame(struct g_thread *t, uint32_t a, uint64_t b, struct g_frame fr)
{
	void *v = t->frames;

	if (grow_array(&v, &t->frames_cap, t->nframes + 1, sizeof(*t->frames)) < 0)
		return -ENOMEM;
	t->frames = v;
	t->frames[t->nframes] = fr;
	if (intern_insert(&t->frame_ids, a, b, (uint32_t)t->nframes + 1) < 0)
		return -ENOMEM;
	return (int64_t)t->nframes++;
}

/* T's frame for inline depth K of spool frame F (resolved as RF), added if new. */
static int64_t frame_of(struct g_thread *t, const struct prof_frame *f, size_t k,
			const struct prof_resolved_frame *rf)
{
	uint32_t id = intern_find(&t->frame_ids, f->id, k);
	char *name;
	int64_t s;
	int r;

	if (id)
		return id - 1;
	/* as the profiler's perf importer names them: "function (in module)" */
	r = *rf->module ? asprintf(&name, "%s (in %s)", rf->function, rf->module)
			: asprintf(&name, "%s", rf->function);
	if (r < 0)
		return error_setx(-ENOMEM, "out of memory");
	s = strtab_intern(&t->strings, name);
	free(name);
	if (s < 0)
		return s;
	return add_frame(t, f->id, k, (struct g_frame){
		.name = (uint32_t)s, .line = rf->line,
		.cat = f->kind == PROF_FRAME_KERNEL ? CAT_KERNEL
		       : f->kind == PROF_FRAME_STATE ? CAT_OFFCPU
		       : f->kind == PROF_FRAME_TRUNCATED ? CAT_OTHER : CAT_USER,
	});
}

/* T's stack of frame FRAME called from stack PREFIX (index + 1, 0 none), added if new. */
static int64_t stack_of(struct g_thread *t, uint32_t prefix, uint32_t frame)
{
	uint32_t id = intern_find(&t->stack_ids, prefix, frame);
	void *v = t->stacks;

	if (id)
		return id - 1;
	if (grow_array(&v, &t->stacks_cap, t->nstacks + 1, sizeof(*t->stacks)) < 0)
		return -ENOMEM;
	t->stacks = v;
	t->stacks[t->nstacks] = (struct g_stack){ prefix, frame };
	if (intern_insert(&t->stack_ids, prefix, frame, (uint32_t)t->nstacks + 1) < 0)
		return -ENOMEM;
	return (int64_t)t->nstacks++;
}

/* T's stack index + 1 for spool stack node NODE (0: the empty stack). */
static int64_t node_of(struct gecko *g, struct g_thread *t, uint32_t node)
{
	uint32_t have, prefix = 0;
	size_t n = 0, i, k;
	void *v;

	/* up to the outermost node, or one this thread has already */
	for (have = 0; node;) {
		const struct prof_stack_node *sn = prof_spool_stack(g->sp, node);

		if (!sn)
			return error_setx(-EINVAL, "stack node %" PRIu32 " is not defined", node);
		if ((have = intern_find(&t->node_ids, node, 0)))
			break;
		v = g->path;
		if (grow_array(&v, &g->path_cap, n + 1, sizeof(*g->path)) < 0)
			return -ENOMEM;
		g->path = v;
		g->path[n++] = node;
		node = sn->parent;
	}
	prefix = have;
	/* then down, outermost first: each frame's inline chain in order */
	for (i = n; i-- > 0;) {
		const struct prof_stack_node *sn = prof_spool_stack(g->sp, g->path[i]);
		const struct prof_frame *f = prof_spool_frame(g->sp, sn->frame);
		const struct prof_resolved_frame *const *rf;
		size_t nrf;
		int r;

		if (!f)
			return error_setx(-EINVAL, "frame %" PRIu32 " is not defined", sn->frame);
		r = prof_symbolizer_frame_inlines(g->sym, f->id, &rf, &nrf);
		if (r < 0)
			return r;
		for (k = 0; k < nrf; k++) {
			int64_t fr = frame_of(t, f, k, rf[k]), st;

			if (fr < 0)
				return fr;
			st = stack_of(t, prefix, (uint32_t)fr);
			if (st < 0)
				return st;
			prefix = (uint32_t)st + 1;
		}
		if (intern_insert(&t->node_ids, g->path[i], 0, prefix) < 0)
			return -ENOMEM;
	}
	return prefix;
}

/*
 * T's stack "[empty stack]" + 1, for a sample without frames (as folded
 * counts it: the profiler leaves a sample without a stack out of its call
 * tree, and nothing is left out here either).
 */
static int64_t empty_stack(struct g_thread *t)
{
	uint32_t id = intern_find(&t->frame_ids, UINT32_MAX, 0);
	int64_t s, fr, st;

	if (id) {
		fr = id - 1;
	} else {
		s = strtab_intern(&t->strings, "[empty stack]");
		if (s < 0)
			return s;
		fr = add_frame(t, UINT32_MAX, 0, (struct g_frame){ .name = (uint32_t)s, .cat = CAT_OTHER });
		if (fr < 0)
			return fr;
	}
	st = stack_of(t, 0, (uint32_t)fr);
	return st < 0 ? st : st + 1;
}

static int add_sample(struct g_thread *t, uint32_t stack, uint64_t time, uint64_t cpu_ns)
{
	void *v = t->samples;

	if (grow_array(&v, &t->samples_cap, t->nsamples + 1, sizeof(*t->samples)) < 0)
		return -ENOMEM;
	t->samples = v;
	t->samples[t->nsamples++] = (struct g_sample){ stack, time, cpu_ns };
	if (!t->first_ns || time < t->first_ns)
		t->first_ns = time;
	if (time > t->last_ns)
		t->last_ns = time;
	return 0;
}

static int gecko_event(const struct report_event *e, void *ctx)
{
	struct gecko *g = ctx;
	struct g_thread *t = thread_of(g, e->s.thread);
	uint64_t n, i, step;
	int64_t st;
	int r = 0;

	if (!t)
		return error_setx(-ENOMEM, "out of memory");
	st = node_of(g, t, e->s.stack);
	if (st == 0)
		st = empty_stack(t);
	if (st < 0)
		return (int)st;
	if (!e->offcpu)
		return add_sample(t, (uint32_t)st, e->s.time_ns, e->s.period);
	/* the wait: a sample a millisecond, spaced wider past MAX_OFFCPU_SAMPLES */
	n = e->offcpu->duration_ns / OFFCPU_SAMPLE_NS;
	if (!n)
		n = 1;
	if (n > MAX_OFFCPU_SAMPLES)
		n = MAX_OFFCPU_SAMPLES;
	step = e->offcpu->duration_ns / n;
	for (i = 0; i < n && r == 0; i++)
		r = add_sample(t, (uint32_t)st, e->offcpu->time_ns + i * step, 0);
	return r;
}

static int by_time(const void *a, const void *b)
{
	const struct g_sample *x = a, *y = b;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* Milliseconds of CLOCK_MONOTONIC time NS since the recording's start. */
static double ms_of(const struct prof_meta *m, uint64_t ns)
{
	return ns > m->mono_start_ns ? (double)(ns - m->mono_start_ns) / 1e6 : 0.0;
}

/* ---- writing: into a buffer (gzip'd or not at the end) --------------------- */

struct out {
	char *p;
	size_t n, cap;
	bool err;
};

static void put(struct out *o, const char *fmt, ...) PROF_PRINTF(2, 3);

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	for (;;) {
		if (o->err)
			return;
		va_start(ap, fmt);
		w = vsnprintf(o->p ? o->p + o->n : NULL, o->p ? o->cap - o->n : 0, fmt, ap);
		va_end(ap);
		if (w < 0) {
			o->err = true;
			return;
		}
		if (o->p && (size_t)w < o->cap - o->n) {
			o->n += (size_t)w;
			return;
		}
		{
			size_t cap = o->cap ? o->cap : 65536;
			char *p;

			while (cap - o->n <= (size_t)w)
				cap *= 2;
			p = realloc(o->p, cap);
			if (!p) {
				o->err = true;
				return;
			}
			o->p = p;
			o->cap = cap;
		}
	}
}

/* S as a JSON string. */
static void put_str(struct out *o, const char *s)
{
	put(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

static void put_thread(struct gecko *g, struct out *o, const struct g_thread *t)
{
	const struct prof_meta *m = prof_spool_meta(g->sp);
	const struct prof_thread *th = prof_spool_thread(g->sp, t->id);
	const struct prof_process *p = th ? prof_spool_process(g->sp, th->process) : NULL;
	size_t i;

	put(o, "{\"name\":");
	put_str(o, th && th->name && *th->name ? th->name : "[unknown]");
	put(o, ",\"processType\":\"default\",\"processName\":");
	put_str(o, p && p->comm && *p->comm ? p->comm : "[unknown]");
	put(o, ",\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",", p ? p->pid : 0, th ? th->tid : 0);
	put(o, "\"registerTime\":%.3f,\"unregisterTime\":null,", ms_of(m, t->first_ns));
	put(o, "\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
	       "\"category\":4,\"data\":5},\"data\":[]},");
	put(o, "\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2,"
	       "\"threadCPUDelta\":3},\"data\":[");
	for (i = 0; i < t->nsamples; i++) {
		const struct g_sample *s = &t->samples[i];

		put(o, "%s[", i ? "," : "");
		if (s->stack)
			put(o, "%" PRIu32, s->stack - 1);
		else
			put(o, "null");
		/* the first sample's delta is ignored; CPU time in us */
		put(o, ",%.3f,0,%" PRIu64 "]", ms_of(m, s->time_ns), i ? s->cpu_ns / 1000 : 0);
	}
	put(o, "]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
	       "\"innerWindowID\":2,\"implementation\":3,\"optimizations\":4,\"line\":5,"
	       "\"column\":6,\"category\":7,\"subcategory\":8},\"data\":[");
	for (i = 0; i < t->nframes; i++) {
		const struct g_frame *f = &t->frames[i];

		put(o, "%s[%" PRIu32 ",false,0,null,null,", i ? "," : "", f->name);
		if (f->line)
			put(o, "%" PRIu32, f->line);
		else
			put(o, "null");
		put(o, ",null,%u,0]", f->cat);
	}
	put(o, "]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[");
	for (i = 0; i < t->nstacks; i++) {
		const struct g_stack *s = &t->stacks[i];

		if (s->prefix)
			put(o, "%s[%" PRIu32 ",%" PRIu32 "]", i ? "," : "", s->prefix - 1, s->frame);
		else
			put(o, "%s[null,%" PRIu32 "]", i ? "," : "", s->frame);
	}
	put(o, "]},\"stringTable\":[");
	for (i = 0; i < t->strings.n; i++) {
		put(o, "%s", i ? "," : "");
		put_str(o, t->strings.v[i]);
	}
	put(o, "]}");
}

/* The pid of thread T's process, 0 unknown. */
static int32_t pid_of(const struct gecko *g, const struct prof_thread *t)
{
	const struct prof_process *p = prof_spool_process(g->sp, t->process);

	return p ? p->pid : 0;
}

/* Threads by process (in the order the spool knows them), each main thread first, then by first sample. */
static int by_process(const void *a, const void *b, void *ctx)
{
	const struct gecko *g = ctx;
	const struct g_thread *x = g->threads[*(const uint32_t *)a];
	const struct g_thread *y = g->threads[*(const uint32_t *)b];
	const struct prof_thread *tx = prof_spool_thread(g->sp, x->id);
	const struct prof_thread *ty = prof_spool_thread(g->sp, y->id);
	uint32_t px = tx ? tx->process : 0, py = ty ? ty->process : 0;

	if (px != py)
		return px < py ? -1 : 1;
	/* its main thread first */
	if (tx && ty && (tx->tid == (int32_t)pid_of(g, tx)) != (ty->tid == (int32_t)pid_of(g, ty)))
		return tx->tid == (int32_t)pid_of(g, tx) ? -1 : 1;
	return x->first_ns < y->first_ns ? -1 : x->first_ns > y->first_ns;
}

static int write_profile(struct gecko *g, struct out *o)
{
	const struct prof_meta *m = prof_spool_meta(g->sp);
	double interval = m->freq_hz ? 1000.0 / (double)m->freq_hz : (double)m->period / 1e6;
	size_t i;

	qsort_r(g->order, g->norder, sizeof(*g->order), by_process, g);
	put(o, "{\"meta\":{\"version\":24,\"interval\":%.6f,\"processType\":0,"
	       "\"product\":\"prof\",\"stackwalk\":1,\"debug\":0,\"startTime\":%.3f,"
	       "\"shutdownTime\":null,\"presymbolicated\":true,",
	    interval > 0 ? interval : 1.0, (double)m->wall_start_ns / 1e6);
	put(o, "\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"\\u00b5s\"},");
	put(o, "\"categories\":[");
	for (i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		put(o, "%s{\"name\":\"%s\",\"color\":\"%s\",\"subcategories\":[\"Other\"]}",
		    i ? "," : "", categories[i][0], categories[i][1]);
	put(o, "],\"markerSchema\":[]},\"libs\":[],\"processes\":[],\"pausedRanges\":[],"
	       "\"threads\":[");
	for (i = 0; i < g->norder; i++) {
		struct g_thread *t = g->threads[g->order[i]];

		qsort(t->samples, t->nsamples, sizeof(*t->samples), by_time);
		put(o, "%s", i ? "," : "");
		put_thread(g, o, t);
	}
	put(o, "]}\n");
	return o->err ? error_setx(-ENOMEM, "out of memory") : 0;
}

/* O's bytes to OUT, gzip'd (GZIP) or as they are. */
static int write_out(FILE *out, const struct out *o, bool gzip)
{
	if (gzip)
		return report_write_gzip(out, o->p, o->n);
	fwrite(o->p, 1, o->n, out);
	return 0;
}

int prof_report_gecko(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		      struct prof_filter *f, bool gzip, uint64_t *ret_samples)
{
	struct gecko g = { .sp = sp, .sym = sym };
	struct out o = { 0 };
	uint64_t n = 0;
	size_t i;
	int r;

	if (!out || !sp || !sym)
		return error_setx(-EINVAL, "nothing to report");
	r = filter_each_event(sp, sym, f, gecko_event, &g, &n);
	if (r == 0 && n)
		r = write_profile(&g, &o);
	if (r == 0 && n)
		r = write_out(out, &o, gzip);
	if (r == 0 && ret_samples)
		*ret_samples = n;
	errno = 0;
	if (r == 0 && (fflush(out) == EOF || ferror(out)))
		r = error_set(errno ? -errno : -EIO, "cannot write the report");
	for (i = 0; i < g.threads_cap; i++)
		thread_free(g.threads[i]);
	free(g.threads);
	free(g.order);
	free(g.path);
	free(o.p);
	return r;
}
