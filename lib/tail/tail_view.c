/* SPDX-License-Identifier: MIT */
/*
 * tail_view.c - what prof tail and prof record --live print of a tail: a
 * top view or a JSON object per interval, or a line per sample.  Frames
 * are named once each (their inline chain, the function they end in) and
 * functions counted by id, so the work per sample is a walk of its stack
 * at most; memory grows with distinct frames and functions, not samples,
 * and an interval's counts are zeroed when printed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "strmap.h"
#include "tail_state.h"

#define DEFAULT_LIMIT 20
#define EMPTY_STACK_NAME "[empty stack]"

static const char *const format_names[TAIL_FORMAT_COUNT] = {
	[PROF_TAIL_FORMAT_TOP] = "top",
	[PROF_TAIL_FORMAT_SAMPLES] = "samples",
	[PROF_TAIL_FORMAT_JSON] = "json",
};

struct view_frame {
	char *seg;		/* its functions, outermost first, joined by ';';
				 * NULL: not named yet */
	uint32_t func;		/* the function it ends in (the innermost inlined one) */
};

struct view_func {
	char *name;
	char *module;
	uint64_t last;		/* self samples (or ns) in the current interval */
	uint64_t all;		/* and since the view began */
};

/* Off-CPU intervals and their time by state, for the header. */
struct view_offcpu {
	uint64_t intervals;
	uint64_t ns[OFFCPU_STATE_COUNT];
};

struct prof_tail_view {
	struct prof_tail_view_opts opts;
	struct prof_tail *t;
	struct prof_symbolizer *sym;
	struct view_frame *frames;	/* by frame id */
	size_t frames_cap;
	struct strmap func_ids;		/* "name\0module" -> index + 1 */
	struct view_func *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t empty_func;		/* index + 1 of "[empty stack]", 0 until needed */
	uint32_t spools;		/* the tail's spool count when last read */
	uint64_t last_samples, last_lost, all_samples, all_lost;
	uint64_t last_total, all_total;	/* the weight of what was counted */
	struct view_offcpu last_off, all_off;
	uint64_t last_begin_ns;		/* the interval starts at this sample time; 0: unknown */
	uint64_t last_end_ns;		/* the time of its last sample */
	uint32_t *path;			/* scratch: a stack's frames, leaf first */
	size_t path_cap;
	uint32_t *order;		/* scratch: functions by rank */
	size_t order_cap;
};

const char *prof_tail_format_name(unsigned format)
{
	return format < TAIL_FORMAT_COUNT ? format_names[format] : NULL;
}

int prof_tail_format_parse(const char *name)
{
	return name_parse(format_names, TAIL_FORMAT_COUNT, name, "tail format", "formats");
}

int prof_tail_view_new(const struct prof_tail_view_opts *opts, struct prof_tail_view **ret)
{
	struct prof_tail_view *v;
	int r;

	v = calloc(1, sizeof(*v));
	if (!v)
		return error_setx(-ENOMEM, "out of memory");
	r = opts_copy(&v->opts, sizeof(v->opts), opts, "tail view");
	if (r == 0 && (unsigned)v->opts.format >= TAIL_FORMAT_COUNT)
		r = error_setx(-EINVAL, "tail view: unknown format %d", (int)v->opts.format);
	if (r == 0 && v->opts.limit < 0)
		r = error_setx(-EINVAL, "tail view: negative limit");
	if (r == 0 && (unsigned)v->opts.weight >= WEIGHT_COUNT)
		r = error_setx(-EINVAL, "tail view: unknown weight %d", (int)v->opts.weight);
	if (r < 0) {
		free(v);
		return r;
	}
	if (!v->opts.limit)
		v->opts.limit = DEFAULT_LIMIT;
	*ret = v;
	return 0;
}

/* ---- naming ------------------------------------------------------------- */

/* The index + 1 of function NAME in MODULE, added on first sight. */
static int func_id(struct prof_tail_view *v, const char *name, const char *module, uint32_t *ret)
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
			struct view_func *f = &v->funcs[v->nfuncs];

			*f = (struct view_func){ .name = xstrdup(name), .module = xstrdup(module) };
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

/* NAME as a folded stack shows it: control characters and ';' as '?'. */
static void put_folded(char *dst, const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++)
		*dst++ = *p < 0x20 || *p == 0x7f || *p == ';' ? '?' : (char)*p;
	*dst = '\0';
}

