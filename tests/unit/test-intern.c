/* SPDX-License-Identifier: MIT */
/* test-intern.c - the interning hash map keeps every key through growth. */
#include <string.h>

#include "harness.h"
#include "intern.h"

TEST(intern_map_survives_growth)
{
	struct intern_map m;
	uint32_t i;

	intern_init(&m);
	CHECK_INT(intern_find(&m, 1, 2), ==, 0);
	for (i = 1; i <= 100000; i++)
		CHECK_INT(intern_insert(&m, i * 7919ull, i % 13, i), ==, 0);
	for (i = 1; i <= 100000; i++)
		CHECK_INT(intern_find(&m, i * 7919ull, i % 13), ==, i);
	CHECK_INT(intern_find(&m, 7919ull, 2), ==, 0);
	CHECK_INT(intern_find(&m, 0, 0), ==, 0);
	CHECK(m.used == 100000 && (m.mask + 1) >= 200000);
	intern_release(&m);
	CHECK(m.slots == NULL);
}
