/* SPDX-License-Identifier: MIT */
/*
 * top_view.c - what prof top prints of a tail: the hottest functions with
 * self and total shares and the process each belongs to, or the processes,
 * at each print.  Every weight is counted at once, so that a key can switch
 * between them without waiting for new samples; counts decay by 7/8 at
 * each print as perf top's do (hists__decay_entries), so that the view
 * follows what runs now.  Frames are named once each (their inline chain
 * as function ids), functions, processes and (function, process) pairs
 * counted by id: memory grows with distinct content, not with samples.
 * Processes are known by pid and start time, not by spool id, so that a
 * recorder that goes on in another file (prof top's, to keep its own
 * memory flat) keeps every count: only the frames are named again.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "intern.h"
#include "internal.h"
#include "strmap.h"
#include "tail_state.h"

#define DEFAULT_LIMIT 20
#define EMPTY_STACK_NAME "[empty stack]"
#define DECAY 0.875

/* The weights, counted side by side: enum prof_weight indexes them. */
typedef double weights[WEIGHT_COUNT];

struct top_frame {
	uint32_t *funcs;	/* its inline chain as function ids, outermost first */
	uint32_t nfuncs;	/* 0: not named yet */
};

struct top_func {
	char *name;
	char *module;
	weights self, total;
	uint64_t stamp;		/* the sample that last counted its total: once each */
	/* at print: the process with most of its total, and how many have some */
	uint32_t best_pair;	/* index + 1 into pairs */
	uint32_t nprocs;
};

struct top_proc {
	uint32_t id;		/* its spool id in the file read now; 0: none there */
	int32_t pid;		/* 0: unknown */
	uint64_t start;		/* its start time: with pid, the process across pid reuse */
	char comm[32];		/* as of the last print that could look it up */
	weights self;
	uint32_t best_pair;	/* at print: its hottest function (by self) */
};

struct top_pair {
	uint32_t func, proc;	/* indexes */
	weights self, total;
};

struct prof_top {
	struct prof_top_opts opts;
	struct prof_tail *t;
	struct prof_symbolizer *sym;
	bool weight_checked;
	struct top_frame *frames;	/* by frame id */
	size_t frames_cap;
	struct strmap func_ids;		/* "name\0module" -> index + 1 */
	struct top_func *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t empty_func;		/* index + 1 of "[empty stack]", 0 until needed */
	uint32_t spools;		/* the tail's spool count when last read */
	struct intern_map proc_ids;	/* (pid, start) -> index + 1 */
	struct intern_map file_procs;	/* (spool id, 0) -> index + 1, in the file read now */
	struct top_proc *procs;
	size_t nprocs, procs_cap;
	struct intern_map pair_ids;	/* (func, proc) -> index + 1 */
	struct top_pair *pairs;
	size_t npairs, pairs_cap;
	weights sum;			/* what was counted (decayed as the rest) */
	uint64_t seq;			/* samples counted, for the stamps */
	uint64_t interval_samples;	/* CPU samples since the last print */
	uint64_t lost;
	uint64_t interval_begin_ns, last_ns;
	double last_rate;		/* CPU samples a second of the interval that ended */
	uint32_t *order;		/* scratch: rows by rank */
	size_t order_cap;
};

static int check_opts(const struct prof_top_opts *o)
{
	if (o->format != PROF_TAIL_FORMAT_TOP && o->format != PROF_TAIL_FORMAT_JSON)
		return error_setx(-EINVAL, "top view: format %d is neither top nor json",
				  (int)o->format);
	if (o->limit < 0)
		return error_setx(-EINVAL, "top view: negative limit");
	if ((unsigned)o->weight >= WEIGHT_COUNT)
		return error_setx(-EINVAL, "top view: unknown weight %d", (int)o->weight);
	return 0;
}

int prof_top_new(const struct prof_top_opts *opts, struct prof_top **ret)
{
	struct prof_top *v;
	int r;

	v = calloc(1, sizeof(*v));
	if (!v)
		return error_setx(-ENOMEM, "out of memory");
	r = opts_copy(&v->opts, sizeof(v->opts), opts, "top view");
	if (r == 0)
		r = check_opts(&v->opts);
	if (r < 0) {
		free(v);
		return r;
	}
	intern_init(&v->proc_ids);
	intern_init(&v->file_procs);
	intern_init(&v->pair_ids);
	*ret = v;
	return 0;
}

