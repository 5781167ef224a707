/* SPDX-License-Identifier: MIT */
/*
 * output_folded.c - folded stacks, the input of flamegraph.pl, speedscope
 * and the Firefox Profiler: one line per distinct stack of functions,
 * "root;caller;...;leaf COUNT", in depth-first order with children by name.
 * Nothing is pruned, so the counts sum to the samples.  A ';' inside a name
 * would split a frame in two: it is printed as '?'.  A grouped report puts
 * its group's frame above every stack of the group.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"
#include "report.h"

int output_folded(FILE *out, struct agg *a, const char *root)
{
	uint32_t n, k, *path = NULL;
	size_t cap = 0;
	void *v;
	int r;

	r = agg_sort_children(a, AGG_BY_NAME);
	for (n = agg_next(a, 0, false); n && r == 0; n = agg_next(a, n, false)) {
		const struct agg_node *node = &a->nodes[n];

		v = path;
		r = grow_array(&v, &cap, node->depth, sizeof(*path));
		path = v;
		if (r < 0)
			break;
		path[node->depth - 1] = n;
		if (!node->self)
			continue;
		if (root)
			fprintf(out, "%s;", root);
		for (k = 0; k < node->depth; k++) {
			if (k)
				fputc(';', out);
			report_put_name(out, a->funcs[a->nodes[path[k]].func].name, true);
		}
		fprintf(out, " %" PRIu64 "\n", node->self);
	}
	free(path);
	return r;
}
