/* SPDX-License-Identifier: MIT */
/*
 * output_tree.c - the call tree view: from the outermost frames (roots)
 * down to the leaves, two spaces of indent per call, children by most total
 * samples.  A node below the minimum percent is left out with everything
 * under it.  Deep recursion stops indenting at a fixed depth and says the
 * depth instead, so that lines stay readable.  Inverted (a callers tree),
 * the roots are the functions that ran and a node's total is the samples
 * of its root called through that path; a self column would only repeat
 * the roots' totals, so there is none.
 */
#include <inttypes.h>

#include "internal.h"
#include "report.h"

#define INDENT_LEVELS_MAX 32

static void print_node(FILE *out, const struct agg *a, const struct agg_node *n)
{
	const struct agg_func *f = &a->funcs[n->func];
	uint32_t level = n->depth - 1;

	fprintf(out, "%6.2f%% ", report_pct(n->total, a->total));
	if (!(a->keys & AGG_CALLERS))
		fprintf(out, "%6.2f%% ", report_pct(n->self, a->total));
	if (a->weight != PROF_WEIGHT_CPU) {
		report_put_count(out, a->weight, n->total, 10);
		fputc(' ', out);
	}
	fputc(' ', out);
	if (level > INDENT_LEVELS_MAX)
		fprintf(out, "%*s(depth %" PRIu32 ") ", 2 * INDENT_LEVELS_MAX, "", n->depth);
	else
		fprintf(out, "%*s", (int)(2 * level), "");
	report_put_func(out, f);
	if (*f->module) {
		fputs(f->module[0] == '[' ? " " : " [", out);
		report_put_name(out, f->module, false);
		fputs(f->module[0] == '[' ? "" : "]", out);
	}
	fputc('\n', out);
}

int output_tree(FILE *out, struct agg *a, const struct prof_report_opts *opts)
{
	uint32_t n;
	int r;

	if (!a->total) {
		fprintf(out, "no samples\n");
		return 0;
	}
	r = agg_sort_children(a, AGG_BY_TOTAL);
	if (r < 0)
		return r;
	fprintf(out, "%7s ", "total%");
	if (!(a->keys & AGG_CALLERS))
		fprintf(out, "%7s ", "self%");
	if (a->weight != PROF_WEIGHT_CPU)
		fprintf(out, "%10s ", "total ms");
	fprintf(out, " %s\n", a->keys & AGG_CALLERS ? "callers tree" : "call tree");
	for (n = agg_next(a, 0, false); n;) {
		const struct agg_node *node = &a->nodes[n];
		bool hide = report_pct(node->total, a->total) < opts->min_percent;

		if (!hide)
			print_node(out, a, node);
		n = agg_next(a, n, hide);
	}
	return 0;
}
