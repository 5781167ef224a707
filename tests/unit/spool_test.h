/* SPDX-License-Identifier: MIT */
/* spool_test.h - helpers the spool unit tests share: an in-memory sink. */
#ifndef PROF_SPOOL_TEST_H
#define PROF_SPOOL_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof.h"

struct membuf {
	uint8_t *p;
	size_t len, cap;
	size_t fail_at;		/* fail writes that would pass this size; 0: never */
};

struct prof_writer membuf_sink(struct membuf *mb);
int open_bytes(const uint8_t *p, size_t len, struct prof_spool **ret);
void test_meta(struct prof_meta *m);
size_t write_rich(struct membuf *mb, size_t block_bytes, bool trailer);

#endif
