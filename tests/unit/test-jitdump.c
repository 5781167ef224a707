/* SPDX-License-Identifier: MIT */
/*
 * test-jitdump.c - a JIT's jitdump read as the writers write it (loads,
 * a move, a record still being written), and read without harm when it
 * is cut anywhere or damaged anywhere: the target writes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "record/jitdump.h"
#include "unwind/cfi_program.h"

struct buf {
	unsigned char b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, sizeof(v));
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

static void header(struct buf *b)
{
	put32(b, 0x4A695444);	/* magic */
	put32(b, 1);		/* version */
	put32(b, 40);		/* its size */
	put32(b, 62);		/* EM_X86_64 */
	put32(b, 0);
	put32(b, 1234);		/* pid */
	put64(b, 1);		/* timestamp */
	put64(b, 0);		/* flags */
}

static void load(struct buf *b, uint64_t addr, uint64_t size, const char *name)
{
	size_t len = strlen(name) + 1;

	put32(b, 0);		/* JIT_CODE_LOAD */
	put32(b, (uint32_t)(56 + len + size));
	put64(b, 2);
	put32(b, 1234);
	put32(b, 1234);
	put64(b, addr);		/* vma */
	put64(b, addr);		/* code_addr */
	put64(b, size);
	put64(b, 7);		/* code_index */
	put(b, name, len);
	memset(b->b + b->n, 0xcc, size);	/* the code */
	b->n += size;
}

static void move(struct buf *b, uint64_t from, uint64_t to, uint64_t size)
{
	put32(b, 1);		/* JIT_CODE_MOVE */
	put32(b, 64);
	put64(b, 3);
	put32(b, 1234);
	put32(b, 1234);
	put64(b, to);		/* vma */
	put64(b, from);
	put64(b, to);
	put64(b, size);
	put64(b, 7);
}

static int read_image(const char *path, const void *p, size_t n, struct jit_sym **v, size_t *nv)
{
	FILE *f = fopen(path, "w");
	size_t cap = 0;

	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		return -1;
	*v = NULL;
	*nv = 0;
	return jitdump_read(path, v, nv, &cap);
}

