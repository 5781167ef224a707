/* SPDX-License-Identifier: MIT */
/*
 * strmap.h - a hash map from byte strings (copied) to 32-bit ids, for the
 * report side: ELF files by (path, build-id), functions by (name, module).
 * Private to lib/.
 */
#ifndef PROF_STRMAP_H
#define PROF_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap_slot {
	uint64_t hash;
	char *key;		/* NULL: empty slot */
	size_t len;
	uint32_t id;
};

struct strmap {
	struct strmap_slot *slots;
	size_t mask;		/* capacity - 1, a power of two */
	size_t used;
};

/* The id stored for the LEN bytes at KEY, or 0. */
uint32_t strmap_find(const struct strmap *m, const void *key, size_t len);

/* Store ID (> 0) for KEY, which must not be present.  0 or -ENOMEM. */
int strmap_insert(struct strmap *m, const void *key, size_t len, uint32_t id);

void strmap_release(struct strmap *m);

#endif /* PROF_STRMAP_H */
