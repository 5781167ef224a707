/* SPDX-License-Identifier: MIT */
/*
 * output_html.c - the viewer: one HTML page that needs nothing else, its
 * data, style and script (viewer.css, viewer.js, embedded at build time)
 * inside it, for a browser to open from file://.  The page aggregates in
 * the browser, so that a time range, a thread or a transform chosen there
 * re-aggregates every view: what is written here is every sample and
 * off-CPU interval kept, not a tree.  Compactly: strings, functions,
 * frames (a function at a source line) and stacks (frame called from
 * stack) are tables that refer to each other by index; each thread's
 * samples and intervals are columns of numbers, times delta-coded in the
 * spool's time unit.  Functions are told apart as the tree view tells
 * them (name, module, inlined or not), so that the page's numbers are the
 * report's.  All of it is JSON (prof-viewer/1, a key per table), gzip'd
 * and in base64 in a <script> of data, which the page decompresses with
 * the browser's own DecompressionStream.  The page's
 * Content-Security-Policy forbids every fetch.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "report.h"
#include "strmap.h"

#define VIEWER_FORMAT "prof-viewer/1"

/* The script and the style, made from viewer.js and viewer.css by the Makefile. */
static const char viewer_js[] =
#include "viewer_js.h"
	;
static const char viewer_css[] =
#include "viewer_css.h"
	;

/* A sample or an interval, as read. */
struct v_event {
	uint64_t time_ns;
	uint64_t ns;		/* a sample's period, an interval's duration */
	uint32_t thread;	/* the page's thread index */
	uint32_t stack;		/* the spool's stack node, then the page's stack index */
	uint8_t state;		/* 0: a CPU sample; else enum prof_offcpu_state */
};

struct v_func {
	char *name;		/* owned */
	uint32_t module;	/* string index */
	uint32_t file;		/* string index + 1; 0 unknown */
	uint8_t kind;		/* enum agg_kind, inlined or not */
	bool inlined;
};

struct v_frame {
	uint32_t func;
	uint32_t line;		/* 0 unknown */
};

/* A stack, in depth-first order: its parent is the one before, or one of its callers. */
struct v_stack {
	uint32_t up;		/* how many calls up from the stack before its parent is */
	uint32_t frame;
};

struct v_thread {
	uint32_t id;		/* spool thread id */
	int32_t tid;
	uint32_t process;	/* page process index */
	uint32_t name;		/* string index: its name at the end */
};

struct v_process {
	uint32_t id;		/* spool process id */
	int32_t pid;
	uint32_t name;		/* string index: its comm at the end */
};

/* What one spool (or several files of one recording) gives the page. */
struct v_side {
	char *title;
	char *header;			/* top's header, as text */
	char **warnings;
	size_t nwarnings, warnings_cap;
	struct prof_meta meta;		/* event a copy, owned; argv, pids below; the
					 * other strings NULL */
	char **argv;
	int32_t *pids;
	struct prof_counters counters;
	bool has_counters;
	uint64_t spool_samples;		/* samples read, for a spool without a trailer */
	unsigned weights;		/* 1 << enum prof_weight: those the page offers */
	enum prof_weight weight;	/* the one it shows first */
	uint64_t unit;			/* ns per unit of the times written */
	uint64_t start_ns;		/* time 0, as --time counts */
	uint64_t kept;			/* samples (or intervals) of that weight */
	struct strtab strings;		/* modules, files, threads', processes' names */
	struct v_func *funcs;
	size_t nfuncs, funcs_cap;
	struct strmap func_ids;
	struct v_frame *frames;
	size_t nframes;
	struct v_stack *stacks;
	size_t nstacks;
	struct v_thread *threads;
	size_t nthreads, threads_cap;
	struct intern_map thread_ids;	/* spool thread id -> index + 1 */
	struct v_process *processes;
	size_t nprocesses, processes_cap;
	struct intern_map process_ids;	/* spool process id -> index + 1 */
	struct v_event *events;
	size_t nevents, events_cap;
};

