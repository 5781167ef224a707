/* SPDX-License-Identifier: MIT */
/*
 * jitdump.c - the names in a JIT's jitdump file (the format of perf's
 * tools/perf/Documentation/jitdump-specification.txt): a header, then
 * records, each a prefix (id, total size, timestamp) and its body.  A
 * code load carries the range's address, size and a NUL-terminated name,
 * then the code itself; a code move gives a range a new address.
 *
 * The file is written by the target while it runs: it is read as hostile
 * input, every size checked against what is left, a record cut short
 * (the writer is still at it) the end of what is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jitdump.h"
#include "unwind/cfi_program.h"

#define JITDUMP_MAGIC 0x4A695444u	/* "JiTD" in the writer's byte order: ours */
#define HEADER_MIN 40
#define PREFIX_SIZE 16
#define LOAD_SIZE (PREFIX_SIZE + 40)	/* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_SIZE (PREFIX_SIZE + 48)	/* pid, tid, vma, old, new, code_size, code_index */
#define UNWIND_HEAD (PREFIX_SIZE + 24)	/* unwinding_size, eh_frame_hdr_size, mapped_size */
#define EH_FRAME_MAX (1u << 20)		/* the .eh_frame of one load, at most */
#define NAME_MAX_BYTES 4096
#define RECORD_MAX (1u << 30)
#define SYMS_MAX (16u << 20)		/* ranges kept of one file, at most */

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JIT_CODE_CLOSE = 3, JIT_CODE_UNWINDING_INFO = 4 };

bool jitdump_is_marker(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned long pid;
	char *end;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4))
		return false;
	pid = strtoul(base + 4, &end, 10);
	return end != base + 4 && pid > 0 && !strcmp(end, ".dump");
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int add(struct jit_sym **v, size_t *n, size_t *cap, uint64_t start, uint64_t size,
	       const char *name, size_t len)
{
	void *p = *v;
	char *copy;

	if (!size || start + size < start || *n >= SYMS_MAX)
		return 0;
	if (grow_array(&p, cap, *n + 1, sizeof(**v)) < 0)
		return -ENOMEM;
	*v = p;
	copy = strndup(name, len);
	if (!copy)
		return error_setx(-ENOMEM, "out of memory");
	(*v)[(*n)++] = (struct jit_sym){ .start = start, .size = size, .name = copy };
	return 0;
}

/* A move: the range loaded last at OLD is now at NEW. */
static int move(struct jit_sym **v, size_t *n, size_t *cap, size_t first, uint64_t old,
		uint64_t new, uint64_t size)
{
	size_t i;

	for (i = *n; i-- > first;)
		if ((*v)[i].start == old) {
			const char *name = (*v)[i].name;

			return add(v, n, cap, new, size, name, strlen(name));
		}
	return 0;
}

int jitdump_read(const char *path, struct jit_sym **v, size_t *n, size_t *cap)
{
	unsigned char head[HEADER_MIN], rec[MOVE_SIZE];
	char name[NAME_MAX_BYTES + 1];
	size_t first = *n;
	struct stat st;
	FILE *f;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	if (fread(head, 1, sizeof(head), f) != sizeof(head) || get32(head) != JITDUMP_MAGIC ||
	    get32(head + 8) < HEADER_MIN || get32(head + 8) > RECORD_MAX ||
	    fseeko(f, get32(head + 8), SEEK_SET) < 0)
		goto out;	/* not one, or another byte order than this machine's */
	for (;;) {
		uint32_t id, size;
		off_t at = ftello(f);
		size_t want, got;

		if (at < 0 || fread(rec, 1, PREFIX_SIZE, f) != PREFIX_SIZE)
			break;
		id = get32(rec);
		size = get32(rec + 4);
		if (size < PREFIX_SIZE || size > RECORD_MAX || (uint64_t)at + size > (uint64_t)st.st_size)
			break;	/* damaged, or still being written */
		if (id == JIT_CODE_CLOSE)
			break;
		if (id == JIT_CODE_LOAD && size >= LOAD_SIZE + 1) {
			uint64_t addr, csize;

			if (fread(rec + PREFIX_SIZE, 1, LOAD_SIZE - PREFIX_SIZE, f) !=
			    LOAD_SIZE - PREFIX_SIZE)
				break;
			addr = get64(rec + 32);
			csize = get64(rec + 40);
			if (csize > size - LOAD_SIZE)
				break;
			/* the name ends before the code: bounded, NUL-terminated */
			want = size - LOAD_SIZE - csize;
			if (want > NAME_MAX_BYTES)
				want = NAME_MAX_BYTES;
			got = fread(name, 1, want, f);
			if (got != want)
				break;
			name[got] = '\0';
			if (name[0])
				r = add(v, n, cap, addr, csize, name, strnlen(name, got));
		} else if (id == JIT_CODE_MOVE && size >= MOVE_SIZE) {
			if (fread(rec + PREFIX_SIZE, 1, MOVE_SIZE - PREFIX_SIZE, f) !=
			    MOVE_SIZE - PREFIX_SIZE)
				break;
			r = move(v, n, cap, first, get64(rec + 32), get64(rec + 40), get64(rec + 48));
		}
		if (r < 0 || fseeko(f, at + size, SEEK_SET) < 0)
			break;
	}
out:
	fclose(f);
	return r;
}

