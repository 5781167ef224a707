/* SPDX-License-Identifier: MIT */
/*
 * test-report-group.c - profiles grouped by thread or process, and their
 * reports: a group per name as it was at each sample (renames and execs
 * in the middle of the samples), root frames NAME-ID in folded stacks with
 * the characters that would break them replaced, sections most samples
 * first with percents of all samples, memory that grows with distinct
 * (group, stack) cells and not with samples, and misuse of the API.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "prof.h"
#include "report/report.h"
#include "spool_test.h"

struct gfx {
	struct membuf mb;
	struct prof_spool *sp;
	struct prof_profile *prof;
	struct prof_symbolizer *sym;
};

/*
 * 11 samples over functions main, rec, leaf, other (module "app", named by
 * symbol records), in this order:
 *   srv (tid 10, process srv pid 10)      main -> rec -> leaf   3
 *   io;pool (tid 11, process srv)         main -> other         2
 *   -- thread 11 renamed "io pool"
 *   io pool                               main -> other         1
 *   io pool                               main                  1
 *   -- process 10 execs, comm "srv2"
 *   srv (process srv2)                    main -> rec -> leaf   1
 *   srv (process srv2)                    (empty stack)         1
 *   no name (tid 20, process pid 20, no comm)  main -> other    2
 */
static void gfx_open(struct gfx *fx, enum prof_group_by by)
{
	PROF_OPTS(prof_sink, sink);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	uint32_t m, main_f, rec, leaf, other, p1, p2, t1, t2, t3, i;
	int64_t rec_leaf, other_st, main_st;
	uint64_t now = 5000000000ull;

	memset(fx, 0, sizeof(*fx));
	sink = membuf_sink(&fx->mb);
	test_meta(&meta);
	if (prof_spool_writer_open_sink(&sink, &meta, NULL, &w) < 0)
		abort();
	p1 = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 10,
									  .comm = "srv"));
	p2 = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 20));
	t1 = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p1, .tid = 10,
									.name = "srv"));
	t2 = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p1, .tid = 11,
									.name = "io;pool"));
	t3 = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p2, .tid = 20));
	m = (uint32_t)prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p1, .start = 0x1000,
								       .end = 0x2000, .path = "app"));
	static const char *const names[] = { "main", "rec", "leaf", "other" };
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
	other = FRAME(0x420);
#undef FRAME
	rec_leaf = prof_spool_writer_intern_frames(w, (uint32_t[]){ leaf, rec, main_f }, 3);
	other_st = prof_spool_writer_intern_frames(w, (uint32_t[]){ other, main_f }, 2);
	main_st = prof_spool_writer_intern_frames(w, (uint32_t[]){ main_f }, 1);
	if (rec_leaf < 0 || other_st < 0 || main_st < 0)
		abort();
#define SAMPLE(t, st, n)                                                                   \
	for (i = 0; i < (n); i++)                                                          \
		if (prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .time_ns = now += 1000,    \
								    .thread = (t),             \
								    .stack = (uint32_t)(st),   \
								    .period = 1)) < 0)        \
			abort();
	SAMPLE(t1, rec_leaf, 3);
	SAMPLE(t2, other_st, 2);
	if (prof_spool_writer_rename_thread(w, t2, now += 1000, "io pool") < 0)
		abort();
	SAMPLE(t2, other_st, 1);
	SAMPLE(t2, main_st, 1);
	if (prof_spool_writer_add_exec(w, p1, now += 1000, "srv2", "/usr/bin/srv2") < 0)
		abort();
	SAMPLE(t1, rec_leaf, 1);
	SAMPLE(t1, 0, 1);
	SAMPLE(t3, other_st, 2);
#undef SAMPLE
	if (prof_spool_writer_close(w) < 0 || open_bytes(fx->mb.p, fx->mb.len, &fx->sp) < 0 ||
	    prof_profile_new(&fx->prof) < 0 || prof_profile_group_by(fx->prof, by) < 0 ||
	    prof_profile_read(fx->prof, fx->sp, NULL, NULL) < 0 || prof_symbolizer_new(fx->sp, NULL, &fx->sym) < 0)
		abort();
}