int prof_top_set(struct prof_top *v, const struct prof_top_opts *opts)
{
	SIZED(prof_top_opts, o);
	const struct prof_spool *sp;
	int r;

	if (!v)
		return error_setx(-EINVAL, "top view: no view");
	r = opts_copy(&o, sizeof(o), opts, "top view");
	if (r == 0)
		r = check_opts(&o);
	sp = v->t ? prof_tail_spool(v->t) : NULL;
	if (r == 0 && sp)
		r = meta_check_weight(prof_spool_meta(sp), o.weight);
	if (r < 0)
		return r;
	v->opts = o;
	return 0;
}

/* ---- naming ------------------------------------------------------------- */

static int func_id(struct prof_top *v, const char *name, const char *module, uint32_t *ret)
{
	size_t nlen = strlen(name), mlen = strlen(module);
	char *key = malloc(nlen + mlen + 2);
	uint32_t id;
	void *p;
	int r = 0;

	if (!key)
		return error_setx(-ENOMEM, "out of memory");
	memcpy(key, name, nlen + 1);
	memcpy(key + nlen + 1, module, mlen + 1);
	id = strmap_find(&v->func_ids, key, nlen + mlen + 1);
	if (!id) {
		p = v->funcs;
		r = grow_array(&p, &v->funcs_cap, v->nfuncs + 1, sizeof(*v->funcs));
		v->funcs = p;
		if (r == 0)
			r = strmap_insert(&v->func_ids, key, nlen + mlen + 1,
					  (uint32_t)v->nfuncs + 1);
		if (r == 0) {
			struct top_func *f = &v->funcs[v->nfuncs];

			*f = (struct top_func){ .name = xstrdup(name), .module = xstrdup(module) };
			v->nfuncs++;	/* counted now: free() releases what was copied */
			if (!f->name || !f->module)
				r = -ENOMEM;
			id = (uint32_t)v->nfuncs;
		}
	}
	free(key);
	if (r == 0)
		*ret = id;
	return r;
}

static int name_frame(struct prof_top *v, uint32_t frame, struct top_frame **ret)
{
	const struct prof_resolved_frame *const *rf;
	struct top_frame *tf;
	size_t n, i, old = v->frames_cap;
	void *p = v->frames;
	uint32_t *ids;
	int r;

	if (frame >= v->frames_cap) {
		r = grow_array(&p, &v->frames_cap, (size_t)frame + 1, sizeof(*v->frames));
		v->frames = p;
		if (r < 0)
			return r;
		memset(v->frames + old, 0, (v->frames_cap - old) * sizeof(*v->frames));
	}
	tf = &v->frames[frame];
	if (tf->nfuncs) {
		*ret = tf;
		return 0;
	}
	r = prof_symbolizer_frame_inlines(v->sym, frame, &rf, &n);
	if (r < 0)
		return r;
	ids = realloc(tf->funcs, (n ? n : 1) * sizeof(*ids));
	if (!ids)
		return error_setx(-ENOMEM, "out of memory");
	tf->funcs = ids;
	for (i = 0; i < n; i++) {
		r = func_id(v, rf[i]->function, rf[i]->module, &ids[i]);
		if (r < 0)
			return r;
	}
	tf->nfuncs = (uint32_t)n;
	*ret = tf;
	return n ? 0 : error_setx(-EINVAL, "frame %u has no name", frame);
}

/* Forget every frame's names: the symbolizer may name them differently now. */
static void forget_frames(struct prof_top *v)
{
	size_t i;

	for (i = 0; i < v->frames_cap; i++)
		v->frames[i].nfuncs = 0;
}

/* ---- counting ----------------------------------------------------------- */

/* The key of a process: pid and start time; an unknown one has pid 0. */
static void proc_key(const struct prof_process *p, uint64_t *a, uint64_t *b)
{
	*a = p ? (uint64_t)(uint32_t)p->pid : 0;
	*b = p ? p->start_time_ns : 0;
}

