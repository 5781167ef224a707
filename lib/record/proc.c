/* SPDX-License-Identifier: MIT */
/*
 * proc.c - everything the recorder reads from /proc, in one place.  The
 * text comes from the kernel but is read defensively: a line that does not
 * parse is skipped, a path may contain spaces, a comm parentheses, and a
 * process may be gone between two reads (-ESRCH, never a crash).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"

/* A hexadecimal (or, with DEC, decimal) number at *P, ending at SEP; false if none. */
static bool parse_num(char **p, bool dec, char sep, uint64_t *ret)
{
	uint64_t v = 0;
	char *c = *p;

	for (;; c++) {
		unsigned d;

		if (*c >= '0' && *c <= '9')
			d = (unsigned)(*c - '0');
		else if (!dec && *c >= 'a' && *c <= 'f')
			d = (unsigned)(*c - 'a' + 10);
		else if (!dec && *c >= 'A' && *c <= 'F')
			d = (unsigned)(*c - 'A' + 10);
		else
			break;
		if (v >> 60)
			return false;
		v = v * (dec ? 10 : 16) + d;
	}
	if (c == *p || *c != sep)
		return false;
	*p = c + 1;
	*ret = v;
	return true;
}

/*
 * By hand, not with sscanf: a machine's synthesis reads every line of
 * every process's maps (tens of thousands), and scanf's per-call setup
 * dominated it.
 */
bool maps_parse_line(char *line, struct map_entry *e)
{
	uint64_t maj, min;
	char *c = line, *perms;

	memset(e, 0, sizeof(*e));
	if (!parse_num(&c, false, '-', &e->start) || !parse_num(&c, false, ' ', &e->end) ||
	    e->end <= e->start)
		return false;
	perms = c;
	while (*c && *c != ' ')
		c++;
	if (*c != ' ' || c - perms < 4)
		return false;
	e->exec = perms[2] == 'x';
	c++;
	if (!parse_num(&c, false, ' ', &e->pgoff) || !parse_num(&c, false, ':', &maj) ||
	    !parse_num(&c, false, ' ', &min) || maj > UINT32_MAX || min > UINT32_MAX)
		return false;
	/* the inode ends the line when there is no path */
	if (!parse_num(&c, true, ' ', &e->inode)) {
		if (!parse_num(&c, true, '\n', &e->inode) && !parse_num(&c, true, '\0', &e->inode))
			return false;
		c--;
		*c = '\0';
	}
	e->dev_major = (uint32_t)maj;
	e->dev_minor = (uint32_t)min;
	while (*c == ' ')
		c++;
	e->path = c;
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

/* The whole of a /proc file at PATH, NUL-terminated, into *RET (to free).  Its length, or -errno. */
static ssize_t read_whole(const char *path, char **ret)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap), *p;
	ssize_t k;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		int e = fd < 0 ? -errno : -ENOMEM;

		free(buf);
		if (fd >= 0)
			close(fd);
		return e;
	}
	for (;;) {
		if (cap - n < 4096) {
			p = realloc(buf, cap * 2);
			if (!p) {
				k = -ENOMEM;
				break;
			}
			buf = p;
			cap *= 2;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			k = k < 0 ? -errno : 0;
			break;
		}
		n += (size_t)k;
	}
	close(fd);
	if (k < 0) {
		free(buf);
		return k;
	}
	buf[n] = '\0';
	*ret = buf;
	return (ssize_t)n;
}

