/* SPDX-License-Identifier: MIT */
/*
 * churn - a long-running service's churn, for soak tests of the recorder:
 * for SECONDS of wall time (default 60) it keeps, at once,
 *
 *   - a steady set of distinct stacks: main computes through one of 64
 *     paths (work -> step_<k % 8> -> ... -> leaf), each an equal share;
 *   - threads created and destroyed: a short-lived thread every 20 ms,
 *     which computes about 2 ms and exits;
 *   - libdltarget.so dlopen()ed, called and dlclose()d every 100 ms;
 *   - a child every 200 ms, forked and exec'ing this program as "churn
 *     --child", which computes about 5 ms and exits.
 *
 * Its state does not grow: what a recorder of it keeps should not either,
 * beyond the distinct stacks and files it has seen.  It prints what it did:
 *
 *   churn: SECONDS s, N threads, N dlopens, N children
 *
 *   churn [SECONDS]   (exits 0)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone, no_icf))
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long leaf(unsigned long x)
{
	volatile unsigned long acc = x;
	int i;

	for (i = 0; i < 20000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

/* Eight steps; a path is the bits of k choosing which two follow. */
#define STEP_FN(n, next_a, next_b)						\
	static STEP unsigned long step_##n(unsigned long k, int depth)		\
	{									\
		unsigned long r = depth ? ((k >> depth) & 1 ? next_a(k, depth - 1) \
							    : next_b(k, depth - 1)) \
					: leaf(k);				\
		NO_TAIL_CALL();							\
		return r + 1;							\
	}

static STEP unsigned long step_0(unsigned long k, int depth);
static STEP unsigned long step_1(unsigned long k, int depth);
static STEP unsigned long step_2(unsigned long k, int depth);
static STEP unsigned long step_3(unsigned long k, int depth);
static STEP unsigned long step_4(unsigned long k, int depth);
static STEP unsigned long step_5(unsigned long k, int depth);
static STEP unsigned long step_6(unsigned long k, int depth);
static STEP unsigned long step_7(unsigned long k, int depth);
STEP_FN(0, step_1, step_2)
STEP_FN(1, step_3, step_4)
STEP_FN(2, step_5, step_6)
STEP_FN(3, step_7, step_0)
STEP_FN(4, step_1, step_3)
STEP_FN(5, step_2, step_4)
STEP_FN(6, step_6, step_0)
STEP_FN(7, step_5, step_7)

static STEP unsigned long work(unsigned long k)
{
	unsigned long r = step_0(k % 64, 6);

	NO_TAIL_CALL();
	return r;
}

/* Compute for about SECONDS. */
static STEP unsigned long busy(double seconds, unsigned long k)
{
	double end = now() + seconds;
	unsigned long r = 0;

	while (now() < end)
		r += work(k++);
	return r;
}

static STEP void *short_thread(void *arg)
{
	unsigned long r = busy(0.002, (unsigned long)(uintptr_t)arg);

	NO_TAIL_CALL();
	return (void *)(uintptr_t)r;
}

static char lib_path[PATH_MAX + 32];

static STEP int use_library(void)
{
	void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	unsigned long (*entry)(double);

	if (!lib)
		return -1;
	entry = (unsigned long (*)(double))dlsym(lib, "dltarget_entry");
	if (entry)
		entry(0.0005);
	dlclose(lib);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 60, start, end, next_thread, next_lib, next_child, t;
	unsigned long threads = 0, dlopens = 0, children = 0, k = 0, sum = 0;
	char self[PATH_MAX];
	ssize_t len;
	char *slash;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return (int)(busy(0.005, 7) & 0);
	if (argc > 1)
		seconds = atof(argv[1]);
	if (!(seconds > 0)) {
		fprintf(stderr, "usage: churn [SECONDS]\n");
		return 64;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0 || !(slash = memrchr(self, '/', (size_t)len)))
		return 1;
	self[len] = '\0';
	memcpy(lib_path, self, (size_t)(slash - self) + 1);
	strcpy(lib_path + (slash - self) + 1, "libdltarget.so");
	start = now();
	end = start + seconds;
	next_thread = next_lib = next_child = start;
	while ((t = now()) < end) {
		sum += busy(0.001, k++);
		if (t >= next_thread) {
			pthread_t th;

			if (pthread_create(&th, NULL, short_thread, (void *)(uintptr_t)k) == 0) {
				pthread_detach(th);
				threads++;
			}
			next_thread += 0.020;
		}
		if (t >= next_lib) {
			dlopens += use_library() == 0;
			next_lib += 0.100;
		}
		if (t >= next_child) {
			pid_t pid = fork();

			if (pid == 0) {
				execl(self, "churn", "--child", (char *)NULL);
				_exit(127);
			}
			children += pid > 0;
			next_child += 0.200;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (waitpid(-1, NULL, 0) > 0)
		;
	printf("churn: %.1f s, %lu threads, %lu dlopens, %lu children (%lx)\n", now() - start,
	       threads, dlopens, children, sum & 0xf);
	return 0;
}