struct prof_viewer {
	bool diff;
	struct v_side *sides[2];
	size_t nsides;
};

static void side_free(struct v_side *s)
{
	size_t i;

	if (!s)
		return;
	free(s->title);
	free(s->header);
	for (i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	for (i = 0; i < s->meta.argc; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s->pids);
	free((char *)s->meta.event);
	strtab_release(&s->strings);
	for (i = 0; i < s->nfuncs; i++)
		free(s->funcs[i].name);
	free(s->funcs);
	strmap_release(&s->func_ids);
	free(s->frames);
	free(s->stacks);
	free(s->threads);
	intern_release(&s->thread_ids);
	free(s->processes);
	intern_release(&s->process_ids);
	free(s->events);
	free(s);
}

/* The page's process of spool process ID, added if new. */
static int64_t process_of(struct v_side *s, const struct prof_spool *sp, uint32_t id)
{
	const struct prof_process *p = prof_spool_process(sp, id);
	uint32_t have = intern_find(&s->process_ids, id, 0);
	void *v = s->processes;

	if (have)
		return have - 1;
	if (grow_array(&v, &s->processes_cap, s->nprocesses + 1, sizeof(*s->processes)) < 0)
		return -ENOMEM;
	s->processes = v;
	s->processes[s->nprocesses] = (struct v_process){ .id = id, .pid = p ? p->pid : 0 };
	if (intern_insert(&s->process_ids, id, 0, (uint32_t)s->nprocesses + 1) < 0)
		return -ENOMEM;
	return (int64_t)s->nprocesses++;
}

/* The page's thread of spool thread ID, added (with its process) if new. */
static int64_t thread_of(struct v_side *s, const struct prof_spool *sp, uint32_t id)
{
	const struct prof_thread *t = prof_spool_thread(sp, id);
	uint32_t have = intern_find(&s->thread_ids, id, 0);
	void *v = s->threads;
	int64_t p;

	if (have)
		return have - 1;
	p = process_of(s, sp, t ? t->process : 0);
	if (p < 0)
		return p;
	if (grow_array(&v, &s->threads_cap, s->nthreads + 1, sizeof(*s->threads)) < 0)
		return -ENOMEM;
	s->threads = v;
	s->threads[s->nthreads] = (struct v_thread){ .id = id, .tid = t ? t->tid : 0,
						     .process = (uint32_t)p };
	if (intern_insert(&s->thread_ids, id, 0, (uint32_t)s->nthreads + 1) < 0)
		return -ENOMEM;
	return (int64_t)s->nthreads++;
}

static int add_event(struct v_side *s, const struct prof_spool *sp, const struct v_event *e)
{
	int64_t t = thread_of(s, sp, e->thread);
	void *v = s->events;

	if (t < 0)
		return (int)t;
	if (grow_array(&v, &s->events_cap, s->nevents + 1, sizeof(*s->events)) < 0)
		return -ENOMEM;
	s->events = v;
	s->events[s->nevents] = *e;
	s->events[s->nevents++].thread = (uint32_t)t;
	return 0;
}

struct read_ctx {
	struct v_side *s;
	const struct prof_spool *sp;
	struct prof_profile *p;		/* what F weighs, for the header */
	bool started;
};

/* A sample or interval kept: one more event, and counted in the header's profile. */
static int read_event(const struct report_event *e, void *ctx)
{
	struct read_ctx *c = ctx;
	int r;

	/* time 0 as the filter counts it: the recording's start, else the first */
	if (!c->started) {
		c->s->start_ns = c->s->meta.mono_start_ns;
		if (!c->s->start_ns || c->s->start_ns > e->s.time_ns)
			c->s->start_ns = e->s.time_ns;
		c->started = true;
	}
	r = add_event(c->s, c->sp, &(struct v_event){
		.time_ns = e->s.time_ns, .ns = e->s.period, .thread = e->s.thread,
		.stack = e->s.stack, .state = e->offcpu ? e->offcpu->state : 0 });
	return r < 0 ? r : profile_add_event(c->p, c->sp, e);
}

/* The page's function of agg function F, added if new: by name, module and inlining. */
static int64_t func_of(struct v_side *s, const struct agg_func *f)
{
	struct agg_func outlined = *f;
	int64_t module, file = -1;
	char *name;
	size_t len;
	char *key;
	uint32_t id;
	void *v;
	int n;

	n = asprintf(&key, "%s%c%s%c%c", f->name, 0, f->module, 0, f->inlined ? 'i' : 'f');
	if (n < 0)
		return error_setx(-ENOMEM, "out of memory");
	len = (size_t)n;
	id = strmap_find(&s->func_ids, key, len);
	if (id) {
		free(key);
		return id - 1;
	}
	/* a name is mostly one function's: written in its row, not interned */
	name = strdup(f->name);
	module = strtab_intern(&s->strings, f->module);
	if (module >= 0 && f->file)
		file = strtab_intern(&s->strings, f->file);
	v = s->funcs;
	if (!name || module < 0 || (f->file && file < 0) ||
	    grow_array(&v, &s->funcs_cap, s->nfuncs + 1, sizeof(*s->funcs)) < 0 ||
	    strmap_insert(&s->func_ids, key, len, (uint32_t)s->nfuncs + 1) < 0) {
		free(name);
		free(key);
		return error_setx(-ENOMEM, "out of memory");
	}
	free(key);
	s->funcs = v;
	/* the colour of where it runs; inlined is a mark of its own */
	outlined.inlined = false;
	s->funcs[s->nfuncs] = (struct v_func){
		.name = name, .module = (uint32_t)module,
		.file = f->file ? (uint32_t)file + 1 : 0,
		.kind = (uint8_t)agg_func_kind(&outlined), .inlined = f->inlined,
	};
	return (int64_t)s->nfuncs++;
}

/*
 * The tables of the stacks the events are on: the call tree of functions
 * at source lines is the stack table (a node is a frame called from its
 * parent), in depth-first order, so that a node's parent is the node
 * before it or one of that one's callers (a small number up: mostly 0);
 * its functions at lines are the frame table.  Each event's spool stack
 * becomes its node.
 */
static int build_tables(struct v_side *s, const struct prof_spool *sp,
			struct prof_symbolizer *sym)
{
	uint32_t node = 1, n, *order = NULL, depth = 0;
	struct agg a;
	size_t i;
	int64_t fn;
	int r;

	r = agg_init(&a, sp, s->weight, 0, AGG_INLINED | AGG_LINES);
	for (i = 0; i < s->nevents && r == 0; i++) {
		r = agg_place(&a, sp, sym, s->events[i].stack, &node);
		s->events[i].stack = node;
	}
	if (r == 0 && a.nfuncs > 1 &&
	    (!(s->frames = calloc(a.nfuncs - 1, sizeof(*s->frames))) ||
	     !(s->stacks = calloc(a.nnodes - 1, sizeof(*s->stacks))) ||
	     !(order = calloc(a.nnodes, sizeof(*order)))))
		r = error_setx(-ENOMEM, "out of memory");
	for (i = 1; i < a.nfuncs && r == 0; i++) {
		fn = func_of(s, &a.funcs[i]);
		if (fn < 0)
			r = (int)fn;
		else
			s->frames[s->nframes++] = (struct v_frame){ (uint32_t)fn, a.funcs[i].line };
	}
	if (r == 0 && order)
		r = agg_sort_children(&a, AGG_BY_NAME);
	for (n = r == 0 && order ? agg_next(&a, 0, false) : 0; n; n = agg_next(&a, n, false)) {
		order[n] = (uint32_t)s->nstacks;
		s->stacks[s->nstacks++] = (struct v_stack){ depth + 1 - a.nodes[n].depth,
							    a.nodes[n].func - 1 };
		depth = a.nodes[n].depth;
	}
	for (i = 0; i < s->nevents && order; i++)
		s->events[i].stack = order[s->events[i].stack];
	free(order);
	agg_release(&a);
	return r;
}

/* Names of threads and processes as the spool has them now, at the end. */
static int name_threads(struct v_side *s, const struct prof_spool *sp)
{
	int64_t n;
	size_t i;

	for (i = 0; i < s->nthreads; i++) {
		const struct prof_thread *t = prof_spool_thread(sp, s->threads[i].id);

		n = strtab_intern(&s->strings, t && t->name && *t->name ? t->name : "[unknown]");
		if (n < 0)
			return (int)n;
		s->threads[i].name = (uint32_t)n;
	}
	for (i = 0; i < s->nprocesses; i++) {
		const struct prof_process *p = prof_spool_process(sp, s->processes[i].id);

		n = strtab_intern(&s->strings, p && p->comm && *p->comm ? p->comm : "[unknown]");
		if (n < 0)
			return (int)n;
		s->processes[i].name = (uint32_t)n;
	}
	return 0;
}

static void add_warning(const char *msg, void *ctx)
{
	struct v_side *s = ctx;
	void *v = s->warnings;
	char *copy;

	if (grow_array(&v, &s->warnings_cap, s->nwarnings + 1, sizeof(*s->warnings)) < 0)
		return;
	s->warnings = v;
	copy = strdup(msg);
	if (copy)
		s->warnings[s->nwarnings++] = copy;
}

/* The recording's metadata, kept when the spool is gone. */
static int copy_meta(struct v_side *s, const struct prof_spool *sp)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	size_t i;

	s->meta = *m;
	s->meta.argc = 0;
	s->meta.event = strdup(m->event ? m->event : "");
	if (!s->meta.event)
		return error_setx(-ENOMEM, "out of memory");
	if (m->argc && !(s->argv = calloc(m->argc, sizeof(*s->argv))))
		return error_setx(-ENOMEM, "out of memory");
	for (; s->meta.argc < m->argc; s->meta.argc++)
		if (!(s->argv[s->meta.argc] = strdup(m->argv[s->meta.argc])))
			return error_setx(-ENOMEM, "out of memory");
	if (m->npids && !(s->pids = calloc(m->npids, sizeof(*s->pids))))
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < m->npids; i++)
		s->pids[i] = m->pids[i];
	/* only what is written out is kept: the rest is the spool's */
	s->meta.argv = NULL;
	s->meta.pids = NULL;
	s->meta.hostname = s->meta.kernel_release = s->meta.arch = s->meta.prof_version = NULL;
	return 0;
}

