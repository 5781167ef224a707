/* SPDX-License-Identifier: MIT */
/*
 * report_names.c - where the names of a report came from: for each module
 * with samples (the leaves of its stacks), the sources of its functions'
 * names (.symtab, .dynsym only, a debug file, .gopclntab, a perf map or
 * jitdump, the Python interpreter...), its share of the samples and the
 * share of those left unnamed; and, for the modules whose debug file is
 * missing, which Debian package would hold it.  A profile whose names
 * are missing says so where it is read.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"
#include "symbols/package.h"

/* Modules named one by one in the header; the rest are summed up */
#define NAMES_SHOWN 8
/* Hints given, at most */
#define HINTS_MAX 3

void names_release(struct names_summary *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i].package);
	free(ns->v);
	strmap_release(&ns->ids);
	memset(ns, 0, sizeof(*ns));
}

/* The module of ns that NAME is, added if new; NULL on -ENOMEM. */
static struct names_module *module_of(struct names_summary *ns, const char *name)
{
	size_t len = strlen(name);
	uint32_t id = strmap_find(&ns->ids, name, len);
	void *v = ns->v;

	if (id)
		return &ns->v[id - 1];
	if (grow_array(&v, &ns->cap, ns->n + 1, sizeof(*ns->v)) < 0)
		return NULL;
	ns->v = v;
	if (strmap_insert(&ns->ids, name, len, (uint32_t)ns->n + 1) < 0)
		return NULL;
	ns->v[ns->n] = (struct names_module){ .module = name };
	return &ns->v[ns->n++];
}

/* Count WEIGHT on the leaf of stack node STACK: its first frame that is code. */
static int count_leaf(struct names_summary *ns, const struct prof_spool *sp,
		      struct prof_symbolizer *sym, uint32_t stack, uint64_t weight)
{
	SIZED(prof_resolved_frame, rf);
	const struct prof_stack_node *node;
	const struct prof_frame *f = NULL;
	struct names_module *m;
	size_t i;
	int r;

	/* an off-CPU interval's leaf is its state, a cut stack's root its cause */
	for (node = prof_spool_stack(sp, stack); node; node = prof_spool_stack(sp, node->parent)) {
		f = prof_spool_frame(sp, node->frame);
		if (f && f->kind != PROF_FRAME_STATE && f->kind != PROF_FRAME_TRUNCATED)
			break;
		f = NULL;
		if (!node->parent)
			break;
	}
	if (!f)
		return 0;
	r = prof_symbolizer_frame(sym, f->id, &rf);
	if (r < 0)
		return r;
	m = module_of(ns, rf.module);
	if (!m)
		return error_setx(-ENOMEM, "out of memory");
	ns->total += weight;
	m->weight += weight;
	if (!rf.found)
		m->unnamed += weight;
	if (rf.found && rf.names_from) {
		for (i = 0; i < NAMES_FROM_MAX && m->from[i] && strcmp(m->from[i], rf.names_from); i++)
			;
		if (i < NAMES_FROM_MAX && !m->from[i])
			m->from[i] = rf.names_from;
	}
	if (rf.debug_missing && !m->debug_missing) {
		const struct prof_module *mod =
			f->kind == PROF_FRAME_USER ? prof_spool_module(sp, f->ref) : NULL;

		m->debug_missing = rf.debug_missing;
		m->path = mod ? mod->path : NULL;
	}
	return 0;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_weight(const void *a, const void *b)
{
	const struct names_module *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->module, y->module);
}

/* The modules worth a hint: their debug file is missing, and names or lines with it. */
static bool wants_hint(const struct names_module *m)
{
	return m->debug_missing && m->path && m->path[0] == '/';
}

