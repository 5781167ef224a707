/* SPDX-License-Identifier: MIT */
/*
 * inline - ground truth for inline frames: churn(), a real function,
 * calls mix(), which calls step(); both are static inline and inlined at
 * -O2 (always_inline makes sure of it), so that the CPU burns in code that
 * has no frame of its own.  With debug info a report shows
 * churn;mix;step, mix and step marked inlined, each at the line marked
 * below: churn at its call of mix, mix at its call of step, step at the
 * arithmetic.  Tests find the lines by their markers, not by number.
 *
 *   inline [SECONDS]   (default 1; exits 0)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define INLINE static inline __attribute__((always_inline))

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

INLINE unsigned long step(unsigned long x)
{
	return x * 6364136223846793005ul + (x >> 7) + 1442695040888963407ul; /* line: step */
}

INLINE unsigned long mix(unsigned long x, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		x = step(x); /* line: mix calls step */
	return x;
}

__attribute__((noinline, noclone)) unsigned long churn(unsigned long x)
{
	return mix(x, 2000000) ^ x; /* line: churn calls mix */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 1.0, end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += churn(n++);
	} while (cpu_now() < end);
	printf("inline: %lu rounds, checksum %lx\n", n, sum & 0xfff);
	return 0;
}
