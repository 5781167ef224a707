/* SPDX-License-Identifier: MIT */
/*
 * test-report.c - aggregation and the output formats, on a small spool whose
 * names come from its own symbol records: self and total per function
 * (recursion counted once per stack), the call tree, folded stacks summing
 * to the samples, pruning, limits, bad options and write errors, and a
 * stack far deeper than any real one.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "harness.h"
#include "prof.h"
#include "spool_test.h"

struct rfx {
	struct membuf mb;
	struct prof_spool *sp;
	struct prof_profile *prof;
	struct prof_symbolizer *sym;
};

/*
 * 15 samples over functions main, rec, leaf, other (module "app", named by
 * symbol records):
 *   main -> rec -> rec -> rec -> leaf   6
 *   main -> rec -> leaf                 3 (leaf at another pc)
 *   main -> other                       2
 *   main                                1
 *   [truncated] -> rec -> leaf          1
 *   (empty stack)                       2
 */
static void rfx_open_named(struct rfx *fx, const char *const names[4])
{
	PROF_OPTS(prof_sink, sink);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	uint32_t m, main_f, rec, leaf, leaf2, other, trunc, p, t, i;
	int64_t id;

	memset(fx, 0, sizeof(*fx));
	sink = membuf_sink(&fx->mb);
	test_meta(&meta);
	if (prof_spool_writer_open_sink(&sink, &meta, NULL, &w) < 0)
		abort();
	p = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 7));
	t = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p, .tid = 7));
	/* not an absolute path: no file is looked for */
	m = (uint32_t)prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p, .start = 0x1000,
								       .end = 0x2000, .path = "app"));
	for (i = 0; i < 4; i++)
		prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_MODULE,
								.scope_id = m,
								.start = 0x100 * (i + 1),
								.size = 0x100, .name = names[i]));
#define FRAME(a) (uint32_t)prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, \
		.kind = PROF_FRAME_USER, .ref = m, .addr = (a)))
	main_f = FRAME(0x110);
	rec = FRAME(0x220);
	leaf = FRAME(0x300);
	leaf2 = FRAME(0x310);
	other = FRAME(0x420);
#undef FRAME
	trunc = (uint32_t)prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame,
		.kind = PROF_FRAME_TRUNCATED, .addr = PROF_UNWIND_STACK_COPY));
	struct {
		uint32_t frames[5];	/* leaf first */
		size_t n;
		unsigned count;
	} st[] = {
		{ { leaf, rec, rec, rec, main_f }, 5, 6 },
		{ { leaf2, rec, main_f }, 3, 3 },
		{ { other, main_f }, 2, 2 },
		{ { main_f }, 1, 1 },
		{ { leaf, rec, trunc }, 3, 1 },
		{ { 0 }, 0, 2 },
	};
	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		unsigned k;

		id = prof_spool_writer_intern_frames(w, st[i].frames, st[i].n);
		if (id < 0)
			abort();
		for (k = 0; k < st[i].count; k++)
			if (prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample,
				    .time_ns = 5000000000ull + 1000000ull * (i * 10 + k),
				    .thread = t, .stack = (uint32_t)id, .period = 1)) < 0)
				abort();
	}
	if (prof_spool_writer_close(w) < 0 || open_bytes(fx->mb.p, fx->mb.len, &fx->sp) < 0 ||
	    prof_profile_new(&fx->prof) < 0 || prof_profile_read(fx->prof, fx->sp, NULL, NULL) < 0 ||
	    prof_symbolizer_new(fx->sp, NULL, &fx->sym) < 0)
		abort();
}

static void rfx_open(struct rfx *fx)
{
	static const char *const names[] = { "main", "rec", "leaf", "other" };

	rfx_open_named(fx, names);
}

static void rfx_close(struct rfx *fx)
{
	prof_symbolizer_free(fx->sym);
	prof_profile_free(fx->prof);
	prof_spool_close(fx->sp);
	free(fx->mb.p);
}