/* The counters, once the spool is read: its trailer's, or the samples read. */
static void copy_counters(struct v_side *s, const struct prof_spool *sp)
{
	const struct prof_counters *c = prof_spool_counters(sp);
	SIZED(prof_spool_counts, n);

	if (c) {
		s->counters = *c;
		s->has_counters = true;
	}
	prof_spool_counts(sp, &n);
	s->spool_samples = n.samples;
}

/* The header of top, as text. */
static int capture_header(struct v_side *s, const struct prof_spool *sp,
			  const struct prof_profile *p, struct prof_symbolizer *sym)
{
	size_t len;
	FILE *mem = open_memstream(&s->header, &len);
	int r;

	if (!mem)
		return error_setx(-ENOMEM, "out of memory");
	r = report_print_header(mem, sp, p, sym, s->title);
	if (fclose(mem) == EOF && r == 0)
		r = error_setx(-ENOMEM, "out of memory");
	return r;
}

/*
 * The unit the times are written in: the spool's, unless a time or a
 * duration is not a whole number of them (then ns).
 */
static void choose_unit(struct v_side *s)
{
	size_t i;

	s->unit = s->meta.time_unit_ns ? s->meta.time_unit_ns : 1000;
	for (i = 0; i < s->nevents; i++)
		if (s->events[i].time_ns % s->unit ||
		    (s->events[i].state && s->events[i].ns % s->unit)) {
			s->unit = 1;
			return;
		}
}

