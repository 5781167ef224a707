/* SPDX-License-Identifier: MIT */
/*
 * path_cache.h - the spool's stack node of a user stack, by a 128-bit hash
 * of its path: the truncation, then each frame (module and offset, or the
 * process and address of anonymous code) from the root.  Every key of a
 * stack follows from its frames alone, so the lookups of all its frames
 * are independent and go to memory at once; the spool's own maps take two
 * lookups a frame, each waiting on the one before.  A fixed number of
 * slots, each kept by the last that took it: the memory does not grow.
 */
#ifndef PROF_PATH_CACHE_H
#define PROF_PATH_CACHE_H

#include <stdint.h>

#define PATH_CACHE_SLOTS 65536	/* a power of two */

/* 16 bytes, four to a cache line: the key's 96 bits kept are plenty */
struct path_slot {
	uint64_t a;
	uint32_t b;		/* the high half of the key's b */
	uint32_t node;		/* 0: empty */
};

struct path_cache {
	struct path_slot *slots;	/* PATH_CACHE_SLOTS, or NULL: not made yet (or no memory) */
};

struct path_key {
	uint64_t a, b;
};

void path_cache_init(struct path_cache *c);
void path_cache_release(struct path_cache *c);

/* Forget every node: the spool's ids start again (a new file). */
void path_cache_clear(struct path_cache *c);

/* The key of a stack before its first frame. */
static inline struct path_key path_key_seed(uint64_t space, uint64_t cause)
{
	return (struct path_key){ .a = space * 0x9e3779b97f4a7c15ull ^ cause,
				  .b = (space + 0x632be59bd9b4e019ull) ^ cause * 0xbf58476d1ce4e5b9ull };
}

/* The key of K's path with PC appended: two independent mixes. */
static inline struct path_key path_key_step(struct path_key k, uint64_t pc)
{
	uint64_t a = (k.a ^ pc) * 0xbf58476d1ce4e5b9ull, b = (k.b + pc) * 0x94d049bb133111ebull;

	a ^= a >> 31;
	a *= 0x94d049bb133111ebull;
	a ^= a >> 29;
	b ^= b >> 32;
	b *= 0xd6e8feb86659fd93ull;
	b ^= b >> 28;
	return (struct path_key){ a, b };
}

static inline struct path_slot *path_slot_of(const struct path_cache *c, struct path_key k)
{
	return &c->slots[(k.a >> 7 ^ k.b) & (PATH_CACHE_SLOTS - 1)];
}

/* Start loading K's slot. */
static inline void path_cache_prefetch(const struct path_cache *c, struct path_key k)
{
	if (c->slots)
		__builtin_prefetch(path_slot_of(c, k));
}

/* K's node, or 0. */
static inline uint32_t path_cache_find(const struct path_cache *c, struct path_key k)
{
	const struct path_slot *s;

	if (!c->slots)
		return 0;
	s = path_slot_of(c, k);
	return s->a == k.a && s->b == (uint32_t)(k.b >> 32) ? s->node : 0;
}

/* K's node is NODE (> 0); without the memory for the slots, nothing is kept. */
void path_cache_put(struct path_cache *c, struct path_key k, uint32_t node);

#endif /* PROF_PATH_CACHE_H */