char *report_body(const struct prof_spool *sp, const struct prof_profile *p,
		  struct prof_symbolizer *sym, const struct prof_report_opts *opts, size_t skip,
		  int *ret)
{
	char *buf = NULL, *body;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	*ret = prof_report_write(f, sp, p, sym, opts);
	fclose(f);
	/* only top and tree have a header */
	if (opts && opts->format != PROF_REPORT_TOP && opts->format != PROF_REPORT_TREE)
		return buf;
	body = strstr(buf, "\n\n");
	if (!body)
		return buf;
	memmove(buf, body + skip, strlen(body + skip) + 1);
	return buf;
}

/* The report in OPTS's format, without its header and the blank line after it. */
static char *report(struct rfx *fx, const struct prof_report_opts *opts, int *ret)
{
	return report_body(fx->sp, fx->prof, fx->sym, opts, 2, ret);
}

TEST(report_top_counts_self_and_total_once_per_stack)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TOP };
	struct rfx fx;

	rfx_open(&fx);
	CHECK_INT(prof_profile_samples(fx.prof), ==, 15);
	CHECK_REPORT(&fx, &o,
		     "  self%  total%  samples  function                 module\n"
		     " 66.67%  66.67%       10  leaf                     app\n"
		     " 13.33%  13.33%        2  [empty stack]\n"
		     " 13.33%  13.33%        2  other                    app\n"
		     "  6.67%  80.00%        1  main                     app\n"
		     "  0.00%  66.67%        0  rec                      app\n"
		     "  0.00%   6.67%        0  [truncated: stack-copy]\n");
	rfx_close(&fx);
}

TEST(report_top_limit_and_min_percent_hide_rows_and_say_so)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TOP, .limit = 2 };
	struct rfx fx;

	rfx_open(&fx);
	CHECK_REPORT(&fx, &o,
		     "  self%  total%  samples  function       module\n"
		     " 66.67%  66.67%       10  leaf           app\n"
		     " 13.33%  13.33%        2  [empty stack]\n"
		     "(4 more functions not shown)\n");
	o.limit = -1;
	o.min_percent = 10;
	CHECK_REPORT(&fx, &o,
		     "  self%  total%  samples  function       module\n"
		     " 66.67%  66.67%       10  leaf           app\n"
		     " 13.33%  13.33%        2  [empty stack]\n"
		     " 13.33%  13.33%        2  other          app\n"
		     "  6.67%  80.00%        1  main           app\n"
		     "  0.00%  66.67%        0  rec            app\n"
		     "(1 more function not shown)\n");
	rfx_close(&fx);
}

TEST(report_tree_runs_from_the_roots_and_prunes)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TREE };
	struct rfx fx;

	rfx_open(&fx);
	CHECK_REPORT(&fx, &o,
		     " total%   self%  call tree\n"
		     " 80.00%   6.67%  main [app]\n"
		     " 60.00%   0.00%    rec [app]\n"
		     " 40.00%   0.00%      rec [app]\n"
		     " 40.00%   0.00%        rec [app]\n"
		     " 40.00%  40.00%          leaf [app]\n"
		     " 20.00%  20.00%      leaf [app]\n"
		     " 13.33%  13.33%    other [app]\n"
		     " 13.33%  13.33%  [empty stack]\n"
		     "  6.67%   0.00%  [truncated: stack-copy]\n"
		     "  6.67%   0.00%    rec [app]\n"
		     "  6.67%   6.67%      leaf [app]\n");
	o.min_percent = 20;
	CHECK_REPORT(&fx, &o,
		     " total%   self%  call tree\n"
		     " 80.00%   6.67%  main [app]\n"
		     " 60.00%   0.00%    rec [app]\n"
		     " 40.00%   0.00%      rec [app]\n"
		     " 40.00%   0.00%        rec [app]\n"
		     " 40.00%  40.00%          leaf [app]\n"
		     " 20.00%  20.00%      leaf [app]\n");
	rfx_close(&fx);
}