/* By thread, the samples before the intervals, each by time. */
static int by_track(const void *a, const void *b)
{
	const struct v_event *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (!x->state != !y->state)
		return x->state ? 1 : -1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int prof_viewer_new(const struct prof_viewer_opts *opts, struct prof_viewer **ret)
{
	struct prof_viewer_opts o;
	struct prof_viewer *v;
	int r;

	if (!ret)
		return error_setx(-EINVAL, "no viewer to return");
	r = opts_copy(&o, sizeof(o), opts, "viewer");
	if (r < 0)
		return r;
	v = calloc(1, sizeof(*v));
	if (!v)
		return error_setx(-ENOMEM, "out of memory");
	v->diff = o.diff;
	*ret = v;
	return 0;
}

int prof_viewer_add(struct prof_viewer *v, struct prof_spool *sp, struct prof_symbolizer *sym,
		    struct prof_filter *f, const char *title, uint64_t *ret_samples)
{
	struct prof_profile *p = NULL;
	struct v_side *s;
	enum prof_weight w;
	int r;

	if (!v || !sp || !sym)
		return error_setx(-EINVAL, "nothing to add to the viewer");
	if (v->nsides == (v->diff ? 2u : 1u))
		return error_setx(-EINVAL, "the viewer has all its spools: %s",
				  v->diff ? "a base and a new one" : "one");
	s = calloc(1, sizeof(*s));
	if (!s)
		return error_setx(-ENOMEM, "out of memory");
	intern_init(&s->thread_ids);
	intern_init(&s->process_ids);
	s->weight = prof_filter_weight(f);
	r = copy_meta(s, sp);
	if (r == 0 && !(s->title = strdup(title ? title : "")))
		r = error_setx(-ENOMEM, "out of memory");
	if (r == 0)
		r = prof_profile_new(&p);
	if (r == 0)
		r = prof_profile_weigh(p, s->weight);
	/* every sample and interval kept, whatever F weighs: the page switches weights */
	if (r == 0)
		r = filter_every_event(sp, sym, f, read_event, &(struct read_ctx){ s, sp, p, false });
	/* the weights of the switch: those the recording allows, cpu always */
	for (w = PROF_WEIGHT_CPU; r == 0 && w <= PROF_WEIGHT_WALL; w++) {
		prof_errmsg_clear();
		if (w == PROF_WEIGHT_CPU || prof_spool_check_weight(sp, w) == 0)
			s->weights |= 1u << w;
	}
	prof_errmsg_clear();
	if (r == 0)
		r = build_tables(s, sp, sym);
	if (r == 0)
		r = name_threads(s, sp);
	if (r == 0)
		r = capture_header(s, sp, p, sym);
	if (r == 0) {
		prof_report_warnings(sp, s->title, add_warning, s);
		copy_counters(s, sp);
		choose_unit(s);
		if (s->nevents)
			qsort(s->events, s->nevents, sizeof(*s->events), by_track);
		s->kept = prof_profile_samples(p);
		if (ret_samples)
			*ret_samples = s->kept;
		v->sides[v->nsides++] = s;
	} else {
		side_free(s);
	}
	prof_profile_free(p);
	return r;
}

/* ---- writing ------------------------------------------------------------ */

static void put_str(FILE *out, const char *s)
{
	report_put_json_str(out, s);
}

/* S as HTML text: escaped, control characters as '?'. */
static void put_html(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if ((unsigned char)*s < 0x20)
			fputc('?', out);
		else
			fputc(*s, out);
	}
}