/* ---- the CFI of the code, as the file grows ------------------------------ */

void jitdump_tail_init(struct jitdump_tail *t)
{
	*t = (struct jitdump_tail){ .fd = -1 };
}

void jitdump_tail_release(struct jitdump_tail *t)
{
	if (t->fd >= 0)
		close(t->fd);
	free(t->eh);
	jitdump_tail_init(t);
}

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
	return off <= INT64_MAX && pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Give up on T: what it read stays. */
static void tail_dead(struct jitdump_tail *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->dead = true;
	free(t->eh);
	t->eh = NULL;
}

/* The header, once it is there: false while it is not (yet). */
static bool tail_header(struct jitdump_tail *t, const char *path)
{
	unsigned char head[HEADER_MIN];
	struct stat st;

	if (t->fd < 0) {
		t->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (t->fd < 0 || fstat(t->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			tail_dead(t);
			return false;
		}
	}
	if (!read_at(t->fd, head, sizeof(head), 0))
		return false;
	if (get32(head) != JITDUMP_MAGIC || get32(head + 8) < HEADER_MIN ||
	    get32(head + 8) > RECORD_MAX) {
		tail_dead(t);
		return false;
	}
	t->off = get32(head + 8);
	/* JITDUMP_FLAGS_ARCH_TIMESTAMP: the records' times are the TSC's, not ours */
	t->tsc = get64(head + 32) & 1;
	return true;
}

/*
 * Code [LO, HI) was loaded after the unwinding record T holds: each FDE of
 * its .eh_frame, placed at EH_AT, that covers a part of the code.
 */
static int code_cfi(struct jitdump_tail *t, uint64_t lo, uint64_t hi, uint64_t eh_at,
		    const struct jitdump_sink *s)
{
	struct cfi_image img = { .data = t->eh, .size = t->neh, .vaddr_delta = eh_at };
	struct cfi_rows rows = { 0 };
	size_t off = 0;
	int r = s->cfi(s->arg, lo, hi, NULL, 0);

	while (r >= 0 && t->neh - off >= 8) {
		uint32_t len = get32(t->eh + off);

		if (len == 0 || len == UINT32_MAX || len > t->neh - off - 4)
			break;	/* the end, a 64-bit entry no JIT writes, or damage */
		if (get32(t->eh + off + 4) != 0) {	/* an FDE */
			int k = cfi_fde_rows(&img, off, &rows);

			if (k == -ENOMEM) {
				r = error_setx(k, "out of memory");
			} else if (k < 0 || !rows.n || rows.pc_begin < lo || rows.pc_end > hi) {
				t->refused++;	/* no rows, or rows of code it did not load */
			} else {
				t->fdes++;
				r = s->cfi(s->arg, rows.pc_begin, rows.pc_end, rows.v, rows.n);
			}
		}
		off += 4 + (size_t)len;
	}
	cfi_rows_release(&rows);
	return r;
}

/* The unwinding record at T->off (SIZE bytes): its .eh_frame kept for the next load. */
static void unwinding_info(struct jitdump_tail *t, uint32_t size)
{
	unsigned char rec[UNWIND_HEAD];
	uint64_t all, hdr, n;

	free(t->eh);
	t->eh = NULL;
	t->neh = 0;
	if (size < UNWIND_HEAD || !read_at(t->fd, rec, sizeof(rec), t->off))
		return;
	all = get64(rec + 16);
	hdr = get64(rec + 24);
	/* .eh_frame first, .eh_frame_hdr last, as every writer has it */
	if (all > size - UNWIND_HEAD || hdr > all || all - hdr < 8 || all - hdr > EH_FRAME_MAX)
		return;
	n = all - hdr;
	t->eh = malloc(n);
	if (t->eh && !read_at(t->fd, t->eh, n, t->off + UNWIND_HEAD)) {
		free(t->eh);
		t->eh = NULL;
	}
	t->neh = t->eh ? n : 0;
}

/* The name of the load at T->off (SIZE bytes, CSIZE of code) into NAME; false if it has none. */
static bool load_name(struct jitdump_tail *t, uint32_t size, uint64_t csize, char *name)
{
	uint64_t want = size - LOAD_SIZE - csize;
	ssize_t got;

	if (want > NAME_MAX_BYTES)
		want = NAME_MAX_BYTES;
	got = pread(t->fd, name, want, (off_t)(t->off + LOAD_SIZE));
	if (got < 0)
		return false;
	name[got] = '\0';
	return name[0] != '\0';
}

int jitdump_tail_read(struct jitdump_tail *t, const char *path, const struct jitdump_sink *s)
{
	unsigned char rec[MOVE_SIZE];
	char name[NAME_MAX_BYTES + 1];
	struct stat st;
	int r = 0;

	if (t->dead || (!t->off && !tail_header(t, path)))
		return 0;
	if (fstat(t->fd, &st) < 0)
		return 0;
	while (r >= 0 && t->off + PREFIX_SIZE <= (uint64_t)st.st_size) {
		uint32_t id, size;

		if (!read_at(t->fd, rec, PREFIX_SIZE, t->off))
			break;
		id = get32(rec);
		size = get32(rec + 4);
		if (size < PREFIX_SIZE || size > RECORD_MAX) {
			tail_dead(t);	/* damaged: nothing after it can be found */
			break;
		}
		if (t->off + size > (uint64_t)st.st_size)
			break;	/* still being written: read at the next call */
		if (id == JIT_CODE_CLOSE) {
			tail_dead(t);
			break;
		}
		if (id == JIT_CODE_UNWINDING_INFO) {
			unwinding_info(t, size);
		} else if (id == JIT_CODE_LOAD && size >= LOAD_SIZE &&
			   read_at(t->fd, rec, LOAD_SIZE, t->off)) {
			uint64_t addr = get64(rec + 32), csize = get64(rec + 40);
			uint64_t eh_at = addr + ((csize + 7) & ~7ull), when = t->tsc ? 0 : get64(rec + 8);

			if (csize && csize <= size - LOAD_SIZE && addr + csize > addr && eh_at > addr) {
				r = t->eh ? code_cfi(t, addr, addr + csize, eh_at, s)
					  : s->cfi(s->arg, addr, addr + csize, NULL, 0);
				if (r >= 0 && load_name(t, size, csize, name))
					r = s->code(s->arg, addr, addr + csize, when, name, 0);
			}
			free(t->eh);	/* it was this load's */
			t->eh = NULL;
			t->neh = 0;
		} else if (id == JIT_CODE_MOVE && size >= MOVE_SIZE &&
			   read_at(t->fd, rec, MOVE_SIZE, t->off)) {
			uint64_t from = get64(rec + 32), to = get64(rec + 40), csize = get64(rec + 48);

			/* the code moved there has no rows (its writers' code keeps frames) */
			if (csize && to + csize > to) {
				r = s->cfi(s->arg, to, to + csize, NULL, 0);
				if (r >= 0)
					r = s->code(s->arg, to, to + csize, t->tsc ? 0 : get64(rec + 8),
						    NULL, from);
			}
		}
		t->off += size;
	}
	return r;
}
