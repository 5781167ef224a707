/* SPDX-License-Identifier: MIT */
/*
 * path_cache.c - the slots of path_cache.h, made at the first store: a
 * recording without user stacks never has them.
 */
#include <stdlib.h>
#include <string.h>

#include "path_cache.h"

void path_cache_init(struct path_cache *c)
{
	c->slots = NULL;
}

void path_cache_release(struct path_cache *c)
{
	free(c->slots);
	c->slots = NULL;
}

void path_cache_clear(struct path_cache *c)
{
	if (c->slots)
		memset(c->slots, 0, PATH_CACHE_SLOTS * sizeof(*c->slots));
}

void path_cache_put(struct path_cache *c, struct path_key k, uint32_t node)
{
	struct path_slot *s;

	/* a cache: without memory for it, stacks are interned the long way */
	if (!c->slots && !(c->slots = calloc(PATH_CACHE_SLOTS, sizeof(*c->slots))))
		return;
	s = path_slot_of(c, k);
	*s = (struct path_slot){ .a = k.a, .b = (uint32_t)(k.b >> 32), .node = node };
}
