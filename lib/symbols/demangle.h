/* SPDX-License-Identifier: MIT */
/*
 * demangle.h - C++ and Rust symbol names as people read them, through
 * libiberty's demangler.  Private to lib/.
 */
#ifndef PROF_DEMANGLE_H
#define PROF_DEMANGLE_H

#include <stdbool.h>

/* Whether NAME looks mangled (C++ Itanium "_Z...", Rust v0 "_R..."). */
bool demangle_candidate(const char *name);

/*
 * The demangled form of NAME (C++ with parameters, Rust legacy and v0
 * without the hash), malloc'd; NULL when NAME is not a mangled name the
 * demangler knows, or when memory ran out.
 */
char *demangle(const char *name);

#endif /* PROF_DEMANGLE_H */
