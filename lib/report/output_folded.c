/* SPDX-License-Identifier: MIT */
/*
 * output_folded.c - folded stacks, the input of flamegraph.pl, speedscope
 * and the Firefox Profiler: one line per distinct stack of functions,
 * "root;caller;...;leaf COUNT", in depth-first order with children by name.
 * Nothing is pruned, so the counts sum to the samples; time (off-CPU or
 * wall) is in whole microseconds, each line rounded, and a line under half
 * a microsecond is left out.  A ';' inside a name
 * would split a frame in two: it is printed as '?'.  A grouped report puts
 * its group's frame above every stack of the group.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "report.h"

struct folded_ctx {
	FILE *out;
	const char *root;
};

static int put_line(struct agg *a, const uint32_t *path, uint32_t depth, uint64_t self,
		    void *ctx)
{
	struct folded_ctx *c = ctx;
	uint64_t count = report_folded_count(a->weight, self);
	uint32_t k;

	if (!count)
		return 0;	/* less than half a microsecond */
	if (c->root)
		fprintf(c->out, "%s;", c->root);
	for (k = 0; k < depth; k++) {
		if (k)
			fputc(';', c->out);
		report_put_name(c->out, a->funcs[a->nodes[path[k]].func].name, true);
	}
	fprintf(c->out, " %" PRIu64 "\n", count);
	return 0;
}

int output_folded(FILE *out, struct agg *a, const char *root)
{
	struct folded_ctx c = { .out = out, .root = root };

	return agg_each_stack(a, put_line, &c);
}
