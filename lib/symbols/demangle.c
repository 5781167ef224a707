/* SPDX-License-Identifier: MIT */
/*
 * demangle.c - a thin wrapper over libiberty's cplus_demangle(), the
 * demangler of binutils and gdb: it knows the C++ Itanium ABI and both Rust
 * schemes (legacy, which wraps C++ mangling, and v0), and it allocates with
 * malloc, so running out of memory is a NULL, never an abort.  Names that
 * cannot be mangled are turned away before the demangler sees them.
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"

bool demangle_candidate(const char *name)
{
	/* _Z: C++ and Rust legacy; _R: Rust v0 (a path tag or a version follows) */
	return name[0] == '_' &&
	       (name[1] == 'Z' || (name[1] == 'R' && ((name[2] >= 'A' && name[2] <= 'Z') ||
						      (name[2] >= '0' && name[2] <= '9'))));
}

char *demangle(const char *name)
{
	if (!demangle_candidate(name))
		return NULL;
	/* DMGL_AUTO tries Rust first: legacy Rust names are valid C++ names too */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
