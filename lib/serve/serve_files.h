/* SPDX-License-Identifier: MIT */
/*
 * serve_files.h - the files of the recording prof serve answers from, and
 * when each began: private to lib/serve/.
 */
#ifndef PROF_SERVE_FILES_H
#define PROF_SERVE_FILES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file of the recording, as the recording loop saw it begin. */
struct serve_file {
	char *path;
	uint64_t start_ns;	/* CLOCK_MONOTONIC: it began at this time or after (0: at
				 * the start of the recording) */
};

/*
 * The recording's files, oldest first.  The recording loop adds and
 * removes them; the threads that build profiles pick from them: the lock
 * is taken inside each function.
 */
struct serve_files {
	char *dir;
	bool own_dir;		/* made here: removed at the end */
	char *base;		/* the spool path: DIR/prof-serve-PID */
	pthread_mutex_t lock;
	struct serve_file *v;
	size_t n, cap;
};

/*
 * The files of a recording in DIR (NULL: a directory of their own, made in
 * $TMPDIR or /tmp).  0, or -errno with the message (F is then released).
 */
int files_init(struct serve_files *f, const char *dir);

/*
 * The recording writes PATH (a recorder's spool_path): a new file when it
 * is not the last one, begun at START_NS or after.  0 or -ENOMEM.
 */
int files_note(struct serve_files *f, const char *path, uint64_t start_ns);

/*
 * Remove the files that ended before BEFORE_NS (their successor began
 * before it, a margin of time aside, so that a profile being built finds
 * what it picked), and the oldest beyond MAX_FILES.
 */
void files_prune(struct serve_files *f, uint64_t before_ns, size_t max_files);

/*
 * The paths of the files that may hold samples from FROM_NS to TO_NS, in
 * the order they began: *RET (an array of *RET_N strings; the caller frees
 * each and it), NULL and 0 when there are none.  0 or -ENOMEM.
 */
int files_pick(struct serve_files *f, uint64_t from_ns, uint64_t to_ns, char ***ret,
	       size_t *ret_n);

/* Remove every file of the recording, and the directory if it was made here; free F's memory. */
void files_release(struct serve_files *f);

#endif /* PROF_SERVE_FILES_H */
