/* SPDX-License-Identifier: MIT */
/*
 * unwind_capture.c - PROF_UNWIND_CAPTURE=FILE: the raw samples of a
 * recording, for bench/unwind to replay through each engine, and the
 * reader of such a file (unwind-replay; the unit test, whose samples a
 * program took of itself).  Kept out of the spool: a sample here is its
 * registers and its whole stack copy.
 *
 * The file: the magic "PROFUNW1", then records, all little-endian:
 *   'M' u32 pid, u32 n, then n modules: u64 start, end, pgoff; u32 dev
 *       major, minor; u64 inode; u16 length, the path (no NUL); then u32
 *       k and k anonymous executable ranges: u64 start, end.  The
 *       mappings of PID from now on (written when they changed since).
 *   'S' u32 pid, u32 tid, u64 regs[17] (a sample's: enum sample_reg), u64 n,
 *       n stack bytes.
 * Write errors end the capture (the recording goes on).  The reader
 * bounds what it allocates (a stack copy at most STACK_MAX) and says
 * where a file is not a capture.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind.h"

#define CAPTURE_MAGIC "PROFUNW1"
/* The most a sample's stack copy can be: perf copies at most 64 KiB. */
#define STACK_MAX (1u << 20)

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

/* ---- reading a capture back ---------------------------------------------- */

struct reader {
	FILE *f;
	const char *path;
	bool short_read;
};

static bool get(struct reader *rd, void *p, size_t n)
{
	if (rd->short_read || fread(p, 1, n, rd->f) != n)
		rd->short_read = true;
	return !rd->short_read;
}

/* A new version of a pid's address space: its modules and anonymous ranges. */
static int read_space(struct reader *rd, struct as_shared *shared, struct unwind_capture *c,
		      uint32_t pid, uint32_t nmods, char *name)
{
	struct unwind_capture_space *s;
	uint32_t i, nanon;
	void *v = c->spaces;
	int r;

	r = grow_array(&v, &c->spaces_cap, c->nspaces + 1, sizeof(*c->spaces));
	c->spaces = v;
	if (r < 0 || !(s = calloc(1, sizeof(*s))))
		return error_setx(-ENOMEM, "out of memory");
	c->spaces[c->nspaces++] = s;
	s->pid = pid;
	as_init(&s->as, (pid_t)pid, shared);
	for (i = 0; i < nmods; i++) {
		uint64_t v3[3], ino;
		uint32_t dev[2];
		uint16_t len;
		uint32_t retired[16];
		size_t nretired = 16;
		struct as_module m;

		if (!get(rd, v3, sizeof(v3)) || !get(rd, dev, sizeof(dev)) || !get(rd, &ino, 8) ||
		    !get(rd, &len, sizeof(len)) || !get(rd, name, len))
			return 0;	/* the caller says where it ended */
		name[len] = '\0';
		/* the process is gone: its files are read by their paths */
		if (as_describe(&s->as, v3[0], v3[1], v3[2], dev[0], dev[1], ino, name, &m) < 0 ||
		    as_add(&s->as, &m, retired, &nretired) < 0)
			return error_setx(-ENOMEM, "out of memory");
	}
	if (!get(rd, &nanon, sizeof(nanon)))
		return 0;
	for (i = 0; i < nanon; i++) {
		uint64_t range[2];

		if (!get(rd, range, sizeof(range)))
			return 0;
		if (as_add_anon(&s->as, range[0], range[1]) < 0)
			return error_setx(-ENOMEM, "out of memory");
	}
	return 0;
}

/* The latest version of PID's space, or c->nspaces. */
static size_t space_of(const struct unwind_capture *c, uint32_t pid)
{
	size_t i;

	for (i = c->nspaces; i-- > 0;)
		if (c->spaces[i]->pid == pid)
			return i;
	return c->nspaces;
}

static int read_sample(struct reader *rd, struct unwind_capture *c, uint32_t pid, uint32_t tid)
{
	struct unwind_capture_sample *s;
	void *v = c->samples;
	int r;

	r = grow_array(&v, &c->samples_cap, c->nsamples + 1, sizeof(*c->samples));
	c->samples = v;
	if (r < 0)
		return error_setx(-ENOMEM, "out of memory");
	s = &c->samples[c->nsamples];
	memset(s, 0, sizeof(*s));
	s->space = space_of(c, pid);
	s->tid = tid;
	if (s->space == c->nspaces)
		return error_setx(-EBADMSG, "'%s': a sample of pid %u before its mappings", rd->path,
				  pid);
	if (!get(rd, s->regs, sizeof(s->regs)) || !get(rd, &s->stack_size, 8))
		return 0;
	if (s->stack_size > STACK_MAX)
		return error_setx(-EBADMSG, "'%s': a stack copy of %llu bytes, above %u", rd->path,
				  (unsigned long long)s->stack_size, STACK_MAX);
	s->stack = malloc(s->stack_size ? s->stack_size : 1);
	if (!s->stack)
		return error_setx(-ENOMEM, "out of memory");
	c->nsamples++;
	get(rd, s->stack, s->stack_size);
	return 0;
}

int unwind_capture_read(const char *path, struct as_shared *shared, struct unwind_capture *ret)
{
	struct unwind_capture c = { 0 };
	struct reader rd = { .path = path };
	char magic[8], *name = malloc(UINT16_MAX + 1);
	int ch, r = 0;

	if (!name)
		return error_setx(-ENOMEM, "out of memory");
	rd.f = fopen(path, "re");
	if (!rd.f) {
		free(name);
		return error_set(-errno, "cannot read '%s'", path);
	}
	if (!get(&rd, magic, sizeof(magic)) || memcmp(magic, CAPTURE_MAGIC, sizeof(magic)))
		r = error_setx(-EBADMSG, "'%s' is not an unwind capture (PROF_UNWIND_CAPTURE)",
			       path);
	while (r >= 0 && !rd.short_read && (ch = fgetc(rd.f)) != EOF) {
		uint32_t head[2];

		if (!get(&rd, head, sizeof(head)))
			break;
		if (ch == 'M')
			r = read_space(&rd, shared, &c, head[0], head[1], name);
		else if (ch == 'S')
			r = read_sample(&rd, &c, head[0], head[1]);
		else
			r = error_setx(-EBADMSG, "'%s': an unknown record '%c' at byte %ld", path, ch,
				       ftell(rd.f) - 9);
	}
	if (r >= 0 && rd.short_read)
		r = error_setx(-EBADMSG, "'%s' ends inside a record", path);
	fclose(rd.f);
	free(name);
	if (r < 0) {
		unwind_capture_release(&c);
		return r;
	}
	*ret = c;
	return 0;
}

void unwind_capture_release(struct unwind_capture *c)
{
	size_t i;

	for (i = 0; i < c->nsamples; i++)
		free(c->samples[i].stack);
	for (i = 0; i < c->nspaces; i++) {
		as_release(&c->spaces[i]->as);
		free(c->spaces[i]);
	}
	free(c->samples);
	free(c->spaces);
	memset(c, 0, sizeof(*c));
}
