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
	uint64_t weight;	/* of its samples (and intervals) */
};

/* The weight of one group on one leaf stack node. */
struct profile_cell {
	uint32_t group;
	uint32_t stack;
	uint64_t count;
};

/*
 * Counts are weights: samples (PROF_WEIGHT_CPU), else nanoseconds.  A
 * thread's wall time over hours is still far from 2^64 ns.
 */
struct prof_profile {
	enum prof_group_by by;
	enum prof_weight weight;
	uint64_t *counts;	/* ungrouped: weight by leaf stack node id; [0]: empty stacks */
	size_t cap;
	struct profile_group *groups;	/* grouped: [0] unused */
	size_t ngroups, groups_cap;
	struct strmap group_ids;	/* name + '\0' + id -> group */
	struct profile_cell *cells;	/* grouped: [0] unused */
	size_t ncells, cells_cap;
	struct intern_map cell_ids;	/* (group, stack) -> cell */
	uint32_t *last_group;		/* by thread or process spool id: its last group */
	size_t last_group_cap;
	uint64_t samples;	/* samples and intervals counted */
	uint64_t total;		/* their weight */
	uint64_t first_ns, last_ns;
};

/* One thing a report counts: a CPU sample or an off-CPU interval. */
struct report_event {
	struct prof_sample s;	/* an interval as a sample: its start, thread, stack, its
				 * duration as the period, the CPU it left */
	const struct prof_offcpu *offcpu;	/* the interval, or NULL for a sample */
	uint64_t weight;	/* what it counts for: 1 (cpu weight), else ns */
};

/* The weight of a CPU sample of period PERIOD, and of an interval of DURATION, by W. */
static inline uint64_t report_weight(enum prof_weight w, bool interval, uint64_t ns)
{
	if (w == PROF_WEIGHT_CPU)
		return interval ? 0 : 1;
	if (w == PROF_WEIGHT_OFFCPU)
		return interval ? ns : 0;
	return ns;
}

/* Count E in P (whose weight E's was computed by), in its group if P is grouped. */
int profile_add_event(struct prof_profile *p, const struct prof_spool *sp,
		      const struct report_event *e);

/* A function: what the top view lists. */
struct agg_func {
	const char *name;
	const char *module;
	const char *file;	/* AGG_LINES: the source file as shown; NULL unknown */
	uint32_t line;		/* AGG_LINES: 0 unknown */
	bool inlined;		/* AGG_INLINED: a function inlined into its caller */
	uint64_t self;		/* samples where it is the leaf */
	uint64_t total;		/* samples where it is on the stack (once per stack) */
	uint32_t stamp;		/* last stack that counted it in total */
};

/* What a function is, as the flame graphs colour it. */
enum agg_kind {
	AGG_KIND_USER,
	AGG_KIND_INLINED,
	AGG_KIND_KERNEL,
	AGG_KIND_ANON,		/* no module: JIT code, say */
	AGG_KIND_OTHER,		/* the root, a group, a [truncated: ...] mark, a state */
};

/* The kind of F: inlined first, then by its module. */
enum agg_kind agg_func_kind(const struct agg_func *f);

/* What tells functions apart, besides their name and module. */
enum agg_keys {
	AGG_INLINED = 1 << 0,	/* an inlined function is not its out-of-line self */
	AGG_LINES = 1 << 1,	/* nor is it the same at two source lines */
	AGG_CALLERS = 1 << 2,	/* not a key but the shape: each stack is placed
				 * leaf first, a tree of callers (inverted) */
};

/* The functions a frame of the spool stands for: funcs[first..first + n), outermost first. */
struct agg_frame {
	uint32_t first;
	uint32_t n;		/* 0: not resolved yet */
};

/* A call tree node: a path of functions from a root, merged across frames. */
struct agg_node {
	uint32_t parent;	/* 0: a root (node 0 is the invisible top) */
	uint32_t func;
	uint32_t first_child;	/* 0: none; in the order of agg_sort_children() */
	uint32_t next_sibling;
	uint32_t depth;		/* 1 for a root */
	uint64_t self, total;
	uint64_t offcpu_self, offcpu;	/* of those, off-CPU intervals' */
};

/* Where a stack node of the spool sits in the tree: NODE, if GEN is the agg's. */
struct agg_placed {
	uint32_t node;
	uint32_t gen;
};

struct agg {
	enum prof_weight weight;	/* what the counts are: samples, else ns */
	uint64_t total;			/* of every sample, those without a stack included */
	struct agg_func *funcs;		/* [0] unused */
	size_t nfuncs, funcs_cap;
	struct agg_node *nodes;		/* [0] the top, above the roots */
	size_t nnodes, nodes_cap;
	struct strmap func_ids;		/* name, module and keys -> func */
	unsigned keys;			/* enum agg_keys */
	struct intern_map children;	/* (node, func) -> child node */
	struct agg_frame *frames;	/* by frame id */
	size_t frames_cap;
	uint32_t *frame_funcs;		/* what agg_frame.first indexes */
	size_t nframe_funcs, frame_funcs_cap;
	struct agg_placed *stack_node;	/* by stack id */
	size_t stack_node_cap;
	uint32_t gen;			/* bumped by agg_clear() */
	uint32_t nstacks;		/* stack ids the spool defines */
	uint32_t *path;			/* scratch for placing a stack */
	size_t path_cap;
};