static int name_frame(struct prof_tail_view *v, uint32_t frame, struct view_frame **ret)
{
	const struct prof_resolved_frame *const *rf;
	struct view_frame *vf;
	size_t n, i, len = 0, old = v->frames_cap;
	void *p = v->frames;
	char *seg;
	int r;

	if (frame >= v->frames_cap) {
		r = grow_array(&p, &v->frames_cap, (size_t)frame + 1, sizeof(*v->frames));
		v->frames = p;
		if (r < 0)
			return r;
		memset(v->frames + old, 0, (v->frames_cap - old) * sizeof(*v->frames));
	}
	vf = &v->frames[frame];
	if (vf->seg) {
		*ret = vf;
		return 0;
	}
	r = prof_symbolizer_frame_inlines(v->sym, frame, &rf, &n);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++)
		len += strlen(rf[i]->function) + 1;
	seg = malloc(len + 1);
	if (!seg)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0, len = 0; i < n; i++) {
		if (i)
			seg[len++] = ';';
		put_folded(seg + len, rf[i]->function);
		len += strlen(seg + len);
	}
	seg[len] = '\0';
	r = func_id(v, rf[n - 1]->function, rf[n - 1]->module, &vf->func);
	if (r < 0) {
		free(seg);
		return r;
	}
	vf->seg = seg;
	*ret = vf;
	return 0;
}

/* Forget every frame's name: the symbolizer may name them differently now. */
static void forget_frames(struct prof_tail_view *v)
{
	size_t i;

	for (i = 0; i < v->frames_cap; i++) {
		free(v->frames[i].seg);
		v->frames[i].seg = NULL;
	}
}

/*
 * T reads another spool now (its recorder went on in another file): its
 * frame ids are new, to be named again.  0 or -errno.
 */
static int follow_spool(struct prof_tail_view *v, struct prof_tail *t)
{
	int r = tail_follow(t, &v->spools, v->sym);

	if (r > 0)
		forget_frames(v);
	return r < 0 ? r : 0;
}

/* The frames of stack node LEAF, leaf first, into v->path: their number, or -errno. */
static int64_t stack_frames(struct prof_tail_view *v, const struct prof_spool *sp, uint32_t leaf)
{
	const struct prof_stack_node *sn;
	size_t n = 0;
	void *p;

	/* ids refer only to ids defined before them: parents are smaller, the walk ends */
	for (; leaf; leaf = sn->parent) {
		sn = prof_spool_stack(sp, leaf);
		if (!sn)
			return error_setx(-EINVAL, "stack node %u is not defined", leaf);
		p = v->path;
		if (grow_array(&p, &v->path_cap, n + 1, sizeof(*v->path)) < 0)
			return -ENOMEM;
		v->path = p;
		v->path[n++] = sn->frame;
	}
	return (int64_t)n;
}

/*
 * What TS weighs in the view: a CPU sample one (cpu) or its period (wall),
 * an interval its duration (off-cpu, wall); 0 for what the weight leaves
 * out.
 */
static uint64_t weight_of(const struct prof_tail_view *v, const struct prof_tail_sample *ts)
{
	switch (v->opts.weight) {
	case PROF_WEIGHT_CPU:
		return ts->offcpu ? 0 : 1;
	case PROF_WEIGHT_OFFCPU:
		return ts->offcpu ? ts->period : 0;
	default:
		return ts->period;
	}
}

/* ---- the samples format ------------------------------------------------- */

static void put_comm(FILE *out, const char *comm)
{
	const unsigned char *p;

	if (!*comm) {
		fputs("[unknown]", out);
		return;
	}
	for (p = (const unsigned char *)comm; *p; p++)
		fputc(*p <= 0x20 || *p == 0x7f ? '_' : (char)*p, out);
}

static void put_time(FILE *out, uint64_t t, uint64_t start)
{
	uint64_t d = t >= start ? t - start : start - t;

	fprintf(out, "%s%" PRIu64 ".%06" PRIu64, t >= start ? "" : "-", d / 1000000000u,
		d % 1000000000u / 1000u);
}

