/* SPDX-License-Identifier: MIT */
/*
 * test-perf-sample.c - the parser of perf's records on synthetic ones,
 * laid out here by hand in the kernel's documented order (an independent
 * writer, not the parser run backwards): every layout the recorder's
 * attributes make, fields that move with sample_type, every short prefix
 * of a record and each malformed field refused; the stack copy trimmed;
 * the sample_id trailer.  Then a recorder without perf events, fed such
 * records through a ring in plain memory: the malformed ones are counted
 * and said at the end, never dropped silently, and never taken for others.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "record/perf_ring.h"
#include "record/perf_sample.h"
#include "record/recorder.h"
#include "spool_test.h"

/* ---- a record writer of our own ---- */

struct rb {
	_Alignas(8) uint8_t b[16384];	/* a record is 8-byte aligned, as in the kernel's ring */
	size_t n;
};

static void put(struct rb *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put_u64(struct rb *r, uint64_t v)
{
	put(r, &v, 8);
}

static void put_u32s(struct rb *r, uint32_t a, uint32_t b)
{
	uint32_t v[2] = { a, b };

	put(r, v, 8);
}

static void begin(struct rb *r)
{
	r->n = sizeof(struct perf_event_header);
}

static const struct perf_event_header *finish(struct rb *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)r->n };

	memcpy(r->b, &h, sizeof(h));
	return (const void *)r->b;
}

/* What a synthetic sample holds. */
struct fake {
	uint64_t id, ip, time, addr, stream_id, period;
	uint32_t pid, tid, cpu;
	size_t nchain;
	uint64_t chain[4];
	uint32_t raw;			/* RAW: bytes (4 + raw a multiple of 8) */
	uint64_t abi;
	uint64_t regs[SAMPLE_REGS_COUNT];
	uint64_t stack_size, dyn;
};

static struct fake some_sample(void)
{
	struct fake f = {
		.id = 0x1d, .ip = 0x401234, .time = 123456789, .addr = 0xadd,
		.stream_id = 0x5e, .period = 1001001, .pid = 4242, .tid = 4243, .cpu = 3,
		.nchain = 4, .chain = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ull,
					0xffffffff81000020ull, (uint64_t)PERF_CONTEXT_USER },
		.raw = 12, .abi = PERF_SAMPLE_REGS_ABI_64, .stack_size = 4096, .dyn = 200,
	};
	size_t i;

	for (i = 0; i < SAMPLE_REGS_COUNT; i++)
		f.regs[i] = 0x1000 + i;
	f.regs[SAMPLE_REG_IP] = f.ip;
	f.regs[SAMPLE_REG_SP] = 0x7ffc0000;
	return f;
}

