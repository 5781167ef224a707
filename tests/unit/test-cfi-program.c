/* SPDX-License-Identifier: MIT */
/*
 * test-cfi-program.c - the CFI programs run by cfi_program.c, held against
 * libdw's answers on every FDE of real files (glibc, the dynamic loader,
 * gcc's cc1, libstdc++, python3, a test target), on one hand-made FDE
 * whose rows are known, and on that FDE cut short at every byte.  Each
 * row is held at three addresses; PROF_TEST_CFI_EVERY=1 holds it at all
 * of them (a minute or more).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "unwind/cfi_program.h"
#include "unwind/unwind_table.h"

/* gcc's cc1, the biggest program with .eh_frame here; NULL without gcc. */
static const char *cc1_path(void)
{
	static char path[PATH_MAX];
	FILE *p = popen("gcc -print-prog-name=cc1 2>/dev/null", "r");
	size_t n;

	if (!p)
		return NULL;
	n = fread(path, 1, sizeof(path) - 1, p);
	pclose(p);
	while (n && (path[n - 1] == '\n' || path[n - 1] == '\r'))
		n--;
	path[n] = 0;
	return n && access(path, R_OK) == 0 ? path : NULL;
}

static void cross_check(const char *path, bool required)
{
	struct utable_cross c;
	int r;

	if (!path || access(path, R_OK) != 0) {
		CHECK(!required);
		return;
	}
	r = utable_cross_check(path, getenv("PROF_TEST_CFI_EVERY") != NULL, &c);
	if (r == -ENOTSUP && !required)
		return;
	CHECK_INT(r, ==, 0);
	if (c.differ)
		fprintf(stderr, "%s: %llu of %llu addresses differ; the first, %#llx: ours cfa %u%+d "
			"bp %u%+d flags %u, libdw's cfa %u%+d bp %u%+d flags %u\n", path,
			(unsigned long long)c.differ, (unsigned long long)c.addrs,
			(unsigned long long)c.first_svma, c.ours.cfa, c.ours.cfa_off, c.ours.bp,
			c.ours.bp_off, c.ours.flags, c.theirs.cfa, c.theirs.cfa_off, c.theirs.bp,
			c.theirs.bp_off, c.theirs.flags);
	if (getenv("PROF_TEST_VERBOSE"))
		fprintf(stderr, "%s: %llu FDEs, %llu refused, %llu rows, %llu addresses\n", path,
			(unsigned long long)c.fdes, (unsigned long long)c.refused,
			(unsigned long long)c.rows, (unsigned long long)c.addrs);
	CHECK_INT(c.fdes, >, 0);
	CHECK_INT(c.rows, >=, c.fdes - c.refused);
	CHECK_INT(c.differ, ==, 0);
	/* what compilers write runs here: libdw is asked for at most one in a hundred */
	CHECK_INT(c.refused * 100, <=, c.fdes);
}

TEST(cfi_programs_run_here_agree_with_libdw_on_every_fde_of_real_files)
{
	CHECK_CALL(cross_check("/lib/x86_64-linux-gnu/libc.so.6", true));
	CHECK_CALL(cross_check("/lib64/ld-linux-x86-64.so.2", true));
	CHECK_CALL(cross_check(t_target("ladder"), true));
	CHECK_CALL(cross_check(cc1_path(), false));
	CHECK_CALL(cross_check("/lib/x86_64-linux-gnu/libstdc++.so.6", false));
	CHECK_CALL(cross_check("/usr/bin/python3.11", false));
	CHECK_CALL(cross_check("/lib/x86_64-linux-gnu/libz.so.1", false));
	CHECK_CALL(cross_check("/lib/x86_64-linux-gnu/libgmp.so.10", false));
}

/*
 * A CIE ("zR": pc-relative sdata4 addresses; code alignment 1, data -8,
 * the return address in r16) and its FDE: push rbp; mov rsp,rbp; ...;
 * leave.  Its function is 0x20 bytes at address 0x1000 (the image's bytes
 * are at address 0x1000 - 0x100 + their offset).
 */
static const uint8_t cie_fde[] = {
	/* CIE: length, id 0, version 1, "zR", 1, -8, 16, augmentation 1 byte: 0x1b */
	0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x01, 0x1b,
	/* DW_CFA_def_cfa rsp 8; DW_CFA_offset r16 1 (at CFA - 8); nops */
	0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0,
	/* FDE at 0x18: length, CIE pointer (0x1c back to 0), pc_begin, range, no augmentation */
	0x24, 0, 0, 0, 0x1c, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0x00,
	/* advance 1; def_cfa_offset 16; offset rbp 2 (CFA - 16) */
	0x41, 0x0e, 0x10, 0x86, 0x02,
	/* advance 3; def_cfa_register rbp */
	0x43, 0x0d, 0x06,
	/* advance 16; def_cfa rsp 8 (after leave) */
	0x50, 0x0c, 0x07, 0x08,
	/* remember; advance 4; undefined r16; advance 2; restore_state */
	0x0a, 0x44, 0x07, 0x10, 0x42, 0x0b, 0, 0, 0, 0, 0,
};

