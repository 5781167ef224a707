/* SPDX-License-Identifier: MIT */
/*
 * dwinfo.c - functions, inline chains and source lines from DWARF, with
 * libdw.  Opening indexes the compilation units by address (their DIEs
 * only); the first lookup in a unit indexes its functions; a lookup then
 * binary-searches the function and walks down only the scopes that hold
 * the address (lexical blocks, inlined subroutines), so that its cost is
 * that of one path through one function, not of the unit.  The DWARF is
 * untrusted: depths are bounded and every libdw failure means "not
 * covered", never a crash.
 */
#include <dwarf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfo.h"
#include "dwinfo.h"
#include "internal.h"

/* Nesting deeper than this (namespaces, blocks, inlines) is not followed. */
#define DEPTH_MAX 64

struct dwinfo_range {
	uint64_t start, end;
	uint64_t die;		/* DIE offset: a CU's, or a function's */
};

struct dwinfo_unit {
	uint64_t die;			/* the CU DIE's offset */
	struct dwinfo_range *funcs;	/* sorted; NULL until indexed */
	size_t nfuncs, funcs_cap;
	bool indexed;
};

static int add_range(struct dwinfo_range **v, size_t *n, size_t *cap, uint64_t start,
		     uint64_t end, uint64_t die)
{
	void *p = *v;
	int r;

	if (end <= start)
		return 0;
	r = grow_array(&p, cap, *n + 1, sizeof(**v));
	*v = p;
	if (r < 0)
		return r;
	(*v)[(*n)++] = (struct dwinfo_range){ .start = start, .end = end, .die = die };
	return 0;
}

/* Add the address ranges of DIE (none: nothing added). */
static int add_die_ranges(struct dwinfo_range **v, size_t *n, size_t *cap, Dwarf_Die *die,
			  uint64_t off)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t it = 0;
	int r;

	while ((it = dwarf_ranges(die, it, &base, &start, &end)) > 0) {
		r = add_range(v, n, cap, start, end, off);
		if (r < 0)
			return r;
	}
	return 0;
}

static int by_start(const void *pa, const void *pb)
{
	const struct dwinfo_range *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* The entry of V (sorted) holding ADDR, or NULL; ranges may nest, so look back a little. */
static const struct dwinfo_range *find_range(const struct dwinfo_range *v, size_t n,
					     uint64_t addr)
{
	size_t lo = 0, hi = n, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; lo > 0 && k < 16; lo--, k++)
		if (addr < v[lo - 1].end)
			return &v[lo - 1];
	return NULL;
}

static int index_units(struct dwinfo *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;
	void *v;
	int r;

	while (dwarf_get_units(d->dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		uint64_t off = dwarf_dieoffset(&cudie);

		if (type != DW_UT_compile)
			continue;
		v = d->units;
		r = grow_array(&v, &d->units_cap, d->nunits + 1, sizeof(*d->units));
		d->units = v;
		if (r < 0)
			return r;
		d->units[d->nunits++] = (struct dwinfo_unit){ .die = off };
		r = add_die_ranges(&d->cus, &d->ncus, &d->cus_cap, &cudie, off);
		if (r < 0)
			return r;
	}
	/* units come in offset order; ranges need sorting */
	qsort(d->cus, d->ncus, sizeof(*d->cus), by_start);
	return 0;
}

int dwinfo_open(const char *path, bool dwarf, struct dwinfo *d)
{
	int fd, r = 0;

	memset(d, 0, sizeof(*d));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return error_set(-errno, "cannot open '%s'", path);
	d->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF)
		r = error_setx(-ENOEXEC, "'%s' is not an ELF file", path);
	/*
	 * libdw finds a dwz file (.gnu_debugaltlink) beside the one open on FD.
	 * A debug file may hold only a symbol table: no DWARF is then no error.
	 */
	if (r == 0 && dwarf && !(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL)) &&
	    debuginfo_has_dwarf(d->elf))
		r = error_setx(-EBADMSG, "'%s' has damaged DWARF: %s", path, dwarf_errmsg(-1));
	/* the file is mapped: the descriptor can go */
	if (d->elf)
		elf_cntl(d->elf, ELF_C_FDDONE);
	close(fd);
	return r < 0 || !d->dw ? r : index_units(d);
}

void dwinfo_release(struct dwinfo *d)
{
	size_t i;

	for (i = 0; i < d->nunits; i++)
		free(d->units[i].funcs);
	free(d->units);
	free(d->cus);
	free(d->chain);
	free(d->inlined);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	memset(d, 0, sizeof(*d));
}

/* Index the functions with code under PARENT: those of the CU, of its namespaces and classes. */
static int index_funcs(struct dwinfo_unit *u, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die child;
	int r = 0;

	if (depth > DEPTH_MAX || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			r = add_die_ranges(&u->funcs, &u->nfuncs, &u->funcs_cap, &child,
					   dwarf_dieoffset(&child));
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			r = index_funcs(u, &child, depth + 1);
			break;
		default:
			break;
		}
	} while (r == 0 && dwarf_siblingof(&child, &child) == 0);
	return r;
}

