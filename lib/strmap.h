/* SPDX-License-Identifier: MIT */
/*
 * strmap.h - a hash map from byte strings (copied) to 32-bit ids, for the
 * report side: ELF files by (path, build-id), functions by (name, module);
 * and over it a table of strings numbered in order.
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

/*
 * Strings each kept once, numbered from 0 in the order they came: the
 * string tables of the exports that refer to names by index (gecko,
 * html).  Zeroed is empty.
 */
struct strtab {
	struct strmap ids;	/* string -> index + 1; it holds the copies */
	const char **v;		/* by index: the map's copies */
	size_t n, cap;
};

/* The index of S in T, added at the end if new: >= 0, or -ENOMEM. */
int64_t strtab_intern(struct strtab *t, const char *s);

void strtab_release(struct strtab *t);

#endif /* PROF_STRMAP_H */
