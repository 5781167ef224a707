/* SPDX-License-Identifier: MIT */
/*
 * dwinfo.h - the DWARF of one file, read with libdw, for what a profile
 * needs of it: at an address, the function, the functions inlined into it
 * there, and the source lines.  Private to lib/.
 */
#ifndef PROF_DWINFO_H
#define PROF_DWINFO_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A function at an address: the outermost, or one inlined into the one before it. */
struct dwinfo_frame {
	const char *name;	/* linkage name, else DW_AT_name; NULL: unnamed */
	const char *file;	/* source file, as libdw builds its path; NULL unknown */
	const char *comp_dir;	/* the compilation directory; NULL unknown */
	uint32_t line;		/* the line of the address (innermost frame) or of the
				 * call to the next frame (the others); 0 unknown */
};

struct dwinfo_unit;
struct dwinfo_range;

struct dwinfo {
	Elf *elf;
	Dwarf *dw;			/* NULL: the file has no DWARF */
	struct dwinfo_unit *units;	/* by CU DIE offset */
	size_t nunits, units_cap;
	struct dwinfo_range *cus;	/* address ranges of the CUs, sorted */
	size_t ncus, cus_cap;
	struct dwinfo_frame *chain;	/* the last lookup's frames */
	size_t chain_cap;
	Dwarf_Die *inlined;		/* scratch: the inlined DIEs of a lookup */
	size_t inlined_cap;
};

/*
 * Open the DWARF of the ELF file at PATH and index its compilation units
 * by address.  A file without DWARF opens with no DWARF (dw NULL: lookups
 * find nothing), its ELF still there for its symbols; so does any file
 * without DWARF set (its symbols alone are wanted: reading DWARF
 * decompresses and indexes megabytes).  0, or -errno with the message set
 * (open(2) errors, -ENOEXEC: not ELF, -EBADMSG: damaged DWARF, -ENOMEM);
 * release D either way.
 */
int dwinfo_open(const char *path, bool dwarf, struct dwinfo *d);

/*
 * The frames at VADDR (an ELF virtual address), outermost first: the
 * function holding it, then each function inlined there, the innermost
 * last.  Returns their number with *RET pointing into D (valid until the
 * next lookup; the strings until dwinfo_release()), 0 when the DWARF does
 * not cover VADDR, or -ENOMEM.
 */
int dwinfo_lookup(struct dwinfo *d, uint64_t vaddr, const struct dwinfo_frame **ret);

void dwinfo_release(struct dwinfo *d);

#endif /* PROF_DWINFO_H */
