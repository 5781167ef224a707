/* SPDX-License-Identifier: MIT */
/*
 * threadpool - ground truth for short-lived threads: 200 threads, created
 * and joined in batches of 4, each named "pool-N" (N = 0..199, set by the
 * thread itself before it burns anything) and each burning SECONDS/200 of its
 * own CPU time (5 ms by default; 1 s of CPU in all, about 0.5 s of wall time
 * on two cores) in pool_task -> pool_spin.
 *
 * Expected stacks (thread name: chain), nearly every sample:
 *   pool-N: start_thread -> pool_task -> pool_spin     (for many N)
 * Each thread lives only a few milliseconds, so at 999 Hz each gets a few
 * samples and not every one of the 200 names needs to appear.
 *
 *   threadpool [SECONDS]   (total CPU time, default 1; exits 0)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEP __attribute__((noinline, noclone))
#define THREADS 200
#define BATCH 4

static double task_seconds;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long pool_spin(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 100000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

static STEP void *pool_task(void *arg)
{
	unsigned long index = (unsigned long)arg, sum = 0, n = 0;
	char name[16];
	double end;

	snprintf(name, sizeof(name), "pool-%lu", index);
	pthread_setname_np(pthread_self(), name);
	end = cpu_now() + task_seconds;
	do {
		sum += pool_spin(n++ + index);
	} while (cpu_now() < end);
	return (void *)(sum & 0xfff);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned long sum = 0, i, j;
	pthread_t tid[BATCH];

	task_seconds = seconds / THREADS;
	for (i = 0; i < THREADS; i += BATCH) {
		for (j = 0; j < BATCH; j++)
			if (pthread_create(&tid[j], NULL, pool_task, (void *)(i + j))) {
				fprintf(stderr, "threadpool: pthread_create failed\n");
				return 1;
			}
		for (j = 0; j < BATCH; j++) {
			void *ret;

			pthread_join(tid[j], &ret);
			sum += (unsigned long)ret;
		}
	}
	printf("threadpool: %d threads, checksum %lx\n", THREADS, sum & 0xfff);
	return 0;
}
