/* SPDX-License-Identifier: MIT */
/*
 * busy4 - stress target: four threads, named "busy-0" .. "busy-3" (each
 * names itself before it burns anything), each burning SECONDS of its own CPU
 * time (its thread's CPU clock, not wall time) in its own function
 * busy_thread_N through the shared leaf busy_spin; main only joins them.  On
 * two cores the four threads share the CPUs: 2 x SECONDS of wall time on an
 * idle machine, and the same samples, only later, on a loaded one.
 *
 * Expected stacks (thread name: chain), nearly every sample:
 *   busy-N: start_thread -> busy_thread_N -> busy_spin     (N = 0..3)
 *
 *   busy4 [SECONDS]   (default 1; exits 0)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEP __attribute__((noinline, noclone))

static double seconds = 1.0;

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long busy_spin(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

#define BUSY_THREAD(N)							\
	static STEP void *busy_thread_##N(void *arg)			\
	{								\
		double end = cpu_now() + seconds;			\
		unsigned long sum = 0, n = N;				\
									\
		(void)arg;						\
		pthread_setname_np(pthread_self(), "busy-" #N);		\
		do {							\
			sum += busy_spin(n++);				\
		} while (cpu_now() < end);				\
		return (void *)(sum & 0xfff);				\
	}

BUSY_THREAD(0)
BUSY_THREAD(1)
BUSY_THREAD(2)
BUSY_THREAD(3)

int main(int argc, char **argv)
{
	void *(*fn[4])(void *) = { busy_thread_0, busy_thread_1, busy_thread_2, busy_thread_3 };
	unsigned long sum = 0;
	pthread_t tid[4];
	int i;

	if (argc > 1)
		seconds = atof(argv[1]);
	for (i = 0; i < 4; i++)
		if (pthread_create(&tid[i], NULL, fn[i], NULL)) {
			fprintf(stderr, "busy4: pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < 4; i++) {
		void *ret;

		pthread_join(tid[i], &ret);
		sum += (unsigned long)ret;
	}
	printf("busy4: 4 threads, checksum %lx\n", sum & 0xfff);
	return 0;
}
