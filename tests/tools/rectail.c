/* SPDX-License-Identifier: MIT */
/*
 * rectail - record COMMAND with libprof's recorder while its own tail reads
 * the spool, through the public API only, and print what a test checks:
 *
 *   busy: ok             a second prof_recorder_tail() got -EBUSY
 *   notsup: ok           a recorder writing to a caller's sink got -ENOTSUP
 *   live: N              samples the tail handed out while COMMAND ran
 *   tail: N              samples the tail handed out in all
 *   recorder: N          samples the recorder wrote
 *   state: finished      the tail's state at the end
 *   allocated: B of S    (--discard) bytes the spool occupies on disk, of its size
 *
 * With --discard it calls prof_tail_discard_consumed() after every poll;
 * --freq samples HZ times a second (default 999).
 *
 *   rectail [--discard] [--freq HZ] OUT -- COMMAND [ARG...]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof.h"

static void die(const char *what)
{
	fprintf(stderr, "rectail: %s: %s\n", what, prof_errmsg());
	exit(1);
}

static ssize_t null_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	return (ssize_t)len;
}

/* A recorder writing to a caller's sink has no file: its tail is -ENOTSUP. */
static void check_notsup(void)
{
	struct prof_writer sink = { .write = null_write };
	struct prof_recorder_opts opts = { .sz = sizeof(opts) };
	char *argv[] = { "true", NULL };
	struct prof_launched *l;
	struct prof_recorder *rec;
	struct prof_tail *t;

	if (prof_launch_suspended(argv, &l) < 0 ||
	    prof_recorder_attach_writer(prof_launched_pid(l), &sink, PROF_ATTACH_ON_EXEC, &opts,
					&rec) < 0)
		die("attach to a sink");
	printf("notsup: %s\n", prof_recorder_tail(rec, &t) == -ENOTSUP ? "ok" : "WRONG");
	prof_recorder_free(rec);
	prof_launched_free(l);
}

/* Read what the tail has now; returns the samples read. */
static uint64_t drain(struct prof_tail *t, bool discard, enum prof_tail_state *state)
{
	struct prof_tail_batch b;
	uint64_t n = 0;
	int r;

	do {
		r = prof_tail_poll(t, &b);
		if (r < 0)
			die("poll the tail");
		n += b.nsamples;
		*state = b.state;
	} while (b.more);
	if (discard && prof_tail_discard_consumed(t) < 0)
		die("discard");
	return n;
}

int main(int argc, char **argv)
{
	struct prof_recorder_opts opts = { .sz = sizeof(opts) };
	enum prof_tail_state state = PROF_TAIL_WAITING;
	struct prof_recording_summary sum;
	uint64_t live = 0, all = 0;
	struct prof_launched *child;
	struct prof_recorder *rec;
	struct prof_tail *t, *t2;
	bool discard = false, reaped = false;
	size_t active;
	struct stat st;
	int i = 1, status;

	for (; i < argc && !strncmp(argv[i], "--", 2) && argv[i][2]; i++) {
		if (!strcmp(argv[i], "--discard"))
			discard = true;
		else if (!strcmp(argv[i], "--freq") && i + 1 < argc)
			opts.freq_hz = strtoull(argv[++i], NULL, 10);
		else
			break;
	}
	if (argc - i < 3 || strcmp(argv[i + 1], "--")) {
		fprintf(stderr, "usage: rectail [--discard] [--freq HZ] OUT -- COMMAND [ARG...]\n");
		return 64;
	}
	check_notsup();
	if (prof_launch_suspended(&argv[i + 2], &child) < 0 ||
	    prof_recorder_attach(prof_launched_pid(child), argv[i], PROF_ATTACH_ON_EXEC, &opts,
				 &rec) < 0)
		die("record");
	if (prof_recorder_tail(rec, &t) < 0)
		die("tail");
	printf("busy: %s\n", prof_recorder_tail(rec, &t2) == -EBUSY ? "ok" : "WRONG");
	if (prof_launched_release(child) < 0)
		die("run");
	for (;;) {
		if (prof_recorder_poll(rec, 100, NULL) < 0)
			die("poll");
		live += drain(t, discard, &state);
		if (!reaped && prof_launched_wait(child, false, &status) == 1)
			reaped = true;
		if (reaped && prof_recorder_active_process_count(rec, &active) == 0 && !active)
			break;
	}
	all = live;
	if (prof_recorder_finish(rec, &sum) < 0)
		die("finish");
	/* the tail outlives its recorder: the last blocks and the trailer */
	all += drain(t, discard, &state);
	printf("live: %" PRIu64 "\ntail: %" PRIu64 "\nrecorder: %" PRIu64 "\nstate: %s\n", live,
	       all, sum.samples, prof_tail_state_name(state));
	if (discard && stat(argv[i], &st) == 0)
		printf("allocated: %llu of %llu\n", (unsigned long long)st.st_blocks * 512,
		       (unsigned long long)st.st_size);
	prof_tail_free(t);
	prof_launched_free(child);
	return 0;
}