/*
 * An empty aggregate over the stacks of SP, of counts weighed by WEIGHT,
 * whose percents are of TOTAL, telling functions apart by KEYS (enum
 * agg_keys) besides their name and module.  0 or -ENOMEM; release A
 * either way.
 */
int agg_init(struct agg *a, const struct prof_spool *sp, enum prof_weight weight, uint64_t total,
	     unsigned keys);

/* The keys of the report OPTS: what its format shows of a function. */
unsigned agg_keys_of(const struct prof_report_opts *opts);

/*
 * The tree node of leaf stack node STACK (0: the empty stack, a root
 * "[empty stack]"), placed with its path if new, naming frames with SYM:
 * 0 and *RET_NODE, or -errno.
 */
int agg_place(struct agg *a, const struct prof_spool *sp, struct prof_symbolizer *sym,
	      uint32_t stack, uint32_t *ret_node);

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
	      struct prof_symbolizer *sym, unsigned keys);

enum agg_order {
	AGG_BY_TOTAL,	/* most samples first, then by name */
	AGG_BY_NAME,	/* by function name, then module */
};

/* Order of functions by name, then module, then what the keys tell apart. */
int agg_func_cmp(const struct agg_func *x, const struct agg_func *y);

/*
 * The functions of A that top and json list: those with samples whose
 * total reaches OPTS' min_percent, most self samples first (then most
 * total, then by name), at most OPTS' limit of them (<= 0: all).  *RET:
 * their ids (the caller frees it), *RET_N how many, *RET_ALL how many
 * functions have samples.  0 or -ENOMEM.
 */
int agg_listed_functions(struct agg *a, const struct prof_report_opts *opts, uint32_t **ret,
			 size_t *ret_n, size_t *ret_all);

/* Link every node's children in ORDER.  0 or -ENOMEM. */
int agg_sort_children(struct agg *a, enum agg_order order);

/* The node after N in depth-first order, skipping N's children if SKIP; 0 at the end. */
uint32_t agg_next(const struct agg *a, uint32_t n, bool skip);

/*
 * Call FN for every node that has samples of its own, in the order of
 * folded output (depth first, children by name), with PATH[0..DEPTH) the
 * node ids from the root to it.  Stops at FN's error.  0 or -errno.
 */
typedef int (*agg_stack_fn)(struct agg *a, const uint32_t *path, uint32_t depth,
			    uint64_t self, void *ctx);
int agg_each_stack(struct agg *a, agg_stack_fn fn, void *ctx);

void agg_release(struct agg *a);

/*
 * Call FN for each sample and interval of SP that F keeps and weighs (the
 * CPU samples when F is NULL), its stack already cut as F cuts it, and
 * count them in *RET_N (may be NULL).  Stops at FN's error.  0 or -errno.
 */
typedef int (*event_fn)(const struct report_event *e, void *ctx);
int filter_each_event(struct prof_spool *sp, struct prof_symbolizer *sym, struct prof_filter *f,
		      event_fn fn, void *ctx, uint64_t *ret_n);

/*
 * How report_pprof() writes a profile where prof_report_pprof()'s
 * defaults do not fit: a window of a recording that goes on (prof serve)
 * has its own time and duration, and is a profile even when empty.
 */
struct pprof_opts {
	uint64_t time_ns;	/* time_nanos, wall clock; 0: the recording's start */
	uint64_t duration_ns;	/* duration_nanos; 0: the recording's, once it ended */
	bool empty;		/* write a profile without samples rather than nothing */
};

/* prof_report_pprof() as O (NULL: its defaults) says.  Returns: those of prof_report_pprof(). */
int report_pprof(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		 struct prof_filter *f, const struct pprof_opts *o, uint64_t *ret_samples);

/*
 * With a time range, F keeps the off-CPU intervals that overlap it, each
 * weighed by its part inside (filter_each_event()), rather than those that
 * began in it, whole: a window of a recording that goes on (prof serve)
 * holds the time its threads waited in it, however long before they began.
 */
void filter_clip_intervals(struct prof_filter *f);

/*
 * The same for every sample and interval that F keeps, those its weight
 * leaves out too (their weight 0): for the html viewer, which switches
 * weights itself.
 */
int filter_every_event(struct prof_spool *sp, struct prof_symbolizer *sym, struct prof_filter *f,
		       event_fn fn, void *ctx);

/*
 * The header of top and tree (report_header.c): "# prof report of TITLE" (if
 * TITLE), what SP's recording was, its counters, what P weighs, where the
 * names came from.  0 or -errno (names_collect()'s).
 */
