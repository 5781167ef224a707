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
 *   leaf: NAME           (--unlink) the commonest leaf function of the samples the
 *                        tail handed out while COMMAND ran, named by the tail's
 *                        symbolizer (prof_tail_symbolizer())
 *   plain-leaf: NAME     the same, named by a plain symbolizer of the spool
 *
 * With --discard it calls prof_tail_discard_consumed() after every poll;
 * --freq samples HZ times a second (default 999).  With --unlink PATH it
 * deletes PATH once the recorder has written samples (so once it has seen
 * COMMAND's mappings), and names the samples read from then on.
 *
 *   rectail [--discard] [--freq HZ] [--unlink PATH] OUT -- COMMAND [ARG...]
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
	struct prof_sink sink = { .sz = sizeof(sink), .write = null_write };
	struct prof_recorder_opts opts = { .sz = sizeof(opts) };
	char *argv[] = { "true", NULL };
	struct prof_launched *l;
	struct prof_recorder *rec;
	struct prof_tail *t;

	if (prof_launch_suspended(argv, &l) < 0 ||
	    prof_recorder_attach_sink(prof_launched_pid(l), &sink, PROF_ATTACH_MODE_ON_EXEC, &opts,
				      &rec) < 0)
		die("attach to a sink");
	printf("notsup: %s\n", prof_recorder_tail(rec, &t) == -ENOTSUP ? "ok" : "WRONG");
	prof_recorder_free(rec);
	prof_launched_free(l);
}

/* Leaf functions by samples, as one symbolizer names them. */
struct leaves {
	struct prof_symbolizer *sym;
	char *names[64];
	uint64_t counts[64];
	size_t n;
};

static void count_leaf(struct leaves *l, const struct prof_spool *sp, uint32_t stack)
{
	const struct prof_stack_node *sn = stack ? prof_spool_stack(sp, stack) : NULL;
	PROF_OPTS(prof_resolved_frame, rf);
	size_t i;

	if (!sn || prof_symbolizer_frame(l->sym, sn->frame, &rf) < 0)
		return;
	for (i = 0; i < l->n && strcmp(l->names[i], rf.function); i++)
		;
	if (i == l->n && l->n < 64)
		l->names[l->n++] = strdup(rf.function);
	if (i < l->n)
		l->counts[i]++;
}

static const char *top_leaf(const struct leaves *l)
{
	size_t i, best = 0;

	for (i = 1; i < l->n; i++)
		if (l->counts[i] > l->counts[best])
			best = i;
	return l->n ? l->names[best] : "(none)";
}

/* With NAMED, the leaves of the samples read, by both symbolizers. */
static struct leaves *named[2];

/* Read what the tail has now; returns the samples read. */
static uint64_t drain(struct prof_tail *t, bool discard, enum prof_tail_state *state)
{
	PROF_OPTS(prof_tail_batch, b);
	uint64_t n = 0;
	size_t i, k;
	int r;

	do {
		r = prof_tail_poll(t, &b);
		if (r < 0)
			die("poll the tail");
		n += b.nsamples;
		*state = b.state;
		for (k = 0; named[0] && k < 2; k++)
			for (i = 0; i < b.nsamples; i++)
				count_leaf(named[k], prof_tail_spool(t), b.samples[i]->stack);
	} while (b.more);
	if (discard && prof_tail_discard_consumed(t) < 0)
		die("discard");
	return n;
}

int main(int argc, char **argv)
{
	struct prof_recorder_opts opts = { .sz = sizeof(opts) };
	enum prof_tail_state state = PROF_TAIL_STATE_WAITING;
	PROF_OPTS(prof_recording_summary, sum);
	uint64_t live = 0, all = 0;
	struct prof_launched *child;
	struct prof_recorder *rec;
	struct prof_tail *t, *t2;
	bool discard = false, reaped = false;
	const char *unlink_path = NULL;
	struct leaves tail_leaves = { 0 }, plain_leaves = { 0 };
	PROF_OPTS(prof_poll_summary, ps);
	size_t active;
	struct stat st;
	int i = 1, status;

	for (; i < argc && !strncmp(argv[i], "--", 2) && argv[i][2]; i++) {
		if (!strcmp(argv[i], "--discard"))
			discard = true;
		else if (!strcmp(argv[i], "--freq") && i + 1 < argc)
			opts.freq_hz = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--unlink") && i + 1 < argc)
			unlink_path = argv[++i];
		else
			break;
	}
	if (argc - i < 3 || strcmp(argv[i + 1], "--")) {
		fprintf(stderr, "usage: rectail [--discard] [--freq HZ] [--unlink PATH] OUT -- "
			"COMMAND [ARG...]\n");
		return 64;
	}
	check_notsup();
	if (prof_launch_suspended(&argv[i + 2], &child) < 0 ||
	    prof_recorder_attach(prof_launched_pid(child), argv[i], PROF_ATTACH_MODE_ON_EXEC, &opts,
				 &rec) < 0)
		die("record");
	if (prof_recorder_tail(rec, &t) < 0)
		die("tail");
	printf("busy: %s\n", prof_recorder_tail(rec, &t2) == -EBUSY ? "ok" : "WRONG");
	if (prof_launched_release(child) < 0)
		die("run");
	for (;;) {
		if (prof_recorder_poll(rec, 100, &ps) < 0)
			die("poll");
		if (unlink_path && ps.samples) {
			/* the recorder holds the file: its tail's symbolizer reads that */
			if (unlink(unlink_path) < 0)
				die("unlink");
			unlink_path = NULL;
			live += drain(t, discard, &state);
			if (prof_tail_symbolizer(t, NULL, &tail_leaves.sym) < 0 ||
			    prof_symbolizer_new(prof_tail_spool(t), NULL, &plain_leaves.sym) < 0)
				die("symbolizer");
			named[0] = &tail_leaves;
			named[1] = &plain_leaves;
		}
		live += drain(t, discard, &state);
		if (!reaped && prof_launched_wait(child, false, &status) == 1)
			reaped = true;
		if (reaped && prof_recorder_active_process_count(rec, &active) == 0 && !active)
			break;
	}
	all = live;
	named[0] = named[1] = NULL;	/* the names captured at the end would hide the point */
	if (prof_recorder_close(rec, &sum) < 0)
		die("finish");
	/* the tail outlives its recorder: the last blocks and the trailer */
	all += drain(t, discard, &state);
	printf("live: %" PRIu64 "\ntail: %" PRIu64 "\nrecorder: %" PRIu64 "\nstate: %s\n", live,
	       all, sum.samples, prof_tail_state_name(state));
	if (discard && stat(argv[i], &st) == 0)
		printf("allocated: %llu of %llu\n", (unsigned long long)st.st_blocks * 512,
		       (unsigned long long)st.st_size);
	if (tail_leaves.sym)
		printf("leaf: %s\nplain-leaf: %s\n", top_leaf(&tail_leaves), top_leaf(&plain_leaves));
	for (i = 0; i < (int)tail_leaves.n; i++)
		free(tail_leaves.names[i]);
	for (i = 0; i < (int)plain_leaves.n; i++)
		free(plain_leaves.names[i]);
	prof_symbolizer_free(tail_leaves.sym);
	prof_symbolizer_free(plain_leaves.sym);
	prof_tail_free(t);
	prof_launched_free(child);
	return 0;
}