TEST(report_folded_has_one_line_per_stack_and_every_sample)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_FOLDED,
				      .min_percent = 50, .limit = 1 };
	struct rfx fx;

	rfx_open(&fx);
	/* no header, nothing pruned: the counts sum to the 15 samples */
	CHECK_REPORT(&fx, &o,
		     "[empty stack] 2\n"
		     "[truncated: stack-copy];rec;leaf 1\n"
		     "main 1\n"
		     "main;other 2\n"
		     "main;rec;leaf 3\n"
		     "main;rec;rec;rec;leaf 6\n");
	rfx_close(&fx);
}

TEST(report_inverted_places_each_stack_from_its_leaf)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_FOLDED,
				      .inverted = true };
	struct rfx fx;
	int r;

	rfx_open(&fx);
	CHECK_REPORT(&fx, &o,
		     "[empty stack] 2\n"
		     "leaf;rec;[truncated: stack-copy] 1\n"
		     "leaf;rec;main 3\n"
		     "leaf;rec;rec;rec;main 6\n"
		     "main 1\n"
		     "other;main 2\n");
	/* the roots are what ran, by most samples; no self column */
	o.format = PROF_REPORT_TREE;
	CHECK_REPORT(&fx, &o,
		     " total%  callers tree\n"
		     " 66.67%  leaf [app]\n"
		     " 66.67%    rec [app]\n"
		     " 40.00%      rec [app]\n"
		     " 40.00%        rec [app]\n"
		     " 40.00%          main [app]\n"
		     " 20.00%      main [app]\n"
		     "  6.67%      [truncated: stack-copy]\n"
		     " 13.33%  [empty stack]\n"
		     " 13.33%  other [app]\n"
		     " 13.33%    main [app]\n"
		     "  6.67%  main [app]\n");
	o.format = PROF_REPORT_TOP;
	free(report(&fx, &o, &r));
	CHECK_INT(r, ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "only tree, folded and svg can be inverted");
	rfx_close(&fx);
}

/* How many times NEEDLE is in HAY. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

TEST(report_svg_escapes_names_and_draws_every_node)
{
	static const char *const names[] = {
		"main", "operator<< <A&>(\"x\")", "bad\xff\x01name",
		"a_function_name_far_too_long_to_fit_in_the_box_it_gets_at_two_samples_wide",
	};
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_SVG };
	struct rfx fx;
	char *svg;
	int r;

	rfx_open_named(&fx, names);
	svg = report(&fx, &o, &r);
	CHECK_INT(r, ==, 0);
	CHECK(!strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", 55));
	/* all, and the 11 nodes of the call tree */
	CHECK_INT(count_of(svg, "\n<g data-s="), ==, 12);
	CHECK(strstr(svg, "<g data-s=\"0\" data-n=\"15\" data-d=\"0\"><title>all (15 samples, "
			  "100.00%)</title>"));
	CHECK_INT(count_of(svg, "<title>operator&lt;&lt; &lt;A&amp;&gt;(&quot;x&quot;) ("), ==, 4);
	/* not UTF-8: U+FFFD; a control character: '?' */
	CHECK_INT(count_of(svg, "<title>bad\xef\xbf\xbd?name ("), ==, 3);
	CHECK(!strchr(svg, '\x01') && !strchr(svg, '\xff'));
	/* the label of a frame 2 of 15 samples wide (157 px) is cut to fit, with ".." */
	CHECK(strstr(svg, " width=\"157.33\" height=\"15\""));
	CHECK(strstr(svg, ">a_function_name_far..</text>"));
	free(svg);
	/* the frames under --min-percent are left out, with everything on them */
	o.min_percent = 10;
	svg = report(&fx, &o, &r);
	CHECK_INT(r, ==, 0);
	CHECK_INT(count_of(svg, "\n<g data-s="), ==, 9);
	CHECK(!strstr(svg, "[truncated: stack-copy]"));
	free(svg);
	rfx_close(&fx);
}

