/* SPDX-License-Identifier: MIT */
/*
 * aggregate.c - from samples per leaf stack node to functions (self and
 * total samples) and a call tree of functions.  Frames are named once each;
 * a frame that the symbolizer expands into an inline chain places a path
 * of nodes, its stack node sitting at the innermost.  Frames with the same
 * function (name, module, and what the keys add: inlined, source line)
 * merge, so the work grows with distinct stacks, not with samples.  A
 * function recursing counts once per stack in its total.  Inverted (a
 * callers tree), each stack is placed from its leaf out.  Stack chains are
 * walked with loops, never recursion: a hostile spool may chain a million
 * nodes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

#define EMPTY_STACK_NAME "[empty stack]"

/*
 * The function id of resolved frame RF, added on first sight: by name and
 * module, and by what the keys add (inlined or not, source line).
 */
static int func_id(struct agg *a, const struct prof_resolved_frame *rf, uint32_t *ret)
{
	bool inlined = (a->keys & AGG_INLINED) && rf->inlined;
	bool line = (a->keys & AGG_LINES) && rf->line && rf->file;
	char *key;
	uint32_t id;
	void *v;
	int len, r = 0;

	len = asprintf(&key, "%s%c%s%c%c%s:%" PRIu32, rf->function, 0, rf->module, 0,
		       inlined ? 'i' : 'f', line ? rf->file : "", line ? rf->line : 0);
	if (len < 0)
		return error_setx(-ENOMEM, "out of memory");
	id = strmap_find(&a->func_ids, key, (size_t)len);
	if (!id) {
		v = a->funcs;
		r = grow_array(&v, &a->funcs_cap, a->nfuncs + 1, sizeof(*a->funcs));
		a->funcs = v;
		if (r == 0)
			r = strmap_insert(&a->func_ids, key, (size_t)len, (uint32_t)a->nfuncs);
		if (r == 0) {
			id = (uint32_t)a->nfuncs++;
			a->funcs[id] = (struct agg_func){ .name = rf->function,
							  .module = rf->module,
							  .inlined = inlined,
							  .file = line ? rf->file : NULL,
							  .line = line ? rf->line : 0 };
		}
	}
	free(key);
	if (r == 0)
		*ret = id;
	return r;
}

/* The functions frame FRAME stands for, outermost first: *RET_N of them at *RET. */
static int frame_funcs(struct agg *a, struct prof_symbolizer *sym, uint32_t frame,
		       const uint32_t **ret, uint32_t *ret_n)
{
	const struct prof_resolved_frame *const *rf;
	struct agg_frame *af;
	size_t n, i;
	void *v = a->frames;
	int r;

	r = grow_array_zeroed(&v, &a->frames_cap, (size_t)frame + 1, sizeof(*a->frames));
	a->frames = v;
	if (r < 0)
		return r;
	af = &a->frames[frame];
	if (!af->n) {
		r = prof_symbolizer_frame_inlines(sym, frame, &rf, &n);
		if (r < 0)
			return r;
		v = a->frame_funcs;
		r = grow_array(&v, &a->frame_funcs_cap, a->nframe_funcs + n,
			       sizeof(*a->frame_funcs));
		a->frame_funcs = v;
		for (i = 0; i < n && r == 0; i++)
			r = func_id(a, rf[i], &a->frame_funcs[a->nframe_funcs + i]);
		if (r < 0)
			return r;
		af->first = (uint32_t)a->nframe_funcs;
		af->n = (uint32_t)n;
		a->nframe_funcs += n;
	}
	*ret = &a->frame_funcs[af->first];
	*ret_n = af->n;
	return 0;
}

/* The child of node PARENT for function FUNC, added on first sight. */
static int child(struct agg *a, uint32_t parent, uint32_t func, uint32_t *ret)
{
	uint32_t id = intern_find(&a->children, parent, func);
	void *v;
	int r;

	if (!id) {
		v = a->nodes;
		r = grow_array(&v, &a->nodes_cap, a->nnodes + 1, sizeof(*a->nodes));
		a->nodes = v;
		if (r == 0)
			r = intern_insert(&a->children, parent, func, (uint32_t)a->nnodes);
		if (r < 0)
			return r;
		id = (uint32_t)a->nnodes++;
		a->nodes[id] = (struct agg_node){ .parent = parent, .func = func,
						  .depth = a->nodes[parent].depth + 1 };
	}
	*ret = id;
	return 0;
}

