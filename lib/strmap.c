/* SPDX-License-Identifier: MIT */
/*
 * strmap.c - open addressing with linear probing over a 64-bit FNV-1a hash
 * (finished with a mixer), at most half full.  Keys are compared whole, so
 * a hash collision costs a probe, never a wrong answer.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "strmap.h"

static uint64_t strmap_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* The slot of the LEN bytes at KEY, or NULL. */
static const struct strmap_slot *strmap_slot(const struct strmap *m, const void *key, size_t len)
{
	uint64_t h;
	size_t i;

	if (!m->slots)
		return NULL;
	h = strmap_hash(key, len);
	for (i = h & m->mask; m->slots[i].key; i = (i + 1) & m->mask) {
		const struct strmap_slot *s = &m->slots[i];

		if (s->hash == h && s->len == len && !memcmp(s->key, key, len))
			return s;
	}
	return NULL;
}

uint32_t strmap_find(const struct strmap *m, const void *key, size_t len)
{
	const struct strmap_slot *s = strmap_slot(m, key, len);

	return s ? s->id : 0;
}

static void strmap_place(struct strmap_slot *slots, size_t mask, const struct strmap_slot *src)
{
	size_t i;

	for (i = src->hash & mask; slots[i].key; i = (i + 1) & mask)
		;
	slots[i] = *src;
}

static int strmap_grow(struct strmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : 64, i;
	struct strmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].key)
			strmap_place(slots, cap - 1, &m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->mask = cap - 1;
	return 0;
}

int strmap_insert(struct strmap *m, const void *key, size_t len, uint32_t id)
{
	struct strmap_slot s = { .hash = strmap_hash(key, len), .len = len, .id = id };
	int r;

	if (!m->slots || (m->used + 1) * 2 > m->mask + 1) {
		r = strmap_grow(m);
		if (r < 0)
			return r;
	}
	/* +1: a key may be empty, and a slot's key must not be NULL */
	s.key = malloc(len + 1);
	if (!s.key)
		return error_setx(-ENOMEM, "out of memory");
	memcpy(s.key, key, len);
	s.key[len] = '\0';
	strmap_place(m->slots, m->mask, &s);
	m->used++;
	return 0;
}

void strmap_release(struct strmap *m)
{
	size_t i;

	for (i = 0; m->slots && i <= m->mask; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->mask = m->used = 0;
}

int64_t strtab_intern(struct strtab *t, const char *s)
{
	size_t len = strlen(s);
	uint32_t id = strmap_find(&t->ids, s, len);
	void *v = t->v;

	if (id)
		return id - 1;
	if (grow_array(&v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
		return -ENOMEM;
	t->v = v;
	if (strmap_insert(&t->ids, s, len, (uint32_t)t->n + 1) < 0)
		return -ENOMEM;
	/* the map's copy, which stays where it is when the map grows */
	t->v[t->n] = strmap_slot(&t->ids, s, len)->key;
	return (int64_t)t->n++;
}

void strtab_release(struct strtab *t)
{
	strmap_release(&t->ids);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
