/* SPDX-License-Identifier: MIT */
/*
 * jit_names.c - the names of a process's JIT code as they were at each
 * sample (see jit_names.h).  The live map is a sorted array: a load cuts
 * out the code it overlaps, which goes to a short history with the time
 * it went; a frame is looked up in the live map, and in the history only
 * when the live code there was loaded after the sample.  Memory follows
 * the code there now, the last few seconds' replacements, and the loads
 * that samples named.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jit_names.h"
#include "prof.h"
#include "unwind/unwind.h"

/* Loads kept, live or replaced, at most: a runaway JIT's file is bounded */
#define JIT_LOADS_MAX (1u << 20)
#define NAMES_MAX (1u << 20)

void jit_names_release(struct jit_names *j)
{
	size_t i;

	for (i = 0; i < j->nnames; i++)
		free(j->names[i]);
	free(j->names);
	strmap_release(&j->name_ids);
	free(j->live);
	free(j->old);
	free(j->used);	/* its names are the interned ones */
	memset(j, 0, sizeof(*j));
}

void jit_names_forget_code(struct jit_names *j)
{
	free(j->live);
	free(j->old);
	j->live = j->old = NULL;
	j->nlive = j->live_cap = j->nold = j->old_cap = 0;
}

/* NAME interned: 1 + its index, 0 when there are too many, or -ENOMEM. */
static int64_t name_id(struct jit_names *j, const char *name)
{
	size_t len = strlen(name);
	uint32_t id = strmap_find(&j->name_ids, name, len);
	void *v = j->names;
	char *copy;

	if (id)
		return id;
	if (j->nnames >= NAMES_MAX)
		return 0;
	if (grow_array(&v, &j->names_cap, j->nnames + 1, sizeof(*j->names)) < 0)
		return -ENOMEM;
	j->names = v;
	copy = strdup(name);
	if (!copy || strmap_insert(&j->name_ids, name, len, (uint32_t)j->nnames + 1) < 0) {
		free(copy);
		return error_setx(-ENOMEM, "out of memory");
	}
	j->names[j->nnames++] = copy;
	return (int64_t)j->nnames;
}

