/* SPDX-License-Identifier: MIT */
/*
 * test-jit-names.c - JIT code named as it was at each sample: code loaded
 * where other code was is another frame, a sample processed after the
 * replacement still gets the code it ran, moves keep the name, and what
 * is kept of replaced code stays bounded.
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "record/jit_names.h"
#include "unwind/unwind.h"

/* The address J gives a frame at PC of a sample at TIME, in a process without files. */
static uint64_t frame_at(struct jit_names *j, uint64_t pc, uint64_t time)
{
	static struct unwind_result u;
	struct addr_space as;

	as_init(&as, 1, NULL);
	u.n = 1;
	u.pc[0] = pc;
	if (jit_names_frames(j, &as, &u, time) < 0)
		u.pc[0] = 0;
	as_release(&as);
	return u.pc[0];
}

static const char *name_of(struct jit_names *j, uint64_t addr)
{
	const struct jit_sym *v;
	size_t n, i;

	v = jit_names_used(j, &n);
	for (i = 0; i < n; i++)
		if (addr >= v[i].start && addr - v[i].start < v[i].size)
			return v[i].name;
	return NULL;
}

TEST(jit_names_code_replaced_at_an_address_is_another_frame)
{
	struct jit_names j = { 0 };
	uint64_t a, a_late, b, c;

	CHECK_INT(jit_names_load(&j, 0x1000, 0x1100, 100, "a"), ==, 0);
	a = frame_at(&j, 0x1010, 150);
	CHECK(a >= PROF_JIT_FRAME_BASE && a < PROF_PYTHON_FRAME_BASE);
	CHECK_STR(name_of(&j, a), "a");
	/* b replaces a at 200 */
	CHECK_INT(jit_names_load(&j, 0x1000, 0x1100, 200, "b"), ==, 0);
	a_late = frame_at(&j, 0x1010, 160);	/* taken before, processed after */
	b = frame_at(&j, 0x1010, 250);
	CHECK_INT(a_late, ==, a);
	CHECK(b != a);
	CHECK_STR(name_of(&j, b), "b");
	CHECK_INT(frame_at(&j, 0x1011, 260), ==, b + 1);
	/* before any load, or outside every load: the address as it is */
	CHECK_INT(frame_at(&j, 0x1010, 50), ==, 0x1010);
	CHECK_INT(frame_at(&j, 0x2000, 250), ==, 0x2000);
	/* a move keeps the name */
	CHECK_INT(jit_names_load(&j, 0x2000, 0x2040, 300, "c"), ==, 0);
	CHECK_INT(jit_names_move(&j, 0x2000, 0x3000, 0x40, 400), ==, 0);
	c = frame_at(&j, 0x3004, 450);
	CHECK_STR(name_of(&j, c), "c");
	CHECK_INT(frame_at(&j, 0x2004, 450), ==, 0x2004);
	jit_names_release(&j);
}

TEST(jit_names_keep_seconds_of_replaced_code_not_all_of_it)
{
	struct jit_names j = { 0 };
	uint64_t i, t = 0;

	/* ten minutes of code reloaded at the same few addresses every millisecond */
	for (i = 0; i < 600000; i++) {
		t = i * 1000000;
		CHECK_INT(jit_names_load(&j, 0x10000 + (i % 8) * 0x100, 0x10000 + (i % 8) * 0x100 + 0x80,
					 t, i % 2 ? "odd" : "even"), ==, 0);
	}
	CHECK_INT(j.nlive, ==, 8);
	CHECK(j.nold <= JIT_HISTORY_NS / 1000000 + 8);
	CHECK_INT(j.nnames, ==, 2);
	jit_names_forget_code(&j);
	CHECK_INT(j.nlive + j.nold, ==, 0);
	jit_names_release(&j);
}