static void gfx_close(struct gfx *fx)
{
	prof_symbolizer_free(fx->sym);
	prof_profile_free(fx->prof);
	prof_spool_close(fx->sp);
	free(fx->mb.p);
}

/* The report in OPTS's format, from its first section on; freed by the caller. */
static char *report(struct gfx *fx, const struct prof_report_opts *opts, int *ret)
{
	return report_body(fx->sp, fx->prof, fx->sym, opts, 1, ret);
}

TEST(group_folded_by_thread_names_each_sample_by_its_thread_then)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_FOLDED };
	struct gfx fx;

	gfx_open(&fx, PROF_GROUP_THREAD);
	CHECK_INT(prof_profile_samples(fx.prof), ==, 11);
	/*
	 * By root frame: ';' would split it and ' ' is '_' as in
	 * stackcollapse-perf.pl; no name is "[unknown]".
	 */
	CHECK_REPORT(&fx, &o,
		     "[unknown]-20;main;other 2\n"
		     "io?pool-11;main;other 2\n"
		     "io_pool-11;main 1\n"
		     "io_pool-11;main;other 1\n"
		     "srv-10;[empty stack] 1\n"
		     "srv-10;main;rec;leaf 4\n");
	gfx_close(&fx);
}

TEST(group_folded_by_process_names_each_sample_by_its_comm_then)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_FOLDED,
				      .min_percent = 50, .limit = 1 };
	struct gfx fx;

	gfx_open(&fx, PROF_GROUP_PROCESS);
	/* nothing pruned: the counts sum to the 11 samples */
	CHECK_REPORT(&fx, &o,
		     "[unknown]-20;main;other 2\n"
		     "srv-10;main 1\n"
		     "srv-10;main;other 3\n"
		     "srv-10;main;rec;leaf 3\n"
		     "srv2-10;[empty stack] 1\n"
		     "srv2-10;main;rec;leaf 1\n");
	gfx_close(&fx);
}

TEST(group_top_by_process_has_a_section_per_process_most_samples_first)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TOP };
	struct gfx fx;

	gfx_open(&fx, PROF_GROUP_PROCESS);
	/* percents of all 11 samples; a tie goes by name, the nameless first */
	CHECK_REPORT(&fx, &o,
		     "\n"
		     "process srv (pid 10): 7 samples (63.6%)\n"
		     "  self%  total%  samples  function  module\n"
		     " 27.27%  27.27%        3  leaf      app\n"
		     " 27.27%  27.27%        3  other     app\n"
		     "  9.09%  63.64%        1  main      app\n"
		     "  0.00%  27.27%        0  rec       app\n"
		     "\n"
		     "process [unknown] (pid 20): 2 samples (18.2%)\n"
		     "  self%  total%  samples  function  module\n"
		     " 18.18%  18.18%        2  other     app\n"
		     "  0.00%  18.18%        0  main      app\n"
		     "\n"
		     "process srv2 (pid 10): 2 samples (18.2%)\n"
		     "  self%  total%  samples  function       module\n"
		     "  9.09%   9.09%        1  [empty stack]\n"
		     "  9.09%   9.09%        1  leaf           app\n"
		     "  0.00%   9.09%        0  main           app\n"
		     "  0.00%   9.09%        0  rec            app\n");
	/* the limit is per section */
	o.limit = 1;
	CHECK_REPORT(&fx, &o,
		     "\n"
		     "process srv (pid 10): 7 samples (63.6%)\n"
		     "  self%  total%  samples  function  module\n"
		     " 27.27%  27.27%        3  leaf      app\n"
		     "(3 more functions not shown)\n"
		     "\n"
		     "process [unknown] (pid 20): 2 samples (18.2%)\n"
		     "  self%  total%  samples  function  module\n"
		     " 18.18%  18.18%        2  other     app\n"
		     "(1 more function not shown)\n"
		     "\n"
		     "process srv2 (pid 10): 2 samples (18.2%)\n"
		     "  self%  total%  samples  function       module\n"
		     "  9.09%   9.09%        1  [empty stack]\n"
		     "(3 more functions not shown)\n");
	gfx_close(&fx);
}

