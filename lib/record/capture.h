/* SPDX-License-Identifier: MIT */
/*
 * capture.h - names captured into the spool at the end of a recording, so
 * that it reports anywhere: module symbols (deleted files too), kernel
 * symbols, JIT perf-map names.
 */
#ifndef PROF_CAPTURE_H
#define PROF_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/image_set.h"
#include "unwind/addr_space.h"
#include "intern.h"
#include "jitdump.h"

struct prof_spool_writer;

struct capture {
	struct image_set *images;	/* the mapped files, by module id */
	struct intern_map written;	/* (scope, id) x start already written */
	uint64_t symbols;
	uint64_t map_names, jitdump_names;	/* of those, JIT names: by where they came from */
};

/* 0 or -ENOMEM; release C either way. */
int capture_init(struct capture *c);
void capture_release(struct capture *c);

/* Note module ID (just written) and how to read it later.  0 or -ENOMEM. */
int capture_module(struct capture *c, uint32_t id, const struct as_module *m);

/* A process of the spool, by its id: where its JIT's perf map and jitdump are. */
struct capture_process {
	uint32_t id;
	pid_t pid;
	const char *jitdump;	/* the jitdump it mapped (its path, as it named it), or NULL */
	const struct jit_sym *py;	/* its Python functions' names (python.c), by address */
	size_t npy;
	const struct jit_sym *jit;	/* its JIT loads' names (jit_names.c), by address */
	size_t njit;
	const struct jit_sym *java;	/* its interpreted methods' names (jvm_frames.c) */
	size_t njava;
};

/*
 * Write symbol records for every frame the writer holds; the names of a
 * process's anonymous code are read from the perf map of its pid in PROCS
 * (N of them, in any order; sorted here).  0 or -errno.
 */
int capture_names(struct capture *c, struct prof_spool_writer *w, struct capture_process *procs,
		  size_t n);

#endif /* PROF_CAPTURE_H */
