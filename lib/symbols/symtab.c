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

void symtab_finish(struct symtab *t)
{
	size_t i, n = 0;

	if (!t->n)
		return;
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
	const struct symtab_entry *label = NULL;
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
		if (e->sized)
			return e;
		if (!label)
			label = e;
	}
	return label;
}

void symtab_release(struct symtab *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
