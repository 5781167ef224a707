/* SPDX-License-Identifier: MIT */
/*
 * test-sized.c - the sized structs of prof.h as a program built against
 * other headers sees them: an older, smaller struct gets what it knows (or
 * the defaults of what it lacks), a newer, larger one gets zeros past what
 * this library knows (or must leave them zero), one without sz an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "spool_test.h"

/* A spool of write_rich(), open for reading. */
static struct prof_spool *rich(struct membuf *mb)
{
	struct prof_spool *sp = NULL;

	write_rich(mb, 0, true);
	if (open_bytes(mb->p, mb->len, &sp) < 0)
		return NULL;
	return sp;
}

TEST(sized_out_structs_fill_what_the_caller_knows)
{
	struct membuf mb = { 0 };
	struct prof_spool *sp = rich(&mb);
	PROF_OPTS(prof_record, ev);
	struct {
		struct prof_spool_status st;
		uint64_t newer[2];
	} big;
	struct prof_spool_status old;
	struct prof_record zero = { 0 };

	CHECK(sp);
	while (prof_spool_next(sp, &ev) > 0)
		;
	/* an older caller's status ends before offset: it gets state and blocks only */
	memset(&old, 0xa5, sizeof(old));
	old.sz = offsetof(struct prof_spool_status, offset);
	CHECK_INT(prof_spool_status(sp, &old), ==, 0);
	CHECK_INT(old.sz, ==, offsetof(struct prof_spool_status, offset));
	CHECK_INT(old.state, ==, PROF_SPOOL_STATE_FINISHED);
	CHECK(old.blocks > 0);
	CHECK_INT(old.offset, ==, 0xa5a5a5a5a5a5a5a5ull);	/* untouched */
	/* a newer caller's: what this library does not know reads zero */
	memset(&big, 0xa5, sizeof(big));
	big.st.sz = sizeof(big);
	CHECK_INT(prof_spool_status(sp, &big.st), ==, 0);
	CHECK_INT(big.st.sz, ==, sizeof(big));
	CHECK_INT(big.st.offset, ==, mb.len);
	CHECK_INT(big.newer[0], ==, 0);
	CHECK_INT(big.newer[1], ==, 0);
	/* no sz: an error, and nothing written */
	memset(&old, 0, sizeof(old));
	CHECK_INT(prof_spool_status(sp, &old), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "spool status: sz not set");
	CHECK_INT(old.state, ==, 0);
	CHECK_INT(prof_spool_next(sp, &zero), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "spool record: sz not set");
	prof_spool_close(sp);
	free(mb.p);
}

TEST(sized_in_structs_take_defaults_and_refuse_unknown_fields)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	struct {
		struct prof_process p;
		uint64_t newer;
	} big = { .p = { .sz = sizeof(big), .pid = 7, .comm = "new", .exe = "" }, .newer = 1 };
	struct prof_process old = { .pid = 8, .comm = "old", .exe = "/bin/old" };
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);

	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	/* a field this library does not know, set: refused */
	CHECK_INT(prof_spool_writer_add_process(w, &big.p), ==, -EINVAL);
	CHECK(strstr(prof_errmsg(), "process of 72 bytes sets fields this prof does not know (it knows 64 bytes)"));
	big.newer = 0;
	CHECK_INT(prof_spool_writer_add_process(w, &big.p), ==, 1);
	/* an older caller's, without exe: exe takes its default, none */
	old.sz = offsetof(struct prof_process, exe);
	CHECK_INT(prof_spool_writer_add_process(w, &old), ==, 2);
	old.sz = 0;
	CHECK_INT(prof_spool_writer_add_process(w, &old), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "process: sz not set");
	CHECK_INT(prof_spool_writer_add_process(w, NULL), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);

	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_PROCESS);
	CHECK_INT(ev.process->sz, ==, sizeof(struct prof_process));	/* lent: the library's */
	CHECK_STR(ev.process->comm, "new");
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.process->pid, ==, 8);
	CHECK_STR(ev.process->comm, "old");
	CHECK_STR(ev.process->exe, "");
	CHECK_INT(prof_spool_meta(sp)->sz, ==, sizeof(struct prof_meta));
	prof_spool_close(sp);
	free(mb.p);
}

TEST(sized_lent_arrays_hold_pointers)
{
	struct membuf mb = { 0 };
	struct prof_spool *sp = rich(&mb);
	const struct prof_resolved_frame *const *v;
	struct prof_symbolizer *sym;
	PROF_OPTS(prof_resolved_frame, one);
	size_t n;

	CHECK(sp);
	CHECK_INT(prof_symbolizer_new(sp, NULL, &sym), ==, 0);
	PROF_OPTS(prof_record, ev);
	while (prof_spool_next(sp, &ev) > 0)
		;
	CHECK_INT(prof_symbolizer_frame_inlines(sym, 1, &v, &n), ==, 0);
	CHECK(n >= 1);
	CHECK_INT(v[0]->sz, ==, sizeof(struct prof_resolved_frame));
	CHECK_INT(prof_symbolizer_frame(sym, 1, &one), ==, 0);
	CHECK_STR(one.function, v[0]->function);
	one.sz = 0;
	CHECK_INT(prof_symbolizer_frame(sym, 1, &one), ==, -EINVAL);
	prof_symbolizer_free(sym);
	prof_spool_close(sp);
	free(mb.p);
}

TEST(sized_names_of_unknown_values_are_null)
{
	CHECK(!prof_unwind_error_name(0));
	CHECK(!prof_unwind_error_name(999));
	CHECK(!prof_unwind_fallback_name(999));
	CHECK(!prof_lost_kind_name(999));
	CHECK(!prof_offcpu_state_name(999));
	CHECK(!prof_weight_name(999));
	CHECK(!prof_report_format_name(999));
	CHECK(!prof_tail_state_name(999));
	CHECK(!prof_tail_format_name(999));
	CHECK_STR(prof_lost_kind_name(PROF_LOST_SWITCH_RECORDS), "switch-records");
	CHECK_STR(prof_tail_state_name(PROF_TAIL_STATE_ABANDONED), "abandoned");
}
