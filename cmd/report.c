/* SPDX-License-Identifier: MIT */
/*
 * report.c - `prof report [FILE]`: read a spool and print its profile.
 * Options and warnings only; reading, naming and printing are lib/'s.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "prof.h"

enum {
	OPT_FORMAT = 0x100,
	OPT_LIMIT,
	OPT_MIN_PERCENT,
	OPT_BY_THREAD,
	OPT_BY_PROCESS,
	OPT_IDLE,
	OPT_LINES,
	OPT_NO_DEMANGLE,
	OPT_DEBUG_DIR,
	OPT_DEBUGINFOD,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_TIME,
	OPT_NO_KERNEL,
	OPT_FOCUS,
	OPT_EXCLUDE,
	OPT_DIFF,
	OPT_FAIL_ABOVE,
	OPT_INVERTED,
	OPT_WEIGHT,
};

enum { EXIT_GREW = 3 };	/* --fail-above: a function's share grew more than allowed */

/*
 * The formats written as the spool is read (prof_report_perf_script(),
 * prof_report_pprof(), ...), not from a profile by prof_report_write();
 * html is the viewer's page (prof_viewer_*), of one spool or a diff.
 */
enum stream_format {
	STREAM_NONE,
	STREAM_PERF_SCRIPT,
	STREAM_PPROF,
	STREAM_GECKO,
	STREAM_HTML,
};

static const char *const stream_names[] = {
	[STREAM_PERF_SCRIPT] = "perf-script",
	[STREAM_PPROF] = "pprof",
	[STREAM_GECKO] = "gecko",
	[STREAM_HTML] = "html",
};

struct report_args {
	const char *path;
	int verbosity;
	enum prof_group_by group_by;
	const char *group_opt;		/* the option that set group_by */
	bool show_idle;			/* --idle */
	struct prof_report_opts opts;
	enum stream_format stream;	/* else opts.format */
	struct prof_symbolizer_opts sym;
	char *debug_dirs;		/* every --debug-dir, joined with ':' */
	struct prof_filter_opts filter_opts;
	struct prof_filter *filter;
	bool diff;
	const char *new_path;		/* --diff: the second spool */
	const char **paths;		/* every spool given: read as one recording */
	size_t npaths;
	double fail_above;		/* < 0: none */
	bool min_percent_set;		/* else the format's default */
	const char *output;		/* -o: the file to write; NULL: standard output */
	FILE *out;			/* where the report goes */
	struct prof_viewer *viewer;	/* html: the page, spool by spool */
};

/* gecko: gzip'd when -o names a .gz file, as the Firefox Profiler loads either */
static bool gzip_output(const struct report_args *args)
{
	size_t n = args->output ? strlen(args->output) : 0;

	return n > 3 && !strcmp(args->output + n - 3, ".gz");
}