static int by_die(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key, e = ((const struct dwinfo_unit *)elem)->die;

	return k < e ? -1 : k > e;
}

/* The unit of the CU DIE CUDIE, its functions indexed; NULL if it is not one of ours. */
static struct dwinfo_unit *unit_of(struct dwinfo *d, Dwarf_Die *cudie, int *err)
{
	uint64_t off = dwarf_dieoffset(cudie);
	/* bsearch(3) and qsort(3) may not take NULL, even for no elements */
	struct dwinfo_unit *u = d->nunits ? bsearch(&off, d->units, d->nunits, sizeof(*d->units),
						    by_die) : NULL;

	*err = 0;
	if (!u || u->indexed)
		return u;
	*err = index_funcs(u, cudie, 0);
	if (*err < 0)
		return NULL;
	if (u->nfuncs)
		qsort(u->funcs, u->nfuncs, sizeof(*u->funcs), by_start);
	u->indexed = true;
	return u;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return name ? name : dwarf_diename(die);
}

static int push_inlined(struct dwinfo *d, size_t *n, const Dwarf_Die *die)
{
	void *v = d->inlined;
	int r = grow_array(&v, &d->inlined_cap, *n + 1, sizeof(*d->inlined));

	d->inlined = v;
	if (r == 0)
		d->inlined[(*n)++] = *die;
	return r;
}

/*
 * Walk down from DIE through the scopes holding PC, collecting the inlined
 * subroutines on the way, outermost first.  A lexical block without any
 * address of its own is looked into too.  1 if a scope under DIE holds PC,
 * 0 if none does, -ENOMEM.
 */
static int descend(struct dwinfo *d, Dwarf_Die *die, uint64_t pc, size_t *n, unsigned depth)
{
	Dwarf_Die child;
	int tag, r;

	if (depth > DEPTH_MAX || dwarf_child(die, &child) != 0)
		return 0;
	do {
		tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, pc) == 1) {
			if (tag == DW_TAG_inlined_subroutine) {
				r = push_inlined(d, n, &child);
				if (r < 0)
					return r;
			}
			r = descend(d, &child, pc, n, depth + 1);
			return r < 0 ? r : 1;
		}
		if (tag == DW_TAG_lexical_block && !dwarf_hasattr(&child, DW_AT_low_pc) &&
		    !dwarf_hasattr(&child, DW_AT_ranges)) {
			r = descend(d, &child, pc, n, depth + 1);
			if (r != 0)
				return r;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The CU DIE holding VADDR: by the units' ranges, else by .debug_aranges. */
static bool cu_at(struct dwinfo *d, uint64_t vaddr, Dwarf_Die *ret)
{
	const struct dwinfo_range *cu = find_range(d->cus, d->ncus, vaddr);

	if (cu && dwarf_offdie(d->dw, cu->die, ret))
		return true;
	return dwarf_addrdie(d->dw, vaddr, ret) != NULL;
}

static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles,
		      struct dwinfo_frame *caller)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= UINT32_MAX)
		caller->line = (uint32_t)w;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0 &&
	    w < nfiles)
		caller->file = dwarf_filesrc(files, w, NULL, NULL);
	if (!caller->line)
		caller->file = NULL;
}

int dwinfo_lookup(struct dwinfo *d, uint64_t vaddr, const struct dwinfo_frame **ret)
{
	const struct dwinfo_range *fr;
	struct dwinfo_unit *u;
	Dwarf_Die cudie, func;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute a;
	Dwarf_Line *line;
	const char *comp_dir;
	size_t n = 0, nfiles = 0, i;
	bool have_func;
	void *v;
	int r;

	if (!d->dw || !cu_at(d, vaddr, &cudie))
		return 0;
	u = unit_of(d, &cudie, &r);
	if (r < 0)
		return r;
	fr = u ? find_range(u->funcs, u->nfuncs, vaddr) : NULL;
	have_func = fr && dwarf_offdie(d->dw, fr->die, &func);
	if (have_func) {
		r = descend(d, &func, vaddr, &n, 0);
		if (r < 0)
			return r;
	}
	v = d->chain;
	r = grow_array(&v, &d->chain_cap, n + 1, sizeof(*d->chain));
	d->chain = v;
	if (r < 0)
		return r;
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
		files = NULL;
	comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a));
	for (i = 0; i <= n; i++)
		d->chain[i] = (struct dwinfo_frame){ .comp_dir = comp_dir };
	d->chain[0].name = have_func ? die_name(&func) : NULL;
	for (i = 0; i < n; i++) {
		d->chain[i + 1].name = die_name(&d->inlined[i]);
		call_site(&d->inlined[i], files, nfiles, &d->chain[i]);
	}
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		int lineno = 0;

		if (dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
			d->chain[n].line = (uint32_t)lineno;
			d->chain[n].file = dwarf_linesrc(line, NULL, NULL);
		}
	}
	*ret = d->chain;
	return (int)n + 1;
}
