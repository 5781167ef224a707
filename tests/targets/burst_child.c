/* SPDX-License-Identifier: MIT */
/*
 * burst_child - a short-lived process of known stack, run by burst: it
 * burns MS milliseconds of its own CPU time (default 3) in
 * main -> work_a -> work_b and exits 0.
 *
 * Expected stack, nearly every sample:  main -> work_a -> work_b
 *
 *   burst_child [MS]
 */
#include <stdlib.h>
#include <time.h>

#define STEP __attribute__((noinline, noclone, no_icf))

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long work_b(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 20000; i++)
		acc = acc * 6364136223846793005ul + 7;
	return acc;
}

static STEP unsigned long work_a(double seconds)
{
	double end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += work_b(n++);
	} while (cpu_now() < end);
	return sum;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 3;

	return work_a(ms / 1e3) == 42 ? 1 : 0;
}
