/* SPDX-License-Identifier: MIT */
/*
 * unwind_capture.c - PROF_UNWIND_CAPTURE=FILE: the raw samples of a
 * recording, for bench/unwind to replay through each engine.  Kept out of
 * the spool: a sample here is its registers and its whole stack copy.
 *
 * The file: the magic "PROFUNW1", then records, all little-endian:
 *   'M' u32 pid, u32 n, then n modules: u64 start, end, pgoff; u32 dev
 *       major, minor; u64 inode; u16 length, the path (no NUL); then u32
 *       k and k anonymous executable ranges: u64 start, end.  The
 *       mappings of PID from now on (written when they changed since).
 *   'S' u32 pid, u32 tid, u64 regs[17] (a sample's: enum sample_reg), u64 n,
 *       n stack bytes.
 * Write errors end the capture (the recording goes on).
 */
#include <string.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind.h"

#define CAPTURE_MAGIC "PROFUNW1"

static void put(struct unwinder *uw, const void *p, size_t n)
{
	if (uw->capture && fwrite(p, 1, n, uw->capture) != n) {
		pr_warn("cannot write the unwind capture: stopped");
		fclose(uw->capture);
		uw->capture = NULL;
	}
}

static void put_modules(struct unwinder *uw, struct addr_space *as)
{
	uint32_t head[2] = { (uint32_t)as->pid, (uint32_t)as->nmods };
	size_t i;

	put(uw, "M", 1);
	put(uw, head, sizeof(head));
	for (i = 0; i < as->nmods; i++) {
		const struct as_module *m = &as->mods[i];
		uint64_t v[3] = { m->start, m->end, m->pgoff };
		uint32_t dev[2] = { m->dev_major, m->dev_minor };
		uint16_t len = (uint16_t)strnlen(m->path, UINT16_MAX);

		put(uw, v, sizeof(v));
		put(uw, dev, sizeof(dev));
		put(uw, &m->inode, sizeof(m->inode));
		put(uw, &len, sizeof(len));
		put(uw, m->path, len);
	}
	head[0] = (uint32_t)as->nanon;
	put(uw, head, sizeof(head[0]));
	put(uw, as->anon, as->nanon * sizeof(*as->anon));
	as->captured_gen = as->gen;
	as->captured_anon_gen = as->anon_gen;
}

void unwind_capture_sample(struct unwinder *uw, struct addr_space *as, pid_t tid,
			   const uint64_t *regs, const uint8_t *stack, uint64_t stack_size)
{
	uint32_t ids[2] = { (uint32_t)as->pid, (uint32_t)tid };

	if (!uw->captured++)
		put(uw, CAPTURE_MAGIC, strlen(CAPTURE_MAGIC));
	if (as->captured_gen != as->gen || as->captured_anon_gen != as->anon_gen)
		put_modules(uw, as);
	put(uw, "S", 1);
	put(uw, ids, sizeof(ids));
	put(uw, regs, SAMPLE_REGS_COUNT * sizeof(*regs));
	put(uw, &stack_size, sizeof(stack_size));
	put(uw, stack, stack_size);
}