/* Sample F as the kernel writes it for SAMPLE_TYPE, in the order of perf_event.h. */
static const struct perf_event_header *make_sample(struct rb *r, uint64_t t, const struct fake *f)
{
	size_t i;

	begin(r);
	if (t & PERF_SAMPLE_IDENTIFIER)
		put_u64(r, f->id);
	if (t & PERF_SAMPLE_IP)
		put_u64(r, f->ip);
	if (t & PERF_SAMPLE_TID)
		put_u32s(r, f->pid, f->tid);
	if (t & PERF_SAMPLE_TIME)
		put_u64(r, f->time);
	if (t & PERF_SAMPLE_ADDR)
		put_u64(r, f->addr);
	if (t & PERF_SAMPLE_ID)
		put_u64(r, f->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		put_u64(r, f->stream_id);
	if (t & PERF_SAMPLE_CPU)
		put_u32s(r, f->cpu, 0);
	if (t & PERF_SAMPLE_PERIOD)
		put_u64(r, f->period);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		put_u64(r, f->nchain);
		put(r, f->chain, f->nchain * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		put(r, &f->raw, 4);
		memset(r->b + r->n, 0xee, f->raw);
		r->n += f->raw;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		put_u64(r, f->abi);
		if (f->abi != PERF_SAMPLE_REGS_ABI_NONE)
			put(r, f->regs, sizeof(f->regs));
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		put_u64(r, f->stack_size);
		for (i = 0; i < f->stack_size; i++)
			r->b[r->n + i] = (uint8_t)(i < f->dyn ? i * 7 : 0xcc);
		r->n += f->stack_size;
		if (f->stack_size)
			put_u64(r, f->dyn);
	}
	return finish(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

/* The layouts of the recorder's events: sampling or switch, with kernel frames or not. */
static void recorder_layout(bool kernel, bool sw, struct perf_sample_layout *l, int *ret)
{
	struct perf_event_attr a;

	rec_fill_attr(&a, PROF_EVENT_CPU_CLOCK, 999, 65528, true, false, kernel, 1 << 20, sw,
		      sw);
	*ret = perf_sample_layout_of(&a, l);
}

static void check_parsed(const struct perf_sample *s, const struct fake *f, uint64_t t)
{
	size_t i;

	CHECK_INT(s->ip, ==, f->ip);
	CHECK_INT(s->pid, ==, f->pid);
	CHECK_INT(s->tid, ==, f->tid);
	CHECK_INT(s->time, ==, f->time);
	CHECK_INT(s->cpu, ==, f->cpu);
	CHECK_INT(s->period, ==, f->period);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		CHECK_INT(s->nchain, ==, f->nchain);
		CHECK(!memcmp(s->chain, f->chain, f->nchain * 8));
	} else {
		CHECK_INT(s->nchain, ==, 0);
		CHECK(s->chain == NULL);
	}
	CHECK_INT(s->regs_abi, ==, f->abi);
	CHECK(s->regs);
	for (i = 0; i < SAMPLE_REGS_COUNT; i++)
		CHECK_INT(s->regs[i], ==, f->regs[i]);
	CHECK_INT(s->stack_size, ==, f->stack_size);
	CHECK_INT(s->stack_dyn, ==, f->dyn);
	CHECK(s->stack && s->stack[0] == 0 && s->stack[199] == (uint8_t)(199 * 7));
	CHECK(s->stack_size == 200 || s->stack[200] == 0xcc);
}

TEST(perf_sample_parses_every_layout_the_recorder_uses)
{
	static const bool combos[4][2] = { { false, false }, { true, false }, { false, true },
					   { true, true } };
	const uint64_t base = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			      PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_sample s;
	static struct rb r;
	uint64_t time;
	size_t k;
	int ret;

	for (k = 0; k < 4; k++) {
		bool kernel = combos[k][0], sw = combos[k][1];

		CHECK_CALL(recorder_layout(kernel, sw, &l, &ret));
		CHECK_INT(ret, ==, 0);
		/* the layout is the attributes': a switch sample is a CPU sample's twin */
		CHECK_INT(l.sample_type, ==, base | (kernel ? PERF_SAMPLE_CALLCHAIN : 0));
		CHECK(l.sample_id_all);
		CHECK_INT(perf_sample_parse(&l, make_sample(&r, l.sample_type, &f), &s), ==, 0);
		CHECK_CALL(check_parsed(&s, &f, l.sample_type));
		/* the drain's read of the time alone finds the same */
		time = 0;
		CHECK_INT(perf_sample_time(&l, (const void *)r.b, &time), ==, 0);
		CHECK_INT(time, ==, f.time);
	}
}

TEST(perf_sample_fields_move_with_sample_type)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_STREAM_ID |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			       PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = SAMPLE_REGS_MASK,
	};
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_sample s;
	static struct rb r;
	uint64_t time;

	CHECK_INT(perf_sample_layout_of(&a, &l), ==, 0);
	CHECK_INT(perf_sample_parse(&l, make_sample(&r, a.sample_type, &f), &s), ==, 0);
	CHECK_CALL(check_parsed(&s, &f, a.sample_type));
	CHECK_INT(s.id, ==, f.id);
	CHECK_INT(s.addr, ==, f.addr);
	CHECK_INT(s.stream_id, ==, f.stream_id);
	CHECK_INT(perf_sample_time(&l, (const void *)r.b, &time), ==, 0);
	CHECK_INT(time, ==, f.time);
	/* without a field, the ones after it move up; one not asked for reads 0 */
	a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_STACK_USER;
	CHECK_INT(perf_sample_layout_of(&a, &l), ==, 0);
	CHECK_INT(perf_sample_parse(&l, make_sample(&r, a.sample_type, &f), &s), ==, 0);
	CHECK_INT(s.time, ==, f.time);
	time = 0;
	CHECK_INT(perf_sample_time(&l, (const void *)r.b, &time), ==, 0);
	CHECK_INT(time, ==, f.time);
	CHECK_INT(s.ip, ==, 0);
	CHECK_INT(s.regs_abi, ==, PERF_SAMPLE_REGS_ABI_NONE);
	CHECK_INT(s.stack_off, ==, sizeof(struct perf_event_header) + 8);
	CHECK_INT(s.stack_dyn, ==, f.dyn);
	/* what the parser does not read, it refuses to guess */
	a.sample_type |= PERF_SAMPLE_READ;
	CHECK_INT(perf_sample_layout_of(&a, &l), ==, -ENOTSUP);
	a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	CHECK_INT(perf_sample_layout_of(&a, &l), ==, -ENOTSUP);
	a.sample_type = PERF_SAMPLE_WEIGHT;
	CHECK_INT(perf_sample_layout_of(&a, &l), ==, -ENOTSUP);
	a.sample_type = PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = 0xff;
	CHECK_INT(perf_sample_layout_of(&a, &l), ==, -ENOTSUP);
}

