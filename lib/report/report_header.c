/* SPDX-License-Identifier: MIT */
/*
 * report_header.c - the header of top and tree, which the html viewer
 * shows too: what was recorded (command, start, event, host), how well
 * (the counters: lost events, complete stacks, off-CPU intervals), what
 * the spool holds, what the report weighs and where the names came from.
 * It reads the spool's metadata and counters; nothing here looks at stacks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "report.h"

static void put_str(FILE *out, const char *s)
{
	report_put_name(out, s, false);
}

static void print_time(FILE *out, const char *label, uint64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / 1000000000u);
	struct tm tm;
	char buf[64];

	if (wall_ns && gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		fprintf(out, "%-14s%s\n", label, buf);
	else
		fprintf(out, "%-14s%s\n", label, "unknown");
}

static void print_meta(FILE *out, const struct prof_meta *m)
{
	size_t i;

	fprintf(out, "%-14s", "command:");
	if (!m->argc && !m->npids)
		fprintf(out, "unknown");
	for (i = 0; i < m->argc; i++) {
		fputs(i ? " " : "", out);
		put_str(out, m->argv[i]);
	}
	if (m->npids) {
		fprintf(out, "%spid ", m->argc ? "; " : "");
		for (i = 0; i < m->npids; i++)
			fprintf(out, "%s%" PRId32, i ? "," : "", m->pids[i]);
	}
	fprintf(out, "\n");
	print_time(out, "started:", m->wall_start_ns);
	fprintf(out, "%-14s", "event:");
	put_str(out, *m->event ? m->event : "unknown");
	fprintf(out, ", ");
	if (m->freq_hz)
		fprintf(out, "%" PRIu64 " Hz", m->freq_hz);
	else
		fprintf(out, "period %" PRIu64, m->period);
	fprintf(out, ", user stack %" PRIu64 " bytes%s%s%s\n", m->stack_bytes,
		m->flags & PROF_META_KERNEL ? ", kernel frames" : "",
		m->flags & PROF_META_SYSTEM ? ", the whole machine"
		: m->flags & PROF_META_INHERIT ? ", children followed" : "",
		m->flags & PROF_META_OFFCPU ? ", off-CPU" : "");
	fprintf(out, "%-14s", "host:");
	put_str(out, m->hostname);
	fprintf(out, ", Linux ");
	put_str(out, m->kernel_release);
	fprintf(out, " ");
	put_str(out, m->arch);
	fprintf(out, ", page size %" PRIu64 "\n", m->page_size);
	fprintf(out, "%-14sprof ", "recorded by:");
	put_str(out, m->prof_version);
	fprintf(out, "\n");
}

static void print_counters(FILE *out, const struct prof_counters *c, const struct prof_meta *m)
{
	uint64_t lost_switch = c->lost[PROF_LOST_SWITCH_SAMPLES] + c->lost[PROF_LOST_SWITCH_RECORDS];
	uint64_t lost_all = prof_counters_lost_total(c), lost = lost_all - lost_switch;
	uint64_t complete = c->samples - c->truncated_stacks - c->empty_stacks;
	bool any = false;
	size_t i;

	if (c->mono_end_ns >= m->mono_start_ns)
		fprintf(out, "%-14s%.3f s\n", "duration:",
			(double)(c->mono_end_ns - m->mono_start_ns) / 1e9);
	fprintf(out, "%-14s%" PRIu64 " written, %" PRIu64 " delivered by the kernel, %" PRIu64
		" lost (%.2f%%)\n", "samples:", c->samples, c->sample_events, lost,
		report_pct(lost, c->samples + lost));
	if (c->cpus) {
		/* the whole machine: the idle task's samples are its idle time */
		uint64_t busy = c->sample_events - c->idle_samples;

		fprintf(out, "%-14sbusy %.1f%% of %" PRIu64 " CPU%s (%" PRIu64 " idle samples)\n",
			"machine:", report_pct(busy, c->sample_events), c->cpus,
			c->cpus == 1 ? "" : "s", c->idle_samples);
	}
	if (c->python_frames || c->python_stale || c->python_unread)
		fprintf(out, "%-14s%" PRIu64 " frames read, %" PRIu64 " stale (not shown), %" PRIu64
			" eval loops unread\n", "python:", c->python_frames, c->python_stale,
			c->python_unread);
	if (m->flags & PROF_META_OFFCPU) {
		uint64_t whole = c->offcpu_intervals - c->offcpu_unsampled - c->offcpu_truncated;

		fprintf(out, "%-14s%" PRIu64 " intervals, %.3f s, %" PRIu64 " switch-outs sampled, %"
			PRIu64 " lost (%.2f%%)\n", "off-CPU:", c->offcpu_intervals,
			(double)c->offcpu_ns / 1e9, c->switch_events, lost_switch,
			report_pct(lost_switch, c->switch_events + lost_switch));
		fprintf(out, "%-14s%" PRIu64 " complete stacks (%.1f%%), %" PRIu64 " truncated, %"
			PRIu64 " not sampled\n", "", whole,
			report_pct(whole, c->offcpu_intervals), c->offcpu_truncated,
			c->offcpu_unsampled);
	}
	if (lost_all) {
		fprintf(out, "%-14s", "lost by kind:");
		for (i = 1; i < LOST_KIND_COUNT; i++)
			if (c->lost[i])
				fprintf(out, " %s %" PRIu64, prof_lost_kind_name((unsigned)i),
					c->lost[i]);
		fprintf(out, "\n");
	}
	fprintf(out, "%-14s%" PRIu64 " complete (%.1f%%), %" PRIu64 " truncated, %" PRIu64
		" empty\n", "stacks:", complete, report_pct(complete, c->samples),
		c->truncated_stacks, c->empty_stacks);
	fprintf(out, "%-14s", "unwind errors:");
	for (i = 1; i < UNWIND_ERROR_COUNT; i++)
		if (c->unwind_errors[i]) {
			fprintf(out, " %s %" PRIu64, prof_unwind_error_name((unsigned)i),
				c->unwind_errors[i]);
			any = true;
		}
	fprintf(out, "%s\n", any ? "" : " none");
	if (c->frames) {
		/* spools of prof 0.2 on: how the user frames were unwound */
		fprintf(out, "%-14s%" PRIu64 " user frames;", "unwound:", c->frames);
		for (i = 1; i < FALLBACK_COUNT; i++)
			fprintf(out, " %s %" PRIu64, prof_unwind_fallback_name((unsigned)i),
				c->fallback_frames[i]);
		fprintf(out, "; the rest by CFI\n");
	}
	fprintf(out, "%-14s%" PRIu64 " processes, %" PRIu64 " threads; %" PRIu64
		" lifecycle gaps, %" PRIu64 " reconciliations\n", "tracked:", c->processes,
		c->threads, c->lifecycle_gaps, c->reconciliations);
}

