/* SPDX-License-Identifier: MIT */
/*
 * dlopen_main - ground truth for code loaded after the recording started.
 * It sleeps 100 ms, then dlopen()s libdltarget.so from the directory of its
 * own executable (/proc/self/exe), looks up dltarget_entry and calls it.
 * Nothing of the library is mapped before the sleep ends, so its functions can
 * only be named from an mmap seen during the recording.
 *
 * Expected stack, nearly every sample:
 *   main -> dltarget_entry -> dltarget_work      (both in libdltarget.so)
 *
 *   dlopen_main [SECONDS]   (default 1; exits 0, or 1 if the library cannot
 *                            be loaded)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec delay = { 0, 100 * 1000 * 1000 };
	unsigned long (*entry)(double);
	char path[PATH_MAX + 32];
	ssize_t len;
	char *slash;
	void *lib;

	len = readlink("/proc/self/exe", path, PATH_MAX);
	if (len < 0 || !(slash = memrchr(path, '/', (size_t)len))) {
		perror("dlopen_main: /proc/self/exe");
		return 1;
	}
	strcpy(slash + 1, "libdltarget.so");
	nanosleep(&delay, NULL);
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen_main: %s\n", dlerror());
		return 1;
	}
	*(void **)&entry = dlsym(lib, "dltarget_entry");
	if (!entry) {
		fprintf(stderr, "dlopen_main: %s\n", dlerror());
		return 1;
	}
	printf("dlopen_main: checksum %lx\n", entry(seconds) & 0xfff);
	return 0;
}