/*
 * The tree node of stack node LEAF: walk up to the first stack node already
 * placed (or past the root), then place the walked nodes from the outside in.
 */
static int place_stack(struct agg *a, const struct prof_spool *sp, struct prof_symbolizer *sym,
		       uint32_t leaf, uint32_t *ret)
{
	const struct prof_stack_node *sn;
	const uint32_t *funcs;
	uint32_t id = leaf, node, nfuncs, k;
	size_t n = 0;
	void *v;
	int r;

	while (id && a->stack_node[id].gen != a->gen) {
		v = a->path;
		r = grow_array(&v, &a->path_cap, n + 1, sizeof(*a->path));
		a->path = v;
		if (r < 0)
			return r;
		a->path[n++] = id;
		sn = prof_spool_stack(sp, id);
		if (!sn)
			return error_setx(-EINVAL, "stack node %u is not defined", id);
		id = sn->parent;
	}
	node = id ? a->stack_node[id].node : 0;
	while (n--) {
		id = a->path[n];
		r = frame_funcs(a, sym, prof_spool_stack(sp, id)->frame, &funcs, &nfuncs);
		/* an inline chain is a path of nodes: the stack node sits at its innermost */
		for (k = 0; k < nfuncs && r == 0; k++)
			r = child(a, node, funcs[k], &node);
		if (r < 0)
			return r;
		a->stack_node[id] = (struct agg_placed){ .node = node, .gen = a->gen };
	}
	*ret = node;
	return 0;
}

/*
 * The tree node of stack node LEAF in a callers tree: the stack's
 * functions from the leaf out, the innermost of each inline chain first.
 * Unlike place_stack(), nothing placed before can be reused: two stacks
 * that share their root share nothing from the leaf.  The work is that of
 * the stack's depth, once per distinct leaf stack node (its samples come
 * counted).
 */
static int place_stack_callers(struct agg *a, const struct prof_spool *sp,
			       struct prof_symbolizer *sym, uint32_t leaf, uint32_t *ret)
{
	const struct prof_stack_node *sn;
	const uint32_t *funcs;
	uint32_t id, node = 0, nfuncs, k;
	int r;

	for (id = leaf; id; id = sn->parent) {
		sn = prof_spool_stack(sp, id);	/* parents are defined first: no loop */
		if (!sn)
			return error_setx(-EINVAL, "stack node %u is not defined", id);
		r = frame_funcs(a, sym, sn->frame, &funcs, &nfuncs);
		for (k = nfuncs; k-- > 0 && r == 0;)
			r = child(a, node, funcs[k], &node);
		if (r < 0)
			return r;
	}
	*ret = node;
	return 0;
}

/*
 * Self and total per function, from the tree nodes that are leaves of
 * samples.  The leaf of a sample's stack is the node's function, or in a
 * callers tree that of the node's root.
 */
static void count_functions(struct agg *a)
{
	bool callers = a->keys & AGG_CALLERS;
	uint32_t i, n, leaf;

	for (i = 1; i < a->nnodes; i++) {
		uint64_t c = a->nodes[i].self;

		if (!c)
			continue;
		leaf = a->nodes[i].func;
		for (n = i; n; n = a->nodes[n].parent) {
			struct agg_func *f = &a->funcs[a->nodes[n].func];

			if (f->stamp != i) {	/* once per stack, recursion or not */
				f->stamp = i;
				f->total += c;
			}
			if (callers)
				leaf = a->nodes[n].func;
		}
		a->funcs[leaf].self += c;
	}
}

enum agg_kind agg_func_kind(const struct agg_func *f)
{
	if (f->inlined)
		return AGG_KIND_INLINED;
	if (!strcmp(f->module, "[kernel]"))
		return AGG_KIND_KERNEL;
	if (!strcmp(f->module, "[anon]"))
		return AGG_KIND_ANON;
	if (!*f->module && f->name[0] == '[')
		return AGG_KIND_OTHER;
	return AGG_KIND_USER;
}

unsigned agg_keys_of(const struct prof_report_opts *opts)
{
	unsigned shape = opts->inverted ? AGG_CALLERS : 0;

	/* folded shows bare names; the flame graph colours inlined frames */
	if (opts->format == PROF_REPORT_FOLDED)
		return shape;
	if (opts->format == PROF_REPORT_SVG)
		return shape | AGG_INLINED;
	return shape | AGG_INLINED | (opts->lines ? AGG_LINES : 0);
}

