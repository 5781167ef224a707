/* SPDX-License-Identifier: MIT */
/*
 * test-spool.c - the spool writer and reader against each other and against
 * hostile bytes: round trip of every record kind and field, truncation at
 * every offset, corruption, resumption, reference checks, and size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "prof.h"
#include "spool/spool_format.h"
#include "spool_test.h"
#include "tests/fuzz/spool_image.h"

static ssize_t mem_write(void *ctx, const void *buf, size_t len)
{
	struct membuf *mb = ctx;

	if (mb->fail_at && mb->len + len > mb->fail_at)
		return -ENOSPC;
	if (mb->len + len > mb->cap) {
		size_t cap = mb->cap ? mb->cap : 4096;

		while (cap < mb->len + len)
			cap *= 2;
		mb->p = realloc(mb->p, cap);
		if (!mb->p)
			abort();
		mb->cap = cap;
	}
	memcpy(mb->p + mb->len, buf, len);
	mb->len += len;
	return (ssize_t)len;
}

struct prof_sink membuf_sink(struct membuf *mb)
{
	return PROF_INIT(prof_sink, .write = mem_write, .ctx = mb);
}

int open_bytes(const uint8_t *p, size_t len, struct prof_spool **ret)
{
	int fd = memfd_create("spool", MFD_CLOEXEC);
	int r;

	if (fd < 0 || (len && write(fd, p, len) != (ssize_t)len))
		abort();
	r = prof_spool_open_fd(fd, "mem", ret);
	close(fd);
	return r;
}

static const char *const test_argv[] = { "./app", "--flag", "x y" };
static const int32_t test_pids[] = { 17, 42 };

void test_meta(struct prof_meta *m)
{
	*m = PROF_INIT(prof_meta,
		.argc = 3, .argv = test_argv, .npids = 2, .pids = test_pids,
		.wall_start_ns = 1700000000123456789ull, .mono_start_ns = 5000000000ull,
		.time_unit_ns = 1, .event = "cpu-clock", .freq_hz = 999, .period = 0,
		.stack_bytes = 32768, .hostname = "host", .kernel_release = "6.1.0",
		.arch = "x86_64", .page_size = 4096, .prof_version = PROF_VERSION,
		.flags = PROF_META_KERNEL | PROF_META_INHERIT,);
}

/*
 * Write one of every record kind (several samples, a few blocks when
 * BLOCK_BYTES is small).  Returns the number of events a reader yields.
 */
size_t write_rich(struct membuf *mb, size_t block_bytes, bool trailer)
{
	struct prof_spool_writer_opts opts = { .sz = sizeof(opts), .block_bytes = block_bytes };
	struct prof_sink sink = membuf_sink(mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	size_t events = 0, i;
	int64_t p, t, m, f1, f2, fk, fa, ft, s;

	test_meta(&meta);
	if (prof_spool_writer_open_sink(&sink, &meta, &opts, &w) < 0)
		abort();
	struct prof_process proc = { .sz = sizeof(proc), .pid = 17, .ppid = 1, .start_time_ns = 4999,
				     .time_ns = 5000000100ull, .comm = "app", .exe = "/bin/app" };
	p = prof_spool_writer_add_process(w, &proc);
	struct prof_thread th = { .sz = sizeof(th), .process = (uint32_t)p, .tid = 18, .time_ns = 5000000200ull,
				  .name = "worker" };
	t = prof_spool_writer_add_thread(w, &th);
	struct prof_module mod = { .sz = sizeof(mod), .process = (uint32_t)p, .time_ns = 5000000300ull,
				   .start = 0x400000, .end = 0x410000, .pgoff = 0x1000,
				   .flags = PROF_MODULE_EXEC | PROF_MODULE_DELETED,
				   .dev_major = 8, .dev_minor = 3, .inode = 99,
				   .build_id_len = 3, .build_id = { 0xde, 0xad, 0xbf },
				   .path = "/bin/app" };
	m = prof_spool_writer_add_module(w, &mod);
	f1 = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
								.ref = (uint32_t)m, .addr = 0x1234));
	f2 = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
								.ref = (uint32_t)m, .addr = 0x1000));
	fk = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_KERNEL,
								.addr = 0xffffffff81234567ull));
	fa = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_ANON,
								.ref = (uint32_t)p,
								.addr = 0x7f0000001000ull));
	ft = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_TRUNCATED,
								.addr = PROF_UNWIND_NO_CFI));
	uint32_t frames[] = { (uint32_t)fk, (uint32_t)f1, (uint32_t)f2 };
	s = prof_spool_writer_intern_frames(w, frames, 3);
	if (p != 1 || t != 1 || m != 1 || f1 != 1 || f2 != 2 || fk != 3 || fa != 4 || ft != 5 ||
	    s != 3)
		abort();
	events += 1 + 1 + 1 + 5 + 3;
	prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_PROCESS,
							 .scope_id = (uint32_t)p,
							 .start = 0x7f0000001000ull, .size = 64,
							 .name = "jit_fn"));
	prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_KERNEL,
							 .start = 0xffffffff81234500ull,
							 .size = 0x100, .name = "do_syscall_64"));
	events += 2;
	for (i = 0; i < 40; i++) {
		struct prof_sample smp = { .sz = sizeof(smp), .time_ns = 5000001000ull + i * 1001001 - (i == 7) * 5000,
					   .thread = (uint32_t)t, .stack = i % 5 ? (uint32_t)s : 0,
					   .period = 1001001 + (i == 3) * 17, .cpu = (uint32_t)i % 2 };

		if (prof_spool_writer_add_sample(w, &smp) < 0)
			abort();
	}
	events += 40;
	prof_spool_writer_rename_thread(w, (uint32_t)t, 5100000000ull, "renamed");
	prof_spool_writer_add_lost(w, &PROF_INIT(prof_lost, .time_ns = 5100000001ull,
						    .kind = PROF_LOST_MMAP, .count = 3));
	prof_spool_writer_retire_module(w, (uint32_t)m, 5100000002ull);
	prof_spool_writer_add_exec(w, (uint32_t)p, 5100000003ull, "newcomm", "/bin/new");
	prof_spool_writer_add_thread_exit(w, (uint32_t)t, 5100000004ull);
	prof_spool_writer_add_process_exit(w, (uint32_t)p, 5100000005ull);
	events += 6;
	if (trailer) {
		struct prof_counters c = { .sz = sizeof(c), .samples = 40, .sample_events = 41, .empty_stacks = 8,
					   .truncated_stacks = 2, .processes = 1, .threads = 1,
					   .lifecycle_gaps = 1, .reconciliations = 1,
					   .mono_end_ns = 5200000000ull, .wall_end_ns = 77 };

		c.lost[PROF_LOST_MMAP] = 3;
		c.lost[PROF_LOST_EXIT] = 1;
		c.unwind_errors[PROF_UNWIND_NO_CFI] = 2;
		if (prof_spool_writer_finish(w, &c) < 0)
			abort();
		events++;
	}
	if (prof_spool_writer_close(w) < 0)
		abort();
	return events;
}

