/* SPDX-License-Identifier: MIT */
/*
 * intern.c - open addressing with linear probing, kept at most half full so
 * that a lookup of a repeated stack costs one or two probes.
 */
#include <stdlib.h>

#include "intern.h"
#include "internal.h"

static size_t intern_hash(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;

	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 29;
	return (size_t)h;
}

void intern_init(struct intern_map *m)
{
	m->slots = NULL;
	m->mask = 0;
	m->used = 0;
}

void intern_release(struct intern_map *m)
{
	free(m->slots);
	intern_init(m);
}

uint32_t intern_find(const struct intern_map *m, uint64_t a, uint64_t b)
{
	size_t i;

	if (!m->slots)
		return 0;
	for (i = intern_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		const struct intern_slot *s = &m->slots[i];

		if (!s->id)
			return 0;
		if (s->a == a && s->b == b)
			return s->id;
	}
}

void intern_prefetch(const struct intern_map *m, uint64_t a, uint64_t b)
{
	if (m->slots)
		__builtin_prefetch(&m->slots[intern_hash(a, b) & m->mask]);
}

static void intern_place(struct intern_slot *slots, size_t mask, const struct intern_slot *src)
{
	size_t i;

	for (i = intern_hash(src->a, src->b) & mask; slots[i].id; i = (i + 1) & mask)
		;
	slots[i] = *src;
}

/* How many slots ahead a rehash fetches where it places them. */
#define REHASH_AHEAD 8

static int intern_grow(struct intern_map *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : 256, i, n = 0;
	struct intern_slot *slots = calloc_written(cap, sizeof(*slots));
	const struct intern_slot *ahead[REHASH_AHEAD];

	if (!slots)
		return error_setx(-ENOMEM, "out of memory");
	/* each placement a miss of the CPU's caches: REHASH_AHEAD of them in flight */
	for (i = 0; m->slots && i <= m->mask; i++) {
		const struct intern_slot *s = &m->slots[i];

		if (!s->id)
			continue;
		__builtin_prefetch(&slots[intern_hash(s->a, s->b) & (cap - 1)], 1);
		if (n >= REHASH_AHEAD)
			intern_place(slots, cap - 1, ahead[n % REHASH_AHEAD]);
		ahead[n++ % REHASH_AHEAD] = s;
	}
	for (i = n > REHASH_AHEAD ? n - REHASH_AHEAD : 0; i < n; i++)
		intern_place(slots, cap - 1, ahead[i % REHASH_AHEAD]);
	free(m->slots);
	m->slots = slots;
	m->mask = cap - 1;
	return 0;
}

int intern_insert(struct intern_map *m, uint64_t a, uint64_t b, uint32_t id)
{
	struct intern_slot s = { .a = a, .b = b, .id = id };
	int r;

	if (!m->slots || (m->used + 1) * 2 > m->mask + 1) {
		r = intern_grow(m);
		if (r < 0)
			return r;
	}
	intern_place(m->slots, m->mask, &s);
	m->used++;
	return 0;
}

int intern_set(struct intern_map *m, uint64_t a, uint64_t b, uint32_t id)
{
	size_t i;

	for (i = m->slots ? intern_hash(a, b) & m->mask : 0; m->slots && m->slots[i].id;
	     i = (i + 1) & m->mask) {
		if (m->slots[i].a == a && m->slots[i].b == b) {
			m->slots[i].id = id;
			return 0;
		}
	}
	return intern_insert(m, a, b, id);
}
