/* SPDX-License-Identifier: MIT */
/*
 * prof/tail.h - following a spool while it is written, and the live view
 * of what it reads.  The conventions of the whole API are at the top of
 * <prof/prof.h>.
 */
#ifndef LIBPROF_TAIL_H
#define LIBPROF_TAIL_H

#include <stdio.h>

#include <prof/record.h>
#include <prof/report.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A tail reads a spool while a writer still appends to it, block by block:
 * it hands out only complete, valid blocks (prof_spool_next()), in batches
 * of samples, and says at each poll whether the recording runs on, finished
 * or went wrong.  Memory stays bounded on an endless recording: the reader
 * keeps definitions (processes, threads, modules, frames, stacks), the tail
 * one batch and the distinct thread names, so both grow with what the
 * recording defines, not with its samples.  A recorder closes a block at
 * least once a second, so a sample reaches a tail about a second after it
 * was taken at most.
 */
struct prof_tail;

enum prof_tail_state {
	PROF_TAIL_STATE_WAITING = 0,	/* no spool yet: the file does not exist, or has
					 * no complete header and metadata block yet */
	PROF_TAIL_STATE_RUNNING,	/* the last poll read up to the end of the file:
					 * more may come */
	PROF_TAIL_STATE_CUT,		/* the file ends inside a block: being written, or
					 * its writer died; more may come */
	PROF_TAIL_STATE_FINISHED,	/* the trailer was read: nothing more will come */
	PROF_TAIL_STATE_CORRUPT,	/* a block failed its checksums or decoding:
					 * stopped before it */
	PROF_TAIL_STATE_SHRUNK,		/* the file became shorter than what was read:
					 * stopped */
	PROF_TAIL_STATE_ABANDONED,	/* read to its end, without a trailer, and its
					 * writer is gone (killed): nothing more will come */
};

/* The name of a state ("waiting", "running", "cut", ...), or NULL. */
const char *prof_tail_state_name(unsigned state);

/* Whether a tail in STATE will never hand out anything more. */
bool prof_tail_state_is_final(enum prof_tail_state state);

struct prof_tail_opts {
	size_t sz;			/* sizeof(struct prof_tail_opts) */
	bool from_end;			/* skip the samples of the blocks complete when the
					 * tail opens (definitions are still read); a spool
					 * that appears later is followed from its start */
	size_t max_batch;		/* samples per batch; 0: 4096 */
};

/*
 * One sample, with what the reader knew of its thread when it was read, or
 * an off-CPU interval (of a recording with off-CPU intervals) as a sample:
 * its start, thread, stack (ending in its state frame), the CPU it left,
 * and its duration in ns as the period.  Lent by a batch.
 */
struct prof_tail_sample {
	uint64_t time_ns;		/* CLOCK_MONOTONIC */
	uint32_t thread;		/* spool id of its thread */
	uint32_t stack;			/* leaf stack node id; 0: empty stack */
	uint64_t period;		/* its weight (ns for clocks and intervals) */
	uint32_t cpu;
	int32_t pid;			/* 0 when the thread is unknown */
	int32_t tid;
	const char *comm;		/* the thread's name at the sample, else its process's
					 * comm, else ""; lent until prof_tail_free() */
	uint8_t offcpu;			/* 0: a CPU sample; else an off-CPU interval in
					 * this enum prof_offcpu_state */
};

/* What one prof_tail_poll() read. */
struct prof_tail_batch {
	size_t sz;			/* sizeof(struct prof_tail_batch) */
	enum prof_tail_state state;	/* after this batch */
	const char *reason;		/* CUT, CORRUPT, SHRUNK: where and why ("block 3 at
					 * offset 4096: payload checksum mismatch"); else "".
					 * Lent until the next poll */
	const struct prof_tail_sample *const *samples; /* in spool order (off-CPU
					 * intervals where they end); the array and the
					 * samples lent until the next poll */
	size_t nsamples;		/* samples and off-CPU intervals */
	uint64_t lost;			/* events the lost records of this batch count */
	uint32_t modules_retired;	/* modules retired in this batch: their ids stay valid
					 * (ids are never reused), but addresses in the same
					 * range now belong to new modules */
	bool symbols_added;		/* new symbol records: a symbolizer may now name frames
					 * it named before differently */
	bool more;			/* the batch is full: more may be ready, poll again now */
	bool activity;			/* records were read, or the file changed size, since
					 * the previous poll: the writer is alive */
};

