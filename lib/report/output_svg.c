/* SPDX-License-Identifier: MIT */
/*
 * output_svg.c - the flame graph: one SVG file that needs nothing else,
 * its style and script (flamegraph.js) inside it.  Each frame is a box as
 * wide as its samples, above its caller (below it in the icicle of a
 * callers tree), siblings by name as flamegraph.pl orders them, so that
 * two graphs of the same program look alike.  Frames narrower than a tenth
 * of a pixel at full width are left out with what is on them, as
 * flamegraph.pl does; so are those under --min-percent.  Frames are
 * gathered first (a grouped report adds a tree per group) and written at
 * the end, when the height is known.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

#define SVG_WIDTH 1200		/* px: fits a 1280-px screen */
#define SVG_PAD 10		/* px left and right of the frames */
#define FRAME_HEIGHT 16		/* px, a pixel of it the gap between rows */
#define FONT_SIZE 12		/* px */
#define CHAR_WIDTH 7.1		/* px a character takes, about, at FONT_SIZE */
#define TOP_SPACE 64		/* px for the title, subtitle and buttons */
#define BOTTOM_SPACE 34		/* px for the line of details */
#define MIN_FRAME_PX 0.1	/* narrower frames are left out */

struct svg_frame {
	uint64_t start, samples;	/* in samples (or ns) from the left */
	uint32_t depth;			/* 0: the root, "all" */
	enum agg_kind kind;
	bool offcpu;			/* mostly off-CPU time */
	double base_pct;		/* differential: the base's percent on the same path */
	const char *name;		/* the symbolizer's, or a group's label */
	const char *module;
};

struct svg_graph {
	const struct prof_report_opts *o;
	enum prof_weight weight;
	uint64_t samples;		/* the root's: every sample (or ns) */
	uint64_t next;			/* where the next tree begins */
	struct svg_frame *frames;
	size_t nframes, cap;
	uint32_t max_depth;
	char **labels;			/* the groups', owned */
	size_t nlabels, labels_cap;
	uint64_t *cursor;		/* scratch: by depth, where the next frame begins */
	size_t cursor_cap;
	const char *base_name;		/* differential: the base spool's name; else NULL */
	double max_change;		/* differential: the largest change of a frame, points */
};

/* The script, made from flamegraph.js by the Makefile. */
static const char flamegraph_js[] =
#include "flamegraph_js.h"
	;

static int add_frame(struct svg_graph *g, const struct svg_frame *f)
{
	void *v = g->frames;
	int r = grow_array(&v, &g->cap, g->nframes + 1, sizeof(*g->frames));

	g->frames = v;
	if (r < 0)
		return r;
	g->frames[g->nframes++] = *f;
	if (f->depth > g->max_depth)
		g->max_depth = f->depth;
	return 0;
}

int svg_graph_new(struct svg_graph **ret, const struct prof_report_opts *o,
		  enum prof_weight weight, uint64_t samples)
{
	struct svg_graph *g = calloc(1, sizeof(*g));
	int r;

	if (!g)
		return error_setx(-ENOMEM, "out of memory");
	g->o = o;
	g->weight = weight;
	g->samples = samples;
	r = add_frame(g, &(struct svg_frame){ .samples = samples, .kind = AGG_KIND_OTHER,
					      .name = "all", .module = "" });
	if (r < 0) {
		svg_graph_free(g);
		return r;
	}
	*ret = g;
	return 0;
}

void svg_graph_free(struct svg_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nlabels; i++)
		free(g->labels[i]);
	free(g->labels);
	free(g->frames);
	free(g->cursor);
	free(g);
}

/* Whether a frame of SAMPLES is too narrow to draw. */
static bool too_narrow(const struct svg_graph *g, uint64_t samples)
{
	double px;

	if (!g->samples)
		return true;
	px = (double)samples * (SVG_WIDTH - 2 * SVG_PAD) / (double)g->samples;
	return px < MIN_FRAME_PX || report_pct(samples, g->samples) < g->o->min_percent;
}

