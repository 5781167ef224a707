/* SPDX-License-Identifier: MIT */
/*
 * recorder_system.c - recording the whole machine: the CPUs and the
 * cgroup it samples, checked before any event opens, and the processes
 * already running read from /proc once at the start (their comm, threads
 * and mappings), as perf synthesizes them.  What comes later arrives as
 * the kernel's side-band records, in the rings like every other recording.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"
#include "process.h"
#include "recorder.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static int parse_cpus(struct prof_recorder *rec)
{
	int online[MAX_CPUS], want[MAX_CPUS], n, k, i, j;
	const char *list = rec->opts.cpus;

	k = online_cpu_list(online, MAX_CPUS);
	if (!list) {
		n = k;
		memcpy(want, online, sizeof(int) * (size_t)k);
	} else {
		n = cpu_list_parse(list, want, MAX_CPUS);
		if (n < 0)
			return error_setx(-EINVAL, "invalid CPU list '%s' (e.g. 0-3,6)", list);
		for (i = 0; i < n; i++) {
			for (j = 0; j < k && online[j] != want[i]; j++)
				;
			if (j == k)
				return error_setx(-EINVAL, "CPU %d is not online (online: see "
						  "/sys/devices/system/cpu/online)", want[i]);
		}
	}
	rec->cpu_list = malloc(sizeof(int) * (size_t)n);
	if (!rec->cpu_list)
		return error_setx(-ENOMEM, "out of memory");
	memcpy(rec->cpu_list, want, sizeof(int) * (size_t)n);
	rec->ncpu_list = (size_t)n;
	return 0;
}

/*
 * Where cgroup v2 is mounted: /sys/fs/cgroup, or on a hybrid system
 * (v1 controllers there) its "unified" directory, as /proc/self/mounts
 * says, into BUF.
 */
static void cgroup2_root(char *buf, size_t len)
{
	char line[4096], dev[64], dir[3072], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");

	snprintf(buf, len, CGROUP_ROOT);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %3071s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			break;
		}
	if (f)
		fclose(f);
}

/* A cgroup v2 directory: one that lists its processes. */
static int open_cgroup_dir(const char *path)
{
	char procs[4200];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	if (access(procs, F_OK) < 0)
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* perf's -G: a cgroup v2 directory, as a path or under the cgroup v2 mount. */
static int open_cgroup(struct prof_recorder *rec)
{
	const char *g = rec->opts.cgroup;
	char root[3072], path[4096];
	int fd = -1;

	if (!g)
		return 0;
	if (g[0] == '/')
		fd = open_cgroup_dir(g);
	while (*g == '/')
		g++;
	if (fd < 0 && *g && !strstr(g, "..")) {
		cgroup2_root(root, sizeof(root));
		snprintf(path, sizeof(path), "%s/%s", root, g);
		fd = open_cgroup_dir(path);
	}
	if (fd < 0)
		return error_setx(-EINVAL, "no such cgroup: %s", rec->opts.cgroup);
	rec->cgroup_fd = fd;
	return 0;
}

int rec_system_prepare(struct prof_recorder *rec)
{
	int r;

	rec->system = true;
	rec->self = getpid();
	r = parse_cpus(rec);
	return r < 0 ? r : open_cgroup(rec);
}

/* The pids of the cgroup's cgroup.procs (not its children's).  Count, or -errno. */
static int cgroup_pids(int dirfd, pid_t **ret)
{
	int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap = 0, len = 0;
	char buf[65536], *p, *end;
	pid_t *v = NULL;
	ssize_t k;

	if (fd < 0)
		return -errno;
	while ((k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)k;
	close(fd);
	buf[len] = '\0';
	for (p = buf; *p; p = end) {
		long pid = strtol(p, &end, 10);
		void *a = v;

		if (end == p)
			break;
		if (pid <= 0)
			continue;
		if (grow_array(&a, &cap, n + 1, sizeof(*v)) < 0) {
			free(a);
			return -ENOMEM;
		}
		v = a;
		v[n++] = (pid_t)pid;
	}
	*ret = v;
	return (int)n;
}

int rec_system_synthesize(struct prof_recorder *rec)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	size_t procs = 0, threads = 0;
	pid_t *pids, *tids;
	int n, i, k, r = 0;

	n = rec->cgroup_fd >= 0 ? cgroup_pids(rec->cgroup_fd, &pids) : proc_pids(&pids);
	if (n < 0)
		return error_set(n, "cannot list the processes running");
	for (i = 0; i < n && r >= 0; i++) {
		struct proc *p;
		char comm[16];
		pid_t ppid;
		int nt;

		if (pids[i] == rec->self || proc_stat(pids[i], comm, &ppid, NULL) < 0)
			continue;	/* ourselves, or gone already */
		r = pt_process(&rec->pt, pids[i], start, true, &p);
		nt = r < 0 ? 0 : proc_tasks(pids[i], &tids);
		for (k = 0; k < nt && r >= 0; k++) {
			struct thr *t;

			r = pt_thread(&rec->pt, pids[i], tids[k], start, &t);
		}
		if (nt > 0)
			free(tids);
		procs++;
		threads += nt > 0 ? (size_t)nt : 0;
	}
	free(pids);
	rec->synthesis_ns = clock_ns(CLOCK_MONOTONIC) - start;
	pr_debug("read %zu processes (%zu threads) from /proc in %.1f ms", procs, threads,
		(double)rec->synthesis_ns / 1e6);
	return r;
}