int report_print_header(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
			struct prof_symbolizer *sym, const char *title);

/* report_text.c: text as every format writes it. */

/* Print NAME for a report: control characters become '?', and ';' too if FOLDED. */
void report_put_name(FILE *out, const char *name, bool folded);

/* Print F as top and tree show it: "NAME [inlined] (FILE:LINE)"; its width in bytes. */
size_t report_put_func(FILE *out, const struct agg_func *f);

/* The width report_put_func() would print. */
size_t report_func_width(const struct agg_func *f);

/* Percent of the report's samples. */
double report_pct(uint64_t part, uint64_t whole);

/* report_gzip.c: LEN bytes at DATA to OUT, gzip'd.  0, or -ENOMEM, -EIO. */
int report_write_gzip(FILE *out, const void *data, size_t len);

/* ---- where the names came from (report_names.c) ---- */

#define NAMES_FROM_MAX 4

/* A module with samples, as the header tells where its names came from. */
struct names_module {
	const char *module;		/* lent by the symbolizer */
	uint64_t weight, unnamed;	/* of its leaves; of those without a name */
	const char *from[NAMES_FROM_MAX];	/* the sources of its names, first seen first */
	const char *debug_missing;	/* the debug file its .gnu_debuglink names, missing */
	const char *path;		/* the module's path, for the hint */
	char *package;			/* the Debian package of path, or NULL */
};

struct names_summary {
	struct names_module *v;		/* most weight first */
	size_t n, cap;
	struct strmap ids;
	uint64_t total;
};

/*
 * The modules of P's samples (by their leaves) and where their names came
 * from, named by SYM; the packages of those missing a debug file.  0 or
 * -errno; release NS either way.
 */
int names_collect(struct names_summary *ns, const struct prof_spool *sp,
		  const struct prof_profile *p, struct prof_symbolizer *sym);
void names_release(struct names_summary *ns);

/* The header's "names:" lines, and a "hint:" line per module missing its debug file. */
void names_print(FILE *out, const struct names_summary *ns);

/*
 * A count of weight W as top and tree print it, WIDTH wide: samples, or
 * milliseconds with two decimals.  And the name of its column.
 */
void report_put_count(FILE *out, enum prof_weight w, uint64_t count, int width);
const char *report_count_unit(enum prof_weight w);

/* A count of weight W as folded prints it: samples, or whole microseconds (rounded). */
uint64_t report_folded_count(enum prof_weight w, uint64_t count);

/* The length of the valid UTF-8 sequence at P, or 0. */
size_t report_utf8_len(const unsigned char *p);

/* Print S (NULL: "") as a JSON string: escaped, and bytes not UTF-8 as U+FFFD. */
void report_put_json_str(FILE *out, const char *s);

/*
 * The writers of each format, after the header (if any).  ROOT, if not
 * NULL, is a frame above every stack (printed as it is).  0 or -ENOMEM.
 */
int output_top(FILE *out, struct agg *a, const struct prof_report_opts *opts);
int output_tree(FILE *out, struct agg *a, const struct prof_report_opts *opts);
int output_folded(FILE *out, struct agg *a, const char *root);
int output_json(FILE *out, struct agg *a, const struct prof_spool *sp,
		const struct prof_profile *p, struct prof_symbolizer *sym,
		const struct prof_report_opts *opts);

int output_svg(FILE *out, struct agg *a, const struct prof_spool *sp,
	       const struct prof_report_opts *opts);

/*
 * A flame graph drawn tree by tree: svg_graph_add() puts the tree of A
 * right of the trees before it, under a frame LABEL (if not NULL); a
 * graph of TOTAL in all, counted as WEIGHT counts.  0 or -ENOMEM.
 */
struct svg_graph;
int svg_graph_new(struct svg_graph **ret, const struct prof_report_opts *opts,
		  enum prof_weight weight, uint64_t total);
int svg_graph_add(struct svg_graph *g, struct agg *a, const char *label);
/*
 * The tree of A as a differential graph (the only tree of G): BASE_PCT[n]
 * is, for each node n of A, the base profile's percent on the same path (0
 * where the base never went), BASE_NAME the base's name for the subtitle.
 */
int svg_graph_add_diff(struct svg_graph *g, struct agg *a, const double *base_pct,
		       const char *base_name);
int svg_graph_write(struct svg_graph *g, FILE *out, const struct prof_spool *sp);
void svg_graph_free(struct svg_graph *g);

int output_speedscope(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		      struct prof_symbolizer *sym, const struct prof_report_opts *opts);

/*
 * The views of the grouped profile P, in the format of OPTS, section by
 * section (after the header) or with a root frame per group (folded).
 * 0 or -errno, as agg_build() and the writers.
 */
int report_groups(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		  struct prof_symbolizer *sym, const struct prof_report_opts *opts);

#endif /* PROF_REPORT_H */
