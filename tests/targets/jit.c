/* SPDX-License-Identifier: MIT */
/*
 * jit - a minimal JIT: writes a counting loop as machine code into an
 * anonymous executable mapping, names it in /tmp/perf-PID.map as V8, the
 * JVM's agents and CPython's -X perf do, and runs it.
 *
 * Ground truth: the hottest leaf is `jit_hot_loop` (from the perf map),
 * called from main.  It keeps no frame: its caller shows through its
 * return address at rsp.
 *
 * With --frames it runs two functions instead that keep frame pointers,
 * as V8's and the JVM's (-XX:+PreserveFramePointer) code does: main ->
 * jit_outer -> jit_inner, where jit_inner loops.  No CFI covers them: only
 * frame pointers lead from jit_inner back to main.
 *
 *   jit [--frames] [SECONDS]   (default 1; x86-64 only; exits 0)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* mov ecx, 0x200000; 1: dec ecx; jnz 1b; ret */
	static const unsigned char code[] = { 0xb9, 0x00, 0x00, 0x20, 0x00, 0xff, 0xc9,
					      0x75, 0xfc, 0xc3 };
	/* at 64: push rbp; mov rbp, rsp; call inner (at 128); pop rbp; ret */
	static const unsigned char outer[] = { 0x55, 0x48, 0x89, 0xe5, 0xe8, 0x37, 0x00, 0x00,
					       0x00, 0x5d, 0xc3 };
	/* at 128: push rbp; mov rbp, rsp; the loop; pop rbp; ret */
	static const unsigned char inner[] = { 0x55, 0x48, 0x89, 0xe5, 0xb9, 0x00, 0x00, 0x20,
					       0x00, 0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3 };
	bool frames = argc > 1 && !strcmp(argv[1], "--frames");
	double seconds = argc > 1 + frames ? atof(argv[1 + frames]) : 1.0, end;
	char path[64];
	unsigned long calls = 0;
	unsigned char *mem;
	FILE *map;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	if (frames) {
		memcpy(mem + 64, outer, sizeof(outer));
		memcpy(mem + 128, inner, sizeof(inner));
	} else {
		memcpy(mem + 64, code, sizeof(code));
	}
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	/* one valid line between lines a careless reader might trip on */
	if (frames)
		fprintf(map, "%lx %zx jit_outer\n%lx %zx jit_inner\n", (unsigned long)(mem + 64),
			sizeof(outer), (unsigned long)(mem + 128), sizeof(inner));
	else
		fprintf(map, "not a perf map line\n0x%lx %zx jit_hot_loop\nzz 10 bad\n",
			(unsigned long)(mem + 64), sizeof(code));
	fclose(map);
	end = cpu_now() + seconds;
	do {
		((void (*)(void))(mem + 64))();
		calls++;
	} while (cpu_now() < end);
	printf("jit: %lu calls\n", calls);
	return 0;
}