static void name_proc(struct top_proc *tp, const struct prof_process *p)
{
	snprintf(tp->comm, sizeof(tp->comm), "%s", p && *p->comm ? p->comm : "?");
}

/* The index of spool process ID (0: unknown) of SP. */
static int proc_index(struct prof_top *v, const struct prof_spool *sp, uint32_t id,
		      uint32_t *ret)
{
	uint32_t i = intern_find(&v->file_procs, id, 0);
	const struct prof_process *p;
	uint64_t a, b;
	void *q;
	int r;

	if (i) {
		*ret = i - 1;
		return 0;
	}
	p = id ? prof_spool_process(sp, id) : NULL;
	proc_key(p, &a, &b);
	i = intern_find(&v->proc_ids, a, b);
	if (!i) {
		q = v->procs;
		r = grow_array(&q, &v->procs_cap, v->nprocs + 1, sizeof(*v->procs));
		v->procs = q;
		if (r == 0)
			r = intern_insert(&v->proc_ids, a, b, (uint32_t)v->nprocs + 1);
		if (r < 0)
			return r;
		v->procs[v->nprocs] = (struct top_proc){ .pid = p ? p->pid : 0, .start = b };
		name_proc(&v->procs[v->nprocs], p);
		i = (uint32_t)++v->nprocs;
	}
	r = intern_insert(&v->file_procs, id, 0, i);
	if (r < 0)
		return r;
	v->procs[i - 1].id = id;
	*ret = i - 1;
	return 0;
}

/*
 * T reads another spool now (its recorder went on in another file): its
 * ids are new, its frames to be named again, by the symbolizer that keeps
 * the files it opened.  0 or -errno.
 */
static int follow_spool(struct prof_top *v, struct prof_tail *t)
{
	size_t i;
	int r = tail_follow(t, &v->spools, v->sym);

	if (r <= 0)
		return r;
	forget_frames(v);
	intern_release(&v->file_procs);
	for (i = 0; i < v->nprocs; i++)
		v->procs[i].id = 0;
	return 0;
}

static int pair_index(struct prof_top *v, uint32_t func, uint32_t proc, uint32_t *ret)
{
	uint32_t i = intern_find(&v->pair_ids, func, proc);
	void *p = v->pairs;
	int r;

	if (!i) {
		r = grow_array(&p, &v->pairs_cap, v->npairs + 1, sizeof(*v->pairs));
		v->pairs = p;
		if (r == 0)
			r = intern_insert(&v->pair_ids, func, proc, (uint32_t)v->npairs + 1);
		if (r < 0)
			return r;
		v->pairs[v->npairs] = (struct top_pair){ .func = func, .proc = proc };
		i = (uint32_t)++v->npairs;
	}
	*ret = i - 1;
	return 0;
}

static void add_w(weights dst, const weights w)
{
	size_t i;

	for (i = 0; i < WEIGHT_COUNT; i++)
		dst[i] += w[i];
}

/* Count function FUNC's total once for this sample (v->seq), in process PROC. */
static int count_total(struct prof_top *v, uint32_t func, uint32_t proc, const weights w)
{
	struct top_func *f = &v->funcs[func];
	uint32_t pair;
	int r;

	if (f->stamp == v->seq)
		return 0;
	f->stamp = v->seq;
	add_w(f->total, w);
	r = pair_index(v, func, proc, &pair);
	if (r == 0)
		add_w(v->pairs[pair].total, w);
	return r;
}

/*
 * Count TS: self for its leaf function (an interval's: the function under
 * its state frame, the one that waited), total for every function on its
 * stack, inlined ones included, once each.
 */
