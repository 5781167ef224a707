/* SPDX-License-Identifier: MIT */
/*
 * output_perf_script.c - the samples as `perf script` prints them, which
 * stackcollapse-perf.pl, speedscope and the Firefox Profiler import: a
 * line "comm pid/tid time: period event:", then one frame a line, leaf
 * first, "\t    addr symbol+0xoff (module)", then an empty line.  An inline
 * chain prints innermost first, each inlined function "(inlined)", as perf
 * does.  Samples are printed as they are read: nothing is kept but the
 * symbolizer's cache.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "report.h"

/* What perf shows in parentheses for a frame of kind KIND in module REF. */
static const char *module_of(const struct prof_spool *sp, const struct prof_frame *fr,
			     const struct prof_resolved_frame *rf)
{
	const struct prof_module *m;

	switch (fr->kind) {
	case PROF_FRAME_USER:
		m = prof_spool_module(sp, fr->ref);
		return m && m->path && *m->path ? m->path : rf->module;
	case PROF_FRAME_KERNEL:
		return "[kernel.kallsyms]";
	default:
		return "[unknown]";
	}
}

static int put_frame(FILE *out, const struct prof_spool *sp, struct prof_symbolizer *sym,
		     uint32_t id)
{
	const struct prof_frame *fr = prof_spool_frame(sp, id);
	const struct prof_resolved_frame *const *rf;
	size_t n;
	int r;

	if (!fr)
		return error_setx(-EINVAL, "frame %" PRIu32 " is not defined", id);
	r = prof_symbolizer_frame_inlines(sym, id, &rf, &n);
	if (r < 0)
		return r;
	while (n--) {
		bool mark = fr->kind == PROF_FRAME_TRUNCATED || fr->kind == PROF_FRAME_STATE;

		fprintf(out, "\t%16" PRIx64 " ", mark ? 0 : fr->addr);
		report_put_name(out, rf[n]->function, false);
		if (rf[n]->found)
			fprintf(out, "+0x%" PRIx64, rf[n]->offset);
		fputs(" (", out);
		report_put_name(out, n ? "inlined" : module_of(sp, fr, rf[n]), false);
		fputs(")\n", out);
	}
	return 0;
}

/*
 * A sample, or an off-CPU interval (OFFCPU) as perf script prints those
 * of perf record --off-cpu: event "offcpu-time", its duration in ns as the
 * period, at the time it began.
 */
static int put_sample(FILE *out, const struct prof_spool *sp, struct prof_symbolizer *sym,
		      const struct prof_sample *s, uint32_t stack, bool offcpu)
{
	const struct prof_thread *t = prof_spool_thread(sp, s->thread);
	const struct prof_process *proc = t ? prof_spool_process(sp, t->process) : NULL;
	const struct prof_stack_node *node;
	const char *comm = t && t->name && *t->name ? t->name : "[unknown]";
	const char *p;
	int r;

	/* perf's comm is the thread's; a space in it would end the field */
	for (p = comm; *p; p++)
		fputc(*p == ' ' ? '_' : (unsigned char)*p < 0x20 ? '?' : *p, out);
	fprintf(out, " %5" PRId32 "/%-5" PRId32 " ", proc ? proc->pid : -1, t ? t->tid : -1);
	/* perf script shows the CPU of a recording of CPUs (-a, -C): so does this */
	if (prof_spool_meta(sp)->flags & PROF_META_SYSTEM)
		fprintf(out, "[%03" PRIu32 "] ", (uint32_t)s->cpu);
	fprintf(out, "%5" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " ", s->time_ns / 1000000000u,
		s->time_ns % 1000000000u / 1000u, s->period);
	report_put_name(out, offcpu ? "offcpu-time"
				    : *prof_spool_meta(sp)->event ? prof_spool_meta(sp)->event
								   : "cpu-clock", false);
	fputs(": \n", out);
	for (; stack; stack = node->parent) {
		node = prof_spool_stack(sp, stack);
		if (!node)
			return error_setx(-EINVAL, "stack %" PRIu32 " is not defined", stack);
		r = put_frame(out, sp, sym, node->frame);
		if (r < 0)
			return r;
	}
	fputc('\n', out);
	return 0;
}

struct script_ctx {
	FILE *out;
	struct prof_spool *sp;
	struct prof_symbolizer *sym;
};

static int script_event(const struct report_event *e, void *ctx)
{
	struct script_ctx *c = ctx;

	return put_sample(c->out, c->sp, c->sym, &e->s, e->s.stack, e->offcpu != NULL);
}

int prof_report_perf_script(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
			    struct prof_filter *f, uint64_t *ret_samples)
{
	struct script_ctx c = { .out = out, .sp = sp, .sym = sym };
	uint64_t n = 0;
	int r;

	if (!out || !sp || !sym)
		return error_setx(-EINVAL, "nothing to report");
	r = filter_each_event(sp, sym, f, script_event, &c, &n);
	if (r < 0)
		return r;
	if (ret_samples)
		*ret_samples = n;
	errno = 0;
	if (fflush(out) == EOF || ferror(out))
		return error_set(errno ? -errno : -EIO, "cannot write the report");
	return 0;
}
