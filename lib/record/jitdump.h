/* SPDX-License-Identifier: MIT */
/*
 * jitdump.h - the code a JIT announced in its jitdump file (V8's
 * --perf-prof, CPython 3.13's -X perf_jit, .NET, LuaJIT...): the names of
 * its code ranges, as a perf map would give them.
 */
#ifndef PROF_JITDUMP_H
#define PROF_JITDUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A named range of JIT code, from a perf map or a jitdump. */
struct jit_sym {
	uint64_t start, size;
	char *name;
};

/* Whether PATH, mapped executable, is a JIT's marker of its jitdump: jit-PID.dump. */
bool jitdump_is_marker(const char *path);

/*
 * Append to *V (*N of them, room for *CAP) the code loads of the jitdump
 * at PATH, in the order written (a later load of a range replaces the
 * earlier one), moves applied.  A file cut short or damaged gives what
 * precedes the damage.  0, or -ENOMEM; a file that is not a jitdump adds
 * nothing.
 */
int jitdump_read(const char *path, struct jit_sym **v, size_t *n, size_t *cap);

#endif /* PROF_JITDUMP_H */