int report_print_header(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
			struct prof_symbolizer *sym, const char *title)
{
	struct names_summary names;
	int r;

	const struct prof_counters *c = prof_spool_counters(sp);
	SIZED(prof_spool_status, st);
	SIZED(prof_spool_counts, n);

	prof_spool_status(sp, &st);
	prof_spool_counts(sp, &n);
	if (title) {
		fprintf(out, "# prof report of ");
		put_str(out, title);
		fprintf(out, "\n");
	}
	print_meta(out, prof_spool_meta(sp));
	if (c) {
		print_counters(out, c, prof_spool_meta(sp));
	} else {
		if (p->last_ns > p->first_ns)
			fprintf(out, "%-14s%.3f s of samples (no trailer)\n", "duration:",
				(double)(p->last_ns - p->first_ns) / 1e9);
		fprintf(out, "%-14s%" PRIu64 " read (no trailer: counters unknown)\n", "samples:",
			n.samples);
	}
	fprintf(out, "%-14s%" PRIu32 " processes, %" PRIu32 " threads, %" PRIu32 " modules, %"
		PRIu32 " frames, %" PRIu32 " stack nodes, %" PRIu32 " symbols\n", "spool holds:",
		n.processes, n.threads, n.modules, n.frames, n.stacks, n.symbols);
	fprintf(out, "%-14s%" PRIu64 " bytes in %" PRIu64 " blocks", "spool size:", st.file_size,
		st.blocks);
	if (n.samples + n.offcpu)
		fprintf(out, ", %.2f bytes/%s", (double)st.file_size / (double)(n.samples + n.offcpu),
			n.offcpu ? "sample or interval" : "sample");
	fprintf(out, "\n");
	if (p->weight != PROF_WEIGHT_CPU)
		fprintf(out, "%-14s%s time, %.3f s in %" PRIu64 " %s\n", "weight:",
			p->weight == PROF_WEIGHT_OFFCPU ? "off-CPU" : "wall",
			(double)p->total / 1e9, p->samples,
			p->weight == PROF_WEIGHT_OFFCPU ? "intervals" : "samples and intervals");
	r = names_collect(&names, sp, p, sym);
	if (r >= 0)
		names_print(out, &names);
	names_release(&names);
	return r;
}
