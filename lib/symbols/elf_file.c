/* SPDX-License-Identifier: MIT */
/*
 * elf_file.c - read what symbol lookup needs from an ELF file: the build-id
 * (libdwelf), the PT_LOAD segments that turn a file offset into a virtual
 * address, and the function symbols of .symtab (else .dynsym), ranked so
 * that of several names for one address the most telling one wins.  The
 * file is untrusted: a path may name anything, so only regular files are
 * read, and every index from the file is checked.  It never logs.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_file.h"
#include "gopclntab.h"
#include "internal.h"

struct section_info {
	uint64_t addr, end;
	bool exec;
};

static int read_loads(struct elf_file *f)
{
	size_t n, i;

	if (elf_getphdrnum(f->elf, &n) < 0)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		void *v = f->loads;
		int r;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		r = grow_array(&v, &f->loads_cap, f->nloads + 1, sizeof(*f->loads));
		f->loads = v;
		if (r < 0)
			return r;
		f->loads[f->nloads++] = (struct elf_load){ .offset = ph.p_offset,
							    .filesz = ph.p_filesz,
							    .vaddr = ph.p_vaddr };
	}
	return 0;
}

/* Prefer typed, sized, global symbols with few leading underscores (as perf does). */
static uint32_t symbol_rank(const GElf_Sym *s, const char *name)
{
	unsigned type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
	uint32_t under = 0;

	while (name[under] == '_' && under < 255)
		under++;
	return (uint32_t)(type == STT_FUNC || type == STT_GNU_IFUNC) << 20 |
	       (uint32_t)(s->st_size != 0) << 19 |
	       (uint32_t)(bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0) << 16 |
	       (255 - under);
}

/*
 * Sorted addresses, and where to start looking for one: bucket[B] is the
 * index of the first address at or above lo + (B << shift), with about two
 * buckets an address, so that a lookup is a load and a step or two where a
 * binary search over cc1's 9,000 sampled addresses for each of its 26,000
 * symbols was most of reading them.
 */
struct addr_index {
	uint64_t *v;
	size_t n;
	uint64_t lo;
	unsigned shift;
	uint32_t *bucket;
	size_t nbuckets;
};

/* Index V[0..N) (sorted, N below 2^31), which IX then owns; 0 or -ENOMEM. */
static int index_addrs(struct addr_index *ix, uint64_t *v, size_t n)
{
	size_t b, k = 0;

	*ix = (struct addr_index){ .v = v, .n = n };
	if (!n)
		return 0;
	ix->lo = v[0];
	while ((v[n - 1] - ix->lo) >> ix->shift >= 2 * n)
		ix->shift++;
	ix->nbuckets = (size_t)((v[n - 1] - ix->lo) >> ix->shift) + 1;
	ix->bucket = malloc(ix->nbuckets * sizeof(*ix->bucket));
	if (!ix->bucket)
		return -ENOMEM;
	for (b = 0; b < ix->nbuckets; b++) {
		while (k < n && v[k] < ix->lo + ((uint64_t)b << ix->shift))
			k++;
		ix->bucket[b] = (uint32_t)k;
	}
	return 0;
}

static void index_release(struct addr_index *ix)
{
	free(ix->v);
	free(ix->bucket);
}

/* The index of the first address of IX at or above X. */
static size_t index_lower_bound(const struct addr_index *ix, uint64_t x)
{
	size_t k;

	if (!ix->n || x <= ix->lo)
		return 0;
	if (x > ix->v[ix->n - 1])
		return ix->n;
	k = ix->bucket[(x - ix->lo) >> ix->shift];
	while (ix->v[k] < x)
		k++;
	return k;
}

/* Whether IX holds an address of [START, START + SIZE), SIZE > 0. */
static bool index_any_in(const struct addr_index *ix, uint64_t start, uint64_t size)
{
	size_t k = index_lower_bound(ix, start);

	return k < ix->n && ix->v[k] - start < size;
}

/*
 * The virtual addresses whose symbols are wanted (wanted), and the starts
 * of the sized symbols that hold one (starts): every symbol of such a
 * start is kept, so that aliases compete for it as in the whole table, and
 * no other sized one.  A symbol without a size reaches to the next one
 * kept, so that a table with such labels, once thinned, could name an
 * address no symbol held: then (LABELS and DROPPED) it is read whole.
 */
struct sym_filter {
	struct addr_index wanted, starts;
	bool labels, dropped;
};

/* Whether symbol S (of a file with NSECS sections SECS) is a function symbol to read. */
static bool is_function(const GElf_Sym *s, const struct section_info *secs, size_t nsecs)
{
	unsigned type = GELF_ST_TYPE(s->st_info);

	return s->st_shndx != SHN_UNDEF && s->st_shndx < nsecs && s->st_value &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC ||
		(type == STT_NOTYPE && secs[s->st_shndx].exec));
}