TEST(perf_sample_without_registers_or_stack)
{
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_sample s;
	static struct rb r;
	int ret;

	CHECK_CALL(recorder_layout(false, false, &l, &ret));
	/* a kernel thread: no user registers, no stack copied (no dyn_size either) */
	f.abi = PERF_SAMPLE_REGS_ABI_NONE;
	f.stack_size = 0;
	CHECK_INT(perf_sample_parse(&l, make_sample(&r, l.sample_type, &f), &s), ==, 0);
	CHECK_INT(r.n, ==, sizeof(struct perf_event_header) + 5 * 8 + 8 + 8);
	CHECK_INT(s.regs_abi, ==, PERF_SAMPLE_REGS_ABI_NONE);
	CHECK(s.regs == NULL);
	CHECK(s.stack == NULL);
	CHECK_INT(s.stack_size, ==, 0);
	CHECK_INT(s.stack_dyn, ==, 0);
	CHECK_INT(s.ip, ==, f.ip);
}

TEST(perf_sample_refuses_every_short_prefix_and_each_malformed_field)
{
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_sample s;
	static struct rb r;
	size_t full, n;
	int ret, kernel;

	for (kernel = 0; kernel < 2; kernel++) {
		CHECK_CALL(recorder_layout(kernel, false, &l, &ret));
		make_sample(&r, l.sample_type, &f);
		full = r.n;
		for (n = 0; n < full; n++) {
			struct perf_event_header *h = (void *)r.b;
			uint64_t time;

			h->size = (uint16_t)n;
			CHECK_INT(perf_sample_parse(&l, h, &s), ==, -EBADMSG);
			/* the time alone: header, ip, pid and tid, then its 8 bytes */
			CHECK_INT(perf_sample_time(&l, h, &time), ==,
				  (n < sizeof(*h) + 3 * 8 ? -EBADMSG : 0));
		}
	}
	CHECK_CALL(recorder_layout(true, false, &l, &ret));
	/* a callchain longer than the record */
	f.nchain = 4;
	make_sample(&r, l.sample_type, &f);
	memcpy(r.b + sizeof(struct perf_event_header) + 40, &(uint64_t){ 2000 }, 8);
	CHECK_INT(perf_sample_parse(&l, (void *)r.b, &s), ==, -EBADMSG);
	/* a register ABI the kernel does not write */
	f.abi = 3;
	CHECK_INT(perf_sample_parse(&l, make_sample(&r, l.sample_type, &f), &s), ==, -EBADMSG);
	/* more stack than was copied */
	f.abi = PERF_SAMPLE_REGS_ABI_64;
	f.dyn = f.stack_size + 8;
	CHECK_INT(perf_sample_parse(&l, make_sample(&r, l.sample_type, &f), &s), ==, -EBADMSG);
	/* not a sample at all */
	f.dyn = 200;
	make_sample(&r, l.sample_type, &f);
	((struct perf_event_header *)r.b)->type = PERF_RECORD_MMAP2;
	CHECK_INT(perf_sample_parse(&l, (void *)r.b, &s), ==, -EBADMSG);
	CHECK_INT(perf_sample_time(&l, (void *)r.b, &(uint64_t){ 0 }), ==, -EBADMSG);
	/* a record not where the kernel puts one: off its 8-byte alignment */
	make_sample(&r, l.sample_type, &f);
	memmove(r.b + 4, r.b, r.n);
	CHECK_INT(perf_sample_parse(&l, (void *)(r.b + 4), &s), ==, -EBADMSG);
	CHECK_INT(perf_sample_time(&l, (void *)(r.b + 4), &(uint64_t){ 0 }), ==, -EBADMSG);
}