#define FDE_OFF 0x18
#define PC_BEGIN_FIELD (FDE_OFF + 8)

static void make_image(uint8_t *buf, struct cfi_image *img, size_t size)
{
	int32_t rel;

	memcpy(buf, cie_fde, sizeof(cie_fde));
	img->data = buf;
	img->size = size;
	img->vaddr_delta = 0x1000 - 0x100;
	/* pc_begin, pc-relative: 0x1000 from the field's own address */
	rel = (int32_t)(0x1000 - (PC_BEGIN_FIELD + img->vaddr_delta));
	memcpy(buf + PC_BEGIN_FIELD, &rel, 4);
}

TEST(cfi_program_of_a_known_fde_gives_its_rows)
{
	uint8_t buf[sizeof(cie_fde)];
	struct cfi_image img;
	struct cfi_rows rows = { 0 };
	static const struct {
		uint64_t lo, hi;
		uint8_t cfa, bp;
		int32_t cfa_off;
		int16_t bp_off;
	} want[] = {
		{ 0x1000, 0x1001, UCFA_RSP, UBP_SAME, 8, 0 },
		{ 0x1001, 0x1004, UCFA_RSP, UBP_AT, 16, -16 },
		{ 0x1004, 0x1014, UCFA_RBP, UBP_AT, 16, -16 },
		{ 0x1014, 0x1018, UCFA_RSP, UBP_AT, 8, -16 },
		{ 0x1018, 0x101a, UCFA_END, UBP_SAME, 0, 0 },
		{ 0x101a, 0x1020, UCFA_RSP, UBP_AT, 8, -16 },
	};
	size_t i;

	make_image(buf, &img, sizeof(buf));
	CHECK_INT(cfi_fde_rows(&img, FDE_OFF, &rows), ==, 0);
	CHECK_INT(rows.pc_begin, ==, 0x1000);
	CHECK_INT(rows.pc_end, ==, 0x1020);
	CHECK_INT(rows.n, ==, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < rows.n; i++) {
		CHECK_INT(rows.v[i].lo, ==, want[i].lo);
		CHECK_INT(rows.v[i].hi, ==, want[i].hi);
		CHECK_INT(rows.v[i].r.cfa, ==, want[i].cfa);
		if (want[i].cfa == UCFA_END)
			continue;
		CHECK_INT(rows.v[i].r.cfa_off, ==, want[i].cfa_off);
		CHECK_INT(rows.v[i].r.bp, ==, want[i].bp);
		CHECK_INT(rows.v[i].r.bp_off, ==, want[i].bp_off);
	}
	cfi_rows_release(&rows);
}

TEST(cfi_program_cut_short_or_pointed_wrong_is_refused_not_read_past)
{
	struct cfi_rows rows = { 0 };
	struct cfi_image img;
	size_t n;

	/* every length short of the whole: each read stays inside (ASan says) */
	for (n = 0; n < FDE_OFF + 0x28; n++) {
		uint8_t *buf = malloc(sizeof(cie_fde));

		CHECK(buf);
		make_image(buf, &img, n);
		CHECK_INT(cfi_fde_rows(&img, FDE_OFF, &rows), <, 0);
		free(buf);
	}
	{
		uint8_t buf[sizeof(cie_fde)];

		make_image(buf, &img, sizeof(buf));
		CHECK_INT(cfi_fde_rows(&img, 0, &rows), ==, -EINVAL);	/* a CIE */
		CHECK_INT(cfi_fde_rows(&img, sizeof(buf), &rows), ==, -EINVAL);
		buf[FDE_OFF + 4] = 0x40;	/* a CIE pointer before the file */
		CHECK_INT(cfi_fde_rows(&img, FDE_OFF, &rows), ==, -EINVAL);
		make_image(buf, &img, sizeof(buf));
		buf[FDE_OFF + 17] = 0x0b;	/* DW_CFA_restore_state with nothing remembered */
		CHECK_INT(cfi_fde_rows(&img, FDE_OFF, &rows), ==, -EINVAL);
		make_image(buf, &img, sizeof(buf));
		buf[FDE_OFF + 17] = 0x01;	/* DW_CFA_set_loc: libdw's */
		CHECK_INT(cfi_fde_rows(&img, FDE_OFF, &rows), ==, -ENOTSUP);
	}
	cfi_rows_release(&rows);
}
