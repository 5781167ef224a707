/* SPDX-License-Identifier: MIT */
/*
 * report.c - `prof report [FILE]`: read a spool and print what it holds.
 * Options and printing only; reading is lib/'s.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "prof.h"

struct report_args {
	const char *path;
	int verbosity;
};

static const struct argp_option report_options[] = {
	{ "quiet", 'q', NULL, 0, "print no warnings", 0 },
	{ "verbose", 'v', NULL, 0, "print more detail on stderr (repeat for debug)", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp report_argp;

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct report_args *args = state->input;

	switch (key) {
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
	.doc = "Print the profile recorded in FILE (default: prof.spool)."
	       "\vA spool that was cut short or damaged is read up to its last complete, "
	       "valid block, with a warning.\n\n"
	       "Exit status: 0 success (also for a partial spool), 1 the spool cannot be "
	       "read, 64 usage error.",
};

static void print_time(const char *label, uint64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / 1000000000u);
	struct tm tm;
	char buf[64];

	if (wall_ns && gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		printf("%-14s%s\n", label, buf);
	else
		printf("%-14s%s\n", label, "unknown");
}

static void print_meta(const struct prof_meta *m)
{
	size_t i;

	printf("%-14s", "command:");
	if (!m->argc && !m->npids)
		printf("unknown");
	for (i = 0; i < m->argc; i++)
		printf("%s%s", i ? " " : "", m->argv[i]);
	if (m->npids) {
		printf("%spid ", m->argc ? "; " : "");
		for (i = 0; i < m->npids; i++)
			printf("%s%" PRId32, i ? "," : "", m->pids[i]);
	}
	printf("\n");
	print_time("started:", m->wall_start_ns);
	printf("%-14s%s, ", "event:", *m->event ? m->event : "unknown");
	if (m->freq_hz)
		printf("%" PRIu64 " Hz", m->freq_hz);
	else
		printf("period %" PRIu64, m->period);
	printf(", user stack %" PRIu64 " bytes%s%s\n", m->stack_bytes,
	       m->flags & PROF_META_KERNEL ? ", kernel frames" : "",
	       m->flags & PROF_META_INHERIT ? ", children followed" : "");
	printf("%-14s%s, Linux %s %s, page size %" PRIu64 "\n", "host:", m->hostname,
	       m->kernel_release, m->arch, m->page_size);
	printf("%-14sprof %s\n", "recorded by:", m->prof_version);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_counters(const struct prof_counters *c, const struct prof_meta *m)
{
	uint64_t lost = prof_counters_lost_total(c);
	size_t i;
	bool any = false;

	if (c->mono_end_ns >= m->mono_start_ns)
		printf("%-14s%.3f s\n", "duration:", (double)(c->mono_end_ns - m->mono_start_ns) / 1e9);
	printf("%-14s%" PRIu64 " written, %" PRIu64 " delivered by the kernel, %" PRIu64
	       " lost (%.2f%%)\n", "samples:", c->samples, c->sample_events, lost,
	       pct(lost, c->samples + lost));
	if (lost) {
		printf("%-14s", "lost by kind:");
		for (i = 1; i < PROF_LOST__COUNT; i++)
			if (c->lost[i])
				printf(" %s %" PRIu64, prof_lost_kind_name((unsigned)i), c->lost[i]);
		printf("\n");
	}
	printf("%-14s%" PRIu64 " complete (%.1f%%), %" PRIu64 " truncated, %" PRIu64 " empty\n",
	       "stacks:", c->samples - c->truncated_stacks - c->empty_stacks,
	       pct(c->samples - c->truncated_stacks - c->empty_stacks, c->samples),
	       c->truncated_stacks, c->empty_stacks);
	printf("%-14s", "unwind errors:");
	for (i = 1; i < PROF_UNWIND__COUNT; i++)
		if (c->unwind_errors[i]) {
			printf(" %s %" PRIu64, prof_unwind_error_name((unsigned)i), c->unwind_errors[i]);
			any = true;
		}
	printf("%s\n", any ? "" : " none");
	printf("%-14s%" PRIu64 " processes, %" PRIu64 " threads; %" PRIu64
	       " lifecycle gaps, %" PRIu64 " reconciliations\n", "tracked:", c->processes,
	       c->threads, c->lifecycle_gaps, c->reconciliations);
}

static int run_report(int argc, char **argv)
{
	struct report_args args = { .path = "prof.spool", .verbosity = 1 };
	struct prof_spool_status st;
	struct prof_spool_counts n;
	const struct prof_counters *c;
	struct prof_spool *sp;
	struct prof_event ev;
	uint64_t first = 0, last = 0;
	int r;

	args.path = NULL;
	argp_parse(&report_argp, argc, argv, 0, NULL, &args);
	if (!args.path)
		args.path = "prof.spool";
	set_verbosity(args.verbosity);

	r = prof_spool_open(args.path, &sp);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		if (ev.type != PROF_EV_SAMPLE)
			continue;
		if (!first)
			first = ev.time_ns;
		last = ev.time_ns;
	}
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_spool_close(sp);
		return EXIT_FAIL;
	}
	prof_spool_status(sp, &st);
	prof_spool_counts(sp, &n);
	c = prof_spool_counters(sp);

	printf("# prof report of %s\n", args.path);
	print_meta(prof_spool_meta(sp));
	if (c) {
		print_counters(c, prof_spool_meta(sp));
	} else {
		if (last > first)
			printf("%-14s%.3f s of samples (no trailer)\n", "duration:",
			       (double)(last - first) / 1e9);
		printf("%-14s%" PRIu64 " read (no trailer: counters unknown)\n", "samples:",
		       n.samples);
	}
	printf("%-14s%" PRIu32 " processes, %" PRIu32 " threads, %" PRIu32 " modules, %" PRIu32
	       " frames, %" PRIu32 " stack nodes, %" PRIu32 " symbols\n", "spool holds:",
	       n.processes, n.threads, n.modules, n.frames, n.stacks, n.symbols);
	printf("%-14s%" PRIu64 " bytes in %" PRIu64 " blocks", "spool size:", st.file_size,
	       st.blocks);
	if (n.samples)
		printf(", %.2f bytes/sample", (double)st.file_size / (double)n.samples);
	printf("\n");

	switch (st.state) {
	case PROF_SPOOL_FINISHED:
		break;
	case PROF_SPOOL_READING:
		warn_msg("spool '%s' has no trailer: the recording is still running or was killed",
			 args.path);
		break;
	case PROF_SPOOL_CUT:
		warn_msg("spool '%s' is cut short (%s): showing its %" PRIu64 " complete blocks",
			 args.path, st.reason, st.blocks);
		break;
	case PROF_SPOOL_CORRUPT:
		warn_msg("spool '%s' is damaged (%s): showing the %" PRIu64 " valid blocks before it",
			 args.path, st.reason, st.blocks);
		break;
	}
	if (c && c->samples + prof_counters_lost_total(c) &&
	    pct(prof_counters_lost_total(c), c->samples + prof_counters_lost_total(c)) > 1.0)
		warn_msg("%.1f%% of samples were lost: the profile may be skewed",
			 pct(prof_counters_lost_total(c), c->samples + prof_counters_lost_total(c)));
	if (c && c->samples && pct(c->truncated_stacks + c->empty_stacks, c->samples) > 5.0)
		warn_msg("%.1f%% of stacks are incomplete: callers may be missing",
			 pct(c->truncated_stacks + c->empty_stacks, c->samples));
	prof_spool_close(sp);
	return EXIT_OK;
}

const struct prof_cmd cmd_report = {
	.name = "report",
	.summary = "print the profile recorded in a spool",
	.main = run_report,
};