TEST(spool_round_trip_every_record)
{
	struct membuf mb = { 0 };
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	const struct prof_meta *m;
	size_t n = write_rich(&mb, 0, true), got = 0, i;

	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	m = prof_spool_meta(sp);
	CHECK_INT(m->argc, ==, 3);
	CHECK_STR(m->argv[2], "x y");
	CHECK_INT(m->npids, ==, 2);
	CHECK_INT(m->pids[1], ==, 42);
	CHECK_INT(m->wall_start_ns, ==, 1700000000123456789ull);
	CHECK_INT(m->mono_start_ns, ==, 5000000000ull);
	CHECK_INT(m->time_unit_ns, ==, 1);
	CHECK_STR(m->event, "cpu-clock");
	CHECK_INT(m->freq_hz, ==, 999);
	CHECK_INT(m->stack_bytes, ==, 32768);
	CHECK_STR(m->hostname, "host");
	CHECK_STR(m->kernel_release, "6.1.0");
	CHECK_STR(m->arch, "x86_64");
	CHECK_INT(m->page_size, ==, 4096);
	CHECK_STR(m->prof_version, PROF_VERSION);
	CHECK_INT(m->flags, ==, PROF_META_KERNEL | PROF_META_INHERIT);

	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_PROCESS);
	CHECK_INT(ev.id, ==, 1);
	CHECK_INT(ev.process->pid, ==, 17);
	CHECK_INT(ev.process->ppid, ==, 1);
	CHECK_INT(ev.process->start_time_ns, ==, 4999);
	CHECK_INT(ev.process->time_ns, ==, 5000000100ull);
	CHECK_STR(ev.process->comm, "app");
	CHECK_STR(ev.process->exe, "/bin/app");
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_THREAD);
	CHECK_INT(ev.thread->process, ==, 1);
	CHECK_INT(ev.thread->tid, ==, 18);
	CHECK_INT(ev.thread->time_ns, ==, 5000000200ull);
	CHECK_STR(ev.thread->name, "worker");
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_MODULE);
	CHECK_INT(ev.module->process, ==, 1);
	CHECK_INT(ev.module->time_ns, ==, 5000000300ull);
	CHECK_INT(ev.module->start, ==, 0x400000);
	CHECK_INT(ev.module->end, ==, 0x410000);
	CHECK_INT(ev.module->pgoff, ==, 0x1000);
	CHECK_INT(ev.module->flags, ==, PROF_MODULE_EXEC | PROF_MODULE_DELETED);
	CHECK_INT(ev.module->dev_major, ==, 8);
	CHECK_INT(ev.module->dev_minor, ==, 3);
	CHECK_INT(ev.module->inode, ==, 99);
	CHECK_INT(ev.module->build_id_len, ==, 3);
	CHECK_INT(ev.module->build_id[2], ==, 0xbf);
	CHECK_STR(ev.module->path, "/bin/app");
	CHECK(!ev.module->retired);

	static const struct prof_frame want_frames[] = {
		{ .id = 1, .kind = PROF_FRAME_USER, .ref = 1, .addr = 0x1234 },
		{ .id = 2, .kind = PROF_FRAME_USER, .ref = 1, .addr = 0x1000 },
		{ .id = 3, .kind = PROF_FRAME_KERNEL, .ref = 0, .addr = 0xffffffff81234567ull },
		{ .id = 4, .kind = PROF_FRAME_ANON, .ref = 1, .addr = 0x7f0000001000ull },
		{ .id = 5, .kind = PROF_FRAME_TRUNCATED, .ref = 0, .addr = PROF_UNWIND_NO_CFI },
	};
	for (i = 0; i < 5; i++) {
		CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
		CHECK_INT(ev.type, ==, PROF_RECORD_FRAME);
		CHECK_INT(ev.frame->id, ==, want_frames[i].id);
		CHECK_INT(ev.frame->kind, ==, want_frames[i].kind);
		CHECK_INT(ev.frame->ref, ==, want_frames[i].ref);
		CHECK_INT(ev.frame->addr, ==, want_frames[i].addr);
	}
	/* intern_frames writes root first: f2 (root), f1, fk (leaf) */
	static const struct prof_stack_node want_nodes[] = { { 0, 2 }, { 1, 1 }, { 2, 3 } };
	for (i = 0; i < 3; i++) {
		CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
		CHECK_INT(ev.type, ==, PROF_RECORD_STACK);
		CHECK_INT(ev.id, ==, i + 1);
		CHECK_INT(ev.stack->parent, ==, want_nodes[i].parent);
		CHECK_INT(ev.stack->frame, ==, want_nodes[i].frame);
	}
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_SYMBOL);
	CHECK_INT(ev.symbol->scope, ==, PROF_SYMBOL_PROCESS);
	CHECK_INT(ev.symbol->scope_id, ==, 1);
	CHECK_INT(ev.symbol->start, ==, 0x7f0000001000ull);
	CHECK_INT(ev.symbol->size, ==, 64);
	CHECK_STR(ev.symbol->name, "jit_fn");
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.symbol->scope, ==, PROF_SYMBOL_KERNEL);
	CHECK_INT(ev.symbol->start, ==, 0xffffffff81234500ull);
	CHECK_STR(ev.symbol->name, "do_syscall_64");
	for (i = 0; i < 40; i++) {
		CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
		CHECK_INT(ev.type, ==, PROF_RECORD_SAMPLE);
		CHECK_INT(ev.sample->time_ns, ==, 5000001000ull + i * 1001001 - (i == 7) * 5000);
		CHECK_INT(ev.sample->thread, ==, 1);
		CHECK_INT(ev.sample->stack, ==, i % 5 ? 3 : 0);
		CHECK_INT(ev.sample->period, ==, 1001001 + (i == 3) * 17);
		CHECK_INT(ev.sample->cpu, ==, i % 2);
	}
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_THREAD_NAME);
	CHECK_INT(ev.time_ns, ==, 5100000000ull);
	CHECK_STR(ev.thread->name, "renamed");
	CHECK_STR(prof_spool_thread(sp, 1)->name, "renamed");
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_LOST);
	CHECK_INT(ev.lost->kind, ==, PROF_LOST_MMAP);
	CHECK_INT(ev.lost->count, ==, 3);
	CHECK_INT(ev.lost->time_ns, ==, 5100000001ull);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_MODULE_RETIRE);
	CHECK_INT(ev.id, ==, 1);
	CHECK(prof_spool_module(sp, 1)->retired);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_EXEC);
	CHECK_STR(ev.process->comm, "newcomm");
	CHECK_STR(ev.process->exe, "/bin/new");
	CHECK_INT(ev.time_ns, ==, 5100000003ull);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_THREAD_EXIT);
	CHECK(ev.thread->exited);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_PROCESS_EXIT);
	CHECK(ev.process->exited);
	CHECK(prof_spool_counters(sp) == NULL);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_TRAILER);
	CHECK_INT(ev.counters->samples, ==, 40);
	CHECK_INT(ev.counters->sample_events, ==, 41);
	CHECK_INT(ev.counters->empty_stacks, ==, 8);
	CHECK_INT(ev.counters->truncated_stacks, ==, 2);
	CHECK_INT(ev.counters->processes, ==, 1);
	CHECK_INT(ev.counters->threads, ==, 1);
	CHECK_INT(ev.counters->lifecycle_gaps, ==, 1);
	CHECK_INT(ev.counters->reconciliations, ==, 1);
	CHECK_INT(ev.counters->mono_end_ns, ==, 5200000000ull);
	CHECK_INT(ev.counters->wall_end_ns, ==, 77);
	CHECK_INT(ev.counters->lost[PROF_LOST_MMAP], ==, 3);
	CHECK_INT(ev.counters->lost[PROF_LOST_EXIT], ==, 1);
	CHECK_INT(prof_counters_lost_total(ev.counters), ==, 4);
	CHECK_INT(ev.counters->unwind_errors[PROF_UNWIND_NO_CFI], ==, 2);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 0);
	CHECK(prof_spool_counters(sp) != NULL);

	PROF_OPTS(prof_spool_status, st);
	PROF_OPTS(prof_spool_counts, cnt);

	prof_spool_status(sp, &st);
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_FINISHED);
	CHECK_INT(st.offset, ==, mb.len);
	prof_spool_counts(sp, &cnt);
	CHECK_INT(cnt.processes, ==, 1);
	CHECK_INT(cnt.frames, ==, 5);
	CHECK_INT(cnt.stacks, ==, 3);
	CHECK_INT(cnt.symbols, ==, 2);
	CHECK_INT(cnt.samples, ==, 40);
	CHECK(prof_spool_frame(sp, 6) == NULL);
	CHECK(prof_spool_stack(sp, 0) == NULL);
	got = 11 + 2 + 40 + 6 + 1;
	CHECK_INT(got, ==, n);
	prof_spool_close(sp);
	free(mb.p);
}

