/* SPDX-License-Identifier: MIT */
/* test-radix.c - radix_order() orders as a stable sort does, bytes shared or not. */
#include <stdlib.h>

#include "harness.h"
#include "radix.h"

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

TEST(radix_order_sorts_stably_by_two_keys)
{
	enum { N = 20000 };
	uint64_t *hi = malloc(N * sizeof(*hi)), *lo = malloc(N * sizeof(*lo)), x = 88172645463325252ull;
	uint32_t *idx = malloc(N * sizeof(*idx)), *tmp = malloc(N * sizeof(*tmp));
	size_t i;

	CHECK(hi && lo && idx && tmp);
	for (i = 0; i < N; i++) {
		/* few groups with a shared high byte, addresses of every width */
		hi[i] = 0x0300000000000000ull | (next(&x) % 7) << 32;
		lo[i] = next(&x) >> (next(&x) % 64);
		idx[i] = (uint32_t)i;
	}
	radix_order(lo, N, idx, tmp);
	radix_order(hi, N, idx, tmp);
	for (i = 1; i < N; i++) {
		uint32_t a = idx[i - 1], b = idx[i];

		CHECK(hi[a] < hi[b] || (hi[a] == hi[b] && lo[a] < lo[b]) ||
		      (hi[a] == hi[b] && lo[a] == lo[b] && a < b));
	}
	/* a permutation: every index once */
	for (i = 0; i < N; i++)
		tmp[i] = 0;
	for (i = 0; i < N; i++)
		tmp[idx[i]]++;
	for (i = 0; i < N; i++)
		CHECK_INT(tmp[i], ==, 1);
	/* all keys equal, and one key: left as they are */
	for (i = 0; i < N; i++) {
		lo[i] = 42;
		idx[i] = (uint32_t)(N - 1 - i);
	}
	radix_order(lo, N, idx, tmp);
	CHECK_INT(idx[0], ==, N - 1);
	radix_order(lo, 1, idx, tmp);
	CHECK_INT(idx[0], ==, N - 1);
	free(hi);
	free(lo);
	free(idx);
	free(tmp);
}
