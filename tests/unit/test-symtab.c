/* SPDX-License-Identifier: MIT */
/*
 * test-symtab.c - the sorted symbol table under the symbolizer: sized and
 * unsized symbols, nesting, several names for one address, keys, and
 * ranges at the top of the address space; how far an answer holds; and an
 * ELF file's table thinned to the addresses a recording names.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "symbols/elf_file.h"
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

/*
 * symtab_lookup_until(): from an address up to where it says, every
 * address has the answer it had, in a table of nested sized symbols,
 * labels, aliases, gaps and two keys.
 */
TEST(symtab_an_answer_holds_up_to_where_lookup_until_says)
{
	static char names[300][8];
	struct symtab t = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ull, addr, a, until;
	size_t i;

	for (i = 0; i < 300; i++) {
		uint64_t start, size;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		start = 0x1000 + (x % 4000);
		size = i % 7 == 0 ? 0 : i % 11 == 0 ? 600 : (x >> 16) % 40 + 1;
		snprintf(names[i], sizeof(names[i]), "s%03zu", i);
		CHECK_INT(symtab_add(&t, i % 5 == 0 ? 2 : 1, start, size, start + 90, names[i],
				     (uint32_t)(x >> 40) % 3), ==, 0);
	}
	symtab_finish(&t);
	for (addr = 0xf00; addr < 0x1000 + 4200; addr++) {
		const struct symtab_entry *e = symtab_lookup_until(&t, 1, addr, &until);

		CHECK(until > addr);
		CHECK(e == symtab_lookup(&t, 1, addr));
		for (a = addr; a < until && a < addr + 700; a++)
			if (symtab_lookup(&t, 1, a) != e) {
				printf("  0x%llx: until 0x%llx, but 0x%llx differs\n",
				       (unsigned long long)addr, (unsigned long long)until,
				       (unsigned long long)a);
				CHECK(false);
				break;
			}
	}
	symtab_release(&t);
}

/*
 * The table elf_file_open_for() keeps for every 976th byte of PATH's
 * segments answers each of those offsets as the whole table does.  Its
 * number of symbols, or 0 (a check failed); *WHOLE the whole table's.
 */
static size_t check_open_for(const char *path, size_t *whole_n)
{
	struct elf_file whole, some;
	uint64_t offs[4096], off;
	size_t n = 0, i, kept = 0, bad = 0;

	*whole_n = 0;
	if (elf_file_open(path, &whole) < 0)
		return 0;
	for (i = 0; i < whole.nloads; i++)
		for (off = whole.loads[i].offset;
		     off < whole.loads[i].offset + whole.loads[i].filesz && n < 4096; off += 16 * 61)
			offs[n++] = off;
	if (n > 100 && elf_file_open_for(path, offs, n, &some) == 0) {
		for (i = 0; i < n; i++) {
			uint64_t d1 = 0, d2 = 0;
			const struct symtab_entry *a = elf_file_lookup(&whole, offs[i], &d1);
			const struct symtab_entry *b = elf_file_lookup(&some, offs[i], &d2);

			if (!a != !b || (a && (strcmp(a->name, b->name) || d1 != d2 ||
					       a->end - a->start != b->end - b->start))) {
				printf("  %s+0x%llx: %s, thinned %s\n", path,
				       (unsigned long long)offs[i], a ? a->name : "(none)",
				       b ? b->name : "(none)");
				bad++;
			}
		}
		kept = bad ? 0 : some.syms.n;
		elf_file_release(&some);
	}
	*whole_n = whole.syms.n;
	elf_file_release(&whole);
	return kept;
}

/*
 * elf_file_open_for() on libelf (.dynsym, no labels: thinned) and on this
 * very program (.symtab with crt's labels: read whole, as a label once
 * thinned could reach over a symbol dropped).
 */
TEST(elf_file_open_for_answers_its_offsets_as_the_whole_table)
{
	Dl_info info;
	size_t kept, whole;

	CHECK(dladdr((void *)elf_begin, &info) && info.dli_fname);
	kept = check_open_for(info.dli_fname, &whole);
	CHECK(kept > 0);
	CHECK(kept < whole / 2);
	kept = check_open_for("/proc/self/exe", &whole);
	CHECK(kept > 0);
	CHECK_INT(kept, ==, whole);
}
