/* SPDX-License-Identifier: MIT */
/*
 * output_json.c - the report as one JSON object, for scripts: the
 * recording's metadata and counters, the warnings prof report would print,
 * every function with its self and total samples, and every distinct stack
 * (root to leaf) with its samples.  The schema is prof-report(1)'s; keys
 * are only ever added to it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

static void put_key(FILE *out, const char *indent, const char *key, bool *first)
{
	fprintf(out, "%s\n%s\"%s\": ", *first ? "" : ",", indent, key);
	*first = false;
}

/* A counter: key and number. */
static void put_num(FILE *out, const char *key, uint64_t v, bool *first)
{
	put_key(out, "    ", key, first);
	fprintf(out, "%" PRIu64, v);
}

static void put_meta(FILE *out, const struct prof_meta *m, const char *title)
{
	bool first = true;
	size_t i;

	fputs("  \"metadata\": {", out);
	put_key(out, "    ", "spool", &first);
	if (title)
		report_put_json_str(out, title);
	else
		fputs("null", out);
	put_key(out, "    ", "argv", &first);
	fputc('[', out);
	for (i = 0; i < m->argc; i++) {
		fputs(i ? ", " : "", out);
		report_put_json_str(out, m->argv[i]);
	}
	fputc(']', out);
	put_key(out, "    ", "pids", &first);
	fputc('[', out);
	for (i = 0; i < m->npids; i++)
		fprintf(out, "%s%" PRId32, i ? ", " : "", m->pids[i]);
	fputc(']', out);
	put_key(out, "    ", "wall_start_ns", &first);
	fprintf(out, "%" PRIu64, m->wall_start_ns);
	put_key(out, "    ", "event", &first);
	report_put_json_str(out, m->event);
	put_key(out, "    ", "freq_hz", &first);
	fprintf(out, "%" PRIu64, m->freq_hz);
	put_key(out, "    ", "period", &first);
	fprintf(out, "%" PRIu64, m->period);
	put_key(out, "    ", "stack_bytes", &first);
	fprintf(out, "%" PRIu64, m->stack_bytes);
	put_key(out, "    ", "kernel_frames", &first);
	fputs(m->flags & PROF_META_KERNEL ? "true" : "false", out);
	put_key(out, "    ", "children_followed", &first);
	fputs(m->flags & PROF_META_INHERIT ? "true" : "false", out);
	put_key(out, "    ", "hostname", &first);
	report_put_json_str(out, m->hostname);
	put_key(out, "    ", "kernel_release", &first);
	report_put_json_str(out, m->kernel_release);
	put_key(out, "    ", "arch", &first);
	report_put_json_str(out, m->arch);
	put_key(out, "    ", "page_size", &first);
	fprintf(out, "%" PRIu64, m->page_size);
	put_key(out, "    ", "prof_version", &first);
	report_put_json_str(out, m->prof_version);
	fputs("\n  },\n", out);
}

static void put_counts(FILE *out, const char *key, const uint64_t *v, size_t n,
		       const char *(*name)(unsigned), bool *first)
{
	bool any = false;
	size_t i;

	put_key(out, "    ", key, first);
	fputc('{', out);
	for (i = 1; i < n; i++)
		if (v[i]) {
			fprintf(out, "%s\"%s\": %" PRIu64, any ? ", " : "", name((unsigned)i), v[i]);
			any = true;
		}
	fputc('}', out);
}

static void put_counters(FILE *out, const struct prof_counters *c, const struct prof_meta *m)
{
	bool first = true;

	fputs("  \"counters\": ", out);
	if (!c) {
		fputs("null,\n", out);
		return;
	}
	fputc('{', out);
	put_num(out, "duration_ns",
		c->mono_end_ns >= m->mono_start_ns ? c->mono_end_ns - m->mono_start_ns : 0, &first);
	put_num(out, "samples", c->samples, &first);
	put_num(out, "sample_events", c->sample_events, &first);
	put_counts(out, "lost", c->lost, LOST_KIND_COUNT, prof_lost_kind_name, &first);
	put_num(out, "truncated_stacks", c->truncated_stacks, &first);
	put_num(out, "empty_stacks", c->empty_stacks, &first);
	put_counts(out, "unwind_errors", c->unwind_errors, UNWIND_ERROR_COUNT,
		   prof_unwind_error_name, &first);
	put_num(out, "frames", c->frames, &first);
	put_counts(out, "fallback_frames", c->fallback_frames, FALLBACK_COUNT,
		   prof_unwind_fallback_name, &first);
	put_num(out, "processes", c->processes, &first);
	put_num(out, "threads", c->threads, &first);
	put_num(out, "lifecycle_gaps", c->lifecycle_gaps, &first);
	put_num(out, "reconciliations", c->reconciliations, &first);
	if (c->cpus) {
		/* the whole machine (record -a) */
		put_num(out, "cpus", c->cpus, &first);
		put_num(out, "idle_samples", c->idle_samples, &first);
	}
	if (c->python_frames || c->python_stale || c->python_unread) {
		/* CPython 3.11's frames, read from the interpreter */
		put_num(out, "python_frames", c->python_frames, &first);
		put_num(out, "python_stale", c->python_stale, &first);
		put_num(out, "python_unread", c->python_unread, &first);
	}
	if (c->jit_map_names || c->jitdump_names) {
		/* where the spool's names of JIT code came from */
		put_num(out, "jit_map_names", c->jit_map_names, &first);
		put_num(out, "jitdump_names", c->jitdump_names, &first);
	}
	if (m->flags & PROF_META_OFFCPU) {
		put_num(out, "switch_events", c->switch_events, &first);
		put_num(out, "offcpu_intervals", c->offcpu_intervals, &first);
		put_num(out, "offcpu_ns", c->offcpu_ns, &first);
		put_num(out, "offcpu_unsampled", c->offcpu_unsampled, &first);
		put_num(out, "offcpu_truncated", c->offcpu_truncated, &first);
	}
	fputs("\n  },\n", out);
}