/* The first live load that ends after ADDR. */
static size_t first_after(const struct jit_names *j, uint64_t addr)
{
	size_t lo = 0, hi = j->nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->live[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Forget the replaced code no sample processed after NOW can have run. */
static void trim_old(struct jit_names *j, uint64_t now)
{
	size_t k = 0;

	while (k < j->nold && j->old[k].gone_ns + JIT_HISTORY_NS < now)
		k++;
	if (k) {
		memmove(j->old, j->old + k, (j->nold - k) * sizeof(*j->old));
		j->nold -= k;
	}
}

/* Take the live loads overlapping [LO, HI) out, into the history as gone at TIME. */
static int replace(struct jit_names *j, uint64_t lo, uint64_t hi, uint64_t time)
{
	size_t i = first_after(j, lo), k, n, m;
	void *v;

	for (k = i; k < j->nlive && j->live[k].start < hi; k++)
		;
	n = k - i;
	if (!n)
		return 0;
	v = j->old;
	if (grow_array(&v, &j->old_cap, j->nold + n, sizeof(*j->old)) < 0)
		return -ENOMEM;
	j->old = v;
	memcpy(j->old + j->nold, j->live + i, n * sizeof(*j->old));
	for (m = 0; m < n; m++)
		j->old[j->nold + m].gone_ns = time;
	j->nold += n;
	memmove(j->live + i, j->live + k, (j->nlive - k) * sizeof(*j->live));
	j->nlive -= n;
	return 0;
}

static int add_live(struct jit_names *j, uint64_t lo, uint64_t hi, uint64_t time, uint32_t name)
{
	size_t at;
	void *v = j->live;

	if (j->nlive + j->nold >= JIT_LOADS_MAX)
		return 0;	/* left to the names read at the end */
	if (grow_array(&v, &j->live_cap, j->nlive + 1, sizeof(*j->live)) < 0)
		return -ENOMEM;
	j->live = v;
	at = first_after(j, lo);
	memmove(j->live + at + 1, j->live + at, (j->nlive - at) * sizeof(*j->live));
	j->live[at] = (struct jit_load){ .start = lo, .end = hi, .time_ns = time,
					 .gone_ns = UINT64_MAX, .name = name };
	j->nlive++;
	j->loads++;
	return 0;
}

int jit_names_load(struct jit_names *j, uint64_t lo, uint64_t hi, uint64_t time_ns,
		   const char *name)
{
	int64_t id;
	int r;

	if (lo >= hi || hi - lo > (1ull << 32) || !name || !*name)
		return 0;
	trim_old(j, time_ns);
	r = replace(j, lo, hi, time_ns);
	if (r < 0)
		return r;
	id = name_id(j, name);
	if (id <= 0)
		return (int)id;
	return add_live(j, lo, hi, time_ns, (uint32_t)id);
}

int jit_names_move(struct jit_names *j, uint64_t from, uint64_t to, uint64_t size,
		   uint64_t time_ns)
{
	size_t i = first_after(j, from);
	uint32_t name;
	int r;

	if (i >= j->nlive || j->live[i].start != from || !size || to + size < to ||
	    size > (1ull << 32))
		return 0;	/* code no load announced: the names at the end will do */
	name = j->live[i].name;
	trim_old(j, time_ns);
	/* where it was is free now; where it goes, what was there is gone */
	r = replace(j, from, from + 1, time_ns);
	if (r >= 0)
		r = replace(j, to, to + size, time_ns);
	return r < 0 ? r : add_live(j, to, to + size, time_ns, name);
}

/* The load that held PC at TIME, or NULL. */
static struct jit_load *load_at(struct jit_names *j, uint64_t pc, uint64_t time)
{
	size_t i = first_after(j, pc), k;

	if (i < j->nlive && j->live[i].start <= pc && j->live[i].time_ns <= time)
		return &j->live[i];
	/* loaded after the sample: what was there before it */
	for (k = j->nold; k-- > 0;) {
		struct jit_load *o = &j->old[k];

		if (o->start <= pc && pc < o->end && o->time_ns <= time && time < o->gone_ns)
			return o;
	}
	return NULL;
}

/* The synthetic address of PC in L, its range given and its name kept the first time. */
static int synth_of(struct jit_names *j, struct jit_load *l, uint64_t pc, uint64_t *ret)
{
	uint64_t size = l->end - l->start;
	void *v;

	if (!l->used) {
		if (PROF_JIT_FRAME_BASE + j->next_synth + size >= PROF_JAVA_FRAME_BASE)
			return 0;	/* spent (it takes 2^61 bytes of code): real addresses */
		v = j->used;
		if (grow_array(&v, &j->used_cap, j->nused + 1, sizeof(*j->used)) < 0)
			return -ENOMEM;
		j->used = v;
		l->synth = PROF_JIT_FRAME_BASE + j->next_synth;
		j->next_synth += (size + 31) & ~15ull;
		j->used[j->nused++] = (struct jit_sym){ .start = l->synth, .size = size,
							.name = j->names[l->name - 1] };
		l->used = true;
	}
	*ret = l->synth + (pc - l->start);
	return 0;
}

int jit_names_frames(struct jit_names *j, struct addr_space *as, struct unwind_result *u,
		     uint64_t time_ns)
{
	size_t i;
	int r;

	if (!j->nlive && !j->nold)
		return 0;
	for (i = 0; i < u->n; i++) {
		struct jit_load *l;

		/* a file's code, or a Python frame: no load's */
		if (u->pc[i] >= PROF_JIT_FRAME_BASE || as_find(as, u->pc[i]))
			continue;
		l = load_at(j, u->pc[i], time_ns);
		if (l && (r = synth_of(j, l, u->pc[i], &u->pc[i])) < 0)
			return r;
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

const struct jit_sym *jit_names_used(struct jit_names *j, size_t *n)
{
	if (j->nused)
		qsort(j->used, j->nused, sizeof(*j->used), by_start);
	*n = j->nused;
	return j->used;
}
