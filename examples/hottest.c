/* SPDX-License-Identifier: MIT */
/*
 * hottest - record a command with libprof and print its hottest stack,
 * root first, one frame a line.  It uses nothing but <prof/prof.h>, the
 * public header as installed (make builds it against a copy of that
 * layout): launch suspended, attach, poll until the command is done, finish,
 * then read the spool back and symbolize.  Built by `make tests`; tests/cli
 * runs it.
 *
 *   hottest [--memory] SPOOL COMMAND [ARG...]
 *   hottest --pid PID SECONDS SPOOL
 *
 * With --memory the recorder writes into a caller-owned sink (a growing
 * buffer here), which is saved to SPOOL once the recording is finished.
 * With --pid it attaches to a running process for SECONDS instead, looking
 * for threads no event covers at every poll (prof_recorder_refresh_threads).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <prof/prof.h>

static int die(const char *what)
{
	fprintf(stderr, "hottest: %s: %s\n", what, prof_errmsg());
	return 1;
}

struct membuf {
	char *p;
	size_t len, cap;
};

static ssize_t mem_write(void *ctx, const void *buf, size_t len)
{
	struct membuf *m = ctx;

	if (m->len + len > m->cap) {
		size_t cap = (m->len + len) * 2;
		char *p = realloc(m->p, cap);

		if (!p)
			return -ENOMEM;
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return (ssize_t)len;
}

static int record(const char *path, bool memory, char **argv)
{
	struct membuf mem = { 0 };
	PROF_OPTS(prof_sink, sink, .write = mem_write, .ctx = &mem);
	PROF_OPTS(prof_recorder_opts, opts);
	PROF_OPTS(prof_recording_summary, sum);
	struct prof_launched *child;
	struct prof_recorder *rec;
	size_t active = 1;
	int status = 0, done = 0;

	if (prof_launch_suspended(argv, &child) < 0)
		return die("launch");
	if ((memory ? prof_recorder_attach_sink(prof_launched_pid(child), &sink,
						  PROF_ATTACH_MODE_ON_EXEC, &opts, &rec)
		    : prof_recorder_attach(prof_launched_pid(child), path, PROF_ATTACH_MODE_ON_EXEC,
					   &opts, &rec)) < 0) {
		prof_launched_free(child);
		return die("attach");
	}
	if (prof_launched_release(child) < 0) {
		prof_recorder_free(rec);
		prof_launched_free(child);
		return die("exec");
	}
	while (!done || active) {
		if (prof_recorder_poll(rec, 100, NULL) < 0)
			break;
		if (!done)
			done = prof_launched_wait(child, false, &status) == 1;
		if (done && prof_recorder_active_process_count(rec, &active) < 0)
			break;
	}
	prof_launched_free(child);
	if (prof_recorder_close(rec, &sum) < 0)
		return die("finish");
	printf("%llu samples\n", (unsigned long long)sum.samples);
	if (memory) {
		FILE *f = fopen(path, "wb");

		if (!f || fwrite(mem.p, 1, mem.len, f) != mem.len || fclose(f) != 0) {
			fprintf(stderr, "hottest: cannot write '%s'\n", path);
			return 1;
		}
		printf("%zu bytes recorded in memory\n", mem.len);
		free(mem.p);
	}
	return 0;
}

static int record_pid(pid_t pid, double seconds, const char *path)
{
	PROF_OPTS(prof_recorder_opts, opts);
	enum prof_refresh_outcome refreshed = PROF_REFRESH_OUTCOME_DONE;
	PROF_OPTS(prof_recording_summary, sum);
	struct prof_recorder *rec;
	struct timespec t0, t;
	bool alive = true;

	if (prof_recorder_attach(pid, path, PROF_ATTACH_MODE_STOP, &opts, &rec) < 0)
		return die("attach");
	if (prof_recorder_enable(rec) < 0) {
		prof_recorder_free(rec);
		return die("enable");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (prof_recorder_poll(rec, 100, NULL) < 0 ||
		    prof_recorder_refresh_threads(rec, pid, &refreshed) < 0 ||
		    prof_recorder_process_is_active(rec, pid, &alive) < 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (alive && refreshed == PROF_REFRESH_OUTCOME_DONE &&
		 (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	if (prof_recorder_close(rec, &sum) < 0)
		return die("finish");
	printf("%llu samples, %llu threads\n", (unsigned long long)sum.samples,
	       (unsigned long long)sum.threads);
	return 0;
}

/* Count samples per leaf stack node, in memory bounded by distinct stacks. */
static int hottest(const char *path)
{
	PROF_OPTS(prof_resolved_frame, rf);
	PROF_OPTS(prof_spool_counts, n);
	struct prof_symbolizer *sym;
	struct prof_spool *sp;
	PROF_OPTS(prof_record, ev);
	uint64_t *count = NULL, best = 0;
	uint32_t best_id = 0, id, chain[1024];
	size_t cap = 0, depth = 0;

	if (prof_spool_open(path, &sp) < 0)
		return die("open");
	while (prof_spool_next(sp, &ev) > 0) {
		if (ev.type != PROF_RECORD_SAMPLE || !ev.sample->stack)
			continue;
		if (ev.sample->stack >= cap) {
			size_t ncap = (ev.sample->stack + 1) * 2;
			uint64_t *p = realloc(count, ncap * sizeof(*p));

			if (!p)
				return 1;
			for (size_t i = cap; i < ncap; i++)
				p[i] = 0;
			count = p;
			cap = ncap;
		}
		if (++count[ev.sample->stack] > best) {
			best = count[ev.sample->stack];
			best_id = ev.sample->stack;
		}
	}
	prof_spool_counts(sp, &n);
	if (prof_symbolizer_new(sp, NULL, &sym) < 0)
		return die("symbolizer");
	for (id = best_id; id && depth < 1024; id = prof_spool_stack(sp, id)->parent)
		chain[depth++] = prof_spool_stack(sp, id)->frame;
	printf("hottest stack: %llu of %llu samples\n", (unsigned long long)best,
	       (unsigned long long)n.samples);
	while (depth--) {
		if (prof_symbolizer_frame(sym, chain[depth], &rf) < 0)
			return die("symbolize");
		printf("  %s (%s)\n", rf.function, rf.module);
	}
	prof_symbolizer_free(sym);
	prof_spool_close(sp);
	free(count);
	return 0;
}

int main(int argc, char **argv)
{
	bool memory = argc > 1 && !strcmp(argv[1], "--memory");

	if (argc == 5 && !strcmp(argv[1], "--pid"))
		return record_pid((pid_t)atoi(argv[2]), atof(argv[3]), argv[4]) ?: hottest(argv[4]);

	argv += memory;
	argc -= memory;
	if (argc < 3) {
		fprintf(stderr, "usage: hottest [--memory] SPOOL COMMAND [ARG...]\n");
		return 64;
	}
	return record(argv[1], memory, argv + 2) ?: hottest(argv[1]);
}