static void free_syms(struct jit_sym *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static char *tmp_path(void)
{
	static char path[] = "/tmp/prof-test-jit-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		close(fd);
	return path;
}

TEST(jitdump_marker_names)
{
	CHECK(jitdump_is_marker("/tmp/jit-1234.dump"));
	CHECK(jitdump_is_marker("jit-7.dump"));
	CHECK(!jitdump_is_marker("/tmp/jit-.dump"));
	CHECK(!jitdump_is_marker("/tmp/jit-12x.dump"));
	CHECK(!jitdump_is_marker("/tmp/jit-12.dump.old"));
	CHECK(!jitdump_is_marker("/usr/lib/libjit.so"));
}

TEST(jitdump_loads_moves_and_a_record_still_being_written)
{
	struct buf b = { .n = 0 };
	struct jit_sym *v;
	char *path = tmp_path();
	size_t n;

	header(&b);
	load(&b, 0x1000, 16, "JS:*fib /t/fib.js:1:13");
	load(&b, 0x2000, 32, "py::tiny:/t/t.py");
	move(&b, 0x1000, 0x3000, 16);
	load(&b, 0x4000, 8, "half");
	CHECK_INT(read_image(path, b.b, b.n - 4, &v, &n), ==, 0);
	CHECK_INT(n, ==, 3);
	CHECK_INT(v[0].start, ==, 0x1000);
	CHECK_INT(v[0].size, ==, 16);
	CHECK_STR(v[0].name, "JS:*fib /t/fib.js:1:13");
	CHECK_STR(v[1].name, "py::tiny:/t/t.py");
	CHECK_INT(v[2].start, ==, 0x3000);
	CHECK_STR(v[2].name, "JS:*fib /t/fib.js:1:13");
	free_syms(v, n);
	CHECK_INT(read_image(path, b.b, b.n, &v, &n), ==, 0);
	CHECK_INT(n, ==, 4);
	free_syms(v, n);
	/* not a jitdump (another byte order, say): nothing */
	b.b[0] ^= 0xff;
	CHECK_INT(read_image(path, b.b, b.n, &v, &n), ==, 0);
	CHECK_INT(n, ==, 0);
	free_syms(v, n);
	unlink(path);
}

TEST(jitdump_cut_or_damaged_anywhere_reads_without_harm)
{
	struct buf b = { .n = 0 }, m;
	struct jit_sym *v;
	char *path = tmp_path();
	size_t n, i, k;

	header(&b);
	load(&b, 0x1000, 16, "a");
	move(&b, 0x1000, 0x3000, 16);
	load(&b, 0x2000, 300, "b");
	for (i = 0; i < b.n; i++) {
		CHECK_INT(read_image(path, b.b, i, &v, &n), ==, 0);
		CHECK(n <= 3);
		free_syms(v, n);
	}
	srand(7);
	for (i = 0; i < 3000; i++) {
		m = b;
		for (k = 0; k < 1 + (size_t)rand() % 4; k++)
			m.b[(size_t)rand() % m.n] = (unsigned char)rand();
		CHECK_INT(read_image(path, m.b, m.n, &v, &n), ==, 0);
		for (k = 0; k < n; k++)
			CHECK(v[k].size > 0 && strlen(v[k].name) <= 4096);
		free_syms(v, n);
	}
	unlink(path);
}

/* ---- the CFI of the code, read as the file grows ---- */

/*
 * An unwinding record for code at CODE (SIZE bytes): a CIE and an FDE for
 * a trampoline that pushes rbp at +0 and pops it at +13, then a
 * .eh_frame_hdr, the .eh_frame placed just after the code.
 */
static void unwinding(struct buf *b, uint64_t code, uint64_t size)
{
	static const unsigned char cie[] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
		0x0c, 7, 8, 0x90, 1, 0, 0,
	};
	static const unsigned char fde_insns[] = {
		0, 0x41, 0x0e, 16, 0x86, 2, 0x4d, 0x0e, 8, 0xc6, 0, 0,
	};
	uint64_t eh_at = code + ((size + 7) & ~7ull);
	size_t start;

	put32(b, 4);		/* JIT_CODE_UNWINDING_INFO */
	put32(b, 40 + 56);
	put64(b, 2);
	put64(b, 52 + 4);	/* unwinding_size: .eh_frame and a (short) header */
	put64(b, 4);		/* eh_frame_hdr_size */
	put64(b, 0);		/* mapped_size */
	start = b->n;
	put(b, cie, sizeof(cie));
	put32(b, 24);				/* the FDE's length */
	put32(b, 28);				/* back to the CIE */
	put32(b, (uint32_t)(int32_t)(code - (eh_at + 32)));
	put32(b, (uint32_t)size);
	put(b, fde_insns, sizeof(fde_insns));
	put32(b, 0x1b0301);			/* the header (not read) */
	while ((b->n - start) % 8)
		b->b[b->n++] = 0;
}

struct loads {
	unsigned calls, with_rows, named, moved;
	char last_name[64];
	uint64_t last_time, moved_from;
	uint64_t lo, hi;
	struct cfi_row rows[8];
	size_t n;
};

static int on_load(void *arg, uint64_t lo, uint64_t hi, const struct cfi_row *rows, size_t n)
{
	struct loads *l = arg;

	l->calls++;
	if (n) {
		l->with_rows++;
		l->lo = lo;
		l->hi = hi;
		l->n = n < 8 ? n : 8;
		memcpy(l->rows, rows, l->n * sizeof(*rows));
	}
	return 0;
}

static int on_name(void *arg, uint64_t lo, uint64_t hi, uint64_t time, const char *name,
		   uint64_t from)
{
	struct loads *l = arg;

	if (hi <= lo)
		return -1;
	if (name) {
		l->named++;
		snprintf(l->last_name, sizeof(l->last_name), "%s", name);
	} else {
		l->moved++;
		l->moved_from = from;
	}
	l->last_time = time;
	return 0;
}

