/* SPDX-License-Identifier: MIT */
/*
 * elf_file.h - one ELF file opened for symbol lookup by file offset: its
 * build-id, its PT_LOAD segments and a sorted table of its function
 * symbols.  Private to lib/.
 */
#ifndef PROF_ELF_FILE_H
#define PROF_ELF_FILE_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "gopclntab.h"
#include "prof.h"
#include "symtab.h"

struct elf_load {
	uint64_t offset, filesz, vaddr;
};

struct elf_file {
	Elf *elf;		/* kept open: symbol names point into its data */
	uint8_t build_id[PROF_BUILD_ID_MAX];
	size_t build_id_len;	/* 0: the file has none */
	struct elf_load *loads;
	size_t nloads, loads_cap;
	struct symtab syms;	/* key 0, ELF virtual addresses */
	bool dynsym;		/* names came from .dynsym: no .symtab was read */
	bool gopclntab;		/* names came from a Go program's .gopclntab */
	struct gopclntab go;	/* that table, for file:line (with gopclntab) */
};

/*
 * Open PATH and read its build-id, segments and symbols (.symtab, else
 * .dynsym).  0 with *RET filled, or -errno with the message set: open(2)
 * errors, -EINVAL for what is not a regular file, -ENOEXEC for what is not
 * an ELF file, -EBADMSG for a damaged one, -ENOMEM.
 */
int elf_file_open(const char *path, struct elf_file *ret);

/*
 * elf_file_open() for the lookups of file offsets OFFS[0..N) alone: of the
 * symbols, only those that hold one of them are kept, for a lookup of each
 * to find what it would in the whole table.  A program's table has tens of
 * thousands of symbols; a recording names a few hundred of them.
 */
int elf_file_open_for(const char *path, const uint64_t *offs, size_t n, struct elf_file *ret);

/*
 * Replace the symbols of F with the .symtab of ELF, the file's separate
 * debug file, which must outlive F.  An ELF without .symtab leaves F as
 * it was.  0, or -ENOMEM, -EBADMSG.
 */
int elf_file_read_symtab(struct elf_file *f, Elf *elf);

/* The virtual address that file offset OFF is loaded at; false if none. */
bool elf_file_vaddr(const struct elf_file *f, uint64_t off, uint64_t *ret);

/*
 * The symbol holding file offset OFF, or NULL; *RET_DELTA is then how far
 * into the symbol OFF lies.
 */
const struct symtab_entry *elf_file_lookup(const struct elf_file *f, uint64_t off,
					   uint64_t *ret_delta);

/*
 * The source file and line of virtual address VADDR, from the .gopclntab
 * F's names came from: false where it does not say (or F has none).
 */
bool elf_file_go_line(const struct elf_file *f, uint64_t vaddr, const char **file,
		      uint32_t *line);

void elf_file_release(struct elf_file *f);

#endif /* PROF_ELF_FILE_H */