TEST(perf_sample_trim_keeps_the_stack_it_holds)
{
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_sample s, t;
	static struct rb r;
	static _Alignas(8) uint8_t out[sizeof(r.b)];
	const struct perf_event_header *h;
	int ret;

	CHECK_CALL(recorder_layout(true, false, &l, &ret));
	h = make_sample(&r, l.sample_type, &f);
	CHECK_INT(perf_sample_parse(&l, h, &s), ==, 0);
	CHECK_INT(perf_sample_trimmed_size(h, &s), ==, h->size - (4096 - 200));
	perf_sample_trim(h, &s, out);
	CHECK_INT(((const struct perf_event_header *)out)->size, ==, h->size - (4096 - 200));
	CHECK_INT(perf_sample_parse(&l, (const void *)out, &t), ==, 0);
	f.stack_size = 200;	/* the copy is what it held */
	CHECK_CALL(check_parsed(&t, &f, l.sample_type));
	CHECK(!memcmp(t.stack, s.stack, 200));
	/* a copy that is all stack, or none, stays as it is */
	f.stack_size = f.dyn = 4096;
	h = make_sample(&r, l.sample_type, &f);
	CHECK_INT(perf_sample_parse(&l, h, &s), ==, 0);
	CHECK_INT(perf_sample_trimmed_size(h, &s), ==, h->size);
	f.stack_size = f.dyn = 0;
	h = make_sample(&r, l.sample_type, &f);
	CHECK_INT(perf_sample_parse(&l, h, &s), ==, 0);
	CHECK_INT(perf_sample_trimmed_size(h, &s), ==, h->size);
}

static bool stack_of(void *layout, const struct perf_event_header *h, size_t have,
		     size_t *data_off, uint64_t *size)
{
	return perf_sample_stack_span(layout, h, have, data_off, size) == 0;
}

/*
 * A sample that wraps the end of its ring is copied out whole but for the
 * part of its stack copy the kernel did not write: the same fields, the
 * same stack, and the copy's bytes past it never touched.  At each wrap
 * point: in the fields, in the stack, in the unwritten part, in the
 * trailing size.
 */
TEST(a_sample_that_wraps_its_ring_is_copied_without_the_unwritten_stack)
{
	enum { DATA = 8192 };
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_sample s, want;
	const struct perf_event_header *h, *in;
	static struct rb r;
	size_t first[] = { 16, 300, 500, 2000, 0 }, k, i, at;
	uint8_t *mem = aligned_alloc(4096, 4096 + DATA);
	int ret;

	CHECK_CALL(recorder_layout(false, false, &l, &ret));
	in = make_sample(&r, l.sample_type, &f);
	CHECK_INT(perf_sample_parse(&l, in, &want), ==, 0);
	first[4] = want.stack_off + 8 + want.stack_size + 4;	/* inside the size said after */
	for (k = 0; k < sizeof(first) / sizeof(first[0]); k++) {
		struct perf_event_mmap_page *meta = (void *)mem;
		uint64_t pos = 5 * DATA - first[k];	/* the ring has lapped */
		struct perf_ring ring = { .base = mem, .page_size = 4096, .data_size = DATA,
					  .stack_of = stack_of, .stack_arg = &l };

		memset(mem, 0, 4096 + DATA);
		for (i = 0; i < in->size; i++)
			mem[4096 + (pos + i) % DATA] = r.b[i];
		meta->data_tail = pos;
		meta->data_head = pos + in->size;
		ring.copy = malloc(in->size);
		ring.copy_cap = in->size;
		memset(ring.copy, 0x55, in->size);
		CHECK(perf_ring_begin(&ring));
		h = perf_ring_next(&ring);
		CHECK(h == (const void *)ring.copy);
		CHECK_INT(perf_sample_parse(&l, h, &s), ==, 0);
		CHECK_CALL(check_parsed(&s, &f, l.sample_type));
		CHECK(!memcmp(s.stack, want.stack, f.dyn));
		/* what the kernel did not write was not copied (but the first kilobyte) */
		at = want.stack_off + 8;
		for (i = at + f.dyn > 1024 ? at + f.dyn : 1024; i < at + f.stack_size; i++)
			CHECK_INT(ring.copy[i], ==, 0x55);
		CHECK(perf_ring_next(&ring) == NULL);
		free(ring.copy);
	}
	free(mem);
}

