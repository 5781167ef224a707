/* SPDX-License-Identifier: MIT */
/*
 * vdso.c - the vDSO as a file.  The unwinder reads its CFI and the
 * symbolizer its names through a memfd copy of prof's own vDSO, the same
 * image every 64-bit process of this kernel maps.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vdso.h"

/*
 * The vDSO is the same image in every 64-bit process of this kernel: copy
 * ours into a memfd once, so libdwfl can read its CFI like any file.
 */
const char *vdso_image_path(void)
{
	static char path[64];
	static bool tried;
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	FILE *f;
	char line[512];
	uint64_t start = 0, end = 0;
	int fd;

	if (tried)
		return path[0] ? path : NULL;
	tried = true;
	if (!image)
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	if (start != (uint64_t)(uintptr_t)image || end <= start)
		return NULL;
	fd = memfd_create("prof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, image, end - start) != (ssize_t)(end - start)) {
		close(fd);
		return NULL;
	}
	/* kept open for the life of the process: libdwfl opens it by this name */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}
