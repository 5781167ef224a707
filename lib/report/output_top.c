/* SPDX-License-Identifier: MIT */
/*
 * output_top.c - the top view: one row per function, most self samples
 * (or time) first, then most total, then by name, as many rows as the
 * limit allows among those that reach the minimum percent of the total.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

/* The function column is as wide as its longest name, within these bounds. */
#define NAME_WIDTH_MIN 8
#define NAME_WIDTH_MAX 48

static void print_row(FILE *out, const struct agg *a, const struct agg_func *f, int width)
{
	int pad;

	fprintf(out, "%6.2f%% %6.2f%% ", report_pct(f->self, a->total),
		report_pct(f->total, a->total));
	report_put_count(out, a->weight, f->self, a->weight == PROF_WEIGHT_CPU ? 8 : 10);
	fputs("  ", out);
	pad = width - (int)report_put_func(out, f);
	if (*f->module) {
		fprintf(out, "%*s  ", pad > 0 ? pad : 0, "");
		report_put_name(out, f->module, false);
	}
	fputc('\n', out);
}

int output_top(FILE *out, struct agg *a, const struct prof_report_opts *opts)
{
	size_t i, shown, all;
	uint32_t *ids;
	int width = NAME_WIDTH_MIN, r;

	if (!a->total) {
		fprintf(out, "no samples\n");
		return 0;
	}
	r = agg_listed_functions(a, opts, &ids, &shown, &all);
	if (r < 0)
		return r;
	for (i = 0; i < shown; i++) {
		size_t len = report_func_width(&a->funcs[ids[i]]);

		if (len > (size_t)width)
			width = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
	}
	fprintf(out, "%7s %7s %*s  %-*s  %s\n", "self%", "total%",
		a->weight == PROF_WEIGHT_CPU ? 8 : 10,
		a->weight == PROF_WEIGHT_CPU ? "samples" : "self ms", width, "function", "module");
	for (i = 0; i < shown; i++)
		print_row(out, a, &a->funcs[ids[i]], width);
	if (shown < all)
		fprintf(out, "(%zu more function%s not shown)\n", all - shown,
			all - shown == 1 ? "" : "s");
	free(ids);
	return 0;
}
