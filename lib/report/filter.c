/* SPDX-License-Identifier: MIT */
/*
 * filter.c - which samples (and off-CPU intervals) a report keeps, and
 * what they weigh, decided as the spool is read: by pid, tid, comm and
 * time, and by the functions on the stack (--focus, --exclude).  Kernel
 * frames can be cut off the leaf end of each stack (an interval's spool
 * record names its stack without them).
 * What a stack matches is remembered per stack node, so the work and the
 * memory grow with the distinct stacks, not with the samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "prof.h"
#include "report.h"

/* What is known of a stack node (or a frame): bits of memo[]. */
enum {
	MEMO_DONE = 1 << 0,
	MEMO_FOCUS = 1 << 1,	/* a function on it matches --focus */
	MEMO_EXCLUDE = 1 << 2,	/* a function on it matches --exclude */
};

struct prof_filter {
	int32_t *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	bool has_time;
	double from_s, to_s;	/* -INFINITY, INFINITY: open */
	bool no_kernel;
	bool has_focus, has_exclude;
	regex_t focus, exclude;
	uint8_t *stack_memo, *frame_memo;	/* by stack id, by frame id */
	size_t stack_cap, frame_cap;
	uint32_t *path;
	size_t path_cap;
	uint64_t start_ns;	/* time 0: the recording's start, else the first sample */
	bool started;
	bool clip;		/* intervals count for their part inside the time range */
	enum prof_weight weight;
};

static int parse_ids(const char *what, const char *list, int32_t **ret, size_t *ret_n)
{
	const char *p = list;
	size_t cap = 0;
	char *end;
	long v;
	void *arr = NULL;

	*ret_n = 0;
	for (;;) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v > INT32_MAX || (*end && *end != ','))
			return error_setx(-EINVAL, "invalid %s list '%s': expected numbers separated "
					  "by commas", what, list);
		if (grow_array(&arr, &cap, *ret_n + 1, sizeof(int32_t)) < 0) {
			*ret = arr;
			return -ENOMEM;
		}
		((int32_t *)arr)[(*ret_n)++] = (int32_t)v;
		*ret = arr;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

