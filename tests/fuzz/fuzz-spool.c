/* SPDX-License-Identifier: MIT */
/*
 * fuzz-spool.c - libFuzzer entry point for the spool reader: any byte
 * string must give an error or a (partial) read, never a crash, a hang or
 * an unbounded allocation.  It also walks every sample's stack to the root
 * and looks up every definition, as a report would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk_stack(const struct prof_spool *sp, uint32_t id)
{
	const struct prof_stack_node *n;

	while ((n = prof_spool_stack(sp, id))) {
		const struct prof_frame *f = prof_spool_frame(sp, n->frame);

		if (!f)
			abort();	/* the reader promised every reference resolves */
		if (f->kind == PROF_FRAME_USER && !prof_spool_module(sp, f->ref))
			abort();
		if (f->kind == PROF_FRAME_ANON && !prof_spool_process(sp, f->ref))
			abort();
		id = n->parent;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_spool_status st;
	struct prof_spool *sp;
	struct prof_event ev;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	if (prof_spool_open_fd(fd, "fuzz", &sp) == 0) {
		while (prof_spool_next(sp, &ev) > 0) {
			if (ev.type == PROF_EV_SAMPLE) {
				walk_stack(sp, ev.sample->stack);
				if (!prof_spool_thread(sp, ev.sample->thread))
					abort();
			}
		}
		prof_spool_status(sp, &st);
		prof_spool_close(sp);
	}
	close(fd);
	return 0;
}
