/* SPDX-License-Identifier: MIT */
/* spool_test.h - helpers the spool unit tests share: an in-memory sink, report text. */
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

struct prof_sink membuf_sink(struct membuf *mb);
int open_bytes(const uint8_t *p, size_t len, struct prof_spool **ret);
void test_meta(struct prof_meta *m);
size_t write_rich(struct membuf *mb, size_t block_bytes, bool trailer);

/*
 * The report of P in OPTS' format as a string (the caller frees it): for
 * top and tree (OPTS NULL is top) from the blank line that ends the header
 * on, less its first SKIP characters.  *RET: what prof_report_write()
 * returned.
 */
char *report_body(const struct prof_spool *sp, const struct prof_profile *p,
		  struct prof_symbolizer *sym, const struct prof_report_opts *opts, size_t skip,
		  int *ret);

/* Check that report(FX, OPTS), as the test file defines it, gives 0 and WANT. */
#define CHECK_REPORT(fx, opts, want)                                                       \
	do {                                                                               \
		int r_;                                                                    \
		char *got_ = report(fx, opts, &r_);                                        \
		bool same_ = !strcmp(got_, want);                                          \
		if (!same_)                                                                \
			printf("--- got:\n%s--- want:\n%s---\n", got_, want);              \
		free(got_);                                                                \
		CHECK_INT(r_, ==, 0);                                                      \
		CHECK(same_);                                                              \
	} while (0)

#endif