/* Events of a full read, with the end offset of the block each came from. */
struct event_log {
	size_t n;
	uint64_t block_end[256];
	enum prof_record_type type[256];
	char reason[256];	/* copied: the status lends it only until close */
};

static void read_log(const uint8_t *p, size_t len, struct event_log *log, int *open_r,
		     struct prof_spool_status *st)
{
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	int r;

	log->n = 0;
	*open_r = open_bytes(p, len, &sp);
	if (*open_r < 0)
		return;
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		PROF_OPTS(prof_spool_status, s);

		prof_spool_status(sp, &s);
		CHECK(log->n < 256);
		log->block_end[log->n] = s.offset;
		log->type[log->n++] = ev.type;
	}
	CHECK_INT(r, ==, 0);
	prof_spool_status(sp, st);
	snprintf(log->reason, sizeof(log->reason), "%s", st->reason);
	st->reason = NULL;
	prof_spool_close(sp);
}

TEST(spool_truncation_at_every_offset)
{
	struct membuf mb = { 0 };
	struct event_log full, cut;
	PROF_OPTS(prof_spool_status, st);
	uint64_t first_block_end;
	size_t len, i, want;
	int r;

	write_rich(&mb, 128, true);	/* small blocks: many boundaries */
	CHECK_CALL(read_log(mb.p, mb.len, &full, &r, &st));
	CHECK_INT(r, ==, 0);
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_FINISHED);
	CHECK(st.blocks >= 5);
	/* the META block ends where the first event's block starts, at the latest */
	first_block_end = SPOOL_HEADER_LEN;
	{
		uint32_t stored = spool_get_le32(mb.p + SPOOL_HEADER_LEN + 4);

		first_block_end += SPOOL_BLOCK_HEADER_LEN + stored;
	}
	for (len = 0; len < mb.len; len++) {
		CHECK_CALL(read_log(mb.p, len, &cut, &r, &st));
		if (len < first_block_end) {
			CHECK_INT(r, ==, len < SPOOL_HEADER_LEN && len > 0 ? -ENODATA : -ENODATA);
			continue;
		}
		CHECK_INT(r, ==, 0);
		for (want = 0; want < full.n && full.block_end[want] <= len; want++)
			;
		CHECK_INT(cut.n, ==, want);
		for (i = 0; i < want; i++)
			CHECK_INT(cut.type[i], ==, full.type[i]);
		CHECK_INT(st.state, ==, st.offset == len ? PROF_SPOOL_STATE_READING : PROF_SPOOL_STATE_CUT);
		CHECK(st.offset <= len);
	}
	free(mb.p);
}