static void put_facts(FILE *out, const struct v_side *s)
{
	const struct prof_counters *c = &s->counters;
	const struct prof_meta *m = &s->meta;
	time_t t = (time_t)(m->wall_start_ns / 1000000000u);
	uint64_t lost_switch, lost;
	char started[64] = "";
	struct tm tm;
	size_t i;

	if (m->wall_start_ns && gmtime_r(&t, &tm))
		strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fputs("{\"argv\":[", out);
	for (i = 0; i < m->argc; i++) {
		fputs(i ? "," : "", out);
		put_str(out, s->argv[i]);
	}
	fputs("],\"pids\":[", out);
	for (i = 0; i < m->npids; i++)
		fprintf(out, "%s%" PRId32, i ? "," : "", s->pids[i]);
	fputs("],\"started\":", out);
	put_str(out, started);
	fputs(",\"event\":", out);
	put_str(out, m->event);
	fprintf(out, ",\"freq_hz\":%" PRIu64 ",\"period\":%" PRIu64 ",\"kernel\":%s,\"offcpu\":%s,"
		"\"system\":%s,\"trailer\":%s", m->freq_hz, m->period,
		m->flags & PROF_META_KERNEL ? "true" : "false",
		m->flags & PROF_META_OFFCPU ? "true" : "false",
		m->flags & PROF_META_SYSTEM ? "true" : "false", s->has_counters ? "true" : "false");
	if (!s->has_counters) {
		fprintf(out, ",\"samples\":%" PRIu64 "}", s->spool_samples);
		return;
	}
	/* as the header counts them: switch events apart */
	lost_switch = c->lost[PROF_LOST_SWITCH_SAMPLES] + c->lost[PROF_LOST_SWITCH_RECORDS];
	lost = prof_counters_lost_total(c) - lost_switch;
	fprintf(out, ",\"duration_ns\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"delivered\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"lost_percent\":%.2f,\"complete_percent\":%.1f",
		c->mono_end_ns >= m->mono_start_ns ? c->mono_end_ns - m->mono_start_ns : 0,
		c->samples, c->sample_events, lost, report_pct(lost, c->samples + lost),
		report_pct(c->samples - c->truncated_stacks - c->empty_stacks, c->samples));
	if (m->flags & PROF_META_OFFCPU)
		fprintf(out, ",\"offcpu_intervals\":%" PRIu64 ",\"offcpu_lost\":%" PRIu64,
			c->offcpu_intervals, lost_switch);
	fputs("}", out);
}

