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
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_file.h"
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

static int read_symbols(struct elf_file *f, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			const struct section_info *secs, size_t nsecs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;
	int r;

	if (!data || !sh->sh_entsize)
		return 0;
	n = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	for (i = 1; i < n; i++) {
		unsigned type;
		const char *name;
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= nsecs || !s.st_value ||
		    !(type == STT_FUNC || type == STT_GNU_IFUNC ||
		      (type == STT_NOTYPE && secs[s.st_shndx].exec)))
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
 * Read the function symbols of ELF (f's own file, or its debug file) into
 * F: those of .symtab, else, unless SYMTAB_ONLY, of .dynsym.  Nothing read
 * leaves F's table as it was.
 */
static int read_symtab(struct elf_file *f, Elf *elf, bool symtab_only)
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
	if (scn && gelf_getshdr(scn, &sh)) {
		f->syms.n = 0;
		f->dynsym = scn == dynsym;
		r = read_symbols(f, elf, scn, &sh, secs, nsecs);
	}
	free(secs);
	if (r < 0)
		return r;
	symtab_finish(&f->syms);
	return 0;
}

int elf_file_read_symtab(struct elf_file *f, Elf *elf)
{
	return read_symtab(f, elf, true);
}

int elf_file_open(const char *path, struct elf_file *ret)
{
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
	if (r >= 0)
		r = read_symtab(&f, f.elf, false);
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