TEST(spool_random_corruption_keeps_valid_prefix)
{
	struct membuf mb = { 0 };
	struct event_log full, bad;
	PROF_OPTS(prof_spool_status, st);
	uint64_t seed = 12345;
	uint8_t *copy;
	size_t i, trial;
	int r;

	write_rich(&mb, 200, true);
	CHECK_CALL(read_log(mb.p, mb.len, &full, &r, &st));
	copy = malloc(mb.len);
	for (trial = 0; trial < 3000; trial++) {
		size_t pos, nflip = 1 + trial % 3, k;

		memcpy(copy, mb.p, mb.len);
		for (k = 0; k < nflip; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			pos = (size_t)(seed >> 33) % mb.len;
			if (pos == 10 || pos == 11)	/* the minor version is informative */
				pos = 0;
			copy[pos] ^= (uint8_t)(1u << ((seed >> 20) % 8));
		}
		if (!memcmp(copy, mb.p, mb.len))	/* two flips cancelled out */
			continue;
		CHECK_CALL(read_log(copy, mb.len, &bad, &r, &st));
		if (r < 0) {
			CHECK(r == -EBADMSG || r == -ENOTSUP || r == -ENODATA);
			continue;
		}
		/* a flipped bit is always noticed, and what was read is a prefix */
		CHECK_INT(st.state, ==, PROF_SPOOL_STATE_CORRUPT);
		CHECK(bad.n < full.n);
		for (i = 0; i < bad.n; i++)
			CHECK_INT(bad.type[i], ==, full.type[i]);
		CHECK(bad.reason[0]);
	}
	free(copy);
	free(mb.p);
}

TEST(spool_resumes_as_file_grows)
{
	char path[] = "/tmp/prof-unit-XXXXXX";
	int fd = mkstemp(path);
	struct prof_spool_writer *w;
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	PROF_OPTS(prof_meta, meta);
	PROF_OPTS(prof_spool_status, st);
	int64_t p, t;
	size_t i, seen = 0;

	CHECK(fd >= 0);
	close(fd);
	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open(path, &meta, NULL, &w), ==, 0);
	CHECK_INT(prof_spool_open(path, &sp), ==, 0);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 0);
	prof_spool_status(sp, &st);
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_READING);
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1, .comm = "a"));
	t = prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = (uint32_t)p, .tid = 1));
	for (i = 0; i < 5; i++) {
		CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample,
				  .time_ns = meta.mono_start_ns + i, .thread = (uint32_t)t)), ==, 0);
		/* buffered, not flushed: invisible */
		CHECK_INT(prof_spool_next(sp, &ev), ==, 0);
		CHECK_INT(prof_spool_writer_flush(w), ==, 0);
		while (prof_spool_next(sp, &ev) > 0)
			seen += ev.type == PROF_RECORD_SAMPLE;
		CHECK_INT(seen, ==, i + 1);
	}
	CHECK_INT(prof_spool_writer_finish(w, &PROF_INIT(prof_counters, .samples = 5)), ==, 0);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_TRAILER);
	prof_spool_status(sp, &st);
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_FINISHED);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	prof_spool_close(sp);
	unlink(path);
}

TEST(spool_writer_interns_frames_and_stacks)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	int64_t p, m, a, b, a2, s1, s2;

	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1));
	m = prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = (uint32_t)p, .start = 1,
							    .end = 2, .path = "x"));
	a = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER, .ref = (uint32_t)m, .addr = 5));
	b = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER, .ref = (uint32_t)m, .addr = 6));
	a2 = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER, .ref = (uint32_t)m, .addr = 5));
	CHECK_INT(a, ==, a2);
	CHECK(a != b);
	/* the same address in another kind is another frame */
	CHECK(prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_KERNEL, .ref = 0, .addr = 5)) != a);
	uint32_t st1[] = { (uint32_t)a, (uint32_t)b }, st2[] = { (uint32_t)b, (uint32_t)b };
	s1 = prof_spool_writer_intern_frames(w, st1, 2);
	CHECK_INT(prof_spool_writer_intern_frames(w, st1, 2), ==, s1);
	s2 = prof_spool_writer_intern_frames(w, st2, 2);
	CHECK(s2 != s1);
	/* b at the root is shared: 3 nodes in all */
	CHECK_INT(s2, ==, 3);
	CHECK_INT(prof_spool_writer_intern_frames(w, st1, 0), ==, 0);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	free(mb.p);
}

/*
 * A stack's frames interned before its nodes, as the recorder does: a node
 * of a frame made before the newest node is looked up, found and shared;
 * one of a frame made since is new, and found again after.
 */
TEST(spool_writer_finds_nodes_of_frames_interned_first)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	int64_t p, m, f[4], n1, n2, n3, n4;
	int i;

	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1));
	m = prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = (uint32_t)p, .start = 1,
							    .end = 2, .path = "x"));
	for (i = 0; i < 2; i++)
		f[i] = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame,
			.kind = PROF_FRAME_USER, .ref = (uint32_t)m, .addr = 10 + (uint64_t)i));
	n1 = prof_spool_writer_intern_stack(w, 0, (uint32_t)f[0]);
	n2 = prof_spool_writer_intern_stack(w, (uint32_t)n1, (uint32_t)f[1]);
	/* two new frames, then the old root again: its node is the first */
	for (i = 2; i < 4; i++)
		f[i] = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame,
			.kind = PROF_FRAME_USER, .ref = (uint32_t)m, .addr = 10 + (uint64_t)i));
	CHECK_INT(prof_spool_writer_intern_stack(w, 0, (uint32_t)f[0]), ==, n1);
	n3 = prof_spool_writer_intern_stack(w, (uint32_t)n1, (uint32_t)f[2]);
	CHECK(n3 > n2);
	n4 = prof_spool_writer_intern_stack(w, (uint32_t)n3, (uint32_t)f[3]);
	CHECK_INT(n4, ==, n3 + 1);
	/* and every node is found again */
	CHECK_INT(prof_spool_writer_intern_stack(w, (uint32_t)n1, (uint32_t)f[1]), ==, n2);
	CHECK_INT(prof_spool_writer_intern_stack(w, (uint32_t)n1, (uint32_t)f[2]), ==, n3);
	CHECK_INT(prof_spool_writer_intern_stack(w, (uint32_t)n3, (uint32_t)f[3]), ==, n4);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	free(mb.p);
}

