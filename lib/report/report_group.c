/* SPDX-License-Identifier: MIT */
/*
 * report_group.c - the report of a profile grouped by thread or process.
 * One aggregate serves every group, cleared in between, so that the work
 * and memory of a group are those of its own stacks.  Top and tree print a
 * section per group, most samples first; folded puts the group's frame
 * ("NAME-TID" or "COMM-PID", as stackcollapse-perf.pl --tid/--pid writes
 * them) above each of its stacks, groups in the order of that frame; so
 * does the flame graph, a tree per group side by side.
 * Percents are of all the samples, never of the group's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

/* What a thread or process without a name is called. */
#define UNKNOWN_NAME "[unknown]"

struct group_sort {
	const struct prof_profile *p;
	char **labels;		/* by group; NULL unless folded */
};

static const char *group_name(const struct profile_group *g)
{
	return *g->name ? g->name : UNKNOWN_NAME;
}

/*
 * The root frame of G in folded stacks: "NAME-ID", with '_' for spaces (as
 * stackcollapse-perf.pl does) and '?' for what report_put_name() replaces.
 */
static char *folded_label(const struct profile_group *g)
{
	char *s, *c;

	if (asprintf(&s, "%s-%" PRId32, group_name(g), g->id) < 0)
		return NULL;
	for (c = s; *c; c++) {
		unsigned char u = (unsigned char)*c;

		if (u < 0x20 || u == 0x7f || u == ';')
			*c = '?';
		else if (u == ' ')
			*c = '_';
	}
	return s;
}

static int by_name_and_id(const struct profile_group *x, const struct profile_group *y)
{
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->id == y->id ? 0 : x->id < y->id ? -1 : 1;
}

/* Most samples (or time) first, then by name and id. */
static int by_weight(const void *pa, const void *pb, void *ctx)
{
	const struct group_sort *gs = ctx;
	const struct profile_group *x = &gs->p->groups[*(const uint32_t *)pa];
	const struct profile_group *y = &gs->p->groups[*(const uint32_t *)pb];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return by_name_and_id(x, y);
}

/* By root frame, as folded lines sort; then by name and id. */
static int by_label(const void *pa, const void *pb, void *ctx)
{
	const struct group_sort *gs = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(gs->labels[a], gs->labels[b]);

	return c ? c : by_name_and_id(&gs->p->groups[a], &gs->p->groups[b]);
}

/*
 * "thread NAME (tid N): S samples (P%)", or "...: T ms (P%)" for time, the
 * line a section begins with.
 */
static void print_section(FILE *out, const struct prof_profile *p, const struct profile_group *g)
{
	bool thread = p->by == PROF_GROUP_THREAD;

	fprintf(out, "\n%s ", thread ? "thread" : "process");
	report_put_name(out, group_name(g), false);
	fprintf(out, " (%s %" PRId32 "): ", thread ? "tid" : "pid", g->id);
	report_put_count(out, p->weight, g->weight, 0);
	if (p->weight == PROF_WEIGHT_CPU)
		fprintf(out, " sample%s", g->weight == 1 ? "" : "s");
	else
		fputs(" ms", out);
	fprintf(out, " (%.1f%%)\n", report_pct(g->weight, p->total));
}

/*
 * The cells of P by group: those of group G are cells[first[G]] up to
 * cells[first[G + 1]] (exclusive).  0 or -ENOMEM.
 */
static int cells_by_group(const struct prof_profile *p, uint32_t **ret_cells, size_t **ret_first)
{
	size_t *first = calloc(p->ngroups + 1, sizeof(*first)), *next = NULL, i;
	uint32_t *cells = malloc((p->ncells ? p->ncells : 1) * sizeof(*cells));

	if (first && cells)
		next = malloc((p->ngroups + 1) * sizeof(*next));
	if (!next) {
		free(first);
		free(cells);
		return error_setx(-ENOMEM, "out of memory");
	}
	for (i = 1; i < p->ncells; i++)
		first[p->cells[i].group + 1]++;
	for (i = 1; i <= p->ngroups; i++)
		first[i] += first[i - 1];
	memcpy(next, first, (p->ngroups + 1) * sizeof(*next));
	for (i = 1; i < p->ncells; i++)
		cells[next[p->cells[i].group]++] = (uint32_t)i;
	free(next);
	*ret_cells = cells;
	*ret_first = first;
	return 0;
}

/* The view of group G alone, whose samples A holds. */
static int print_group(FILE *out, struct agg *a, const struct prof_profile *p,
		       const struct prof_report_opts *o, const char *label, uint32_t g,
		       struct svg_graph *svg)
{
	agg_sum(a);
	switch (o->format) {
	case PROF_REPORT_SVG:
		return svg_graph_add(svg, a, label);
	case PROF_REPORT_TOP:
		print_section(out, p, &p->groups[g]);
		return output_top(out, a, o);
	case PROF_REPORT_TREE:
		print_section(out, p, &p->groups[g]);
		return output_tree(out, a, o);
	default:
		return output_folded(out, a, label);
	}
}

int report_groups(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		  struct prof_symbolizer *sym, const struct prof_report_opts *o)
{
	struct group_sort gs = { .p = p };
	/* the formats whose groups are frames, ordered by their label */
	bool folded = o->format == PROF_REPORT_FOLDED || o->format == PROF_REPORT_SVG;
	struct svg_graph *svg = NULL;
	size_t n = p->ngroups ? p->ngroups - 1 : 0, i, *first = NULL;
	uint32_t *order, *cells = NULL;
	struct agg a;
	int r;

	if (!p->total && o->format == PROF_REPORT_SVG)
		return output_svg(out, &(struct agg){ .weight = p->weight }, sp, o);
	if (!p->total) {
		if (!folded)
			fprintf(out, "\nno samples\n");
		return 0;
	}
	memset(&a, 0, sizeof(a));
	order = malloc(n * sizeof(*order));
	if (folded)
		gs.labels = calloc(p->ngroups, sizeof(*gs.labels));
	r = order && (!folded || gs.labels) ? 0 : error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < n && r == 0; i++) {
		order[i] = (uint32_t)i + 1;
		if (folded && !(gs.labels[i + 1] = folded_label(&p->groups[i + 1])))
			r = error_setx(-ENOMEM, "out of memory");
	}
	if (r == 0)
		r = cells_by_group(p, &cells, &first);
	if (r == 0)
		r = agg_init(&a, sp, p->weight, p->total, agg_keys_of(o));
	if (r == 0 && o->format == PROF_REPORT_SVG)
		r = svg_graph_new(&svg, o, p->weight, p->total);
	if (r < 0)
		goto out;
	qsort_r(order, n, sizeof(*order), folded ? by_label : by_weight, &gs);
	for (i = 0; i < n && r == 0; i++) {
		uint32_t g = order[i];
		size_t k;

		agg_clear(&a);
		for (k = first[g]; k < first[g + 1] && r == 0; k++)
			r = agg_add(&a, sp, sym, p->cells[cells[k]].stack, p->cells[cells[k]].count);
		if (r == 0)
			r = print_group(out, &a, p, o, folded ? gs.labels[g] : NULL, g, svg);
	}
	if (r == 0 && svg)
		r = svg_graph_write(svg, out, sp);
out:
	svg_graph_free(svg);
	agg_release(&a);
	for (i = 0; gs.labels && i < p->ngroups; i++)
		free(gs.labels[i]);
	free(gs.labels);
	free(order);
	free(cells);
	free(first);
	return r;
}