int agg_init(struct agg *a, const struct prof_spool *sp, enum prof_weight weight, uint64_t total,
	     unsigned keys)
{
	SIZED(prof_spool_counts, cnt);
	void *v;
	int r;

	memset(a, 0, sizeof(*a));
	a->weight = weight;
	a->total = total;
	a->keys = keys;
	a->gen = 1;
	prof_spool_counts(sp, &cnt);
	a->nstacks = cnt.stacks;
	v = NULL;
	r = grow_array(&v, &a->nodes_cap, 1, sizeof(*a->nodes));
	a->nodes = v;
	if (r < 0)
		return r;
	v = NULL;
	r = grow_array(&v, &a->funcs_cap, 1, sizeof(*a->funcs));
	a->funcs = v;
	if (r < 0)
		return r;
	a->nodes[0] = (struct agg_node){ 0 };
	a->nnodes = 1;
	a->funcs[0] = (struct agg_func){ .name = "", .module = "" };
	a->nfuncs = 1;
	v = NULL;
	r = grow_array_zeroed(&v, &a->stack_node_cap, (size_t)cnt.stacks + 1, sizeof(*a->stack_node));
	a->stack_node = v;
	return r;
}

/* Whether STACK is an off-CPU interval's: its leaf is a state frame. */
static bool is_offcpu(const struct prof_spool *sp, uint32_t stack)
{
	const struct prof_stack_node *sn = stack ? prof_spool_stack(sp, stack) : NULL;
	const struct prof_frame *fr = sn ? prof_spool_frame(sp, sn->frame) : NULL;

	return fr && fr->kind == PROF_FRAME_STATE;
}

int agg_place(struct agg *a, const struct prof_spool *sp, struct prof_symbolizer *sym,
	      uint32_t stack, uint32_t *ret_node)
{
	static const struct prof_resolved_frame empty = {
		.sz = sizeof(empty), .function = EMPTY_STACK_NAME, .module = ""
	};
	uint32_t func;
	int r;

	if (stack > a->nstacks)
		return error_setx(-EINVAL, "stack node %u is not defined", stack);
	if (stack > 0 && (a->keys & AGG_CALLERS))
		return place_stack_callers(a, sp, sym, stack, ret_node);
	if (stack > 0)
		return place_stack(a, sp, sym, stack, ret_node);
	r = func_id(a, &empty, &func);
	return r < 0 ? r : child(a, 0, func, ret_node);
}

int agg_add(struct agg *a, const struct prof_spool *sp, struct prof_symbolizer *sym,
	    uint32_t stack, uint64_t count)
{
	uint32_t node = 0;
	int r = agg_place(a, sp, sym, stack, &node);

	if (r < 0)
		return r;
	a->nodes[node].self += count;
	if (is_offcpu(sp, stack))
		a->nodes[node].offcpu_self += count;
	return 0;
}

void agg_sum(struct agg *a)
{
	size_t i;

	/* children come after their parents */
	for (i = a->nnodes; i-- > 1;) {
		a->nodes[i].total += a->nodes[i].self;
		a->nodes[i].offcpu += a->nodes[i].offcpu_self;
		a->nodes[a->nodes[i].parent].total += a->nodes[i].total;
		a->nodes[a->nodes[i].parent].offcpu += a->nodes[i].offcpu;
	}
	count_functions(a);
}

void agg_clear(struct agg *a)
{
	size_t i;

	for (i = 0; i < a->nfuncs; i++)
		a->funcs[i].self = a->funcs[i].total = a->funcs[i].stamp = 0;
	a->nodes[0] = (struct agg_node){ 0 };
	a->nnodes = 1;
	intern_release(&a->children);
	/* what was placed is no longer: a new generation, zeroed when it wraps */
	if (++a->gen == 0) {
		memset(a->stack_node, 0, a->stack_node_cap * sizeof(*a->stack_node));
		a->gen = 1;
	}
}

int agg_build(struct agg *a, const struct prof_spool *sp, const struct prof_profile *p,
	      struct prof_symbolizer *sym, unsigned keys)
{
	size_t i;
	int r;