TEST(group_tree_by_thread_prunes_by_percent_of_all_samples)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TREE };
	struct gfx fx;

	gfx_open(&fx, PROF_GROUP_THREAD);
	CHECK_REPORT(&fx, &o,
		     "\n"
		     "thread srv (tid 10): 5 samples (45.5%)\n"
		     " total%   self%  call tree\n"
		     " 36.36%   0.00%  main [app]\n"
		     " 36.36%   0.00%    rec [app]\n"
		     " 36.36%  36.36%      leaf [app]\n"
		     "  9.09%   9.09%  [empty stack]\n"
		     "\n"
		     "thread [unknown] (tid 20): 2 samples (18.2%)\n"
		     " total%   self%  call tree\n"
		     " 18.18%   0.00%  main [app]\n"
		     " 18.18%  18.18%    other [app]\n"
		     "\n"
		     "thread io pool (tid 11): 2 samples (18.2%)\n"
		     " total%   self%  call tree\n"
		     " 18.18%   9.09%  main [app]\n"
		     "  9.09%   9.09%    other [app]\n"
		     "\n"
		     "thread io;pool (tid 11): 2 samples (18.2%)\n"
		     " total%   self%  call tree\n"
		     " 18.18%   0.00%  main [app]\n"
		     " 18.18%  18.18%    other [app]\n");
	/* 10% of all samples, not of each thread's: a node of 1 sample goes */
	o.min_percent = 10;
	CHECK_REPORT(&fx, &o,
		     "\n"
		     "thread srv (tid 10): 5 samples (45.5%)\n"
		     " total%   self%  call tree\n"
		     " 36.36%   0.00%  main [app]\n"
		     " 36.36%   0.00%    rec [app]\n"
		     " 36.36%  36.36%      leaf [app]\n"
		     "\n"
		     "thread [unknown] (tid 20): 2 samples (18.2%)\n"
		     " total%   self%  call tree\n"
		     " 18.18%   0.00%  main [app]\n"
		     " 18.18%  18.18%    other [app]\n"
		     "\n"
		     "thread io pool (tid 11): 2 samples (18.2%)\n"
		     " total%   self%  call tree\n"
		     " 18.18%   9.09%  main [app]\n"
		     "\n"
		     "thread io;pool (tid 11): 2 samples (18.2%)\n"
		     " total%   self%  call tree\n"
		     " 18.18%   0.00%  main [app]\n"
		     " 18.18%  18.18%    other [app]\n");
	gfx_close(&fx);
}

TEST(group_profile_grows_with_distinct_cells_not_samples)
{
	enum { SAMPLES = 200000 };
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_FOLDED };
	struct prof_spool_writer *w;
	PROF_OPTS(prof_sink, sink);
	PROF_OPTS(prof_meta, meta);
	struct gfx fx = { 0 };
	uint32_t p, t[2], f;
	int64_t st[3];
	size_t i;

	sink = membuf_sink(&fx.mb);
	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	p = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 7, .comm = "x"));
	t[0] = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p, .tid = 7,
									  .name = "a"));
	t[1] = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p, .tid = 8,
									  .name = "b"));
	f = (uint32_t)prof_spool_writer_intern_frame(
		w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_KERNEL, .addr = 0x1000));
	st[0] = 0;
	st[1] = prof_spool_writer_intern_frames(w, &f, 1);
	st[2] = prof_spool_writer_intern_frames(w, (uint32_t[]){ f, f }, 2);
	for (i = 0; i < SAMPLES; i++)
		CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample,
				  .time_ns = 5000000000ull + i, .thread = t[i % 2],
				  .stack = (uint32_t)st[i % 3])), ==, 0);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	CHECK_INT(open_bytes(fx.mb.p, fx.mb.len, &fx.sp), ==, 0);
	CHECK_INT(prof_profile_new(&fx.prof), ==, 0);
	CHECK_INT(prof_profile_group_by(fx.prof, PROF_GROUP_THREAD), ==, 0);
	CHECK_INT(prof_profile_read(fx.prof, fx.sp, NULL, NULL), ==, 0);
	CHECK_INT(prof_symbolizer_new(fx.sp, NULL, &fx.sym), ==, 0);
	CHECK_INT(prof_profile_samples(fx.prof), ==, SAMPLES);
	/* 2 groups, 2 x 3 cells (and the unused [0] of each) */
	CHECK_INT(fx.prof->ngroups, ==, 3);
	CHECK_INT(fx.prof->ncells, ==, 7);
	CHECK_INT(fx.prof->cells_cap, <=, 16);
	CHECK_REPORT(&fx, &o,
		     "a-7;0x1000 33333\n"
		     "a-7;0x1000;0x1000 33333\n"
		     "a-7;[empty stack] 33334\n"
		     "b-8;0x1000 33334\n"
		     "b-8;0x1000;0x1000 33333\n"
		     "b-8;[empty stack] 33333\n");
	gfx_close(&fx);
}