/* What a tail has read so far. */
struct prof_tail_stats {
	size_t sz;			/* sizeof(struct prof_tail_stats) */
	enum prof_tail_state state;	/* as of the last poll */
	uint64_t samples;		/* samples handed out */
	uint64_t skipped;		/* samples and intervals skipped for from_end */
	uint64_t lost;			/* events lost, summed over the lost records */
	uint32_t processes_alive;	/* defined and without an exit record */
	uint32_t threads_alive;
	uint64_t first_ns, last_ns;	/* times of the first and last sample handed out
					 * (CLOCK_MONOTONIC; 0 before any) */
	uint64_t blocks;		/* complete, valid blocks read */
	uint64_t offset;		/* file offset after the last block read */
	const char *path;		/* the file followed, or NULL while waiting */
	uint64_t offcpu_intervals;	/* off-CPU intervals handed out */
	uint64_t offcpu_ns;		/* and their time */
	/* the file being read: the processes and threads it defines (alive or not) */
	uint32_t processes, threads;
	/*
	 * The spools followed, this one too: 1 for a file, or for files of
	 * one recording read as one.  A recorder's tail follows its recorder
	 * into each file it goes on in (prof_recorder_switch_output()), once
	 * it has read the one before to its end, and each is a spool of its
	 * own.  When this changes, prof_tail_spool() is another one: the ids
	 * of the one before (threads, processes, stacks, frames, modules)
	 * mean nothing in it, and a symbolizer must be made for it again.
	 */
	uint32_t spools;
	uint64_t start_ns;		/* the recording's start: the first file's
					 * (CLOCK_MONOTONIC; 0 while waiting) */
};

/*
 * Follow the spool at PATH, which may not exist yet: a recording puts its
 * spool at its path when sampling starts.  Until a spool is open, each
 * poll looks for it; then it follows that file to its end: its trailer,
 * or, for a spool whose writer locks it (PROF_META_LOCKED), the moment
 * the writer is gone without one (PROF_TAIL_STATE_ABANDONED).  The first
 * look happens here, so that a file that is there but is no spool fails at
 * once.  OPTS NULL means defaults.
 * Returns: 0 and *ret; -EINVAL (opts); -ENOMEM; and for a file that is
 * there: -EBADMSG (not a spool, or its metadata is corrupt), -ENOTSUP (a
 * spool version this library does not read), -EISDIR, open(2) errors.
 */
int prof_tail_open(const char *path, const struct prof_tail_opts *opts, struct prof_tail **ret);

/*
 * Follow the N files of one recording (one that switched output) as one
 * spool, read as prof_spool_open_many() reads them: each file to its end,
 * then the next; the last one (by when its recording began) may still be
 * written, and is followed as prof_tail_open() follows a file.  They must
 * exist.  N == 1 is prof_tail_open().
 * Returns: 0 and *ret; those of prof_spool_open_many(); -EINVAL (opts).
 */
int prof_tail_open_many(const char *const *paths, size_t n, const struct prof_tail_opts *opts,
			struct prof_tail **ret);

/*
 * Read what was appended since the last poll, without waiting: at most
 * max_batch samples, with the definitions before them, into *RET (whose sz
 * the caller set; it lends the samples until the next poll).  Damage is no
 * error: the state says CORRUPT or SHRUNK, the reason says where, and
 * every later poll returns 0 with that state.
 * Returns: the number of samples (>= 0); while no spool is open yet, the
 * errors of prof_tail_open(); -EINVAL (RET's sz not set); -ENOMEM.
 */
int prof_tail_poll(struct prof_tail *t, struct prof_tail_batch *ret);

/*
 * Wait until the file may have changed (inotify, else a short sleep), or
 * TIMEOUT_MS passed (at most a second is waited at a time).  A signal ends
 * the wait early.
 * Returns: 0; -EINVAL for a negative TIMEOUT_MS.
 */
int prof_tail_wait(struct prof_tail *t, int timeout_ms);

/*
 * The reader of the followed spool, with every definition read so far (for
 * prof_spool_stack(), prof_spool_thread(), prof_spool_meta(), and a
 * symbolizer: prof_symbolizer_new()); NULL while WAITING.  Lent until
 * prof_tail_free(); do not read from it (prof_spool_next()) directly.
 */
const struct prof_spool *prof_tail_spool(const struct prof_tail *t);

