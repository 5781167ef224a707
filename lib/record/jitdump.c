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

#define JITDUMP_MAGIC 0x4A695444u	/* "JiTD" in the writer's byte order: ours */
#define HEADER_MIN 40
#define PREFIX_SIZE 16
#define LOAD_SIZE (PREFIX_SIZE + 40)	/* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_SIZE (PREFIX_SIZE + 48)	/* pid, tid, vma, old, new, code_size, code_index */
#define NAME_MAX_BYTES 4096
#define RECORD_MAX (1u << 30)
#define SYMS_MAX (16u << 20)		/* ranges kept of one file, at most */

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JIT_CODE_CLOSE = 3 };

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
