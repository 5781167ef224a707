/* SPDX-License-Identifier: MIT */
/*
 * recursion - ground truth for deep stacks: main -> recurse -> recurse -> ...
 * (DEPTH frames of recurse, default 60) -> recurse_leaf, where recurse_leaf
 * burns the CPU.  Every recurse frame holds a 64-byte local array that it
 * writes before and reads after its call, so each frame is real stack (80
 * bytes with gcc 12 -O2 on x86-64: 60 levels are about 5 KiB of stack, and
 * DEPTH 400 about 32 KiB, for measuring stack-copy sizes), and the read after
 * the call keeps the recursion from becoming a tail call or a loop.  Built
 * -O2 without frame pointers, so only DWARF unwinding recovers the chain.
 *
 * Expected stack, nearly every sample:
 *   main -> recurse x DEPTH -> recurse_leaf
 *
 *   recursion [SECONDS [DEPTH]]   (defaults 1 and 60; exits 0)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEP __attribute__((noinline, noclone))

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long recurse_leaf(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

static STEP unsigned long recurse(unsigned int depth, unsigned long x)
{
	volatile char buf[64];
	unsigned long r;
	unsigned int i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(x + i);
	r = depth > 1 ? recurse(depth - 1, x + 1) : recurse_leaf(x);
	return r + (unsigned char)buf[depth % sizeof(buf)];
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, end = cpu_now() + seconds;
	int depth = argc > 2 ? atoi(argv[2]) : 60;
	unsigned long sum = 0, n = 0;

	if (depth < 1 || depth > 100000) {
		fprintf(stderr, "recursion: depth must be 1..100000\n");
		return 2;
	}
	do {
		sum += recurse((unsigned int)depth, n++);
	} while (cpu_now() < end);
	printf("recursion: depth %d, %lu rounds, checksum %lx\n", depth, n, sum & 0xfff);
	return 0;
}