/* Returns: 0 with *ret filled (its sz set by the caller); -EINVAL (sz not set). */
int prof_tail_stats(const struct prof_tail *t, struct prof_tail_stats *ret);

/*
 * Give the disk space of the blocks read and handed out back to the file
 * system (fallocate(2) FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, in whole
 * file system blocks; the header and the metadata block stay), for a
 * recording watched live whose spool is not kept: the spool's size stays,
 * but those blocks read as zeros, so prof report and other readers can no
 * longer read past its metadata.  Only for the tail of a recorder
 * (prof_recorder_tail()).
 * Returns: 0; -ENOTSUP (a tail of a file, not of a recorder); -EOPNOTSUPP
 * (the file system cannot punch holes); another fallocate(2) error.
 */
int prof_tail_discard_consumed(struct prof_tail *t);

/* Close the file and free T (NULL: nothing); a recorder may then get a new tail. */
void prof_tail_free(struct prof_tail *t);

/*
 * The tail of REC's own spool: a tail over the file REC writes (through
 * REC's descriptor, so also before the file is at its path), opened now
 * with default options.  It follows the file to its trailer, then each
 * file REC goes on in (prof_recorder_switch_output(); see stats.spools),
 * and may outlive REC.  One at a time per recorder; it may be polled on another
 * thread than REC's (see Threads in <prof/prof.h>).
 * Returns: 0 and *ret; -EBUSY (REC has a tail that was not freed);
 * -ENOTSUP (REC writes to a caller-owned sink, prof_recorder_attach_sink(),
 * or to a pipe or a device); -ENOMEM; open(2) errors.
 */
int prof_recorder_tail(struct prof_recorder *rec, struct prof_tail **ret);

/*
 * A symbolizer over the spool T follows (prof_symbolizer_new() with OPTS),
 * to name the frames of T's batches.  For the tail of a recorder it reads
 * each module's ELF file through the descriptor the recorder opened when
 * it wrote the module, the file the process mapped, so that names are
 * right while the recording runs even when that file has since been
 * deleted or replaced, or exists only in the target's mount namespace (a
 * module whose file the recorder could not hold is read at its path).
 * Those files stay open while the symbolizer lives, recorder freed or
 * not.  Modules retired need nothing of it (ids are never reused); after a
 * batch with symbols_added, it may name frames differently.  Use it from
 * the thread that polls T.
 * Returns: 0 and *RET; -EAGAIN while T has read no metadata yet
 * (prof_tail_spool() NULL); -EINVAL; the errors of prof_symbolizer_new().
 */
int prof_tail_symbolizer(struct prof_tail *t, const struct prof_symbolizer_opts *opts,
			 struct prof_symbolizer **ret);

/*
 * A live view of a tail: what prof tail and prof record --live print.  It
 * names frames with a symbolizer of its own, prof_tail_symbolizer() (created
 * at the first sample), and keeps per function its self samples of the
 * current interval and overall: memory grows with distinct frames and
 * functions, and an interval's counts are dropped when printed.
 */
struct prof_tail_view;

enum prof_tail_format {
	PROF_TAIL_FORMAT_TOP = 0,	/* at each print, the hottest functions of the
					 * interval and overall, under a header of rates
					 * and counts */
	PROF_TAIL_FORMAT_SAMPLES,	/* as they come: "TIME PID TID COMM STACK", a line
					 * a sample */
	PROF_TAIL_FORMAT_JSON,		/* at each print, one JSON object on a line (its
					 * keys: prof-tail(1)) */
};

/* The name of a format ("top", "samples", "json"), or NULL. */
const char *prof_tail_format_name(unsigned format);

/* Returns: the format named NAME; -EINVAL (the message lists the names). */
int prof_tail_format_parse(const char *name);

struct prof_tail_view_opts {
	size_t sz;			/* sizeof(struct prof_tail_view_opts) */
	enum prof_tail_format format;
	bool refresh;			/* top: redraw in place (clear the screen first: for a
					 * terminal); else a block per print, then a blank line */
	long limit;			/* top and json: functions listed; 0: 20 */
	const char *title;		/* top: the name in the first line; NULL: the file's */
	enum prof_weight weight;	/* what functions are ranked by: CPU samples
					 * (cpu), off-CPU time (off-cpu) or both (wall);
					 * an off-CPU interval counts for the function
					 * that waited, under its state frame */
};