/* A writer into MB of a spool with two processes, ids *P1 and *P2. */
static struct prof_spool_writer *two_processes(struct membuf *mb, uint32_t *p1, uint32_t *p2)
{
	struct prof_sink sink = membuf_sink(mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);

	test_meta(&meta);
	if (prof_spool_writer_open_sink(&sink, &meta, NULL, &w) < 0)
		abort();
	*p1 = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1));
	*p2 = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 2));
	return w;
}

TEST(spool_reader_retires_a_process_s_modules_at_its_exec)
{
	struct membuf mb = { 0 };
	struct prof_spool_writer *w;
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	uint32_t p1, p2, i;

	w = two_processes(&mb, &p1, &p2);
	/* modules 1..6, alternating between the two processes */
	for (i = 0; i < 6; i++)
		prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = i % 2 ? p2 : p1,
								 .start = 0x1000 * (i + 1),
								 .end = 0x1000 * (i + 2), .path = "m"));
	prof_spool_writer_retire_module(w, 3, 10);
	prof_spool_writer_add_exec(w, p1, 11, "new", "/bin/new");
	/* module 7: the new image's */
	prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p1, .start = 0x1000,
							 .end = 0x2000, .path = "n"));
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	while (prof_spool_next(sp, &ev) == 1 && ev.type != PROF_RECORD_EXEC)
		;
	/* the exec retired process 1's modules (3 was already), not process 2's */
	for (i = 1; i <= 6; i++)
		CHECK_INT(prof_spool_module(sp, i)->retired, ==, i % 2 == 1);
	CHECK_INT(prof_spool_next(sp, &ev), ==, 1);
	CHECK_INT(ev.type, ==, PROF_RECORD_MODULE);
	CHECK(!prof_spool_module(sp, 7)->retired);
	prof_spool_close(sp);
	free(mb.p);
}

TEST(spool_reader_retires_a_process_s_modules_at_its_exit)
{
	struct membuf mb = { 0 };
	struct prof_spool_writer *w;
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	uint32_t p1, p2;

	w = two_processes(&mb, &p1, &p2);
	prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p1, .start = 1, .end = 2,
							 .path = "a"));
	prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p2, .start = 1, .end = 2,
							 .path = "b"));
	prof_spool_writer_add_process_exit(w, p2, 12);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	while (prof_spool_next(sp, &ev) == 1)
		;
	CHECK(!prof_spool_module(sp, 1)->retired);
	CHECK(prof_spool_module(sp, 2)->retired);
	prof_spool_close(sp);
	free(mb.p);
}

TEST(spool_writer_rejects_undefined_references)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	PROF_OPTS(prof_meta, meta);
	int64_t p;
	int r, n = 0;

	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	CHECK_INT(prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = 1)), ==, -EINVAL);
	CHECK(strstr(prof_errmsg(), "undefined process 1"));
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1));
	CHECK_INT(p, ==, 1);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .thread = 1)), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_intern_stack(w, 0, 1), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER, .ref = 1, .addr = 5)),
		  ==, -EINVAL);
	CHECK_INT(prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = 9, .addr = 5)), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = 1, .start = 5,
								  .end = 5)), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_add_lost(w, &PROF_INIT(prof_lost, .kind = 0)), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_retire_module(w, 1, 0), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_finish(w, &PROF_INIT(prof_counters)), ==, 0);
	CHECK_INT(prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1)), ==, -EINVAL);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	/* the rejected calls left no trace: the spool reads back clean */
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	while ((r = prof_spool_next(sp, &ev)) > 0)
		n++;
	CHECK_INT(n, ==, 2);
	prof_spool_close(sp);
	free(mb.p);
}

TEST(spool_writer_sink_error_is_sticky)
{
	struct membuf mb = { .fail_at = 400 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	int r = 0, i;

	test_meta(&meta);
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, &(struct prof_spool_writer_opts){
						 .sz = sizeof(struct prof_spool_writer_opts),
						 .block_bytes = 64, .no_compress = true }, &w), ==, 0);
	for (i = 0; i < 100 && r >= 0; i++)
		r = (int)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = i, .comm = "p"));
	CHECK_INT(r, ==, -ENOSPC);
	CHECK(strstr(prof_errmsg(), "cannot write spool"));
	CHECK_INT(prof_spool_writer_flush(w), ==, -ENOSPC);
	CHECK_INT(prof_spool_writer_close(w), ==, -ENOSPC);
	free(mb.p);
}

TEST(spool_open_rejects_what_is_not_a_spool)
{
	struct membuf mb = { 0 };
	struct prof_spool *sp;
	uint8_t junk[64] = "#!/bin/sh\necho this is not a spool at all, not even close\n";

	CHECK_INT(open_bytes(junk, 0, &sp), ==, -ENODATA);
	CHECK(strstr(prof_errmsg(), "is empty"));
	CHECK_INT(open_bytes(junk, sizeof(junk), &sp), ==, -EBADMSG);
	CHECK(strstr(prof_errmsg(), "is not a prof spool"));
	CHECK_INT(open_bytes(junk, 3, &sp), ==, -EBADMSG);
	write_rich(&mb, 0, true);
	CHECK_INT(open_bytes(mb.p, 5, &sp), ==, -ENODATA);
	CHECK(strstr(prof_errmsg(), "truncated inside its header"));
	mb.p[8] = 5;	/* major version 5: a newer prof's */
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, -ENOTSUP);
	CHECK(strstr(prof_errmsg(), "format version 5.0"));
	CHECK(strstr(prof_errmsg(), "this prof reads 1.x to 4.x"));
	mb.p[8] = 2;	/* major version 2, the off-CPU records: read */
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	prof_spool_close(sp);
	mb.p[8] = 1;
	mb.p[10] = 7;	/* a newer minor version reads */
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	prof_spool_close(sp);
	CHECK_INT(prof_spool_open("/nonexistent/x.spool", &sp), ==, -ENOENT);
	CHECK_STR(prof_errmsg(),
		  "cannot open spool '/nonexistent/x.spool': No such file or directory");
	CHECK_INT(prof_spool_open("/tmp", &sp), ==, -EISDIR);
	free(mb.p);
}

