/* SPDX-License-Identifier: MIT */
/*
 * test-offcpu.c - the off-CPU intervals the recorder makes of switch-out
 * samples and switch records (record/offcpu.c), written to a spool in
 * memory and read back: the usual order, and each record lost in turn.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "record/offcpu.h"
#include "spool_test.h"

#define MS 1000000ull

struct fx {
	struct membuf mb;
	struct prof_spool_writer *w;
	struct offcpu oc;
	uint32_t thread, stack, kstack;
	struct prof_offcpu got[8];
	uint32_t got_stack_len[8];	/* frames on each interval's stack */
	uint8_t got_leaf_kind[8];	/* of its leaf frame */
	size_t n;
};

/* A spool with a thread and a stack of two user frames, KSTACK one kernel frame on it. */
static int setup(struct fx *f)
{
	PROF_OPTS(prof_sink, sink);
	PROF_OPTS(prof_meta, m);
	int64_t p, t, fr1, fr2, kf, s1;

	memset(f, 0, sizeof(*f));
	sink = membuf_sink(&f->mb);
	test_meta(&m);
	m.flags |= PROF_META_OFFCPU;
	if (prof_spool_writer_open_sink(&sink, &m, NULL, &f->w) < 0)
		return -1;
	p = prof_spool_writer_add_process(f->w, &PROF_INIT(prof_process, .pid = 10, .comm = "p",
								  .exe = ""));
	t = prof_spool_writer_add_thread(f->w, &PROF_INIT(prof_thread, .process = (uint32_t)p, .tid = 11,
								 .name = "t"));
	fr1 = prof_spool_writer_intern_frame(f->w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_ANON,
								 .ref = (uint32_t)p, .addr = 0x1000));
	fr2 = prof_spool_writer_intern_frame(f->w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_ANON,
								 .ref = (uint32_t)p, .addr = 0x2000));
	kf = prof_spool_writer_intern_frame(f->w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_KERNEL,
								.addr = 0xffffffff81000000ull));
	s1 = prof_spool_writer_intern_stack(f->w, 0, (uint32_t)fr1);
	f->stack = (uint32_t)prof_spool_writer_intern_stack(f->w, (uint32_t)s1, (uint32_t)fr2);
	f->kstack = (uint32_t)prof_spool_writer_intern_stack(f->w, f->stack, (uint32_t)kf);
	f->thread = (uint32_t)t;
	offcpu_init(&f->oc, f->w);
	return t > 0 && kf > 0 ? 0 : -1;
}

/* Finish the spool and read its intervals back into f->got. */
static int read_back(struct fx *f)
{
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	int r;

	offcpu_release(&f->oc);
	r = prof_spool_writer_finish(f->w, &PROF_INIT(prof_counters));
	prof_spool_writer_close(f->w);
	if (r < 0 || open_bytes(f->mb.p, f->mb.len, &sp) < 0)
		return -1;
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		uint32_t id, n = 0;
		const struct prof_stack_node *sn;

		if (ev.type != PROF_RECORD_OFFCPU || f->n == 8)
			continue;
		f->got[f->n] = *ev.offcpu;
		for (id = ev.offcpu->stack; id && (sn = prof_spool_stack(sp, id)); id = sn->parent) {
			if (!n)
				f->got_leaf_kind[f->n] = prof_spool_frame(sp, sn->frame)->kind;
			n++;
		}
		f->got_stack_len[f->n++] = n;
	}
	prof_spool_close(sp);
	free(f->mb.p);
	return r;
}

TEST(offcpu_switch_out_sample_then_record_then_switch_in)
{
	struct fx f;

	CHECK(setup(&f) == 0);
	/* the sample first, the record a little later (after the stack copy), then the switch-in */
	CHECK_INT(offcpu_sampled(&f.oc, f.thread, 100 * MS, 1, f.kstack, f.stack, false), ==, 0);
	CHECK_INT(offcpu_switched_out(&f.oc, f.thread, 100 * MS + 5000, 1, false), ==, 0);
	CHECK_INT(offcpu_end(&f.oc, f.thread, 130 * MS, PROF_OFFCPU_END_SWITCH_IN), ==, 0);
	/* the interval is closed: a second switch-in ends nothing */
	CHECK_INT(offcpu_end(&f.oc, f.thread, 140 * MS, PROF_OFFCPU_END_SWITCH_IN), ==, 0);
	/* preempted: runnable */
	CHECK_INT(offcpu_sampled(&f.oc, f.thread, 150 * MS, 0, f.stack, f.stack, false), ==, 0);
	CHECK_INT(offcpu_switched_out(&f.oc, f.thread, 150 * MS, 0, true), ==, 0);
	CHECK_INT(offcpu_end(&f.oc, f.thread, 151 * MS, PROF_OFFCPU_END_SWITCH_IN), ==, 0);
	CHECK_INT((long long)f.oc.stats.intervals, ==, 2);
	CHECK_INT(read_back(&f), ==, 0);
	CHECK_INT((long long)f.n, ==, 2);
	/* it starts at the record: the stack copy before it ran on the CPU */
	CHECK_INT((long long)f.got[0].time_ns, ==, (long long)(100 * MS + 5000));
	CHECK_INT((long long)f.got[0].duration_ns, ==, (long long)(30 * MS - 5000));
	CHECK_INT(f.got[0].state, ==, PROF_OFFCPU_STATE_BLOCKED);
	CHECK_INT(f.got[0].end, ==, PROF_OFFCPU_END_SWITCH_IN);
	CHECK_INT(f.got[0].cpu, ==, 1);
	/* two user frames, the kernel's, then the state frame as the leaf */
	CHECK_INT(f.got_stack_len[0], ==, 4);
	CHECK_INT(f.got_leaf_kind[0], ==, PROF_FRAME_STATE);
	CHECK(f.got[0].user_stack != f.got[0].stack);
	CHECK_INT(f.got[1].state, ==, PROF_OFFCPU_STATE_RUNNABLE);
	CHECK_INT((long long)f.got[1].duration_ns, ==, (long long)MS);
	CHECK_INT(f.got_stack_len[1], ==, 3);
	CHECK_INT((long long)f.got[1].user_stack, ==, (long long)f.got[1].stack);
}