static const struct argp_option report_options[] = {
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "top, tree, folded, json, perf-script, pprof, gecko, speedscope, svg or html", 0 },
	{ "output", 'o', "FILE", 0,
	  "write the report to FILE (put in place once complete), not standard output", 0 },
	{ "limit", OPT_LIMIT, "N", 0, "list N functions in top (default 30) or json (default all); "
	  "0 all", 0 },
	{ "min-percent", OPT_MIN_PERCENT, "PCT", 0,
	  "hide what has under PCT% of samples (top, tree: default 0.5; json, svg: 0)", 0 },
	{ "weight", OPT_WEIGHT, "WEIGHT", 0,
	  "cpu (samples: where threads ran, the default), off-cpu (where they waited, "
	  "by time) or wall (both, by time); off-cpu and wall need a spool recorded "
	  "with --off-cpu", 0 },
	{ "inverted", OPT_INVERTED, NULL, 0,
	  "tree, folded and svg: each stack from its leaf out, the callers below what they "
	  "called (svg: an icicle graph)", 0 },
	{ "by-thread", OPT_BY_THREAD, NULL, 0, "one profile per thread (name at the sample, tid)", 0 },
	{ "idle", OPT_IDLE, NULL, 0, "top and tree of a recording of the whole machine (record -a): "
				   "the idle task as a process of its own, at the end", 0 },
	{ "by-process", OPT_BY_PROCESS, NULL, 0, "one profile per process (comm at the sample, pid)",
	  0 },
	{ "lines", OPT_LINES, NULL, 0, "top and tree: a row per source line, with (FILE:LINE)", 0 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0, "show C++ and Rust names mangled", 0 },
	{ "debug-dir", OPT_DEBUG_DIR, "DIR", 0,
	  "look for debug files in DIR (laid out as /usr/lib/debug) first; repeatable, or "
	  "DIR:DIR...", 0 },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, 0,
	  "download missing debug info from DEBUGINFOD_URLS (each lookup bounded by "
	  "DEBUGINFOD_TIMEOUT, default 30 s)", 0 },
	{ "pid", OPT_PID, "PID,...", 0, "only the samples of these processes", 0 },
	{ "tid", OPT_TID, "TID,...", 0, "only the samples of these threads", 0 },
	{ "comm", OPT_COMM, "NAME,...", 0,
	  "only the samples of threads, or processes, of these names", 0 },
	{ "time", OPT_TIME, "START,END", 0,
	  "only the samples from START to END seconds into the recording (either may be "
	  "empty)", 0 },
	{ "no-kernel", OPT_NO_KERNEL, NULL, 0, "leave out kernel frames", 0 },
	{ "focus", OPT_FOCUS, "REGEX", 0,
	  "only the stacks through a function matching REGEX (extended)", 0 },
	{ "exclude", OPT_EXCLUDE, "REGEX", 0,
	  "leave out the stacks through a function matching REGEX (extended)", 0 },
	{ "diff", OPT_DIFF, NULL, 0,
	  "compare two spools, BASE and NEW: each function's share in both (top, json), "
	  "each stack's two counts (folded), or NEW's flame graph coloured by the change "
	  "(svg, html)", 0 },
	{ "fail-above", OPT_FAIL_ABOVE, "PCT", 0,
	  "with --diff, exit 3 when a share grew by more than PCT points", 0 },
	{ "quiet", 'q', NULL, 0, "print no warnings", 0 },
	{ "verbose", 'v', NULL, 0, "print more detail on stderr (repeat for debug)", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp report_argp;

/* Add DIRS (one directory, or a colon-separated list) to the list *ALL. */
static int append_dirs(char **all, const char *dirs)
{
	char *joined;

	if (asprintf(&joined, "%s%s%s", *all ? *all : "", *all ? ":" : "", dirs) < 0)
		return -ENOMEM;
	free(*all);
	*all = joined;
	return 0;
}

/* The name of the format ARGS asks for. */
static const char *format_name(const struct report_args *args)
{
	return args->stream ? stream_names[args->stream]
			    : prof_report_format_name(args->opts.format);
}

/* Set the format named NAME: one of the library's, or a streamed one. */
static void parse_format(struct report_args *args, const char *name, struct argp_state *state)
{
	char list[256] = "";
	const char *f;
	size_t len = 0;
	unsigned i;
	int r;

	for (i = 1; i < sizeof(stream_names) / sizeof(stream_names[0]); i++)
		if (!strcmp(name, stream_names[i])) {
			args->stream = i;
			return;
		}
	r = prof_report_format_parse(name);
	if (r >= 0) {
		args->stream = STREAM_NONE;
		args->opts.format = (enum prof_report_format)r;
		return;
	}
	for (i = 0; (f = prof_report_format_name(i)) && len < sizeof(list); i++) {
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", f);
		if (i == PROF_REPORT_JSON && len < sizeof(list))	/* the order of --help */
			len += (size_t)snprintf(list + len, sizeof(list) - len, ", %s, %s, %s",
						stream_names[STREAM_PERF_SCRIPT],
						stream_names[STREAM_PPROF],
						stream_names[STREAM_GECKO]);
	}
	argp_error(state, "'%s' is not a report format; the formats are: %s, %s", name, list,
		   stream_names[STREAM_HTML]);
}

/*
 * The argument of the filter option --OPT, as ONE (a filter of that option
 * alone) holds it, once the library took it: else a usage error that names
 * the option, which the library's message cannot.
 */
static const char *check_filter(struct argp_state *state, const char *opt,
				const struct prof_filter_opts *one)
{
	struct prof_filter *f;

	if (prof_filter_new(one, &f) < 0)
		argp_error(state, "--%s: %s", opt, prof_errmsg());
	prof_filter_free(f);
	return one->pids ?: one->tids ?: one->time ?: one->focus ?: one->exclude;
}

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct report_args *args = state->input;
	const char *opt;
	char *end;
	int r;

	switch (key) {
	case OPT_FORMAT:
		parse_format(args, arg, state);
		break;
	case OPT_LIMIT:
		errno = 0;
		args->opts.limit = strtol(arg, &end, 10);
		if (errno || end == arg || *end || args->opts.limit < 0)
			argp_error(state, "invalid --limit '%s': expected a number of rows, 0 for all",
				   arg);
		if (!args->opts.limit)
			args->opts.limit = -1;
		break;
	case OPT_MIN_PERCENT:
		args->opts.min_percent = strtod(arg, &end);
		if (end == arg || *end || !(args->opts.min_percent >= 0.0) ||
		    args->opts.min_percent > 100.0)
			argp_error(state, "invalid --min-percent '%s': expected a percentage "
				   "from 0 to 100", arg);
		args->min_percent_set = true;
		break;
	case OPT_INVERTED:
		args->opts.inverted = true;
		break;
	case 'o':
		if (!*arg)
			argp_error(state, "-o needs a file name");
		args->output = arg;
		break;
	case OPT_BY_THREAD:
	case OPT_BY_PROCESS:
		opt = key == OPT_BY_THREAD ? "--by-thread" : "--by-process";
		if (args->group_opt && strcmp(args->group_opt, opt))
			argp_error(state, "%s and %s cannot be used together", args->group_opt, opt);
		args->group_opt = opt;
		args->group_by = key == OPT_BY_THREAD ? PROF_GROUP_THREAD : PROF_GROUP_PROCESS;
		break;
	case OPT_LINES:
		args->opts.lines = true;
		break;
	case OPT_IDLE:
		args->show_idle = true;
		break;
	case OPT_NO_DEMANGLE:
		args->sym.no_demangle = true;
		break;
	case OPT_DEBUG_DIR:
		if (!*arg)
			argp_error(state, "--debug-dir needs a directory");
		if (append_dirs(&args->debug_dirs, arg) < 0)
			argp_failure(state, EXIT_FAIL, ENOMEM, "cannot parse the options");
		args->sym.debug_dirs = args->debug_dirs;
		break;
	case OPT_DEBUGINFOD:
		args->sym.debuginfod = true;
		break;
	case OPT_PID:
		args->filter_opts.pids = check_filter(state, "pid", &PROF_INIT(prof_filter_opts,
									   .pids = arg));
		break;
	case OPT_TID:
		args->filter_opts.tids = check_filter(state, "tid", &PROF_INIT(prof_filter_opts,
									   .tids = arg));
		break;
	case OPT_COMM:
		args->filter_opts.comms = arg;
		break;
	case OPT_TIME:
		args->filter_opts.time = check_filter(state, "time", &PROF_INIT(prof_filter_opts,
									     .time = arg));
		break;
	case OPT_NO_KERNEL:
		args->filter_opts.no_kernel = true;
		break;
	case OPT_FOCUS:
		args->filter_opts.focus = check_filter(state, "focus", &PROF_INIT(prof_filter_opts,
									       .focus = arg));
		break;
	case OPT_EXCLUDE:
		args->filter_opts.exclude = check_filter(state, "exclude",
							 &PROF_INIT(prof_filter_opts,
								    .exclude = arg));
		break;
	case OPT_WEIGHT:
		r = prof_weight_parse(arg);
		if (r < 0)
			argp_error(state, "%s", prof_errmsg());
		args->filter_opts.weight = (enum prof_weight)r;
		break;
	case OPT_DIFF:
		args->diff = true;
		break;
	case OPT_FAIL_ABOVE:
		args->fail_above = strtod(arg, &end);
		if (end == arg || *end || !(args->fail_above >= 0.0) || args->fail_above > 100.0)
			argp_error(state, "invalid --fail-above '%s': expected a percentage from 0 "
				   "to 100", arg);
		break;
	case ARGP_KEY_END:
		if (args->diff && args->npaths != 2)
			argp_error(state, "--diff needs two spools, BASE and NEW");
		/* the views for people hide the little things; the exports keep them */
		if (!args->min_percent_set)
			args->opts.min_percent = !args->stream && (args->opts.format == PROF_REPORT_TOP ||
								   args->opts.format == PROF_REPORT_TREE)
							 ? 0.5 : 0.0;
		if (args->opts.inverted &&
		    (args->stream || (args->opts.format != PROF_REPORT_TREE &&
				      args->opts.format != PROF_REPORT_FOLDED &&
				      args->opts.format != PROF_REPORT_SVG)))
			argp_error(state, "--inverted applies to tree, folded and svg, not %s",
				   format_name(args));
		if (args->diff && args->opts.inverted)
			argp_error(state, "--diff and --inverted cannot be used together");
		if (args->stream == STREAM_PPROF && !args->output && isatty(STDOUT_FILENO))
			argp_error(state, "pprof is a binary format: give -o FILE or redirect "
				   "standard output");
		if (!args->diff && args->fail_above >= 0.0)
			argp_error(state, "--fail-above needs --diff");
		if (args->diff && args->group_opt)
			argp_error(state, "--diff and %s cannot be used together", args->group_opt);
		if (args->diff && args->stream != STREAM_HTML &&
		    (args->stream || (args->opts.format != PROF_REPORT_TOP &&
				      args->opts.format != PROF_REPORT_FOLDED &&
				      args->opts.format != PROF_REPORT_JSON &&
				      args->opts.format != PROF_REPORT_SVG)))
			argp_error(state, "--diff prints top, folded, json, svg or html, not %s",
				   format_name(args));
		r = prof_filter_new(&args->filter_opts, &args->filter);
		if (r == -ENOMEM)
			argp_failure(state, EXIT_FAIL, ENOMEM, "cannot parse the options");
		if (r < 0)
			argp_error(state, "%s", prof_errmsg());
		break;
	case 'q':
		args->verbosity = 0;
		break;
	case 'v':
		args->verbosity++;
		break;
	case OPT_LIST_OPTIONS:
		list_options(&report_argp);
		break;
	case ARGP_KEY_ARG:
		if (!args->paths && !(args->paths = calloc((size_t)state->argc, sizeof(char *))))
			argp_failure(state, EXIT_FAIL, ENOMEM, "cannot parse the options");
		args->paths[args->npaths++] = arg;
		args->path = args->paths[0];
		args->new_path = args->npaths > 1 ? args->paths[1] : NULL;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp report_argp = {
	.options = report_options,
	.parser = parse_report,
	.args_doc = "[FILE...]\n--diff BASE NEW",
	.doc = "Print the profile recorded in FILE (default: prof.spool), or in the FILEs of one "
	       "recording (prof record --switch-output) read as one: the functions "
	       "that ran most (top), the call tree (tree), folded stacks for flame graphs "
	       "(folded), or an export: json for scripts, perf-script, pprof, gecko (the Firefox "
	       "Profiler's), speedscope, svg, an interactive flame graph, or html, a viewer of "
	       "one file: a timeline of the threads whose range, thread or process selected "
	       "re-aggregates its flame graph, call tree and functions."
	       "\vFunction names come from the spool's own symbol records, else from the ELF "
	       "files the recording mapped (.symtab, else .dynsym); a frame without a name "
	       "shows as module+0xOFFSET.  Where a file's debug info is found (in the file; "
	       "by build-id or .gnu_debuglink under the --debug-dir directories and "
	       "/usr/lib/debug, or beside the file; from debuginfod with --debuginfod), the "
	       "functions inlined at each address are frames of their own, marked "
	       "[inlined], and --lines shows source lines.  C++ and Rust names are "
	       "demangled.  A spool that was cut short or damaged is read up "
	       "to its last complete, valid block, with a warning.\n\n"
	       "--by-thread and --by-process split the report: top and tree print a section "
	       "per thread or process, most samples first, with percents of all samples; "
	       "folded puts a root frame NAME-TID or COMM-PID above each stack.\n\n"
	       "The filters (--pid, --tid, --comm, --time, --no-kernel, --focus, --exclude) "
	       "apply to every format; given together, a sample must pass them all.\n\n"
	       "--weight=off-cpu weighs the off-CPU intervals of a recording made with "
	       "prof record --off-cpu by their time: where threads waited, each stack ending "
	       "in a frame [blocked] or [runnable] (waiting for a CPU); --weight=wall adds "
	       "the CPU samples, each its period, so that a thread weighs its lifetime.  Top "
	       "and tree show time in ms, folded whole microseconds.\n\n"
	       "--diff compares two spools read with the same filters: each function's "
	       "self samples as a percent of each, and the change, biggest first; with "
	       "--format=svg, NEW's flame graph, each frame red where its share grew, blue "
	       "where it shrank; with --format=html, NEW's viewer coloured so, the base's "
	       "shares beside NEW's.\n\n"
	       "Exit status: 0 success (also for a partial spool), 1 the spool cannot be "
	       "read, the report cannot be written, or no sample passes the filters, 3 "
	       "with --fail-above, a share grew by more than allowed, 64 usage error (also pprof to a "
	       "terminal).",
};

static void print_warning(const char *msg, void *ctx)
{
	(void)ctx;
	warn_msg("%s", msg);
}

/* One spool read (or several files read as one): reader, symbolizer, profile, filter. */
struct side {
	const char *path;		/* its name in messages */
	const char *const *paths;	/* the files */
	size_t npaths;
	struct prof_spool *sp;
	struct prof_symbolizer *sym;
	struct prof_profile *prof;
	struct prof_filter *filter;
	uint64_t kept;
};

static void side_free(struct side *s)
{
	prof_filter_free(s->filter);
	prof_symbolizer_free(s->sym);
	prof_profile_free(s->prof);
	prof_spool_close(s->sp);
}

/*
 * Open S->path and count its samples that pass the filters, or write them
 * at once in a streamed format.  0, or -errno with the error printed.
 */
static int side_read(struct side *s, struct report_args *args)
{
	int r;

	r = prof_spool_open_many(s->paths, s->npaths, &s->sp);
	if (r < 0)
		goto fail;
	r = check_weight(s->sp, args->filter_opts.weight);
	if (r < 0)
		return r;	/* printed as --weight's */
	/* first, so that a --debuginfod that cannot work fails before any reading */
	r = prof_symbolizer_new(s->sp, &args->sym, &s->sym);
	if (r == 0)
		r = prof_filter_new(&args->filter_opts, &s->filter);
	if (r == 0)
		r = prof_profile_new(&s->prof);
	if (r == 0)
		r = prof_profile_group_by(s->prof, args->group_by);
	if (r == 0 && args->stream == STREAM_PERF_SCRIPT && !args->diff)
		r = prof_report_perf_script(args->out, s->sp, s->sym, s->filter, &s->kept);
	else if (r == 0 && args->stream == STREAM_PPROF && !args->diff)
		r = prof_report_pprof(args->out, s->sp, s->sym, s->filter, &s->kept);
	else if (r == 0 && args->stream == STREAM_GECKO && !args->diff)
		r = prof_report_gecko(args->out, s->sp, s->sym, s->filter, gzip_output(args),
				      &s->kept);
	else if (r == 0 && args->stream == STREAM_HTML)
		r = prof_viewer_add(args->viewer, s->sp, s->sym, s->filter, s->path, &s->kept);
	else if (r == 0)
		r = prof_profile_read(s->prof, s->sp, s->filter, s->sym);
	if (r == 0 && args->stream != STREAM_HTML && (args->diff || !args->stream))
		s->kept = prof_profile_samples(s->prof);
	if (r < 0)
		goto fail;
	if (prof_filter_active(s->filter) && !s->kept) {
		err_msg("no %s %s%s%smatches the filters",
			args->filter_opts.weight == PROF_WEIGHT_OFFCPU ? "off-CPU interval"
								      : "sample",
			args->diff ? "of '" : "", args->diff ? s->path : "", args->diff ? "' " : "");
		return -ENOENT;
	}
	return 0;
fail:
	err_msg("%s", prof_errmsg());
	return r;
}

static int run_diff(struct report_args *args)
{
	struct side s[2] = { { .path = args->path, .paths = &args->paths[0], .npaths = 1 },
			     { .path = args->new_path, .paths = &args->paths[1], .npaths = 1 } };
	struct prof_report_diff_side d[2];
	double grew = 0.0;
	int r = 0, i;

	for (i = 0; i < 2 && r == 0; i++) {
		r = side_read(&s[i], args);
		d[i] = PROF_INIT(prof_report_diff_side, .name = s[i].path, .spool = s[i].sp,
				 .profile = s[i].prof, .sym = s[i].sym);
	}
	if (r == 0) {
		r = args->viewer ? prof_viewer_write(args->viewer, args->out)
				 : prof_report_diff(args->out, &d[0], &d[1], args->opts.format, &grew);
		if (r < 0)
			err_msg("%s", prof_errmsg());
	}
	for (i = 0; i < 2; i++) {
		if (r == 0)
			prof_report_warnings(s[i].sp, s[i].path, print_warning, NULL);
		side_free(&s[i]);
	}
	if (r < 0)
		return EXIT_FAIL;
	return args->fail_above >= 0.0 && grew > args->fail_above ? EXIT_GREW : EXIT_OK;
}

/*
 * Where the report goes: standard output, or for -o FILE a temporary file
 * beside FILE that output_close() renames over it once the report is
 * complete, so that a failed report leaves FILE as it was.  A FILE that
 * exists and is not a regular file (a pipe, /dev/stdout) is written as it
 * is.  0, or -1 with the error printed.
 */
static int output_open(struct report_args *args, char **tmp)
{
	struct stat st;
	mode_t mask;
	int fd = -1;

	*tmp = NULL;
	args->out = stdout;
	if (!args->output)
		return 0;
	if (stat(args->output, &st) == 0 && !S_ISREG(st.st_mode)) {
		args->out = fopen(args->output, "w");
	} else if (asprintf(tmp, "%s.tmpXXXXXX", args->output) >= 0) {
		fd = mkostemp(*tmp, O_CLOEXEC);
		mask = umask(0);
		umask(mask);
		if (fd >= 0 && fchmod(fd, 0666 & ~mask) == 0)
			args->out = fdopen(fd, "w");
		else
			args->out = NULL;
	} else {
		args->out = NULL;
	}
	if (!args->out) {
		err_msg("cannot write '%s': %s", args->output, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	return 0;
}

/*
 * Finish the report begun by output_open(): put it in place if OK, else
 * drop it.  0, or -1 with the error printed.
 */
static int output_close(struct report_args *args, char *tmp, bool ok)
{
	int r = 0;

	if (args->out == stdout) {
		free(tmp);
		return 0;
	}
	if (fclose(args->out) != 0 && ok) {
		err_msg("cannot write '%s': %s", args->output, strerror(errno));
		ok = false;
		r = -1;
	}
	if (tmp && ok && rename(tmp, args->output) < 0) {
		err_msg("cannot put the report in place as '%s': %s", args->output,
			strerror(errno));
		r = -1;
		ok = false;
	}
	if (tmp && !ok)
		unlink(tmp);
	free(tmp);
	return r;
}

/* The report of one spool, or of several files of one recording.  An exit status. */
static int run_one(struct report_args *args)
{
	struct side s = { .path = args->opts.title, .paths = args->paths, .npaths = args->npaths };
	int r;

	/* speedscope's file holds a profile per thread, or per process */
	if (args->opts.format == PROF_REPORT_SPEEDSCOPE && args->group_by == PROF_GROUP_NONE)
		args->group_by = PROF_GROUP_THREAD;
	r = side_read(&s, args);
	if (r == 0 && args->viewer) {
		r = prof_viewer_write(args->viewer, args->out);
		if (r < 0)
			err_msg("%s", prof_errmsg());
	} else if (r == 0 && !args->stream) {
		r = prof_report_write(args->out, s.sp, s.prof, s.sym, &args->opts);
		if (r == 0 && args->show_idle && (args->opts.format == PROF_REPORT_TOP ||
						  args->opts.format == PROF_REPORT_TREE))
			r = prof_report_idle(args->out, s.sp);
		if (r < 0)
			err_msg("%s", prof_errmsg());
	}
	if (r == 0)
		prof_report_warnings(s.sp, s.path, print_warning, NULL);
	side_free(&s);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

static int run_report(int argc, char **argv)
{
	struct report_args args = {
		.verbosity = 1,
		.opts = { .sz = sizeof(args.opts), .min_percent = 0.5 },
		.sym = { .sz = sizeof(args.sym) },
		.filter_opts = { .sz = sizeof(args.filter_opts) },
		.fail_above = -1.0,
	};
	char *tmp = NULL;
	int code;

	static const char *default_path[] = { "prof.spool" };
	char *title = NULL;

	argp_parse(&report_argp, argc, argv, 0, NULL, &args);
	prof_filter_free(args.filter);	/* it checked the options; each spool gets its own */
	if (!args.npaths) {
		args.path = default_path[0];
		args.paths = default_path;
		args.npaths = 1;
	}
	args.opts.title = args.path;
	if (args.npaths > 1 && !args.diff &&
	    asprintf(&title, "%s (and %zu more)", args.path, args.npaths - 1) >= 0)
		args.opts.title = title;
	set_verbosity(args.verbosity);
	code = EXIT_FAIL;
	if (args.stream == STREAM_HTML &&
	    prof_viewer_new(&PROF_INIT(prof_viewer_opts, .diff = args.diff), &args.viewer) < 0)
		err_msg("%s", prof_errmsg());
	else if (output_open(&args, &tmp) == 0)
		code = args.diff ? run_diff(&args) : run_one(&args);
	if (args.out && output_close(&args, tmp, code != EXIT_FAIL) < 0)
		code = EXIT_FAIL;
	prof_viewer_free(args.viewer);
	free(args.debug_dirs);
	free(title);
	if (args.paths != default_path)
		free(args.paths);
	return code;
}

const struct prof_cmd cmd_report = {
	.name = "report",
	.summary = "print the profile recorded in a spool",
	.main = run_report,
};
