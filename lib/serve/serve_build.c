/* SPDX-License-Identifier: MIT */
/*
 * serve_build.c - the profile prof serve sends for a window of the
 * recording: the files that may hold it, read as one recording
 * (prof_spool_open_many()), the samples of the window kept by the report's
 * time filter (the window in seconds from the first file's start), written
 * as go tool pprof reads them into memory, with the window's own time and
 * duration, and as an empty profile when the window holds no sample (a
 * scraper gets a profile for every scrape).  It runs on the thread of the
 * request, one at a time, never on the recording loop's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdnoreturn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "report/report.h"
#include "serve_build.h"

static void free_paths(char **paths, size_t n)
{
	while (n)
		free(paths[--n]);
	free(paths);
}

int build_check_weight(struct serve_files *f, enum prof_weight w)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct prof_spool *sp = NULL;
	char **paths;
	size_t n, i;
	int r;

	r = files_pick(f, now, now, &paths, &n);
	if (r < 0)
		return r;
	/* the newest file whose metadata is written (a new file's may not be yet) */
	for (i = n; i > 0 && !sp; i--)
		if (prof_spool_open(paths[i - 1], &sp) < 0)
			sp = NULL;
	free_paths(paths, n);
	if (!sp) {
		prof_errmsg_clear();
		return 1;
	}
	r = prof_spool_check_weight(sp, w);
	prof_spool_close(sp);
	return r;
}

/* Open the files of the window: 0 and *RET; -ENOENT when there are none. */
static int open_window(struct serve_files *f, const struct build_window *w,
		       struct prof_spool **ret)
{
	char **paths;
	size_t n, i, k;
	int r, tries;

	for (tries = 0; tries < 2; tries++) {
		r = files_pick(f, w->from_ns, w->to_ns, &paths, &n);
		if (r < 0)
			return r;
		if (!n)
			return error_setx(-ENOENT, "the recording has no file yet");
		/* the loop may have removed the oldest meanwhile, when it is old enough */
		for (i = k = 0; i < n; i++) {
			if (access(paths[i], R_OK) == 0)
				paths[k++] = paths[i];
			else
				free(paths[i]);
		}
		r = k ? prof_spool_open_many((const char *const *)paths, k, ret)
		      : error_setx(-ENOENT, "the recording's files are gone");
		free_paths(paths, k);
		if (r != -ENOENT)
			return r;
	}
	return r;
}

/* The filter of window W over SP: the window in seconds from SP's start. */
static int window_filter(const struct prof_spool *sp, const struct build_window *w,
			 struct prof_filter **ret)
{
	uint64_t origin = prof_spool_meta(sp)->mono_start_ns;
	char range[64];

	if (w->to_ns < origin)	/* all of it before the files: nothing */
		snprintf(range, sizeof(range), "0,0");
	else if (w->from_ns <= origin)
		snprintf(range, sizeof(range), ",%.9f", (double)(w->to_ns - origin) / 1e9);
	else
		snprintf(range, sizeof(range), "%.9f,%.9f", (double)(w->from_ns - origin) / 1e9,
			 (double)(w->to_ns - origin) / 1e9);
	int r = prof_filter_new(&PROF_INIT(prof_filter_opts, .time = range, .weight = w->weight),
				ret);

	/* a wait counts for its part in the window, however long before it began */
	if (r == 0)
		filter_clip_intervals(*ret);
	return r;
}

/*
 * The profile of window W over SP, into *BUF (*LEN bytes); its samples in
 * *SAMPLES.  0, or -errno with the message set.
 */