TEST(offcpu_losses_end_or_drop_intervals_but_never_stretch_them_silently)
{
	struct fx f;

	CHECK(setup(&f) == 0);
	/* the switch-out sample lost: an interval with the state frame alone */
	CHECK_INT(offcpu_switched_out(&f.oc, f.thread, 10 * MS, 0, false), ==, 0);
	CHECK_INT(offcpu_end(&f.oc, f.thread, 12 * MS, PROF_OFFCPU_END_SWITCH_IN), ==, 0);
	/* the switch-in lost: the next sign of running ends it */
	CHECK_INT(offcpu_sampled(&f.oc, f.thread, 20 * MS, 0, f.stack, f.stack, true), ==, 0);
	CHECK_INT(offcpu_switched_out(&f.oc, f.thread, 20 * MS, 0, false), ==, 0);
	CHECK_INT(offcpu_end(&f.oc, f.thread, 25 * MS, PROF_OFFCPU_END_RAN), ==, 0);
	/* the switch record lost: nobody knows the state, the interval is dropped */
	CHECK_INT(offcpu_sampled(&f.oc, f.thread, 30 * MS, 0, f.stack, f.stack, false), ==, 0);
	CHECK_INT(offcpu_end(&f.oc, f.thread, 31 * MS, PROF_OFFCPU_END_SWITCH_IN), ==, 0);
	/* a thread still off at the end */
	CHECK_INT(offcpu_sampled(&f.oc, f.thread, 40 * MS, 0, f.stack, f.stack, false), ==, 0);
	CHECK_INT(offcpu_switched_out(&f.oc, f.thread, 40 * MS, 0, false), ==, 0);
	CHECK_INT(offcpu_end_all(&f.oc, 50 * MS), ==, 0);
	CHECK_INT((long long)f.oc.stats.dropped, ==, 1);
	CHECK_INT((long long)f.oc.stats.unsampled, ==, 1);
	CHECK_INT((long long)f.oc.stats.truncated, ==, 1);
	CHECK_INT((long long)f.oc.stats.ns[PROF_OFFCPU_STATE_BLOCKED], ==, (long long)(2 + 5 + 10) * MS);
	CHECK_INT(read_back(&f), ==, 0);
	CHECK_INT((long long)f.n, ==, 3);
	CHECK_INT(f.got_stack_len[0], ==, 1);
	CHECK_INT(f.got_leaf_kind[0], ==, PROF_FRAME_STATE);
	CHECK_INT(f.got[1].end, ==, PROF_OFFCPU_END_RAN);
	CHECK_INT(f.got[2].end, ==, PROF_OFFCPU_END_RECORDING);
	CHECK_INT((long long)f.got[2].duration_ns, ==, (long long)(10 * MS));
}

TEST(offcpu_records_need_an_offcpu_spool)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, m);
	int64_t p, t;

	test_meta(&m);	/* no PROF_META_OFFCPU: version 4, its records refused all the same */
	CHECK_INT(prof_spool_writer_open_sink(&sink, &m, NULL, &w), ==, 0);
	CHECK_INT(mb.p[8], ==, 4);
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1, .comm = "", .exe = ""));
	t = prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = (uint32_t)p, .tid = 1,
							   .name = ""));
	CHECK_INT(prof_spool_writer_add_offcpu(w, &PROF_INIT(prof_offcpu, .thread = (uint32_t)t,
			.state = PROF_OFFCPU_STATE_BLOCKED, .end = PROF_OFFCPU_END_SWITCH_IN)), ==, -EINVAL);
	CHECK(prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_STATE,
							       .addr = 1)) < 0);
	prof_spool_writer_close(w);
	free(mb.p);
}