	r = agg_init(a, sp, p->weight, p->total, keys);
	for (i = 0; i < p->cap && r == 0; i++) {
		if (!p->counts[i])
			continue;
		if (i > a->nstacks)
			r = error_setx(-EINVAL, "stack node %zu is not defined", i);
		else
			r = agg_add(a, sp, sym, (uint32_t)i, p->counts[i]);
	}
	if (r == 0)
		agg_sum(a);
	return r;
}

int agg_func_cmp(const struct agg_func *x, const struct agg_func *y)
{
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	c = strcmp(x->module, y->module);
	if (c)
		return c;
	if (x->inlined != y->inlined)
		return x->inlined ? 1 : -1;
	c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Most self samples first, then most total, then by name. */
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

int agg_listed_functions(struct agg *a, const struct prof_report_opts *opts, uint32_t **ret,
			 size_t *ret_n, size_t *ret_all)
{
	uint32_t *ids = malloc((a->nfuncs ? a->nfuncs : 1) * sizeof(*ids));
	size_t i, n = 0, all = 0;

	if (!ids)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 1; i < a->nfuncs; i++)
		if (a->funcs[i].total)
			ids[all++] = (uint32_t)i;
	qsort_r(ids, all, sizeof(*ids), by_self, a);
	/* keep those to list at the front */
	for (i = 0; i < all && (opts->limit <= 0 || n < (size_t)opts->limit); i++)
		if (report_pct(a->funcs[ids[i]].total, a->total) >= opts->min_percent)
			ids[n++] = ids[i];
	*ret = ids;
	*ret_n = n;
	*ret_all = all;
	return 0;
}

static int by_name(const struct agg *a, const struct agg_node *x, const struct agg_node *y)
{
	return agg_func_cmp(&a->funcs[x->func], &a->funcs[y->func]);
}

static int cmp_by_total(const void *pa, const void *pb, void *ctx)
{
	const struct agg *a = ctx;
	const struct agg_node *x = &a->nodes[*(const uint32_t *)pa];
	const struct agg_node *y = &a->nodes[*(const uint32_t *)pb];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return by_name(a, x, y);
}

static int cmp_by_name(const void *pa, const void *pb, void *ctx)
{
	const struct agg *a = ctx;
	const struct agg_node *x = &a->nodes[*(const uint32_t *)pa];
	const struct agg_node *y = &a->nodes[*(const uint32_t *)pb];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return by_name(a, x, y);
}

int agg_sort_children(struct agg *a, enum agg_order order)
{
	uint32_t *ids, *last;
	size_t i, n = a->nnodes - 1;

	ids = malloc((n ? n : 1) * sizeof(*ids));
	last = calloc(a->nnodes, sizeof(*last));
	if (!ids || !last) {
		free(ids);
		free(last);
		return error_setx(-ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)i + 1;
	qsort_r(ids, n, sizeof(*ids), order == AGG_BY_TOTAL ? cmp_by_total : cmp_by_name, a);
	for (i = 0; i < a->nnodes; i++)
		a->nodes[i].first_child = a->nodes[i].next_sibling = 0;
	for (i = 0; i < n; i++) {
		struct agg_node *c = &a->nodes[ids[i]];

		if (last[c->parent])
			a->nodes[last[c->parent]].next_sibling = ids[i];
		else
			a->nodes[c->parent].first_child = ids[i];
		last[c->parent] = ids[i];
	}
	free(ids);
	free(last);
	return 0;
}

uint32_t agg_next(const struct agg *a, uint32_t n, bool skip)
{
	if (!skip && a->nodes[n].first_child)
		return a->nodes[n].first_child;
	for (; n; n = a->nodes[n].parent)
		if (a->nodes[n].next_sibling)
			return a->nodes[n].next_sibling;
	return 0;
}

void agg_release(struct agg *a)
{
	free(a->funcs);
	free(a->nodes);
	free(a->frames);
	free(a->frame_funcs);
	free(a->stack_node);
	free(a->path);
	strmap_release(&a->func_ids);
	intern_release(&a->children);
	memset(a, 0, sizeof(*a));
}

int agg_each_stack(struct agg *a, agg_stack_fn fn, void *ctx)
{
	uint32_t n, *path = NULL;
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
		if (node->self)
			r = fn(a, path, node->depth, node->self, ctx);
	}
	free(path);
	return r;
}
