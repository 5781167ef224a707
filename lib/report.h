/* SPDX-License-Identifier: MIT */
/*
 * report.h - what the report modules share: the profile's counts, the
 * aggregate built from them (functions and call tree) and the writers of
 * each output format.  Private to lib/.
 */
#ifndef PROF_REPORT_H
#define PROF_REPORT_H

#include <stdio.h>

#include "intern.h"
#include "prof.h"
#include "strmap.h"

struct prof_profile {
	uint64_t *counts;	/* samples by leaf stack node id; [0]: empty stacks */
	size_t cap;
	uint64_t samples;
	uint64_t first_ns, last_ns;
};

/* A function: what the top view lists. */
struct agg_func {
	const char *name;
	const char *module;
	uint64_t self;		/* samples where it is the leaf */
	uint64_t total;		/* samples where it is on the stack (once per stack) */
	uint32_t stamp;		/* last stack that counted it in total */
};

/* A call tree node: a path of functions from a root, merged across frames. */
struct agg_node {
	uint32_t parent;	/* 0: a root (node 0 is the invisible top) */
	uint32_t func;
	uint32_t first_child;	/* 0: none; in the order of agg_sort_children() */
	uint32_t next_sibling;
	uint32_t depth;		/* 1 for a root */
	uint64_t self, total;
};

struct agg {
	uint64_t samples;		/* every sample, those without a stack included */
	struct agg_func *funcs;		/* [0] unused */
	size_t nfuncs, funcs_cap;
	struct agg_node *nodes;		/* [0] the top, above the roots */
	size_t nnodes, nodes_cap;
	struct strmap func_ids;		/* name + '\0' + module -> func */
	struct intern_map children;	/* (node, func) -> child node */
	uint32_t *frame_func;		/* by frame id; 0: not resolved yet */
	size_t frame_func_cap;
	uint32_t *stack_node;		/* by stack id; 0: not placed yet */
	size_t stack_node_cap;
};

/*
 * Build the functions and the call tree of P, naming frames with SYM.  0 or
 * -errno (-ENOMEM, or a symbolizer error); release A either way.
 */
int agg_build(struct agg *a, const struct prof_spool *sp, const struct prof_profile *p,
	      struct prof_symbolizer *sym);

enum agg_order {
	AGG_BY_TOTAL,	/* most samples first, then by name */
	AGG_BY_NAME,	/* by function name, then module */
};

/* Link every node's children in ORDER.  0 or -ENOMEM. */
int agg_sort_children(struct agg *a, enum agg_order order);

/* The node after N in depth-first order, skipping N's children if SKIP; 0 at the end. */
uint32_t agg_next(const struct agg *a, uint32_t n, bool skip);

void agg_release(struct agg *a);

/* Print NAME for a report: control characters become '?', and ';' too if FOLDED. */
void report_put_name(FILE *out, const char *name, bool folded);

/* Percent of the report's samples. */
double report_pct(uint64_t part, uint64_t whole);

/* The writers of each format, after the header (if any).  0 or -ENOMEM. */
int output_top(FILE *out, struct agg *a, const struct prof_report_opts *opts);
int output_tree(FILE *out, struct agg *a, const struct prof_report_opts *opts);
int output_folded(FILE *out, struct agg *a);

#endif /* PROF_REPORT_H */