static int write_profile(struct prof_spool *sp, const struct build_window *w, char **buf,
			 size_t *len, uint64_t *samples)
{
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), wall = clock_ns(CLOCK_REALTIME);
	struct pprof_opts po = { .duration_ns = w->to_ns - w->from_ns, .empty = true };
	struct prof_symbolizer *sym = NULL;
	struct prof_filter *filter = NULL;
	FILE *out = NULL;
	int r;

	/* the window's start by the wall clock, as profile.proto's time_nanos is */
	po.time_ns = wall - (mono - w->from_ns);
	r = prof_spool_check_weight(sp, w->weight);
	/*
	 * Without DWARF a build takes half the CPU and memory (a window of
	 * the whole machine where libc6-dbg is installed: 0.05 s and 17 MB,
	 * not 0.11 s and 39 MB): what an agent scraped every 15 s spends.
	 */
	if (r == 0)
		r = prof_symbolizer_new(sp, &PROF_INIT(prof_symbolizer_opts, .no_dwarf = !w->dwarf),
					&sym);
	if (r == 0)
		r = window_filter(sp, w, &filter);
	if (r == 0 && !(out = open_memstream(buf, len)))
		r = error_set(-errno, "cannot write the profile");
	if (r == 0)
		r = report_pprof(out, sp, sym, filter, &po, samples);
	if (out && fclose(out) != 0 && r == 0)
		r = error_set(-errno, "cannot write the profile");
	prof_filter_free(filter);
	prof_symbolizer_free(sym);
	return r;
}

/* What the child says before the profile: its result, the samples, the profile's bytes. */
struct child_head {
	int32_t r;
	uint64_t samples, len;
	char msg[256];
};

static bool write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return true;
}

static bool read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t k = read(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p = (char *)p + k;
		n -= (size_t)k;
	}
	return true;
}

/* The child: the profile of W over SP down FD, then gone. */
static noreturn void build_child(int fd, struct prof_spool *sp, const struct build_window *w)
{
	struct child_head h = { 0 };
	char *buf = NULL;
	size_t len = 0;

	/* nothing logged: another thread of the parent may have held the log's lock */
	prof_set_log_fn(NULL, PROF_LOG_WARN, NULL);
	h.r = write_profile(sp, w, &buf, &len, &h.samples);
	h.len = h.r < 0 ? 0 : len;
	if (h.r < 0)
		snprintf(h.msg, sizeof(h.msg), "%s", prof_errmsg());
	_exit(write_all(fd, &h, sizeof(h)) && write_all(fd, buf, h.len) ? 0 : 1);
}

/*
 * The profile is built in a child process: what a build takes (the DWARF
 * line tables of every module it names, 35-50 MB of a whole machine's
 * window) is the child's, and all of it goes back to the system when it
 * exits, so that the server's memory between scrapes and at its peak is
 * the recorder's; a build that fails cannot take the recording down with it.
 * The files are picked and opened here (the files' lock is this process's),
 * the rest done there, on the one thread a child has.
 */
int build_profile(struct serve_files *f, const struct build_window *w, char **ret,
		  size_t *ret_len, uint64_t *ret_samples)
{
	struct prof_spool *sp = NULL;
	struct rusage ru = { 0 };
	struct child_head h;
	int fds[2], status, r;
	char *buf = NULL;
	pid_t pid;
	bool ok;

	r = open_window(f, w, &sp);
	if (r < 0)
		return r;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = error_set(-errno, "cannot build the profile");
		prof_spool_close(sp);
		return r;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		build_child(fds[1], sp, w);
	}
	r = pid < 0 ? error_set(-errno, "cannot build the profile") : 0;
	close(fds[1]);
	prof_spool_close(sp);
	ok = r == 0 && read_all(fds[0], &h, sizeof(h)) && h.len < SIZE_MAX;
	if (ok && h.r == 0 && !(buf = malloc(h.len ? h.len : 1)))
		r = error_setx(-ENOMEM, "out of memory");
	if (ok && r == 0 && h.r == 0)
		ok = read_all(fds[0], buf, h.len);
	close(fds[0]);
	while (pid > 0 && wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	if (pid > 0)
		pr_info("a profile built by a process of its own: %ld KiB at its peak, %.3f s of CPU",
			ru.ru_maxrss, (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
					      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	if (r == 0 && !ok)
		r = error_setx(-EIO, "the profile's build ended without a profile");
	if (r == 0 && h.r < 0)
		r = error_setx(h.r, "%s", h.msg);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_len = h.len;
	*ret_samples = h.samples;
	return 0;
}
