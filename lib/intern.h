/* SPDX-License-Identifier: MIT */
/*
 * intern.h - a hash map from a 128-bit key to a 32-bit id, for interning
 * frames and stack nodes.  It grows with distinct keys only.
 */
#ifndef PROF_INTERN_H
#define PROF_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern_slot {
	uint64_t a, b;
	uint32_t id;		/* 0: empty slot */
};

struct intern_map {
	struct intern_slot *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t used;
};

void intern_init(struct intern_map *m);
void intern_release(struct intern_map *m);

/* The id stored for (A, B), or 0. */
uint32_t intern_find(const struct intern_map *m, uint64_t a, uint64_t b);

/*
 * Start loading the slot of (A, B): lookups that do not depend on each
 * other go to memory at once, each else a miss of the CPU's caches.
 */
void intern_prefetch(const struct intern_map *m, uint64_t a, uint64_t b);

/* Store ID (> 0) for (A, B), which must not be present.  0 or -ENOMEM. */
int intern_insert(struct intern_map *m, uint64_t a, uint64_t b, uint32_t id);

/* Store ID (> 0) for (A, B), replacing what was there.  0 or -ENOMEM. */
int intern_set(struct intern_map *m, uint64_t a, uint64_t b, uint32_t id);

#endif /* PROF_INTERN_H */