TEST(report_header_comes_first_with_the_title)
{
	struct prof_report_opts o = { .sz = sizeof(o), .title = "x.spool" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rfx fx;

	rfx_open(&fx);
	CHECK_INT(prof_report_write(f, fx.sp, fx.prof, fx.sym, &o), ==, 0);
	fclose(f);
	CHECK(!strncmp(buf, "# prof report of x.spool\ncommand:      ./app --flag x y; pid 17,42\n",
		       67));
	CHECK(strstr(buf, "\nsamples:      15 read (no trailer: counters unknown)\n"));
	CHECK(strstr(buf, "\n\n  self%  total%  samples  function"));
	free(buf);
	rfx_close(&fx);
}

TEST(report_rejects_bad_options_and_reports_write_errors)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = (PROF_REPORT_SVG + 1) };
	FILE *full = fopen("/dev/full", "w");
	struct rfx fx;
	int r;

	rfx_open(&fx);
	free(report(&fx, &o, &r));
	CHECK_INT(r, ==, -EINVAL);
	o.format = PROF_REPORT_TREE;
	o.min_percent = -1;
	free(report(&fx, &o, &r));
	CHECK_INT(r, ==, -EINVAL);
	o.min_percent = NAN;
	free(report(&fx, &o, &r));
	CHECK_INT(r, ==, -EINVAL);
	o.min_percent = 0;
	/* a newer caller's struct: a field this prof does not know, set */
	struct {
		struct prof_report_opts o;
		uint64_t newer;
	} big = { .o = o, .newer = 1 };
	big.o.sz = sizeof(big);
	free(report(&fx, &big.o, &r));
	CHECK_INT(r, ==, -EINVAL);
	CHECK(!strncmp(prof_errmsg(), "report options of ", 18) &&
	      strstr(prof_errmsg(), " bytes set fields this prof does not know (it knows "));
	big.newer = 0;
	free(report(&fx, &big.o, &r));
	CHECK_INT(r, ==, 0);
	/* an older caller's, without the newest field: its default */
	o.sz = offsetof(struct prof_report_opts, inverted);
	free(report(&fx, &o, &r));
	CHECK_INT(r, ==, 0);
	free(report(&fx, NULL, &r));	/* NULL: the defaults */
	CHECK_INT(r, ==, 0);
	CHECK(full);
	CHECK_INT(prof_report_write(full, fx.sp, fx.prof, fx.sym, NULL), ==, -ENOSPC);
	CHECK_STR(prof_errmsg(), "cannot write the report: No space left on device");
	fclose(full);
	rfx_close(&fx);
}

/* The data of the page PAGE (JSON, gzip'd, in base64): malloc'd, NUL-terminated, or NULL. */
static char *viewer_data(const char *page)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = strstr(page, "data-encoding=\"json+gzip+base64\">\n"), *d;
	unsigned char *gz;
	size_t n = 0, cap = 1 << 20;
	uint32_t acc = 0, bits = 0;
	char *json = calloc(1, cap);
	z_stream z = { 0 };

	if (!p || !json || !(gz = malloc(strlen(p))))
		return NULL;
	for (p = strchr(p, '>') + 1; *p && *p != '<'; p++) {
		if (!(d = strchr(digits, *p)) || !*p)
			continue;	/* line breaks, padding */
		acc = acc << 6 | (uint32_t)(d - digits);
		if ((bits += 6) >= 8)
			gz[n++] = (unsigned char)(acc >> (bits -= 8));
	}
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return NULL;
	z.next_in = gz;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)json;
	z.avail_out = (uInt)cap - 1;
	if (inflate(&z, Z_FINISH) != Z_STREAM_END) {
		free(json);
		json = NULL;
	}
	inflateEnd(&z);
	free(gz);
	return json;
}

