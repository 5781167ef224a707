/* SPDX-License-Identifier: MIT */
/*
 * sorter.c - a binary min-heap keyed by (time, insertion sequence).  It
 * holds only what arrived since the last watermark, so its size is bounded
 * by what the rings deliver between two polls, not by the recording.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sorter.h"

void sorter_init(struct sorter *s)
{
	memset(s, 0, sizeof(*s));
}

void sorter_release(struct sorter *s)
{
	size_t i;

	for (i = 0; i < s->len; i++)
		free(s->heap[i]);
	for (i = 0; i < s->nspare; i++)
		free(s->spare[i]);
	free(s->heap);
	free(s->last);
	sorter_init(s);
}

_Static_assert(offsetof(struct sorted_rec, data) % 8 == 0,
	       "a record's u64 fields stay aligned in the sorter, as in its ring");

static bool before(const struct sorted_rec *a, const struct sorted_rec *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int sorter_push(struct sorter *s, uint64_t time, int cpu, const void *rec, size_t len)
{
	void *p = sorter_add(s, time, cpu, len);

	if (!p)
		return -ENOMEM;
	memcpy(p, rec, len);
	return 0;
}

static struct sorted_rec *add(struct sorter *s, uint64_t time, int cpu, size_t len);

void *sorter_add(struct sorter *s, uint64_t time, int cpu, size_t len)
{
	struct sorted_rec *r = add(s, time, cpu, len);

	return r ? r->data : NULL;
}

int sorter_add_ref(struct sorter *s, uint64_t time, int cpu, const void *rec, size_t len,
		   uint64_t ticket)
{
	struct sorted_rec *r = add(s, time, cpu, 0);

	if (!r)
		return -ENOMEM;
	r->ref = rec;
	r->len = (uint32_t)len;
	r->ticket = ticket;
	return 0;
}

int sorter_own(struct sorter *s, int cpu, size_t (*size)(const void *rec, void *arg),
	       void (*copy)(void *out, const void *rec, void *arg), void *arg)
{
	size_t i;

	for (i = 0; i < s->len; i++) {
		struct sorted_rec *r = s->heap[i], *c;
		size_t len;

		if (!r->ref || r->cpu != cpu)
			continue;
		len = size(r->ref, arg);
		c = malloc(sizeof(*c) + len);
		if (!c)
			return error_setx(-ENOMEM, "out of memory");
		*c = *r;
		c->len = c->cap = (uint32_t)len;
		c->ref = NULL;
		copy(c->data, r->ref, arg);
		free(r);
		s->heap[i] = c;
	}
	return 0;
}

static struct sorted_rec *add(struct sorter *s, uint64_t time, int cpu, size_t len)
{
	struct sorted_rec *r;
	size_t i;
	void *heap = s->heap;

	if (grow_array(&heap, &s->cap, s->len + 1, sizeof(*s->heap)) < 0)
		return NULL;
	s->heap = heap;
	/* the spare freed last, if it is big enough: it is warm */
	if (s->nspare && s->spare[s->nspare - 1]->cap >= len) {
		r = s->spare[--s->nspare];
	} else {
		/* whole pages, so that a spare fits most records after it */
		size_t cap = (len + 4095) & ~(size_t)4095;

		r = malloc(sizeof(*r) + cap);
		if (!r) {
			error_setx(-ENOMEM, "out of memory");
			return NULL;
		}
		r->cap = (uint32_t)cap;
	}
	r->time = time;
	r->seq = s->seq++;
	r->len = (uint32_t)len;
	r->cpu = cpu;
	r->ref = NULL;
	for (i = s->len++; i > 0; i = (i - 1) / 2) {
		struct sorted_rec *parent = s->heap[(i - 1) / 2];

		if (!before(r, parent))
			break;
		s->heap[i] = parent;
	}
	s->heap[i] = r;
	return r;
}

const struct sorted_rec *sorter_pop(struct sorter *s, uint64_t watermark)
{
	struct sorted_rec *top, *tail;
	size_t i = 0, child;

	if (s->last && s->nspare < SORTER_SPARE)
		s->spare[s->nspare++] = s->last;
	else
		free(s->last);
	s->last = NULL;
	if (!s->len || s->heap[0]->time > watermark)
		return NULL;
	top = s->heap[0];
	tail = s->heap[--s->len];
	while ((child = 2 * i + 1) < s->len) {
		if (child + 1 < s->len && before(s->heap[child + 1], s->heap[child]))
			child++;
		if (!before(s->heap[child], tail))
			break;
		s->heap[i] = s->heap[child];
		i = child;
	}
	if (s->len)
		s->heap[i] = tail;
	s->last = top;
	return top;
}
