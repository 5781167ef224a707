/* SPDX-License-Identifier: MIT */
/*
 * threads - ground truth for per-thread attribution: three threads, named
 * "alpha", "beta" and "gamma" (each names itself with pthread_setname_np
 * before it burns anything), each burning SECONDS of its own CPU time (thread
 * CPU clock, not wall time) in its own function through its own leaf; main
 * only joins them.  So each thread has a third of the samples (to within one
 * ~2 ms spin) however the scheduler shares the cores, and an idle machine runs
 * it in 3 x SECONDS / min(cores, 3) of wall time: 1.5 s by default on two.
 *
 * Expected stacks (thread name: chain), nearly every sample:
 *   alpha: start_thread -> thread_alpha -> alpha_spin
 *   beta:  start_thread -> thread_beta  -> beta_spin
 *   gamma: start_thread -> thread_gamma -> gamma_spin
 * (start_thread is glibc's, under clone3; nothing under the name "threads".)
 *
 * With --rename, each thread renames itself halfway through its CPU time to
 * "alpha2", "beta2", "gamma2": the same chains appear under the old name
 * for the first half and under the new name for the second.
 *
 *   threads [--rename] [SECONDS]   (default 1; exits 0)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* no_icf: the twin functions below must not be folded into one. */
#define STEP __attribute__((noinline, noclone, no_icf))

static double seconds = 1.0;
static int rename_half;

/* The calling thread's CPU time. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define SPIN_BODY(K)							\
	volatile unsigned long acc = x;					\
	unsigned long i;						\
									\
	for (i = 0; i < 2000000; i++)					\
		acc = acc * 6364136223846793005ul + (K);		\
	return acc;

static STEP unsigned long alpha_spin(unsigned long x) { SPIN_BODY(1) }
static STEP unsigned long beta_spin(unsigned long x) { SPIN_BODY(3) }
static STEP unsigned long gamma_spin(unsigned long x) { SPIN_BODY(5) }

/* Renames the calling thread NAME2 once it has used half its CPU time. */
static int maybe_rename(const char *name, int renamed, double used)
{
	char name2[16];

	if (!rename_half || renamed || used < seconds / 2)
		return renamed;
	snprintf(name2, sizeof(name2), "%s2", name);
	pthread_setname_np(pthread_self(), name2);
	return 1;
}

#define THREAD_BODY(NAME, SPIN)						\
	unsigned long sum = 0, n = 0;					\
	int renamed = 0;						\
	double used;							\
									\
	(void)arg;							\
	pthread_setname_np(pthread_self(), NAME);			\
	do {								\
		sum += SPIN(n++);					\
		used = cpu_now();					\
		renamed = maybe_rename(NAME, renamed, used);		\
	} while (used < seconds);					\
	return (void *)(sum & 0xfff);

static STEP void *thread_alpha(void *arg) { THREAD_BODY("alpha", alpha_spin) }
static STEP void *thread_beta(void *arg) { THREAD_BODY("beta", beta_spin) }
static STEP void *thread_gamma(void *arg) { THREAD_BODY("gamma", gamma_spin) }

int main(int argc, char **argv)
{
	void *(*fn[3])(void *) = { thread_alpha, thread_beta, thread_gamma };
	unsigned long sum = 0;
	pthread_t tid[3];
	int i;

	if (argc > 1 && !strcmp(argv[1], "--rename")) {
		rename_half = 1;
		argc--, argv++;
	}
	if (argc > 1)
		seconds = atof(argv[1]);
	for (i = 0; i < 3; i++)
		if (pthread_create(&tid[i], NULL, fn[i], NULL)) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < 3; i++) {
		void *ret;

		pthread_join(tid[i], &ret);
		sum += (unsigned long)ret;
	}
	printf("threads: 3 threads%s, checksum %lx\n", rename_half ? " renamed" : "",
	       sum & 0xfff);
	return 0;
}
