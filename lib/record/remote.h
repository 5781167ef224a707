/* SPDX-License-Identifier: MIT */
/*
 * remote.h - what the recorder reads of a runtime it samples: a library's
 * exported symbols (where the runtime keeps its state) and the process's
 * memory (process_vm_readv, which needs the rights of ptrace: the
 * process's user or root).  For python.c and jvm_frames.c.
 */
#ifndef PROF_REMOTE_H
#define PROF_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* LEN bytes at ADDR of process PID into BUF: false if any of them cannot be read. */
bool remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* The 64-bit word at ADDR of PID into *RET: false if it cannot be read. */
bool remote_word(pid_t pid, uint64_t addr, uint64_t *ret);

/*
 * The values and sizes (SIZES may be NULL) of the defined .dynsym symbols
 * NAMES[0..N) of the ELF file at PATH (its own addresses), 0 for those it
 * does not export.  How many it found; 0 also for a file it cannot read.
 */
size_t remote_symbols(const char *path, const char *const *names, size_t n, uint64_t *values,
		      uint64_t *sizes);

#endif /* PROF_REMOTE_H */