/* The packages of the modules given a hint, looked up at once. */
static int find_packages(struct names_summary *ns)
{
	const char *paths[HINTS_MAX];
	struct names_module *who[HINTS_MAX];
	char *pkgs[HINTS_MAX];
	size_t i, n = 0;
	int r;

	for (i = 0; i < ns->n && n < HINTS_MAX; i++)
		if (wants_hint(&ns->v[i])) {
			who[n] = &ns->v[i];
			paths[n++] = ns->v[i].path;
		}
	if (!n)
		return 0;
	r = package_owners(getenv("PROF_DPKG_INFO"), paths, n, pkgs);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++)
		who[i]->package = pkgs[i];
	return 0;
}

int names_collect(struct names_summary *ns, const struct prof_spool *sp,
		  const struct prof_profile *p, struct prof_symbolizer *sym)
{
	size_t i;
	int r = 0;

	memset(ns, 0, sizeof(*ns));
	if (p->by == PROF_GROUP_NONE) {
		for (i = 1; i < p->cap && r >= 0; i++)
			if (p->counts[i])
				r = count_leaf(ns, sp, sym, (uint32_t)i, p->counts[i]);
	} else {
		for (i = 1; i < p->ncells && r >= 0; i++)
			if (p->cells[i].count && p->cells[i].stack)
				r = count_leaf(ns, sp, sym, p->cells[i].stack, p->cells[i].count);
	}
	if (r < 0)
		return r;
	/* the sources of each module in one order, whatever order the stacks came in */
	for (i = 0; i < ns->n; i++) {
		size_t n = 0;

		while (n < NAMES_FROM_MAX && ns->v[i].from[n])
			n++;
		qsort(ns->v[i].from, n, sizeof(*ns->v[i].from), by_text);
	}
	if (ns->n)
		qsort(ns->v, ns->n, sizeof(*ns->v), by_weight);
	/* the map's ids are of the order before the sort: it is not used again */
	strmap_release(&ns->ids);
	memset(&ns->ids, 0, sizeof(ns->ids));
	return find_packages(ns);
}

/* "a, b and c": the sources of M's names, or "no names". */
static void print_from(FILE *out, const struct names_module *m)
{
	size_t i;

	if (!m->from[0]) {
		fprintf(out, "no names");
		return;
	}
	for (i = 0; i < NAMES_FROM_MAX && m->from[i]; i++)
		fprintf(out, "%s%s", i ? (i + 1 < NAMES_FROM_MAX && m->from[i + 1] ? ", " : " and ") : "",
			m->from[i]);
}

void names_print(FILE *out, const struct names_summary *ns)
{
	uint64_t rest = 0, rest_unnamed = 0;
	size_t i, hints = 0;

	for (i = 0; i < ns->n; i++) {
		const struct names_module *m = &ns->v[i];

		if (i >= NAMES_SHOWN) {
			rest += m->weight;
			rest_unnamed += m->unnamed;
			continue;
		}
		fprintf(out, "%-14s", i ? "" : "names:");
		report_put_name(out, *m->module ? m->module : "[unknown]", false);
		fprintf(out, ": ");
		print_from(out, m);
		fprintf(out, " (%.1f%% of the samples, %.1f%% of them unnamed)\n",
			report_pct(m->weight, ns->total), report_pct(m->unnamed, m->weight));
	}
	if (rest)
		fprintf(out, "%-14s%zu more modules (%.1f%% of the samples, %.1f%% of them unnamed)\n",
			"", ns->n - NAMES_SHOWN, report_pct(rest, ns->total),
			report_pct(rest_unnamed, rest));
	for (i = 0; i < ns->n && hints < HINTS_MAX; i++) {
		const struct names_module *m = &ns->v[i];

		if (!wants_hint(m))
			continue;
		fprintf(out, "%-14s", hints++ ? "" : "hint:");
		report_put_name(out, m->module, false);
		fprintf(out, " has no debug info here: its .gnu_debuglink names ");
		report_put_name(out, m->debug_missing, false);
		if (m->package)
			fprintf(out, ", in Debian's %s-dbgsym (the debian-debug archive)\n",
				m->package);
		else
			fprintf(out, ", found in no debug directory\n");
	}
}