/* "KEY":[...], the values GET of rows i_ = 0..N-1, as a JSON array. */
#define PUT_COLUMN(out, key, n, get)                                            \
	do {                                                                    \
		size_t i_;                                                      \
		fputs("\"" key "\":[", out);                                    \
		for (i_ = 0; i_ < (n); i_++)                                    \
			fprintf(out, "%s%" PRId64, i_ ? "," : "", (int64_t)(get)); \
		fputs("]", out);                                                \
	} while (0)

static void put_tables(FILE *out, const struct v_side *s)
{
	size_t i;

	fputs(",\n\"strings\":[", out);
	for (i = 0; i < s->strings.n; i++) {
		fputs(i ? "," : "", out);
		put_str(out, s->strings.v[i]);
	}
	fputs("],\n\"funcs\":{\"name\":[", out);
	for (i = 0; i < s->nfuncs; i++) {
		fputs(i ? "," : "", out);
		put_str(out, s->funcs[i].name);
	}
	fputs("],", out);
	PUT_COLUMN(out, "module", s->nfuncs, s->funcs[i_].module);
	fputs(",", out);
	PUT_COLUMN(out, "file", s->nfuncs, s->funcs[i_].file);
	fputs(",", out);
	/* enum agg_kind, + 8 for an inlined function */
	PUT_COLUMN(out, "kind", s->nfuncs, s->funcs[i_].kind + (s->funcs[i_].inlined ? 8 : 0));
	fputs("},\n\"frames\":{", out);
	PUT_COLUMN(out, "func", s->nframes, s->frames[i_].func);
	fputs(",", out);
	PUT_COLUMN(out, "line", s->nframes, s->frames[i_].line);
	fputs("},\n\"stacks\":{", out);
	PUT_COLUMN(out, "up", s->nstacks, s->stacks[i_].up);
	fputs(",", out);
	PUT_COLUMN(out, "frame", s->nstacks, s->stacks[i_].frame);
	fputs("},\n\"processes\":{", out);
	PUT_COLUMN(out, "pid", s->nprocesses, s->processes[i_].pid);
	fputs(",", out);
	PUT_COLUMN(out, "name", s->nprocesses, s->processes[i_].name);
	fputs("},\n\"threads\":{", out);
	PUT_COLUMN(out, "tid", s->nthreads, s->threads[i_].tid);
	fputs(",", out);
	PUT_COLUMN(out, "process", s->nthreads, s->threads[i_].process);
	fputs(",", out);
	PUT_COLUMN(out, "name", s->nthreads, s->threads[i_].name);
	fputs("}", out);
}

