/* SPDX-License-Identifier: MIT */
/*
 * perf_map.c - /tmp/perf-PID.map (see perf_map.h): read at the end for the
 * names of JIT frames (capture.c), and while a JVM runs for the code its
 * last map covers (jvm.c).  The target writes it: every line is checked.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "perf_map.h"
#include "proc.h"

#define PERF_MAP_MAX_BYTES (256u << 20)
#define PERF_MAP_MAX_LINE 4096

static int by_start(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* "START SIZE NAME": hex with an optional 0x; false for anything else. */
static bool parse_perf_map_line(char *line, struct jit_sym *s)
{
	char *p = line, *end;

	s->start = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t'))
		return false;
	p = end;
	s->size = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t') || s->size == 0 ||
	    s->start + s->size < s->start)
		return false;
	p = end + strspn(end, " \t");
	p[strcspn(p, "\r\n")] = '\0';
	if (!*p)
		return false;
	s->name = p;
	return true;
}

/* Not followed through a link, only a regular file, bounded in size and line length. */
int perf_map_read(pid_t pid, bool names, struct jit_sym **ret, size_t *ret_n)
{
	struct jit_sym *v = NULL, s;
	size_t n = 0, cap = 0, lcap = 0;
	char path[96], *line = NULL;
	ssize_t len;
	struct stat st;
	FILE *f;
	int fd, r = 0;

	*ret = NULL;
	*ret_n = 0;
	/*
	 * In its own /tmp, by the pid its namespace gives it, while it lives (a
	 * JIT in a container writes its map there); else the host's, by pid.
	 */
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)pid,
		 (int)proc_nspid(pid));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > PERF_MAP_MAX_BYTES) {
		/* said by the reader that names frames (capture.c): jvm.c reads it often */
		if (names)
			pr_warn("'%s' is not a regular file of at most 256 MiB, skipping", path);
		close(fd);
		return 0;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 0;
	}
	while ((len = getline(&line, &lcap, f)) > 0 && r >= 0) {
		void *p = v;

		if (len > PERF_MAP_MAX_LINE || !parse_perf_map_line(line, &s))
			continue;
		r = grow_array(&p, &cap, n + 1, sizeof(*v));
		v = p;
		if (r < 0)
			break;
		v[n] = s;
		v[n].name = names ? strdup(s.name) : NULL;
		if (names && !v[n].name)
			r = error_setx(-ENOMEM, "out of memory");
		else
			n++;
	}
	free(line);
	fclose(f);
	if (r >= 0 && n)
		qsort(v, n, sizeof(*v), by_start);
	*ret = v;
	*ret_n = n;
	return r;
}

static int by_addr_in(const void *a, const void *b)
{
	const uint64_t *x = a;
	const struct jit_sym *y = b;

	return *x < y->start ? -1 : *x - y->start >= y->size;
}

const struct jit_sym *jit_sym_find(const struct jit_sym *v, size_t n, uint64_t addr)
{
	return n ? bsearch(&addr, v, n, sizeof(*v), by_addr_in) : NULL;
}
