/* SPDX-License-Identifier: MIT */
/*
 * proc.c - everything the recorder reads from /proc, in one place.  The
 * text comes from the kernel but is read defensively: a line that does not
 * parse is skipped, a path may contain spaces, a comm parentheses, and a
 * process may be gone between two reads (-ESRCH, never a crash).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"

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

/*
 * /proc/PID/stat into BUF (LEN bytes): *RET_FIELDS where the fields after
 * comm begin (after its closing parenthesis and a space), and the comm in
 * COMM if not NULL.  0, -ESRCH (gone), -EIO (not as expected) or -errno.
 */
static int read_stat(pid_t pid, char *buf, size_t len, char comm[16], const char **ret_fields)
{
	char path[64], *open_paren, *close_paren;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: it ends at the last ')' */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return -EIO;
	if (comm) {
		n = (size_t)(close_paren - open_paren - 1);
		if (n > 15)
			n = 15;
		memcpy(comm, open_paren + 1, n);
		comm[n] = '\0';
	}
	*ret_fields = close_paren + 2;
	return 0;
}

int proc_stat(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime)
{
	unsigned long long st = 0;
	const char *fields;
	char buf[1024];
	int pp = 0, r = read_stat(pid, buf, sizeof(buf), comm, &fields);

	if (r < 0)
		return r;
	/* fields after comm: state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue
	 * starttime */
	if (sscanf(fields, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			   "%*d %*d %*d %*d %llu", &pp, &st) < 2)
		return -EIO;
	if (ppid)
		*ppid = pp;
	if (starttime)
		*starttime = st;
	return 0;
}

bool proc_reaped(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

bool proc_gone(pid_t pid)
{
	const char *fields;
	char buf[1024];

	if (read_stat(pid, buf, sizeof(buf), NULL, &fields) < 0)
		return true;
	return fields[0] == 'Z' || fields[0] == 'X';
}

void proc_exe(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

void proc_thread_name(pid_t pid, pid_t tid, char name[16], const char *fallback)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (f && fgets(name, 16, f))
		name[strcspn(name, "\n")] = '\0';
	else
		snprintf(name, 16, "%s", fallback);
	if (f)
		fclose(f);
}

/* The numeric names in directory PATH (pids, tids).  Count, or -errno. */
static int read_int_dir(const char *path, pid_t **ret)
{
	struct dirent *d;
	pid_t *ids = NULL;
	size_t n = 0, cap = 0;
	DIR *dir = opendir(path);
	int r = 0;

	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		char *end;
		long v = strtol(d->d_name, &end, 10);
		void *p = ids;

		if (*end || v <= 0)
			continue;
		r = grow_array(&p, &cap, n + 1, sizeof(*ids));
		ids = p;
		if (r < 0)
			break;
		ids[n++] = (pid_t)v;
	}
	closedir(dir);
	if (r < 0) {
		free(ids);
		return r;
	}
	*ret = ids;
	return (int)n;
}

int proc_tasks(pid_t pid, pid_t **ret)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return read_int_dir(path, ret);
}

int proc_descendants(pid_t pid, pid_t **ret)
{
	pid_t *all, *out = NULL, ppid;
	size_t nout = 0, cap = 0, i;
	int n = read_int_dir("/proc", &all), r = 0;
	bool grew = true;
	char comm[16];

	if (n < 0)
		return n;
	/* a fixed point over the ppid relation: children, then theirs, ... */
	while (grew && r >= 0) {
		grew = false;
		for (i = 0; i < (size_t)n && r >= 0; i++) {
			bool known = false, parent = false;
			void *p = out;
			size_t k;

			if (all[i] == pid || proc_stat(all[i], comm, &ppid, NULL) < 0)
				continue;
			for (k = 0; k < nout; k++) {
				known |= out[k] == all[i];
				parent |= out[k] == ppid;
			}
			if (known || (ppid != pid && !parent))
				continue;
			r = grow_array(&p, &cap, nout + 1, sizeof(*out));
			out = p;
			if (r >= 0) {
				out[nout++] = all[i];
				grew = true;
			}
		}
	}
	free(all);
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	return (int)nout;
}

int proc_read_u64(const char *path, uint64_t *ret)
{
	unsigned long long v;
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return error_set(-errno, "cannot read '%s'", path);
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	if (!ok)
		return error_setx(-EIO, "cannot parse '%s'", path);
	*ret = v;
	return 0;
}
