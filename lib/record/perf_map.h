/* SPDX-License-Identifier: MIT */
/*
 * perf_map.h - /tmp/perf-PID.map, the names a JIT writes for its code
 * ("START SIZE NAME" a line), read as the hostile input it is.
 */
#ifndef PROF_PERF_MAP_H
#define PROF_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jitdump.h"

/*
 * The perf map of process PID (in its own /tmp while it lives, else the
 * host's): its entries sorted by start in *RET (N of them, the caller
 * frees them and their names), each without a name unless NAMES.  No map,
 * or one that is not a regular file of at most 256 MiB: none.  0 or
 * -ENOMEM.
 */
int perf_map_read(pid_t pid, bool names, struct jit_sym **ret, size_t *n);

/* The entry of V (N, sorted by start, not overlapping) that holds ADDR, or NULL. */
const struct jit_sym *jit_sym_find(const struct jit_sym *v, size_t n, uint64_t addr);

#endif /* PROF_PERF_MAP_H */
