/* SPDX-License-Identifier: MIT */
/*
 * ladder - ground truth for stack completeness: main -> ladder_a ->
 * ladder_b -> ladder_c -> ladder_d, where ladder_d burns the CPU.  Built -O2
 * without frame pointers, so only DWARF unwinding recovers the chain.  Each
 * call is followed by work that uses its result, so that no call becomes a
 * tail call, and noinline/noclone keep every function a real frame.
 *
 *   ladder [SECONDS]   (default 1; exits 0)
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

STEP unsigned long ladder_d(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

STEP unsigned long ladder_c(unsigned long x)
{
	return ladder_d(x + 1) ^ x;
}

STEP unsigned long ladder_b(unsigned long x)
{
	return ladder_c(x + 2) + x;
}

STEP unsigned long ladder_a(unsigned long x)
{
	return ladder_b(x + 3) - x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += ladder_a(n++);
	} while (cpu_now() < end);
	printf("ladder: %lu rounds, checksum %lx\n", n, sum & 0xfff);
	return 0;
}