TEST(group_an_empty_grouped_profile_says_so)
{
	struct prof_report_opts o = { .sz = sizeof(o), .format = PROF_REPORT_TOP };
	struct prof_spool_writer *w;
	PROF_OPTS(prof_sink, sink);
	PROF_OPTS(prof_meta, meta);
	struct gfx fx = { 0 };

	sink = membuf_sink(&fx.mb);
	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	CHECK_INT(open_bytes(fx.mb.p, fx.mb.len, &fx.sp), ==, 0);
	CHECK_INT(prof_profile_new(&fx.prof), ==, 0);
	CHECK_INT(prof_profile_group_by(fx.prof, PROF_GROUP_PROCESS), ==, 0);
	CHECK_INT(prof_profile_read(fx.prof, fx.sp, NULL, NULL), ==, 0);
	CHECK_INT(prof_symbolizer_new(fx.sp, NULL, &fx.sym), ==, 0);
	CHECK_REPORT(&fx, &o, "\nno samples\n");
	o.format = PROF_REPORT_TREE;
	CHECK_REPORT(&fx, &o, "\nno samples\n");
	o.format = PROF_REPORT_FOLDED;
	CHECK_REPORT(&fx, &o, "");
	gfx_close(&fx);
}

TEST(group_by_is_checked_and_needs_the_spool)
{
	const struct prof_sample s = { .sz = sizeof(s), .thread = 1, .stack = 0 };
	const struct prof_sample bad = { .sz = sizeof(bad), .thread = 99, .stack = 0 };
	struct prof_profile *p;
	struct gfx fx;

	CHECK_INT(prof_profile_new(&p), ==, 0);
	CHECK_INT(prof_profile_group_by(p, (PROF_GROUP_PROCESS + 1)), ==, -EINVAL);
	CHECK_INT(prof_profile_group_by(p, PROF_GROUP_THREAD), ==, 0);
	CHECK_INT(prof_profile_add_sample(p, NULL, &s), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "a grouped profile needs the spool of its samples");
	CHECK_INT(prof_profile_add_sample(p, NULL, &s), ==, -EINVAL);
	CHECK_INT(prof_profile_samples(p), ==, 0);
	/* back to ungrouped: the spool is not needed */
	CHECK_INT(prof_profile_group_by(p, PROF_GROUP_NONE), ==, 0);
	CHECK_INT(prof_profile_add_sample(p, NULL, &s), ==, 0);
	CHECK_INT(prof_profile_group_by(p, PROF_GROUP_THREAD), ==, -EBUSY);
	CHECK_STR(prof_errmsg(), "cannot group a profile that has counted samples");
	prof_profile_free(p);

	gfx_open(&fx, PROF_GROUP_PROCESS);
	CHECK_INT(prof_profile_add_sample(fx.prof, fx.sp, &bad), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "sample of thread 99, which the spool does not define");
	CHECK_INT(prof_profile_samples(fx.prof), ==, 11);
	gfx_close(&fx);
}