static int add_tree(struct svg_graph *g, struct agg *a, const char *label, const double *base_pct)
{
	uint32_t base = label ? 1 : 0, n, d;
	uint64_t samples = a->nnodes ? a->nodes[0].total : 0;
	void *v;
	char *copy;
	int r;

	if (!samples)
		return 0;
	if (label && !too_narrow(g, samples)) {
		v = g->labels;
		r = grow_array(&v, &g->labels_cap, g->nlabels + 1, sizeof(*g->labels));
		g->labels = v;
		if (r < 0)
			return r;
		copy = strdup(label);
		if (!copy)
			return error_setx(-ENOMEM, "out of memory");
		g->labels[g->nlabels++] = copy;
		r = add_frame(g, &(struct svg_frame){ .start = g->next, .samples = samples,
						      .depth = 1, .kind = AGG_KIND_OTHER,
						      .name = copy, .module = "",
						      .offcpu = a->nodes[0].offcpu * 2 > samples });
		if (r < 0)
			return r;
	} else if (label) {
		g->next += samples;
		return 0;
	}
	r = agg_sort_children(a, AGG_BY_NAME);
	v = g->cursor;
	if (r == 0)
		r = grow_array(&v, &g->cursor_cap, 2, sizeof(*g->cursor));
	g->cursor = v;
	if (r < 0)
		return r;
	g->cursor[1] = g->next;
	for (n = agg_next(a, 0, false); n;) {
		const struct agg_node *node = &a->nodes[n];
		const struct agg_func *f = &a->funcs[node->func];
		bool skip = too_narrow(g, node->total);

		d = node->depth;
		v = g->cursor;
		r = grow_array(&v, &g->cursor_cap, (size_t)d + 2, sizeof(*g->cursor));
		g->cursor = v;
		if (r < 0)
			return r;
		if (!skip) {
			r = add_frame(g, &(struct svg_frame){ .start = g->cursor[d],
							      .samples = node->total,
							      .depth = d + base,
							      .kind = agg_func_kind(f),
							      .offcpu = node->offcpu * 2 >
									node->total,
							      .base_pct = base_pct ? base_pct[n] : 0,
							      .name = f->name,
							      .module = f->module });
			if (r < 0)
				return r;
			if (base_pct) {
				double c = fabs(report_pct(node->total, g->samples) - base_pct[n]);

				g->max_change = c > g->max_change ? c : g->max_change;
			}
		}
		/* its children begin where it does; its next sibling after it */
		g->cursor[d + 1] = g->cursor[d];
		g->cursor[d] += node->total;
		n = agg_next(a, n, skip);
	}
	g->next += samples;
	return 0;
}

int svg_graph_add(struct svg_graph *g, struct agg *a, const char *label)
{
	return add_tree(g, a, label, NULL);
}

int svg_graph_add_diff(struct svg_graph *g, struct agg *a, const double *base_pct,
		       const char *base_name)
{
	g->base_name = base_name ? base_name : "";
	g->frames[0].base_pct = 100.0;	/* "all" */
	return add_tree(g, a, NULL, base_pct);
}

/* The characters (UTF-8 sequences, or stray bytes) of S, counting up to MAX. */
static size_t count_chars(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0, n;

	for (; *p && chars <= max; p += n ? n : 1, chars++)
		n = report_utf8_len(p);
	return chars;
}

/*
 * Print S as XML character data: escaped, control characters as '?',
 * bytes not UTF-8 as U+FFFD.  If MAX is not 0 and S has more characters,
 * print MAX - 2 of them and "..".
 */
static void put_xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = SIZE_MAX, n;

	if (max && count_chars(s, max) > max)
		left = max > 2 ? max - 2 : 0;
	for (; *p && left; p += n ? n : 1, left--) {
		n = report_utf8_len(p);
		if (*p == '&')
			fputs("&amp;", out);
		else if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '>')
			fputs("&gt;", out);
		else if (*p == '"')
			fputs("&quot;", out);
		else if (*p < 0x20 || *p == 0x7f)
			fputc('?', out);
		else if (n)
			fwrite(p, 1, n, out);
		else
			fputs("\xef\xbf\xbd", out);	/* U+FFFD */
	}
	if (*p)
		fputs("..", out);
}

/* A number 0..1 from NAME, the same for the same name in every graph. */
static double name_hash(const char *name, unsigned salt)
{
	uint32_t h = 2166136261u ^ salt;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	h ^= h >> 15;
	return (double)(h % 1000) / 1000.0;
}

/*
 * The fill of frame F: warm for code, orange for the kernel, aqua for an
 * inlined function, green for code without a module, grey for the rest;
 * a frame of off-CPU time in blues (the kernel's violet), as off-CPU
 * flame graphs are drawn.
 */
