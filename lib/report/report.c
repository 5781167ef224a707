/* SPDX-License-Identifier: MIT */
/*
 * report.c - prof_report_write(): the choice of output format, after the
 * header of a report (report_header.c: what was recorded, and how well).
 * The formats themselves live in output_*.c, the sections of a profile
 * grouped by thread or process in report_group.c, and how every format
 * writes text in report_text.c; nothing here looks at stacks.  No other
 * file of the report calls back into this one.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

static const char *const format_names[REPORT_FORMAT_COUNT] = {
	[PROF_REPORT_TOP] = "top",
	[PROF_REPORT_TREE] = "tree",
	[PROF_REPORT_FOLDED] = "folded",
	[PROF_REPORT_JSON] = "json",
	[PROF_REPORT_SPEEDSCOPE] = "speedscope",
	[PROF_REPORT_SVG] = "svg",
};

const char *prof_report_format_name(unsigned format)
{
	return format < REPORT_FORMAT_COUNT ? format_names[format] : NULL;
}

int prof_report_format_parse(const char *name)
{
	return name_parse(format_names, REPORT_FORMAT_COUNT, name, "report format", "formats");
}

/* The views of an ungrouped profile, after the header (if any). */
static int report_all(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		      struct prof_symbolizer *sym, const struct prof_report_opts *o)
{
	struct agg a;
	int r;

	r = agg_build(&a, sp, p, sym, agg_keys_of(o));
	if (r < 0)
		goto out;
	if (o->format == PROF_REPORT_TOP || o->format == PROF_REPORT_TREE)
		fputc('\n', out);
	switch (o->format) {
	case PROF_REPORT_JSON:
		r = output_json(out, &a, sp, p, sym, o);
		break;
	case PROF_REPORT_TOP:
		r = output_top(out, &a, o);
		break;
	case PROF_REPORT_TREE:
		r = output_tree(out, &a, o);
		break;
	case PROF_REPORT_SVG:
		r = output_svg(out, &a, sp, o);
		break;
	default:
		r = output_folded(out, &a, NULL);
		break;
	}
out:
	agg_release(&a);
	return r;
}

/*
 * --idle: the idle task of a whole machine's spool as a process, a section
 * of its own: its samples were counted, not written, so it has no stacks,
 * and its share is of every sample the CPUs delivered (the profile's
 * percents are of the samples written).
 */
int prof_report_idle(FILE *out, const struct prof_spool *sp)
{
	const struct prof_counters *c;

	if (!out || !sp)
		return error_setx(-EINVAL, "nothing to report");
	c = prof_spool_counters(sp);
	errno = 0;
	if (!(prof_spool_meta(sp)->flags & PROF_META_SYSTEM))
		fprintf(out, "\nidle: not known (not a recording of the whole machine)\n");
	else if (!c)
		fprintf(out, "\nidle: not known yet (no trailer)\n");
	else
		fprintf(out, "\nprocess [idle] (pid 0): %" PRIu64 " sample%s (%.1f%% of the %"
			PRIu64 " the CPUs delivered)\n", c->idle_samples, c->idle_samples == 1 ? "" : "s",
			report_pct(c->idle_samples, c->sample_events), c->sample_events);
	if (fflush(out) == EOF || ferror(out))
		return error_set(errno ? -errno : -EIO, "cannot write the report");
	return 0;
}

int prof_report_write(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		      struct prof_symbolizer *sym, const struct prof_report_opts *opts)
{
	struct prof_report_opts o;
	int r;

	if (!out || !sp || !p || !sym)
		return error_setx(-EINVAL, "nothing to report");
	r = opts_copy(&o, sizeof(o), opts, "report");
	if (r < 0)
		return r;
	if ((unsigned)o.format >= REPORT_FORMAT_COUNT || !(o.min_percent >= 0.0))
		return error_setx(-EINVAL, "invalid report options");
	if (!o.limit && o.format == PROF_REPORT_TOP)
		o.limit = 30;

	if (o.inverted && o.format != PROF_REPORT_TREE && o.format != PROF_REPORT_FOLDED &&
	    o.format != PROF_REPORT_SVG)
		return error_setx(-EINVAL, "only tree, folded and svg can be inverted");
	if (o.format == PROF_REPORT_JSON && p->by != PROF_GROUP_NONE)
		return error_setx(-EINVAL, "the json format does not split by thread or process");
	if (o.format == PROF_REPORT_TOP || o.format == PROF_REPORT_TREE) {
		r = report_print_header(out, sp, p, sym, o.title);
		if (r < 0)
			return r;
	}
	if (o.format == PROF_REPORT_SPEEDSCOPE)
		r = output_speedscope(out, sp, p, sym, &o);
	else if (p->by != PROF_GROUP_NONE)
		r = report_groups(out, sp, p, sym, &o);
	else
		r = report_all(out, sp, p, sym, &o);
	errno = 0;
	if (r == 0 && (fflush(out) == EOF || ferror(out)))
		r = error_set(errno ? -errno : -EIO, "cannot write the report");
	return r;
}
