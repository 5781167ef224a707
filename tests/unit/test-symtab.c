/* SPDX-License-Identifier: MIT */
/*
 * test-symtab.c - the sorted symbol table under the symbolizer: sized and
 * unsized symbols, nesting, several names for one address, keys, and
 * ranges at the top of the address space.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "symbols/symtab.h"

static const char *name_at(const struct symtab *t, uint64_t key, uint64_t addr)
{
	const struct symtab_entry *e = symtab_lookup(t, key, addr);

	return e ? e->name : "(none)";
}

TEST(symtab_sized_symbols_end_at_their_size)
{
	struct symtab t = { 0 };

	CHECK_INT(symtab_add(&t, 0, 0x100, 0x10, 0, "a", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x300, 0x20, 0, "c", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x200, 0x10, 0, "b", 0), ==, 0);
	symtab_finish(&t);
	CHECK_STR(name_at(&t, 0, 0xff), "(none)");
	CHECK_STR(name_at(&t, 0, 0x100), "a");
	CHECK_STR(name_at(&t, 0, 0x10f), "a");
	CHECK_STR(name_at(&t, 0, 0x110), "(none)");	/* a gap is no one's */
	CHECK_STR(name_at(&t, 0, 0x205), "b");
	CHECK_STR(name_at(&t, 0, 0x31f), "c");
	CHECK_STR(name_at(&t, 0, 0x320), "(none)");
	symtab_release(&t);
}

TEST(symtab_unsized_symbols_reach_the_next_one_within_their_limit)
{
	struct symtab t = { 0 };

	CHECK_INT(symtab_add(&t, 0, 0x100, 0, 0x180, "label", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x140, 0x10, 0, "sized", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x400, 0, UINT64_MAX, "last", 0), ==, 0);
	symtab_finish(&t);
	CHECK_STR(name_at(&t, 0, 0x13f), "label");
	CHECK_STR(name_at(&t, 0, 0x145), "sized");
	CHECK_STR(name_at(&t, 0, 0x150), "(none)");	/* label ended at sized */
	CHECK_STR(name_at(&t, 0, 0x400), "last");
	CHECK_STR(name_at(&t, 0, UINT64_MAX - 1), "last");
	symtab_release(&t);
}

TEST(symtab_a_sized_symbol_beats_a_label_inside_it)
{
	struct symtab t = { 0 };

	CHECK_INT(symtab_add(&t, 0, 0x1000, 0x100, 0, "outer", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x1010, 0x10, 0, "inner", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x1080, 0, 0x2000, ".Lloop", 0), ==, 0);
	symtab_finish(&t);
	CHECK_STR(name_at(&t, 0, 0x1015), "inner");
	CHECK_STR(name_at(&t, 0, 0x1050), "outer");	/* inner ended: look back */
	CHECK_STR(name_at(&t, 0, 0x1090), "outer");	/* not the label */
	CHECK_STR(name_at(&t, 0, 0x1100), ".Lloop");	/* past outer, the label is all */
	symtab_release(&t);
}

TEST(symtab_keeps_the_best_name_of_one_address)
{
	struct symtab t = { 0 };

	CHECK_INT(symtab_add(&t, 0, 0x100, 0x10, 0, "weak_alias", 1), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x100, 0x10, 0, "strong", 2), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x200, 0x10, 0, "zeta", 5), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x200, 0x10, 0, "alpha", 5), ==, 0);
	symtab_finish(&t);
	CHECK_INT(t.n, ==, 2);
	CHECK_STR(name_at(&t, 0, 0x108), "strong");
	CHECK_STR(name_at(&t, 0, 0x208), "alpha");	/* equal rank: by name, stable */
	symtab_release(&t);
}

TEST(symtab_keys_are_separate_address_spaces)
{
	struct symtab t = { 0 };

	CHECK_INT(symtab_add(&t, 2, 0x100, 0, UINT64_MAX, "two", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 1, 0x100, 0x10, 0, "one", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 3, 0x500, 0x10, 0, "three", 0), ==, 0);
	symtab_finish(&t);
	CHECK_STR(name_at(&t, 1, 0x105), "one");
	CHECK_STR(name_at(&t, 1, 0x200), "(none)");
	/* an unsized symbol stops at its key's end, not at the next key's symbol */
	CHECK_STR(name_at(&t, 2, 0x600), "two");
	CHECK_STR(name_at(&t, 3, 0x100), "(none)");
	CHECK_STR(name_at(&t, 4, 0x505), "(none)");
	CHECK_STR(name_at(&t, 0, 0x105), "(none)");
	symtab_release(&t);
}

TEST(symtab_ranges_that_would_wrap_end_at_the_top)
{
	struct symtab t = { 0 };

	CHECK_STR(name_at(&t, 0, 0), "(none)");		/* empty table */
	CHECK_INT(symtab_add(&t, 0, UINT64_MAX - 0x10, UINT64_MAX, 0, "top", 0), ==, 0);
	CHECK_INT(symtab_add(&t, 0, 0x10, 0, 0x10, "empty", 0), ==, 0);
	symtab_finish(&t);
	CHECK_STR(name_at(&t, 0, UINT64_MAX - 1), "top");
	CHECK_STR(name_at(&t, 0, 0x10), "(none)");	/* a label at its limit holds nothing */
	symtab_release(&t);
}

/*
 * A table the size of a program's (sorted by start a byte at a time):
 * in address order, one entry per start, the best of its names (the
 * highest rank, then the first name), as a table of a few entries is.
 */
TEST(symtab_a_big_table_sorts_as_a_small_one)
{
	static char names[4000][8];
	struct symtab t = { 0 };
	uint64_t x = 88172645463325252ull, start[4000];
	uint32_t rank[4000];
	size_t i, j;

	for (i = 0; i < 4000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* a few hundred distinct starts of one text segment: many aliases */
		start[i] = 0x55d4c0000000ull + (x % 600) * 0x40 + (i % 3 == 0 ? 0x100000000ull : 0);
		rank[i] = (uint32_t)(x >> 20) % 4;
		snprintf(names[i], sizeof(names[i]), "f%04zu", (size_t)(x >> 32) % 10000);
		CHECK_INT(symtab_add(&t, 7, start[i], 0x10, 0, names[i], rank[i]), ==, 0);
	}
	symtab_finish(&t);
	for (i = 0; i < t.n; i++) {
		const char *best = NULL;
		uint32_t best_rank = 0;

		CHECK(i == 0 || t.v[i].start > t.v[i - 1].start);
		for (j = 0; j < 4000; j++)
			if (start[j] == t.v[i].start &&
			    (!best || rank[j] > best_rank ||
			     (rank[j] == best_rank && strcmp(names[j], best) < 0))) {
				best = names[j];
				best_rank = rank[j];
			}
		CHECK(best);
		CHECK_STR(t.v[i].name, best);
		CHECK_STR(name_at(&t, 7, t.v[i].start + 0xf), best);
	}
	/* every start is there */
	for (j = 0; j < 4000; j++)
		CHECK(symtab_lookup(&t, 7, start[j]));
	symtab_release(&t);
}
