/* SPDX-License-Identifier: MIT */
/*
 * push_ledger.c - the ledger of a recording's pushes: the hidden file
 * .BASE.pushed beside its files, a line "WALL_START_NS ENDPOINT NAME" for
 * each file a server accepted (NAME last: a file name may hold spaces).
 * The wall time the file's recording began tells a file from another of
 * the same name (a recording made again at the same path).  Lines are
 * appended whole with one write(2) (O_APPEND), so that two senders of one
 * recording never mix theirs; a crash leaves at worst a line unwritten,
 * and that file is sent again: at least once, never lost.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "push_ledger.h"

#define STAMP_DIGITS 17		/* YYYYmmddHHMMSSmmm */

bool ledger_is_stamp(const char *s)
{
	size_t i;

	if (*s != '.')
		return false;
	for (i = 1; i <= STAMP_DIGITS; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return s[i] == '\0';
}

/* The ledger of FILE: DIR/.BASE.pushed; *RET_NAME: FILE's own name in it. */
static char *ledger_of(const char *file, const char **ret_name)
{
	const char *slash = strrchr(file, '/'), *name = slash ? slash + 1 : file;
	size_t base = strlen(name);
	char *path;

	if (base > STAMP_DIGITS + 1 && ledger_is_stamp(name + base - STAMP_DIGITS - 1))
		base -= STAMP_DIGITS + 1;
	if (asprintf(&path, "%.*s.%.*s.pushed", (int)(name - file), file, (int)base, name) < 0)
		return NULL;
	if (ret_name)
		*ret_name = name;
	return path;
}

/* Each line of the ledger at PATH into FN, until FN returns true. */
static bool each_line(const char *path, bool (*fn)(char *line, void *ctx), void *ctx)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool found = false;

	if (!f)
		return false;
	while (!found && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		found = fn(line, ctx);
	}
	free(line);
	fclose(f);
	return found;
}

struct lookup {
	const char *want;
};

static bool is_line(char *line, void *ctx)
{
	return !strcmp(line, ((struct lookup *)ctx)->want);
}

/* The line of NAME: malloc'd, or NULL. */
static char *line_of(const char *name, uint64_t wall_start_ns, const char *endpoint)
{
	char *line;

	if (strchr(name, '\n') || strchr(endpoint, ' ') || strchr(endpoint, '\n'))
		return NULL;
	if (asprintf(&line, "%" PRIu64 " %s %s", wall_start_ns, endpoint, name) < 0)
		return NULL;
	return line;
}

bool ledger_has(const char *file, uint64_t wall_start_ns, const char *endpoint)
{
	const char *name;
	char *path = ledger_of(file, &name);
	char *line = path ? line_of(name, wall_start_ns, endpoint) : NULL;
	struct lookup l = { .want = line };
	bool found = line && each_line(path, is_line, &l);

	free(line);
	free(path);
	return found;
}

int ledger_add(const char *file, uint64_t wall_start_ns, const char *endpoint)
{
	const char *name;
	char *path = ledger_of(file, &name);
	char *line = path ? line_of(name, wall_start_ns, endpoint) : NULL;
	size_t len;
	ssize_t n;
	int fd, r = 0;

	if (!line) {	/* a name the ledger cannot hold: it is sent again, never lost */
		free(path);
		return path ? 0 : error_setx(-ENOMEM, "out of memory");
	}
	len = strlen(line);
	line[len++] = '\n';	/* over the NUL: the line is written by its length */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = error_set(-errno, "cannot open the push ledger '%s'", path);
	} else {
		n = write(fd, line, len);
		if (n != (ssize_t)len)
			r = error_set(n < 0 ? -errno : -EIO, "cannot write the push ledger '%s'",
				      path);
		close(fd);
	}
	free(line);
	free(path);
	return r;
}

struct prune {
	const char *dir_end;	/* of the spool path: the directory's length */
	const char *spool_path;
	FILE *kept;
	size_t dropped, lines;
};

static bool keep_line(char *line, void *ctx)
{
	struct prune *p = ctx;
	char *name = strchr(line, ' ');
	char *file;

	name = name ? strchr(name + 1, ' ') : NULL;
	p->lines++;
	if (!name)
		return false;
	if (asprintf(&file, "%.*s%s", (int)(p->dir_end - p->spool_path), p->spool_path,
		     name + 1) < 0)
		return false;
	if (access(file, F_OK) == 0)
		fprintf(p->kept, "%s\n", line);
	else
		p->dropped++;
	free(file);
	return false;
}

void ledger_prune(const char *spool_path)
{
	const char *slash = strrchr(spool_path, '/');
	struct prune p = { .dir_end = slash ? slash + 1 : spool_path, .spool_path = spool_path };
	char *path = ledger_of(spool_path, NULL), *kept = NULL, *tmp = NULL;
	size_t len = 0;
	FILE *f;

	if (!path)
		return;
	p.kept = open_memstream(&kept, &len);
	if (p.kept) {
		each_line(path, keep_line, &p);
		fclose(p.kept);
	}
	if (p.kept && p.dropped && asprintf(&tmp, "%s.tmp", path) >= 0) {
		/* a new ledger put in place whole: a crash leaves the old one */
		if (!len) {
			unlink(path);
		} else if ((f = fopen(tmp, "we"))) {
			bool ok = fwrite(kept, 1, len, f) == len;

			if (fclose(f) == 0 && ok)
				rename(tmp, path);
			else
				unlink(tmp);
		}
		free(tmp);
	}
	free(kept);
	free(path);
}