/*
 * Symbol I of DATA into *S.  A 64-bit file's table is read in place (its
 * bytes are Elf64_Syms, which GElf_Sym is): gelf_getsym() copied each of
 * cc1's 29,000 .dynsym entries through a call, twice, at the end of every
 * recording of a build.
 */
static bool get_sym(const Elf_Data *data, bool is64, size_t i, GElf_Sym *s)
{
	if (is64 && data->d_type == ELF_T_SYM && (i + 1) * sizeof(Elf64_Sym) <= data->d_size) {
		memcpy(s, (const Elf64_Sym *)data->d_buf + i, sizeof(*s));
		return true;
	}
	return i <= INT_MAX && gelf_getsym((Elf_Data *)data, (int)i, s);
}

/* FILTER's starts: of the sized symbols of DATA (N of them) that hold a wanted address. */
static int find_starts(Elf_Data *data, bool is64, size_t n, const struct section_info *secs,
		       size_t nsecs, struct sym_filter *filter)
{
	uint64_t *v = NULL;
	size_t i, k = 0, cap = 0;
	GElf_Sym s;

	for (i = 1; i < n && get_sym(data, is64, i, &s); i++) {
		if (!s.st_size || !is_function(&s, secs, nsecs) ||
		    !index_any_in(&filter->wanted, s.st_value, s.st_size))
			continue;
		if (k == cap) {
			void *p = v;

			if (grow_array(&p, &cap, k + 1, sizeof(*v)) < 0) {
				free(v);
				return -ENOMEM;
			}
			v = p;
		}
		v[k++] = s.st_value;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_u64);
	return index_addrs(&filter->starts, v, k);
}

/* Whether FILTER keeps S: every symbol without a size, and else those it says. */
static bool keeps(struct sym_filter *filter, const GElf_Sym *s)
{
	size_t k;

	if (!filter)
		return true;
	if (!s->st_size) {
		filter->labels = true;
		return true;
	}
	k = index_lower_bound(&filter->starts, s->st_value);
	if (k < filter->starts.n && filter->starts.v[k] == s->st_value)
		return true;
	filter->dropped = true;
	return false;
}

static int read_symbols(struct elf_file *f, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			const struct section_info *secs, size_t nsecs, struct sym_filter *filter)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	size_t n, i;
	int r;

	if (!data || !sh->sh_entsize)
		return 0;
	n = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (filter && find_starts(data, is64, n, secs, nsecs, filter) < 0)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 1; i < n; i++) {
		const char *name;
		GElf_Sym s;

		if (!get_sym(data, is64, i, &s))
			break;
		if (!is_function(&s, secs, nsecs) || !keeps(filter, &s))
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		r = symtab_add(&f->syms, 0, s.st_value, s.st_size, secs[s.st_shndx].end, name,
			       symbol_rank(&s, name));
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The functions of a Go program's .gopclntab into F (with FILTER, those
 * holding a wanted address): 1 when the file has one, 0 when not.
 */
static int read_gopclntab(struct elf_file *f, Elf *elf, struct sym_filter *filter)
{
	struct gopclntab g;
	uint64_t i, start, end;
	const char *name;
	int r = gopclntab_open(elf, &g);

	if (r < 0)
		return 0;	/* none, or one this cannot read: .dynsym as before */
	f->syms.n = 0;
	f->dynsym = false;
	f->gopclntab = true;
	f->go = g;
	for (i = 0; i < g.nfunc; i++) {
		if (!gopclntab_func(&g, i, &start, &end, &name) ||
		    (filter && !index_any_in(&filter->wanted, start, end - start)))
			continue;
		/* every function sized, none aliased: one rank for all */
		r = symtab_add(&f->syms, 0, start, end - start, end, name, 1u << 20 | 1u << 19);
		if (r < 0)
			return r;
	}
	return 1;
}

/*
 * Read the function symbols of ELF (f's own file, or its debug file) into
 * F: those of .symtab, else, unless SYMTAB_ONLY, a Go program's
 * .gopclntab, else .dynsym; with FILTER, only those it wants.  Nothing
 * read leaves F's table as it was.
 */
static int read_symtab(struct elf_file *f, Elf *elf, bool symtab_only, struct sym_filter *filter)
{
	struct section_info *secs;
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh;
	size_t nsecs, i;
	int r;

	if (elf_getshdrnum(elf, &nsecs) < 0)
		return -EBADMSG;
	secs = calloc(nsecs ? nsecs : 1, sizeof(*secs));
	if (!secs)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < nsecs; i++) {
		scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		secs[i].addr = sh.sh_addr;
		secs[i].end = sh.sh_addr + sh.sh_size < sh.sh_addr ? UINT64_MAX
								  : sh.sh_addr + sh.sh_size;
		secs[i].exec = sh.sh_flags & SHF_EXECINSTR;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && sh.sh_size && !dynsym)
			dynsym = scn;
	}
	scn = symtab ? symtab : symtab_only ? NULL : dynsym;
	r = 0;
	if (!symtab && !symtab_only) {
		r = read_gopclntab(f, elf, filter);
		if (r != 0)
			scn = NULL;
	}
	if (r >= 0 && scn && gelf_getshdr(scn, &sh)) {
		f->syms.n = 0;
		f->dynsym = scn == dynsym;
		r = read_symbols(f, elf, scn, &sh, secs, nsecs, filter);
		if (r >= 0 && filter && filter->labels && filter->dropped) {
			f->syms.n = 0;
			r = read_symbols(f, elf, scn, &sh, secs, nsecs, NULL);
		}
	}
	free(secs);
	if (r < 0)
		return r;
	symtab_finish(&f->syms);
	return 0;
}

