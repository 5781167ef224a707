/* SPDX-License-Identifier: MIT */
/*
 * report_warn.c - why a report may not be trustworthy, one line each: a
 * spool cut short or damaged, lost events, incomplete stacks.  prof report
 * prints them on stderr; the JSON format carries them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "report.h"

static void say(prof_report_warn_fn fn, void *ctx, const char *fmt, ...) PROF_PRINTF(3, 4);

static void say(prof_report_warn_fn fn, void *ctx, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	fn(msg, ctx);
	free(msg);
}

void prof_report_warnings(const struct prof_spool *sp, const char *path, prof_report_warn_fn fn,
			  void *ctx)
{
	const struct prof_counters *c = prof_spool_counters(sp);
	SIZED(prof_spool_status, st);
	uint64_t lost, lost_switch;
	double pct;

	prof_spool_status(sp, &st);
	switch (st.state) {
	case PROF_SPOOL_STATE_FINISHED:
		break;
	case PROF_SPOOL_STATE_READING:
		switch (prof_spool_has_writer(sp)) {
		case 1:
			say(fn, ctx, "spool '%s' has no trailer yet: the recording is still running",
			    path);
			break;
		case 0:
			say(fn, ctx, "spool '%s' has no trailer: its recorder was killed after %"
			    PRIu64 " blocks", path, st.blocks);
			break;
		default:
			say(fn, ctx, "spool '%s' has no trailer: the recording is still running or "
			    "was killed", path);
		}
		break;
	case PROF_SPOOL_STATE_CUT:
		say(fn, ctx, "spool '%s' is cut short (%s): showing its %" PRIu64 " complete blocks",
		    path, st.reason, st.blocks);
		break;
	case PROF_SPOOL_STATE_CORRUPT:
		say(fn, ctx, "spool '%s' is damaged (%s): showing the %" PRIu64 " valid blocks "
		    "before it", path, st.reason, st.blocks);
		break;
	}
	if (!c)
		return;
	lost_switch = c->lost[PROF_LOST_SWITCH_SAMPLES] + c->lost[PROF_LOST_SWITCH_RECORDS];
	lost = prof_counters_lost_total(c) - lost_switch;
	pct = report_pct(lost, c->samples + lost);
	if (lost)
		say(fn, ctx, "%" PRIu64 " events were lost (%.1f%% of samples and losses)%s", lost,
		    pct, pct > 1.0 ? ": the profile may be skewed" : "");
	pct = report_pct(c->truncated_stacks + c->empty_stacks, c->samples);
	if (pct > 5.0)
		say(fn, ctx, "%.1f%% of stacks are incomplete: callers may be missing", pct);
	/* --off-cpu: the switch events apart, they come at their own rate */
	pct = report_pct(lost_switch, c->switch_events + lost_switch);
	if (lost_switch)
		say(fn, ctx, "%" PRIu64 " switch events were lost (%.1f%% of switch-outs and "
		    "losses)%s", lost_switch, pct,
		    pct > 1.0 ? ": off-CPU time may be missing or misplaced" : "");
	pct = report_pct(c->offcpu_truncated + c->offcpu_unsampled, c->offcpu_intervals);
	if (pct > 5.0)
		say(fn, ctx, "%.1f%% of off-CPU stacks are incomplete: callers may be missing", pct);
}