/* What a column of a track holds of each event. */
enum v_col { COL_TIME, COL_STACK, COL_NS, COL_DURATION, COL_STATE };

static int64_t col_value(const struct v_side *s, const struct v_event *e, enum v_col c)
{
	switch (c) {
	case COL_TIME:
		return (int64_t)(e->time_ns / s->unit);
	case COL_STACK:
		return e->stack;
	case COL_NS:
		return (int64_t)e->ns;
	case COL_DURATION:
		return (int64_t)(e->ns / s->unit);
	default:
		return e->state;
	}
}

/* "KEY":[...]: column C of E[0..N), each value less the one before it if DELTA. */
static void put_col(FILE *out, const char *key, const struct v_side *s, const struct v_event *e,
		    size_t n, enum v_col c, bool delta)
{
	int64_t v, last = 0;
	size_t i;

	fprintf(out, ",\"%s\":[", key);
	for (i = 0; i < n; i++, last = v) {
		v = col_value(s, &e[i], c);
		fprintf(out, "%s%" PRId64, i ? "," : "", delta ? v - last : v);
	}
	fputs("]", out);
}

/*
 * One thread's events E[0..N): its samples (times, stacks, and periods
 * where wall time is offered), then its intervals (starts, durations,
 * stacks, states).  Times and stacks are deltas, the first from 0: times
 * grow a little from sample to sample, and a thread's next stack is often
 * near its last in the depth-first order.
 */
static void put_track(FILE *out, const struct v_side *s, const struct v_event *e, size_t n)
{
	size_t k = 0;

	while (k < n && !e[k].state)
		k++;
	fprintf(out, "{\"thread\":%" PRIu32, e[0].thread);
	put_col(out, "t", s, e, k, COL_TIME, true);
	put_col(out, "s", s, e, k, COL_STACK, true);
	if (s->weights & (1u << PROF_WEIGHT_WALL))
		put_col(out, "p", s, e, k, COL_NS, true);
	put_col(out, "ot", s, e + k, n - k, COL_TIME, true);
	put_col(out, "od", s, e + k, n - k, COL_DURATION, false);
	put_col(out, "os", s, e + k, n - k, COL_STACK, true);
	put_col(out, "ok", s, e + k, n - k, COL_STATE, false);
	fputs("}", out);
}

static void put_side(FILE *out, const struct v_side *s)
{
	size_t i, j, k;
	bool first = true;

	fputs("{\"title\":", out);
	put_str(out, s->title);
	fputs(",\n\"header\":", out);
	put_str(out, s->header);
	fputs(",\n\"warnings\":[", out);
	for (i = 0; i < s->nwarnings; i++) {
		fputs(i ? "," : "", out);
		put_str(out, s->warnings[i]);
	}
	fputs("],\n\"facts\":", out);
	put_facts(out, s);
	fputs(",\n\"weights\":[", out);
	for (i = 0, k = 0; i < WEIGHT_COUNT; i++)
		if (s->weights & (1u << i))
			fprintf(out, "%s\"%s\"", k++ ? "," : "", prof_weight_name((unsigned)i));
	fprintf(out, "],\"weight\":\"%s\",\"kept\":%" PRIu64 ",\"unit_ns\":%" PRIu64
		",\"start_ns\":%" PRIu64, prof_weight_name(s->weight), s->kept, s->unit,
		s->start_ns);
	put_tables(out, s);
	fputs(",\n\"tracks\":[", out);
	for (i = 0; i < s->nevents; i = j) {
		for (j = i; j < s->nevents && s->events[j].thread == s->events[i].thread; j++)
			;
		fputs(first ? "\n" : ",\n", out);
		first = false;
		put_track(out, s, &s->events[i], j - i);
	}
	fputs("]}", out);
}