static int write_sample(struct prof_tail_view *v, const struct prof_spool *sp,
			const struct prof_tail_sample *ts, FILE *out)
{
	struct view_frame *vf;
	int64_t n;
	int r;

	n = ts->stack ? stack_frames(v, sp, ts->stack) : 0;
	if (n < 0)
		return (int)n;
	put_time(out, ts->time_ns, prof_spool_meta(sp)->mono_start_ns);
	fprintf(out, " %" PRId32 " %" PRId32 " ", ts->pid, ts->tid);
	put_comm(out, ts->comm);
	fputc(' ', out);
	if (v->opts.weight != PROF_WEIGHT_CPU)	/* time: in whole microseconds */
		fprintf(out, "%" PRIu64 " ", (ts->period + 500) / 1000);
	if (!n)
		fputs(EMPTY_STACK_NAME, out);
	while (n-- > 0) {
		r = name_frame(v, v->path[n], &vf);
		if (r < 0)
			return r;
		fputs(vf->seg, out);
		if (n)
			fputc(';', out);
	}
	fputc('\n', out);
	return 0;
}

/* ---- counting ----------------------------------------------------------- */

/*
 * Count S, of weight W: for its leaf function, or an interval's (OFFCPU)
 * for the function under its state frame, the one that waited.
 */
static int count_sample(struct prof_tail_view *v, const struct prof_spool *sp,
			const struct prof_tail_sample *s, bool offcpu, uint64_t w)
{
	const struct prof_stack_node *sn;
	struct view_frame *vf;
	uint32_t func;
	int r;

	sn = s->stack ? prof_spool_stack(sp, s->stack) : NULL;
	if (offcpu && sn && sn->parent)
		sn = prof_spool_stack(sp, sn->parent);
	if (!s->stack) {
		if (!v->empty_func && (r = func_id(v, EMPTY_STACK_NAME, "", &v->empty_func)) < 0)
			return r;
		func = v->empty_func;
	} else {
		if (!sn)
			return error_setx(-EINVAL, "stack node %u is not defined", s->stack);
		r = name_frame(v, sn->frame, &vf);
		if (r < 0)
			return r;
		func = vf->func;
	}
	v->funcs[func - 1].last += w;
	v->funcs[func - 1].all += w;
	return 0;
}

static void count_offcpu(struct view_offcpu *o, const struct prof_tail_sample *ts)
{
	o->intervals++;
	if (ts->offcpu < OFFCPU_STATE_COUNT)
		o->ns[ts->offcpu] += ts->period;
}

static int out_error(FILE *out)
{
	int e = errno;

	clearerr(out);
	return error_set(e > 0 ? -e : -EIO, "cannot write the output");
}

int prof_tail_view_add(struct prof_tail_view *v, struct prof_tail *t,
		       const struct prof_tail_batch *b, FILE *out)
{
	const struct prof_spool *sp = prof_tail_spool(t);
	size_t i;
	int r;

	if (!v || !t || !b || (v->t && v->t != t))
		return error_setx(-EINVAL, "tail view: another tail");
	v->t = t;
	v->last_lost += b->lost;
	v->all_lost += b->lost;
	r = follow_spool(v, t);
	if (r < 0)
		return r;
	if (!b->nsamples)
		return 0;
	if (!sp)
		return error_setx(-EINVAL, "tail view: samples without a spool");
	if (!v->sym && (r = meta_check_weight(prof_spool_meta(sp), v->opts.weight)) < 0)
		return r;
	if (!v->sym) {
		r = prof_tail_symbolizer(t, NULL, &v->sym);
		if (r < 0)
			return r;
	}
	if (b->symbols_added)
		forget_frames(v);
	for (i = 0; !v->last_begin_ns && i < b->nsamples; i++)
		if (!b->samples[i]->offcpu)
			v->last_begin_ns = b->samples[i]->time_ns;
	errno = 0;
	for (i = 0; i < b->nsamples; i++) {
		const struct prof_tail_sample *ts = b->samples[i];
		uint64_t w = weight_of(v, ts);

		if (ts->offcpu) {
			count_offcpu(&v->last_off, ts);
			count_offcpu(&v->all_off, ts);
		} else {
			v->last_end_ns = ts->time_ns;	/* intervals come late: not their time */
		}
		if (!w)
			continue;
		r = v->opts.format == PROF_TAIL_FORMAT_SAMPLES ? write_sample(v, sp, ts, out)
							: count_sample(v, sp, ts, ts->offcpu, w);
		if (r < 0)
			return r;
		v->last_samples++;
		v->all_samples++;
		v->last_total += w;
		v->all_total += w;
	}
	if (v->opts.format == PROF_TAIL_FORMAT_SAMPLES && (fflush(out) || ferror(out)))
		return out_error(out);
	return 0;
}

/* ---- printing ----------------------------------------------------------- */

