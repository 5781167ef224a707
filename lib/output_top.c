/* SPDX-License-Identifier: MIT */
/*
 * output_top.c - the top view: one row per function, most self samples
 * first (then most total samples, then by name), as many rows as the limit
 * allows among those that reach the minimum percent of total samples.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

/* The function column is as wide as its longest name, within these bounds. */
#define NAME_WIDTH_MIN 8
#define NAME_WIDTH_MAX 48

static int by_self(const void *pa, const void *pb, void *ctx)
{
	const struct agg *a = ctx;
	const struct agg_func *x = &a->funcs[*(const uint32_t *)pa];
	const struct agg_func *y = &a->funcs[*(const uint32_t *)pb];

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return agg_func_cmp(x, y);
}

static void print_row(FILE *out, const struct agg *a, const struct agg_func *f, int width)
{
	int pad;

	fprintf(out, "%6.2f%% %6.2f%% %8" PRIu64 "  ", report_pct(f->self, a->samples),
		report_pct(f->total, a->samples), f->self);
	pad = width - (int)report_put_func(out, f);
	if (*f->module) {
		fprintf(out, "%*s  ", pad > 0 ? pad : 0, "");
		report_put_name(out, f->module, false);
	}
	fputc('\n', out);
}

int output_top(FILE *out, struct agg *a, const struct prof_report_opts *opts)
{
	size_t i, n = 0, shown = 0, all = 0;
	uint32_t *ids;
	int width = NAME_WIDTH_MIN;

	if (!a->samples) {
		fprintf(out, "no samples\n");
		return 0;
	}
	ids = malloc(a->nfuncs * sizeof(*ids));
	if (!ids)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 1; i < a->nfuncs; i++)
		if (a->funcs[i].total)
			ids[all++] = (uint32_t)i;
	qsort_r(ids, all, sizeof(*ids), by_self, a);
	/* keep the rows to show at the front of ids */
	for (i = 0; i < all && (opts->limit < 0 || n < (size_t)opts->limit); i++)
		if (report_pct(a->funcs[ids[i]].total, a->samples) >= opts->min_percent)
			ids[n++] = ids[i];
	shown = n;
	for (i = 0; i < shown; i++) {
		size_t len = report_func_width(&a->funcs[ids[i]]);

		if (len > (size_t)width)
			width = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
	}
	fprintf(out, "%7s %7s %8s  %-*s  %s\n", "self%", "total%", "samples", width, "function",
		"module");
	for (i = 0; i < shown; i++)
		print_row(out, a, &a->funcs[ids[i]], width);
	if (shown < all)
		fprintf(out, "(%zu more function%s not shown)\n", all - shown,
			all - shown == 1 ? "" : "s");
	free(ids);
	return 0;
}
