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

/* A thread or process of a grouped profile, as named at its samples. */
struct profile_group {
	char *name;		/* thread name or process comm, owned */
	int32_t id;		/* tid or pid */
	uint64_t samples;
};

/* The samples of one group on one leaf stack node. */
struct profile_cell {
	uint32_t group;
	uint32_t stack;
	uint64_t count;
};

struct prof_profile {
	enum prof_group_by by;
	uint64_t *counts;	/* ungrouped: samples by leaf stack node id; [0]: empty stacks */
	size_t cap;
	struct profile_group *groups;	/* grouped: [0] unused */
	size_t ngroups, groups_cap;
	struct strmap group_ids;	/* name + '\0' + id -> group */
	struct profile_cell *cells;	/* grouped: [0] unused */
	size_t ncells, cells_cap;
	struct intern_map cell_ids;	/* (group, stack) -> cell */
	uint32_t *last_group;		/* by thread or process spool id: its last group */
	size_t last_group_cap;
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

/* Where a stack node of the spool sits in the tree: NODE, if GEN is the agg's. */
struct agg_placed {
	uint32_t node;
	uint32_t gen;
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
	struct agg_placed *stack_node;	/* by stack id */
	size_t stack_node_cap;
	uint32_t gen;			/* bumped by agg_clear() */
	uint32_t nstacks;		/* stack ids the spool defines */
	uint32_t *path;			/* scratch for placing a stack */
	size_t path_cap;
};

/*
 * An empty aggregate over the stacks of SP, whose percents are of SAMPLES.
 * 0 or -ENOMEM; release A either way.
 */
int agg_init(struct agg *a, const struct prof_spool *sp, uint64_t samples);

/* Add COUNT samples on leaf stack node STACK (0: empty), naming frames with SYM. */
int agg_add(struct agg *a, const struct prof_spool *sp, struct prof_symbolizer *sym,
	    uint32_t stack, uint64_t count);

/* Once every sample is added: the totals of the nodes and of the functions. */
void agg_sum(struct agg *a);

/*
 * Drop the tree and the counts, keeping the functions' names, for another
 * set of samples.  The work is that of the tree dropped, not of the spool.
 */
void agg_clear(struct agg *a);

/*
 * Build the functions and the call tree of the ungrouped P, naming frames
 * with SYM.  0 or -errno (-ENOMEM, or a symbolizer error); release A
 * either way.
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

/*
 * The writers of each format, after the header (if any).  ROOT, if not
 * NULL, is a frame above every stack (printed as it is).  0 or -ENOMEM.
 */
int output_top(FILE *out, struct agg *a, const struct prof_report_opts *opts);
int output_tree(FILE *out, struct agg *a, const struct prof_report_opts *opts);
int output_folded(FILE *out, struct agg *a, const char *root);

/*
 * The views of the grouped profile P, in the format of OPTS, section by
 * section (after the header) or with a root frame per group (folded).
 * 0 or -errno, as agg_build() and the writers.
 */
int report_groups(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		  struct prof_symbolizer *sym, const struct prof_report_opts *opts);

#endif /* PROF_REPORT_H */
