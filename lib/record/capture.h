/* SPDX-License-Identifier: MIT */
/*
 * capture.h - names captured into the spool at the end of a recording, so
 * that it reports anywhere: module symbols (deleted files too), kernel
 * symbols, JIT perf-map names.
 */
#ifndef PROF_CAPTURE_H
#define PROF_CAPTURE_H

#include <stdint.h>

#include "symbols/image_set.h"
#include "intern.h"
#include "process.h"
#include "addr_space.h"

struct capture {
	struct image_set *images;	/* the mapped files, by module id */
	struct intern_map written;	/* (scope, id) x start already written */
	uint64_t symbols;
};

/* 0 or -ENOMEM; release C either way. */
int capture_init(struct capture *c);
void capture_release(struct capture *c);

/* Note module ID (just written) and how to read it later.  0 or -ENOMEM. */
int capture_module(struct capture *c, uint32_t id, const struct as_module *m);

/* Write symbol records for every frame the writer holds.  0 or -errno. */
int capture_names(struct capture *c, struct prof_spool_writer *w, struct proc_table *pt);

#endif /* PROF_CAPTURE_H */