struct warn_ctx {
	FILE *out;
	bool first;
};

static void put_warning(const char *msg, void *ctx)
{
	struct warn_ctx *w = ctx;

	fputs(w->first ? "\n    " : ",\n    ", w->out);
	report_put_json_str(w->out, msg);
	w->first = false;
}

static void put_func(FILE *out, const struct agg_func *f)
{
	fputs("{\"name\": ", out);
	report_put_json_str(out, f->name);
	fputs(", \"module\": ", out);
	report_put_json_str(out, f->module);
	fprintf(out, ", \"inlined\": %s", f->inlined ? "true" : "false");
	if (f->file && f->line) {
		fputs(", \"file\": ", out);
		report_put_json_str(out, f->file);
		fprintf(out, ", \"line\": %" PRIu32, f->line);
	}
	fprintf(out, ", \"self\": %" PRIu64 ", \"total\": %" PRIu64 "}", f->self, f->total);
}

/* The functions agg_listed_functions() keeps, then how many it left out. */
static int put_functions(FILE *out, struct agg *a, const struct prof_report_opts *o)
{
	size_t i, shown, all;
	uint32_t *ids;
	int r;

	r = agg_listed_functions(a, o, &ids, &shown, &all);
	if (r < 0)
		return r;
	fputs("  \"functions\": [", out);
	for (i = 0; i < shown; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		put_func(out, &a->funcs[ids[i]]);
	}
	fputs(shown ? "\n  ],\n" : "],\n", out);
	fprintf(out, "  \"functions_left_out\": %zu,\n", all - shown);
	free(ids);
	return 0;
}

struct stacks_ctx {
	FILE *out;
	bool first;
};

static int put_stack(struct agg *a, const uint32_t *path, uint32_t depth, uint64_t self,
		     void *ctx)
{
	struct stacks_ctx *c = ctx;
	uint32_t k;

	fputs(c->first ? "\n    {\"frames\": [" : ",\n    {\"frames\": [", c->out);
	c->first = false;
	for (k = 0; k < depth; k++) {
		fputs(k ? ", " : "", c->out);
		report_put_json_str(c->out, a->funcs[a->nodes[path[k]].func].name);
	}
	fprintf(c->out, "], \"count\": %" PRIu64 "}", self);
	return 0;
}

static int put_stacks(FILE *out, struct agg *a)
{
	struct stacks_ctx c = { .out = out, .first = true };
	int r;

	fputs("  \"stacks\": [", out);
	r = agg_each_stack(a, put_stack, &c);
	fputs(c.first ? "]\n" : "\n  ]\n", out);
	return r;
}

/* Where the names of each module with samples came from (report_names.c). */
static int put_modules(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		       struct prof_symbolizer *sym)
{
	struct names_summary ns;
	size_t i, k;
	int r = names_collect(&ns, sp, p, sym);

	if (r < 0) {
		names_release(&ns);
		return r;
	}
	fputs("  \"modules\": [", out);
	for (i = 0; i < ns.n; i++) {
		const struct names_module *m = &ns.v[i];

		fputs(i ? ",\n    {\"module\": " : "\n    {\"module\": ", out);
		report_put_json_str(out, m->module);
		fprintf(out, ", \"weight\": %" PRIu64 ", \"unnamed\": %" PRIu64 ", \"names_from\": [",
			m->weight, m->unnamed);
		for (k = 0; k < NAMES_FROM_MAX && m->from[k]; k++) {
			fputs(k ? ", " : "", out);
			report_put_json_str(out, m->from[k]);
		}
		fputs("], \"debug_missing\": ", out);
		if (m->debug_missing)
			report_put_json_str(out, m->debug_missing);
		else
			fputs("null", out);
		fputs(", \"package\": ", out);
		if (m->package)
			report_put_json_str(out, m->package);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fputs(ns.n ? "\n  ],\n" : "],\n", out);
	names_release(&ns);
	return 0;
}

int output_json(FILE *out, struct agg *a, const struct prof_spool *sp,
		const struct prof_profile *p, struct prof_symbolizer *sym,
		const struct prof_report_opts *o)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	struct warn_ctx w = { .out = out, .first = true };
	int r;

	fputs("{\n  \"schema\": \"prof-report/1\",\n", out);
	put_meta(out, m, o->title);
	put_counters(out, prof_spool_counters(sp), m);
	fputs("  \"warnings\": [", out);
	prof_report_warnings(sp, o->title ? o->title : "", put_warning, &w);
	fputs(w.first ? "],\n" : "\n  ],\n", out);
	fprintf(out, "  \"samples\": %" PRIu64 ",\n", p->samples);
	fprintf(out, "  \"weight\": \"%s\",\n  \"unit\": \"%s\",\n  \"total\": %" PRIu64 ",\n",
		prof_weight_name(p->weight), p->weight == PROF_WEIGHT_CPU ? "samples" : "ns",
		p->total);
	fprintf(out, "  \"first_ns\": %" PRIu64 ",\n  \"last_ns\": %" PRIu64 ",\n",
		p->first_ns, p->last_ns);
	r = put_modules(out, sp, p, sym);
	if (r == 0)
		r = put_functions(out, a, o);
	if (r == 0)
		r = put_stacks(out, a);
	fputs("}\n", out);
	return r;
}
