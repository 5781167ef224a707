/* SPDX-License-Identifier: MIT */
/*
 * report.c - `prof report [FILE]`: read a spool and print its profile.
 * Options and warnings only; reading, naming and printing are lib/'s.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "prof.h"

enum {
	OPT_FORMAT = 0x100,
	OPT_LIMIT,
	OPT_MIN_PERCENT,
	OPT_BY_THREAD,
	OPT_BY_PROCESS,
	OPT_LINES,
	OPT_NO_DEMANGLE,
	OPT_DEBUG_DIR,
	OPT_DEBUGINFOD,
};

struct report_args {
	const char *path;
	int verbosity;
	enum prof_group_by group_by;
	const char *group_opt;		/* the option that set group_by */
	struct prof_report_opts opts;
	struct prof_symbolizer_opts sym;
	char *debug_dirs;		/* every --debug-dir, joined with ':' */
};

static const struct argp_option report_options[] = {
	{ "format", OPT_FORMAT, "FORMAT", 0, "top (the default), tree or folded", 0 },
	{ "limit", OPT_LIMIT, "N", 0, "list N functions in top (default 30, 0 all)", 0 },
	{ "min-percent", OPT_MIN_PERCENT, "PCT", 0,
	  "hide what has under PCT% of samples (default 0.5)", 0 },
	{ "by-thread", OPT_BY_THREAD, NULL, 0, "one profile per thread (name at the sample, tid)", 0 },
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

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct report_args *args = state->input;
	const char *opt;
	char *end;
	int r;

	switch (key) {
	case OPT_FORMAT:
		r = prof_report_format_parse(arg);
		if (r < 0)
			argp_error(state, "%s", prof_errmsg());
		args->opts.format = (enum prof_report_format)r;
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
		if (args->path)
			argp_error(state, "more than one spool given ('%s' and '%s')", args->path,
				   arg);
		args->path = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp report_argp = {
	.options = report_options,
	.parser = parse_report,
	.args_doc = "[FILE]",
	.doc = "Print the profile recorded in FILE (default: prof.spool): the functions "
	       "that ran most (top), the call tree (tree), or folded stacks for flame graphs "
	       "(folded)."
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
	       "Exit status: 0 success (also for a partial spool), 1 the spool cannot be "
	       "read or the report cannot be written, 64 usage error.",
};

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Say, one line each, why the profile read from SP may not be trustworthy. */
static void warn_spool(struct prof_spool *sp, const char *path)
{
	const struct prof_counters *c = prof_spool_counters(sp);
	struct prof_spool_status st;
	uint64_t lost;

	prof_spool_status(sp, &st);
	switch (st.state) {
	case PROF_SPOOL_FINISHED:
		break;
	case PROF_SPOOL_READING:
		warn_msg("spool '%s' has no trailer: the recording is still running or was killed",
			 path);
		break;
	case PROF_SPOOL_CUT:
		warn_msg("spool '%s' is cut short (%s): showing its %" PRIu64 " complete blocks",
			 path, st.reason, st.blocks);
		break;
	case PROF_SPOOL_CORRUPT:
		warn_msg("spool '%s' is damaged (%s): showing the %" PRIu64 " valid blocks before it",
			 path, st.reason, st.blocks);
		break;
	}
	if (!c)
		return;
	lost = prof_counters_lost_total(c);
	if (lost)
		warn_msg("%" PRIu64 " events were lost (%.1f%% of samples and losses)%s", lost,
			 pct(lost, c->samples + lost),
			 pct(lost, c->samples + lost) > 1.0 ? ": the profile may be skewed" : "");
	if (pct(c->truncated_stacks + c->empty_stacks, c->samples) > 5.0)
		warn_msg("%.1f%% of stacks are incomplete: callers may be missing",
			 pct(c->truncated_stacks + c->empty_stacks, c->samples));
}

static int run_report(int argc, char **argv)
{
	struct report_args args = {
		.verbosity = 1,
		.opts = { .sz = sizeof(args.opts), .min_percent = 0.5 },
		.sym = { .sz = sizeof(args.sym) },
	};
	struct prof_symbolizer *sym = NULL;
	struct prof_profile *prof = NULL;
	struct prof_spool *sp;
	int r;

	argp_parse(&report_argp, argc, argv, 0, NULL, &args);
	if (!args.path)
		args.path = "prof.spool";
	args.opts.title = args.path;
	set_verbosity(args.verbosity);

	r = prof_spool_open(args.path, &sp);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		free(args.debug_dirs);
		return EXIT_FAIL;
	}
	/* first, so that a --debuginfod that cannot work fails before any reading */
	r = prof_symbolizer_new_opts(sp, &args.sym, &sym);
	if (r == 0)
		r = prof_profile_new(&prof);
	if (r == 0)
		r = prof_profile_group_by(prof, args.group_by);
	if (r == 0)
		r = prof_profile_read(prof, sp);
	if (r == 0)
		r = prof_report_write(stdout, sp, prof, sym, &args.opts);
	if (r < 0)
		err_msg("%s", prof_errmsg());
	else
		warn_spool(sp, args.path);
	prof_symbolizer_free(sym);
	prof_profile_free(prof);
	prof_spool_close(sp);
	free(args.debug_dirs);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

const struct prof_cmd cmd_report = {
	.name = "report",
	.summary = "print the profile recorded in a spool",
	.main = run_report,
};
