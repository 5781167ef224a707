/* SPDX-License-Identifier: MIT */
/*
 * radix.h - the order of an array by 64-bit keys, a byte at a time: for
 * the tens of thousands of symbols or frames sorted at the end of a
 * recording, where qsort() would call a comparison through a pointer for
 * each of their n log n pairs.
 */
#ifndef PROF_RADIX_H
#define PROF_RADIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Reorder IDX[0..N) (indexes into KEY) by KEY[IDX[i]], ascending and
 * stably, so that sorting by a second key and then by a first orders by
 * both.  TMP: N entries of scratch.  The bytes every key shares are
 * skipped.
 */
void radix_order(const uint64_t *key, size_t n, uint32_t *idx, uint32_t *tmp);

#endif /* PROF_RADIX_H */