static void put_fill(FILE *out, const struct svg_graph *gr, const struct svg_frame *f)
{
	double a = name_hash(f->name, 1), b = name_hash(f->name, 2), c = name_hash(f->name, 3);
	int r, g, bl;

	if (gr->base_name) {
		/* differential: white for no change, to full red or blue at the largest */
		double d = report_pct(f->samples, gr->samples) - f->base_pct;
		double t = gr->max_change > 0 ? fabs(d) / gr->max_change : 0;
		int k = 235 - (int)(200 * (t > 1 ? 1 : t));

		if (d > 0)
			fprintf(out, "rgb(255,%d,%d)", k, k);
		else if (d < 0)
			fprintf(out, "rgb(%d,%d,255)", k, k);
		else
			fputs("rgb(235,235,235)", out);
		return;
	}
	if (f->offcpu && f->kind != AGG_KIND_OTHER) {
		if (f->kind == AGG_KIND_KERNEL)
			r = 140 + (int)(40 * a), g = 110 + (int)(40 * b), bl = 215 + (int)(40 * c);
		else if (f->kind == AGG_KIND_INLINED)
			r = 110 + (int)(40 * a), g = 190 + (int)(40 * b), bl = 230 + (int)(25 * c);
		else
			r = (int)(80 * a), g = 90 + (int)(90 * b), bl = 190 + (int)(65 * c);
		fprintf(out, "rgb(%d,%d,%d)", r, g, bl);
		return;
	}
	switch (f->kind) {
	case AGG_KIND_KERNEL:
		r = 225 + (int)(30 * a), g = 130 + (int)(60 * b), bl = (int)(40 * c);
		break;
	case AGG_KIND_INLINED:
		r = 80 + (int)(60 * a), g = 180 + (int)(60 * b), bl = 180 + (int)(60 * b);
		break;
	case AGG_KIND_ANON:
		r = 60 + (int)(60 * a), g = 190 + (int)(50 * b), bl = 60 + (int)(60 * c);
		break;
	case AGG_KIND_OTHER:
		r = g = 190 + (int)(20 * a), bl = 200 + (int)(20 * a);
		break;
	default:
		r = 205 + (int)(50 * a), g = (int)(230 * b), bl = (int)(55 * c);
		break;
	}
	fprintf(out, "rgb(%d,%d,%d)", r, g, bl);
}

static void put_frame(FILE *out, const struct svg_graph *g, const struct svg_frame *f,
		      uint32_t height)
{
	const double scale = g->samples ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)g->samples
					: 0.0;
	double x = SVG_PAD + (double)f->start * scale, w = (double)f->samples * scale;
	double y = g->o->inverted ? TOP_SPACE + (double)f->depth * FRAME_HEIGHT
				  : height - BOTTOM_SPACE - (double)(f->depth + 1) * FRAME_HEIGHT;
	long fit = (long)((w - 6) / CHAR_WIDTH);

	fprintf(out, "<g data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\" data-d=\"%" PRIu32
		"\"><title>", f->start, f->samples, f->depth);
	put_xml(out, f->name, 0);
	if (g->weight == PROF_WEIGHT_CPU)
		fprintf(out, " (%" PRIu64 " sample%s, %.2f%%", f->samples,
			f->samples == 1 ? "" : "s", report_pct(f->samples, g->samples));
	else
		fprintf(out, " (%.2f ms, %.2f%%", (double)f->samples / 1e6,
			report_pct(f->samples, g->samples));
	if (g->base_name)
		fprintf(out, "; base %.2f%%, %+.2f points", f->base_pct,
			report_pct(f->samples, g->samples) - f->base_pct);
	fputc(')', out);
	if (*f->module) {
		fputc('\n', out);
		put_xml(out, f->module, 0);
	}
	if (f->kind == AGG_KIND_INLINED)
		fputs("\ninlined into its caller", out);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"",
		x, y, w, FRAME_HEIGHT - 1);
	put_fill(out, g, f);
	fputs("\"/>", out);
	/* most frames are too narrow for a label: the script adds one on zoom */
	if (fit >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4.5);
		put_xml(out, f->name, (size_t)fit);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