/* LEN bytes at P in base64, in lines of 76 characters. */
static void put_base64(FILE *out, const unsigned char *p, size_t len)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char quad[4];
	size_t i, k;

	for (i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < len ? p[i + 2] : 0);

		for (k = 0; k < 4; k++)
			quad[k] = digits[(v >> (18 - 6 * k)) & 63];
		if (i + 1 >= len)
			quad[2] = '=';
		if (i + 2 >= len)
			quad[3] = '=';
		fwrite(quad, 1, 4, out);
		if ((i / 3 + 1) % 19 == 0)
			fputc('\n', out);
	}
	fputc('\n', out);
}

/*
 * The data of V: its JSON, gzip'd (JSON numbers and names shrink to a
 * third or less), in *RET (the caller frees it) of *RET_LEN bytes.
 */
static int pack_data(const struct prof_viewer *v, char **ret, size_t *ret_len)
{
	char *json = NULL;
	size_t len = 0, i;
	FILE *mem = open_memstream(&json, &len);
	int r = 0;

	if (!mem)
		return error_setx(-ENOMEM, "out of memory");
	fprintf(mem, "{\"format\":\"" VIEWER_FORMAT "\",\"diff\":%s,\"profiles\":[\n",
		v->diff ? "true" : "false");
	for (i = 0; i < v->nsides; i++) {
		fputs(i ? ",\n" : "", mem);
		put_side(mem, v->sides[i]);
	}
	fputs("]}\n", mem);
	if (fclose(mem) == EOF)
		r = error_setx(-ENOMEM, "out of memory");
	mem = r == 0 ? open_memstream(ret, ret_len) : NULL;
	if (r == 0 && !mem)
		r = error_setx(-ENOMEM, "out of memory");
	if (r == 0)
		r = report_write_gzip(mem, json, len);
	if (mem && fclose(mem) == EOF && r == 0)
		r = error_setx(-ENOMEM, "out of memory");
	free(json);
	return r;
}

int prof_viewer_write(struct prof_viewer *v, FILE *out)
{
	const char *title;
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!v || !out)
		return error_setx(-EINVAL, "no viewer or nothing to write to");
	if (v->nsides != (v->diff ? 2u : 1u))
		return error_setx(-EINVAL, "the viewer needs %s before it is written",
				  v->diff ? "two spools, a base and a new one" : "a spool");
	r = pack_data(v, &data, &len);
	if (r < 0) {
		free(data);
		return r;
	}
	title = v->sides[v->nsides - 1]->title;
	/* the page is larger than a stdio buffer: the first write that fails says why */
	errno = 0;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>prof: ", out);
	put_html(out, *title ? title : "profile");
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
		"<div id=\"app\"><p class=\"loading\">Loading the profile...</p></div>\n"
		"<noscript><p>This viewer of a prof profile needs JavaScript.</p></noscript>\n"
		"<script type=\"application/octet-stream\" id=\"prof-data\" "
		"data-format=\"" VIEWER_FORMAT "\" data-encoding=\"json+gzip+base64\">\n",
		viewer_css);
	put_base64(out, (const unsigned char *)data, len);
	fprintf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", viewer_js);
	free(data);
	if (fflush(out) == EOF || ferror(out))
		return error_set(errno ? -errno : -EIO, "cannot write the report");
	return 0;
}

void prof_viewer_free(struct prof_viewer *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->nsides; i++)
		side_free(v->sides[i]);
	free(v);
}