/* Returns: 0 and *ret, a view; -EINVAL (opts); -ENOMEM. */
int prof_tail_view_new(const struct prof_tail_view_opts *opts, struct prof_tail_view **ret);

/*
 * Count batch B of tail T (T must stay the same for a view); in the samples
 * format, write its lines to OUT now and flush it.  TIME is seconds since
 * the recording started (metadata mono_start_ns), with microseconds; PID
 * and TID are the kernel's; COMM is the thread's name at the sample,
 * spaces and control characters as '_', "[unknown]" when empty; STACK is
 * the sample's functions from the root to the leaf joined by ';', as the
 * folded report names them (inline frames included; a ';' in a name is
 * '?'), "[empty stack]" for a sample without a frame.  STACK may hold
 * spaces (C++ names): it is the rest of the line.
 * Returns: 0; -ENOMEM; -EINVAL (a stack the spool does not define); the
 * error of writing to OUT (-EPIPE, -ENOSPC...; -EIO when unknown).
 */
int prof_tail_view_add(struct prof_tail_view *v, struct prof_tail *t,
		       const struct prof_tail_batch *b, FILE *out);

/*
 * Print the interval that ends now to OUT (top: a view; json: an object and
 * a newline; samples: nothing) and start the next one.  The interval
 * covers the samples counted since the previous print, its length is the
 * recording time between their last samples.
 * Returns: 0; -ENOMEM; the error of writing to OUT.
 */
int prof_tail_view_print(struct prof_tail_view *v, struct prof_tail *t, FILE *out);

/* Free V (NULL: nothing). */
void prof_tail_view_free(struct prof_tail_view *v);

/*
 * The view of prof top: at each print, the hottest functions with their
 * self and total shares and the process each belongs to (the one with most
 * of its samples), or the processes themselves, under a header.  It counts
 * every weight at once (CPU samples, off-CPU time, both), so that the
 * weight and the grouping can change between prints without losing what
 * was counted.  As perf top's, its counts decay: each interval keeps 7/8 of
 * them (the view follows what the machine does now, a half-life of about
 * five prints), unless cumulative.  Memory grows with distinct frames,
 * functions, processes and (function, process) pairs, not with samples.
 */
struct prof_top;

struct prof_top_opts {
	size_t sz;			/* sizeof(struct prof_top_opts) */
	enum prof_tail_format format;	/* top or json (samples: -EINVAL) */
	bool refresh;			/* top: clear the screen and home first (a terminal);
					 * else a block per print, then a blank line */
	long limit;			/* rows; 0: 20 */
	enum prof_weight weight;	/* what rows are ranked and shared by */
	bool by_process;		/* rows are processes, not functions */
	bool cumulative;		/* counts since the start, not decaying */
	unsigned columns;		/* top: cut lines to this width; 0: do not */
	const char *title;		/* the name in the header; NULL: "prof top" */
	bool busy_known;		/* the whole machine: show busy in the header */
	double busy;			/* the share of its CPU time not idle, 0..1 */
};

/* Returns: 0 and *ret; -EINVAL (opts); -ENOMEM. */
int prof_top_new(const struct prof_top_opts *opts, struct prof_top **ret);

/*
 * Change V's options (what a key asks for: another weight, grouping, size)
 * from the next print on; the counts stay.
 * Returns: 0; -EINVAL (opts, or a weight the spool V counted cannot be
 * weighed by: the message says why; V keeps its options then).
 */
int prof_top_set(struct prof_top *v, const struct prof_top_opts *opts);

/*
 * Count batch B of tail T (T must stay the same for a view).
 * Returns: 0; -ENOMEM; -EINVAL (a stack the spool does not define).
 */
int prof_top_add(struct prof_top *v, struct prof_tail *t, const struct prof_tail_batch *b);

/*
 * Print the view to OUT (top: a block whose first line starts "prof top:"
 * or the title; json: one object on a line), with NOTE (NULL: none) as its
 * last line.  Printing again (a redraw) shows the same counts.
 * Returns: 0; -ENOMEM; the error of writing to OUT.
 */
int prof_top_print(struct prof_top *v, struct prof_tail *t, const char *note, FILE *out);

/*
 * End the interval: the counts decay (keep 7/8; unless cumulative), and
 * the rate the header shows starts again.
 * Returns: 0; -EINVAL (no view).
 */
int prof_top_next(struct prof_top *v);

/* Free V (NULL: nothing). */
void prof_top_free(struct prof_top *v);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_TAIL_H */