static const struct view_func *rank_funcs;

static int by_rank(const void *a, const void *b)
{
	const struct view_func *x = &rank_funcs[*(const uint32_t *)a];
	const struct view_func *y = &rank_funcs[*(const uint32_t *)b];

	if (x->last != y->last)
		return x->last < y->last ? 1 : -1;
	if (x->all != y->all)
		return x->all < y->all ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The functions to list, best first, in v->order: their number, or -ENOMEM. */
static int64_t rank(struct prof_tail_view *v)
{
	size_t i, n = 0;
	void *p = v->order;

	if (grow_array(&p, &v->order_cap, v->nfuncs + 1, sizeof(*v->order)) < 0)
		return -ENOMEM;
	v->order = p;
	for (i = 0; i < v->nfuncs; i++)
		if (v->funcs[i].all)
			v->order[n++] = (uint32_t)i;
	rank_funcs = v->funcs;	/* qsort has no context argument */
	qsort(v->order, n, sizeof(*v->order), by_rank);
	return (int64_t)(n < (size_t)v->opts.limit ? n : (size_t)v->opts.limit);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* S with control characters as '?', as a terminal should get it. */
static void put_plain(FILE *out, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : (char)*p, out);
}

static void print_top(struct prof_tail_view *v, const struct prof_tail_stats *st,
		      uint64_t start_ns, FILE *out, int64_t n)
{
	double span = seconds(v->last_end_ns - v->last_begin_ns);
	bool time = v->opts.weight != PROF_WEIGHT_CPU;
	const char *what = v->opts.weight == PROF_WEIGHT_CPU ? "samples"
			   : v->opts.weight == PROF_WEIGHT_OFFCPU ? "intervals"
								  : "samples+intervals";
	size_t width = 8, w;
	int64_t i;

	for (i = 0; i < n; i++) {
		w = strlen(v->funcs[v->order[i]].name);
		width = w > width ? w : width;
	}
	if (v->opts.refresh)
		fputs("\033[H\033[J", out);
	fputs("prof tail: ", out);
	put_plain(out, v->opts.title ? v->opts.title : st->path);
	fprintf(out, ", %s, %.1f s recorded, %" PRIu32 " process%s and %" PRIu32
		" thread%s alive\n", prof_tail_state_name(st->state),
		st->last_ns > start_ns ? seconds(st->last_ns - start_ns) : 0.0,
		st->processes_alive, st->processes_alive == 1 ? "" : "es", st->threads_alive,
		st->threads_alive == 1 ? "" : "s");
	fprintf(out, "last %.1f s: %" PRIu64 " %s (%.0f/s), %" PRIu64 " lost; all: %" PRIu64
		" %s, %" PRIu64 " lost\n", span, v->last_samples, what,
		span > 0 ? (double)v->last_samples / span : 0.0, v->last_lost, v->all_samples,
		what, v->all_lost);
	if (prof_spool_meta(prof_tail_spool(v->t))->flags & PROF_META_OFFCPU)
		fprintf(out, "off-CPU last: %.3f s blocked, %.3f s runnable (%" PRIu64 " intervals); "
			"all: %.3f s blocked, %.3f s runnable\n",
			seconds(v->last_off.ns[PROF_OFFCPU_STATE_BLOCKED]),
			seconds(v->last_off.ns[PROF_OFFCPU_STATE_RUNNABLE]), v->last_off.intervals,
			seconds(v->all_off.ns[PROF_OFFCPU_STATE_BLOCKED]),
			seconds(v->all_off.ns[PROF_OFFCPU_STATE_RUNNABLE]));
	fprintf(out, "%9s %6s %9s %6s  %-*s  %s\n", time ? "last ms" : "last", "self%",
		time ? "all ms" : "all", "self%", (int)width, "function", "module");
	for (i = 0; i < n; i++) {
		const struct view_func *f = &v->funcs[v->order[i]];

		if (time)
			fprintf(out, "%9.1f %5.1f%% %9.1f %5.1f%%  ", (double)f->last / 1e6,
				pct(f->last, v->last_total), (double)f->all / 1e6,
				pct(f->all, v->all_total));
		else
			fprintf(out, "%9" PRIu64 " %5.1f%% %9" PRIu64 " %5.1f%%  ", f->last,
				pct(f->last, v->last_total), f->all, pct(f->all, v->all_total));
		put_plain(out, f->name);
		fprintf(out, "%*s  ", (int)(width - strlen(f->name)), "");
		put_plain(out, f->module);
		fputc('\n', out);
	}
	if (!v->opts.refresh)
		fputc('\n', out);
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

static void print_json(struct prof_tail_view *v, const struct prof_tail_stats *st,
		       uint64_t start_ns, FILE *out, int64_t n)
{
	double span = seconds(v->last_end_ns - v->last_begin_ns);
	int64_t i;

	fprintf(out, "{\"time\":%.6f,\"state\":\"%s\",", st->last_ns > start_ns ?
		seconds(st->last_ns - start_ns) : 0.0, prof_tail_state_name(st->state));
	fprintf(out, "\"interval\":{\"seconds\":%.6f,\"samples\":%" PRIu64 ",\"rate\":%.1f,"
		"\"lost\":%" PRIu64 "},", span, v->last_samples,
		span > 0 ? (double)v->last_samples / span : 0.0, v->last_lost);
	fprintf(out, "\"all\":{\"samples\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"skipped\":%" PRIu64
		"},", v->all_samples, v->all_lost, st->skipped);
	if (prof_spool_meta(prof_tail_spool(v->t))->flags & PROF_META_OFFCPU)
		fprintf(out, "\"offcpu\":{\"interval\":{\"intervals\":%" PRIu64 ",\"blocked_ns\":%"
			PRIu64 ",\"runnable_ns\":%" PRIu64 "},\"all\":{\"intervals\":%" PRIu64
			",\"blocked_ns\":%" PRIu64 ",\"runnable_ns\":%" PRIu64 "}},",
			v->last_off.intervals, v->last_off.ns[PROF_OFFCPU_STATE_BLOCKED],
			v->last_off.ns[PROF_OFFCPU_STATE_RUNNABLE], v->all_off.intervals,
			v->all_off.ns[PROF_OFFCPU_STATE_BLOCKED], v->all_off.ns[PROF_OFFCPU_STATE_RUNNABLE]);
	fprintf(out, "\"weight\":\"%s\",\"unit\":\"%s\",", prof_weight_name(v->opts.weight),
		v->opts.weight == PROF_WEIGHT_CPU ? "samples" : "ns");
	fprintf(out, "\"processes\":%" PRIu32 ",\"threads\":%" PRIu32 ",\"functions\":[",
		st->processes_alive, st->threads_alive);
	for (i = 0; i < n; i++) {
		const struct view_func *f = &v->funcs[v->order[i]];

		fputs(i ? ",{\"function\":" : "{\"function\":", out);
		put_json_str(out, f->name);
		fputs(",\"module\":", out);
		put_json_str(out, f->module);
		fprintf(out, ",\"last\":%" PRIu64 ",\"all\":%" PRIu64 "}", f->last, f->all);
	}
	fputs("]}\n", out);
}

int prof_tail_view_print(struct prof_tail_view *v, struct prof_tail *t, FILE *out)
{
	const struct prof_spool *sp = prof_tail_spool(t);
	SIZED(prof_tail_stats, st);
	int64_t n;
	size_t i;

	if (!v || !t || (v->t && v->t != t))
		return error_setx(-EINVAL, "tail view: another tail");
	if (!sp || v->opts.format == PROF_TAIL_FORMAT_SAMPLES)
		return 0;
	v->t = t;
	prof_tail_stats(t, &st);
	n = rank(v);
	if (n < 0)
		return (int)n;
	errno = 0;
	if (v->opts.format == PROF_TAIL_FORMAT_TOP)
		print_top(v, &st, st.start_ns, out, n);
	else
		print_json(v, &st, st.start_ns, out, n);
	for (i = 0; i < v->nfuncs; i++)
		v->funcs[i].last = 0;
	v->last_samples = v->last_lost = v->last_total = 0;
	memset(&v->last_off, 0, sizeof(v->last_off));
	v->last_begin_ns = v->last_end_ns;
	if (fflush(out) || ferror(out))
		return out_error(out);
	return 0;
}

void prof_tail_view_free(struct prof_tail_view *v)
{
	size_t i;

	if (!v)
		return;
	forget_frames(v);
	free(v->frames);
	for (i = 0; i < v->nfuncs; i++) {
		free(v->funcs[i].name);
		free(v->funcs[i].module);
	}
	free(v->funcs);
	strmap_release(&v->func_ids);
	free(v->path);
	free(v->order);
	prof_symbolizer_free(v->sym);
	free(v);
}