TEST(report_viewer_holds_every_sample_and_refuses_misuse)
{
	struct prof_viewer *v, *diff;
	struct prof_spool *sp;
	FILE *full = fopen("/dev/full", "w");
	char *page = NULL, *json;
	uint64_t kept = 0;
	size_t len = 0;
	struct rfx fx;
	FILE *f;

	rfx_open(&fx);
	CHECK_INT(prof_viewer_new(NULL, &v), ==, 0);
	CHECK_INT(prof_viewer_new(&PROF_INIT(prof_viewer_opts, .diff = true), &diff), ==, 0);
	CHECK_INT(prof_viewer_write(v, stdout), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "the viewer needs a spool before it is written");
	/* a spool read by the viewer, not yet by anything else */
	CHECK_INT(open_bytes(fx.mb.p, fx.mb.len, &sp), ==, 0);
	CHECK_INT(prof_viewer_add(v, sp, fx.sym, NULL, "t.spool", &kept), ==, 0);
	CHECK_INT(kept, ==, 15);
	CHECK_INT(prof_viewer_add(v, sp, fx.sym, NULL, "t.spool", &kept), ==, -EINVAL);
	CHECK_INT(prof_viewer_add(diff, sp, fx.sym, NULL, "base", NULL), ==, 0);
	CHECK_INT(prof_viewer_write(diff, stdout), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "the viewer needs two spools, a base and a new one before it is written");
	prof_spool_close(sp);
	f = open_memstream(&page, &len);
	CHECK(f);
	CHECK_INT(prof_viewer_write(v, f), ==, 0);
	fclose(f);
	CHECK(!strncmp(page, "<!DOCTYPE html>\n", 16));
	CHECK(strstr(page, "<title>prof: t.spool</title>"));
	CHECK(!strcmp(page + len - 8, "</html>\n"));
	json = viewer_data(page);
	CHECK(json);
	CHECK(!strncmp(json, "{\"format\":\"prof-viewer/1\",\"diff\":false,\"profiles\":[", 51));
	CHECK(strstr(json, "\"kept\":15,"));
	/* the functions, an inlined one nowhere; the empty stack's samples its own */
	CHECK(strstr(json, "\"funcs\":{\"name\":[\"main\",\"rec\",\"leaf\",\"other\","));
	CHECK(strstr(json, "\"[empty stack]\""));
	free(json);
	free(page);
	CHECK(full);
	CHECK_INT(prof_viewer_write(v, full), ==, -ENOSPC);
	fclose(full);
	prof_viewer_free(v);
	prof_viewer_free(diff);
	prof_viewer_free(NULL);
	rfx_close(&fx);
}

TEST(report_format_names_round_trip)
{
	CHECK_STR(prof_report_format_name(PROF_REPORT_TOP), "top");
	CHECK_STR(prof_report_format_name(PROF_REPORT_TREE), "tree");
	CHECK_STR(prof_report_format_name(PROF_REPORT_FOLDED), "folded");
	CHECK_STR(prof_report_format_name(PROF_REPORT_JSON), "json");
	CHECK_STR(prof_report_format_name(PROF_REPORT_SPEEDSCOPE), "speedscope");
	CHECK(!prof_report_format_name((PROF_REPORT_SVG + 1)));
	/* written as a spool is read, not from a profile: not formats of prof_report_write() */
	CHECK_INT(prof_report_format_parse("perf-script"), ==, -EINVAL);
	CHECK_INT(prof_report_format_parse("pprof"), ==, -EINVAL);
	CHECK_INT(prof_report_format_parse("tree"), ==, PROF_REPORT_TREE);
	CHECK_INT(prof_report_format_parse("folded"), ==, PROF_REPORT_FOLDED);
	CHECK_STR(prof_report_format_name(PROF_REPORT_SVG), "svg");
	CHECK_INT(prof_report_format_parse("svg"), ==, PROF_REPORT_SVG);
	CHECK_INT(prof_report_format_parse("Top"), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "'Top' is not a report format; the formats are: top, tree, folded, "
		  "json, speedscope, svg");
}

