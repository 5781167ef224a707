/* SPDX-License-Identifier: MIT */
/*
 * stages - a benchmark of two stages for CI tests: each round runs
 * stage_parse then stage_render, each burning its weight times 100 us of
 * CPU time (thread CPU clock) in its own body (its self time), for SECONDS
 * of wall time.  Making a stage
 * heavier stands in for a change that made that function slower: with the
 * weights 1 1 each stage has half the samples; with 3 1 stage_parse has
 * three quarters.
 *
 *   main -> run_round -> stage_parse | stage_render (-> the vDSO's clock)
 *
 *   stages [SECONDS [PARSE RENDER]]   (default 1 s, weights 1 1; exits 0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEP __attribute__((noinline, noclone, no_icf))
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn SECONDS of CPU in the function that expands it: its own self time. */
#define SPIN(seconds, x)							\
	double end = cpu_now() + (seconds);					\
	volatile unsigned long acc = (x);					\
	int i;									\
									\
	while (cpu_now() < end)							\
		for (i = 0; i < 10000; i++)					\
			acc = acc * 6364136223846793005ul + 1442695040888963407ul; \
	return acc

static STEP unsigned long stage_parse(double weight, unsigned long x)
{
	SPIN(weight * 100e-6, x);
}

static STEP unsigned long stage_render(double weight, unsigned long x)
{
	SPIN(weight * 100e-6, x + 1);
}

static STEP unsigned long run_round(double parse, double render, unsigned long x)
{
	unsigned long r = stage_parse(parse, x) ^ stage_render(render, x);

	NO_TAIL_CALL();
	return r;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double parse = argc > 3 ? atof(argv[2]) : 1.0, render = argc > 3 ? atof(argv[3]) : 1.0;
	double end = wall_now() + seconds;
	unsigned long sum = 0, n = 0;

	if (!(seconds > 0) || !(parse > 0) || !(render > 0)) {
		fprintf(stderr, "usage: stages [SECONDS [PARSE RENDER]]\n");
		return 64;
	}
	do
		sum += run_round(parse, render, n++);
	while (wall_now() < end);
	printf("stages: %lu rounds, checksum %lx\n", n, sum & 0xfff);
	return 0;
}
