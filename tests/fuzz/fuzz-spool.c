/* SPDX-License-Identifier: MIT */
/*
 * fuzz-spool.c - libFuzzer entry point for the spool reader: any byte
 * string must give an error at open or a (partial) read, never a crash, a
 * hang or an unbounded allocation; and once open, reading never fails but
 * for want of memory: prof_spool_next() stops at a bad block with 0 and
 * says why in the status (prof.h), so that a report shows what came
 * before.  It also walks every sample's stack to the root and looks up
 * every definition, and then writes every report format of what it read
 * (to /dev/null), as prof report would: ungrouped, by thread and by
 * process, plain and inverted; a spool with off-CPU intervals weighed by
 * wall time.  It reads the input as two files of one recording too, as
 * prof report A B does.  mutate.c gives libFuzzer its inputs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

/* Every format of the report of SP, whose records were all read into P, inverted too. */
static void write_reports(const struct prof_spool *sp, const struct prof_profile *p,
			  struct prof_symbolizer *sym)
{
	struct prof_report_opts o = { .sz = sizeof(o), .title = "fuzz" };
	FILE *out = fopen("/dev/null", "w");
	int inverted;

	if (!out)
		return;
	for (inverted = 0; inverted < 2; inverted++) {
		o.inverted = inverted;
		for (o.format = 0; o.format < (PROF_REPORT_SVG + 1); o.format++)
			prof_report_write(out, sp, p, sym, &o);
	}
	fclose(out);
}

/*
 * Read every record of SP into the N profiles P, checking what the reader
 * promises: every reference resolves, reading ends without an error (a
 * bad block ends it with 0, the status saying why).
 */
static void read_all(struct prof_spool *sp, struct prof_profile **p, int n)
{
	PROF_OPTS(prof_spool_status, st);
	PROF_OPTS(prof_record, ev);
	int g, r;

	/* an off-CPU spool is weighed by wall time: its samples and intervals */
	for (g = 0; g < n; g++)
		if (prof_spool_meta(sp)->flags & PROF_META_OFFCPU)
			prof_profile_weigh(p[g], PROF_WEIGHT_WALL);
	while ((r = prof_spool_next(sp, &ev)) > 0) {
		if (ev.type == PROF_RECORD_OFFCPU) {
			walk_stack(sp, ev.offcpu->stack);
			walk_stack(sp, ev.offcpu->user_stack);
			if (!prof_spool_thread(sp, ev.offcpu->thread))
				abort();
			for (g = 0; g < n; g++)
				prof_profile_add_offcpu(p[g], sp, ev.offcpu, ev.offcpu->stack);
		}
		if (ev.type == PROF_RECORD_SAMPLE) {
			walk_stack(sp, ev.sample->stack);
			if (!prof_spool_thread(sp, ev.sample->thread))
				abort();
			for (g = 0; g < n; g++)
				prof_profile_add_sample(p[g], sp, ev.sample);
		}
	}
	if (r < 0 && r != -ENOMEM) {
		fprintf(stderr, "prof_spool_next: %d: %s\n", r, prof_errmsg());
		abort();
	}
	prof_spool_status(sp, &st);
	if ((st.state == PROF_SPOOL_STATE_CUT || st.state == PROF_SPOOL_STATE_CORRUPT) &&
	    !st.reason[0])
		abort();
}

/* A file of the LEN bytes at P, as a descriptor: -1 if none. */
static int memfd_of(const uint8_t *p, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd >= 0 && len && write(fd, p, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The input twice, as two files of one recording (spool_merge.c matches
 * what the second defines with what the first did), read and checked the
 * same way, and its top report written.
 */
static void read_as_two_files(const uint8_t *data, size_t size)
{
	struct prof_report_opts o = { .sz = sizeof(o), .title = "fuzz" };
	int fds[2] = { memfd_of(data, size), memfd_of(data, size) };
	char names[2][32];
	const char *paths[2] = { names[0], names[1] };
	struct prof_symbolizer *sym;
	struct prof_spool *sp = NULL;
	struct prof_profile *p = NULL;
	FILE *out;
	int i;

	for (i = 0; i < 2; i++)
		snprintf(names[i], sizeof(names[i]), "/proc/self/fd/%d", fds[i]);
	if (fds[0] >= 0 && fds[1] >= 0 && prof_profile_new(&p) == 0 &&
	    prof_spool_open_many(paths, 2, &sp) == 0) {
		read_all(sp, &p, 1);
		out = fopen("/dev/null", "w");
		if (out && prof_symbolizer_new(sp, NULL, &sym) == 0) {
			prof_report_write(out, sp, p, sym, &o);
			prof_symbolizer_free(sym);
		}
		if (out)
			fclose(out);
	}
	prof_spool_close(sp);
	prof_profile_free(p);
	for (i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_profile *p[(PROF_GROUP_PROCESS + 1)] = { NULL };
	struct prof_spool *sp = NULL;
	struct prof_symbolizer *sym;
	int fd = memfd_of(data, size);
	int g, ok = 1;

	if (fd < 0)
		return 0;
	for (g = 0; g < (PROF_GROUP_PROCESS + 1) && ok; g++)
		ok = prof_profile_new(&p[g]) == 0 &&
		     prof_profile_group_by(p[g], (enum prof_group_by)g) == 0;
	if (ok && prof_spool_open_fd(fd, "fuzz", &sp) == 0) {
		read_all(sp, p, (PROF_GROUP_PROCESS + 1));
		/* one symbolizer for the three, as prof report has: it reads the spool's files */
		if (prof_symbolizer_new(sp, NULL, &sym) == 0) {
			for (g = 0; g < (PROF_GROUP_PROCESS + 1); g++)
				write_reports(sp, p[g], sym);
			prof_symbolizer_free(sym);
		}
		read_as_two_files(data, size);
	}
	for (g = 0; g < (PROF_GROUP_PROCESS + 1); g++)
		prof_profile_free(p[g]);
	prof_spool_close(sp);
	close(fd);
	return 0;
}
