/* SPDX-License-Identifier: MIT */
/*
 * remote.c - a runtime's exported symbols and its process's memory (see
 * remote.h).
 */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "remote.h"

bool remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return addr && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

bool remote_word(pid_t pid, uint64_t addr, uint64_t *ret)
{
	return remote_read(pid, addr, ret, sizeof(*ret));
}

size_t remote_symbols(const char *path, const char *const *names, size_t n, uint64_t *values,
		      uint64_t *sizes)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	size_t found = 0, k;
	Elf *elf;

	for (k = 0; k < n; k++) {
		values[k] = 0;
		if (sizes)
			sizes[k] = 0;
	}
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && found < n && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		count = d ? d->d_size / sh.sh_entsize : 0;
		for (i = 0; i < count && found < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			for (k = 0; k < n; k++)
				if (!values[k] && !strcmp(name, names[k])) {
					values[k] = sym.st_value;
					if (sizes)
						sizes[k] = sym.st_size;
					found++;
					break;
				}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}
