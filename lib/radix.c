/* SPDX-License-Identifier: MIT */
/*
 * radix.c - a least-significant-byte-first radix sort of indexes (see
 * radix.h): eight counting passes at most, each stable.
 */
#include <string.h>

#include "radix.h"

void radix_order(const uint64_t *key, size_t n, uint32_t *idx, uint32_t *tmp)
{
	uint32_t *in = idx, *out = tmp, *swap;
	size_t count[256], i, sum, c;
	unsigned shift;

	if (n < 2)
		return;
	for (shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[key[in[i]] >> shift & 0xff]++;
		if (count[key[in[0]] >> shift & 0xff] == n)
			continue;	/* a byte every key has */
		for (i = 0, sum = 0; i < 256; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			out[count[key[in[i]] >> shift & 0xff]++] = in[i];
		swap = in;
		in = out;
		out = swap;
	}
	if (in != idx)
		memcpy(idx, in, n * sizeof(*idx));
}
