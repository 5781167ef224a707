/* SPDX-License-Identifier: MIT */
/*
 * vdso.c - the vDSO as a file.  The unwinder reads its CFI and the
 * symbolizer its names through a memfd copy of prof's own vDSO, the same
 * image every 64-bit process of this kernel maps.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vdso.h"

static char path[64];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/*
 * The vDSO is the same image in every 64-bit process of this kernel: copy
 * ours into a memfd once, so libdwfl can read its CFI like any file.  Once
 * per process, whichever thread asks first (a recorder, its tail's
 * symbolizer).
 */
static void copy_image(void)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	FILE *f;
	char line[512];
	uint64_t start = 0, end = 0;
	int fd;

	if (!image)
		return;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	if (start != (uint64_t)(uintptr_t)image || end <= start)
		return;
	fd = memfd_create("prof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, image, end - start) != (ssize_t)(end - start)) {
		close(fd);
		return;
	}
	/* kept open for the life of the process: libdwfl opens it by this name */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
}

const char *vdso_image_path(void)
{
	pthread_once(&once, copy_image);
	return path[0] ? path : NULL;
}