/* ---- hand-built blocks: what a buggy or hostile writer could produce ---- */

static size_t rec(uint8_t *out, unsigned tag, const uint8_t *body, size_t len)
{
	size_t n = spool_put_uvarint(out, tag);

	n += spool_put_uvarint(out + n, len);
	memcpy(out + n, body, len);
	return n + len;
}

/* A file: header, the META block of write_rich, then one raw block of RECS. */
static size_t build_file(uint8_t *out, const uint8_t *recs, size_t len, uint32_t raw_len_lie)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	uint8_t *h;
	size_t n;

	test_meta(&meta);
	if (prof_spool_writer_open_sink(&sink, &meta, NULL, &w) < 0)
		abort();
	prof_spool_writer_close(w);
	memcpy(out, mb.p, mb.len);
	n = mb.len;
	free(mb.p);
	h = out + n;
	spool_put_le32(h, SPOOL_BLOCK_MAGIC);
	spool_put_le32(h + 4, (uint32_t)len);
	spool_put_le32(h + 8, raw_len_lie ? raw_len_lie : (uint32_t)len);
	h[12] = SPOOL_ENC_RAW;
	h[13] = h[14] = h[15] = 0;
	memcpy(h + SPOOL_BLOCK_HEADER_LEN, recs, len);
	spool_put_le32(h + 16, (uint32_t)crc32(0, h, 16));
	spool_put_le32(h + 20, (uint32_t)crc32(0, h + SPOOL_BLOCK_HEADER_LEN, (uInt)len));
	return n + SPOOL_BLOCK_HEADER_LEN + len;
}

/* Read FILE to the end; return the events and the final status. */
static int read_all(const uint8_t *file, size_t len, struct prof_spool_status *st,
		    char *reason, size_t reason_len)
{
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	int n = 0;

	if (open_bytes(file, len, &sp) < 0)
		return -1;
	while (prof_spool_next(sp, &ev) > 0)
		n++;
	prof_spool_status(sp, st);
	snprintf(reason, reason_len, "%s", st->reason);
	prof_spool_close(sp);
	return n;
}

TEST(spool_reader_checks_references_and_tags)
{
	static uint8_t file[4096], recs[512];
	PROF_OPTS(prof_spool_status, st);
	char why[256];
	size_t n;

	/* a process, then a stack node whose frame was never defined */
	uint8_t proc[] = { 0, 2, 2, 0, 0, 0 };	/* dt, pid, ppid, start, comm "", exe "" */
	/* version 3: frame 7 back from none (7 << 1), the parent the node before it (none) */
	uint8_t stack_bad[] = { 14 };
	n = rec(recs, SPOOL_TAG_PROCESS, proc, sizeof(proc));
	n += rec(recs + n, SPOOL_TAG_STACK, stack_bad, sizeof(stack_bad));
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_CORRUPT);
	CHECK(strstr(why, "block 2"));
	CHECK(strstr(why, "undefined frame"));

	/* an optional unknown tag is skipped; a longer body is accepted */
	uint8_t proc_long[] = { 0, 2, 2, 0, 0, 0, 0xaa, 0xbb };
	n = rec(recs, 99, (const uint8_t *)"hello", 5);
	n += rec(recs + n, SPOOL_TAG_PROCESS, proc_long, sizeof(proc_long));
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 1);
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_READING);

	/* an unknown critical tag stops the reader */
	n = rec(recs, 40, (const uint8_t *)"x", 1);
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "unknown record kind"));

	/* a second META, a record running past its block, a bad varint */
	n = rec(recs, SPOOL_TAG_META, (const uint8_t *)"", 0);
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "second META"));
	recs[0] = SPOOL_TAG_PROCESS;
	recs[1] = 50;
	n = build_file(file, recs, 10, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "runs past its block"));
	memset(recs, 0xff, 12);
	n = build_file(file, recs, 12, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "varint"));

	/* a raw block claiming two sizes, and a deflate bomb claim */
	n = rec(recs, SPOOL_TAG_PROCESS, proc, sizeof(proc));
	n = build_file(file, recs, n, 1000);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "two sizes"));

	/* a string with a NUL inside */
	uint8_t proc_nul[] = { 0, 2, 2, 0, 2, 'a', 0, 0 };
	n = rec(recs, SPOOL_TAG_PROCESS, proc_nul, sizeof(proc_nul));
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "NUL"));

	/* a record after the trailer */
	n = rec(recs, SPOOL_TAG_TRAILER, (const uint8_t *)"", 0);
	n += rec(recs + n, SPOOL_TAG_PROCESS, proc, sizeof(proc));
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "after the trailer"));
}

TEST(spool_reader_block_is_all_or_nothing)
{
	static uint8_t file[4096], recs[512];
	PROF_OPTS(prof_spool_status, st);
	uint8_t proc[] = { 0, 2, 2, 0, 0, 0 };
	uint8_t thread_bad[] = { 0, 5, 2, 0 };	/* process 5 does not exist */
	char why[256];
	size_t n;

	/* two good records then a bad one: none of the block is handed out */
	n = rec(recs, SPOOL_TAG_PROCESS, proc, sizeof(proc));
	n += rec(recs + n, SPOOL_TAG_PROCESS, proc, sizeof(proc));
	n += rec(recs + n, SPOOL_TAG_THREAD, thread_bad, sizeof(thread_bad));
	n = build_file(file, recs, n, 0);
	CHECK_INT(read_all(file, n, &st, why, sizeof(why)), ==, 0);
	CHECK(strstr(why, "undefined process"));
}

/* ---- writer-made spools edited inside a block, checksums redone ---- */

/*
 * An off-CPU spool in UNIT ns of our own writer, in four blocks: META; the
 * definitions and 4 samples; 4 samples, an interval and 3 samples; a
 * sample and the trailer.
 */