static int parse_comms(struct prof_filter *f, const char *list)
{
	const char *p = list, *comma;
	size_t cap = 0;
	void *arr = NULL;

	for (;;) {
		comma = strchr(p, ',');
		if (grow_array(&arr, &cap, f->ncomms + 1, sizeof(char *)) < 0)
			return -ENOMEM;
		f->comms = arr;
		f->comms[f->ncomms] = strndup(p, comma ? (size_t)(comma - p) : strlen(p));
		if (!f->comms[f->ncomms])
			return -ENOMEM;
		f->ncomms++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int parse_bound(const char *s, size_t len, double open, double *ret)
{
	char buf[64], *end;

	if (!len) {
		*ret = open;
		return 0;
	}
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*ret = strtod(buf, &end);
	return end == buf || *end || !(*ret >= 0.0) ? -EINVAL : 0;
}

static int parse_time(struct prof_filter *f, const char *range)
{
	const char *comma = strchr(range, ',');

	if (!comma || parse_bound(range, (size_t)(comma - range), -INFINITY, &f->from_s) < 0 ||
	    parse_bound(comma + 1, strlen(comma + 1), INFINITY, &f->to_s) < 0 ||
	    f->from_s > f->to_s)
		return error_setx(-EINVAL, "invalid time range '%s': expected START,END in seconds "
				  "from the start of the recording (either may be empty)", range);
	f->has_time = true;
	return 0;
}

static int compile(regex_t *re, bool *has, const char *what, const char *pattern)
{
	char msg[128];
	int r = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (r) {
		regerror(r, re, msg, sizeof(msg));
		return error_setx(-EINVAL, "invalid %s regular expression '%s': %s", what, pattern,
				  msg);
	}
	*has = true;
	return 0;
}

int prof_filter_new(const struct prof_filter_opts *opts, struct prof_filter **ret)
{
	struct prof_filter_opts o;
	struct prof_filter *f;
	int r;

	if (!ret)
		return error_setx(-EINVAL, "no filter to return");
	r = opts_copy(&o, sizeof(o), opts, "filter");
	if (r < 0)
		return r;
	f = calloc(1, sizeof(*f));
	if (!f)
		return error_setx(-ENOMEM, "out of memory");
	f->no_kernel = o.no_kernel;
	f->weight = o.weight;
	if ((unsigned)o.weight >= WEIGHT_COUNT)
		r = error_setx(-EINVAL, "unknown weight %u", (unsigned)o.weight);
	if (r == 0 && o.pids)
		r = parse_ids("pid", o.pids, &f->pids, &f->npids);
	if (r == 0 && o.tids)
		r = parse_ids("tid", o.tids, &f->tids, &f->ntids);
	if (r == 0 && o.comms)
		r = parse_comms(f, o.comms);
	if (r == 0 && o.time)
		r = parse_time(f, o.time);
	if (r == 0 && o.focus)
		r = compile(&f->focus, &f->has_focus, "focus", o.focus);
	if (r == 0 && o.exclude)
		r = compile(&f->exclude, &f->has_exclude, "exclude", o.exclude);
	if (r == -ENOMEM)
		r = error_setx(-ENOMEM, "out of memory");
	if (r < 0) {
		prof_filter_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

bool prof_filter_active(const struct prof_filter *f)
{
	return f && (f->npids || f->ntids || f->ncomms || f->has_time || f->no_kernel ||
		     f->has_focus || f->has_exclude);
}

static bool has_id(const int32_t *ids, size_t n, int32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool has_comm(const struct prof_filter *f, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < f->ncomms; i++)
		if ((a && !strcmp(f->comms[i], a)) || (b && !strcmp(f->comms[i], b)))
			return true;
	return false;
}

/* Make MEMO (of *CAP bytes) hold index ID; 0 or -ENOMEM. */
static int memo_reserve(uint8_t **memo, size_t *cap, uint32_t id)
{
	size_t old = *cap;
	void *v = *memo;
	int r;

	if (id < *cap)
		return 0;
	r = grow_array(&v, cap, (size_t)id + 1, 1);
	*memo = v;
	if (r < 0)
		return r;
	memset(*memo + old, 0, *cap - old);
	return 0;
}

/* What the functions of spool frame ID match: MEMO_* bits. */
static int frame_bits(struct prof_filter *f, struct prof_symbolizer *sym, uint32_t id,
		      uint8_t *ret)
{
	const struct prof_resolved_frame *const *rf;
	size_t n, i;
	uint8_t b = MEMO_DONE;
	int r;

	r = memo_reserve(&f->frame_memo, &f->frame_cap, id);
	if (r < 0)
		return r;
	if (!f->frame_memo[id]) {
		r = prof_symbolizer_frame_inlines(sym, id, &rf, &n);
		if (r < 0)
			return r;
		for (i = 0; i < n; i++) {
			if (f->has_focus && !regexec(&f->focus, rf[i]->function, 0, NULL, 0))
				b |= MEMO_FOCUS;
			if (f->has_exclude && !regexec(&f->exclude, rf[i]->function, 0, NULL, 0))
				b |= MEMO_EXCLUDE;
		}
		f->frame_memo[id] = b;
	}
	*ret = f->frame_memo[id];
	return 0;
}

/* What stack STACK (not 0) matches: its frame's bits and its callers'. */
static int stack_bits(struct prof_filter *f, const struct prof_spool *sp,
		      struct prof_symbolizer *sym, uint32_t stack, uint8_t *ret)
{
	const struct prof_stack_node *node;
	size_t n = 0;
	uint32_t s;
	uint8_t above, b = 0;
	void *v;
	int r;

	/* the path up to the first node already known (or the root) */
	for (s = stack; s && !(s < f->stack_cap && f->stack_memo[s]); s = node->parent) {
		node = prof_spool_stack(sp, s);
		if (!node)
			return error_setx(-EINVAL, "stack %" PRIu32 " is not defined", s);
		v = f->path;
		r = grow_array(&v, &f->path_cap, n + 1, sizeof(*f->path));
		f->path = v;
		if (r < 0)
			return r;
		f->path[n++] = s;
	}
	above = s ? f->stack_memo[s] : MEMO_DONE;
	while (n--) {
		s = f->path[n];
		r = memo_reserve(&f->stack_memo, &f->stack_cap, s);
		if (r == 0)
			r = frame_bits(f, sym, prof_spool_stack(sp, s)->frame, &b);
		if (r < 0)
			return r;
		above |= b;
		f->stack_memo[s] = above;
	}
	*ret = stack ? f->stack_memo[stack] : MEMO_DONE;
	return 0;
}

/* STACK less the kernel frames at its leaf end (0 if nothing else is left). */
static uint32_t user_part(const struct prof_spool *sp, uint32_t stack)
{
	const struct prof_stack_node *node;
	const struct prof_frame *fr;

	while (stack && (node = prof_spool_stack(sp, stack)) &&
	       (fr = prof_spool_frame(sp, node->frame)) && fr->kind == PROF_FRAME_KERNEL)
		stack = node->parent;
	return stack;
}

/* Time 0 of the time range: the recording's start, else the first thing read, at TIME. */
static void start_at(struct prof_filter *f, const struct prof_spool *sp, uint64_t time)
{
	if (!f->started) {
		f->start_ns = prof_spool_meta(sp)->mono_start_ns;
		if (!f->start_ns || f->start_ns > time)
			f->start_ns = time;
		f->started = true;
	}
}

/*
 * Whether what THREAD had on STACK at TIME is kept: 1 and *RET_STACK (its
 * stack, or USER_STACK with no_kernel), 0, or -errno.
 */
static int keep(struct prof_filter *f, const struct prof_spool *sp, struct prof_symbolizer *sym,
		uint32_t thread, uint64_t time, uint32_t stack, uint32_t user_stack,
		uint32_t *ret_stack)
{
	const struct prof_thread *t = prof_spool_thread(sp, thread);
	const struct prof_process *proc = t ? prof_spool_process(sp, t->process) : NULL;
	uint8_t b = MEMO_DONE;
	double at;
	int r;

	start_at(f, sp, time);
	if (f->npids && !(proc && has_id(f->pids, f->npids, proc->pid)))
		return 0;
	if (f->ntids && !(t && has_id(f->tids, f->ntids, t->tid)))
		return 0;
	if (f->ncomms && !has_comm(f, proc ? proc->comm : NULL, t ? t->name : NULL))
		return 0;
	if (f->has_time) {
		at = time >= f->start_ns ? (double)(time - f->start_ns) / 1e9 : 0.0;
		if (at < f->from_s || at > f->to_s)
			return 0;
	}
	if (f->no_kernel)
		stack = user_stack;
	if (f->has_focus || f->has_exclude) {
		r = stack_bits(f, sp, sym, stack, &b);
		if (r < 0)
			return r;
		if ((f->has_focus && !(b & MEMO_FOCUS)) || (b & MEMO_EXCLUDE))
			return 0;
	}
	*ret_stack = stack;
	return 1;
}

int prof_filter_sample(struct prof_filter *f, const struct prof_spool *sp,
		       struct prof_symbolizer *sym, const struct prof_sample *arg,
		       uint32_t *ret_stack)
{
	struct prof_sample s;
	int r = sized_in(&s, sizeof(s), arg, "sample");

	return r < 0 ? r : keep(f, sp, sym, s.thread, s.time_ns, s.stack,
				f->no_kernel ? user_part(sp, s.stack) : s.stack, ret_stack);
}

int prof_filter_offcpu(struct prof_filter *f, const struct prof_spool *sp,
		       struct prof_symbolizer *sym, const struct prof_offcpu *arg,
		       uint32_t *ret_stack)
{
	struct prof_offcpu o;
	int r = sized_in(&o, sizeof(o), arg, "off-CPU interval");

	/* an interval's time is its start: a time range keeps those that began in it */
	return r < 0 ? r : keep(f, sp, sym, o.thread, o.time_ns, o.stack, o.user_stack, ret_stack);
}

void filter_clip_intervals(struct prof_filter *f)
{
	f->clip = true;
}

/*
 * prof_filter_offcpu() of a filter that clips: an interval kept when it
 * overlaps the time range, *RET_NS the time of it inside.
 */
static int keep_clipped(struct prof_filter *f, const struct prof_spool *sp,
			struct prof_symbolizer *sym, const struct prof_offcpu *o,
			uint32_t *ret_stack, uint64_t *ret_ns)
{
	uint64_t lo, hi, end = o->time_ns + o->duration_ns;
	int r;

	start_at(f, sp, o->time_ns);
	lo = f->from_s > 0 ? f->start_ns + (uint64_t)(f->from_s * 1e9) : 0;
	hi = isfinite(f->to_s) ? f->start_ns + (uint64_t)(f->to_s * 1e9) : UINT64_MAX;
	if (end < lo || o->time_ns > hi)
		return 0;
	/* kept as the part inside: its time is where that begins */
	r = keep(f, sp, sym, o->thread, o->time_ns > lo ? o->time_ns : lo, o->stack,
		 o->user_stack, ret_stack);
	if (r > 0)
		*ret_ns = (end < hi ? end : hi) - (o->time_ns > lo ? o->time_ns : lo);
	return r;
}

enum prof_weight prof_filter_weight(const struct prof_filter *f)
{
	return f ? f->weight : PROF_WEIGHT_CPU;
}

/* filter_each_event(), or with EVERY the events F's weight leaves out too. */
static int each_event(struct prof_spool *sp, struct prof_symbolizer *sym, struct prof_filter *f,
		      bool every, event_fn fn, void *ctx, uint64_t *ret_n)
{
	enum prof_weight w = prof_filter_weight(f);
	struct report_event e;
	SIZED(prof_record, ev);
	uint64_t n = 0;
	int r;

	while ((r = prof_spool_next(sp, &ev)) > 0) {
		if (ev.type == PROF_RECORD_SAMPLE && (every || w != PROF_WEIGHT_OFFCPU)) {
			e = (struct report_event){ .s = *ev.sample,
						   .weight = report_weight(w, false, ev.sample->period) };
			r = f ? prof_filter_sample(f, sp, sym, ev.sample, &e.s.stack) : 1;
		} else if (ev.type == PROF_RECORD_OFFCPU && (every || w != PROF_WEIGHT_CPU)) {
			const struct prof_offcpu *o = ev.offcpu;

			e = (struct report_event){
				.s = { .sz = sizeof(struct prof_sample), .time_ns = o->time_ns,
				       .thread = o->thread, .stack = o->stack,
				       .period = o->duration_ns, .cpu = o->cpu },
				.offcpu = o,
				.weight = report_weight(w, true, o->duration_ns),
			};
			if (f && f->clip && f->has_time) {
				r = keep_clipped(f, sp, sym, o, &e.s.stack, &e.s.period);
				e.weight = report_weight(w, true, e.s.period);
			} else {
				r = f ? prof_filter_offcpu(f, sp, sym, o, &e.s.stack) : 1;
			}
		} else {
			continue;
		}
		if (r > 0) {
			r = fn(&e, ctx);
			n++;
		}
		if (r < 0)
			return r;
	}
	if (ret_n)
		*ret_n = n;
	return r;
}

int filter_each_event(struct prof_spool *sp, struct prof_symbolizer *sym, struct prof_filter *f,
		      event_fn fn, void *ctx, uint64_t *ret_n)
{
	return each_event(sp, sym, f, false, fn, ctx, ret_n);
}

int filter_every_event(struct prof_spool *sp, struct prof_symbolizer *sym, struct prof_filter *f,
		       event_fn fn, void *ctx)
{
	return each_event(sp, sym, f, true, fn, ctx, NULL);
}

struct profile_ctx {
	struct prof_profile *p;
	struct prof_spool *sp;
};

static int add_to_profile(const struct report_event *e, void *ctx)
{
	struct profile_ctx *c = ctx;

	return profile_add_event(c->p, c->sp, e);
}

/*
 * Here rather than in profile.c, which this file calls (profile_add_event()):
 * reading a spool into a profile is choosing what to count.
 */
int prof_profile_read(struct prof_profile *p, struct prof_spool *sp, struct prof_filter *f,
		      struct prof_symbolizer *sym)
{
	struct profile_ctx c = { .p = p, .sp = sp };
	SIZED(prof_record, ev);
	int r;

	if (!p || !sp)
		return error_setx(-EINVAL, "no profile or spool to read");
	if (f) {
		if (!sym && (f->has_focus || f->has_exclude))
			return error_setx(-EINVAL, "a filter that names functions needs a "
					  "symbolizer");
		r = prof_profile_weigh(p, f->weight);
		if (r < 0)
			return r;
		return filter_each_event(sp, sym, f, add_to_profile, &c, NULL);
	}
	/* the spool applies renames and execs as it reads them: names are those of now */
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		if (ev.type == PROF_RECORD_SAMPLE)
			r = prof_profile_add_sample(p, sp, ev.sample);
		else if (ev.type == PROF_RECORD_OFFCPU)
			r = prof_profile_add_offcpu(p, sp, ev.offcpu, ev.offcpu->stack);
		if (r < 0)
			return r;
	}
	return r;
}

void prof_filter_free(struct prof_filter *f)
{
	size_t i;

	if (!f)
		return;
	free(f->pids);
	free(f->tids);
	for (i = 0; i < f->ncomms; i++)
		free(f->comms[i]);
	free(f->comms);
	if (f->has_focus)
		regfree(&f->focus);
	if (f->has_exclude)
		regfree(&f->exclude);
	free(f->stack_memo);
	free(f->frame_memo);
	free(f->path);
	free(f);
}
