/* SPDX-License-Identifier: MIT */
/*
 * prof/report.h - reports of a spool: what they weigh, the profile that
 * counts stacks, the filter that chooses samples, and the output formats.
 * The conventions of the whole API are at the top of <prof/prof.h>.
 */
#ifndef LIBPROF_REPORT_H
#define LIBPROF_REPORT_H

#include <stdio.h>

#include <prof/symbolize.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What a report weighs.  CPU samples say where threads ran, off-CPU
 * intervals (recorded with the recorder's off_cpu option) where they
 * waited; wall time is both, so that each thread weighs its lifetime in
 * the recording.
 */
enum prof_weight {
	PROF_WEIGHT_CPU = 0,	/* CPU samples, one each */
	PROF_WEIGHT_OFFCPU,	/* off-CPU intervals, each its duration in ns */
	PROF_WEIGHT_WALL,	/* both: a CPU sample its period (a clock event's,
				 * in ns), an interval its duration */
};

/* The name of a weight ("cpu", "off-cpu", "wall"), or NULL. */
const char *prof_weight_name(unsigned weight);

/* Returns: the weight named NAME; -EINVAL (the message lists the names). */
int prof_weight_parse(const char *name);

/*
 * Whether SP can be weighed by W: not off-CPU or wall time of a spool
 * recorded without off-CPU intervals, nor wall time of one whose event is
 * not a clock (its periods are not ns).
 * Returns: 0; -EINVAL with the message saying why not.
 */
int prof_spool_check_weight(const struct prof_spool *sp, enum prof_weight w);

/*
 * A profile: samples (or time, when weighed so) counted per leaf stack
 * node, the input of every report.  It holds counts only (no names), so
 * it is cheap to fill while reading a spool.
 */
struct prof_profile;

/* Returns: 0 and *ret, an empty profile; -ENOMEM. */
int prof_profile_new(struct prof_profile **ret);

/* What a profile counts samples by, besides their stack. */
enum prof_group_by {
	PROF_GROUP_NONE = 0,	/* one profile of every sample */
	PROF_GROUP_THREAD,	/* per thread: its name at the sample and its tid */
	PROF_GROUP_PROCESS,	/* per process: its comm at the sample and its pid */
};

/*
 * Count samples per group BY as well: per (thread name, tid) or (process
 * comm, pid), the name being the one current at each sample, so that a
 * thread renamed (or a process that exec'd) while recorded counts under
 * each of its names.  Threads or processes with the same name and id make
 * one group.  Memory grows with groups times the distinct stacks of each,
 * not with samples.  Call it before counting any sample.
 * Returns: 0; -EBUSY after a sample was counted; -EINVAL for an unknown BY.
 */
int prof_profile_group_by(struct prof_profile *p, enum prof_group_by by);

/*
 * Weigh what P counts by W (a new profile weighs PROF_WEIGHT_CPU): CPU
 * samples count with weight cpu (one each) and wall (their period), off-CPU
 * intervals with off-cpu and wall (their duration); what the weight leaves
 * out is not counted.  Call it before counting anything.
 * Returns: 0; -EBUSY after something was counted; -EINVAL for an unknown W.
 */
int prof_profile_weigh(struct prof_profile *p, enum prof_weight w);

/* What P weighs by. */
enum prof_weight prof_profile_weight(const struct prof_profile *p);

/*
 * Count the sample S: one more for its stack, a stack id of the spool the
 * report will read (0: the empty stack).  A grouped profile needs SP, the
 * reader S was just read from, for the name of its thread (or process) as
 * SP holds it now: so call it as SP reads S.  SP may be NULL for a profile
 * that is not grouped.
 * Returns: 0; -EINVAL (S's sz not set; a grouped profile without SP; a
 * thread or process SP does not define); -ENOMEM.
 */
int prof_profile_add_sample(struct prof_profile *p, const struct prof_spool *sp,
			    const struct prof_sample *s);

/*
 * The same for the off-CPU interval O just read from SP, on its stack
 * STACK (O's own, or as a filter cut it).
 * Returns: those of prof_profile_add_sample().
 */
int prof_profile_add_offcpu(struct prof_profile *p, const struct prof_spool *sp,
			    const struct prof_offcpu *o, uint32_t stack);

/*
 * A filter: which samples a report keeps, decided as the spool is read, so
 * that memory grows with the distinct stacks kept, not with the samples.
 */
struct prof_filter;

/*
 * Read every record of SP that is left (prof_spool_next() until it returns
 * 0) and count the samples and intervals that F keeps (F NULL: all), with
 * their stacks as F gives them, weighed as F weighs: a profile that weighs
 * otherwise, and has counted nothing yet, is made to.  SYM names the frames
 * for F's focus and exclude (NULL when F has neither).
 * Returns: 0 when the spool has nothing more to give now (see
 * prof_spool_status() for why); -EBUSY (P counted already, by another
 * weight); -EINVAL; -ENOMEM; the symbolizer's errors.
 */
int prof_profile_read(struct prof_profile *p, struct prof_spool *sp, struct prof_filter *f,
		      struct prof_symbolizer *sym);

/*
 * The samples and intervals counted so far, their weight in all (samples
 * for PROF_WEIGHT_CPU, else ns), and the times of the first and last (0 if
 * none).
 */
uint64_t prof_profile_samples(const struct prof_profile *p);
uint64_t prof_profile_total(const struct prof_profile *p);
uint64_t prof_profile_first_ns(const struct prof_profile *p);
uint64_t prof_profile_last_ns(const struct prof_profile *p);

/* Free P (NULL: nothing). */
void prof_profile_free(struct prof_profile *p);

struct prof_filter_opts {
	size_t sz;			/* sizeof(struct prof_filter_opts) */
	const char *pids;		/* "PID,PID...": only these processes; NULL any */
	const char *tids;		/* "TID,TID...": only these threads; NULL any */
	const char *comms;		/* "NAME,NAME...": only threads so named, or of a
					 * process whose comm is so named (at the sample) */
	const char *time;		/* "START,END": seconds from the recording's start
					 * (its metadata's mono_start_ns, else the first
					 * sample), both included; either may be empty */
	bool no_kernel;			/* cut the kernel frames off each stack (a stack of
					 * kernel frames only becomes the empty stack) */
	const char *focus;		/* POSIX extended regex: keep only the stacks with a
					 * function (inlined ones included) it matches */
	const char *exclude;		/* the same: drop the stacks with such a function */
	enum prof_weight weight;	/* what is read: CPU samples (cpu), off-CPU
					 * intervals (off-cpu) or both (wall); the
					 * reports of a filter weigh so */
};

/*
 * A filter of OPTS (NULL: keeps everything).
 * Returns: 0 and *ret; -EINVAL (a list, range or regex that does not parse:
 * the message says which); -ENOMEM.
 */
int prof_filter_new(const struct prof_filter_opts *opts, struct prof_filter **ret);

/* Whether F (NULL: none) leaves out anything at all. */
bool prof_filter_active(const struct prof_filter *f);

/*
 * Whether sample S, just read from SP, is kept; SYM names the frames for
 * focus and exclude.
 * Returns: 1 and *RET_STACK (its stack, less the kernel frames with
 * no_kernel); 0 if not kept; -EINVAL for a stack SP does not define;
 * -ENOMEM; the symbolizer's errors.
 */
int prof_filter_sample(struct prof_filter *f, const struct prof_spool *sp,
		       struct prof_symbolizer *sym, const struct prof_sample *s,
		       uint32_t *ret_stack);

/* The same for the off-CPU interval O.  Returns: those of prof_filter_sample(). */
int prof_filter_offcpu(struct prof_filter *f, const struct prof_spool *sp,
		       struct prof_symbolizer *sym, const struct prof_offcpu *o,
		       uint32_t *ret_stack);

/* What F (NULL: none, which reads CPU samples) weighs. */
enum prof_weight prof_filter_weight(const struct prof_filter *f);

/* Free F (NULL: nothing). */
void prof_filter_free(struct prof_filter *f);

/* The formats prof_report_write() writes from a profile. */
enum prof_report_format {
	PROF_REPORT_TOP = 0,	/* header, then functions by self samples */
	PROF_REPORT_TREE,	/* header, then the call tree from the roots */
	PROF_REPORT_FOLDED,	/* "root;...;leaf COUNT" lines, no header */
	PROF_REPORT_JSON,	/* one JSON object, the schema of prof-report(1) */
	PROF_REPORT_SPEEDSCOPE,	/* speedscope's JSON, a profile per group: needs a
				 * profile grouped by thread or process */
	PROF_REPORT_SVG,	/* a flame graph: one interactive SVG file */
};

/* The name of a format ("top", "tree", "folded", "json", "speedscope", "svg"), or NULL. */
const char *prof_report_format_name(unsigned format);

/* Returns: the format named NAME; -EINVAL (the message lists the names). */
int prof_report_format_parse(const char *name);

struct prof_report_opts {
	size_t sz;			/* sizeof(struct prof_report_opts) */
	enum prof_report_format format;
	const char *title;		/* header line "# prof report of TITLE"; NULL: none */
	long limit;			/* top: rows shown, 0: 30; json: functions
					 * listed, 0: all; < 0: all */
	double min_percent;		/* top and json: hide functions, tree and svg:
					 * nodes (and what is under them), whose
					 * total is below this percent of the
					 * samples; 0 hides nothing (prof report's
					 * default is 0.5 for top and tree); folded
					 * ignores both this and limit */
	bool lines;			/* top and tree: a function at each source line
					 * it was seen at is an entry of its own,
					 * shown "NAME (FILE:LINE)"; folded ignores it */
	bool inverted;			/* tree, folded and svg: each stack from its
					 * leaf out, so that the roots are the
					 * functions that ran and their children
					 * their callers (svg draws it as an
					 * icicle, roots at the top) */
};

/*
 * Write the report of profile P, recorded in SP, to OUT in the format of
 * OPTS (NULL: top, 30 rows, nothing hidden).  Top and tree begin with a
 * header of SP's metadata and counters; the function and module names
 * come from SYM.  Sample counts are exact: folded counts sum to the
 * profile's samples, and so do the top view's self counts, samples
 * without a stack being named "[empty stack]".
 *
 * A spool frame that SYM resolves into an inline chain is that many frames
 * (prof_symbolizer_frame_inlines()): top counts an inlined function as a
 * function of its own, its self samples going to the innermost, and top
 * and tree show it as "NAME [inlined]"; folded shows bare names, as
 * stackcollapse-perf.pl does.  With OPTS' lines, top and tree add
 * " (FILE:LINE)" to each function whose line is known.
 *
 * A grouped profile (prof_profile_group_by()) is reported group by group.
 * Top and tree print one section per group, most samples first, each
 * beginning "thread NAME (tid N): S samples (P%)" or "process COMM (pid
 * N): ...", then that group's view alone; every percent, and so
 * min_percent, is of all the profile's samples, and limit applies to each
 * section.  Folded prefixes each line with a root frame "NAME-TID" or
 * "COMM-PID" (spaces in the name become '_', as stackcollapse-perf.pl
 * --tid/--pid does; an empty name is "[unknown]"), lines sorted by it.
 *
 * Json (ungrouped P only) is one object of the schema of prof-report(1):
 * metadata, counters, warnings, functions and stacks.  Speedscope needs a
 * grouped P: a sampled profile per group.  Each sample as perf script
 * prints it and pprof are not written from a profile: see
 * prof_report_perf_script() and prof_report_pprof().
 *
 * Returns: 0; -EINVAL (bad opts, or a stack of P that SP does not define);
 * -ENOMEM; the error of writing to OUT (-ENOSPC, -EPIPE, ...; -EIO when
 * unknown).
 */
int prof_report_write(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		      struct prof_symbolizer *sym, const struct prof_report_opts *opts);

/*
 * Read every record of SP that is left and print each sample that F (NULL:
 * none) keeps as `perf script` does: "COMM PID/TID SEC.USEC: PERIOD
 * EVENT: ", then its frames leaf first, "\tADDR FUNCTION+0xOFF (MODULE)"
 * (the module's path, [kernel.kallsyms], or "inlined" for each function
 * of an inline chain but the outermost), then an empty line.  COMM is the
 * thread's name at the sample, spaces made '_'; SEC.USEC its
 * CLOCK_MONOTONIC time.  *RET_SAMPLES (if not NULL): the samples printed.
 * Returns: 0; those of prof_filter_sample(); the error of writing to OUT.
 */
int prof_report_perf_script(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
			    struct prof_filter *f, uint64_t *ret_samples);

/*
 * Read every record of SP that is left and write the samples F (NULL:
 * none) keeps as `go tool pprof` reads them: a gzip'd profile.proto with
 * sample types samples/count and cpu/nanoseconds (the sum of the samples'
 * periods), a sample per (thread, stack) labelled thread (its name at the
 * end), tid and pid, a location per spool frame (its inline chain as
 * lines, callee first), a function per name and source file, a mapping
 * per module (with its build-id).  Nothing is written when no sample is
 * kept.  *RET_SAMPLES (if not NULL): the samples kept.
 * Returns: 0; those of prof_filter_sample(); -ENOMEM; the error of writing
 * to OUT.
 */
int prof_report_pprof(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		      struct prof_filter *f, uint64_t *ret_samples);

/*
 * Read every record of SP that is left and write the samples F (NULL:
 * the CPU samples) keeps in the Firefox Profiler's Gecko format (version
 * 24, as its own perf importer writes it; gzip'd if GZIP): a thread object
 * per thread with its pid and tid (the profiler groups threads into
 * processes by pid), its name and its process's, its string, frame
 * ("function (in module)", the source line where known, a category: User,
 * Kernel, Off-CPU or Other) and stack tables, and its samples sorted by
 * time: [stack, ms since meta.startTime, 0, CPU us since its last].  With
 * a weight that keeps off-CPU intervals (off-cpu, wall), an interval is a
 * sample a millisecond of the wait (at most 1,000, spread evenly) of its
 * stack, with no CPU; a sample without frames has the one frame "[empty
 * stack]", as folded counts it.  Nothing is written when no sample is kept.
 * *RET_SAMPLES (if not NULL): the samples and intervals kept.
 * Returns: 0; those of prof_filter_sample(); -ENOMEM; the error of writing
 * to OUT.
 */
int prof_report_gecko(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		      struct prof_filter *f, bool gzip, uint64_t *ret_samples);

/*
 * A viewer: one HTML file that needs nothing else (no other file, no
 * network: its Content-Security-Policy forbids every fetch) and shows a
 * spool in a browser, opened from file://: a timeline per thread (CPU
 * samples as activity, off-CPU intervals blocked or runnable), a flame
 * graph, a call tree and a table of functions, all re-aggregated in the
 * page for the time range, thread or process and transforms chosen there.
 * It holds every sample and interval kept, so it grows with them: 2 to 12
 * bytes each (gzip'd), the more the more distinct the stacks.
 */
struct prof_viewer;

struct prof_viewer_opts {
	size_t sz;			/* sizeof(struct prof_viewer_opts) */
	bool diff;			/* two spools are added, the base then the new
					 * one: the page shows the new one, coloured by
					 * the change of each share since the base */
};

/*
 * An empty viewer of OPTS (NULL: one spool, no diff).
 * Returns: 0 and *ret; -EINVAL (bad opts); -ENOMEM.
 */
int prof_viewer_new(const struct prof_viewer_opts *opts, struct prof_viewer **ret);

/*
 * Read every record of SP that is left and add to V the CPU samples and
 * off-CPU intervals that F (NULL: none) keeps, whatever F weighs: the page
 * shows F's weight first and switches to the others SP allows
 * (prof_spool_check_weight()).  Frames are named with SYM, functions told
 * apart by name, module and inlining (as the tree format does), with their
 * source file and each frame's line where known; with the header of the
 * top format (titled TITLE, which may be NULL), the warnings of
 * prof_report_warnings() and the counters.  V keeps copies: SP and SYM
 * may be closed after it.  *RET_SAMPLES (if not NULL): the samples (or
 * intervals) of F's weight kept.
 * Returns: 0; -EINVAL (a spool more than V takes: one, or two for a
 * diff); those of prof_filter_sample(); -ENOMEM.
 */
int prof_viewer_add(struct prof_viewer *v, struct prof_spool *sp, struct prof_symbolizer *sym,
		    struct prof_filter *f, const char *title, uint64_t *ret_samples);

/*
 * Write the page of V, which has its spool (or both of a diff), to OUT.
 * Returns: 0; -EINVAL (a spool missing); the error of writing to OUT.
 */
int prof_viewer_write(struct prof_viewer *v, FILE *out);

/* Free V (NULL: nothing). */
void prof_viewer_free(struct prof_viewer *v);

/*
 * The idle task of SP, a recording of the whole machine (PROF_META_SYSTEM),
 * as a process: a section "process [idle] (pid 0): N samples (P% of the M
 * the CPUs delivered)" for the end of a top or tree report.  Its samples
 * were counted (the trailer's idle_samples), not written, so it has no
 * stacks.  Of another spool, or one without a trailer yet, the line says
 * idle is not known.
 * Returns: 0; -EINVAL (no OUT or SP); the error of writing to OUT.
 */
int prof_report_idle(FILE *out, const struct prof_spool *sp);

/* One side of a diff: an ungrouped profile, read from SPOOL, named with SYM. */
struct prof_report_diff_side {
	size_t sz;			/* sizeof(struct prof_report_diff_side) */
	const char *name;		/* the spool's file name, for json */
	const struct prof_spool *spool;
	const struct prof_profile *profile;
	struct prof_symbolizer *sym;
};

/*
 * Compare the profiles of BASE and NEW.  Top: a table of every function
 * (by name and module; an inlined one apart), its self samples as a
 * percent of each side's samples and the change in points, biggest change
 * (either way) first.  Json: the same as an object (schema
 * prof-report-diff/1, see prof-report(1)).  Folded: each stack of either
 * side, "STACK BASE NEW", by stack, as difffolded.pl writes.  Svg: NEW's
 * flame graph, each frame coloured by how its share changed.
 * *RET_MAX_GROWTH (if not NULL): the largest change of a function's (top,
 * json, svg) or stack's (folded) share, in points (0 if none grew).
 * Returns: 0; -EINVAL (another format, a grouped profile, a side's sz not
 * set); -ENOMEM; the symbolizer's errors; the error of writing to OUT.
 */
int prof_report_diff(FILE *out, const struct prof_report_diff_side *base,
		     const struct prof_report_diff_side *new_side, enum prof_report_format format,
		     double *ret_max_growth);

typedef void (*prof_report_warn_fn)(const char *msg, void *ctx);

/*
 * Call FN once for each reason the report of SP (read as far as it goes,
 * named PATH in the messages) may not be trustworthy: a spool without a
 * trailer, cut short or damaged; events lost; over 5% of stacks
 * incomplete.  MSG is one line without a newline, lent for the call.
 */
void prof_report_warnings(const struct prof_spool *sp, const char *path, prof_report_warn_fn fn,
			  void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_REPORT_H */