TEST(filter_options_parse_or_say_why_not)
{
	struct prof_filter_opts o = { .sz = sizeof(o) };
	struct prof_filter *f = NULL;

	CHECK_INT(prof_filter_new(NULL, &f), ==, 0);
	CHECK(!prof_filter_active(f));
	prof_filter_free(f);
	o.pids = "1,2,3";
	o.time = ",2.5";
	o.focus = "^main$";
	CHECK_INT(prof_filter_new(&o, &f), ==, 0);
	CHECK(prof_filter_active(f));
	prof_filter_free(f);
	o = (struct prof_filter_opts){ .sz = sizeof(o), .tids = "1,,2" };
	CHECK_INT(prof_filter_new(&o, &f), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "invalid tid list '1,,2': expected numbers separated by commas");
	o = (struct prof_filter_opts){ .sz = sizeof(o), .time = "3,1" };
	CHECK_INT(prof_filter_new(&o, &f), ==, -EINVAL);
	o = (struct prof_filter_opts){ .sz = sizeof(o), .time = "1" };
	CHECK_INT(prof_filter_new(&o, &f), ==, -EINVAL);
	o = (struct prof_filter_opts){ .sz = sizeof(o), .exclude = "a[" };
	CHECK_INT(prof_filter_new(&o, &f), ==, -EINVAL);
	CHECK(strstr(prof_errmsg(), "invalid exclude regular expression 'a['") != NULL);
}

TEST(report_survives_a_stack_deeper_than_any_real_one)
{
	enum { DEPTH = 100000 };
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TREE };
	struct prof_spool_writer *w;
	PROF_OPTS(prof_sink, sink);
	PROF_OPTS(prof_meta, meta);
	struct rfx fx = { 0 };
	uint32_t *frames = malloc(DEPTH * sizeof(*frames)), p, t;
	int64_t leaf;
	char *out, *last;
	size_t i;
	int r;

	CHECK(frames);
	sink = membuf_sink(&fx.mb);
	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	p = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 7));
	t = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p, .tid = 7));
	frames[0] = (uint32_t)prof_spool_writer_intern_frame(
		w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_KERNEL, .addr = 0x1000));
	for (i = 1; i < DEPTH; i++)	/* a recursion DEPTH frames deep */
		frames[i] = frames[0];
	leaf = prof_spool_writer_intern_frames(w, frames, DEPTH);
	free(frames);
	CHECK_INT(leaf, ==, DEPTH);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .time_ns = 5000000001ull,
								   .thread = t,
								   .stack = (uint32_t)leaf)),
		  ==, 0);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	CHECK_INT(open_bytes(fx.mb.p, fx.mb.len, &fx.sp), ==, 0);
	CHECK_INT(prof_profile_new(&fx.prof), ==, 0);
	CHECK_INT(prof_profile_read(fx.prof, fx.sp, NULL, NULL), ==, 0);
	CHECK_INT(prof_symbolizer_new(fx.sp, NULL, &fx.sym), ==, 0);
	out = report(&fx, &o, &r);
	CHECK_INT(r, ==, 0);
	last = strrchr(out, '\n');
	*last = '\0';
	last = strrchr(out, '\n') + 1;
	/* deep lines stop indenting and say their depth */
	CHECK_STR(last, "100.00% 100.00%                                                                  "
			"(depth 100000) 0x1000 [kernel]");
	free(out);
	o.format = PROF_REPORT_TOP;
	out = report(&fx, &o, &r);
	CHECK_INT(r, ==, 0);
	CHECK_STR(out, "  self%  total%  samples  function  module\n"
		       "100.00% 100.00%        1  0x1000    [kernel]\n");
	free(out);
	rfx_close(&fx);
}
