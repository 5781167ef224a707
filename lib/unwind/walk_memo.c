/* SPDX-License-Identifier: MIT */
/*
 * walk_memo.c - each thread's last walk (see walk_memo.h).  The memos are
 * a fixed number of slots, allocated on first use: memory does not grow
 * with threads or time.
 */
#include <stdlib.h>

#include "walk_memo.h"

static size_t slot_of(const struct addr_space *as)
{
	return (size_t)(uint32_t)as->tid % WALK_MEMOS;
}

struct walk_memo *walk_memo_of(struct unwinder *uw, const struct addr_space *as)
{
	struct walk_memo *m = uw->memos ? uw->memos[slot_of(as)] : NULL;

	return m && m->n && m->as == as && m->tid == as->tid && m->gen == as->gen &&
			       m->jit_gen == as->jit.gen
		       ? m
		       : NULL;
}

struct walk_memo *walk_memo_begin(struct unwinder *uw, const struct addr_space *as)
{
	struct walk_memo *m;

	if (!uw->memos && !(uw->memos = calloc(WALK_MEMOS, sizeof(*uw->memos))))
		return NULL;
	if (!uw->memo_spare && !(uw->memo_spare = malloc(sizeof(*uw->memo_spare))))
		return NULL;
	m = uw->memo_spare;
	m->as = as;
	m->gen = as->gen;
	m->jit_gen = as->jit.gen;
	m->tid = as->tid;
	m->n = 0;
	return m;
}

void walk_memo_keep(struct unwinder *uw, struct walk_memo *m)
{
	size_t i = slot_of(m->as);

	uw->memo_spare = uw->memos[i];
	uw->memos[i] = m;
}

/* What reading the word at ADDR of AS's copy gives, in *V. */
static enum memo_read word_at(const struct addr_space *as, uint64_t addr, uint64_t *v)
{
	return as_stack_word(as, addr, v) ? MEMO_READ_OK : MEMO_READ_OUT;
}

bool walk_memo_holds(const struct addr_space *as, const struct memo_frame *f)
{
	uint64_t v;

	if (!f->replay || word_at(as, f->ra_at, &v) != MEMO_READ_OK || v != f->ra)
		return false;
	if (f->bp_read == MEMO_READ_NONE)
		return true;
	if (word_at(as, f->bp_at, &v) != f->bp_read)
		return false;
	return f->bp_read == MEMO_READ_OUT || v == f->bp;
}

void walk_memo_release(struct unwinder *uw)
{
	size_t i;

	for (i = 0; uw->memos && i < WALK_MEMOS; i++)
		free(uw->memos[i]);
	free(uw->memos);
	free(uw->memo_spare);
	uw->memos = NULL;
	uw->memo_spare = NULL;
}