static void write_offcpu(struct membuf *mb, uint64_t unit)
{
	struct prof_sink sink = membuf_sink(mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	int64_t p, t, m, fu, fs, leaf, state;
	uint64_t time = 5000001000ull;
	int i;

	test_meta(&meta);
	meta.flags |= PROF_META_OFFCPU;
	meta.time_unit_ns = unit;
	if (prof_spool_writer_open_sink(&sink, &meta, NULL, &w) < 0)
		abort();
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 17, .comm = "app"));
	t = prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = (uint32_t)p,
								   .tid = 17));
	m = prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = (uint32_t)p,
		.start = 0x400000, .end = 0x410000, .path = "/bin/app"));
	fu = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
								.ref = (uint32_t)m, .addr = 0x1234));
	fs = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_STATE,
		.addr = PROF_OFFCPU_STATE_BLOCKED));
	leaf = prof_spool_writer_intern_stack(w, 0, (uint32_t)fu);
	state = prof_spool_writer_intern_stack(w, (uint32_t)leaf, (uint32_t)fs);
	if (p < 0 || t < 0 || m < 0 || fu < 0 || fs < 0 || leaf < 0 || state < 0)
		abort();
	for (i = 0; i < 12; i++) {
		if (i == 4 || i == 11)
			prof_spool_writer_flush(w);
		if (i == 8 && prof_spool_writer_add_offcpu(w, &PROF_INIT(prof_offcpu, 
				.time_ns = time - 500000, .duration_ns = 400000,
				.thread = (uint32_t)t, .stack = (uint32_t)state,
				.user_stack = (uint32_t)state, .state = PROF_OFFCPU_STATE_BLOCKED,
				.end = PROF_OFFCPU_END_SWITCH_IN)) < 0)
			abort();
		if (prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .time_ns = time,
				.thread = (uint32_t)t, .stack = (uint32_t)leaf, .period = 1000000)) < 0)
			abort();
		time += 1000000;
	}
	if (prof_spool_writer_finish(w, &PROF_INIT(prof_counters, .samples = 12)) < 0 ||
	    prof_spool_writer_close(w) < 0)
		abort();
}

/* The first record of tag TAG in IMG: its block in *BLOCK; NULL if none. */
static struct image_record *find_record(struct spool_image *img, uint64_t tag, size_t *block)
{
	size_t b, i;

	for (b = 0; b < img->nblocks; b++)
		for (i = 0; i < img->blocks[b].nrecs; i++)
			if (img->blocks[b].recs[i].tag == tag) {
				*block = b;
				return &img->blocks[b].recs[i];
			}
	return NULL;
}

/* Set FIELD of the first record of tag TAG of the spool in MB to V; its block in *BLOCK. */
static void set_field(struct membuf *mb, uint64_t tag, const char *field, uint64_t v,
		      size_t *block)
{
	struct spool_image img;
	struct image_record *r;
	struct record_field f;
	uint8_t *out;
	size_t len;

	CHECK_INT(spool_image_parse(&img, mb->p, mb->len, 0), ==, 0);
	CHECK(r = find_record(&img, tag, block));
	CHECK(image_record_field(r, field, &f));
	CHECK_INT(image_record_set(r, &f, v), ==, 0);
	CHECK_INT(spool_image_build(&img, &out, &len), ==, 0);
	spool_image_release(&img);
	free(mb->p);
	mb->p = out;
	mb->len = mb->cap = len;
}

/*
 * Read the spool in MB to its end, as prof report does: every return of
 * prof_spool_next() is a record, or 0 with the status saying why; never an
 * error but ENOMEM.  *BLOCKS gets, for each record handed out, the blocks
 * read by then.
 */
static void read_to_end(const struct membuf *mb, struct prof_spool_status *st, char *reason,
			size_t reason_len, uint64_t *blocks, size_t *n, size_t max)
{
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	int r;

	*n = 0;
	CHECK_INT(open_bytes(mb->p, mb->len, &sp), ==, 0);
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		prof_spool_status(sp, st);
		CHECK(*n < max);
		blocks[(*n)++] = st->blocks;
	}
	if (r == -EBADMSG)
		printf("  prof_spool_next: %s\n", prof_errmsg());
	CHECK(r == 0 || r == -ENOMEM);
	prof_spool_status(sp, st);
	snprintf(reason, reason_len, "%s", st->reason);
	st->reason = NULL;
	prof_spool_close(sp);
}

TEST(spool_reader_checks_an_offcpu_duration_before_the_block_is_used)
{
	struct membuf good = { 0 }, bad = { 0 };
	PROF_OPTS(prof_spool_status, st);
	uint64_t blocks_good[64], blocks_bad[64];
	size_t ngood, nbad, before, block = 0, i;
	char why[256];

	/* 2^55 units of 1 us is past 2^64 ns: the record is invalid, and its whole block */
	write_offcpu(&good, 1000);
	CHECK_CALL(read_to_end(&good, &st, why, sizeof(why), blocks_good, &ngood, 64));
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_FINISHED);
	bad.p = malloc(good.len);
	memcpy(bad.p, good.p, good.len);
	bad.len = good.len;
	CHECK_CALL(set_field(&bad, SPOOL_TAG_OFFCPU, "duration", 1ull << 55, &block));
	CHECK_INT(block, ==, 2);	/* the third block: 4 samples before the interval */
	CHECK_CALL(read_to_end(&bad, &st, why, sizeof(why), blocks_bad, &nbad, 64));
	CHECK_INT(st.state, ==, PROF_SPOOL_STATE_CORRUPT);
	CHECK_INT(st.blocks, ==, 2);
	CHECK(strstr(why, "block 3 at offset "));
	CHECK(strstr(why, ": record at byte "));
	CHECK(strstr(why, ": off-CPU duration out of range"));
	/* exactly the records of the blocks before it, none of its own */
	for (before = 0; before < ngood && blocks_good[before] <= 2; before++)
		;
	CHECK_INT(nbad, ==, before);
	for (i = 0; i < nbad; i++)
		CHECK_INT(blocks_bad[i], <=, 2);
	free(bad.p);
	free(good.p);
}

/*
 * The dry run knows the time unit of a META in its own block, which is
 * applied only after it: 2^63 units are in range at 1 ns, out of it at 2.
 */
