/* SPDX-License-Identifier: MIT */
/*
 * test-jit-rules.c - the rules of a process's JIT code: a load replaces
 * what was in its range (cut where it overlaps a row), rows are found by
 * address, a fork copies them, and their number stays bounded.
 */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "unwind/jit_rules.h"

static struct cfi_row row(uint64_t lo, uint64_t hi, int32_t cfa_off)
{
	return (struct cfi_row){ lo, hi, { .cfa = UCFA_RSP, .cfa_off = cfa_off } };
}

static int32_t off_at(const struct jit_rules *j, uint64_t pc)
{
	const struct urule *r = jit_rules_find(j, pc);

	return r ? r->cfa_off : -1;
}

TEST(jit_rules_a_load_replaces_what_its_range_held)
{
	struct cfi_row a[] = { row(0x100, 0x101, 8), row(0x101, 0x10e, 16), row(0x10e, 0x110, 8) };
	struct cfi_row b[] = { row(0x104, 0x108, 24) };
	struct jit_rules j = { 0 }, k = { 0 };
	uint32_t gen;

	CHECK_INT(jit_rules_load(&j, 0x100, 0x110, a, 3), ==, 0);
	CHECK_INT(j.n, ==, 3);
	CHECK_INT(off_at(&j, 0x0ff), ==, -1);
	CHECK_INT(off_at(&j, 0x100), ==, 8);
	CHECK_INT(off_at(&j, 0x10d), ==, 16);
	CHECK_INT(off_at(&j, 0x10f), ==, 8);
	CHECK_INT(off_at(&j, 0x110), ==, -1);
	/* new code inside a row: the row is cut in two around it */
	gen = j.gen;
	CHECK_INT(jit_rules_load(&j, 0x104, 0x108, b, 1), ==, 0);
	CHECK(j.gen != gen);
	CHECK_INT(j.n, ==, 5);
	CHECK_INT(off_at(&j, 0x103), ==, 16);
	CHECK_INT(off_at(&j, 0x104), ==, 24);
	CHECK_INT(off_at(&j, 0x107), ==, 24);
	CHECK_INT(off_at(&j, 0x108), ==, 16);
	/* code with no CFI over the middle: frame pointers there, rows cut at its ends */
	CHECK_INT(jit_rules_load(&j, 0x102, 0x10f, NULL, 0), ==, 0);
	CHECK_INT(off_at(&j, 0x101), ==, 16);
	CHECK_INT(off_at(&j, 0x102), ==, -1);
	CHECK_INT(off_at(&j, 0x10e), ==, -1);
	CHECK_INT(off_at(&j, 0x10f), ==, 8);
	CHECK_INT(j.n, ==, 3);
	/* rows past the load's range are clipped to it */
	CHECK_INT(jit_rules_load(&j, 0x200, 0x204, a, 3), ==, 0);
	CHECK_INT(j.n, ==, 3);
	/* a fork's copy */
	CHECK_INT(jit_rules_copy(&k, &j), ==, 0);
	CHECK_INT(k.n, ==, j.n);
	CHECK_INT(off_at(&k, 0x10f), ==, 8);
	jit_rules_release(&j);
	CHECK_INT(j.n, ==, 0);
	CHECK_INT(off_at(&j, 0x10f), ==, -1);
	jit_rules_release(&k);
}

TEST(jit_rules_reloading_the_same_code_does_not_grow_them)
{
	struct cfi_row a[] = { row(0x1000, 0x1001, 8), row(0x1001, 0x1040, 16) };
	struct jit_rules j = { 0 };
	uint64_t i;

	for (i = 0; i < 100000; i++) {
		uint64_t at = 0x1000 + (i % 7) * 0x10;
		struct cfi_row r[] = { row(at, at + 1, 8), row(at + 1, at + 0x40, 16) };

		CHECK_INT(jit_rules_load(&j, at, at + 0x40, i % 2 ? r : a, 2), ==, 0);
	}
	CHECK(j.n <= 14);
	/* sorted, not overlapping */
	for (i = 0; i + 1 < j.n; i++)
		CHECK(j.v[i].lo < j.v[i].hi && j.v[i].hi <= j.v[i + 1].lo);
	jit_rules_release(&j);
}
