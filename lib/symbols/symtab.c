/* SPDX-License-Identifier: MIT */
/*
 * symtab.c - sorted address ranges with binary search.  A sized symbol
 * covers [start, start + size); a symbol without a size (assembler labels,
 * kallsyms) covers up to the next symbol.  Symbols may nest (a sized symbol
 * holding smaller ones or labels), so a lookup looks back a few entries for
 * a sized symbol holding the address before it settles for a label.  It knows nothing of ELF or of the spool.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "radix.h"
#include "symtab.h"

/* How far back a lookup searches for an enclosing symbol. */
#define SYMTAB_NEST_MAX 16

int symtab_add(struct symtab *t, uint64_t key, uint64_t start, uint64_t size, uint64_t limit,
	       const char *name, uint32_t rank)
{
	struct symtab_entry *e;
	void *v = t->v;
	int r;

	r = grow_array(&v, &t->cap, t->n + 1, sizeof(*t->v));
	t->v = v;
	if (r < 0)
		return r;
	e = &t->v[t->n++];
	e->key = key;
	e->start = start;
	e->end = size ? (start + size < start ? UINT64_MAX : start + size)
		      : (limit > start ? limit : start);
	e->name = name;
	e->rank = rank;
	e->sized = size != 0;
	return 0;
}

static int by_key_start_rank(const void *pa, const void *pb)
{
	const struct symtab_entry *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Below this many entries, or with keys that differ, qsort() does the sorting alone. */
#define RADIX_MIN 256

/*
 * Sort T as by_key_start_rank() orders it: when every entry has one key,
 * by start with a radix sort of their indexes (a byte at a time, the
 * bytes all entries share skipped), then each run of one start by rank
 * and name.  A program's symbol table has tens of thousands of entries:
 * qsort() called the comparison, a function through a pointer, for each
 * of their n log n pairs; cc1's took most of the names' capture at the
 * end of a recording.  false: no memory (T is then left to qsort()).
 */
static bool radix_sort(struct symtab *t)
{
	size_t n = t->n, i, j;
	uint32_t *idx, *tmp;
	uint64_t *starts;
	struct symtab_entry *out;

	if (n > UINT32_MAX)
		return false;
	idx = malloc(n * sizeof(*idx));
	tmp = malloc(n * sizeof(*tmp));
	starts = malloc(n * sizeof(*starts));
	out = malloc(n * sizeof(*out));
	if (!idx || !tmp || !starts || !out) {
		free(idx);
		free(tmp);
		free(starts);
		free(out);
		return false;
	}
	for (i = 0; i < n; i++) {
		idx[i] = (uint32_t)i;
		starts[i] = t->v[i].start;
	}
	radix_order(starts, n, idx, tmp);
	for (i = 0; i < n; i++)
		out[i] = t->v[idx[i]];
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && out[j].start == out[i].start; j++)
			;
		if (j - i > 1)
			qsort(out + i, j - i, sizeof(*out), by_key_start_rank);
	}
	free(idx);
	free(tmp);
	free(starts);
	free(t->v);
	t->v = out;
	t->cap = n;
	return true;
}

void symtab_finish(struct symtab *t)
{
	size_t i, n = 0;
	bool one_key = t->n >= RADIX_MIN;

	if (!t->n)
		return;
	for (i = 1; one_key && i < t->n; i++)
		one_key = t->v[i].key == t->v[0].key;
	if (!one_key || !radix_sort(t))
		qsort(t->v, t->n, sizeof(*t->v), by_key_start_rank);
	for (i = 0; i < t->n; i++)
		if (!n || t->v[i].key != t->v[n - 1].key || t->v[i].start != t->v[n - 1].start)
			t->v[n++] = t->v[i];
	t->n = n;
	for (i = 0; i + 1 < n; i++) {
		struct symtab_entry *e = &t->v[i], *next = &t->v[i + 1];

		if (!e->sized && next->key == e->key && next->start < e->end)
			e->end = next->start;
	}
}

const struct symtab_entry *symtab_lookup(const struct symtab *t, uint64_t key, uint64_t addr)
{
	uint64_t until;

	return symtab_lookup_until(t, key, addr, &until);
}

const struct symtab_entry *symtab_lookup_until(const struct symtab *t, uint64_t key,
					       uint64_t addr, uint64_t *until)
{
	const struct symtab_entry *found = NULL;
	size_t lo = 0, hi = t->n, i, k;

	/* first entry after (key, addr) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct symtab_entry *e = &t->v[mid];

		if (e->key < key || (e->key == key && e->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, k = 0; i > 0 && k < SYMTAB_NEST_MAX; i--, k++) {
		const struct symtab_entry *e = &t->v[i - 1];

		if (e->key != key)
			break;
		if (addr >= e->end)
			continue;
		/* a label inside a sized symbol names less than the symbol */
		if (e->sized) {
			found = e;
			break;
		}
		if (!found)
			found = e;
	}
	/*
	 * Up to the next entry's start the entries looked at are these: those
	 * that ended at or before ADDR still have, and the one found holds
	 * the addresses up to its end.
	 */
	*until = lo < t->n && t->v[lo].key == key ? t->v[lo].start : UINT64_MAX;
	if (found && found->end < *until)
		*until = found->end;
	return found;
}

void symtab_release(struct symtab *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