int maps_read(pid_t pid, struct map_entry **ret)
{
	struct map_entry *maps = NULL, e;
	size_t cap = 0, n = 0;
	char path[64], *text = NULL, *line, *next;
	ssize_t len;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	len = read_whole(path, &text);
	if (len < 0)
		return error_set(len == -ENOENT ? -ESRCH : (int)len, "cannot read '%s'", path);
	for (line = text; *line && r >= 0; line = next) {
		void *p = maps;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (next[-1] == '\n')
			next[-1] = '\0';
		if (!maps_parse_line(line, &e))
			continue;
		r = grow_array(&p, &cap, n + 1, sizeof(*maps));
		maps = p;
		if (r < 0)
			break;
		e.path = strdup(e.path);
		if (!e.path)
			r = error_setx(-ENOMEM, "out of memory");
		else
			maps[n++] = e;
	}
	free(text);
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
	ssize_t k;
	size_t n;
	int fd;

	/* open and read, not stdio: a machine's synthesis reads thousands */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	k = read(fd, buf, len - 1);
	close(fd);
	if (k < 0)
		return errno == ESRCH ? -ESRCH : -EIO;
	n = (size_t)k;
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

int proc_stat_threads(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime,
		      uint64_t *threads)
{
	uint64_t v[20] = { 0 };
	const char *fields, *c;
	char buf[1024];
	int r = read_stat(pid, buf, sizeof(buf), comm, &fields), i;

	if (r < 0)
		return r;
	/*
	 * The fields after comm, by hand: state, then ppid pgrp session tty
	 * tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
	 * priority nice threads itrealvalue starttime (1 to 19 after the state;
	 * some may be negative: only their digits matter here)
	 */
	c = fields;
	if (!*c || c[1] != ' ')
		return -EIO;
	c += 2;
	for (i = 1; i <= 19; i++) {
		if (*c == '-')
			c++;
		if (*c < '0' || *c > '9')
			return -EIO;
		for (; *c >= '0' && *c <= '9'; c++)
			v[i] = v[i] * 10 + (uint64_t)(*c - '0');
		if (*c != ' ' && i < 19)
			return -EIO;
		c++;
	}
	if (ppid)
		*ppid = (pid_t)v[1];
	if (threads)
		*threads = v[17];
	if (starttime)
		*starttime = v[19];
	return 0;
}

int proc_stat(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime)
{
	return proc_stat_threads(pid, comm, ppid, starttime, NULL);
}

bool proc_reaped(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

bool proc_gone(pid_t pid)
{
	const char *fields;
	char buf[1024];

	/*
	 * A process with its memory has an executable: its exe link resolves
	 * in one syscall (2.3 us here, where stat's open, read and close take
	 * 6.6).  A zombie's does not, nor a kernel thread's, nor one we may
	 * not ptrace: stat tells those apart.
	 */
	proc_exe(pid, buf, sizeof(buf));
	if (*buf)
		return false;
	if (read_stat(pid, buf, sizeof(buf), NULL, &fields) < 0)
		return true;
	return fields[0] == 'Z' || fields[0] == 'X';
}

pid_t proc_nspid(pid_t pid)
{
	char path[64], buf[4096], *p, *q;
	pid_t ns = pid;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pid;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return pid;
	buf[n] = '\0';
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return pid;
	if ((q = strchr(p + 1, '\n')))
		*q = '\0';
	for (q = p + 7; *q;) {
		char *e;
		long v = strtol(q, &e, 10);

		if (e == q)
			break;
		if (v > 0 && v <= INT32_MAX)
			ns = (pid_t)v;
		q = e;
	}
	return ns;
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

int proc_pids(pid_t **ret)
{
	return read_int_dir("/proc", ret);
}

int cpu_list_parse(const char *s, int *cpus, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(s, &end, 10);
		if (errno || end == s || a < 0 || *s == '-' || *s == '+' || *s == ' ')
			return -EINVAL;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			b = strtol(s, &end, 10);
			if (errno || end == s || b < a || *s == '-' || *s == '+' || *s == ' ')
				return -EINVAL;
			s = end;
		}
		if (b >= 1 << 20)
			return -EINVAL;
		for (; a <= b; a++) {
			int k;

			for (k = 0; k < n && cpus[k] != (int)a; k++)
				;
			if (k < n)
				continue;
			if (n == max)
				return -E2BIG;
			cpus[n++] = (int)a;
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}

int online_cpu_list(int *cpus, int max)
{
	char buf[4096];
	ssize_t k;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC), n = -1;

	if (fd >= 0) {
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k > 0) {
			buf[k] = '\0';
			n = cpu_list_parse(buf, cpus, max);
		}
	}
	if (n <= 0) {
		cpus[0] = 0;	/* at least CPU 0 */
		n = 1;
	}
	return n;
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
