/* SPDX-License-Identifier: MIT */
/*
 * test-spool-v3.c - what version 3 of the spool stores as distances reads
 * back as the values written: frames of every kind and their addresses
 * (kernel ones inverted), stack nodes held back and written after their
 * frames, samples counted back from the newest node, symbol starts and
 * the names given once and referred to after.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "prof.h"
#include "spool_test.h"

#define NFRAMES 40

struct got {
	struct prof_frame frames[NFRAMES + 1];
	struct prof_stack_node stacks[64];
	uint32_t sample_stacks[16];
	struct prof_symbol symbols[8];
	char names[8][32];
	uint32_t nframes, nstacks, nsamples, nsymbols;
	int major_byte;
};

static void read_back(const struct membuf *mb, struct got *g)
{
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	int r;

	memset(g, 0, sizeof(*g));
	g->major_byte = mb->p[8];
	if (open_bytes(mb->p, mb->len, &sp) < 0)
		abort();
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		switch (ev.type) {
		case PROF_RECORD_FRAME:
			if (ev.id != ++g->nframes || ev.id > NFRAMES)
				abort();
			g->frames[ev.id] = *ev.frame;
			break;
		case PROF_RECORD_STACK:
			if (ev.id != ++g->nstacks || ev.id >= 64)
				abort();
			g->stacks[ev.id] = *ev.stack;
			break;
		case PROF_RECORD_SAMPLE:
			g->sample_stacks[g->nsamples++] = ev.sample->stack;
			break;
		case PROF_RECORD_SYMBOL:
			g->symbols[g->nsymbols] = *ev.symbol;
			snprintf(g->names[g->nsymbols], sizeof(g->names[0]), "%s", ev.symbol->name);
			g->symbols[g->nsymbols].name = NULL;
			g->nsymbols++;
			break;
		default:
			break;
		}
	}
	if (r < 0)
		abort();
	prof_spool_close(sp);
}

static size_t count_in(const struct membuf *mb, const char *s)
{
	size_t n = 0, k = strlen(s);
	const uint8_t *p = mb->p, *end = mb->p + mb->len;

	while ((p = memmem(p, (size_t)(end - p), s, k))) {
		n++;
		p += k;
	}
	return n;
}

TEST(spool_v3_distances_read_back_as_the_values_written)
{
	struct membuf mb = { 0 };
	struct prof_sink sink = membuf_sink(&mb);
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta);
	PROF_OPTS(prof_spool_writer_opts, o);
	static const uint64_t addrs[] = { 0x1234, 0x1000, 0x7ffff000, 0x10, 0x5235 };
	uint32_t frames[NFRAMES], ids[NFRAMES], p, t, m1, m2;
	int64_t id, s1, s2, s3;
	struct got g;
	size_t i, nf = 0;

	test_meta(&meta);
	o.no_compress = true;	/* so that the names can be counted in the bytes */
	o.block_bytes = 256;	/* frames and nodes held back across blocks */
	CHECK_INT(prof_spool_writer_open_sink(&sink, &meta, &o, &w), ==, 0);
	p = (uint32_t)prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 1));
	t = (uint32_t)prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = p, .tid = 1));
	m1 = (uint32_t)prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p,
					.start = 0x1000, .end = 0x9000, .path = "a"));
	m2 = (uint32_t)prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = p,
					.start = 0x9000, .end = 0xa000, .path = "b"));
	/* kinds and references mixed, addresses up and down, the kernel's at the top */
	for (i = 0; i < 30; i++) {
		struct prof_frame f = { .sz = sizeof(f), .kind = PROF_FRAME_USER,
					.ref = i % 3 ? m1 : m2, .addr = addrs[i % 5] + i };

		if (i % 7 == 3)
			f = (struct prof_frame){ .sz = sizeof(f), .kind = PROF_FRAME_KERNEL,
						 .addr = 0xffffffff81000000u + i * 0x1000 };
		if (i % 11 == 5)
			f = (struct prof_frame){ .sz = sizeof(f), .kind = PROF_FRAME_ANON, .ref = p,
						 .addr = 0x7f0000000000u - i };
		if (i == 29)
			f = (struct prof_frame){ .sz = sizeof(f), .kind = PROF_FRAME_TRUNCATED,
						 .addr = 2 };
		id = prof_spool_writer_intern_frame(w, &f);
		CHECK_INT(id, ==, (int64_t)i + 1);
		frames[nf] = (uint32_t)id;
		ids[nf++] = (uint32_t)id;
	}
	/* a walk, one sharing its callers, one of old frames only */
	s1 = prof_spool_writer_intern_frames(w, frames, 10);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .thread = t,
			.stack = (uint32_t)s1, .period = 1000)), ==, 0);
	frames[0] = ids[20];
	s2 = prof_spool_writer_intern_frames(w, frames, 10);
	s3 = prof_spool_writer_intern_frames(w, ids + 25, 5);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .thread = t,
			.stack = (uint32_t)s2, .period = 1000)), ==, 0);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .thread = t,
			.stack = (uint32_t)s3, .period = 1000)), ==, 0);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .thread = t,
			.stack = (uint32_t)s1, .period = 1000)), ==, 0);
	CHECK_INT(prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample, .thread = t,
			.stack = 0, .period = 1000)), ==, 0);
	/* the same name in two modules, a scope between, starts down and up */
	CHECK_INT(prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_MODULE,
			.scope_id = m1, .start = 0x1200, .size = 0x40, .name = "a_shared_name")), ==, 0);
	CHECK_INT(prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_MODULE,
			.scope_id = m1, .start = 0x1000, .size = 0x10, .name = "first")), ==, 0);
	CHECK_INT(prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_KERNEL,
			.start = 0xffffffff81000000u, .size = 0x100, .name = "first")), ==, 0);
	CHECK_INT(prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_MODULE,
			.scope_id = m2, .start = 0x1200, .size = 0x40, .name = "a_shared_name")), ==, 0);
	CHECK_INT(prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_MODULE,
			.scope_id = m2, .start = 0x1300, .size = 0x8, .name = "")), ==, 0);
	CHECK_INT(prof_spool_writer_close(w), ==, 0);

	read_back(&mb, &g);
	CHECK_INT(g.major_byte, ==, 4);
	CHECK_INT(g.nframes, ==, 30);
	for (i = 0; i < 30; i++) {
		struct prof_frame f = { .kind = PROF_FRAME_USER, .ref = i % 3 ? m1 : m2,
					.addr = addrs[i % 5] + i };

		if (i % 7 == 3)
			f = (struct prof_frame){ .kind = PROF_FRAME_KERNEL,
						 .addr = 0xffffffff81000000u + i * 0x1000 };
		if (i % 11 == 5)
			f = (struct prof_frame){ .kind = PROF_FRAME_ANON, .ref = p,
						 .addr = 0x7f0000000000u - i };
		if (i == 29)
			f = (struct prof_frame){ .kind = PROF_FRAME_TRUNCATED, .addr = 2 };
		CHECK_INT(g.frames[i + 1].kind, ==, f.kind);
		CHECK_INT(g.frames[i + 1].ref, ==, f.ref);
		CHECK_INT((long long)g.frames[i + 1].addr, ==, (long long)f.addr);
	}
	/* 10 nodes, 1 more for the changed leaf, 5 of the third walk */
	CHECK_INT(g.nstacks, ==, 16);
	CHECK_INT(s3, ==, 16);
	for (i = 1; i <= 10; i++) {
		CHECK_INT(g.stacks[i].parent, ==, i - 1);
		CHECK_INT(g.stacks[i].frame, ==, ids[10 - i]);
	}
	CHECK_INT(g.stacks[11].parent, ==, 9);
	CHECK_INT(g.stacks[11].frame, ==, ids[20]);
	CHECK_INT(g.stacks[12].parent, ==, 0);
	CHECK_INT(g.stacks[12].frame, ==, ids[29]);
	CHECK_INT(g.stacks[16].parent, ==, 15);
	CHECK_INT(g.stacks[16].frame, ==, ids[25]);
	CHECK_INT(g.nsamples, ==, 5);
	CHECK_INT(g.sample_stacks[0], ==, s1);
	CHECK_INT(g.sample_stacks[1], ==, s2);
	CHECK_INT(g.sample_stacks[2], ==, s3);
	CHECK_INT(g.sample_stacks[3], ==, s1);
	CHECK_INT(g.sample_stacks[4], ==, 0);
	CHECK_INT(g.nsymbols, ==, 5);
	CHECK_STR(g.names[0], "a_shared_name");
	CHECK_INT((long long)g.symbols[0].start, ==, 0x1200);
	CHECK_STR(g.names[1], "first");
	CHECK_INT((long long)g.symbols[1].start, ==, 0x1000);
	CHECK_STR(g.names[2], "first");
	CHECK_INT((long long)g.symbols[2].start, ==, (long long)0xffffffff81000000u);
	CHECK_INT(g.symbols[3].scope_id, ==, m2);
	CHECK_STR(g.names[3], "a_shared_name");
	CHECK_INT((long long)g.symbols[3].start, ==, 0x1200);
	CHECK_INT((long long)g.symbols[3].size, ==, 0x40);
	CHECK_STR(g.names[4], "");
	CHECK_INT((long long)g.symbols[4].start, ==, 0x1300);
	/* a name given once, referred to by number after */
	CHECK_INT(count_in(&mb, "a_shared_name"), ==, 1);
	CHECK_INT(count_in(&mb, "first"), ==, 1);
	free(mb.p);
}
