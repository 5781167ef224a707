/* SPDX-License-Identifier: MIT */
/*
 * jit_rules.c - the unwind rules of a process's JIT code (see jit_rules.h):
 * one sorted array of rows, a load replacing the rows of its range, so
 * that the rows are those of the code there now and their number is
 * bounded by the code's size, not by how often it was replaced.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jit_rules.h"

void jit_rules_release(struct jit_rules *j)
{
	free(j->v);
	*j = (struct jit_rules){ .gen = j->gen + 1 };
}

/* The first row that ends after ADDR. */
static size_t first_after(const struct jit_rules *j, uint64_t addr)
{
	size_t lo = 0, hi = j->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->v[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Take [LO, HI) out of the rows: those inside go, those across are cut. */
static int cut(struct jit_rules *j, uint64_t lo, uint64_t hi)
{
	size_t i, k;

	if (!j->n)
		return 0;
	i = first_after(j, lo);

	if (i < j->n && j->v[i].lo < lo && j->v[i].hi > hi) {
		/* one row holds the whole range: it becomes two */
		void *p = j->v;

		if (grow_array(&p, &j->cap, j->n + 1, sizeof(*j->v)) < 0)
			return -ENOMEM;
		j->v = p;
		memmove(&j->v[i + 1], &j->v[i], (j->n - i) * sizeof(*j->v));
		j->n++;
		j->v[i].hi = lo;
		j->v[i + 1].lo = hi;
		return 0;
	}
	if (i < j->n && j->v[i].lo < lo) {
		j->v[i].hi = lo;
		i++;
	}
	for (k = i; k < j->n && j->v[k].hi <= hi; k++)
		;
	if (k < j->n && j->v[k].lo < hi)
		j->v[k].lo = hi;
	memmove(&j->v[i], &j->v[k], (j->n - k) * sizeof(*j->v));
	j->n -= k - i;
	return 0;
}

int jit_rules_load(struct jit_rules *j, uint64_t lo, uint64_t hi, const struct cfi_row *rows,
		   size_t n)
{
	size_t at, i, add = 0;
	void *p;
	int r;

	if (lo >= hi || (!j->n && !n))
		return 0;
	j->gen++;
	r = cut(j, lo, hi);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++)
		add += rows[i].lo < hi && rows[i].hi > lo && rows[i].lo < rows[i].hi;
	if (!add)
		return 0;
	if (j->n + add > JIT_RULES_MAX)
		return 0;	/* walked by frame pointers, as if it had none */
	p = j->v;
	if (grow_array(&p, &j->cap, j->n + add, sizeof(*j->v)) < 0)
		return -ENOMEM;
	j->v = p;
	at = first_after(j, lo);
	memmove(&j->v[at + add], &j->v[at], (j->n - at) * sizeof(*j->v));
	/* cfi_fde_rows() gives them in order, without overlaps: kept so */
	for (i = 0; i < n; i++) {
		uint64_t a = rows[i].lo > lo ? rows[i].lo : lo;
		uint64_t b = rows[i].hi < hi ? rows[i].hi : hi;

		if (a >= b || rows[i].lo >= rows[i].hi)
			continue;
		j->v[at++] = (struct jit_rule){ a, b, rows[i].r };
		j->n++;
	}
	return 0;
}

const struct urule *jit_rules_find(const struct jit_rules *j, uint64_t pc)
{
	size_t i = j->n ? first_after(j, pc) : 0;

	return i < j->n && j->v[i].lo <= pc ? &j->v[i].r : NULL;
}

int jit_rules_copy(struct jit_rules *dst, const struct jit_rules *src)
{
	if (!src->n)
		return 0;
	dst->v = malloc(src->n * sizeof(*dst->v));
	if (!dst->v)
		return error_setx(-ENOMEM, "out of memory");
	memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
	dst->n = dst->cap = src->n;
	dst->gen++;
	return 0;
}
