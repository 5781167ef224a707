/* SPDX-License-Identifier: MIT */
/*
 * proc_maps.c - /proc/PID/maps and /proc/PID/stat parsing.  The text comes
 * from the kernel but is read defensively: a line that does not parse is
 * skipped, and a path may contain spaces.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "proc_maps.h"

bool maps_parse_line(char *line, struct map_entry *e)
{
	char perms[8];
	unsigned maj, min;
	int n = 0;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &e->start,
		   &e->end, perms, &e->pgoff, &maj, &min, &e->inode, &n) < 7 || e->end <= e->start)
		return false;
	e->dev_major = maj;
	e->dev_minor = min;
	e->exec = strchr(perms, 'x') != NULL;
	e->path = line + n;
	e->path[strcspn(e->path, "\n")] = '\0';
	return true;
}

void maps_free(struct map_entry *maps, int n)
{
	int i;

	for (i = 0; maps && i < n; i++)
		free(maps[i].path);
	free(maps);
}

int maps_read(pid_t pid, struct map_entry **ret)
{
	struct map_entry *maps = NULL, e;
	size_t cap = 0, n = 0, lcap = 0;
	char path[64], *line = NULL;
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return error_set(errno == ENOENT ? -ESRCH : -errno, "cannot read '%s'", path);
	while (getline(&line, &lcap, f) > 0) {
		void *p = maps;

		if (!maps_parse_line(line, &e))
			continue;
		r = grow_array(&p, &cap, n + 1, sizeof(*maps));
		maps = p;
		if (r < 0)
			break;
		e.path = strdup(e.path);
		if (!e.path) {
			r = error_setx(-ENOMEM, "out of memory");
			break;
		}
		maps[n++] = e;
	}
	free(line);
	fclose(f);
	if (r < 0) {
		maps_free(maps, (int)n);
		return r;
	}
	*ret = maps;
	return (int)n;
}

int proc_stat(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime)
{
	char path[64], buf[1024], *open_paren, *close_paren;
	unsigned long long st = 0;
	int pp = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: it ends at the last ')' */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EIO;
	n = (size_t)(close_paren - open_paren - 1);
	if (n > 15)
		n = 15;
	memcpy(comm, open_paren + 1, n);
	comm[n] = '\0';
	/* fields after comm: state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue
	 * starttime */
	if (sscanf(close_paren + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				    "%*d %*d %*d %*d %llu", &pp, &st) < 2)
		return -EIO;
	if (ppid)
		*ppid = pp;
	if (starttime)
		*starttime = st;
	return 0;
}
