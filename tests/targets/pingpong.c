/* SPDX-License-Identifier: MIT */
/*
 * pingpong - a context-switch-heavy workload: two threads hand a byte back
 * and forth over two pipes for SECONDS of wall time (default 1), each
 * blocking in read until the other writes, so that every hand-off is two
 * context switches; with SPIN_US, each runs that long (busy) before it
 * hands the byte back, a stand-in for work.  It prints what it managed:
 *
 *   pingpong: ROUNDS round trips in SECONDS s (RATE/s, 2 x RATE switch-outs/s), cpu CPU s
 *
 * CPU: its own user and system time, both threads.
 *
 * Stacks, every switch-out: main, or start_thread -> pong_main, -> wait_ball -> read.
 *
 *   pingpong [SECONDS [SPIN_US]]   (exits 0)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone, no_icf))
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

static int to_pong[2], to_ping[2];
static uint64_t spin_ns;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The work of a hand-off: SPIN_NS of running before the ball goes back. */
static STEP void play(void)
{
	uint64_t until = spin_ns ? now() + spin_ns : 0;

	while (now() < until)
		;
	NO_TAIL_CALL();
}

static STEP int wait_ball(int fd)
{
	char c;
	int r = (int)read(fd, &c, 1);

	NO_TAIL_CALL();
	return r == 1 ? c : -1;
}

static STEP void *pong_main(void *arg)
{
	int c;

	(void)arg;
	while ((c = wait_ball(to_pong[0])) > 0) {
		if (c != 'q')
			play();
		if (write(to_ping[1], "b", 1) != 1 || c == 'q')
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double spin_us = argc > 2 ? atof(argv[2]) : 0.0;
	uint64_t start, end, rounds = 0;
	struct rusage ru;
	pthread_t th;

	if (!(seconds > 0) || !(spin_us >= 0)) {
		fprintf(stderr, "usage: pingpong [SECONDS [SPIN_US]]\n");
		return 64;
	}
	spin_ns = (uint64_t)(spin_us * 1000);
	if (pipe(to_pong) < 0 || pipe(to_ping) < 0 || pthread_create(&th, NULL, pong_main, NULL))
		return 1;
	start = now();
	end = start + (uint64_t)(seconds * 1e9);
	do {
		play();
		if (write(to_pong[1], "a", 1) != 1 || wait_ball(to_ping[0]) < 0)
			return 1;
		rounds++;
	} while ((rounds & 63) || now() < end);
	if (write(to_pong[1], "q", 1) != 1)
		return 1;
	wait_ball(to_ping[0]);
	pthread_join(th, NULL);
	end = now();
	getrusage(RUSAGE_SELF, &ru);
	printf("pingpong: %llu round trips in %.3f s (%.0f/s, %.0f switch-outs/s), cpu %.3f s\n",
	       (unsigned long long)rounds, (double)(end - start) / 1e9,
	       (double)rounds / ((double)(end - start) / 1e9),
	       2.0 * (double)rounds / ((double)(end - start) / 1e9),
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return 0;
}
