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