static void write_at(const char *path, const void *p, size_t n, const char *mode)
{
	FILE *f = fopen(path, mode);

	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

TEST(jitdump_tail_gives_each_load_the_cfi_before_it_as_the_file_grows)
{
	struct buf b = { .n = 0 };
	struct jitdump_tail t;
	struct loads l = { 0 };
	struct jitdump_sink sink = { .cfi = on_load, .code = on_name, .arg = &l };
	char *path = tmp_path();
	size_t cut;

	header(&b);
	unwinding(&b, 0x10040, 15);
	load(&b, 0x10040, 15, "jit_trampoline");
	cut = b.n;
	load(&b, 0x20000, 64, "no cfi");
	jitdump_tail_init(&t);
	/* the writer is in the middle of the first load */
	write_at(path, b.b, cut - 10, "w");
	CHECK_INT(jitdump_tail_read(&t, path, &sink), ==, 0);
	CHECK_INT(l.calls, ==, 0);
	write_at(path, b.b + cut - 10, b.n - (cut - 10), "a");
	CHECK_INT(jitdump_tail_read(&t, path, &sink), ==, 0);
	/* the first load: cleared, then its FDE's rows; the second without any */
	CHECK_INT(l.calls, ==, 3);
	CHECK_INT(l.with_rows, ==, 1);
	CHECK_INT(t.fdes, ==, 1);
	CHECK_INT(l.lo, ==, 0x10040);
	CHECK_INT(l.hi, ==, 0x10040 + 15);
	CHECK_INT(l.n, ==, 3);
	CHECK_INT(l.rows[0].r.cfa, ==, UCFA_RSP);
	CHECK_INT(l.rows[0].r.cfa_off, ==, 8);
	CHECK_INT(l.rows[1].lo, ==, 0x10041);
	CHECK_INT(l.rows[1].r.cfa_off, ==, 16);
	CHECK_INT(l.rows[1].r.bp, ==, UBP_AT);
	CHECK_INT(l.rows[1].r.bp_off, ==, -16);
	CHECK_INT(l.rows[2].lo, ==, 0x1004e);
	CHECK_INT(l.rows[2].r.cfa_off, ==, 8);
	CHECK_INT(l.rows[2].r.bp, ==, UBP_SAME);
	/* and each load's name, with its time */
	CHECK_INT(l.named, ==, 2);
	CHECK_STR(l.last_name, "no cfi");
	CHECK_INT(l.last_time, ==, 2);
	/* nothing new: nothing read twice */
	CHECK_INT(jitdump_tail_read(&t, path, &sink), ==, 0);
	CHECK_INT(l.calls, ==, 3);
	jitdump_tail_release(&t);
	unlink(path);
}

TEST(jitdump_tail_reads_damage_anywhere_without_harm)
{
	struct buf b = { .n = 0 }, m;
	struct jitdump_tail t;
	struct loads l;
	struct jitdump_sink sink = { .cfi = on_load, .code = on_name, .arg = &l };
	char *path = tmp_path();
	size_t i, k;

	header(&b);
	unwinding(&b, 0x10040, 15);
	load(&b, 0x10040, 15, "a");
	move(&b, 0x10040, 0x30000, 15);
	unwinding(&b, 0x20000, 40);
	load(&b, 0x20000, 40, "b");
	srand(11);
	for (i = 0; i < 3000; i++) {
		m = b;
		for (k = 0; k < 1 + (size_t)rand() % 4; k++)
			m.b[40 + (size_t)rand() % (m.n - 40)] = (unsigned char)rand();
		write_at(path, m.b, m.n, "w");
		memset(&l, 0, sizeof(l));
		jitdump_tail_init(&t);
		CHECK_INT(jitdump_tail_read(&t, path, &sink), ==, 0);
		/* rows only of code a load gave */
		CHECK(!l.with_rows || (l.lo < l.hi && l.rows[0].lo >= l.lo && l.rows[l.n - 1].hi <= l.hi));
		jitdump_tail_release(&t);
	}
	unlink(path);
}