static int count_sample(struct prof_top *v, const struct prof_spool *sp,
			const struct prof_tail_sample *ts, const weights w)
{
	const struct prof_thread *th = ts->thread ? prof_spool_thread(sp, ts->thread) : NULL;
	const struct prof_stack_node *sn;
	struct top_frame *tf = NULL;
	uint32_t leaf = ts->stack, proc, pair, func = 0;
	bool first = true;
	int r;

	r = proc_index(v, sp, th ? th->process : 0, &proc);
	if (r < 0)
		return r;
	v->seq++;
	if (ts->offcpu && leaf) {
		sn = prof_spool_stack(sp, leaf);
		if (!sn)
			return error_setx(-EINVAL, "stack node %u is not defined", leaf);
		leaf = sn->parent;
	}
	for (; leaf; leaf = sn->parent) {
		uint32_t i;

		sn = prof_spool_stack(sp, leaf);
		if (!sn)
			return error_setx(-EINVAL, "stack node %u is not defined", leaf);
		r = name_frame(v, sn->frame, &tf);
		if (r < 0)
			return r;
		if (first)
			func = tf->funcs[tf->nfuncs - 1];
		first = false;
		for (i = 0; i < tf->nfuncs; i++) {
			r = count_total(v, tf->funcs[i] - 1, proc, w);
			if (r < 0)
				return r;
		}
	}
	if (!func) {
		if (!v->empty_func && (r = func_id(v, EMPTY_STACK_NAME, "", &v->empty_func)) < 0)
			return r;
		func = v->empty_func;
		r = count_total(v, func - 1, proc, w);
		if (r < 0)
			return r;
	}
	add_w(v->funcs[func - 1].self, w);
	r = pair_index(v, func - 1, proc, &pair);
	if (r < 0)
		return r;
	add_w(v->pairs[pair].self, w);
	add_w(v->procs[proc].self, w);
	add_w(v->sum, w);
	return 0;
}