bool elf_file_go_line(const struct elf_file *f, uint64_t vaddr, const char **file,
		      uint32_t *line)
{
	uint64_t i;

	return f->gopclntab && gopclntab_find(&f->go, vaddr, &i) &&
	       gopclntab_line(&f->go, i, vaddr, file, line);
}

int elf_file_read_symtab(struct elf_file *f, Elf *elf)
{
	return read_symtab(f, elf, true, NULL);
}

/* The filter of file offsets OFFS[0..N) in F, by their virtual addresses; 0 or -ENOMEM. */
static int filter_of(const struct elf_file *f, const uint64_t *offs, size_t n,
		     struct sym_filter *ret)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));
	bool sorted = true;
	size_t i, k = 0;

	if (!v || n >= (1u << 31)) {
		free(v);
		return error_setx(-ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		if (elf_file_vaddr(f, offs[i], &v[k])) {
			sorted = sorted && (!k || v[k - 1] <= v[k]);
			k++;
		}
	/* a recording's capture asks in the order of the offsets: mostly sorted already */
	if (!sorted)
		qsort(v, k, sizeof(*v), cmp_u64);
	/* RET owns V from here, whatever comes */
	return index_addrs(&ret->wanted, v, k) < 0 ? error_setx(-ENOMEM, "out of memory") : 0;
}

/* elf_file_open(), and with OFFS (not NULL), elf_file_open_for(). */
static int open_file(const char *path, const uint64_t *offs, size_t noffs, struct elf_file *ret)
{
	struct sym_filter filter = { 0 };
	struct elf_file f = { 0 };
	const void *id;
	struct stat st;
	ssize_t len;
	int fd, r;

	elf_version(EV_CURRENT);
	/* O_NONBLOCK: a path naming a FIFO must not hang the report */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return error_set(-errno, "cannot open '%s'", path);
	if (fstat(fd, &st) < 0) {
		r = error_set(-errno, "cannot open '%s'", path);
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		r = error_setx(-EINVAL, "'%s' is not a regular file", path);
		goto out_close;
	}
	f.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) {
		r = error_setx(-ENOEXEC, "'%s' is not an ELF file", path);
		goto out_free;
	}
	len = dwelf_elf_gnu_build_id(f.elf, &id);
	if (len > 0 && (size_t)len <= sizeof(f.build_id)) {
		memcpy(f.build_id, id, (size_t)len);
		f.build_id_len = (size_t)len;
	}
	r = read_loads(&f);
	if (r >= 0 && offs)
		r = filter_of(&f, offs, noffs, &filter);
	if (r >= 0)
		r = read_symtab(&f, f.elf, false, offs ? &filter : NULL);
	index_release(&filter.wanted);
	index_release(&filter.starts);
	if (r == -EBADMSG)
		error_setx(r, "'%s' is a damaged ELF file: %s", path, elf_errmsg(-1));
	if (r < 0)
		goto out_free;
	/* everything is read: the mapping stays, the descriptor can go */
	elf_cntl(f.elf, ELF_C_FDDONE);
	close(fd);
	*ret = f;
	return 0;

out_free:
	elf_file_release(&f);
out_close:
	close(fd);
	return r;
}

int elf_file_open(const char *path, struct elf_file *ret)
{
	return open_file(path, NULL, 0, ret);
}

int elf_file_open_for(const char *path, const uint64_t *offs, size_t n, struct elf_file *ret)
{
	return open_file(path, offs, n, ret);
}

bool elf_file_vaddr(const struct elf_file *f, uint64_t off, uint64_t *ret)
{
	size_t i;

	for (i = 0; i < f->nloads; i++) {
		const struct elf_load *l = &f->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*ret = off - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

const struct symtab_entry *elf_file_lookup(const struct elf_file *f, uint64_t off,
					   uint64_t *ret_delta)
{
	const struct symtab_entry *e;
	uint64_t vaddr;

	if (!elf_file_vaddr(f, off, &vaddr))
		return NULL;
	e = symtab_lookup(&f->syms, 0, vaddr);
	if (e)
		*ret_delta = vaddr - e->start;
	return e;
}

void elf_file_release(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	free(f->loads);
	symtab_release(&f->syms);
	memset(f, 0, sizeof(*f));
}
