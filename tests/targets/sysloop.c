/* SPDX-License-Identifier: MIT */
/*
 * sysloop - spends its time in the kernel: reads /proc/self/stat in a loop.
 *
 * Ground truth: main -> sys_read_stat -> read (libc) -> the kernel's read
 * path (entry_SYSCALL_64..., ksys_read, vfs_read, seq_read..., do_task_stat).
 *
 *   sysloop [SECONDS]   (default 1; exits 0)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) ssize_t sys_read_stat(int fd)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	return n > 0 ? n + buf[0] : n;
}

int main(int argc, char **argv)
{
	double end = cpu_now() + (argc > 1 ? atof(argv[1]) : 1.0);
	int fd = open("/proc/self/stat", O_RDONLY);
	unsigned long calls = 0;
	long sum = 0;

	if (fd < 0)
		return 1;
	do {
		sum += sys_read_stat(fd);
		calls++;
	} while (cpu_now() < end);
	printf("sysloop: %lu reads, checksum %lx\n", calls, (unsigned long)sum & 0xfff);
	return 0;
}
