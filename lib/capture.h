/* SPDX-License-Identifier: MIT */
/*
 * capture.h - names captured into the spool at the end of a recording, so
 * that it reports anywhere: module symbols (deleted files too), kernel
 * symbols, JIT perf-map names.
 */
#ifndef PROF_CAPTURE_H
#define PROF_CAPTURE_H

#include <stdint.h>

#include "intern.h"
#include "process.h"
#include "unwind.h"

/* A mapped file, held open so it can be read at the end even if deleted by then. */
struct capture_file {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	int fd;			/* -1: not held (too many), read by path */
	char *path;		/* /proc/self/fd/N, or the path */
};

struct capture_module {
	uint32_t id;		/* spool module id */
	size_t file;		/* index in files */
};

struct capture {
	struct capture_file *files;
	size_t nfiles, files_cap;
	struct capture_module *mods;
	size_t n, cap;
	struct intern_map written;	/* (scope, id) x start already written */
	uint64_t symbols;
};

void capture_init(struct capture *c);
void capture_release(struct capture *c);

/* Note module ID (just written) and how to read it later.  0 or -ENOMEM. */
int capture_module(struct capture *c, uint32_t id, const struct as_module *m);

/* Write symbol records for every frame the writer holds.  0 or -errno. */
int capture_names(struct capture *c, struct prof_spool_writer *w, struct proc_table *pt);

#endif /* PROF_CAPTURE_H */