/* A side-band record: BODY, then the sample_id trailer of the recorder's layout. */
static const struct perf_event_header *make_side(struct rb *r, uint32_t type, uint16_t misc,
						 const void *body, size_t len, uint32_t pid,
						 uint32_t tid, uint64_t time, uint32_t cpu)
{
	begin(r);
	if (len)
		put(r, body, len);
	while (r->n % 8)
		r->b[r->n++] = 0;
	put_u32s(r, pid, tid);
	put_u64(r, time);
	put_u32s(r, cpu, 0);
	return finish(r, type, misc);
}

TEST(perf_sample_id_is_read_from_the_end_of_a_record)
{
	struct perf_sample_layout l;
	struct perf_sample_id id;
	struct perf_comm_body c = { 77, 78 };
	uint8_t body[16];
	static struct rb r;
	const struct perf_event_header *h;
	const uint8_t *p;
	size_t len;
	int ret;

	CHECK_CALL(recorder_layout(false, false, &l, &ret));
	memcpy(body, &c, 8);
	memcpy(body + 8, "ladder\0", 8);
	h = make_side(&r, PERF_RECORD_COMM, 0, body, sizeof(body), 77, 78, 555, 1);
	CHECK_INT(perf_sample_id_parse(&l, h, &id), ==, 0);
	CHECK_INT(id.pid, ==, 77);
	CHECK_INT(id.tid, ==, 78);
	CHECK_INT(id.time, ==, 555);
	CHECK_INT(id.cpu, ==, 1);
	p = perf_record_body(&l, h, &len);
	CHECK(p == (const uint8_t *)h + sizeof(*h));
	CHECK_INT(len, ==, 16);
	CHECK_STR((const char *)p + 8, "ladder");
	/* a switch record is its trailer alone */
	h = make_side(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, NULL, 0, 5, 6, 7, 2);
	CHECK_INT(perf_sample_id_parse(&l, h, &id), ==, 0);
	CHECK_INT(id.tid, ==, 6);
	CHECK_INT(id.cpu, ==, 2);
	CHECK(perf_record_body(&l, h, &len) && len == 0);
	/* shorter than its trailer; a sample has none */
	((struct perf_event_header *)r.b)->size = sizeof(*h) + 16;
	CHECK_INT(perf_sample_id_parse(&l, h, &id), ==, -EBADMSG);
	CHECK(perf_record_body(&l, h, &len) == NULL);
	((struct perf_event_header *)r.b)->type = PERF_RECORD_SAMPLE;
	CHECK_INT(perf_sample_id_parse(&l, h, &id), ==, -EBADMSG);
}

/* ---- a recorder without perf events, fed through a ring in memory ---- */

#define PAGE 4096
#define DATA 65536

struct feed {
	struct perf_ring ring;
	uint8_t *mem;
	uint64_t head;
};

static void feed_init(struct feed *fd)
{
	fd->mem = aligned_alloc(PAGE, PAGE + DATA);
	memset(fd->mem, 0, PAGE + DATA);
	memset(&fd->ring, 0, sizeof(fd->ring));
	fd->ring.base = fd->mem;
	fd->ring.page_size = PAGE;
	fd->ring.data_size = DATA;
	fd->ring.fd = -1;
	fd->head = 0;
}

static void feed(struct feed *fd, const struct perf_event_header *h)
{
	size_t i;

	for (i = 0; i < h->size; i++)
		fd->mem[PAGE + (fd->head + i) % DATA] = ((const uint8_t *)h)[i];
	fd->head += h->size;
	((struct perf_event_mmap_page *)fd->mem)->data_head = fd->head;
}

static char logged[512];

static void keep_warning(enum prof_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PROF_LOG_WARN && strstr(msg, "malformed"))
		snprintf(logged, sizeof(logged), "%s", msg);
}

/* The parts of a recorder its records need, made as recorder_new() makes them. */
static struct prof_recorder *offline_recorder(struct membuf *mb, struct feed *fd)
{
	struct prof_recorder *rec = calloc(1, sizeof(*rec));
	struct prof_sink sink = membuf_sink(mb);
	PROF_OPTS(prof_meta, m);