static void put_subtitle(FILE *out, const struct svg_graph *g, const struct prof_spool *sp)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	size_t i;

	if (g->weight == PROF_WEIGHT_CPU)
		fprintf(out, "%" PRIu64 " sample%s", g->samples, g->samples == 1 ? "" : "s");
	else
		fprintf(out, "%.3f s of %s time", (double)g->samples / 1e9,
			g->weight == PROF_WEIGHT_OFFCPU ? "off-CPU" : "wall");
	if (*m->event && g->weight != PROF_WEIGHT_OFFCPU) {
		fputs(" of ", out);
		put_xml(out, m->event, 0);
		if (m->freq_hz)
			fprintf(out, " at %" PRIu64 " Hz", m->freq_hz);
	}
	if (m->argc) {
		fputs(", command:", out);
		for (i = 0; i < m->argc && i < 8; i++) {
			fputc(' ', out);
			put_xml(out, m->argv[i], 40);
		}
		if (m->argc > 8)
			fputs(" ...", out);
	} else if (m->npids) {
		fputs(", pid", out);
		for (i = 0; i < m->npids && i < 8; i++)
			fprintf(out, "%s%" PRId32, i ? "," : " ", m->pids[i]);
	}
	if (g->o->inverted)
		fputs("; inverted: each stack from its leaf (callers below callees)", out);
	if (g->base_name) {
		fputs("; against ", out);
		put_xml(out, g->base_name, 40);
		fputs(": red grew, blue shrank", out);
	}
}

int svg_graph_write(struct svg_graph *g, FILE *out, const struct prof_spool *sp)
{
	uint32_t height = TOP_SPACE + (g->max_depth + 1) * FRAME_HEIGHT + BOTTOM_SPACE;
	size_t i;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%" PRIu32 "\" viewBox=\"0 0 %d %" PRIu32 "\" onload=\"init(evt)\" "
		"data-samples=\"%" PRIu64 "\" data-unit=\"%s\" data-width=\"%d\" "
		"data-pad=\"%d\" data-char=\"%.1f\">\n", SVG_WIDTH, height, SVG_WIDTH, height,
		g->samples, g->weight == PROF_WEIGHT_CPU ? "samples" : "ns", SVG_WIDTH, SVG_PAD,
		CHAR_WIDTH);
	fprintf(out, "<style type=\"text/css\"><![CDATA[\n"
		"text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: %dpx; "
		"fill: rgb(0,0,0); }\n"
		"#title { font-size: 17px; }\n"
		"#subtitle { fill: rgb(90,90,90); }\n"
		"#frames g { cursor: pointer; }\n"
		"#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
		"#frames g.parent { opacity: 0.5; }\n"
		"#frames text { pointer-events: none; }\n"
		".button { cursor: pointer; fill: rgb(0,0,160); }\n"
		".button:hover { text-decoration: underline; }\n"
		".hide { display: none; }\n"
		"]]></style>\n", FONT_SIZE);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", flamegraph_js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%" PRIu32 "\" "
		"fill=\"rgb(250,250,247)\"/>\n", SVG_WIDTH, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">%s of ",
		SVG_WIDTH / 2, g->base_name ? "Differential flame graph"
			       : g->o->inverted ? "Icicle graph (callers)" : "Flame graph");
	put_xml(out, g->o->title ? g->o->title : "a spool", 60);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"44\" text-anchor=\"middle\">",
		SVG_WIDTH / 2);
	put_subtitle(out, g, sp);
	fprintf(out, "</text>\n"
		"<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"24\" text-anchor=\"end\">"
		"Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%" PRIu32 "\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%" PRIu32 "\" text-anchor=\"end\"> </text>\n"
		"<g id=\"frames\">\n", SVG_PAD, SVG_WIDTH - SVG_PAD, SVG_PAD, height - 12,
		SVG_WIDTH - SVG_PAD, height - 12);
	for (i = 0; i < g->nframes; i++)
		put_frame(out, g, &g->frames[i], height);
	fputs("</g>\n</svg>\n", out);
	return 0;
}

int output_svg(FILE *out, struct agg *a, const struct prof_spool *sp,
	       const struct prof_report_opts *o)
{
	struct svg_graph *g;
	int r;

	r = svg_graph_new(&g, o, a->weight, a->total);
	if (r == 0)
		r = svg_graph_add(g, a, NULL);
	if (r == 0)
		r = svg_graph_write(g, out, sp);
	svg_graph_free(g);
	return r;
}