int prof_top_add(struct prof_top *v, struct prof_tail *t, const struct prof_tail_batch *b)
{
	const struct prof_spool *sp = prof_tail_spool(t);
	size_t i;
	int r;

	if (!v || !t || !b || (v->t && v->t != t))
		return error_setx(-EINVAL, "top view: another tail");
	v->t = t;
	v->lost += b->lost;
	r = follow_spool(v, t);
	if (r < 0)
		return r;
	if (!b->nsamples)
		return 0;
	if (!sp)
		return error_setx(-EINVAL, "top view: samples without a spool");
	if (!v->weight_checked) {
		r = meta_check_weight(prof_spool_meta(sp), v->opts.weight);
		if (r < 0)
			return r;
		v->weight_checked = true;
	}
	if (!v->sym) {
		r = prof_tail_symbolizer(t, NULL, &v->sym);
		if (r < 0)
			return r;
	}
	if (b->symbols_added)
		forget_frames(v);
	for (i = 0; i < b->nsamples; i++) {
		const struct prof_tail_sample *ts = b->samples[i];
		weights w = { 0 };

		w[PROF_WEIGHT_WALL] = (double)ts->period;
		if (ts->offcpu) {
			w[PROF_WEIGHT_OFFCPU] = (double)ts->period;
		} else {
			w[PROF_WEIGHT_CPU] = 1;
			v->interval_samples++;
			if (!v->interval_begin_ns)
				v->interval_begin_ns = ts->time_ns;
			v->last_ns = ts->time_ns;
		}
		r = count_sample(v, sp, ts, w);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- printing ----------------------------------------------------------- */

/* qsort has no context argument: the view being ranked, and its weight */
static const struct prof_top *rank_view;

static int cmp_w(double x, double y)
{
	return x < y ? 1 : x > y ? -1 : 0;
}

static int by_func(const void *a, const void *b)
{
	const struct top_func *x = &rank_view->funcs[*(const uint32_t *)a];
	const struct top_func *y = &rank_view->funcs[*(const uint32_t *)b];
	enum prof_weight w = rank_view->opts.weight;

	if (x->self[w] != y->self[w])
		return cmp_w(x->self[w], y->self[w]);
	if (x->total[w] != y->total[w])
		return cmp_w(x->total[w], y->total[w]);
	return strcmp(x->name, y->name);
}

static int by_proc(const void *a, const void *b)
{
	const struct top_proc *x = &rank_view->procs[*(const uint32_t *)a];
	const struct top_proc *y = &rank_view->procs[*(const uint32_t *)b];
	enum prof_weight w = rank_view->opts.weight;

	if (x->self[w] != y->self[w])
		return cmp_w(x->self[w], y->self[w]);
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * What counts as "some" of a weight: less than this share of all is
 * decayed noise, and a row of it is not shown.
 */
#define SOME_SHARE 1e-6

static bool some(const struct prof_top *v, double x)
{
	return x > v->sum[v->opts.weight] * SOME_SHARE && x > 0;
}

/* The names of the processes in the file read now, as they are now (an exec renames). */
static void refresh_names(struct prof_top *v)
{
	const struct prof_spool *sp = prof_tail_spool(v->t);
	size_t i;

	for (i = 0; i < v->nprocs; i++)
		if (v->procs[i].id && v->procs[i].pid)
			name_proc(&v->procs[i], prof_spool_process(sp, v->procs[i].id));
}

/* For each function its main process, for each process its hottest function. */
static void attribute(struct prof_top *v)
{
	enum prof_weight w = v->opts.weight;
	size_t i;

	for (i = 0; i < v->nfuncs; i++)
		v->funcs[i].best_pair = v->funcs[i].nprocs = 0;
	for (i = 0; i < v->nprocs; i++)
		v->procs[i].best_pair = 0;
	for (i = 0; i < v->npairs; i++) {
		const struct top_pair *pr = &v->pairs[i];
		struct top_func *f = &v->funcs[pr->func];
		struct top_proc *p = &v->procs[pr->proc];

		if (some(v, pr->total[w])) {
			f->nprocs++;
			if (!f->best_pair || pr->total[w] > v->pairs[f->best_pair - 1].total[w])
				f->best_pair = (uint32_t)i + 1;
		}
		if (some(v, pr->self[w]) &&
		    (!p->best_pair || pr->self[w] > v->pairs[p->best_pair - 1].self[w]))
			p->best_pair = (uint32_t)i + 1;
	}
}

/* The rows to show, best first, in v->order: their number, or -ENOMEM. */
static int64_t rank(struct prof_top *v)
{
	enum prof_weight w = v->opts.weight;
	size_t i, n = 0, limit = v->opts.limit ? (size_t)v->opts.limit : DEFAULT_LIMIT;
	size_t count = v->opts.by_process ? v->nprocs : v->nfuncs;
	void *p = v->order;

	if (grow_array(&p, &v->order_cap, count + 1, sizeof(*v->order)) < 0)
		return -ENOMEM;
	v->order = p;
	for (i = 0; i < count; i++)
		if (v->opts.by_process ? some(v, v->procs[i].self[w])
				       : some(v, v->funcs[i].total[w]))
			v->order[n++] = (uint32_t)i;
	rank_view = v;
	qsort(v->order, n, sizeof(*v->order), v->opts.by_process ? by_proc : by_func);
	return (int64_t)(n < limit ? n : limit);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* "comm[pid]" of process index PROC into BUF, control characters as '?'. */
static const char *proc_name(const struct prof_top *v, uint32_t proc, char *buf, size_t len)
{
	const struct top_proc *p = &v->procs[proc];
	char *c;

	if (!p->pid) {
		snprintf(buf, len, "[unknown]");
		return buf;
	}
	snprintf(buf, len, "%s[%" PRId32 "]", p->comm, p->pid);
	for (c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return buf;
}

/* S with control characters as '?', at most MAX bytes (0: all), padded to PAD. */
static void put_cell(FILE *out, const char *s, size_t max, size_t pad)
{
	const unsigned char *p;
	size_t n = 0;

	for (p = (const unsigned char *)s; *p && (!max || n < max); p++, n++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : (char)*p, out);
	for (; n < pad; n++)
		fputc(' ', out);
}

/* A weight as a row shows it: samples, or ms of time. */
static void put_amount(FILE *out, const struct prof_top *v, double x)
{
	if (v->opts.weight == PROF_WEIGHT_CPU)
		fprintf(out, "%9.0f", x);
	else
		fprintf(out, "%9.1f", x / 1e6);
}

/* CPU samples a second since the interval began; a redraw without any: the last one's. */
static double interval_rate(const struct prof_top *v)
{
	double span = (double)(v->last_ns - v->interval_begin_ns) / 1e9;

	return v->interval_samples && span > 0 ? (double)v->interval_samples / span : v->last_rate;
}

static void print_header(struct prof_top *v, const struct prof_tail_stats *st, FILE *out)
{
	uint64_t start = st->start_ns;
	char clock[16] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm))
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	if (v->opts.refresh)
		fputs("\033[H\033[J", out);
	put_cell(out, v->opts.title ? v->opts.title : "prof top", 0, 0);
	char busy[32] = "";

	if (v->opts.busy_known)
		snprintf(busy, sizeof(busy), ", busy %.1f%%", 100.0 * v->opts.busy);
	fprintf(out, ": %s, %.1f s recorded, %" PRIu64 " samples (%.0f/s), %" PRIu64 " lost%s, %"
		PRIu32 " process%s alive, weight %s%s\n", clock,
		st->last_ns > start ? (double)(st->last_ns - start) / 1e9 : 0.0, st->samples,
		interval_rate(v), v->lost, busy, st->processes_alive, st->processes_alive == 1 ? "" : "es", prof_weight_name(v->opts.weight),
		v->opts.cumulative ? "" : ", decaying");
}

static void print_funcs(struct prof_top *v, FILE *out, int64_t n)
{
	enum prof_weight w = v->opts.weight;
	size_t width = 8, mwidth = 6, l, room = 0;
	char pname[96];
	int64_t i;

	for (i = 0; i < n; i++) {
		l = strlen(v->funcs[v->order[i]].name);
		width = l > width ? l : width;
		l = strlen(v->funcs[v->order[i]].module);
		mwidth = l > mwidth ? l : mwidth;
	}
	if (mwidth > 24)
		mwidth = 24;
	/* self%, total%, function, module, process: the function gives way first */
	if (v->opts.columns)
		room = v->opts.columns > 14 + mwidth + 2 + 20 + 10 ? v->opts.columns - 14 - mwidth -
			2 - 20 : 10;
	if (room && width > room)
		width = room;
	fprintf(out, "%6s %7s  %-*s  %-*s  %s\n", "self%", "total%", (int)width, "function",
		(int)mwidth, "module", "process");
	for (i = 0; i < n; i++) {
		const struct top_func *f = &v->funcs[v->order[i]];

		fprintf(out, "%5.1f%% %6.1f%%  ", pct(f->self[w], v->sum[w]),
			pct(f->total[w], v->sum[w]));
		put_cell(out, f->name, width, width);
		fputs("  ", out);
		put_cell(out, f->module, mwidth, mwidth);
		fputs("  ", out);
		if (f->nprocs > 1)
			fprintf(out, "%s (%" PRIu32 " procs)",
				proc_name(v, v->pairs[f->best_pair - 1].proc, pname, sizeof(pname)),
				f->nprocs);
		else if (f->best_pair)
			fputs(proc_name(v, v->pairs[f->best_pair - 1].proc, pname, sizeof(pname)),
			      out);
		fputc('\n', out);
	}
}

static void print_procs(struct prof_top *v, FILE *out, int64_t n)
{
	enum prof_weight w = v->opts.weight;
	size_t width = 7, l;
	char pname[96];
	int64_t i;

	for (i = 0; i < n; i++) {
		l = strlen(proc_name(v, v->order[i], pname, sizeof(pname)));
		width = l > width ? l : width;
	}
	fprintf(out, "%6s %9s  %-*s  %s\n", "self%", w == PROF_WEIGHT_CPU ? "samples" : "ms",
		(int)width, "process", "hottest function");
	for (i = 0; i < n; i++) {
		const struct top_proc *p = &v->procs[v->order[i]];

		fprintf(out, "%5.1f%% ", pct(p->self[w], v->sum[w]));
		put_amount(out, v, p->self[w]);
		fputs("  ", out);
		put_cell(out, proc_name(v, v->order[i], pname, sizeof(pname)), 0, width);
		fputs("  ", out);
		if (p->best_pair)
			put_cell(out, v->funcs[v->pairs[p->best_pair - 1].func].name,
				 v->opts.columns > width + 30 ? v->opts.columns - width - 20 : 0, 0);
		fputc('\n', out);
	}
}

static void put_json_str(FILE *out, const char *s)
{
	const unsigned char *p;

	fputc('"', out);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void json_proc(struct prof_top *v, uint32_t proc, FILE *out)
{
	const struct top_proc *p = &v->procs[proc];

	fputs("\"process\":", out);
	put_json_str(out, p->pid ? p->comm : "");
	fprintf(out, ",\"pid\":%" PRId32, p->pid);
}

static void print_json(struct prof_top *v, const struct prof_tail_stats *st, FILE *out,
		       int64_t n)
{
	uint64_t start = st->start_ns;
	enum prof_weight w = v->opts.weight;
	char busy[32] = "null";
	int64_t i;

	if (v->opts.busy_known)
		snprintf(busy, sizeof(busy), "%.4f", v->opts.busy);
	fprintf(out, "{\"time\":%.6f,\"state\":\"%s\",\"samples\":%" PRIu64 ",\"rate\":%.1f,"
		"\"lost\":%" PRIu64 ",\"busy\":%s,\"processes\":%" PRIu32 ",\"counted\":%zu,"
		"\"weight\":\"%s\",\"decaying\":%s,\"by\":\"%s\",\"rows\":[",
		st->last_ns > start ? (double)(st->last_ns - start) / 1e9 : 0.0,
		prof_tail_state_name(st->state), st->samples,
		interval_rate(v), v->lost, busy, st->processes_alive, v->nprocs,
		prof_weight_name(w), v->opts.cumulative ? "false" : "true",
		v->opts.by_process ? "process" : "function");
	for (i = 0; i < n; i++) {
		fputs(i ? ",{" : "{", out);
		if (v->opts.by_process) {
			const struct top_proc *p = &v->procs[v->order[i]];

			json_proc(v, v->order[i], out);
			fprintf(out, ",\"self\":%.3f,\"function\":", pct(p->self[w], v->sum[w]));
			put_json_str(out, p->best_pair ? v->funcs[v->pairs[p->best_pair - 1].func].name
						       : "");
		} else {
			const struct top_func *f = &v->funcs[v->order[i]];

			fputs("\"function\":", out);
			put_json_str(out, f->name);
			fputs(",\"module\":", out);
			put_json_str(out, f->module);
			fprintf(out, ",\"self\":%.3f,\"total\":%.3f,", pct(f->self[w], v->sum[w]),
				pct(f->total[w], v->sum[w]));
			if (f->best_pair)
				json_proc(v, v->pairs[f->best_pair - 1].proc, out);
			else
				fputs("\"process\":\"\",\"pid\":0", out);
			fprintf(out, ",\"procs\":%" PRIu32, f->nprocs);
		}
		fputc('}', out);
	}
	fputs("]}\n", out);
}

static void scale(weights x, double k)
{
	size_t i;

	for (i = 0; i < WEIGHT_COUNT; i++)
		x[i] *= k;
}

static void decay(struct prof_top *v)
{
	size_t i;

	for (i = 0; i < v->nfuncs; i++) {
		scale(v->funcs[i].self, DECAY);
		scale(v->funcs[i].total, DECAY);
	}
	for (i = 0; i < v->nprocs; i++)
		scale(v->procs[i].self, DECAY);
	for (i = 0; i < v->npairs; i++) {
		scale(v->pairs[i].self, DECAY);
		scale(v->pairs[i].total, DECAY);
	}
	scale(v->sum, DECAY);
}

int prof_top_print(struct prof_top *v, struct prof_tail *t, const char *note, FILE *out)
{
	SIZED(prof_tail_stats, st);
	int64_t n;
	int r;

	if (!v || !t || (v->t && v->t != t))
		return error_setx(-EINVAL, "top view: another tail");
	v->t = t;
	if (!prof_tail_spool(t))
		return 0;
	r = follow_spool(v, t);
	if (r < 0)
		return r;
	prof_tail_stats(t, &st);
	refresh_names(v);
	attribute(v);
	n = rank(v);
	if (n < 0)
		return (int)n;
	errno = 0;
	if (v->opts.format == PROF_TAIL_FORMAT_JSON) {
		print_json(v, &st, out, n);
	} else {
		print_header(v, &st, out);
		if (v->opts.by_process)
			print_procs(v, out, n);
		else
			print_funcs(v, out, n);
		if (note && *note)
			fprintf(out, "%s\n", note);
		if (!v->opts.refresh)
			fputc('\n', out);
	}
	if (fflush(out) || ferror(out)) {
		int e = errno;

		clearerr(out);
		return error_set(e > 0 ? -e : -EIO, "cannot write the output");
	}
	return 0;
}

/* Whether W is noise in every weight, whichever a key switches to. */
static bool noise(const struct prof_top *v, const weights w)
{
	size_t k;

	for (k = 0; k < WEIGHT_COUNT; k++)
		if (w[k] > v->sum[k] * SOME_SHARE && w[k] > 0)
			return false;
	return true;
}

/*
 * Forget the (function, process) pairs and the processes that decayed to
 * noise in every weight: no view shows them again, and a machine that
 * starts a thousand processes a second (a build, a shell loop) would
 * otherwise grow the view by each of them, forever.  Functions stay:
 * they grow with the code that ran, not with time.  0 or -ENOMEM.
 */
static int forget_noise(struct prof_top *v)
{
	size_t i, np = 0, nq = 0;
	uint32_t *to = NULL;
	int r = 0;

	for (i = 0; i < v->npairs; i++)
		if (!noise(v, v->pairs[i].self) || !noise(v, v->pairs[i].total))
			v->pairs[np++] = v->pairs[i];
	if (v->nprocs && !(to = malloc(v->nprocs * sizeof(*to))))
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < v->nprocs; i++)
		to[i] = noise(v, v->procs[i].self) ? UINT32_MAX : 0;
	for (i = 0; i < np; i++)
		to[v->pairs[i].proc] = 0;	/* a pair kept keeps its process */
	for (i = 0; i < v->nprocs; i++)
		if (to[i] == 0) {
			to[i] = (uint32_t)nq;
			v->procs[nq++] = v->procs[i];
		}
	if (np == v->npairs && nq == v->nprocs) {
		free(to);
		return 0;
	}
	intern_release(&v->pair_ids);
	intern_release(&v->proc_ids);
	intern_release(&v->file_procs);
	for (i = 0; i < np && r == 0; i++) {
		v->pairs[i].proc = to[v->pairs[i].proc];
		r = intern_insert(&v->pair_ids, v->pairs[i].func, v->pairs[i].proc,
				  (uint32_t)i + 1);
	}
	for (i = 0; i < nq && r == 0; i++) {
		const struct top_proc *p = &v->procs[i];

		r = intern_insert(&v->proc_ids, (uint64_t)(uint32_t)p->pid, p->start,
				  (uint32_t)i + 1);
		if (r == 0 && p->id)
			r = intern_insert(&v->file_procs, p->id, 0, (uint32_t)i + 1);
	}
	free(to);
	v->npairs = np;
	v->nprocs = nq;
	return r;	/* best_pair moved with the indexes: each print's attribute() sets it */
}

int prof_top_next(struct prof_top *v)
{
	int r;

	if (!v)
		return error_setx(-EINVAL, "top view: no view");
	if (!v->opts.cumulative) {
		decay(v);
		r = forget_noise(v);
		if (r < 0)
			return r;
	}
	v->last_rate = interval_rate(v);
	v->interval_samples = 0;
	v->interval_begin_ns = v->last_ns;
	return 0;
}

void prof_top_free(struct prof_top *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->frames_cap; i++)
		free(v->frames[i].funcs);
	free(v->frames);
	for (i = 0; i < v->nfuncs; i++) {
		free(v->funcs[i].name);
		free(v->funcs[i].module);
	}
	free(v->funcs);
	strmap_release(&v->func_ids);
	intern_release(&v->proc_ids);
	intern_release(&v->file_procs);
	intern_release(&v->pair_ids);
	free(v->procs);
	free(v->pairs);
	free(v->order);
	prof_symbolizer_free(v->sym);
	free(v);
}