	if (!rec)
		return NULL;
	rec->epfd = -1;
	rec->file.fd = -1;
	sorter_init(&rec->sorter);
	pt_init(&rec->pt, NULL);
	test_meta(&m);
	if (unwinder_init(&rec->uw) < 0 || capture_init(&rec->capture) < 0 ||
	    prof_spool_writer_open_sink(&sink, &m, NULL, &rec->w) < 0) {
		prof_recorder_free(rec);
		return NULL;
	}
	pt_set_writer(&rec->pt, rec->w);
	rec->pt.spaces = &rec->uw.spaces;
	offcpu_init(&rec->offcpu, rec->w);
	rec->rings = &fd->ring;
	rec->ncpus = rec->nrings = 1;
	return rec;
}

/*
 * Malformed records among good ones, through a ring that copies each
 * record out (HOLD false) or holds samples in place (HOLD true: the drain
 * reads a held sample's time alone, its unwinding parses the rest): the
 * same counts either way.
 */
static void feed_malformed(bool hold)
{
	PROF_OPTS(prof_recording_summary, sum);
	struct membuf mb = { 0 };
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_mmap2_body mm = { 0 };
	struct perf_lost_body lost = { 1, 5 };
	static struct rb r;
	struct prof_recorder *rec;
	struct feed fd;
	int ret;

	CHECK_CALL(recorder_layout(false, false, &l, &ret));
	feed_init(&fd);
	if (hold) {
		fd.ring.held = calloc(PERF_RING_HOLD_MAX, sizeof(*fd.ring.held));
		CHECK(fd.ring.held);
		fd.ring.wakeup = DATA;	/* all of it may be held */
	}
	rec = offline_recorder(&mb, &fd);
	CHECK(rec);
	rec->layout = l;
	/* the idle task: delivered, nothing to write */
	f.pid = f.tid = 0;
	f.time = 10;
	feed(&fd, make_sample(&r, l.sample_type, &f));
	/* cut short in its registers */
	f.time = 20;
	make_sample(&r, l.sample_type, &f);
	r.n = sizeof(struct perf_event_header) + 5 * 8 + 8 + 3 * 8;
	feed(&fd, finish(&r, PERF_RECORD_SAMPLE, 0));
	/* a register ABI no kernel writes */
	f.abi = 9;
	f.time = 30;
	feed(&fd, make_sample(&r, l.sample_type, &f));
	/* this process, without registers: a sample written, its stack "no registers" */
	f.abi = PERF_SAMPLE_REGS_ABI_NONE;
	f.pid = f.tid = (uint32_t)getpid();
	f.time = 40;
	feed(&fd, make_sample(&r, l.sample_type, &f));
	/* an mmap2 record too short for its fields, and one shorter than its trailer */
	feed(&fd, make_side(&r, PERF_RECORD_MMAP2, 0, &mm, 40, 1, 1, 50, 0));
	begin(&r);
	put_u64(&r, 0);
	feed(&fd, finish(&r, PERF_RECORD_EXIT, 0));
	/* a loss, well formed: counted as one */
	feed(&fd, make_side(&r, PERF_RECORD_LOST, 0, &lost, sizeof(lost), 1, 1, 60, 0));
	CHECK_INT(rec_drain_rings(rec), ==, 0);
	/* held: the four samples wait in the ring, unparsed */
	CHECK_INT(fd.ring.held_n, ==, (hold ? 4 : 0));
	CHECK_INT(rec_process_until(rec, UINT64_MAX), ==, 0);
	CHECK_INT(fd.ring.held_n, ==, 0);
	/* no ring to give back: the recorder's close must not touch the one in memory */
	rec->rings = NULL;
	rec->nrings = 0;
	CHECK_INT(rec->malformed_records, ==, 4);
	/* the first found: a held sample is parsed after the drain met the short exit */
	CHECK_INT(rec->malformed_type, ==, (hold ? PERF_RECORD_EXIT : PERF_RECORD_SAMPLE));
	CHECK_INT(rec->sum.sample_events, ==, 4);
	CHECK_INT(rec->sum.samples, ==, 1);
	CHECK_INT(rec->sum.unwind_errors[PROF_UNWIND_NO_REGS], ==, 1);
	CHECK_INT(rec->sum.lost_events, ==, 5);
	prof_set_log_fn(keep_warning, PROF_LOG_WARN, NULL);
	ret = prof_recorder_close(rec, &sum);
	prof_set_log_fn(NULL, PROF_LOG_WARN, NULL);
	free(fd.ring.held);
	free(fd.mem);
	free(mb.p);
	CHECK_INT(ret, ==, 0);
	CHECK_INT(sum.sample_events, ==, 4);
	CHECK_INT(sum.samples, ==, 1);
	if (hold)
		CHECK_STR(logged, "4 perf records were too short or malformed for their fields, "
				  "and were skipped (the first: type 4, 16 bytes)");
	else
		CHECK_STR(logged, "4 perf records were too short or malformed for their fields, "
				  "and were skipped (the first: type 9, 80 bytes)");
}