TEST(spool_reader_dry_run_takes_the_time_unit_from_meta_in_its_block)
{
	static const struct { uint64_t unit, duration; int open; } cases[] = {
		{ 1, 1ull << 63, 0 },
		{ 2, 1ull << 63, -EBADMSG },
		{ 1000, 1ull << 55, -EBADMSG },
	};
	struct spool_image img;
	struct image_record *r;
	struct record_field f;
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	size_t c, block, len;
	uint8_t *out;
	int n;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct membuf mb = { 0 };

		write_offcpu(&mb, cases[c].unit);
		CHECK_INT(spool_image_parse(&img, mb.p, mb.len, 0), ==, 0);
		CHECK_INT(img.nblocks, ==, 4);
		/* every record in META's block: none is applied before the block is checked */
		while (img.nblocks > 1) {
			struct image_block *b = &img.blocks[1];

			CHECK(image_block_insert(&img.blocks[0], img.blocks[0].nrecs));
			CHECK_INT(image_record_copy(&img.blocks[0].recs[img.blocks[0].nrecs - 1],
						    &b->recs[0]), ==, 0);
			image_block_remove(b, 0);
			if (!b->nrecs)
				spool_image_remove(&img, 1);
		}
		CHECK(r = find_record(&img, SPOOL_TAG_OFFCPU, &block));
		CHECK(image_record_field(r, "duration", &f));
		CHECK_INT(image_record_set(r, &f, cases[c].duration), ==, 0);
		CHECK_INT(spool_image_build(&img, &out, &len), ==, 0);
		spool_image_release(&img);
		CHECK_INT(open_bytes(out, len, &sp), ==, cases[c].open);
		if (cases[c].open < 0) {
			CHECK(strstr(prof_errmsg(), "is corrupt: block 1 at offset 16: record at byte"));
			CHECK(strstr(prof_errmsg(), ": off-CPU duration out of range"));
		} else {
			for (n = 0; prof_spool_next(sp, &ev) > 0; n++)
				if (ev.type == PROF_RECORD_OFFCPU)
					CHECK(ev.offcpu->duration_ns == cases[c].duration);
			CHECK_INT(n, >, 12);
			prof_spool_close(sp);
		}
		free(out);
		free(mb.p);
	}
}

/* A spool taken apart and put back together unchanged is the same bytes. */
TEST(spool_image_rebuilds_what_it_parsed)
{
	struct membuf mb = { 0 };
	struct spool_image img;
	uint8_t *out;
	size_t len;

	write_rich(&mb, 200, true);
	CHECK_INT(spool_image_parse(&img, mb.p, mb.len, 0), ==, 0);
	/* META stored raw (deflate would not shrink it), the others deflated by column */
	CHECK_INT(img.nblocks, ==, 4);
	CHECK_INT(img.blocks[0].encoding, ==, SPOOL_ENC_RAW);
	CHECK_INT(img.blocks[3].encoding, ==, SPOOL_ENC_COLUMNS);
	CHECK_INT(img.tail_len, ==, 0);
	CHECK_INT(spool_image_build(&img, &out, &len), ==, 0);
	spool_image_release(&img);
	CHECK_INT(len, ==, mb.len);
	CHECK(!memcmp(out, mb.p, len));
	free(out);
	free(mb.p);
}

TEST(spool_varint_limits)
{
	uint8_t buf[16];
	const uint8_t *p;
	uint64_t v;
	size_t n;

	n = spool_put_uvarint(buf, UINT64_MAX);
	CHECK_INT(n, ==, 10);
	p = buf;
	CHECK(spool_get_uvarint(&p, buf + n, &v));
	CHECK(v == UINT64_MAX);
	p = buf;
	CHECK(!spool_get_uvarint(&p, buf + n - 1, &v));	/* truncated */
	buf[9] = 0x02;	/* 65th bit set */
	p = buf;
	CHECK(!spool_get_uvarint(&p, buf + n, &v));
	memset(buf, 0x80, 11);
	buf[11] = 0;
	p = buf;
	CHECK(!spool_get_uvarint(&p, buf + 12, &v));	/* overlong */
	CHECK_INT(spool_unzigzag(spool_zigzag(INT64_MIN)), ==, INT64_MIN);
	CHECK_INT(spool_unzigzag(spool_zigzag(-1)), ==, -1);
	CHECK_INT(spool_zigzag(-1), ==, 1);
}

/*
 * 100,000 samples over 50 stacks, with the timer jitter of a real
 * recording (a few microseconds), 4 threads on 2 CPUs: under 4 bytes a
 * sample, definitions included.
 */
TEST(spool_size_per_sample)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	uint64_t rnd = 1, t;
	uint32_t leaves[50], threads[4], frames[16];
	int64_t p, m, id;
	size_t i, k;

	test_meta(&meta);
	meta.time_unit_ns = 0;	/* the default resolution */
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, NULL, &w), ==, 0);
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1, .comm = "app"));
	m = prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = (uint32_t)p,
							    .start = 0x400000, .end = 0x500000,
							    .path = "/usr/bin/app"));
	for (i = 0; i < 4; i++)
		threads[i] = (uint32_t)prof_spool_writer_add_thread(
			w, &PROF_INIT(prof_thread, .process = (uint32_t)p, .tid = (int32_t)i + 1));
	for (i = 0; i < 50; i++) {
		for (k = 0; k < 16; k++) {
			id = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame,
				.kind = PROF_FRAME_USER, .ref = (uint32_t)m,
				.addr = k < 8 ? 0x1000 + k * 64 : 0x9000 + i * 512 + k * 8));
			CHECK(id > 0);
			frames[15 - k] = (uint32_t)id;
		}
		id = prof_spool_writer_intern_frames(w, frames, 16);
		CHECK(id > 0);
		leaves[i] = (uint32_t)id;
	}
	t = meta.mono_start_ns;
	for (i = 0; i < 100000; i++) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		t += 1001001 / 2 + (rnd >> 40) % 6000;
		k = (size_t)((rnd >> 20) % 50 * ((rnd >> 30) % 50) / 50);
		CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample,
				  .time_ns = t, .thread = threads[(rnd >> 50) % 4],
				  .stack = leaves[k], .period = 1001001,
				  .cpu = (uint32_t)(rnd >> 60) % 2)), ==, 0);
	}
	CHECK_INT(prof_spool_writer_finish(w, &PROF_INIT(prof_counters, .samples = 100000)), ==, 0);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);
	printf("  spool_size_per_sample: %zu bytes, %.2f bytes/sample\n", mb.len,
	       (double)mb.len / 100000.0);
	CHECK((double)mb.len / 100000.0 < 4.0);
	free(mb.p);
}