TEST(recorder_counts_malformed_records_and_skips_them)
{
	CHECK_CALL(feed_malformed(false));
}

TEST(recorder_counts_malformed_samples_held_in_their_ring)
{
	CHECK_CALL(feed_malformed(true));
}

/* A COMM record of PID for its exec at TIME, named NAME (< 16 bytes). */
static const struct perf_event_header *make_exec(struct rb *r, uint32_t pid, const char *name,
						 uint64_t time)
{
	struct perf_comm_body c = { pid, pid };
	uint8_t body[24] = { 0 };

	memcpy(body, &c, sizeof(c));
	memcpy(body + sizeof(c), name, strlen(name));
	return make_side(r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, sizeof(body), pid,
			 pid, time, 0);
}

/*
 * An exec's executable is the first file its new image maps, as the
 * mmap record that follows the comm record says (not /proc/PID/exe, read
 * late); with a sample of the process before any mapping, /proc says it.
 */
TEST(recorder_names_an_exec_by_the_first_file_it_maps)
{
	PROF_OPTS(prof_recording_summary, sum);
	struct membuf mb = { 0 };
	struct fake f = some_sample();
	struct perf_sample_layout l;
	struct perf_mmap2_body mm = { 0 };
	static const char path[] = "/nonexistent/bin/second\0\0\0\0\0\0\0\0";
	uint32_t pid = (uint32_t)getpid();
	uint8_t body[sizeof(mm) + sizeof(path)];
	char self[PATH_MAX] = "";
	struct prof_record ev = { .sz = sizeof(ev) };
	struct prof_spool *sp;
	static struct rb r;
	struct prof_recorder *rec;
	struct feed fd;
	int ret, n = 0;
	ssize_t len;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(len > 0);
	self[len] = '\0';
	CHECK_CALL(recorder_layout(false, false, &l, &ret));
	feed_init(&fd);
	rec = offline_recorder(&mb, &fd);
	CHECK(rec);
	rec->layout = l;
	/* first sight of the process: /proc names it */
	feed(&fd, make_exec(&r, pid, "first", 10));
	/* an exec, then its program's mapping */
	feed(&fd, make_exec(&r, pid, "second", 20));
	mm.pid = mm.tid = pid;
	mm.addr = 0x400000;
	mm.len = 0x1000;
	memcpy(body, &mm, sizeof(mm));
	memcpy(body + sizeof(mm), path, sizeof(path));
	feed(&fd, make_side(&r, PERF_RECORD_MMAP2, 0, body, sizeof(body), pid, pid, 30, 0));
	/* an exec, then a sample before any mapping */
	feed(&fd, make_exec(&r, pid, "third", 40));
	f.abi = PERF_SAMPLE_REGS_ABI_NONE;
	f.pid = f.tid = pid;
	f.time = 50;
	feed(&fd, make_sample(&r, l.sample_type, &f));
	CHECK_INT(rec_drain_rings(rec), ==, 0);
	CHECK_INT(rec_process_until(rec, UINT64_MAX), ==, 0);
	rec->rings = NULL;
	rec->nrings = 0;
	ret = prof_recorder_close(rec, &sum);
	free(fd.mem);
	CHECK_INT(ret, ==, 0);
	CHECK_INT(open_bytes(mb.p, mb.len, &sp), ==, 0);
	while (prof_spool_next(sp, &ev) == 1) {
		if (ev.type != PROF_RECORD_EXEC)
			continue;
		if (n == 0) {
			CHECK_STR(ev.process->comm, "second");
			CHECK_STR(ev.process->exe, "/nonexistent/bin/second");
		} else {
			CHECK_STR(ev.process->comm, "third");
			CHECK_STR(ev.process->exe, self);
		}
		n++;
	}
	prof_spool_close(sp);
	free(mb.p);
	CHECK_INT(n, ==, 2);
}
